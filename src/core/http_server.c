/*
 * http_server.c: HTTP/1.1 server on top of conn.c, one request at a time per connection.
 *
 * A connection reads one request, pauses (conn.c's rule), hands it to the handler, and only after
 * gs_http_respond parses what the client pipelined behind it. A request lives in its own allocation
 * so that a handler answering later survives the connection going away: the request is then
 * orphaned (r->sc == NULL) and gs_http_respond just frees it.
 *
 * Every limit has a named default below and answers the status RFC 9110 gives it, then closes:
 * the request head is not trusted after a limit was hit, so the connection is not reused.
 *
 * Hostile clients (http.h, above gs_http_server_opts): every connection the handler holds no request
 * of sits in s->evictable and in its source's list, appended at the tail each time it enters a phase
 * (accepted, began a later request, answered), so both lists stay ordered oldest first and every
 * step is O(1). A connection leaves both when the handler gets its request and when it starts to
 * close (conn.c's on_closing, which also gives its slot back at once: the socket is closed there).
 * At the cap the source with the most evictable connections pays (largest_source: a walk over the
 * sources, at most one per open connection), with the head of its own list.
 */
#include "core/http_server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/closer.h"
#include "core/conn.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/options.h"

#define HTTP_SERVER_MAX_HEADER_BYTES (16 * 1024)   /* request line + headers: 431 */
#define HTTP_SERVER_MAX_HEADERS      64            /* header fields: 431 */
#define HTTP_SERVER_MAX_URL          2048          /* request target: 414 */
#define HTTP_SERVER_MAX_BODY         (1024 * 1024) /* body: 413 */
#define HTTP_SERVER_MAX_CONNS        256
#define HTTP_SERVER_HANDSHAKE_MS     5000
#define HTTP_SERVER_HEADER_MS        10000
#define HTTP_SERVER_REQUEST_MS       10000
#define HTTP_SERVER_IDLE_MS          60000
#define HTTP_SERVER_BACKLOG          128
/* Per-connection warnings (evictions, refusals, accept failures): lines per window per site. */
#define HTTP_SERVER_LOG_BURST        5
#define HTTP_SERVER_LOG_WINDOW_MS    10000

/* One peer address and its connections. */
struct source {
	char ip[64];              /* the key in s->sources */
	unsigned n;               /* its open (not closing) connections */
	unsigned n_evictable;     /* in evictable */
	struct gs_list evictable; /* its evictable connections, oldest first */
};

struct server_conn {
	struct gs_conn conn;
	struct gs_http_server *s;
	struct gs_list link;            /* s->conns: every connection until its on_close */
	struct gs_list elink;           /* s->evictable, while evictable */
	struct gs_list slink;           /* src->evictable, while evictable */
	struct source *src;             /* NULL until accepted, and once closing */
	struct gs_http_server_req *req; /* being read, or held by the handler */
	uint64_t t0;                    /* start of the current request's deadlines (uv_now ms) */
	int reason;                     /* enum gs_http_close_reason, -1 until known */
	unsigned held : 1;              /* the handler has req */
	unsigned served : 1;            /* a request was answered: the next one starts its own clock */
	unsigned counted : 1;           /* in s->n_open and src->n */
};

struct gs_http_server_req {
	struct server_conn *sc; /* NULL once the connection is gone */
	char method[24];
	struct gs_buf url; /* request target; '?' replaced by NUL once complete */
	const char *query;
	struct gs_buf hdrs; /* "name\0value\0" pairs */
	unsigned n_headers;
	unsigned in_value : 1, keep_alive : 1, head : 1, head_done : 1;
	int reject; /* status to answer instead of calling the handler */
	struct gs_buf body;
};

struct gs_http_server {
	uv_loop_t *loop;
	uv_tcp_t listener;
	struct gs_tls_config *tls;
	struct gs_http_server_opts o;
	gs_http_handler_cb handler;
	void *ud;
	struct gs_list conns;     /* all, until their on_close */
	struct gs_list evictable; /* oldest first */
	struct gs_hmap sources;   /* ip -> struct source */
	unsigned n_conns;         /* in conns */
	unsigned n_open;          /* not closing: what the caps count */
	unsigned n_evictable;
	int reserve_fd; /* spent to accept and shed when out of descriptors; -1 if none */
	uint64_t conns_total, requests_total, tls_failures_total, rejected_total;
	uint64_t closed[GS_HTTP_CLOSE_REASON_COUNT];
	int port;
	char addr[64];
	char name[64]; /* for logs */
	unsigned closing : 1, draining : 1;
	int listener_closed; /* 0 open, 1 closing, 2 closed */
	/* Parts: every connection until its on_close, the listener while closing, and `last`, closed by
	 * the close itself so that it completes asynchronously even with nothing else left open. */
	struct gs_closer closer;
	uv_timer_t last;
};

/* clang-format off */
static const char *status_text(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return "Unknown";
	}
}
/* clang-format on */

static const char *const close_reason_names[GS_HTTP_CLOSE_REASON_COUNT] = {
	[GS_HTTP_CLOSE_CLIENT] = "client_closed",
	[GS_HTTP_CLOSE_DONE] = "done",
	[GS_HTTP_CLOSE_EVICTED] = "evicted",
	[GS_HTTP_CLOSE_REFUSED] = "refused",
	[GS_HTTP_CLOSE_HANDSHAKE_TIMEOUT] = "handshake_timeout",
	[GS_HTTP_CLOSE_HEADER_TIMEOUT] = "header_timeout",
	[GS_HTTP_CLOSE_REQUEST_TIMEOUT] = "request_timeout",
	[GS_HTTP_CLOSE_IDLE_TIMEOUT] = "idle_timeout",
	[GS_HTTP_CLOSE_TLS_ERROR] = "tls_error",
	[GS_HTTP_CLOSE_BAD_REQUEST] = "bad_request",
	[GS_HTTP_CLOSE_SHUTDOWN] = "shutdown",
	[GS_HTTP_CLOSE_ACCEPT_ERROR] = "accept_error",
};

const char *gs_http_close_reason_name(enum gs_http_close_reason r)
{
	return (unsigned)r < GS_HTTP_CLOSE_REASON_COUNT ? close_reason_names[r] : "unknown";
}

/* ---- the evictable lists ------------------------------------------------------------------------ */

static struct server_conn *elink_conn(struct gs_list *l)
{
	return GS_CONTAINER_OF(l, struct server_conn, elink);
}

static struct server_conn *slink_conn(struct gs_list *l)
{
	return GS_CONTAINER_OF(l, struct server_conn, slink);
}

static int is_evictable(const struct server_conn *sc)
{
	return gs_list_linked(&sc->elink);
}

static void evictable_remove(struct server_conn *sc)
{
	if (!is_evictable(sc))
		return;
	gs_list_remove(&sc->elink);
	gs_list_remove(&sc->slink);
	sc->s->n_evictable--;
	sc->src->n_evictable--;
}

/* (Re)enters both lists at the tail: it just entered a phase, so it is now the youngest. */
static void evictable_touch(struct server_conn *sc)
{
	if (!sc->src || sc->held || sc->conn.closing)
		return;
	evictable_remove(sc);
	gs_list_insert_tail(&sc->s->evictable, &sc->elink);
	gs_list_insert_tail(&sc->src->evictable, &sc->slink);
	sc->s->n_evictable++;
	sc->src->n_evictable++;
}

/* Sets why the connection ends, unless a reason was already given (the first one wins). */
static void set_reason(struct server_conn *sc, enum gs_http_close_reason r)
{
	if (sc->reason < 0)
		sc->reason = (int)r;
}

static void sc_close(struct server_conn *sc, enum gs_http_close_reason r)
{
	set_reason(sc, r);
	gs_conn__close(&sc->conn);
}

/* The peer's address without the port ("10.0.0.1", "::1"). */
static void peer_ip(const char *peer, char *out, size_t size)
{
	const char *end;
	if (peer[0] == '[') {
		peer++;
		end = strchr(peer, ']');
	} else {
		end = strrchr(peer, ':');
	}
	size_t n = end ? (size_t)(end - peer) : strlen(peer);
	if (n >= size)
		n = size - 1;
	memcpy(out, peer, n);
	out[n] = '\0';
}

static struct source *source_get(struct gs_http_server *s, const char *ip)
{
	struct source *src = gs_hmap_get_str(&s->sources, ip);
	if (src)
		return src;
	src = gs_xcalloc(1, sizeof(*src)); /* a small fixed record, at most one per open connection */
	snprintf(src->ip, sizeof(src->ip), "%s", ip);
	gs_list_init(&src->evictable);
	if (gs_hmap_put_str(&s->sources, src->ip, src, NULL) < 0)
		gs_oom(0);
	return src;
}

static void source_put(struct gs_http_server *s, struct source *src)
{
	GS_ASSERT(src->n > 0);
	if (--src->n > 0)
		return;
	GS_ASSERT(gs_list_empty(&src->evictable) && src->n_evictable == 0);
	gs_hmap_del_str(&s->sources, src->ip, NULL);
	free(src);
}

/* conn.c: the socket is being closed. Its slot is free from now on. */
static void sc_on_closing(struct gs_conn *c)
{
	struct server_conn *sc = GS_CONTAINER_OF(c, struct server_conn, conn);
	struct gs_http_server *s = sc->s;
	evictable_remove(sc);
	if (sc->counted) {
		sc->counted = 0;
		s->n_open--;
		source_put(s, sc->src);
	}
	sc->src = NULL;
}

/*
 * The address that pays at the cap (http.h): the one with the most evictable connections, `own` (the
 * newcomer's) on a tie; NULL if no connection is evictable. At most one source per open connection,
 * so the walk is bounded by the cap.
 */
static struct source *largest_source(const struct gs_http_server *s, struct source *own)
{
	struct source *best = own->n_evictable ? own : NULL;
	struct gs_hmap_iter it = {0};
	while (gs_hmap_next(&s->sources, &it)) {
		struct source *src = it.val;
		if (src->n_evictable > (best ? best->n_evictable : 0))
			best = src;
	}
	GS_ASSERT(best ? best->n_evictable > 0 : s->n_evictable == 0); /* each evictable one is its source's */
	return best;
}

/* Closes the oldest evictable connection (of src if given, else of all). 1 done, 0 none to close. */
static int evict_oldest(struct gs_http_server *s, struct source *src, const char *for_peer, const char *why)
{
	struct server_conn *v;
	if (src) {
		if (gs_list_empty(&src->evictable))
			return 0;
		v = slink_conn(gs_list_first(&src->evictable));
	} else {
		if (gs_list_empty(&s->evictable))
			return 0;
		v = elink_conn(gs_list_first(&s->evictable));
	}
	gs_log_limited(GS_LOG_WARN, HTTP_SERVER_LOG_BURST, HTTP_SERVER_LOG_WINDOW_MS,
		       "http server %s: %s: closing the oldest idle or unfinished connection, %s (%s, %llu ms old), "
		       "for %s",
		       s->name, why, v->conn.peer,
		       !v->conn.ready ? "handshaking"
		       : v->req       ? "reading a request"
				      : "idle",
		       (unsigned long long)(uv_now(s->loop) - v->t0), for_peer);
	v->reason = GS_HTTP_CLOSE_EVICTED;
	gs_conn__close(&v->conn);
	return 1;
}

/* Re-arms the one timer to end `ms` after `base` (never later because bytes came in). */
static void arm_deadline(struct server_conn *sc, uint64_t base, unsigned ms)
{
	uint64_t now = uv_now(sc->s->loop), end = base + ms;
	gs_conn__timer(&sc->conn, end > now ? end - now : 1);
}

/* ---- requests ---------------------------------------------------------------------------------- */

static struct gs_http_server_req *req_new(struct server_conn *sc)
{
	struct gs_http_server_req *r = gs_xcalloc(1, sizeof(*r));
	r->sc = sc;
	gs_buf_init(&r->url, sc->s->o.max_url);
	gs_buf_init(&r->hdrs, sc->s->o.max_header_bytes);
	gs_buf_init(&r->body, sc->s->o.max_body);
	return r;
}

static void req_free(struct gs_http_server_req *r)
{
	if (!r)
		return;
	gs_buf_free(&r->url);
	gs_buf_free(&r->hdrs);
	gs_buf_free(&r->body);
	free(r);
}

static struct server_conn *parser_conn(llhttp_t *p)
{
	return GS_CONTAINER_OF(p->data, struct server_conn, conn);
}

static int reject(struct gs_http_server_req *r, int status)
{
	if (!r->reject)
		r->reject = status;
	return -1; /* stops llhttp: HPE_USER */
}

static int on_message_begin(llhttp_t *p)
{
	struct server_conn *sc = parser_conn(p);
	req_free(sc->req);
	sc->req = req_new(sc);
	if (sc->served) {
		/* A later request on a kept-alive connection: its own clock, and it is young again. */
		sc->t0 = uv_now(sc->s->loop);
		evictable_touch(sc);
	}
	arm_deadline(sc, sc->t0, sc->s->o.header_timeout_ms);
	return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len)
{
	struct gs_http_server_req *r = parser_conn(p)->req;
	return gs_buf_append(&r->url, at, len) < 0 ? reject(r, 414) : 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
	struct gs_http_server_req *r = parser_conn(p)->req;
	if (r->in_value || r->hdrs.len == 0) {
		if (r->n_headers >= parser_conn(p)->s->o.max_headers)
			return reject(r, 431);
		r->in_value = 0;
	}
	return gs_buf_append(&r->hdrs, at, len) < 0 ? reject(r, 431) : 0;
}

static int on_header_field_complete(llhttp_t *p)
{
	struct gs_http_server_req *r = parser_conn(p)->req;
	r->in_value = 1;
	return gs_buf_append(&r->hdrs, "", 1) < 0 ? reject(r, 431) : 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
	struct gs_http_server_req *r = parser_conn(p)->req;
	return gs_buf_append(&r->hdrs, at, len) < 0 ? reject(r, 431) : 0;
}

static int on_header_value_complete(llhttp_t *p)
{
	struct gs_http_server_req *r = parser_conn(p)->req;
	r->n_headers++;
	return gs_buf_append(&r->hdrs, "", 1) < 0 ? reject(r, 431) : 0;
}

static int on_headers_complete(llhttp_t *p)
{
	struct server_conn *sc = parser_conn(p);
	struct gs_http_server_req *r = sc->req;
	snprintf(r->method, sizeof(r->method), "%s", llhttp_method_name(p->method));
	r->head = p->method == HTTP_HEAD;
	r->head_done = 1;
	arm_deadline(sc, sc->t0, sc->s->o.request_timeout_ms);
	/* A declared body over the cap is refused before a byte of it is read. */
	if ((p->flags & F_CONTENT_LENGTH) && p->content_length > sc->s->o.max_body)
		return reject(r, 413);
	const char *expect = gs_http_req_header(r, "Expect");
	if (expect && strcasecmp(expect, "100-continue") == 0)
		gs_conn__write(&sc->conn, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
	struct gs_http_server_req *r = parser_conn(p)->req;
	return gs_buf_append(&r->body, at, len) < 0 ? reject(r, 413) : 0;
}

static int on_message_complete(llhttp_t *p)
{
	struct gs_http_server_req *r = parser_conn(p)->req;
	r->keep_alive = llhttp_should_keep_alive(p);
	if (gs_buf_append(&r->url, "", 0) < 0) /* makes sure url.data exists */
		return reject(r, 414);
	char *q = strchr(r->url.data ? r->url.data : "", '?');
	if (q) {
		*q = '\0';
		r->query = q + 1;
	}
	return 0;
}

static const llhttp_settings_t server_settings = {
	.on_message_begin = on_message_begin,
	.on_url = on_url,
	.on_header_field = on_header_field,
	.on_header_field_complete = on_header_field_complete,
	.on_header_value = on_header_value,
	.on_header_value_complete = on_header_value_complete,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};

/* ---- responding -------------------------------------------------------------------------------- */

static int write_response(struct server_conn *sc, int status, const char *ctype, const char *body, size_t len,
			  const struct gs_http_header *extra, size_t n_extra, int keep, int head)
{
	struct gs_buf b;
	gs_buf_init(&b, 0);
	int r = gs_buf_printf(&b, "HTTP/1.1 %d %s\r\n", status, status_text(status));
	if (r == 0 && ctype)
		r = gs_buf_printf(&b, "Content-Type: %s\r\n", ctype);
	if (r == 0)
		r = gs_buf_printf(&b, "Content-Length: %zu\r\n%s", len, keep ? "" : "Connection: close\r\n");
	for (size_t i = 0; r == 0 && i < n_extra; i++)
		r = gs_buf_printf(&b, "%s: %s\r\n", extra[i].name, extra[i].value);
	if (r == 0)
		r = gs_buf_append_str(&b, "\r\n");
	if (r == 0 && len && !head)
		r = gs_buf_append(&b, body, len);
	if (r == 0)
		r = gs_conn__write(&sc->conn, b.data, b.len);
	gs_buf_free(&b);
	return r;
}

/* Answers a request the handler never saw (a limit, a parse error, a timeout) and ends the connection. */
static void respond_error(struct server_conn *sc, int status, const char *why, enum gs_http_close_reason reason)
{
	struct gs_http_server *s = sc->s;
	s->rejected_total++;
	set_reason(sc, reason);
	gs_log_debug("http server %s conn %u %s: %d (%s)", s->name, sc->conn.id, sc->conn.peer, status, why);
	char text[160];
	int n = snprintf(text, sizeof(text), "%s\n", why);
	write_response(sc, status, "text/plain; charset=utf-8", text, (size_t)n, NULL, 0, 0, 0);
	gs_conn__shutdown(&sc->conn);
}

int gs_http_respond(struct gs_http_server_req *r, int status, const char *content_type, const char *body, size_t len,
		    const struct gs_http_header *extra, size_t n_extra)
{
	struct server_conn *sc = r->sc;
	GS_ASSERT(!sc || sc->req == r); /* answered once: while it is its connection's request */
	if (!sc) {
		req_free(r);
		return -ECONNRESET;
	}
	struct gs_http_server *s = sc->s;
	int keep = r->keep_alive && !s->closing && !s->draining;
	int rc = write_response(sc, status, content_type, body, len, extra, n_extra, keep, r->head);
	sc->req = NULL;
	sc->held = 0;
	sc->served = 1;
	req_free(r);
	evictable_touch(sc); /* idle now, or closing: either way not the handler's any more */
	if (rc < 0 || !keep) {
		set_reason(sc, rc < 0       ? GS_HTTP_CLOSE_CLIENT
			       : s->closing ? GS_HTTP_CLOSE_SHUTDOWN
					    : GS_HTTP_CLOSE_DONE);
		gs_conn__shutdown(&sc->conn);
		return rc;
	}
	gs_conn__timer(&sc->conn, s->o.idle_timeout_ms);
	gs_conn__resume(&sc->conn);
	return 0;
}

/* ---- connection callbacks ----------------------------------------------------------------------- */

static void sc_on_ready(struct gs_conn *c, int err)
{
	struct server_conn *sc = GS_CONTAINER_OF(c, struct server_conn, conn);
	if (err < 0) {
		sc->s->tls_failures_total++;
		gs_log_debug("http server %s conn %u %s: TLS handshake failed: %s", sc->s->name, c->id, c->peer,
			     gs_conn__error(c));
		sc_close(sc, err == UV_ECONNRESET || err == UV_EOF ? GS_HTTP_CLOSE_CLIENT : GS_HTTP_CLOSE_TLS_ERROR);
		return;
	}
	/* The head deadline still counts from the accept: a slow handshake leaves less time for it. */
	arm_deadline(sc, sc->t0, sc->s->o.header_timeout_ms);
}

static void sc_on_message(struct gs_conn *c)
{
	struct server_conn *sc = GS_CONTAINER_OF(c, struct server_conn, conn);
	struct gs_http_server *s = sc->s;
	struct gs_http_server_req *r = sc->req;
	gs_conn__timer(c, 0);
	s->requests_total++;
	if (s->closing) {
		respond_error(sc, 503, "shutting down", GS_HTTP_CLOSE_SHUTDOWN);
		return;
	}
	sc->held = 1;
	evictable_remove(sc); /* never closed to make room while the handler has its request */
	s->handler(r, s->ud); /* may respond (and resume) right here */
}

static void sc_on_error(struct gs_conn *c, int err)
{
	struct server_conn *sc = GS_CONTAINER_OF(c, struct server_conn, conn);
	struct gs_http_server_req *r = sc->req;
	if (err == UV_EOF || sc->held) {
		sc_close(sc, GS_HTTP_CLOSE_CLIENT);
		return;
	}
	if (err == -E2BIG) /* the head passed max_header_bytes */
		respond_error(sc, 431, "request header fields too large", GS_HTTP_CLOSE_BAD_REQUEST);
	else if (r && r->reject == 413)
		respond_error(sc, 413, "request body too large", GS_HTTP_CLOSE_BAD_REQUEST);
	else if (r && r->reject)
		respond_error(sc, r->reject,
			      r->reject == 414 ? "request target too long" : "request header fields too large",
			      GS_HTTP_CLOSE_BAD_REQUEST);
	else if (err == -EPROTO)
		respond_error(sc, 400, *gs_conn__error(c) ? gs_conn__error(c) : "bad request",
			      GS_HTTP_CLOSE_BAD_REQUEST);
	else
		sc_close(sc, GS_HTTP_CLOSE_CLIENT);
}

static void sc_on_timeout(struct gs_conn *c)
{
	struct server_conn *sc = GS_CONTAINER_OF(c, struct server_conn, conn);
	struct gs_http_server *s = sc->s;
	if (sc->held)
		return; /* the handler's time; it answers */
	if (!c->ready) {
		gs_log_debug("http server %s conn %u %s: handshake timeout", s->name, c->id, c->peer);
		sc_close(sc, GS_HTTP_CLOSE_HANDSHAKE_TIMEOUT);
		return;
	}
	if (sc->req) {
		int body = sc->req->head_done;
		respond_error(sc, 408, body ? "request not complete in time" : "request head not complete in time",
			      body ? GS_HTTP_CLOSE_REQUEST_TIMEOUT : GS_HTTP_CLOSE_HEADER_TIMEOUT);
		return;
	}
	gs_log_debug("http server %s conn %u %s: %s timeout", s->name, c->id, c->peer, sc->served ? "idle" : "header");
	sc_close(sc, sc->served ? GS_HTTP_CLOSE_IDLE_TIMEOUT : GS_HTTP_CLOSE_HEADER_TIMEOUT);
}

static void listener_close(struct gs_http_server *s);
static void server_close(struct gs_http_server *s, void (*close_cb)(void *ud), void *ud);

static void sc_on_close(struct gs_conn *c)
{
	struct server_conn *sc = GS_CONTAINER_OF(c, struct server_conn, conn);
	struct gs_http_server *s = sc->s;
	GS_ASSERT(!sc->counted && !is_evictable(sc));
	if (sc->req) {
		if (sc->held)
			sc->req->sc = NULL; /* the handler answers into the void */
		else
			req_free(sc->req);
	}
	s->closed[sc->reason < 0 ? GS_HTTP_CLOSE_CLIENT : sc->reason]++;
	gs_list_remove(&sc->link);
	s->n_conns--;
	free(sc);
	gs_closer_drop(&s->closer); /* the last part of a closing server frees it */
}

static const struct gs_conn_cbs sc_cbs = {
	.on_ready = sc_on_ready,
	.on_message = sc_on_message,
	.on_error = sc_on_error,
	.on_timeout = sc_on_timeout,
	.on_closing = sc_on_closing,
	.on_close = sc_on_close,
};

/*
 * Out of descriptors (EMFILE/ENFILE). libuv has already tried its own trick (close a spare
 * descriptor, accept and close what waits, reopen the spare: uv__emfile_trick) and calls us only when
 * that failed; it then tries accept again at once, so this must free a descriptor or drain the
 * backlog, or the loop spins. First choice: close the oldest evictable connection (its socket is
 * released now, and the connection waiting gets it); else our own spare, the same trick.
 */
static void shed_load(struct gs_http_server *s)
{
	if (evict_oldest(s, NULL, "the listener", "out of file descriptors"))
		return;
	uv_os_fd_t lfd;
	if (s->reserve_fd < 0 || uv_fileno((uv_handle_t *)&s->listener, &lfd) != 0) {
		/* Nothing left to free: stop listening rather than spin (the daemon keeps running). */
		gs_log_error("http server %s: out of file descriptors and nothing to free: no longer listening",
			     s->name);
		listener_close(s);
		return;
	}
	close(s->reserve_fd);
	int fd;
	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0 || errno == EINTR)
		if (fd >= 0)
			close(fd);
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static struct server_conn *sc_new(struct gs_http_server *s);
static void sc_admit(struct server_conn *sc, int tls);

static void on_connection(uv_stream_t *listener, int status)
{
	struct gs_http_server *s = listener->data;
	if (s->closing)
		return;
	if (status < 0) {
		s->closed[GS_HTTP_CLOSE_ACCEPT_ERROR]++;
		gs_log_limited(GS_LOG_WARN, HTTP_SERVER_LOG_BURST, HTTP_SERVER_LOG_WINDOW_MS,
			       "http server %s: accept failed: %s (%u connections open)", s->name, uv_strerror(status),
			       s->n_open);
		if (status == UV_EMFILE || status == UV_ENFILE)
			shed_load(s);
		return;
	}
	struct server_conn *sc = sc_new(s);
	struct gs_tls *tls = NULL;
	if (s->tls && gs_tls_server_new(s->tls, &tls) < 0) {
		sc_close(sc, GS_HTTP_CLOSE_REFUSED);
		return;
	}
	if (gs_conn__accept(&sc->conn, listener, tls) < 0) {
		sc_close(sc, GS_HTTP_CLOSE_CLIENT);
		return;
	}
	sc_admit(sc, tls != NULL);
}

/* A new connection, before it has a transport: in the server's list, its clock started. */
static struct server_conn *sc_new(struct gs_http_server *s)
{
	struct server_conn *sc = gs_xcalloc(1, sizeof(*sc));
	sc->s = s;
	sc->reason = -1;
	gs_conn__init(&sc->conn, s->loop, HTTP_REQUEST, &server_settings, &sc_cbs, s->o.max_header_bytes);
	gs_list_init(&sc->elink);
	gs_list_init(&sc->slink);
	gs_list_insert_tail(&s->conns, &sc->link);
	s->n_conns++;
	gs_closer_hold(&s->closer); /* dropped by sc_on_close */
	sc->t0 = uv_now(s->loop);
	return sc;
}

/*
 * The accepted connection (its peer known) joins the server: counted under its source, room made
 * within the caps (evicting, or refusing it), evictable, its first deadline armed.
 */
static void sc_admit(struct server_conn *sc, int tls)
{
	struct gs_http_server *s = sc->s;
	char ip[64];
	peer_ip(sc->conn.peer, ip, sizeof(ip));
	struct source *src = source_get(s, ip);
	src->n++;
	s->n_open++;
	sc->src = src;
	sc->counted = 1;
	/* Room first within the source, then overall; refuse only when nothing can go. */
	int ok = src->n <= s->o.max_conns_per_source ||
		 evict_oldest(s, src, sc->conn.peer,
			      s->o.max_conns_per_source < s->o.max_conns ? "connections from one address at the limit"
									 : "connections at the limit");
	if (ok && s->n_open > s->o.max_conns) {
		struct source *payer = largest_source(s, src);
		ok = payer && evict_oldest(s, payer, sc->conn.peer,
					   "connections at the limit, the address holding the most pays");
	}
	if (!ok) {
		s->rejected_total++;
		gs_log_limited(GS_LOG_WARN, HTTP_SERVER_LOG_BURST, HTTP_SERVER_LOG_WINDOW_MS,
			       "http server %s: %u connections (%u from %s), every one a request being answered: "
			       "refusing %s",
			       s->name, s->n_open - 1, src->n - 1, ip, sc->conn.peer);
		sc_close(sc, GS_HTTP_CLOSE_REFUSED);
		return;
	}
	s->conns_total++;
	evictable_touch(sc);
	arm_deadline(sc, sc->t0, tls ? s->o.handshake_timeout_ms : s->o.header_timeout_ms);
}

/* The memory transport's accept (http.h): the same admission and parser path, no socket, no TLS. */
int gs_http_server__accept_memory(struct gs_http_server *s, struct gs_conn_mem *m, const char *peer)
{
	if (s->closing)
		return -ECANCELED;
	if (s->tls)
		return -ENOTSUP;
	struct server_conn *sc = sc_new(s);
	gs_conn__open_memory(&sc->conn, m, peer, 0);
	sc_admit(sc, 0);
	return 0;
}

/* ---- the server --------------------------------------------------------------------------------- */

int gs_http_server_start(uv_loop_t *loop, const struct gs_http_server_opts *o, gs_http_handler_cb handler, void *ud,
			 struct gs_http_server **out)
{
	char host[256];
	int port;
	union {
		struct sockaddr sa;
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} addr;
	if (!o->addr || gs_options_split_hostport(o->addr, host, sizeof(host), &port) < 0)
		return -EINVAL;
	if (uv_ip4_addr(host, port, &addr.in4) != 0 && uv_ip6_addr(host, port, &addr.in6) != 0)
		return -EINVAL;

	struct gs_http_server *s = gs_xcalloc(1, sizeof(*s));
	s->loop = loop;
	s->o = *o;
	s->o.addr = NULL;
	if (!s->o.max_header_bytes)
		s->o.max_header_bytes = HTTP_SERVER_MAX_HEADER_BYTES;
	if (!s->o.max_headers)
		s->o.max_headers = HTTP_SERVER_MAX_HEADERS;
	if (!s->o.max_url)
		s->o.max_url = HTTP_SERVER_MAX_URL;
	if (!s->o.max_body)
		s->o.max_body = HTTP_SERVER_MAX_BODY;
	if (!s->o.max_conns)
		s->o.max_conns = HTTP_SERVER_MAX_CONNS;
	if (!s->o.max_conns_per_source || s->o.max_conns_per_source > s->o.max_conns)
		s->o.max_conns_per_source = s->o.max_conns;
	if (!s->o.handshake_timeout_ms)
		s->o.handshake_timeout_ms = HTTP_SERVER_HANDSHAKE_MS;
	if (!s->o.header_timeout_ms)
		s->o.header_timeout_ms = HTTP_SERVER_HEADER_MS;
	if (!s->o.request_timeout_ms)
		s->o.request_timeout_ms = HTTP_SERVER_REQUEST_MS;
	if (s->o.request_timeout_ms < s->o.header_timeout_ms)
		s->o.request_timeout_ms = s->o.header_timeout_ms;
	if (!s->o.idle_timeout_ms)
		s->o.idle_timeout_ms = HTTP_SERVER_IDLE_MS;
	s->handler = handler;
	s->ud = ud;
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	snprintf(s->name, sizeof(s->name), "%s", o->name ? o->name : o->addr);
	gs_list_init(&s->conns);
	gs_list_init(&s->evictable);
	gs_hmap_init(&s->sources, 0);
	uv_timer_init(loop, &s->last);
	uv_tcp_init(loop, &s->listener);
	s->listener.data = s;
	int r = uv_tcp_bind(&s->listener, &addr.sa, 0);
	if (r == 0)
		r = uv_listen((uv_stream_t *)&s->listener, HTTP_SERVER_BACKLOG, on_connection);
	if (r < 0) {
		/* The handles are registered: they go through a close; s is freed after the last. */
		server_close(s, NULL, NULL);
		return r;
	}
	struct sockaddr_storage ss;
	int len = sizeof(ss);
	uv_tcp_getsockname(&s->listener, (struct sockaddr *)&ss, &len);
	s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port);
	snprintf(s->addr, sizeof(s->addr), "%s", o->addr);
	s->o.addr = s->addr;
	if (o->tls)
		gs_http_server_set_tls(s, o->tls);
	*out = s;
	return 0;
}

int gs_http_server_port(const struct gs_http_server *s)
{
	return s->port;
}

const char *gs_http_req_method(const struct gs_http_server_req *r)
{
	return r->method;
}

const char *gs_http_req_source(const struct gs_http_server_req *r)
{
	return r->sc && r->sc->src ? r->sc->src->ip : "";
}

const char *gs_http_req_path(const struct gs_http_server_req *r)
{
	return r->url.data ? r->url.data : "";
}

const char *gs_http_req_query(const struct gs_http_server_req *r)
{
	return r->query ? r->query : "";
}

const char *gs_http_req_header(const struct gs_http_server_req *r, const char *name)
{
	if (!r->hdrs.data)
		return NULL; /* no header at all */
	const char *p = r->hdrs.data, *end = p + r->hdrs.len;
	for (unsigned i = 0; i < r->n_headers && p < end; i++) {
		const char *v = p + strlen(p) + 1;
		if (v >= end)
			break;
		if (strcasecmp(p, name) == 0)
			return v;
		p = v + strlen(v) + 1;
	}
	return NULL;
}

const char *gs_http_req_body(const struct gs_http_server_req *r, size_t *len)
{
	if (len)
		*len = r->body.len;
	return r->body.data ? r->body.data : "";
}

void gs_http_server_set_tls(struct gs_http_server *s, struct gs_tls_config *tls)
{
	if (tls)
		gs_tls_config_ref(tls);
	gs_tls_config_unref(s->tls);
	s->tls = tls;
}

void gs_http_server_stats(const struct gs_http_server *s, struct gs_http_server_stats *st)
{
	st->conns_open = s->n_open;
	st->conns_evictable = s->n_evictable;
	st->sources = (unsigned)s->sources.len;
	memcpy(st->closed, s->closed, sizeof(st->closed));
	st->conns_total = s->conns_total;
	st->requests_total = s->requests_total;
	st->tls_failures_total = s->tls_failures_total;
	st->rejected_total = s->rejected_total;
}

static void listener_closed(uv_handle_t *h)
{
	struct gs_http_server *s = h->data;
	s->listener_closed = 2;
	gs_closer_drop(&s->closer);
}

/* Stops listening, for good (at the close, or on its own in shed_load: the owner closes later). */
static void listener_close(struct gs_http_server *s)
{
	if (s->listener_closed)
		return;
	s->listener_closed = 1;
	gs_closer_hold(&s->closer);
	uv_close((uv_handle_t *)&s->listener, listener_closed);
}

static void server_release(struct gs_closer *c)
{
	struct gs_http_server *s = GS_CONTAINER_OF(c, struct gs_http_server, closer);

	GS_ASSERT(s->sources.len == 0 && s->n_open == 0 && s->n_conns == 0);
	gs_hmap_free(&s->sources);
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	gs_tls_config_unref(s->tls);
	free(s);
}

/* The connections are closing already: the listener and `last` follow. */
static void server_close(struct gs_http_server *s, void (*close_cb)(void *ud), void *ud)
{
	s->closing = 1;
	gs_closer_start(&s->closer, server_release, close_cb, ud);
	listener_close(s);
	gs_closer_uv(&s->closer, (uv_handle_t *)&s->last);
	gs_closer_arm(&s->closer);
}

void gs_http_server_drain(struct gs_http_server *s)
{
	s->draining = 1;
}

void gs_http_server_close(struct gs_http_server *s, void (*close_cb)(void *ud), void *ud)
{
	struct gs_list *l, *next;

	s->closing = 1;
	GS_LIST_FOREACH_SAFE(l, next, &s->conns) {
		struct server_conn *sc = GS_CONTAINER_OF(l, struct server_conn, link);
		sc_close(sc, GS_HTTP_CLOSE_SHUTDOWN);
	}
	server_close(s, close_cb, ud);
}
