// Fuzz target: the daemon's config file (config/config): LoadConfigFromJson on the file's
// text with no flags. Properties: an accepted config listens on unix: or loopback tcp: (with
// a token), has a known log level and no negative interval; a rejected one names its key.
#include "config/config.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace conclave;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto c = config::LoadConfigFromJson(text, "fuzz.json", config::Flags{});
  if (!c.ok()) {
    if (c.status().message().empty()) fuzz::PropertyFailed("rejected without a message");
    return 0;
  }
  if (c->listen.rfind("unix:", 0) != 0 && c->listen.rfind("tcp:", 0) != 0) {
    fuzz::PropertyFailed("bad listen accepted");
  }
  if (c->listen.rfind("tcp:", 0) == 0 && c->tcp_token.empty()) {
    fuzz::PropertyFailed("tcp listener without a token accepted");
  }
  if (c->heartbeat_interval_s < 0 || c->kill_grace_ms < 0 || c->eof_grace_ms < 0) {
    fuzz::PropertyFailed("negative interval accepted");
  }
  return 0;
}
