// Conversions between service records and conclave.v1 protobuf messages, and the one place
// where a service Status becomes a gRPC status.
#pragma once

#include <grpcpp/support/status.h>

#include "common/status.h"
#include "conclave/v1/conclave.pb.h"
#include "domain/message.h"
#include "exec/profile.h"
#include "store/dispatch_store.h"
#include "store/gate_store.h"
#include "store/handle_store.h"
#include "store/task_store.h"
#include "store/terminal_store.h"

namespace conclave::api {

namespace v1 = ::conclave::v1;

grpc::Status ToGrpc(const Status& s);

void ToProto(const domain::MessageRecord& m, v1::Message* out);
domain::MessageRecord FromProto(const v1::SendRequest& r);
void ToProto(const store::HandleRecord& h, v1::Handle* out);
void ToProto(const store::TerminalRecord& t, const std::string& family, v1::Terminal* out);
void ToProto(const store::TaskRecord& t, const std::vector<int64_t>& deps, double spent,
             v1::Task* out);
void ToProto(const store::DispatchRecord& d, v1::DispatchInfo* out);
void ToProto(const store::GateRecord& g, v1::Gate* out);
void ToProto(const exec::Profile& p, v1::Profile* out);

}  // namespace conclave::api
