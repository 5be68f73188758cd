#!/usr/bin/env bash
# Startup configuration: every bad value is a clear message and exit status 2, before anything starts;
# --help and --version work; an exec-plugin kubeconfig is refused as unsupported. Needs no cluster.
. "$(dirname "$0")/../lib.sh"
trap test_exit EXIT
bin=$GS_DAEMON_BIN
fx=$GS_ROOT/tests/fixtures/kubeconfig

# refused EXPECTED_RC REGEX ARGS...: the daemon exits with EXPECTED_RC and says REGEX on stderr.
refused() {
	local want=$1 re=$2 out rc
	shift 2
	out=$("$bin" "$@" 2>&1 </dev/null)
	rc=$?
	if [ "$rc" = "$want" ] && grep -qE -- "$re" <<<"$out"; then
		pass "$* -> exit $want, \"$re\""
	else
		fail "$* -> exit $want, \"$re\"" "exit $rc: $(head -c 300 <<<"$out")"
	fi
}
refused 2 'max-inflight-binds: 0 is outside 1..4096' --max-inflight-binds 0
refused 2 'kube-api-qps' --kube-api-qps -1
refused 2 'log-format: "xml" is not text or json' --log-format xml
refused 2 'log-level' --log-level loud
refused 2 'health-addr' --health-addr nowhere
refused 2 'cannot read /nonexistent' --kubeconfig /nonexistent
refused 2 'unknown|nope' --nope
refused 2 'tls-cert-file' --kubeconfig "$fx/token.yaml"
refused 1 'exec credential plugins are not supported' --kubeconfig "$fx/exec.yaml" --no-webhook
refused 2 'device-sharing: "some" must be exclusive or any' --device-sharing some
refused 2 'kube-api-content-type: "xml" must be json or protobuf' --kube-api-content-type xml
GS_KUBE_API_CONTENT_TYPE=yaml refused 2 'GS_KUBE_API_CONTENT_TYPE \(environment\).*"yaml" must be json or protobuf' --no-webhook
refused 2 'node-alias-label: "-bad" is not a label key' --node-alias-label -bad
refused 2 'node-alias-label: "Example.com/node" is not a label key' --node-alias-label Example.com/node
refused 2 'node-alias-label: "a/b/c" is not a label key' --node-alias-label a/b/c
GS_NODE_ALIAS_LABEL='gpu node' refused 2 'GS_NODE_ALIAS_LABEL \(environment\): "gpu node" is not a label key' --no-webhook
# Good keys (with and without a prefix, and empty: off) pass the check and stop at the next one.
refused 2 'tls-cert-file' --kubeconfig "$fx/token.yaml" --node-alias-label gpu-node-name
refused 2 'tls-cert-file' --kubeconfig "$fx/token.yaml" --node-alias-label=
refused 2 'tls-cert-file' --kubeconfig "$fx/token.yaml" --node-alias-label kubernetes.io/hostname
refused 2 'leader-elect-lease-duration: "15" is not a duration' --leader-elect-lease-duration 15
refused 2 'leader-elect-retry-period: 10ms is outside' --leader-elect-retry-period 10ms
refused 2 'lease-duration \(5000 ms\) must exceed --leader-elect-renew-deadline \(10000 ms\)' --no-webhook \
	--kubeconfig "$fx/token.yaml" --leader-elect-lease-duration 5s
refused 2 'which must exceed 1.2 x --leader-elect-retry-period' --no-webhook --kubeconfig "$fx/token.yaml" \
	--leader-elect-retry-period 9s
refused 0 'Usage: gpu-scheduler' --help
refused 0 '^gpu-scheduler [0-9a-f]' --version
SCHEDULER_NAME='bad name!' refused 2 'SCHEDULER_NAME \(environment\)' --no-webhook
