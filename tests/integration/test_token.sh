#!/usr/bin/env bash
# A rotated bearer token (tokenFile, as service-account tokens are mounted): the daemon re-reads the
# file on a 401 and goes on with the new token, without a restart.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin
work=$(test_workdir)
echo "not-a-valid-token" >"$work/token"
cat >"$work/kubeconfig" <<YAML
apiVersion: v1
kind: Config
current-context: t
clusters:
- name: t
  cluster: {server: "$GS_APISERVER_URL", certificate-authority: "$GS_CLUSTER_CA"}
contexts:
- name: t
  context: {cluster: t, user: u}
users:
- name: u
  user: {tokenFile: "$work/token"}
YAML
KUBECONFIG_SAVED=$KUBECONFIG
KUBECONFIG=$work/kubeconfig daemon_start --require-env=false || exit 1
KUBECONFIG=$KUBECONFIG_SAVED
sleep 2
check "with a revoked token: not ready" test "$(daemon_http /readyz)" != ok
check "the 401 is logged with the re-read" grep -q "answered 401" "$DAEMON_LOG"
# The token rotates: the file now holds a valid one (written as the kubelet does, by rename).
cp "$GS_CLUSTER_DIR/admin.token" "$work/token.new" && mv "$work/token.new" "$work/token"
check_eventually "after the rotation: ready, without a restart" 45 eval '[ "$(daemon_http /readyz)" = ok ]'
check "the new token was picked up" grep -q "changed; using the new one" "$DAEMON_LOG"
kc apply -f - >/dev/null <<<"$(pod_yaml tok-0 '0=node2:1')"
check_eventually "and it binds" 20 pod_on tok-0 node2
daemon_stop TERM 15 && pass "SIGTERM: exit 0"
test_end
