#!/usr/bin/env bash
# Leader election against the real apiserver, with kube-scheduler's default timings (lease 15 s,
# renew deadline 10 s, retry 2 s): of two replicas only the Lease holder binds; SIGTERM hands the
# Lease over at once; a SIGKILLed leader is replaced within lease duration + one poll + 1 s; a leader frozen
# (SIGSTOP) past its renew deadline sends not a single binding when it wakes before it has checked its
# Lease, whether another replica took over or not. The Lease lives in the test's namespace. The
# replicas are common.sh's (replica, leads, follows, binds, rmetric).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

LEASE=gs-test-leader
holder() { kc get lease "$LEASE" -o jsonpath='{.spec.holderIdentity}'; }
holder_is() { case "$(holder)" in "$1"_*) return 0 ;; esac; echo "holder: $(holder)"; return 1; }
bare() { kc apply -f - >/dev/null <<<"$(pod_yaml "$1" "$2")"; }

# --- two replicas: one leads, only it binds ------------------------------------------------------------
replica a
check_eventually "replica a leads" 10 leads a
check "the Lease names it" holder_is a
replica b
check_eventually "replica b is ready and follows" 10 follows b
bare p-0 "0=node1:0"
bare p-1 "1=node2:0"
check_eventually "pods bound" 10 eval 'pod_on p-0 node1 && pod_on p-1 node2'
check "a bound them" eval '[ "$(binds a)" -ge 2 ]'
check "b bound nothing" eval '[ "$(binds b)" = 0 ]'
check "b never sent a binding" eval '! grep -q "binding to" "${RLOG[b]}"'
check "b keeps its cache warm (it knows the pods)" eval \
	'[ "$(rmetric b '"'"'gpu_scheduler_cache_objects{kind="pod"}'"'"')" -ge 2 ]'
rdebug() { curl -s --max-time 2 "${RURL[$1]}/debug/pods/$NS/$2" | jq -c '{state, node}'; }
check_eventually "b, a follower, explains p-0 from its own cache: BOUND on node1" 10 \
	eval '[ "$(rdebug b p-0)" = "{\"state\":\"BOUND\",\"node\":\"node1\"}" ]'
check "the leader and the follower explain p-1 alike: BOUND on node2" \
	eval '[ "$(rdebug a p-1)" = "{\"state\":\"BOUND\",\"node\":\"node2\"}" ] && [ "$(rdebug b p-1)" = "$(rdebug a p-1)" ]'

# --- SIGTERM: a releases the Lease, b takes over at its next retry ---------------------------------
t0=$(date +%s.%N)
kill -TERM "${RPID[a]}"
check_eventually "b leads after a's SIGTERM" 10 leads b
t1=$(date +%s.%N)
lat=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
check "b took over ${lat}s after a's SIGTERM (released: <= 3 s, not the 15 s lease)" \
	awk -v l="$lat" 'BEGIN { exit !(l <= 3.0) }'
check "a logged the release" eval 'grep -q "Lease $NS/$LEASE released" "${RLOG[a]}"'
wait "${RPID[a]}" 2>/dev/null
check "a exited 0" test "$?" = 0
bare p-2 "2=node3:0"
check_eventually "b binds now" 10 pod_on p-2 node3
check "b counts it" eval '[ "$(binds b)" -ge 1 ]'

# --- SIGKILL the leader: the follower takes over within lease duration + one poll + 1 s -----------------------
replica c
check_eventually "c follows" 10 follows c
kill -KILL "${RPID[b]}"
t0=$(date +%s.%N)
bare p-3 "3=node4:0"
check_eventually "c leads after b was SIGKILLed" 25 leads c
t1=$(date +%s.%N)
lat=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
# c counts the 15 s from when it saw b's last renewal (up to one poll of 2.4 s after it) and polls
# again when they end (gs_lease_wait_ms); 1 s more for the Lease update and the metric's poll.
check "c took over ${lat}s after the kill (<= 18.4 s: lease 15 s + a poll of 2.4 s + 1 s)" \
	awk -v l="$lat" 'BEGIN { exit !(l <= 18.4) }'
check_eventually "the pod created meanwhile is bound by c" 5 pod_on p-3 node4
check "c's Lease holds one more transition" eval '[ "$(kc get lease "$LEASE" -o jsonpath="{.spec.leaseTransitions}")" -ge 2 ]'

# --- the leader frozen for 20 s while another replica runs ----------------------------------------
replica d
check_eventually "d follows" 10 follows d
before=$(binds c)
kill -STOP "${RPID[c]}"
check_eventually "d leads while c is frozen" 25 leads d
bare p-4 "4=node1:1"
check_eventually "d binds what comes meanwhile" 5 pod_on p-4 node1
sleep $((20 - 17))
nl_before=$(wc -l <"${RLOG[c]}")
kill -CONT "${RPID[c]}"
check_eventually "c, awake, follows" 10 follows c
check "c sent no binding after waking (before $before, after $(binds c))" eval '[ "$(binds c)" = "$before" ]'
check "c said why it stopped" eval \
	'tail -n +$((nl_before + 1)) "${RLOG[c]}" | grep -q "no longer leading: the Lease was not renewed within the renew deadline"'
kill -TERM "${RPID[c]}" "${RPID[d]}"
wait "${RPID[c]}" "${RPID[d]}" 2>/dev/null

# --- alone and frozen: on waking it renews its Lease before binding anything -----------------------
replica e
check_eventually "e leads alone" 25 leads e
kill -STOP "${RPID[e]}"
sleep 12
bare p-5 "5=node2:1"
nl_before=$(wc -l <"${RLOG[e]}")
kill -CONT "${RPID[e]}"
check_eventually "e binds the pod created while it was frozen" 10 pod_on p-5 node2
woke=$(tail -n +$((nl_before + 1)) "${RLOG[e]}")
first_bind=$(printf '%s\n' "$woke" | grep -n "binding to" | head -n 1 | cut -d: -f1)
stopped=$(printf '%s\n' "$woke" | grep -n "no longer leading" | head -n 1 | cut -d: -f1)
led=$(printf '%s\n' "$woke" | grep -n "leader election: leading" | head -n 1 | cut -d: -f1)
check "after waking: stopped leading (line ${stopped:-none}), led again (line ${led:-none}), then bound (line ${first_bind:-none})" \
	eval '[ -n "$stopped" ] && [ -n "$led" ] && [ -n "$first_bind" ] && [ "$stopped" -lt "$led" ] && [ "$led" -lt "$first_bind" ]'
kill -TERM "${RPID[e]}"
wait "${RPID[e]}" 2>/dev/null
# --- only the leader makes the self-signed certificate ---------------------------------------------------
# h runs --webhook-self-signed with no Secret yet while g leads without a webhook: h must leave the
# Secret alone until it leads, then make it at once.
replica g
check_eventually "g leads" 25 leads g
WPORT=$(free_port)
replica h --webhook-self-signed --webhook-addr "127.0.0.1:$WPORT" --namespace "$NS" --webhook-secret gs-test-tls \
	--webhook-service gs-test-svc --webhook-config-name gs-test-no-such-config
check_eventually "h follows" 10 follows h
check_eventually "h leaves the missing certificate to the leader" 10 grep -q "left to the leader" "${RLOG[h]}"
check "no Secret written by a follower" eval '! kc get secret gs-test-tls >/dev/null 2>&1'
kill -TERM "${RPID[g]}"
check_eventually "h leads after g's SIGTERM" 10 leads h
check_eventually "h, leading, writes the certificate" 10 eval \
	'[ -n "$(kc get secret gs-test-tls -o jsonpath="{.data.tls\\.crt}")" ]'
kill -TERM "${RPID[h]}"
wait "${RPID[g]}" "${RPID[h]}" 2>/dev/null

check "nothing was bound twice or elsewhere" eval \
	'pod_on p-0 node1 && pod_on p-1 node2 && pod_on p-2 node3 && pod_on p-3 node4 && pod_on p-4 node1 && pod_on p-5 node2'

test_end
