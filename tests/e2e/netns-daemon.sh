#!/usr/bin/env bash
# netns-daemon.sh STATE_PREFIX CONCLAVED [ARGS...]
# Runs inside a fresh network namespace (`unshare -n` as root, `unshare -rn` otherwise) whose
# only interface is loopback: starts the mock provider on 127.0.0.1, points every profile's
# base URL at it, gives each CLI a dummy key, then execs conclaved. Nothing started here can
# reach a real provider: there is no route off the machine.
set -euo pipefail
prefix=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
ip link set lo up 2>/dev/null || true
node "$here/mock_provider.js" 0 >"$prefix.mock.out" 2>"$prefix.mock.log" &
echo $! >"$prefix.mock.pid"
for _ in $(seq 400); do
  grep -q LISTENING "$prefix.mock.out" 2>/dev/null && break
  sleep 0.05
done
port=$(sed -n 's/^LISTENING //p' "$prefix.mock.out")
[ -n "$port" ] || { echo "netns-daemon: mock provider did not start" >&2; exit 1; }
echo "$port" >"$prefix.port"
base="http://127.0.0.1:$port"
export CONCLAVE_ANTHROPIC_BASE_URL=$base CONCLAVE_DEEPSEEK_BASE_URL=$base \
       CONCLAVE_GLM_BASE_URL=$base CONCLAVE_KIMI_BASE_URL=$base \
       CONCLAVE_OPENAI_BASE_URL=$base/v1 CONCLAVE_QWEN_BASE_URL=$base/v1 \
       CONCLAVE_OPENCODE_BASE_URL=$base/v1 CONCLAVE_GEMINI_BASE_URL=$base \
       CONCLAVE_COPILOT_BASE_URL=$base/v1
export ANTHROPIC_API_KEY=sk-mock-anthropic-000 DEEPSEEK_API_KEY=sk-mock-deepseek-000 \
       ZHIPU_API_KEY=sk-mock-zhipu-000 MOONSHOT_API_KEY=sk-mock-moonshot-000 \
       OPENAI_API_KEY=sk-mock-openai-000 DASHSCOPE_API_KEY=sk-mock-dashscope-000 \
       OPENCODE_PROVIDER_API_KEY=sk-mock-opencode-000 GEMINI_API_KEY=mock-gemini-000
export CONCLAVE_CLI_MAX_RETRIES=0 MOCK_RETRY_AFTER=1
# copilot unpacks ~240 MB into its cache on every start with an empty one: share one.
export CONCLAVE_COPILOT_CACHE=${CONCLAVE_COPILOT_CACHE:-${CONCLAVE_E2E_CACHE:-$HOME/.cache/conclave-e2e}/copilot-cache}
exec "$@"
