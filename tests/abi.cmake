# ABI compatibility: plugins built against older minors' frozen headers
# (abi_fixtures/v1.0 ... v1.4) load and work under this host, and scripts/abi-check.sh holds the current
# headers to the committed baseline.
set(SWITCHYARD_ABI_FIXTURE_OUT ${CMAKE_BINARY_DIR}/test_plugins_abi)
set(SWITCHYARD_ABI_1_0 ${CMAKE_CURRENT_SOURCE_DIR}/abi_fixtures/v1.0)

# A C99 plugin that sees only the 1.0 headers: not switchyard_abi, whose headers are newer.
function(switchyard_v1_0_plugin target source)
  add_library(${target} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/${source})
  set_target_properties(${target} PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
    ${SWITCHYARD_ABI_FIXTURE_OUT} C_STANDARD 99 C_EXTENSIONS OFF)
  target_include_directories(${target} PRIVATE ${SWITCHYARD_ABI_1_0})
  target_compile_options(${target} PRIVATE -pedantic -Werror)
  target_link_options(${target} PRIVATE -Wl,--no-undefined
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/abi/plugin.map)
endfunction()
switchyard_v1_0_plugin(switchyard_scheduler_v1_0_fcfs v1_0_scheduler.c)

# The 1.1 release's fixed_window, built against the frozen 1.1 headers (abi_fixtures/v1.1): a
# plugin of the minor before routers must load and plan under this host.
add_library(switchyard_scheduler_v1_1_fixed_window MODULE
  ${PROJECT_SOURCE_DIR}/plugins/fixed_window/fixed_window.cpp)
set_target_properties(switchyard_scheduler_v1_1_fixed_window PROPERTIES PREFIX ""
  LIBRARY_OUTPUT_DIRECTORY ${SWITCHYARD_ABI_FIXTURE_OUT} CXX_VISIBILITY_PRESET hidden)
target_include_directories(switchyard_scheduler_v1_1_fixed_window PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/abi_fixtures/v1.1 ${PROJECT_SOURCE_DIR}/sdk)
target_link_options(switchyard_scheduler_v1_1_fixed_window PRIVATE -Wl,--no-undefined
  -Wl,--version-script=${PROJECT_SOURCE_DIR}/abi/plugin.map)

# The state-aware probe scheduler built against the frozen 1.2 headers (abi_fixtures/v1.2): a
# plugin of the minor before per-engine counters must load and plan, and its counter_add calls
# during plan() still land in the planning engine's counters.
add_library(switchyard_scheduler_v1_2_state_view_probe MODULE
  ${CMAKE_CURRENT_SOURCE_DIR}/plugins/state_view_probe.c)
set_target_properties(switchyard_scheduler_v1_2_state_view_probe PROPERTIES PREFIX ""
  LIBRARY_OUTPUT_DIRECTORY ${SWITCHYARD_ABI_FIXTURE_OUT} C_STANDARD 99 C_EXTENSIONS OFF)
target_include_directories(switchyard_scheduler_v1_2_state_view_probe PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/abi_fixtures/v1.2)
target_compile_options(switchyard_scheduler_v1_2_state_view_probe PRIVATE -pedantic -Werror)
target_link_options(switchyard_scheduler_v1_2_state_view_probe PRIVATE -Wl,--no-undefined
  -Wl,--version-script=${PROJECT_SOURCE_DIR}/abi/plugin.map)

# cpu_ref behind the frozen 1.0, 1.3, 1.4 and 1.5 headers (abi_fixtures/v1.N): a 1.0 table never
# has a later member read; backends of the minors before the 1.5 ops (or the 1.6 unary kinds)
# keep loading and running the models that do not need them, and are refused, naming the ops,
# for the families that do.
foreach(minor 0 3 4 5)
  set(target switchyard_backend_v1_${minor}_backend)
  add_library(${target} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/v1_n_backend.c)
  set_target_properties(${target} PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
    ${SWITCHYARD_ABI_FIXTURE_OUT} C_STANDARD 99 C_EXTENSIONS OFF)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/abi_fixtures/v1.${minor})
  target_compile_definitions(${target} PRIVATE SY_FIXTURE_MINOR=${minor}
    SY_WRAPPED_BACKEND="${SWITCHYARD_PLUGIN_DIR}/switchyard_backend_cpu_ref.so")
  target_compile_options(${target} PRIVATE -pedantic -Werror)
  target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS})
  target_link_options(${target} PRIVATE -Wl,--no-undefined
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/abi/plugin.map)
endforeach()

switchyard_add_test(test_abi_compat SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_abi_compat.cpp
  LIBS switchyard_engine switchyard_modelgen)
target_compile_definitions(test_abi_compat PRIVATE
  SWITCHYARD_ABI_FIXTURE_DIR="${SWITCHYARD_ABI_FIXTURE_OUT}")
add_dependencies(test_abi_compat switchyard_scheduler_v1_0_fcfs switchyard_backend_v1_0_backend
  switchyard_backend_v1_3_backend switchyard_backend_v1_4_backend switchyard_backend_v1_5_backend
  switchyard_scheduler_v1_1_fixed_window switchyard_scheduler_v1_2_state_view_probe
  switchyard_scheduler_state_view_probe switchyard_backend_cpu_ref switchyard_scheduler_fixed_window)

add_library(switchyard_backend_short_table MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/short_table.c)
set_target_properties(switchyard_backend_short_table PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
  ${SWITCHYARD_ABI_FIXTURE_OUT} C_STANDARD 99 C_EXTENSIONS OFF)
target_link_libraries(switchyard_backend_short_table PRIVATE switchyard_abi)
add_dependencies(test_abi_compat switchyard_backend_short_table)

# scripts/abi-check.sh: the headers against the committed baseline, then deliberate changes to a
# temporary copy: each incompatible one must fail it (exit 8), each compatible one pass.
if(SWITCHYARD_ABI_CHECK_TESTS)
  add_test(NAME abi_check COMMAND ${PROJECT_SOURCE_DIR}/scripts/abi-check.sh)
  set_tests_properties(abi_check PROPERTIES FAIL_REGULAR_EXPRESSION "abi-check: FAILED")
  foreach(case reorder retype move_to_end insert_middle grow_array_element frozen_constant append
      new_enumerator)
    add_test(NAME abi_check_case_${case}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/abi/abi_check_case.sh ${case})
    set_tests_properties(abi_check_case_${case} PROPERTIES
      PASS_REGULAR_EXPRESSION "case ${case}: exit [08] as expected")
  endforeach()
endif()
