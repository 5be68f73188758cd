/*
 * conn.c: one HTTP/1.1 connection: uv_tcp_t -> optional TLS session -> framing guard -> llhttp.
 *
 * Reading: libuv reads into one static buffer (the loop is single-threaded and a read callback
 * consumes its buffer before returning). With TLS the ciphertext is fed to the session and the
 * plaintext comes back through a second static buffer. Plaintext goes to conn_input(), which parses
 * it directly when nothing is pending, or queues it behind a paused message.
 *
 * Every message end pauses llhttp (on_message_complete returns HPE_PAUSED). The dispatcher then
 * stops reading, keeps the unparsed rest in c->pending and calls the owner's on_message once, from
 * outside llhttp. gs_conn__resume() clears the pause; the dispatcher loop (never recursion) parses
 * what is pending, which may complete the next message, and reading restarts when nothing is left.
 */
#include "core/conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/log.h"

#define CONN_READ_BUF (64 * 1024)

struct gs_conn_wreq {
	uv_write_t req;
	struct gs_conn *c;
	size_t len;
	char data[];
};

static char conn_rbuf[CONN_READ_BUF]; /* socket reads */
static char conn_pbuf[CONN_READ_BUF]; /* TLS plaintext */
static unsigned conn_next_id;

static void conn_dispatch(struct gs_conn *c);
static void hs_dequeue(struct gs_conn *c);
static void hs_account(uv_loop_t *loop, uint64_t ns);
static void hs_count_step(void);

/* ---- closing ------------------------------------------------------------------------------------ */

/* Both handles and a pending getaddrinfo are the closer's parts; the owner's on_close runs last. */
static void conn_release(struct gs_closer *cl)
{
	struct gs_conn *c = GS_CONTAINER_OF(cl, struct gs_conn, closer);
	gs_tls_free(c->tls);
	c->tls = NULL;
	gs_buf_free(&c->pending);
}

static void conn_closed(void *ud)
{
	struct gs_conn *c = ud;
	c->cbs->on_close(c); /* may free c */
}

void gs_conn__close(struct gs_conn *c)
{
	if (c->closing)
		return;
	c->closing = 1;
	c->reading = 0;
	if (c->mem)
		c->mem->conn = NULL;
	hs_dequeue(c);
	if (c->gai_pending)
		uv_cancel((uv_req_t *)&c->gai_req);
	gs_closer_start(&c->closer, conn_release, conn_closed, c);
	gs_closer_uv(&c->closer, (uv_handle_t *)&c->tcp);
	gs_closer_uv(&c->closer, (uv_handle_t *)&c->timer);
	gs_closer_arm(&c->closer);
	if (c->cbs->on_closing)
		c->cbs->on_closing(c);
}

/* A failure before ready goes to on_ready, after it to on_error. Reading stops either way. */
static void conn_fail(struct gs_conn *c, int err, const char *reason)
{
	if (c->closing || c->failed)
		return;
	c->failed = 1;
	if (reason)
		c->reason = reason;
	if (c->reading) {
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = 0;
	}
	if (c->shutting) {
		gs_conn__close(c);
		return;
	}
	if (c->ready)
		c->cbs->on_error(c, err);
	else if (c->cbs->on_ready)
		c->cbs->on_ready(c, err);
	else
		gs_conn__close(c);
}

/* ---- init, connect, accept ---------------------------------------------------------------------- */

static int conn_on_message_complete(llhttp_t *p);

void gs_conn__init(struct gs_conn *c, uv_loop_t *loop, llhttp_type_t type, const llhttp_settings_t *settings,
		   const struct gs_conn_cbs *cbs, size_t max_head)
{
	memset(c, 0, sizeof(*c));
	c->loop = loop;
	c->cbs = cbs;
	c->owner = settings;
	c->settings = *settings;
	c->settings.on_message_complete = conn_on_message_complete;
	c->max_head = max_head;
	c->in_head = 1;
	c->id = ++conn_next_id;
	gs_buf_init(&c->pending, GS_CONN_PENDING_MAX);
	llhttp_init(&c->parser, type, &c->settings);
	c->parser.data = c;

	/* Neither can fail on Unix (no socket is made before connect or accept); if one ever did, a
	 * handle would be registered with the loop that the owner could not free safely. */
	if (uv_tcp_init(loop, &c->tcp) != 0 || uv_timer_init(loop, &c->timer) != 0) {
		gs_log_error("conn: libuv handle init failed");
		abort();
	}
	c->tcp.data = c;
	c->timer.data = c;
}

static void conn_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	(void)suggested;
	buf->base = conn_rbuf;
	buf->len = sizeof(conn_rbuf);
}

static void conn_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static int conn_start_reading(struct gs_conn *c)
{
	if (c->reading || c->closing)
		return 0;
	if (c->mem) { /* the driver delivers, and only while reading is set */
		c->reading = 1;
		return 0;
	}
	int r = uv_read_start((uv_stream_t *)&c->tcp, conn_alloc, conn_read);
	if (r == 0)
		c->reading = 1;
	return r;
}

static void conn_wrote(uv_write_t *req, int status)
{
	struct gs_conn_wreq *w = GS_CONTAINER_OF(req, struct gs_conn_wreq, req);
	struct gs_conn *c = w->c;
	free(w);
	c->writes_pending--;
	if (c->closing)
		return;
	if (status < 0) {
		conn_fail(c, status, "write failed");
		return;
	}
	if (c->writes_pending == 0 && !c->shutting && c->cbs->on_drain)
		c->cbs->on_drain(c);
}

static int conn_write_raw(struct gs_conn *c, const char *data, size_t len)
{
	if (len == 0)
		return 0;
	if (c->mem) /* captured, and at once where a socket would take it (no on_drain: nobody waits) */
		return gs_buf_append(&c->mem->out, data, len) < 0 ? UV_EPIPE : 0;
	/*
	 * Straight to the socket when nothing is queued (libuv answers UV_EAGAIN otherwise, or while
	 * connecting, so the order holds): a request of ours nearly always fits, and that saves the
	 * queued write's copy and the epoll_ctl libuv makes after each one it completes (10,000
	 * bindings made 13,460 of them: docs/performance.md). Only what the socket did not take is queued.
	 */
	uv_buf_t now = uv_buf_init((char *)data, (unsigned)len);
	int n = uv_try_write((uv_stream_t *)&c->tcp, &now, 1);
	if (n >= 0 && (size_t)n == len)
		return 0;
	if (n > 0) {
		data += n;
		len -= (size_t)n;
	} else if (n != UV_EAGAIN) {
		return n;
	}
	struct gs_conn_wreq *w = malloc(sizeof(*w) + len);
	if (!w)
		return -ENOMEM;
	w->c = c;
	w->len = len;
	memcpy(w->data, data, len);
	uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
	int r = uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, conn_wrote);
	if (r < 0) {
		free(w);
		return r;
	}
	c->writes_pending++;
	return 0;
}

/* Sends whatever ciphertext the TLS session has produced (handshake records, alerts, data). 0 or <0;
 * *sent (if given) says how many bytes went out. */
static int conn_flush_tls_n(struct gs_conn *c, size_t *sent)
{
	static struct gs_buf out; /* loop thread only; reused */
	gs_buf_reset(&out);
	int r = gs_tls_flush(c->tls, &out);
	if (r == 0)
		r = conn_write_raw(c, out.data, out.len);
	if (sent)
		*sent = r == 0 ? out.len : 0;
	if (out.size > 4 * CONN_READ_BUF)
		gs_buf_free(&out); /* do not keep a large burst's memory forever */
	return r;
}

static int conn_flush_tls(struct gs_conn *c)
{
	return conn_flush_tls_n(c, NULL);
}

/* Drives the TLS handshake. 1 done, 0 more input needed, <0 failed (already reported). */
static int conn_handshake(struct gs_conn *c)
{
	uint64_t t0 = uv_hrtime();
	size_t sent;
	int r = gs_tls_handshake(c->tls);
	int w = conn_flush_tls_n(c, &sent);
	if (sent)
		c->hs_stepped = 1; /* our flight is out: what the peer sends next finishes the handshake */
	hs_account(c->loop, uv_hrtime() - t0);
	if (r < 0) {
		conn_fail(c, r, NULL);
		return r;
	}
	if (w < 0) {
		conn_fail(c, w, "write failed");
		return w;
	}
	if (r == 0)
		return 0;
	c->ready = 1;
	c->connecting = 0;
	gs_log_trace("conn %u %s: %s %s", c->id, c->peer, gs_tls_version(c->tls), gs_tls_ciphersuite(c->tls));
	if (c->cbs->on_ready)
		c->cbs->on_ready(c, 0);
	return c->closing || c->failed ? -ECANCELED : 1;
}

void gs_conn__connected(struct gs_conn *c, int status)
{
	if (c->closing)
		return;
	if (status < 0) {
		conn_fail(c, status, "connect failed");
		return;
	}
	if (!c->mem)
		uv_tcp_nodelay(&c->tcp, 1);
	int r = conn_start_reading(c);
	if (r < 0) {
		conn_fail(c, r, "read failed");
		return;
	}
	if (c->tls) {
		conn_handshake(c);
		return;
	}
	c->ready = 1;
	c->connecting = 0;
	c->cbs->on_ready(c, 0);
}

static void conn_connected(uv_connect_t *req, int status)
{
	gs_conn__connected(GS_CONTAINER_OF(req, struct gs_conn, connect_req), status);
}

static void conn_connect_addr(struct gs_conn *c, const struct sockaddr *sa)
{
	int r = uv_tcp_connect(&c->connect_req, &c->tcp, sa, conn_connected);
	if (r < 0)
		conn_fail(c, r, "connect failed");
}

static void conn_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
	struct gs_conn *c = GS_CONTAINER_OF(req, struct gs_conn, gai_req);
	c->gai_pending = 0;
	if (c->closing) {
		uv_freeaddrinfo(res);
		gs_closer_drop(&c->closer); /* may finish the close */
		return;
	}
	gs_closer_drop(&c->closer);
	if (status < 0 || !res) {
		conn_fail(c, status < 0 ? status : UV_EAI_NONAME, "name resolution failed");
	} else {
		conn_connect_addr(c, res->ai_addr);
	}
	uv_freeaddrinfo(res);
}

int gs_conn__connect(struct gs_conn *c, const char *host, int port, struct gs_tls *tls)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} addr;
	c->tls = tls;
	c->connecting = 1;
	snprintf(c->peer, sizeof(c->peer), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);

	if (uv_ip4_addr(host, port, &addr.in4) == 0 || uv_ip6_addr(host, port, &addr.in6) == 0)
		return uv_tcp_connect(&c->connect_req, &c->tcp, &addr.sa, conn_connected);

	char service[16];
	snprintf(service, sizeof(service), "%d", port);
	struct addrinfo hints;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	int r = uv_getaddrinfo(c->loop, &c->gai_req, conn_resolved, host, service, &hints);
	if (r == 0) {
		c->gai_pending = 1;
		gs_closer_hold(&c->closer); /* a close waits for the resolver's callback */
	}
	return r;
}

int gs_conn__accept(struct gs_conn *c, uv_stream_t *server, struct gs_tls *tls)
{
	c->tls = tls;
	int r = uv_accept(server, (uv_stream_t *)&c->tcp);
	if (r < 0)
		return r;
	uv_tcp_nodelay(&c->tcp, 1);

	struct sockaddr_storage ss;
	int len = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?";
	int port = 0;
	if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
		if (ss.ss_family == AF_INET6) {
			uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof(ip));
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		} else {
			uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof(ip));
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		}
	}
	snprintf(c->peer, sizeof(c->peer), ss.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", ip, port);
	c->ready = tls == NULL;
	return conn_start_reading(c);
}

/* ---- reading and parsing ------------------------------------------------------------------------ */

static void conn_head_reset(struct gs_conn *c)
{
	c->in_head = 1;
	c->head_bytes = 0;
	c->line_len = 0;
	c->head_lines = 0;
	c->prev_cr = 0;
}

static int conn_on_message_complete(llhttp_t *p)
{
	struct gs_conn *c = p->data;
	if (c->owner->on_message_complete) {
		int r = c->owner->on_message_complete(p);
		if (r != 0)
			return r;
	}
	conn_head_reset(c);
	c->paused = 1;
	c->delivered = 0;
	return HPE_PAUSED;
}

/*
 * Checks head bytes before llhttp sees them. *n is the span available; on return it is the span
 * llhttp may parse now (up to and including the empty line ending the head). 0 or <0.
 */
static int conn_guard(struct gs_conn *c, const char *p, size_t *n)
{
	for (size_t i = 0; i < *n; i++) {
		unsigned char ch = (unsigned char)p[i];
		if (++c->head_bytes > c->max_head) {
			c->reason = "message head too large";
			return -E2BIG;
		}
		if (!c->head_lines && c->line_len == 0 && !c->prev_cr && ch == '\n')
			continue; /* a stray LF between messages (llhttp ignores it too) */
		if (c->prev_cr && ch != '\n') {
			c->reason = "CR not followed by LF in message head";
			return -EPROTO;
		}
		if (ch == '\r') {
			c->prev_cr = 1;
			continue;
		}
		if (ch == '\n') {
			if (!c->prev_cr) {
				c->reason = "bare LF in message head";
				return -EPROTO;
			}
			c->prev_cr = 0;
			if (c->line_len == 0 && c->head_lines) {
				c->in_head = 0;
				*n = i + 1;
				return 0;
			}
			if (c->line_len)
				c->head_lines = 1;
			c->line_len = 0;
			continue;
		}
		if (c->line_len == 0 && c->head_lines && (ch == ' ' || ch == '\t')) {
			c->reason = "obsolete line folding in message head";
			return -EPROTO;
		}
		c->line_len++;
	}
	return 0;
}

/* Parses p[0..len) until a message end pauses or a failure. Returns the bytes consumed. */
static size_t conn_parse(struct gs_conn *c, const char *p, size_t len)
{
	size_t off = 0;
	while (off < len && !c->paused && !c->failed && !c->closing) {
		size_t n = len - off;
		if (c->in_head) {
			int r = conn_guard(c, p + off, &n);
			if (r < 0) {
				conn_fail(c, r, NULL);
				break;
			}
		}
		enum llhttp_errno e = llhttp_execute(&c->parser, p + off, n);
		if (e == HPE_PAUSED) {
			off = (size_t)(llhttp_get_error_pos(&c->parser) - p);
			llhttp_resume(&c->parser);
			break;
		}
		if (e != HPE_OK) {
			c->parse_errno = e;
			conn_fail(c, -EPROTO, llhttp_get_error_reason(&c->parser));
			break;
		}
		off += n;
	}
	return off;
}

static void conn_input(struct gs_conn *c, const char *data, size_t len)
{
	if (!c->paused && c->pending.len == 0 && !c->dispatching) {
		size_t used = conn_parse(c, data, len);
		data += used;
		len -= used;
	}
	if (len && !c->failed && !c->closing && gs_buf_append(&c->pending, data, len) < 0) {
		conn_fail(c, -E2BIG, "too much input behind a message");
		return;
	}
	conn_dispatch(c);
}

static void conn_eof(struct gs_conn *c)
{
	if (c->eof)
		return;
	c->eof = 1;
	if (c->reading) {
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = 0;
	}
	/* A response framed by the end of the connection completes now. */
	if (!c->paused && c->pending.len == 0 && llhttp_message_needs_eof(&c->parser)) {
		enum llhttp_errno e = llhttp_finish(&c->parser);
		if (e != HPE_OK && e != HPE_PAUSED) {
			c->parse_errno = e;
			conn_fail(c, -EPROTO, "connection closed inside a message");
			return;
		}
	}
	conn_dispatch(c);
}

static void conn_dispatch(struct gs_conn *c)
{
	if (c->dispatching)
		return;
	c->dispatching = 1;
	while (!c->closing && !c->failed) {
		if (c->paused) {
			if (c->delivered)
				break;
			c->delivered = 1;
			c->cbs->on_message(c);
			continue;
		}
		if (c->pending.len == 0)
			break;
		size_t used = conn_parse(c, c->pending.data, c->pending.len);
		gs_buf_consume(&c->pending, used);
	}
	c->dispatching = 0;
	if (c->closing || c->failed || c->shutting)
		return;
	if (c->paused) {
		if (c->reading) {
			uv_read_stop((uv_stream_t *)&c->tcp);
			c->reading = 0;
		}
		return;
	}
	if (c->eof) {
		conn_fail(c, UV_EOF, "connection closed by peer");
		return;
	}
	if (c->ready || c->tls)
		if (conn_start_reading(c) < 0)
			conn_fail(c, -EIO, "read failed");
}

static void conn_linger_read(struct gs_conn *c, ssize_t nread)
{
	c->linger_bytes += nread > 0 ? (size_t)nread : 0;
	if (nread < 0 || c->linger_bytes > GS_CONN_LINGER_BYTES)
		gs_conn__close(c);
}

/* After ciphertext was fed: the handshake step if one is due, then the plaintext, then our answer. */
static void conn_tls_progress(struct gs_conn *c)
{
	if (!gs_tls_handshake_done(c->tls)) {
		hs_count_step();
		if (conn_handshake(c) <= 0)
			return;
	}
	for (;;) {
		int n = gs_tls_read(c->tls, conn_pbuf, sizeof(conn_pbuf));
		if (n > 0) {
			conn_input(c, conn_pbuf, (size_t)n);
			if (c->closing || c->failed)
				return;
			continue;
		}
		if (n == 0)
			break;
		if (n == -ECONNRESET) {
			conn_eof(c);
			return;
		}
		conn_fail(c, -EPROTO, NULL);
		return;
	}
	if (conn_flush_tls(c) < 0)
		conn_fail(c, -EIO, "write failed");
}

static int hs_may_step_now(void);
static void hs_defer(struct gs_conn *c);

static void conn_read_tls(struct gs_conn *c, const char *data, size_t len)
{
	if (gs_tls_feed(c->tls, data, len) < 0) {
		conn_fail(c, -ENOMEM, "out of memory");
		return;
	}
	if (!gs_tls_handshake_done(c->tls) && !hs_may_step_now()) {
		hs_defer(c);
		return;
	}
	conn_tls_progress(c);
}

void gs_conn__received(struct gs_conn *c, const char *data, ssize_t nread)
{
	if (c->closing)
		return;
	if (c->lingering) {
		conn_linger_read(c, nread);
		return;
	}
	if (nread == 0)
		return;
	if (nread == UV_EOF) {
		if (!c->ready) {
			conn_fail(c, UV_ECONNRESET, "connection closed during the handshake");
			return;
		}
		conn_eof(c);
		return;
	}
	if (nread < 0) {
		conn_fail(c, (int)nread, "read failed");
		return;
	}
	if (c->shutting)
		return;
	if (c->tls)
		conn_read_tls(c, data, (size_t)nread);
	else
		conn_input(c, data, (size_t)nread);
}

static void conn_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	gs_conn__received(s->data, buf->base, nread);
}

/* ---- the memory transport --------------------------------------------------------------------- */

void gs_conn__open_memory(struct gs_conn *c, struct gs_conn_mem *m, const char *peer, int connecting)
{
	c->mem = m;
	m->conn = c;
	m->shut = 0;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	if (connecting) {
		c->connecting = 1;
		return;
	}
	c->ready = 1;
	conn_start_reading(c);
}

/* ---- the owner's controls ----------------------------------------------------------------------- */

int gs_conn__write(struct gs_conn *c, const char *data, size_t len)
{
	/* Allowed after a parse failure, so a server can still answer 400 before it shuts down. */
	if (c->closing || c->shutting)
		return -EPIPE;
	if (!c->tls)
		return conn_write_raw(c, data, len);
	int r = gs_tls_write(c->tls, data, len);
	if (r < 0)
		return r;
	return conn_flush_tls(c);
}

void gs_conn__resume(struct gs_conn *c)
{
	if (!c->paused || c->closing)
		return;
	c->paused = 0;
	if (!c->dispatching)
		conn_dispatch(c);
}

static void conn_timer_fired(uv_timer_t *t)
{
	struct gs_conn *c = t->data;
	if (c->closing)
		return;
	if (c->shutting) {
		gs_conn__close(c);
		return;
	}
	c->cbs->on_timeout(c);
}

void gs_conn__timer(struct gs_conn *c, uint64_t ms)
{
	if (c->closing)
		return;
	if (ms == 0)
		uv_timer_stop(&c->timer);
	else
		uv_timer_start(&c->timer, conn_timer_fired, ms, 0);
}

static void conn_shut(uv_shutdown_t *req, int status)
{
	struct gs_conn *c = GS_CONTAINER_OF(req, struct gs_conn, shutdown_req);
	if (c->closing)
		return;
	if (status < 0 || c->eof) {
		gs_conn__close(c);
		return;
	}
	/* Drain what the peer still sends until it closes, so it reads our answer instead of a reset. */
	c->lingering = 1;
	uv_timer_start(&c->timer, conn_timer_fired, GS_CONN_LINGER_MS, 0);
	if (conn_start_reading(c) < 0)
		gs_conn__close(c);
}

void gs_conn__shutdown(struct gs_conn *c)
{
	if (c->closing || c->shutting)
		return;
	c->shutting = 1;
	hs_dequeue(c);
	if (c->tls && gs_tls_handshake_done(c->tls)) {
		gs_tls_close_notify(c->tls);
		conn_flush_tls(c);
	}
	if (c->mem)
		c->mem->shut = 1;
	if (c->connecting || c->mem || uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->tcp, conn_shut) < 0)
		gs_conn__close(c);
}

const char *gs_conn__error(const struct gs_conn *c)
{
	if (c->reason)
		return c->reason;
	if (c->tls) {
		const char *e = gs_tls_error(c->tls);
		if (e && *e)
			return e;
	}
	return "";
}

/* ---- the handshake budget (conn.h) -------------------------------------------------------------- */

/*
 * One scheduler per thread (like the read buffers). Its two handles exist only while needed: from the
 * first handshake step of a turn until the end of a turn that left nothing queued. The check handle
 * ends the turn (poll, then check: the budget is per turn); the idle handle, started while steps are
 * queued, runs them at the start of the next turn and keeps poll from blocking meanwhile.
 */
struct hs_sched {
	uv_idle_t idle;
	uv_check_t check;
	uv_loop_t *loop;
	struct gs_closer closer; /* its two handles, then hs_release frees it */
};

enum { HS_LATER, HS_FIRST, HS_NQUEUES };

static struct hs_sched *hs;
static struct gs_list hs_queue[HS_NQUEUES]; /* oldest first */
static int hs_queue_ready;
static uint64_t hs_budget_ns = GS_CONN_HS_BUDGET_NS;
static uint64_t hs_lifo_after_ns = GS_CONN_HS_LIFO_AFTER_NS;
static uint64_t hs_spent_ns; /* this turn */
static struct gs_conn_hs_stats hs_st;

static void hs_queue_init(void)
{
	if (hs_queue_ready)
		return;
	for (int i = 0; i < HS_NQUEUES; i++)
		gs_list_init(&hs_queue[i]);
	hs_queue_ready = 1;
}

static int hs_queue_empty(void)
{
	return hs_st.queued == 0;
}

static void hs_release(struct gs_closer *c)
{
	free(GS_CONTAINER_OF(c, struct hs_sched, closer));
}

static void hs_close(void)
{
	struct hs_sched *d = hs;
	hs = NULL;
	hs_spent_ns = 0;
	/* Closed under us (a test's uv_walk): libuv still holds the memory until its close callbacks. */
	if (uv_is_closing((uv_handle_t *)&d->idle) || uv_is_closing((uv_handle_t *)&d->check))
		return;
	gs_closer_start(&d->closer, hs_release, NULL, NULL);
	gs_closer_uv(&d->closer, (uv_handle_t *)&d->idle);
	gs_closer_uv(&d->closer, (uv_handle_t *)&d->check);
	gs_closer_arm(&d->closer);
}

static void hs_turn_end(uv_check_t *h)
{
	(void)h;
	hs_spent_ns = 0;
	if (hs_queue_empty())
		hs_close();
}

static void hs_open(uv_loop_t *loop)
{
	if (hs && uv_is_closing((uv_handle_t *)&hs->check))
		hs = NULL; /* closed by someone else (a test's uv_walk); its memory is left alone */
	if (hs) {
		GS_ASSERT(hs->loop == loop); /* one loop per thread */
		return;
	}
	hs = gs_xmalloc(sizeof(*hs));
	hs->loop = loop;
	uv_idle_init(loop, &hs->idle);
	uv_check_init(loop, &hs->check);
	gs_closer_init(&hs->closer);
	uv_check_start(&hs->check, hs_turn_end);
}

static void hs_count_step(void)
{
	hs_st.steps++;
}

static void hs_account(uv_loop_t *loop, uint64_t ns)
{
	hs_spent_ns += ns;
	hs_st.ns += ns;
	hs_open(loop); /* so that the turn's end resets the budget */
}

static int hs_may_step_now(void)
{
	return hs_queue_empty() && hs_spent_ns < hs_budget_ns;
}

static void hs_dequeue(struct gs_conn *c)
{
	if (!c->hs_queued)
		return;
	c->hs_queued = 0;
	gs_list_remove(&c->hs_link);
	hs_st.queued--;
}

static void hs_run_queued(uv_idle_t *h);

static void hs_defer(struct gs_conn *c)
{
	if (c->reading) {
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = 0;
	}
	if (c->hs_queued)
		return; /* read again while waiting (nothing restarts reading then; harmless if it did) */
	hs_queue_init();
	gs_list_init(&c->hs_link);
	gs_list_insert_tail(&hs_queue[c->hs_stepped ? HS_LATER : HS_FIRST], &c->hs_link);
	c->hs_queued = 1;
	c->hs_queued_at = uv_hrtime();
	hs_st.queued++;
	hs_st.deferred++;
	hs_open(c->loop);
	uv_idle_start(&hs->idle, hs_run_queued);
}

/*
 * Later steps first, oldest first. Then first steps: oldest first, unless the oldest has waited over
 * GS_CONN_HS_LIFO_AFTER_NS: then the queue is overloaded and the newest goes first (adaptive LIFO).
 * Under a flood, the oldest waiting connections are the first the server evicts at its cap (the
 * flooding address holds the most, and its oldest go first: core/http.h) or drops at its handshake
 * deadline: their step would be wasted, and a real client arriving now would wait
 * behind all of them, past its own eviction. Newest first serves it within a turn or two.
 */
static struct gs_conn *hs_next(void)
{
	struct gs_list *l;
	if (!gs_list_empty(&hs_queue[HS_LATER])) {
		l = hs_queue[HS_LATER].next;
	} else {
		l = hs_queue[HS_FIRST].next;
		struct gs_conn *oldest = GS_CONTAINER_OF(l, struct gs_conn, hs_link);
		if (uv_hrtime() - oldest->hs_queued_at > hs_lifo_after_ns) {
			l = hs_queue[HS_FIRST].prev;
			hs_st.lifo++;
		}
	}
	return GS_CONTAINER_OF(l, struct gs_conn, hs_link);
}

/* The idle phase, before this turn's poll: the queued steps, oldest first, within the budget. */
static void hs_run_queued(uv_idle_t *h)
{
	(void)h;
	unsigned n = 0;
	while (!hs_queue_empty() && (n == 0 || hs_spent_ns < hs_budget_ns)) {
		struct gs_conn *c = hs_next();
		hs_dequeue(c);
		n++;
		if (c->closing || c->failed || c->shutting)
			continue;
		conn_tls_progress(c);
		if (c->closing || c->failed || c->shutting || c->paused || c->eof)
			continue;
		if (conn_start_reading(c) < 0)
			conn_fail(c, -EIO, "read failed");
	}
	if (hs_queue_empty() && hs)
		uv_idle_stop(&hs->idle);
}

void gs_conn__hs_stats(struct gs_conn_hs_stats *st)
{
	*st = hs_st;
}

uint64_t gs_conn__hs_budget(uint64_t ns)
{
	uint64_t old = hs_budget_ns;
	hs_budget_ns = ns;
	return old;
}

uint64_t gs_conn__hs_lifo_after(uint64_t ns)
{
	uint64_t old = hs_lifo_after_ns;
	hs_lifo_after_ns = ns;
	return old;
}
