// Lenient request parsing for conclave.v1: protobuf refuses a proto3 string field holding
// invalid UTF-8, and gRPC answers any request it cannot parse with a bare error (the async
// API: INTERNAL, "Unable to parse request") — a client would never learn which field was wrong. For the
// service's request types the parse is retried with each such field replaced by a marker
// (api::kInvalidUtf8Marker's bytes), and the daemon's request checks (api/request_checks)
// refuse it as INVALID_ARGUMENT naming the field. Everything else parses exactly as before.
// This header is force-included into conclave_proto's generated sources (CMakeLists.txt), and
// included first by api/conclave_service.h, whose async API instantiates the request parsing,
// so the specialisations below are the ones every parse of a request uses.
#pragma once

// The generated service header instantiates the handlers: seen before this one, they would
// use the strict parse, and the linker could keep that copy for the whole daemon.
#ifdef GRPC_conclave_2fv1_2fconclave_2eproto__INCLUDED
#error "include proto/lenient/lenient_parse.h before conclave/v1/conclave.grpc.pb.h"
#endif

#include <grpcpp/impl/codegen/proto_utils.h>

#include "conclave/v1/conclave.pb.h"

namespace conclave::proto {
// The marker a field with invalid UTF-8 is given (must equal api::kInvalidUtf8Marker).
inline constexpr char kInvalidUtf8Marker[] = "\xef\xbf\xbf<conclave:invalid-utf8>";
grpc::Status LenientDeserialize(grpc::ByteBuffer* buffer, google::protobuf::Message* msg);
}  // namespace conclave::proto

#define CONCLAVE_LENIENT_REQUEST(T)                                                         \
  template <>                                                                               \
  class grpc::SerializationTraits<::conclave::v1::T, void> {                                \
   public:                                                                                  \
    static grpc::Status Serialize(const grpc::protobuf::MessageLite& msg, ByteBuffer* bb,   \
                                  bool* own_buffer) {                                       \
      return GenericSerialize<ProtoBufferWriter, ::conclave::v1::T>(msg, bb, own_buffer);   \
    }                                                                                       \
    static grpc::Status Deserialize(ByteBuffer* buffer, ::conclave::v1::T* msg) {           \
      return ::conclave::proto::LenientDeserialize(buffer, msg);                            \
    }                                                                                       \
  };

CONCLAVE_LENIENT_REQUEST(CancelTaskRequest)
CONCLAVE_LENIENT_REQUEST(CheckRequest)
CONCLAVE_LENIENT_REQUEST(CloseTerminalRequest)
CONCLAVE_LENIENT_REQUEST(CreateGateRequest)
CONCLAVE_LENIENT_REQUEST(CreateTaskRequest)
CONCLAVE_LENIENT_REQUEST(CreateTerminalRequest)
CONCLAVE_LENIENT_REQUEST(DispatchRequest)
CONCLAVE_LENIENT_REQUEST(DoctorRequest)
CONCLAVE_LENIENT_REQUEST(FlowCancelRequest)
CONCLAVE_LENIENT_REQUEST(FlowCleanRequest)
CONCLAVE_LENIENT_REQUEST(FlowListRequest)
CONCLAVE_LENIENT_REQUEST(FlowShowRequest)
CONCLAVE_LENIENT_REQUEST(FlowStartRequest)
CONCLAVE_LENIENT_REQUEST(FlowWaitRequest)
CONCLAVE_LENIENT_REQUEST(FollowTranscriptRequest)
CONCLAVE_LENIENT_REQUEST(GetReviewRequest)
CONCLAVE_LENIENT_REQUEST(GetStatusRequest)
CONCLAVE_LENIENT_REQUEST(GetTaskRequest)
CONCLAVE_LENIENT_REQUEST(GetTerminalRequest)
CONCLAVE_LENIENT_REQUEST(InboxRequest)
CONCLAVE_LENIENT_REQUEST(ListGatesRequest)
CONCLAVE_LENIENT_REQUEST(ListHandlesRequest)
CONCLAVE_LENIENT_REQUEST(ListProfilesRequest)
CONCLAVE_LENIENT_REQUEST(ListReviewsRequest)
CONCLAVE_LENIENT_REQUEST(ListTasksRequest)
CONCLAVE_LENIENT_REQUEST(ListTerminalsRequest)
CONCLAVE_LENIENT_REQUEST(ReadTranscriptRequest)
CONCLAVE_LENIENT_REQUEST(RegateRequest)
CONCLAVE_LENIENT_REQUEST(RegisterHandleRequest)
CONCLAVE_LENIENT_REQUEST(ReplyRequest)
CONCLAVE_LENIENT_REQUEST(ReportRequest)
CONCLAVE_LENIENT_REQUEST(ResolveGateRequest)
CONCLAVE_LENIENT_REQUEST(SendRequest)
CONCLAVE_LENIENT_REQUEST(StartReviewRequest)
CONCLAVE_LENIENT_REQUEST(UpdateTaskRequest)
CONCLAVE_LENIENT_REQUEST(WaitRequest)
CONCLAVE_LENIENT_REQUEST(WaitReviewRequest)
CONCLAVE_LENIENT_REQUEST(WatchRequest)

#undef CONCLAVE_LENIENT_REQUEST
