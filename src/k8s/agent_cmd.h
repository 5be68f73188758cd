/*
 * agent_cmd.h: `gpu-scheduler agent`, the node agent (issue 21; docs/agent.md): the command line.
 *
 *   gpu-scheduler agent --node NAME [--kubeconfig PATH] [--socket PATH] [--interval-ms N] ...
 *   gpu-scheduler agent --once [--socket PATH] [--timeout-ms N]
 *
 * With --node (or env NODE_NAME): the daemon (k8s/agent_run.h) until SIGINT/SIGTERM, exit 0; 1 when it
 * cannot start (the kubeconfig, the apiserver client, the --addr). --once: one List of the kubelet's
 * PodResources socket printed (one line per device: "NAMESPACE/POD CONTAINER RESOURCE ID"), exit 0, or
 * why not on stderr and exit 1. Usage errors exit 2.
 */
#ifndef GS_K8S_AGENT_CMD_H
#define GS_K8S_AGENT_CMD_H

/* argv[0] is "agent". */
int gs_agent_cmd(int argc, char **argv);

#endif
