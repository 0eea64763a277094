// RequestChecks: what every request passes before its RPC runs, read from the request's
// descriptor so a field added later is covered too. Strings are valid UTF-8 and within their
// field's limit (1 MiB for briefs and bodies, 256 KiB for JSON payloads, 64 KiB for
// hypotheses, questions and reasons, 4 KiB for names, paths and the rest), JSON fields are
// nested at most 64 deep; numbers are not negative (but a documented -1) and within their
// field's cap (limit 10000, timeout_s 30 days, cap 10, ..., nothing beyond 2^53); doubles are
// finite and >= 0; a repeated field has at most 10000 entries. The error is INVALID_ARGUMENT
// naming the field. Any thread (each keeps a table of each request type's field rules).
#pragma once

#include <google/protobuf/message.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace conclave::api {

Status CheckRequest(const google::protobuf::Message& req);

// What a string field holds when the wire carried invalid UTF-8 in it: the request parser
// (api/lenient_parse) puts it there, so that CheckRequest can name the field instead of the
// whole call failing with gRPC's bare parse error (INTERNAL, "Unable to parse request").
inline constexpr std::string_view kInvalidUtf8Marker = "\xef\xbf\xbf<conclave:invalid-utf8>";

// A status message with what the caller sent cut short: gRPC carries it in a header, and an
// echoed 2 MiB value would break the caller's connection.
std::string CapStatusMessage(std::string message);

}  // namespace conclave::api
