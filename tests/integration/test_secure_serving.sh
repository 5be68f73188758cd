#!/usr/bin/env bash
# The secure port (--secure-addr) against the real apiserver, with real ServiceAccount tokens and the
# ClusterRoles of deploy/rbac.yaml: no token or a bad one is 401, a token of a ServiceAccount without
# the role 403, with gpu-scheduler-metrics-reader /metrics is 200 (and /debug is still 403), with
# gpu-scheduler-debug-reader /debug answers; a flood of one bad token costs one TokenReview and a
# flood of distinct ones at most the burst (counted by the apiserver's own apiserver_request_total
# and by the daemon's gpu_scheduler_delegated_reviews_total), the rest answered 429, and a flood from
# one address leaves the scrapes of another their reviews (issue 36); the plain port
# answers the probes and refuses /metrics and /debug (the default, without
# --insecure-debug-and-metrics); and through the apiserver's pods/proxy, which drops the Authorization
# header, the token in X-Gpu-Scheduler-Authorization is what the daemon checks (docs/decisions.md).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

work=$(test_workdir)

# --- the readers' ClusterRoles from deploy/rbac.yaml, under test names, bound to ServiceAccounts --------
python3 - "$GS_ROOT/deploy/rbac.yaml" "gs-test-$NS" >"$work/roles.yaml" <<'EOF'
import sys, yaml
out = []
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "ClusterRole" and d["metadata"]["name"].endswith("-reader"):
        d["metadata"]["name"] = sys.argv[2] + d["metadata"]["name"][len("gpu-scheduler"):]
        out.append(d)
assert len(out) == 2, out
print(yaml.safe_dump_all(out))
EOF
check "deploy/rbac.yaml's reader ClusterRoles (metrics, debug) apply" eval 'NS= kc apply -f "$work/roles.yaml" >/dev/null'
for r in metrics debug; do
	defer "NS= kc delete clusterrole gs-test-$NS-$r-reader >/dev/null 2>&1"
	defer "NS= kc delete clusterrolebinding gs-test-$NS-$r-reader >/dev/null 2>&1"
done
for sa in nobody prometheus debugger; do kc create serviceaccount "$sa" >/dev/null; done
NS= kc create clusterrolebinding "gs-test-$NS-metrics-reader" --clusterrole "gs-test-$NS-metrics-reader" \
	--serviceaccount "$NS:prometheus" >/dev/null
NS= kc create clusterrolebinding "gs-test-$NS-debug-reader" --clusterrole "gs-test-$NS-debug-reader" \
	--serviceaccount "$NS:debugger" >/dev/null
for sa in nobody prometheus debugger; do
	check_eventually "a token for ServiceAccount $sa" 30 sa_token "$sa"
done
T_NOBODY=$(sa_token nobody)
T_PROM=$(sa_token prometheus)
T_DEBUG=$(sa_token debugger)

# --- the daemon, as deployed: no --insecure-debug-and-metrics; its secure port on every address ---------
sport=$(free_port)
DAEMON_INSECURE=0 daemon_start --secure-addr "0.0.0.0:$sport" --require-env=false || exit 1
SURL=https://127.0.0.1:$sport
check "daemon ready" daemon_ready 30
kc apply -f - >/dev/null <<<"$(pod_yaml sec-wait-0 '0=gs-no-such-node:1')"

# code URL [TOKEN [HEADER]]: the status of a GET, the token as a bearer in Authorization (or HEADER).
code() {
	local h=()
	[ -n "${2:-}" ] && h=(-H "${3:-Authorization}: Bearer $2")
	curl -sk -o /dev/null -w '%{http_code}' --max-time 5 "${h[@]}" "$1"
}
# smetric SERIES: one series of the secure /metrics, read with the prometheus token.
smetric() { curl -sk --max-time 5 -H "Authorization: Bearer $T_PROM" "$SURL/metrics" | awk -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? 0 : v) }'; }
# api_reviews RESOURCE: POSTs the apiserver has counted on RESOURCE (tokenreviews, subjectaccessreviews).
api_reviews() {
	api GET /metrics | awk -v r="resource=\"$1\"" '/^apiserver_request_total\{/ && index($0, r) && /verb="POST"/ { s += $2 } END { printf "%d\n", s }'
}

# --- the plain port: probes only -------------------------------------------------------------------------
check "plain port: /healthz 200" equals 200 code "$DAEMON_URL/healthz"
check "plain port: /readyz 200" equals 200 code "$DAEMON_URL/readyz"
check "plain port: /metrics refused (404)" equals 404 code "$DAEMON_URL/metrics"
check "plain port: /debug/pending refused (404)" equals 404 code "$DAEMON_URL/debug/pending"
check "plain port: /debug/pods refused (404)" equals 404 code "$DAEMON_URL/debug/pods/$NS/sec-wait-0"
check "plain port: a token does not open it either" equals 404 code "$DAEMON_URL/metrics" "$T_PROM"

# --- the secure port -------------------------------------------------------------------------------------
check "secure port: /healthz open (200)" equals 200 code "$SURL/healthz"
check "secure port: /metrics without a token: 401" equals 401 code "$SURL/metrics"
check "secure port: /debug/pending without a token: 401" equals 401 code "$SURL/debug/pending"
check "secure port: a token the apiserver does not know: 401" equals 401 code "$SURL/metrics" "not-a-token"
check "secure port: ServiceAccount without the role: 403" equals 403 code "$SURL/metrics" "$T_NOBODY"
check "secure port: ServiceAccount with gpu-scheduler-metrics-reader: 200" equals 200 code "$SURL/metrics" "$T_PROM"
check "secure port: its scrape is the daemon's metrics" eval \
	'curl -sk --max-time 5 -H "Authorization: Bearer $T_PROM" "$SURL/metrics" | grep -q "^gpu_scheduler_ready 1"'
check "secure port: metrics-reader may not read /debug (403)" equals 403 code "$SURL/debug/pending" "$T_PROM"
check "secure port: nobody may not read /debug/pods (403)" equals 403 code "$SURL/debug/pods/$NS/sec-wait-0" "$T_NOBODY"
check_eventually "secure port: debug-reader reads /debug/pods (the pod waits, NODE_MISSING)" 10 eval \
	'curl -sk --max-time 5 -H "Authorization: Bearer $T_DEBUG" "$SURL/debug/pods/$NS/sec-wait-0" | jq -e ".reason == \"NODE_MISSING\"" >/dev/null'
check "secure port: debug-reader may not read /metrics (403)" equals 403 code "$SURL/metrics" "$T_DEBUG"
check "denials counted: unauthenticated" eval '[ "$(smetric "gpu_scheduler_secure_requests_total{result=\"unauthenticated\"}")" -ge 3 ]'
check "denials counted: forbidden" eval '[ "$(smetric "gpu_scheduler_secure_requests_total{result=\"forbidden\"}")" -ge 4 ]'

# --- floods: the apiserver sees a review per distinct token at most, and at most the burst ---------------
tr0=$(api_reviews tokenreviews)
ours0=$(smetric 'gpu_scheduler_delegated_reviews_total{kind="tokenreview"}')
codes=$(for i in $(seq 1 100); do code "$SURL/metrics" "flood-token-one"; echo; done | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
tr1=$(api_reviews tokenreviews)
ours1=$(smetric 'gpu_scheduler_delegated_reviews_total{kind="tokenreview"}')
check "100 requests with one bad token: all 401 ($codes)" eval '[ "$codes" = "401:100 " ]'
check "... and the apiserver got 1 TokenReview for them ($((tr1 - tr0)))" eval '[ $((tr1 - tr0)) -eq 1 ]'
check "... as the daemon counted ($((ours1 - ours0)))" eval '[ $((ours1 - ours0)) -eq 1 ]'

# Distinct tokens, 8 requests at once: GS_AUTHZ_BURST (20) reviews and 10 a second after it.
t0=$(date +%s)
seq 1 200 | xargs -P 8 -I{} curl -sk -o /dev/null -w '%{http_code}\n' --max-time 5 \
	-H "Authorization: Bearer flood-{}-$RANDOM" "$SURL/metrics" >"$work/flood.codes"
secs=$(($(date +%s) - t0 + 1))
tr2=$(api_reviews tokenreviews)
n401=$(grep -c '^401$' "$work/flood.codes")
n429=$(grep -c '^429$' "$work/flood.codes")
check "200 distinct bad tokens: 401 or 429 each ($n401 x 401, $n429 x 429)" eval '[ $((n401 + n429)) -eq 200 ] && [ "$n429" -gt 0 ]'
check "... and at most 20 + 10/s x ${secs}s TokenReviews reached the apiserver ($((tr2 - tr1)))" eval \
	'[ $((tr2 - tr1)) -le $((20 + 10 * secs)) ] && [ $((tr2 - tr1)) -eq "$n401" ]'
sleep 2 # the bucket refills (10 a second): the reader's verdict may have expired meanwhile
check "throttled requests counted" eval '[ "$(smetric "gpu_scheduler_secure_requests_total{result=\"throttled\"}")" -eq "$n429" ]'
check "the reader still reads /metrics after the flood" equals 200 code "$SURL/metrics" "$T_PROM"

# --- a flood from one address does not starve the scrapes of another (issue 36) ------------------------
# Five new prometheus tokens, each unknown to the daemon: every scrape with one needs a TokenReview and a
# SubjectAccessReview. Meanwhile 127.0.0.2 sends new bad tokens, 8 at once, for 8 s. Reviews are budgeted
# per address (src/k8s/authz.h): the flood spends its own and at most its burst of the shared one.
for i in 1 2 3 4 5; do P[i]=$(sa_token prometheus); done
timeout 8 sh -c "seq 1 1000000 | xargs -P 8 -I{} curl -sk --interface 127.0.0.2 -o /dev/null -w '%{http_code}\n' \
	--max-time 5 -H 'Authorization: Bearer flood2-{}-$RANDOM' '$SURL/metrics'" >"$work/flood2.codes" 2>/dev/null &
fpid=$!
sleep 1
: >"$work/scrapes"
for i in 1 2 3 4 5; do
	code "$SURL/metrics" "${P[i]}" >>"$work/scrapes"
	echo >>"$work/scrapes"
	sleep 1
done
wait "$fpid" 2>/dev/null
f429=$(grep -c '^429$' "$work/flood2.codes")
check "the flood from 127.0.0.2 was throttled ($f429 x 429 of $(grep -c . "$work/flood2.codes"))" test "$f429" -gt 100
check "5 scrapes from 127.0.0.1 with new tokens during it: all 200 ($(tr '\n' ' ' <"$work/scrapes"))" eval \
	'[ "$(grep -c "^200$" "$work/scrapes")" = 5 ]'
sleep 2 # the shared bucket refills (10 a second) before the next part's reviews

# --- through the apiserver's pod proxy -----------------------------------------------------------------
# A pod whose IP is this machine's address (the apiserver refuses to proxy to loopback): the proxy
# dials the daemon's secure port on it. The caller (admin here) needs pods/proxy; the daemon needs
# the token of whoever asks, which the proxy cannot forward in Authorization.
hostip=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
if [ -z "$hostip" ] && ip link add gs-proxy0 type dummy 2>/dev/null; then
	# None (a bare CI sandbox): an address of TEST-NET-2 on a dummy link of our own, removed at exit.
	defer "ip link del gs-proxy0 2>/dev/null"
	ip addr add 198.51.100.77/32 dev gs-proxy0 && ip link set gs-proxy0 up && hostip=198.51.100.77
fi
if [ -z "$hostip" ]; then
	fail "pod proxy" "this machine has no global IPv4 address for the apiserver to dial"
else
	kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: sec-proxy
spec:
  schedulerName: gs-test-nobody
  containers: [{name: main, image: busybox:stable}]
YAML
	api PATCH "/api/v1/namespaces/$NS/pods/sec-proxy/status" \
		"{\"status\":{\"podIP\":\"$hostip\",\"podIPs\":[{\"ip\":\"$hostip\"}]}}" application/merge-patch+json >/dev/null
	proxy=$GS_APISERVER_URL/api/v1/namespaces/$NS/pods/https:sec-proxy:$sport/proxy
	# pcode PATH [TOKEN [HEADER]]: as code, the request to the apiserver carrying the admin's own token.
	pcode() {
		local h=()
		[ -n "${2:-}" ] && h=(-H "${3:-$HDR}: Bearer $2")
		curl -s -o /dev/null -w '%{http_code}' --max-time 10 --cacert "$GS_CLUSTER_CA" \
			-H "Authorization: Bearer $GS_ADMIN_TOKEN" "${h[@]}" "$proxy$1"
	}
	HDR=X-Gpu-Scheduler-Authorization
	check "pod proxy: the apiserver reaches the daemon (/healthz 200)" equals 200 pcode /healthz
	check "pod proxy: the admin's own Authorization is not forwarded: /metrics 401" equals 401 pcode /metrics
	check "pod proxy: a debug-reader token in $HDR: /debug/pods 200" equals 200 pcode "/debug/pods/$NS/sec-wait-0" "$T_DEBUG"
	check "pod proxy: the metrics-reader token in $HDR: /metrics 200" equals 200 pcode /metrics "$T_PROM"
	check "pod proxy: nobody's token in $HDR: 403" equals 403 pcode "/debug/pending" "$T_NOBODY"
	check "pod proxy: a bad token in $HDR: 401" equals 401 pcode /debug/pending "not-a-token"

	# --- explain asks the running daemon the same way (issue 20, "one truth") -------------------------
	# The Lease names the leader as main.c does (its pod name, "_", a suffix): here the proxy's pod.
	kc apply -f - >/dev/null <<YAML
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: gs-explain}
spec: {holderIdentity: sec-proxy_0badcafe, leaseDurationSeconds: 15}
YAML
	xcli() {
		"$GS_BUILD/gpu-scheduler" explain --kubeconfig "${XKC:-$KUBECONFIG}" -n "$NS" --scheduler-namespace "$NS" \
			--lease-name gs-explain --secure-port "$sport" "$@"
	}
	said=$(xcli --require-env=false sec-wait-0)
	check "explain: the leader's verdict beside its own, and they agree" eval '
		grep -q "The daemon (leader sec-proxy, through the apiserver.s pod proxy) says:" <<<"$said" &&
		grep -q "verdict:  NODE_MISSING: node \"gs-no-such-node\" named by" <<<"$said" &&
		grep -q "It agrees with the evaluation above" <<<"$said"'
	said=$(xcli --require-env=false -o json sec-wait-0)
	check "explain -o json: the daemon's answer under \"daemon\"" eval \
		'jq -e ".verdict == \"NODE_MISSING\" and .daemon.leader == \"sec-proxy\" and .daemon.agrees and .daemon.answer.verdict == \"NODE_MISSING\"" <<<"$said" >/dev/null'
	# Run with --require-env=true the command wants CUDA_VISIBLE_DEVICES (the daemon does not): they differ.
	said=$(xcli --require-env=true sec-wait-0)
	check "explain says so when they disagree" eval \
		'grep -q "It DISAGREES: the daemon.s verdict is NODE_MISSING, the evaluation above says NOT_MUTATED" <<<"$said"'
	said=$(XKC=$GS_CLUSTER_DIR/kubeconfig-cert xcli --require-env=false sec-wait-0)
	check "explain with a client certificate: the daemon not asked, and why" eval \
		'grep -q "The daemon: not asked: the leader sec-proxy answered HTTP 401: it checks a bearer token only" <<<"$said"'
	said=$(xcli --require-env=false --lease-name gs-no-lease sec-wait-0)
	check "explain without a Lease: its own evaluation, and why the daemon was not asked" eval \
		'grep -q "FAIL  node-exists" <<<"$said" && grep -q "The daemon: not asked: cannot read the Lease $NS/gs-no-lease" <<<"$said"'
fi

daemon_stop TERM 15 && pass "SIGTERM: exit 0"
test_end
