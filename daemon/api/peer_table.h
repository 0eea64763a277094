// PeerTable: what the kernel said about each accepted unix-socket connection, keyed by the
// descriptor handed to gRPC (a call on it reports its peer as "fd:N"). The socket's inode is
// kept with the entry and checked at call time, so an entry can never be taken for a later
// connection that reuses the descriptor number.
// Thread-safety: thread-safe (the accept thread writes, gRPC threads read).
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "service/callers.h"

namespace conclave::api {

class PeerTable {
 public:
  void Put(int fd, ino_t inode, service::PeerInfo info);
  // The peer behind a gRPC peer string: "fd:N" looked up (inode checked); a TCP peer
  // ("ipv4:", "ipv6:") is marked tcp; anything else is unknown.
  std::optional<service::PeerInfo> Lookup(const std::string& grpc_peer) const;

 private:
  struct Entry {
    ino_t inode = 0;
    service::PeerInfo info;
  };
  mutable std::mutex mu_;
  std::map<int, Entry> peers_;
};

}  // namespace conclave::api
