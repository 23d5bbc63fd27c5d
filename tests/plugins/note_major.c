/* A scheduler plugin whose metadata note claims ABI 2.0 and whose constructor leaves a trace
 * (stdout and the file $SY_NOTE_MARKER): the host must refuse it from the note alone, so the
 * constructor never runs. */
#include <stdio.h>
#include <stdlib.h>

#include "switchyard/abi/plugin.h"

static const sy_plugin_note sy_plugin_note_ __attribute__((
    section(".note.switchyard"), used, aligned(4))) = {sizeof(SY_NOTE_OWNER),
                                                       (uint32_t)(sizeof(sy_plugin_note) - 24),
                                                       SY_NOTE_PLUGIN,
                                                       SY_NOTE_OWNER,
                                                       SY_NOTE_FORMAT,
                                                       SY_PLUGIN_SCHEDULER,
                                                       SY_MAKE_VERSION(2, 0),
                                                       0u,
                                                       0u,
                                                       0u,
                                                       "note_major",
                                                       "0.0.1",
                                                       "claims ABI 2.0 in its note"};

__attribute__((constructor)) static void leave_a_trace(void) {
  const char* marker = getenv("SY_NOTE_MARKER");
  printf("note_major: constructor ran\n");
  fflush(stdout);
  if (marker) {
    FILE* f = fopen(marker, "w");
    if (f) fclose(f);
  }
}

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  (void)host_abi_version;
  (void)host;
  (void)sy_plugin_note_;
  info->abi_version = SY_MAKE_VERSION(2, 0);
  return SY_ERR_VERSION;
}
