#!/usr/bin/env bash
# phase: integration
# The chaos suite's short version inside `make test`: every tests/chaos/chaos_*.sh with
# GS_CHAOS_SIZE=short against the integration cluster (each script records its own results through
# tests/lib.sh, so they count in "N passed, N failed"). The full sizes run with `make chaos`
# (tests/chaos/run.sh); docs/reliability.md, "Chaos", has the figures.
cd "$(dirname "$0")/../.." || exit 1
status=0
for t in tests/chaos/chaos_*.sh; do
	echo "=== $t (short)"
	t0=$SECONDS
	GS_CHAOS_SIZE=short bash "$t" || status=1
	echo "  ($((SECONDS - t0)) s)"
done
exit $status
