// Client-disconnect detection: a closed peer is seen on the connection's socket without writing
// to it (a non-streaming request has nothing to write until it finishes).
#pragma once

namespace sy::server {

// True once the peer closed or reset the connection (fd < 0: never).
bool peer_closed(int fd);

}  // namespace sy::server
