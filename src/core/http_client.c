/*
 * http_client.c: a keep-alive connection pool for one origin, on top of conn.c.
 *
 * A call is either queued (cl->queue), on a connection (cc->call), or finished and waiting for its
 * done callback to be delivered from the defer timer (cl->finished). Done callbacks therefore never
 * run from inside gs_http_send, gs_http_cancel or gs_http_client_close; they do run directly from
 * connection callbacks when a response completes or a connection fails, which are loop callbacks.
 *
 * Connections are reused LIFO (the most recently used one is the most likely to still be open on
 * the server side). A request that fails on a reused connection before any response byte arrived
 * is retried once on a fresh one: the server may have closed an idle connection just as we wrote.
 */
#include "core/http_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/closer.h"
#include "core/conn.h"
#include "core/log.h"

#define HTTP_CLIENT_MAX_HEAD   (64 * 1024)         /* response status line + headers */
#define HTTP_CLIENT_MAX_BODY   (64u * 1024 * 1024) /* default cap on a buffered body */
#define HTTP_CLIENT_CONNECT_MS 10000
#define HTTP_CLIENT_IDLE_MS    60000

struct client_conn {
	struct gs_conn conn;
	struct gs_http_client *cl;
	struct gs_list all;  /* cl->conns */
	struct gs_list idle; /* cl->idle while idle */
	struct gs_http_call *call;
	unsigned reused : 1, is_idle : 1;
};

struct gs_http_call {
	struct gs_list link; /* cl->queue or cl->finished */
	struct gs_http_client *cl;
	struct client_conn *cc;
	char *wire;
	size_t wire_len;
	gs_http_done_cb done;
	gs_http_data_cb on_data;
	int (*may_send)(void *ud);
	void *ud;
	unsigned timeout_ms;
	int status;
	int err; /* final error for a finished call, or the reason parsing stopped */
	struct gs_buf body;
	char content_type[128];
	unsigned retry_after;
	char hname[32]; /* current header name, truncated (only short names matter) */
	size_t hname_len;
	char hvalue[128];
	size_t hvalue_len;
	char error[160];
	unsigned got_bytes : 1, retried : 1, streaming : 1, in_data_cb : 1, cancelled : 1;
};

struct gs_http_client {
	uv_loop_t *loop;
	char *host;
	char *server_name;
	int port;
	struct gs_tls_config *tls;
	unsigned max_conns, connect_timeout_ms, idle_timeout_ms;
	size_t max_body;

	struct gs_list conns, idle, queue, finished;
	unsigned n_conns, n_idle, n_queued, n_inflight;
	uint64_t opened_total, tls_failures_total;

	uv_timer_t defer;
	struct gs_conn_mem *(*mem_open)(void *ud); /* the memory transport (tests), else NULL */
	void *mem_ud;
	unsigned closing : 1, defer_closed : 1;
	struct gs_closer closer; /* one part from the close until the defer timer closes, then that */
};

#define CALL_OF(l)      GS_CONTAINER_OF(l, struct gs_http_call, link)
#define CONN_OF_ALL(l)  GS_CONTAINER_OF(l, struct client_conn, all)
#define CONN_OF_IDLE(l) GS_CONTAINER_OF(l, struct client_conn, idle)

static void pump(struct gs_http_client *cl);
static void client_maybe_closed(struct gs_http_client *cl);

static void call_free(struct gs_http_call *call)
{
	gs_buf_free(&call->body);
	free(call->wire);
	free(call);
}

/* ---- finishing calls ---------------------------------------------------------------------------- */

static void defer_fired(uv_timer_t *t)
{
	struct gs_http_client *cl = t->data;
	while (!gs_list_empty(&cl->finished)) {
		struct gs_http_call *call = CALL_OF(gs_list_first(&cl->finished));
		gs_list_remove(&call->link);
		call->done(call, call->err, NULL, call->ud);
		call_free(call);
	}
	if (cl->closing)
		client_maybe_closed(cl);
	else
		pump(cl);
}

/* Queues done(err) for later: for calls finished from an API call rather than from the loop. */
static void call_defer(struct gs_http_call *call, int err)
{
	struct gs_http_client *cl = call->cl;
	call->err = err;
	gs_list_insert_tail(&cl->finished, &call->link);
	uv_timer_start(&cl->defer, defer_fired, 0, 0);
}

static void call_fail_now(struct gs_http_call *call, int err, const char *why)
{
	if (why && !call->error[0])
		snprintf(call->error, sizeof(call->error), "%s", why);
	call->done(call, err, NULL, call->ud);
	call_free(call);
}

/* ---- connections -------------------------------------------------------------------------------- */

static void cc_set_idle(struct client_conn *cc)
{
	struct gs_http_client *cl = cc->cl;
	cc->is_idle = 1;
	gs_list_insert_head(&cl->idle, &cc->idle); /* at the head: LIFO */
	cl->n_idle++;
	gs_conn__timer(&cc->conn, cl->idle_timeout_ms);
}

static void cc_unset_idle(struct client_conn *cc)
{
	if (!cc->is_idle)
		return;
	cc->is_idle = 0;
	gs_list_remove(&cc->idle);
	cc->cl->n_idle--;
}

static void cc_close(struct client_conn *cc)
{
	cc_unset_idle(cc);
	gs_conn__close(&cc->conn);
}

/* Takes the call off its connection and closes that connection (its response is not wanted). */
static void call_detach(struct gs_http_call *call)
{
	struct client_conn *cc = call->cc;
	if (!cc)
		return;
	cc->call = NULL;
	call->cc = NULL;
	call->cl->n_inflight--;
	cc_close(cc);
}

static void cc_write_call(struct client_conn *cc)
{
	struct gs_http_call *call = cc->call;
	if (call->may_send && !call->may_send(call->ud)) {
		/* Withdrawn: the connection, ready and unused, goes back to the idle list. */
		cc->call = NULL;
		call->cc = NULL;
		cc->cl->n_inflight--;
		cc_set_idle(cc);
		snprintf(call->error, sizeof(call->error), "withdrawn before sending");
		call_defer(call, GS_HTTP_EWITHDRAWN);
		return;
	}
	gs_conn__timer(&cc->conn, call->timeout_ms);
	int r = gs_conn__write(&cc->conn, call->wire, call->wire_len);
	if (r < 0) {
		cc->call = NULL;
		call->cc = NULL;
		cc->cl->n_inflight--;
		cc_close(cc);
		call_fail_now(call, r, "write failed");
	}
}

/* The connection ended with the call on it unanswered: retry it or fail it. */
static void cc_lost_call(struct client_conn *cc, int err)
{
	struct gs_http_call *call = cc->call;
	struct gs_http_client *cl = cc->cl;
	if (!call)
		return;
	cc->call = NULL;
	call->cc = NULL;
	cl->n_inflight--;
	if (call->err)
		err = call->err; /* the reason parsing stopped (-E2BIG) */
	if (cc->reused && !call->got_bytes && !call->retried && !cl->closing && err != -ETIMEDOUT) {
		gs_log_debug("http %s: request lost on reused conn %u (%s); retrying once", cc->conn.peer, cc->conn.id,
			     uv_strerror(err));
		call->retried = 1;
		gs_list_insert_head(&cl->queue, &call->link); /* at the head: it was first */
		cl->n_queued++;
		return;
	}
	const char *why = gs_conn__error(&cc->conn);
	char text[160];
	/* TLS reasons say it all; the static ones ("connect failed") want the errno after them. */
	if (*why && (err == -EACCES || err == -EPROTO || err == -E2BIG || err == -ETIMEDOUT))
		snprintf(text, sizeof(text), "%s", why);
	else
		snprintf(text, sizeof(text), "%s%s%s", why, *why ? ": " : "", uv_strerror(err));
	call_fail_now(call, err, text);
}

static void cc_on_ready(struct gs_conn *c, int err)
{
	struct client_conn *cc = GS_CONTAINER_OF(c, struct client_conn, conn);
	struct gs_http_client *cl = cc->cl;
	if (err < 0) {
		if (err == -EACCES || (cl->tls && c->tls && gs_tls_error(c->tls)[0]))
			cl->tls_failures_total++;
		gs_log_debug("http %s: conn %u failed: %s (%s)", c->peer, c->id, gs_conn__error(c), uv_strerror(err));
		cc_lost_call(cc, err);
		cc_close(cc);
		return;
	}
	if (cc->call)
		cc_write_call(cc);
	else
		cc_set_idle(cc);
}

static void cc_on_message(struct gs_conn *c)
{
	struct client_conn *cc = GS_CONTAINER_OF(c, struct client_conn, conn);
	struct gs_http_client *cl = cc->cl;
	struct gs_http_call *call = cc->call;

	if (!call) { /* a response nobody asked for */
		c->reason = "unsolicited response";
		cc_close(cc);
		return;
	}
	if (call->status >= 100 && call->status < 200) { /* 100 Continue and friends: the real one follows */
		call->status = 0;
		gs_conn__resume(c);
		return;
	}
	int keep = llhttp_should_keep_alive(&c->parser) && !cl->closing;
	cc->call = NULL;
	call->cc = NULL;
	cl->n_inflight--;
	cc->reused = 1;
	gs_conn__timer(c, 0);
	if (keep) {
		gs_conn__resume(c);
		cc_set_idle(cc);
	} else {
		cc_close(cc);
	}

	struct gs_http_response resp = {
		.status = call->status,
		.body = call->body.data ? call->body.data : "",
		.body_len = call->body.len,
		.content_type = call->content_type,
		.retry_after = call->retry_after,
	};
	call->done(call, 0, &resp, call->ud);
	call_free(call);
	if (!cl->closing)
		pump(cl);
}

static void cc_on_error(struct gs_conn *c, int err)
{
	struct client_conn *cc = GS_CONTAINER_OF(c, struct client_conn, conn);
	if (cc->call && err == UV_EOF)
		err = -ECONNRESET;
	cc_lost_call(cc, err);
	cc_close(cc);
	if (!cc->cl->closing)
		pump(cc->cl);
}

static void cc_on_timeout(struct gs_conn *c)
{
	struct client_conn *cc = GS_CONTAINER_OF(c, struct client_conn, conn);
	if (cc->call) {
		c->reason = c->ready ? "request timed out" : "connect timed out";
		cc_lost_call(cc, -ETIMEDOUT);
	}
	cc_close(cc);
}

static void cc_on_close(struct gs_conn *c)
{
	struct client_conn *cc = GS_CONTAINER_OF(c, struct client_conn, conn);
	struct gs_http_client *cl = cc->cl;
	cc_lost_call(cc, -ECONNRESET);
	cc_unset_idle(cc);
	gs_list_remove(&cc->all);
	cl->n_conns--;
	free(cc);
	if (cl->closing)
		client_maybe_closed(cl);
	else
		pump(cl);
}

static const struct gs_conn_cbs cc_cbs = {
	.on_ready = cc_on_ready,
	.on_message = cc_on_message,
	.on_error = cc_on_error,
	.on_timeout = cc_on_timeout,
	.on_close = cc_on_close,
};

/* ---- response parsing (llhttp callbacks) -------------------------------------------------------- */

static struct gs_http_call *parser_call(llhttp_t *p)
{
	struct gs_conn *c = p->data;
	struct client_conn *cc = GS_CONTAINER_OF(c, struct client_conn, conn);
	return cc->call;
}

static int on_message_begin(llhttp_t *p)
{
	struct gs_http_call *call = parser_call(p);
	if (!call)
		return -1;
	call->got_bytes = 1;
	call->hname_len = call->hvalue_len = 0;
	return 0;
}

/* Appends a header span to a fixed buffer, truncating (only short names and values matter here). */
static void append_span(char *buf, size_t size, size_t *len, const char *at, size_t n)
{
	size_t room = size - 1 - *len;
	if (n > room)
		n = room;
	memcpy(buf + *len, at, n);
	*len += n;
	buf[*len] = '\0';
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
	struct gs_http_call *call = parser_call(p);
	if (!call)
		return -1;
	append_span(call->hname, sizeof(call->hname), &call->hname_len, at, len);
	return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
	struct gs_http_call *call = parser_call(p);
	if (!call)
		return -1;
	append_span(call->hvalue, sizeof(call->hvalue), &call->hvalue_len, at, len);
	return 0;
}

static int on_header_value_complete(llhttp_t *p)
{
	struct gs_http_call *call = parser_call(p);
	if (!call)
		return -1;
	if (strcasecmp(call->hname, "Content-Type") == 0) {
		snprintf(call->content_type, sizeof(call->content_type), "%s", call->hvalue);
	} else if (strcasecmp(call->hname, "Retry-After") == 0) {
		char *end;
		unsigned long v = strtoul(call->hvalue, &end, 10);
		if (end != call->hvalue && *end == '\0')
			call->retry_after = v > 3600 ? 3600 : (unsigned)v;
	}
	call->hname_len = call->hvalue_len = 0;
	call->hname[0] = call->hvalue[0] = '\0';
	return 0;
}

static int on_headers_complete(llhttp_t *p)
{
	struct gs_http_call *call = parser_call(p);
	if (!call)
		return -1;
	/* llhttp 8.1.0 reads "HTTP/1.1 1 OK" as status 1; a status code is three digits (RFC 9110). */
	if (p->status_code < 100) {
		snprintf(call->error, sizeof(call->error), "invalid status code %d", p->status_code);
		return -1;
	}
	call->status = p->status_code;
	call->streaming = call->on_data && call->status >= 200 && call->status < 300;
	gs_buf_reset(&call->body);
	return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
	struct gs_http_call *call = parser_call(p);
	if (!call)
		return -1;
	if (call->streaming) {
		call->in_data_cb = 1;
		call->on_data(call, at, len, call->ud);
		call->in_data_cb = 0;
		if (call->cancelled) {
			call_detach(call);
			call_defer(call, -ECANCELED);
			return -1;
		}
		return 0;
	}
	int r = gs_buf_append(&call->body, at, len);
	if (r < 0) {
		call->err = r;
		snprintf(call->error, sizeof(call->error), "response body over %zu bytes", call->body.cap);
		return -1;
	}
	return 0;
}

static const llhttp_settings_t client_settings = {
	.on_message_begin = on_message_begin,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_header_value_complete = on_header_value_complete,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
};

/* ---- the pool ----------------------------------------------------------------------------------- */

static int cc_open(struct gs_http_client *cl, struct client_conn **out)
{
	struct client_conn *cc = gs_xcalloc(1, sizeof(*cc));
	cc->cl = cl;
	gs_conn__init(&cc->conn, cl->loop, HTTP_RESPONSE, &client_settings, &cc_cbs, HTTP_CLIENT_MAX_HEAD);
	gs_list_insert_tail(&cl->conns, &cc->all);
	cl->n_conns++;
	cl->opened_total++;

	struct gs_tls *tls = NULL;
	int r = 0;
	if (cl->mem_open) {
		struct gs_conn_mem *m = cl->mem_open(cl->mem_ud);
		char peer[sizeof(cc->conn.peer)];
		snprintf(peer, sizeof(peer), strchr(cl->host, ':') ? "[%s]:%d" : "%s:%d", cl->host, cl->port);
		if (m)
			gs_conn__open_memory(&cc->conn, m, peer, 1);
		else
			r = UV_ECONNREFUSED;
	} else if (cl->tls) {
		r = gs_tls_client_new(cl->tls, cl->server_name, &tls);
		if (r < 0)
			cc->conn.reason = "cannot create a TLS session";
	}
	if (r == 0 && !cl->mem_open)
		r = gs_conn__connect(&cc->conn, cl->host, cl->port, tls);
	if (r < 0) {
		if (!cc->conn.tls)
			gs_tls_free(tls);
		gs_log_warn("http %s:%d: cannot connect: %s", cl->host, cl->port, uv_strerror(r));
		gs_conn__close(&cc->conn); /* on_close frees it */
		return r;
	}
	gs_conn__timer(&cc->conn, cl->connect_timeout_ms);
	*out = cc;
	return 0;
}

static void pump(struct gs_http_client *cl)
{
	while (!cl->closing && !gs_list_empty(&cl->queue)) {
		struct client_conn *cc = NULL;
		if (!gs_list_empty(&cl->idle)) {
			cc = CONN_OF_IDLE(gs_list_first(&cl->idle));
			cc_unset_idle(cc);
		} else if (cl->n_conns < cl->max_conns) {
			/* A fresh connection: the first call waiting will ride on it once it is ready. */
			int r = cc_open(cl, &cc);
			if (r < 0) { /* fail the call rather than retry in a tight loop */
				struct gs_http_call *call = CALL_OF(gs_list_first(&cl->queue));
				gs_list_remove(&call->link);
				cl->n_queued--;
				snprintf(call->error, sizeof(call->error), "cannot connect to %s:%d: %s", cl->host,
					 cl->port, uv_strerror(r));
				call_defer(call, r);
				continue;
			}
		} else {
			break;
		}
		struct gs_http_call *call = CALL_OF(gs_list_first(&cl->queue));
		gs_list_remove(&call->link);
		cl->n_queued--;
		cl->n_inflight++;
		cc->call = call;
		call->cc = cc;
		if (cc->conn.ready)
			cc_write_call(cc);
	}
}

static int serialize(struct gs_http_client *cl, const struct gs_http_request *req, struct gs_buf *b)
{
	int v6 = strchr(cl->host, ':') != NULL;
	int r = gs_buf_printf(b, "%s %s HTTP/1.1\r\nHost: %s%s%s", req->method, req->path, v6 ? "[" : "", cl->host,
			      v6 ? "]" : "");
	if (r == 0 && cl->port != (cl->tls ? 443 : 80))
		r = gs_buf_printf(b, ":%d", cl->port);
	if (r == 0)
		r = gs_buf_append_str(b, "\r\n");
	for (size_t i = 0; r == 0 && i < req->n_headers; i++) {
		const char *n = req->headers[i].name, *v = req->headers[i].value;
		if (strpbrk(n, "\r\n:") || strpbrk(v, "\r\n"))
			return -EINVAL; /* no header injection, whatever the caller passes */
		r = gs_buf_printf(b, "%s: %s\r\n", n, v);
	}
	if (r == 0 && (req->body || strcmp(req->method, "POST") == 0 || strcmp(req->method, "PUT") == 0 ||
		       strcmp(req->method, "PATCH") == 0))
		r = gs_buf_printf(b, "Content-Length: %zu\r\n", req->body ? req->body_len : 0);
	if (r == 0)
		r = gs_buf_append_str(b, "\r\n");
	if (r == 0 && req->body)
		r = gs_buf_append(b, req->body, req->body_len);
	return r;
}

int gs_http_send(struct gs_http_client *cl, const struct gs_http_request *req, gs_http_done_cb done, void *ud,
		 struct gs_http_call **out)
{
	if (cl->closing)
		return -ECANCELED;
	if (!req->method || !req->path || req->path[0] != '/' || strpbrk(req->path, " \r\n") || !done)
		return -EINVAL;
	struct gs_http_call *call = gs_xcalloc(1, sizeof(*call));
	struct gs_buf w;
	gs_buf_init(&w, 0);
	int r = serialize(cl, req, &w);
	if (r < 0) {
		gs_buf_free(&w);
		free(call);
		return r;
	}
	call->wire = gs_buf_steal(&w, &call->wire_len);
	call->cl = cl;
	call->done = done;
	call->on_data = req->on_data;
	call->may_send = req->may_send;
	call->ud = ud;
	call->timeout_ms = req->timeout_ms;
	gs_buf_init(&call->body, cl->max_body);
	gs_list_insert_tail(&cl->queue, &call->link);
	cl->n_queued++;
	if (out)
		*out = call;
	pump(cl);
	return 0;
}

void gs_http_cancel(struct gs_http_call *call)
{
	struct gs_http_client *cl = call->cl;
	if (call->cancelled)
		return;
	call->cancelled = 1;
	snprintf(call->error, sizeof(call->error), "cancelled");
	if (call->in_data_cb)
		return; /* on_body finishes it when on_data returns */
	if (call->cc) {
		call_detach(call);
	} else if (!gs_list_empty(&call->link)) {
		gs_list_remove(&call->link);
		cl->n_queued--;
	}
	call_defer(call, -ECANCELED);
}

int gs_http_call_status(const struct gs_http_call *call)
{
	return call->status;
}

const char *gs_http_call_content_type(const struct gs_http_call *call)
{
	return call->content_type;
}

const char *gs_http_call_error(const struct gs_http_call *call)
{
	return call->error;
}

int gs_http_client_new(uv_loop_t *loop, const struct gs_http_client_opts *o, struct gs_http_client **out)
{
	if (!o->host || !*o->host || o->port <= 0 || o->port > 65535)
		return -EINVAL;
	struct gs_http_client *cl = gs_xcalloc(1, sizeof(*cl));
	cl->loop = loop;
	cl->host = gs_xstrdup(o->host);
	cl->server_name = gs_xstrdup(o->server_name && *o->server_name ? o->server_name : o->host);
	cl->port = o->port;
	cl->tls = o->tls;
	if (cl->tls)
		gs_tls_config_ref(cl->tls);
	cl->max_conns = o->max_conns ? o->max_conns : 1;
	cl->connect_timeout_ms = o->connect_timeout_ms ? o->connect_timeout_ms : HTTP_CLIENT_CONNECT_MS;
	cl->idle_timeout_ms = o->idle_timeout_ms ? o->idle_timeout_ms : HTTP_CLIENT_IDLE_MS;
	cl->max_body = o->max_body ? o->max_body : HTTP_CLIENT_MAX_BODY;
	gs_list_init(&cl->conns);
	gs_list_init(&cl->idle);
	gs_list_init(&cl->queue);
	gs_list_init(&cl->finished);
	uv_timer_init(loop, &cl->defer);
	cl->defer.data = cl;
	*out = cl;
	return 0;
}

void gs_http_client_stats(const struct gs_http_client *cl, struct gs_http_client_stats *st)
{
	st->conns_open = cl->n_conns;
	st->conns_idle = cl->n_idle;
	st->queued = cl->n_queued;
	st->inflight = cl->n_inflight;
	st->conns_opened_total = cl->opened_total;
	st->tls_failures_total = cl->tls_failures_total;
}

void gs_http_client__use_memory(struct gs_http_client *c, struct gs_conn_mem *(*open)(void *ud), void *ud)
{
	c->mem_open = open;
	c->mem_ud = ud;
}

void gs_http_client_set_tls(struct gs_http_client *cl, struct gs_tls_config *tls)
{
	if (tls)
		gs_tls_config_ref(tls);
	gs_tls_config_unref(cl->tls);
	cl->tls = tls;
}

static void client_release(struct gs_closer *c)
{
	struct gs_http_client *cl = GS_CONTAINER_OF(c, struct gs_http_client, closer);

	gs_tls_config_unref(cl->tls);
	free(cl->host);
	free(cl->server_name);
	free(cl);
}

/* Once every connection is closed and every done callback delivered: the defer timer goes last. */
static void client_maybe_closed(struct gs_http_client *cl)
{
	if (cl->defer_closed || cl->n_conns || !gs_list_empty(&cl->finished))
		return;
	cl->defer_closed = 1;
	gs_closer_uv(&cl->closer, (uv_handle_t *)&cl->defer);
	gs_closer_drop(&cl->closer); /* the pool's part, held since the close */
}

void gs_http_client_close(struct gs_http_client *cl, void (*close_cb)(void *ud), void *ud)
{
	cl->closing = 1;
	gs_closer_start(&cl->closer, client_release, close_cb, ud);
	gs_closer_hold(&cl->closer);
	while (!gs_list_empty(&cl->queue)) {
		struct gs_http_call *call = CALL_OF(gs_list_first(&cl->queue));
		gs_list_remove(&call->link);
		cl->n_queued--;
		snprintf(call->error, sizeof(call->error), "client closing");
		call_defer(call, -ECANCELED);
	}
	struct gs_list *l;
	GS_LIST_FOREACH(l, &cl->conns) {
		struct client_conn *cc = CONN_OF_ALL(l);
		struct gs_http_call *call = cc->call;
		if (call && !call->in_data_cb) {
			cc->call = NULL;
			call->cc = NULL;
			cl->n_inflight--;
			snprintf(call->error, sizeof(call->error), "client closing");
			call_defer(call, -ECANCELED);
		} else if (call) {
			call->cancelled = 1;
		}
		cc_close(cc);
	}
	/* Always through the defer timer, so close_cb never runs inside this call. */
	uv_timer_start(&cl->defer, defer_fired, 0, 0);
	gs_closer_arm(&cl->closer);
}
