#!/usr/bin/env bash
# Restarts and backlog: 1,000 pods created before the daemon starts are all bound after it starts;
# the daemon killed mid-run and started again binds nothing twice; the apiserver restarted mid-run
# and every pod still ends bound where its map says.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

# map_lines N: entries 0..N-1 spread over node1..node4, devices by index.
map_lines() { local i; for ((i = 0; i < $1; i++)); do echo "$i=node$((i % 4 + 1)):$((i % 4))"; done; }

# misplaced PREFIX N: prints the pods PREFIX-i (i < N) not bound where map_lines puts them.
misplaced() {
	kc get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
		awk -v p="$1-" -v n="$2" 'index($1, p) == 1 { i = substr($1, length(p) + 1) + 0; if (i < n) { seen++; if ($2 != "node" (i % 4 + 1)) bad++ } }
			END { if (seen != n || bad) { printf "%d of %d seen, %d not where mapped\n", seen, n, bad; exit 1 } }'
}

all_bound() { misplaced "$1" "$2" >/dev/null; }

# --- 1,000 pending pods before the daemon starts ----------------------------------------------------
mapfile -t BULK < <(map_lines 1000)
list=$GS_TEST_LOGS/$T_NAME-bulk.yaml
mkdir -p "$GS_TEST_LOGS"
{
	for i in $(seq 0 999); do
		echo ---
		# 1,000 bare pods on 4 nodes share GPUs: each is its own owner, so they say they may share.
		POD_ANNOTATIONS='    gpu-scheduler.io/allow-shared-devices: "true"' pod_yaml "bulk-$i" "${BULK[@]}"
	done
} >"$list"
t=$SECONDS
kc create -f "$list" >/dev/null
check "1,000 pods created ($((SECONDS - t)) s)" pod_count_is 1000
daemon_start --require-env=false || exit 1
t=$SECONDS
check_eventually "all 1,000 bound where mapped after the start" 120 all_bound bulk 1000
echo "  1,000 pods bound $((SECONDS - t)) s after the start"
# Twice the page size, yet one request: the first list comes from the apiserver's watch cache, streamed.
check "the first pod list: 1,000 pods in one streamed protobuf request from the watch cache" \
	grep -qE "pods: listed 1000 at resourceVersion [0-9]+ \(from the watch cache, streamed: 1 page, protobuf\)" "$DAEMON_LOG"
check "nothing needed a retry or hit a conflict" \
	test "$(metric 'gpu_scheduler_binding_attempts_total{result="gone"}')" = 0
daemon_stop TERM 15
force_delete_pods
check_eventually "bulk pods gone" 60 pod_count_is 0

# --- the daemon killed mid-run ------------------------------------------------------------------------
mapfile -t M200 < <(map_lines 200)
daemon_start --require-env=false --kube-api-qps 50 --kube-api-burst 10 || exit 1
kc apply -f - >/dev/null <<<"$(statefulset_yaml kill 200 "${M200[@]}")"
bound_some() { [ "$(kc get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" -ge 20 ]; }
check_eventually "some pods bound before the kill" 60 bound_some
daemon_stop KILL 5
daemon_start --require-env=false || exit 1
check_eventually "after the restart all 200 bound where mapped" 120 all_bound kill 200
check "the restarted daemon never bound a pod twice (no 409/404)" \
	test "$(metric 'gpu_scheduler_binding_attempts_total{result="gone"}')" = 0
check "and never failed a binding" test "$(metric 'gpu_scheduler_binding_attempts_total{result="rejected"}')" = 0

# --- the apiserver restarted mid-run ------------------------------------------------------------------
daemon_stop TERM 15
# The next StatefulSet has the same map: another owner, so the GPUs must be free first (device ledger).
kc delete statefulset kill --wait=false >/dev/null
force_delete_pods
check_eventually "the first StatefulSet's pods gone" 60 pod_count_is 0
daemon_start --require-env=false --kube-api-qps 50 --kube-api-burst 10 || exit 1
kc apply -f - >/dev/null <<<"$(statefulset_yaml ap 200 "${M200[@]}")"
ap_some() { [ "$(kc get pods -l app=ap -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" -ge 10 ]; }
check_eventually "some pods bound before the apiserver restart" 60 ap_some
check "apiserver restarted" restart_apiserver
check_eventually "after the apiserver restart all 200 bound where mapped" 180 all_bound ap 200
check "the daemon survived" daemon_alive
check "its watches were restarted" test "$(daemon_http /metrics | awk '/^gpu_scheduler_watch_restarts_total/ { s += $2 } END { print s + 0 }')" -gt 0
check_eventually "ready again" 30 eval '[ "$(daemon_http /readyz)" = ok ]'
daemon_stop TERM 15 && pass "SIGTERM: exit 0"
test_end
