#include "bench/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace sy::bench {
namespace {

constexpr double kW = 760, kH = 440, kLeft = 72, kRight = 190, kTop = 44, kBottom = 58;
constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

struct Frame {
  double x0, x1, y0, y1;
  double px(double x) const { return kLeft + (x - x0) / (x1 - x0) * (kW - kLeft - kRight); }
  double py(double y) const { return kH - kBottom - (y - y0) / (y1 - y0) * (kH - kTop - kBottom); }
};

void header(std::ostringstream& o, const std::string& title) {
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << kH
    << "\" viewBox=\"0 0 " << kW << " " << kH << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << kW / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">"
    << xml_escape(title) << "</text>\n";
}

// Grid, ticks and labels; x ticks only when `xticks` (bar charts label categories instead).
void axes(std::ostringstream& o, const Frame& f, const std::vector<double>& xt,
          const std::vector<double>& yt, const std::string& xl, const std::string& yl) {
  for (double y : yt) {
    o << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(f.py(y)) << "\" x2=\"" << num(kW - kRight)
      << "\" y2=\"" << num(f.py(y)) << "\" stroke=\"#e0e0e0\"/>\n"
      << "<text x=\"" << num(kLeft - 6) << "\" y=\"" << num(f.py(y) + 4)
      << "\" text-anchor=\"end\">" << label(y) << "</text>\n";
  }
  for (double x : xt)
    o << "<line x1=\"" << num(f.px(x)) << "\" y1=\"" << num(kH - kBottom) << "\" x2=\""
      << num(f.px(x)) << "\" y2=\"" << num(kH - kBottom + 5) << "\" stroke=\"black\"/>\n"
      << "<text x=\"" << num(f.px(x)) << "\" y=\"" << num(kH - kBottom + 18)
      << "\" text-anchor=\"middle\">" << label(x) << "</text>\n";
  o << "<rect x=\"" << num(kLeft) << "\" y=\"" << num(kTop) << "\" width=\""
    << num(kW - kLeft - kRight) << "\" height=\"" << num(kH - kTop - kBottom)
    << "\" fill=\"none\" stroke=\"black\"/>\n"
    << "<text x=\"" << num((kLeft + kW - kRight) / 2) << "\" y=\"" << num(kH - 16)
    << "\" text-anchor=\"middle\">" << xml_escape(xl) << "</text>\n"
    << "<text transform=\"translate(18," << num((kTop + kH - kBottom) / 2)
    << ") rotate(-90)\" text-anchor=\"middle\">" << xml_escape(yl) << "</text>\n";
}

void legend(std::ostringstream& o, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    const double y = kTop + 10 + 20 * i;
    o << "<rect x=\"" << num(kW - kRight + 14) << "\" y=\"" << num(y - 9) << "\" width=\"14\" "
      << "height=\"10\" fill=\"" << kColors[i % 10] << "\"/>\n"
      << "<text x=\"" << num(kW - kRight + 34) << "\" y=\"" << num(y) << "\">"
      << xml_escape(names[i]) << "</text>\n";
  }
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / target, mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  // From the round value at or below lo to the one at or above hi, so the axis ends on ticks.
  std::vector<double> t;
  const long first = std::lround(std::floor(lo / step + 1e-9)),
             last = std::lround(std::ceil(hi / step - 1e-9));
  for (long k = first; k <= last; ++k) t.push_back(k * step);
  return t;
}

std::string render_svg(const LineChart& c) {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y1 = -x0, y0 = 0;
  for (const auto& s : c.series)
    for (const auto& [x, y] : s.points) {
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  std::ostringstream o;
  header(o, c.title);
  std::vector<std::string> names;
  for (const auto& s : c.series) names.push_back(s.name);
  if (!std::isfinite(x0)) {
    x0 = 0, x1 = 1, y1 = 1;
    o << "<text x=\"" << kW / 2 << "\" y=\"" << kH / 2
      << "\" text-anchor=\"middle\">no data</text>\n";
  }
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  const auto xt = nice_ticks(x0, x1), yt = nice_ticks(y0, y1);
  const Frame f{std::min(x0, xt.front()), std::max(x1, xt.back()), std::min(y0, yt.front()),
                std::max(y1, yt.back())};
  axes(o, f, xt, yt, c.x_label, c.y_label);
  for (size_t i = 0; i < c.series.size(); ++i) {
    const auto& pts = c.series[i].points;
    if (pts.empty()) continue;
    o << "<polyline fill=\"none\" stroke=\"" << kColors[i % 10]
      << "\" stroke-width=\"2\" points=\"";
    for (size_t j = 0; j < pts.size(); ++j) {
      if (c.steps && j > 0)
        o << num(f.px(pts[j].first)) << "," << num(f.py(pts[j - 1].second)) << " ";
      o << num(f.px(pts[j].first)) << "," << num(f.py(pts[j].second))
        << (j + 1 < pts.size() ? " " : "");
    }
    o << "\"/>\n";
    if (c.markers)
      for (const auto& [x, y] : pts)
        o << "<circle cx=\"" << num(f.px(x)) << "\" cy=\"" << num(f.py(y)) << "\" r=\"3.5\" fill=\""
          << kColors[i % 10] << "\"/>\n";
  }
  legend(o, names);
  o << "</svg>\n";
  return o.str();
}

std::string render_svg(const BarChart& c) {
  double y1 = 0;
  for (const auto& g : c.groups)
    for (double v : g.second) y1 = std::max(y1, v);
  if (y1 <= 0) y1 = 1;
  std::ostringstream o;
  header(o, c.title);
  const auto yt = nice_ticks(0, y1);
  const double n = std::max<size_t>(1, c.categories.size());
  const Frame f{0, n, 0, std::max(y1, yt.back())};
  axes(o, f, {}, yt, c.x_label, c.y_label);
  const double slot = (kW - kLeft - kRight) / n,
               bar = slot * 0.8 / std::max<size_t>(1, c.groups.size());
  // Label every category when they fit, else every k-th.
  const size_t every = std::max<size_t>(
      1, static_cast<size_t>(std::ceil(c.categories.size() * 28.0 / (kW - kLeft - kRight))));
  for (size_t k = 0; k < c.categories.size(); ++k) {
    if (k % every == 0)
      o << "<text x=\"" << num(f.px(k + 0.5)) << "\" y=\"" << num(kH - kBottom + 18)
        << "\" text-anchor=\"middle\">" << xml_escape(c.categories[k]) << "</text>\n";
    for (size_t g = 0; g < c.groups.size(); ++g) {
      const double v = k < c.groups[g].second.size() ? c.groups[g].second[k] : 0;
      if (v <= 0) continue;
      o << "<rect x=\"" << num(f.px(k) + slot * 0.1 + bar * g) << "\" y=\"" << num(f.py(v))
        << "\" width=\"" << num(bar) << "\" height=\"" << num(f.py(0) - f.py(v)) << "\" fill=\""
        << kColors[g % 10] << "\"/>\n";
    }
  }
  std::vector<std::string> names;
  for (const auto& g : c.groups) names.push_back(g.first);
  legend(o, names);
  o << "</svg>\n";
  return o.str();
}

}  // namespace sy::bench
