/*
 * grpc.c: gRPC unary calls over nghttp2 on a uv_pipe_t (docs/agent.md, "The gRPC client").
 *
 * The read path is uv_read -> nghttp2_session_mem_recv -> the session callbacks (headers, data,
 * stream close) -> the call; the write path is nghttp2_session_mem_send -> one uv_write per flush.
 * nghttp2 does no I/O of its own, so the session is driven exactly like llhttp in conn.c.
 *
 * A call is found from its stream through the stream's user data, never through a pointer the
 * session keeps: finishing a call (deadline, cap, bad reply) clears the stream's user data and resets
 * the stream, so a late frame, or nghttp2 asking for the rest of a request body, finds NULL.
 * Connections are failed only from libuv callbacks, never from inside nghttp2's, and the session is
 * deleted in the pipe's close callback.
 */
#include "core/grpc.h"

#include <ctype.h>
#include <nghttp2/nghttp2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/closer.h"
#include "core/list.h"
#include "core/log.h"

#define GRPC_WINDOW   (1 << 20) /* our stream and connection receive windows */
#define GRPC_PREFIX   5         /* a message's flag byte and 4-byte length */
#define GRPC_READ_BUF (64 * 1024)

struct grpc_conn {
	uv_pipe_t pipe;
	uv_connect_t creq;
	nghttp2_session *h2;
	struct gs_grpc_client *cl;
	unsigned connected : 1, closing : 1;
};

struct grpc_call {
	struct gs_list link; /* cl->calls, then cl->finished */
	struct gs_grpc_client *cl;
	char *method;
	uint8_t *req; /* prefix + message */
	size_t req_len, req_off;
	int32_t stream_id; /* 0 until submitted */
	uint64_t deadline; /* uv_now() milliseconds */
	unsigned deadline_ms;
	gs_grpc_done_cb done;
	void *ud;
	/* the reply */
	struct gs_buf resp; /* DATA bytes: prefix + message */
	size_t header_bytes;
	int http_status, grpc_status, ct_ok;
	char message[256];
	/* the outcome */
	int finished, err;
	char error[256];
};

struct gs_grpc_client {
	uv_loop_t *loop;
	char *path;
	size_t max_msg;
	struct grpc_conn *conn;  /* the one not closing, or NULL */
	struct gs_list calls;    /* waiting for a connection or in flight */
	struct gs_list finished; /* waiting for done */
	uv_timer_t timer;        /* deadlines, and the delivery of finished calls */
	struct gs_closer closer; /* parts: the timer, each connection still open */
	struct gs_grpc_client_stats st;
};

static char grpc_rbuf[GRPC_READ_BUF];

static void conn_flush(struct grpc_conn *cn);
static void client_timer_update(struct gs_grpc_client *cl);

/* ---- calls ------------------------------------------------------------------------------------- */

/* Ends a call with err (0: success) and a reason; it waits in cl->finished for done. Idempotent. */
static void call_finish(struct grpc_call *call, struct grpc_conn *cn, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void call_finish(struct grpc_call *call, struct grpc_conn *cn, int err, const char *fmt, ...)
{
	struct gs_grpc_client *cl = call->cl;
	if (call->finished)
		return;
	call->finished = 1;
	call->err = err;
	if (fmt) {
		va_list ap;
		int n = snprintf(call->error, sizeof call->error, "%s %s: ", cl->path, call->method);
		va_start(ap, fmt);
		if (n > 0 && (size_t)n < sizeof call->error)
			vsnprintf(call->error + n, sizeof call->error - (size_t)n, fmt, ap);
		va_end(ap);
	}
	if (cn && cn->h2 && call->stream_id > 0) {
		nghttp2_session_set_stream_user_data(cn->h2, call->stream_id, NULL);
		if (err)
			nghttp2_submit_rst_stream(cn->h2, NGHTTP2_FLAG_NONE, call->stream_id, NGHTTP2_CANCEL);
	}
	GS_ASSERT(cl->st.inflight > 0);
	gs_list_remove(&call->link);
	gs_list_insert_tail(&cl->finished, &call->link);
	cl->st.inflight--;
	if (err)
		cl->st.failed++;
	client_timer_update(cl);
}

static void call_free(struct grpc_call *call)
{
	gs_buf_free(&call->resp);
	free(call->req);
	free(call->method);
	free(call);
}

static void call_deliver(struct grpc_call *call)
{
	struct gs_grpc_reply r = {.status = call->grpc_status, .message = call->message, .error = call->error};
	GS_ASSERT(call->finished);
	if (call->err == 0) {
		r.msg = (const uint8_t *)call->resp.data + GRPC_PREFIX;
		r.len = call->resp.len - GRPC_PREFIX;
	}
	call->done(call->err, &r, call->ud);
	call_free(call);
}

static const char *grpc_code_name(int code)
{
	static const char *const names[] = {
		"OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
		"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
		"ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
		"DATA_LOSS", "UNAUTHENTICATED"};
	return code >= 0 && code < (int)(sizeof names / sizeof names[0]) ? names[code] : "?";
}

/* A reply whose head says it is not gRPC: 1 and the call finished, else 0. */
static int call_head_refused(struct grpc_call *call, struct grpc_conn *cn)
{
	if (call->http_status != 200)
		call_finish(call, cn, -EPROTO, "HTTP status %d, not a gRPC reply", call->http_status);
	else if (!call->ct_ok)
		call_finish(call, cn, -EPROTO, "the reply's content-type is not application/grpc");
	else
		return 0;
	return 1;
}

/* The stream ended cleanly: judge the reply. */
static void call_complete(struct grpc_call *call, struct grpc_conn *cn)
{
	const uint8_t *p = (const uint8_t *)call->resp.data;
	size_t n = call->resp.len;
	uint32_t len = n >= GRPC_PREFIX ? (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4] : 0;

	if (call_head_refused(call, cn))
		return;
	if (call->grpc_status < 0)
		call_finish(call, cn, -EPROTO, "the reply has no grpc-status");
	else if (call->grpc_status != 0)
		call_finish(call, cn, GS_GRPC_ESTATUS, "grpc-status %d %s: %s", call->grpc_status,
			    grpc_code_name(call->grpc_status), call->message);
	else if (n < GRPC_PREFIX)
		call_finish(call, cn, -EPROTO, "grpc-status 0 but no reply message (%zu bytes)", n);
	else if (p[0] != 0)
		call_finish(call, cn, -EPROTO, "the reply message is compressed (flag %u), none was asked for", p[0]);
	else if (n - GRPC_PREFIX != len)
		call_finish(call, cn, -EPROTO, "the reply message announces %u bytes, %zu came", len, n - GRPC_PREFIX);
	else
		call_finish(call, cn, 0, NULL);
}

/* grpc-message is percent-encoded (the gRPC HTTP/2 protocol); kept printable for logs. */
static void grpc_message_copy(char *dst, size_t cap, const uint8_t *v, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 1 < cap; i++) {
		unsigned c = v[i];
		if (c == '%' && i + 2 < len && isxdigit(v[i + 1]) && isxdigit(v[i + 2])) {
			char hex[3] = {(char)v[i + 1], (char)v[i + 2], 0};
			c = (unsigned)strtoul(hex, NULL, 16);
			i += 2;
		}
		dst[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	dst[o] = '\0';
}

/* ---- nghttp2 callbacks ------------------------------------------------------------------------- */

static struct grpc_call *stream_call(nghttp2_session *s, int32_t id)
{
	struct grpc_call *call = id > 0 ? nghttp2_session_get_stream_user_data(s, id) : NULL;
	GS_ASSERT(!call || !call->finished); /* finishing detaches a call from its stream */
	return call;
}

static int h2_on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t namelen,
			const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
	struct grpc_call *call = stream_call(s, f->hd.stream_id);
	if (!call)
		return 0;
	call->header_bytes += namelen + valuelen;
	if (call->header_bytes > GS_GRPC_MAX_HEADERS) {
		call_finish(call, ud, -E2BIG, "reply headers over %d bytes", GS_GRPC_MAX_HEADERS);
		return 0;
	}
#define IS(lit) (namelen == sizeof(lit) - 1 && !memcmp(name, lit, sizeof(lit) - 1))
	if (IS(":status")) {
		call->http_status = valuelen == 3 ? atoi((const char *)value) : -1;
	} else if (IS("content-type")) {
		/* application/grpc, or application/grpc+proto and the like */
		call->ct_ok = valuelen >= 16 && !memcmp(value, "application/grpc", 16) &&
			      (valuelen == 16 || value[16] == '+' || value[16] == ';');
	} else if (IS("grpc-status")) {
		int v = 0;
		for (size_t i = 0; i < valuelen && v >= 0; i++)
			v = isdigit(value[i]) && v < 100000 ? v * 10 + (value[i] - '0') : -1;
		call->grpc_status = valuelen ? v : -1;
		if (call->grpc_status < 0)
			call_finish(call, ud, -EPROTO, "grpc-status \"%.*s\" is not a number",
				    (int)(valuelen > 32 ? 32 : valuelen), (const char *)value);
	} else if (IS("grpc-message")) {
		grpc_message_copy(call->message, sizeof call->message, value, valuelen);
	}
#undef IS
	return 0;
}

static int h2_on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *ud)
{
	struct grpc_call *call = stream_call(s, id);
	const uint8_t *p;
	if (!call || call_head_refused(call, ud))
		return 0;
	if (gs_buf_append(&call->resp, data, len) < 0) {
		call_finish(call, ud, -E2BIG, "reply over the cap of %zu bytes", call->cl->max_msg);
		return 0;
	}
	p = (const uint8_t *)call->resp.data;
	if (call->resp.len >= GRPC_PREFIX) {
		uint32_t n = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
		if (n > call->cl->max_msg)
			call_finish(call, ud, -E2BIG, "reply message of %u bytes over the cap of %zu", n,
				    call->cl->max_msg);
	}
	return 0;
}

static int h2_on_stream_close(nghttp2_session *s, int32_t id, uint32_t error_code, void *ud)
{
	struct grpc_call *call = stream_call(s, id);
	if (!call)
		return 0;
	nghttp2_session_set_stream_user_data(s, id, NULL);
	call->stream_id = 0; /* closed: nothing to reset */
	if (error_code != NGHTTP2_NO_ERROR)
		call_finish(call, ud, -EPROTO, "the peer reset the stream (%s)", nghttp2_http2_strerror(error_code));
	else
		call_complete(call, ud);
	return 0;
}

static ssize_t h2_read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
			    nghttp2_data_source *src, void *ud)
{
	struct grpc_call *call = stream_call(s, id);
	size_t n;
	if (!call)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* finished meanwhile: the stream is reset */
	n = call->req_len - call->req_off;
	if (n > len)
		n = len;
	memcpy(buf, call->req + call->req_off, n);
	call->req_off += n;
	if (call->req_off == call->req_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static nghttp2_session_callbacks *h2_callbacks(void)
{
	static nghttp2_session_callbacks *cbs;
	if (!cbs) {
		if (nghttp2_session_callbacks_new(&cbs) != 0)
			gs_oom(0);
		nghttp2_session_callbacks_set_on_header_callback(cbs, h2_on_header);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, h2_on_data);
		nghttp2_session_callbacks_set_on_stream_close_callback(cbs, h2_on_stream_close);
	}
	return cbs;
}

/* ---- the connection ---------------------------------------------------------------------------- */

static void conn_closed(uv_handle_t *h)
{
	struct grpc_conn *cn = GS_CONTAINER_OF((uv_pipe_t *)h, struct grpc_conn, pipe);
	struct gs_grpc_client *cl = cn->cl;
	nghttp2_session_del(cn->h2);
	free(cn);
	gs_closer_drop(&cl->closer);
}

/* Fails every call waiting for or on cn, and closes it. From libuv callbacks only (not inside nghttp2). */
static void conn_fail(struct grpc_conn *cn, int err, const char *why)
{
	struct gs_grpc_client *cl = cn->cl;
	if (cn->closing)
		return;
	cn->closing = 1;
	GS_ASSERT(cl->conn == cn);
	cl->conn = NULL;
	while (!gs_list_empty(&cl->calls)) {
		struct grpc_call *call = GS_CONTAINER_OF(cl->calls.next, struct grpc_call, link);
		call_finish(call, cn, err, "%s", why);
	}
	gs_log_debug("grpc %s: connection closed: %s", cl->path, why);
	uv_close((uv_handle_t *)&cn->pipe, conn_closed);
}

static void conn_fail_uv(struct grpc_conn *cn, int err, const char *what)
{
	char why[160];
	if (err == UV_EOF || err == UV_EPIPE || err == UV_ECONNRESET)
		err = UV_ECONNRESET, snprintf(why, sizeof why, "%s: the peer closed the connection", what);
	else if (err == UV_ENOENT)
		snprintf(why, sizeof why, "%s: the socket does not exist", what);
	else if (err == UV_ECONNREFUSED)
		snprintf(why, sizeof why, "%s: nobody listens on the socket", what);
	else
		snprintf(why, sizeof why, "%s: %s", what, uv_strerror(err));
	conn_fail(cn, err, why);
}

struct grpc_wreq {
	uv_write_t w;
	size_t len;
	char data[];
};

static void conn_wrote(uv_write_t *w, int status)
{
	struct grpc_wreq *wr = GS_CONTAINER_OF(w, struct grpc_wreq, w);
	struct grpc_conn *cn = w->data;
	free(wr);
	if (status < 0 && status != UV_ECANCELED && !cn->closing)
		conn_fail_uv(cn, status, "write");
}

static void conn_submit(struct grpc_conn *cn, struct grpc_call *call)
{
	char timeout[16];
	nghttp2_data_provider dp = {.read_callback = h2_read_body};
	snprintf(timeout, sizeof timeout, "%um", call->deadline_ms);
#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE}
	nghttp2_nv hd[] = {NV(":method", "POST"),
			   NV(":scheme", "http"),
			   NV(":authority", "localhost"),
			   NV(":path", call->method),
			   NV("content-type", "application/grpc"),
			   NV("te", "trailers"),
			   NV("grpc-timeout", timeout),
			   NV("user-agent", "gpu-scheduler")};
#undef NV
	int32_t id = nghttp2_submit_request(cn->h2, NULL, hd, sizeof hd / sizeof hd[0], &dp, call);
	if (id < 0)
		call_finish(call, cn, -EPROTO, "cannot start a stream: %s", nghttp2_strerror(id));
	else
		call->stream_id = id;
}

/* Everything nghttp2 wants to send, in one write. */
static void conn_flush(struct grpc_conn *cn)
{
	struct gs_buf out;
	const uint8_t *p;
	ssize_t n;
	if (cn->closing || !cn->connected)
		return;
	gs_buf_init(&out, 0);
	while ((n = nghttp2_session_mem_send(cn->h2, &p)) > 0)
		if (gs_buf_append(&out, p, (size_t)n) < 0)
			gs_oom((size_t)n);
	if (n < 0) {
		gs_buf_free(&out);
		conn_fail(cn, -EPROTO, nghttp2_strerror((int)n));
		return;
	}
	if (out.len) {
		struct grpc_wreq *wr = gs_xmalloc(sizeof *wr + out.len);
		uv_buf_t b = uv_buf_init(wr->data, (unsigned)out.len);
		int rc;
		memcpy(wr->data, out.data, out.len);
		wr->len = out.len;
		wr->w.data = cn;
		rc = uv_write(&wr->w, (uv_stream_t *)&cn->pipe, &b, 1, conn_wrote);
		if (rc < 0) {
			free(wr);
			conn_fail_uv(cn, rc, "write");
		}
	}
	gs_buf_free(&out);
	if (!cn->closing && !nghttp2_session_want_read(cn->h2) && !nghttp2_session_want_write(cn->h2))
		conn_fail(cn, -ECONNRESET, "the peer ended the HTTP/2 session (GOAWAY)");
}

static void conn_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	*b = uv_buf_init(grpc_rbuf, sizeof grpc_rbuf);
}

static void conn_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *b)
{
	struct grpc_conn *cn = GS_CONTAINER_OF((uv_pipe_t *)s, struct grpc_conn, pipe);
	ssize_t rc;
	if (cn->closing)
		return;
	if (nread < 0) {
		conn_fail_uv(cn, (int)nread, "read");
		return;
	}
	rc = nghttp2_session_mem_recv(cn->h2, (const uint8_t *)b->base, (size_t)nread);
	if (rc < 0) {
		char why[160];
		snprintf(why, sizeof why, "not an HTTP/2 peer, or a broken one: %s", nghttp2_strerror((int)rc));
		conn_fail(cn, -EPROTO, why);
		return;
	}
	conn_flush(cn);
}

static void conn_connected(uv_connect_t *req, int status)
{
	struct grpc_conn *cn = GS_CONTAINER_OF(req, struct grpc_conn, creq);
	struct gs_grpc_client *cl = cn->cl;
	nghttp2_settings_entry set[] = {
		{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, GRPC_WINDOW},
		{NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, GS_GRPC_MAX_HEADERS},
	};
	int rc;
	if (cn->closing)
		return;
	if (status < 0) {
		conn_fail_uv(cn, status, "connect");
		return;
	}
	if (nghttp2_session_client_new(&cn->h2, h2_callbacks(), cn) != 0)
		gs_oom(0);
	nghttp2_submit_settings(cn->h2, NGHTTP2_FLAG_NONE, set, sizeof set / sizeof set[0]);
	nghttp2_session_set_local_window_size(cn->h2, NGHTTP2_FLAG_NONE, 0, GRPC_WINDOW);
	cn->connected = 1;
	cl->st.conns++;
	rc = uv_read_start((uv_stream_t *)&cn->pipe, conn_alloc, conn_read);
	if (rc < 0) {
		conn_fail_uv(cn, rc, "read");
		return;
	}
	struct gs_list *l, *n;
	GS_LIST_FOREACH_SAFE(l, n, &cl->calls)
		conn_submit(cn, GS_CONTAINER_OF(l, struct grpc_call, link));
	conn_flush(cn);
}

static void conn_open(struct gs_grpc_client *cl)
{
	struct grpc_conn *cn = gs_xcalloc(1, sizeof *cn);
	GS_ASSERT(!cl->conn); /* at most one connection that is not closing */
	cn->cl = cl;
	if (uv_pipe_init(cl->loop, &cn->pipe, 0) != 0)
		gs_oom(0);
	gs_closer_hold(&cl->closer);
	cl->conn = cn;
	uv_pipe_connect(&cn->creq, &cn->pipe, cl->path, conn_connected);
}

/* ---- the client -------------------------------------------------------------------------------- */

static void client_timer_cb(uv_timer_t *t)
{
	struct gs_grpc_client *cl = t->data;
	uint64_t now = uv_now(cl->loop);
	struct grpc_conn *cn = cl->conn;
	struct gs_list *l, *n;
	GS_LIST_FOREACH_SAFE(l, n, &cl->calls) {
		struct grpc_call *call = GS_CONTAINER_OF(l, struct grpc_call, link);
		if (call->deadline <= now)
			call_finish(call, cn, -ETIMEDOUT, "no reply within the deadline of %u ms", call->deadline_ms);
	}
	if (cn)
		conn_flush(cn); /* the resets */
	while (!gs_list_empty(&cl->finished) && !gs_closer_closing(&cl->closer)) {
		struct grpc_call *call = GS_CONTAINER_OF(cl->finished.next, struct grpc_call, link);
		gs_list_remove(&call->link);
		call_deliver(call);
	}
	if (!gs_closer_closing(&cl->closer))
		client_timer_update(cl);
}

static void client_timer_update(struct gs_grpc_client *cl)
{
	uint64_t now = uv_now(cl->loop), next = UINT64_MAX;
	if (gs_closer_closing(&cl->closer))
		return;
	if (!gs_list_empty(&cl->finished))
		next = now;
	struct gs_list *l;
	GS_LIST_FOREACH(l, &cl->calls) {
		struct grpc_call *call = GS_CONTAINER_OF(l, struct grpc_call, link);
		if (call->deadline < next)
			next = call->deadline;
	}
	if (next == UINT64_MAX)
		uv_timer_stop(&cl->timer);
	else
		uv_timer_start(&cl->timer, client_timer_cb, next > now ? next - now : 0, 0);
}

int gs_grpc_client_new(uv_loop_t *loop, const struct gs_grpc_client_opts *opts, struct gs_grpc_client **out)
{
	struct gs_grpc_client *cl;
	if (!opts->path || !opts->path[0] || strlen(opts->path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -EINVAL;
	cl = gs_xcalloc(1, sizeof *cl);
	cl->loop = loop;
	cl->path = gs_xstrdup(opts->path);
	cl->max_msg = opts->max_msg ? opts->max_msg : GS_GRPC_MAX_MSG_DEFAULT;
	gs_list_init(&cl->calls);
	gs_list_init(&cl->finished);
	gs_closer_init(&cl->closer);
	uv_timer_init(loop, &cl->timer);
	cl->timer.data = cl;
	*out = cl;
	return 0;
}

int gs_grpc_call(struct gs_grpc_client *cl, const char *method, const void *msg, size_t len, unsigned deadline_ms,
		 gs_grpc_done_cb done, void *ud)
{
	struct grpc_call *call;
	if (gs_closer_closing(&cl->closer))
		return -ECANCELED;
	if (!method || method[0] != '/' || !done || deadline_ms == 0 || deadline_ms > GS_GRPC_MAX_DEADLINE_MS ||
	    (len && !msg))
		return -EINVAL;
	if (len > cl->max_msg)
		return -E2BIG;
	call = gs_xcalloc(1, sizeof *call);
	call->cl = cl;
	call->method = gs_xstrdup(method);
	call->req_len = GRPC_PREFIX + len;
	call->req = gs_xmalloc(call->req_len);
	call->req[0] = 0;
	call->req[1] = (uint8_t)(len >> 24), call->req[2] = (uint8_t)(len >> 16);
	call->req[3] = (uint8_t)(len >> 8), call->req[4] = (uint8_t)len;
	if (len)
		memcpy(call->req + GRPC_PREFIX, msg, len);
	call->deadline_ms = deadline_ms;
	call->deadline = uv_now(cl->loop) + deadline_ms;
	call->done = done;
	call->ud = ud;
	call->grpc_status = -1;
	gs_buf_init(&call->resp, cl->max_msg + GRPC_PREFIX);
	gs_list_insert_tail(&cl->calls, &call->link);
	cl->st.calls++;
	cl->st.inflight++;
	if (!cl->conn) {
		conn_open(cl);
	} else if (cl->conn->connected) {
		conn_submit(cl->conn, call);
		conn_flush(cl->conn);
	}
	client_timer_update(cl);
	return 0;
}

void gs_grpc_client_stats(const struct gs_grpc_client *cl, struct gs_grpc_client_stats *st)
{
	*st = cl->st;
}

static void client_release(struct gs_closer *c)
{
	struct gs_grpc_client *cl = GS_CONTAINER_OF(c, struct gs_grpc_client, closer);
	while (!gs_list_empty(&cl->finished)) {
		struct grpc_call *call = GS_CONTAINER_OF(cl->finished.next, struct grpc_call, link);
		gs_list_remove(&call->link);
		call_deliver(call);
	}
	free(cl->path);
	free(cl);
}

void gs_grpc_client_close(struct gs_grpc_client *cl, void (*close_cb)(void *ud), void *ud)
{
	if (cl->conn) {
		conn_fail(cl->conn, -ECANCELED, "the client is closing");
	} else {
		while (!gs_list_empty(&cl->calls)) {
			struct grpc_call *call = GS_CONTAINER_OF(cl->calls.next, struct grpc_call, link);
			call_finish(call, NULL, -ECANCELED, "the client is closing");
		}
	}
	gs_closer_start(&cl->closer, client_release, close_cb, ud);
	gs_closer_uv(&cl->closer, (uv_handle_t *)&cl->timer);
	gs_closer_arm(&cl->closer);
}
