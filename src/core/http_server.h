/*
 * http_server.h: the HTTP/1.1 server of http.h (http_server.c): accepts, parses requests with hard
 * limits, hands complete requests to a handler.
 */
#ifndef GS_CORE_HTTP_SERVER_H
#define GS_CORE_HTTP_SERVER_H

#include "core/http.h"

struct gs_http_server;     /* opaque */
struct gs_http_server_req; /* opaque: one request; valid until gs_http_respond */

/*
 * Limits, each a named constant in http_server.c used when the option is 0, and each tested.
 *
 * Connections and hostile clients (docs/http.md, "Connection limits"):
 *   - Every open connection whose request the handler does not hold (still in its TLS handshake,
 *     idle between requests, receiving a request head or body, or closing after an answer) is
 *     *evictable*. They are kept in one list ordered by the time they entered their current phase
 *     (accepted, began a request, got an answer), oldest first, and per peer address in the same order.
 *   - A new connection over max_conns_per_source for its address closes that address's oldest
 *     evictable connection; over max_conns, the oldest evictable connection of the address that has
 *     the most evictable connections (the newcomer's own on a tie). Only when there is none (every
 *     connection is a request the handler holds) is the new one refused. So an address flooding the
 *     port recycles its own connections: another address's are closed only while it holds at least
 *     as many that could go.
 *   - Deadlines are counted from the start of a phase and never pushed back by received bytes: the
 *     TLS handshake within handshake_timeout_ms of the accept; the request head within
 *     header_timeout_ms and the whole request within request_timeout_ms of the accept (first request)
 *     or of the request's first byte (later requests on a kept-alive connection); the first byte of
 *     a next request within idle_timeout_ms of the last answer.
 */
struct gs_http_server_opts {
	const char *addr;              /* "0.0.0.0:8443", "127.0.0.1:0", "[::]:8080" */
	struct gs_tls_config *tls;     /* NULL: plain HTTP. The server takes a reference. */
	size_t max_header_bytes;       /* request line + headers; over it: 431 and close */
	unsigned max_headers;          /* header count; over it: 431 */
	size_t max_url;                /* request target length; over it: 414 */
	size_t max_body;               /* over it: 413 (checked against Content-Length before reading) */
	unsigned max_conns;            /* open connections at most: over it an evictable one goes (above) */
	unsigned max_conns_per_source; /* per peer address; 0 (default): max_conns */
	unsigned handshake_timeout_ms; /* TLS handshake, from the accept */
	unsigned header_timeout_ms;    /* request head, from the accept or the request's first byte */
	unsigned request_timeout_ms;   /* whole request, from the same start (at least header_timeout_ms) */
	unsigned idle_timeout_ms;      /* a kept-alive connection with no request is closed after this */
	const char *name;              /* for logs: "webhook", "health"; NULL: the address */
};

/* Why connections ended (gs_http_server_stats.closed[], the metric's reason label). */
enum gs_http_close_reason {
	GS_HTTP_CLOSE_CLIENT = 0, /* the client closed or reset, or a read/write failed */
	GS_HTTP_CLOSE_DONE,       /* answered with Connection: close (the client asked) */
	GS_HTTP_CLOSE_EVICTED,    /* closed to make room for a new connection */
	GS_HTTP_CLOSE_REFUSED,    /* a new connection closed: nothing evictable */
	GS_HTTP_CLOSE_HANDSHAKE_TIMEOUT,
	GS_HTTP_CLOSE_HEADER_TIMEOUT,  /* no complete request head in time (408 if it had begun) */
	GS_HTTP_CLOSE_REQUEST_TIMEOUT, /* the body did not arrive in time (408) */
	GS_HTTP_CLOSE_IDLE_TIMEOUT,    /* kept alive with no next request */
	GS_HTTP_CLOSE_TLS_ERROR,       /* the handshake failed (bad hello, old version, plain HTTP) */
	GS_HTTP_CLOSE_BAD_REQUEST,     /* a limit or a parse error, answered 4xx */
	GS_HTTP_CLOSE_SHUTDOWN,        /* the server closed */
	GS_HTTP_CLOSE_ACCEPT_ERROR,    /* accept failed (EMFILE, ...): libuv closed what waited */
	GS_HTTP_CLOSE_REASON_COUNT
};
/* "client_closed", "done", "evicted", "refused", "handshake_timeout", ... */
const char *gs_http_close_reason_name(enum gs_http_close_reason r);
/* The metric family both servers register closed[] under, labelled server="..." and reason="...". */
#define GS_HTTP_CLOSED_METRIC "gpu_scheduler_http_connections_closed_total"
#define GS_HTTP_CLOSED_HELP   "Connections closed by the webhook, health and secure servers, by reason."

/* Called once per complete request. The handler must call gs_http_respond exactly once, now or later
 * (GS_ASSERT: a request answered is its connection's no more). */
typedef void (*gs_http_handler_cb)(struct gs_http_server_req *req, void *ud);

int gs_http_server_start(uv_loop_t *loop, const struct gs_http_server_opts *opts, gs_http_handler_cb handler, void *ud,
			 struct gs_http_server **out);

/* The port actually bound (for "host:0" in tests). */
int gs_http_server_port(const struct gs_http_server *s);

const char *gs_http_req_method(const struct gs_http_server_req *r);
const char *gs_http_req_path(const struct gs_http_server_req *r);                     /* without the query */
const char *gs_http_req_query(const struct gs_http_server_req *r);                    /* after '?', "" if none */
const char *gs_http_req_header(const struct gs_http_server_req *r, const char *name); /* case-insensitive; NULL */
const char *gs_http_req_body(const struct gs_http_server_req *r, size_t *len);        /* NUL-terminated */
/* The peer's address without its port ("10.0.0.1", "::1"), as the per-source caps count it; "" once
 * the connection is gone. */
const char *gs_http_req_source(const struct gs_http_server_req *r);

/*
 * Sends the response (Content-Length framing, keep-alive unless the client asked to close) and ends
 * the request. extra headers may be NULL. Returns 0 or <0 if the connection is already gone; either
 * way r is invalid afterwards.
 */
int gs_http_respond(struct gs_http_server_req *r, int status, const char *content_type, const char *body, size_t len,
		    const struct gs_http_header *extra, size_t n_extra);

/* New connections use this TLS config; live ones keep theirs. Takes a reference. */
void gs_http_server_set_tls(struct gs_http_server *s, struct gs_tls_config *tls);

struct gs_http_server_stats {
	unsigned conns_open;      /* connections not yet closing */
	unsigned conns_evictable; /* of those, the ones the handler holds no request of */
	unsigned sources;         /* distinct peer addresses among conns_open */
	uint64_t conns_total;     /* connections accepted and served (not those refused) */
	uint64_t requests_total, tls_failures_total, rejected_total;
	uint64_t closed[GS_HTTP_CLOSE_REASON_COUNT]; /* connections ended, by reason */
};
void gs_http_server_stats(const struct gs_http_server *s, struct gs_http_server_stats *st);

/*
 * Draining, before a close: from now on every answer carries Connection: close and ends its
 * connection, so clients that keep connections alive (the apiserver keeps ~25 per webhook host)
 * open new ones, elsewhere once the endpoints have moved on, instead of meeting a closed socket.
 * New connections are still accepted and served the same way until gs_http_server_close.
 */
void gs_http_server_drain(struct gs_http_server *s);

/* Stops listening, closes every connection, frees the server; close_cb once every handle is closed. */
void gs_http_server_close(struct gs_http_server *s, void (*close_cb)(void *ud), void *ud);

/* ---- the memory transport (tests and fuzzers only; src/core/conn.h) ---------------------------- */

struct gs_conn_mem;

/*
 * A connection to s from peer ("address:port") without a socket, as if the listener had accepted it:
 * the same admission (caps, evictions, deadlines), and from gs_conn__received on the same parser path
 * and handler as a socket's bytes. m is its other end: the driver feeds it and finds the answers in
 * m->out. Plain HTTP only. 0, -ENOTSUP on a TLS server, -ECANCELED on a closing one.
 */
int gs_http_server__accept_memory(struct gs_http_server *s, struct gs_conn_mem *m, const char *peer);

#endif
