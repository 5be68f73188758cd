/*
 * conn.h: one HTTP/1.1 connection, the layer under http_client.c and http_server.c. Internal to the
 * HTTP module: nothing outside src/core/http_*.c includes it, except the tests and fuzzers that drive
 * its memory transport (below).
 *
 * Layering, as in knot-resolver:
 *
 *   uv_read -> [gs_tls_feed / gs_tls_read] -> framing guard -> llhttp -> owner's llhttp callbacks
 *   owner   -> gs_conn__write -> [gs_tls_write / gs_tls_flush] -> uv_write
 *
 * A struct gs_conn is embedded in the owner's connection struct (client or server side) and found
 * again with GS_CONTAINER_OF; parser.data points at the gs_conn. The conn owns a uv_tcp_t, a
 * uv_timer_t, an optional TLS session (taken over by gs_conn__connect/accept) and the llhttp parser.
 *
 * Messages end in a pause: when llhttp completes a message, reading stops and cbs->on_message runs
 * after llhttp has returned (never from inside llhttp). Bytes already received behind the message
 * (pipelining, junk) are kept and parsed only after gs_conn__resume. That is the backpressure rule:
 * one message at a time, no reading while its answer is being produced.
 *
 * Framing guard: llhttp 8.1.0 takes a CR followed by any byte as a line end and accepts obs-fold
 * continuation lines (fixed upstream in 8.1.1 and 8.1.2). The conn checks every byte of a message
 * head itself, before llhttp sees it: each CR must be followed by LF, each LF preceded by CR, no
 * header line may start with SP/HTAB, the head is at most max_head bytes. Since every message end
 * pauses the parser, bytes behind a body are scanned as the next head before llhttp sees them.
 * Chunk-size and trailer lines are left to llhttp (it bounds chunk sizes; trailers are rare and
 * only our own peers send bodies that large).
 *
 * Lifetime: gs_conn__close closes both handles; a pending getaddrinfo is cancelled and waited for
 * (the close protocol of core/closer.h: three parts); cbs->on_close runs once the last part has
 * reported back, never inside gs_conn__close, and only then may the owner free the memory. Every other
 * callback may call gs_conn__close; the conn stops delivering anything but on_close afterwards.
 * Loop thread only: the read buffers are per thread.
 *
 * Memory transport (tests and fuzzers, never the daemon): a conn opened with gs_conn__open_memory has
 * no socket. Whoever drives it plays the kernel: it hands the conn what a socket read would give with
 * gs_conn__received, the function the libuv read callback itself calls (so from there on the bytes
 * take the daemon's path: TLS, framing guard, llhttp, the owner's callbacks), and completes a client's
 * connect with gs_conn__connected, the connect callback's own body. What the conn writes is appended to
 * the driver's buffer instead of being sent; a graceful end (gs_conn__shutdown) closes at once, as if
 * the peer had read everything and closed too (there is no socket to linger on).
 */
#ifndef GS_CORE_CONN_H
#define GS_CORE_CONN_H

#include <stddef.h>
#include <stdint.h>

#include <llhttp.h>
#include <uv.h>

#include "core/buf.h"
#include "core/closer.h"
#include "core/list.h"
#include "core/tls.h"

/* Plaintext kept behind a completed message while its answer is produced (reading is paused, so
 * this holds at most one socket read and the TLS records already received). */
#define GS_CONN_PENDING_MAX  (1024 * 1024)
/* After a graceful close, how long unread input is drained so that the peer sees our last answer
 * rather than a reset, and how many bytes at most. */
#define GS_CONN_LINGER_MS    2000
#define GS_CONN_LINGER_BYTES (1024 * 1024)

struct gs_conn;

/*
 * The handshake budget. A server's TLS handshake step costs public-key work (an ECDHE key pair and
 * an ECDSA signature for a ClientHello, an ECDH secret for the client's key exchange), and libuv runs
 * every readable socket's callback in one poll phase: thousands of ClientHellos arriving together
 * would make one loop turn last seconds, and every other socket (a health probe, a request in flight)
 * waits for that turn to end. So the handshake steps that received bytes trigger share a budget of
 * time per loop turn. Over it, a connection's step is deferred: its ciphertext is kept, reading on it
 * stops, and it joins a queue that the next turns run first, within the same budget. While steps are
 * queued every new one joins the queue (arrival order, newest first once overloaded: see
 * GS_CONN_HS_LIFO_AFTER_NS); a connection's later step (the client's
 * Finished; every step of our own client connections) goes before any first step (a new
 * ClientHello): finishing a handshake is worth more than starting one. Each turn runs at least one
 * queued step and the loop does not block while steps are queued, so established traffic cannot
 * starve handshakes either; it waits at most one budget plus one step per turn for them.
 */
#define GS_CONN_HS_BUDGET_NS     (10 * 1000 * 1000ULL)
/* First steps (new ClientHellos) wait oldest first, unless the oldest has waited this long: then the
 * newest go first (adaptive LIFO). Under a flood the oldest are the next to be evicted at the cap or
 * dropped at the handshake deadline; a real client arriving meanwhile is served within a turn or two
 * instead of behind them all. */
#define GS_CONN_HS_LIFO_AFTER_NS (100 * 1000 * 1000ULL)

struct gs_conn_hs_stats {
	uint64_t steps;    /* handshake steps that received bytes triggered (the budgeted ones) */
	uint64_t deferred; /* steps put off to a later turn by the budget */
	uint64_t ns;       /* time spent in handshake work, all steps (client first steps too) */
	uint64_t lifo;     /* first steps taken newest first (the oldest had waited too long) */
	unsigned queued;   /* connections whose step is waiting now */
};

/* Callbacks from the conn to its owner. Each may call gs_conn__close. */
struct gs_conn_cbs {
	/* Client: connected (and TLS handshake done), or err < 0 (DNS, connect, TLS: -EACCES/-EPROTO).
	 * Server: TLS handshake done or failed; not called for plain connections. */
	void (*on_ready)(struct gs_conn *c, int err);
	/* A message is complete. Reading is paused until gs_conn__resume (which may be called from here). */
	void (*on_message)(struct gs_conn *c);
	/* Every queued write has reached the kernel. */
	void (*on_drain)(struct gs_conn *c);
	/* After ready: UV_EOF (peer closed; also TLS close_notify), -EPROTO (bad HTTP or TLS: see
	 * gs_conn__error, parse_errno), -E2BIG (head or framing line over its cap), or a libuv code
	 * from read/write. Reading has stopped; the owner normally closes. */
	void (*on_error)(struct gs_conn *c, int err);
	/* The timer set with gs_conn__timer fired. */
	void (*on_timeout)(struct gs_conn *c);
	/* Optional: gs_conn__close was just called (the socket is released now; on_close follows later).
	 * Runs synchronously inside gs_conn__close, whoever called it (the owner, or the conn itself at
	 * the end of a linger), exactly once: for the owner's bookkeeping only, no call back into c. */
	void (*on_closing)(struct gs_conn *c);
	/* Both handles are closed: the owner may free the struct holding c. Always the last callback. */
	void (*on_close)(struct gs_conn *c);
};

struct gs_conn_wreq;
struct gs_conn_mem;

struct gs_conn {
	uv_tcp_t tcp;
	uv_timer_t timer;
	uv_connect_t connect_req;
	uv_getaddrinfo_t gai_req;
	uv_shutdown_t shutdown_req;
	uv_loop_t *loop;
	struct gs_tls *tls;
	const struct gs_conn_cbs *cbs;

	llhttp_t parser;
	llhttp_settings_t settings;     /* the owner's, with on_body and on_message_complete wrapped */
	const llhttp_settings_t *owner; /* the owner's, as given */
	int parse_errno;                /* llhttp_errno_t of the last parse failure, HPE_OK if none */
	struct gs_buf pending;          /* plaintext received behind a completed message */

	/* framing guard */
	size_t max_head;         /* cap on the bytes of one message head */
	size_t head_bytes;       /* bytes of the current head so far */
	size_t line_len;         /* bytes of the current line so far */
	unsigned in_head : 1;    /* scanning a head (else: body framing between on_body spans) */
	unsigned head_lines : 1; /* a non-empty head line was seen (later empty line ends the head) */
	unsigned prev_cr : 1;

	unsigned id; /* for logs: "conn 7 10.0.0.1:443" */
	char peer[64];
	const char *reason; /* static text for the last failure, or NULL */

	struct gs_list hs_link;  /* in the handshake queue while hs_queued */
	uint64_t hs_queued_at;   /* uv_hrtime() when it joined the queue */
	unsigned hs_queued : 1;  /* a handshake step waits for its turn (reading stopped) */
	unsigned hs_stepped : 1; /* the handshake has made a step: the next one is a later step */

	unsigned writes_pending;
	struct gs_closer closer; /* parts: tcp, timer, a pending getaddrinfo */
	size_t linger_bytes;
	unsigned reading : 1, paused : 1, closing : 1, ready : 1, gai_pending : 1, connecting : 1, lingering : 1,
		shutting : 1, eof : 1, dispatching : 1, delivered : 1, failed : 1;
	void *data;              /* owner's use */
	struct gs_conn_mem *mem; /* the memory transport's other end, NULL on a socket */
};

/*
 * Initializes c (which the caller allocated, zeroed or not) and its two handles. type is HTTP_REQUEST
 * (server side) or HTTP_RESPONSE (client side); settings must outlive c (a static table). max_head
 * caps one message head. Cannot fail: the handles cannot fail to initialise on Unix (if libuv ever
 * said otherwise the process aborts rather than leave a half-registered handle).
 */
void gs_conn__init(struct gs_conn *c, uv_loop_t *loop, llhttp_type_t type, const llhttp_settings_t *settings,
		   const struct gs_conn_cbs *cbs, size_t max_head);

/*
 * Client side: resolves host (IP literals directly, names through uv_getaddrinfo; the first address
 * is used), connects, sets TCP_NODELAY, starts reading and, with tls (taken over, also on failure),
 * runs the handshake. cbs->on_ready reports the outcome, never synchronously. 0 or <0 (then
 * on_ready will not run; the caller still closes c).
 */
int gs_conn__connect(struct gs_conn *c, const char *host, int port, struct gs_tls *tls);

/* Server side: accepts from server, sets TCP_NODELAY, starts reading. tls is taken over. 0 or <0. */
int gs_conn__accept(struct gs_conn *c, uv_stream_t *server, struct gs_tls *tls);

/* Queues plaintext (encrypted first with TLS). Copied. 0 or <0 (the owner closes). */
int gs_conn__write(struct gs_conn *c, const char *data, size_t len);

/* Ends the pause that followed a message: parses what is pending, then reads again. */
void gs_conn__resume(struct gs_conn *c);

/* (Re)starts the timer; 0 stops it. */
void gs_conn__timer(struct gs_conn *c, uint64_t ms);

/*
 * Graceful end: after queued writes, TLS close_notify, TCP shutdown, then discards input until EOF
 * (at most GS_CONN_LINGER_MS / GS_CONN_LINGER_BYTES) and closes. Only on_close follows.
 */
void gs_conn__shutdown(struct gs_conn *c);

/* Closes at once. Idempotent. on_close follows, always asynchronously. */
void gs_conn__close(struct gs_conn *c);

/* Readable reason for the last failure (TLS, parse, framing), "" if none. */
const char *gs_conn__error(const struct gs_conn *c);

/* The handshake budget's counters (all connections of the thread). */
void gs_conn__hs_stats(struct gs_conn_hs_stats *st);

/* Sets the handshake budget per loop turn (GS_CONN_HS_BUDGET_NS by default) and returns the previous
 * one. 0 runs exactly one step per turn, each from the queue: for tests. */
uint64_t gs_conn__hs_budget(uint64_t ns);

/* Sets how long the oldest first step may wait before the newest go first (GS_CONN_HS_LIFO_AFTER_NS
 * by default); returns the previous value. For tests. */
uint64_t gs_conn__hs_lifo_after(uint64_t ns);

/* ---- the memory transport (tests and fuzzers) ------------------------------------------------- */

/* The driver's end of a memory conn. The driver owns it and must keep it until the conn closes. */
struct gs_conn_mem {
	struct gs_buf out;    /* everything the conn wrote, in order (the driver initialises it: its cap,
	                        * if hit, fails the write as a socket error would) */
	struct gs_conn *conn; /* set by gs_conn__open_memory; NULL from gs_conn__close on */
	unsigned shut : 1;    /* the conn ended gracefully (gs_conn__shutdown) rather than just closed */
};

/*
 * Instead of gs_conn__connect/accept: c (after gs_conn__init) gets no socket; m->conn = c. With
 * connecting (a client), c waits for gs_conn__connected; else (a server's accepted connection) it is
 * reading at once. peer is the "address:port" for logs and the owner's bookkeeping. No TLS.
 */
void gs_conn__open_memory(struct gs_conn *c, struct gs_conn_mem *m, const char *peer, int connecting);

/*
 * What a socket read gives: nread > 0 bytes at data, 0 nothing, UV_EOF the peer's end, another libuv
 * code a read error. The libuv read callback is this function. As with libuv, a driver calls it only
 * while c->reading (and never once c->closing).
 */
void gs_conn__received(struct gs_conn *c, const char *data, ssize_t nread);

/* A memory client's connect completed with status (0 or a libuv code): the connect callback's body. */
void gs_conn__connected(struct gs_conn *c, int status);

#endif
