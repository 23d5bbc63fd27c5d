# Backend op tests: every op of the in-tree CPU backend plugins against a naive reference.
switchyard_add_test(test_backend_ops SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_backend_ops.cpp
  LIBS switchyard_abi switchyard_common ${CMAKE_DL_LIBS})
add_dependencies(test_backend_ops switchyard_backend_cpu_ref switchyard_backend_cpu_onednn)
