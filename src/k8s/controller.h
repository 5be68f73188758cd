/*
 * controller.h: the scheduling loop. Wires the pod and node watches into the placement engine
 * (src/sched/sched.h) and the engine's decisions out to the apiserver (src/k8s/api.h):
 *
 *   watch events --> gs_sched_*_upsert/delete --> pump(): pull binds while fewer than
 *   max_inflight_binds are in flight, then reports (events, PodScheduled=False, deletions of pods the
 *   webhook missed) at low priority --> results back into the engine (gs_sched_bind_done).
 *
 * GPUPlacementMaps (maps as objects, sched/gpm.h) are watched in every namespace too (JSON; the CRD may
 * be absent: docs/deploy.md, "GPUPlacementMaps"); the pod watch starts once their first list answered,
 * and the leader writes their status from the pump, after the bindings (k8s/gpm_status.h).
 *
 * The pump runs after every batch of watch events and after every completed request, and a timer
 * wakes it when the engine's next retry is due: no polling.
 *
 * With leader election (opts.leader), every replica watches and feeds its engine, but only while
 * gs_leader_leading is true does the pump bind, record events and conditions or delete pods: asked
 * before every single request, so a leader past its renew deadline (frozen, partitioned) sends
 * nothing more. gs_controller_kick after leadership is won binds what waits at once.
 */
#ifndef GS_K8S_CONTROLLER_H
#define GS_K8S_CONTROLLER_H

#include <stddef.h>
#include <uv.h>

#include "core/metrics.h"
#include "k8s/kube.h"
#include "k8s/leader.h"

struct gs_controller;

struct gs_controller_opts {
	const char *scheduler_name;
	const char *annotation; /* the scheduling-map annotation */
	unsigned max_inflight_binds;
	int check_env;                 /* refuse pods whose containers lack the map's CUDA_VISIBLE_DEVICES */
	int recreate_unmutated;        /* and delete them when a StatefulSet or Job will recreate them */
	int device_sharing_any;        /* --device-sharing=any: the ledger counts but never refuses */
	const char *node_alias_label;  /* --node-alias-label: map names resolve through this node label; NULL or
					* "" turns aliases off (sched.h) */
	const char *ignored_resources; /* --ignored-resources, --ignored-resource-groups (sched.h) */
	const char *ignored_resource_groups;
	const char *gpu_resources;      /* --gpu-resources (sched.h); NULL: the engine's default */
	int64_t agent_stale_ms;         /* --agent-stale-after; <= 0: the engine's default */
	int64_t max_gang_timeout_ms;    /* --max-gang-timeout; <= 0: the engine's default */
	long gang_members_per_ns;       /* --gang-reservations-per-namespace; 0: no bound (sched.h) */
	long gang_gpus_per_ns;          /* --gang-reserved-gpus-per-namespace; 0: no bound */
	const char *gang_limits;        /* --gang-reservation-limits (sched/gang.h), checked; NULL: none */
	size_t map_cache_bytes;         /* --map-cache-memory; 0: the engine's default (sched.h) */
	size_t gpm_bytes;               /* --placement-map-memory; 0: the engine's default */
	size_t gpm_bytes_per_ns;        /* --placement-map-memory-per-namespace; 0: the engine's default */
	int events;                     /* emit Events (Scheduled, FailedScheduling); conditions always */
	const struct gs_leader *leader; /* act only while it leads; NULL: always (no election). Borrowed */
	int gang_placeholders;          /* --gang-placeholders: placeholder pods for reserved gang members */
	int preemption;                 /* --preemption: pods of lower priority on a mapped node make room (sched.h) */
	const char *placeholder_image;  /* --placeholder-image: what they run (a pause image) */
	int engine_audit;               /* --engine-audit: gs_sched_audit at every pass of the pump (tests) */
	long mapped_gpu_series;         /* --mapped-gpu-series: gpu_scheduler_mapped_gpu_info's bound */
	uint64_t seed;
};

int gs_controller_start(uv_loop_t *loop, struct gs_kube *kube, struct gs_metrics *metrics,
			const struct gs_controller_opts *opts, struct gs_controller **out);

/* Runs the pump soon (leadership was won). */
void gs_controller_kick(struct gs_controller *c);

/* 1 when both caches are synced, the apiserver answered recently and the GPUPlacementMaps' first list
 * was answered (listed, 404: no CRD, or failed); else 0 and a reason. */
int gs_controller_ready(const struct gs_controller *c, char *why, size_t whylen);

/*
 * The health port's /debug/ route (core/health.h gs_health_route): GET /debug/pods/NS/NAME explains one
 * pod (sched/explain_out.h: state, reason, every check with its outcome, the holders of its devices),
 * GET /debug/pending counts pending pods by reason and lists the oldest, GET
 * /debug/workloads/NS/KIND/NAME (KIND statefulset or job) lists one owner's pods by index with the
 * indices of their map that have no pod (sched/workload_out.h; 200 with no row for an owner with no pod
 * of ours known). Every replica answers from
 * its own caches (followers keep theirs warm). Returns the body (JSON, malloc'd) with *status 200, or
 * 404 with a JSON error for an unknown pod or path; NULL when out of memory.
 */
/*
 * The node-side policy for the webhook (gs_admission_opts.node_allows): 1 when the node a map names lets
 * namespace ns map it, or is not in the cache; 0 with why. Answers from this replica's node cache.
 */
int gs_controller_node_allows(void *controller, const char *node, const char *ns, char *why, size_t size);
/* The webhook's node_gpus (webhook/admission.h): gs_sched_node_gpus on the engine. */
int64_t gs_controller_node_gpus(void *controller, const char *node, char *words, size_t size);

/*
 * The webhook's resolver of map references (gs_admission_opts.map_lookup, sched/gpm.h): 1 with *out (from
 * this replica's engine; strings valid until the loop runs again), 0 when the object is unknown and the
 * table is complete (the first list is in, or the CRD is not installed), -EAGAIN before that (the
 * webhook answers 503: retry) and while the list fails.
 */
struct gs_gpm_view;
int gs_controller_map_lookup(void *controller, const char *ns, const char *name, struct gs_gpm_view *out);

char *gs_controller_debug(const char *path, int *status, const char **ctype, void *controller);

/*
 * Shutdown, in two steps. gs_controller_stop stops the watches and takes no new work; bindings in
 * flight may finish for up to grace_ms; then done_cb runs. Requests still outstanding then are
 * cancelled by closing the client (gs_kube_close); their callbacks only count down. Once the client
 * is closed, gs_controller_free releases the rest.
 */
void gs_controller_stop(struct gs_controller *c, unsigned grace_ms, void (*done_cb)(void *ud), void *ud);
void gs_controller_free(struct gs_controller *c);

#endif
