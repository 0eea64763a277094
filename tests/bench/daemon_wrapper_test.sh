#!/bin/bash
# Test of the bench harness: `bench --daemon PATH` through a wrapper that starts conclaved
# without exec (a shell script), as one measuring another build or a daemon under a tool
# would write. The bench must measure and stop the process that answers, not the wrapper:
# every pid it says it measures is one the wrapper started, the reads section's restart (stop,
# then start on the same state directory) succeeds, and no started conclaved outlives the run.
# Two wrappers: one waits for conclaved and exits with its status, one leaves it running and
# exits at once. The soak's `--daemon` shares that harness: its SIGKILLs must reach the
# conclaved that answers, or the next start finds the state directory locked.
#   daemon_wrapper_test.sh BENCH CONCLAVED SOAK
set -euo pipefail
bench=$1
conclaved=$2
soak=$3
tmp=$(mktemp -d /tmp/cvb-wrapper-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Each wrapper records every conclaved it starts.
cat >"$tmp/waits.sh" <<EOF
#!/bin/sh
"$conclaved" "\$@" &
echo \$! >>"$tmp/started"
wait \$!
EOF
cat >"$tmp/leaves.sh" <<EOF
#!/bin/sh
"$conclaved" "\$@" >/dev/null 2>&1 &
echo \$! >>"$tmp/started"
EOF
chmod +x "$tmp/waits.sh" "$tmp/leaves.sh"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# A process counts as running unless it is gone or a zombie (a container's pid 1 may not reap).
running() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# Fails if a conclaved the wrapper started is still running (and kills it).
none_left() {
  local pid
  for pid in "${started[@]}"; do
    if running "$pid"; then
      kill -KILL "$pid" 2>/dev/null || true
      fail "$1: conclaved $pid outlived the run"
    fi
  done
}

for shape in waits leaves; do
  : >"$tmp/started"
  status=0
  "$bench" --only reads,park --messages 2000 --idle-s 1 --reps 1 --daemon "$tmp/$shape.sh" \
    >"$tmp/out" 2>"$tmp/err" || status=$?
  [ -s "$tmp/started" ] || fail "$shape: the wrapper started no conclaved"
  mapfile -t started <"$tmp/started"
  [ "$status" = 0 ] || { cat "$tmp/err" >&2; none_left "$shape"; fail "$shape: bench exited $status"; }
  # The main daemon and the reads section's restarted one at least.
  [ "${#started[@]}" -ge 2 ] || fail "$shape: only ${#started[@]} conclaved started: no restart"
  mapfile -t measured < <(sed -n 's/^bench: conclaved pid \([0-9]*\) serves .*/\1/p' "$tmp/err")
  [ "${#measured[@]}" = "${#started[@]}" ] ||
    fail "$shape: ${#started[@]} conclaved started, the bench named ${#measured[@]}: $(cat "$tmp/err")"
  for i in "${!started[@]}"; do
    [ "${measured[$i]}" = "${started[$i]}" ] ||
      fail "$shape, start $((i + 1)): the bench measured pid ${measured[$i]}, conclaved was ${started[$i]}"
  done
  grep -q "started through pid" "$tmp/err" || fail "$shape: the bench did not name the wrapper"
  none_left "$shape"
  # The rows the wrapper's pid would have made meaningless are there (the served daemon's RSS).
  grep -q "10k parked Waits: daemon RSS" "$tmp/out" || fail "$shape: no RSS row: $(cat "$tmp/out")"
  echo "ok: bench through a wrapper that $shape: ${#started[@]} conclaved, each measured and stopped"
done

# Two SIGKILLs at random moments, a restart after each, a SIGTERM at the end (exit 0 expected,
# which the waiting wrapper passes on).
: >"$tmp/started"
status=0
"$soak" --kills 2 --final-s 1 --daemon "$tmp/waits.sh" >"$tmp/soak.out" 2>&1 || status=$?
mapfile -t started <"$tmp/started"
[ "$status" = 0 ] || { none_left soak; fail "soak through the wrapper: $(tail -20 "$tmp/soak.out")"; }
[ "${#started[@]}" = 3 ] || fail "the soak started ${#started[@]} conclaved, not 3"
none_left soak
echo "ok: soak through a wrapper: 3 conclaved, two killed and one stopped"
