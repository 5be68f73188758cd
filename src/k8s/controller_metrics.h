/*
 * controller_metrics.h: the scheduling loop's series on /metrics (docs/monitoring.md): the counters the
 * controller counts (bindings by result, events, conditions, deletions, two latency histograms) and
 * the gauges read at each scrape from the engine (gs_sched_stats), the two watches (gs_watch_stats) and
 * the apiserver client (gs_kube_stats).
 *
 * The controller embeds a struct gs_controller_metrics, sets the borrowed pointers once the engine
 * and both watches exist, then calls gs_controller_metrics_register once. Everything it points at
 * outlives the registry's scrapes (main.c closes the servers before the controller).
 */
#ifndef GS_K8S_CONTROLLER_METRICS_H
#define GS_K8S_CONTROLLER_METRICS_H

#include <stdint.h>
#include <uv.h>

#include "core/metrics.h"
#include "k8s/kube.h"
#include "sched/sched.h"

struct gs_watch;

/* gpu_scheduler_binding_attempts_total{result=...} */
enum gs_controller_result {
	GS_CTRL_RES_SUCCESS,
	GS_CTRL_RES_GONE,
	GS_CTRL_RES_RETRY,
	GS_CTRL_RES_REJECTED,
	GS_CTRL_RES_ALREADY_BOUND, /* 409 "already assigned" to the node we asked: an earlier attempt took effect */
	GS_CTRL_RES_WITHDRAWN,     /* never sent: it waited past the end of our leadership */
	GS_CTRL_RES__COUNT
};

/* gpu_scheduler_placeholders_total{result=...}: placeholder pods of gang members */
enum gs_controller_ph {
	GS_CTRL_PH_CREATED,
	GS_CTRL_PH_DELETED, /* deleted, or gone already (404) */
	GS_CTRL_PH_FAILED,  /* a create or delete the apiserver refused or never answered */
	GS_CTRL_PH__COUNT
};

struct gs_controller_metrics;

/* One series of the per-reason gauges (private to controller_metrics.c). */
struct gs_controller_waiting_gauge {
	struct gs_controller_metrics *cm;
	enum gs_wait_reason reason;
	char labels[48]; /* reason="NODE_MISSING": the registry keeps the pointer */
};

struct gs_controller_metrics {
	/* What the gauges read, borrowed; set before gs_controller_metrics_register. */
	uv_loop_t *loop;
	struct gs_sched *sched;
	struct gs_kube *kube;
	struct gs_watch *pods, *nodes, *gpms, *pdbs;
	const unsigned *binds_inflight;
	size_t mapped_max; /* gpu_scheduler_mapped_gpu_info shows at most this many series */
	/* Counted by the controller. */
	struct gs_counter bind_results[GS_CTRL_RES__COUNT];
	struct gs_counter events_sent, events_failed, events_dropped, conditions_failed, recreated;
	struct gs_histogram bind_latency;                /* from sending a binding to its answer */
	struct gs_histogram e2e_latency;                 /* from a pod's creation to its successful binding */
	struct gs_histogram gang_latency;                /* from a gang's first member's creation to its commit */
	struct gs_counter gang_timeouts[GS_WAIT__COUNT]; /* by the first blocker's reason (NONE: missing) */
	struct gs_counter placeholders[GS_CTRL_PH__COUNT];
	struct gs_counter preempt_victims, preempt_failed; /* victims handed to the apiserver; deletes that failed */
	struct gs_counter preempt_pdb;                     /* of the victims, those violating a PodDisruptionBudget */
	/* Private. */
	struct gs_controller_waiting_gauge waiting_by[GS_WAIT__COUNT];
	/* gs_sched_waiting_oldest, computed once per scrape (per loop time) for the per-reason gauges */
	int64_t oldest_created_ms[GS_WAIT__COUNT];
	char gang_labels[GS_WAIT__COUNT][64]; /* gang_timeouts' label texts (the registry borrows them) */
	uint64_t oldest_at;                   /* uv_now() + 1 of the last computation, 0 never */
	size_t mapped_omitted;                /* rows left out by the last scrape's mapped_gpu_info */
};

/* A gang event reached the owner (GS_REPORT_GANG without a pod): GangScheduled observes the latency
 * from its first member's creation (wall clock, now_ms), GangTimedOut counts a timeout by reason. */
void gs_controller__gang_observed(struct gs_controller_metrics *cm, const struct gs_report *r, int64_t now_ms);

/* Initialises the histograms and registers every series in m. Once per struct; the owner frees the
 * three histograms (gs_histogram_free) after the registry is freed. */
void gs_controller_metrics_register(struct gs_controller_metrics *cm, struct gs_metrics *m);

#endif
