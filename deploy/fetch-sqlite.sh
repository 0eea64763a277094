#!/usr/bin/env bash
# Puts SQLite's amalgamation (sqlite3.c, sqlite3.h) of the version conclaved is built with into
# DEST, for CMake (cmake/BundledSqlite.cmake runs this at every configure: it returns at once when
# DEST holds the files it pins, and fetches them only otherwise).
#
# Debian 12's libsqlite3 (3.40.1) is built without lookaside, the per-connection pool that serves
# a statement's small blocks, and with the memory statistics' mutex: every value a statement
# copies is a malloc. conclaved builds SQLite itself instead (README, Architecture). The
# amalgamation comes from the npm registry, the one source besides Debian's this project may
# reach: the better-sqlite3 package carries SQLite's own amalgamation unchanged in
# deps/sqlite3/. Both files are checked against the hashes below before they are used, so a
# different download fails here instead of building.
#
# Usage: fetch-sqlite.sh DEST [VERSION]   (VERSION: what the caller expects; exits non-zero,
# saying why, when it cannot)
set -euo pipefail

PACKAGE="better-sqlite3@12.11.1"
VERSION="3.53.2"
SQLITE3_C_SHA256="60d2f39a3726cd6b9021da6f4e868608d66fbb6528a9f513dc8ffcc640493422"
SQLITE3_H_SHA256="9e69a1353a4288450b0d5239ede11fc7f1f4c8e5eb07491fc8317eacb5b7de7e"

dest="${1:?usage: fetch-sqlite.sh DEST [VERSION]}"
if [ -n "${2:-}" ] && [ "$2" != "$VERSION" ]; then
  echo "fetch-sqlite: asked for SQLite $2, but this script pins $VERSION" >&2
  exit 1
fi
ok() {
  [ -f "$1/sqlite3.c" ] && [ -f "$1/sqlite3.h" ] &&
    echo "$SQLITE3_C_SHA256  $1/sqlite3.c" | sha256sum --check --status &&
    echo "$SQLITE3_H_SHA256  $1/sqlite3.h" | sha256sum --check --status
}
if ok "$dest"; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "fetch-sqlite: npm is not installed (bash deploy/install-deps.sh installs it)" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if ! (cd "$work" && npm pack --silent --pack-destination "$work" "$PACKAGE" >pack.log 2>&1); then
  echo "fetch-sqlite: npm pack $PACKAGE failed (is the npm registry reachable?):" >&2
  cat "$work/pack.log" >&2
  exit 1
fi
tarballs=("$work"/*.tgz)
if [ ! -f "${tarballs[0]}" ]; then
  echo "fetch-sqlite: npm pack $PACKAGE left no tarball in $work" >&2
  exit 1
fi
if ! tar -xzf "${tarballs[0]}" -C "$work" package/deps/sqlite3/sqlite3.c \
    package/deps/sqlite3/sqlite3.h 2>"$work/tar.log"; then
  echo "fetch-sqlite: $PACKAGE has no deps/sqlite3/sqlite3.{c,h}:" >&2
  cat "$work/tar.log" >&2
  exit 1
fi
if ! ok "$work/package/deps/sqlite3"; then
  echo "fetch-sqlite: $PACKAGE's sqlite3.c or sqlite3.h is not SQLite $VERSION's as pinned here" \
    "(sha256 differs); refusing to build with it" >&2
  exit 1
fi
mkdir -p "$dest"
cp "$work/package/deps/sqlite3/sqlite3.c" "$work/package/deps/sqlite3/sqlite3.h" "$dest/"
echo "fetch-sqlite: SQLite $VERSION's amalgamation from $PACKAGE in $dest"
