#!/usr/bin/env bash
# tests/style/test_checksrc.sh: `make style` (scripts/checksrc.py) passes on the tree and fails on one
# planted violation of each of its rules, each in a fresh copy of the tree (run by `make unit`).
# Prints "style: N passed, N failed"; exits non-zero if a case failed.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The tree as git sees it (tracked and new files), without build outputs.
git ls-files -co --exclude-standard -z | tar --null -T - -cf "$tmp/tree.tar" 2>/dev/null
passed=0
failed=0

fresh() { # fresh DIR: a copy of the tree in DIR
	rm -rf "$1" && mkdir -p "$1" && tar -xf "$tmp/tree.tar" -C "$1"
}

# expect NAME RULE FILE_PATTERN: the checker, run on $dir, exits 1 and reports RULE at a FILE_PATTERN
expect() {
	local name=$1 rule=$2 where=$3 out rc
	out=$(python3 "$dir/scripts/checksrc.py" --root "$dir" 2>&1)
	rc=$?
	if [ "$rc" -eq 1 ] && grep -qE "^checksrc: $rule: $where" <<<"$out"; then
		passed=$((passed + 1))
		echo "ok   $name: $(grep -E "^checksrc: $rule: $where" <<<"$out" | head -1)"
	else
		failed=$((failed + 1))
		echo "FAIL $name: expected exit 1 and 'checksrc: $rule: $where...', got exit $rc:"
		sed 's/^/     /' <<<"$out"
	fi
}

dir=$tmp/clean
fresh "$dir"
if out=$(python3 "$dir/scripts/checksrc.py" --root "$dir" 2>&1); then
	passed=$((passed + 1))
	echo "ok   the tree as it is: $out"
else
	failed=$((failed + 1))
	echo "FAIL the tree as it is:"
	sed 's/^/     /' <<<"$out"
fi

# format: a line clang-format would write otherwise
dir=$tmp/format
fresh "$dir"
sed -i 's/^void gs_buf_init(struct gs_buf \*b, size_t cap)$/void gs_buf_init( struct gs_buf *b,size_t cap )/' "$dir/src/core/buf.c"
expect "format: a badly spaced line in src/core/buf.c" format 'src/core/buf\.c:'

# alloc: malloc in a file whose allocations no peer sizes
dir=$tmp/alloc
fresh "$dir"
printf '\nstatic void *planted(void)\n{\n\treturn malloc(8);\n}\n' >>"$dir/src/core/backoff.c"
expect "alloc: malloc in src/core/backoff.c" alloc 'src/core/backoff\.c:4[0-9]: malloc'

# uv_close: a handle closed with a callback that reports to no closer
dir=$tmp/uv_close
fresh "$dir"
printf '\nstatic void planted(uv_handle_t *h)\n{\n\tuv_close(h, NULL);\n}\n' >>"$dir/src/core/backoff.c"
expect "uv_close: outside the close protocol in src/core/backoff.c" uv_close 'src/core/backoff\.c:4[0-9]: uv_close'

# naming: an exported function without the module's prefix
dir=$tmp/naming
fresh "$dir"
printf '\nint planted_export(void)\n{\n\treturn 0;\n}\n' >>"$dir/src/core/backoff.c"
expect "naming: planted_export exported from src/core/backoff.c" naming 'src/core/backoff\.c:4[0-9]: planted_export'

# layering: src/k8s including the webhook
dir=$tmp/layering
fresh "$dir"
sed -i 's|^#include "k8s/api.h"$|#include "k8s/api.h"\n#include "webhook/server.h"|' "$dir/src/k8s/api.c"
expect "layering: src/k8s/api.c includes webhook/server.h" layering 'src/k8s/api\.c:[0-9]+: src/k8s and src/webhook'

# docs: a backticked path and a gs_ name that exist nowhere
dir=$tmp/docs
fresh "$dir"
printf '\nSee `src/core/planted.c`.\n' >>"$dir/docs/architecture.md"
expect "docs: a path cited by docs/architecture.md that does not exist" docs 'docs/architecture\.md:[0-9]+: `src/core/planted\.c`'
fresh "$dir"
printf '\nSee `gs_planted_function`.\n' >>"$dir/README.md"
expect "docs: a gs_ name cited by README.md that does not exist" docs 'README\.md:[0-9]+: `gs_planted_function`'

echo "style: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
