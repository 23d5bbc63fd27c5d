# Hybrid (SSM + attention + MoE) models: the 1.1 ops on both CPU backends, the jamba / mamba /
# llama-MoE runtimes against a naive forward, and the engine end to end on a hybrid model.
switchyard_add_test(test_hybrid_ops SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_hybrid_ops.cpp
  LIBS switchyard_abi switchyard_common ${CMAKE_DL_LIBS})
add_dependencies(test_hybrid_ops switchyard_backend_cpu_ref switchyard_backend_cpu_onednn)

# Test plugins: cpu_ref's kernels without the hybrid ops, and a scheduler that checks the view's
# recurrent-state budget.
set(hybrid_test_plugins ${CMAKE_BINARY_DIR}/test_plugins)
file(GLOB ref_kernels ${PROJECT_SOURCE_DIR}/backends/cpu_ref/ref_*.cpp)
add_library(switchyard_backend_ref_no_hybrid MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/ref_no_hybrid.cpp
  ${ref_kernels})
target_include_directories(switchyard_backend_ref_no_hybrid PRIVATE ${PROJECT_SOURCE_DIR}/backends/cpu_ref)
target_link_libraries(switchyard_backend_ref_no_hybrid PRIVATE switchyard_sdk_backend switchyard_abi)
add_library(switchyard_scheduler_state_view_probe MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/state_view_probe.c)
target_link_libraries(switchyard_scheduler_state_view_probe PRIVATE switchyard_abi)
set_target_properties(switchyard_backend_ref_no_hybrid switchyard_scheduler_state_view_probe PROPERTIES
  PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${hybrid_test_plugins})

switchyard_add_test(test_hybrid_model SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_hybrid_model.cpp
  LIBS switchyard_engine switchyard_modelgen)
add_dependencies(test_hybrid_model switchyard_backend_cpu_ref switchyard_backend_cpu_onednn
  switchyard_backend_ref_no_hybrid)
switchyard_add_test(test_hybrid_engine SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_hybrid_engine.cpp
  LIBS switchyard_engine switchyard_modelgen)
add_dependencies(test_hybrid_engine switchyard_backend_cpu_ref switchyard_backend_cpu_onednn
  switchyard_scheduler_fixed_window switchyard_scheduler_dynamic switchyard_scheduler_state_view_probe
  switchyard-plugin-runner)
target_compile_definitions(test_hybrid_engine PRIVATE
  SWITCHYARD_RUNNER="$<TARGET_FILE:switchyard-plugin-runner>")
switchyard_add_test(test_hybrid_gguf SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_hybrid_gguf.cpp
  LIBS switchyard_engine switchyard_modelgen)

# The CLI: mkmodel writes the hybrid presets; bench-hybrid runs end to end on small models.
add_test(NAME cli_mkmodel_hybrid COMMAND $<TARGET_FILE:switchyard> mkmodel --preset hybrid-small
  --out ${CMAKE_BINARY_DIR}/cli-models/hybrid-small.gguf)
set_tests_properties(cli_mkmodel_hybrid PROPERTIES
  PASS_REGULAR_EXPRESSION "wrote .*hybrid-small.gguf: jamba, 3.3M parameters \\(2.7M active\\), f32")
add_test(NAME cli_bench_hybrid COMMAND $<TARGET_FILE:switchyard> bench-hybrid --dense dense-small
  --hybrid hybrid-small --lengths 16,48 --decode-tokens 2 --models-dir ${CMAKE_BINARY_DIR}/cli-models)
set_tests_properties(cli_bench_hybrid PROPERTIES
  PASS_REGULAR_EXPRESSION "hybrid-small +4 .*prompt +48: hybrid/dense prefill speed.*expert activations of hybrid-small")

# Prefix caching on hybrid models: state snapshots at KV-block boundaries.
switchyard_add_test(test_hybrid_prefix_cache
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_hybrid_prefix_cache.cpp LIBS switchyard_core)
add_dependencies(test_hybrid_prefix_cache switchyard_backend_cpu_ref switchyard_scheduler_dynamic
  switchyard_scheduler_fixed_window)
