#!/usr/bin/env bash
# tests/style/test_graph.sh: scripts/graph.py --check (in make style, make unit and make test) passes on
# src/ as built in BUILD_DIR, and fails on a small tree of its own with one planted import circle (two
# files calling each other), then one planted arrow back up (a file implementing part of another's
# header), each compiled here. Prints "graph: N passed, N failed"; exits non-zero if a case failed.
#   tests/style/test_graph.sh BUILD_DIR
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
ko() { failed=$((failed + 1)); echo "FAIL $1"; sed 's/^/     /' <<<"$2"; }

if out=$(python3 scripts/graph.py --build "$B" --check 2>&1); then
	ok "src/ as built in $B: $(head -n 1 <<<"$out" | sed 's/^graph: //'), no circle, no arrow back up"
else
	ko "src/ as built in $B" "$out"
fi

# plant DIR [B_RETURNS [WHO_HAS_A_G]]: a tree of two modules, x/a (a.c calls b_f) and x/b, compiled into
# DIR/build. B_RETURNS: what b_f returns (default "v"; calling a_f makes a circle); WHO_HAS_A_G: the file
# defining a_g, which x/a.h declares (default a; b makes an arrow back up).
plant() {
	local d=$1 g='int a_g(void) { return 2; }' ga= gb=
	if [ "${3:-a}" = b ]; then gb=$g; else ga=$g; fi
	mkdir -p "$d/src/x" "$d/build/src/x"
	printf 'int a_f(int);\nint a_g(void);\n' >"$d/src/x/a.h"
	printf 'int b_f(int);\n' >"$d/src/x/b.h"
	printf '#include "x/a.h"\n#include "x/b.h"\nint a_f(int v) { return v ? b_f(v - 1) : 0; }\n%s\n' "$ga" >"$d/src/x/a.c"
	printf '#include "x/a.h"\n#include "x/b.h"\nint b_f(int v) { return %s; }\n%s\n' "${2:-v}" "$gb" >"$d/src/x/b.c"
	for f in a b; do cc -Isrc -I"$d/src" -c -o "$d/build/src/x/$f.o" "$d/src/x/$f.c" || return 1; done
}
# expect NAME WANT: graph.py --check on the planted tree exits 1 and prints WANT
expect() {
	local out rc
	out=$(python3 scripts/graph.py --root "$tmp/$1" --build build --check 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && grep -qF "$2" <<<"$out"; then ok "$1: $2"; else ko "$1: expected exit 1 and '$2', got exit $rc" "$out"; fi
}

if plant "$tmp/clean" && out=$(python3 scripts/graph.py --root "$tmp/clean" --build build --check 2>&1); then
	ok "a planted tree without either passes"
else
	ko "a planted tree without either" "$out"
fi
plant "$tmp/circle" 'v ? a_f(v - 1) : 1' && expect circle "circle: src/x/a.c <-> src/x/b.c"
plant "$tmp/arrow" v b && expect arrow "src/x/b.c implements part of src/x/a.h (owned by src/x/a.c)"

echo "graph: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
