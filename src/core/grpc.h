/*
 * grpc.h: a gRPC unary client over HTTP/2 (nghttp2) on a unix socket, on the libuv loop.
 *
 * One client talks to one socket path. It opens one connection when a call needs it and keeps it for
 * the calls after (HTTP/2 multiplexes them); when the connection fails every call on it fails, and the
 * next call opens a new one (so a peer that restarts, or a socket that appears later, is picked up).
 *
 *   call:  POST <method>, content-type: application/grpc, te: trailers, grpc-timeout: <deadline>m,
 *          body = one length-prefixed message (1 byte flag 0, 4 bytes big-endian length, the bytes)
 *   reply: :status 200, content-type application/grpc*, one length-prefixed message, then trailers
 *          grpc-status (and grpc-message); or a headers-only reply carrying grpc-status ("trailers-only")
 *
 * The client knows nothing of what the messages mean (core/: bytes in, bytes out).
 * Loop thread only; SIGPIPE must be ignored (main.c does), as a write to a peer that left is a plain error.
 * done callbacks never run from inside gs_grpc_call or gs_grpc_client_close: they are
 * delivered from the client's timer (or, for calls cancelled by gs_grpc_client_close, just before
 * close_cb).
 *
 * Invariants (GS_ASSERT): a call is on exactly one of the client's lists (in flight, or finished and
 * waiting for delivery); a finished call is detached from its HTTP/2 stream, so nothing the peer sends
 * later reaches it; the client has at most one connection that is not closing.
 */
#ifndef GS_CORE_GRPC_H
#define GS_CORE_GRPC_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* Default cap on one reply message (the client's max_msg when 0): 16 MiB. */
#define GS_GRPC_MAX_MSG_DEFAULT (16u * 1024 * 1024)
/* Cap on the header bytes of one reply (names + values, headers and trailers together). */
#define GS_GRPC_MAX_HEADERS     (16 * 1024)
/* Longest deadline: grpc-timeout carries at most 8 digits of milliseconds. */
#define GS_GRPC_MAX_DEADLINE_MS 99999999u

/* done's err when the peer answered with a grpc-status other than 0 (reply->status says which). */
#define GS_GRPC_ESTATUS (-EREMOTEIO)

struct gs_grpc_client; /* opaque */

struct gs_grpc_client_opts {
	const char *path; /* the unix socket (copied) */
	size_t max_msg;   /* cap on a reply message; 0: GS_GRPC_MAX_MSG_DEFAULT */
};

struct gs_grpc_reply {
	int status;          /* grpc-status; -1 when none arrived */
	const char *message; /* grpc-message, percent-decoded, non-printable bytes as '?'; "" if none */
	const uint8_t *msg;  /* the reply message (without its 5-byte prefix), valid during done only */
	size_t len;
	const char *error; /* a readable reason when err != 0 (names the socket), "" otherwise */
};

/*
 * Called exactly once per call, reply never NULL. err:
 *   0                 a reply message and grpc-status 0 (reply->msg, reply->len)
 *   GS_GRPC_ESTATUS   grpc-status != 0 (reply->status, reply->message)
 *   -ENOENT           the socket does not exist (the peer is not running, or not mounted here)
 *   -ECONNREFUSED     nobody listens on it (a stale socket file)
 *   -EACCES           not allowed to connect
 *   -ECONNRESET       the peer closed the connection or reset it before the reply was complete
 *   -ETIMEDOUT        the deadline passed (the stream is cancelled)
 *   -E2BIG            the reply message is over max_msg, or its headers over GS_GRPC_MAX_HEADERS
 *   -EPROTO           not a gRPC reply: not HTTP/2, an HTTP status other than 200, another
 *                     content-type, no grpc-status, a compressed, truncated or second message, a
 *                     stream reset by the peer
 *   -ECANCELED        gs_grpc_client_close
 *   another libuv code from connect, read or write
 */
typedef void (*gs_grpc_done_cb)(int err, const struct gs_grpc_reply *reply, void *ud);

/* Allocates the client; no I/O yet. 0 or -EINVAL (no path, or one too long for a unix socket). */
int gs_grpc_client_new(uv_loop_t *loop, const struct gs_grpc_client_opts *opts, struct gs_grpc_client **out);

/*
 * Starts a unary call: method is the HTTP/2 path ("/package.Service/Method"), msg[0..len) the request
 * message (copied), deadline_ms in 1..GS_GRPC_MAX_DEADLINE_MS counts from now and covers the connect
 * too. 0: done will be called; <0 (-EINVAL for bad arguments, -ECANCELED when closing, -E2BIG for a
 * request over max_msg): done will not be called.
 */
int gs_grpc_call(struct gs_grpc_client *cl, const char *method, const void *msg, size_t len, unsigned deadline_ms,
		 gs_grpc_done_cb done, void *ud);

struct gs_grpc_client_stats {
	uint64_t calls, failed, conns; /* calls started, calls whose done saw err != 0, connections opened */
	unsigned inflight;
};
void gs_grpc_client_stats(const struct gs_grpc_client *cl, struct gs_grpc_client_stats *st);

/*
 * Cancels every call (their done callbacks run with -ECANCELED, after the handles are closed and just
 * before close_cb), closes the connection and the timer, frees the client, then close_cb(ud).
 * Never synchronous. No other call on cl afterwards.
 */
void gs_grpc_client_close(struct gs_grpc_client *cl, void (*close_cb)(void *ud), void *ud);

#endif
