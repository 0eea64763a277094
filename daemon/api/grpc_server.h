// Listener set-up for the gRPC server: a unix socket in a 0700 directory with mode 0600
// (a stale socket left by a crashed daemon is replaced; a live one or a non-socket file at the
// path is refused), or a loopback TCP port guarded by a bearer token.
#pragma once

#include <grpcpp/server.h>

#include <memory>
#include <string>

#include "api/conclave_service.h"
#include "common/status.h"

namespace conclave::api {

// Prepares a unix socket path for bind: creates the parent directory (0700) when missing and
// removes a stale socket. Errors name the path and what is wrong.
Status PrepareUnixSocket(const std::string& path);

StatusOr<std::unique_ptr<grpc::Server>> StartServer(const std::string& listen,
                                                    ConclaveService& service);

}  // namespace conclave::api
