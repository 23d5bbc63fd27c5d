# The plugin SDK, installed by `cmake --install <build> [--component sdk]`:
#   include/switchyard/abi/*.h                 the C ABI
#   include/switchyard/sdk/*.h                 the header-only C++ SDK (schedulers, routers)
#   lib/cmake/Switchyard/                      find_package(Switchyard): Switchyard::abi and
#                                              switchyard_add_plugin()
#   share/pkgconfig/switchyard.pc              the same for pkg-config users
#   share/switchyard/plugin.map                the version script exporting only the entry
# The package version is the ABI version (types.h), compatible within a major: a plugin asking
# for find_package(Switchyard 1.0) builds against any 1.x SDK.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

file(STRINGS ${PROJECT_SOURCE_DIR}/abi/switchyard/abi/types.h _sy_abi_defs
  REGEX "^#define SY_ABI_VERSION_(MAJOR|MINOR) +[0-9]+")
foreach(_line ${_sy_abi_defs})
  string(REGEX REPLACE "^#define SY_ABI_VERSION_([A-Z]+) +([0-9]+).*" "\\1;\\2" _kv "${_line}")
  list(GET _kv 0 _k)
  list(GET _kv 1 _v)
  set(SWITCHYARD_ABI_${_k} ${_v})
endforeach()
set(SWITCHYARD_ABI_VERSION ${SWITCHYARD_ABI_MAJOR}.${SWITCHYARD_ABI_MINOR})

set(_sy_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Switchyard)
set(SWITCHYARD_INSTALL_PLUGIN_MAP ${CMAKE_INSTALL_DATADIR}/switchyard/plugin.map)
set(_sy_out ${CMAKE_BINARY_DIR}/sdk)

install(DIRECTORY abi/switchyard DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT sdk
  FILES_MATCHING PATTERN "*.h")
install(FILES abi/plugin.map DESTINATION ${CMAKE_INSTALL_DATADIR}/switchyard COMPONENT sdk)
# The header-only C++ SDK for schedulers and routers (sdk/switchyard/sdk; backend.h needs the
# in-tree switchyard_sdk_backend library and stays in the tree).
install(FILES sdk/switchyard/sdk/plugin.h sdk/switchyard/sdk/params.h
  sdk/switchyard/sdk/policy_handle.h sdk/switchyard/sdk/scheduler.h sdk/switchyard/sdk/router.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/switchyard/sdk COMPONENT sdk)

set_target_properties(switchyard_abi PROPERTIES EXPORT_NAME abi)
install(TARGETS switchyard_abi EXPORT SwitchyardTargets COMPONENT sdk)
install(EXPORT SwitchyardTargets NAMESPACE Switchyard:: DESTINATION ${_sy_cmake_dir}
  COMPONENT sdk)

configure_package_config_file(cmake/SwitchyardConfig.cmake.in ${_sy_out}/SwitchyardConfig.cmake
  INSTALL_DESTINATION ${_sy_cmake_dir} PATH_VARS SWITCHYARD_INSTALL_PLUGIN_MAP)
write_basic_package_version_file(${_sy_out}/SwitchyardConfigVersion.cmake
  VERSION ${SWITCHYARD_ABI_VERSION} COMPATIBILITY SameMajorVersion ARCH_INDEPENDENT)
install(FILES ${_sy_out}/SwitchyardConfig.cmake ${_sy_out}/SwitchyardConfigVersion.cmake
  cmake/SwitchyardPlugin.cmake DESTINATION ${_sy_cmake_dir} COMPONENT sdk)

configure_file(cmake/switchyard.pc.in ${_sy_out}/switchyard.pc @ONLY)
install(FILES ${_sy_out}/switchyard.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig
  COMPONENT sdk)
