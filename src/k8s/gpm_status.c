/*
 * gpm_status.c: see gpm_status.h. One record per object written at least once, keyed "NS/NAME": what
 * the Ready condition last said and since when, whether a write is in flight (a newer status then waits
 * for it, so that two writes of one object never cross), and the retry of a failed write.
 */
#include "k8s/gpm_status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "core/log.h"
#include "k8s/api.h"
#include "sched/gpm.h"

#define KEY_MAX 512

struct gpm_rec {
	int ready;        /* what Ready last said: -1 never written */
	int64_t since_ms; /* its lastTransitionTime (wall clock) */
	int inflight;     /* a write of this object is in flight */
	int again;        /* a newer status came while it was: send once it ends */
	int forgotten;    /* the object went while a write was in flight: free at its end */
	int64_t retry_at; /* loop clock of the retry; 0 none */
	uint64_t backoff_ms;
	int refused_told; /* a NotHeld event went out for the refusal the status carries */
};

struct gpm_req {
	struct gs_gpm_writer *w;
	char key[KEY_MAX];
};

void gs_gpm_writer_init(struct gs_gpm_writer *w, uv_loop_t *loop, struct gs_kube *kube, struct gs_sched *sched,
			int (*may_act)(void *ud), void (*wake)(void *ud), void *ud)
{
	memset(w, 0, sizeof(*w));
	w->loop = loop;
	w->kube = kube;
	w->sched = sched;
	w->may_act = may_act;
	w->wake = wake;
	w->ud = ud;
	gs_hmap_init(&w->objs, GS_HMAP_COPY_KEYS);
}

static void set_retry(struct gs_gpm_writer *w, struct gpm_rec *r, int64_t at)
{
	if (!r->retry_at)
		w->retries++;
	r->retry_at = at > 0 ? at : 1;
}

static void clear_retry(struct gs_gpm_writer *w, struct gpm_rec *r)
{
	if (r->retry_at)
		w->retries--;
	r->retry_at = 0;
}

static void failed_later(struct gs_gpm_writer *w, struct gpm_rec *r)
{
	uint64_t d = r->backoff_ms ? r->backoff_ms * 2 : GS_GPM_WRITER_RETRY_MIN_MS;
	r->backoff_ms = d > GS_GPM_WRITER_RETRY_MAX_MS ? GS_GPM_WRITER_RETRY_MAX_MS : d;
	w->writes[GS_GPM_WRITE_FAILED].v++;
	set_retry(w, r, (int64_t)(uv_now(w->loop) + r->backoff_ms));
}

static void drop_rec(struct gs_gpm_writer *w, const char *key, struct gpm_rec *r)
{
	clear_retry(w, r);
	gs_hmap_del_str(&w->objs, key, NULL);
	free(r);
}

/* Leadership lapsed while the write waited in the client (a connection, the rate limit): never sent. It
 * is due again at once; the retry asks may_act, so it goes out when this replica leads again. */
static void withdrawn(struct gs_gpm_writer *w, const char *key, struct gpm_rec *r)
{
	w->writes[GS_GPM_WRITE_WITHDRAWN].v++;
	gs_log_info("gpuplacementmap %s: status write withdrawn before sending: no longer leading", key);
	set_retry(w, r, (int64_t)uv_now(w->loop));
}

/* An answer: counted; a failure retried after the backoff. */
static void answered(struct gs_gpm_writer *w, const char *key, struct gpm_rec *r, int err,
		     const struct gs_http_response *resp, const char *msg)
{
	enum gs_api_result res = gs_api_classify(err, resp);

	if (res == GS_API_REJECTED && gs_api_gpm_uid_mismatch(resp))
		res = GS_API_GONE; /* the uid test failed: another object of that name */
	if (res == GS_API_OK) {
		w->writes[GS_GPM_WRITE_OK].v++;
		r->backoff_ms = 0;
	} else if (res == GS_API_GONE) {
		w->writes[GS_GPM_WRITE_GONE].v++;
		gs_log_info("gpuplacementmap %s: status not written (%d): the object is gone or re-created", key,
			    resp->status);
	} else {
		gs_log_warn("gpuplacementmap %s: status write failed (%s); retrying in %.1f s", key,
			    err              ? msg
			    : resp->body_len ? resp->body
					     : "(no body)",
			    (double)(r->backoff_ms ? r->backoff_ms * 2 : GS_GPM_WRITER_RETRY_MIN_MS) / 1000.0);
		failed_later(w, r);
	}
}

static void on_status_done(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct gpm_req *q = ud;
	struct gs_gpm_writer *w = q->w;
	struct gpm_rec *r = gs_hmap_get_str(&w->objs, q->key);

	w->inflight--;
	if (r)
		r->inflight = 0;
	if (err == -ECANCELED || !r || r->forgotten) {
		if (r && r->forgotten)
			drop_rec(w, q->key, r);
		free(q);
		return;
	}
	if (err == GS_HTTP_EWITHDRAWN)
		withdrawn(w, q->key, r);
	else
		answered(w, q->key, r, err, resp, msg);
	if (r->again && !r->retry_at)
		set_retry(w, r, (int64_t)uv_now(w->loop));
	r->again = 0;
	free(q);
	w->wake(w->ud);
}

/* Asked by the client just before the write goes out (gs_kube_req's may_send). */
static int status_may_send(void *ud)
{
	const struct gpm_req *q = ud;
	return q->w->may_act(q->w->ud);
}

static struct gpm_rec *rec_of(struct gs_gpm_writer *w, const char *key)
{
	struct gpm_rec *r = gs_hmap_get_str(&w->objs, key);
	if (r)
		return r;
	r = gs_xcalloc(1, sizeof(*r));
	r->ready = -1;
	if (gs_hmap_put_str(&w->objs, key, r, NULL) < 0)
		gs_oom(0);
	return r;
}

static void on_event_done(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	char *key = ud;

	if (gs_api_classify(err, resp) != GS_API_OK)
		gs_log_warn("gpuplacementmap %s: its NotHeld event was not written: %s", key,
			    err ? msg : "refused by the apiserver");
	free(key);
}

/* A Warning event on the object when it becomes refused (the status says so too; the event is what
 * `kubectl describe` and event-based alerting show). Once per refusal, best effort. */
static void tell_refused(struct gs_gpm_writer *w, struct gpm_rec *r, const struct gs_gpm_status *st, const char *key)
{
	struct gs_api_pod_ref ref = {.ns = st->ns, .name = st->name, .uid = st->uid, .kind = GS_GPM_KIND};
	char *k;

	if (!st->refused || r->refused_told) {
		r->refused_told = st->refused != NULL;
		return;
	}
	r->refused_told = 1;
	k = gs_xstrdup(key);
	if (gs_api_event(w->kube, &ref, GS_EVENT_WARNING, "NotHeld", st->refused, "gpu-scheduler", gs_clock_wall_ms(),
			 on_event_done, k) < 0)
		free(k);
}

static void send_status(struct gs_gpm_writer *w, const struct gs_gpm_status *st)
{
	struct gpm_req *q = gs_xcalloc(1, sizeof(*q));
	struct gpm_rec *r;

	q->w = w;
	snprintf(q->key, sizeof(q->key), "%s/%s", st->ns, st->name);
	r = rec_of(w, q->key);
	r->forgotten = 0;
	if (r->inflight) {
		r->again = 1;
		free(q);
		return;
	}
	clear_retry(w, r);
	tell_refused(w, r, st, q->key);
	if (r->ready != (st->ready != 0)) {
		r->ready = st->ready != 0;
		r->since_ms = gs_clock_wall_ms();
	}
	if (gs_api_gpm_status(w->kube, st, r->since_ms, status_may_send, on_status_done, q) < 0) {
		gs_log_warn("gpuplacementmap %s: cannot send its status", q->key);
		failed_later(w, r);
		free(q);
		return;
	}
	r->inflight = 1;
	w->inflight++;
}

/* The retries due by now: each sends the object's status as it is now. Returns the next one's time. */
static int64_t send_retries(struct gs_gpm_writer *w, int64_t now_ms)
{
	struct gs_hmap_iter it = {0};
	struct gs_gpm_status st;
	char key[KEY_MAX];
	int64_t next = -1;

	while (gs_hmap_next(&w->objs, &it)) {
		struct gpm_rec *r = it.val;
		char *slash;
		if (!r->retry_at || r->inflight)
			continue;
		if (r->retry_at > now_ms) {
			next = next < 0 || r->retry_at < next ? r->retry_at : next;
			continue;
		}
		if (w->inflight >= GS_GPM_WRITER_INFLIGHT || !w->may_act(w->ud))
			continue; /* due: the end of a write (its wake) or leadership brings it back */
		snprintf(key, sizeof(key), "%s", it.key);
		if (!(slash = strchr(key, '/')))
			continue;
		*slash = '\0';
		if (gs_sched_gpm_status(w->sched, key, slash + 1, &st))
			send_status(w, &st); /* the map keeps its shape: only the record changes */
		else
			clear_retry(w, r);
	}
	return next;
}

int64_t gs_gpm_writer_pump(struct gs_gpm_writer *w, int64_t now_ms)
{
	struct gs_gpm_status st;
	int64_t next = w->retries ? send_retries(w, now_ms) : -1;

	while (w->inflight < GS_GPM_WRITER_INFLIGHT && w->may_act(w->ud) &&
	       gs_sched_next_gpm_status(w->sched, now_ms, &st))
		send_status(w, &st);
	return next;
}

void gs_gpm_writer_forget(struct gs_gpm_writer *w, const char *ns, const char *name)
{
	char key[KEY_MAX];
	struct gpm_rec *r;

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	if (!(r = gs_hmap_get_str(&w->objs, key)))
		return;
	if (r->inflight) {
		clear_retry(w, r);
		r->forgotten = 1;
		return;
	}
	drop_rec(w, key, r);
}

void gs_gpm_writer_register(struct gs_gpm_writer *w, struct gs_metrics *m)
{
	static const char *const labels[GS_GPM_WRITE__COUNT] = {"result=\"ok\"", "result=\"gone\"", "result=\"failed\"",
								"result=\"withdrawn\""};
	for (int i = 0; i < GS_GPM_WRITE__COUNT; i++)
		gs_metrics_counter(m, "gpu_scheduler_gpm_status_writes_total",
				   "GPUPlacementMap status writes by result (gone: 404, 409 or another object of "
				   "that name, not retried; failed: retried after a backoff; withdrawn: leadership "
				   "lapsed before it was sent).",
				   labels[i], &w->writes[i]);
}

void gs_gpm_writer_free(struct gs_gpm_writer *w)
{
	struct gs_hmap_iter it = {0};

	while (gs_hmap_next(&w->objs, &it))
		free(it.val);
	gs_hmap_free(&w->objs);
}
