/*
 * http_client.h: the HTTP/1.1 client of http.h (http_client.c): a keep-alive pool for one origin,
 * requests queued when every connection is busy.
 */
#ifndef GS_CORE_HTTP_CLIENT_H
#define GS_CORE_HTTP_CLIENT_H

#include "core/http.h"

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

/* ---- the memory transport (tests and fuzzers only; src/core/conn.h) ---------------------------- */

struct gs_conn_mem;

/*
 * From now on c opens its connections without sockets: for each, open(ud) gives the driver's end m
 * and the connection waits, connecting, for the driver's gs_conn__connected(m->conn, 0); then it
 * writes its request into m->out and reads what the driver feeds with gs_conn__received. Plain HTTP
 * only. open NULL: sockets again. open returning NULL fails the connection as a refused connect.
 */
void gs_http_client__use_memory(struct gs_http_client *c, struct gs_conn_mem *(*open)(void *ud), void *ud);

#endif
