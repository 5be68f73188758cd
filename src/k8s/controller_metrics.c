/*
 * controller_metrics.c: see controller_metrics.h. Each gauge reads the engine's, the watches' or the
 * client's statistics when /metrics is scraped; nothing here runs between scrapes.
 */
#include "k8s/controller_metrics.h"

#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "k8s/watch.h"

static const char *const result_labels[GS_CTRL_RES__COUNT] = {"result=\"success\"",       "result=\"gone\"",
							      "result=\"retry\"",         "result=\"rejected\"",
							      "result=\"already_bound\"", "result=\"withdrawn\""};

static struct gs_sched_stats sched_stats(void *ud)
{
	struct gs_sched_stats st;
	gs_sched_stats(((struct gs_controller_metrics *)ud)->sched, &st);
	return st;
}

static double m_pending(void *ud)
{
	return (double)sched_stats(ud).pending;
}

static double m_waiting(void *ud)
{
	return (double)sched_stats(ud).by_state[GS_POD_WAITING];
}

static double m_waiting_by(void *ud)
{
	const struct gs_controller_waiting_gauge *g = ud;
	return (double)sched_stats(g->cm).waiting_by[g->reason];
}

/* The age of the oldest pod waiting with this reason, 0 when none: a pending pod has waited since its
 * creation. One O(pods) pass per scrape serves every reason's series. */
static double m_waiting_age(void *ud)
{
	const struct gs_controller_waiting_gauge *g = ud;
	struct gs_controller_metrics *c = g->cm;
	uint64_t at = uv_now(c->loop) + 1;
	double age;

	if (c->oldest_at != at) {
		gs_sched_waiting_oldest(c->sched, c->oldest_created_ms);
		c->oldest_at = at;
	}
	if (!c->oldest_created_ms[g->reason])
		return 0;
	age = gs_clock_wall_s() - (double)c->oldest_created_ms[g->reason] / 1000.0;
	return age > 0 ? age : 0;
}

static double m_bound(void *ud)
{
	return (double)sched_stats(ud).by_state[GS_POD_BOUND];
}

static double m_cache_pods(void *ud)
{
	return (double)sched_stats(ud).pods;
}

static double m_cache_nodes(void *ud)
{
	return (double)sched_stats(ud).nodes;
}

static double m_uses(void *ud)
{
	return (double)sched_stats(ud).uses;
}

static double m_devs_held(void *ud)
{
	return (double)sched_stats(ud).devices_held;
}

static double m_devs_shared(void *ud)
{
	return (double)sched_stats(ud).devices_shared;
}

static double m_claims_ignored(void *ud)
{
	return (double)sched_stats(ud).claims_ignored;
}

static double m_device_conflicts(void *ud)
{
	return (double)sched_stats(ud).device_conflicts;
}

static double m_gangs_waiting(void *ud)
{
	return (double)sched_stats(ud).gangs_waiting;
}

static double m_gangs_bound(void *ud)
{
	return (double)sched_stats(ud).gangs_bound;
}

void gs_controller__gang_observed(struct gs_controller_metrics *c, const struct gs_report *r, int64_t now_ms)
{
	if (strcmp(r->event_reason, "GangScheduled") == 0 && r->gang_created_ms > 0 && now_ms >= r->gang_created_ms)
		gs_histogram_observe(&c->gang_latency, (double)(now_ms - r->gang_created_ms) / 1000.0);
	else if (strcmp(r->event_reason, "GangTimedOut") == 0 && (unsigned)r->reason < GS_WAIT__COUNT)
		c->gang_timeouts[r->reason].v++;
}

static double m_preempted(void *ud)
{
	return (double)sched_stats(ud).preemptions;
}

static double m_preempt_none(void *ud)
{
	return (double)sched_stats(ud).preempt_none;
}

static double m_pdbs(void *ud)
{
	return (double)sched_stats(ud).pdbs;
}

static double m_nominated(void *ud)
{
	return (double)sched_stats(ud).nominated;
}

/* Preemption (docs/sched.md, "Preemption"). */
static void register_preemption(struct gs_controller_metrics *c, struct gs_metrics *m)
{
	static const char help[] = "Preemptions planned for pods waiting on their mapped node, by result: victims "
				   "chosen and deleted (preempted), or none (no set of pods of lower priority would "
				   "let it fit, or those it preempted are still terminating).";

	gs_metrics_counter_fn(m, "gpu_scheduler_preemption_attempts_total", help, "result=\"preempted\"", m_preempted,
			      c);
	gs_metrics_counter_fn(m, "gpu_scheduler_preemption_attempts_total", help, "result=\"none\"", m_preempt_none, c);
	gs_metrics_counter(m, "gpu_scheduler_preemption_victims_total",
			   "Pods deleted to make room for a pod of higher priority on its mapped node.", NULL,
			   &c->preempt_victims);
	gs_metrics_counter(m, "gpu_scheduler_preemption_pdb_violations_total",
			   "Victims whose deletion violated a PodDisruptionBudget: nothing else let the pod fit (the "
			   "budgets order the victims; they never keep a pod from preempting).",
			   NULL, &c->preempt_pdb);
	gs_metrics_gauge_fn(m, "gpu_scheduler_cache_objects", "Objects in the scheduler's cache.",
			    "kind=\"poddisruptionbudget\"", m_pdbs, c);
	gs_metrics_counter(m, "gpu_scheduler_preemption_victim_delete_failures_total",
			   "Victims whose delete failed (not 404 or 409): they may be chosen again.", NULL,
			   &c->preempt_failed);
	gs_metrics_gauge_fn(m, "gpu_scheduler_nominated_pods",
			    "Pods nominated to their node by a preemption, not bound yet: their claim counts there.",
			    NULL, m_nominated, c);
}

/* ---- per-workload GPU use (docs/monitoring.md, "Per-workload GPU use") ------------------------------ */

struct mapped_put {
	struct gs_controller_metrics *c;
	struct gs_metrics_put *put;
	size_t shown;
};

static int mapped_row(const struct gs_sched_mapped_gpu *g, void *ud)
{
	static const char *const names[] = {"node", "gpu",           "uuid",     "namespace",
					    "pod",  "workload_kind", "workload", "map_index"};
	struct mapped_put *mp = ud;
	char gpu[24] = "", index[24] = "";

	if (mp->shown == mp->c->mapped_max) {
		mp->c->mapped_omitted++;
		return 0;
	}
	if (g->gpu >= 0)
		snprintf(gpu, sizeof(gpu), "%ld", g->gpu);
	if (g->index >= 0)
		snprintf(index, sizeof(index), "%ld", g->index);
	const char *const values[] = {g->node, gpu, g->uuid, g->ns, g->pod, g->kind, g->workload, index};
	mp->shown++;
	return gs_metrics_put(mp->put, names, values, sizeof(names) / sizeof(names[0]), 1);
}

/* gpu_scheduler_mapped_gpu_info, then (registered right after: rendered after it) the rows it omitted. */
static int mapped_gpus(void *ud, struct gs_metrics_put *put)
{
	struct mapped_put mp = {.c = ud, .put = put};

	mp.c->mapped_omitted = 0;
	return gs_sched_mapped_gpus(mp.c->sched, mapped_row, &mp);
}

static double m_mapped_omitted(void *ud)
{
	return (double)((struct gs_controller_metrics *)ud)->mapped_omitted;
}

/* The all-or-nothing gangs (docs/sched.md, "All or nothing"). */
static void register_gangs(struct gs_controller_metrics *c, struct gs_metrics *m)
{
	gs_metrics_gauge_fn(m, "gpu_scheduler_gangs_waiting",
			    "All-or-nothing gangs not placed yet (gathering, or resting after a timeout).", NULL,
			    m_gangs_waiting, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_gangs_bound_total",
			      "All-or-nothing gangs committed: every member handed out together.", NULL, m_gangs_bound,
			      c);
	gs_histogram_init(&c->gang_latency, gs_metrics_latency_buckets, GS_LATENCY_BUCKETS_N);
	gs_metrics_histogram(m, "gpu_scheduler_gang_scheduling_duration_seconds",
			     "Time from a gang's first member's creation to its commit.", NULL, &c->gang_latency);
	static const char *const ph_labels[GS_CTRL_PH__COUNT] = {"result=\"created\"", "result=\"deleted\"",
								 "result=\"failed\""};
	for (int i = 0; i < GS_CTRL_PH__COUNT; i++)
		gs_metrics_counter(
			m, "gpu_scheduler_placeholders_total",
			"Placeholder pods of gang members (--gang-placeholders), by result of their create or "
			"delete.",
			ph_labels[i], &c->placeholders[i]);
	for (int w = 0; w < GS_WAIT__COUNT; w++) {
		if (w == GS_WAIT_GANG || w == GS_WAIT_GANG_TIMED_OUT)
			continue; /* a member waiting for its gang never blocks it */
		snprintf(c->gang_labels[w], sizeof(c->gang_labels[w]), "reason=\"%s\"",
			 w == GS_WAIT_NONE ? "MEMBERS_MISSING" : gs_wait_reason_name((enum gs_wait_reason)w));
		gs_metrics_counter(m, "gpu_scheduler_gang_timeouts_total",
				   "All-or-nothing gangs that timed out, by the first blocking member's reason "
				   "(MEMBERS_MISSING: no member that exists blocks; members are not created yet).",
				   c->gang_labels[w], &c->gang_timeouts[w]);
	}
}

static double m_agent_fresh(void *ud)
{
	return (double)sched_stats(ud).agent_fresh;
}

static double m_agent_stale(void *ud)
{
	return (double)sched_stats(ud).agent_stale;
}

static double m_agent_unusable(void *ud)
{
	return (double)sched_stats(ud).agent_unusable;
}

static double m_agent_none(void *ud)
{
	return (double)sched_stats(ud).agent_none;
}

static double m_maps(void *ud)
{
	return (double)sched_stats(ud).maps_cached;
}

static double m_map_bytes(void *ud)
{
	return (double)sched_stats(ud).maps_cached_bytes;
}

static double m_gpm_bytes(void *ud)
{
	return (double)sched_stats(ud).gpm_bytes;
}

static double m_gpm_refused(void *ud)
{
	return (double)sched_stats(ud).gpms_refused;
}

static double m_inline_not_kept(void *ud)
{
	return (double)sched_stats(ud).inline_not_kept;
}

static double m_inflight(void *ud)
{
	return (double)*((struct gs_controller_metrics *)ud)->binds_inflight;
}

/* w may be NULL: the pod watch starts after the GPUPlacementMaps' first list. */
static struct gs_watch_stats watch_stats(struct gs_watch *w)
{
	struct gs_watch_stats st = {0};
	if (w)
		gs_watch_stats(w, &st);
	return st;
}

static double m_pod_restarts(void *ud)
{
	return (double)watch_stats(((struct gs_controller_metrics *)ud)->pods).restarts_total;
}

static double m_node_restarts(void *ud)
{
	return (double)watch_stats(((struct gs_controller_metrics *)ud)->nodes).restarts_total;
}

static double m_pod_relists(void *ud)
{
	return (double)watch_stats(((struct gs_controller_metrics *)ud)->pods).relists_total;
}

static double m_node_relists(void *ud)
{
	return (double)watch_stats(((struct gs_controller_metrics *)ud)->nodes).relists_total;
}

static double m_gpm_relists(void *ud)
{
	return (double)watch_stats(((struct gs_controller_metrics *)ud)->gpms).relists_total;
}

static double m_pod_pb(void *ud)
{
	return (double)watch_stats(((struct gs_controller_metrics *)ud)->pods).protobuf_total;
}

static double m_pod_json(void *ud)
{
	return (double)watch_stats(((struct gs_controller_metrics *)ud)->pods).json_total;
}

static double m_node_pb(void *ud)
{
	return (double)watch_stats(((struct gs_controller_metrics *)ud)->nodes).protobuf_total;
}

static double m_node_json(void *ud)
{
	return (double)watch_stats(((struct gs_controller_metrics *)ud)->nodes).json_total;
}

static double m_gpms(void *ud)
{
	return (double)watch_stats(((struct gs_controller_metrics *)ud)->gpms).known;
}

static double m_requests(void *ud)
{
	struct gs_kube_stats st;
	gs_kube_stats(((struct gs_controller_metrics *)ud)->kube, &st);
	return (double)st.requests_total;
}

static double m_tls_full(void *ud)
{
	struct gs_kube_stats st;
	gs_kube_stats(((struct gs_controller_metrics *)ud)->kube, &st);
	return (double)st.tls.full;
}

static double m_tls_resumed(void *ud)
{
	struct gs_kube_stats st;
	gs_kube_stats(((struct gs_controller_metrics *)ud)->kube, &st);
	return (double)st.tls.resumed;
}

/* The pending pods, by state and reason, and the bindings. */
static void register_pods(struct gs_controller_metrics *c, struct gs_metrics *m)
{
	gs_metrics_gauge_fn(m, "gpu_scheduler_pending_pods",
			    "Pods of ours not yet bound (waiting, queued, binding or in backoff).", NULL, m_pending, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_waiting_pods", "Pending pods blocked by a reason (see their events).",
			    NULL, m_waiting, c);
	for (int r = GS_WAIT_NONE + 1; r < GS_WAIT__COUNT; r++) {
		struct gs_controller_waiting_gauge *g = &c->waiting_by[r];
		*g = (struct gs_controller_waiting_gauge){.cm = c, .reason = (enum gs_wait_reason)r};
		snprintf(g->labels, sizeof(g->labels), "reason=\"%s\"", gs_wait_reason_name(g->reason));
		gs_metrics_gauge_fn(m, "gpu_scheduler_waiting_pods_by_reason",
				    "Waiting pods by the reason their events give (NODE_MISSING, NOT_MUTATED, ...).",
				    g->labels, m_waiting_by, g);
	}
	for (int r = GS_WAIT_NONE + 1; r < GS_WAIT__COUNT; r++)
		gs_metrics_gauge_fn(
			m, "gpu_scheduler_waiting_pods_max_age_seconds",
			"Seconds since the creation of the oldest pod waiting with this reason (0: none waits).",
			c->waiting_by[r].labels, m_waiting_age, &c->waiting_by[r]);
	gs_metrics_gauge_fn(m, "gpu_scheduler_bound_pods", "Pods of ours known to be bound.", NULL, m_bound, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_bindings_inflight", "Binding requests in flight.", NULL, m_inflight, c);
	for (int i = 0; i < GS_CTRL_RES__COUNT; i++)
		gs_metrics_counter(m, "gpu_scheduler_binding_attempts_total", "Binding requests by result.",
				   result_labels[i], &c->bind_results[i]);
	gs_histogram_init(&c->bind_latency, gs_metrics_latency_buckets, GS_LATENCY_BUCKETS_N);
	gs_metrics_histogram(m, "gpu_scheduler_binding_duration_seconds", "Time from sending a binding to its answer.",
			     NULL, &c->bind_latency);
	gs_histogram_init(&c->e2e_latency, gs_metrics_latency_buckets, GS_LATENCY_BUCKETS_N);
	gs_metrics_histogram(m, "gpu_scheduler_pod_scheduling_duration_seconds",
			     "Time from a pod's creation to its successful binding.", NULL, &c->e2e_latency);
}

/* The two watches: restarts, relists, encodings. */
static void register_watches(struct gs_controller_metrics *c, struct gs_metrics *m)
{
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_restarts_total", "Watches that ended and were restarted.",
			      "resource=\"pods\"", m_pod_restarts, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_restarts_total", "Watches that ended and were restarted.",
			      "resource=\"nodes\"", m_node_restarts, c);
	static const char relist_help[] = "Lists after the first (410 Gone, a lost version, or memory freed while "
					  "GPUPlacementMaps are not held).";
	gs_metrics_counter_fn(m, "gpu_scheduler_relists_total", relist_help, "resource=\"pods\"", m_pod_relists, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_relists_total", relist_help, "resource=\"nodes\"", m_node_relists, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_relists_total", relist_help, "resource=\"gpuplacementmaps\"",
			      m_gpm_relists, c);
	static const char enc_help[] =
		"List pages and watch streams read from the apiserver, by the encoding it answered in.";
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_responses_total", enc_help,
			      "resource=\"pods\",encoding=\"protobuf\"", m_pod_pb, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_responses_total", enc_help, "resource=\"pods\",encoding=\"json\"",
			      m_pod_json, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_responses_total", enc_help,
			      "resource=\"nodes\",encoding=\"protobuf\"", m_node_pb, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_responses_total", enc_help,
			      "resource=\"nodes\",encoding=\"json\"", m_node_json, c);
}

/* The engine's caches, ledger and the node agent's data. */
static void register_engine(struct gs_controller_metrics *c, struct gs_metrics *m)
{
	gs_metrics_gauge_fn(m, "gpu_scheduler_cache_objects", "Objects in the scheduler's cache.", "kind=\"pod\"",
			    m_cache_pods, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_cache_objects", "Objects in the scheduler's cache.", "kind=\"node\"",
			    m_cache_nodes, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_cache_objects", "Objects in the scheduler's cache.", "kind=\"map\"",
			    m_maps, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_cache_objects", "Objects in the scheduler's cache.", "kind=\"node_pod\"",
			    m_uses, c);
	static const char mem_help[] = "What the scheduler keeps of maps, in bytes: the parsed-map cache (bounded by "
				       "--map-cache-memory while unused) and the GPUPlacementMaps held (bounded by "
				       "--placement-map-memory).";
	gs_metrics_gauge_fn(m, "gpu_scheduler_memory_bytes", mem_help, "kind=\"map_cache\"", m_map_bytes, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_memory_bytes", mem_help, "kind=\"placement_maps\"", m_gpm_bytes, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_placement_maps_not_held",
			    "GPUPlacementMaps not held: they would pass the memory budgets (their status says so).",
			    NULL, m_gpm_refused, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_inline_maps_not_kept_total",
			      "Pods whose inline map would have passed the memory budgets: they keep their own entry "
			      "alone (placed the same).",
			      NULL, m_inline_not_kept, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_placement_maps",
			    "GPUPlacementMaps held (listed and watched in every namespace; 0 without the CRD).", NULL,
			    m_gpms, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_ledger_devices",
			    "GPU devices in the ledger with a holder (node, device).", "state=\"held\"", m_devs_held,
			    c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_ledger_devices",
			    "GPU devices in the ledger with a holder (node, device).", "state=\"shared\"",
			    m_devs_shared, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_ignored_claims_total",
			      "Pods seen on a node with a gpu-scheduler.io/assigned claim the ledger does not believe.",
			      NULL, m_claims_ignored, c);
	gs_metrics_counter_fn(
		m, "gpu_scheduler_device_conflicts_total",
		"Devices found given by a gpu-scheduling-map to one pod and by the device plugin to another "
		"(per pair of pods; docs/agent.md).",
		NULL, m_device_conflicts, c);
	static const char agent_help[] = "Nodes by the state of the node agent's data (docs/agent.md).";
	gs_metrics_gauge_fn(m, "gpu_scheduler_agent_nodes", agent_help, "state=\"fresh\"", m_agent_fresh, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_agent_nodes", agent_help, "state=\"stale\"", m_agent_stale, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_agent_nodes", agent_help, "state=\"unusable\"", m_agent_unusable, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_agent_nodes", agent_help, "state=\"none\"", m_agent_none, c);
}

/* Events, conditions, deletions and the apiserver client. */
static void register_writes(struct gs_controller_metrics *c, struct gs_metrics *m)
{
	gs_metrics_counter(m, "gpu_scheduler_events_total", "Events recorded, by result.", "result=\"sent\"",
			   &c->events_sent);
	gs_metrics_counter(m, "gpu_scheduler_events_total", "Events recorded, by result.", "result=\"failed\"",
			   &c->events_failed);
	gs_metrics_counter(m, "gpu_scheduler_events_total", "Events recorded, by result.", "result=\"dropped\"",
			   &c->events_dropped);
	gs_metrics_counter(m, "gpu_scheduler_condition_failures_total", "PodScheduled condition updates that failed.",
			   NULL, &c->conditions_failed);
	gs_metrics_counter(m, "gpu_scheduler_unmutated_deleted_total",
			   "Pods deleted because the webhook missed them (their controller recreates them).", NULL,
			   &c->recreated);
	gs_metrics_counter_fn(m, "gpu_scheduler_apiserver_requests_total", "Requests sent to the apiserver.", NULL,
			      m_requests, c);
	static const char tls_help[] =
		"TLS handshakes completed with the apiserver, by whether they resumed a session.";
	gs_metrics_counter_fn(m, "gpu_scheduler_apiserver_tls_handshakes_total", tls_help, "resumed=\"false\"",
			      m_tls_full, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_apiserver_tls_handshakes_total", tls_help, "resumed=\"true\"",
			      m_tls_resumed, c);
}

void gs_controller_metrics_register(struct gs_controller_metrics *c, struct gs_metrics *m)
{
	register_pods(c, m);
	register_watches(c, m);
	register_engine(c, m);
	register_writes(c, m);
	register_gangs(c, m);
	register_preemption(c, m);
	gs_metrics_gauge_family(
		m, "gpu_scheduler_mapped_gpu_info",
		"A GPU a running pod of ours holds by its map, 1: the node, the GPU's index and UUID (the "
		"UUID through the node agent's table), the pod and its namespace, its workload, its map "
		"index. Joined with the GPU exporter's series by UUID, or node and GPU index.",
		mapped_gpus, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_mapped_gpu_info_omitted",
			    "GPUs of running mapped pods left out of gpu_scheduler_mapped_gpu_info at this scrape "
			    "(--mapped-gpu-series).",
			    NULL, m_mapped_omitted, c);
}
