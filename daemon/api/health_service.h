// HealthService: grpc.health.v1.Health (Check and Watch) on the API's completion queue, in
// place of gRPC's default health service: that one is a callback service, and registered beside
// the async API it brings back the callback API's polling threads and most of their cost
// (`bench --only api`). Each service name has a status; a name never set is unknown (Check:
// NOT_FOUND; Watch: SERVICE_UNKNOWN until it is set). A Watch stream gets the status at once and
// then each change, the latest one when several came during a write. Shutdown() makes every name
// NOT_SERVING for good, as gRPC's default service did. Thread-safety: any thread.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>

#include "api/async_calls.h"
#include "grpc/health/v1/health.pb.h"

namespace conclave::api {

class HealthService final {
 public:
  using Request = grpc::health::v1::HealthCheckRequest;
  using Response = grpc::health::v1::HealthCheckResponse;
  using Serving = Response::ServingStatus;

  void Set(const std::string& service, bool serving);
  void Shutdown();
  UnaryReactor* Check(CallContext* ctx, const Request* req, Response* resp);
  WriteReactor<Response>* Watch(CallContext* ctx, const Request* req);

 private:
  class Watcher;
  Serving StatusLocked(const std::string& service) const;
  void Remove(Watcher* w);

  std::mutex mu_;
  std::map<std::string, bool> serving_;
  bool shut_down_ = false;
  std::set<Watcher*> watchers_;
};

}  // namespace conclave::api
