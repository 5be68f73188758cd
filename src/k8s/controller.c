/*
 * controller.c: see controller.h. Everything here is glue: the engine decides, the API module writes,
 * this file moves records between them, measures, and keeps the number of requests bounded.
 */
#include "k8s/controller.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "core/closer.h"
#include "core/log.h"
#include "k8s/api.h"
#include "k8s/controller_metrics.h"
#include "k8s/decode_gpm.h"
#include "k8s/decode_pdb.h"
#include "k8s/gpm_status.h"
#include "k8s/watch.h"
#include "sched/explain_out.h"
#include "sched/workload_out.h"
#include "sched/gpm.h"
#include "sched/sched.h"

/* Low-priority requests (events, conditions, deletions) outstanding at most: the engine keeps the
 * rest of its reports until there is room; Scheduled events beyond GS_CTRL_LOW_MAX outstanding are
 * dropped and counted (gpu_scheduler_events_total{result="dropped"}), as client-go's event broadcaster drops
 * what finds 1,000 queued (record.maxQueuedEvents): a burst of bindings outruns the events at low
 * priority, and each one queued holds its request (some 800 bytes; docs/performance.md, the RSS). */
#define GS_CTRL_REPORTS_MAX       64
#define GS_CTRL_LOW_MAX           1000
#define GS_CTRL_COMPONENT         "gpu-scheduler"
/* GPUPlacementMaps per list page: each may hold 64 KiB of map, so a page's reply and its parse stay
 * within a few MiB whatever the objects' count (issue 36: the whole list in one reply took 39 MiB). */
#define GS_CTRL_GPM_PAGE          32
/* --placeholder-image's default: the pause image kubelets use for their pod sandboxes. */
#define GS_CTRL_PLACEHOLDER_IMAGE "registry.k8s.io/pause:3.9"
/* The pod watch starts once the GPUPlacementMaps' first list is answered, or after this long anyway. */
#define GS_CTRL_MAPS_FIRST_MS     5000

struct gs_controller {
	uv_loop_t *loop;
	struct gs_kube *kube;
	struct gs_metrics *metrics;
	struct gs_sched *sched;
	struct gs_watch *pods, *nodes;
	struct gs_watch *gpms;          /* GPUPlacementMaps, every namespace (JSON; absent without the CRD) */
	struct gs_watch *pdbs;          /* PodDisruptionBudgets, every namespace (JSON; preemption waits for them) */
	const struct gs_leader *leader; /* NULL: no election, always act */
	int pods_nodes_synced;          /* both watches have listed once */
	int pdbs_answered;              /* the PodDisruptionBudgets answered once (pdbs_settled) */
	int caches_synced;              /* and the GPUPlacementMaps answered once (listed, 404 or an error):
				* decisions and reports may start */
	char *scheduler_name;
	char *annotation;
	char *placeholder_image;
	unsigned max_inflight;
	int events;
	int audit;             /* --engine-audit */
	uv_prepare_t pump;     /* runs the pump once per loop iteration when something changed */
	uv_timer_t retry;      /* wakes the pump when the engine's next retry is due */
	uv_timer_t grace;      /* bounds the shutdown */
	uv_timer_t maps_first; /* bounds the pod watch's wait for the GPUPlacementMaps' first answer */
	uv_timer_t relist;     /* the next relist of the GPUPlacementMaps the engine asked for (not held) */
	uint64_t seed;
	unsigned binds_inflight;
	unsigned low_inflight;
	int stopping;
	/* The stop: both watches, the bindings' grace (until stop_check closes the three handles), and
	 * those handles. No release: gs_controller_free frees, after the client's close. */
	struct gs_closer closer;
	int freed_wanted;

	struct gs_controller_metrics m; /* its counters are counted here, its gauges read the rest */
	struct gs_gpm_writer gpmw;      /* GPUPlacementMaps' status (leader only) */
};

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

/* The status writer's view of the two above. */
static int writer_may_act(void *ud)
{
	const struct gs_controller *c = ud;
	return !c->stopping && may_act(c);
}

static void writer_wake(void *ud)
{
	want_pump(ud);
}

/* ---- low-priority writes ----------------------------------------------------------------------- */

struct low_req {
	struct gs_controller *c;
	char what[16];
	char ref[300]; /* ns/name, for the log */
	/* A placeholder's create: its member's uid, namespace and name, for gs_sched_placeholder_created
	 * (one allocation, member_uid first); NULL otherwise. A preemption's victim ("disruption", then
	 * "preempt"): its uid, namespace and name the same way, for its delete and the engine. */
	char *member_uid;
	const char *ph_ns, *ph_name;
};

static void send_victim_delete(struct gs_controller *c, struct low_req *q);

/* A placeholder's create succeeded: the engine learns its uid from the reply (the pod as stored), the
 * only proof that a pod is a placeholder of ours (sched.h). */
static void placeholder_made(struct gs_controller *c, const struct low_req *q, const struct gs_http_response *resp)
{
	char *uid = gs_decode_object_uid(resp->body, resp->body_len);

	if (!uid) {
		gs_log_warn("placeholder %s: the create's reply names no uid; it counts as an ordinary pod", q->ref);
		return;
	}
	gs_sched_placeholder_created(c->sched, q->member_uid, q->ph_ns, q->ph_name, uid, (int64_t)uv_now(c->loop));
	free(uid);
}

static void on_low_done(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct low_req *q = ud;
	struct gs_controller *c = q->c;
	enum gs_api_result res = gs_api_classify(err, resp);

	c->low_inflight--;
	int ph = strcmp(q->what, "placeholder") == 0, unph = strcmp(q->what, "unplace") == 0;
	int dis = strcmp(q->what, "disruption") == 0, pre = strcmp(q->what, "preempt") == 0;
	if (ph || unph)
		c->m.placeholders[res == GS_API_OK || (unph && res == GS_API_GONE)
					  ? (ph ? GS_CTRL_PH_CREATED : GS_CTRL_PH_DELETED)
					  : GS_CTRL_PH_FAILED]
			.v++;
	/* The condition written (or not: the delete goes all the same), while we still lead: a replica
	 * that stopped leading meanwhile deletes nothing (the new leader plans again). */
	if (dis && res != GS_API_GONE && !c->stopping && may_act(c)) {
		c->low_inflight++;
		send_victim_delete(c, q);
		return;
	}
	if (pre && res != GS_API_OK && res != GS_API_GONE) {
		c->m.preempt_failed.v++; /* it may be chosen again; its node's waiters are placed again */
		gs_sched_preemption_failed(c->sched, q->member_uid, (int64_t)uv_now(c->loop));
	}
	if (err != -ECANCELED && res != GS_API_OK &&
	    !((strcmp(q->what, "delete") == 0 || unph || dis || pre) && res == GS_API_GONE)) {
		if (strcmp(q->what, "event") == 0)
			c->m.events_failed.v++;
		else if (strcmp(q->what, "condition") == 0)
			c->m.conditions_failed.v++;
		gs_log_warn("pod %s: %s failed: %s", q->ref, q->what,
			    err              ? msg
			    : resp->body_len ? resp->body
					     : "(no body)");
	} else if (res == GS_API_OK && strcmp(q->what, "event") == 0) {
		c->m.events_sent.v++;
	} else if (res == GS_API_OK && ph && q->member_uid) {
		placeholder_made(c, q, resp);
	}
	free(q->member_uid);
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
		c->m.events_dropped.v++;
		return;
	}
	struct low_req *q = low_req_new(c, "event", pod);
	if (gs_api_event(c->kube, pod, type, reason, message, GS_CTRL_COMPONENT, gs_clock_wall_ms(), on_low_done, q) <
	    0) {
		free(q);
		c->m.events_dropped.v++;
		return;
	}
	c->low_inflight++;
}

static void send_condition(struct gs_controller *c, const struct gs_api_pod_ref *pod, const char *message)
{
	struct low_req *q = low_req_new(c, "condition", pod);
	if (gs_api_unschedulable(c->kube, pod, message, gs_clock_wall_ms(), on_low_done, q) < 0) {
		free(q);
		c->m.conditions_failed.v++;
		return;
	}
	c->low_inflight++;
}

/* ---- preemption (sched.h, gs_sched_next_preemption; docs/sched.md, "Preemption") ------------------ */

/* The victim q names is deleted (its own grace period, its uid the precondition); q goes on to it. */
static void send_victim_delete(struct gs_controller *c, struct low_req *q)
{
	struct gs_api_pod_ref v = {.ns = q->ph_ns, .name = q->ph_name, .uid = q->member_uid};

	snprintf(q->what, sizeof(q->what), "preempt");
	if (gs_api_delete_pod(c->kube, &v, on_low_done, q) < 0) {
		c->low_inflight--;
		c->m.preempt_failed.v++;
		gs_sched_preemption_failed(c->sched, q->member_uid, (int64_t)uv_now(c->loop));
		free(q->member_uid);
		free(q);
	}
}

/* "team-a/low-0" for a pod of ns, else "a pod of another namespace" (issue 36: names stay in their
 * namespace; the uid, opaque, is given as kube-scheduler does). */
static const char *pod_shown(char *out, size_t size, const char *ns, const char *name, const char *viewer_ns)
{
	if (strcmp(ns, viewer_ns) == 0)
		snprintf(out, size, "%s/%s", ns, name);
	else
		snprintf(out, size, "a pod of another namespace");
	return out;
}

/*
 * One preemption: the preemptor's status.nominatedNodeName, then per victim its DisruptionTarget
 * condition and, that answered, its delete; a Preempted event on each victim and a Preempting event on
 * the preemptor, each naming the other (by uid across namespaces). A victim whose delete fails is told
 * to the engine (gs_sched_preemption_failed).
 */
static void handle_preemption(struct gs_controller *c, const struct gs_preemption *pe)
{
	struct gs_api_pod_ref pod = {.ns = pe->ns, .name = pe->name, .uid = pe->uid};
	char cond[300], msg[1024], who[300];
	struct low_req *q = low_req_new(c, "nominate", &pod);
	size_t at;

	if (gs_api_nominate(c->kube, &pod, pe->node, on_low_done, q) < 0)
		free(q);
	else
		c->low_inflight++;
	/* kube-scheduler's words, with our name (DefaultPreemption's PrepareCandidate) */
	snprintf(cond, sizeof(cond), "%s: preempting to accommodate a higher priority pod", c->scheduler_name);
	at = (size_t)snprintf(msg, sizeof(msg), "Preempting %zu pod%s of lower priority on node %s:", pe->n_victims,
			      pe->n_victims == 1 ? "" : "s", pe->node);
	for (size_t i = 0; i < pe->n_victims; i++) {
		const struct gs_preempt_victim *v = &pe->victims[i];
		struct gs_api_pod_ref vp = {.ns = v->ns, .name = v->name, .uid = v->uid};
		size_t ul = strlen(v->uid) + 1, nl = strlen(v->ns) + 1, ml = strlen(v->name) + 1;
		char ev[600];

		q = low_req_new(c, "disruption", &vp);
		q->member_uid = gs_xmalloc(ul + nl + ml);
		memcpy(q->member_uid, v->uid, ul);
		q->ph_ns = memcpy(q->member_uid + ul, v->ns, nl);
		q->ph_name = memcpy(q->member_uid + ul + nl, v->name, ml);
		c->low_inflight++;
		if (gs_api_disruption_target(c->kube, &vp, cond, gs_clock_wall_ms(), on_low_done, q) < 0)
			send_victim_delete(c, q); /* the delete all the same */
		gs_log_info("pod %s/%s (priority %lld): preempted on node %s by %s/%s (priority %lld)%s%s", v->ns,
			    v->name, (long long)v->priority, pe->node, pe->ns, pe->name, (long long)pe->priority,
			    v->pdb ? ", violating PodDisruptionBudget " : "", v->pdb ? v->pdb : "");
		snprintf(ev, sizeof(ev), "Preempted by pod %s (%s) on node %s%s%s", pe->uid,
			 pod_shown(who, sizeof(who), pe->ns, pe->name, v->ns), pe->node,
			 v->pdb ? ", violating PodDisruptionBudget " : "", v->pdb ? v->pdb : "");
		send_event(c, &vp, GS_EVENT_NORMAL, "Preempted", ev);
		/* the budget of a pod of another namespace is not named to the preemptor, as the pod is not */
		int same_ns = strcmp(v->ns, pe->ns) == 0;
		if (at < sizeof(msg))
			at += (size_t)snprintf(msg + at, sizeof(msg) - at, "%s %s (uid %s, priority %lld%s%s)",
					       i ? "," : "", pod_shown(who, sizeof(who), v->ns, v->name, pe->ns),
					       v->uid, (long long)v->priority,
					       v->pdb && same_ns ? ", violating PodDisruptionBudget " : "",
					       v->pdb && same_ns ? v->pdb : "");
		c->m.preempt_pdb.v += v->pdb != NULL;
	}
	c->m.preempt_victims.v += pe->n_victims;
	send_event(c, &pod, GS_EVENT_NORMAL, "Preempting", msg);
}

static void send_delete(struct gs_controller *c, const struct gs_api_pod_ref *pod)
{
	struct low_req *q = low_req_new(c, "delete", pod);
	if (gs_api_delete_pod(c->kube, pod, on_low_done, q) < 0) {
		free(q);
		return;
	}
	c->low_inflight++;
	c->m.recreated.v++;
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
		send_event(c, &other, GS_EVENT_WARNING, "DeviceConflict",
			   r->other_message ? r->other_message : r->message);
		return;
	}
	if (r->kind == GS_REPORT_GANG) { /* on the owner, or on one member; the engine logged it */
		struct gs_api_pod_ref owner = {
			.ns = r->ns, .name = r->owner_name, .uid = r->owner_uid, .kind = r->owner_kind};
		send_event(c, r->uid ? &pod : &owner, r->warning ? GS_EVENT_WARNING : GS_EVENT_NORMAL, r->event_reason,
			   r->message);
		if (!r->uid)
			gs_controller__gang_observed(&c->m, r, gs_clock_wall_ms());
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
	char *placeholder; /* its gang placeholder, deleted before the Binding is sent; NULL: none */
	uint64_t started;  /* uv_now at send */
	int64_t created_ms;
	char *uid, *ns, *name, *node, *devices;
	char *where; /* for messages: "node4", or "node1 (node gpu-worker3)" when resolved by the alias label */
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
	free(b->placeholder);
	free(b);
}

/* Asked again just before the binding is written: a leadership that lapsed while it waited in the
 * client's queue (rate limit, a connection being made, the process frozen) withdraws it. */
static int bind_may_send(void *ud)
{
	const struct bind_req *b = ud;
	return may_act(b->c);
}

/* The binding is done with: the request freed, the stop told, the pump asked. */
static void bind_finish(struct gs_controller *c, struct bind_req *b)
{
	bind_req_free(b);
	if (c->stopping)
		stop_check(c);
	want_pump(c);
}

/* A binding that took (2xx, or a 409 naming the node we asked): counted, the engine told, the event. */
static void bind_ok(struct gs_controller *c, const struct bind_req *b, const struct gs_http_response *resp, int64_t now)
{
	char message[768];
	struct gs_api_pod_ref pod = {.ns = b->ns, .name = b->name, .uid = b->uid};
	if (resp && resp->status / 100 == 2)
		c->m.bind_results[GS_CTRL_RES_SUCCESS].v++;
	if (b->created_ms > 0) {
		double e2e = gs_clock_wall_s() - (double)b->created_ms / 1000.0;
		gs_histogram_observe(&c->m.e2e_latency, e2e < 0 ? 0 : e2e);
	}
	gs_sched_bind_done(c->sched, b->uid, GS_BIND_OK, now);
	gs_log_info("bound pod %s/%s to %s (CUDA_VISIBLE_DEVICES=%s, index %ld from %s)", b->ns, b->name, b->where,
		    b->devices, b->index, gs_index_source_name(b->source));
	snprintf(message, sizeof(message),
		 "Successfully assigned %s/%s to %s with CUDA_VISIBLE_DEVICES=%s "
		 "(index %ld, map line %d)",
		 b->ns, b->name, b->where, b->devices, b->index, b->line);
	send_event(c, &pod, GS_EVENT_NORMAL, "Scheduled", message);
}

/* A binding that did not take: gone (forgotten), or retried after the backoff (or the Retry-After). */
static void bind_failed(struct gs_controller *c, const struct bind_req *b, enum gs_api_result res, int err,
			const struct gs_http_response *resp, const char *msg, int64_t now)
{
	switch (res) {
	case GS_API_OK:
		break;
	case GS_API_GONE:
		c->m.bind_results[GS_CTRL_RES_GONE].v++;
		gs_log_info(
			"pod %s/%s: binding refused (%d): the pod is gone or already bound; its reservation is kept until the watch says which",
			b->ns, b->name, resp ? resp->status : 0);
		gs_sched_bind_done(c->sched, b->uid, GS_BIND_GONE, now);
		break;
	case GS_API_RETRY:
		c->m.bind_results[GS_CTRL_RES_RETRY].v++;
		if (!err && resp->retry_after > 0) {
			/* 429 and 503 say when to come back: not before, even if the backoff is shorter. */
			gs_log_warn("pod %s/%s: binding failed (%d, Retry-After: %u s); will retry", b->ns, b->name,
				    resp->status, resp->retry_after);
			gs_sched_bind_retry_after(c->sched, b->uid, now, (int64_t)resp->retry_after * 1000);
			break;
		}
		gs_log_warn("pod %s/%s: binding failed (%s); will retry", b->ns, b->name,
			    err                   ? msg
			    : resp->status == 429 ? "429 Too Many Requests"
						  : "server error");
		gs_sched_bind_done(c->sched, b->uid, GS_BIND_RETRY, now);
		break;
	case GS_API_REJECTED:
		/* A 4xx we do not expect (403: RBAC). Retrying with backoff keeps the pod visible as pending
		 * and recovers once the cause is fixed. */
		c->m.bind_results[GS_CTRL_RES_REJECTED].v++;
		gs_log_error("pod %s/%s: binding rejected with %d: %s", b->ns, b->name, resp->status,
			     resp->body_len ? resp->body : "(no body)");
		gs_sched_bind_done(c->sched, b->uid, GS_BIND_RETRY, now);
		break;
	}
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
		c->m.bind_results[GS_CTRL_RES_WITHDRAWN].v++;
		gs_log_info("pod %s/%s: binding withdrawn before sending: no longer leading", b->ns, b->name);
		gs_sched_bind_done(c->sched, b->uid, GS_BIND_RETRY, now);
		bind_finish(c, b);
		return;
	}
	gs_histogram_observe(&c->m.bind_latency, (double)(uv_now(c->loop) - b->started) / 1000.0);
	if (res == GS_API_GONE && gs_api_bind_already_on(resp, b->node)) {
		/* Our own earlier attempt took effect and its answer was lost (the connection or the apiserver
		 * died): the pod is where we asked, so it is bound, not gone (which would free its devices
		 * until the watch shows it on the node). */
		gs_log_info("pod %s/%s: binding answered 409, already assigned to %s, the node we asked: an earlier "
			    "attempt took effect and its answer was lost; counted as bound",
			    b->ns, b->name, b->node);
		c->m.bind_results[GS_CTRL_RES_ALREADY_BOUND].v++;
		res = GS_API_OK;
	}
	if (res == GS_API_OK)
		bind_ok(c, b, resp, now);
	else
		bind_failed(c, b, res, err, resp, msg, now);
	bind_finish(c, b);
}

/* Sends b's Binding (its placeholder, if any, is gone). */
static void send_bind(struct bind_req *b)
{
	struct gs_controller *c = b->c;
	struct gs_api_pod_ref pod = {.ns = b->ns, .name = b->name, .uid = b->uid};
	int r = gs_api_bind(c->kube, &pod, b->node, b->devices, bind_may_send, on_bind_done, b);

	if (r < 0) {
		gs_log_error("pod %s/%s: cannot send the binding: %s", b->ns, b->name, uv_strerror(r));
		c->binds_inflight--;
		gs_sched_bind_done(c->sched, b->uid, GS_BIND_RETRY, (int64_t)uv_now(c->loop));
		bind_req_free(b);
	}
}

/* A gang member's placeholder was deleted (or is gone, 404): now its Binding, so that the kubelet sees
 * the placeholder leave before the member arrives. Any other answer: the Binding goes all the same
 * (the placeholder is an orphan the engine deletes when the watch shows it). */
static void on_placeholder_deleted(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct bind_req *b = ud;
	struct gs_controller *c = b->c;
	enum gs_api_result res = gs_api_classify(err, resp);

	if (err == -ECANCELED) {
		on_bind_done(err, resp, msg, b);
		return;
	}
	if (res != GS_API_OK && res != GS_API_GONE)
		gs_log_warn("pod %s/%s: deleting its placeholder %s failed (%s); binding it anyway", b->ns, b->name,
			    b->placeholder,
			    err              ? msg
			    : resp->body_len ? resp->body
					     : "(no body)");
	c->m.placeholders[res == GS_API_OK || res == GS_API_GONE ? GS_CTRL_PH_DELETED : GS_CTRL_PH_FAILED].v++;
	send_bind(b);
}

static void start_bind(struct gs_controller *c, const struct gs_bind_decision *d)
{
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
	gs_log_debug("pod %s/%s: binding to %s (index %ld from %s, attempt %u)%s%s", d->ns, d->name, b->where, d->index,
		     gs_index_source_name(d->index_source), d->attempt,
		     d->placeholder ? ", after deleting its placeholder " : "", d->placeholder ? d->placeholder : "");
	c->binds_inflight++;
	if (d->placeholder) {
		b->placeholder = gs_xstrdup(d->placeholder);
		r = gs_api_placeholder_delete(c->kube, d->ns, d->placeholder, d->placeholder_uid, GS_KUBE_HIGH,
					      on_placeholder_deleted, b);
		if (r == 0)
			return;
		gs_log_warn("pod %s/%s: cannot delete its placeholder %s: %s; binding it anyway", d->ns, d->name,
			    d->placeholder, uv_strerror(r));
	}
	send_bind(b);
}

/* Creates or deletes a placeholder pod (low priority, as events are). */
static void handle_placeholder(struct gs_controller *c, const struct gs_placeholder *ph)
{
	struct gs_api_pod_ref ref = {.ns = ph->ns, .name = ph->name};
	struct low_req *q = low_req_new(c, ph->create ? "placeholder" : "unplace", &ref);
	int r;

	if (ph->create) {
		size_t ul = strlen(ph->member_uid) + 1, nl = strlen(ph->ns) + 1, ml = strlen(ph->name) + 1;
		q->member_uid = gs_xmalloc(ul + nl + ml);
		memcpy(q->member_uid, ph->member_uid, ul);
		q->ph_ns = memcpy(q->member_uid + ul, ph->ns, nl);
		q->ph_name = memcpy(q->member_uid + ul + nl, ph->name, ml);
	}
	r = ph->create ? gs_api_placeholder_create(c->kube, ph, c->placeholder_image, c->scheduler_name, on_low_done, q)
		       : gs_api_placeholder_delete(c->kube, ph->ns, ph->name, ph->uid, GS_KUBE_LOW, on_low_done, q);
	if (r < 0) {
		gs_log_warn("placeholder %s/%s: cannot %s it: %s", ph->ns, ph->name, ph->create ? "create" : "delete",
			    uv_strerror(r));
		c->m.placeholders[GS_CTRL_PH_FAILED].v++;
		free(q->member_uid);
		free(q);
		return;
	}
	gs_log_info("placeholder %s/%s: %s%s%s", ph->ns, ph->name, ph->create ? "creating it on node " : "deleting it",
		    ph->create ? ph->node : "", ph->create ? " for its gang member" : "");
	c->low_inflight++;
}

/* ---- the pump ---------------------------------------------------------------------------------- */

static void on_retry_timer(uv_timer_t *t)
{
	want_pump(t->data);
}

/* Once pods and nodes are listed and the GPUPlacementMaps answered (a list, a 404: no CRD, or an
 * error: logged and retried by the watch, not waited for), for good. The maps' answer wakes the pump
 * (on_gpm_answered). */
static int caches_settled(struct gs_controller *c)
{
	struct gs_watch_stats g;

	if (c->caches_synced)
		return 1;
	if (!c->pods_nodes_synced || !c->gpms)
		return 0;
	gs_watch_stats(c->gpms, &g);
	if (!g.synced && !g.absent && !g.errors_total)
		return 0;
	return c->caches_synced = 1;
}

/* The PodDisruptionBudgets answered once (listed, or failed: the watch logs and retries; a cluster that
 * refuses them to us must not keep its pods from preempting): victims are chosen knowing them. */
static int pdbs_settled(struct gs_controller *c)
{
	struct gs_watch_stats b;

	if (c->pdbs_answered)
		return 1;
	gs_watch_stats(c->pdbs, &b);
	return c->pdbs_answered = b.synced || b.absent || b.errors_total;
}

static void on_relist_timer(uv_timer_t *t)
{
	want_pump(t->data);
}

/* The engine let memory go while GPUPlacementMaps are refused for it: list them again (leader or not:
 * both replicas hold what they can), at the pace the engine sets. */
static void relist_gpms(struct gs_controller *c, int64_t now)
{
	int64_t due;

	if (!c->gpms)
		return;
	if (gs_sched_gpm_take_relist(c->sched, now, &due)) {
		gs_log_info("gpuplacementmaps: memory was freed while some are not held; listing them again");
		gs_watch_relist(c->gpms);
	} else if (due >= 0 && !uv_is_active((uv_handle_t *)&c->relist)) {
		uv_timer_start(&c->relist, on_relist_timer, (uint64_t)(due > now ? due - now : 0), 0);
	}
}

static void on_pump(uv_prepare_t *p)
{
	struct gs_controller *c = p->data;
	int64_t now = (int64_t)uv_now(c->loop);
	struct gs_bind_decision d;
	struct gs_report r;

	uv_prepare_stop(p);
	/* Every invariant of the engine from scratch (--engine-audit): one broken aborts with its check. The
	 * events since the last pass were taken; so were the last pass's decisions and explains. */
	if (c->audit)
		gs_sched_audit(c->sched);
	if (!c->stopping)
		relist_gpms(c, now);
	/* Until both caches have held a full list once, a pending pod's node may only seem missing: no
	 * decision and no report yet (after a restart, every waiting pod would be told its node does not
	 * exist while the node list is still on its way). The same for a pod's GPUPlacementMap. */
	if (c->stopping || !caches_settled(c) || !may_act(c))
		return;
	while (c->binds_inflight < c->max_inflight && may_act(c) && gs_sched_next_bind(c->sched, now, &d))
		start_bind(c, &d);
	/* Statuses on their own lane, never while a binding waits for a slot. */
	int64_t retry = c->binds_inflight < c->max_inflight ? gs_gpm_writer_pump(&c->gpmw, now) : -1;
	struct gs_preemption pe;
	while (c->low_inflight < GS_CTRL_REPORTS_MAX && may_act(c) && pdbs_settled(c) &&
	       gs_sched_next_preemption(c->sched, now, &pe))
		handle_preemption(c, &pe);
	struct gs_placeholder ph;
	while (c->low_inflight < GS_CTRL_REPORTS_MAX && may_act(c) && gs_sched_next_placeholder(c->sched, now, &ph))
		handle_placeholder(c, &ph);
	while (c->low_inflight < GS_CTRL_REPORTS_MAX && may_act(c) && gs_sched_next_report(c->sched, now, &r))
		handle_report(c, &r);
	int64_t due = gs_sched_next_deadline(c->sched);
	if (retry >= 0 && (due < 0 || retry < due))
		due = retry;
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

/* A GPUPlacementMap to the engine, as a view of the watch's record. */
static void gpm_upsert(struct gs_controller *c, const struct gs_gpm *g, int64_t now)
{
	struct gs_gpm_view v;

	gs_gpm_view_of(g, &v);
	int r = gs_sched_gpm_upsert(c->sched, &v, now); /* the engine logs what it made of it */
	if (r < 0)
		gs_log_warn("gpuplacementmap %s/%s: not taken by the engine: %s", g->ns, g->name, uv_strerror(r));
}

/* A namespaced object's key "NS/NAME" (watch.h): NS into ns[GS_GPM_MAX_NAME + 1], NAME returned; NULL
 * for a key that is not one. */
static const char *key_split(const char *key, char *ns)
{
	const char *slash = strchr(key, '/');
	size_t n = slash ? (size_t)(slash - key) : 0;

	if (!slash || n > GS_GPM_MAX_NAME)
		return NULL;
	memcpy(ns, key, n);
	ns[n] = '\0';
	return slash + 1;
}

static void gpm_delete(struct gs_controller *c, const char *key, int64_t now)
{
	char ns[GS_GPM_MAX_NAME + 1];
	const char *name = key_split(key, ns);

	if (!name)
		return;
	gs_sched_gpm_delete(c->sched, ns, name, now);
	gs_gpm_writer_forget(&c->gpmw, ns, name);
}

static void pdb_delete(struct gs_controller *c, const char *key)
{
	char ns[GS_GPM_MAX_NAME + 1];
	const char *name = key_split(key, ns);

	if (name)
		gs_sched_pdb_delete(c->sched, ns, name);
}

static void on_upsert(struct gs_watch *w, enum gs_obj_kind kind, const void *obj, void *ud)
{
	struct gs_controller *c = ud;
	int64_t now = (int64_t)uv_now(c->loop);
	(void)w;
	if (kind == GS_OBJ_POD)
		gs_sched_pod_upsert(c->sched, obj, now);
	else if (kind == GS_OBJ_NODE)
		gs_sched_node_upsert(c->sched, obj, now);
	else if (kind == GS_OBJ_PDB)
		gs_sched_pdb_upsert(c->sched, obj);
	else
		gpm_upsert(c, obj, now);
	want_pump(c);
}

static void on_remove(struct gs_watch *w, enum gs_obj_kind kind, const char *key, void *ud)
{
	struct gs_controller *c = ud;
	int64_t now = (int64_t)uv_now(c->loop);
	(void)w;
	if (kind == GS_OBJ_POD)
		gs_sched_pod_delete(c->sched, key, now);
	else if (kind == GS_OBJ_NODE)
		gs_sched_node_delete(c->sched, key, now);
	else if (kind == GS_OBJ_PDB)
		pdb_delete(c, key);
	else
		gpm_delete(c, key, now);
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
			c->pods_nodes_synced = 1;
	}
	gs_sched_stats(c->sched, &st);
	gs_log_info("%s synced: %zu pods of ours (%zu pending), %zu pods counted on nodes, %zu nodes (%zu schedulable)",
		    gs_watch_name(w), st.pods, st.pending, st.uses, st.nodes, st.nodes_schedulable);
	want_pump(c);
}

/* ---- lifecycle --------------------------------------------------------------------------------- */

/*
 * Every non-terminal pod, whatever its scheduler: the node checks count what the pods of others take
 * from a node (kube-scheduler's informer uses the same selector). The apiserver sends DELETED when a
 * pod leaves the selector by ending, which frees its node's resources and devices.
 */
static void start_pods(struct gs_controller *c)
{
	struct gs_watch_handlers h = {.upsert = on_upsert, .remove = on_remove, .synced = on_synced};
	struct gs_watch_opts wo = {
		.kind = GS_OBJ_POD,
		.path = "/api/v1/pods",
		.field_selector = "status.phase!=Succeeded,status.phase!=Failed",
		.map_annotation = c->annotation,
		.hint = {.bound = held_bound, .ud = c},
		.seed = c->seed ^ 0x706f6473ull,
	};
	uv_timer_stop(&c->maps_first);
	if (c->pods || c->stopping)
		return;
	gs_watch_start(c->loop, c->kube, &wo, &h, c, &c->pods);
	c->m.pods = c->pods;
}

/* The maps are in (or absent, or failing): the pods now, so that a pod bound by reference is judged by
 * its object (docs/sched.md, "Maps as objects": restarts). */
static void on_gpm_answered(struct gs_watch *w, void *ud)
{
	struct gs_controller *c = ud;
	(void)w;
	start_pods(c);
	want_pump(c);
}

static void on_maps_first(uv_timer_t *t)
{
	struct gs_controller *c = t->data;
	gs_log_warn("gpuplacementmaps: no answer to their first list within %d s; listing pods without them "
		    "(a pod bound by reference seen before its object has its claim ignored)",
		    GS_CTRL_MAPS_FIRST_MS / 1000);
	start_pods(c);
}

/* GPUPlacementMaps, every namespace: JSON, lists at low priority (watch.h), absent without the CRD; the
 * pod watch starts once they answered (bounded by GS_CTRL_MAPS_FIRST_MS); and the writer of their status. */
static void start_gpms(struct gs_controller *c)
{
	struct gs_watch_handlers h = {
		.upsert = on_upsert, .remove = on_remove, .synced = on_synced, .answered = on_gpm_answered};
	struct gs_watch_opts go = {
		.kind = GS_OBJ_GPM,
		.path = "/apis/" GS_GPM_GROUP "/" GS_GPM_VERSION "/" GS_GPM_RESOURCE,
		.consistent_list = 1,
		.page_size = GS_CTRL_GPM_PAGE,
		.seed = c->seed ^ 0x67706d73ull,
	};
	gs_gpm_writer_init(&c->gpmw, c->loop, c->kube, c->sched, writer_may_act, writer_wake, c);
	gs_gpm_writer_register(&c->gpmw, c->metrics);
	uv_timer_start(&c->maps_first, on_maps_first, GS_CTRL_MAPS_FIRST_MS, 0);
	gs_watch_start(c->loop, c->kube, &go, &h, c, &c->gpms);
}

/* PodDisruptionBudgets, every namespace: JSON, lists at low priority; preemption waits for their first
 * answer (pdbs_settled), nothing else does. */
static void start_pdbs(struct gs_controller *c)
{
	struct gs_watch_handlers h = {.upsert = on_upsert, .remove = on_remove, .synced = on_synced};
	struct gs_watch_opts bo = {
		.kind = GS_OBJ_PDB,
		.path = GS_PDB_PATH,
		.seed = c->seed ^ 0x70646273ull,
	};
	gs_watch_start(c->loop, c->kube, &bo, &h, c, &c->pdbs);
}

int gs_controller_start(uv_loop_t *loop, struct gs_kube *kube, struct gs_metrics *metrics,
			const struct gs_controller_opts *opts, struct gs_controller **out)
{
	struct gs_sched_config sc;
	struct gs_controller *c = gs_xcalloc(1, sizeof(*c));

	c->loop = loop;
	c->kube = kube;
	c->metrics = metrics;
	c->max_inflight = opts->max_inflight_binds ? opts->max_inflight_binds : 64;
	c->events = opts->events;
	c->audit = opts->engine_audit;
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
	sc.gpu_resources = opts->gpu_resources;
	sc.agent_stale_ms = opts->agent_stale_ms;
	sc.max_gang_timeout_ms = opts->max_gang_timeout_ms;
	sc.gang_members_per_ns = opts->gang_members_per_ns;
	sc.gang_gpus_per_ns = opts->gang_gpus_per_ns;
	sc.gang_limits = opts->gang_limits;
	sc.map_cache_bytes = opts->map_cache_bytes;
	sc.gpm_bytes = opts->gpm_bytes;
	sc.gpm_bytes_per_ns = opts->gpm_bytes_per_ns;
	sc.gang_placeholders = opts->gang_placeholders;
	sc.preemption = opts->preemption;
	c->placeholder_image =
		gs_xstrdup(opts->placeholder_image ? opts->placeholder_image : GS_CTRL_PLACEHOLDER_IMAGE);
	sc.seed = opts->seed;
	c->sched = gs_sched_new(&sc);
	if (!c->sched) { /* an empty scheduler name */
		free(c->scheduler_name);
		free(c->annotation);
		free(c->placeholder_image);
		free(c);
		return -EINVAL;
	}
	uv_prepare_init(loop, &c->pump);
	c->pump.data = c;
	uv_timer_init(loop, &c->retry);
	c->retry.data = c;
	uv_timer_init(loop, &c->grace);
	c->grace.data = c;
	uv_timer_init(loop, &c->maps_first);
	c->maps_first.data = c;
	uv_timer_init(loop, &c->relist);
	c->relist.data = c;
	c->seed = opts->seed;

	struct gs_watch_handlers h = {.upsert = on_upsert, .remove = on_remove, .synced = on_synced};
	struct gs_watch_opts wo = {
		.kind = GS_OBJ_NODE,
		.path = "/api/v1/nodes",
		.seed = opts->seed ^ 0x6e6f646573ull,
	};
	gs_watch_start(loop, kube, &wo, &h, c, &c->nodes);
	start_pdbs(c);
	start_gpms(c); /* then the pods, once the maps answered */
	c->m.loop = loop;
	c->m.sched = c->sched;
	c->m.kube = kube;
	c->m.nodes = c->nodes;
	c->m.gpms = c->gpms;
	c->m.pdbs = c->pdbs;
	c->m.binds_inflight = &c->binds_inflight;
	c->m.mapped_max = opts->mapped_gpu_series > 0 ? (size_t)opts->mapped_gpu_series : 0;
	gs_controller_metrics_register(&c->m, metrics);
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

int64_t gs_controller_node_gpus(void *controller, const char *node, char *words, size_t size)
{
	struct gs_controller *c = controller;

	return gs_sched_node_gpus(c->sched, node, words, size);
}

int gs_controller_node_allows(void *controller, const char *node, const char *ns, char *why, size_t size)
{
	struct gs_controller *c = controller;

	return gs_sched_node_allows(c->sched, node, ns, why, size);
}

int gs_controller_map_lookup(void *controller, const char *ns, const char *name, struct gs_gpm_view *out)
{
	struct gs_controller *c = controller;
	struct gs_watch_stats g;

	if (gs_sched_gpm_find(c->sched, ns, name, out))
		return 1; /* absent settings are NULL (gpm_upsert) */
	if ((out->refused = gs_sched_gpm_refused(c->sched, ns, name)) != NULL)
		return 1;
	if (!c->gpms)
		return -EAGAIN;
	gs_watch_stats(c->gpms, &g);
	return g.synced || g.absent ? 0 : -EAGAIN; /* unknown only once the table is complete (or no CRD) */
}

/* A GPUPlacementMap's view with its status (gs_workload_gpm_json), as `gpu-scheduler status gpm/NAME`
 * makes it from the apiserver: the command compares the two row by row. */
static int debug_gpm(struct gs_controller *c, const char *ns, const char *name, struct gs_buf *b)
{
	struct gs_gpm_status st;
	struct gs_sched_workload w;
	int r;

	if (!gs_sched_gpm_status(c->sched, ns, name, &st))
		return -ENOENT;
	gs_sched_gpm_workload(c->sched, ns, name, &w);
	r = gs_workload_gpm_json(&w, &st, gs_clock_wall_ms(), b);
	gs_sched_workload_free(&w);
	return r;
}

/* /debug/workloads/NS/KIND/NAME (rest is NS/KIND/NAME): gs_sched_workload as JSON (workload_out.h); KIND
 * gpuplacementmap: the object's pods and status. */
static char *debug_workload(struct gs_controller *c, const char *rest, int *status)
{
	const char *usage = "expected /debug/workloads/NAMESPACE/statefulset|job|gpuplacementmap/NAME";
	const char *k = strchr(rest, '/'), *n = k ? strchr(k + 1, '/') : NULL, *kind;
	char ns[254], word[32];
	struct gs_sched_workload w;
	struct gs_buf b;
	int r;

	if (!k || !n || k == rest || (size_t)(k - rest) >= sizeof(ns) || (size_t)(n - k - 1) >= sizeof(word) || !n[1] ||
	    strchr(n + 1, '/'))
		return debug_error(status, 404, usage);
	snprintf(ns, sizeof(ns), "%.*s", (int)(k - rest), rest);
	snprintf(word, sizeof(word), "%.*s", (int)(n - k - 1), k + 1);
	gs_buf_init(&b, DEBUG_BODY_MAX);
	if (strcmp(word, "gpuplacementmap") == 0) {
		if ((r = debug_gpm(c, ns, n + 1, &b)) == -ENOENT) {
			gs_buf_free(&b);
			return debug_error(status, 404, "no such GPUPlacementMap in this replica's cache");
		}
	} else if (!(kind = gs_sched_workload_kind(word))) {
		gs_buf_free(&b);
		return debug_error(status, 404, usage);
	} else {
		gs_sched_workload(c->sched, ns, kind, n + 1, NULL, 0, &w);
		r = gs_workload_json(&w, gs_clock_wall_ms(), &b);
		gs_sched_workload_free(&w);
	}
	if (r < 0) {
		gs_buf_free(&b);
		return debug_error(status, 500, "the workload's view is too large");
	}
	*status = 200;
	return gs_buf_steal(&b, NULL);
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
		r = gs_explain_pending_json(&p, gs_clock_wall_ms(), &b);
	} else if (strncmp(path, "/debug/pods/", 12) == 0) {
		const char *nsp = path + 12, *slash = strchr(nsp, '/');
		size_t nslen = slash ? (size_t)(slash - nsp) : 0;
		struct gs_sched_explain e;
		if (!slash || !nslen || nslen >= sizeof(ns) || !slash[1] || strchr(slash + 1, '/'))
			return debug_error(status, 404, "expected /debug/pods/NAMESPACE/NAME");
		memcpy(ns, nsp, nslen);
		ns[nslen] = '\0';
		if (gs_sched_explain(c->sched, ns, slash + 1, &e) < 0) {
			snprintf(msg, sizeof(msg),
				 "pod %s/%.300s is not one of ours (spec.schedulerName %s) or not known yet", ns,
				 slash + 1, c->scheduler_name);
			return debug_error(status, 404, msg);
		}
		r = gs_explain_json(&e, gs_clock_wall_ms(), &b);
		gs_sched_explain_free(&e);
	} else if (strncmp(path, "/debug/workloads/", 17) == 0) {
		gs_buf_free(&b);
		return debug_workload(c, path + 17, status);
	} else {
		return debug_error(status, 404,
				   "no such debug endpoint: try /debug/pending, /debug/pods/NAMESPACE/NAME or "
				   "/debug/workloads/NAMESPACE/KIND/NAME");
	}
	if (r < 0) {
		gs_buf_free(&b);
		return debug_error(status, 500, "the explanation is too large");
	}
	*status = 200;
	return gs_buf_steal(&b, NULL);
}

/* GPUPlacementMaps: the webhook resolves references from the engine's table, so a replica is ready once
 * that table is complete, i.e. the first list is in; or the CRD is not installed (404: nothing to wait
 * for); or the list failed (logged, retried: not waited for, lest an RBAC mistake stop the webhook). */
static int gpm_ready(const struct gs_controller *c, char *why, size_t whylen)
{
	struct gs_watch_stats g;
	gs_watch_stats(c->gpms, &g);
	if (g.synced || g.absent || g.errors_total)
		return 1;
	snprintf(why, whylen, "caches not synced yet (gpuplacementmaps listing)");
	return 0;
}

int gs_controller_ready(const struct gs_controller *c, char *why, size_t whylen)
{
	struct gs_watch_stats p, n;
	if (!c->pods) {
		snprintf(why, whylen, "caches not synced yet (pods wait for the gpuplacementmaps' first list)");
		return 0;
	}
	gs_watch_stats(c->pods, &p);
	gs_watch_stats(c->nodes, &n);
	if (!n.synced || !p.synced) {
		snprintf(why, whylen, "caches not synced yet (nodes %s, pods %s)", n.synced ? "synced" : "listing",
			 p.synced ? "synced" : "listing");
		return 0;
	}
	if (!n.healthy || !p.healthy) {
		snprintf(why, whylen, "apiserver unreachable: the %s watch is reconnecting",
			 !p.healthy ? "pod" : "node");
		return 0;
	}
	return gpm_ready(c, why, whylen);
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
	gs_closer_uv(&c->closer, (uv_handle_t *)&c->maps_first);
	gs_closer_uv(&c->closer, (uv_handle_t *)&c->relist);
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
	uv_timer_stop(&c->maps_first);
	uv_timer_stop(&c->relist);
	if (c->pods) {
		gs_closer_hold(&c->closer);
		gs_watch_stop(c->pods, gs_closer_drop_cb, &c->closer);
	}
	gs_closer_hold(&c->closer);
	gs_watch_stop(c->nodes, gs_closer_drop_cb, &c->closer);
	gs_closer_hold(&c->closer);
	gs_watch_stop(c->gpms, gs_closer_drop_cb, &c->closer);
	gs_closer_hold(&c->closer);
	gs_watch_stop(c->pdbs, gs_closer_drop_cb, &c->closer);
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
	gs_gpm_writer_free(&c->gpmw);
	gs_sched_free(c->sched);
	gs_histogram_free(&c->m.bind_latency);
	gs_histogram_free(&c->m.e2e_latency);
	gs_histogram_free(&c->m.gang_latency);
	free(c->scheduler_name);
	free(c->annotation);
	free(c->placeholder_image);
	free(c);
}
