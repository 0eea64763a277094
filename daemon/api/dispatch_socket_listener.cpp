#include "api/dispatch_socket_listener.h"

#include "api/unix_listener.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <spdlog/spdlog.h>
#include <thread>
#include <vector>

#include "common/thread_name.h"

namespace conclave::api {
namespace fs = std::filesystem;

DispatchSocketListener::DispatchSocketListener(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::remove_all(dir_, ec);  // sockets of a daemon that died: nobody listens on them
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

DispatchSocketListener::~DispatchSocketListener() {
  if (wake_fd_ >= 0) Stop();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, s] : sockets_) {
    close(s.fd);
    unlink(s.path.c_str());
  }
  sockets_.clear();
  for (int fd : retired_) close(fd);
  retired_.clear();
  if (wake_fd_ >= 0) close(wake_fd_);
}

StatusOr<std::string> DispatchSocketListener::Open(int64_t dispatch_id) {
  if (wake_fd_ < 0) return FailedPrecondition("dispatch socket: no eventfd");
  std::string path = dir_ + "/d" + std::to_string(dispatch_id) + ".sock";
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) {
    return FailedPrecondition("dispatch socket: " + path + " is longer than a unix socket path may be");
  }
  std::error_code ec;
  fs::create_directories(dir_, ec);
  chmod(dir_.c_str(), 0700);
  unlink(path.c_str());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return FailedPrecondition("dispatch socket: " + std::string(strerror(errno)));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  mode_t old = umask(0077);
  int rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int err = errno;
  umask(old);
  if (rc != 0 || listen(fd, 16) != 0) {
    if (rc == 0) err = errno;
    close(fd);
    return FailedPrecondition("dispatch socket: cannot listen on " + path + ": " + strerror(err));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& s = sockets_[dispatch_id];
    if (s.fd >= 0) retired_.push_back(s.fd);
    s = Socket{fd, path};
  }
  uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof one);
  (void)n;
  return path;
}

void DispatchSocketListener::Close(int64_t dispatch_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sockets_.find(dispatch_id);
    if (it == sockets_.end()) return;
    unlink(it->second.path.c_str());
    retired_.push_back(it->second.fd);
    sockets_.erase(it);
  }
  uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof one);
  (void)n;
}

void DispatchSocketListener::Start(grpc::Server* server, PeerTable& peers) {
  if (wake_fd_ < 0) return;  // Open refuses every socket then
  server_ = server;
  peers_ = &peers;
  thread_ = std::thread([this] { AcceptLoop(); });
  NameThread(thread_, "worker-accept");
}

void DispatchSocketListener::Stop() {
  if (stopping_.exchange(true)) return;
  uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof one);
  (void)n;
  if (thread_.joinable()) thread_.join();
}

void DispatchSocketListener::AcceptLoop() {
  while (!stopping_) {
    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}};
    std::vector<int64_t> ids{0};
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int fd : retired_) close(fd);
      retired_.clear();
      for (const auto& [id, s] : sockets_) {
        fds.push_back({s.fd, POLLIN, 0});
        ids.push_back(id);
      }
    }
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::warn("dispatch sockets: poll: {}", strerror(errno));
      return;
    }
    if (fds[0].revents & POLLIN) {
      uint64_t v = 0;
      ssize_t n = read(wake_fd_, &v, sizeof v);
      (void)n;
    }
    if (stopping_) break;
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents & POLLIN) Accept(fds[i].fd, ids[i]);
    }
  }
}

void DispatchSocketListener::Accept(int listen_fd, int64_t dispatch_id) {
  {
    // Closed meanwhile: the descriptor may already name something else.
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sockets_.find(dispatch_id);
    if (it == sockets_.end() || it->second.fd != listen_fd) return;
  }
  for (;;) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors: the connection stays queued; do not spin on it.
      if (errno == EMFILE || errno == ENFILE) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return;  // EAGAIN: accepted all that waited
    }
    HandOverPeer(fd, *peers_, server_, dispatch_id);
  }
}

}  // namespace conclave::api
