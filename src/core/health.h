/*
 * health.h: the operational HTTP endpoints on their own address, plain HTTP or HTTPS.
 *
 *   /healthz, /livez   200 "ok" while the loop turns: a 1 s heartbeat timer measures how late the
 *                      loop runs; a lag over GS_HEALTH_MAX_LAG_MS answers 500 (the loop is stuck).
 *   /readyz            200 "ok" when the owner's ready callback says so, else 503 with its reason.
 *   /metrics           the registry in the Prometheus text format 0.0.4 (only with serve_metrics).
 *   a routed prefix    the owner's callback answers (gs_health_route), e.g. /debug/ for explanations.
 *   anything else      404; methods other than GET/HEAD: 405.
 *
 * The probes are always open. /metrics and the route are the *data*: with a gate, each request for
 * them is first handed to the gate (the owner's authentication and authorization), which answers
 * through gs_health_gate_done: 0 serves it, any other status refuses it with the gate's text. Without
 * a gate they are served to anyone, so a plain port that must not leak leaves serve_metrics 0 and sets
 * no route (the daemon's --health-addr, unless --insecure-debug-and-metrics).
 */
#ifndef GS_CORE_HEALTH_H
#define GS_CORE_HEALTH_H

#include <stddef.h>
#include <uv.h>

#include "core/http.h"
#include "core/metrics.h"

#define GS_HEALTH_MAX_LAG_MS 10000

/* Returns 1 when ready; else 0 with a one-line reason in why. */
typedef int (*gs_health_ready_cb)(char *why, size_t whylen, void *ud);

struct gs_health;

struct gs_http_server_req;

/*
 * A request for /metrics or the route on a gated server: the gate decides, now or later, and calls
 * gs_health_gate_done(h, r, ...) exactly once (it may do so from inside this call). The server holds
 * a closer part per request at the gate, so gs_health_close completes only once the gate has answered
 * every one: a gate must answer in bounded time (the owner's requests have timeouts).
 */
typedef void (*gs_health_gate_cb)(struct gs_health *h, struct gs_http_server_req *r, void *ud);
/*
 * The gate's verdict on r: status 0 serves the request; else r is answered with status (401, 403,
 * 429 with Retry-After: 1, 503...) and text (a line, "" allowed; extra, when not NULL, adds the
 * given headers). r is invalid afterwards.
 */
void gs_health_gate_done(struct gs_health *h, struct gs_http_server_req *r, int status, const char *text,
			 const struct gs_http_header *extra, size_t n_extra);

struct gs_health_opts {
	const char *addr;           /* "host:port" */
	const char *name;           /* the server's name in logs and in the closed-connections metric's
	                             * server label: "health" (default), "secure" */
	struct gs_tls_config *tls;  /* NULL: plain HTTP; else HTTPS (the server takes a reference) */
	struct gs_metrics *metrics; /* the registry the server's own counters go into (NULL: none) */
	int serve_metrics;          /* serve the registry on /metrics */
	gs_health_ready_cb ready;   /* NULL: always ready */
	void *ud;
	gs_health_gate_cb gate; /* NULL: /metrics and the route are open */
	void *gate_ud;
};

/* Returns 0 or <0 (a bind failure, e.g. -EADDRINUSE). */
int gs_health_start_opts(uv_loop_t *loop, const struct gs_health_opts *o, struct gs_health **out);
/* The plain port with /metrics open: gs_health_start_opts with serve_metrics 1, no TLS, no gate. */
int gs_health_start(uv_loop_t *loop, const char *addr, struct gs_metrics *metrics, gs_health_ready_cb ready, void *ud,
		    struct gs_health **out);
/* The bound port (for port 0 in tests). */
int gs_health_port(const struct gs_health *h);
/*
 * GET/HEAD requests whose path starts with prefix (copied; at most one route) go to cb, which answers
 * through text (the body, NUL-terminated; the health module sends it and frees it with free()) and the
 * status and content type it returns in *status / *ctype (a static string). cb runs on the loop.
 */
typedef char *(*gs_health_route_cb)(const char *path, int *status, const char **ctype, void *ud);
void gs_health_route(struct gs_health *h, const char *prefix, gs_health_route_cb cb, void *ud);

void gs_health_close(struct gs_health *h, void (*close_cb)(void *ud), void *ud);

#endif
