/*
 * http.h: HTTP/1.1 over TCP or TLS on the libuv loop, parsed by llhttp (no lenient flags).
 *
 * Two halves sharing one connection layer (conn.c: uv_tcp_t -> optional gs_tls -> llhttp):
 *   - a client: a keep-alive pool for one origin, requests queued when every connection is busy;
 *   - a server: accepts, parses requests with hard limits, hands complete requests to a handler.
 *
 * Everything runs on the loop thread. No callback ever fires synchronously from inside the call that
 * registered it. TCP_NODELAY is set on every socket.
 */
#ifndef GS_CORE_HTTP_H
#define GS_CORE_HTTP_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/tls.h"

struct gs_http_header {
	const char *name;
	const char *value;
};

/* ---- client ------------------------------------------------------------------------------------ */

struct gs_http_client; /* opaque: one origin, a pool of connections */
struct gs_http_call;   /* opaque: one request in flight; valid until its done callback returns */

struct gs_http_client_opts {
	const char *host; /* DNS name or IP literal to connect to (copied) */
	int port;
	const char *server_name;     /* TLS name to send and verify; NULL means host (copied) */
	struct gs_tls_config *tls;   /* NULL: plain TCP. The client takes a reference. */
	unsigned max_conns;          /* connections at most; more requests wait in a FIFO queue */
	unsigned connect_timeout_ms; /* TCP connect + TLS handshake; 0 means 10 s */
	unsigned idle_timeout_ms;    /* an idle kept-alive connection is closed after this; 0 means 60 s */
	size_t max_body;             /* cap on a buffered response body; 0 means 64 MiB */
};

struct gs_http_response {
	int status;       /* HTTP status code */
	const char *body; /* buffered body, NUL-terminated; "" for streamed calls */
	size_t body_len;
	const char *content_type; /* "" if absent */
	unsigned retry_after;     /* Retry-After in seconds, 0 if absent */
};

/*
 * Streaming: when a request sets on_data and the response status is 2xx, the body (de-chunked) is
 * delivered piece by piece to on_data instead of being buffered. Non-2xx bodies are always buffered
 * and given to done. on_data may call gs_http_cancel().
 */
typedef void (*gs_http_data_cb)(struct gs_http_call *call, const char *data, size_t len, void *ud);

/*
 * Called exactly once per call. err is 0 when a complete response arrived (resp non-NULL), else a
 * negative code and resp NULL: -ECANCELED (gs_http_cancel or client close), -ETIMEDOUT, -ECONNREFUSED,
 * -ECONNRESET, -EACCES (TLS peer refused: see gs_http_call_error), -EPROTO (bad HTTP or TLS), -E2BIG
 * (body over max_body), or a libuv code. A request that failed before any byte of it was written on a
 * reused connection is retried once on a fresh connection before done sees an error.
 */
typedef void (*gs_http_done_cb)(struct gs_http_call *call, int err, const struct gs_http_response *resp, void *ud);

struct gs_http_request {
	const char *method;                   /* "GET", "POST", ... */
	const char *path;                     /* path and query, already escaped */
	const struct gs_http_header *headers; /* extra headers; Host, Content-Length added by the client */
	size_t n_headers;
	const char *body; /* copied; may be NULL */
	size_t body_len;
	unsigned timeout_ms;     /* from send to the end of the response; 0: none */
	gs_http_data_cb on_data; /* non-NULL: stream a 2xx body */
	/*
	 * Asked with done's ud just before each write of the request on a connection (the first, after a
	 * wait for a free or a fresh connection, and the resend after a lost reused connection). 0
	 * withdraws it: nothing is written and done runs later with GS_HTTP_EWITHDRAWN. NULL: always sent.
	 * For a caller whose right to send can lapse while the request waits (a leader's bindings).
	 */
	int (*may_send)(void *ud);
};

/* done's err for a request that may_send withdrew: it never left this process. */
#define GS_HTTP_EWITHDRAWN (-EPERM)

int gs_http_client_new(uv_loop_t *loop, const struct gs_http_client_opts *opts, struct gs_http_client **out);

/*
 * Queues a request. Returns 0 (done will be called) or <0 (done will not be called).
 * *out, if given, receives the call handle for gs_http_cancel; it stays valid until done returns.
 */
int gs_http_send(struct gs_http_client *c, const struct gs_http_request *req, gs_http_done_cb done, void *ud,
		 struct gs_http_call **out);

/* Aborts a call: done runs later with -ECANCELED. The connection is closed if the call was on it. */
void gs_http_cancel(struct gs_http_call *call);

/* Status of the response head once it arrived (during on_data), else 0. */
int gs_http_call_status(const struct gs_http_call *call);
/* Content-Type of the response head once it arrived (during on_data), else "". */
const char *gs_http_call_content_type(const struct gs_http_call *call);
/* Readable reason for a failed call (TLS verification, parse error, ...), "" if none. */
const char *gs_http_call_error(const struct gs_http_call *call);

struct gs_http_client_stats {
	unsigned conns_open, conns_idle, queued, inflight;
	uint64_t conns_opened_total, tls_failures_total;
};
void gs_http_client_stats(const struct gs_http_client *c, struct gs_http_client_stats *st);

/* Replaces the TLS config used by new connections (e.g. a rotated client certificate). */
void gs_http_client_set_tls(struct gs_http_client *c, struct gs_tls_config *tls);

/*
 * Cancels every call (their done callbacks run with -ECANCELED), closes every handle and frees the
 * client; close_cb runs once the last handle is closed. No other call on c afterwards.
 */
void gs_http_client_close(struct gs_http_client *c, void (*close_cb)(void *ud), void *ud);

/* ---- server ------------------------------------------------------------------------------------ */

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

/*
 * From now on c opens its connections without sockets: for each, open(ud) gives the driver's end m
 * and the connection waits, connecting, for the driver's gs_conn__connected(m->conn, 0); then it
 * writes its request into m->out and reads what the driver feeds with gs_conn__received. Plain HTTP
 * only. open NULL: sockets again. open returning NULL fails the connection as a refused connect.
 */
void gs_http_client__use_memory(struct gs_http_client *c, struct gs_conn_mem *(*open)(void *ud), void *ud);

#endif
