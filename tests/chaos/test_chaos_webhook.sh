#!/usr/bin/env bash
# phase: e2e
# Chaos (issue 15 part 3): one of the two gpu-scheduler pods deleted while GPU pods are being created
# through the webhook's 2-replica Service, on the end-to-end cluster (real kubelets, our images,
# deploy/ applied). The webhook has failurePolicy Ignore, so a review that fails does not fail the
# create: the pod is admitted unmutated. So: every pod created must carry CUDA_VISIBLE_DEVICES, and
# the apiserver must have logged no failed call to the webhook ("Failed calling webhook") nor counted
# one (apiserver_admission_webhook_rejection_count; with Ignore 1.20 counts none, the log is what
# shows them), while it called the webhook once per pod (apiserver_admission_webhook_admission_duration_seconds).
#
# GS_CHAOS_SIZE=short (the default, in make e2e: 300 pods at 40/s, 8 at a time, ~30 s in all) or full
# (1,000 pods); GS_CHAOS_PODS, GS_CHAOS_RATE and GS_CHAOS_THREADS override. The rate matters: at 7
# pods/s the apiserver rarely has a review in flight when the pod goes, and even --shutdown-delay=0s
# passed; at 40/s one run of two without the delay left a pod unmutated (EOF on a review in flight).
# The pods map to a node that does not exist: they stay pending (nothing runs), the
# webhook mutates them all the same.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../e2e/common.sh"
. "$(dirname "$0")/lib.sh" # GS_CHAOS_SIZE and size
test_begin

PODS=${GS_CHAOS_PODS:-$(size 300 1000)} RATE=${GS_CHAOS_RATE:-40} THREADS=${GS_CHAOS_THREADS:-8}
HOOK=mutate.gpu-scheduler.io
APIREQ=(python3 "$GS_ROOT/tests/tools/apireq.py")

ready_replicas() { NS=kube-system kc get deployment gpu-scheduler -o jsonpath='{.status.readyReplicas}'; }

# apiserver_sum METRIC FILTER: the sum of METRIC's series whose line contains FILTER.
apiserver_sum() {
	api GET /metrics | awk -v m="$1" -v f="$2" 'index($0, m "{") == 1 && index($0, f) { s += $NF } END { print s + 0 }'
}
calls() { apiserver_sum apiserver_admission_webhook_admission_duration_seconds_count "name=\"$HOOK\""; }
rejections() { apiserver_sum apiserver_admission_webhook_rejection_count "name=\"$HOOK\""; }
failed_calls() { grep -c "Failed calling webhook.*$HOOK" "$GS_CLUSTER_DIR/logs/kube-apiserver.log"; }

check "gpu-scheduler deployed through $DEPLOYED_FROM" deploy_scheduler
check "its rollout is complete" eval 'NS=kube-system kc rollout status deployment/gpu-scheduler --timeout 180s >/dev/null'
# GS_CHAOS_SHUTDOWN_DELAY=0s runs the replicas with another --shutdown-delay than deploy/'s (0s: close
# the webhook at SIGTERM at once, as before the flag existed), to compare.
if [ -n "${GS_CHAOS_SHUTDOWN_DELAY:-}" ]; then
	check "the replicas run with --shutdown-delay=$GS_CHAOS_SHUTDOWN_DELAY" eval 'NS=kube-system kc get deployment gpu-scheduler -o json |
		jq --arg d "--shutdown-delay=$GS_CHAOS_SHUTDOWN_DELAY" ".spec.template.spec.containers[0].args |=
			(map(select(startswith(\"--shutdown-delay=\") | not)) + [\$d])" | NS=kube-system kc replace -f - >/dev/null &&
		NS=kube-system kc rollout status deployment/gpu-scheduler --timeout 180s >/dev/null'
fi
check_eventually "two replicas Ready behind the Service" 120 equals 2 ready_replicas
check_eventually "one of them holds the Lease" 30 eval 'sched_pods | grep -qx "$(leader_pod)"'

calls0=$(calls)
rej0=$(rejections)
failed0=$(failed_calls)
# The creator's log goes there; in a fresh build directory nothing has made it yet (e2e alone).
mkdir -p "$GS_TEST_LOGS"
for ((i = 0; i < PODS; i++)); do
	echo "POST /api/v1/namespaces/$NS/pods application/json {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"w-$i\",\"annotations\":{\"$GS_ANNOTATION\":\"$i=no-such-node:$((i % 4))\"}},\"spec\":{\"schedulerName\":\"$SCHEDULER_NAME\",\"terminationGracePeriodSeconds\":0,\"containers\":[{\"name\":\"main\",\"image\":\"busybox:stable\",\"imagePullPolicy\":\"Never\",\"command\":[\"sleep\",\"3600\"]}]}}"
done | "${APIREQ[@]}" --threads "$THREADS" --rate "$RATE" >"$GS_TEST_LOGS/$T_NAME-create.log" 2>&1 &
creator=$!
defer "kill $creator 2>/dev/null || true"

# A third of the way in, the leader's pod goes (SIGTERM from its kubelet, as in a drain or a rollout).
victim=$(leader_pod)
wait_for "a third of the pods created" 60 eval '[ "$(pod_count)" -ge $((PODS / 3)) ]'
t_del=$(date +%s)
check "scheduler pod $victim deleted at pod $(pod_count) of $PODS" eval \
	'NS=kube-system kc delete pod "$victim" --wait=false >/dev/null'
wait "$creator"
echo "  creation took $(($(date +%s) - t_del)) s after the delete"
check "all $PODS pods created" grep -q "^ok $PODS failed 0" "$GS_TEST_LOGS/$T_NAME-create.log"

unmutated() {
	kc get pods -o json | jq -r '.items[] | select([.spec.containers[].env // [] | .[] |
		select(.name == "CUDA_VISIBLE_DEVICES")] | length == 0) | .metadata.name'
}
missed=$(unmutated)
check "every pod carries CUDA_VISIBLE_DEVICES (unmutated: $(printf '%s' "$missed" | grep -c .))" test -z "$missed"
check "each value is the map's device" eval '[ "$(kc get pods -o json | jq "[.items[] | select(
	(.metadata.name | ltrimstr(\"w-\") | tonumber % 4 | tostring) != .spec.containers[0].env[0].value)] | length")" = 0 ]'
dcalls=$(($(calls) - calls0))
drej=$(($(rejections) - rej0))
dfailed=$(($(failed_calls) - failed0))
echo "  apiserver: $dcalls webhook calls, $drej rejections, $dfailed 'Failed calling webhook' lines"
check "the apiserver called the webhook for every pod ($dcalls >= $PODS)" test "$dcalls" -ge "$PODS"
check "the apiserver counted no webhook rejection ($drej)" test "$drej" = 0
check "the apiserver logged no failed webhook call ($dfailed)" test "$dfailed" = 0
check_eventually "two replicas Ready again (the Deployment replaced $victim)" 120 equals 2 ready_replicas
# The deleted pod stays (phase Running, terminating) for its --shutdown-delay and more: wait until it
# is gone, so that the next test finds exactly two scheduler pods (test_nodes counts them).
check_eventually "the deleted pod $victim is gone" 90 eval \
	'[ -z "$(NS=kube-system kc get pod "$victim" --ignore-not-found -o name 2>&1)" ]'
[ -n "${GS_CHAOS_RESULTS:-}" ] && printf 'test_chaos_webhook size=%s: %s pods, %s webhook calls, %s rejections, %s failed calls, %s unmutated\n' \
	"$GS_CHAOS_SIZE" "$PODS" "$dcalls" "$drej" "$dfailed" "$(printf '%s' "$missed" | grep -c .)" >>"$GS_CHAOS_RESULTS"
test_end
