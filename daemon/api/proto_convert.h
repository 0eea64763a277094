// Conversions between the service layer's views and conclave.v1 protobuf messages, and the one
// place where a service Status becomes a gRPC status. A pure mapping: no rule lives here.
#pragma once

#include <grpcpp/support/status.h>

#include "common/status.h"
#include "conclave/v1/conclave.pb.h"
#include "domain/dispatch.h"
#include "domain/gate.h"
#include "domain/message.h"
#include "service/services.h"

namespace conclave::api {

namespace v1 = ::conclave::v1;

grpc::Status ToGrpc(const Status& s);

void ToProto(const domain::MessageRecord& m, v1::Message* out);
domain::MessageRecord FromProto(const v1::SendRequest& r);
void ToProto(const domain::Handle& h, v1::Handle* out);
void ToProto(const service::TerminalView& t, v1::Terminal* out);
void ToProto(const service::TaskView& t, v1::Task* out);
void ToProto(const domain::Dispatch& d, v1::DispatchInfo* out);
void ToProto(const domain::Gate& g, v1::Gate* out);
void ToProto(const service::ProfileView& p, v1::Profile* out);
void ToProto(const service::StatusView& s, v1::StatusReply* out);
void ToProto(const service::ReviewView& v, v1::Review* out);

}  // namespace conclave::api
