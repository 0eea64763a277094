#!/usr/bin/env bash
# Installs the Node example plugin's dependencies (examples/node-plugin/package.json, pinned
# versions) from the npm registry into CACHE_DIR, once.
#
#   tests/integration/install-node-plugin-deps.sh PACKAGE_JSON CACHE_DIR
#
# Idempotent: when CACHE_DIR already holds the dependencies of exactly this package.json,
# nothing is downloaded. On success prints CACHE_DIR/node_modules (for NODE_PATH) and exits 0.
# Exits 77 with "SKIP: ..." on stderr only when npm cannot reach its registry (or there is no
# node/npm); any other failure exits 1.
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 PACKAGE_JSON CACHE_DIR" >&2
  exit 2
fi
package_json=$1
cache_dir=$2
command -v node >/dev/null 2>&1 || { echo "SKIP: node is not installed" >&2; exit 77; }
command -v npm >/dev/null 2>&1 || { echo "SKIP: npm is not installed" >&2; exit 77; }
mkdir -p "$cache_dir"
cache_dir=$(cd "$cache_dir" && pwd)
# Parallel test processes share the cache: one installs, the others wait for it.
exec 9>"$cache_dir/.lock"
flock 9
want=$(sha256sum "$package_json" | cut -d' ' -f1)
stamp="$cache_dir/.conclave-package-sha256"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -d "$cache_dir/node_modules/@grpc/grpc-js" \
      && -d "$cache_dir/node_modules/@grpc/proto-loader" ]]; then
  echo "$cache_dir/node_modules"
  exit 0
fi
if ! timeout 60 npm ping >/dev/null 2>&1; then
  if ! timeout 60 npm view @grpc/grpc-js version >/dev/null 2>&1; then
    echo "SKIP: npm unreachable (npm ping / npm view failed); cannot install @grpc/grpc-js" >&2
    exit 77
  fi
fi
cp "$package_json" "$cache_dir/package.json"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
log="$cache_dir/install.log"
if ! (cd "$cache_dir" && npm install --no-package-lock --omit=dev --loglevel=error) >"$log" 2>&1; then
  if grep -qiE 'ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|network' "$log"; then
    tail -n 20 "$log" >&2
    echo "SKIP: npm unreachable (install failed with a network error)" >&2
    exit 77
  fi
  tail -n 40 "$log" >&2
  echo "install-node-plugin-deps: npm install failed (see $log)" >&2
  exit 1
fi
echo "$want" > "$stamp"
echo "$cache_dir/node_modules"
