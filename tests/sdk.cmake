# The plugin SDK: `cmake --install` output used by an out-of-tree plugin (samples/scheduler_sjf),
# and `switchyard plugins --verbose`.
add_test(NAME sdk_sample_scheduler_sjf
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/sdk/sample_out_of_tree.sh ${CMAKE_BINARY_DIR}
    ${PROJECT_SOURCE_DIR} $<TARGET_FILE:switchyard>)
set_tests_properties(sdk_sample_scheduler_sjf PROPERTIES TIMEOUT 600
  PASS_REGULAR_EXPRESSION "sample scheduler_sjf: built out of tree, tested, and generated the reference text")

# Name, version, ABI version, path and capability names of each plugin; the 1.0 fixture shows
# the version it negotiated, not the host's.
add_test(NAME cli_plugins_verbose COMMAND $<TARGET_FILE:switchyard> plugins --load --verbose
  --dir ${CMAKE_BINARY_DIR}/test_plugins_abi)
set_tests_properties(cli_plugins_verbose PROPERTIES PASS_REGULAR_EXPRESSION
  "ok +scheduler +v1_0_fcfs +1\\.0\\.0 +ABI 1\\.0  FCFS built against the ABI 1\\.0 headers\n +path +[^\n]*/test_plugins_abi/switchyard_scheduler_v1_0_fcfs\\.so\n +abi +1\\.0 \\(host [0-9]+\\.[0-9]+\\)\n +capabilities +chunked_prefill \\(0x100\\)\n")

# samples/scheduler_priority: a C++ scheduler on the plugin SDK, compiled against sdk/ and abi/
# alone (switchyard_add_plugin links the ABI headers only; no Switchyard library), and the test
# that loads it.
set(SWITCHYARD_SDK_SAMPLE_OUT ${CMAKE_BINARY_DIR}/test_plugins_sdk)
switchyard_add_plugin(switchyard_scheduler_priority
  ${PROJECT_SOURCE_DIR}/samples/scheduler_priority/priority.cpp)
target_include_directories(switchyard_scheduler_priority PRIVATE ${PROJECT_SOURCE_DIR}/sdk)
set_target_properties(switchyard_scheduler_priority PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${SWITCHYARD_SDK_SAMPLE_OUT})
switchyard_add_test(test_sdk_sample SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_sdk_sample.cpp
  LIBS switchyard_core)
target_compile_definitions(test_sdk_sample PRIVATE
  SWITCHYARD_SDK_SAMPLE_DIR="${SWITCHYARD_SDK_SAMPLE_OUT}")
add_dependencies(test_sdk_sample switchyard_scheduler_priority)
