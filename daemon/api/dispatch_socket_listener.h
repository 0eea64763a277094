// DispatchSocketListener: one listening unix socket per sandboxed dispatch
// (STATE_DIR/sockets/d<id>.sock, 0600 in a 0700 directory the sandbox hides), bound into the
// worker's sandbox where the daemon's socket would be. A connection through it is recorded in
// the PeerTable as that dispatch's (PeerInfo::via_dispatch) before gRPC gets the descriptor,
// so it has a worker's rights only — even for a caller that is not the daemon's descendant —
// and no rights once the dispatch ended. Sockets left by a crashed daemon are removed at start.
// Thread-safety: Open/Close on the loop, Start/Stop from the main thread; one accept thread.
#pragma once

#include <grpcpp/server.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "api/peer_table.h"
#include "service/ports.h"

namespace conclave::api {

class DispatchSocketListener final : public service::DispatchSockets {
 public:
  explicit DispatchSocketListener(std::string dir);
  ~DispatchSocketListener() override;

  StatusOr<std::string> Open(int64_t dispatch_id) override;
  void Close(int64_t dispatch_id) override;
  // Starts accepting into `server` (connections made before wait in the backlog).
  void Start(grpc::Server* server, PeerTable& peers);
  void Stop();

 private:
  struct Socket {
    int fd = -1;
    std::string path;
  };
  void AcceptLoop();
  void Accept(int listen_fd, int64_t dispatch_id);

  std::string dir_;
  int wake_fd_ = -1;  // eventfd: the set of sockets changed, or stop
  std::mutex mu_;
  std::map<int64_t, Socket> sockets_;
  std::vector<int> retired_;  // closed by the accept thread (it may be polling them)
  grpc::Server* server_ = nullptr;
  PeerTable* peers_ = nullptr;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace conclave::api
