/*
 * test_grpc.c: the gRPC unary client (core/grpc.h) against a real peer: tests/grpc_peer.h, an nghttp2
 * server in a thread of its own on a unix socket, that answers, fails, stalls, hangs up, sends garbage
 * or too much. Every test closes the client and checks uv_loop_close() == 0.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/grpc.h"
#include "grpc_peer.h"

#define METHOD "/v1.PodResourcesLister/List"

static uv_loop_t loop;
static struct gp peer;
static int peer_on;
static char sock[108];
static struct gs_grpc_client *cl;
static const uint8_t reply[] = {0x0a, 0x03, 'a', 'b', 'c'};

struct result {
	int done, err, status;
	char message[256], error[256];
	uint8_t msg[1024];
	size_t len;
	uint64_t at; /* uv_now() when done ran */
};

static void on_done(int err, const struct gs_grpc_reply *r, void *ud)
{
	struct result *res = ud;
	assert_non_null(r);
	res->done++;
	res->err = err;
	res->status = r->status;
	snprintf(res->message, sizeof res->message, "%s", r->message);
	snprintf(res->error, sizeof res->error, "%s", r->error);
	res->len = r->len;
	if (err == 0) {
		assert_true(r->len <= sizeof res->msg);
		memcpy(res->msg, r->msg, r->len);
	} else {
		assert_string_not_equal(r->error, "");
	}
	res->at = uv_now(&loop);
}

static void start_peer(enum gp_mode mode)
{
	assert_int_equal(gp_start(&peer, sock, mode), 0);
	peer.reply = reply, peer.reply_len = sizeof reply;
	peer_on = 1;
}

static void stop_peer(void)
{
	if (peer_on)
		gp_stop(&peer);
	peer_on = 0;
}

static void new_client(size_t max_msg)
{
	struct gs_grpc_client_opts o = {.path = sock, .max_msg = max_msg};
	assert_int_equal(gs_grpc_client_new(&loop, &o, &cl), 0);
}

static int setup(void **state)
{
	assert_int_equal(uv_loop_init(&loop), 0);
	snprintf(sock, sizeof sock, "/tmp/gs-test-grpc-%d.sock", (int)getpid());
	new_client(0);
	return 0;
}

static int closed;
static void on_closed(void *ud)
{
	closed++;
}

static int teardown(void **state)
{
	closed = 0;
	gs_grpc_client_close(cl, on_closed, NULL);
	assert_int_equal(closed, 0); /* never synchronous */
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(closed, 1);
	stop_peer();
	assert_int_equal(uv_loop_close(&loop), 0);
	unlink(sock);
	return 0;
}

/* One call, run to its end. */
static void call(struct result *res, const void *msg, size_t len, unsigned deadline_ms)
{
	memset(res, 0, sizeof *res);
	assert_int_equal(gs_grpc_call(cl, METHOD, msg, len, deadline_ms, on_done, res), 0);
	assert_int_equal(res->done, 0); /* never synchronous */
	while (!res->done)
		uv_run(&loop, UV_RUN_ONCE);
	assert_int_equal(res->done, 1);
}

static void test_ok(void **state)
{
	struct result r;
	static const uint8_t req[] = {0x12, 0x01, 'x'};
	start_peer(GP_OK);
	call(&r, req, sizeof req, 5000);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.len, sizeof reply);
	assert_memory_equal(r.msg, reply, sizeof reply);
	assert_string_equal(peer.last_path, METHOD);
	assert_string_equal(peer.last_ct, "application/grpc");
	assert_string_equal(peer.last_te, "trailers");
	assert_string_equal(peer.last_timeout, "5000m");
	/* the request went framed: flag 0, length 3, the bytes */
	assert_int_equal(peer.last_req_len, 5 + sizeof req);
	assert_memory_equal(peer.last_req, "\0\0\0\0\3", 5);
	assert_memory_equal(peer.last_req + 5, req, sizeof req);
}

static void test_empty_request_and_reuse(void **state)
{
	struct result a, b, c[3];
	struct gs_grpc_client_stats st;
	start_peer(GP_OK);
	call(&a, NULL, 0, 1000);
	call(&b, NULL, 0, 1000);
	assert_int_equal(a.err, 0);
	assert_int_equal(b.err, 0);
	assert_int_equal(peer.last_req_len, 5);
	/* three at once, multiplexed on the same connection */
	memset(c, 0, sizeof c);
	for (int i = 0; i < 3; i++)
		assert_int_equal(gs_grpc_call(cl, METHOD, NULL, 0, 1000, on_done, &c[i]), 0);
	while (!c[0].done || !c[1].done || !c[2].done)
		uv_run(&loop, UV_RUN_ONCE);
	for (int i = 0; i < 3; i++)
		assert_int_equal(c[i].err, 0);
	assert_int_equal(atomic_load(&peer.conns), 1);
	assert_int_equal(atomic_load(&peer.calls), 5);
	gs_grpc_client_stats(cl, &st);
	assert_int_equal(st.calls, 5);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.conns, 1);
	assert_int_equal(st.inflight, 0);
}

static void test_grpc_status(void **state)
{
	struct result r;
	start_peer(GP_STATUS);
	peer.status = 12;
	peer.message = "no%20such method%0a";
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, GS_GRPC_ESTATUS);
	assert_int_equal(r.status, 12);
	assert_string_equal(r.message, "no such method?");
	assert_non_null(strstr(r.error, "UNIMPLEMENTED"));
}

static void test_socket_missing(void **state)
{
	struct result r;
	unlink(sock);
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, -ENOENT);
	assert_non_null(strstr(r.error, sock));
	assert_non_null(strstr(r.error, "does not exist"));
}

static void test_connection_refused(void **state)
{
	struct result r;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
	unlink(sock);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0); /* a socket file, nobody listening */
	close(fd);
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, -ECONNREFUSED);
	assert_non_null(strstr(r.error, "nobody listens"));
}

static void test_deadline(void **state)
{
	struct result r;
	uint64_t t0;
	start_peer(GP_STALL);
	uv_update_time(&loop);
	t0 = uv_now(&loop);
	call(&r, NULL, 0, 200);
	assert_int_equal(r.err, -ETIMEDOUT);
	assert_true(r.at - t0 >= 200);
	assert_true(r.at - t0 < 2000);
	/* the connection is still good for the next call */
	atomic_store(&peer.mode, GP_OK);
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, 0);
	assert_int_equal(atomic_load(&peer.conns), 1);
}

static void test_garbage(void **state)
{
	struct result r;
	start_peer(GP_GARBAGE);
	call(&r, NULL, 0, 1000);
	/* either nghttp2 refuses the bytes, or the peer's close is seen first */
	assert_true(r.err == -EPROTO || r.err == -ECONNRESET);
}

static void test_peer_gone(void **state)
{
	struct result r;
	start_peer(GP_HANGUP);
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, -ECONNRESET);
	assert_non_null(strstr(r.error, "closed the connection"));
	/* a new call opens a new connection */
	atomic_store(&peer.mode, GP_OK);
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, 0);
	assert_int_equal(atomic_load(&peer.conns), 2);
}

static void test_oversized(void **state)
{
	struct result r;
	gs_grpc_client_close(cl, NULL, NULL);
	new_client(512);
	start_peer(GP_BIG);
	peer.big_len = 1u << 30;
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, -E2BIG);
	assert_non_null(strstr(r.error, "over the cap of 512"));
	/* a reply of the cap's size passes, one byte more does not */
	static uint8_t at_cap[513];
	peer.reply = at_cap, peer.reply_len = 512;
	atomic_store(&peer.mode, GP_OK);
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.len, 512);
	peer.reply_len = 513;
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, -E2BIG);
	uint8_t big[513] = {0};
	assert_int_equal(gs_grpc_call(cl, METHOD, big, sizeof big, 1000, on_done, &r), -E2BIG);
}

static void test_not_grpc(void **state)
{
	struct result r;
	start_peer(GP_HTTP404);
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, -EPROTO);
	assert_non_null(strstr(r.error, "HTTP status 404"));
	atomic_store(&peer.mode, GP_NOTRAILER);
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, -EPROTO);
	assert_non_null(strstr(r.error, "no grpc-status"));
}

static void test_close_cancels(void **state)
{
	struct result r = {0};
	start_peer(GP_STALL);
	assert_int_equal(gs_grpc_call(cl, METHOD, NULL, 0, 10000, on_done, &r), 0);
	for (int i = 0; i < 20 && atomic_load(&peer.calls) == 0; i++) {
		uv_run(&loop, UV_RUN_NOWAIT);
		usleep(10000);
	}
	closed = 0;
	gs_grpc_client_close(cl, on_closed, NULL);
	assert_int_equal(r.done, 0);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(r.done, 1);
	assert_int_equal(r.err, -ECANCELED);
	new_client(0); /* for teardown */
	assert_int_equal(gs_grpc_call(cl, METHOD, NULL, 0, 0, on_done, &r), -EINVAL);
	assert_int_equal(gs_grpc_call(cl, "List", NULL, 0, 10, on_done, &r), -EINVAL);
	assert_int_equal(gs_grpc_call(cl, METHOD, NULL, 0, GS_GRPC_MAX_DEADLINE_MS + 1, on_done, &r), -EINVAL);
}

static void test_peer_restarts(void **state)
{
	struct result r;
	start_peer(GP_OK);
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, 0);
	stop_peer();
	call(&r, NULL, 0, 1000);
	/* the old connection's end is seen (reset), or the socket is gone already */
	assert_true(r.err == -ECONNRESET || r.err == -ENOENT);
	start_peer(GP_OK);
	call(&r, NULL, 0, 1000);
	assert_int_equal(r.err, 0);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* as the daemon (main.c): a write to a closed socket is an error, not a signal */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_request_and_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grpc_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peer_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_grpc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_cancels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peer_restarts, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
