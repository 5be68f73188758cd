/*
 * health.h: the operational HTTP endpoints, plain HTTP on their own address.
 *
 *   /healthz, /livez   200 "ok" while the loop turns: a 1 s heartbeat timer measures how late the
 *                      loop runs; a lag over GS_HEALTH_MAX_LAG_MS answers 500 (the loop is stuck).
 *   /readyz            200 "ok" when the owner's ready callback says so, else 503 with its reason.
 *   /metrics           the registry in the Prometheus text format 0.0.4.
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
void gs_health_close(struct gs_health *h, void (*close_cb)(void *ud), void *ud);

#endif
