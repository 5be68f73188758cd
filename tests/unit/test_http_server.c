/*
 * test_http_server.c: the HTTP/1.1 server's limits, keep-alive, pipelining and timeouts, with raw
 * TCP clients in the same loop (so what goes over the wire is exactly what the test wrote).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conn.h"
#include "core/http.h"
#include "core/log.h"
#include "core/tls.h"

struct raw {
	uv_tcp_t tcp;
	uv_connect_t creq;
	char buf[64 * 1024];
	size_t len;
	const char *send;
	size_t send_len;
	int closed; /* the server closed (EOF or reset) */
	int connected;
};

static uv_loop_t loop;
static struct gs_http_server *srv;
static int port;
static struct gs_http_server_req *held; /* for the async handler test */
static int handled;

static void on_request(struct gs_http_server_req *r, void *ud)
{
	handled++;
	const char *path = gs_http_req_path(r);
	if (!strcmp(path, "/later")) {
		held = r; /* answered by the test, maybe after the client left */
		return;
	}
	char body[256];
	size_t blen;
	gs_http_req_body(r, &blen);
	const char *h = gs_http_req_header(r, "x-test");
	int n = snprintf(body, sizeof(body), "%s %s q=%s body=%zu x=%s", gs_http_req_method(r), path,
			 gs_http_req_query(r), blen, h ? h : "-");
	gs_http_respond(r, 200, "text/plain", body, (size_t)n, NULL, 0);
}

static void start_server_with(const struct gs_http_server_opts *o, gs_http_handler_cb handler)
{
	assert_int_equal(gs_http_server_start(&loop, o, handler, NULL, &srv), 0);
	port = gs_http_server_port(srv);
	assert_true(port > 0);
}

static void start_server(const struct gs_http_server_opts *o)
{
	start_server_with(o, on_request);
}

static int setup(void **state)
{
	uv_loop_init(&loop);
	handled = 0;
	held = NULL;
	struct gs_http_server_opts o = {
		.addr = "127.0.0.1:0",
		.max_header_bytes = 1024,
		.max_headers = 8,
		.max_url = 64,
		.max_body = 100,
		.max_conns = 3,
		.header_timeout_ms = 150,
		.request_timeout_ms = 150,
		.idle_timeout_ms = 300,
	};
	start_server(&o);
	return 0;
}

static int closed_server;
static void on_srv_closed(void *ud)
{
	closed_server = 1;
}

/* Closes srv and runs the loop until its close callback has run. */
static void close_server(void)
{
	closed_server = 0;
	gs_http_server_close(srv, on_srv_closed, NULL);
	while (!closed_server)
		uv_run(&loop, UV_RUN_ONCE);
}

/* Closes a test's own server and puts back the one setup() started (saved in plain). */
static void restore_server(struct gs_http_server *plain)
{
	close_server();
	srv = plain;
	port = gs_http_server_port(srv);
}

static void walk_close(uv_handle_t *h, void *arg)
{
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static int teardown(void **state)
{
	closed_server = 0;
	gs_http_server_close(srv, on_srv_closed, NULL);
	uv_walk(&loop, walk_close, NULL); /* the raw clients */
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_true(closed_server);
	assert_int_equal(uv_loop_close(&loop), 0);
	return 0;
}

static void raw_alloc(uv_handle_t *h, size_t s, uv_buf_t *b)
{
	struct raw *c = h->data;
	b->base = c->buf + c->len;
	b->len = sizeof(c->buf) - 1 - c->len;
}

static void raw_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct raw *c = s->data;
	if (n < 0) {
		c->closed = 1;
		uv_read_stop(s);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
}

static void raw_written(uv_write_t *w, int status)
{
	free(w);
}

static void raw_write(struct raw *c, const char *data, size_t len)
{
	uv_write_t *w = malloc(sizeof(*w));
	uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
	assert_int_equal(uv_write(w, (uv_stream_t *)&c->tcp, &b, 1, raw_written), 0);
}

static void raw_connected(uv_connect_t *req, int status)
{
	struct raw *c = req->data;
	assert_int_equal(status, 0);
	c->connected = 1;
	uv_read_start((uv_stream_t *)&c->tcp, raw_alloc, raw_read);
	if (c->send_len)
		raw_write(c, c->send, c->send_len);
}

/* Connects a raw client from source address `from` (NULL: any) that sends data (may be NULL) once connected. */
static struct raw *raw_open_from(const char *from, const char *data, size_t len)
{
	struct raw *c = calloc(1, sizeof(*c));
	uv_tcp_init(&loop, &c->tcp);
	if (from) {
		struct sockaddr_in b;
		uv_ip4_addr(from, 0, &b);
		assert_int_equal(uv_tcp_bind(&c->tcp, (struct sockaddr *)&b, 0), 0);
	}
	c->tcp.data = c;
	c->creq.data = c;
	c->send = data;
	c->send_len = len;
	struct sockaddr_in a;
	uv_ip4_addr("127.0.0.1", port, &a);
	assert_int_equal(uv_tcp_connect(&c->creq, &c->tcp, (struct sockaddr *)&a, raw_connected), 0);
	return c;
}

static struct raw *raw_open(const char *data, size_t len)
{
	return raw_open_from(NULL, data, len);
}

static void raw_free_cb(uv_handle_t *h)
{
	free(h->data);
}

static void raw_close(struct raw *c)
{
	uv_close((uv_handle_t *)&c->tcp, raw_free_cb);
}

static uint64_t ms_now(void)
{
	return uv_hrtime() / 1000000;
}

/* Runs the loop until pred(c) or ms pass. */
static int run_until(struct raw *c, int (*pred)(struct raw *), unsigned ms)
{
	uint64_t end = ms_now() + ms;
	while (!pred(c) && ms_now() < end)
		uv_run(&loop, UV_RUN_NOWAIT);
	return pred(c);
}

static int is_closed(struct raw *c)
{
	return c->closed;
}

static int count_responses(const struct raw *c)
{
	int n = 0;
	for (const char *p = c->buf; (p = strstr(p, "HTTP/1.1 ")) != NULL; p++)
		n++;
	return n;
}

static int two_responses(struct raw *c)
{
	return count_responses(c) >= 2 && strstr(strstr(c->buf, "HTTP/1.1 ") + 1, "x=");
}

static void expect_status_and_close(const char *req, size_t len, const char *status)
{
	struct raw *c = raw_open(req, len);
	assert_true(run_until(c, is_closed, 2000));
	if (strncmp(c->buf, status, strlen(status)) != 0)
		fail_msg("want \"%s\", got \"%.60s\"", status, c->buf);
	assert_non_null(strstr(c->buf, "Connection: close"));
	raw_close(c);
}

static void test_keepalive_and_pipelining(void **state)
{
	const char *req = "GET /a?x=1 HTTP/1.1\r\nHost: t\r\nX-Test: one\r\n\r\n"
			  "POST /b HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello";
	struct raw *c = raw_open(req, strlen(req));
	assert_true(run_until(c, two_responses, 2000));
	assert_non_null(strstr(c->buf, "GET /a q=x=1 body=0 x=one"));
	assert_non_null(strstr(c->buf, "POST /b q= body=5 x=-"));
	assert_true(strstr(c->buf, "GET /a") < strstr(c->buf, "POST /b")); /* in order */
	assert_false(c->closed);                                           /* kept alive */
	struct gs_http_server_stats st;
	gs_http_server_stats(srv, &st);
	assert_int_equal(st.requests_total, 2);
	assert_int_equal(st.conns_total, 1); /* both on one connection */
	raw_close(c);
}

static int one_echo(struct raw *c)
{
	return count_responses(c) >= 1 && strstr(c->buf, "x=");
}

/* Draining (before a shutdown): a kept-alive connection gets its answer with Connection: close and
 * is closed after it; a new connection is still served, the same way. */
static void test_drain_closes_after_each_answer(void **state)
{
	const char *req = "GET /a?x=1 HTTP/1.1\r\nHost: t\r\n\r\n";
	struct raw *kept = raw_open(req, strlen(req));
	assert_true(run_until(kept, one_echo, 2000));
	assert_null(strstr(kept->buf, "Connection: close"));
	assert_false(run_until(kept, is_closed, 100)); /* kept alive */
	gs_http_server_drain(srv);
	kept->len = 0;
	kept->buf[0] = '\0';
	raw_write(kept, req, strlen(req));
	assert_true(run_until(kept, is_closed, 2000));
	assert_int_equal(count_responses(kept), 1);
	assert_non_null(strstr(kept->buf, "Connection: close"));
	raw_close(kept);
	struct raw *fresh = raw_open(req, strlen(req));
	assert_true(run_until(fresh, is_closed, 2000));
	assert_int_equal(strncmp(fresh->buf, "HTTP/1.1 200", 12), 0);
	assert_non_null(strstr(fresh->buf, "Connection: close"));
	raw_close(fresh);
}

static void test_head_has_no_body(void **state)
{
	const char *req = "HEAD /h HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
	struct raw *c = raw_open(req, strlen(req));
	assert_true(run_until(c, is_closed, 2000));
	assert_non_null(strstr(c->buf, "Content-Length: "));
	assert_null(strstr(c->buf, "HEAD /h q="));
	raw_close(c);
}

static int got_continue(struct raw *c)
{
	return strstr(c->buf, "HTTP/1.1 100 Continue\r\n\r\n") != NULL;
}

static int got_final(struct raw *c)
{
	return strstr(c->buf, "body=5") != NULL;
}

static void test_expect_continue(void **state)
{
	/* A client that waits for 100 Continue before its body gets it at once, then the answer. */
	const char *head = "POST /e HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n";
	struct raw *c = raw_open(head, strlen(head));
	assert_true(run_until(c, got_continue, 2000));
	assert_int_equal(handled, 0);
	raw_write(c, "hello", 5);
	assert_true(run_until(c, got_final, 2000));
	assert_true(strstr(c->buf, "HTTP/1.1 100") < strstr(c->buf, "HTTP/1.1 200"));
	raw_close(c);
}

static void test_limits(void **state)
{
	char big[2048];
	/* header bytes */
	int n = snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nX-Big: %01500d\r\n\r\n", 0);
	expect_status_and_close(big, (size_t)n, "HTTP/1.1 431");
	/* header count */
	n = snprintf(big, sizeof(big), "GET / HTTP/1.1\r\n");
	for (int i = 0; i < 12; i++)
		n += snprintf(big + n, sizeof(big) - (size_t)n, "X-%d: v\r\n", i);
	n += snprintf(big + n, sizeof(big) - (size_t)n, "\r\n");
	expect_status_and_close(big, (size_t)n, "HTTP/1.1 431");
	/* URL */
	n = snprintf(big, sizeof(big), "GET /%0100d HTTP/1.1\r\n\r\n", 0);
	expect_status_and_close(big, (size_t)n, "HTTP/1.1 414");
	/* declared body over the cap: refused before the body is sent */
	const char *cl = "POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n";
	expect_status_and_close(cl, strlen(cl), "HTTP/1.1 413");
	/* chunked body over the cap, counted as it comes */
	n = snprintf(big, sizeof(big),
		     "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n%0100d\r\n1\r\nx\r\n0\r\n\r\n", 0);
	expect_status_and_close(big, (size_t)n, "HTTP/1.1 413");
	/* bad framing: bare LF, obs-fold, garbage */
	const char *lf = "GET / HTTP/1.1\nHost: t\n\n";
	expect_status_and_close(lf, strlen(lf), "HTTP/1.1 400");
	const char *fold = "GET / HTTP/1.1\r\nX-A: 1\r\n  folded\r\n\r\n";
	expect_status_and_close(fold, strlen(fold), "HTTP/1.1 400");
	const char *junk = "\x16\x03\x01\x02\x00garbage\r\n\r\n";
	expect_status_and_close(junk, strlen(junk), "HTTP/1.1 400");
	assert_int_equal(handled, 0); /* the handler saw none of them */
	struct gs_http_server_stats st;
	gs_http_server_stats(srv, &st);
	assert_int_equal(st.rejected_total, 8);
}

static void run_for(unsigned ms)
{
	uint64_t end = ms_now() + ms;
	while (ms_now() < end)
		uv_run(&loop, UV_RUN_NOWAIT);
}

static uint64_t closed_for(enum gs_http_close_reason r)
{
	struct gs_http_server_stats st;
	gs_http_server_stats(srv, &st);
	return st.closed[r];
}

static int one_response(struct raw *c)
{
	return count_responses(c) >= 1;
}

static void test_request_and_idle_timeouts(void **state)
{
	/* A request head that never completes: 408 after header_timeout_ms, then closed. */
	const char *part = "GET / HTTP/1.1\r\nHost:";
	uint64_t t0 = ms_now();
	expect_status_and_close(part, strlen(part), "HTTP/1.1 408");
	assert_true(ms_now() - t0 >= 100);
	/* A silent new client is dropped after header_timeout_ms: its first request is late. */
	t0 = ms_now();
	struct raw *c = raw_open(NULL, 0);
	assert_true(run_until(c, is_closed, 2000));
	assert_true(ms_now() - t0 >= 100);
	assert_int_equal(c->len, 0);
	raw_close(c);
	run_for(20);
	assert_int_equal(closed_for(GS_HTTP_CLOSE_HEADER_TIMEOUT), 2); /* not idle_timeout: no request came */
	/* After an answer, a kept-alive client with nothing more to say has idle_timeout_ms. */
	const char *req = "GET /a HTTP/1.1\r\n\r\n";
	c = raw_open(req, strlen(req));
	assert_true(run_until(c, one_response, 2000));
	t0 = ms_now();
	assert_true(run_until(c, is_closed, 2000));
	assert_true(ms_now() - t0 >= 250);
	raw_close(c);
	/* A body that never completes: 408 after request_timeout_ms. */
	const char *body = "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc";
	expect_status_and_close(body, strlen(body), "HTTP/1.1 408");
	run_for(20);
	assert_int_equal(closed_for(GS_HTTP_CLOSE_HEADER_TIMEOUT), 2);
	assert_int_equal(closed_for(GS_HTTP_CLOSE_IDLE_TIMEOUT), 1);
	/* (the 408 for a partial head, then the silent client) */
	assert_int_equal(closed_for(GS_HTTP_CLOSE_REQUEST_TIMEOUT), 1);
}

/* Bytes trickled in never push the deadline back: it runs from the connection's start. */
static void test_deadline_not_refreshed(void **state)
{
	struct raw *c = raw_open(NULL, 0);
	/* 70 bytes at one per 20 ms: 1.4 s of trickle. A deadline pushed back by each byte would close
	 * the connection only ~150 ms after the last one; from the accept it closes after ~150 ms. */
	static const char req[] = "GET /slow HTTP/1.1\r\nX-Test: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	uint64_t t0 = ms_now();
	size_t i = 0;
	while (!c->closed && ms_now() - t0 < 2500) {
		run_for(20);
		if (c->connected && !c->closed && i < sizeof(req) - 1)
			raw_write(c, req + i++, 1); /* one byte every 20 ms, well inside any per-byte timeout */
	}
	uint64_t took = ms_now() - t0;
	assert_true(c->closed);
	assert_true(took >= 140 && took < 1000); /* header_timeout_ms = 150 from the accept, not from the last byte */
	assert_true(i > 3);
	assert_int_equal(strncmp(c->buf, "HTTP/1.1 408", 12), 0);
	raw_close(c);
	/* On a kept-alive connection the next request gets its own clock, from its first byte. */
	const char *first = "GET /a HTTP/1.1\r\n\r\n";
	c = raw_open(first, strlen(first));
	assert_true(run_until(c, one_response, 2000));
	run_for(200); /* idle for longer than header_timeout_ms: fine, idle_timeout_ms is 300 */
	assert_false(c->closed);
	raw_write(c, "GET /b HTTP/1.1\r\n", 17);
	t0 = ms_now();
	assert_true(run_until(c, is_closed, 2000));
	took = ms_now() - t0;
	if (!(took >= 120 && took < 1000))
		fail_msg("took %llu ms: %s", (unsigned long long)took, c->buf);
	assert_non_null(strstr(c->buf, "HTTP/1.1 408"));
	raw_close(c);
}

static int n_closed(struct raw **c, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += c[i]->closed;
	return k;
}

/* Runs the loop until the server holds n connections open, or 5 s pass (valgrind is slow): waits on the
 * server's count, not on a fixed time. */
static int open_conns_reach(size_t n)
{
	struct gs_http_server_stats st;
	uint64_t end = ms_now() + 5000;
	do {
		uv_run(&loop, UV_RUN_NOWAIT);
		gs_http_server_stats(srv, &st);
	} while (st.conns_open < n && ms_now() < end);
	return st.conns_open >= n;
}

/* At the cap the oldest evictable connection goes, not the new one. */
static void test_connection_cap_evicts_oldest(void **state)
{
	struct raw *c[5];
	for (int i = 0; i < 3; i++) {
		c[i] = raw_open(NULL, 0);
		assert_true(open_conns_reach((size_t)i + 1)); /* accepted in this order */
	}
	/* c[0] answers a request: it becomes the youngest, so c[1] is now the oldest. */
	const char *req = "GET /a HTTP/1.1\r\n\r\n";
	raw_write(c[0], req, strlen(req));
	assert_true(run_until(c[0], one_response, 2000));
	c[3] = raw_open(NULL, 0);
	assert_true(run_until(c[1], is_closed, 5000));
	run_for(20); /* and nothing else goes */
	assert_int_equal(n_closed(c, 4), 1);
	c[4] = raw_open(NULL, 0);
	assert_true(run_until(c[2], is_closed, 5000));
	run_for(20);
	assert_int_equal(n_closed(c, 5), 2);
	/* The newest can still be served. */
	raw_write(c[4], req, strlen(req));
	assert_true(run_until(c[4], one_response, 2000));
	struct gs_http_server_stats st;
	gs_http_server_stats(srv, &st);
	assert_int_equal(st.conns_open, 3);
	assert_int_equal(st.conns_total, 5);
	assert_int_equal(st.closed[GS_HTTP_CLOSE_EVICTED], 2);
	assert_int_equal(st.closed[GS_HTTP_CLOSE_REFUSED], 0);
	for (int i = 0; i < 5; i++)
		raw_close(c[i]);
}

static struct gs_http_server_req *held_reqs[8];
static int n_held;

static void hold_all(struct gs_http_server_req *r, void *ud)
{
	held_reqs[n_held++] = r;
}

static int got_n_held3(struct raw *c)
{
	return n_held >= 3;
}

static int got_n_held1(struct raw *c)
{
	return n_held >= 1;
}

/* A connection whose request the handler holds is never closed to make room: the new one is refused. */
static void test_held_requests_never_evicted(void **state)
{
	struct gs_http_server *plain = srv;
	struct gs_http_server_opts o = {.addr = "127.0.0.1:0", .max_conns = 3};
	n_held = 0;
	start_server_with(&o, hold_all);
	const char *req = "GET /h HTTP/1.1\r\n\r\n";
	struct raw *c[4];
	for (int i = 0; i < 3; i++)
		c[i] = raw_open(req, strlen(req));
	assert_true(run_until(c[0], got_n_held3, 2000));
	c[3] = raw_open(NULL, 0);
	assert_true(run_until(c[3], is_closed, 2000)); /* refused */
	run_for(50);
	assert_int_equal(n_closed(c, 3), 0);
	struct gs_http_server_stats st;
	gs_http_server_stats(srv, &st);
	assert_int_equal(st.closed[GS_HTTP_CLOSE_REFUSED], 1);
	assert_int_equal(st.closed[GS_HTTP_CLOSE_EVICTED], 0);
	/* Once one is answered it is idle, hence evictable: the next newcomer takes its place. */
	gs_http_respond(held_reqs[0], 200, "text/plain", "ok", 2, NULL, 0);
	assert_true(run_until(c[0], one_response, 2000));
	struct raw *d = raw_open(NULL, 0);
	assert_true(run_until(c[0], is_closed, 2000));
	run_for(50);
	assert_false(d->closed);
	assert_int_equal(n_closed(c, 3), 1);
	for (int i = 1; i < 3; i++)
		gs_http_respond(held_reqs[i], 200, "text/plain", "ok", 2, NULL, 0);
	for (int i = 0; i < 4; i++)
		raw_close(c[i]);
	raw_close(d);
	restore_server(plain);
}

/* Opens n idle connections from address `from`, each accepted before the next (so oldest first). */
static void open_in_order(struct raw **c, int n, const char *from)
{
	for (int i = 0; i < n; i++) {
		c[i] = raw_open_from(from, NULL, 0);
		run_for(30);
	}
}

/* Over the per-source cap, a source's own oldest connection goes: another source's are untouched. */
static void test_per_source_limit(void **state)
{
	struct gs_http_server *plain = srv;
	struct gs_http_server_opts o = {.addr = "127.0.0.1:0", .max_conns = 6, .max_conns_per_source = 3};
	start_server(&o);
	struct raw *other;
	open_in_order(&other, 1, "127.0.0.2"); /* the oldest of all */
	struct raw *c[5];
	open_in_order(c, 5, "127.0.0.1");
	/* 127.0.0.1 holds 3 at most: its two oldest went, 127.0.0.2's older one stays. */
	assert_false(other->closed);
	assert_true(c[0]->closed && c[1]->closed);
	assert_int_equal(n_closed(c, 5), 2);
	struct gs_http_server_stats st;
	gs_http_server_stats(srv, &st);
	assert_int_equal(st.conns_open, 4);
	assert_int_equal(st.sources, 2);
	assert_int_equal(st.closed[GS_HTTP_CLOSE_EVICTED], 2);
	/* The other source may still fill the rest, then the global cap evicts the oldest of all. */
	struct raw *o2 = raw_open_from("127.0.0.2", NULL, 0);
	run_for(30);
	struct raw *o3 = raw_open_from("127.0.0.2", NULL, 0);
	run_for(30);
	assert_false(other->closed);
	struct raw *o4 = raw_open_from("127.0.0.2", NULL, 0);
	run_for(50);
	assert_true(other->closed); /* 6 open: the global cap; `other` was the oldest */
	assert_false(o2->closed || o3->closed || o4->closed);
	raw_close(other);
	raw_close(o2);
	raw_close(o3);
	raw_close(o4);
	for (int i = 0; i < 5; i++)
		raw_close(c[i]);
	restore_server(plain);
}

/*
 * At the cap the address with the most connections that can go pays, with its own oldest: one address
 * flooding the port recycles its own connections, not another's older one. On a tie the newcomer's.
 */
static void test_cap_evicts_from_the_largest_source(void **state)
{
	struct gs_http_server *plain = srv;
	struct gs_http_server_opts o = {.addr = "127.0.0.1:0", .max_conns = 4};
	start_server(&o);
	struct raw *a;
	open_in_order(&a, 1, "127.0.0.2"); /* the oldest of all */
	struct raw *c[6];
	open_in_order(c, 6, "127.0.0.1");
	/* 127.0.0.1 held 3 that could go when each of c[3..5] came: its own oldest went each time. */
	assert_false(a->closed);
	assert_true(c[0]->closed && c[1]->closed && c[2]->closed);
	assert_int_equal(n_closed(c, 6), 3);
	/* A newcomer from 127.0.0.2 (1 that can go) still takes from 127.0.0.1 (3). */
	struct raw *b = raw_open_from("127.0.0.2", NULL, 0);
	run_for(50);
	assert_true(c[3]->closed);
	assert_false(a->closed || b->closed);
	/* 2 and 2: a tie, so the newcomer's own address pays, with its oldest. */
	struct raw *d = raw_open_from("127.0.0.2", NULL, 0);
	run_for(50);
	assert_true(a->closed);
	assert_false(b->closed || d->closed || c[4]->closed || c[5]->closed);
	struct gs_http_server_stats st;
	gs_http_server_stats(srv, &st);
	assert_int_equal(st.conns_open, 4);
	assert_int_equal(st.closed[GS_HTTP_CLOSE_EVICTED], 5);
	assert_int_equal(st.closed[GS_HTTP_CLOSE_REFUSED], 0);
	raw_close(a);
	raw_close(b);
	raw_close(d);
	for (int i = 0; i < 6; i++)
		raw_close(c[i]);
	restore_server(plain);
}

/* ---- rate-limited logging ------------------------------------------------------------------ */

static void test_log_limit_windows(void **state)
{
	struct gs_log_limit l = GS_LOG_LIMIT_INIT(3, 1000);
	uint64_t sup = 99;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(gs_log_limit_take(&l, 5000 + (uint64_t)i, &sup), 1);
		assert_int_equal(sup, 0);
	}
	assert_int_equal(gs_log_limit_take(&l, 5100, &sup), 0); /* over the burst: dropped, counted */
	assert_int_equal(gs_log_limit_take(&l, 5999, &sup), 0);
	assert_int_equal(gs_log_limit_take(&l, 5999, &sup), 0);
	assert_int_equal(gs_log_limit_take(&l, 6000, &sup), 1); /* a new window: the count comes with it */
	assert_int_equal(sup, 3);
	assert_int_equal(gs_log_limit_take(&l, 6001, &sup), 1);
	assert_int_equal(sup, 0); /* reported once */
	assert_int_equal(gs_log_limit_take(&l, 6002, &sup), 1);
	assert_int_equal(gs_log_limit_take(&l, 6003, &sup), 0);
	assert_int_equal(gs_log_limit_take(&l, 60000, &sup), 1); /* long after: one window later, not many */
	assert_int_equal(sup, 1);
}

static int sink_lines, sink_suppressed_lines;
static char sink_last[512];

static void count_sink(enum gs_log_level level, const char *msg, void *data)
{
	if (level != GS_LOG_WARN)
		return;
	sink_lines++;
	if (strstr(msg, "similar messages suppressed"))
		sink_suppressed_lines++;
	snprintf(sink_last, sizeof(sink_last), "%s", msg);
}

static void flood_line(int i)
{
	gs_log_limited(GS_LOG_WARN, 2, 50, "flood %d", i); /* one site, one limiter */
}

static void test_log_limited_macro(void **state)
{
	sink_lines = sink_suppressed_lines = 0;
	gs_log_set_sink(count_sink, NULL);
	for (int i = 0; i < 10; i++)
		flood_line(i);
	assert_int_equal(sink_lines, 2);
	run_for(60);
	flood_line(10);
	gs_log_set_sink(NULL, NULL);
	assert_int_equal(sink_lines, 3);
	assert_string_equal(sink_last, "flood 10 (8 similar messages suppressed)");
}

/* The server's per-connection warnings go through the limiter: 30 refusals, a handful of lines. */
static void test_refusals_log_limited(void **state)
{
	struct gs_http_server *plain = srv;
	struct gs_http_server_opts o = {.addr = "127.0.0.1:0", .max_conns = 1};
	n_held = 0;
	start_server_with(&o, hold_all);
	const char *req = "GET /h HTTP/1.1\r\n\r\n";
	struct raw *h = raw_open(req, strlen(req));
	assert_true(run_until(h, got_n_held1, 2000));
	sink_lines = 0;
	gs_log_set_sink(count_sink, NULL);
	struct raw *c[30];
	for (int i = 0; i < 30; i++)
		c[i] = raw_open(NULL, 0);
	for (int i = 0; i < 30; i++)
		assert_true(run_until(c[i], is_closed, 2000));
	gs_log_set_sink(NULL, NULL);
	assert_int_equal(closed_for(GS_HTTP_CLOSE_REFUSED), 30);
	assert_true(sink_lines >= 1 && sink_lines <= 5);
	gs_http_respond(held_reqs[0], 200, "text/plain", "ok", 2, NULL, 0);
	raw_close(h);
	for (int i = 0; i < 30; i++)
		raw_close(c[i]);
	restore_server(plain);
}

static int got_held(struct raw *c)
{
	return held != NULL;
}

static void test_answer_after_client_left(void **state)
{
	/* The client leaves while the handler holds its request: the answer goes into a dead socket. */
	const char *req = "GET /later HTTP/1.1\r\n\r\n";
	struct raw *c = raw_open(req, strlen(req));
	assert_true(run_until(c, got_held, 2000));
	raw_close(c);
	uv_run(&loop, UV_RUN_NOWAIT);
	int r = gs_http_respond(held, 200, "text/plain", "late", 4, NULL, 0);
	assert_true(r == 0 || r == -ECONNRESET || r == UV_EPIPE);

	/* The server closes while a request is held: the request outlives its connection. */
	held = NULL;
	c = raw_open(req, strlen(req));
	assert_true(run_until(c, got_held, 2000));
	close_server();
	assert_int_equal(gs_http_respond(held, 200, "text/plain", "late", 4, NULL, 0), -ECONNRESET);
	held = NULL;
	raw_close(c);
	struct gs_http_server_opts o = {.addr = "127.0.0.1:0"};
	start_server(&o); /* for teardown */
}

static void test_tls_handshake_timeout(void **state)
{
	static const char *const names[] = {"localhost", "127.0.0.1", NULL};
	struct gs_tls_cert_req cr = {
		.common_name = "t", .dns_names = names, .not_before = 0, .not_after = 4102444800LL};
	char *cert, *key, err[256];
	assert_int_equal(gs_tls_generate(&cr, NULL, NULL, &cert, &key, err, sizeof(err)), 0);
	struct gs_tls_config *cfg;
	assert_int_equal(gs_tls_server_config_new(cert, strlen(cert), key, strlen(key), &cfg, err, sizeof(err)), 0);
	free(cert);
	free(key);
	struct gs_http_server *plain = srv;
	struct gs_http_server_opts o = {.addr = "127.0.0.1:0", .tls = cfg, .handshake_timeout_ms = 150};
	start_server(&o);
	gs_tls_config_unref(cfg);
	/* Connected, never says hello: dropped after the handshake timeout. */
	uint64_t t0 = ms_now();
	struct raw *c = raw_open(NULL, 0);
	assert_true(run_until(c, is_closed, 2000));
	assert_true(ms_now() - t0 >= 100);
	raw_close(c);
	/* Plain HTTP to the TLS port: a failed handshake, counted. */
	const char *req = "GET / HTTP/1.1\r\n\r\n";
	c = raw_open(req, strlen(req));
	assert_true(run_until(c, is_closed, 2000));
	raw_close(c);
	struct gs_http_server_stats st;
	gs_http_server_stats(srv, &st);
	assert_int_equal(st.tls_failures_total, 1);
	assert_int_equal(handled, 0);
	restore_server(plain);
}

/*
 * The memory transport (the fuzzer's seam): a connection with no socket is admitted like an accepted
 * one, its bytes take the read callback's path to the same handler, the answers land in the driver's
 * buffer, and the end of input or a bad request ends it as on a socket.
 */
static void test_memory_transport(void **state)
{
	struct gs_conn_mem m, bad;
	struct gs_http_server_stats st;
	const char *req = "GET /a?x=1 HTTP/1.1\r\nHost: t\r\nX-Test: one\r\n\r\n"
			  "POST /b HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhel";
	gs_buf_init(&m.out, 0);
	gs_buf_init(&bad.out, 0);

	assert_int_equal(gs_http_server__accept_memory(srv, &m, "10.0.0.9:1234"), 0);
	assert_ptr_not_equal(m.conn, NULL);
	assert_true(m.conn->reading);
	gs_http_server_stats(srv, &st);
	assert_int_equal(st.conns_open, 1);
	assert_int_equal(st.conns_total, 1);
	gs_conn__received(m.conn, req, (ssize_t)strlen(req)); /* the second request cut in its body */
	gs_conn__received(m.conn, "lo", 2);
	for (int i = 0; i < 10; i++)
		uv_run(&loop, UV_RUN_NOWAIT);
	assert_int_equal(handled, 2);
	gs_buf_append(&m.out, "", 1);
	const char *out = m.out.data;
	assert_non_null(strstr(out, "GET /a q=x=1 body=0 x=one"));
	assert_non_null(strstr(out, "POST /b q= body=5 x=-"));
	assert_true(strncmp(out, "HTTP/1.1 200 OK\r\n", 17) == 0 && strstr(out, "GET /a") < strstr(out, "POST /b"));
	assert_null(strstr(out, "Connection: close"));
	assert_true(m.conn && m.conn->reading); /* kept alive, waiting for more */

	gs_conn__received(m.conn, NULL, UV_EOF); /* the client is done */
	assert_null(m.conn);
	assert_false(m.shut);

	assert_int_equal(gs_http_server__accept_memory(srv, &bad, "10.0.0.9:1235"), 0);
	gs_conn__received(bad.conn, "GET / HTTP/1.1\r\nHost: t\rX", 25);
	assert_null(bad.conn); /* answered and ended gracefully at once: nothing to linger on */
	assert_true(bad.shut);
	gs_buf_append(&bad.out, "", 1);
	assert_true(strncmp(bad.out.data, "HTTP/1.1 400 Bad Request\r\n", 26) == 0);
	assert_non_null(strstr(bad.out.data, "Connection: close"));

	for (int i = 0; i < 10; i++)
		uv_run(&loop, UV_RUN_NOWAIT);
	gs_http_server_stats(srv, &st);
	assert_int_equal(st.conns_open, 0);
	assert_int_equal(st.conns_total, 2);
	assert_int_equal(st.requests_total, 2);
	assert_int_equal(st.rejected_total, 1);
	assert_int_equal(st.closed[GS_HTTP_CLOSE_CLIENT], 1);
	assert_int_equal(st.closed[GS_HTTP_CLOSE_BAD_REQUEST], 1);
	gs_buf_free(&m.out);
	gs_buf_free(&bad.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keepalive_and_pipelining, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drain_closes_after_each_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_head_has_no_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expect_continue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_and_idle_timeouts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline_not_refreshed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_cap_evicts_oldest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_requests_never_evicted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_source_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_evicts_from_the_largest_source, setup, teardown),
		cmocka_unit_test(test_log_limit_windows),
		cmocka_unit_test_setup_teardown(test_log_limited_macro, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals_log_limited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answer_after_client_left, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_handshake_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_transport, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
