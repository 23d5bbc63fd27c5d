# Fuzzing. The libFuzzer targets (tests/fuzz) need clang 15; scripts/fuzz.sh builds them into
# build-fuzz and runs them over generated and reference seeds: about a minute for the GGUF reader
# and tokenizer loader, half a minute for the Jinja engine, 20 s for the grammar layer, less for the HTTP parser and the
# plugin-note reader. The inputs of past findings (tests/fuzz/regressions/<target>) are also
# replayed in this build, without clang.
set(SY_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
# Each target's replay links the layer it fuzzes; the HTTP parser's only where the server is built.
set(fuzz_targets gguf plugin_note jinja grammar)
set(fuzz_layer_gguf switchyard_text)
set(fuzz_layer_plugin_note switchyard_host)
set(fuzz_layer_jinja switchyard_jinja)
set(fuzz_layer_grammar switchyard_grammar)
set(fuzz_layer_http_request switchyard_server)
if(SWITCHYARD_SERVER)
  list(APPEND fuzz_targets http_request)
endif()
foreach(t ${fuzz_targets})
  add_executable(fuzz_replay_${t} ${SY_FUZZ_DIR}/fuzz_${t}.cpp ${SY_FUZZ_DIR}/replay_main.cpp)
  target_link_libraries(fuzz_replay_${t} PRIVATE ${fuzz_layer_${t}})
  add_test(NAME fuzz_replay_${t} COMMAND fuzz_replay_${t} ${SY_FUZZ_DIR}/regressions/${t})
  set_tests_properties(fuzz_replay_${t} PROPERTIES PASS_REGULAR_EXPRESSION "replayed [1-9][0-9]* inputs")
endforeach()

if(SWITCHYARD_FUZZ_TESTS)
  set(SY_FUZZ_SECONDS_gguf 60)
  set(SY_FUZZ_SECONDS_http_request 20)
  set(SY_FUZZ_SECONDS_plugin_note 10)
  set(SY_FUZZ_SECONDS_jinja 30)
  set(SY_FUZZ_SECONDS_grammar 20)
  foreach(t ${fuzz_targets})
    add_test(NAME fuzz_${t} COMMAND ${PROJECT_SOURCE_DIR}/scripts/fuzz.sh --seconds ${SY_FUZZ_SECONDS_${t}}
      --target ${t} --switchyard $<TARGET_FILE:switchyard>)
    set_tests_properties(fuzz_${t} PROPERTIES TIMEOUT 1200
      PASS_REGULAR_EXPRESSION "fuzz ${t}: [0-9]+ executions in [0-9]+ s, .*no crash, no hang")
  endforeach()
  add_dependencies(fuzz_replay_plugin_note switchyard_scheduler_note_major)
endif()
