// Listener set-up for the gRPC server: a unix socket in a 0700 directory with mode 0600, which
// the daemon accepts itself to learn each caller's credentials (api/unix_listener; a stale
// socket left by a crashed daemon is replaced; a live one or a non-socket file at the path is
// refused), or a loopback TCP port guarded by a bearer token.
// Every listener also serves the standard services tools ask for first: grpc.health.v1.Health
// (overall status "" and per service "conclave.v1.Conclave") and server reflection (v1alpha,
// what grpcurl and IDE clients use). Every status a call of conclave.v1.Conclave ends with
// carries the trailing metadata `conclave-origin: conclaved` (set in Identify), so a client
// can tell the daemon's own UNAVAILABLE ("shutting down", "the store refuses writes") from a
// daemon it cannot reach. The health and reflection services' statuses are not marked.
#pragma once

#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "api/async_api.h"
#include "api/conclave_service.h"
#include "api/unix_listener.h"
#include "common/status.h"

namespace conclave::api {

// Prepares a unix socket path for bind: creates the parent directory (0700) when missing and
// removes a stale socket. Errors name the path and what is wrong.
Status PrepareUnixSocket(const std::string& path);

// The trailing-metadata key (and value) marking a status as sent by conclaved.
inline constexpr char kOriginKey[] = "conclave-origin";
inline constexpr char kOriginValue[] = "conclaved";
// The health service name of the Conclave API.
inline constexpr char kHealthServiceName[] = "conclave.v1.Conclave";

// The running server and, for a unix socket, the daemon's own acceptor in front of it.
class Server {
 public:
  Server(std::unique_ptr<AsyncApi> api, std::unique_ptr<grpc::Server> server,
         std::unique_ptr<UnixListener> unix)
      : api_(std::move(api)), server_(std::move(server)), unix_(std::move(unix)) {}
  // Stops accepting, then shuts gRPC down and drains the API's queue (call it off the loop
  // thread: it waits for RPCs that complete on the loop).
  void Shutdown(std::chrono::system_clock::time_point deadline);
  void Wait() { server_->Wait(); }
  HealthService& health() { return api_->health(); }
  grpc::Server& grpc() { return *server_; }
  CallQueue& queue() { return api_->queue(); }

 private:
  std::unique_ptr<AsyncApi> api_;  // outlives the server: its queue is the server's
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<UnixListener> unix_;
};

// Starts the server with health checking and reflection. Both health statuses start
// NOT_SERVING: the caller marks them SERVING (HealthStatus::MarkServing) once it is ready.
// polled: the API's queue has no thread; the caller's loop polls it (api/queue_loop.h).
StatusOr<std::unique_ptr<Server>> StartServer(const std::string& listen, ConclaveService& service,
                                              bool polled = false);

// The daemon's health as grpc.health.v1.Health reports it, for "" and conclave.v1.Conclave.
// SERVING between MarkServing() and MarkStopping() (final); MarkNotServing() is reversible —
// the store refusing writes while the disk is full — and MarkServing() undoes it. A
// Health/Watch stream sees every change at once.
// Thread-safety: any thread.
class HealthStatus final {
 public:
  explicit HealthStatus(Server& server);
  // Migrations and recovery are done: SERVING.
  void MarkServing();
  // Shutdown begins (call before Server::Shutdown): NOT_SERVING.
  void MarkStopping();
  // Not serving for a while (the store refuses writes): NOT_SERVING until MarkServing().
  void MarkNotServing(const std::string& reason);
  bool serving() const;

 private:
  mutable std::mutex mu_;
  HealthService* health_;
  bool serving_ = false;
  bool final_ = false;
};

}  // namespace conclave::api
