#!/usr/bin/env bash
# Placement by the map: the task's StatefulSet, bare pods named NAME-N, Indexed-Job-style pods,
# malformed maps and missing entries, the Scheduled events, /metrics through promtool, and a clean
# exit on SIGTERM. Runs without the webhook (--require-env=false), as the webhook has its own tests.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

TASK_MAP=('0=node1:0,1' '1=node2:2' '2=node3:0,1,2' '3=node4:3' '4=node4:3')

daemon_start --require-env=false || exit 1
check "daemon ready" daemon_ready 30

# --- the task's StatefulSet ---------------------------------------------------------------------
kc apply -f - >/dev/null <<<"$(statefulset_yaml gpu-scheduler-check 5 "${TASK_MAP[@]}")"
check_eventually "5 StatefulSet pods created" 60 pod_count_is 5 app=gpu-scheduler-check
want_nodes=(node1 node2 node3 node4 node4)
want_devs=(0,1 2 0,1,2 3 3)
for i in 0 1 2 3 4; do
	check_eventually "gpu-scheduler-check-$i bound to ${want_nodes[i]}" 30 pod_on "gpu-scheduler-check-$i" "${want_nodes[i]}"
	check "gpu-scheduler-check-$i records ${want_nodes[i]}:${want_devs[i]}" \
		test "$(pod_assigned "gpu-scheduler-check-$i")" = "${want_nodes[i]}:${want_devs[i]}"
done
check_eventually "a Scheduled event names node3 and its devices" 10 \
	pod_event_has gpu-scheduler-check-2 'Scheduled: .*node3.*0,1,2'

# --- bare pods, the index taken from the name ------------------------------------------------------
# (on GPUs the StatefulSet above does not hold: a bare pod is its own owner in the device ledger)
kc apply -f - >/dev/null <<<"$(pod_yaml webhook-test-1 '0=node1:0' '1=node2:0,3' '# a comment' '' '  2 = node2 : GPU-8a3c5e2f-1111-2222-3333-444455556666 ')"
kc apply -f - >/dev/null <<<"$(pod_yaml webhook-test-2 '0=node1:0' '1=node2:0,3' '2=node2:GPU-8a3c5e2f-1111-2222-3333-444455556666')"
check_eventually "webhook-test-1 bound to node2" 20 pod_on webhook-test-1 node2
check "webhook-test-1 records node2:0,3" test "$(pod_assigned webhook-test-1)" = "node2:0,3"
check_eventually "webhook-test-2 bound to node2 (UUID device)" 20 pod_on webhook-test-2 node2
check "webhook-test-2 records the UUID" test "$(pod_assigned webhook-test-2)" = "node2:GPU-8a3c5e2f-1111-2222-3333-444455556666"

# --- Indexed Job pods: the completion-index annotation wins over the name ----------------------------
# (kube-controller-manager 1.20 predates Indexed Jobs: the pod is made as its job controller would.)
kc apply -f - >/dev/null <<<"$(POD_ANNOTATIONS='    batch.kubernetes.io/job-completion-index: "2"' \
	pod_yaml train-7-abcde '0=node1:0' '2=node4:1,2' '7=node2:0')"
check_eventually "Job pod with completion index 2 bound to node4" 20 pod_on train-7-abcde node4
check "it records node4:1,2" test "$(pod_assigned train-7-abcde)" = "node4:1,2"
# The pod-index label beats both (StatefulSets from 1.28 set it).
kc apply -f - >/dev/null <<<"$(POD_LABELS='    apps.kubernetes.io/pod-index: "1"' pod_yaml sts-label-3 '1=node2:1' '3=node1:0')"
check_eventually "pod-index label beats the name suffix" 20 pod_on sts-label-3 node2

# --- a real Job: its pods get no index in 1.20, so they wait with a reason ---------------------------
kc apply -f - >/dev/null <<<"$(job_yaml plain-job 1 1 '0=node1:0')"
check_eventually "the Job made its pod" 30 pod_count_is 1 job-name=plain-job
jp=$(kc get pods -l job-name=plain-job -o jsonpath='{.items[0].metadata.name}')
check_eventually "a Job pod without an index gets FailedScheduling" 20 pod_event_has "$jp" 'FailedScheduling: .*index'
check "and stays pending" test -z "$(pod_node "$jp")"

# --- malformed map and missing entry ----------------------------------------------------------------
kc apply -f - >/dev/null <<<"$(pod_yaml bad-map-0 '0=node1:0' '1 node2:1' '2=node3:')"
check_eventually "a malformed map gives an event naming the line" 20 \
	pod_event_has bad-map-0 'FailedScheduling: .*line 2'
check_eventually "and PodScheduled=False Unschedulable" 10 eval '[ "$(pod_condition bad-map-0)" = "False Unschedulable" ]'
check "the malformed pod is not bound" test -z "$(pod_node bad-map-0)"
kc apply -f - >/dev/null <<<"$(pod_yaml no-entry-5 '0=node1:0' '1=node2:1')"
check_eventually "no entry for index 5: an event says so" 20 pod_event_has no-entry-5 'FailedScheduling: .*5'
kc apply -f - >/dev/null <<<"$(pod_yaml after-bad-1 '1=node1:2')"
check_eventually "the daemon keeps going after bad maps" 20 pod_on after-bad-1 node1
check "the daemon is alive" daemon_alive

# --- metrics -----------------------------------------------------------------------------------------
scrape=$GS_TEST_LOGS/$T_NAME-metrics.txt
check "GET /metrics" eval 'daemon_http /metrics >"$scrape"'
check "Content-Type is the Prometheus text format 0.0.4" \
	eval "curl -sI -X GET '$DAEMON_URL/metrics' | grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8'"
if command -v promtool >/dev/null; then
	check "promtool check metrics accepts the scrape" eval 'promtool check metrics <"$scrape"'
else
	fail "promtool check metrics" "promtool is not installed (Debian package prometheus)"
fi
nbound=$(kc get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)
check "binding successes counted: one per bound pod ($nbound)" \
	test "$(metric 'gpu_scheduler_binding_attempts_total{result="success"}')" = "$nbound"
for m in gpu_scheduler_pending_pods gpu_scheduler_binding_duration_seconds_bucket \
	gpu_scheduler_pod_scheduling_duration_seconds_count process_cpu_seconds_total \
	process_resident_memory_bytes process_open_fds process_start_time_seconds; do
	check "/metrics has $m" grep -q "^$m" "$scrape"
done

# --- shutdown ------------------------------------------------------------------------------------------
daemon_stop TERM 15 && pass "SIGTERM: exit 0"
test_end
