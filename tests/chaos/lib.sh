# shellcheck shell=bash
# tests/chaos/lib.sh: what the chaos scripts share, sourced after tests/lib.sh (and
# tests/integration/common.sh when they need it). The conventions of the suite:
#
#   tests/chaos/chaos_NAME.sh   one fault, one script, run against the cluster in $GS_CLUSTER_DIR like an
#                               integration test (test_begin ... test_end, results through tests/lib.sh)
#   GS_CHAOS_SIZE=short|full    short (default): small enough for `make test` (tests/chaos/
#                               test_chaos.sh runs every script so, all of them within ~4 minutes on
#                               2 cores); full: the size docs/reliability.md reports (`make chaos`)
#   tests/chaos/test_NAME.sh    a chaos test tests/run-all.sh runs in `make test`, in the phase its line
#                               "# phase: integration" or "# phase: e2e" names (test_chaos.sh: the
#                               chaos_*.sh scripts short; test_chaos_webhook.sh: the e2e cluster's webhook)
#   size SHORT FULL             prints the value for the current size: N=$(size 500 5000)
#   chaos_note TEXT             a measured figure: printed, and appended to $GS_TEST_LOGS/chaos-figures.txt
#                               (with the script and the size) for docs/reliability.md
#
# Helpers:
#   chaos_nodes_make N          Ready nodes $CHAOS_PREFIX-n0..n(N-1) with 1,000 pod slots and
#                               $CHAOS_GPUS nvidia.com/gpu each, deleted at exit; sets CHAOS_NODES
#                               (comma-separated, for pods.py)
#   chaos_pods create|delete|verify ...   tests/tools/pods.py (see there) with the cluster's env
#   kube_metric NAME [LABELS_REGEX]       sum of a daemon metric's series whose labels match
#   apiserver_metrics           the apiserver's /metrics (admin token)
#   kill_apiserver              tests/cluster/cluster.sh kill-apiserver: SIGKILL by recorded PID, restart,
#                               wait for /readyz

GS_CHAOS_SIZE=${GS_CHAOS_SIZE:-short}
case $GS_CHAOS_SIZE in short | full) ;; *) echo "GS_CHAOS_SIZE must be short or full" >&2; exit 2 ;; esac
CHAOS_DIR=$GS_ROOT/tests/chaos
CHAOS_GPUS=${CHAOS_GPUS:-4}
CHAOS_PREFIX=${CHAOS_PREFIX:-chaos$(printf '%04x' $RANDOM)}
# shellcheck disable=SC2034 # set by chaos_nodes_make, read by the scripts
CHAOS_NODES=

size() { if [ "$GS_CHAOS_SIZE" = full ]; then echo "$2"; else echo "$1"; fi; }

chaos_note() {
	mkdir -p "$GS_TEST_LOGS"
	printf '  figure: %s\n' "$1"
	printf '%s %s (%s): %s\n' "$(date -u +%FT%TZ)" "$T_NAME" "$GS_CHAOS_SIZE" "$1" >>"$GS_TEST_LOGS/chaos-figures.txt"
}

chaos_nodes_make() {
	local i name now res list=
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	res="{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"1000\",\"nvidia.com/gpu\":\"$CHAOS_GPUS\"}"
	for ((i = 0; i < $1; i++)); do
		name=$CHAOS_PREFIX-n$i
		api POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$name\",
			\"labels\":{\"kubernetes.io/hostname\":\"$name\",\"gpu-scheduler.test/fake\":\"true\"}}}" >/dev/null || return 1
		defer "api DELETE /api/v1/nodes/$name >/dev/null"
		api PATCH "/api/v1/nodes/$name" '{"spec":{"taints":null}}' application/merge-patch+json >/dev/null
		api PATCH "/api/v1/nodes/$name/status" "{\"status\":{\"capacity\":$res,\"allocatable\":$res,
			\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Chaos\",
			\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}]}}" application/merge-patch+json >/dev/null ||
			return 1
		list+=${list:+,}$name
	done
	# shellcheck disable=SC2034
	CHAOS_NODES=$list
}

chaos_pods() {
	GS_APISERVER_URL=$GS_APISERVER_URL GS_CLUSTER_CA=$GS_CLUSTER_CA GS_CLUSTER_DIR=$GS_CLUSTER_DIR \
		python3 "$GS_ROOT/tests/tools/pods.py" "$@"
}

kube_metric() {
	daemon_http /metrics | awk -v n="$1" -v re="${2:-}" '
		{ name = $1; sub(/\{.*/, "", name) }
		name == n && (re == "" || $1 ~ re) { s += $2 }
		END { printf "%d\n", s }'
}

apiserver_metrics() { api GET /metrics; }

kill_apiserver() { "$GS_ROOT/tests/cluster/cluster.sh" kill-apiserver; }
