# Layers point one way (core/CMakeLists.txt): a target sees the headers of the layers it links
# and no others. Each probe is a one-line source built in some layer's place that includes one
# header; its test builds it. A "refused" probe passes only when the compiler says that header
# does not exist (the wrong-way includes of issue 17 among them); an "allowed" probe must build,
# so a probe that fails for another reason is caught too.
function(switchyard_layer_probe name expect layer header)
  set(src ${CMAKE_CURRENT_BINARY_DIR}/layer_probes/${name}.cpp)
  file(CONFIGURE OUTPUT ${src} CONTENT "#include \"${header}\"\nint ${name}() { return 0; }\n")
  add_library(${name} OBJECT EXCLUDE_FROM_ALL ${src})
  target_link_libraries(${name} PRIVATE ${layer})
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target ${name})
  # Probes build in the one build tree: one at a time.
  set_tests_properties(${name} PROPERTIES RESOURCE_LOCK build_tree LABELS layers)
  if(expect STREQUAL "refused")
    string(REPLACE "." "\\." pattern "${header}: No such file or directory")
    set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${pattern}")
  endif()
endfunction()

switchyard_layer_probe(layer_abi_sees_no_common refused switchyard_abi switchyard/common/dtype.h)
switchyard_layer_probe(layer_common_sees_no_gguf refused switchyard_common gguf/gguf.h)
switchyard_layer_probe(layer_gguf_sees_no_plugin_sdk refused switchyard_gguf switchyard/sdk/backend.h)
# The plugin SDK (what plugins build on) sees the ABI and common, never the host.
switchyard_layer_probe(layer_sdk_sees_no_host refused switchyard_sdk_backend host/log.h)
switchyard_layer_probe(layer_gguf_sees_no_text refused switchyard_gguf text/tokenizer.h)
switchyard_layer_probe(layer_text_sees_no_host refused switchyard_text host/log.h)
# The Jinja engine stands alone: it sees no tokenizer (text sees it, not the reverse).
switchyard_layer_probe(layer_jinja_sees_no_text refused switchyard_jinja text/tokenizer.h)
switchyard_layer_probe(layer_grammar_sees_no_text refused switchyard_grammar text/tokenizer.h)
switchyard_layer_probe(layer_host_sees_no_model refused switchyard_host model/model.h)
switchyard_layer_probe(layer_model_sees_no_engine refused switchyard_model engine/engine.h)
switchyard_layer_probe(layer_model_sees_no_config refused switchyard_model config/config.h)
switchyard_layer_probe(layer_engine_sees_no_modelgen refused switchyard_engine modelgen/generator.h)
switchyard_layer_probe(layer_engine_sees_no_server refused switchyard_engine server/server.h)
switchyard_layer_probe(layer_engine_sees_no_bench refused switchyard_engine bench/stats.h)
switchyard_layer_probe(layer_bench_sees_no_server refused switchyard_bench server/server.h)
if(SWITCHYARD_SERVER)
  switchyard_layer_probe(layer_server_sees_no_bench refused switchyard_server bench/stats.h)
  switchyard_layer_probe(layer_server_sees_no_cli refused switchyard_server cli/options.h)
  switchyard_layer_probe(layer_server_sees_engine allowed switchyard_server engine/engine.h)
endif()

switchyard_layer_probe(layer_text_sees_gguf allowed switchyard_text gguf/gguf.h)
switchyard_layer_probe(layer_text_sees_jinja allowed switchyard_text jinja/template.h)
switchyard_layer_probe(layer_model_sees_host allowed switchyard_model host/log.h)
switchyard_layer_probe(layer_engine_sees_model allowed switchyard_engine model/model.h)
switchyard_layer_probe(layer_bench_sees_modelgen allowed switchyard_bench modelgen/generator.h)
switchyard_layer_probe(layer_sdk_sees_common allowed switchyard_sdk_backend switchyard/common/dtype.h)
