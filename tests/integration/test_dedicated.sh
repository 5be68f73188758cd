#!/usr/bin/env bash
# Dedicated GPU nodes against the real apiserver (docs/deploy.md, "Dedicated GPU nodes"): on a node
# tainted gpu-scheduler.io/dedicated=true:NoSchedule, a mapped pod admitted by a webhook with
# --tolerate-dedicated-taint gets the toleration {key: gpu-scheduler.io/dedicated, operator: Exists,
# effect: NoSchedule} beside its CUDA_VISIBLE_DEVICES (none added to one that already tolerates the
# taint) and is bound there; a mapped pod created without the webhook (in a namespace it does not
# select) waits with the taint as its reason, and so does one admitted by a webhook without the flag
# (the default); both are bound once the taint goes. No kubelet here: "runs past admission" is the
# toleration in the stored pod and the binding.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

TAINT_KEY=gpu-scheduler.io/dedicated
N=gs-ded-$(printf '%04x' $RANDOM)
defer "node_delete $N"
node_make "$N" || { fail "node $N" "cannot create it"; test_end; }
check "node $N tainted $TAINT_KEY=true:NoSchedule" kc taint node "$N" "$TAINT_KEY=true:NoSchedule"

work=$(test_workdir)
webhook_daemon "$work" --tolerate-dedicated-taint || exit 1
check "daemon ready (--tolerate-dedicated-taint)" daemon_ready 30

# tolerations POD: its tolerations of the dedicated taint, one "KEY OPERATOR VALUE EFFECT" line each.
tolerations() {
	kc get pod "$1" -o jsonpath='{range .spec.tolerations[*]}{.key} {.operator} {.value} {.effect}{"\n"}{end}' |
		grep "^$TAINT_KEY " || true
}
cuda() { kc get pod "$1" -o jsonpath='{.spec.containers[0].env[?(@.name=="CUDA_VISIBLE_DEVICES")].value}'; }
# waits_for_taint POD (in $NS, whatever it is at the call)
waits_for_taint() {
	check_eventually "$1 waits: its event names the taint it does not tolerate" 20 pod_event_has "$1" \
		"FailedScheduling: .*node \"$N\" has the taint $TAINT_KEY=true:NoSchedule that the pod does not tolerate"
	check "$1 is not bound" test -z "$(pod_node "$1")"
}

# --- a mapped pod through the webhook: tolerates, bound to the tainted node ---------------------------
# Created with its answer shown: once, in a loaded CI run, this first create of the test left no pod.
check_eventually "ded-0 created" 20 eval 'kc get pod ded-0 >/dev/null 2>&1 || { res=$(ours ded-0 "0=$N:0") || echo "$res"; false; }'
check "ded-0: CUDA_VISIBLE_DEVICES=0 from the webhook" equals 0 cuda ded-0
check "ded-0: the webhook added the toleration {$TAINT_KEY, Exists, NoSchedule}, once" \
	equals "$TAINT_KEY Exists  NoSchedule" tolerations ded-0
check "ded-0: the apiserver's own tolerations are kept beside it" eval \
	'kc get pod ded-0 -o jsonpath="{.spec.tolerations[*].key}" | grep -q node.kubernetes.io/not-ready'
check_eventually "ded-0: bound to the tainted node $N" 30 pod_on ded-0 "$N"

# --- one that already tolerates it (Equal "true", any effect): not added twice -------------------------
ours ded-1 "1=$N:1" "  tolerations:
  - {key: $TAINT_KEY, operator: Equal, value: \"true\"}" >/dev/null
check "ded-1: its own toleration (Equal true) is the only one: none added" \
	equals "$TAINT_KEY Equal true " tolerations ded-1
check_eventually "ded-1: bound to $N" 30 pod_on ded-1 "$N"

# --- created without the webhook (a namespace its selector does not take): waits with the taint ---------
NS2=$NS-plain
defer "NS=$NS2 force_delete_pods; NS= kc delete namespace $NS2 --wait=false >/dev/null 2>&1"
NS= kc create namespace "$NS2" >/dev/null && NS= kc label namespace "$NS2" gpu-scheduler.test/ns=true >/dev/null
NS=$NS2 ours ded-2 "2=$N:2" >/dev/null
check "ded-2 (namespace $NS2): created without the webhook, no toleration" eval 'NS=$NS2 equals "" tolerations ded-2'
NS=$NS2 waits_for_taint ded-2

# --- a webhook without the flag (the binary's default): no toleration, the pod waits -------------------
daemon_stop
noflag=()
for a in "${WEBHOOK_DAEMON[@]}"; do [ "$a" = --tolerate-dedicated-taint ] || noflag+=("$a"); done
DAEMON_WEBHOOK=1 daemon_start "${noflag[@]}" || exit 1
check "daemon ready (without --tolerate-dedicated-taint)" daemon_ready 30
ours ded-3 "3=$N:3" >/dev/null
check "ded-3: CUDA_VISIBLE_DEVICES=3 from the webhook" equals 3 cuda ded-3
check "ded-3: no toleration without --tolerate-dedicated-taint" equals "" tolerations ded-3
waits_for_taint ded-3

# --- the taint lifted: the waiting pods are bound --------------------------------------------------------
kc taint node "$N" "$TAINT_KEY-" >/dev/null
check_eventually "ded-2 and ded-3 bound to $N once the taint is gone" 30 \
	eval 'NS=$NS2 pod_on ded-2 "$N" && pod_on ded-3 "$N"'
force_delete_pods
test_end
