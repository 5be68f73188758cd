# shellcheck shell=bash
# tests/lib.sh: helpers for tests/integration/test_*.sh, sourced. See docs/cluster.md.
#
#   . "$(dirname "$0")/../lib.sh"
#   test_begin                        # namespace $NS, cleanup at exit, results protocol
#   work=$(test_workdir)              # a fresh directory for the test's files, if it needs one
#   kc apply -f - <<<"$(statefulset_yaml web 3 '0=node1:0' '1=node2:0,1' '2=node3:3')"
#   check_eventually "3 pods created" 30 pod_count_is 3
#   daemon_start && daemon_ready 30
#   ...
#   test_end                          # exit status: 0 when nothing failed
#
# Results protocol (tests/run-all.sh): every check appends one line "PASS <test>: <what>" or
# "FAIL <test>: <what>: <why>" to $GS_RESULTS; run-all counts them. A test script that exits non-zero
# without having recorded a failure gets one recorded for it, so a crash never passes silently.
# Run standalone (no GS_RESULTS), a test prints its own "N passed, N failed" line.
#
# Helpers (all take effect in the test namespace $NS unless they say otherwise):
#   kc ARGS...                      kubectl with the cluster kubeconfig and -n $NS
#   api METHOD PATH [BODY [TYPE]]   curl to the apiserver as admin (API_TOKEN=... for another identity);
#                                   prints the body; returns 0 on 2xx, 1 otherwise (body still printed)
#   api_code METHOD PATH [BODY [TYPE]]  prints only the HTTP status code
#   as_token TOKEN CMD...           CMD's api/api_code calls use TOKEN: as_token "$t" api_code GET /api
#   pass WHAT / fail WHAT [WHY]     record a result
#   check WHAT CMD...               run CMD once: pass or fail (with CMD's last output lines)
#   wait_for WHAT TIMEOUT CMD...    poll CMD every $GS_POLL s (0.5) until it succeeds; 0 or 1, records nothing
#   check_eventually WHAT TIMEOUT CMD...   wait_for, then pass or fail
#   equals WANT CMD...              CMD prints exactly WANT: check "x" equals 3 pod_count
#   defer 'SHELL CODE'              run at exit, last registered first (cluster-scoped objects, ...)
#   daemon_start [ARGS...]          build/gpu-scheduler in the background; sets DAEMON_PID, DAEMON_LOG,
#                                   DAEMON_URL (health address), DAEMON_SECURE_URL (--secure-addr, a
#                                   free port); waits for /healthz. --insecure-debug-and-metrics unless
#                                   DAEMON_INSECURE=0: the tests read /metrics and /debug on DAEMON_URL
#                                   (test_secure_serving checks the secure port and the default);
#                                   --engine-audit unless DAEMON_AUDIT=0
#   daemon_ready TIMEOUT            wait for /readyz "ok"
#   daemon_stop [SIGNAL [TIMEOUT]]  stop it, DAEMON_RC = exit status; a status other than
#                                   $DAEMON_EXPECT_RC (0) or a sanitizer report in the log is a FAIL
#   daemon_alive                    0 while the daemon process runs
#   map_annotation ENTRY...         the gpu-scheduling-map annotation as a YAML mapping entry
#                                   (INDENT=N spaces, default 0)
#   statefulset_yaml NAME REPLICAS [ENTRY...]        manifests with schedulerName $SCHEDULER_NAME
#   job_yaml NAME COMPLETIONS PARALLELISM [ENTRY...] (POD_GPUS=N adds an nvidia.com/gpu limit)
#                                   with POD_TEMPLATE=FUNC, both take their pod template from
#                                   FUNC APP [ENTRY...] (pod_meta_yaml, then a spec of its own)
#   pod_meta_yaml APP [ENTRY...]    a pod template's metadata (label app=APP, the map), at 4 spaces
#   pod_count [SELECTOR]            number of pods in $NS (matching the label selector)
#   crd_established NAME            the CRD's Established condition is True (poll it with
#                                   check_eventually: `kubectl wait` errors out on a CRD just created,
#                                   which has no status.conditions yet)
#   pod_count_is N [SELECTOR]       test form of it
#   priority_classes NAME=VALUE[:Never]...  PriorityClasses $PC-NAME made (a check), deleted at the end
#   bind_pod POD NODE               POST the binding subresource as the scheduler would
#   sa_token SA                     a token for ServiceAccount SA in $NS from the TokenRequest API (an
#                                   hour; since 1.24 no Secret holds one unless asked for)
#   server_minor                    the apiserver's minor version (20, 37, ...): behaviour that changed
#                                   between Kubernetes versions is checked as the running one has it
#   force_delete_pods [SELECTOR]    grace period 0: pods bound to kubelet-less nodes never go otherwise
#   restart_apiserver               tests/cluster/cluster.sh restart-apiserver
#   test_workdir                    prints $GS_TEST_LOGS/<test>, made empty: the test's own files
#                                   (certificates, kubeconfigs, logs), kept after the run for a look
#
# Environment: GS_BUILD (build), GS_CLUSTER_DIR (<GS_BUILD>/cluster), GS_KEEP_NS=1 keeps the namespace,
# GS_DAEMON_BIN (<GS_BUILD>/gpu-scheduler), GS_TEST_LOGS (<GS_BUILD>/test-logs), TEST_ASSET_KUBECTL.

GS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GS_BUILD=${GS_BUILD:-build}
case $GS_BUILD in /*) GS_BUILD_DIR=$GS_BUILD ;; *) GS_BUILD_DIR=$GS_ROOT/$GS_BUILD ;; esac
GS_CLUSTER_DIR=${GS_CLUSTER_DIR:-$GS_BUILD_DIR/cluster}
GS_TEST_LOGS=${GS_TEST_LOGS:-$GS_BUILD_DIR/test-logs}
GS_DAEMON_BIN=${GS_DAEMON_BIN:-$GS_BUILD_DIR/gpu-scheduler}
GS_KUBECTL=${TEST_ASSET_KUBECTL:-kubectl}
GS_POLL=${GS_POLL:-0.5}
SCHEDULER_NAME=${SCHEDULER_NAME:-gpu-scheduler}
GS_ANNOTATION=${GS_ANNOTATION:-gpu-scheduling-map}
export GS_CLUSTER_DIR

# GS_TEST_TAG tells apart the results of a second pass of the same script (run-all.sh's e2e on
# kind-named nodes).
T_NAME=$(basename "$0" .sh)${GS_TEST_TAG:-}
T_PASSED=0
T_FAILED=0
T_DEFERRED=()
T_DAEMON_N=0
NS=
DAEMON_PID=
DAEMON_RC=
DAEMON_LOG=
DAEMON_URL=
DAEMON_EXPECT_RC=${DAEMON_EXPECT_RC:-0}

if [ -z "${GS_RESULTS:-}" ]; then
	GS_RESULTS=$(mktemp)
	T_OWN_RESULTS=1
else
	T_OWN_RESULTS=0
fi

# ---- results ---------------------------------------------------------------------------------

pass() {
	T_PASSED=$((T_PASSED + 1))
	echo "PASS $T_NAME: $1" >>"$GS_RESULTS"
	printf '  ok    %s\n' "$1"
}

fail() {
	local why=${2:+: $2}
	T_FAILED=$((T_FAILED + 1))
	# One line per result: the protocol is line-based.
	why=$(printf '%s' "$why" | tr '\n' ' ' | cut -c1-300)
	echo "FAIL $T_NAME: $1$why" >>"$GS_RESULTS"
	printf '  FAIL  %s%s\n' "$1" "$why"
}

check() {
	local what=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		pass "$what"
	else
		fail "$what" "exit $rc: $(printf '%s' "$out" | tail -n 3)"
	fi
	return $rc
}

wait_for() {
	local what=$1 timeout=$2 deadline out
	shift 2
	deadline=$((SECONDS + timeout))
	while :; do
		out=$("$@" 2>&1) && return 0
		if [ $SECONDS -ge "$deadline" ]; then
			printf '  timed out after %ss: %s; last output: %s\n' "$timeout" "$what" \
				"$(printf '%s' "$out" | tail -n 3)" >&2
			return 1
		fi
		sleep "$GS_POLL"
	done
}

check_eventually() {
	local what=$1 timeout=$2
	shift 2
	if wait_for "$what" "$timeout" "$@"; then
		pass "$what"
	else
		fail "$what" "not within ${timeout}s"
		return 1
	fi
}

# defer CMD: CMD runs at test_end. Only from the script's own shell: in a subshell (a function run by
# check, a $(...)) the list would be the subshell's copy and the cleanup lost, so that is a failure
# of the test, and CMD runs at once instead.
defer() {
	if [ "$BASH_SUBSHELL" -gt 0 ]; then
		fail "defer in a subshell (cleanup would be lost): $1"
		eval "$1"
		return 1
	fi
	T_DEFERRED+=("$1")
}

# equals WANT CMD...: CMD's output is WANT (for check and check_eventually; says what it got).
equals() {
	local want=$1 got
	shift
	got=$("$@" 2>&1)
	[ "$got" = "$want" ] || { printf 'got "%s", want "%s"\n' "$got" "$want"; return 1; }
}

# ---- the apiserver ---------------------------------------------------------------------------

kc() {
	if [ -n "$NS" ]; then
		"$GS_KUBECTL" --kubeconfig "$KUBECONFIG" --namespace "$NS" "$@"
	else
		"$GS_KUBECTL" --kubeconfig "$KUBECONFIG" "$@"
	fi
}

# api_raw METHOD PATH BODY TYPE: prints the body, then the status code on a line of its own.
api_raw() {
	local args=(-sS --max-time 30 --cacert "$GS_CLUSTER_CA" -X "$1" -w '\n%{http_code}'
		-H "Authorization: Bearer ${API_TOKEN:-$GS_ADMIN_TOKEN}")
	[ -n "${3:-}" ] && args+=(-H "Content-Type: ${4:-application/json}" --data-binary "$3")
	curl "${args[@]}" "$GS_APISERVER_URL$2"
}

api() {
	local out code
	out=$(api_raw "$@") || return 1
	code=${out##*$'\n'}
	printf '%s\n' "${out%$'\n'*}"
	case $code in 2??) return 0 ;; *) return 1 ;; esac
}

# as_token TOKEN CMD...: CMD with API_TOKEN set, so api/api_code inside it speak as that identity.
as_token() {
	# shellcheck disable=SC2034 # read by api_raw
	local API_TOKEN=$1
	shift
	"$@"
}

api_code() {
	local out
	out=$(api_raw "$@") || { echo 000; return 1; }
	echo "${out##*$'\n'}"
}

restart_apiserver() { "$GS_ROOT/tests/cluster/cluster.sh" restart-apiserver; }

# node_real NAME: the node a map's NAME means, as the scheduler resolves it (node aliases): the node of
# that name, else the one labelled gpu-scheduler.io/node=NAME (clusters whose nodes are named like
# kind's, cluster.sh's GS_NODE_NAMES). Prints nothing when there is none.
node_real() {
	if NS='' kc get node "$1" >/dev/null 2>&1; then
		echo "$1"
	else
		NS='' kc get nodes -l "gpu-scheduler.io/node=$1" -o jsonpath='{.items[*].metadata.name}'
	fi
}

# node_who_re NAME: a regex for how the scheduler's messages introduce a check made on NAME's node:
# nothing when NAME is the node's own name, "NAME \(node REAL\): " when it was resolved by the label.
node_who_re() {
	local real
	real=$(node_real "$1")
	[ "$real" = "$1" ] || printf '%s \\(node %s\\): ' "$1" "$real"
}

# ---- workloads -------------------------------------------------------------------------------

map_annotation() {
	local pad e
	pad=$(printf '%*s' "${INDENT:-0}" '')
	printf '%s%s: |\n' "$pad" "$GS_ANNOTATION"
	for e in "$@"; do printf '%s  %s\n' "$pad" "$e"; done
}

# pod_meta_yaml APP [ENTRY...]: the template's metadata; TEMPLATE_ANNOTATIONS, when set, is more
# annotations, one "key: value" a line (the all-or-nothing ones, say).
pod_meta_yaml() {
	local app=$1
	shift
	printf '    metadata:\n      labels:\n        app: %s\n' "$app"
	if [ $# -gt 0 ] || [ -n "${TEMPLATE_ANNOTATIONS:-}" ]; then
		printf '      annotations:\n'
		[ -n "${TEMPLATE_ANNOTATIONS:-}" ] && printf '%s\n' "$TEMPLATE_ANNOTATIONS" | sed 's/^/        /'
		[ $# -gt 0 ] && INDENT=8 map_annotation "$@"
	fi
	return 0
}

# pod_template_yaml APP [ENTRY...]: the pod template both workload kinds share, at 4 spaces.
pod_template_yaml() {
	pod_meta_yaml "$@"
	cat <<EOF
    spec:
      schedulerName: $SCHEDULER_NAME
      terminationGracePeriodSeconds: 0
      restartPolicy: ${RESTART_POLICY:-Always}
      containers:
      - name: main
        image: ${POD_IMAGE:-busybox:stable}
        imagePullPolicy: Never
        command: ["sleep", "3600"]
EOF
	if [ -n "${POD_GPUS:-}" ]; then
		printf '        resources:\n          limits:\n            nvidia.com/gpu: "%s"\n' "$POD_GPUS"
	fi
}

statefulset_yaml() {
	local name=$1 replicas=$2
	shift 2
	cat <<EOF
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: $name
spec:
  serviceName: $name
  replicas: $replicas
  podManagementPolicy: Parallel
  selector:
    matchLabels:
      app: $name
  template:
EOF
	"${POD_TEMPLATE:-pod_template_yaml}" "$name" "$@"
}

job_yaml() {
	local name=$1 completions=$2 parallelism=$3
	shift 3
	cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $name
spec:
  completions: $completions
  parallelism: $parallelism
  backoffLimit: 0
  template:
EOF
	RESTART_POLICY=Never "${POD_TEMPLATE:-pod_template_yaml}" "$name" "$@"
}

# priority_classes NAME=VALUE[:Never]...: the PriorityClasses $PC-NAME ($PC: the test namespace without
# its gs- prefix) of those values (":Never": preemptionPolicy Never), made (a check) and deleted when the
# test ends. Not through check (a subshell): it sets PC and defers.
priority_classes() {
	local c name value yaml="" names=()
	PC=${NS#gs-}
	for c in "$@"; do
		name=$PC-${c%%=*} value=${c#*=}
		names+=("$name")
		yaml+="---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: $name}
value: ${value%%:*}
"
		[ "${value#*:}" = Never ] && yaml+="preemptionPolicy: Never
"
	done
	defer "NS= kc delete priorityclass ${names[*]} --ignore-not-found --wait=false >/dev/null 2>&1"
	check "PriorityClasses $* (each named $PC-NAME)" eval 'NS= kc apply -f - >/dev/null <<<"$yaml"'
}

crd_established() {
	[ "$(NS='' kc get crd "$1" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" = True ]
}

pod_count() {
	local sel=()
	[ -n "${1:-}" ] && sel=(-l "$1")
	kc get pods "${sel[@]}" -o name | grep -c .
}

pod_count_is() {
	local n
	n=$(pod_count "${2:-}")
	[ "$n" = "$1" ] || { echo "have $n pods, want $1"; return 1; }
}

bind_pod() {
	api POST "/api/v1/namespaces/$NS/pods/$1/binding" \
		"{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$1\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"$2\"}}" \
		>/dev/null
}

server_minor() {
	[ -n "${GS_SERVER_MINOR:-}" ] ||
		GS_SERVER_MINOR=$(api GET /version | jq -r .minor | tr -dc '0-9')
	echo "$GS_SERVER_MINOR"
}

sa_token() {
	local t
	t=$(api POST "/api/v1/namespaces/$NS/serviceaccounts/$1/token" \
		'{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}' |
		jq -r .status.token) && [ -n "$t" ] && [ "$t" != null ] && echo "$t"
}

force_delete_pods() {
	local sel=(--all)
	[ -n "${1:-}" ] && sel=(-l "$1")
	kc delete pods "${sel[@]}" --grace-period=0 --force --wait=false >/dev/null 2>&1
}

# ---- the daemon ------------------------------------------------------------------------------

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
	local p i
	for i in $(seq 1 50); do
		# Below Linux's ephemeral range (32768-60999): a port picked there can be taken by any outgoing
		# connection (the daemon's own, a fuzzer's) between this check and the bind.
		p=$((20000 + RANDOM % 12000))
		port_free "$p" && { echo "$p"; return 0; }
	done
	return 1
}

daemon_alive() {
	local st
	[ -n "$DAEMON_PID" ] || return 1
	# A zombie (exited, not yet waited for) still answers kill -0.
	st=$(awk '{print $3}' "/proc/$DAEMON_PID/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

daemon_http() { curl -sf --max-time 2 "$DAEMON_URL$1"; }

daemon_start() {
	local port sport insecure=(--insecure-debug-and-metrics) defaults=(--no-webhook --log-level debug --leader-elect=false)
	if daemon_alive; then
		fail "daemon_start" "already running as $DAEMON_PID"
		return 1
	fi
	if [ ! -x "$GS_DAEMON_BIN" ]; then
		fail "daemon_start" "$GS_DAEMON_BIN is not built"
		return 1
	fi
	[ "${DAEMON_WEBHOOK:-0}" = 1 ] && defaults=(--log-level debug --leader-elect=false)
	# The engine's invariants checked at every pass (a broken one aborts: daemon_stop reports the exit).
	[ "${DAEMON_AUDIT:-1}" = 1 ] && defaults+=(--engine-audit)
	port=$(free_port) || { fail "daemon_start" "no free port"; return 1; }
	sport=$(free_port) && [ "$sport" != "$port" ] || { fail "daemon_start" "no second free port"; return 1; }
	[ "${DAEMON_INSECURE:-1}" = 0 ] && insecure=()
	mkdir -p "$GS_TEST_LOGS"
	# One log per start: <test>-daemon-1.log, -2.log, ...; a new run of the test replaces them.
	[ "$T_DAEMON_N" = 0 ] && rm -f "$GS_TEST_LOGS/$T_NAME-daemon-"*.log
	T_DAEMON_N=$((T_DAEMON_N + 1))
	DAEMON_LOG=$GS_TEST_LOGS/$T_NAME-daemon-$T_DAEMON_N.log
	DAEMON_URL=http://127.0.0.1:$port
	DAEMON_SECURE_URL=https://127.0.0.1:$sport
	DAEMON_RC=
	echo "  daemon: $GS_DAEMON_BIN ${insecure[*]} ${defaults[*]} $* (log $DAEMON_LOG)"
	"$GS_DAEMON_BIN" --kubeconfig "$KUBECONFIG" --health-addr "127.0.0.1:$port" --secure-addr "127.0.0.1:$sport" \
		"${insecure[@]}" "${defaults[@]}" "$@" \
		</dev/null >"$DAEMON_LOG" 2>&1 &
	DAEMON_PID=$!
	if ! wait_for "daemon /healthz" 15 daemon_healthz_or_dead; then
		fail "daemon starts" "no /healthz within 15 s; log: $(tail -n 5 "$DAEMON_LOG")"
		daemon_stop KILL 5 >/dev/null
		return 1
	fi
	if ! daemon_alive; then
		wait "$DAEMON_PID" 2>/dev/null
		DAEMON_RC=$?
		fail "daemon starts" "exited with $DAEMON_RC; log: $(tail -n 5 "$DAEMON_LOG")"
		DAEMON_PID=
		return 1
	fi
}

# Succeeds on /healthz ok, and also once the daemon died: daemon_start tells the two apart.
daemon_healthz_or_dead() { ! daemon_alive || [ "$(daemon_http /healthz)" = ok ]; }

daemon_readyz_or_dead() { ! daemon_alive || [ "$(daemon_http /readyz)" = ok ]; }

daemon_ready() { wait_for "daemon /readyz" "${1:-30}" daemon_readyz_or_dead && daemon_alive; }

daemon_stop() {
	local sig=${1:-TERM} timeout=${2:-15} deadline
	[ -n "$DAEMON_PID" ] || return 0
	kill -"$sig" "$DAEMON_PID" 2>/dev/null
	deadline=$((SECONDS + timeout))
	while daemon_alive && [ $SECONDS -lt "$deadline" ]; do sleep 0.1; done
	if daemon_alive; then
		fail "daemon exits on SIG$sig" "still running after ${timeout}s: SIGKILL"
		kill -KILL "$DAEMON_PID" 2>/dev/null
	fi
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_RC=$?
	DAEMON_PID=
	if [ "$sig" != KILL ] && [ "$DAEMON_RC" != "$DAEMON_EXPECT_RC" ]; then
		fail "daemon exit status" "$DAEMON_RC, expected $DAEMON_EXPECT_RC; log: $(tail -n 5 "$DAEMON_LOG")"
	fi
	if grep -qE 'ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:' "$DAEMON_LOG" 2>/dev/null; then
		fail "daemon sanitizer report" "see $DAEMON_LOG"
	fi
	return "$DAEMON_RC"
}

# ---- the test's life -------------------------------------------------------------------------

test_begin() {
	[ -n "${1:-}" ] && T_NAME=$1
	trap test_exit EXIT
	if [ ! -f "$GS_CLUSTER_DIR/env" ]; then
		fail "cluster" "no cluster in $GS_CLUSTER_DIR: run tests/cluster/cluster.sh up"
		exit 1
	fi
	# shellcheck disable=SC1091
	. "$GS_CLUSTER_DIR/env"
	GS_ADMIN_TOKEN=$(cat "$GS_CLUSTER_DIR/admin.token")
	# A DNS label: lower case, at most 63 characters.
	NS=gs-$(printf '%s' "$T_NAME" | tr '_A-Z' '-a-z' | cut -c1-40)-$(printf '%04x%04x' $RANDOM $RANDOM)
	if ! kc create namespace "$NS" >/dev/null || ! kc label namespace "$NS" gpu-scheduler.test/ns=true >/dev/null; then
		fail "namespace $NS" "cannot create it"
		exit 1
	fi
	# No pod can be created before the namespace's ServiceAccount "default", which the controller
	# manager makes (once 20 s late in a loaded ASan run of CI: test_dedicated's first create timed out).
	if ! wait_for "the ServiceAccount default of $NS" 60 kc get serviceaccount default; then
		fail "namespace $NS" "no ServiceAccount default after 60 s"
		exit 1
	fi
	echo "  namespace $NS"
}

test_workdir() {
	local dir=$GS_TEST_LOGS/$T_NAME
	rm -rf "$dir" && mkdir -p "$dir" && echo "$dir"
}

ns_gone() { ! NS='' kc get namespace "$1" >/dev/null 2>&1; }

test_cleanup() {
	local i ns=$NS
	daemon_alive && daemon_stop
	for ((i = ${#T_DEFERRED[@]} - 1; i >= 0; i--)); do
		eval "${T_DEFERRED[i]}" || echo "  cleanup failed: ${T_DEFERRED[i]}" >&2
	done
	[ -n "$ns" ] || return 0
	if [ "${GS_KEEP_NS:-0}" = 1 ]; then
		echo "  keeping namespace $ns (GS_KEEP_NS=1)"
		return 0
	fi
	# Deleting the namespace first stops controllers from recreating pods (a terminating namespace
	# refuses new objects); then the pods go with grace period 0, since no kubelet confirms a graceful
	# deletion of a bound pod.
	NS='' kc delete namespace "$ns" --wait=false >/dev/null 2>&1
	for i in $(seq 1 60); do
		NS=$ns force_delete_pods ''
		ns_gone "$ns" && return 0
		sleep 0.5
	done
	echo "  namespace $ns still terminating after 30 s" >&2
}

test_exit() {
	local rc=$?
	trap - EXIT
	test_cleanup
	if [ $rc -ne 0 ] && [ $T_FAILED -eq 0 ]; then
		fail "script" "exited with status $rc"
	fi
	echo "  $T_NAME: $T_PASSED passed, $T_FAILED failed"
	[ "$T_OWN_RESULTS" = 1 ] && rm -f "$GS_RESULTS"
	[ $T_FAILED -eq 0 ] && [ $rc -eq 0 ] && exit 0
	exit 1
}

test_end() { exit 0; }
