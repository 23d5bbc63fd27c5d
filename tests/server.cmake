# The HTTP server: config, units, the engine runner, the API end to end, hot swap / split /
# shadow, and a few-second loopback load smoke of `switchyard bench-serve`.
if(NOT SWITCHYARD_SERVER)
  return()
endif()
foreach(t test_server_config test_server_units test_server_runner test_server_http test_server_swap
    test_chat_output
    test_server_limits test_server_openai test_server_tokenize test_server_structured)
  switchyard_add_test(${t} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${t}.cpp LIBS switchyard_server switchyard_modelgen)
  add_dependencies(${t} switchyard_scheduler_fixed_window switchyard_scheduler_dynamic switchyard_backend_cpu_ref)
endforeach()
# Drain refusals, in process and by SIGTERM to the serve command (a child process).
switchyard_add_test(test_server_drain SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_server_drain.cpp
  LIBS switchyard_server switchyard_bench)
add_dependencies(test_server_drain switchyard switchyard_scheduler_fixed_window switchyard_backend_cpu_ref)
target_compile_definitions(test_server_drain PRIVATE SWITCHYARD_BIN="$<TARGET_FILE:switchyard>")
add_test(NAME bench_serve_smoke COMMAND $<TARGET_FILE:switchyard> bench-serve
  --config ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/serve_smoke.toml --duration 3 --clients 4 --max-tokens 8
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(bench_serve_smoke PROPERTIES TIMEOUT 120
  PASS_REGULAR_EXPRESSION "requests: [1-9][0-9]*, errors: 0, requests/s: [0-9.]+.*latency ms: mean [0-9.]+, p50 [0-9.]+, p90 [0-9.]+, p99 [0-9.]+")
add_test(NAME serve_bad_config COMMAND $<TARGET_FILE:switchyard> serve --config ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/cli_bad_key.toml)
set_tests_properties(serve_bad_config PROPERTIES
  PASS_REGULAR_EXPRESSION "switchyard serve: error: .*cli_bad_key.toml:11:12: engine.max_seqs: expected an integer, got string")
if(SWITCHYARD_NODE_TESTS)
  # The official OpenAI Node SDK as the conformance client (tests/openai_sdk; needs node and npm,
  # which scripts/install-deps.sh installs, and the npm registry for the pinned package).
  add_test(NAME openai_sdk_conformance COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/openai_sdk/run.sh
    $<TARGET_FILE:switchyard> ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR})
  set_tests_properties(openai_sdk_conformance PROPERTIES TIMEOUT 300
    PASS_REGULAR_EXPRESSION "[0-9]+ checks passed\n" FAIL_REGULAR_EXPRESSION "FAIL |some FAILED")
endif()
