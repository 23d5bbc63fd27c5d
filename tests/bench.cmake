# The benchmark harness: metrics on hand-written logs, generator distributions, compare-config
# errors, SVG/JSON writers, the capacity model, the replay drivers (in-process and HTTP against a
# fake server), and `switchyard bench` once.
switchyard_add_test(test_bench SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_metrics.cpp ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_workload.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_config.cpp ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_svg.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_capacity.cpp ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_driver.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_http.cpp ${CMAKE_CURRENT_SOURCE_DIR}/test_bench_sweep.cpp
  LIBS switchyard_bench nlohmann_json::nlohmann_json)
add_dependencies(test_bench switchyard_scheduler_fixed_window switchyard_backend_cpu_ref)

set(SY_BENCH_OUT ${CMAKE_BINARY_DIR}/cli-bench-out)
add_test(NAME cli_bench COMMAND $<TARGET_FILE:switchyard> bench
  --config ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/bench_tiny.toml --out ${SY_BENCH_OUT}
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(cli_bench PROPERTIES FIXTURES_SETUP cli_bench_out TIMEOUT 120
  PASS_REGULAR_EXPRESSION "\\| completed / failed \\| 6 / 0 \\|.*\\| missing \\|.*- missing: skipped: [^\n]*nope")
add_test(NAME cli_bench_report COMMAND ${CMAKE_COMMAND} -E cat ${SY_BENCH_OUT}/report.json
  ${SY_BENCH_OUT}/throughput_vs_load.svg)
set_tests_properties(cli_bench_report PROPERTIES FIXTURES_REQUIRED cli_bench_out
  PASS_REGULAR_EXPRESSION "\"schema\": \"switchyard.bench\",\n  \"schema_version\": 1,.*\"status\": \"ok\".*\"status\": \"skipped\".*<polyline[^>]*points=\"[0-9.]+,[0-9.]+ [0-9.]+,[0-9.]+\"")
# Each sweep point says how the engine ran it: mean batch, preemptions, prefix-cache hit rate
# (fixed_window has no prefix cache: null in the JSON, n/a in the table).
add_test(NAME cli_bench_sweep_stats COMMAND ${CMAKE_COMMAND} -E cat ${SY_BENCH_OUT}/report.json
  ${SY_BENCH_OUT}/report.md)
set_tests_properties(cli_bench_sweep_stats PROPERTIES FIXTURES_REQUIRED cli_bench_out
  PASS_REGULAR_EXPRESSION "\"batch_size_mean\": [1-9][0-9.]*,\n *\"preemptions\": [0-9]+,\n *\"prefix_cache_hit_rate\": null,.*\\| busy \\| batch \\| preempt \\| prefix hits \\| SLO \\|.*\\| tiny \\| 20 \\| 4 \\| [0-9.*]+ \\| [0-9]+ \\| [0-9]+ \\| [0-9]+ \\| [0-9]+% \\| [1-9][0-9]*\\.[0-9] \\| [0-9]+ \\| n/a \\| (met|missed) \\|")
add_test(NAME cli_bench_bad_config COMMAND $<TARGET_FILE:switchyard> bench
  --config ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/bench_bad.toml)
set_tests_properties(cli_bench_bad_config PROPERTIES
  PASS_REGULAR_EXPRESSION "bench_bad.toml:12:12: engine.max_seqs: expected an integer, got string")
add_test(NAME cli_bench_nothing_ran COMMAND $<TARGET_FILE:switchyard> bench --quiet
  --config ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/bench_none.toml --out ${CMAKE_BINARY_DIR}/cli-bench-none
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(cli_bench_nothing_ran PROPERTIES WILL_FAIL TRUE)
add_test(NAME cli_bench_nothing_ran_says_why COMMAND $<TARGET_FILE:switchyard> bench --quiet
  --config ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/bench_none.toml --out ${CMAKE_BINARY_DIR}/cli-bench-none
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(cli_bench_nothing_ran_says_why PROPERTIES
  PASS_REGULAR_EXPRESSION "- ghost: skipped: scheduler plugin 'nope' not found.*switchyard bench: no variant ran")
