// Minimal SVG charts (line and grouped-bar) that open in any browser: axes with round-number
// ticks, one colour per series, a legend. No dependencies; the text is escaped for XML.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sy::bench {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in the given order
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  bool steps = false;    // hold each y until the next x (time series, CDFs)
  bool markers = false;  // a dot at every point
};

struct BarChart {
  std::string title, x_label, y_label;
  std::vector<std::string> categories;                              // along x
  std::vector<std::pair<std::string, std::vector<double>>> groups;  // name, one value per category
};

std::string render_svg(const LineChart& chart);
std::string render_svg(const BarChart& chart);

// Round-number axis ticks (a step of 1, 2 or 5 times 10^k, about `target` steps) from the tick
// at or below lo to the one at or above hi.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

std::string xml_escape(const std::string& s);

}  // namespace sy::bench
