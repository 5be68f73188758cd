/*
 * explain_cmd.h: `gpu-scheduler explain [-n NAMESPACE] POD`, the operator's "why is my pod pending"
 * without the daemon. It reads the pod, the node its map entry names and the pods bound to that node
 * from the apiserver, feeds them to the same engine the daemon runs (src/sched), and prints what the
 * engine would do now and what it waits for (sched/explain_out.h), as text or JSON.
 *
 * Credentials: --kubeconfig, else $KUBECONFIG (its first file), else ~/.kube/config, else in-cluster.
 * Namespace: -n, else the kubeconfig context's, else "default" (kubectl's rules). Installed as a
 * kubectl plugin too: `kubectl gpu-scheduler explain POD` runs `kubectl-gpu_scheduler explain POD`.
 *
 * Exit status: 0 when the pod was explained, 1 when it could not be (not found, not ours, apiserver
 * unreachable: a message on stderr), 2 for a usage error.
 */
#ifndef GS_K8S_EXPLAIN_CMD_H
#define GS_K8S_EXPLAIN_CMD_H

/* argv[0] is "explain". */
int gs_explain_cmd(int argc, char **argv);

#endif
