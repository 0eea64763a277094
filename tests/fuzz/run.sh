#!/usr/bin/env bash
# Runs each libFuzzer target for a fixed time on its committed corpus and records the
# executions in tests/fuzz/executions.tsv (target, date, execs, result), so totals accumulate
# across runs. README "How we test failure" quotes that ledger.
#
#   tests/fuzz/run.sh [--merge] [--no-ledger] [seconds] [target ...]
#
# seconds   per target (default 10); targets default to all of them, one after the other.
# --merge   fold the inputs this run found into tests/fuzz/corpus/<target>/, re-minimised
#           with -merge=1 (by hand, then commit the corpus and the ledger).
# --no-ledger  do not append to the ledger (CI: its clone is thrown away).
# BUILD_DIR the build tree configured with -DCONCLAVE_FUZZ=ON (default build-asan).
# Exits non-zero when any target crashed, leaked, hit UB or timed out; the input that did it
# is kept in $SCRATCH/<target>/ (default /tmp/conclave-fuzz) and the log's tail is printed.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-asan}"
SCRATCH="${SCRATCH:-/tmp/conclave-fuzz}"
LEDGER="$HERE/executions.tsv"
ALL=(worker_contract findings cli_text cli_claude_json cli_claude_stream_json cli_codex_jsonl
     cli_qwen_json cli_qwen_stream_json cli_opencode_jsonl cli_gemini_json cli_gemini_stream_json
     cli_copilot_jsonl retry_after brief_renderer message utf8 profile config fingerprint redactor)

merge=0 ledger=1 seconds=10 targets=()
for a in "$@"; do
  case "$a" in
    --merge) merge=1 ;;
    --no-ledger) ledger=0 ;;
    ''|*[!0-9]*) targets+=("$a") ;;
    *) seconds="$a" ;;
  esac
done
[ "${#targets[@]}" -gt 0 ] || targets=("${ALL[@]}")
[ -f "$LEDGER" ] || printf 'target\tdate\texecs\tresult\n' >"$LEDGER"

# LSan: gRPC/protobuf are not linked into the fuzzers; nothing to suppress.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

failed=0
for t in "${targets[@]}"; do
  bin="$BUILD_DIR/tests/fuzz/fuzz_$t"
  corpus="$HERE/corpus/$t"
  [ -x "$bin" ] || { echo "fuzz: $bin not built (cmake --build $BUILD_DIR --target fuzzers)" >&2; exit 2; }
  mkdir -p "$corpus"
  work="$SCRATCH/$t"
  rm -rf "$work/new" && mkdir -p "$work/new"
  log="$work/run.log"
  set +e
  # New inputs go to $work/new (the first corpus directory); the committed one is only read.
  nice -n 19 "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/" "$work/new" "$corpus" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [ -n "$execs" ] || execs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
  [ -n "$execs" ] || execs=0
  result=ok
  if [ "$rc" -ne 0 ]; then
    failed=1
    if grep -q 'ERROR: LeakSanitizer' "$log"; then result=leak
    elif grep -q 'runtime error:' "$log"; then result=ub
    elif grep -q 'ERROR: AddressSanitizer' "$log"; then result=asan
    elif grep -q 'ERROR: libFuzzer: timeout' "$log"; then result=timeout
    elif grep -q 'out-of-memory' "$log"; then result=oom
    else result=crash
    fi
  fi
  printf 'fuzz %-20s %10s execs in %ss  %s\n' "$t" "$execs" "$seconds" "$result"
  if [ "$result" != ok ]; then
    grep -E 'ERROR|runtime error|property failed|#[0-9]+ 0x|Test unit written' "$log" | head -30 >&2
  fi
  [ "$ledger" -eq 1 ] && printf '%s\t%s\t%s\t%s\n' "$t" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$execs" "$result" >>"$LEDGER"
  if [ "$merge" -eq 1 ] && [ -n "$(ls -A "$work/new")" ]; then
    rm -rf "$work/merged" && mkdir -p "$work/merged"
    # Edges only (no hit counts): keeps the corpus to a few hundred files.
    nice -n 19 "$bin" -merge=1 -use_counters=0 -timeout=10 "$work/merged" "$corpus" "$work/new" \
      >"$work/merge.log" 2>&1 && [ -n "$(ls -A "$work/merged")" ] &&
      rm -rf "$corpus" && mv "$work/merged" "$corpus"
    echo "fuzz $t corpus: $(ls "$corpus" | wc -l) files, $(du -sk "$corpus" | cut -f1) KiB"
  fi
done
if [ "$ledger" -eq 1 ]; then
  echo "accumulated executions (tests/fuzz/executions.tsv):"
  awk -F'\t' 'NR > 1 { n[$1] += $3; if ($4 != "ok") bad[$1]++ }
    END { for (t in n) printf "  %-20s %12d  %d finding(s)\n", t, n[t], bad[t] }' "$LEDGER" | sort
fi
exit "$failed"
