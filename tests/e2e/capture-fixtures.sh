#!/usr/bin/env bash
# Re-captures the parser fixtures of one CLI from the real CLI against the mock provider:
#
#   BIN=$(tests/e2e/install-clis.sh ~/.cache/conclave-e2e)
#   PATH=$BIN:$PATH tests/e2e/capture-fixtures.sh PROFILE [CASE...]
#
# PROFILE is a shipped profile name (claude, deepseek-flash, codex, qwen, gemini, opencode,
# copilot); the fixtures go to tests/e2e/fixtures/<cli>/<format>/ (see FORMAT below) with
# meta.json recording each case's exit status and argv. Each case is one capture.sh run in
# its own loopback-only namespace. Scratch output stays in ${CAPTURE_TMP:-/tmp/conclave-capture}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
profile=${1:?usage: $0 PROFILE [CASE...]}
shift
pjson=$root/profiles/$profile.json
[[ -f $pjson ]] || { echo "no profile $pjson" >&2; exit 2; }
parser=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).parser)' "$pjson")
cli=${parser%%-*}
format=${parser#*-}
dest=$here/fixtures/$cli/$format
prefix=""  # a profile that shares its CLI's fixtures (deepseek-flash) names its cases apart
[[ $profile != "$cli" ]] && prefix="$profile-"
tmp=${CAPTURE_TMP:-/tmp/conclave-capture}/$profile
schema=$here/fixtures/findings_schema.json

cases=("$@")
if [[ ${#cases[@]} -eq 0 ]]; then
  cases=(success slowstream tool tool_words killed_tool http500 http429 http401 refused findings readonly)
  [[ $cli == claude ]] && cases+=(budget)
fi

words="echo 'curl: (7) Failed to connect to 127.0.0.1 port 9: Connection refused'; echo 'HTTP/1.1 401 Unauthorized'"
for c in "${cases[@]}"; do
  args=() env=() brief="Do it. MOCK:contract" note=""
  case $c in
    success) ;;
    slowstream) brief="Do it slowly. MOCK:slowstream_6"; note="the mock streams the answer over 6 s" ;;
    tool) brief="Run it. MOCK:tool_worker_done CMD: echo TOOL_RAN" ;;
    tool_words) brief="Run the tests. MOCK:tool_worker_done CMD: $words"
                note="success whose tool output and final text say 'Connection refused' and '401'" ;;
    killed_tool) brief="Run the tests. MOCK:tool_then_slow CMD: $words"
                 env=(MOCK_SLOW_MS=600000) args=(--timeout-s 30 --kill-signal SIGKILL)
                 note="SIGKILL to the group after 30 s, the tool done, the answer still pending (output cut)" ;;
    sigterm_tool) brief="Run the tests. MOCK:tool_worker_done CMD: $words; exec tail -f /dev/null"
                  args=(--timeout-s 25); note="SIGTERM to the group after 25 s while the tool hangs" ;;
    http500|http429|http401) brief="Do it. MOCK:$c" ;;
    refused) env=(CAPTURE_REFUSED=1); note="base URL points at a closed port"
             [[ $cli == codex ]] && args=(--timeout-s 30) && note="$note; codex never exits: SIGTERM after 30 s" ;;
    findings) brief="Review this diff. MOCK:findings"; args=(--review --schema "$schema")
              note="reviewer: readonly_args and schema_args (if the profile has them)" ;;
    readonly) brief="Run it. MOCK:tool_worker_done CMD: touch WROTE; echo TOOL_RAN"; args=(--readonly)
              note="readonly_args: the write must not happen" ;;
    budget) args=(--budget 0.001); note="--max-budget-usd 0.001" ;;
    *) echo "unknown case $c" >&2; exit 2 ;;
  esac
  rm -rf "$tmp/$c"
  env "${env[@]}" "$here/capture.sh" "$tmp/$c" "$pjson" "$brief" "${args[@]}" >/dev/null || true
  if [[ $c == readonly ]]; then
    if compgen -G "$tmp/$c/cwd.*/WROTE" >/dev/null; then note="$note — WROTE EXISTS: not read-only"
    else note="$note — verified: no file written"; fi
  fi
  "$here/trim_fixture.py" "$tmp/$c" "$dest" "$prefix$c" --note "$note"
done
