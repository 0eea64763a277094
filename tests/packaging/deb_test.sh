#!/usr/bin/env bash
# Builds the Debian package with CPack, unpacks it into a scratch root with `dpkg -x`, and
# checks that it holds everything under the configured prefix: binaries, profiles, templates,
# migrations, the proto, man pages, shell completions and the systemd user unit, whose
# ExecStart must be the installed conclaved.
#
#   tests/packaging/deb_test.sh BUILD_DIR SOURCE_DIR PREFIX BINDIR DATADIR MANDIR
#
# Exits 0 when every check passes, 1 on the first failure, 77 (SKIP) only when cpack or
# dpkg-deb is not installed.
set -euo pipefail
build=$1 src=$2 prefix=$3 bindir=$4 datadir=$5 mandir=$6

for tool in cpack dpkg-deb dpkg gzip readelf; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed" >&2; exit 77; }
done
tmp=$(mktemp -d /tmp/cvdebXXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "deb_test: FAIL: $*" >&2; exit 1; }

# cpack builds what is missing (its preinstall step), installs into a staging dir, packages.
if ! (cd "$build" && cpack -G DEB -B "$tmp/out") >"$tmp/cpack.log" 2>&1; then
  tail -n 40 "$tmp/cpack.log" >&2
  fail "cpack -G DEB failed"
fi
debs=("$tmp"/out/*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "expected one .deb in $tmp/out, got: ${debs[*]}"
deb=${debs[0]}
echo "built $(basename "$deb") ($(du -h "$deb" | cut -f1))"

[[ $(dpkg-deb -f "$deb" Package) == conclave ]] || fail "package name"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
[[ $depends == *libgrpc++* ]] ||
  fail "Depends lacks the shared libraries (dpkg-shlibdeps): $depends"

root=$tmp/root
dpkg -x "$deb" "$root"
# Nothing outside the prefix.
outside=$(cd "$root" && find . -type f | sed 's|^\.||' | grep -v "^$prefix/" || true)
[[ -z $outside ]] || fail "files outside $prefix: $outside"

must_exist() { [[ -e $root$1 ]] || fail "missing $1"; }
for b in conclaved conclave; do
  [[ -x $root$bindir/$b ]] || fail "$bindir/$b is not an executable in the package"
done
# The heap the daemon links (mimalloc, not part of libc) is a dependency: missing from Depends,
# the package would install cleanly and fail at the first start.
needed=$(readelf -d "$root$bindir/conclaved" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[[ -n $needed ]] || fail "readelf lists no libraries for conclaved"
if grep -q '^libmimalloc' <<<"$needed"; then
  [[ $depends == *libmimalloc* ]] || fail "conclaved links mimalloc, Depends lacks it: $depends"
fi
# So is the system's SQLite where it is linked (-DCONCLAVE_BUNDLED_SQLITE=OFF); the bundled one
# is inside the binary.
if grep -q '^libsqlite3' <<<"$needed"; then
  [[ $depends == *libsqlite3* ]] || fail "conclaved links libsqlite3, Depends lacks it: $depends"
fi
for f in "$src"/profiles/*.json "$src"/profiles/templates/*; do
  must_exist "$datadir/conclave/profiles/${f#"$src"/profiles/}"
done
for f in "$src"/migrations/*.sql; do must_exist "$datadir/conclave/migrations/$(basename "$f")"; done
cmp -s "$src/proto/conclave/v1/conclave.proto" "$root$datadir/conclave/proto/conclave/v1/conclave.proto" ||
  fail "the installed proto differs from proto/conclave/v1/conclave.proto"
for page in man1/conclave.1.gz man8/conclaved.8.gz; do
  must_exist "$mandir/$page"
  gzip -t "$root$mandir/$page" || fail "$page is not gzip"
  zcat "$root$mandir/$page" | grep -q '^\.TH' || fail "$page is not a man page"
done
zcat "$root$mandir/man1/conclave.1.gz" | grep -q 'terminal read' || fail "conclave(1) lacks the subcommands"
must_exist "$datadir/bash-completion/completions/conclave"
must_exist "$datadir/zsh/site-functions/_conclave"
must_exist "$datadir/fish/vendor_completions.d/conclave.fish"
bash -n "$root$datadir/bash-completion/completions/conclave" || fail "bash completion does not parse"
must_exist "$datadir/doc/conclave/README.md"
must_exist "$datadir/doc/conclave/examples/node-plugin/plugin.js"

unit=$root$prefix/lib/systemd/user/conclaved.service
[[ -f $unit ]] || fail "missing $prefix/lib/systemd/user/conclaved.service"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
[[ $exec_start == "$bindir/conclaved" ]] || fail "ExecStart=$exec_start, want $bindir/conclaved"
[[ -x $root$exec_start ]] || fail "ExecStart $exec_start is not the packaged binary"
grep -q '@' "$unit" && fail "unsubstituted @VAR@ in the unit"

# The packaged binaries run, and the daemon looks for profiles where the package put them.
"$root$bindir/conclaved" --version | grep -q '^conclaved .* (commit ' || fail "conclaved --version"
"$root$bindir/conclave" --version | grep -q '^conclave .* (commit ' || fail "conclave --version"
grep -aq "$datadir/conclave/profiles" "$root$bindir/conclaved" ||
  fail "conclaved's built-in profile directory is not $datadir/conclave/profiles"
echo "deb_test: OK ($(dpkg-deb -c "$deb" | wc -l) entries)"
