#!/usr/bin/env bash
# Builds everything and runs every test (unit + integration, and the end-to-end tests with the
# real model CLIs where npm can reach its registry). This is README's second command and what
# .ci/run calls. Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1; then
  bash deploy/install-deps.sh
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONCLAVE_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)"
cd build
ctest --output-on-failure -j2 --timeout 600
