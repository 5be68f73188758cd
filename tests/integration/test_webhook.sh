#!/usr/bin/env bash
# The admission webhook against the real kube-apiserver: a MutatingWebhookConfiguration pointing at
# https://127.0.0.1:PORT/mutate. CUDA_VISIBLE_DEVICES lands in every container and init container;
# a malformed map is refused with its line number in the StatefulSet's events; certificate files
# swapped while pods are created fail no admission; pods created while the webhook was down are never
# bound without the variable, and end bound with it; old TLS versions and weak suites are refused.
# Maps by reference (a GPUPlacementMap named by a StatefulSet's template): the variable from the
# object's entry, its generation recorded, bound where mapped; a missing object, a bad map, an inline map
# or all-or-nothing annotations beside a reference are refused. With --webhook-client-ca-file only the
# apiserver (its client certificate) is answered.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

work=$(test_workdir)

# --- certificates, laid out like a Kubernetes Secret volume (tls.crt -> ..data/tls.crt) -------------
test_ca "$work" 2 gs-test-webhook-ca
vol=$work/secret
test_pair "$vol/..v1" 2 "$work"
test_pair "$vol/..v2" 2 "$work"
secret_volume "$vol" ..v1

# The GPUPlacementMap CRD before the daemon starts (a daemon that finds it not served asks again only every
# 30 s); deleted at the end, as test_gpm does.
CRD=gpuplacementmaps.gpu-scheduler.io
NS= kc delete crd "$CRD" --ignore-not-found --wait=true >/dev/null 2>&1
defer "NS= kc delete crd $CRD --ignore-not-found --wait=false >/dev/null 2>&1"
check "the GPUPlacementMap CRD applies" eval 'NS= kc apply -f "$GS_ROOT/deploy/crd/gpuplacementmaps.yaml" >/dev/null'
check_eventually "it is established" 30 crd_established "$CRD"

WPORT=$(free_port)
webhook_register "https://127.0.0.1:$WPORT/mutate" "$work/ca.crt"

# The pods here reuse GPUs across workloads on purpose (the webhook is under test, not the device
# ledger, which tests/integration/test_node_checks.sh covers): the ledger counts but does not refuse.
WEBHOOK_ARGS=(--webhook-addr "127.0.0.1:$WPORT" --tls-cert-file "$vol/tls.crt" --tls-private-key-file "$vol/tls.key"
	--device-sharing=any)
DAEMON_WEBHOOK=1 daemon_start "${WEBHOOK_ARGS[@]}" || exit 1
check "daemon ready" daemon_ready 30

# envs POD: CUDA_VISIBLE_DEVICES of every init container, then every container, space-separated.
envs() {
	kc get pod "$1" -o jsonpath='{range .spec.initContainers[*]}{.env[?(@.name=="CUDA_VISIBLE_DEVICES")].value}{" "}{end}{range .spec.containers[*]}{.env[?(@.name=="CUDA_VISIBLE_DEVICES")].value}{" "}{end}'
}
# cuda_count POD: how many CUDA_VISIBLE_DEVICES entries the pod has in all (a duplicate shows).
cuda_count() {
	kc get pod "$1" -o json | grep -c '"name": "CUDA_VISIBLE_DEVICES"'
}

# webhook_template APP ENTRY...: a pod template with an init container and a sidecar that has its own
# CUDA_VISIBLE_DEVICES (replaced, not duplicated) and another variable (kept).
webhook_template() {
	pod_meta_yaml "$@"
	cat <<YAML
    spec:
      schedulerName: $SCHEDULER_NAME
      terminationGracePeriodSeconds: 0
      initContainers:
      - name: init
        image: busybox:stable
        command: ["true"]
      containers:
      - name: check
        image: busybox:stable
        command: ["sleep", "3600"]
      - name: sidecar
        image: busybox:stable
        command: ["sleep", "3600"]
        env:
        - name: OTHER
          value: kept
        - name: CUDA_VISIBLE_DEVICES
          value: "9"
YAML
}
sts_yaml() { POD_TEMPLATE=webhook_template statefulset_yaml "$@"; } # NAME REPLICAS ENTRY...

# --- the task's StatefulSet, through the webhook -------------------------------------------------------
kc apply -f - >/dev/null <<<"$(sts_yaml gpu-scheduler-check 5 '0=node1:0,1' '1=node2:2' '2=node3:0,1,2' '3=node4:3' '4=node4:3')"
check_eventually "5 pods created" 60 pod_count_is 5 app=gpu-scheduler-check
want_nodes=(node1 node2 node3 node4 node4)
want_devs=(0,1 2 0,1,2 3 3)
for i in 0 1 2 3 4; do
	p=gpu-scheduler-check-$i
	d=${want_devs[i]}
	check "$p: CUDA_VISIBLE_DEVICES=$d in every container and init container" test "$(envs "$p")" = "$d $d $d "
	check "$p: the existing variable replaced, not duplicated" test "$(cuda_count "$p")" = 3
	check "$p: other variables kept" test "$(kc get pod "$p" -o jsonpath='{.spec.containers[1].env[?(@.name=="OTHER")].value}')" = kept
	check_eventually "$p: bound to ${want_nodes[i]}" 30 pod_on "$p" "${want_nodes[i]}"
done

# --- a bare pod without env and with no entry ------------------------------------------------------
kc apply -f - >/dev/null <<<"$(pod_yaml webhook-test-1 '0=node1:0' '1=node3:1,2')"
check "webhook-test-1: env added where there was none" test "$(envs webhook-test-1)" = "1,2 "
check_eventually "webhook-test-1: bound to node3" 20 pod_on webhook-test-1 node3
kout=$(kc apply -f - 2>&1 <<<"$(pod_yaml no-entry-7 '0=node1:0')")
check "no entry: admitted with a warning naming the index" eval "printf '%s' \"\$kout\" | grep -qi 'warning.*7'"
check "no entry: no variable set" test "$(envs no-entry-7)" = " "

# --- a malformed map: refused, the line in the StatefulSet's events and in kubectl's output ----------
kc apply -f - >/dev/null <<<"$(sts_yaml bad-map 2 '0=node1:0' '1 node2:1')"
sts_event() { kc get events --field-selector involvedObject.name=bad-map,involvedObject.kind=StatefulSet \
	-o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -E 'denied.*line 2'; }
check_eventually "malformed map: the StatefulSet's events name line 2" 30 sts_event
check "malformed map: no pod created" pod_count_is 0 app=bad-map
kout=$(kc apply -f - 2>&1 <<<"$(pod_yaml bad-pod-0 '0=node1:0' '1=node2:1' 'x=node3:1')")
check "malformed map: kubectl apply shows the line" eval "printf '%s' \"\$kout\" | grep -q 'line 3'"

# --- all-or-nothing annotations: bad values refused with the parser's message, good ones admitted ---
gang_ann() { printf '    gpu-scheduler.io/placement: all-or-nothing\n    gpu-scheduler.io/gang-timeout: "%s"\n    gpu-scheduler.io/gang-size: "%s"' "$1" "$2"; }
kout=$(kc apply -f - 2>&1 <<<"$(POD_ANNOTATIONS=$(gang_ann 10x 1) pod_yaml gang-bad-0 '0=node1:0')")
check "bad gang-timeout: refused with the parser's message" \
	eval "printf '%s' \"\$kout\" | grep -qF 'denied the request: gpu-scheduler.io/gang-timeout \"10x\" is not a duration'"
check "bad gang-timeout: no pod" eval "! kc get pod gang-bad-0 >/dev/null 2>&1"
kout=$(kc apply -f - 2>&1 <<<"$(POD_ANNOTATIONS=$(gang_ann 10m 3) pod_yaml gang-big-0 '0=node1:0' '1=node2:0')")
want="gang-size 3 is more than the 2 entries of $GS_ANNOTATION: the gang could never complete"
check "gang-size above the map: refused" eval "printf '%s' \"\$kout\" | grep -qF \"\$want\""
kout=$(kc apply -f - 2>&1 <<<"$(POD_ANNOTATIONS=$(gang_ann 1h30m 1) pod_yaml gang-ok-0 '0=node1:0')")
check "good all-or-nothing annotations: admitted" kc get pod gang-ok-0
check "good all-or-nothing annotations: the variable set" test "$(envs gang-ok-0)" = "0 "
kc delete pod gang-ok-0 --wait=false >/dev/null 2>&1

# --- maps by reference: a GPUPlacementMap and a StatefulSet naming it -----------------------------------
REF='gpu-scheduler.io/placement-map'
gpm_apply wm '0=node1:3\n1=node2:0' >/dev/null
gpm_apply wm '0=node1:2\n1=node2:0,3\n2=node3:1' >/dev/null # generation 2: the one the webhook must record
wm_gen=$(kc get gpm wm -o jsonpath='{.metadata.generation}')
check "the object is at generation 2" equals 2 echo "$wm_gen"
check_eventually "the daemon holds it at that generation (its status says so)" 20 \
	equals "$wm_gen" kc get gpm wm -o jsonpath='{.status.observedGeneration}'
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS="$REF: wm" sts_yaml wm 3)"
check_eventually "by reference: 3 pods created" 60 pod_count_is 3 app=wm
ref_gen() { kc get pod "$1" -o jsonpath='{.metadata.annotations.gpu-scheduler\.io/placement-map-generation}'; }
want_devs=(2 0,3 1)
for i in 0 1 2; do
	d=${want_devs[i]}
	check "wm-$i: CUDA_VISIBLE_DEVICES=$d from the object's entry in every container and init container" \
		test "$(envs "wm-$i")" = "$d $d $d "
	check "wm-$i: the generation annotation is the object's metadata.generation" equals "$wm_gen" ref_gen "wm-$i"
	check_eventually "wm-$i: bound to node$((i + 1))" 30 pod_on "wm-$i" "node$((i + 1))"
done
kout=$(kc apply -f - 2>&1 <<<"$(POD_ANNOTATIONS="    $REF: nope" pod_yaml nope-0)")
check "a reference to a missing object: refused, naming it" \
	eval "printf '%s' \"\$kout\" | grep -qF 'denied the request: GPUPlacementMap $NS/nope not found'"
check "a reference to a missing object: no pod" eval "! kc get pod nope-0 >/dev/null 2>&1"
gpm_apply wbad '0=node1:0\n1 node2:1' >/dev/null
check_eventually "the daemon holds the object with a bad map" 20 equals 2 metric gpu_scheduler_placement_maps
kout=$(kc apply -f - 2>&1 <<<"$(POD_ANNOTATIONS="    $REF: wbad" pod_yaml wbad-0)")
check "an object whose map does not parse: refused with the line" \
	eval "printf '%s' \"\$kout\" | grep -qE 'denied the request: GPUPlacementMap $NS/wbad: line 2'"
kout=$(kc apply -f - 2>&1 <<<"$(POD_ANNOTATIONS="    $REF: wm" pod_yaml both-0 '0=node1:0')")
check "an inline map beside a reference: refused, naming both" \
	eval "printf '%s' \"\$kout\" | grep -qF 'denied the request: the annotations $GS_ANNOTATION and $REF are both set'"
kout=$(kc apply -f - 2>&1 <<<"$(POD_ANNOTATIONS="    $REF: wm"$'\n'"$(gang_ann 10m 1)" pod_yaml gref-0)")
check "an all-or-nothing annotation beside a reference: refused" \
	eval "printf '%s' \"\$kout\" | grep -qE 'denied the request: the annotation gpu-scheduler.io/(placement|gang-timeout|gang-size) is set beside $REF'"
check "none of the refused pods exists" eval \
	'for p in wbad-0 both-0 gref-0; do ! kc get pod $p >/dev/null 2>&1 || exit 1; done'

# --- bad requests to /mutate: clear HTTP errors, never a crash or a hang ---------------------------
wcurl() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$work/ca.crt" "$@"; }
U=https://127.0.0.1:$WPORT/mutate
check "garbage body: 400" test "$(wcurl -H 'Content-Type: application/json' --data-binary 'not json' "$U")" = 400
check "truncated AdmissionReview: 400" test "$(wcurl -H 'Content-Type: application/json' --data-binary '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1"' "$U")" = 400
check "wrong content type: 400" test "$(wcurl -H 'Content-Type: text/plain' --data-binary '{}' "$U")" = 400
check "GET /mutate: 405" test "$(wcurl "$U")" = 405
check "another path: 404" test "$(wcurl "https://127.0.0.1:$WPORT/other")" = 404
head -c $((8 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$work/big.json"
check "an 8 MiB body: 413" test "$(wcurl -H 'Content-Type: application/json' --data-binary "@$work/big.json" "$U")" = 413
check "the daemon is still alive" daemon_alive

# --- TLS policy ---------------------------------------------------------------------------------------
tls_ok() { openssl s_client -connect "127.0.0.1:$WPORT" "$@" </dev/null >/dev/null 2>&1; }
check "TLS 1.2 with ECDHE-AEAD accepted" tls_ok -tls1_2 -CAfile "$work/ca.crt" -verify_return_error
check "TLS 1.1 refused" eval "! tls_ok -tls1_1 -cipher DEFAULT@SECLEVEL=0"
check "TLS 1.0 refused" eval "! tls_ok -tls1 -cipher DEFAULT@SECLEVEL=0"
check "a CBC suite refused" eval "! tls_ok -tls1_2 -cipher ECDHE-ECDSA-AES128-SHA"
check "a static-RSA suite refused" eval "! tls_ok -tls1_2 -cipher AES128-GCM-SHA256"

# --- certificates swapped while pods are created ---------------------------------------------------------
served_serial() { openssl s_client -connect "127.0.0.1:$WPORT" </dev/null 2>/dev/null | openssl x509 -noout -serial; }
v2_serial=$(openssl x509 -in "$vol/..v2/tls.crt" -noout -serial)
mapfile -t M30 < <(for i in $(seq 0 29); do echo "$i=node$((i % 4 + 1)):$((i % 4))"; done)
creators=()
for i in $(seq 0 29); do
	kc apply -f - >/dev/null 2>&1 <<<"$(pod_yaml "rot-$i" "${M30[@]}")" &
	creators+=($!)
	[ "$i" = 5 ] && secret_swap "$vol" ..v2
	sleep 0.5
done
wait "${creators[@]}"
check "rotation: all 30 pods admitted" test "$(kc get pods -o name | grep -c '/rot-')" = 30
bad=0
for i in $(seq 0 29); do [ "$(envs "rot-$i")" = "$((i % 4)) " ] || bad=$((bad + 1)); done
check "rotation: every pod got its variable ($bad without)" test "$bad" = 0
check_eventually "rotation: the new certificate is served" 15 eval '[ "$(served_serial)" = "$v2_serial" ]'
check "rotation: counted as a reload" test "$(metric 'gpu_scheduler_webhook_cert_reloads_total{result="success"}')" = 1
check "rotation: no admission failed" test "$(metric 'gpu_scheduler_webhook_errors_total{kind="internal"}')" = 0

# --- the webhook down while pods are created -----------------------------------------------------------
daemon_stop TERM 15
kc apply -f - >/dev/null <<<"$(sts_yaml down 3 '0=node1:1' '1=node2:1' '2=node3:1')"
kc apply -f - >/dev/null <<<"$(pod_yaml down-bare-0 '0=node4:2')"
check_eventually "webhook down: 3 pods created anyway (failurePolicy Ignore)" 60 pod_count_is 3 app=down
check "webhook down: created without the variable (the sidecar keeps its 9)" test "$(envs down-0)" = "  9 "
DAEMON_WEBHOOK=1 daemon_start "${WEBHOOK_ARGS[@]}" || exit 1
down_ok() {
	local i
	for i in 0 1 2; do
		[ "$(envs "down-$i")" = "1 1 1 " ] && [ "$(pod_node "down-$i")" = "node$((i + 1))" ] || return 1
	done
}
check_eventually "webhook back: the StatefulSet's pods recreated through it and bound" 60 down_ok
check "webhook back: the unmutated pods were deleted, not bound" \
	test "$(metric gpu_scheduler_unmutated_deleted_total)" -ge 3
check_eventually "a bare unmutated pod waits with an event" 20 pod_event_has down-bare-0 'FailedScheduling: .*CUDA_VISIBLE_DEVICES'
check "and is not bound" test -z "$(pod_node down-bare-0)"
unbound_without() { kc get pods -o jsonpath='{range .items[?(@.spec.nodeName)]}{.metadata.name}{"\n"}{end}' |
	while read -r p; do [ -n "$(envs "$p" | tr -d ' ')" ] || echo "$p"; done; }
check "no pod was bound without the variable" test -z "$(unbound_without | grep -v '^no-entry' || true)"

scrape=$(daemon_http /metrics)
for m in gpu_scheduler_webhook_reviews_total gpu_scheduler_webhook_review_duration_seconds_bucket \
	gpu_scheduler_webhook_cert_not_after_seconds gpu_scheduler_webhook_tls_handshake_failures_total \
	gpu_scheduler_webhook_connections_total; do
	check "/metrics has $m" grep -q "^$m" <<<"$scrape"
done
check "review durations resolve below a millisecond (a 100 us bucket)" \
	grep -q '^gpu_scheduler_webhook_review_duration_seconds_bucket{le="0.0001"}' <<<"$scrape"
check "the apiserver's connections to the webhook were counted" \
	awk '$1 == "gpu_scheduler_webhook_connections_total" && $2 >= 1 { ok = 1 } END { exit !ok }' <<<"$scrape"

# --- who may call the webhook: the apiserver alone (issue 36) ------------------------------------------
# The cluster's apiserver shows webhooks a certificate of a CA of its own (tests/cluster/cluster.sh,
# admission_config); with --webhook-client-ca-file the webhook completes a handshake with no one else.
daemon_stop TERM 15
DAEMON_WEBHOOK=1 daemon_start "${WEBHOOK_ARGS[@]}" --webhook-client-ca-file "$GS_WEBHOOK_CLIENT_CA" || exit 1
check "daemon ready with --webhook-client-ca-file" daemon_ready 30
fails0=$(metric gpu_scheduler_webhook_tls_handshake_failures_total)
kc apply -f - >/dev/null <<<"$(pod_yaml mtls-0 '0=node1:3')"
check "the apiserver, with its certificate: the pod gets its variable" test "$(envs mtls-0 | tr -d ' ')" = 3
check "no client certificate: no answer (the handshake refused)" \
	test "$(wcurl -H 'Content-Type: application/json' --data-binary 'not json' "$U")" = 000
check "a certificate of the cluster CA, not the apiserver's: refused" test "$(wcurl --cert "$GS_CLUSTER_DIR/pki/admin.crt" \
	--key "$GS_CLUSTER_DIR/pki/admin.key" -H 'Content-Type: application/json' --data-binary 'not json' "$U")" = 000
check "the apiserver's certificate: answered (400: no review)" test "$(wcurl --cert "$GS_WEBHOOK_CLIENT_CERT" \
	--key "$GS_WEBHOOK_CLIENT_KEY" -H 'Content-Type: application/json' --data-binary 'not json' "$U")" = 400
check "the refused handshakes counted" awk -v a="$fails0" -v b="$(metric gpu_scheduler_webhook_tls_handshake_failures_total)" \
	'BEGIN { exit !(b >= a + 2) }'
daemon_stop TERM 15 && pass "SIGTERM: exit 0"
test_end
