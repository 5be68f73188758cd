#!/usr/bin/env bash
# Trust and identity: a wrong CA, a server name the certificate does not carry, and an IP the
# certificate does not name are refused with a clear error (never a bind); a daemon running with a
# ServiceAccount token bound to the ClusterRole shipped in deploy/ does its whole job (the RBAC is
# enough), and that role cannot do more than it needs (the RBAC is minimal).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

work=$(test_workdir)
token=$(cat "$GS_CLUSTER_DIR/admin.token")

# refused KUBECONFIG WHAT REGEX: the daemon never gets ready, logs REGEX, binds nothing, stays up.
refused() {
	local kcfg=$1 what=$2 re=$3
	kc apply -f - >/dev/null <<<"$(pod_yaml "refused-$T_N" '0=node1:0' "$T_N=node1:0")"
	KUBECONFIG_SAVED=$KUBECONFIG
	KUBECONFIG=$kcfg daemon_start --require-env=false || return
	sleep 3
	check "$what: not ready" test "$(daemon_http /readyz)" != ok
	check "$what: a clear error in the log" grep -qE "$re" "$DAEMON_LOG"
	check "$what: still running (retrying with backoff)" daemon_alive
	check "$what: nothing bound" test -z "$(pod_node "refused-$T_N")"
	daemon_stop TERM 15
	KUBECONFIG=$KUBECONFIG_SAVED
	T_N=$((T_N + 1))
}
T_N=1
port_free_on() { ! (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=wrong-ca \
	-keyout "$work/wrong-ca.key" -out "$work/wrong-ca.crt" 2>/dev/null
kubeconfig_with "$GS_APISERVER_URL" "$work/wrong-ca.crt" "$token" >"$work/wrong-ca.kubeconfig"
refused "$work/wrong-ca.kubeconfig" "wrong CA" 'certificate|verif'

kubeconfig_with "$GS_APISERVER_URL" "$GS_CLUSTER_CA" "$token" wrong.example.com >"$work/wrong-name.kubeconfig"
refused "$work/wrong-name.kubeconfig" "tls-server-name not in the certificate" 'certificate|name|CN'

# The apiserver reached at 127.0.0.2 (through a relay): its certificate names 127.0.0.1 only.
if openssl x509 -in "$GS_CLUSTER_DIR/pki/apiserver.crt" -noout -text | grep -q 'IP Address:127.0.0.2'; then
	fail "IP SAN check" "the test apiserver certificate names 127.0.0.2; cannot test"
else
	fport=$(free_port)
	python3 "$GS_ROOT/tests/tools/forward.py" 127.0.0.2 "$fport" 127.0.0.1 "$GS_APISERVER_PORT" &
	relay=$!
	defer "kill $relay 2>/dev/null || true"
	wait_for "relay listening" 10 eval "! port_free_on 127.0.0.2 $fport"
	kubeconfig_with "https://127.0.0.2:$fport" "$GS_CLUSTER_CA" "$token" >"$work/wrong-ip.kubeconfig"
	refused "$work/wrong-ip.kubeconfig" "an IP address not in the certificate" 'does not name IP address 127.0.0.2'
fi

# --- the shipped ClusterRole is enough ----------------------------------------------------------------
# The role from deploy/ under a test name, bound to a ServiceAccount of the test namespace.
sa_role_kubeconfig "$GS_ROOT/deploy/rbac.yaml" gpu-scheduler sched "$work/sa.kubeconfig"
sat=$SA_TOKEN

can() { API_TOKEN=$sat NS= kc --token "$sat" auth can-i "$@" 2>/dev/null | grep -qx yes; }
for v in "list pods" "watch pods" "create pods --subresource=binding" "patch pods --subresource=status" \
	"list nodes" "watch nodes" "create events" "create tokenreviews" "create subjectaccessreviews"; do
	check "RBAC allows: $v" can $v --all-namespaces
done
for v in "create pods" "update pods" "delete nodes" "update nodes" "list secrets" "create clusterroles"; do
	check "RBAC refuses: $v" eval "! can $v --all-namespaces"
done
# The placeholders' role (--gang-placeholders) adds creating pods, and nothing else.
sa_role_kubeconfig "$GS_ROOT/deploy/rbac.yaml" gpu-scheduler-placeholders phs "$work/ph.kubeconfig"
pht=$SA_TOKEN
can_ph() { API_TOKEN=$pht NS= kc --token "$pht" auth can-i "$@" 2>/dev/null | grep -qx yes; }
check "placeholders' RBAC allows: create pods" can_ph create pods --all-namespaces
for v in "delete pods" "update pods" "create pods --subresource=binding" "list secrets"; do
	check "placeholders' RBAC refuses: $v" eval "! can_ph $v --all-namespaces"
done

KUBECONFIG_SAVED=$KUBECONFIG
KUBECONFIG=$work/sa.kubeconfig daemon_start --require-env=false || exit 1
KUBECONFIG=$KUBECONFIG_SAVED
check_eventually "ServiceAccount daemon ready" 30 eval '[ "$(daemon_http /readyz)" = ok ]'
kc apply -f - >/dev/null <<<"$(pod_yaml rbac-2 '2=node3:1')"
kc apply -f - >/dev/null <<<"$(pod_yaml rbac-wait-0 '0=gs-no-such-node:1')"
check_eventually "ServiceAccount daemon binds" 20 pod_on rbac-2 node3
check_eventually "ServiceAccount daemon records Scheduled events" 20 pod_event_has rbac-2 Scheduled
check_eventually "ServiceAccount daemon records FailedScheduling" 20 pod_event_has rbac-wait-0 FailedScheduling
check_eventually "ServiceAccount daemon sets PodScheduled=False" 20 eval '[ "$(pod_condition rbac-wait-0)" = "False Unschedulable" ]'
check "no request was forbidden" eval "! grep -q ' 403' '$DAEMON_LOG'"
daemon_stop TERM 15 && pass "SIGTERM: exit 0"
test_end
