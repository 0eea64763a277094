#include "api/unix_listener.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <grpcpp/server_posix.h>
#include <spdlog/spdlog.h>

#include "common/thread_name.h"

namespace conclave::api {

UnixListener::~UnixListener() { Stop(); }

Status UnixListener::Bind() {
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return FailedPrecondition("listen: socket: " + std::string(strerror(errno)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
  mode_t old = umask(0077);  // the socket is created 0600
  int rc = bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int err = errno;
  umask(old);
  if (rc != 0) return FailedPrecondition("listen: cannot bind " + path_ + ": " + strerror(err));
  chmod(path_.c_str(), 0600);
  if (listen(listen_fd_, 128) != 0) {
    return FailedPrecondition("listen: cannot listen on " + path_ + ": " + strerror(errno));
  }
  return Status::Ok();
}

void UnixListener::Start(grpc::Server* server) {
  server_ = server;
  thread_ = std::thread([this] { AcceptLoop(); });
  NameThread(thread_, "accept");
}

void UnixListener::Stop() {
  if (stopping_.exchange(true)) return;
  if (listen_fd_ >= 0) shutdown(listen_fd_, SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
}

void UnixListener::AcceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    int ready = poll(&p, 1, 500);
    if (stopping_) break;
    if (ready <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
        spdlog::warn("accept on {}: {}", path_, strerror(errno));
      }
      continue;
    }
    Accepted(fd);
  }
}

void HandOverPeer(int fd, PeerTable& peers, grpc::Server* server, int64_t via_dispatch) {
  ucred cred{};
  socklen_t len = sizeof cred;
  struct stat st {};
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || fstat(fd, &st) != 0) {
    close(fd);
    return;
  }
  // Classified now: the peer's pid names this process only while the connection is fresh.
  service::PeerInfo info = service::InspectUnixPeer(cred.uid, cred.pid);
  info.via_dispatch = via_dispatch;
  peers.Put(fd, st.st_ino, std::move(info));
  grpc::AddInsecureChannelFromFd(server, fd);  // gRPC owns and closes fd from here
}

void UnixListener::Accepted(int fd) { HandOverPeer(fd, peers_, server_); }

}  // namespace conclave::api
