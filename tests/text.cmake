switchyard_add_test(test_text
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_tokenizer.cpp ${CMAKE_CURRENT_SOURCE_DIR}/test_sampler.cpp
  LIBS switchyard_text)
