#!/usr/bin/env bash
# Builds everything and runs every test. This is README's second command and what .ci/run
# calls. Exits non-zero when anything fails. Three stages, each printing its wall time:
#   a. the normal build (build/) and every ctest test: unit, integration, and the end-to-end
#      tests with the real model CLIs where npm can reach its registry;
#   b. the clang ASan+UBSan tree (build-asan/, -DCONCLAVE_SANITIZE=address,undefined) and
#      the unit and integration tests under it (no e2e): any sanitizer report fails a test;
#   c. each libFuzzer target (built in build-asan/) for FUZZ_SECONDS (default 10) on its
#      committed corpus in tests/fuzz/corpus/: a crash, leak or UB report fails the run.
# CONCLAVE_TEST_STAGES=a,b,c picks stages (default all).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1; then
  bash deploy/install-deps.sh
fi
STAGES="${CONCLAVE_TEST_STAGES:-a,b,c}"
JOBS="$(nproc)"
START=$SECONDS
stage_start=0
begin() { stage_start=$SECONDS; echo "=== stage $1: $2"; }
end() { echo "=== stage $1 took $((SECONDS - stage_start)) s (total $((SECONDS - START)) s)"; }

if [[ ",$STAGES," == *",a,"* ]]; then
  begin a "build and all tests"
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONCLAVE_BUILD_TESTS=ON >/dev/null
  cmake --build build -j"$JOBS"
  (cd build && ctest --output-on-failure -j2 --timeout 600)
  end a
fi

if [[ ",$STAGES," == *",b,"* || ",$STAGES," == *",c,"* ]]; then
  begin b "ASan+UBSan build, unit and integration tests"
  # -O1 and line tables only: a quicker build whose reports still name file:line.
  cmake -S . -B build-asan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCONCLAVE_BUILD_TESTS=ON \
    -DCONCLAVE_SANITIZE=address,undefined -DCONCLAVE_FUZZ=ON >/dev/null
  targets=()
  [[ ",$STAGES," == *",b,"* ]] && targets+=(unit_tests integration_tests)
  [[ ",$STAGES," == *",c,"* ]] && targets+=(fuzzers)
  cmake --build build-asan -j"$JOBS" --target "${targets[@]}"
  if [[ ",$STAGES," == *",b,"* ]]; then
    # LSAN_OPTIONS (the suppressions) is set per test by tests/CMakeLists.txt.
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --output-on-failure -j2 --timeout 900 -R '^(unit|integration):')
  fi
  end b
fi

if [[ ",$STAGES," == *",c,"* ]]; then
  begin c "fuzz targets, ${FUZZ_SECONDS:-10} s each on the committed corpus"
  BUILD_DIR="$PWD/build-asan" bash tests/fuzz/run.sh --no-ledger "${FUZZ_SECONDS:-10}"
  end c
fi
echo "=== all stages passed in $((SECONDS - START)) s"
