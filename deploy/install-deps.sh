#!/usr/bin/env bash
# Installs every Debian 12 package that building, testing and running Conclave needs.
# Idempotent; run as root (or through sudo). Safe to run again.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git ca-certificates
  protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libgrpc++-dev
  libboost-dev libboost-filesystem-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libsqlite3-dev sqlite3 catch2 libcli11-dev libsystemd-dev
  # the daemon's heap (common/heap.h)
  libmimalloc-dev
  procps iproute2
  # "sandbox": "bwrap" profiles run their workers under bubblewrap
  bubblewrap
  # health.proto / reflection.proto for the tests that call the standard gRPC services
  grpc-proto
  # man pages generated from --help; the .deb (cpack -G DEB: dpkg-shlibdeps needs file);
  # zsh and fish to check the generated completion scripts
  help2man dpkg-dev file zsh fish
  clang libclang-rt-14-dev
)
# Node.js and npm run the real model CLIs in the end-to-end tests, and configuring the build
# fetches SQLite's amalgamation with npm (deploy/fetch-sqlite.sh). A machine that already has
# them (e.g. from another repository) keeps its own; Debian's npm conflicts with those builds.
if ! command -v node >/dev/null 2>&1; then PACKAGES+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(npm); fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: run as root or install sudo" >&2; exit 1
  fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
