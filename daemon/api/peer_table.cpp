#include "api/peer_table.h"

#include <sys/stat.h>

#include <charconv>

namespace conclave::api {

void PeerTable::Put(int fd, ino_t inode, service::PeerInfo info) {
  std::lock_guard<std::mutex> lock(mu_);
  // accept() returns N again only after gRPC closed the old N: overwriting is right.
  peers_[fd] = Entry{inode, std::move(info)};
}

std::optional<service::PeerInfo> PeerTable::Lookup(const std::string& peer) const {
  if (peer.rfind("ipv4:", 0) == 0 || peer.rfind("ipv6:", 0) == 0) {
    service::PeerInfo tcp;
    tcp.tcp = true;
    return tcp;
  }
  if (peer.rfind("fd:", 0) != 0) return std::nullopt;
  int fd = -1;
  auto [p, ec] = std::from_chars(peer.data() + 3, peer.data() + peer.size(), fd);
  if (ec != std::errc() || p != peer.data() + peer.size() || fd < 0) return std::nullopt;
  struct stat st {};
  if (fstat(fd, &st) != 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = peers_.find(fd);
  if (it == peers_.end() || it->second.inode != st.st_ino) return std::nullopt;
  return it->second.info;
}

}  // namespace conclave::api
