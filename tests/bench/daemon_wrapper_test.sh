#!/bin/bash
# Test of the bench harness: `bench --daemon PATH` through a wrapper that starts conclaved
# without exec (a shell script), as one measuring another build or a daemon under a tool
# would write. The bench must measure and stop the process that answers, not the wrapper:
# every pid it says it measures is one the wrapper started, the reads section's restart (stop,
# then start on the same state directory) succeeds, and no started conclaved outlives the run.
# Two wrappers: one waits for conclaved and exits with its status, one leaves it running and
# exits at once. The soak's `--daemon` shares that harness: its SIGKILLs must reach the
# conclaved that answers, or the next start finds the state directory locked. And a bench that
# gives up half-way stops what it started.
#   daemon_wrapper_test.sh BENCH CONCLAVED SOAK
set -euo pipefail
bench=$1
conclaved=$2
soak=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cvb-wrapper-test-XXXXXX")
group=""
# Each run is a job of its own (its own process group), so whatever a failed run leaves
# behind — the bench's ping server, a wrapper, a conclaved — is killed with the group.
set -m
kill_group() {
  if [ -n "$group" ]; then kill -KILL -- "-$group" 2>/dev/null || true; fi
}
trap 'kill_group; rm -rf "$tmp"' EXIT

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

# Runs "$@" as a job of its own; its exit status in $status, its group in $group.
run() {
  status=0
  "$@" &
  group=$!
  wait "$group" || status=$?
}

# Fails if a conclaved the wrapper started still runs (a zombie is not running: a
# container's pid 1 may not reap). Checks every one, and only processes still running
# that conclaved binary.
none_left() {
  local pid state left=""
  for pid in "${started[@]}"; do
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || continue
    [ "$state" != Z ] || continue
    tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | head -1 | grep -qxF "$conclaved" || continue
    left="$left $pid"
  done
  [ -z "$left" ] || fail "$1: conclaved$left outlived the run"
}

for shape in waits leaves; do
  : >"$tmp/started"
  run "$bench" --only reads,park --messages 2000 --idle-s 1 --reps 1 --daemon "$tmp/$shape.sh" \
    >"$tmp/out" 2>"$tmp/err"
  mapfile -t started <"$tmp/started"
  if [ "$status" != 0 ]; then
    cat "$tmp/err" >&2
    none_left "$shape"
    fail "$shape: bench exited $status"
  fi
  none_left "$shape"
  # The main daemon and the reads section's restarted one at least.
  [ "${#started[@]}" -ge 2 ] || fail "$shape: ${#started[@]} conclaved started: no restart ran"
  mapfile -t measured < <(sed -n 's/^bench: conclaved pid \([0-9]*\) serves .*/\1/p' "$tmp/err")
  [ "${#measured[@]}" = "${#started[@]}" ] ||
    fail "$shape: ${#started[@]} started, the bench named ${#measured[@]}: $(cat "$tmp/err")"
  for i in "${!started[@]}"; do
    [ "${measured[$i]}" = "${started[$i]}" ] ||
      fail "$shape, start $((i + 1)): measured pid ${measured[$i]}, conclaved was ${started[$i]}"
  done
  grep -q "started through pid" "$tmp/err" || fail "$shape: the bench did not name the wrapper"
  echo "ok: bench through a wrapper that $shape: ${#started[@]} conclaved, measured and stopped"
done

# A bench that gives up (std::exit from a section: here the load section cannot run git) must
# not leave the processes it started: its ping server and conclaved are killed on the way out.
# The bench names its temporary root in its first line; nothing may still run with it in its
# arguments (zombies aside).
run env PATH=/nonexistent "$bench" --only load --reps 1 >"$tmp/out" 2>"$tmp/err"
[ "$status" = 1 ] || fail "a bench without git exited $status, not 1: $(cat "$tmp/err")"
grep -q "cannot make a git repository" "$tmp/err" || fail "the load section did not give up: $(cat "$tmp/err")"
root=$(sed -n 's|^bench: conclaved pid [0-9]* serves \(.*\)/main/d.sock$|\1|p' "$tmp/err")
[ -n "$root" ] || fail "the bench named no conclaved: $(cat "$tmp/err")"
left=""
for d in /proc/[0-9]*; do
  [ "$(awk '{print $3}' "$d/stat" 2>/dev/null)" != Z ] || continue
  tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF "$root/" && left="$left ${d#/proc/}"
done
[ -z "$left" ] || fail "a bench that gave up left pids$left running with $root"
echo "ok: a bench that gives up stops its ping server and conclaved"

# Two SIGKILLs at random moments, a restart after each, a SIGTERM at the end (exit 0 expected,
# which the waiting wrapper passes on). The soak names each conclaved it adopted.
: >"$tmp/started"
run "$soak" --kills 2 --final-s 1 --daemon "$tmp/waits.sh" >"$tmp/soak.out" 2>&1
mapfile -t started <"$tmp/started"
none_left soak
[ "$status" = 0 ] || fail "the soak through the wrapper failed: $(tail -20 "$tmp/soak.out")"
[ "${#started[@]}" = 3 ] || fail "the soak started ${#started[@]} conclaved, not 3"
mapfile -t adopted < <(sed -n 's/^soak: conclaved pid \([0-9]*\) serves .*/\1/p' "$tmp/soak.out")
[ "${adopted[*]}" = "${started[*]}" ] ||
  fail "the soak adopted pids ${adopted[*]}, the wrapper started ${started[*]}"
echo "ok: soak through a wrapper: 3 conclaved, two killed and one stopped"
