// The bench report: report.json (machine-readable, schema "switchyard.bench" version
// kReportSchemaVersion; fields are only ever added), report.md (the side-by-side tables) and the
// SVG plots, all written into one folder.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_run.h"

namespace sy::bench {

constexpr int kReportSchemaVersion = 1;

std::string report_json(const BenchReport& report);
std::string report_markdown(const BenchReport& report);
// The plots' file names, and (file name, SVG text) for every plot.
std::vector<std::string> plot_files();
std::vector<std::pair<std::string, std::string>> report_plots(const BenchReport& report);

// Creates `dir` and writes everything into it; returns the paths written.
std::vector<std::filesystem::path> write_report(const BenchReport& report,
                                                const std::filesystem::path& dir);

}  // namespace sy::bench
