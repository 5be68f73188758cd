/*
 * fuzz_http_client.c: libFuzzer driver for the HTTP/1.1 client's response path (src/core/http.h,
 * http_client.c over conn.c and llhttp), end to end in one libuv loop, from memory: the client opens
 * its connections through the memory transport (conn.h, gs_http_client__use_memory), and a scripted
 * server in the harness plays the kernel and the apiserver. It completes each connect
 * (gs_conn__connected, the connect callback's body), waits for the request in the transport's
 * buffer, answers with the fuzzer's bytes through gs_conn__received (the function the daemon's read
 * callback calls), only while the connection is reading and up to 64 KiB at a time as a socket read
 * would, then ends its side (UV_EOF), so that every input ends. Connections after the first (a retry,
 * a request behind a closed connection) are closed by that server unanswered. No socket per input:
 * the TCP stack used to take most of the time.
 *
 * The first byte picks the setting:
 *   0..127   the whole input is the server's answer (seeds are raw responses: they start with 'H'),
 *            written at once, to one buffered GET.
 *   128..255 the rest is the answer, and the bits of the byte say how it is asked and read:
 *            0x01  the request streams its body (on_data, as a watch does: a 2xx body, de-chunked,
 *                  arrives piece by piece)
 *            0x02  ... and cancels the call from inside the first on_data
 *            0x04  the server sends in pieces of 1 to 8 bytes (sizes from a hash of the input), one
 *                  read per loop turn, so the client reads the answer split at many places
 *            0x08  a 16-byte cap on a buffered body (-E2BIG past it)
 *            0x10  two requests on a pool of one connection: the second waits, then rides on the
 *                  same connection (the answer may hold two responses) or, once it is gone, on a new
 *                  one (retried once if it was lost on the reused connection)
 *            0x20  the client is closed (gs_http_client_close) as soon as the server has handed over
 *                  everything, before its end of input, whatever the client has made of it by then
 *            0x40  the requests are POSTs with a body
 * Invariants (abort() on a violation; a watchdog aborts an input that takes over 5 s):
 *   - every done callback runs exactly once per request, never from inside gs_http_send,
 *     gs_http_cancel or gs_http_client_close, and on_data never runs after it;
 *   - err 0 comes with a response (status 200..999, body NUL-terminated at body_len, a content type,
 *     Retry-After at most 3600 s) and any other err without one; a cancelled call ends -ECANCELED;
 *   - a successful call got exactly what llhttp, run on its own over the same bytes, finds there: the
 *     same status and the same (de-chunked) body, whether buffered or streamed, the n-th success
 *     being the n-th final response;
 *   - the pool ends empty and the client closes (close_cb runs), leaving no handle and no leak.
 *
 * Build and run (from the repository root; `make fuzz` does both for every harness):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -Isrc \
 *     -I/usr/share/include/llhttp tests/fuzz/fuzz_http_client.c src/core/http_client.c src/core/conn.c \
 *     src/core/tls.c src/core/buf.c src/core/log.c /usr/share/llhttp/llhttp.c /usr/share/llhttp/api.c \
 *     /usr/share/llhttp/http.c -luv -lmbedtls -lmbedx509 -lmbedcrypto -o build/fuzz_http_client
 *   mkdir -p build/corpus/http_client
 *   build/fuzz_http_client -max_total_time=60 -timeout=10 -dict=tests/fuzz/http.dict \
 *     build/corpus/http_client tests/fuzz/corpus/http_client
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llhttp.h>
#include <uv.h>

#include "core/buf.h"
#include "core/conn.h"
#include "core/http.h"
#include "core/log.h"

#include "pieces.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(e) ((e) ? (void)0 : (fprintf(stderr, "fuzz_http_client: check failed: %s\n", #e), abort()))
#define WATCHDOG_MS 5000
#define MAX_CALLS 2
#define MAX_SRV_CONNS 8
#define MAX_REF 8

static uv_loop_t loop;
static uv_timer_t watchdog;

/* ---- the scripted server -------------------------------------------------------------------------- */

#define READ_MAX (64 * 1024) /* a socket read's size in conn.c */
#define PORT 6443            /* no socket: only the client's peer name */

struct srv_conn {
	struct gs_conn_mem m; /* m.conn: the client's connection, NULL once it closed; m.out: what it wrote */
	int first;            /* the connection that gets the answer */
	int connected;        /* its connect completed */
	int started;          /* the request arrived: answering (first) or closing (the others) */
	int eof_sent;
};

static struct {
	struct srv_conn conns[MAX_SRV_CONNS];
	int n_accepted;
	struct pieces in; /* the answer */
	int all_written; /* every byte of the answer is handed over (or the connection is gone) */
} srv;

/* The client opens a connection (gs_http_client__use_memory): the next slot is its other end. */
static struct gs_conn_mem *srv_open(void *ud)
{
	(void)ud;
	CHECK(srv.n_accepted < MAX_SRV_CONNS);
	struct srv_conn *sc = &srv.conns[srv.n_accepted];
	sc->first = srv.n_accepted == 0;
	sc->connected = sc->started = sc->eof_sent = 0;
	gs_buf_reset(&sc->m.out);
	srv.n_accepted++;
	return &sc->m;
}

static int srv_n_open(void)
{
	int n = 0;
	for (int i = 0; i < srv.n_accepted; i++)
		n += srv.conns[i].m.conn != NULL;
	return n;
}

/*
 * One step of one connection: complete its connect; or, once its request arrived and while it reads
 * (libuv delivers only then), hand over the next piece of the answer (the first connection), or the
 * end of input (after the answer, or at once for the others). 1 if it did something.
 */
static int srv_step_conn(struct srv_conn *sc)
{
	struct gs_conn *c = sc->m.conn;
	if (!c) {
		if (sc->first)
			srv.all_written = 1; /* the client closed it: nothing more goes over */
		return 0;
	}
	if (!sc->connected) {
		sc->connected = 1;
		gs_conn__connected(c, 0);
		return 1;
	}
	if (!sc->started && sc->m.out.len > 0)
		sc->started = 1;
	if (!sc->started || !c->reading || sc->eof_sent)
		return 0;
	if (!sc->first || srv.in.off == srv.in.len) {
		if (sc->first && !srv.all_written) {
			srv.all_written = 1; /* let the 0x20 close happen before the end of input */
			return 1;
		}
		sc->eof_sent = 1;
		gs_conn__received(c, NULL, UV_EOF);
		return 1;
	}
	const char *at;
	size_t n = pieces_take(&srv.in, &at, READ_MAX);
	gs_conn__received(c, at, (ssize_t)n);
	return 1;
}

static int srv_step(void)
{
	int did = 0;
	for (int i = 0; i < srv.n_accepted; i++)
		did |= srv_step_conn(&srv.conns[i]);
	return did;
}

/* ---- what llhttp alone makes of the answer -------------------------------------------------------- */

static struct {
	int n;
	int status[MAX_REF];
	struct gs_buf body[MAX_REF];
	struct gs_buf cur;
} ref;

static int ref_headers_complete(llhttp_t *p)
{
	(void)p;
	gs_buf_reset(&ref.cur);
	return 0;
}

static int ref_body(llhttp_t *p, const char *at, size_t len)
{
	(void)p;
	return gs_buf_append(&ref.cur, at, len) < 0 ? -1 : 0;
}

static int ref_message_complete(llhttp_t *p)
{
	if (p->status_code < 200 || ref.n == MAX_REF)
		return 0;
	ref.status[ref.n] = p->status_code;
	gs_buf_reset(&ref.body[ref.n]);
	if (ref.cur.len)
		CHECK(gs_buf_append(&ref.body[ref.n], ref.cur.data, ref.cur.len) == 0);
	ref.n++;
	return 0;
}

static void reference(const char *data, size_t len)
{
	static const llhttp_settings_t settings = {
		.on_headers_complete = ref_headers_complete,
		.on_body = ref_body,
		.on_message_complete = ref_message_complete,
	};
	llhttp_t p;
	ref.n = 0;
	gs_buf_reset(&ref.cur);
	llhttp_init(&p, HTTP_RESPONSE, &settings);
	if (llhttp_execute(&p, data, len) == HPE_OK)
		llhttp_finish(&p); /* a body framed by the end of the connection ends here */
}

/* ---- the client under test ------------------------------------------------------------------------ */

static struct {
	int flags;
	struct gs_http_client *cl;
	struct gs_http_call *call[MAX_CALLS];
	int n_calls;
	int done[MAX_CALLS];
	int err[MAX_CALLS];
	int status[MAX_CALLS];
	struct gs_buf body[MAX_CALLS];  /* buffered body, or what on_data delivered */
	int cancelled[MAX_CALLS];
	int in_api;                     /* inside a gs_http_* call: done must not run */
	int closed;                     /* close_cb ran */
	int close_called;
	uint64_t opened;                /* connections the client opened, known once it closes */
} t;

static int call_index(const struct gs_http_call *call)
{
	for (int i = 0; i < t.n_calls; i++)
		if (t.call[i] == call)
			return i;
	abort();
}

static void on_data(struct gs_http_call *call, const char *data, size_t len, void *ud)
{
	int i = (int)(intptr_t)ud;
	CHECK(i >= 0 && i < t.n_calls && t.call[i] == call && !t.done[i] && !t.cancelled[i]);
	int st = gs_http_call_status(call);
	CHECK(st >= 200 && st < 300 && len > 0);
	CHECK(gs_buf_append(&t.body[i], data, len) == 0);
	if (t.flags & 0x02) {
		t.cancelled[i] = 1;
		t.in_api++;
		gs_http_cancel(call);
		gs_http_cancel(call); /* twice is harmless */
		t.in_api--;
	}
}

static void on_done(struct gs_http_call *call, int err, const struct gs_http_response *r, void *ud)
{
	int i = (int)(intptr_t)ud;
	CHECK(i >= 0 && i < t.n_calls && t.call[i] == call && call_index(call) == i);
	CHECK(!t.in_api);     /* never from inside the API call that caused it */
	CHECK(t.done[i] == 0); /* exactly once */
	t.done[i] = 1;
	t.err[i] = err;
	CHECK(strlen(gs_http_call_error(call)) < 160);
	if (err == 0) {
		CHECK(r && r->status >= 200 && r->status <= 999 && r->body && r->body[r->body_len] == '\0');
		CHECK(r->content_type && r->retry_after <= 3600);
		t.status[i] = r->status;
		if ((t.flags & 0x01) && r->status < 300) {
			CHECK(r->body_len == 0); /* streamed: the body went to on_data */
		} else {
			CHECK(t.body[i].len == 0);
			if (r->body_len)
				CHECK(gs_buf_append(&t.body[i], r->body, r->body_len) == 0);
		}
		if (t.flags & 0x08)
			CHECK((t.flags & 0x01 && r->status < 300) || r->body_len <= 16);
	} else {
		CHECK(r == NULL && err < 0);
		if (t.cancelled[i])
			CHECK(err == -ECANCELED);
	}
}

static void on_closed(void *ud)
{
	(void)ud;
	CHECK(!t.in_api);
	t.closed = 1;
}

static void close_client(void)
{
	struct gs_http_client_stats st;
	if (t.close_called)
		return;
	t.close_called = 1;
	gs_http_client_stats(t.cl, &st);
	t.opened = st.conns_opened_total; /* no connection is opened once closing */
	t.in_api++;
	gs_http_client_close(t.cl, on_closed, NULL);
	t.in_api--;
}

/* ---- the harness ---------------------------------------------------------------------------------- */

static void watchdog_fired(uv_timer_t *w)
{
	(void)w;
	fprintf(stderr,
		"fuzz_http_client: no end after %d ms (done %d/%d, closed %d, server sent %zu/%zu, "
		"connections accepted %d of %llu, open %d)\n",
		WATCHDOG_MS, t.done[0] + t.done[1], t.n_calls, t.closed, srv.in.off, srv.in.len, srv.n_accepted,
		(unsigned long long)t.opened, srv_n_open());
	abort();
}

static void init(void)
{
	gs_log_setup(GS_LOG_ERROR, GS_LOG_TEXT);
	CHECK(uv_loop_init(&loop) == 0);
	uv_timer_init(&loop, &watchdog);
	for (int i = 0; i < MAX_SRV_CONNS; i++)
		gs_buf_init(&srv.conns[i].m.out, 1024 * 1024);
	for (int i = 0; i < MAX_REF; i++)
		gs_buf_init(&ref.body[i], 0);
	gs_buf_init(&ref.cur, 0);
	for (int i = 0; i < MAX_CALLS; i++)
		gs_buf_init(&t.body[i], 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready) {
		init();
		ready = 1;
	}
	int mode = size > 0 && data[0] >= 128;
	int flags = mode ? data[0] & 0x7f : 0;

	srv.n_accepted = 0;
	pieces_start(&srv.in, (const char *)data + mode, size - (size_t)mode, flags & 0x04, data, size);
	srv.all_written = 0;
	reference(srv.in.data, srv.in.len);

	t.flags = flags;
	t.n_calls = 0;
	t.closed = t.close_called = t.in_api = 0;
	for (int i = 0; i < MAX_CALLS; i++) {
		t.call[i] = NULL;
		t.done[i] = t.err[i] = t.status[i] = t.cancelled[i] = 0;
		gs_buf_reset(&t.body[i]);
	}
	struct gs_http_client_opts o = {
		.host = "127.0.0.1",
		.port = PORT,
		.max_conns = 1,
		.max_body = flags & 0x08 ? 16 : 0,
	};
	CHECK(gs_http_client_new(&loop, &o, &t.cl) == 0);
	gs_http_client__use_memory(t.cl, srv_open, NULL);
	const struct gs_http_header hdr[] = {{"Accept", "application/json"}};
	struct gs_http_request req = {
		.method = flags & 0x40 ? "POST" : "GET",
		.path = "/api/v1/pods?watch=1",
		.headers = hdr,
		.n_headers = 1,
		.body = flags & 0x40 ? "{}" : NULL,
		.body_len = flags & 0x40 ? 2 : 0,
		.on_data = flags & 0x01 ? on_data : NULL,
	};
	int n = flags & 0x10 ? 2 : 1;
	for (int i = 0; i < n; i++) {
		t.in_api++;
		CHECK(gs_http_send(t.cl, &req, on_done, (void *)(intptr_t)i, &t.call[i]) == 0);
		t.in_api--;
		t.n_calls++;
	}

	uv_timer_start(&watchdog, watchdog_fired, WATCHDOG_MS, 0);
	for (;;) {
		int all_done = 1;
		for (int i = 0; i < t.n_calls; i++)
			all_done &= t.done[i];
		if ((flags & 0x20) && srv.all_written)
			close_client();
		if (all_done && !t.close_called) {
			struct gs_http_client_stats st;
			gs_http_client_stats(t.cl, &st);
			CHECK(st.inflight == 0 && st.queued == 0 && st.conns_open <= 1);
			close_client();
		}
		/* Every connection the client made reached the server and is closed: none is left over
		 * for the next input. */
		if (t.closed && srv_n_open() == 0 && (uint64_t)srv.n_accepted == t.opened)
			break;
		/* Never blocks while the server has something to do; else waits for the loop (a deferred
		 * done, a close, a deadline, or the watchdog). */
		uv_run(&loop, srv_step() ? UV_RUN_NOWAIT : UV_RUN_ONCE);
	}
	uv_run(&loop, UV_RUN_NOWAIT); /* the closed connections' handles: freed within this input */
	uv_timer_stop(&watchdog);

	int successes = 0;
	for (int i = 0; i < t.n_calls; i++) {
		CHECK(t.done[i] == 1);
		if (t.err[i] != 0)
			continue;
		/* The n-th success is the n-th final response of the answer, as llhttp reads it. */
		CHECK(successes < ref.n);
		CHECK(t.status[i] == ref.status[successes]);
		CHECK(t.body[i].len == ref.body[successes].len &&
		      (t.body[i].len == 0 || memcmp(t.body[i].data, ref.body[successes].data, t.body[i].len) == 0));
		successes++;
	}
	return 0;
}
