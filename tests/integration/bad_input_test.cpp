// Integration: bad input tried on every RPC (issue 16 item 4). The methods and their request
// fields come from the service's descriptor, so an RPC or a field added later is swept too.
// Each field of each request gets, by type: a string 2 MiB long, invalid UTF-8, an unknown
// value where the field takes a fixed set, deeply nested JSON where it takes JSON; a number
// -1 and the type's maximum; a double -1, NaN and infinity. The rest of the request is
// valid, so the bad field is what is refused. Each must be INVALID_ARGUMENT naming the field
// (a huge id may instead be NOT_FOUND: no such thing, not malformed), the daemon must stay up,
// and nothing already stored may change. Requests are sent as raw bytes through the generic
// stub, exactly as a client of another language would.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "conclave/v1/conclave.grpc.pb.h"
#include "daemon_fixture.h"
#include "git_repo.h"

using conclave::testing::DaemonFixture;
using conclave::testing::MakeRepo;
using json = nlohmann::json;
namespace pb = google::protobuf;

namespace {

using namespace std::chrono_literals;

// Sends req to method as raw bytes; returns the status (a stream: the status it ends with,
// or OK when its first message arrived).
grpc::Status Call(grpc::GenericStub& stub, const pb::MethodDescriptor* m, const pb::Message& req,
                  std::chrono::milliseconds timeout = 10s) {
  std::string bytes;
  req.SerializePartialToString(&bytes);  // no UTF-8 check on this side: the daemon's job
  grpc::Slice slice(bytes);
  grpc::ByteBuffer buf(&slice, 1);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  const std::string path = "/" + m->service()->full_name() + "/" + m->name();
  if (!m->server_streaming()) {
    grpc::ByteBuffer resp;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&ctx, path, grpc::StubOptions(), &buf, &resp,
                   [&](grpc::Status s) { done.set_value(std::move(s)); });
    return done.get_future().get();
  }
  grpc::CompletionQueue cq;
  auto call = stub.PrepareCall(&ctx, path, &cq);
  void* tag;
  bool ok = false;
  auto step = [&](intptr_t t) {
    cq.Next(&tag, &ok);
    return ok && reinterpret_cast<intptr_t>(tag) == t;
  };
  call->StartCall(reinterpret_cast<void*>(1));
  step(1);
  call->Write(buf, reinterpret_cast<void*>(2));
  step(2);
  call->WritesDone(reinterpret_cast<void*>(3));
  step(3);
  grpc::ByteBuffer first;
  call->Read(&first, reinterpret_cast<void*>(4));
  const bool got_message = step(4);
  if (got_message) ctx.TryCancel();
  grpc::Status st;
  call->Finish(&st, reinterpret_cast<void*>(5));
  step(5);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return got_message ? grpc::Status::OK : st;
}

// The daemon's service, called by name with requests built from its descriptors.
struct RawService {
  explicit RawService(const DaemonFixture& d)
      : channel(grpc::CreateChannel("unix:" + d.socket(), grpc::InsecureChannelCredentials())),
        calls(channel),
        service(pb::DescriptorPool::generated_pool()->FindServiceByName("conclave.v1.Conclave")) {}
  // A request for m: base (proto JSON) parsed into a fresh message.
  std::unique_ptr<pb::Message> Request(const pb::MethodDescriptor* m, const json& base) {
    std::unique_ptr<pb::Message> req(factory.GetPrototype(m->input_type())->New());
    if (!base.is_null()) REQUIRE(pb::util::JsonStringToMessage(base.dump(), req.get()).ok());
    return req;
  }
  std::shared_ptr<grpc::Channel> channel;
  grpc::GenericStub calls;
  pb::DynamicMessageFactory factory;
  const pb::ServiceDescriptor* service;
};

// Fields that take one of a fixed set of words (Method.field).
const std::set<std::string> kEnumFields = {
    "Send.type",          "Send.priority",       "Check.types",        "Inbox.types",
    "Wait.types",         "Watch.types",         "ListTasks.status",   "CreateTask.role",
    "StartReview.artifact_kind", "StartReview.mode", "FlowStart.review_mode", "FlowStart.ship",
    "FlowList.status"};

// Values that look bad but are documented: not bad input, not sent (Method.field:variant).
const std::set<std::string> kDocumented = {
    "StartReview.cap:-1",  // -1 = the configured default
    "FlowStart.cap:-1",    // -1 = the review default
    "FlowStart.max_fix_rounds:-1",  // -1 = 2
};

bool IsIdField(const std::string& name) {
  return name == "id" || name == "seq" || name == "after_seq" || name == "cursor" ||
         (name.size() > 3 && (name.compare(name.size() - 3, 3, "_id") == 0 ||
                              name.compare(name.size() - 4, 4, "_ids") == 0)) ||
         name == "deps";
}

struct Variant {
  std::string name;
  std::function<void(pb::Message&, const pb::FieldDescriptor*)> apply;
};

void SetString(pb::Message& msg, const pb::FieldDescriptor* f, const std::string& v) {
  const pb::Reflection* r = msg.GetReflection();
  if (f->is_repeated()) {
    r->ClearField(&msg, f);
    r->AddString(&msg, f, v);
  } else {
    r->SetString(&msg, f, v);
  }
}

void SetInt(pb::Message& msg, const pb::FieldDescriptor* f, int64_t v) {
  const pb::Reflection* r = msg.GetReflection();
  const bool i32 = f->cpp_type() == pb::FieldDescriptor::CPPTYPE_INT32;
  if (f->is_repeated()) {
    r->ClearField(&msg, f);
    if (i32) r->AddInt32(&msg, f, static_cast<int32_t>(v));
    else r->AddInt64(&msg, f, v);
  } else if (i32) {
    r->SetInt32(&msg, f, static_cast<int32_t>(v));
  } else {
    r->SetInt64(&msg, f, v);
  }
}

std::vector<Variant> VariantsFor(const std::string& method, const pb::FieldDescriptor* f) {
  std::vector<Variant> out;
  const std::string key = method + "." + f->name();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      if (f->type() == pb::FieldDescriptor::TYPE_BYTES) {
        out.push_back({"oversized", [](pb::Message& m, const pb::FieldDescriptor* fd) {
                         SetString(m, fd, std::string((4 << 20) + 1, 'a'));
                       }});
        break;
      }
      out.push_back({"oversized", [](pb::Message& m, const pb::FieldDescriptor* fd) {
                       SetString(m, fd, std::string((2 << 20) + 1, 'a'));
                     }});
      out.push_back({"invalid-utf8", [](pb::Message& m, const pb::FieldDescriptor* fd) {
                       SetString(m, fd, "ok\xc3\x28\xff");
                     }});
      if (kEnumFields.count(key)) {
        out.push_back({"unknown-word", [](pb::Message& m, const pb::FieldDescriptor* fd) {
                         SetString(m, fd, "no-such-word");
                       }});
      }
      if (f->name().size() > 5 && f->name().substr(f->name().size() - 5) == "_json") {
        out.push_back({"deep-json", [](pb::Message& m, const pb::FieldDescriptor* fd) {
                         SetString(m, fd, std::string(100000, '[') + std::string(100000, ']'));
                       }});
      }
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_INT32:
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      const bool i32 = f->cpp_type() == pb::FieldDescriptor::CPPTYPE_INT32;
      out.push_back({"-1", [](pb::Message& m, const pb::FieldDescriptor* fd) { SetInt(m, fd, -1); }});
      out.push_back({"max", [i32](pb::Message& m, const pb::FieldDescriptor* fd) {
                       SetInt(m, fd, i32 ? std::numeric_limits<int32_t>::max()
                                         : std::numeric_limits<int64_t>::max());
                     }});
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: {
      for (double v : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
        std::ostringstream name;
        name << v;
        out.push_back({name.str(), [v](pb::Message& m, const pb::FieldDescriptor* fd) {
                         m.GetReflection()->SetDouble(&m, fd, v);
                       }});
      }
      break;
    }
    default:
      break;  // bools and messages: nothing to get wrong
  }
  return out;
}

// Everything a client can read back, as one string (volatile figures removed).
std::string Snapshot(const DaemonFixture& d) {
  json all;
  all["status"] = d.CliJson({"status"});
  // Figures of the daemon's own activity, not stored data: how many commits and checkpoints
  // it ran, SQLite's memory, its loop's polls, the disk measurement, the uptime.
  all["status"].erase("uptime_ms");
  all["status"].erase("disk");
  all["status"]["counts"].erase("commits");
  all["status"]["counts"].erase("wal_checkpoints");
  all["status"]["counts"].erase("sqlite_memory_bytes");
  all["status"]["counts"].erase("loop_polls");
  all["status"]["counts"].erase("loop_polls_caught");
  all["tasks"] = d.CliJson({"task", "list"});
  all["terminals"] = d.CliJson({"terminal", "list", "--all"});
  all["handles"] = d.CliJson({"handle", "list"});
  all["gates"] = d.CliJson({"gate", "list"});
  all["inbox"] = d.CliJson({"inbox", "--limit", "10000"});
  return all.dump(1);
}

}  // namespace

TEST_CASE("every RPC refuses bad input with INVALID_ARGUMENT naming the field, stays up and "
          "changes nothing",
          "[bad-input]") {
  DaemonFixture d;
  d.WriteProfile("fake", d.FakeProfile("fake", "fakefam"));
  d.Start();
  d.Cli({"handle", "register", "h1"});
  d.Cli({"terminal", "create", "--profile", "fake", "--handle", "t1", "--cwd", d.dir()});
  const int64_t seq = std::stoll(
      d.CliJson({"send", "--to", "h1", "--type", "status", "--subject", "s", "--body", "b"})
          ["messages"][0]["seq"].get<std::string>());
  const std::string task = d.CliJson({"task", "create", "--brief", "-"}, "b")["task"]["id"];
  const std::string gated = d.CliJson({"task", "create", "--brief", "-"}, "g")["task"]["id"];
  const std::string gate = d.CliJson({"gate", "create", "--task", gated, "--question", "q?"})["id"];

  const std::string repo = MakeRepo(d);
  // A valid request per method (as proto JSON); only the bad field differs.
  const std::map<std::string, json> base = {
      {"RegisterHandle", {{"name", "fresh"}}},
      {"Send", {{"to", "h1"}, {"type", "status"}, {"subject", "s"}, {"body", "b"}}},
      {"Check", {{"handle", "h1"}, {"peek", true}}},
      {"Reply", {{"seq", std::to_string(seq)}, {"body", "b"}}},
      {"Inbox", {{"to", "h1"}}},
      {"Wait", {{"to", "h1"}, {"timeout_ms", "10"}}},
      {"Watch", {{"to", "h1"}}},
      {"CreateTerminal", {{"profile", "fake"}, {"handle", "t2"}, {"cwd", d.dir()}}},
      {"GetTerminal", {{"handle", "t1"}}},
      {"CloseTerminal", {{"handle", "t1"}}},
      {"ReadTranscript", {{"handle", "t1"}}},
      {"FollowTranscript", {{"handle", "t1"}}},
      {"CreateTask", {{"brief", "b"}, {"title", "t"}}},
      {"GetTask", {{"id", task}}},
      {"UpdateTask", {{"id", task}, {"title", "t"}}},
      {"CancelTask", {{"id", task}}},
      {"Dispatch", {{"task_id", task}, {"to", "t1"}}},
      {"CreateGate", {{"task_id", task}, {"question", "q"}}},
      {"ResolveGate", {{"id", gate}, {"decision", "yes"}}},
      {"StartReview", {{"artifact", "ZGlmZgo="}, {"writer_family", "fakefam"}}},
      {"GetReview", {{"id", "1"}}},
      {"WaitReview", {{"id", "1"}, {"timeout_ms", "10"}}},
      {"Regate", {{"id", "1"}, {"artifact", "ZGlmZgo="}}},
      {"FlowStart", {{"repo", repo}, {"brief", "b"}, {"writer", "fake"}}},
      {"FlowShow", {{"id", "1"}}},
      {"FlowWait", {{"id", "1"}, {"timeout_ms", "10"}}},
      {"FlowCancel", {{"id", "1"}}},
      {"FlowClean", {{"id", "1"}}},
  };

  const std::string before = Snapshot(d);
  // This side serialises invalid UTF-8 on purpose: protobuf's complaint about it is expected.
  pb::LogHandler* previous =
      pb::SetLogHandler([](pb::LogLevel, const char*, int, const std::string&) {});
  RawService raw(d);
  const pb::ServiceDescriptor* service = raw.service;
  REQUIRE(service != nullptr);
  int tried = 0;
  std::vector<std::string> wrong;
  for (int i = 0; i < service->method_count(); ++i) {
    const pb::MethodDescriptor* m = service->method(i);
    const pb::Descriptor* in = m->input_type();
    for (int k = 0; k < in->field_count(); ++k) {
      const pb::FieldDescriptor* f = in->field(k);
      for (const auto& v : VariantsFor(m->name(), f)) {
        const std::string what = m->name() + "." + f->name() + ":" + v.name;
        if (kDocumented.count(what)) continue;
        auto it = base.find(m->name());
        std::unique_ptr<pb::Message> req = raw.Request(m, it == base.end() ? json() : it->second);
        v.apply(*req, f);
        grpc::Status s = Call(raw.calls, m, *req);
        ++tried;
        const std::string msg = s.error_message();
        const bool names = msg.rfind(f->name() + ":", 0) == 0;  // "<field>: what is wrong"
        const bool ok = (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT && names) ||
                        (s.error_code() == grpc::StatusCode::NOT_FOUND && v.name == "max" &&
                         IsIdField(f->name()));
        if (!ok) {
          wrong.push_back(what + " -> " + std::to_string(s.error_code()) + " " +
                          msg.substr(0, 120));
        }
      }
    }
    // Still up after each method's sweep.
    REQUIRE(d.Cli({"status"}).exit_code == 0);
  }
  pb::SetLogHandler(previous);
  INFO("tried " << tried);
  std::string all;
  for (const auto& w : wrong) all += w + "\n";
  INFO(all);
  CHECK(wrong.empty());
  CHECK(tried > 150);
  CHECK(kill(d.pid(), 0) == 0);
  // Nothing stored changed: the first line that differs, if any.
  const std::string after = Snapshot(d);
  std::istringstream a(before), b(after);
  std::string la, lb;
  int line = 0;
  while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
  INFO("line " << line << ": before " << la << " / after " << lb);
  CHECK(after == before);
}

TEST_CASE("size and number limits sit where documented: at the limit accepted, one over refused "
          "naming the field",
          "[bad-input]") {
  DaemonFixture d;
  d.Start();
  d.Cli({"handle", "register", "h1"});
  RawService raw(d);
  REQUIRE(raw.service != nullptr);
  struct Limit {
    std::string method, field;
    json base;
    int64_t at;
    bool number;
  };
  const std::vector<Limit> limits = {
      {"CreateTask", "brief", {{"title", "t"}}, 1 << 20, false},
      {"CreateTask", "title", {{"brief", "b"}}, 512, false},
      {"CreateTask", "hypothesis", {{"brief", "b"}}, 64 << 10, false},
      {"CreateTask", "idempotency_key", {{"brief", "b"}}, 256, false},
      {"Send", "subject", {{"to", "h1"}, {"type", "status"}, {"body", "b"}}, 1024, false},
      {"Send", "body", {{"to", "h1"}, {"type", "status"}, {"subject", "s"}}, 1 << 20, false},
      {"Inbox", "limit", {{"to", "h1"}}, 10000, true},
      {"CreateTask", "auto_retry", {{"brief", "b"}}, 20, true},
  };
  for (const auto& l : limits) {
    const pb::MethodDescriptor* m = raw.service->FindMethodByName(l.method);
    REQUIRE(m != nullptr);
    for (int64_t n : {l.at, l.at + 1}) {
      json req = l.base;
      if (l.number) {
        req[l.field] = n;
      } else {
        req[l.field] = std::string(static_cast<size_t>(n), 'a');
      }
      grpc::Status s = Call(raw.calls, m, *raw.Request(m, req));
      INFO(l.method << "." << l.field << " at " << n << (l.number ? "" : " bytes") << " -> "
                    << s.error_code() << " " << s.error_message().substr(0, 120));
      if (n == l.at) {
        CHECK(s.ok());
      } else {
        CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
        CHECK(s.error_message().rfind(l.field + ":", 0) == 0);
      }
    }
  }
}

TEST_CASE("GetStatus, whose reply the daemon serializes itself, answers bytes it cannot parse "
          "as every typed method does, and a valid request with the daemon's status",
          "[bad-input][status]") {
  DaemonFixture d;
  d.Start();
  RawService raw(d);
  // Sends bytes to method; returns the status, the reply's bytes and the trailing metadata.
  auto call = [&](const std::string& method, const std::string& bytes, std::string* reply,
                  std::multimap<std::string, std::string>* trailers) {
    grpc::Slice slice(bytes);
    grpc::ByteBuffer buf(&slice, 1), resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 10s);
    std::promise<grpc::Status> done;
    raw.calls.UnaryCall(&ctx, "/conclave.v1.Conclave/" + method, grpc::StubOptions(), &buf,
                        &resp, [&](grpc::Status s) { done.set_value(std::move(s)); });
    grpc::Status s = done.get_future().get();
    std::vector<grpc::Slice> slices;
    if (s.ok() && resp.Dump(&slices).ok()) {
      for (const auto& sl : slices) reply->append(reinterpret_cast<const char*>(sl.begin()), sl.size());
    }
    for (const auto& [k, v] : ctx.GetServerTrailingMetadata()) {
      trailers->emplace(std::string(k.data(), k.size()), std::string(v.data(), v.size()));
    }
    return s;
  };
  const std::string garbage = "\xff\xff\xff\xff";  // a tag no parser accepts
  std::string reply;
  std::multimap<std::string, std::string> trailers, typed_trailers;
  grpc::Status typed = call("ListHandles", garbage, &reply, &typed_trailers);
  REQUIRE_FALSE(typed.ok());
  grpc::Status status = call("GetStatus", garbage, &reply, &trailers);
  CHECK(status.error_code() == typed.error_code());
  CHECK(status.error_message() == typed.error_message());
  CHECK(trailers.count("conclave-origin") == typed_trailers.count("conclave-origin"));

  trailers.clear();
  reply.clear();
  REQUIRE(call("GetStatus", "", &reply, &trailers).ok());
  conclave::v1::StatusReply parsed;
  REQUIRE(parsed.ParseFromString(reply));
  CHECK(parsed.pid() == d.pid());
  CHECK(parsed.counts().count("messages") == 1);
  CHECK(parsed.counts().count("waiters") == 1);
  CHECK(trailers.count("conclave-origin") == 1);
  CHECK(kill(d.pid(), 0) == 0);
}
