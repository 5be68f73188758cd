/*
 * health.h: the operational HTTP endpoints, plain HTTP on their own address.
 *
 *   /healthz, /livez   200 "ok" while the loop turns: a 1 s heartbeat timer measures how late the
 *                      loop runs; a lag over GS_HEALTH_MAX_LAG_MS answers 500 (the loop is stuck).
 *   /readyz            200 "ok" when the owner's ready callback says so, else 503 with its reason.
 *   /metrics           the registry in the Prometheus text format 0.0.4.
 *   a routed prefix    the owner's callback answers (gs_health_route), e.g. /debug/ for explanations.
 *   anything else      404; methods other than GET/HEAD: 405.
 */
#ifndef GS_CORE_HEALTH_H
#define GS_CORE_HEALTH_H

#include <stddef.h>
#include <uv.h>

#include "core/metrics.h"

#define GS_HEALTH_MAX_LAG_MS 10000

/* Returns 1 when ready; else 0 with a one-line reason in why. */
typedef int (*gs_health_ready_cb)(char *why, size_t whylen, void *ud);

struct gs_health;

/* addr: "host:port". Returns 0 or <0 (a bind failure, e.g. -EADDRINUSE). */
int gs_health_start(uv_loop_t *loop, const char *addr, struct gs_metrics *metrics, gs_health_ready_cb ready,
		    void *ud, struct gs_health **out);
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
