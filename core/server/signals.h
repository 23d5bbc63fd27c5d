// Process signals for `switchyard serve`: SIGHUP asks for a config reload, SIGINT and SIGTERM
// for a clean stop, SIGPIPE is ignored (a client that went away is seen as a failed write).
#pragma once

namespace sy::server {

void install_signal_handlers();
// Each returns true once per signal received since the last call.
bool take_sighup();
bool stop_requested();
// SIGINT/SIGTERM received so far (the first drains, a second cuts the drain short).
int stop_signals();

}  // namespace sy::server
