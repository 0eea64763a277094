// Listener set-up for the gRPC server: a unix socket in a 0700 directory with mode 0600
// (a stale socket left by a crashed daemon is replaced; a live one or a non-socket file at the
// path is refused), or a loopback TCP port guarded by a bearer token.
// Every listener also serves the standard services tools ask for first: grpc.health.v1.Health
// (overall status "" and per service "conclave.v1.Conclave") and server reflection (v1alpha,
// what grpcurl and IDE clients use). Every non-OK status the daemon itself sends carries the
// trailing metadata `conclave-origin: conclaved`, so a client can tell the daemon's own
// UNAVAILABLE ("shutting down", "the store refuses writes") from a daemon it cannot reach.
#pragma once

#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server.h>

#include <memory>
#include <mutex>
#include <string>

#include "api/conclave_service.h"
#include "common/health_reporter.h"
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

// Starts the server with health checking and reflection. Both health statuses start
// NOT_SERVING: the caller marks them SERVING (HealthStatus::MarkServing) once it is ready.
StatusOr<std::unique_ptr<grpc::Server>> StartServer(const std::string& listen,
                                                    ConclaveService& service);

// The daemon's health as grpc.health.v1.Health reports it, for "" and conclave.v1.Conclave.
// SERVING only between MarkServing() and the first MarkStopping() / ReportNotServing();
// NOT_SERVING is final (a Health/Watch stream sees the change at once).
// Thread-safety: any thread.
class HealthStatus final : public HealthReporter {
 public:
  explicit HealthStatus(grpc::Server& server);
  // Migrations and recovery are done: SERVING.
  void MarkServing();
  // Shutdown begins (call before Server::Shutdown): NOT_SERVING.
  void MarkStopping();
  void ReportNotServing(const std::string& reason) override;
  bool serving() const;

 private:
  mutable std::mutex mu_;
  grpc::HealthCheckServiceInterface* health_;
  bool serving_ = false;
  bool final_ = false;
};

}  // namespace conclave::api
