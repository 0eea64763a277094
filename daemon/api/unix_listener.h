// UnixListener: the daemon's unix socket, accepted by the daemon itself so it learns who is
// calling from the kernel. Each connection's peer credentials (SO_PEERCRED: uid, pid) and the
// peer's process ancestry are read at accept — before its pid could be recycled — recorded in
// the PeerTable under the descriptor, and the descriptor is handed to gRPC
// (AddInsecureChannelFromFd). The socket is 0600 in a 0700 directory: a second wall.
// Thread-safety: Start/Stop from the main thread; the accept loop runs on its own thread.
#pragma once

#include <grpcpp/server.h>

#include <atomic>
#include <string>
#include <thread>

#include "api/peer_table.h"
#include "common/status.h"

namespace conclave::api {

// Reads an accepted connection's peer credentials and ancestry, records them in peers under
// the descriptor (with via_dispatch when it came through a dispatch's own socket) and hands
// the descriptor to gRPC, which owns it from then on. An unreadable peer is closed.
void HandOverPeer(int fd, PeerTable& peers, grpc::Server* server, int64_t via_dispatch = 0);

class UnixListener {
 public:
  UnixListener(std::string path, PeerTable& peers) : path_(std::move(path)), peers_(peers) {}
  ~UnixListener();

  // Binds and listens (the path prepared by PrepareUnixSocket); errors name the path.
  Status Bind();
  // Starts accepting into `server` (built with no listening port of its own).
  void Start(grpc::Server* server);
  // Stops accepting (before the server shuts down).
  void Stop();

 private:
  void AcceptLoop();
  void Accepted(int fd);

  std::string path_;
  PeerTable& peers_;
  int listen_fd_ = -1;
  grpc::Server* server_ = nullptr;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace conclave::api
