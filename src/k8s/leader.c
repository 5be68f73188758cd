/*
 * leader.c: see leader.h. One request at a time, driven by one timer: GET, then PUT or POST, then wait
 * for the next round. The times that decide leadership are all on this loop's monotonic clock.
 */
#include "k8s/leader.h"
#include "k8s/lease.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/closer.h"
#include "core/log.h"
#include "core/rand.h"

struct gs_leader {
	uv_loop_t *loop;
	struct gs_kube *kube;
	uv_timer_t timer;
	char *ns, *name, *identity;
	char path[512]; /* /apis/coordination.k8s.io/v1/namespaces/NS/leases/NAME */
	int64_t lease_ms, renew_deadline_ms, retry_ms;
	void (*on_change)(int leading, void *ud);
	void *ud;
	uint64_t rng;

	int leading;          /* we believe we hold it; valid only before valid_until */
	int64_t valid_until;  /* loop time: last successful write's send time + renew deadline */
	int64_t sent_at;      /* loop time the write in flight was sent */
	struct gs_lease seen; /* the record last read */
	int64_t observed_ms;  /* when `seen` (holder, renewTime, rv) last changed */
	int inflight;         /* a request is out */
	int stopping, released, releasing;
	struct gs_closer closer; /* the stop sequence (answers, the release), then the timer */
	struct gs_leader_stats st;
};

/* ---- the cycle ----------------------------------------------------------------------------------- */

static int64_t now_ms(const struct gs_leader *l)
{
	return (int64_t)uv_now(l->loop);
}

/*
 * The monotonic clock now, read afresh: the loop's cached time (now_ms) is that of the iteration's
 * start, and a process frozen (SIGSTOP, a paused VM) between that and a bind would wake to it. Same
 * clock as the loop's (CLOCK_MONOTONIC), never behind it: leadership can only end sooner.
 */
static int64_t fresh_ms(void)
{
	return (int64_t)(uv_hrtime() / 1000000);
}

int gs_leader_leading(const struct gs_leader *l)
{
	return l->leading && fresh_ms() < l->valid_until;
}

static void set_leading(struct gs_leader *l, int leading, const char *why)
{
	if (l->leading == leading)
		return;
	l->leading = leading;
	if (leading) {
		l->st.acquired++;
		gs_log_info("leader election: leading (Lease %s/%s as %s)", l->ns, l->name, l->identity);
	} else {
		l->st.lost++;
		gs_log_warn("leader election: no longer leading: %s", why);
	}
	if (l->on_change)
		l->on_change(leading, l->ud);
}

/* A leader whose deadline passed stops before anything else happens. */
static void check_deadline(struct gs_leader *l)
{
	if (l->leading && fresh_ms() >= l->valid_until)
		set_leading(l, 0, "the Lease was not renewed within the renew deadline");
}

static void on_timer(uv_timer_t *t);

static void arm(struct gs_leader *l, int64_t delay)
{
	/* While leading, wake at the deadline too, so a leader that cannot renew stops on time. */
	if (l->leading) {
		int64_t left = l->valid_until - now_ms(l);
		if (left < delay)
			delay = left > 0 ? left : 0;
	}
	uv_timer_start(&l->timer, on_timer, (uint64_t)delay, 0);
}

static void next_round(struct gs_leader *l)
{
	int64_t d = l->retry_ms;
	if (!l->leading) { /* followers spread out (client-go's JitterFactor 1.2), and wake when a term ends */
		d += (int64_t)(gs_rand_range(&l->rng, 0, (uint64_t)(l->retry_ms / 5)));
		d = gs_lease_wait_ms(&l->seen, l->identity, l->observed_ms, l->lease_ms, now_ms(l), d);
	}
	arm(l, d);
}

static void stop_step(struct gs_leader *l);

static void failed(struct gs_leader *l, const char *what, int err, const struct gs_http_response *resp, const char *msg)
{
	l->st.errors++;
	if (err)
		gs_log_warn("leader election: %s: %s", what, msg && *msg ? msg : uv_strerror(err));
	else
		gs_log_warn("leader election: %s: HTTP %d: %.200s", what, resp->status,
			    resp->body_len ? resp->body : "");
}

static void microtime(char *out, size_t size)
{
	struct timeval tv;
	struct tm tm;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	size_t n = strftime(out, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, size - n, ".%06uZ", (unsigned)(tv.tv_usec % 1000000));
}

static void on_written(int err, const struct gs_http_response *resp, const char *msg, void *ud);
static void on_read(int err, const struct gs_http_response *resp, const char *msg, void *ud);

static int send_req(struct gs_leader *l, const char *method, const char *path, const char *body, gs_kube_done_cb cb)
{
	int r = gs_kube_request(l->kube, method, path, body, NULL, GS_KUBE_HIGH, (unsigned)l->renew_deadline_ms, cb, l);
	if (r == 0)
		l->inflight = 1;
	return r;
}

/* Writes the Lease: ours (renew or take) or, releasing, nobody's. */
static void write_lease(struct gs_leader *l, int release)
{
	char now[64], body[1536], coll[512];
	const struct gs_lease *cur = &l->seen;
	int exists = cur->rv[0] != '\0';
	int ours = exists && strcmp(cur->holder, l->identity) == 0;
	int64_t transitions = exists ? cur->transitions + (!ours && !release) : 0;
	int r;

	microtime(now, sizeof(now));
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"%s\","
		 "\"namespace\":\"%s\"%s%s%s},\"spec\":{\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":%" PRId64 ","
		 "\"acquireTime\":\"%s\",\"renewTime\":\"%s\",\"leaseTransitions\":%" PRId64 "}}",
		 l->name, l->ns, exists ? ",\"resourceVersion\":\"" : "", exists ? cur->rv : "", exists ? "\"" : "",
		 release ? "" : l->identity, release ? (int64_t)1 : (l->lease_ms + 999) / 1000,
		 ours && !release && cur->acquire[0] ? cur->acquire : now, now, transitions);
	l->sent_at = now_ms(l);
	l->releasing = release;
	if (exists) {
		r = send_req(l, "PUT", l->path, body, on_written);
	} else {
		snprintf(coll, sizeof(coll), "/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->ns);
		r = send_req(l, "POST", coll, body, on_written);
	}
	if (r < 0) {
		failed(l, "cannot send the Lease", r, NULL, NULL);
		l->releasing = 0;
		if (l->stopping)
			stop_step(l);
		else
			next_round(l);
	}
}

static void on_written(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct gs_leader *l = ud;
	int release = l->releasing;

	l->inflight = 0;
	l->releasing = 0;
	if (release) {
		if (err || resp->status >= 300)
			failed(l, "releasing the Lease", err, resp, msg);
		else
			gs_log_info("leader election: Lease %s/%s released", l->ns, l->name);
		stop_step(l);
		return;
	}
	check_deadline(l);
	if (err || (resp->status != 200 && resp->status != 201)) {
		if (!err && resp->status == 409)
			gs_log_debug("leader election: another replica wrote the Lease first");
		else if (err != -ECANCELED)
			failed(l, "writing the Lease", err, resp, msg);
	} else {
		if (gs_lease_decode(resp->body, resp->body_len, &l->seen, NULL, 0) < 0)
			memset(&l->seen, 0, sizeof(l->seen));
		l->observed_ms = now_ms(l);
		snprintf(l->st.holder, sizeof(l->st.holder), "%s", l->identity);
		/* Valid from when the write was SENT: others count their lease_duration from when they see it. */
		l->valid_until = l->sent_at + l->renew_deadline_ms;
		if (now_ms(l) < l->valid_until)
			set_leading(l, 1, NULL);
	}
	if (l->stopping)
		stop_step(l);
	else
		next_round(l);
}

static void on_read(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct gs_leader *l = ud;
	struct gs_lease cur;
	char why[256];

	l->inflight = 0;
	if (l->stopping) {
		stop_step(l);
		return;
	}
	check_deadline(l);
	if (err || (resp->status != 200 && resp->status != 404)) {
		failed(l, "reading the Lease", err, resp, msg);
		next_round(l);
		return;
	}
	if (resp->status == 404) {
		memset(&l->seen, 0, sizeof(l->seen));
		write_lease(l, 0);
		return;
	}
	if (gs_lease_decode(resp->body, resp->body_len, &cur, why, sizeof(why)) < 0) {
		l->st.errors++;
		gs_log_warn("leader election: Lease %s/%s: %s", l->ns, l->name, why);
		next_round(l);
		return;
	}
	if (strcmp(cur.holder, l->seen.holder) != 0 || strcmp(cur.renew, l->seen.renew) != 0 ||
	    strcmp(cur.rv, l->seen.rv) != 0)
		l->observed_ms = now_ms(l);
	l->seen = cur;
	snprintf(l->st.holder, sizeof(l->st.holder), "%s", cur.holder);
	if (l->leading && strcmp(cur.holder, l->identity) != 0) {
		snprintf(why, sizeof(why), "the Lease is held by %.200s", cur.holder[0] ? cur.holder : "nobody");
		set_leading(l, 0, why);
	}
	if (!gs_lease_may_take(&cur, l->identity, l->observed_ms, l->lease_ms, now_ms(l))) {
		next_round(l);
		return;
	}
	write_lease(l, 0);
}

static void on_timer(uv_timer_t *t)
{
	struct gs_leader *l = t->data;

	check_deadline(l);
	if (l->stopping || l->inflight)
		return;
	if (send_req(l, "GET", l->path, NULL, on_read) < 0) {
		failed(l, "cannot read the Lease", -ENOMEM, NULL, NULL);
		next_round(l);
	}
}

/* ---- lifecycle ----------------------------------------------------------------------------------- */

int gs_leader_durations_ok(int64_t lease_ms, int64_t renew_deadline_ms, int64_t retry_ms)
{
	return retry_ms > 0 && lease_ms > renew_deadline_ms && renew_deadline_ms * 10 > retry_ms * 12;
}

int gs_leader_start(uv_loop_t *loop, struct gs_kube *kube, const struct gs_leader_opts *o, struct gs_leader **out,
		    char *err, size_t errlen)
{
	struct gs_leader *l;
	int64_t lease = o->lease_ms ? o->lease_ms : GS_LEADER_LEASE_MS;
	int64_t renew = o->renew_deadline_ms ? o->renew_deadline_ms : GS_LEADER_RENEW_DEADLINE_MS;
	int64_t retry = o->retry_ms ? o->retry_ms : GS_LEADER_RETRY_MS;

	*out = NULL;
	if (!o->ns || !*o->ns || !o->name || !*o->name || !o->identity || !*o->identity) {
		snprintf(err, errlen, "leader election needs a namespace, a name and an identity");
		return -EINVAL;
	}
	if (!gs_leader_durations_ok(lease, renew, retry)) {
		snprintf(err, errlen,
			 "leader election: the lease duration (%" PRId64 " ms) must exceed the renew deadline (%" PRId64
			 " ms), which must exceed 1.2 x the retry period (%" PRId64 " ms)",
			 lease, renew, retry);
		return -EINVAL;
	}
	if (strlen(o->identity) >= sizeof(l->seen.holder) || strlen(o->ns) + strlen(o->name) > 400 ||
	    strspn(o->identity, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") !=
		    strlen(o->identity)) {
		snprintf(err, errlen,
			 "leader election: the identity must be letters, digits, '-', '.', '_' (and the "
			 "identity, namespace and name short)");
		return -EINVAL;
	}
	l = gs_xcalloc(1, sizeof(*l));
	l->ns = gs_xstrdup(o->ns);
	l->name = gs_xstrdup(o->name);
	l->identity = gs_xstrdup(o->identity);
	snprintf(l->path, sizeof(l->path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", o->ns, o->name);
	l->loop = loop;
	l->kube = kube;
	l->lease_ms = lease;
	l->renew_deadline_ms = renew;
	l->retry_ms = retry;
	l->on_change = o->on_change;
	l->ud = o->ud;
	l->rng = o->seed ? o->seed : 0x5851f42d4c957f2dull;
	uv_timer_init(loop, &l->timer);
	l->timer.data = l;
	uv_timer_start(&l->timer, on_timer, 0, 0); /* never from inside this call */
	gs_log_info("leader election: Lease %s/%s as %s (lease %" PRId64 " ms, renew deadline %" PRId64
		    " ms, retry %" PRId64 " ms)",
		    l->ns, l->name, l->identity, lease, renew, retry);
	*out = l;
	return 0;
}

void gs_leader_stats(const struct gs_leader *l, struct gs_leader_stats *st)
{
	*st = l->st;
	st->leading = gs_leader_leading(l);
}

static void leader_release(struct gs_closer *c)
{
	struct gs_leader *l = GS_CONTAINER_OF(c, struct gs_leader, closer);

	free(l->ns);
	free(l->name);
	free(l->identity);
	free(l);
}

/* The stop, one step per answer: wait for the request out, release if leading, then close. */
static void stop_step(struct gs_leader *l)
{
	if (l->inflight)
		return;
	if (gs_leader_leading(l) && !l->released) {
		l->released = 1;
		write_lease(l, 1);
		return;
	}
	if (l->leading)
		set_leading(l, 0, "stopping");
	gs_closer_uv(&l->closer, (uv_handle_t *)&l->timer);
	gs_closer_drop(&l->closer); /* the sequence's part: the timer's close is the last */
}

void gs_leader_stop(struct gs_leader *l, void (*done)(void *ud), void *ud)
{
	GS_ASSERT(!l->stopping); /* stopped once */
	l->stopping = 1;
	gs_closer_start(&l->closer, leader_release, done, ud);
	gs_closer_hold(&l->closer); /* the sequence, until stop_step closes the timer */
	uv_timer_stop(&l->timer);
	stop_step(l);
	gs_closer_arm(&l->closer);
}
