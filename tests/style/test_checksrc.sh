#!/usr/bin/env bash
# tests/style/test_checksrc.sh: `make style` (scripts/checksrc.py) passes on the tree and fails on one
# planted violation of each of its rules, each in a fresh copy of the tree (run by `make unit`).
# Prints "style: N passed, N failed"; exits non-zero if a case failed.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The tree as git sees it (tracked and new files), without build outputs (build*/, ignored or not).
git ls-files -co --exclude-standard -z | grep -zv '^build' | tar --null -T - -cf "$tmp/tree.tar" 2>/dev/null
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

# plant NAME RULE WHERE FUNCTION: FUNCTION, run in a fresh copy of the tree, plants one violation; the
# checker must fail on it, naming RULE at WHERE.
plant() {
	dir=$tmp/case
	fresh "$dir"
	(cd "$dir" && "$4")
	expect "$1" "$2" "$3"
}

# The violations, one per rule (docs a path and a name). backoff.c gets code appended: its line 4x.
bad_format() { sed -i 's/^void gs_buf_init(struct gs_buf \*b, size_t cap)$/void gs_buf_init( struct gs_buf *b,size_t cap )/' src/core/buf.c; }
bad_alloc() { printf '\nstatic void *planted(void)\n{\n\treturn malloc(8);\n}\n' >>src/core/backoff.c; }
bad_uv_close() { printf '\nstatic void planted(uv_handle_t *h)\n{\n\tuv_close(h, NULL);\n}\n' >>src/core/backoff.c; }
bad_naming() { printf '\nint planted_export(void)\n{\n\treturn 0;\n}\n' >>src/core/backoff.c; }
bad_length() { { printf '\nstatic int planted_long(int x)\n{\n'; for i in $(seq 77); do printf '\tx += %d;\n' "$i"; done; printf '\treturn x;\n}\n'; } >>src/core/backoff.c; }
bad_layering() { sed -i 's|^#include "k8s/api.h"$|#include "k8s/api.h"\n#include "webhook/server.h"|' src/k8s/api.c; }
bad_doc_path() { printf '\nSee `src/core/planted.c`.\n' >>docs/architecture.md; }
bad_doc_name() { printf '\nSee `gs_planted_function`.\n' >>README.md; }
bad_doc_flag() { sed -i '/^| `--log-level` |/d' README.md; }
bad_doc_fuzz() { sed -i '/^| `fuzz_inuse` |/d' docs/reliability.md; }
bad_doc_anchor() { printf '\nSee [preemption](docs/sched.md#preemption-planted).\n' >>README.md; }

plant "format: a badly spaced line in src/core/buf.c" format 'src/core/buf\.c:' bad_format
plant "alloc: malloc in src/core/backoff.c" alloc 'src/core/backoff\.c:4[0-9]: malloc' bad_alloc
plant "uv_close: outside the close protocol in src/core/backoff.c" uv_close 'src/core/backoff\.c:4[0-9]: uv_close' bad_uv_close
plant "naming: planted_export exported from src/core/backoff.c" naming 'src/core/backoff\.c:4[0-9]: planted_export' bad_naming
plant "length: an 81-line function (one over) in src/core/backoff.c" length 'src/core/backoff\.c:4[0-9]: planted_long is 81 lines' bad_length
plant "layering: src/k8s/api.c includes webhook/server.h" layering 'src/k8s/api\.c:[0-9]+: src/k8s and src/webhook' bad_layering
plant "docs: a path cited by docs/architecture.md that does not exist" docs 'docs/architecture\.md:[0-9]+: `src/core/planted\.c`' bad_doc_path
plant "docs: a gs_ name cited by README.md that does not exist" docs 'README\.md:[0-9]+: `gs_planted_function`' bad_doc_name
plant "docs: an option of src/main_opts.c without a row in the README's Flags table" docs \
	'README\.md:[0-9]+: `--log-level` \(src/main_opts\.c\) has no row' bad_doc_flag
plant "docs: a harness of tests/fuzz without a row in docs/reliability.md" docs \
	'docs/reliability\.md:1: `fuzz_inuse` \(tests/fuzz/fuzz_inuse\.c\) has no row' bad_doc_fuzz
plant "docs: a link to a heading that does not exist" docs \
	'README\.md:[0-9]+: link to docs/sched\.md#preemption-planted: no such heading' bad_doc_anchor

echo "style: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
