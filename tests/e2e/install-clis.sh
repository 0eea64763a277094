#!/usr/bin/env bash
# Install the real, unmodified model CLIs from the npm registry into CACHE_DIR.
#
#   tests/e2e/install-clis.sh CACHE_DIR
#
# Idempotent: when CACHE_DIR already holds exactly the pinned versions nothing is
# downloaded. On success prints the bin dir (CACHE_DIR/node_modules/.bin) on stdout
# and exits 0. Exits 77 with "SKIP: npm unreachable" on stderr only when npm itself
# cannot reach the registry; any other failure exits 1.
#
# Versions are pinned to releases that run on the machine's Node 20 (the newest
# claude-code and qwen-code declare engines.node >= 22). See tests/e2e/NOTES.md.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 CACHE_DIR" >&2
  exit 2
fi

PINS=(
  "@anthropic-ai/claude-code@2.1.197"   # last release with engines.node >= 18 (native binary)
  "@openai/codex@0.171.0"               # engines.node >= 16, native binary in optional dep
  "@qwen-code/qwen-code@0.15.10"        # last release with engines.node >= 20
  "opencode-ai@1.18.33"                 # native binary in optional dep
  "@google/gemini-cli@0.61.0"           # engines.node >= 20
  "@github/copilot@1.0.102"             # no engines field; native binary in optional dep
)

cache_dir=$1
mkdir -p "$cache_dir"
cache_dir=$(cd "$cache_dir" && pwd)
bin_dir="$cache_dir/node_modules/.bin"
stamp="$cache_dir/.conclave-pins"
# Parallel test processes share the cache: one installs, the others wait for it.
exec 9>"$cache_dir/.lock"
flock 9
want=$(printf '%s\n' "${PINS[@]%%[[:space:]]*}")

have_all() {
  [[ -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$want" ]] || return 1
  local b
  for b in claude codex qwen opencode gemini copilot; do
    [[ -x "$bin_dir/$b" ]] || return 1
  done
}

if have_all; then
  echo "$bin_dir"
  exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "install-clis: npm not found on PATH" >&2; exit 1; }

# Is the registry reachable at all? (the only condition that is a SKIP)
if ! timeout 60 npm ping >/dev/null 2>&1; then
  if ! timeout 60 npm view @openai/codex@0.171.0 version >/dev/null 2>&1; then
    echo "SKIP: npm unreachable (npm ping / npm view failed); cannot install the real CLIs" >&2
    exit 77
  fi
fi

# A private package.json keeps the cache self-contained and reproducible.
if [[ ! -f "$cache_dir/package.json" ]]; then
  printf '{"name":"conclave-e2e-clis","private":true,"version":"0.0.0"}\n' > "$cache_dir/package.json"
fi

export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
# --include=optional: the native binaries of claude/codex/opencode/copilot live in optional deps.
pkgs=()
for p in "${PINS[@]}"; do pkgs+=("${p%%[[:space:]]*}"); done
log="$cache_dir/install.log"
if ! (cd "$cache_dir" && npm install --no-save --include=optional --loglevel=error \
        --prefix "$cache_dir" "${pkgs[@]}") >"$log" 2>&1; then
  if grep -qiE 'ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|network' "$log"; then
    tail -n 20 "$log" >&2
    echo "SKIP: npm unreachable (install failed with a network error)" >&2
    exit 77
  fi
  tail -n 40 "$log" >&2
  echo "install-clis: npm install failed (see $log)" >&2
  exit 1
fi

for b in claude codex qwen opencode gemini copilot; do
  if [[ ! -x "$bin_dir/$b" ]]; then
    echo "install-clis: $b missing from $bin_dir after install" >&2
    exit 1
  fi
done
echo "$want" > "$stamp"
echo "$bin_dir"
