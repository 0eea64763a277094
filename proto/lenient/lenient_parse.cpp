#include "lenient_parse.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <vector>

namespace conclave::proto {

namespace pb = google::protobuf;

namespace {

bool ValidUtf8(const std::string& s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > n) return false;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and code points beyond U+10FFFF are invalid too.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
      return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

grpc::Status LenientDeserialize(grpc::ByteBuffer* buffer, pb::Message* msg) {
  // A request that parses as it is (nearly all) is read from the buffer's slices in place, as
  // gRPC's own parse reads it: no copy of its bytes. Reading leaves the buffer as it was.
  bool refused = false;  // the bytes were parsed as they are, and refused
  {
    grpc::ProtoBufferReader reader(buffer);
    if (reader.status().ok()) {
      if (msg->ParseFromZeroCopyStream(&reader)) {
        buffer->Clear();
        return grpc::Status::OK;
      }
      refused = true;
    }
  }
  std::vector<grpc::Slice> slices;
  if (!buffer->Dump(&slices).ok()) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "unreadable request");
  }
  std::string bytes;
  for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  buffer->Clear();
  // Bytes already refused are not parsed as they are again (protobuf would log its complaint
  // about the invalid UTF-8 twice).
  if (!refused && msg->ParseFromString(bytes)) return grpc::Status::OK;
  // Strings with invalid UTF-8 get the marker; anything else still fails as before.
  pb::UnknownFieldSet fields;
  if (!fields.ParseFromString(bytes)) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "the request could not be parsed");
  }
  const pb::Descriptor* d = msg->GetDescriptor();
  bool mended = false;
  for (int i = 0; i < fields.field_count(); ++i) {
    pb::UnknownField* f = fields.mutable_field(i);
    if (f->type() != pb::UnknownField::TYPE_LENGTH_DELIMITED) continue;
    const pb::FieldDescriptor* fd = d->FindFieldByNumber(f->number());
    if (fd == nullptr || fd->type() != pb::FieldDescriptor::TYPE_STRING) continue;
    if (!ValidUtf8(f->length_delimited())) {
      f->set_length_delimited(kInvalidUtf8Marker);
      mended = true;
    }
  }
  std::string fixed;
  if (!mended || !fields.SerializeToString(&fixed) || !msg->ParseFromString(fixed)) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "the request could not be parsed");
  }
  return grpc::Status::OK;
}

}  // namespace conclave::proto
