// Listener set-up for the gRPC server: a unix socket in a 0700 directory with mode 0600, which
// the daemon accepts itself to learn each caller's credentials (api/unix_listener; a stale
// socket left by a crashed daemon is replaced; a live one or a non-socket file at the path is
// refused), or a loopback TCP port guarded by a bearer token.
#pragma once

#include <grpcpp/server.h>

#include <memory>
#include <string>

#include "api/conclave_service.h"
#include "api/unix_listener.h"
#include "common/status.h"

namespace conclave::api {

// Prepares a unix socket path for bind: creates the parent directory (0700) when missing and
// removes a stale socket. Errors name the path and what is wrong.
Status PrepareUnixSocket(const std::string& path);

// The running server and, for a unix socket, the daemon's own acceptor in front of it.
class Server {
 public:
  Server(std::unique_ptr<grpc::Server> server, std::unique_ptr<UnixListener> unix)
      : server_(std::move(server)), unix_(std::move(unix)) {}
  // Stops accepting, then shuts gRPC down (call it off the loop thread: it waits for RPCs
  // that complete on the loop).
  void Shutdown(std::chrono::system_clock::time_point deadline);
  void Wait() { server_->Wait(); }

 private:
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<UnixListener> unix_;
};

StatusOr<std::unique_ptr<Server>> StartServer(const std::string& listen, ConclaveService& service);

}  // namespace conclave::api
