/* Compiled with -std=c99 -pedantic -Werror: the ABI headers must stay plain C. */
#include "switchyard/abi/backend.h"
#include "switchyard/abi/host.h"
#include "switchyard/abi/plugin.h"
#include "switchyard/abi/scheduler.h"
#include "switchyard/abi/types.h"

int sy_abi_c99_probe(void) { return (int)sizeof(sy_plugin_info) + (int)sizeof(sy_backend_iface); }
