# The grammar layer: GBNF, JSON Schema to GBNF, the matcher and the vocabulary mask.
switchyard_add_test(test_grammar SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_grammar.cpp
  LIBS switchyard_grammar)
