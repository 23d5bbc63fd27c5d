switchyard_add_test(test_llama_model SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_llama_model.cpp
  LIBS switchyard_engine switchyard_modelgen)
add_dependencies(test_llama_model switchyard_backend_cpu_ref switchyard_backend_cpu_onednn
  switchyard_backend_ref_no_hybrid
  switchyard_scheduler_fixed_window)
# The decoder's tensor table and key rules: llama.cpp's optional tensors and keys against the
# naive forward, and refusals by name.
switchyard_add_test(test_decoder_tables SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_decoder_tables.cpp
  LIBS switchyard_engine switchyard_modelgen)
add_dependencies(test_decoder_tables switchyard_backend_cpu_ref switchyard_backend_cpu_onednn)
# llama.cpp-written files against llama.cpp's logits (../shared/ggml-reference).
switchyard_add_test(test_reference_models SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_reference_models.cpp
  LIBS switchyard_engine switchyard_modelgen)
add_dependencies(test_reference_models switchyard_backend_cpu_ref switchyard_backend_cpu_onednn)
# The 2026 families: the writer's files against llama.cpp's logits (tests/fixtures/llamacpp),
# read back, counted, and refused by name when edited.
switchyard_add_test(test_model_families SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_model_families.cpp
  LIBS switchyard_engine switchyard_modelgen)
add_dependencies(test_model_families switchyard_backend_cpu_ref switchyard_backend_cpu_onednn)
