switchyard_add_test(test_config SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_config.cpp LIBS switchyard_engine switchyard_modelgen)
switchyard_add_test(test_model_file SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_model_file.cpp
  LIBS switchyard_engine switchyard_modelgen)
