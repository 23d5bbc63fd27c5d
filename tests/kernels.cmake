# cpu_onednn's dispatched kernels against cpu_ref: the binary runs once per CPU path, forced
# with SWITCHYARD_CPU_KERNELS (a path this CPU lacks skips), and once on the path cpuid picks.
# The thread pool on its own, built from its source.
switchyard_add_test(test_cpu_kernels SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cpu_kernels.cpp
  LIBS switchyard_abi switchyard_common ${CMAKE_DL_LIBS})
add_dependencies(test_cpu_kernels switchyard_backend_cpu_ref switchyard_backend_cpu_onednn
  switchyard_backend_ref_no_hybrid)
foreach(path scalar avx2 avx512 avx512_vnni avx_vnni)
  gtest_discover_tests(test_cpu_kernels DISCOVERY_TIMEOUT 60 TEST_PREFIX "cpu_path_${path}."
    PROPERTIES TIMEOUT 600 ENVIRONMENT "SWITCHYARD_CPU_KERNELS=${path}")
endforeach()

switchyard_add_test(test_thread_pool SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_thread_pool.cpp
  ${PROJECT_SOURCE_DIR}/backends/cpu_onednn/thread_pool.cpp LIBS OpenMP::OpenMP_CXX)
target_include_directories(test_thread_pool PRIVATE ${PROJECT_SOURCE_DIR}/backends/cpu_onednn)
