// AsyncApi: serves ConclaveService's handlers and grpc.health.v1.Health (api/health_service)
// on gRPC's async API (api/async_calls.h): the generated services with every method async
// (GetStatus raw), registered as typed services (so reflection lists them), and one
// completion queue, polled by the loop (api/queue_loop.h) or by a thread of its own.
#pragma once

#include <grpcpp/server_builder.h>

#include <memory>
#include <vector>

#include "api/async_calls.h"
#include "api/conclave_service.h"
#include "api/health_service.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace conclave::api {

class AsyncApi final {
 public:
  explicit AsyncApi(ConclaveService& conclave) : conclave_(conclave) {}
  HealthService& health() { return health_; }
  ~AsyncApi() { Stop(); }
  AsyncApi(const AsyncApi&) = delete;
  AsyncApi& operator=(const AsyncApi&) = delete;
  // Before the builder builds the server: the service and the queue.
  void Register(grpc::ServerBuilder& builder);
  // After the server started: asks for every method's first call and starts the queue's thread
  // (none when polled: the loop polls the queue, api/queue_loop.h).
  void Start(bool polled);
  CallQueue& queue() { return *queue_; }
  // After the server shut down: drains the queue and joins its thread.
  void Stop();

 private:
  using Service = v1::Conclave::WithRawMethod_GetStatus<v1::Conclave::AsyncService>;
  using HealthAsync = grpc::health::v1::Health::AsyncService;
  // handle: (CallContext*, const Req*, Resp*) -> UnaryReactor*.
  template <class Req, class Resp, class Svc, class RequestFn, class Handle>
  void AddUnary(Svc& service, RequestFn request, Handle handle);
  // handle: (CallContext*, const Req*) -> WriteReactor<T>*.
  template <class Req, class T, class Svc, class RequestFn, class Handle>
  void AddStream(Svc& service, RequestFn request, Handle handle);

  ConclaveService& conclave_;
  HealthService health_;
  Service service_;
  HealthAsync health_service_;
  std::unique_ptr<CallQueue> queue_;
  std::vector<std::shared_ptr<void>> methods_;  // each method's UnaryMethod / StreamMethod
  std::vector<std::function<void()>> first_calls_;
};

}  // namespace conclave::api
