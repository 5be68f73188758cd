#!/usr/bin/env bash
# End to end on real kubelets: an Indexed Job (completionMode: Indexed, Kubernetes 1.21+; the 1.20
# apiserver our tests ran on until issue 31 refused it) mapped by completion index. The Job controller
# gives each pod the annotation batch.kubernetes.io/job-completion-index; the webhook sets
# CUDA_VISIBLE_DEVICES from that index's entry at creation, the scheduler binds the pod to the entry's
# node, the check container prints both and exits 0, and the Job completes. A second Job whose map
# lacks an index waits for it, saying so, while its other indexes run.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

check "gpu-scheduler deployed ($DEPLOYED_FROM, self-signed certificate)" deploy_scheduler
node_names
echo "  node1..node4 are ${R[*]}"

# indexed_job NAME COMPLETIONS ENTRY...: an Indexed Job of check containers that print once and exit.
indexed_job() {
	local name=$1 n=$2 e
	shift 2
	cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $name
spec:
  completionMode: Indexed
  completions: $n
  parallelism: $n
  backoffLimit: 0
  template:
    metadata:
      annotations:
        gpu-scheduling-map: |
YAML
	for e in "$@"; do printf '          %s\n' "$e"; done
	cat <<YAML
    spec:
      schedulerName: $SCHEDULER_NAME
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      automountServiceAccountToken: false
      enableServiceLinks: false
      securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532}
      containers:
      - name: check
        image: gpu-scheduler-check:latest
        imagePullPolicy: IfNotPresent
        args: ["--once"]
        env:
        - {name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
YAML
}

# index_pod JOB I: the name of the Job's pod for completion index I.
index_pod() {
	kc get pods -l "job-name=$1,batch.kubernetes.io/job-completion-index=$2" -o jsonpath='{.items[0].metadata.name}'
}
job_field() { kc get job "$1" -o jsonpath="$2"; }
job_complete() { [ "$(job_field "$1" '{.status.conditions[?(@.type=="Complete")].status}')" = True ]; }

check "an Indexed Job of three, mapped 0=node1:0 1=node2:1,2 2=node4:3, is accepted" eval \
	'indexed_job ijob 3 "0=node1:0" "1=node2:1,2" "2=node4:3" | kc apply -f - >/dev/null'
check_eventually "the Job completes: its three indexes succeeded" 120 job_complete ijob
check "status.succeeded is 3, failed 0" equals "3 " job_field ijob '{.status.succeeded} {.status.failed}'
want_node=("${R[1]}" "${R[2]}" "${R[4]}")
want_dev=(0 1,2 3)
for i in 0 1 2; do
	pod=$(index_pod ijob "$i")
	check "index $i ($pod) ran on ${want_node[i]}" equals "Succeeded ${want_node[i]}" phase_node "$pod"
	check "index $i printed node=${want_node[i]} CUDA_VISIBLE_DEVICES=${want_dev[i]}" eval \
		"kc logs '$pod' | grep -q ' node=${want_node[i]} CUDA_VISIBLE_DEVICES=${want_dev[i]} pod=$pod\$'"
done

# A map with no entry for index 1: indexes 0 and 2 run and succeed, index 1 waits and says why.
check "an Indexed Job of three mapped for indexes 0 and 2 only is accepted" eval \
	'indexed_job gap 3 "0=node3:0" "2=node3:1" | kc apply -f - >/dev/null'
gap_done() { [ "$(job_field gap '{.status.succeeded}')" = 2 ]; }
check_eventually "indexes 0 and 2 succeed on node3" 120 gap_done
check_eventually "index 1 waits: no entry for index 1, the index from the Job's annotation" 30 eval \
	'event_has "$(index_pod gap 1)" "FailedScheduling: gpu-scheduling-map has no entry for index 1 \(index from annotation batch\.kubernetes\.io/job-completion-index; the map has 2 entr"'
check "index 1 is unbound" eval '[ -z "$(kc get pod "$(index_pod gap 1)" -o jsonpath="{.spec.nodeName}")" ]'
test_end
