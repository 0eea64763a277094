// Contract: see fingerprint.h. The normaliser is a hand-written single-pass scanner (no
// std::regex: predictable, linear time, no recursion on long inputs). All character tests
// are ASCII-only so the result does not depend on the process locale.
#include "domain/fingerprint.h"

#include "common/hash.h"

#include <array>
#include <cstdint>
#include <string>

namespace conclave::domain {
namespace {

constexpr size_t kNoMatch = std::string_view::npos;
constexpr size_t kMinBareHexLength = 7;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); }
bool IsWordChar(char c) { return IsDigit(c) || IsLower(c) || c == '_'; }
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
bool IsPathChar(char c) {
  return IsWordChar(c) || c == '.' || c == '-' || c == '+' || c == '~' || c == '@' || c == '%' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool IsPathSeparator(char c) { return c == '/' || c == '\\'; }
bool IsPathLead(char c) {
  return IsSpace(c) || c == '"' || c == '\'' || c == '`' || c == '(' || c == '[' || c == '{' ||
         c == '<' || c == '=' || c == ',' || c == ';' || c == ':';
}

// Returns the index just past the escape sequence starting at s[i] == ESC.
size_t SkipEscape(std::string_view s, size_t i) {
  size_t j = i + 1;
  if (j >= s.size()) return j;
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  if (s[j] == '[') {  // CSI: parameter/intermediate bytes, then one final byte.
    ++j;
    while (j < s.size() && at(j) >= 0x20 && at(j) <= 0x3f) ++j;
    if (j < s.size() && at(j) >= 0x40 && at(j) <= 0x7e) ++j;
    return j;
  }
  if (s[j] == ']') {  // OSC: terminated by BEL or ESC '\'.
    for (++j; j < s.size(); ++j) {
      if (s[j] == '\a') return j + 1;
      if (s[j] == '\x1b' && j + 1 < s.size() && s[j + 1] == '\\') return j + 2;
    }
    return j;
  }
  while (j < s.size() && at(j) >= 0x20 && at(j) <= 0x2f) ++j;  // e.g. ESC ( B
  return j < s.size() ? j + 1 : j;
}

std::string StripAnsiAndLower(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size();) {
    if (in[i] == '\x1b') {
      i = SkipEscape(in, i);
      continue;
    }
    const char c = in[i++];
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

// Duration units; the longest one that matches wins.
// clang-format off
constexpr std::array<std::string_view, 29> kDurationUnits = {
    "milliseconds", "millisecond", "microseconds", "microsecond", "nanoseconds", "nanosecond",
    "seconds", "second", "minutes", "minute", "hours", "hour",
    "msecs", "msec", "secs", "sec", "mins", "min", "hrs", "hr",
    "ms", "us", "ns", "\xc2\xb5s" /* U+00B5 micro sign */, "\xce\xbcs" /* U+03BC mu */,
    "s", "m", "h", "d"};
// clang-format on

constexpr std::array<std::string_view, 12> kMonths = {"jan", "feb", "mar", "apr", "may", "jun",
                                                      "jul", "aug", "sep", "oct", "nov", "dec"};

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  std::string Run() {
    std::string out;
    out.reserve(s_.size());
    size_t i = 0;
    while (i < s_.size()) {
      if (size_t end = MatchToken(i, out); end != kNoMatch) {
        i = end;
        continue;
      }
      if (size_t base = MatchPath(i); base != kNoMatch) {
        out += "<path>/";
        i = base;  // The basename is scanned like ordinary text.
        continue;
      }
      const char c = s_[i];
      if (IsDigit(c)) {
        out.push_back('#');
        while (IsDigit(At(i))) ++i;
      } else if (IsSpace(c)) {
        if (!out.empty() && out.back() != ' ') out.push_back(' ');
        while (i < s_.size() && IsSpace(s_[i])) ++i;
      } else {
        out.push_back(c);
        ++i;
      }
    }
    if (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  }

 private:
  char At(size_t i) const { return i < s_.size() ? s_[i] : '\0'; }
  char Prev(size_t i) const { return i == 0 ? '\0' : s_[i - 1]; }
  size_t CountDigits(size_t i) const {
    size_t n = 0;
    while (IsDigit(At(i + n))) ++n;
    return n;
  }
  // True when a token ending at i is not glued to a following word or ":digit".
  bool BoundaryAfter(size_t i) const {
    return !IsWordChar(At(i)) && !(At(i) == ':' && IsDigit(At(i + 1)));
  }
  bool StartsWith(size_t i, std::string_view prefix) const {
    return s_.substr(i, prefix.size()) == prefix;
  }

  // Placeholder tokens that must start a word. Appends the placeholder and returns the end.
  size_t MatchToken(size_t i, std::string& out) const {
    const char prev = Prev(i);
    if (IsWordChar(prev)) return kNoMatch;
    size_t end;
    if ((end = MatchUuid(i)) != kNoMatch) {
      out += "<uuid>";
    } else if ((end = MatchDate(i)) != kNoMatch || (end = MatchSyslog(i)) != kNoMatch ||
               (prev != ':' && prev != '.' && (end = MatchTime(i, true)) != kNoMatch)) {
      out += "<ts>";
    } else if (prev != '.' && (end = MatchDuration(i)) != kNoMatch) {
      out += "<dur>";
    } else if ((end = MatchHex(i)) != kNoMatch) {
      out += "<hex>";
    }
    return end;
  }

  size_t MatchUuid(size_t i) const {
    static constexpr std::array<size_t, 5> kGroups = {8, 4, 4, 4, 12};
    size_t j = i;
    for (size_t g = 0; g < kGroups.size(); ++g) {
      if (g > 0 && At(j++) != '-') return kNoMatch;
      for (size_t k = 0; k < kGroups[g]; ++k) {
        if (!IsHex(At(j++))) return kNoMatch;
      }
    }
    return IsWordChar(At(j)) ? kNoMatch : j;
  }

  // hh:mm[:ss][(.|,)frac][z|+hh[:]mm|+hh]; seconds required unless !require_seconds.
  size_t MatchTime(size_t i, bool require_seconds) const {
    size_t n = CountDigits(i);
    if (n < 1 || n > 2 || At(i + n) != ':' || CountDigits(i + n + 1) != 2) return kNoMatch;
    size_t j = i + n + 3;
    if (At(j) == ':' && CountDigits(j + 1) == 2) {
      j += 3;
      if ((At(j) == '.' || At(j) == ',') && IsDigit(At(j + 1))) j += 1 + CountDigits(j + 1);
    } else if (require_seconds) {
      return kNoMatch;
    }
    if (At(j) == 'z') {
      ++j;
    } else if (At(j) == '+' || At(j) == '-') {
      const size_t zone = CountDigits(j + 1);
      if (zone == 4) {
        j += 5;
      } else if (zone == 2) {
        j += 3;
        if (At(j) == ':' && CountDigits(j + 1) == 2) j += 3;
      }
    }
    return BoundaryAfter(j) ? j : kNoMatch;
  }

  // yyyy-mm-dd or yyyy/mm/dd, optionally followed by ('t' | ' ') and a time.
  size_t MatchDate(size_t i) const {
    if (CountDigits(i) != 4) return kNoMatch;
    const char sep = At(i + 4);
    if (sep != '-' && sep != '/') return kNoMatch;
    size_t j = i + 5;
    for (int part = 0; part < 2; ++part) {
      const size_t n = CountDigits(j);
      if (n < 1 || n > 2) return kNoMatch;
      j += n;
      if (part == 0 && At(j++) != sep) return kNoMatch;
    }
    if (At(j) == 't' || At(j) == ' ') {
      if (size_t end = MatchTime(j + 1, false); end != kNoMatch) return end;
    }
    return BoundaryAfter(j) ? j : kNoMatch;
  }

  // "mon dd hh:mm:ss" (syslog).
  size_t MatchSyslog(size_t i) const {
    bool month = false;
    for (std::string_view m : kMonths) month = month || StartsWith(i, m);
    if (!month || At(i + 3) != ' ') return kNoMatch;
    size_t j = i + 4;
    if (At(j) == ' ') ++j;
    const size_t n = CountDigits(j);
    if (n < 1 || n > 2 || At(j + n) != ' ') return kNoMatch;
    return MatchTime(j + n + 1, true);
  }

  size_t MatchUnit(size_t i, bool after_space) const {
    size_t best = 0;
    for (std::string_view u : kDurationUnits) {
      if (after_space && u.size() == 1) continue;
      if (u.size() > best && StartsWith(i, u) && !IsLower(At(i + u.size())) &&
          At(i + u.size()) != '_') {
        best = u.size();
      }
    }
    return best == 0 ? kNoMatch : i + best;
  }

  // number unit [number unit]... | number ' ' word-unit
  size_t MatchDuration(size_t i) const {
    size_t j = i;
    bool first = true;
    while (IsDigit(At(j))) {
      size_t k = j + CountDigits(j);
      if (At(k) == '.' && IsDigit(At(k + 1))) k += 1 + CountDigits(k + 1);
      size_t end = MatchUnit(k, false);
      if (end == kNoMatch && first && At(k) == ' ') end = MatchUnit(k + 1, true);
      if (end == kNoMatch) return kNoMatch;
      j = end;
      if (At(k) == ' ') break;  // Spaced units do not chain.
      first = false;
    }
    return j != i && !IsWordChar(At(j)) ? j : kNoMatch;
  }

  // 0x-prefixed hex of any length, or a bare hex word of >= 7 chars with a digit and a letter.
  size_t MatchHex(size_t i) const {
    if (At(i) == '0' && At(i + 1) == 'x' && IsHex(At(i + 2))) {
      size_t j = i + 2;
      while (IsHex(At(j))) ++j;
      return j;
    }
    size_t j = i;
    bool digit = false, letter = false;
    for (; IsWordChar(At(j)); ++j) {
      if (!IsHex(At(j))) return kNoMatch;
      (IsDigit(At(j)) ? digit : letter) = true;
    }
    return (j - i >= kMinBareHexLength && digit && letter) ? j : kNoMatch;
  }

  // Returns the index where the basename of an absolute path starting at i begins.
  size_t MatchPath(size_t i) const {
    if (i > 0 && !IsPathLead(s_[i - 1])) return kNoMatch;
    size_t j;
    if (At(i) == '/') {
      j = i + 1;
    } else if (At(i) == '~' && At(i + 1) == '/') {
      j = i + 2;
    } else if (IsLower(At(i)) && At(i + 1) == ':' && IsPathSeparator(At(i + 2))) {
      j = i + 3;
    } else {
      return kNoMatch;
    }
    size_t last_sep = j - 1;
    bool content = false;
    for (; IsPathChar(At(j)) || IsPathSeparator(At(j)); ++j) {
      if (IsPathSeparator(At(j))) {
        last_sep = j;
      } else if (At(j) != '.') {
        content = true;
      }
    }
    return content ? last_sep + 1 : kNoMatch;
  }

  std::string_view s_;
};

std::string_view TrimAsciiSpace(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string NormalizeFailureText(std::string_view text) {
  const std::string lowered = StripAnsiAndLower(text);
  return Scanner(lowered).Run();
}

std::string FailureFingerprint(std::string_view failure_text, std::string_view hypothesis) {
  std::string payload = NormalizeFailureText(failure_text);
  payload.push_back('\x1f');
  payload += TrimAsciiSpace(hypothesis);
  return Hex64(Fnv1a64(payload));
}

}  // namespace conclave::domain
