switchyard_add_test(test_gguf SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_gguf.cpp LIBS switchyard_gguf)
