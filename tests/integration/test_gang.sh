#!/usr/bin/env bash
# All or nothing (docs/sched.md, "All or nothing") against the real apiserver:
#   - a Parallel StatefulSet of 4 with gpu-scheduler.io/placement: all-or-nothing whose index 3 GPU is
#     held by a pod of another owner: none of the 4 is bound; the members that fit wait with GANG, the
#     blocked one with DEVICE_BUSY; the gauge counts the gang
#   - the holder deleted: all 4 bound, within 1 s of the deletion; GangScheduled on the StatefulSet
#   - one rank deleted after the gang ran: its replacement is bound alone, the others stay
#   - --max-gang-timeout=4s: a gang asking gang-timeout 720h times out after 4 s, its event saying the
#     scheduler's cap cut it (issue 36)
#   - a gang whose index 1 node does not exist, gang-timeout 3s: GangTimedOut on the StatefulSet and on
#     the waiting member, naming the missing node; the timeout counted by reason; nothing bound; the
#     node created after the rest: both bound together
#   - the daemon restarted with a gang half bound by hand: the rest are placed alone
#   - budgets (issue 36), --gang-reservation-limits=NS=3/8: a gang of 4 waits GANG_LIMIT saying it can
#     never gather; a gang of 2 gathering holds its claim, so a second gang of 2 that fits waits
#     GANG_LIMIT holding nothing (another pod takes what it does not hold) and is bound when the first
#     times out; /debug/pods shows the budget; another namespace is not bounded by it
#   - --gang-placeholders: a placeholder pod per fitting member on its node, with the member's requests;
#     deleted before each member's Binding; released at a timeout; none left behind by a restart
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

N=gs-gang-$(printf '%04x' $RANDOM)
defer "node_delete $N-a; node_delete $N-b; node_delete $N-c; node_delete $N-d; node_delete $N-e; node_delete $N-f"
node_make "$N-a"
node_make "$N-b"

daemon_start --require-env=false || exit 1
check "daemon ready" daemon_ready 30

owner_events() {
	kc get events --field-selector "involvedObject.kind=$1,involvedObject.name=$2" \
		-o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' 2>/dev/null
}
owner_event_has() {
	owner_events "$1" "$2" | grep -qE "$3" || { echo "events of $1 $2:"; owner_events "$1" "$2"; return 1; }
}
debug() { curl -s --max-time 5 "$DAEMON_URL/debug/$1"; }
bound_count() {
	kc get pods -l "app=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .
}

# --- none bound while one member is blocked -----------------------------------------------------------
ours holder-0 "0=$N-b:1" >/dev/null
check_eventually "holder bound to $N-b GPU 1" 20 pod_on holder-0 "$N-b"

kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS='gpu-scheduler.io/placement: all-or-nothing' \
	statefulset_yaml ring 4 "0=$N-a:0" "1=$N-a:1" "2=$N-b:0" "3=$N-b:1")"
check_eventually "4 pods created" 30 pod_count_is 4 app=ring
check_eventually "ring-3 waits: DEVICE_BUSY naming the holder" 20 pod_event_has ring-3 'FailedScheduling: .*held by [^ ]*holder-0'
check_eventually "ring-0 waits for its gang, reserved" 20 pod_event_has ring-0 'FailedScheduling: fits node .* and holds it \(reserved\) until all 4 members'
check_eventually "ring-2 waits for its gang, reserved" 20 pod_event_has ring-2 'FailedScheduling: fits node .* \(reserved\)'
sleep 1
check "none of the 4 bound" equals 0 bound_count ring
check "gangs waiting 1" equals 1 metric gpu_scheduler_gangs_waiting
check "waiting by reason GANG: 3" equals 3 metric 'gpu_scheduler_waiting_pods_by_reason{reason="GANG"}'

# --- the holder goes: all four within a second -----------------------------------------------------------
stamps=$GS_TEST_LOGS/$T_NAME-ring.stamps
kc get pods -l app=ring -w -o jsonpath='{.metadata.name} {.spec.nodeName}{"\n"}' 2>/dev/null |
	while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$stamps" &
watcher=$!
defer "kill $watcher 2>/dev/null || true"
sleep 1
t0=$(date +%s.%N)
kc delete pod holder-0 --grace-period=0 --force >/dev/null 2>&1
check_eventually "all 4 bound" 10 eval '[ "$(bound_count ring)" = 4 ]'
sleep 0.3
kill $watcher 2>/dev/null
for i in 0 1 2 3; do
	want=$N-a
	[ $i -ge 2 ] && want=$N-b
	check "ring-$i on $want" pod_on ring-$i "$want"
done
t1=$(awk '$3 != "" { t = $1 } END { print t }' "$stamps")
if [ -n "$t1" ]; then
	lat=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	check "the last member bound ${lat}s after the holder's deletion (<= 1 s)" awk -v l="$lat" 'BEGIN { exit !(l <= 1.0) }'
else
	fail "bind latency after the holder's deletion" "no watch line with a node in $stamps"
fi
check_eventually "GangScheduled on the StatefulSet" 10 owner_event_has StatefulSet ring 'GangScheduled: all-or-nothing gang StatefulSet ring placed: 4 members'
check "gangs bound 1" equals 1 metric gpu_scheduler_gangs_bound_total
check "gangs waiting 0" equals 0 metric gpu_scheduler_gangs_waiting
check "gang latency observed" equals 1 metric gpu_scheduler_gang_scheduling_duration_seconds_count

# --- one rank restarted: placed alone ------------------------------------------------------------------
uid1=$(kc get pod ring-1 -o jsonpath='{.metadata.uid}')
kc delete pod ring-1 --grace-period=0 --force >/dev/null 2>&1
check_eventually "ring-1 recreated" 30 eval '[ -n "$(kc get pod ring-1 -o jsonpath={.metadata.uid} 2>/dev/null)" ] && [ "$(kc get pod ring-1 -o jsonpath={.metadata.uid})" != "'"$uid1"'" ]'
check_eventually "the new ring-1 bound alone to $N-a" 20 pod_on ring-1 "$N-a"
check "ring-0, ring-2, ring-3 still bound" equals 4 bound_count ring

# --- timeout: who blocked, on the owner and on the member; the scheduler's cap ---------------------------
daemon_stop
daemon_start --require-env=false --max-gang-timeout=4s || exit 1
check "daemon ready with --max-gang-timeout=4s" daemon_ready 30
# A gang asking 720h (issue 36: never-complete gangs held a cluster that long) is cut to the cap.
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS=$'gpu-scheduler.io/placement: all-or-nothing\ngpu-scheduler.io/gang-timeout: 720h' \
	statefulset_yaml long 2 "0=$N-a:3" "1=$N-never:0")"
check_eventually "long-0 waits for its gang" 20 pod_event_has long-0 'fits node .* \(reserved\)'
check_eventually "GangTimedOut on the StatefulSet after 4 s, not 720h, saying the cap cut it" 20 owner_event_has \
	StatefulSet long "GangTimedOut: .*did not complete within 4 s \(gpu-scheduler.io/gang-timeout cut to the scheduler's --max-gang-timeout\)"
check "the StatefulSet long deleted" eval 'kc delete statefulset long --wait=false >/dev/null'
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS=$'gpu-scheduler.io/placement: all-or-nothing\ngpu-scheduler.io/gang-timeout: 3s' \
	statefulset_yaml late 2 "0=$N-a:2" "1=$N-c:0")"
check_eventually "late-0 waits for its gang" 20 pod_event_has late-0 'fits node .* \(reserved\)'
check_eventually "GangTimedOut on the StatefulSet naming $N-c" 20 owner_event_has StatefulSet late "GangTimedOut: .*did not complete within 3 s.*index 1 \(late-1\) NODE_MISSING: node \"$N-c\""
check_eventually "GangTimedOut on late-0" 10 pod_event_has late-0 "GangTimedOut: .*$N-c"
check_eventually "late-0 rests: GANG_TIMED_OUT" 10 pod_event_has late-0 'FailedScheduling: .*did not complete within its gpu-scheduler.io/gang-timeout'
check "timeout counted by reason" awk -v v="$(metric 'gpu_scheduler_gang_timeouts_total{reason="NODE_MISSING"}')" 'BEGIN { exit !(v >= 1) }'
check "nothing of late bound" equals 0 bound_count late
node_make "$N-c"
check_eventually "node created: both bound together (after the rest)" 40 eval '[ "$(bound_count late)" = 2 ]'
check "late-0 on $N-a" pod_on late-0 "$N-a"
check "late-1 on $N-c" pod_on late-1 "$N-c"

# --- a restart with a gang half bound: the rest placed alone -------------------------------------------
daemon_stop
node_make "$N-d"
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS='gpu-scheduler.io/placement: all-or-nothing' \
	statefulset_yaml half 2 "0=$N-b:2" "1=$N-d:1")"
check_eventually "2 pods created" 30 pod_count_is 2 app=half
bind_pod half-0 "$N-b"
# explain judges half-1 as the daemon will: its gang has a bound member, so it is placed alone. half-0
# is on another node than half-1's: only the feed of the gang's bound members shows it to the command
# (without it, half-1's gang would seem to gather).
check "explain: half-1 is placed alone, not held for its gang" eval '
	out=$("$GS_BUILD/gpu-scheduler" explain --kubeconfig "$KUBECONFIG" --require-env=false -n "$NS" half-1 2>&1)
	echo "$out" | grep -q "placed already: its members are placed alone now" &&
		echo "$out" | grep -q "Now: every check passes" || { echo "$out"; false; }'
daemon_start --require-env=false || exit 1
check "daemon ready again" daemon_ready 30
check_eventually "half-1 bound alone (half-0 was bound)" 20 pod_on half-1 "$N-d"

# --- budgets: what one namespace's gangs may hold reserved at once (issue 36) -----------------------------
daemon_stop
node_make "$N-f"
daemon_start --require-env=false --max-gang-timeout=6s --gang-reservation-limits="$NS=3/8" || exit 1
check "daemon ready with --gang-reservation-limits=$NS=3/8" daemon_ready 30
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS='gpu-scheduler.io/placement: all-or-nothing' \
	statefulset_yaml huge 4 "0=$N-f:0" "1=$N-f:1" "2=$N-f:2" "3=$N-f:3")"
check_eventually "a gang of 4: GANG_LIMIT, it can never gather" 20 pod_event_has huge-0 \
	"FailedScheduling: fits node \"$N-f\", but its all-or-nothing gang \(StatefulSet huge\) needs 4 members and 4 GPUs reserved together, more than the gangs of namespace \"$NS\" may hold at once \(3 members, 8 GPUs: --gang-reservation-limits\): it can never gather"
check "counted: waiting by reason GANG_LIMIT" awk -v v="$(metric 'gpu_scheduler_waiting_pods_by_reason{reason="GANG_LIMIT"}')" 'BEGIN { exit !(v >= 1) }'
check "nothing of huge bound" equals 0 bound_count huge
kc delete statefulset huge --wait=false >/dev/null 2>&1
check_eventually "huge's pods gone" 30 pod_count_is 0 app=huge
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS='gpu-scheduler.io/placement: all-or-nothing' \
	statefulset_yaml first 2 "0=$N-f:0" "1=$N-nowhere:0")"
check_eventually "first-0 holds its reservation" 20 pod_event_has first-0 'fits node .* \(reserved\)'
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS='gpu-scheduler.io/placement: all-or-nothing' \
	statefulset_yaml second 2 "0=$N-f:1" "1=$N-f:2")"
check_eventually "second-0: GANG_LIMIT, naming what the other gangs hold" 20 pod_event_has second-0 \
	"FailedScheduling: .*needs 2 members and 2 GPUs reserved together and the other gangs of namespace \"$NS\" gathering hold 2 members and 2 GPUs of the 3 members, 8 GPUs"
check "/debug/pods: GANG_LIMIT and the budget's numbers" eval \
	'debug "pods/$NS/second-0" | jq -e ".verdict == \"GANG_LIMIT\" and .gang.budget == {maxMembers:3,maxGpus:8,heldMembers:2,heldGpus:2,needMembers:2,needGpus:2,admitted:false}" >/dev/null'
check "nothing of second bound" equals 0 bound_count second
# What second does not hold, a pod of ours takes: GPU 3 of the node.
ours free-0 "0=$N-f:3" >/dev/null
check_eventually "free-0 bound beside the capped gang" 20 pod_on free-0 "$N-f"
check_eventually "first times out (6 s), its claim goes: second bound" 30 eval '[ "$(bound_count second)" = 2 ]'
check "second-1 on $N-f" pod_on second-1 "$N-f"
kc delete statefulset first --wait=false >/dev/null 2>&1

# --- placeholders --------------------------------------------------------------------------------------
daemon_stop
daemon_start --require-env=false --gang-placeholders --placeholder-image=gs-test/pause:1 || exit 1
check "daemon ready with --gang-placeholders" daemon_ready 30
placeholders() {
	kc get pods -l gpu-scheduler.io/placeholder=true \
		-o jsonpath='{range .items[*]}{.metadata.annotations.gpu-scheduler\.io/placeholder-for} {.spec.nodeName} {.spec.containers[0].resources.requests.cpu} {.spec.containers[0].image} {.metadata.ownerReferences[0].kind}{"\n"}{end}' 2>/dev/null
}
placeholder_count() { placeholders | grep -c .; }
POD_TEMPLATE=ph_template
ph_template() {
	pod_template_yaml "$@"
	printf '        resources:\n          requests:\n            cpu: 250m\n'
}
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS=$'gpu-scheduler.io/placement: all-or-nothing\ngpu-scheduler.io/gang-timeout: 6s' \
	statefulset_yaml hold 3 "0=$N-a:3" "1=$N-b:3" "2=$N-e:0")"
unset POD_TEMPLATE
check_eventually "3 pods created" 30 pod_count_is 3 app=hold
check_eventually "2 placeholders, one per fitting member" 20 eval '[ "$(placeholder_count)" = 2 ]'
uid0=$(kc get pod hold-0 -o jsonpath='{.metadata.uid}')
check "hold-0's placeholder: on $N-a, 250m, the image, owned by the pod" \
	eval 'placeholders | grep -qx "$uid0 $N-a 250m gs-test/pause:1 Pod"'
check "placeholders counted" awk -v v="$(metric 'gpu_scheduler_placeholders_total{result="created"}')" 'BEGIN { exit !(v >= 2) }'
check_eventually "timeout: the placeholders deleted with the reservations" 30 eval '[ "$(placeholder_count)" = 0 ]'
check_eventually "gathering again: placeholders back" 40 eval '[ "$(placeholder_count)" = 2 ]'
# A restart leaves them; the new daemon deletes what holds for nobody and makes its own.
old=$(kc get pods -l gpu-scheduler.io/placeholder=true -o name | sort)
daemon_stop
daemon_start --require-env=false --gang-placeholders --placeholder-image=gs-test/pause:1 || exit 1
check "daemon ready again" daemon_ready 30
check_eventually "after the restart: the old placeholders gone" 30 eval '[ -z "$(comm -12 <(echo "$old") <(kc get pods -l gpu-scheduler.io/placeholder=true -o name | sort))" ]'
check_eventually "after the restart: 2 placeholders again" 30 eval '[ "$(placeholder_count)" = 2 ]'
node_make "$N-e"
check_eventually "node created: all 3 bound" 30 eval '[ "$(bound_count hold)" = 3 ]'
check_eventually "every placeholder deleted" 20 eval '[ "$(placeholder_count)" = 0 ]'
check "hold-2 on $N-e" pod_on hold-2 "$N-e"
check "no placeholder left in the namespace" equals 0 placeholder_count
kc delete statefulset hold --wait=false >/dev/null 2>&1

test_end
