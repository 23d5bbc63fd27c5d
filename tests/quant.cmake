# Quantisation types: the codecs against an independent decoder, the reference quantizers against
# llama.cpp's files, and whole-model logits over those files on the CPU backends.
switchyard_add_test(test_quant_reference SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_quant_reference.cpp
  LIBS switchyard_gguf)
switchyard_add_test(test_quant_formats SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_quant_formats.cpp
  LIBS switchyard_common)
switchyard_add_test(test_reference_logits SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_reference_logits.cpp
  LIBS switchyard_core)
add_dependencies(test_reference_logits switchyard_backend_cpu_ref switchyard_backend_cpu_onednn)
switchyard_add_test(test_quant_mix SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_quant_mix.cpp
  LIBS switchyard_core)
