// Contract: failure fingerprints for the circuit breaker (DESIGN §1 "Failure policy").
// NormalizeFailureText turns one failure text into a canonical form so that the same root
// cause seen on different attempts (other line numbers, pids, paths, timestamps, durations,
// addresses, terminal colours) yields the same string, while a different cause does not.
// FailureFingerprint hashes that form together with the task's hypothesis. Both are pure,
// deterministic and byte-for-byte stable across runs and platforms; fingerprints are
// persisted, so any change to the normaliser is a breaking change for stored series.
#ifndef CONCLAVE_DOMAIN_FINGERPRINT_H_
#define CONCLAVE_DOMAIN_FINGERPRINT_H_

#include <string>
#include <string_view>

namespace conclave::domain {

// Canonicalises a failure text. In order of precedence:
//  - ANSI escape sequences (CSI, OSC, two/three-byte ESC forms) are removed;
//  - ASCII letters are lower-cased (other bytes, e.g. UTF-8, are kept as is);
//  - UUIDs (8-4-4-4-12 hex)                                   -> "<uuid>";
//  - timestamps: ISO/SQL dates with optional time, fraction and zone
//    ("2026-11-29T16:09:11Z", "2026-11-29 16:09:11.123", "2026/11/29"), clock times
//    ("16:09:11", "16:09:11,5+01:00") and syslog prefixes ("Nov 29 16:09:11") -> "<ts>";
//  - durations: a number with a unit, compound forms allowed ("12ms", "3.5s", "2m10s",
//    "1h2m3s", "300 ms", "1.5 seconds"; single-letter units only without a space) -> "<dur>";
//  - hex ids: "0x..." of any length, and bare hex words of >= 7 chars containing both a
//    digit and a letter a-f (git shas, pointers)              -> "<hex>";
//  - absolute paths ("/a/b/c.cpp", "~/a/b", "C:\a\b.cpp", URL paths after "scheme:"):
//    the directory part becomes "<path>/" and the basename is KEPT (then normalised like
//    any text), so "/tmp/x/foo.cpp not found" and "/home/y/foo.cpp not found" collide but
//    "foo.cpp not found" and "bar.cpp not found" do not. A path ends at whitespace, quotes,
//    brackets, ":" (line:col suffixes) or ",";
//  - every remaining run of ASCII digits                      -> "#";
//  - runs of ASCII whitespace fold to one space; the result is trimmed.
// Line:col pairs such as "foo.cpp:12:34" are never mistaken for clock times.
std::string NormalizeFailureText(std::string_view text);

// 16 lower-case hex chars: FNV-1a 64 over
//   NormalizeFailureText(failure_text) + '\x1f' + hypothesis-with-ASCII-whitespace-trimmed.
std::string FailureFingerprint(std::string_view failure_text, std::string_view hypothesis);

}  // namespace conclave::domain

#endif  // CONCLAVE_DOMAIN_FINGERPRINT_H_
