// Client-disconnect detection. cpp-httplib does not hand a handler its socket, so the socket is
// found by the connection's addresses; a closed peer is then seen without writing to it (a
// non-streaming request has nothing to write until it finishes).
#pragma once

#include <string>

namespace sy::server {

// The socket of this process connected local_port <-> remote_addr:remote_port; -1 if none.
int connection_fd(int local_port, const std::string& remote_addr, int remote_port);
// True once the peer closed or reset the connection (fd < 0: never).
bool peer_closed(int fd);

}  // namespace sy::server
