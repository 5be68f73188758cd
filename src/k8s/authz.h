/*
 * authz.h: delegated authentication and authorization, as kube-scheduler's secure port does them.
 *
 * A request to the secure port (--secure-addr) for /metrics or /debug/... carries a bearer token. The
 * daemon asks the apiserver who it is (authentication.k8s.io/v1 TokenReview) and whether that user
 * may `get` the path (authorization.k8s.io/v1 SubjectAccessReview with nonResourceAttributes), as
 * RBAC's nonResourceURLs grant it. Where the token comes from (gs_authz_token):
 *
 *   Authorization: Bearer TOKEN                    a scraper, curl, kubectl --raw through a Service
 *   X-Gpu-Scheduler-Authorization: Bearer TOKEN    the same, for requests that come through the
 *                                                  apiserver's pods/proxy, whose authentication
 *                                                  filter deletes the Authorization header before
 *                                                  proxying (docs/decisions.md, "Secure serving")
 *
 * Both are checked the same way. Bounds, so that no client can load the apiserver through us:
 *   - its own apiserver client (gs_kube) with GS_AUTHZ_CONNS connections: never the controller's,
 *     so reviews never queue beside bindings;
 *   - verdicts cached (src/core/ttl_cache.h): a token's TokenReview GS_AUTHZ_TTL_MS whether it
 *     authenticated or not, a (token, path) SubjectAccessReview as long, at most GS_AUTHZ_CACHE_MAX
 *     entries each, least recently used evicted. Keys are SHA-256 digests: no token is kept;
 *   - identical reviews in flight are shared: a thousand requests with one new token make one
 *     TokenReview;
 *   - at most GS_AUTHZ_MAX_INFLIGHT reviews in flight, and GS_AUTHZ_QPS per second (burst
 *     GS_AUTHZ_BURST): a request needing a review beyond that is refused at once (429, THROTTLED),
 *     never queued;
 *   - and, while reviews are contended (the shared bucket below half its burst, or half the in-flight
 *     cap taken), per peer address (the request's source, gs_http_req_source): at most
 *     GS_AUTHZ_SOURCE_INFLIGHT in flight and GS_AUTHZ_SOURCE_QPS per second (burst
 *     GS_AUTHZ_SOURCE_BURST), a source's token being spent on every review it gets. An address that
 *     floods the port with new tokens is then held to its own rate, and Prometheus and explain, from
 *     other addresses, still get their reviews (issue 36); a lone client still has the whole shared
 *     budget. A request whose verdict is cached needs no review and spends nothing. Requests through
 *     the apiserver's pods/proxy all come from the apiserver's address: under contention they share
 *     one source's budget. The addresses' budgets are kept in a cache of GS_AUTHZ_SOURCES_MAX (least
 *     recently used evicted, an idle one dropped once full again): many addresses at once still meet
 *     the shared bucket, which bounds what reaches the apiserver;
 *   - a token longer than GS_AUTHZ_TOKEN_MAX is refused without a review.
 * Every verdict is counted: gpu_scheduler_secure_requests_total{result=...}, and every review sent:
 * gpu_scheduler_delegated_reviews_total{kind="tokenreview|subjectaccessreview"}.
 *
 * The SubjectAccessReview carries the user's name, uid and groups, not the TokenReview's `extra`
 * (RBAC does not read it).
 *
 * Loop thread only.
 */
#ifndef GS_K8S_AUTHZ_H
#define GS_K8S_AUTHZ_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/health.h"
#include "core/http.h"
#include "core/metrics.h"
#include "k8s/kubeconfig.h"
#include "k8s/review.h"

#define GS_AUTHZ_HEADER          "X-Gpu-Scheduler-Authorization"
#define GS_AUTHZ_TOKEN_MAX       16384
#define GS_AUTHZ_TTL_MS          10000
#define GS_AUTHZ_CACHE_MAX       4096
#define GS_AUTHZ_MAX_INFLIGHT    4
#define GS_AUTHZ_QPS             10
#define GS_AUTHZ_BURST           20
#define GS_AUTHZ_CONNS           2
#define GS_AUTHZ_SOURCE_QPS      4
#define GS_AUTHZ_SOURCE_BURST    10
#define GS_AUTHZ_SOURCE_INFLIGHT 2
#define GS_AUTHZ_SOURCES_MAX     4096
#define GS_AUTHZ_SOURCE_MAX      64 /* an address's length with its NUL; longer ones share "" */
#define GS_AUTHZ_TIMEOUT_MS      5000
#define GS_AUTHZ_REPLY_MAX       (256 * 1024) /* a review's answer; a user's groups and extra are small */

enum gs_authz_verdict {
	GS_AUTHZ_ALLOW = 0,
	GS_AUTHZ_UNAUTHENTICATED, /* no token, a bad one, or one the apiserver does not know: 401 */
	GS_AUTHZ_FORBIDDEN,       /* authenticated, not allowed: 403 */
	GS_AUTHZ_THROTTLED,       /* a review was needed over the bounds above: 429 */
	GS_AUTHZ_ERROR,           /* the apiserver did not answer a review usefully: 503 (not cached) */
	GS_AUTHZ_VERDICT_COUNT
};
#define GS_AUTHZ_PENDING (-EINPROGRESS)

/* "allowed", "unauthenticated", "forbidden", "throttled", "error": the metric's result label. */
const char *gs_authz_verdict_name(enum gs_authz_verdict v);

/*
 * The bearer token of a request: from Authorization, else from GS_AUTHZ_HEADER; each must read
 * "Bearer TOKEN" (the scheme in any case, one or more spaces). NULL when neither does.
 */
const char *gs_authz_token(const struct gs_http_server_req *r);

/* ---- the checker ----------------------------------------------------------------------------- */

struct gs_authz;

struct gs_authz_opts {
	const struct gs_kubeconfig *kc; /* for its own apiserver client; copied */
	struct gs_metrics *metrics;     /* the series above go here (NULL: none) */
	const char *user_agent;
	/* 0: the GS_AUTHZ_* defaults. Tests shorten them. */
	unsigned ttl_ms;
	unsigned cache_max;
	double qps;
	unsigned burst;
	double source_qps;
	unsigned source_burst;
};

int gs_authz_new(uv_loop_t *loop, const struct gs_authz_opts *o, struct gs_authz **out, char *err, size_t errlen);

typedef void (*gs_authz_cb)(enum gs_authz_verdict v, void *ud);
/*
 * May token `get` path? Returns a verdict when the caches (or the bounds) decide now, and cb is not
 * called; else GS_AUTHZ_PENDING, and cb runs exactly once later (before gs_authz_close completes).
 * token NULL or "" is UNAUTHENTICATED. source is the peer address whose budget a review spends
 * (NULL, or one of GS_AUTHZ_SOURCE_MAX bytes or more: the budget of "", shared by all such).
 */
int gs_authz_check(struct gs_authz *a, const char *token, const char *path, const char *source, gs_authz_cb cb,
		   void *ud);

/* The gate of the secure port (gs_health_opts.gate, gate_ud = the struct gs_authz): the token of r,
 * gs_authz_check on r's path, and gs_health_gate_done with 0, 401, 403, 429 or 503. */
void gs_authz_gate(struct gs_health *h, struct gs_http_server_req *r, void *ud);

struct gs_authz_stats {
	uint64_t verdicts[GS_AUTHZ_VERDICT_COUNT];
	uint64_t token_reviews, access_reviews;
	unsigned inflight;
};
void gs_authz_stats(const struct gs_authz *a, struct gs_authz_stats *st);

/* Cancels the reviews in flight (their requests are answered ERROR), closes the client and frees a;
 * close_cb once all is closed. */
void gs_authz_close(struct gs_authz *a, void (*close_cb)(void *ud), void *ud);

#endif
