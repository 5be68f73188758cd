/*
 * agent_cmd.h: `gpu-scheduler agent`, the node agent (issue 21; docs/agent.md). So far a skeleton: it
 * calls the kubelet's PodResources List (k8s/podresources.h) over the gRPC client (core/grpc.h) and
 * prints or logs what it got; publishing it for the scheduler is not written yet.
 *
 *   gpu-scheduler agent [--socket PATH] [--once] [--print] [--interval-ms N] [--timeout-ms N]
 *
 * --once: one call; prints the devices held (one line each: "NAMESPACE/POD CONTAINER RESOURCE ID") and
 * exits 0, or prints why not on stderr and exits 1. Without --once it polls every --interval-ms
 * (10000 by default) and, when the list changed, logs one line (and prints the list with --print);
 * a failed call is logged and retried at the next tick. SIGINT/SIGTERM end it (exit 0). Usage errors
 * exit 2.
 */
#ifndef GS_K8S_AGENT_CMD_H
#define GS_K8S_AGENT_CMD_H

/* argv[0] is "agent". */
int gs_agent_cmd(int argc, char **argv);

#endif
