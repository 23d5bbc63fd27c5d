# Fault isolation: bad plans are caught by the host's validator and the step runs on the
# fallback plan; a scheduler in a child process may crash or hang without taking the engine down.
set(SWITCHYARD_FAULT_PLUGIN_OUT ${CMAKE_BINARY_DIR}/test_plugins_faults)
add_library(switchyard_scheduler_bad_plan MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/bad_plan.c)
set_target_properties(switchyard_scheduler_bad_plan PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
  ${SWITCHYARD_FAULT_PLUGIN_OUT} C_STANDARD 99 C_EXTENSIONS OFF)
target_compile_options(switchyard_scheduler_bad_plan PRIVATE -pedantic -Werror)
target_link_libraries(switchyard_scheduler_bad_plan PRIVATE switchyard_abi)

switchyard_add_test(test_faults SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_faults.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test_process_scheduler.cpp LIBS switchyard_engine switchyard_modelgen)
target_compile_definitions(test_faults PRIVATE
  SWITCHYARD_FAULT_PLUGIN_DIR="${SWITCHYARD_FAULT_PLUGIN_OUT}"
  SWITCHYARD_ABI_FIXTURE_DIR="${SWITCHYARD_ABI_FIXTURE_OUT}"
  SWITCHYARD_RUNNER="$<TARGET_FILE:switchyard-plugin-runner>")
add_dependencies(test_faults switchyard_scheduler_bad_plan switchyard-plugin-runner
  switchyard_scheduler_fixed_window switchyard_backend_cpu_ref switchyard_scheduler_v1_0_fcfs
  switchyard_scheduler_bad_major)

# The same through the CLI and TOML: isolation = "process" with a plugin that segfaults.
add_test(NAME cli_run_isolated_crash COMMAND $<TARGET_FILE:switchyard> run
  --config ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/cli_isolated_crash.toml --prompt "hello"
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(cli_run_isolated_crash PROPERTIES
  ENVIRONMENT SWITCHYARD_PLUGIN_PATH=${SWITCHYARD_FAULT_PLUGIN_OUT}
  PASS_REGULAR_EXPRESSION "scheduler bad_plan: plan failed: scheduler process died during plan: killed by signal 11 \\(Segmentation fault\\)[;] running the host's fallback plan.*\\[0\\] hello.*scheduler bad_plan: 1 requests, 8 tokens")
