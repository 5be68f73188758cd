#include "core/health.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/closer.h"
#include "core/http.h"
#include "core/log.h"

#define GS_HEALTH_TICK_MS     1000
#define GS_HEALTH_METRICS_MAX (4 * 1024 * 1024)
/*
 * The port serves tiny GETs to kubelet probes (a new connection each, from the node) and to
 * scrapers (one kept-alive connection each): a small cap and short deadlines, so idle or slow
 * clients are closed in seconds and, at the cap, the oldest of them makes room (docs/http.md).
 */
#define GS_HEALTH_MAX_CONNS   64
#define GS_HEALTH_HEADER_MS   2000 /* request head complete, from the accept or its first byte */
#define GS_HEALTH_REQUEST_MS  3000 /* the whole request (a GET has no body) */
#define GS_HEALTH_IDLE_MS     5000 /* kept alive between scrapes; a scraper reconnects */

struct gs_health {
	uv_loop_t *loop;
	struct gs_http_server *server;
	struct gs_metrics *metrics;
	int serve_metrics;
	gs_health_ready_cb ready;
	void *ud;
	uv_timer_t tick;
	uint64_t last_tick;
	uint64_t lag_ms; /* how late the last heartbeat ran */
	char *route_prefix;
	gs_health_route_cb route;
	void *route_ud;
	gs_health_gate_cb gate;
	void *gate_ud;
	char name[16];
	struct gs_closer closer;
	struct gs_health_closed {
		struct gs_health *h;
		int reason;
	} closed_ud[GS_HTTP_CLOSE_REASON_COUNT];
	char labels[GS_HTTP_CLOSE_REASON_COUNT][64]; /* the registry borrows them */
};

static void on_tick(uv_timer_t *t)
{
	struct gs_health *h = t->data;
	uint64_t now = uv_now(h->loop);
	uint64_t late = now - h->last_tick;
	h->lag_ms = late > GS_HEALTH_TICK_MS ? late - GS_HEALTH_TICK_MS : 0;
	h->last_tick = now;
}

static void respond_text(struct gs_http_server_req *r, int status, const char *text)
{
	gs_http_respond(r, status, "text/plain; charset=utf-8", text, strlen(text), NULL, 0);
}

/* /metrics or the route: what a gate guards. */
static int is_data(const struct gs_health *h, const char *path)
{
	if (strcmp(path, "/metrics") == 0)
		return h->serve_metrics && h->metrics;
	return h->route && strncmp(path, h->route_prefix, strlen(h->route_prefix)) == 0;
}

static void serve_data(struct gs_health *h, struct gs_http_server_req *r, const char *path)
{
	if (strcmp(path, "/metrics") == 0) {
		struct gs_buf b;
		gs_buf_init(&b, GS_HEALTH_METRICS_MAX);
		if (gs_metrics_render(h->metrics, &b) == 0) {
			gs_http_respond(r, 200, GS_METRICS_CONTENT_TYPE, b.data ? b.data : "", b.len, NULL, 0);
		} else {
			gs_log_error("metrics: rendering failed");
			respond_text(r, 500, "metrics rendering failed\n");
		}
		gs_buf_free(&b);
	} else {
		int status = 500;
		const char *ctype = "text/plain; charset=utf-8";
		char *body = h->route(path, &status, &ctype, h->route_ud);
		if (body)
			gs_http_respond(r, status, ctype, body, strlen(body), NULL, 0);
		else
			respond_text(r, 500, "out of memory\n");
		free(body);
	}
}

static void on_request(struct gs_http_server_req *r, void *ud)
{
	struct gs_health *h = ud;
	const char *path = gs_http_req_path(r), *method = gs_http_req_method(r);
	char msg[512];

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		respond_text(r, 405, "method not allowed\n");
		return;
	}
	if (strcmp(path, "/healthz") == 0 || strcmp(path, "/livez") == 0) {
		/* The heartbeat may not have run for a while if the loop was blocked; measure now too. */
		uint64_t since = uv_now(h->loop) - h->last_tick;
		uint64_t lag = since > GS_HEALTH_TICK_MS ? since - GS_HEALTH_TICK_MS : 0;
		if (h->lag_ms > lag)
			lag = h->lag_ms;
		if (lag > GS_HEALTH_MAX_LAG_MS) {
			snprintf(msg, sizeof(msg), "event loop lagging %llu ms\n", (unsigned long long)lag);
			respond_text(r, 500, msg);
		} else {
			respond_text(r, 200, "ok\n");
		}
	} else if (strcmp(path, "/readyz") == 0) {
		char why[400] = "not ready";
		if (!h->ready || h->ready(why, sizeof(why), h->ud)) {
			respond_text(r, 200, "ok\n");
		} else {
			snprintf(msg, sizeof(msg), "%s\n", why);
			respond_text(r, 503, msg);
		}
	} else if (is_data(h, path)) {
		if (h->gate) {
			gs_closer_hold(&h->closer); /* dropped by gs_health_gate_done */
			h->gate(h, r, h->gate_ud);
		} else {
			serve_data(h, r, path);
		}
	} else {
		respond_text(r, 404, "not found\n");
	}
}

void gs_health_gate_done(struct gs_health *h, struct gs_http_server_req *r, int status, const char *text,
			 const struct gs_http_header *extra, size_t n_extra)
{
	static const struct gs_http_header retry = {"Retry-After", "1"};
	if (status == 0 && gs_closer_closing(&h->closer)) {
		/* The connection is gone already; and the registry may hold series of servers being freed. */
		gs_http_respond(r, 503, "text/plain; charset=utf-8", "shutting down\n", 14, NULL, 0);
	} else if (status == 0) {
		serve_data(h, r, gs_http_req_path(r));
	} else {
		if (status == 429 && !extra) {
			extra = &retry;
			n_extra = 1;
		}
		gs_http_respond(r, status, "text/plain; charset=utf-8", text, strlen(text), extra, n_extra);
	}
	gs_closer_drop(&h->closer);
}

void gs_health_route(struct gs_health *h, const char *prefix, gs_health_route_cb cb, void *ud)
{
	free(h->route_prefix);
	h->route_prefix = gs_xstrdup(prefix);
	h->route = cb;
	h->route_ud = ud;
}

static double m_closed(void *ud)
{
	struct gs_health_closed *c = ud;
	struct gs_http_server_stats st;
	gs_http_server_stats(c->h->server, &st);
	return (double)st.closed[c->reason];
}

/* gpu_scheduler_http_connections_closed_total{server="health",reason=...}, read at scrape time. */
static void register_metrics(struct gs_health *h)
{
	for (int i = 0; i < GS_HTTP_CLOSE_REASON_COUNT; i++) {
		snprintf(h->labels[i], sizeof(h->labels[i]), "server=\"%s\",reason=\"%s\"", h->name,
			 gs_http_close_reason_name((enum gs_http_close_reason)i));
		h->closed_ud[i].h = h;
		h->closed_ud[i].reason = i;
		gs_metrics_counter_fn(h->metrics, GS_HTTP_CLOSED_METRIC, GS_HTTP_CLOSED_HELP, h->labels[i], m_closed,
				      &h->closed_ud[i]);
	}
}

int gs_health_start_opts(uv_loop_t *loop, const struct gs_health_opts *ho, struct gs_health **out)
{
	struct gs_health *h = gs_xcalloc(1, sizeof(*h));
	struct gs_metrics *metrics = ho->metrics;
	h->loop = loop;
	h->metrics = metrics;
	h->serve_metrics = ho->serve_metrics;
	h->ready = ho->ready;
	h->ud = ho->ud;
	h->gate = ho->gate;
	h->gate_ud = ho->gate_ud;
	snprintf(h->name, sizeof(h->name), "%s", ho->name ? ho->name : "health");
	struct gs_http_server_opts o = {
		.addr = ho->addr,
		.tls = ho->tls,
		.name = h->name,
		.max_body = 4096,
		.max_conns = GS_HEALTH_MAX_CONNS,
		.header_timeout_ms = GS_HEALTH_HEADER_MS,
		.request_timeout_ms = GS_HEALTH_REQUEST_MS,
		.idle_timeout_ms = GS_HEALTH_IDLE_MS,
	};
	int r = gs_http_server_start(loop, &o, on_request, h, &h->server);
	if (r < 0) {
		free(h);
		return r;
	}
	if (metrics)
		register_metrics(h);
	uv_timer_init(loop, &h->tick);
	h->tick.data = h;
	h->last_tick = uv_now(loop);
	uv_timer_start(&h->tick, on_tick, GS_HEALTH_TICK_MS, GS_HEALTH_TICK_MS);
	uv_unref((uv_handle_t *)&h->tick);
	*out = h;
	return 0;
}

int gs_health_start(uv_loop_t *loop, const char *addr, struct gs_metrics *metrics, gs_health_ready_cb ready, void *ud,
		    struct gs_health **out)
{
	struct gs_health_opts o = {
		.addr = addr,
		.metrics = metrics,
		.serve_metrics = 1,
		.ready = ready,
		.ud = ud,
	};
	return gs_health_start_opts(loop, &o, out);
}

int gs_health_port(const struct gs_health *h)
{
	return gs_http_server_port(h->server);
}

static void health_release(struct gs_closer *c)
{
	struct gs_health *h = GS_CONTAINER_OF(c, struct gs_health, closer);

	free(h->route_prefix);
	free(h);
}

void gs_health_close(struct gs_health *h, void (*close_cb)(void *ud), void *ud)
{
	gs_closer_start(&h->closer, health_release, close_cb, ud);
	gs_closer_uv(&h->closer, (uv_handle_t *)&h->tick);
	gs_closer_hold(&h->closer);
	gs_http_server_close(h->server, gs_closer_drop_cb, &h->closer);
	gs_closer_arm(&h->closer);
}
