#!/usr/bin/env bash
# Chaos: the apiserver answering 429 (with Retry-After) and 500, through tests/tools/faultproxy.py, a TLS
# proxy of our own with a certificate the cluster CA signed for 127.0.0.1, between the daemon and the
# apiserver. A share of the pods get a 429 with Retry-After: 2 on their first binding, another share 500
# on their first three; some list and watch requests get 429 or 500 too. Full: 2,000 pods, short: 300.
# Asserts, from the proxy's log (every request, with the time it arrived and the time it was answered):
# every injected fault was retried, no binding came back before its Retry-After, the waits between 500s
# of a pod grow, lists and watches respect Retry-After too; every pod ends bound where mapped, once.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
test_begin

N=$(size 300 2000)
RA=2
work=$(test_workdir)
PLOG=$work/proxy.log

chaos_nodes_make 10 || { fail "nodes" "cannot create them"; exit 1; }

# The proxy's serving certificate: the cluster CA signs it for 127.0.0.1 (cluster.sh's server_ext).
pki=$GS_CLUSTER_DIR/pki
openssl req -new -nodes -newkey rsa:2048 -keyout "$work/proxy.key" -subj /CN=faultproxy -out "$work/proxy.csr" \
	-config "$pki/openssl.cnf" 2>/dev/null &&
	openssl x509 -req -in "$work/proxy.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -set_serial "$RANDOM$RANDOM" \
		-days 1 -sha256 -extfile "$pki/openssl.cnf" -extensions server_ext -out "$work/proxy.crt" 2>/dev/null
check "a proxy certificate signed by the cluster CA" openssl verify -CAfile "$pki/ca.crt" "$work/proxy.crt"

port=$(free_port)
python3 "$GS_ROOT/tests/tools/faultproxy.py" --listen "$port" --upstream "127.0.0.1:$GS_APISERVER_PORT" \
	--cert "$work/proxy.crt" --key "$work/proxy.key" --ca "$GS_CLUSTER_CA" --log "$PLOG" \
	--bind-429 0.2 --bind-500 0.2 --bind-500-times 3 --retry-after "$RA" --watch-faults 4 \
	--seed "$NS" 2>"$work/proxy.err" &
PROXY_PID=$!
defer "kill $PROXY_PID 2>/dev/null; wait $PROXY_PID 2>/dev/null; true"
check_eventually "the proxy listens on 127.0.0.1:$port" 10 eval "! port_free $port"
sed "s|^\(    server: \).*|\1https://127.0.0.1:$port|" "$KUBECONFIG" >"$work/kubeconfig"
chmod 600 "$work/kubeconfig"
check "through the proxy the cluster CA verifies 127.0.0.1" \
	curl -sf --cacert "$GS_CLUSTER_CA" -H "Authorization: Bearer $GS_ADMIN_TOKEN" "https://127.0.0.1:$port/readyz"

t=$SECONDS
check "$N pending pods created" chaos_pods create "$NS" p 0 "$N" "$CHAOS_NODES"
t0=$SECONDS
KUBECONFIG=$work/kubeconfig daemon_start --require-env=false || exit 1
check_eventually "every pod bound to the node and devices its map names, through 429s and 500s" 300 \
	chaos_pods verify "$NS" p "$CHAOS_NODES" --count "$N"
chaos_note "$N pods bound through the fault proxy in $((SECONDS - t0)) s (created in $((t0 - t)) s)"
daemon_stop TERM 15
kill "$PROXY_PID" 2>/dev/null

eval "$(python3 "$GS_ROOT/tests/tools/faultlog.py" "$PLOG")"
chaos_note "injected: $F_BIND_429 binding 429s (Retry-After: $RA), $F_BIND_500 binding 500s, $F_LW list/watch faults; shortest wait after a 429: $F_MIN_RA_MS ms; wait after the 1st/2nd/3rd 500 in a row: shortest $F_MIN1_MS/$F_MIN2_MS/$F_MIN3_MS ms, mean $F_GAP1_MS/$F_GAP2_MS/$F_GAP3_MS ms"
check "faults were injected into bindings (429 and 500) and lists/watches" \
	test "$F_BIND_429" -gt 0 -a "$F_BIND_500" -gt 0 -a "$F_LW" -gt 0
check "every injected binding fault was retried" test "$F_UNRETRIED" = 0
check "no binding retried before its Retry-After ($F_EARLY early; shortest wait $F_MIN_RA_MS ms, Retry-After ${RA} s)" \
	test "$F_EARLY" = 0 -a "$F_MIN_RA_MS" -ge $((RA * 1000 - 5))
check "no list or watch retried before its Retry-After" test "$F_LW_EARLY" = 0
check "no retry after a 500 before the backoff's floor (100, 200, 400 ms after the 1st, 2nd, 3rd in a row): $F_BELOW_FLOOR sooner" \
	test "$F_BELOW_FLOOR" = 0
check "the shortest wait grows with each further 500 ($F_MIN1_MS < $F_MIN2_MS < $F_MIN3_MS ms)" \
	test "$F_MIN1_MS" -gt 0 -a "$F_MIN1_MS" -lt "$F_MIN2_MS" -a "$F_MIN2_MS" -lt "$F_MIN3_MS"
check "the apiserver accepted one binding per pod, none twice" test "$F_PODS_201" = "$N" -a "$F_TWICE" = 0
test_end
