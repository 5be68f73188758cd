/*
 * fuzz_http_server.c: libFuzzer driver for the HTTP/1.1 server's request path (src/core/http.h,
 * http_server.c over conn.c and llhttp), end to end over a loopback TCP connection in one libuv loop:
 * the server only accepts from its own listener, so the harness is a client of it. Per input: one
 * connection, the bytes written, the write side shut (so every input ends: the server can always tell
 * that nothing more comes), everything the server sends read until it closes.
 *
 * The first byte picks the setting:
 *   0..127   the whole input is what the client sends (seeds are raw requests: they start with a
 *            method's capital letter), in one write, to the server with default limits; the handler
 *            answers at once.
 *   128..255 the rest is what the client sends, and the bits of the byte say how:
 *            0x01  the server with small limits (256 header bytes, 4 headers, a 32-byte target, a
 *                  64-byte body) instead of the defaults
 *            0x02  the handler answers on the next loop turn instead of from inside its callback
 *            0x04  the client writes in pieces of 1 to 8 bytes (sizes from a hash of the input), one
 *                  per loop turn, so that the server reads the request split at many places
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
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llhttp.h>
#include <uv.h>

#include "core/buf.h"
#include "core/http.h"
#include "core/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(e) ((e) ? (void)0 : (fprintf(stderr, "fuzz_http_server: check failed: %s\n", #e), abort()))
#define WATCHDOG_MS 5000
#define MAX_ANSWERS 1024 /* pipelined requests in one input: at least 18 bytes each */

static const size_t SMALL_URL = 32;

static uv_loop_t loop;
static struct gs_http_server *srv[2]; /* default limits, small limits */
static uv_timer_t watchdog, later;    /* later: the deferred answer */

/* The harness's client: one connection per input. */
static struct {
	uv_tcp_t tcp;
	uv_connect_t creq;
	uv_write_t wreq;
	uv_shutdown_t sreq;
	uv_idle_t pacer;
	const char *data;
	size_t len, off;
	uint32_t seed;
	int pieces, writing, write_failed, shut, open, closed;
	struct gs_buf recv;
} cli;

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

static void cli_closed(uv_handle_t *hd)
{
	(void)hd;
	cli.closed = 1;
}

static void cli_close(void)
{
	if (!cli.open)
		return;
	cli.open = 0;
	uv_idle_stop(&cli.pacer);
	uv_close((uv_handle_t *)&cli.tcp, cli_closed);
}

static void cli_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *b)
{
	static char buf[64 * 1024];
	(void)hd;
	(void)suggested;
	b->base = buf;
	b->len = sizeof(buf);
}

static void cli_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	(void)s;
	if (n < 0) { /* EOF, or a reset: either way the server is done with us */
		cli_close();
		return;
	}
	CHECK(gs_buf_append(&cli.recv, b->base, (size_t)n) == 0);
}

static void cli_shut(uv_shutdown_t *req, int status)
{
	(void)req;
	(void)status;
}

static void cli_write_next(void);

static void cli_wrote(uv_write_t *req, int status)
{
	(void)req;
	cli.writing = 0;
	if (status < 0) {
		cli.write_failed = 1; /* the server closed first; keep reading what it said */
		uv_idle_stop(&cli.pacer);
		return;
	}
	if (!cli.pieces)
		cli_write_next();
}

/* Writes the next piece, or shuts the write side once everything is written. */
static void cli_write_next(void)
{
	if (!cli.open || cli.writing || cli.write_failed || cli.shut)
		return;
	if (cli.off == cli.len) {
		cli.shut = 1;
		uv_idle_stop(&cli.pacer);
		if (uv_shutdown(&cli.sreq, (uv_stream_t *)&cli.tcp, cli_shut) < 0)
			cli.write_failed = 1;
		return;
	}
	size_t n = cli.len - cli.off;
	if (cli.pieces) {
		cli.seed ^= cli.seed << 13;
		cli.seed ^= cli.seed >> 17;
		cli.seed ^= cli.seed << 5;
		if (n > 1 + cli.seed % 8)
			n = 1 + cli.seed % 8;
	}
	uv_buf_t b = uv_buf_init((char *)cli.data + cli.off, (unsigned)n);
	cli.off += n;
	cli.writing = 1;
	if (uv_write(&cli.wreq, (uv_stream_t *)&cli.tcp, &b, 1, cli_wrote) < 0) {
		cli.writing = 0;
		cli.write_failed = 1;
	}
}

static void cli_pace(uv_idle_t *i)
{
	(void)i;
	cli_write_next();
}

static void cli_connected(uv_connect_t *req, int status)
{
	(void)req;
	if (status < 0) {
		fprintf(stderr, "fuzz_http_server: connect: %s\n", uv_strerror(status));
		abort(); /* the machine, not the input: out of ports? */
	}
	CHECK(uv_read_start((uv_stream_t *)&cli.tcp, cli_alloc, cli_read) == 0);
	if (cli.pieces)
		uv_idle_start(&cli.pacer, cli_pace);
	else
		cli_write_next();
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
		dump("sent", cli.data, cli.len);
		dump("received", cli.recv.data, cli.recv.len);
		fprintf(stderr, "handled %u, rejected %llu\n", h.n, (unsigned long long)rejected);
	}
	resp.finals = 0;
	llhttp_init(&p, HTTP_RESPONSE, &settings);
	if (cli.recv.len) {
		CHECK(cli.recv.len >= 12 && memcmp(cli.recv.data, "HTTP/1.1 ", 9) == 0);
		enum llhttp_errno e = llhttp_execute(&p, cli.recv.data, cli.recv.len);
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
	fprintf(stderr, "fuzz_http_server: no end after %d ms (client open %d, written %zu/%zu, held %p)\n",
		WATCHDOG_MS, cli.open, cli.off, cli.len, (void *)h.held);
	abort();
}

static void init(void)
{
	signal(SIGPIPE, SIG_IGN);
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
	uv_idle_init(&loop, &cli.pacer);
	gs_buf_init(&cli.recv, 4 * 1024 * 1024);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct gs_http_server_stats before, after, other;
	struct sockaddr_in addr;

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
	cli.data = req;
	cli.len = len;
	cli.off = 0;
	cli.pieces = flags & 0x04;
	cli.seed = 2166136261u;
	for (size_t i = 0; i < size; i++)
		cli.seed = (cli.seed ^ data[i]) * 16777619u;
	if (!cli.seed)
		cli.seed = 1;
	cli.writing = cli.write_failed = cli.shut = cli.closed = 0;
	gs_buf_reset(&cli.recv);

	gs_http_server_stats(s, &before);
	CHECK(uv_tcp_init(&loop, &cli.tcp) == 0);
	cli.open = 1;
	uv_ip4_addr("127.0.0.1", gs_http_server_port(s), &addr);
	CHECK(uv_tcp_connect(&cli.creq, &cli.tcp, (const struct sockaddr *)&addr, cli_connected) == 0);
	uv_timer_start(&watchdog, watchdog_fired, WATCHDOG_MS, 0);
	for (;;) {
		gs_http_server_stats(s, &after);
		if (cli.closed && after.conns_open == 0 && !h.held && !uv_is_active((uv_handle_t *)&later))
			break;
		uv_run(&loop, UV_RUN_ONCE);
	}
	uv_timer_stop(&watchdog);
	gs_http_server_stats(srv[!(flags & 1)], &other);
	CHECK(other.conns_open == 0);
	CHECK(after.conns_total == before.conns_total + 1 && after.requests_total == before.requests_total + h.n);
	check_responses(after.rejected_total - before.rejected_total);
	return 0;
}
