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
enc_word() { if [ "$1" = json ]; then echo JSON; else echo "$1"; fi; } # as the log and the checks say it

# read_as ENC OTHER POD NODE:DEV ENTRY...: with the daemon just started, POD (map ENTRY...) is bound to NODE
# with DEV, and the pods and nodes were read in ENC only, never in OTHER (metrics and the log agree).
read_as() {
	local enc=$1 other=$2 pod=$3 want=$4 word
	shift 4
	word=$(enc_word "$enc")
	kc apply -f - >/dev/null <<<"$(pod_yaml "$pod" "$@")"
	check_eventually "$enc: $pod bound to ${want%%:*}" 20 pod_on "$pod" "${want%%:*}"
	check "$enc: it records $want" test "$(pod_assigned "$pod")" = "$want"
	check "$enc: the pod list and watch were read as $word" at_least pods "$enc" 2
	# (a node watch with no change says nothing, so only the node list is sure to have answered)
	check "$enc: the node list was read as $word" at_least nodes "$enc" 1
	check "$enc: nothing was read as $(enc_word "$other")" test "$(enc_count pods "$other")$(enc_count nodes "$other")" = 00
	check "$enc: the log says the lists were $word" \
		grep -qE "pods: listed [0-9]+ at resourceVersion [0-9]+ \\(from the watch cache, streamed: 1 page, $word\\)" "$DAEMON_LOG"
}

# --- default: protobuf ------------------------------------------------------------------------------
daemon_start --require-env=false || exit 1
check "daemon ready" daemon_ready 30
# Created after the list: the pod reaches the daemon as a protobuf watch event, its binding proves the
# record was right (the map, the index from the name, the scheduler name).
read_as protobuf json enc-pb-1 node3:1 '0=node1:0' '1=node3:1'
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
read_as json protobuf enc-json-1 node4:2 '0=node1:0' '1=node4:2'
# The pods bound under protobuf are read back as JSON with their devices: a pod asking for them waits.
kc apply -f - >/dev/null <<<"$(pod_yaml enc-json-2 '2=node3:1')"
check_eventually "json: node3:1, held by the pod bound under protobuf, makes enc-json-2 wait" 20 \
	pod_event_has enc-json-2 'FailedScheduling'
check "json: enc-json-2 is not bound" test -z "$(pod_node enc-json-2)"
daemon_stop TERM 15 && pass "json: SIGTERM: exit 0"
test_end
