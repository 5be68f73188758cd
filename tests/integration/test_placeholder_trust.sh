#!/usr/bin/env bash
# phase: integration
# Issue 36 against the real apiserver (docs/reliability.md, "Attacks"; docs/sched.md, "Placeholders"):
#   - the attack: a tenant deletes its gang member's placeholder and re-creates a pod of the same name,
#     with the placeholder-for annotation, bound to the node and given 3 GPUs by the device plugin
#     (another scheduler's name). It is not ours (our create's reply never named its uid): it counts as
#     the pod it is, so another tenant's pod mapped to the node's 4th GPU waits DEVICE_BUSY and is not
#     bound; we never delete it; our placeholder is made again under a new name; the fake deleted, the
#     victim is bound
#   - owners by namespace and uid: a pod in another namespace naming our pods' controller uid does not
#     share their GPU (DEVICE_BUSY); a pod of the same namespace and controller does
#   - placeholders of gang members with extended resources and hugepages are created valid (limits equal
#     to the requests, as the apiserver requires), with the member as their controller
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

N=gs-trust-$(printf '%04x' $RANDOM)
for n in "$N-a" "$N-b"; do
	defer "node_delete $n"
	node_make "$n" || { fail "node $n" "cannot create it"; test_end; }
done
# $N-a also offers an extended resource and hugepages, which the gang xr's members request.
res='{"cpu":"32","memory":"256Gi","pods":"110","nvidia.com/gpu":"4","example.com/nic":"4","hugepages-2Mi":"1Gi"}'
api PATCH "/api/v1/nodes/$N-a/status" "{\"status\":{\"capacity\":$res,\"allocatable\":$res}}" \
	application/merge-patch+json >/dev/null
OTHER=$NS-b
defer "NS= kc delete namespace $OTHER --wait=false >/dev/null 2>&1"
NS='' kc create namespace "$OTHER" >/dev/null

daemon_start --require-env=false --gang-placeholders --placeholder-image=gs-test/pause:1 || exit 1
check "daemon ready" daemon_ready 30

# waits POD REGEX: its FailedScheduling event matches and it is not bound.
waits() {
	check_eventually "$1 waits: $2" 20 pod_event_has "$1" "FailedScheduling: $2"
	check "$1 not bound" test -z "$(pod_node "$1")"
}
# Our placeholders (schedulerName ours), "name uid" per line.
ours_ph() {
	kc get pods -l gpu-scheduler.io/placeholder=true -o json |
		jq -r --arg s "$SCHEDULER_NAME" '.items[] | select(.spec.schedulerName == $s) | "\(.metadata.name) \(.metadata.uid)"'
}

# --- a gang member holding $N-a: its placeholder, ours by the create's reply -----------------------------------
POD_TEMPLATE=ph_template
ph_template() {
	pod_template_yaml "$@"
	printf '        resources:\n          requests:\n            cpu: 100m\n'
}
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS='gpu-scheduler.io/placement: all-or-nothing' \
	statefulset_yaml tr 2 "0=$N-a:0" "1=$N-missing:0")"
unset POD_TEMPLATE
check_eventually "2 members created" 30 pod_count_is 2 app=tr
check_eventually "tr-0 reserved on $N-a" 20 pod_event_has tr-0 'FailedScheduling: fits node .* \(reserved\)'
check_eventually "tr-0's placeholder created" 20 eval '[ "$(ours_ph | grep -c .)" = 1 ]'
read -r ph ph_uid <<<"$(ours_ph)"
uid0=$(kc get pod tr-0 -o jsonpath='{.metadata.uid}')

# --- the attack -----------------------------------------------------------------------------------------------
kc delete pod "$ph" --grace-period=0 --force >/dev/null 2>&1
check_eventually "$ph gone" 10 eval '! kc get pod "$ph" >/dev/null 2>&1'
kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $ph
  labels: {gpu-scheduler.io/placeholder: "true"}
  annotations: {gpu-scheduler.io/placeholder-for: "$uid0"}
spec:
  nodeName: $N-a
  schedulerName: default-scheduler
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: busybox:stable
    resources:
      requests: {cpu: 100m, nvidia.com/gpu: "3"}
      limits: {nvidia.com/gpu: "3"}
YAML
fake_uid=$(kc get pod "$ph" -o jsonpath='{.metadata.uid}')
check "the fake has the placeholder's name, another uid" test -n "$fake_uid" -a "$fake_uid" != "$ph_uid"
check_eventually "our placeholder made again, under a new name" 20 \
	eval '[ "$(ours_ph | grep -c .)" = 1 ] && ! ours_ph | grep -q "^$ph "'
ours victim-0 "0=$N-a:1" >/dev/null
waits victim-0 "$N-a has 4 GPUs: the device plugin gave 3 to pods requesting GPUs"
sleep 2
check "victim-0 still not bound onto the fake's GPUs" test -z "$(pod_node victim-0)"
check "the fake (another scheduler's) not deleted by us" equals "$fake_uid" kc get pod "$ph" -o jsonpath='{.metadata.uid}'
kc delete pod "$ph" --grace-period=0 --force >/dev/null 2>&1
check_eventually "the fake gone: victim-0 bound to $N-a" 20 pod_on victim-0 "$N-a"

# --- owners by namespace and uid --------------------------------------------------------------------------------
# A controller the garbage collector cannot resolve (no such kind), so that it deletes none of these pods.
ctl=$(cat /proc/sys/kernel/random/uuid)
owned() {
	pod_yaml "$1" "$2" | sed "/^metadata:/a\\
  ownerReferences:\\
  - {apiVersion: example.com/v1, kind: Trainer, name: t, uid: $ctl, controller: true}"
}
owned own-0 "0=$N-b:0" | kc apply -f - >/dev/null
check_eventually "own-0 bound to $N-b GPU 0" 20 pod_on own-0 "$N-b"
owned own-1 "1=$N-b:0" | NS=$OTHER kc apply -f - >/dev/null
check_eventually "$OTHER/own-1, naming the same controller uid: waits DEVICE_BUSY, the holder not named" 20 \
	eval 'NS=$OTHER pod_event_has own-1 "FailedScheduling: $N-b GPU 0 is held by a pod of another namespace \\("'
check "$OTHER/own-1 not bound" test -z "$(NS=$OTHER pod_node own-1)"
owned own-2 "2=$N-b:0" | kc apply -f - >/dev/null
check_eventually "own-2 (same namespace and controller) shares GPU 0: bound" 20 pod_on own-2 "$N-b"
check "$OTHER/own-1 still exists (the garbage collector left it)" eval 'NS=$OTHER kc get pod own-1 >/dev/null 2>&1'
# --- a member with an extended resource and hugepages: its placeholder is valid -----------------------------
POD_TEMPLATE=xr_template
xr_template() {
	pod_template_yaml "$@"
	cat <<'EOF'
        resources:
          requests: {cpu: 100m, memory: 64Mi, example.com/nic: "1", hugepages-2Mi: 2Mi}
          limits: {memory: 64Mi, example.com/nic: "1", hugepages-2Mi: 2Mi}
EOF
}
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS='gpu-scheduler.io/placement: all-or-nothing' \
	statefulset_yaml xr 2 "0=$N-a:2" "1=$N-missing:2")"
unset POD_TEMPLATE
check_eventually "xr-0 reserved on $N-a" 30 pod_event_has xr-0 'FailedScheduling: fits node .* \(reserved\)'
xr_ph() { ours_ph | grep '^xr-0-hold-' | cut -d' ' -f1; }
check_eventually "xr-0's placeholder created (the apiserver took it)" 20 eval '[ -n "$(xr_ph)" ]'
lim() { kc get pod "$(xr_ph)" -o jsonpath="{.spec.containers[0].resources.$1.example\.com/nic} {.spec.containers[0].resources.$1.hugepages-2Mi}"; }
check "its limits: example.com/nic and hugepages-2Mi equal to the requests" \
	eval 'lim limits | grep -qE "^1 [0-9]+(Mi)?$" && [ "$(lim limits)" = "$(lim requests)" ]'
uidx=$(kc get pod xr-0 -o jsonpath='{.metadata.uid}')
check "its controller: xr-0" equals "Pod $uidx true" \
	kc get pod "$(xr_ph)" -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].uid} {.metadata.ownerReferences[0].controller}'
kc delete statefulset tr xr --wait=false >/dev/null 2>&1

test_end
