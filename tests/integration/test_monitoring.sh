#!/usr/bin/env bash
# deploy/monitoring/ against the daemon's real /metrics: the PrometheusRule's rules and every dashboard
# expression pass `promtool check rules`; the dashboard's structure is what Grafana needs (checked here:
# Grafana itself is not available); every metric they name is one the daemon exports; and each alert,
# evaluated by `promtool test rules` on series built from scrapes of the running daemon (a bound pod, pods
# waiting with two reasons, reviews through its webhook, a webhook certificate expiring in 10 days and
# then renewed for 60), fires when its condition holds and not otherwise (tests/tools/monitoring_gen.py).
# The per-workload GPU series: two running mapped pods on two nodes, one whose agent data gives the
# GPU's UUID, in gpu_scheduler_mapped_gpu_info, and the recording rules joining them with synthetic
# dcgm-exporter series (by UUID; by node and index) checked by promtool; --mapped-gpu-series bounds it.
# And a real Prometheus (Debian's) scrapes the daemon's secure port as the ServiceMonitor says, with a
# ServiceAccount token bound by deploy/monitoring/rbac.yaml: up 1 and the daemon's series stored; the
# same scrape with the token of a ServiceAccount without the role is refused (up 0, 403).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

MON=$GS_ROOT/deploy/monitoring
GEN=$GS_ROOT/tests/tools/monitoring_gen.py
work=$(test_workdir)

# --- the files alone ----------------------------------------------------------------------------------
check "PrometheusRule: spec.groups extracted" eval 'python3 "$GEN" rules "$MON/prometheusrule.yaml" >"$work/rules.yml"'
check "promtool check rules: the alerts" promtool check rules "$work/rules.yml"
check "dashboard: structure (ids, datasources, targets), one recording rule per expression" \
	eval 'python3 "$GEN" dashboard "$MON/dashboard.json" >"$work/dashboard-rules.yml"'
check "promtool check rules: every dashboard expression" promtool check rules "$work/dashboard-rules.yml"
# The checker refuses what it should: a panel id used twice, a target without expr, an unknown variable.
python3 - "$MON/dashboard.json" "$work" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = [x for x in d["panels"] if x["type"] != "row"]
bad = json.loads(json.dumps(d)); [x for x in bad["panels"] if x["type"] != "row"][1]["id"] = p[0]["id"]
json.dump(bad, open(sys.argv[2] + "/bad-id.json", "w"))
bad = json.loads(json.dumps(d)); del [x for x in bad["panels"] if x["type"] != "row"][2]["targets"][0]["expr"]
json.dump(bad, open(sys.argv[2] + "/bad-expr.json", "w"))
bad = json.loads(json.dumps(d)); [x for x in bad["panels"] if x["type"] != "row"][3]["targets"][0]["expr"] += " * $nope"
json.dump(bad, open(sys.argv[2] + "/bad-var.json", "w"))
EOF
for b in bad-id bad-expr bad-var; do
	check "dashboard checker refuses $b" eval '! python3 "$GEN" dashboard "$work/$b.json" >/dev/null 2>"$work/$b.err"'
done
if command -v kubectl >/dev/null && kubectl kustomize --help >/dev/null 2>&1; then
	check "kustomize renders deploy/monitoring (Service, ServiceMonitor, PrometheusRule, dashboard ConfigMap)" \
		eval '[ "$(kubectl kustomize "$MON" | grep -cE "^kind: (Service|ServiceMonitor|PrometheusRule|ConfigMap)$")" = 4 ]'
fi

# --- a running daemon with a webhook whose certificate expires in 10 days --------------------------------
test_ca "$work" 90 gs-test-monitoring-ca
vol=$work/secret
test_pair "$vol/..short" 10 "$work"
test_pair "$vol/..long" 60 "$work"
secret_volume "$vol" ..short

WPORT=$(free_port)
webhook_register "https://127.0.0.1:$WPORT/mutate" "$work/ca.crt"
DAEMON_WEBHOOK=1 daemon_start --webhook-addr "127.0.0.1:$WPORT" --tls-cert-file "$vol/tls.crt" \
	--tls-private-key-file "$vol/tls.key" || exit 1
check "daemon ready" daemon_ready 30

MISSING=gs-mon-missing-$(printf '%04x' $RANDOM)
kc apply -f - >/dev/null <<<"$(pod_yaml mon-bound-0 '0=node1:0')"
kc apply -f - >/dev/null <<<"$(pod_yaml mon-missing-0 "0=$MISSING:1")"
kc apply -f - >/dev/null <<<"$(pod_yaml mon-noentry-5 '0=node1:2')"
check_eventually "a pod bound" 20 pod_on mon-bound-0 node1

# Two mapped pods running (no kubelet here: their status says so) on two nodes of their own; the first
# node's agent data (written as the agent writes it) gives its GPUs' UUIDs, the second has none.
M=gs-mon-$(printf '%04x' $RANDOM)
node_make "$M-a" && node_make "$M-b"
defer "node_delete $M-a; node_delete $M-b"
kc annotate node "$M-a" --overwrite "gpu-scheduler.io/devices-in-use=$(printf 'v1 %s\nindex 0=GPU-%s-0 1=GPU-%s-1' \
	"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$M" "$M")" >/dev/null
kc apply -f - >/dev/null <<<"$(pod_yaml mon-gpu-0 "0=$M-a:1")"
kc apply -f - >/dev/null <<<"$(pod_yaml mon-gpu-1 "1=$M-b:2")"
check_eventually "both bound" 20 eval 'pod_on mon-gpu-0 "$M-a" && pod_on mon-gpu-1 "$M-b"'
for p in mon-gpu-0 mon-gpu-1; do
	kc patch pod "$p" --subresource=status --type=merge -p '{"status":{"phase":"Running"}}' >/dev/null
done
check_eventually "gpu_scheduler_mapped_gpu_info: GPU 1 of $M-a, its UUID from the agent's table, index 0 of mon-gpu-0" 20 \
	eval '[ "$(metric "gpu_scheduler_mapped_gpu_info{node=\"$M-a\",gpu=\"1\",uuid=\"GPU-$M-1\",namespace=\"$NS\",pod=\"mon-gpu-0\",map_index=\"0\"}")" = 1 ]'
check "... GPU 2 of $M-b (no agent: no UUID), index 1 of mon-gpu-1" eval \
	'[ "$(metric "gpu_scheduler_mapped_gpu_info{node=\"$M-b\",gpu=\"2\",namespace=\"$NS\",pod=\"mon-gpu-1\",map_index=\"1\"}")" = 1 ]'
check "... and not mon-bound-0, bound but not running; none omitted" eval \
	'! daemon_http /metrics | grep -q "pod=\"mon-bound-0\"" && [ "$(metric gpu_scheduler_mapped_gpu_info_omitted)" = 0 ]'
age() { metric "gpu_scheduler_waiting_pods_max_age_seconds{reason=\"$1\"}"; }
check_eventually "waiting pods: NODE_MISSING and NO_ENTRY counted" 20 eval \
	'[ "$(metric "gpu_scheduler_waiting_pods_by_reason{reason=\"NODE_MISSING\"}")" = 1 ] &&
	 [ "$(metric "gpu_scheduler_waiting_pods_by_reason{reason=\"NO_ENTRY\"}")" = 1 ]'
# The new gauge is the age of the oldest waiting pod: now minus its creationTimestamp.
sleep 2
created=$(date -d "$(kc get pod mon-missing-0 -o jsonpath='{.metadata.creationTimestamp}')" +%s)
a=$(age NODE_MISSING)
check "NODE_MISSING age $a s is now - creationTimestamp ($(($(date +%s) - created)) s), within 2 s" \
	awk -v a="$a" -v c="$created" -v n="$(date +%s)" 'BEGIN { d = n - c - a; exit !(a > 0 && d > -2 && d < 2) }'
check "a reason without waiting pods has age 0" eval '[ "$(age TAINT)" = 0 ]'

check_eventually "webhook reviews counted (2 patched, 1 warned: no entry for index 5)" 10 eval \
	'[ "$(metric "gpu_scheduler_webhook_reviews_total{result=\"patched\"}")" -ge 2 ] && [ "$(metric "gpu_scheduler_webhook_reviews_total{result=\"warned\"}")" -ge 1 ]'
daemon_http /metrics >"$work/short.prom"
now_short=$(date +%s)
check "promtool check metrics: the exposition" eval 'promtool check metrics <"$work/short.prom"'
check "every metric the rules name is exported" python3 "$GEN" names "$work/short.prom" "$MON/prometheusrule.yaml"
check "every metric the dashboard names is exported, every recorded series it reads a rule's" \
	python3 "$GEN" names "$work/short.prom" "$MON/dashboard.json" "$MON/prometheusrule.yaml"
check "a name the daemon does not export is caught" eval \
	'! python3 "$GEN" names "$work/short.prom" <(echo "rate(gpu_scheduler_no_such_thing_total[5m])") 2>/dev/null'
check "a recorded series no rule records is caught" eval \
	'! python3 "$GEN" names "$work/short.prom" "$MON/prometheusrule.yaml" <(echo "gpu_scheduler:no_such:rule") 2>/dev/null'

# --- the certificate renewed (a Secret volume's symlink swap): 60 days ------------------------------------
reloads=$(metric 'gpu_scheduler_webhook_cert_reloads_total{result="success"}')
secret_swap "$vol" ..long
check_eventually "renewed certificate reloaded" 25 eval \
	'[ "$(metric "gpu_scheduler_webhook_cert_reloads_total{result=\"success\"}")" -gt "$reloads" ]'
daemon_http /metrics >"$work/long.prom"
now_long=$(date +%s)

# --- a real Prometheus scrapes the secure port with its ServiceAccount token -------------------------------
# deploy/rbac.yaml's metrics-reader ClusterRole and deploy/monitoring/rbac.yaml's binding, under test
# names, the binding's subject a ServiceAccount of the test namespace (the deployed one names
# monitoring/prometheus-k8s).
python3 - "$GS_ROOT/deploy/rbac.yaml" "$MON/rbac.yaml" "gs-test-$NS" "$NS" >"$work/prom-rbac.yaml" <<'EOF'
import sys, yaml
name, ns = sys.argv[3], sys.argv[4]
role = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["metadata"]["name"] == "gpu-scheduler-metrics-reader"]
binding = list(yaml.safe_load_all(open(sys.argv[2])))
assert len(role) == 1 and len(binding) == 1 and binding[0]["roleRef"]["name"] == "gpu-scheduler-metrics-reader"
role[0]["metadata"]["name"] = binding[0]["metadata"]["name"] = binding[0]["roleRef"]["name"] = name
binding[0]["subjects"] = [{"kind": "ServiceAccount", "name": "prometheus", "namespace": ns}]
print(yaml.safe_dump_all(role + binding))
EOF
defer "NS= kc delete clusterrole gs-test-$NS >/dev/null 2>&1; NS= kc delete clusterrolebinding gs-test-$NS >/dev/null 2>&1"
check "deploy/monitoring/rbac.yaml's binding (and its ClusterRole) apply" eval 'NS= kc apply -f "$work/prom-rbac.yaml" >/dev/null'
kc create serviceaccount prometheus >/dev/null
kc create serviceaccount nobody >/dev/null
check_eventually "ServiceAccount tokens minted" 30 eval \
	'sa_token prometheus >"$work/prom.token" && sa_token nobody >"$work/nobody.token"'
target=${DAEMON_SECURE_URL#https://}
python3 "$GEN" scrape-config "$MON/servicemonitor.yaml" "$target" "$work/prom.token" >"$work/prom.yml" &&
	python3 "$GEN" scrape-config "$MON/servicemonitor.yaml" "$target" "$work/nobody.token" nobody >"$work/nobody.yml" &&
	python3 -c 'import sys, yaml; a = yaml.safe_load(open(sys.argv[1])); a["scrape_configs"] += yaml.safe_load(open(sys.argv[2]))["scrape_configs"]; yaml.safe_dump(a, open(sys.argv[1], "w"))' \
		"$work/prom.yml" "$work/nobody.yml"
check "Prometheus configuration from the ServiceMonitor (https, bearer token file)" promtool check config "$work/prom.yml"
pport=$(free_port)
prometheus --config.file="$work/prom.yml" --storage.tsdb.path="$work/tsdb" --web.listen-address="127.0.0.1:$pport" \
	>"$work/prometheus.log" 2>&1 &
prom=$!
defer "kill $prom 2>/dev/null || true"
# pq QUERY: the first value of an instant query ("" when none).
pq() { curl -sf --max-time 2 "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // ""'; }
check_eventually "Prometheus scrapes the secure port with the bound token: up 1" 30 eval '[ "$(pq "up{job=\"gpu-scheduler-metrics\"}")" = 1 ]'
check "... and stores the daemon's series (gpu_scheduler_ready 1)" eval '[ "$(pq "gpu_scheduler_ready{job=\"gpu-scheduler-metrics\"}")" = 1 ]'
# honorLabels: the mapped GPU's namespace and pod are the workload's, not the scraped target's (which
# every other series keeps: kube-system/gpu-scheduler-0 here, as the Operator labels the target).
check_eventually "... the mapped GPU's series keeps its own namespace and pod (honorLabels)" 10 eval \
	'[ "$(pq "count(gpu_scheduler_mapped_gpu_info{namespace=\"$NS\",pod=\"mon-gpu-0\"})")" = 1 ]'
check "... and the daemon's own series the target's" eval \
	'[ "$(pq "count(gpu_scheduler_ready{namespace=\"kube-system\",pod=\"gpu-scheduler-0\"})")" = 1 ]'
check_eventually "the same scrape with a token without the role: up 0" 30 eval '[ "$(pq "up{job=\"nobody\"}")" = 0 ]'
check "... refused with 403" eval 'curl -sf "http://127.0.0.1:$pport/api/v1/targets" |
	jq -r ".data.activeTargets[] | select(.labels.job == \"nobody\") | .lastError" | grep -q 403'
kill "$prom" 2>/dev/null

# --- every alert evaluated by promtool on series from the scrapes ----------------------------------------
check "rules for promtool test (annotations dropped)" eval \
	'python3 "$GEN" rules "$MON/prometheusrule.yaml" --no-annotations >"$work/rules-test.yml"'
check "alert tests generated from the scrapes" eval 'python3 "$GEN" alert-tests "$work/short.prom" "$now_short" \
	"$work/long.prom" "$now_long" "$work/rules-test.yml" >"$work/alerts.test.yml"'
check "the tests cover every alert (10)" eval \
	'[ "$(grep -oE "alertname: \w+" "$work/alerts.test.yml" | sort -u | wc -l)" = 10 ]'
check "... and the per-workload recording rules (promql_expr_test)" grep -q "gpu_scheduler:mapped_gpu_utilization:percent" \
	"$work/alerts.test.yml"
check "promtool test rules: each alert fires when its condition holds, not otherwise" eval \
	'promtool test rules "$work/alerts.test.yml" >"$work/promtool-test.txt" 2>&1 || { cat "$work/promtool-test.txt"; false; }'
# The same tests fail against rules with the thresholds moved: they can fail.
sed -e 's/> 600/> 6000/; s/14 \* 86400/1 * 86400/; s/> 0.05/> 0.5/; s/> 0.1$/> 1/; s/\[15m\])) > 0/[15m])) > 1/; s/\[1h\])) >= 3/[1h])) >= 30/' \
	-e 's/:percent == 0/:percent > 100/; s/on (uuid) group_right/on (uuid, gpu) group_right/' \
	"$work/rules-test.yml" >"$work/rules-moved.yml"
sed "s|$work/rules-test.yml|$work/rules-moved.yml|" "$work/alerts.test.yml" >"$work/alerts-moved.test.yml"
promtool test rules "$work/alerts-moved.test.yml" >"$work/promtool-moved.txt" 2>&1
n=$(grep -cE 'alertname: Gpu' "$work/promtool-moved.txt")
check "with every threshold moved, promtool test rules fails for each of the 7 alerts moved (failures: $n)" eval \
	'[ "$n" -ge 7 ] && for a in PodsWaitingTooLong WebhookCertificateExpiring BindingErrors WebhookSlow DeviceConflict GangTimeouts MappedGpuIdle; do
		grep -q "alertname: GpuScheduler$a" "$work/promtool-moved.txt" || exit 1; done'
check "... and the join by UUID broken, the recording rules' test fails" grep -q "expr: \"gpu_scheduler:mapped_gpu_utilization:percent\"" \
	"$work/promtool-moved.txt"

# --- --mapped-gpu-series bounds the per-workload series ------------------------------------------------
daemon_stop
daemon_start --mapped-gpu-series 1 || exit 1
check "daemon ready (--mapped-gpu-series 1)" daemon_ready 30
check_eventually "one mapped GPU shown, the other counted in gpu_scheduler_mapped_gpu_info_omitted" 20 eval \
	'[ "$(daemon_http /metrics | grep -c "^gpu_scheduler_mapped_gpu_info{")" = 1 ] && [ "$(metric gpu_scheduler_mapped_gpu_info_omitted)" = 1 ]'

test_end
