// StreamRedactor: replaces every occurrence of any secret with "[REDACTED]" in a byte stream
// fed in arbitrary chunks. It holds back only a tail that could be the start of a secret (at
// most the longest form − 1 bytes), so a secret split across two chunks is still caught while
// ordinary output is emitted at once. A secret of 8 bytes or more is also caught in the forms
// a worker could print it in: URL-encoded, and base64 (standard and URL alphabets) at each of
// the three byte alignments it can have inside a longer encoded text. RedactAll() is the
// one-shot form for stored text.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exec/form_index.h"

namespace conclave::exec {

inline constexpr std::string_view kRedacted = "[REDACTED]";

class StreamRedactor {
 public:
  explicit StreamRedactor(std::vector<std::string> secrets);

  // Returns the bytes that are safe to emit now.
  std::string Feed(std::string_view chunk);
  // Returns the held-back tail at end of stream.
  std::string Finish();
  // Every form searched for, longest first.
  const std::vector<std::string>& forms() const { return index_->forms(); }

 private:
  // Immutable, so a copy (a run's stderr redactor is its stdout one's) shares it.
  std::shared_ptr<const FormIndex> index_;
  std::string pending_;
};

std::string RedactAll(std::string_view text, const std::vector<std::string>& secrets);

// The daemon's standing secrets, their forms computed once: applied to every message it
// stores and every line it logs. Immutable after construction, so thread-safe.
class Redactor {
 public:
  Redactor() = default;
  explicit Redactor(const std::vector<std::string>& secrets);
  std::string Apply(std::string_view text) const;
  const std::vector<std::string>& secrets() const { return secrets_; }
  bool empty() const { return index_.empty(); }

 private:
  std::vector<std::string> secrets_;  // as given (raw)
  FormIndex index_;                   // every form, longest first
};

// The forms a secret is searched in: itself, and for 8+ bytes its URL-encoding and the
// alignment-independent cores of its base64 encodings.
std::vector<std::string> SecretForms(std::string_view secret);

}  // namespace conclave::exec
