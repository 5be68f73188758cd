/*
 * fuzz_http_server.c: libFuzzer driver for the HTTP/1.1 server's request path (src/core/http.h,
 * http_server.c over conn.c and llhttp), end to end in one libuv loop, from memory: per input one
 * connection through the memory transport (conn.h), which the server admits as it does an accepted
 * socket (gs_http_server__accept_memory) and which gets its bytes through gs_conn__received, the
 * function the daemon's read callback calls. The harness plays the kernel and the client: it hands the
 * bytes over only while the connection is reading, as a socket read would (up to 64 KiB at a time),
 * then the end of input (UV_EOF: the client shut its write side, so every input ends: the server can
 * always tell that nothing more comes), and takes what the server writes from the transport's buffer
 * until the server closes. No socket per input: the TCP stack used to take most of the time.
 *
 * The first byte picks the setting:
 *   0..127   the whole input is what the client sends (seeds are raw requests: they start with a
 *            method's capital letter), in one write, to the server with default limits; the handler
 *            answers at once.
 *   128..255 the rest is what the client sends, and the bits of the byte say how:
 *            0x01  the server with small limits (256 header bytes, 4 headers, a 32-byte target, a
 *                  64-byte body) instead of the defaults
 *            0x02  the handler answers on the next loop turn instead of from inside its callback
 *            0x04  the client sends in pieces of 1 to 8 bytes (sizes from a hash of the input), one
 *                  read per loop turn, so that the server reads the request split at many places
 *            0x18  the answer: 200 with a summary of the request, 204, 404 with extra headers, or 200
 *                  echoing the request's body under its own Content-Type
 * Invariants (abort() on a violation, and a watchdog aborts an input that takes over 5 s):
 *   - the connection ends: the server answers or closes, never hangs, and releases it (no connection
 *     left open, no request left held);
 *   - what the client receives is a well-formed sequence of HTTP/1.1 responses (parsed with llhttp,
 *     a HEAD request's answer without its body), nothing after the last one;
 *   - one final response per request the handler saw, with the status it chose, in order, plus at
 *     most one refusal (>= 400, counted by the server as rejected) at the end;
 *   - what the handler gets holds together: a method, a path without '?', the query, a body
 *     NUL-terminated at its length, the target within the server's limit.
 *
 * Build and run (from the repository root; `make fuzz` does both for every harness):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -Isrc \
 *     -I/usr/share/include/llhttp tests/fuzz/fuzz_http_server.c src/core/http_server.c src/core/conn.c \
 *     src/core/tls.c src/core/buf.c src/core/log.c src/core/options.c /usr/share/llhttp/llhttp.c \
 *     /usr/share/llhttp/api.c /usr/share/llhttp/http.c \
 *     -luv -lmbedtls -lmbedx509 -lmbedcrypto -o build/fuzz_http_server
 *   mkdir -p build/corpus/http_server
 *   build/fuzz_http_server -max_total_time=60 -timeout=10 -dict=tests/fuzz/http.dict \
 *     build/corpus/http_server tests/fuzz/corpus/http_server
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

#define CHECK(e) ((e) ? (void)0 : (fprintf(stderr, "fuzz_http_server: check failed: %s\n", #e), abort()))
#define WATCHDOG_MS 5000
#define MAX_ANSWERS 1024 /* pipelined requests in one input: at least 18 bytes each */

static const size_t SMALL_URL = 32;

static uv_loop_t loop;
static struct gs_http_server *srv[2]; /* default limits, small limits */
static uv_timer_t watchdog, later;    /* later: the deferred answer */

/* The harness's client: the other end of one memory connection per input. */
static struct {
	struct gs_conn_mem m; /* m.out: what the server sent */
	struct pieces in; /* what it sends */
	int eof_sent;
} cli;
#define READ_MAX (64 * 1024) /* a socket read's size in conn.c */
#define PEER "127.0.0.1:40000"


/* The test's view of the handler's answers. */
static struct {
	int flags;
	unsigned n;                 /* requests the handler saw */
	int status[MAX_ANSWERS];    /* the status it answered each with */
	int head[MAX_ANSWERS];      /* whether it was a HEAD request */
	struct gs_http_server_req *held;
	size_t max_url;
} h;

/* ---- the handler ---------------------------------------------------------------------------------- */

/*
 * Answers request number i. Its status is recorded first: gs_http_respond resumes the connection, and
 * after a deferred answer the next pipelined request reaches on_request from inside it.
 */
static void answer(struct gs_http_server_req *r, unsigned i)
{
	static const struct gs_http_header extra[] = {{"X-Fuzz", "1"}, {"Retry-After", "3"}};
	char text[512];
	size_t blen;
	const char *body = gs_http_req_body(r, &blen);
	const char *ctype = gs_http_req_header(r, "Content-Type");
	int status, rc;

	switch ((h.flags >> 3) & 3) {
	case 0: {
		const char *host = gs_http_req_header(r, "host");
		int n = snprintf(text, sizeof(text), "%s %s ?%s body=%zu host=%s", gs_http_req_method(r),
				 gs_http_req_path(r), gs_http_req_query(r), blen, host ? host : "-");
		status = h.status[i] = 200;
		rc = gs_http_respond(r, status, "text/plain", text, n < (int)sizeof(text) ? (size_t)n : sizeof(text) - 1,
				     NULL, 0);
		break;
	}
	case 1:
		status = h.status[i] = 204;
		rc = gs_http_respond(r, status, NULL, NULL, 0, NULL, 0);
		break;
	case 2:
		status = h.status[i] = 404;
		rc = gs_http_respond(r, status, "text/plain", "nope\n", 5, extra, 2);
		break;
	default:
		status = h.status[i] = 200;
		rc = gs_http_respond(r, status, ctype ? ctype : "application/octet-stream", body, blen, NULL, 0);
		break;
	}
	CHECK(rc == 0); /* the connection is alive: the client never leaves before the server */
}

static void later_fired(uv_timer_t *t)
{
	struct gs_http_server_req *r = h.held;
	(void)t;
	h.held = NULL;
	if (r)
		answer(r, h.n - 1);
}

static void on_request(struct gs_http_server_req *r, void *ud)
{
	size_t blen;
	(void)ud;
	CHECK(h.n < MAX_ANSWERS && !h.held);
	const char *method = gs_http_req_method(r), *path = gs_http_req_path(r), *query = gs_http_req_query(r);
	const char *body = gs_http_req_body(r, &blen);
	CHECK(method && method[0] && path && query && body && body[blen] == '\0');
	/* The target was path?query within max_url bytes; the first '?' became the end of the path. */
	CHECK(!strchr(path, '?') && strlen(path) + (query[0] ? 1 + strlen(query) : 0) <= h.max_url);
	h.head[h.n] = strcmp(method, "HEAD") == 0;
	h.status[h.n] = 0;
	h.n++;
	if (h.flags & 0x02) {
		h.held = r;
		uv_timer_start(&later, later_fired, 0, 0);
	} else {
		answer(r, h.n - 1);
	}
}

/* ---- the client ----------------------------------------------------------------------------------- */

/*
 * One read's worth for the server, if it is reading (as libuv delivers only then): the next piece, or
 * everything left (up to READ_MAX), or once all is sent the end of input. 1 if it fed something.
 */
static int cli_feed(void)
{
	struct gs_conn *c = cli.m.conn;
	if (!c || !c->reading || cli.eof_sent)
		return 0;
	if (cli.in.off == cli.in.len) {
		cli.eof_sent = 1;
		gs_conn__received(c, NULL, UV_EOF);
		return 1;
	}
	const char *at;
	size_t n = pieces_take(&cli.in, &at, READ_MAX);
	gs_conn__received(c, at, (ssize_t)n);
	return 1;
}

/* ---- checking what came back ---------------------------------------------------------------------- */

static struct {
	unsigned finals; /* final (non-1xx) responses seen */
} resp;

static int resp_headers_complete(llhttp_t *p)
{
	if (p->status_code < 200)
		return 0; /* 100 Continue: no body, the real answer follows */
	/* A handler's answer to HEAD has a Content-Length but no body. */
	return resp.finals < h.n && h.head[resp.finals] ? 1 : 0;
}

static int resp_message_complete(llhttp_t *p)
{
	if (p->status_code < 200)
		return 0;
	if (resp.finals < h.n)
		CHECK(p->status_code == h.status[resp.finals]);
	else
		CHECK(p->status_code >= 400); /* the refusal */
	resp.finals++;
	return 0;
}

/* GS_FUZZ_VERBOSE=1: what went over the wire, for reading a crash file. */
static void dump(const char *what, const char *p, size_t n)
{
	fprintf(stderr, "%s (%zu bytes): \"", what, n);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '\n')
			fputs("\\n\"\n  \"", stderr);
		else if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			fprintf(stderr, "\\x%02x", c);
		else
			fputc(c, stderr);
	}
	fputs("\"\n", stderr);
}

static void check_responses(uint64_t rejected)
{
	static const llhttp_settings_t settings = {
		.on_headers_complete = resp_headers_complete,
		.on_message_complete = resp_message_complete,
	};
	llhttp_t p;

	if (getenv("GS_FUZZ_VERBOSE")) {
		dump("sent", cli.in.data, cli.in.len);
		dump("received", cli.m.out.data, cli.m.out.len);
		fprintf(stderr, "handled %u, rejected %llu\n", h.n, (unsigned long long)rejected);
	}
	resp.finals = 0;
	llhttp_init(&p, HTTP_RESPONSE, &settings);
	if (cli.m.out.len) {
		CHECK(cli.m.out.len >= 12 && memcmp(cli.m.out.data, "HTTP/1.1 ", 9) == 0);
		enum llhttp_errno e = llhttp_execute(&p, cli.m.out.data, cli.m.out.len);
		if (e != HPE_OK) {
			fprintf(stderr, "fuzz_http_server: bad response stream: %s (%s)\n", llhttp_errno_name(e),
				llhttp_get_error_reason(&p));
			abort();
		}
	}
	CHECK(llhttp_finish(&p) == HPE_OK); /* nothing cut short: every answer is whole */
	CHECK(rejected <= 1);
	CHECK(resp.finals == h.n + rejected);
}

/* ---- the harness ---------------------------------------------------------------------------------- */

static void watchdog_fired(uv_timer_t *t)
{
	(void)t;
	fprintf(stderr, "fuzz_http_server: no end after %d ms (connection open %d, sent %zu/%zu, held %p)\n",
		WATCHDOG_MS, cli.m.conn != NULL, cli.in.off, cli.in.len, (void *)h.held);
	abort();
}

static void init(void)
{
	gs_log_setup(GS_LOG_ERROR, GS_LOG_TEXT);
	CHECK(uv_loop_init(&loop) == 0);
	struct gs_http_server_opts o = {.addr = "127.0.0.1:0"};
	CHECK(gs_http_server_start(&loop, &o, on_request, NULL, &srv[0]) == 0);
	struct gs_http_server_opts small = {
		.addr = "127.0.0.1:0",
		.max_header_bytes = 256,
		.max_headers = 4,
		.max_url = SMALL_URL,
		.max_body = 64,
	};
	CHECK(gs_http_server_start(&loop, &small, on_request, NULL, &srv[1]) == 0);
	uv_timer_init(&loop, &watchdog);
	uv_timer_init(&loop, &later);
	gs_buf_init(&cli.m.out, 4 * 1024 * 1024);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct gs_http_server_stats before, after, other;

	if (!ready) {
		init();
		ready = 1;
	}
	int mode = size > 0 && data[0] >= 128;
	int flags = mode ? data[0] & 0x7f : 0;
	const char *req = (const char *)data + mode;
	size_t len = size - (size_t)mode;
	struct gs_http_server *s = srv[flags & 1];

	memset(&h, 0, sizeof(h));
	h.flags = flags;
	h.max_url = flags & 1 ? SMALL_URL : 2048;
	pieces_start(&cli.in, req, len, flags & 0x04, data, size);
	cli.eof_sent = 0;
	gs_buf_reset(&cli.m.out);

	gs_http_server_stats(s, &before);
	CHECK(gs_http_server__accept_memory(s, &cli.m, PEER) == 0);
	uv_timer_start(&watchdog, watchdog_fired, WATCHDOG_MS, 0);
	for (;;) {
		gs_http_server_stats(s, &after);
		if (!cli.m.conn && after.conns_open == 0 && !h.held && !uv_is_active((uv_handle_t *)&later))
			break;
		/* Never blocks while there is something to hand over; else waits for the loop (the
		 * deferred answer, a close, a deadline, or the watchdog). */
		uv_run(&loop, cli_feed() ? UV_RUN_NOWAIT : UV_RUN_ONCE);
	}
	uv_run(&loop, UV_RUN_NOWAIT); /* the closed connection's handles: freed within this input */
	uv_timer_stop(&watchdog);
	gs_http_server_stats(srv[!(flags & 1)], &other);
	CHECK(other.conns_open == 0);
	CHECK(after.conns_total == before.conns_total + 1 && after.requests_total == before.requests_total + h.n);
	check_responses(after.rejected_total - before.rejected_total);
	return 0;
}
