# switchyard_add_plugin(<target> <sources>...)
# Builds a Switchyard plugin: a MODULE library without the "lib" prefix, so a target named
# switchyard_<kind>_<name> becomes the switchyard_<kind>_<name>.so the host looks up by name.
# Symbols are hidden and a version script exports only sy_plugin_entry, so the plugin's
# internals cannot clash with the host's or another plugin's; --no-undefined makes a missing
# symbol a link error rather than a load-time refusal.
# SwitchyardConfig.cmake sets SWITCHYARD_PLUGIN_MAP before including this file; kept in a global
# property so the function works from any directory scope.
set_property(GLOBAL PROPERTY SWITCHYARD_PLUGIN_MAP "${SWITCHYARD_PLUGIN_MAP}")

function(switchyard_add_plugin target)
  get_property(map GLOBAL PROPERTY SWITCHYARD_PLUGIN_MAP)
  add_library(${target} MODULE ${ARGN})
  set_target_properties(${target} PROPERTIES PREFIX ""
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${target} PRIVATE Switchyard::abi)
  target_link_options(${target} PRIVATE -Wl,--no-undefined -Wl,--version-script=${map})
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${map})
endfunction()
