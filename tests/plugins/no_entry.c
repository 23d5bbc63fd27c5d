/* A shared library that exports something, but not sy_plugin_entry. */
#include "switchyard/abi/types.h"

SY_EXPORT int sy_plugin_entry_typo(void) { return 42; }
