#include "api/grpc_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace conclave::api {
namespace fs = std::filesystem;
Status PrepareUnixSocket(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return InvalidArgument("listen: socket path is " + std::to_string(path.size()) +
                           " bytes; unix sockets allow at most " +
                           std::to_string(sizeof(addr.sun_path) - 1) + " — use a shorter path");
  }
  fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::exists(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) return FailedPrecondition("listen: cannot create " + parent.string() + ": " + ec.message());
    chmod(parent.c_str(), 0700);
  }
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return Status::Ok();  // nothing there
  if (!S_ISSOCK(st.st_mode)) {
    return FailedPrecondition("listen: " + path +
                              " exists and is not a socket; refusing to replace it (remove it "
                              "or choose another --listen path)");
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int err = errno;
  close(fd);
  if (rc == 0) {
    return FailedPrecondition("listen: another daemon is already serving on " + path);
  }
  if (err != ECONNREFUSED && err != ENOENT) {
    return FailedPrecondition("listen: cannot probe " + path + ": " + std::strerror(err));
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return FailedPrecondition("listen: cannot remove stale socket " + path + ": " +
                              std::strerror(errno));
  }
  return Status::Ok();
}

void Server::Shutdown(std::chrono::system_clock::time_point deadline) {
  if (unix_) unix_->Stop();
  server_->Shutdown(deadline);
  api_->Stop();
}

StatusOr<std::unique_ptr<Server>> StartServer(const std::string& listen, ConclaveService& service,
                                              bool polled) {
  // Set before the builder exists; it applies to every server built after. gRPC's default
  // health service is off: HealthService (on the API's queue) answers grpc.health.v1.Health.
  grpc::EnableDefaultHealthCheckService(false);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  auto api = std::make_unique<AsyncApi>(service);
  api->Register(builder);
  builder.SetMaxReceiveMessageSize(16 << 20);
  builder.SetMaxSendMessageSize(16 << 20);
  std::unique_ptr<UnixListener> unix;
  if (listen.rfind("unix:", 0) == 0) {
    std::string path = listen.substr(5);
    Status s = PrepareUnixSocket(path);
    if (!s.ok()) return s;
    unix = std::make_unique<UnixListener>(path, service.peers());
    s = unix->Bind();
    if (!s.ok()) return s;
  } else {
    builder.AddListeningPort(listen.substr(4), grpc::InsecureServerCredentials());  // tcp:HOST:PORT
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) return FailedPrecondition("listen: cannot listen on " + listen);
  // "" and the API are known from the start, NOT_SERVING until the daemon is ready.
  api->health().Set("", false);
  api->health().Set(kHealthServiceName, false);
  api->Start(polled);
  if (unix) unix->Start(server.get());
  return std::make_unique<Server>(std::move(api), std::move(server), std::move(unix));
}

HealthStatus::HealthStatus(Server& server) : health_(&server.health()) {}

void HealthStatus::MarkServing() {
  std::lock_guard<std::mutex> lock(mu_);
  if (final_ || !health_) return;
  serving_ = true;
  health_->Set("", true);
  health_->Set(kHealthServiceName, true);
}

void HealthStatus::MarkStopping() {
  std::lock_guard<std::mutex> lock(mu_);
  if (final_) return;
  final_ = true;
  serving_ = false;
  // NOT_SERVING for every service name, and no later change (Health/Watch streams see it).
  if (health_) health_->Shutdown();
}

void HealthStatus::MarkNotServing(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (final_ || !health_) return;
  spdlog::error("health: NOT_SERVING: {}", reason);
  serving_ = false;
  health_->Set("", false);
  health_->Set(kHealthServiceName, false);
}

bool HealthStatus::serving() const {
  std::lock_guard<std::mutex> lock(mu_);
  return serving_;
}

}  // namespace conclave::api
