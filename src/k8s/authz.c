#include "k8s/authz.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mbedtls/platform_util.h>
#include <mbedtls/sha256.h>

#include "core/alloc.h"
#include "core/closer.h"
#include "core/list.h"
#include "core/log.h"
#include "core/ttl_cache.h"
#include "k8s/kube.h"

#define TOKEN_REVIEWS_PATH  "/apis/authentication.k8s.io/v1/tokenreviews"
#define ACCESS_REVIEWS_PATH "/apis/authorization.k8s.io/v1/subjectaccessreviews"

static const char *const verdict_names[GS_AUTHZ_VERDICT_COUNT] = {
	[GS_AUTHZ_ALLOW] = "allowed",       [GS_AUTHZ_UNAUTHENTICATED] = "unauthenticated",
	[GS_AUTHZ_FORBIDDEN] = "forbidden", [GS_AUTHZ_THROTTLED] = "throttled",
	[GS_AUTHZ_ERROR] = "error",
};

const char *gs_authz_verdict_name(enum gs_authz_verdict v)
{
	return (unsigned)v < GS_AUTHZ_VERDICT_COUNT ? verdict_names[v] : "?";
}

static const char *bearer(const char *v)
{
	if (!v || strncasecmp(v, "Bearer ", 7) != 0)
		return NULL;
	v += 7;
	while (*v == ' ')
		v++;
	return *v ? v : NULL;
}

const char *gs_authz_token(const struct gs_http_server_req *r)
{
	const char *t = bearer(gs_http_req_header(r, "Authorization"));
	return t ? t : bearer(gs_http_req_header(r, GS_AUTHZ_HEADER));
}

/* ---- the checker ----------------------------------------------------------------------------- */

enum review_kind { REVIEW_TOKEN, REVIEW_ACCESS };

struct gs_authz {
	uv_loop_t *loop;
	struct gs_kube *kube;
	struct gs_ttl_cache *tokens; /* sha256(token) -> struct token_entry */
	struct gs_ttl_cache *access; /* sha256(sha256(token) path) -> struct access_entry */
	struct gs_list reviews;      /* struct review in flight */
	unsigned inflight;
	unsigned ttl_ms;
	double qps, bucket; /* the token bucket of reviews */
	unsigned burst;
	uint64_t bucket_at;
	struct gs_ttl_cache *sources; /* peer address -> struct source_budget */
	double source_qps;
	unsigned source_burst;
	uint64_t source_keep_ms; /* an idle source's entry is kept this long: by then its bucket is full */
	int logged_refusal;      /* the apiserver refused a review once: logged */
	struct gs_counter verdicts[GS_AUTHZ_VERDICT_COUNT];
	struct gs_counter token_reviews, access_reviews;
	char labels[GS_AUTHZ_VERDICT_COUNT][32]; /* the registry borrows them */
	struct gs_closer closer;
};

struct token_entry {
	int authenticated;
	struct gs_review_user user;
};

struct access_entry {
	int allowed;
};

/* One peer address's share of the reviews (its bucket and the reviews it started that are in flight). */
struct source_budget {
	double tokens;
	uint64_t at;
	unsigned inflight;
};

/* One review in flight; every request waiting for it is a job on it. */
struct review {
	struct gs_list link;
	struct gs_authz *a;
	enum review_kind kind;
	unsigned char key[32];
	char source[GS_AUTHZ_SOURCE_MAX]; /* the peer address charged for it */
	struct gs_list jobs;
};

struct job {
	struct gs_list link;
	unsigned char tok[32];
	char source[GS_AUTHZ_SOURCE_MAX];
	char *path;
	gs_authz_cb cb;
	void *ud;
};

static void token_entry_free(void *v)
{
	struct token_entry *e = v;
	gs_review_user_free(&e->user);
	free(e);
}

static void sha(const void *a, size_t alen, const void *b, size_t blen, unsigned char out[32])
{
	mbedtls_sha256_context c;
	mbedtls_sha256_init(&c);
	mbedtls_sha256_starts_ret(&c, 0);
	mbedtls_sha256_update_ret(&c, a, alen);
	if (blen)
		mbedtls_sha256_update_ret(&c, b, blen);
	mbedtls_sha256_finish_ret(&c, out);
	mbedtls_sha256_free(&c);
}

static int count(struct gs_authz *a, int v)
{
	GS_ASSERT(v >= 0 && v < GS_AUTHZ_VERDICT_COUNT);
	a->verdicts[v].v++;
	return v;
}

static void finish(struct gs_authz *a, struct job *j, enum gs_authz_verdict v)
{
	count(a, (int)v);
	j->cb(v, j->ud);
	free(j->path);
	free(j);
}

static struct review *find_review(struct gs_authz *a, enum review_kind kind, const unsigned char key[32])
{
	struct gs_list *l;
	GS_LIST_FOREACH(l, &a->reviews) {
		struct review *rv = GS_CONTAINER_OF(l, struct review, link);
		if (rv->kind == kind && memcmp(rv->key, key, 32) == 0)
			return rv;
	}
	return NULL;
}

static void refill(double *bucket, uint64_t *at, double qps, unsigned burst, uint64_t now)
{
	*bucket += (double)(now - *at) * qps / 1000.0;
	if (*bucket > burst)
		*bucket = burst;
	*at = now;
}

/* The budget of source as it stands now (a new source's is full), refilled; NULL: none kept. */
static struct source_budget *source_budget(struct gs_authz *a, const char *source, uint64_t now)
{
	struct source_budget *b = gs_ttl_cache_get(a->sources, source, strlen(source), now);
	if (!b) {
		b = gs_xcalloc(1, sizeof(*b));
		b->tokens = a->source_burst;
		b->at = now;
		gs_ttl_cache_put(a->sources, source, strlen(source), b, now + a->source_keep_ms, now);
	}
	refill(&b->tokens, &b->at, a->source_qps, a->source_burst, now);
	return b;
}

/*
 * Room for one more review now, for a request from source: under the in-flight cap and a token in the
 * shared bucket; and, while the reviews are contended (the shared bucket below half its burst, or half
 * the in-flight cap taken), room in the source's own budget too: its in-flight cap and a token in its
 * bucket. A source's token is spent whenever it has one, so an address that floods has spent its
 * own by the time its flood makes the reviews contended, and is then held to its own rate, while the
 * others still have theirs.
 */
static int may_review(struct gs_authz *a, const char *source)
{
	uint64_t now = uv_now(a->loop);
	struct source_budget *b;
	int contended;
	if (gs_closer_closing(&a->closer) || a->inflight >= GS_AUTHZ_MAX_INFLIGHT)
		return 0;
	b = source_budget(a, source, now);
	refill(&a->bucket, &a->bucket_at, a->qps, a->burst, now);
	contended = a->bucket < a->burst / 2.0 || a->inflight >= GS_AUTHZ_MAX_INFLIGHT / 2;
	if (a->bucket < 1.0 || (contended && (b->inflight >= GS_AUTHZ_SOURCE_INFLIGHT || b->tokens < 1.0)))
		return 0;
	if (b->tokens >= 1.0)
		b->tokens -= 1.0;
	b->inflight++;
	a->bucket -= 1.0;
	gs_ttl_cache_touch(a->sources, source, strlen(source), now + a->source_keep_ms, now); /* kept while used */
	return 1;
}

/* A review of source is answered: its in-flight count drops (unless its entry was evicted since). */
static void source_review_done(struct gs_authz *a, const char *source)
{
	struct source_budget *b = gs_ttl_cache_get(a->sources, source, strlen(source), uv_now(a->loop));
	if (b && b->inflight > 0)
		b->inflight--;
}

static void on_review_done(int err, const struct gs_http_response *resp, const char *msg, void *ud);

/* Sends body (freed here) as a review of kind; NULL when it cannot be sent. */
static struct review *send_review(struct gs_authz *a, enum review_kind kind, const unsigned char key[32],
				  const char *source, char *body)
{
	struct review *rv;
	const char *path = kind == REVIEW_TOKEN ? TOKEN_REVIEWS_PATH : ACCESS_REVIEWS_PATH;
	if (!body)
		return NULL;
	rv = gs_xcalloc(1, sizeof(*rv));
	rv->a = a;
	rv->kind = kind;
	memcpy(rv->key, key, 32);
	snprintf(rv->source, sizeof(rv->source), "%s", source);
	gs_list_init(&rv->jobs);
	if (gs_kube_request(a->kube, "POST", path, body, NULL, GS_KUBE_HIGH, GS_AUTHZ_TIMEOUT_MS, on_review_done, rv) <
	    0) {
		mbedtls_platform_zeroize(body, strlen(body));
		free(body);
		free(rv);
		return NULL;
	}
	mbedtls_platform_zeroize(body, strlen(body)); /* a TokenReview holds the token */
	free(body);
	gs_list_insert_tail(&a->reviews, &rv->link);
	a->inflight++;
	gs_closer_hold(&a->closer); /* dropped when it is answered */
	(kind == REVIEW_TOKEN ? &a->token_reviews : &a->access_reviews)->v++;
	return rv;
}

static struct job *new_job(const unsigned char tok[32], const char *source, const char *path, gs_authz_cb cb, void *ud)
{
	struct job *j = gs_xcalloc(1, sizeof(*j));
	memcpy(j->tok, tok, 32);
	snprintf(j->source, sizeof(j->source), "%s", source);
	j->path = gs_xstrdup(path);
	j->cb = cb;
	j->ud = ud;
	return j;
}

/*
 * The authorization step for an authenticated user: a verdict now (cached, or throttled), or
 * PENDING with the job (j, or a new one) on a SubjectAccessReview. The verdict is not counted here.
 */
static int access_step(struct gs_authz *a, const unsigned char tok[32], const struct gs_review_user *u,
		       const char *source, const char *path, gs_authz_cb cb, void *ud, struct job **j)
{
	unsigned char key[32];
	struct access_entry *e;
	struct review *rv;

	sha(tok, 32, path, strlen(path), key);
	e = gs_ttl_cache_get(a->access, key, sizeof(key), uv_now(a->loop));
	if (e)
		return e->allowed ? GS_AUTHZ_ALLOW : GS_AUTHZ_FORBIDDEN;
	rv = find_review(a, REVIEW_ACCESS, key);
	if (!rv && may_review(a, source)) {
		rv = send_review(a, REVIEW_ACCESS, key, source, gs_review_access_json(u, path, "get"));
		if (!rv)
			return GS_AUTHZ_ERROR;
	}
	if (!rv)
		return GS_AUTHZ_THROTTLED;
	if (!*j)
		*j = new_job(tok, source, path, cb, ud);
	gs_list_insert_tail(&rv->jobs, &(*j)->link);
	return GS_AUTHZ_PENDING;
}

int gs_authz_check(struct gs_authz *a, const char *token, const char *path, const char *source, gs_authz_cb cb,
		   void *ud)
{
	unsigned char tok[32];
	struct token_entry *e;
	struct review *rv;
	struct job *j = NULL;
	size_t n = token ? strlen(token) : 0;
	int v;

	if (n == 0 || n > GS_AUTHZ_TOKEN_MAX)
		return count(a, GS_AUTHZ_UNAUTHENTICATED);
	if (!source || strlen(source) >= GS_AUTHZ_SOURCE_MAX)
		source = ""; /* no address, or not one: the budget of the unknown */
	sha(token, n, NULL, 0, tok);
	e = gs_ttl_cache_get(a->tokens, tok, sizeof(tok), uv_now(a->loop));
	if (e && !e->authenticated)
		return count(a, GS_AUTHZ_UNAUTHENTICATED);
	if (e) {
		v = access_step(a, tok, &e->user, source, path, cb, ud, &j);
		return v == GS_AUTHZ_PENDING ? v : count(a, v);
	}
	rv = find_review(a, REVIEW_TOKEN, tok);
	if (!rv && may_review(a, source)) {
		rv = send_review(a, REVIEW_TOKEN, tok, source, gs_review_token_json(token));
		if (!rv)
			return count(a, GS_AUTHZ_ERROR);
	}
	if (!rv)
		return count(a, GS_AUTHZ_THROTTLED);
	j = new_job(tok, source, path, cb, ud);
	gs_list_insert_tail(&rv->jobs, &j->link);
	return GS_AUTHZ_PENDING;
}

/* A failed review: said once at warn (a 403 is our RBAC's fault), then at debug. */
static void review_failed(struct gs_authz *a, struct review *rv, int err, const struct gs_http_response *resp,
			  const char *why)
{
	const char *kind = rv->kind == REVIEW_TOKEN ? "TokenReview" : "SubjectAccessReview";
	const char *hint = resp && resp->status == 403 ? "; this ServiceAccount needs create on tokenreviews and "
							 "subjectaccessreviews (deploy/rbac.yaml)"
						       : "";
	char status[16];
	snprintf(status, sizeof(status), "HTTP %d", resp ? resp->status : 0);
	if (!a->logged_refusal) {
		a->logged_refusal = 1;
		gs_log_warn("secure port: a %s failed (%s: %s); requests needing one are answered 503%s", kind,
			    err ? uv_strerror(err) : status, why, hint);
	} else {
		gs_log_debug("secure port: a %s failed (%s: %s)", kind, err ? uv_strerror(err) : status, why);
	}
}

static int reply_ok(const struct gs_http_response *resp)
{
	return resp && (resp->status == 200 || resp->status == 201) && resp->body_len <= GS_AUTHZ_REPLY_MAX;
}

static void token_done(struct gs_authz *a, struct review *rv, int err, const struct gs_http_response *resp)
{
	struct token_entry *e = gs_xcalloc(1, sizeof(*e));
	struct gs_list *l, *n;
	char why[256] = "unexpected status";
	int r = reply_ok(resp) && !err ? gs_review_decode_token(resp->body, resp->body_len, &e->user, why, sizeof(why))
				       : -EIO;

	if (r < 0)
		review_failed(a, rv, err, resp, why);
	e->authenticated = r == 1;
	GS_LIST_FOREACH_SAFE(l, n, &rv->jobs) {
		struct job *j = GS_CONTAINER_OF(l, struct job, link);
		int v = r < 0 ? GS_AUTHZ_ERROR : r == 0 ? GS_AUTHZ_UNAUTHENTICATED : GS_AUTHZ_PENDING;
		gs_list_remove(&j->link);
		if (v == GS_AUTHZ_PENDING)
			v = access_step(a, j->tok, &e->user, j->source, j->path, j->cb, j->ud, &j);
		if (v != GS_AUTHZ_PENDING)
			finish(a, j, (enum gs_authz_verdict)v);
	}
	if (r < 0)
		token_entry_free(e);
	else
		gs_ttl_cache_put(a->tokens, rv->key, sizeof(rv->key), e, uv_now(a->loop) + a->ttl_ms, uv_now(a->loop));
}

static void access_done(struct gs_authz *a, struct review *rv, int err, const struct gs_http_response *resp)
{
	struct gs_list *l, *n;
	char why[256] = "unexpected status";
	int r = reply_ok(resp) && !err ? gs_review_decode_access(resp->body, resp->body_len, why, sizeof(why)) : -EIO;

	if (r < 0) {
		review_failed(a, rv, err, resp, why);
	} else {
		struct access_entry *e = gs_xmalloc(sizeof(*e));
		e->allowed = r;
		gs_ttl_cache_put(a->access, rv->key, sizeof(rv->key), e, uv_now(a->loop) + a->ttl_ms, uv_now(a->loop));
	}
	GS_LIST_FOREACH_SAFE(l, n, &rv->jobs) {
		struct job *j = GS_CONTAINER_OF(l, struct job, link);
		gs_list_remove(&j->link);
		finish(a, j, r < 0 ? GS_AUTHZ_ERROR : r ? GS_AUTHZ_ALLOW : GS_AUTHZ_FORBIDDEN);
	}
}

static void on_review_done(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct review *rv = ud;
	struct gs_authz *a = rv->a;

	GS_ASSERT(a->inflight > 0);
	a->inflight--;
	source_review_done(a, rv->source);
	gs_list_remove(&rv->link);
	if (rv->kind == REVIEW_TOKEN)
		token_done(a, rv, err, resp);
	else
		access_done(a, rv, err, resp);
	GS_ASSERT(gs_list_empty(&rv->jobs));
	free(rv);
	gs_closer_drop(&a->closer);
}

/* ---- the gate ---------------------------------------------------------------------------------- */

struct gate_req {
	struct gs_health *h;
	struct gs_http_server_req *r;
};

static void gate_answer(struct gs_health *h, struct gs_http_server_req *r, enum gs_authz_verdict v)
{
	static const int status[GS_AUTHZ_VERDICT_COUNT] = {
		[GS_AUTHZ_ALLOW] = 0,       [GS_AUTHZ_UNAUTHENTICATED] = 401, [GS_AUTHZ_FORBIDDEN] = 403,
		[GS_AUTHZ_THROTTLED] = 429, [GS_AUTHZ_ERROR] = 503,
	};
	static const char *const text[GS_AUTHZ_VERDICT_COUNT] = {
		[GS_AUTHZ_ALLOW] = "",
		[GS_AUTHZ_UNAUTHENTICATED] = "Unauthorized: a bearer token the apiserver accepts is needed "
					     "(Authorization or " GS_AUTHZ_HEADER ")\n",
		[GS_AUTHZ_FORBIDDEN] = "Forbidden: this user may not get this path (RBAC nonResourceURLs)\n",
		[GS_AUTHZ_THROTTLED] = "Too many authentication reviews at once, retry later\n",
		[GS_AUTHZ_ERROR] = "The apiserver did not answer the authentication or authorization review\n",
	};
	static const struct gs_http_header www = {"WWW-Authenticate", "Bearer"};
	int unauth = v == GS_AUTHZ_UNAUTHENTICATED;
	gs_health_gate_done(h, r, status[v], text[v], unauth ? &www : NULL, unauth ? 1 : 0);
}

static void on_verdict(enum gs_authz_verdict v, void *ud)
{
	struct gate_req *g = ud;
	gate_answer(g->h, g->r, v);
	free(g);
}

void gs_authz_gate(struct gs_health *h, struct gs_http_server_req *r, void *ud)
{
	struct gs_authz *a = ud;
	struct gate_req *g = gs_xmalloc(sizeof(*g));
	int v;

	g->h = h;
	g->r = r;
	v = gs_authz_check(a, gs_authz_token(r), gs_http_req_path(r), gs_http_req_source(r), on_verdict, g);
	if (v != GS_AUTHZ_PENDING) {
		free(g);
		gate_answer(h, r, (enum gs_authz_verdict)v);
	}
}

/* ---- life ------------------------------------------------------------------------------------ */

static void register_metrics(struct gs_authz *a, struct gs_metrics *m)
{
	for (int i = 0; i < GS_AUTHZ_VERDICT_COUNT; i++) {
		snprintf(a->labels[i], sizeof(a->labels[i]), "result=\"%s\"", verdict_names[i]);
		gs_metrics_counter(m, "gpu_scheduler_secure_requests_total",
				   "Requests for /metrics and /debug on the secure port, by the verdict of delegated "
				   "authentication (TokenReview) and authorization (SubjectAccessReview).",
				   a->labels[i], &a->verdicts[i]);
	}
	gs_metrics_counter(m, "gpu_scheduler_delegated_reviews_total",
			   "TokenReviews and SubjectAccessReviews sent to the apiserver for the secure port.",
			   "kind=\"tokenreview\"", &a->token_reviews);
	gs_metrics_counter(m, "gpu_scheduler_delegated_reviews_total",
			   "TokenReviews and SubjectAccessReviews sent to the apiserver for the secure port.",
			   "kind=\"subjectaccessreview\"", &a->access_reviews);
}

int gs_authz_new(uv_loop_t *loop, const struct gs_authz_opts *o, struct gs_authz **out, char *err, size_t errlen)
{
	struct gs_authz *a = gs_xcalloc(1, sizeof(*a));
	struct gs_kube_opts ko = {
		.kc = o->kc,
		.max_conns = GS_AUTHZ_CONNS,
		.user_agent = o->user_agent,
	};
	int r = gs_kube_new(loop, &ko, &a->kube, err, errlen);
	if (r < 0) {
		free(a);
		return r;
	}
	a->loop = loop;
	a->ttl_ms = o->ttl_ms ? o->ttl_ms : GS_AUTHZ_TTL_MS;
	a->qps = o->qps > 0 ? o->qps : GS_AUTHZ_QPS;
	a->burst = o->burst ? o->burst : GS_AUTHZ_BURST;
	a->bucket = a->burst;
	a->bucket_at = uv_now(loop);
	a->source_qps = o->source_qps > 0 ? o->source_qps : GS_AUTHZ_SOURCE_QPS;
	a->source_burst = o->source_burst ? o->source_burst : GS_AUTHZ_SOURCE_BURST;
	/* Full again by then, and past any review it has in flight. */
	a->source_keep_ms = (uint64_t)(a->source_burst / a->source_qps * 1000.0) + GS_AUTHZ_TIMEOUT_MS + 1000;
	a->sources = gs_ttl_cache_new(GS_AUTHZ_SOURCES_MAX, free);
	a->tokens = gs_ttl_cache_new(o->cache_max ? o->cache_max : GS_AUTHZ_CACHE_MAX, token_entry_free);
	a->access = gs_ttl_cache_new(o->cache_max ? o->cache_max : GS_AUTHZ_CACHE_MAX, free);
	gs_list_init(&a->reviews);
	if (o->metrics)
		register_metrics(a, o->metrics);
	*out = a;
	return 0;
}

void gs_authz_stats(const struct gs_authz *a, struct gs_authz_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (int i = 0; i < GS_AUTHZ_VERDICT_COUNT; i++)
		st->verdicts[i] = a->verdicts[i].v;
	st->token_reviews = a->token_reviews.v;
	st->access_reviews = a->access_reviews.v;
	st->inflight = a->inflight;
}

static void authz_release(struct gs_closer *c)
{
	struct gs_authz *a = GS_CONTAINER_OF(c, struct gs_authz, closer);
	GS_ASSERT(a->inflight == 0 && gs_list_empty(&a->reviews));
	gs_ttl_cache_free(a->tokens);
	gs_ttl_cache_free(a->access);
	gs_ttl_cache_free(a->sources);
	free(a);
}

/* The client's close cancels every review: each answers its requests ERROR and drops its part. */
void gs_authz_close(struct gs_authz *a, void (*close_cb)(void *ud), void *ud)
{
	gs_closer_start(&a->closer, authz_release, close_cb, ud);
	gs_closer_hold(&a->closer);
	gs_kube_close(a->kube, gs_closer_drop_cb, &a->closer);
	gs_closer_arm(&a->closer);
}
