#!/usr/bin/env bash
# The encoding the daemon reads pods and nodes in (--kube-api-content-type, docs/k8s-decode.md):
# by default protobuf, for the first list (streamed from the watch cache) and for the watches, as
# gpu_scheduler_watch_responses_total and the "listed" log lines show; forced to JSON, the same pods bind
# the same way and no protobuf response is read. (A bad value is refused at startup: test_cli.sh.)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

enc_count() { metric "gpu_scheduler_watch_responses_total{resource=\"$1\",encoding=\"$2\"}"; }
at_least() { [ "$(enc_count "$1" "$2")" -ge "$3" ]; }

# --- default: protobuf ------------------------------------------------------------------------------
daemon_start --require-env=false || exit 1
check "daemon ready" daemon_ready 30
# Created after the list: the pod reaches the daemon as a protobuf watch event, its binding proves the
# record was right (the map, the index from the name, the scheduler name).
kc apply -f - >/dev/null <<<"$(pod_yaml enc-pb-1 '0=node1:0' '1=node3:1')"
check_eventually "protobuf: enc-pb-1 bound to node3" 20 pod_on enc-pb-1 node3
check "protobuf: it records node3:1" test "$(pod_assigned enc-pb-1)" = "node3:1"
check "protobuf: the pod list and watch were read as protobuf" at_least pods protobuf 2
# (a node watch with no change says nothing, so only the node list is sure to have answered)
check "protobuf: the node list was read as protobuf" at_least nodes protobuf 1
check "protobuf: nothing was read as JSON" test "$(enc_count pods json)$(enc_count nodes json)" = 00
check "protobuf: the log says the lists were protobuf" \
	grep -qE 'pods: listed [0-9]+ at resourceVersion [0-9]+ \(from the watch cache, streamed: 1 page, protobuf\)' "$DAEMON_LOG"
check "protobuf: the watch stream was framed protobuf" grep -q 'pods: watch stream in protobuf' "$DAEMON_LOG"
# A pod deleted while watched comes as a protobuf DELETED event: its devices are free again for the next.
kc delete pod enc-pb-1 --grace-period=0 --force >/dev/null 2>&1
kc apply -f - >/dev/null <<<"$(pod_yaml enc-pb-again-1 '1=node3:1')"
check_eventually "protobuf: node3:1 freed by the DELETED event and taken again" 20 pod_on enc-pb-again-1 node3
check "protobuf: no event failed to decode" eval '! grep -q "watch event not understood" "$DAEMON_LOG"'
daemon_stop TERM 15 && pass "protobuf: SIGTERM: exit 0"

# --- forced JSON ------------------------------------------------------------------------------------
daemon_start --require-env=false --kube-api-content-type json || exit 1
check "json: daemon ready" daemon_ready 30
kc apply -f - >/dev/null <<<"$(pod_yaml enc-json-1 '0=node1:0' '1=node4:2')"
check_eventually "json: enc-json-1 bound to node4" 20 pod_on enc-json-1 node4
check "json: it records node4:2" test "$(pod_assigned enc-json-1)" = "node4:2"
check "json: the pod list and watch were read as JSON" at_least pods json 2
check "json: the node list was read as JSON" at_least nodes json 1
check "json: nothing was read as protobuf" test "$(enc_count pods protobuf)$(enc_count nodes protobuf)" = 00
check "json: the log says the lists were JSON" \
	grep -qE 'pods: listed [0-9]+ at resourceVersion [0-9]+ \(from the watch cache, streamed: 1 page, JSON\)' "$DAEMON_LOG"
# The pods bound under protobuf are read back as JSON with their devices: a pod asking for them waits.
kc apply -f - >/dev/null <<<"$(pod_yaml enc-json-2 '2=node3:1')"
check_eventually "json: node3:1, held by the pod bound under protobuf, makes enc-json-2 wait" 20 \
	pod_event_has enc-json-2 'FailedScheduling'
check "json: enc-json-2 is not bound" test -z "$(pod_node enc-json-2)"
daemon_stop TERM 15 && pass "json: SIGTERM: exit 0"
test_end
