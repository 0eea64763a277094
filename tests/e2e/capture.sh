#!/usr/bin/env bash
# Runs one profile's real CLI against the mock provider inside a loopback-only network
# namespace and keeps what it printed — how the fixtures under fixtures/<cli>/ were made.
#
#   tests/e2e/capture.sh OUT_DIR PROFILE_JSON BRIEF_TEXT|@BRIEF_FILE [run_profile.js options...]
#
# PATH must hold the CLIs (BIN=$(tests/e2e/install-clis.sh ~/.cache/conclave-e2e)).
# Mock variables (MOCK_STREAM_SECONDS, MOCK_RETRY_AFTER ...) pass through; CAPTURE_REFUSED=1
# points the CLI at a closed port instead of the mock. Leaves
# OUT_DIR/{stdout,stderr}.txt, argv.json, lines.json, mock.log and prints run_profile's
# summary line. Never reaches a real provider: the namespace has only `lo`.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 OUT_DIR PROFILE_JSON BRIEF_TEXT [run_profile options]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
out=$1 profile=$2 brief=$3
shift 3
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ "${CAPTURE_IN_NETNS:-}" != 1 ]]; then
  if [[ "$brief" == @* ]]; then cp "${brief#@}" "$out/brief.in"; else printf '%s\n' "$brief" >"$out/brief.in"; fi
  brief=@$out/brief.in
  ns=-n
  [[ $(id -u) == 0 ]] || ns=-rn
  exec unshare $ns env CAPTURE_IN_NETNS=1 "$0" "$out" "$profile" "$brief" "$@"
fi
# From here on: inside the namespace. netns-daemon.sh starts the mock and exports the
# base URLs and dummy keys, then execs run_profile.js.
# CAPTURE_REFUSED=1 points every base URL at a closed port (a refused connection).
pre=()
if [[ "${CAPTURE_REFUSED:-}" == 1 ]]; then
  dead=http://127.0.0.1:9
  pre=(env CONCLAVE_ANTHROPIC_BASE_URL=$dead CONCLAVE_DEEPSEEK_BASE_URL=$dead
       CONCLAVE_GLM_BASE_URL=$dead CONCLAVE_KIMI_BASE_URL=$dead CONCLAVE_GEMINI_BASE_URL=$dead
       CONCLAVE_OPENAI_BASE_URL=$dead/v1 CONCLAVE_QWEN_BASE_URL=$dead/v1
       CONCLAVE_OPENCODE_BASE_URL=$dead/v1 CONCLAVE_COPILOT_BASE_URL=$dead/v1)
fi
set +e
bash "$here/netns-daemon.sh" "$out/x" "${pre[@]}" node "$here/run_profile.js" \
  --profile "$profile" --brief "$out/brief.in" --out "$out" "$@"
rc=$?
kill "$(cat "$out/x.mock.pid")" 2>/dev/null
mv "$out/x.mock.log" "$out/mock.log" 2>/dev/null
rm -f "$out/x.mock.out" "$out/x.mock.pid" "$out/x.port"
exit $rc
