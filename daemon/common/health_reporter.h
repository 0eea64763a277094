// HealthReporter: how the layers below the API tell the daemon's gRPC health service
// (grpc.health.v1.Health) that the daemon can no longer do its job. The API layer implements
// it (api/grpc_server.h HealthStatus); the service layer holds a pointer and calls it when,
// for instance, the store starts refusing writes after a failed commit.
// Thread-safety: implementations accept calls from any thread.
#pragma once

#include <string>

namespace conclave {

class HealthReporter {
 public:
  virtual ~HealthReporter() = default;
  // The daemon cannot serve until it is restarted: every health status becomes NOT_SERVING.
  // reason is logged; it is what an operator needs to fix.
  virtual void ReportNotServing(const std::string& reason) = 0;
};

}  // namespace conclave
