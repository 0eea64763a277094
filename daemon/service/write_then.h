// Done<T> and WriteThen: how a service part answers. A request's changes run as one write in
// the commit batcher; its answer is delivered only after that write committed, so a client
// never sees something that could still be lost. Loop thread only.
#pragma once

#include <functional>
#include <optional>

#include "common/status.h"
#include "service/core.h"

namespace conclave::service {

template <typename T>
using Done = std::function<void(StatusOr<T>)>;

// Runs fn as a write and calls done with its value after the commit (or with the store's
// refusal when the commit failed).
template <typename T>
void WriteThen(Core& core, const std::function<StatusOr<T>()>& fn, Done<T> done) {
  std::optional<T> value;
  Status s = core.batcher.Write([&]() -> Status {
    StatusOr<T> r = fn();
    if (!r.ok()) return r.status();
    value = std::move(r.value());
    return Status::Ok();
  });
  if (!s.ok()) {
    done(s);
    return;
  }
  core.batcher.AfterCommit([v = std::move(*value), done = std::move(done), &core](bool ok) mutable {
    if (!ok) {
      Status refusal = core.batcher.Refusal();
      done(refusal.ok() ? Unavailable("the change could not be committed") : refusal);
    } else {
      done(std::move(v));
    }
  });
}

}  // namespace conclave::service
