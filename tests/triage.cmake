# Request triage: the router ABI (ABI 1.2), the triage_rules plugin, the [triage] config, the
# engine's light/full path with the force_full switch, and misroute counting on shadow runs.
set(triage_test_plugins ${CMAKE_BINARY_DIR}/test_plugins)
add_library(switchyard_router_old_minor MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/router_old_minor.c)
set_target_properties(switchyard_router_old_minor PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)
target_compile_options(switchyard_router_old_minor PRIVATE -pedantic -Werror)
add_library(switchyard_router_faulty MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugins/router_faulty.cpp)
foreach(t switchyard_router_old_minor switchyard_router_faulty)
  target_link_libraries(${t} PRIVATE switchyard_abi)
  set_target_properties(${t} PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${triage_test_plugins})
endforeach()

switchyard_add_test(test_triage SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_triage.cpp
  LIBS switchyard_engine switchyard_modelgen)
add_dependencies(test_triage switchyard_router_triage_rules switchyard_router_old_minor
  switchyard_router_faulty switchyard_backend_cpu_ref switchyard_scheduler_fixed_window)
if(SWITCHYARD_SERVER)
  switchyard_add_test(test_triage_shadow SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_triage_shadow.cpp
    LIBS switchyard_server switchyard_modelgen)
  add_dependencies(test_triage_shadow switchyard_router_triage_rules switchyard_backend_cpu_ref
    switchyard_scheduler_fixed_window)
endif()
