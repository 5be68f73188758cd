/*
 * agent_run.h: the node agent's daemon loop (docs/agent.md), started by `gpu-scheduler agent --node`
 * (agent_cmd.c parses the flags):
 *
 *   start   GET the Node: its devices-in-use annotation is "what was published" (the settle base)
 *   then    the kubelet's PodResources List every interval_ms, and 200 ms after any event of a pod on
 *           the node (a watch with fieldSelector spec.nodeName=NODE); at most one List in flight, one
 *           more queued
 *   each    List -> gs_agent_collect -> (settle window: gs_agent_union with what was published) ->
 *           gs_inuse_format with the index table and the MIG instances (NVML, read at start and once
 *           a heartbeat: agent_nvml.h) -> a JSON merge PATCH of that one annotation, only
 *           when the data differ from the last written (the time line aside) or heartbeat_s passed
 *   failure a List that fails: counted by reason; once failing for interval_ms or longer, the
 *           annotation says `error <why>`; the next answer after a failure, or on a new connection,
 *           opens the settle window (settle_s)
 *   PATCH   one in flight; a failure retries with backoff (0.8 s doubling to 30 s) the newest text
 *
 * /healthz and /metrics on addr. SIGINT/SIGTERM close everything and return 0.
 */
#ifndef GS_K8S_AGENT_RUN_H
#define GS_K8S_AGENT_RUN_H

#include "k8s/kubeconfig.h"

struct gs_agent_opts {
	const char *node; /* required */
	const struct gs_kubeconfig *kc;
	const char *socket;       /* the kubelet's PodResources socket */
	const char *resources;    /* gs_agent_resource_match's list */
	const char *proc_dir;     /* the NVIDIA driver's gpus directory */
	const char *nvml_library; /* the driver's NVML, for the MIG instances (agent_nvml.h); "": none */
	const char *addr;         /* "host:port" for /healthz and /metrics */
	unsigned interval_ms, timeout_ms, heartbeat_s, settle_s;
};

/* Runs until a signal: 0; or 1 when it cannot start (the apiserver client, the address), said on the log. */
int gs_agent_run(const struct gs_agent_opts *o);

#endif
