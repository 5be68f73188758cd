/*
 * controller.c: see controller.h. Everything here is glue: the engine decides, the API module writes,
 * this file moves records between them, measures, and keeps the number of requests bounded.
 */
#include "k8s/controller.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "core/alloc.h"
#include "core/closer.h"
#include "core/log.h"
#include "k8s/api.h"
#include "k8s/watch.h"
#include "sched/explain.h"
#include "sched/sched.h"

/* Low-priority requests (events, conditions, deletions) outstanding at most: the engine keeps the
 * rest of its reports until there is room; Scheduled events beyond the cap are dropped and counted. */
#define GS_CTRL_REPORTS_MAX   64
#define GS_CTRL_LOW_MAX       4096
#define GS_CTRL_COMPONENT     "gpu-scheduler"

enum result_label {
	RES_SUCCESS,
	RES_GONE,
	RES_RETRY,
	RES_REJECTED,
	RES_ALREADY_BOUND, /* 409 "already assigned" to the node we asked: an earlier attempt took effect */
	RES_WITHDRAWN,     /* never sent: it waited past the end of our leadership */
	RES__COUNT
};
static const char *const result_labels[RES__COUNT] = {"result=\"success\"", "result=\"gone\"", "result=\"retry\"",
						      "result=\"rejected\"", "result=\"already_bound\"",
						      "result=\"withdrawn\""};

struct gs_controller {
	uv_loop_t *loop;
	struct gs_kube *kube;
	struct gs_metrics *metrics;
	struct gs_sched *sched;
	struct gs_watch *pods, *nodes;
	const struct gs_leader *leader; /* NULL: no election, always act */
	int caches_synced; /* both watches have listed once: decisions and reports may start */
	char *scheduler_name;
	char *annotation;
	unsigned max_inflight;
	int events;
	uv_prepare_t pump;    /* runs the pump once per loop iteration when something changed */
	uv_timer_t retry;     /* wakes the pump when the engine's next retry is due */
	uv_timer_t grace;     /* bounds the shutdown */
	unsigned binds_inflight;
	unsigned low_inflight;
	int stopping;
	/* The stop: both watches, the bindings' grace (until stop_check closes the three handles), and
	 * those handles. No release: gs_controller_free frees, after the client's close. */
	struct gs_closer closer;
	int freed_wanted;

	/* metrics */
	struct waiting_gauge {
		struct gs_controller *c;
		enum gs_wait_reason reason;
		char labels[48]; /* reason="NODE_MISSING": the registry keeps the pointer */
	} waiting_by[GS_WAIT__COUNT];
	/* gs_sched_waiting_oldest, computed once per scrape (per loop time) for the per-reason gauges */
	int64_t oldest_created_ms[GS_WAIT__COUNT];
	uint64_t oldest_at;             /* uv_now() + 1 of the last computation, 0 never */
	struct gs_counter bind_results[RES__COUNT];
	struct gs_counter events_sent, events_failed, events_dropped, conditions_failed, recreated;
	struct gs_histogram bind_latency;
	struct gs_histogram e2e_latency;
};

static double wall_s(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static void on_pump(uv_prepare_t *p);
static void stop_check(struct gs_controller *c);

/* Asked before every write: a leader past its renew deadline sends nothing more. */
static int may_act(const struct gs_controller *c)
{
	return !c->leader || gs_leader_leading(c->leader);
}

/* Asks for one pump before the loop next waits for I/O: all events of this iteration are in by then. */
static void want_pump(struct gs_controller *c)
{
	if (!c->stopping)
		uv_prepare_start(&c->pump, on_pump);
}

/* ---- low-priority writes ----------------------------------------------------------------------- */

struct low_req {
	struct gs_controller *c;
	char what[16];
	char ref[300]; /* ns/name, for the log */
};

static void on_low_done(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct low_req *q = ud;
	struct gs_controller *c = q->c;
	enum gs_api_result res = gs_api_classify(err, resp);

	c->low_inflight--;
	if (err != -ECANCELED && res != GS_API_OK && !(strcmp(q->what, "delete") == 0 && res == GS_API_GONE)) {
		if (strcmp(q->what, "event") == 0)
			c->events_failed.v++;
		else if (strcmp(q->what, "condition") == 0)
			c->conditions_failed.v++;
		gs_log_warn("pod %s: %s failed: %s", q->ref, q->what,
			    err ? msg : resp->body_len ? resp->body : "(no body)");
	} else if (res == GS_API_OK && strcmp(q->what, "event") == 0) {
		c->events_sent.v++;
	}
	free(q);
	if (!c->stopping)
		want_pump(c);
}

static struct low_req *low_req_new(struct gs_controller *c, const char *what, const struct gs_api_pod_ref *pod)
{
	struct low_req *q = gs_xcalloc(1, sizeof(*q));
	q->c = c;
	snprintf(q->what, sizeof(q->what), "%s", what);
	snprintf(q->ref, sizeof(q->ref), "%s/%s", pod->ns, pod->name);
	return q;
}

static void send_event(struct gs_controller *c, const struct gs_api_pod_ref *pod, enum gs_event_type type,
		       const char *reason, const char *message)
{
	if (!c->events || c->stopping || !may_act(c))
		return;
	if (c->low_inflight >= GS_CTRL_LOW_MAX) {
		c->events_dropped.v++;
		return;
	}
	struct low_req *q = low_req_new(c, "event", pod);
	if (gs_api_event(c->kube, pod, type, reason, message, GS_CTRL_COMPONENT,
			       (int64_t)(wall_s() * 1000), on_low_done, q) < 0) {
		free(q);
		c->events_dropped.v++;
		return;
	}
	c->low_inflight++;
}

static void send_condition(struct gs_controller *c, const struct gs_api_pod_ref *pod, const char *message)
{
	struct low_req *q = low_req_new(c, "condition", pod);
	if (gs_api_unschedulable(c->kube, pod, message, (int64_t)(wall_s() * 1000), on_low_done, q) < 0) {
		free(q);
		c->conditions_failed.v++;
		return;
	}
	c->low_inflight++;
}

static void send_delete(struct gs_controller *c, const struct gs_api_pod_ref *pod)
{
	struct low_req *q = low_req_new(c, "delete", pod);
	if (gs_api_delete_pod(c->kube, pod, on_low_done, q) < 0) {
		free(q);
		return;
	}
	c->low_inflight++;
	c->recreated.v++;
}

static void handle_report(struct gs_controller *c, const struct gs_report *r)
{
	struct gs_api_pod_ref pod = {.ns = r->ns, .name = r->name, .uid = r->uid};

	if (r->kind == GS_REPORT_DEVICE_PLUGIN) {
		gs_log_warn("pod %s/%s: %s", r->ns, r->name, r->message);
		send_event(c, &pod, GS_EVENT_WARNING, "DevicePluginRequest", r->message);
		return;
	}
	if (r->kind == GS_REPORT_DEVICE_CONFLICT) { /* the engine logged it; both pods are told */
		struct gs_api_pod_ref other = {.ns = r->other_ns, .name = r->other_name, .uid = r->other_uid};
		send_event(c, &pod, GS_EVENT_WARNING, "DeviceConflict", r->message);
		send_event(c, &other, GS_EVENT_WARNING, "DeviceConflict", r->message);
		return;
	}
	gs_log_info("pod %s/%s waits: %s", r->ns, r->name, r->message);
	send_condition(c, &pod, r->message);
	send_event(c, &pod, GS_EVENT_WARNING, "FailedScheduling", r->message);
	if (r->recreate) {
		gs_log_info("pod %s/%s was not mutated by the webhook; deleting it so its controller recreates it",
			    r->ns, r->name);
		send_delete(c, &pod);
	}
}

/* ---- bindings ---------------------------------------------------------------------------------- */

struct bind_req {
	struct gs_controller *c;
	uint64_t started;    /* uv_now at send */
	int64_t created_ms;
	char *uid, *ns, *name, *node, *devices;
	char *where;         /* for messages: "node4", or "node1 (node gpu-worker3)" when resolved by the alias label */
	long index;
	enum gs_index_source source;
	int line;
};

static void bind_req_free(struct bind_req *b)
{
	free(b->uid);
	free(b->ns);
	free(b->name);
	free(b->node);
	free(b->devices);
	free(b->where);
	free(b);
}

/* Asked again just before the binding is written: a leadership that lapsed while it waited in the
 * client's queue (rate limit, a connection being made, the process frozen) withdraws it. */
static int bind_may_send(void *ud)
{
	const struct bind_req *b = ud;
	return may_act(b->c);
}

static void on_bind_done(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct bind_req *b = ud;
	struct gs_controller *c = b->c;
	enum gs_api_result res = gs_api_classify(err, resp);
	int64_t now;

	/* The loop's clock was read before this turn's callbacks; a turn with many answers makes it stale
	 * by milliseconds, and a Retry-After counted from it would expire that much early. */
	uv_update_time(c->loop);
	now = (int64_t)uv_now(c->loop);

	c->binds_inflight--;
	if (c->stopping && err == -ECANCELED) {
		bind_req_free(b);
		return;
	}
	if (err == GS_HTTP_EWITHDRAWN) {
		/* It waited (rate limit, a connection) past the end of our leadership: never sent. The pod
		 * waits in backoff; whoever leads binds it. */
		c->bind_results[RES_WITHDRAWN].v++;
		gs_log_info("pod %s/%s: binding withdrawn before sending: no longer leading", b->ns, b->name);
		gs_sched_bind_done(c->sched, b->uid, GS_BIND_RETRY, now);
		bind_req_free(b);
		if (c->stopping)
			stop_check(c);
		want_pump(c);
		return;
	}
	gs_histogram_observe(&c->bind_latency, (double)(uv_now(c->loop) - b->started) / 1000.0);
	if (res == GS_API_GONE && gs_api_bind_already_on(resp, b->node)) {
		/* Our own earlier attempt took effect and its answer was lost (the connection or the apiserver
		 * died): the pod is where we asked, so it is bound, not gone (which would free its devices
		 * until the watch shows it on the node). */
		gs_log_info("pod %s/%s: binding answered 409, already assigned to %s, the node we asked: an earlier "
			    "attempt took effect and its answer was lost; counted as bound", b->ns, b->name, b->node);
		c->bind_results[RES_ALREADY_BOUND].v++;
		res = GS_API_OK;
	}
	switch (res) {
	case GS_API_OK: {
		char message[768];
		struct gs_api_pod_ref pod = {.ns = b->ns, .name = b->name, .uid = b->uid};
		if (resp && resp->status / 100 == 2)
			c->bind_results[RES_SUCCESS].v++;
		if (b->created_ms > 0) {
			double e2e = wall_s() - (double)b->created_ms / 1000.0;
			gs_histogram_observe(&c->e2e_latency, e2e < 0 ? 0 : e2e);
		}
		gs_sched_bind_done(c->sched, b->uid, GS_BIND_OK, now);
		gs_log_info("bound pod %s/%s to %s (CUDA_VISIBLE_DEVICES=%s, index %ld from %s)", b->ns, b->name, b->where,
			    b->devices, b->index, gs_index_source_name(b->source));
		snprintf(message, sizeof(message), "Successfully assigned %s/%s to %s with CUDA_VISIBLE_DEVICES=%s "
			 "(index %ld, map line %d)", b->ns, b->name, b->where, b->devices, b->index, b->line);
		send_event(c, &pod, GS_EVENT_NORMAL, "Scheduled", message);
		break;
	}
	case GS_API_GONE:
		c->bind_results[RES_GONE].v++;
		gs_log_info("pod %s/%s: binding refused (%d): the pod is gone or already bound; its reservation is kept until the watch says which", b->ns,
			    b->name, resp ? resp->status : 0);
		gs_sched_bind_done(c->sched, b->uid, GS_BIND_GONE, now);
		break;
	case GS_API_RETRY:
		c->bind_results[RES_RETRY].v++;
		if (!err && resp->retry_after > 0) {
			/* 429 and 503 say when to come back: not before, even if the backoff is shorter. */
			gs_log_warn("pod %s/%s: binding failed (%d, Retry-After: %u s); will retry", b->ns, b->name,
				    resp->status, resp->retry_after);
			gs_sched_bind_retry_after(c->sched, b->uid, now, (int64_t)resp->retry_after * 1000);
			break;
		}
		gs_log_warn("pod %s/%s: binding failed (%s); will retry", b->ns, b->name,
			    err ? msg : resp->status == 429 ? "429 Too Many Requests" : "server error");
		gs_sched_bind_done(c->sched, b->uid, GS_BIND_RETRY, now);
		break;
	case GS_API_REJECTED:
		/* A 4xx we do not expect (403: RBAC). Retrying with backoff keeps the pod visible as pending
		 * and recovers once the cause is fixed. */
		c->bind_results[RES_REJECTED].v++;
		gs_log_error("pod %s/%s: binding rejected with %d: %s", b->ns, b->name, resp->status,
			     resp->body_len ? resp->body : "(no body)");
		gs_sched_bind_done(c->sched, b->uid, GS_BIND_RETRY, now);
		break;
	}
	bind_req_free(b);
	if (c->stopping)
		stop_check(c);
	want_pump(c);
}

static void start_bind(struct gs_controller *c, const struct gs_bind_decision *d)
{
	struct gs_api_pod_ref pod = {.ns = d->ns, .name = d->name, .uid = d->uid};
	struct bind_req *b = gs_xcalloc(1, sizeof(*b));
	int r;

	b->c = c;
	b->started = uv_now(c->loop);
	b->created_ms = d->created_ms;
	b->index = d->index;
	b->source = d->index_source;
	b->line = d->map_line;
	b->uid = gs_xstrdup(d->uid);
	b->ns = gs_xstrdup(d->ns);
	b->name = gs_xstrdup(d->name);
	b->node = gs_xstrdup(d->node);
	b->devices = gs_xstrdup(d->devices);
	if (strcmp(d->node, d->map_node) == 0)
		b->where = gs_xstrdup(d->node);
	else if (asprintf(&b->where, "%s (node %s)", d->map_node, d->node) < 0)
		gs_oom(0);
	r = gs_api_bind(c->kube, &pod, d->node, d->devices, bind_may_send, on_bind_done, b);
	if (r < 0) {
		gs_log_error("pod %s/%s: cannot send the binding: %s", d->ns, d->name, uv_strerror(r));
		bind_req_free(b);
		gs_sched_bind_done(c->sched, d->uid, GS_BIND_RETRY, (int64_t)uv_now(c->loop));
		return;
	}
	gs_log_debug("pod %s/%s: binding to %s (index %ld from %s, attempt %u)", d->ns, d->name, b->where, d->index,
		     gs_index_source_name(d->index_source), d->attempt);
	c->binds_inflight++;
}

/* ---- the pump ---------------------------------------------------------------------------------- */

static void on_retry_timer(uv_timer_t *t)
{
	want_pump(t->data);
}

static void on_pump(uv_prepare_t *p)
{
	struct gs_controller *c = p->data;
	int64_t now = (int64_t)uv_now(c->loop);
	struct gs_bind_decision d;
	struct gs_report r;

	uv_prepare_stop(p);
	/* Until both caches have held a full list once, a pending pod's node may only seem missing: no
	 * decision and no report yet (after a restart, every waiting pod would be told its node does not
	 * exist while the node list is still on its way). */
	if (c->stopping || !c->caches_synced || !may_act(c))
		return;
	while (c->binds_inflight < c->max_inflight && may_act(c) && gs_sched_next_bind(c->sched, now, &d))
		start_bind(c, &d);
	while (c->low_inflight < GS_CTRL_REPORTS_MAX && may_act(c) && gs_sched_next_report(c->sched, now, &r))
		handle_report(c, &r);
	int64_t due = gs_sched_next_deadline(c->sched);
	if (due >= 0)
		uv_timer_start(&c->retry, on_retry_timer, (uint64_t)(due > now ? due - now : 0), 0);
	else
		uv_timer_stop(&c->retry);
}

void gs_controller_kick(struct gs_controller *c)
{
	want_pump(c);
}

/* ---- watch handlers ---------------------------------------------------------------------------- */

/* The pod watch's decoder asks: is this pod held bound to that node? Then it reads only what can change. */
static int held_bound(const char *uid, const char *node, size_t node_len, void *ud)
{
	struct gs_controller *c = ud;
	return gs_sched_pod_held(c->sched, uid, node, node_len);
}

static void on_upsert(struct gs_watch *w, enum gs_obj_kind kind, const void *obj, void *ud)
{
	struct gs_controller *c = ud;
	int64_t now = (int64_t)uv_now(c->loop);
	(void)w;
	if (kind == GS_OBJ_POD)
		gs_sched_pod_upsert(c->sched, obj, now);
	else
		gs_sched_node_upsert(c->sched, obj, now);
	want_pump(c);
}

static void on_remove(struct gs_watch *w, enum gs_obj_kind kind, const char *key, void *ud)
{
	struct gs_controller *c = ud;
	int64_t now = (int64_t)uv_now(c->loop);
	(void)w;
	if (kind == GS_OBJ_POD)
		gs_sched_pod_delete(c->sched, key, now);
	else
		gs_sched_node_delete(c->sched, key, now);
	want_pump(c);
}

static void on_synced(struct gs_watch *w, void *ud)
{
	struct gs_controller *c = ud;
	struct gs_sched_stats st;
	struct gs_watch_stats p, n;

	if (c->pods && c->nodes) {
		gs_watch_stats(c->pods, &p);
		gs_watch_stats(c->nodes, &n);
		if (p.synced && n.synced)
			c->caches_synced = 1;
	}
	gs_sched_stats(c->sched, &st);
	gs_log_info("%s synced: %zu pods of ours (%zu pending), %zu pods counted on nodes, %zu nodes (%zu schedulable)",
		    gs_watch_name(w), st.pods, st.pending, st.uses, st.nodes, st.nodes_schedulable);
	want_pump(c);
}

/* ---- metrics ----------------------------------------------------------------------------------- */

static struct gs_sched_stats sched_stats(void *ud)
{
	struct gs_sched_stats st;
	gs_sched_stats(((struct gs_controller *)ud)->sched, &st);
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
	const struct waiting_gauge *g = ud;
	return (double)sched_stats(g->c).waiting_by[g->reason];
}

/* The age of the oldest pod waiting with this reason, 0 when none: a pending pod has waited since its
 * creation. One O(pods) pass per scrape serves every reason's series. */
static double m_waiting_age(void *ud)
{
	const struct waiting_gauge *g = ud;
	struct gs_controller *c = g->c;
	uint64_t at = uv_now(c->loop) + 1;
	double age;

	if (c->oldest_at != at) {
		gs_sched_waiting_oldest(c->sched, c->oldest_created_ms);
		c->oldest_at = at;
	}
	if (!c->oldest_created_ms[g->reason])
		return 0;
	age = wall_s() - (double)c->oldest_created_ms[g->reason] / 1000.0;
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

static double m_inflight(void *ud)
{
	return (double)((struct gs_controller *)ud)->binds_inflight;
}

static struct gs_watch_stats watch_stats(struct gs_watch *w)
{
	struct gs_watch_stats st;
	gs_watch_stats(w, &st);
	return st;
}

static double m_pod_restarts(void *ud)
{
	return (double)watch_stats(((struct gs_controller *)ud)->pods).restarts_total;
}

static double m_node_restarts(void *ud)
{
	return (double)watch_stats(((struct gs_controller *)ud)->nodes).restarts_total;
}

static double m_pod_relists(void *ud)
{
	return (double)watch_stats(((struct gs_controller *)ud)->pods).relists_total;
}

static double m_node_relists(void *ud)
{
	return (double)watch_stats(((struct gs_controller *)ud)->nodes).relists_total;
}

static double m_pod_pb(void *ud)
{
	return (double)watch_stats(((struct gs_controller *)ud)->pods).protobuf_total;
}

static double m_pod_json(void *ud)
{
	return (double)watch_stats(((struct gs_controller *)ud)->pods).json_total;
}

static double m_node_pb(void *ud)
{
	return (double)watch_stats(((struct gs_controller *)ud)->nodes).protobuf_total;
}

static double m_node_json(void *ud)
{
	return (double)watch_stats(((struct gs_controller *)ud)->nodes).json_total;
}

static double m_requests(void *ud)
{
	struct gs_kube_stats st;
	gs_kube_stats(((struct gs_controller *)ud)->kube, &st);
	return (double)st.requests_total;
}

static double m_tls_full(void *ud)
{
	struct gs_kube_stats st;
	gs_kube_stats(((struct gs_controller *)ud)->kube, &st);
	return (double)st.tls.full;
}

static double m_tls_resumed(void *ud)
{
	struct gs_kube_stats st;
	gs_kube_stats(((struct gs_controller *)ud)->kube, &st);
	return (double)st.tls.resumed;
}

static void register_metrics(struct gs_controller *c)
{
	struct gs_metrics *m = c->metrics;

	gs_metrics_gauge_fn(m, "gpu_scheduler_pending_pods", "Pods of ours not yet bound (waiting, queued, binding or in backoff).",
			    NULL, m_pending, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_waiting_pods", "Pending pods blocked by a reason (see their events).", NULL,
			    m_waiting, c);
	for (int r = GS_WAIT_NONE + 1; r < GS_WAIT__COUNT; r++) {
		struct waiting_gauge *g = &c->waiting_by[r];
		*g = (struct waiting_gauge){.c = c, .reason = (enum gs_wait_reason)r};
		snprintf(g->labels, sizeof(g->labels), "reason=\"%s\"", gs_wait_reason_name(g->reason));
		gs_metrics_gauge_fn(m, "gpu_scheduler_waiting_pods_by_reason",
				    "Waiting pods by the reason their events give (NODE_MISSING, NOT_MUTATED, ...).",
				    g->labels, m_waiting_by, g);
	}
	for (int r = GS_WAIT_NONE + 1; r < GS_WAIT__COUNT; r++)
		gs_metrics_gauge_fn(m, "gpu_scheduler_waiting_pods_max_age_seconds",
				    "Seconds since the creation of the oldest pod waiting with this reason (0: none waits).",
				    c->waiting_by[r].labels, m_waiting_age, &c->waiting_by[r]);
	gs_metrics_gauge_fn(m, "gpu_scheduler_bound_pods", "Pods of ours known to be bound.", NULL, m_bound, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_bindings_inflight", "Binding requests in flight.", NULL, m_inflight, c);
	for (int i = 0; i < RES__COUNT; i++)
		gs_metrics_counter(m, "gpu_scheduler_binding_attempts_total", "Binding requests by result.",
				   result_labels[i], &c->bind_results[i]);
	gs_histogram_init(&c->bind_latency, gs_latency_buckets, GS_LATENCY_BUCKETS_N);
	gs_metrics_histogram(m, "gpu_scheduler_binding_duration_seconds", "Time from sending a binding to its answer.",
			     NULL, &c->bind_latency);
	gs_histogram_init(&c->e2e_latency, gs_latency_buckets, GS_LATENCY_BUCKETS_N);
	gs_metrics_histogram(m, "gpu_scheduler_pod_scheduling_duration_seconds",
			     "Time from a pod's creation to its successful binding.", NULL, &c->e2e_latency);
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_restarts_total", "Watches that ended and were restarted.",
			      "resource=\"pods\"", m_pod_restarts, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_restarts_total", "Watches that ended and were restarted.",
			      "resource=\"nodes\"", m_node_restarts, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_relists_total", "Lists after the first (410 Gone or lost version).",
			      "resource=\"pods\"", m_pod_relists, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_relists_total", "Lists after the first (410 Gone or lost version).",
			      "resource=\"nodes\"", m_node_relists, c);
	static const char enc_help[] = "List pages and watch streams read from the apiserver, by the encoding it answered in.";
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_responses_total", enc_help,
			      "resource=\"pods\",encoding=\"protobuf\"", m_pod_pb, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_responses_total", enc_help, "resource=\"pods\",encoding=\"json\"",
			      m_pod_json, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_responses_total", enc_help,
			      "resource=\"nodes\",encoding=\"protobuf\"", m_node_pb, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_watch_responses_total", enc_help, "resource=\"nodes\",encoding=\"json\"",
			      m_node_json, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_cache_objects", "Objects in the scheduler's cache.", "kind=\"pod\"",
			    m_cache_pods, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_cache_objects", "Objects in the scheduler's cache.", "kind=\"node\"",
			    m_cache_nodes, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_cache_objects", "Objects in the scheduler's cache.", "kind=\"map\"", m_maps,
			    c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_cache_objects", "Objects in the scheduler's cache.",
			    "kind=\"node_pod\"", m_uses, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_ledger_devices", "GPU devices in the ledger with a holder (node, device).",
			    "state=\"held\"", m_devs_held, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_ledger_devices", "GPU devices in the ledger with a holder (node, device).",
			    "state=\"shared\"", m_devs_shared, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_ignored_claims_total",
			      "Pods seen on a node with a gpu-scheduler.io/assigned claim the ledger does not believe.",
			      NULL, m_claims_ignored, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_device_conflicts_total",
			      "Devices found given by a gpu-scheduling-map to one pod and by the device plugin to another "
			      "(per pair of pods; docs/agent.md).",
			      NULL, m_device_conflicts, c);
	static const char agent_help[] = "Nodes by the state of the node agent's data (docs/agent.md).";
	gs_metrics_gauge_fn(m, "gpu_scheduler_agent_nodes", agent_help, "state=\"fresh\"", m_agent_fresh, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_agent_nodes", agent_help, "state=\"stale\"", m_agent_stale, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_agent_nodes", agent_help, "state=\"unusable\"", m_agent_unusable, c);
	gs_metrics_gauge_fn(m, "gpu_scheduler_agent_nodes", agent_help, "state=\"none\"", m_agent_none, c);
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
	static const char tls_help[] = "TLS handshakes completed with the apiserver, by whether they resumed a session.";
	gs_metrics_counter_fn(m, "gpu_scheduler_apiserver_tls_handshakes_total", tls_help, "resumed=\"false\"",
			      m_tls_full, c);
	gs_metrics_counter_fn(m, "gpu_scheduler_apiserver_tls_handshakes_total", tls_help, "resumed=\"true\"",
			      m_tls_resumed, c);
}

/* ---- lifecycle --------------------------------------------------------------------------------- */

int gs_controller_start(uv_loop_t *loop, struct gs_kube *kube, struct gs_metrics *metrics,
			const struct gs_controller_opts *opts, struct gs_controller **out)
{
	char selector[512];
	struct gs_sched_config sc;
	struct gs_controller *c = gs_xcalloc(1, sizeof(*c));

	c->loop = loop;
	c->kube = kube;
	c->metrics = metrics;
	c->max_inflight = opts->max_inflight_binds ? opts->max_inflight_binds : 64;
	c->events = opts->events;
	c->leader = opts->leader;
	c->scheduler_name = gs_xstrdup(opts->scheduler_name);
	c->annotation = gs_xstrdup(opts->annotation);
	gs_sched_config_init(&sc);
	sc.scheduler_name = opts->scheduler_name;
	sc.annotation = opts->annotation;
	sc.check_env = opts->check_env;
	sc.recreate_unmutated = opts->recreate_unmutated;
	sc.device_sharing_any = opts->device_sharing_any;
	sc.alias_label = opts->node_alias_label;
	sc.ignored_resources = opts->ignored_resources;
	sc.ignored_resource_groups = opts->ignored_resource_groups;
	sc.agent_stale_ms = opts->agent_stale_ms;
	sc.seed = opts->seed;
	c->sched = gs_sched_new(&sc);
	if (!c->sched) { /* an empty scheduler name */
		free(c->scheduler_name);
		free(c->annotation);
		free(c);
		return -EINVAL;
	}
	uv_prepare_init(loop, &c->pump);
	c->pump.data = c;
	uv_timer_init(loop, &c->retry);
	c->retry.data = c;
	uv_timer_init(loop, &c->grace);
	c->grace.data = c;
	register_metrics(c);

	struct gs_watch_handlers h = {.upsert = on_upsert, .remove = on_remove, .synced = on_synced};
	/*
	 * Every non-terminal pod, whatever its scheduler: the node checks count what the pods of others take
	 * from a node (kube-scheduler's informer uses the same selector). The apiserver sends DELETED when a
	 * pod leaves the selector by ending, which frees its node's resources and devices.
	 */
	snprintf(selector, sizeof(selector), "status.phase!=Succeeded,status.phase!=Failed");
	struct gs_watch_opts wo = {
		.kind = GS_OBJ_NODE,
		.path = "/api/v1/nodes",
		.seed = opts->seed ^ 0x6e6f646573ull,
	};
	gs_watch_start(loop, kube, &wo, &h, c, &c->nodes);
	wo.kind = GS_OBJ_POD;
	wo.path = "/api/v1/pods";
	wo.field_selector = selector;
	wo.map_annotation = opts->annotation;
	wo.hint = (struct gs_decode_hint){.bound = held_bound, .ud = c};
	wo.seed = opts->seed ^ 0x706f6473ull;
	gs_watch_start(loop, kube, &wo, &h, c, &c->pods);
	*out = c;
	return 0;
}

/* ---- /debug/ ----------------------------------------------------------------------------------- */

#define DEBUG_BODY_MAX (1024 * 1024)

static char *debug_error(int *status, int code, const char *msg)
{
	struct gs_buf b;
	gs_buf_init(&b, 4096);
	*status = code;
	if (gs_buf_append_str(&b, "{\"error\":") < 0 || gs_buf_append_json_str(&b, msg) < 0 ||
	    gs_buf_append_str(&b, "}\n") < 0) {
		gs_buf_free(&b);
		return NULL;
	}
	return gs_buf_steal(&b, NULL);
}

int gs_controller_node_allows(void *controller, const char *node, const char *ns, char *why, size_t size)
{
	struct gs_controller *c = controller;

	return gs_sched_node_allows(c->sched, node, ns, why, size);
}

char *gs_controller_debug(const char *path, int *status, const char **ctype, void *controller)
{
	struct gs_controller *c = controller;
	struct gs_buf b;
	char ns[254], msg[700];
	int r;

	*ctype = "application/json";
	gs_buf_init(&b, DEBUG_BODY_MAX);
	if (strcmp(path, "/debug/pending") == 0) {
		struct gs_sched_pending p;
		gs_sched_pending(c->sched, &p);
		r = gs_pending_json(&p, (int64_t)(wall_s() * 1000), &b);
	} else if (strncmp(path, "/debug/pods/", 12) == 0) {
		const char *nsp = path + 12, *slash = strchr(nsp, '/');
		size_t nslen = slash ? (size_t)(slash - nsp) : 0;
		struct gs_sched_explain e;
		if (!slash || !nslen || nslen >= sizeof(ns) || !slash[1] || strchr(slash + 1, '/'))
			return debug_error(status, 404, "expected /debug/pods/NAMESPACE/NAME");
		memcpy(ns, nsp, nslen);
		ns[nslen] = '\0';
		if (gs_sched_explain(c->sched, ns, slash + 1, &e) < 0) {
			snprintf(msg, sizeof(msg), "pod %s/%.300s is not one of ours (spec.schedulerName %s) or not known yet",
				 ns, slash + 1, c->scheduler_name);
			return debug_error(status, 404, msg);
		}
		r = gs_explain_json(&e, (int64_t)(wall_s() * 1000), &b);
		gs_sched_explain_free(&e);
	} else {
		return debug_error(status, 404, "no such debug endpoint: try /debug/pending or /debug/pods/NAMESPACE/NAME");
	}
	if (r < 0) {
		gs_buf_free(&b);
		return debug_error(status, 500, "the explanation is too large");
	}
	*status = 200;
	return gs_buf_steal(&b, NULL);
}

int gs_controller_ready(const struct gs_controller *c, char *why, size_t whylen)
{
	struct gs_watch_stats p, n;
	gs_watch_stats(c->pods, &p);
	gs_watch_stats(c->nodes, &n);
	if (!n.synced || !p.synced) {
		snprintf(why, whylen, "caches not synced yet (nodes %s, pods %s)", n.synced ? "synced" : "listing",
			 p.synced ? "synced" : "listing");
		return 0;
	}
	if (!n.healthy || !p.healthy) {
		snprintf(why, whylen, "apiserver unreachable: the %s watch is reconnecting", !p.healthy ? "pod" : "node");
		return 0;
	}
	return 1;
}

/* Finishes the stop once the watches are gone and no binding is in flight (or the grace ran out). */
static void stop_check(struct gs_controller *c)
{
	if (c->binds_inflight > 0 && uv_is_active((uv_handle_t *)&c->grace))
		return;
	if (uv_is_closing((uv_handle_t *)&c->grace))
		return;
	if (c->binds_inflight > 0)
		gs_log_warn("shutdown: %u binding(s) still in flight after the grace period; cancelling them",
			    c->binds_inflight);
	gs_closer_uv(&c->closer, (uv_handle_t *)&c->pump);
	gs_closer_uv(&c->closer, (uv_handle_t *)&c->retry);
	gs_closer_uv(&c->closer, (uv_handle_t *)&c->grace);
	gs_closer_drop(&c->closer); /* the grace's part */
}

static void on_grace(uv_timer_t *t)
{
	stop_check(t->data);
}

void gs_controller_stop(struct gs_controller *c, unsigned grace_ms, void (*done_cb)(void *ud), void *ud)
{
	c->stopping = 1;
	gs_closer_start(&c->closer, NULL, done_cb, ud);
	uv_prepare_stop(&c->pump);
	uv_timer_stop(&c->retry);
	gs_closer_hold(&c->closer);
	gs_watch_stop(c->pods, gs_closer_drop_cb, &c->closer);
	gs_closer_hold(&c->closer);
	gs_watch_stop(c->nodes, gs_closer_drop_cb, &c->closer);
	gs_closer_hold(&c->closer); /* the grace: stop_check drops it once it closes the handles */
	if (c->binds_inflight > 0) {
		gs_log_info("shutdown: waiting for %u binding(s) in flight", c->binds_inflight);
		uv_timer_start(&c->grace, on_grace, grace_ms, 0);
	} else {
		stop_check(c);
	}
	gs_closer_arm(&c->closer);
}

void gs_controller_free(struct gs_controller *c)
{
	if (!c)
		return;
	gs_sched_free(c->sched);
	gs_histogram_free(&c->bind_latency);
	gs_histogram_free(&c->e2e_latency);
	free(c->scheduler_name);
	free(c->annotation);
	free(c);
}
