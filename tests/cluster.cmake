# Scale-out: the Inference Gateway's metric contract and /health states, vLLM's KV events over
# ZeroMQ, and (below) a real two-replica cluster behind HAProxy.
if(NOT SWITCHYARD_SERVER)
  return()
endif()
set(scale_tests test_gateway)
if(SWITCHYARD_KV_EVENTS)
  list(APPEND scale_tests test_kv_events)
endif()
foreach(t ${scale_tests})
  switchyard_add_test(${t} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${t}.cpp LIBS switchyard_server switchyard_modelgen)
  add_dependencies(${t} switchyard_scheduler_fixed_window switchyard_scheduler_dynamic switchyard_backend_cpu_ref)
endforeach()
switchyard_add_test(test_cluster_bench SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cluster_bench.cpp
  LIBS switchyard_server switchyard_bench)
add_dependencies(test_cluster_bench switchyard_scheduler_dynamic switchyard_backend_cpu_ref)

# Two replicas behind HAProxy with Prometheus, on loopback (scripts/cluster.sh): traffic through
# the frontend, promtool on every replica's /metrics, a replica killed mid-traffic, a rolling
# reload. One process, one cluster, the tests in order (so not split per test).
if(NOT SWITCHYARD_CLUSTER_TESTS)
  return()
endif()
add_executable(test_cluster ${CMAKE_CURRENT_SOURCE_DIR}/test_cluster.cpp)
target_link_libraries(test_cluster PRIVATE GTest::gtest_main switchyard_bench switchyard_server)
target_compile_definitions(test_cluster PRIVATE
  SWITCHYARD_PLUGIN_DIR="${SWITCHYARD_PLUGIN_DIR}"
  SWITCHYARD_TEST_PLUGIN_DIR="${CMAKE_BINARY_DIR}/test_plugins"
  SWITCHYARD_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  SWITCHYARD_BIN="$<TARGET_FILE:switchyard>")
add_dependencies(test_cluster switchyard switchyard_scheduler_dynamic switchyard_backend_cpu_ref)
add_test(NAME cluster_haproxy COMMAND test_cluster)
set_tests_properties(cluster_haproxy PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
