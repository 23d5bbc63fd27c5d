# The CLI end to end: each command once, and its errors.
set(SY_CLI $<TARGET_FILE:switchyard>)
set(SY_FIX ${CMAKE_CURRENT_SOURCE_DIR}/fixtures)
add_test(NAME cli_mkmodel COMMAND ${SY_CLI} mkmodel --preset dense-tiny --dtype q8_0 --seed 3
  --out ${CMAKE_BINARY_DIR}/cli-models/mk-q8.gguf)
set_tests_properties(cli_mkmodel PROPERTIES FIXTURES_SETUP cli_model
  PASS_REGULAR_EXPRESSION "wrote .*mk-q8.gguf: llama, 0.1M parameters \\(0.1M active\\), q8_0")
add_test(NAME cli_info COMMAND ${SY_CLI} info ${CMAKE_BINARY_DIR}/cli-models/mk-q8.gguf)
set_tests_properties(cli_info PROPERTIES FIXTURES_REQUIRED cli_model
  PASS_REGULAR_EXPRESSION "general.architecture +\"llama\".*blk.1.ffn_down.weight +Q8_0 +\\{128, 64\\}")
add_test(NAME cli_plugins COMMAND ${SY_CLI} plugins --load --dir ${CMAKE_BINARY_DIR}/test_plugins)
set_tests_properties(cli_plugins PROPERTIES
  PASS_REGULAR_EXPRESSION "this runs its code.*refused .*bad_major.so: ABI major version mismatch.*ok +backend +cpu_onednn")
# Without --load nothing is loaded: in-tree plugins are listed from their notes, the test
# plugins (no note) are unknown, and the note of note_major refuses it before its constructor
# could write its marker file.
add_test(NAME cli_plugins_notes COMMAND ${CMAKE_COMMAND} -E env SY_NOTE_MARKER=${CMAKE_BINARY_DIR}/note-marker
  ${SY_CLI} plugins --dir ${CMAKE_BINARY_DIR}/test_plugins)
set_tests_properties(cli_plugins_notes PROPERTIES PASS_REGULAR_EXPRESSION
  "nothing is loaded.*unknown +plugin [^\n]*bad_major.so: no metadata note.*refused +plugin [^\n]*note_major.so: implements ABI 2.0, host implements.*ok +backend +cpu_onednn +0.1.0 +ABI 1.[0-9]+  CPU backend"
  FAIL_REGULAR_EXPRESSION "constructor ran")
add_test(NAME cli_run COMMAND ${SY_CLI} run --config ${SY_FIX}/cli_tiny.toml --prompt "hello"
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(cli_run PROPERTIES PASS_REGULAR_EXPRESSION "\\[0\\] hello.*1 requests, 8 tokens")
add_test(NAME cli_run_bad_config COMMAND ${SY_CLI} run --config ${SY_FIX}/cli_bad_key.toml)
set_tests_properties(cli_run_bad_config PROPERTIES
  PASS_REGULAR_EXPRESSION "cli_bad_key.toml:11:12: engine.max_seqs: expected an integer, got string")
add_test(NAME cli_run_bad_plugin COMMAND ${SY_CLI} run --config ${SY_FIX}/cli_bad_plugin.toml
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(cli_run_bad_plugin PROPERTIES ENVIRONMENT SWITCHYARD_PLUGIN_PATH=${CMAKE_BINARY_DIR}/test_plugins
  PASS_REGULAR_EXPRESSION "switchyard_scheduler_bad_major.so: ABI major version mismatch: plugin implements 2.0")
add_test(NAME cli_unknown_option COMMAND ${SY_CLI} mkmodel --out x.gguf --n-layers 3)
set_tests_properties(cli_unknown_option PROPERTIES PASS_REGULAR_EXPRESSION "unknown option --n-layers")
# bench-backend on a user's file (a row named after it, its shape read from it); MXFP4_MOE on a
# dense preset refused (it would measure Q8_0 under MXFP4's name).
add_test(NAME cli_bench_backend_model COMMAND ${SY_CLI} bench-backend
  --model ${CMAKE_BINARY_DIR}/cli-models/mk-q8.gguf --repeat 1 --prompt-len 8 --decode-tokens 2)
set_tests_properties(cli_bench_backend_model PROPERTIES FIXTURES_REQUIRED cli_model
  PASS_REGULAR_EXPRESSION "model +params +MB/token.*\nmk-q8 +0.1M ")
# A --model that is not a GGUF file is refused, naming it, before any work.
add_test(NAME cli_bench_backend_model_not_gguf COMMAND ${SY_CLI} bench-backend
  --model ${SY_FIX}/cli_tiny.toml)
set_tests_properties(cli_bench_backend_model_not_gguf PROPERTIES PASS_REGULAR_EXPRESSION
  "error: .*cli_tiny.toml: bad_magic: not a GGUF file \\(it does not start with 'GGUF'\\)")
# A model with recurrent layers keeps its state in the sequence's slot.
add_test(NAME cli_bench_backend_hybrid COMMAND ${SY_CLI} bench-backend --preset hybrid-tiny
  --dtypes f32 -p 8 -n 2 -r 1 --models-dir ${CMAKE_BINARY_DIR}/cli-models)
set_tests_properties(cli_bench_backend_hybrid PROPERTIES
  PASS_REGULAR_EXPRESSION "dtype +params +MB/token.*\nf32 +[0-9.]+M ")
add_test(NAME cli_bench_backend_mxfp4_dense COMMAND ${SY_CLI} bench-backend --dtypes q8_0,mxfp4)
set_tests_properties(cli_bench_backend_mxfp4_dense PROPERTIES PASS_REGULAR_EXPRESSION
  "--dtypes mxfp4: MXFP4_MOE puts MXFP4 on expert matrices only, and dense-100m has none \\(add --pure")

# [engine] kv_dtype = "f16": runs on cpu_onednn; refused, naming the backend, on one without it.
add_test(NAME cli_run_kv_f16 COMMAND ${SY_CLI} run --config ${SY_FIX}/cli_kv_f16.toml --prompt "hello"
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(cli_run_kv_f16 PROPERTIES PASS_REGULAR_EXPRESSION "\\[0\\] hello.*1 requests, 8 tokens")
add_test(NAME cli_run_kv_f16_refused COMMAND ${SY_CLI} run --config ${SY_FIX}/cli_kv_f16_refused.toml
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(cli_run_kv_f16_refused PROPERTIES
  ENVIRONMENT SWITCHYARD_PLUGIN_PATH=${CMAKE_BINARY_DIR}/test_plugins
  PASS_REGULAR_EXPRESSION "backend ref_no_hybrid does not support an F16 KV cache \\(\\[engine\\] kv_dtype = \"f16\"\\)")
# plugins --load (the entry runs) names the kernel path cpu_onednn chose (here forced) and refuses
# an unknown one.
add_test(NAME cli_plugins_cpu_path COMMAND ${SY_CLI} plugins --verbose --load)
set_tests_properties(cli_plugins_cpu_path PROPERTIES ENVIRONMENT SWITCHYARD_CPU_KERNELS=scalar
  PASS_REGULAR_EXPRESSION "cpu_onednn +0.1.0 +ABI 1.6 +CPU backend: oneDNN GEMM, dispatched GEMV and attention kernels[;] scalar kernels \\(forced by SWITCHYARD_CPU_KERNELS\\)")
add_test(NAME cli_plugins_cpu_path_unknown COMMAND ${SY_CLI} plugins --load)
set_tests_properties(cli_plugins_cpu_path_unknown PROPERTIES ENVIRONMENT SWITCHYARD_CPU_KERNELS=avx9000
  PASS_REGULAR_EXPRESSION "refused .*switchyard_backend_cpu_onednn.so: init failed \\(status 7\\): cpu_onednn: SWITCHYARD_CPU_KERNELS=avx9000: unknown path")
# `switchyard tokenize` over llama.cpp's reference vocabularies, one process per test string.
switchyard_add_test(test_cli_tokenize SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_tokenize.cpp
  LIBS switchyard_gguf)
target_compile_definitions(test_cli_tokenize PRIVATE SWITCHYARD_CLI="$<TARGET_FILE:switchyard>")
add_dependencies(test_cli_tokenize switchyard)
# switchyard eval against an in-process forward (runs the binary from the test).
switchyard_add_test(test_cli_eval SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_eval.cpp
  LIBS switchyard_engine switchyard_modelgen)
target_compile_definitions(test_cli_eval PRIVATE SWITCHYARD_BIN="$<TARGET_FILE:switchyard>")
add_dependencies(test_cli_eval switchyard switchyard_backend_cpu_ref)
# switchyard apply-template against the reference chat renders (runs the binary from the test).
switchyard_add_test(test_cli_apply_template
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_apply_template.cpp LIBS switchyard_gguf)
target_compile_definitions(test_cli_apply_template PRIVATE SWITCHYARD_CLI="$<TARGET_FILE:switchyard>")
add_dependencies(test_cli_apply_template switchyard)
