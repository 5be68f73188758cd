/*
 * test_http_client.c: the keep-alive pool and the connection layer under it, against a scripted
 * plain-TCP server in the same loop. The server answers by request path:
 *   /ok        200, "ok", keep-alive          /close   200 with Connection: close
 *   /chunked   200, chunked in three pieces   /404     404 "nope"
 *   /big       200 with a 300 KiB body        /silent  never answers
 *   /drop      closes the connection unanswered (only the first time on each connection: see dropped)
 *   /bare-lf   a head with bare LF line ends  /fold    a header continued by obs-fold
 *   /eof       body framed by the end of the connection
 *   /status-1  a status code of one digit
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

struct srv_conn {
	uv_tcp_t tcp;
	char buf[65536];
	size_t len;
	int requests;
};

struct fixture {
	uv_loop_t loop;
	uv_tcp_t server;
	int port;
	int accepted;  /* connections the server accepted */
	int requests;  /* requests the server saw */
	int drop_next; /* /drop: close without answer when set */
	int done_calls;
	int last_err;
	int last_status;
	char last_body[400 * 1024];
	size_t last_len;
	char streamed[256];
	size_t streamed_len;
	int closed;
	struct gs_http_call *cancel_in_data;
};

static struct fixture *F;

static void srv_closed(uv_handle_t *h)
{
	free(h->data);
}

static void srv_alloc(uv_handle_t *h, size_t sz, uv_buf_t *b)
{
	struct srv_conn *sc = h->data;
	b->base = sc->buf + sc->len;
	b->len = sizeof(sc->buf) - sc->len;
}

static void srv_write_done(uv_write_t *w, int status)
{
	free(w);
}

static void srv_send(struct srv_conn *sc, const char *data, size_t len)
{
	uv_write_t *w = malloc(sizeof(*w) + len);
	memcpy((char *)(w + 1), data, len);
	uv_buf_t b = uv_buf_init((char *)(w + 1), (unsigned)len);
	assert_int_equal(uv_write(w, (uv_stream_t *)&sc->tcp, &b, 1, srv_write_done), 0);
}

static void srv_answer(struct srv_conn *sc, const char *path)
{
	char head[256];
	if (!strcmp(path, "/ok")) {
		const char *r = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok";
		srv_send(sc, r, strlen(r));
	} else if (!strcmp(path, "/close")) {
		const char *r = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye";
		srv_send(sc, r, strlen(r));
		uv_close((uv_handle_t *)&sc->tcp, srv_closed);
	} else if (!strcmp(path, "/chunked")) {
		const char *r = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n";
		srv_send(sc, r, strlen(r));
		srv_send(sc, "2\r\nde\r\n", 7);
		srv_send(sc, "1\r\nf\r\n0\r\n\r\n", 11);
	} else if (!strcmp(path, "/404")) {
		const char *r = "HTTP/1.1 404 Not Found\r\nRetry-After: 7\r\nContent-Length: 4\r\n\r\nnope";
		srv_send(sc, r, strlen(r));
	} else if (!strcmp(path, "/big")) {
		size_t n = 300 * 1024;
		char *body = malloc(n);
		memset(body, 'x', n);
		int hl = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", n);
		srv_send(sc, head, (size_t)hl);
		srv_send(sc, body, n);
		free(body);
	} else if (!strcmp(path, "/drop")) {
		uv_close((uv_handle_t *)&sc->tcp, srv_closed);
	} else if (!strcmp(path, "/bare-lf")) {
		const char *r = "HTTP/1.1 200 OK\nContent-Length: 0\n\n";
		srv_send(sc, r, strlen(r));
	} else if (!strcmp(path, "/fold")) {
		const char *r = "HTTP/1.1 200 OK\r\nX-A: 1\r\n  continued\r\nContent-Length: 0\r\n\r\n";
		srv_send(sc, r, strlen(r));
	} else if (!strcmp(path, "/status-1")) {
		const char *r = "HTTP/1.1 1 OK\r\nContent-Length: 0\r\n\r\n";
		srv_send(sc, r, strlen(r));
	} else if (!strcmp(path, "/eof")) {
		const char *r = "HTTP/1.1 200 OK\r\n\r\nuntil the end";
		srv_send(sc, r, strlen(r));
		uv_close((uv_handle_t *)&sc->tcp, srv_closed);
	} /* /silent: nothing */
}

static void srv_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct srv_conn *sc = s->data;
	if (n < 0) {
		if (!uv_is_closing((uv_handle_t *)s))
			uv_close((uv_handle_t *)s, srv_closed);
		return;
	}
	sc->len += (size_t)n;
	char *end;
	while ((end = memmem(sc->buf, sc->len, "\r\n\r\n", 4)) != NULL) {
		char path[64] = "";
		sscanf(sc->buf, "%*s %63s", path);
		size_t used = (size_t)(end + 4 - sc->buf);
		memmove(sc->buf, end + 4, sc->len - used);
		sc->len -= used;
		F->requests++;
		sc->requests++;
		srv_answer(sc, path);
		if (uv_is_closing((uv_handle_t *)s))
			return;
	}
}

static void srv_accept(uv_stream_t *server, int status)
{
	struct srv_conn *sc = calloc(1, sizeof(*sc));
	uv_tcp_init(server->loop, &sc->tcp);
	sc->tcp.data = sc;
	assert_int_equal(uv_accept(server, (uv_stream_t *)&sc->tcp), 0);
	F->accepted++;
	uv_read_start((uv_stream_t *)&sc->tcp, srv_alloc, srv_read);
}

static void close_walk(uv_handle_t *h, void *arg)
{
	if (!uv_is_closing(h))
		uv_close(h, h->type == UV_TCP && h->data ? srv_closed : NULL);
}

static int setup(void **state)
{
	F = calloc(1, sizeof(*F));
	uv_loop_init(&F->loop);
	uv_tcp_init(&F->loop, &F->server);
	struct sockaddr_in a;
	uv_ip4_addr("127.0.0.1", 0, &a);
	assert_int_equal(uv_tcp_bind(&F->server, (struct sockaddr *)&a, 0), 0);
	assert_int_equal(uv_listen((uv_stream_t *)&F->server, 64, srv_accept), 0);
	struct sockaddr_in got;
	int len = sizeof(got);
	uv_tcp_getsockname(&F->server, (struct sockaddr *)&got, &len);
	F->port = ntohs(got.sin_port);
	*state = F;
	return 0;
}

static int teardown(void **state)
{
	uv_walk(&F->loop, close_walk, NULL);
	uv_run(&F->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&F->loop), 0);
	free(F);
	return 0;
}

static struct gs_http_client *client(unsigned max_conns, size_t max_body)
{
	struct gs_http_client_opts o = {
		.host = "127.0.0.1",
		.port = F->port,
		.max_conns = max_conns,
		.max_body = max_body,
	};
	struct gs_http_client *c;
	assert_int_equal(gs_http_client_new(&F->loop, &o, &c), 0);
	return c;
}

static void on_closed(void *ud)
{
	F->closed++;
}

static void close_client(struct gs_http_client *c)
{
	int before = F->closed;
	gs_http_client_close(c, on_closed, NULL);
	while (F->closed == before)
		uv_run(&F->loop, UV_RUN_ONCE);
	assert_int_equal(F->closed, before + 1);
}

static void on_done(struct gs_http_call *call, int err, const struct gs_http_response *r, void *ud)
{
	F->done_calls++;
	F->last_err = err;
	F->last_status = r ? r->status : 0;
	F->last_len = 0;
	if (r) {
		assert_true(r->body_len < sizeof(F->last_body));
		memcpy(F->last_body, r->body, r->body_len + 1);
		F->last_len = r->body_len;
	}
	if (F->done_calls > 0 && ud)
		*(int *)ud = err ? err : r->status;
}

static void on_data(struct gs_http_call *call, const char *d, size_t n, void *ud)
{
	assert_true(F->streamed_len + n < sizeof(F->streamed));
	memcpy(F->streamed + F->streamed_len, d, n);
	F->streamed_len += n;
	if (F->cancel_in_data == call)
		gs_http_cancel(call);
}

static void get(struct gs_http_client *c, const char *path, unsigned timeout_ms, int *result)
{
	struct gs_http_request req = {.method = "GET", .path = path, .timeout_ms = timeout_ms};
	assert_int_equal(gs_http_send(c, &req, on_done, result, NULL), 0);
}

/* A GET whose body goes to on_data; *call (if not NULL) gets the call, as gs_http_send's. */
static void get_streamed(struct gs_http_client *c, const char *path, int *result, struct gs_http_call **call)
{
	struct gs_http_request req = {.method = "GET", .path = path, .on_data = on_data};
	assert_int_equal(gs_http_send(c, &req, on_done, result, call), 0);
}

/* Runs the loop until n done callbacks have arrived (the server keeps the loop alive). */
static void wait_done(int n)
{
	while (F->done_calls < n)
		uv_run(&F->loop, UV_RUN_ONCE);
}

/* One GET with nothing else in flight, to the end: it must be the n-th done of the test. Returns its
 * result (the status, or the error). */
static int get_wait(struct gs_http_client *c, const char *path, int n)
{
	int r = 0;
	get(c, path, 0, &r);
	wait_done(n);
	assert_int_equal(F->done_calls, n);
	return r;
}

static void test_keepalive_reuses_one_connection(void **state)
{
	struct gs_http_client *c = client(4, 0);
	assert_int_equal(get_wait(c, "/ok", 1), 200);
	assert_string_equal(F->last_body, "ok");
	assert_int_equal(get_wait(c, "/404", 2), 404);
	assert_string_equal(F->last_body, "nope");
	assert_int_equal(get_wait(c, "/ok", 3), 200);
	assert_int_equal(F->accepted, 1);
	struct gs_http_client_stats st;
	gs_http_client_stats(c, &st);
	assert_int_equal(st.conns_opened_total, 1);
	assert_int_equal(st.conns_idle, 1);
	close_client(c);
}

static void test_pool_bounds_connections(void **state)
{
	struct gs_http_client *c = client(2, 0);
	int r[6] = {0};
	for (int i = 0; i < 6; i++)
		get(c, "/ok", 0, &r[i]);
	struct gs_http_client_stats st;
	gs_http_client_stats(c, &st);
	assert_int_equal(st.queued + st.inflight, 6);
	assert_true(st.inflight <= 2);
	wait_done(6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(r[i], 200);
	assert_int_equal(F->accepted, 2);
	assert_int_equal(F->requests, 6);
	close_client(c);
}

/* may_send: asked with done's ud before the request is written; *allowed is what it answers. */
struct gated {
	int result;
	int allowed;
	int asked;
};

static int gate(void *ud)
{
	struct gated *g = ud;
	g->asked++;
	return g->allowed;
}

static void on_gated_done(struct gs_http_call *call, int err, const struct gs_http_response *r, void *ud)
{
	struct gated *g = ud;
	F->done_calls++;
	g->result = err ? err : r->status;
}

static void gated_get(struct gs_http_client *c, const char *path, struct gated *g)
{
	struct gs_http_request req = {.method = "GET", .path = path, .may_send = gate};
	assert_int_equal(gs_http_send(c, &req, on_gated_done, g, NULL), 0);
}

/* A request withdrawn by may_send is never written, its done runs with GS_HTTP_EWITHDRAWN, and the
 * connection made for it serves the next request. */
static void test_may_send_withdraws(void **state)
{
	struct gs_http_client *c = client(1, 0);
	struct gated g = {.allowed = 0};
	gated_get(c, "/ok", &g);
	assert_int_equal(F->done_calls, 0); /* never synchronously */
	wait_done(1);
	assert_int_equal(g.result, GS_HTTP_EWITHDRAWN);
	assert_int_equal(g.asked, 1);
	assert_int_equal(F->requests, 0);
	assert_int_equal(get_wait(c, "/ok", 2), 200);
	assert_int_equal(F->accepted, 1);
	assert_int_equal(F->requests, 1);
	g = (struct gated){.allowed = 1};
	gated_get(c, "/ok", &g);
	wait_done(3);
	assert_int_equal(g.result, 200);
	assert_int_equal(F->requests, 2);
	close_client(c);
}

/* The answer counts when the request's turn comes, not when it was queued: a right to send that
 * lapses while the request waits for the only connection withdraws it (a leader past its deadline). */
static void test_may_send_asked_when_its_turn_comes(void **state)
{
	struct gs_http_client *c = client(1, 0);
	struct gated g = {.allowed = 1};
	int r = 0;
	get(c, "/ok", 0, &r);
	gated_get(c, "/ok", &g); /* queued behind the first: one connection */
	g.allowed = 0;
	wait_done(2);
	assert_int_equal(r, 200);
	assert_int_equal(g.result, GS_HTTP_EWITHDRAWN);
	assert_int_equal(F->requests, 1);
	close_client(c);
}

static void test_stream_chunked(void **state)
{
	struct gs_http_client *c = client(1, 0);
	int r = 0;
	get_streamed(c, "/chunked", &r, NULL);
	wait_done(1);
	assert_int_equal(r, 200);
	assert_int_equal(F->streamed_len, 6);
	assert_memory_equal(F->streamed, "abcdef", 6);
	assert_int_equal(F->last_len, 0); /* streamed bodies are not buffered */
	/* A non-2xx answer to a streaming request is buffered for done. */
	get_streamed(c, "/404", &r, NULL);
	wait_done(2);
	assert_int_equal(r, 404);
	assert_string_equal(F->last_body, "nope");
	assert_int_equal(F->streamed_len, 6);
	close_client(c);
}

static void test_cancel_inside_on_data(void **state)
{
	struct gs_http_client *c = client(1, 0);
	int r = 0;
	get_streamed(c, "/chunked", &r, &F->cancel_in_data);
	wait_done(1);
	assert_int_equal(r, -ECANCELED);
	assert_int_equal(F->streamed_len, 3); /* nothing after the cancel */
	uv_run(&F->loop, UV_RUN_NOWAIT);
	assert_int_equal(F->done_calls, 1);
	close_client(c);
}

static void test_body_cap(void **state)
{
	struct gs_http_client *c = client(1, 100 * 1024);
	assert_int_equal(get_wait(c, "/big", 1), -E2BIG);
	close_client(c);
	struct gs_http_client *c2 = client(1, 0);
	assert_int_equal(get_wait(c2, "/big", 2), 200);
	assert_int_equal(F->last_len, 300 * 1024);
	close_client(c2);
}

static void test_retry_after_server_closed_idle(void **state)
{
	struct gs_http_client *c = client(1, 0);
	get_wait(c, "/ok", 1);
	/* The next request finds the connection dropped before any answer: retried once, fresh conn. */
	assert_int_equal(get_wait(c, "/drop", 2), -ECONNRESET); /* /drop drops every time: the retry fails too */
	assert_int_equal(F->accepted, 2);
	assert_int_equal(F->requests, 3);
	/* A connection closed by the server after "Connection: close" is not reused. */
	assert_int_equal(get_wait(c, "/close", 3), 200);
	assert_string_equal(F->last_body, "bye");
	assert_int_equal(get_wait(c, "/ok", 4), 200);
	assert_int_equal(F->accepted, 4);
	close_client(c);
}

static void test_timeout_and_cancel(void **state)
{
	struct gs_http_client *c = client(1, 0);
	int r1 = 0, r2 = 0;
	get(c, "/silent", 50, &r1);
	wait_done(1);
	assert_int_equal(r1, -ETIMEDOUT);

	struct gs_http_call *inflight, *queued;
	struct gs_http_request req = {.method = "GET", .path = "/silent"};
	assert_int_equal(gs_http_send(c, &req, on_done, &r1, &inflight), 0);
	assert_int_equal(gs_http_send(c, &req, on_done, &r2, &queued), 0);
	gs_http_cancel(queued);
	gs_http_cancel(inflight);
	assert_int_equal(F->done_calls, 1); /* never from inside the cancel */
	wait_done(3);
	assert_int_equal(r1, -ECANCELED);
	assert_int_equal(r2, -ECANCELED);
	close_client(c);
}

static void test_close_cancels_everything(void **state)
{
	struct gs_http_client *c = client(1, 0);
	int r1 = 0, r2 = 0;
	get(c, "/silent", 0, &r1);
	get(c, "/silent", 0, &r2);
	uv_run(&F->loop, UV_RUN_NOWAIT);
	gs_http_client_close(c, on_closed, NULL);
	assert_int_equal(F->done_calls, 0);
	while (!F->closed)
		uv_run(&F->loop, UV_RUN_ONCE);
	assert_int_equal(F->done_calls, 2);
	assert_int_equal(r1, -ECANCELED);
	assert_int_equal(r2, -ECANCELED);
}

static void test_bad_framing_refused(void **state)
{
	struct gs_http_client *c = client(2, 0);
	int r1 = 0, r2 = 0;
	get(c, "/bare-lf", 0, &r1);
	get(c, "/fold", 0, &r2);
	wait_done(2);
	assert_int_equal(r1, -EPROTO);
	assert_int_equal(r2, -EPROTO);
	/* llhttp 8.1.0 took this for status 1, handed out as a response (found by fuzz_http_client.c). */
	assert_int_equal(get_wait(c, "/status-1", 3), -EPROTO);
	close_client(c);
}

static void test_eof_framed_body(void **state)
{
	struct gs_http_client *c = client(1, 0);
	assert_int_equal(get_wait(c, "/eof", 1), 200);
	assert_string_equal(F->last_body, "until the end");
	close_client(c);
}

static void test_refused_and_bad_requests(void **state)
{
	struct gs_http_client_opts o = {.host = "127.0.0.1", .port = 1, .max_conns = 1};
	struct gs_http_client *c;
	assert_int_equal(gs_http_client_new(&F->loop, &o, &c), 0);
	int r = 0;
	assert_int_equal(get_wait(c, "/ok", 1), UV_ECONNREFUSED);

	struct gs_http_header evil = {"X-Evil", "a\r\nInjected: 1"};
	struct gs_http_request req = {.method = "GET", .path = "/ok", .headers = &evil, .n_headers = 1};
	assert_int_equal(gs_http_send(c, &req, on_done, &r, NULL), -EINVAL);
	req.n_headers = 0;
	req.path = "/a b";
	assert_int_equal(gs_http_send(c, &req, on_done, &r, NULL), -EINVAL);
	close_client(c);
}

/* The memory transport (the fuzzer's seam): connections without sockets, driven by the test. */
static struct gs_conn_mem mem_ends[2];
static int mem_opened;

static struct gs_conn_mem *mem_open(void *ud)
{
	assert_true(mem_opened < 2);
	struct gs_conn_mem *m = &mem_ends[mem_opened++];
	gs_buf_init(&m->out, 0);
	return m;
}

static void test_memory_transport(void **state)
{
	struct gs_http_client *c = client(1, 0);
	int r1 = 0, r2 = 0;
	mem_opened = 0;
	gs_http_client__use_memory(c, mem_open, NULL);
	struct gs_http_request req = {.method = "GET", .path = "/w", .on_data = on_data};
	assert_int_equal(gs_http_send(c, &req, on_done, &r1, NULL), 0);
	struct gs_conn_mem *m = &mem_ends[0];
	assert_int_equal(mem_opened, 1);
	assert_non_null(m->conn);
	assert_false(m->conn->reading); /* connecting */
	assert_int_equal(m->out.len, 0);
	gs_conn__connected(m->conn, 0);
	assert_true(m->conn->reading);
	assert_true(m->out.len > 17 && memcmp(m->out.data, "GET /w HTTP/1.1\r\nHost: 127.0.0.1", 32) == 0);

	const char *resp = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
	gs_conn__received(m->conn, resp, 30);
	gs_conn__received(m->conn, resp + 30, (ssize_t)strlen(resp) - 30);
	wait_done(1);
	assert_int_equal(r1, 200);
	assert_int_equal(F->streamed_len, 5);
	assert_memory_equal(F->streamed, "abcde", 5);

	/* A request on the kept-alive connection, lost to the server's close before any answer: retried
	 * once on a fresh connection, which answers. */
	get(c, "/x", 0, &r2);
	assert_int_equal(mem_opened, 1); /* reused */
	assert_non_null(m->conn);
	gs_conn__received(m->conn, NULL, UV_EOF);
	assert_null(m->conn);
	while (mem_opened < 2) /* the pool of one opens the next once the old one's handles closed */
		uv_run(&F->loop, UV_RUN_ONCE);
	struct gs_conn_mem *m2 = &mem_ends[1];
	gs_conn__connected(m2->conn, 0);
	assert_true(m2->out.len > 17 && memcmp(m2->out.data, "GET /x HTTP/1.1\r\n", 17) == 0);
	const char *nope = "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope";
	gs_conn__received(m2->conn, nope, (ssize_t)strlen(nope));
	wait_done(2);
	assert_int_equal(r2, 404);
	assert_string_equal(F->last_body, "nope");
	assert_int_equal(F->accepted, 0); /* no socket was used */
	close_client(c);
	assert_null(m2->conn);
	gs_buf_free(&mem_ends[0].out);
	gs_buf_free(&mem_ends[1].out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keepalive_reuses_one_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_bounds_connections, setup, teardown),
		cmocka_unit_test_setup_teardown(test_may_send_withdraws, setup, teardown),
		cmocka_unit_test_setup_teardown(test_may_send_asked_when_its_turn_comes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_chunked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_inside_on_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_body_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_after_server_closed_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_and_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_cancels_everything, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_framing_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eof_framed_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_and_bad_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_transport, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
