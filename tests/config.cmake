switchyard_add_test(test_config SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_config.cpp LIBS switchyard_engine switchyard_modelgen)
