# Quantisation types: the codecs against an independent decoder, the reference quantizers against
# llama.cpp's files, and whole-model logits over those files on the CPU backends.
switchyard_add_test(test_quant_reference SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_quant_reference.cpp
  LIBS switchyard_gguf)
switchyard_add_test(test_quant_formats SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_quant_formats.cpp
  LIBS switchyard_common)
switchyard_add_test(test_reference_logits SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_reference_logits.cpp
  LIBS switchyard_engine switchyard_modelgen)
add_dependencies(test_reference_logits switchyard_backend_cpu_ref switchyard_backend_cpu_onednn)
switchyard_add_test(test_quant_mix SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_quant_mix.cpp
  LIBS switchyard_engine switchyard_modelgen)
# The CLI: mkmodel writes llama-quantize's Q4_K_M mix, info names each tensor's type, and a file
# holding a type Switchyard does not implement is refused naming it and the supported types.
add_test(NAME cli_mkmodel_q4_k_m COMMAND ${SY_CLI} mkmodel --dtype q4_k_m --seed 11 --n-vocab 512
  --n-ctx 256 --n-embd 256 --n-layer 2 --n-ff 768 --n-head 4 --n-head-kv 2
  --out ${CMAKE_BINARY_DIR}/cli-models/mk-q4_k_m.gguf)
set_tests_properties(cli_mkmodel_q4_k_m PROPERTIES FIXTURES_SETUP cli_model_q4km
  PASS_REGULAR_EXPRESSION "wrote .*mk-q4_k_m.gguf: llama, 1.8M parameters .*q4_k_m")
add_test(NAME cli_info_type_names COMMAND ${SY_CLI} info ${CMAKE_BINARY_DIR}/cli-models/mk-q4_k_m.gguf)
set_tests_properties(cli_info_type_names PROPERTIES FIXTURES_REQUIRED cli_model_q4km
  PASS_REGULAR_EXPRESSION "general.file_type +15 \\(Q4_K_M\\).*token_embd.weight +Q4_K +\\{256, 512\\}.*output.weight +Q6_K +\\{256, 512\\}.*blk.1.attn_v.weight +Q6_K .*types: F32 x5, Q4_K x13, Q6_K x3")
add_test(NAME cli_info_unsupported_type COMMAND ${SY_CLI} info ${SY_FIX}/iq2_xxs.gguf)
set_tests_properties(cli_info_unsupported_type PROPERTIES
  PASS_REGULAR_EXPRESSION "iq2_xxs.gguf: bad_tensor_type: tensor 'w' type 16 \\(IQ2_XXS\\) is not supported[;] supported types: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4, I32")
