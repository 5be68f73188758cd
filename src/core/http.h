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
	const char *host;           /* DNS name or IP literal to connect to (copied) */
	int port;
	const char *server_name;    /* TLS name to send and verify; NULL means host (copied) */
	struct gs_tls_config *tls;  /* NULL: plain TCP. The client takes a reference. */
	unsigned max_conns;         /* connections at most; more requests wait in a FIFO queue */
	unsigned connect_timeout_ms;/* TCP connect + TLS handshake; 0 means 10 s */
	unsigned idle_timeout_ms;   /* an idle kept-alive connection is closed after this; 0 means 60 s */
	size_t max_body;            /* cap on a buffered response body; 0 means 64 MiB */
};

struct gs_http_response {
	int status;                 /* HTTP status code */
	const char *body;           /* buffered body, NUL-terminated; "" for streamed calls */
	size_t body_len;
	const char *content_type;   /* "" if absent */
	unsigned retry_after;       /* Retry-After in seconds, 0 if absent */
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
	const char *body;                     /* copied; may be NULL */
	size_t body_len;
	unsigned timeout_ms;                  /* from send to the end of the response; 0: none */
	gs_http_data_cb on_data;              /* non-NULL: stream a 2xx body */
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

/* Limits, each a named constant in http_server.c used when the option is 0, and each tested. */
struct gs_http_server_opts {
	const char *addr;               /* "0.0.0.0:8443", "127.0.0.1:0", "[::]:8080" */
	struct gs_tls_config *tls;      /* NULL: plain HTTP. The server takes a reference. */
	size_t max_header_bytes;        /* request line + headers; over it: 431 and close */
	unsigned max_headers;           /* header count; over it: 431 */
	size_t max_url;                 /* request target length; over it: 414 */
	size_t max_body;                /* over it: 413 (checked against Content-Length before reading) */
	unsigned max_conns;             /* further connections are accepted and closed at once */
	unsigned handshake_timeout_ms;  /* TLS handshake must finish within this */
	unsigned request_timeout_ms;    /* a started request must be complete within this */
	unsigned idle_timeout_ms;       /* a kept-alive connection with no request is closed after this */
};

/* Called once per complete request. The handler must call gs_http_respond exactly once, now or later. */
typedef void (*gs_http_handler_cb)(struct gs_http_server_req *req, void *ud);

int gs_http_server_start(uv_loop_t *loop, const struct gs_http_server_opts *opts, gs_http_handler_cb handler,
			 void *ud, struct gs_http_server **out);

/* The port actually bound (for "host:0" in tests). */
int gs_http_server_port(const struct gs_http_server *s);

const char *gs_http_req_method(const struct gs_http_server_req *r);
const char *gs_http_req_path(const struct gs_http_server_req *r);   /* without the query */
const char *gs_http_req_query(const struct gs_http_server_req *r);  /* after '?', "" if none */
const char *gs_http_req_header(const struct gs_http_server_req *r, const char *name); /* case-insensitive; NULL */
const char *gs_http_req_body(const struct gs_http_server_req *r, size_t *len);        /* NUL-terminated */

/*
 * Sends the response (Content-Length framing, keep-alive unless the client asked to close) and ends
 * the request. extra headers may be NULL. Returns 0 or <0 if the connection is already gone; either
 * way r is invalid afterwards.
 */
int gs_http_respond(struct gs_http_server_req *r, int status, const char *content_type, const char *body,
		    size_t len, const struct gs_http_header *extra, size_t n_extra);

/* New connections use this TLS config; live ones keep theirs. Takes a reference. */
void gs_http_server_set_tls(struct gs_http_server *s, struct gs_tls_config *tls);

struct gs_http_server_stats {
	unsigned conns_open;
	uint64_t conns_total; /* connections accepted and served (not those refused over max_conns) */
	uint64_t requests_total, tls_failures_total, rejected_total;
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

#endif
