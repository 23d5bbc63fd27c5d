# Purpose-built bad plugins, each refused by the host for one reason.
set(SWITCHYARD_TEST_PLUGIN_OUT ${CMAKE_BINARY_DIR}/test_plugins)
function(switchyard_test_plugin target source)
  add_library(${target} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/${source})
  set_target_properties(${target} PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${SWITCHYARD_TEST_PLUGIN_OUT}
    C_STANDARD 99 C_EXTENSIONS OFF)
  target_compile_options(${target} PRIVATE -pedantic -Werror)
  target_link_libraries(${target} PRIVATE switchyard_abi)
endfunction()
switchyard_test_plugin(switchyard_scheduler_bad_major bad_major.c)
switchyard_test_plugin(switchyard_scheduler_no_entry no_entry.c)
switchyard_test_plugin(switchyard_scheduler_init_fail init_fail.c)
switchyard_test_plugin(switchyard_scheduler_newer_minor newer_minor.c)
switchyard_test_plugin(abi_c99_probe abi_c99.c)
switchyard_test_plugin(switchyard_scheduler_note_major note_major.c)
switchyard_test_plugin(switchyard_scheduler_note_mismatch note_mismatch.c)

switchyard_add_test(test_plugin_host SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_plugin_host.cpp
  LIBS switchyard_engine switchyard_modelgen)
add_dependencies(test_plugin_host switchyard_scheduler_bad_major switchyard_scheduler_no_entry
  switchyard_scheduler_init_fail switchyard_scheduler_newer_minor abi_c99_probe
  switchyard_scheduler_note_major switchyard_scheduler_note_mismatch
  switchyard_scheduler_fixed_window switchyard_backend_cpu_ref)
