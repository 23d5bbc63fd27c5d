switchyard_add_test(test_text
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_tokenizer.cpp ${CMAKE_CURRENT_SOURCE_DIR}/test_sampler.cpp
  LIBS switchyard_text)
find_package(nlohmann_json 3 REQUIRED)
# Tokenizers against llama.cpp's reference vocabularies, the pre-tokenizer regex, chat templates.
switchyard_add_test(test_text_reference
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_vocab_reference.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test_pretokenizer.cpp ${CMAKE_CURRENT_SOURCE_DIR}/test_chat_template.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/test_nfc.cpp
  LIBS switchyard_text nlohmann_json::nlohmann_json)
# mkmodel --vocab: a random model with a real vocabulary's tokenizer.
switchyard_add_test(test_modelgen_vocab SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_modelgen_vocab.cpp
  LIBS switchyard_modelgen switchyard_text)
# The committed Unicode table is what the generator writes from the Unicode Character Database;
# its NFC conformance file, unpacked for test_nfc.cpp (which skips without it).
find_package(Python3 COMPONENTS Interpreter)
set(normalization_test ${CMAKE_CURRENT_BINARY_DIR}/NormalizationTest.txt)
if(Python3_Interpreter_FOUND AND EXISTS /usr/share/unicode/NormalizationTest.txt.bz2)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c
    "import bz2, sys; open(sys.argv[2], 'wb').write(bz2.open(sys.argv[1]).read())"
    /usr/share/unicode/NormalizationTest.txt.bz2 ${normalization_test})
endif()
target_compile_definitions(test_text_reference PRIVATE
  SWITCHYARD_NORMALIZATION_TEST="${normalization_test}")
if(Python3_Interpreter_FOUND)
  add_test(NAME unicode_table_current
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/gen-unicode-table.py --check)
  set_tests_properties(unicode_table_current PROPERTIES SKIP_RETURN_CODE 77)
endif()
# The 2026 vocabularies (tests/fixtures/vocab): unpacked at configure time, again when the archive
# changes.
set(vocab_archive ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/vocab/vocab-2026.tar.xz)
set(vocab_dir ${CMAKE_CURRENT_BINARY_DIR}/vocab-2026)
file(ARCHIVE_EXTRACT INPUT ${vocab_archive} DESTINATION ${vocab_dir})
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${vocab_archive})
target_compile_definitions(test_text_reference PRIVATE SWITCHYARD_VOCAB_2026_DIR="${vocab_dir}")
