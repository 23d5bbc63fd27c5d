// The SVG writer: well-formed XML (checked by a small parser here), one polyline per series
// with one coordinate pair per point, escaped text, round-number ticks; and report.json's
// schema order, escapes and nulls (nlohmann::ordered_json writes it).
#include <gtest/gtest.h>

#include <cstring>
#include <regex>

#include <nlohmann/json.hpp>

#include "bench/report.h"
#include "bench/svg.h"

using namespace sy::bench;

namespace {

// Checks XML well-formedness: one root element, nested tags closed in order, quoted attributes,
// and '<' / '&' in text or attribute values only as the five predefined entities.
std::string xml_problem(const std::string& x) {
  std::vector<std::string> stack;
  size_t i = 0, roots = 0;
  auto entity_ok = [&](size_t at) {
    for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
      if (x.compare(at, std::strlen(e), e) == 0) return true;
    return false;
  };
  while (i < x.size()) {
    if (x[i] != '<') {
      if (x[i] == '&' && !entity_ok(i)) return "bad entity at " + std::to_string(i);
      if (stack.empty() && !isspace(static_cast<unsigned char>(x[i])))
        return "text outside the root";
      ++i;
      continue;
    }
    if (x.compare(i, 2, "<?") == 0) {
      i = x.find("?>", i);
      if (i == std::string::npos) return "unclosed <?";
      i += 2;
      continue;
    }
    if (x.compare(i, 2, "</") == 0) {
      const size_t end = x.find('>', i);
      const std::string name = x.substr(i + 2, end - i - 2);
      if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
      stack.pop_back();
      i = end + 1;
      continue;
    }
    size_t j = i + 1;
    while (j < x.size() &&
           (isalnum(static_cast<unsigned char>(x[j])) || x[j] == '-' || x[j] == ':'))
      ++j;
    const std::string name = x.substr(i + 1, j - i - 1);
    if (name.empty()) return "empty tag name at " + std::to_string(i);
    for (;;) {
      while (isspace(static_cast<unsigned char>(x[j]))) ++j;
      if (x.compare(j, 2, "/>") == 0) {
        j += 2;
        if (stack.empty()) ++roots;
        break;
      }
      if (x[j] == '>') {
        if (stack.empty()) ++roots;
        stack.push_back(name);
        ++j;
        break;
      }
      size_t k = j;
      while (k < x.size() && x[k] != '=' && !isspace(static_cast<unsigned char>(x[k]))) ++k;
      if (k == j || x[k] != '=' || x[k + 1] != '"') return "bad attribute in <" + name + ">";
      const size_t close = x.find('"', k + 2);
      if (close == std::string::npos) return "unclosed attribute";
      for (size_t m = k + 2; m < close; ++m) {
        if (x[m] == '<') return "'<' in an attribute";
        if (x[m] == '&' && !entity_ok(m)) return "bad entity in an attribute";
      }
      j = close + 1;
    }
    i = j;
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  if (roots != 1) return std::to_string(roots) + " root elements";
  return "";
}

std::vector<size_t> polyline_pairs(const std::string& svg) {
  std::vector<size_t> out;
  const std::regex re("<polyline [^>]*points=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it) {
    const std::string pts = (*it)[1];
    size_t n = 0;
    for (char c : pts) n += c == ',';
    out.push_back(n);
  }
  return out;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(BenchSvg, TheCheckerRefusesBrokenXml) {
  EXPECT_EQ(xml_problem("<a><b/></a>"), "");
  EXPECT_NE(xml_problem("<a><b></a>"), "");
  EXPECT_NE(xml_problem("<a x=\"1 < 2\"/>"), "");
  EXPECT_NE(xml_problem("<a>R&D</a>"), "");
  EXPECT_NE(xml_problem("<a/><b/>"), "");
}

TEST(BenchSvg, LineChartHasOnePolylinePerSeriesWithItsPoints) {
  LineChart c;
  c.title = "TTFT <p90> & more";
  c.x_label = "ms";
  c.y_label = "share";
  c.series = {{"dense/original", {{0, 0}, {1, 0.2}, {2, 0.5}, {3, 0.7}, {4, 1}}},
              {"hybrid \"fast\"", {{0.5, 0}, {2, 0.5}, {6, 1}}},
              {"empty", {}}};
  c.markers = true;
  const std::string svg = render_svg(c);
  EXPECT_EQ(xml_problem(svg), "") << svg;
  EXPECT_EQ(polyline_pairs(svg), (std::vector<size_t>{5, 3}));  // none for the empty series
  EXPECT_EQ(count(svg, "<circle"), 8u);
  EXPECT_NE(svg.find("TTFT &lt;p90&gt; &amp; more"), std::string::npos);
  EXPECT_NE(svg.find("hybrid &quot;fast&quot;"), std::string::npos);
  EXPECT_NE(svg.find(">empty</text>"), std::string::npos);  // still in the legend

  c.steps = true;  // a step line repeats each y at the next x: 2n - 1 pairs
  c.markers = false;
  EXPECT_EQ(polyline_pairs(render_svg(c)), (std::vector<size_t>{9, 5}));
}

TEST(BenchSvg, EmptyChartSaysNoData) {
  const std::string svg = render_svg(LineChart{"nothing", "x", "y", {}, false, false});
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_NE(svg.find(">no data</text>"), std::string::npos);
}

TEST(BenchSvg, BarChartDrawsABarPerNonZeroValue) {
  BarChart b{"batch sizes",
             "sequences",
             "% of steps",
             {"1", "2", "3"},
             {{"a", {50, 0, 50}}, {"b", {10, 20, 70}}}};
  const std::string svg = render_svg(b);
  EXPECT_EQ(xml_problem(svg), "") << svg;
  // background + frame + 2 legend swatches + 5 bars
  EXPECT_EQ(count(svg, "<rect"), 9u);
}

TEST(BenchSvg, NiceTicks) {
  auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << i;
  };
  near(nice_ticks(0, 97), {0, 20, 40, 60, 80, 100});
  near(nice_ticks(0, 1), {0, 0.2, 0.4, 0.6, 0.8, 1});
  near(nice_ticks(3, 3.4), {3, 3.1, 3.2, 3.3, 3.4});
  near(nice_ticks(-5, 12), {-5, 0, 5, 10, 15});
  near(nice_ticks(0.5, 97), {0, 20, 40, 60, 80, 100});
}

TEST(BenchJson, ReportKeepsSchemaOrderAndNullsNonFinite) {
  BenchReport r;
  r.config.origin = "a \"q\"\n.toml";
  r.config.workload.rate = INFINITY;
  r.run_time_s = 1.23456789;
  VariantResult skipped;
  skipped.name = "gone";
  skipped.skip_reason = "no device";
  r.variants.push_back(skipped);
  const std::string text = report_json(r);
  EXPECT_EQ(text.rfind("{\n  \"schema\": \"switchyard.bench\",\n  \"schema_version\": 1,\n  "
                       "\"config\": \"a \\\"q\\\"\\n.toml\",\n  \"run_time_s\": 1.23457,\n",
                       0),
            0u)
      << text;
  const auto j = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "schema_version", "config", "run_time_s",
                                            "definitions", "workload", "slo", "variants"}));
  EXPECT_TRUE(j["workload"]["rate"].is_null());
  EXPECT_EQ(
      j["variants"][0].dump(),
      "{\"name\":\"gone\",\"status\":\"skipped\",\"skip_reason\":\"no device\",\"wall_s\":0}");
}
