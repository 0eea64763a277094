#!/usr/bin/env bash
# README's first command: installs what is needed, builds, installs, starts conclaved and
# shows it working — status, a message round trip, and a dispatch to a worker terminal.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

bash deploy/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONCLAVE_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)"   # the binaries, their man pages and shell completions
$SUDO cmake --install build >/dev/null
echo "installed: $(command -v conclaved) $(command -v conclave)"

# (Re)start the daemon on the default XDG paths.
if conclave --json status >/tmp/conclave-status.json 2>/dev/null; then
  old=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' /tmp/conclave-status.json)
  echo "stopping the running conclaved (pid $old)"
  kill "$old" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
fi
state="${XDG_STATE_HOME:-$HOME/.local/state}/conclave"
mkdir -p "$state"
nohup conclaved >>"$state/conclaved.log" 2>&1 &
for _ in $(seq 100); do conclave status >/dev/null 2>&1 && break; sleep 0.1; done

echo; echo "== conclave status"; conclave status
echo; echo "== a message round trip"
conclave handle register demo-worker
seq=$(conclave --json send --to demo-worker --type question --subject "hello" --body "are you there?" \
      | sed -n 's/.*"seq":"\([0-9]*\)".*/\1/p')
conclave check --terminal demo-worker
conclave reply --id "$seq" --body "yes, here"
conclave check --terminal coordinator --types reply

echo; echo "== a dispatch to a worker terminal (the shell profile runs the brief)"
conclave terminal list | grep -q '^demo-shell ' || \
  conclave terminal create --profile shell --handle demo-shell --cwd "$PWD"
task=$(printf 'echo "hello from a supervised worker in $PWD"\nuname -sr\n' \
       | conclave --json task create --brief - --title "quickstart demo" --role stage \
       | sed -n 's/.*"id":"\([0-9]*\)".*/\1/p')
conclave dispatch --task "$task" --to demo-shell
conclave wait --task "$task" --types worker_done --from conclaved --timeout-ms 30000
conclave terminal read demo-shell
echo; echo "conclaved is running (log: $state/conclaved.log). Next: README.md."
