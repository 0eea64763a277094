#include "api/health_service.h"

#include <optional>

namespace conclave::api {

// One Watch stream: one write in flight, the latest status kept for the next.
class HealthService::Watcher final : public WriteReactor<Response> {
 public:
  Watcher(CallContext* ctx, HealthService* health, std::string service)
      : WriteReactor(ctx), health_(health), service_(std::move(service)) {}
  const std::string& service() const { return service_; }
  void Send(Serving status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_) return;
    if (writing_) {
      pending_ = status;
      return;
    }
    WriteLocked(status);
  }
  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (ended_) return;  // finished meanwhile (a cancel): nothing more is written
    if (!ok) return EndLocked(grpc::Status::CANCELLED);  // the client went away
    if (pending_) {
      Serving next = *pending_;
      pending_.reset();
      WriteLocked(next);
    }
  }
  void OnCancel() override {
    std::lock_guard<std::mutex> lock(mu_);
    EndLocked(grpc::Status::CANCELLED);
  }
  void OnDone() override {
    health_->Remove(this);
    delete this;
  }

 private:
  void WriteLocked(Serving status) {
    msg_.set_status(status);
    writing_ = true;
    StartWrite(&msg_);
  }
  void EndLocked(const grpc::Status& s) {
    if (ended_) return;
    ended_ = true;
    Finish(s);
  }

  HealthService* health_;
  std::string service_;
  std::mutex mu_;
  Response msg_;
  bool writing_ = false, ended_ = false;
  std::optional<Serving> pending_;
};

HealthService::Serving HealthService::StatusLocked(const std::string& service) const {
  auto it = serving_.find(service);
  if (it == serving_.end()) return Response::SERVICE_UNKNOWN;
  return it->second && !shut_down_ ? Response::SERVING : Response::NOT_SERVING;
}

void HealthService::Set(const std::string& service, bool serving) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return;
  serving_[service] = serving;
  for (Watcher* w : watchers_) {
    if (w->service() == service) w->Send(StatusLocked(service));
  }
}

void HealthService::Shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return;
  shut_down_ = true;
  for (auto& [name, serving] : serving_) serving = false;
  for (Watcher* w : watchers_) w->Send(StatusLocked(w->service()));
}

UnaryReactor* HealthService::Check(CallContext* ctx, const Request* req, Response* resp) {
  UnaryReactor* r = ctx->DefaultReactor();
  Serving status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = StatusLocked(req->service());
  }
  if (status == Response::SERVICE_UNKNOWN) {
    r->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "service name unknown"));
  } else {
    resp->set_status(status);
    r->Finish(grpc::Status::OK);
  }
  return r;
}

WriteReactor<HealthService::Response>* HealthService::Watch(CallContext* ctx, const Request* req) {
  auto* w = new Watcher(ctx, this, req->service());
  std::lock_guard<std::mutex> lock(mu_);
  watchers_.insert(w);
  w->Send(StatusLocked(req->service()));
  return w;
}

void HealthService::Remove(Watcher* w) {
  std::lock_guard<std::mutex> lock(mu_);
  watchers_.erase(w);
}

}  // namespace conclave::api
