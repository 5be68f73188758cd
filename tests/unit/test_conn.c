/*
 * test_conn.c: the connection layer's handshake budget (conn.h): TLS handshake steps share a budget
 * per loop turn, so a burst of handshakes neither stalls established connections nor is starved by
 * them. Server and clients are gs_conns in one loop; the test's own check handle counts loop turns
 * and the read-driven handshake steps each turn ran (gs_conn__hs_stats). Also the close protocol
 * around a connect by name: on_close waits for the resolver's callback.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/conn.h"
#include "core/tls.h"

#define MAX_HEAD 8192

/* One side of a connection: ours, with what it saw. */
struct peer {
	struct gs_conn conn;
	int server;   /* accepted (else: a client we opened) */
	int ready;    /* TLS handshake done (or plain) */
	int messages; /* complete messages received */
	int pingpong; /* client: sends the next request as soon as an answer arrives */
	int index;    /* server: order of accept (0, 1, ...) */
	struct peer *next;
};

static uv_loop_t loop;
static uv_tcp_t tls_listener, plain_listener;
static int tls_port, plain_port;
static struct gs_tls_config *srv_cfg, *cli_cfg;
static struct peer *peers;                   /* every peer, for teardown */
static int n_clients_ready, n_servers_ready; /* TLS handshakes completed, each side */
static int n_accepted, first_ready_index;

/* Turns and steps, counted by the test's check handle at the end of every turn. */
static uv_check_t turn_check;
static unsigned turn;
static uint64_t steps_at_turn_start, max_steps_per_turn;

static const char request[] = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

static const llhttp_settings_t settings; /* nothing but message ends (the conn wraps those) */

static void on_ready(struct gs_conn *c, int err)
{
	struct peer *p = GS_CONTAINER_OF(c, struct peer, conn);
	assert_int_equal(err, 0);
	p->ready = 1;
	if (!c->tls)
		return; /* counted: TLS handshakes only */
	if (p->server && n_servers_ready++ == 0)
		first_ready_index = p->index;
	if (!p->server)
		n_clients_ready++;
}

static void on_message(struct gs_conn *c)
{
	struct peer *p = GS_CONTAINER_OF(c, struct peer, conn);
	p->messages++;
	if (p->server)
		assert_int_equal(gs_conn__write(c, answer, strlen(answer)), 0);
	else if (p->pingpong)
		assert_int_equal(gs_conn__write(c, request, strlen(request)), 0);
	gs_conn__resume(c);
}

static void on_error(struct gs_conn *c, int err)
{
	gs_conn__close(c);
}

static void on_timeout(struct gs_conn *c)
{
}

static int n_closed;

static void on_close(struct gs_conn *c)
{
	struct peer *p = GS_CONTAINER_OF(c, struct peer, conn);
	assert_false(c->gai_pending); /* the resolver's callback has run: nothing refers to c now */
	n_closed++;
	for (struct peer **pp = &peers; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	free(p);
}

static const struct gs_conn_cbs cbs = {
	.on_ready = on_ready,
	.on_message = on_message,
	.on_error = on_error,
	.on_timeout = on_timeout,
	.on_close = on_close,
};

static struct peer *peer_new(llhttp_type_t type, int server)
{
	struct peer *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	gs_conn__init(&p->conn, &loop, type, &settings, &cbs, MAX_HEAD);
	p->server = server;
	p->next = peers;
	peers = p;
	return p;
}

static void on_accept(uv_stream_t *l, int status)
{
	assert_int_equal(status, 0);
	struct gs_tls *tls = NULL;
	if (l == (uv_stream_t *)&tls_listener)
		assert_int_equal(gs_tls_server_new(srv_cfg, &tls), 0);
	struct peer *p = peer_new(HTTP_REQUEST, 1);
	p->index = n_accepted++;
	assert_int_equal(gs_conn__accept(&p->conn, l, tls), 0);
}

static int listen_on(uv_tcp_t *l)
{
	struct sockaddr_in sa;
	uv_ip4_addr("127.0.0.1", 0, &sa);
	assert_int_equal(uv_tcp_init(&loop, l), 0);
	assert_int_equal(uv_tcp_bind(l, (const struct sockaddr *)&sa, 0), 0);
	assert_int_equal(uv_listen((uv_stream_t *)l, 128, on_accept), 0);
	int len = sizeof(sa);
	assert_int_equal(uv_tcp_getsockname(l, (struct sockaddr *)&sa, &len), 0);
	return ntohs(sa.sin_port);
}

static struct peer *client_open(int tls_port_or_plain)
{
	struct peer *p = peer_new(HTTP_RESPONSE, 0);
	struct gs_tls *tls = NULL;
	if (tls_port_or_plain == tls_port)
		assert_int_equal(gs_tls_client_new(cli_cfg, "localhost", &tls), 0);
	assert_int_equal(gs_conn__connect(&p->conn, "127.0.0.1", tls_port_or_plain, tls), 0);
	return p;
}

static void on_turn_end(uv_check_t *h)
{
	struct gs_conn_hs_stats st;
	gs_conn__hs_stats(&st);
	if (st.steps - steps_at_turn_start > max_steps_per_turn)
		max_steps_per_turn = st.steps - steps_at_turn_start;
	steps_at_turn_start = st.steps;
	turn++;
}

static int setup(void **state)
{
	static const char *const names[] = {"localhost", NULL};
	struct gs_tls_cert_req cr = {
		.common_name = "t", .dns_names = names, .not_before = 0, .not_after = 4102444800LL};
	char *cert, *key, err[256];
	assert_int_equal(gs_tls_generate(&cr, NULL, NULL, &cert, &key, err, sizeof(err)), 0);
	assert_int_equal(gs_tls_server_config_new(cert, strlen(cert), key, strlen(key), &srv_cfg, err, sizeof(err)), 0);
	struct gs_tls_client_opts co = {.ca = cert, .ca_len = strlen(cert)};
	assert_int_equal(gs_tls_client_config_new(&co, &cli_cfg, err, sizeof(err)), 0);
	free(cert);
	free(key);

	assert_int_equal(uv_loop_init(&loop), 0);
	tls_port = listen_on(&tls_listener);
	plain_port = listen_on(&plain_listener);
	assert_int_equal(uv_check_init(&loop, &turn_check), 0);
	assert_int_equal(uv_check_start(&turn_check, on_turn_end), 0);
	uv_unref((uv_handle_t *)&turn_check);
	n_clients_ready = n_servers_ready = n_accepted = n_closed = 0;
	first_ready_index = -1;
	turn = 0;
	max_steps_per_turn = 0;
	struct gs_conn_hs_stats st;
	gs_conn__hs_stats(&st);
	steps_at_turn_start = st.steps;
	return 0;
}

static int teardown(void **state)
{
	gs_conn__hs_budget(GS_CONN_HS_BUDGET_NS);
	gs_conn__hs_lifo_after(GS_CONN_HS_LIFO_AFTER_NS);
	for (struct peer *p = peers; p; p = p->next)
		gs_conn__close(&p->conn);
	uv_close((uv_handle_t *)&tls_listener, NULL);
	uv_close((uv_handle_t *)&plain_listener, NULL);
	uv_close((uv_handle_t *)&turn_check, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_null(peers);
	struct gs_conn_hs_stats st;
	gs_conn__hs_stats(&st);
	assert_int_equal(st.queued, 0);
	assert_int_equal(uv_loop_close(&loop), 0); /* the budget's own handles are closed too */
	gs_tls_config_unref(srv_cfg);
	gs_tls_config_unref(cli_cfg);
	return 0;
}

/* Runs single turns until pred() or max_turns. */
static int run_turns(int (*pred)(void), unsigned max_turns)
{
	for (unsigned i = 0; i < max_turns && !pred(); i++)
		uv_run(&loop, UV_RUN_NOWAIT);
	return pred();
}

/* A bound for what waits on the thread pool (getaddrinfo), not on loop turns: an idle turn takes well
 * under a microsecond, so 10,000 of them (a few ms under ASan) were not always enough on a loaded
 * machine. This many is seconds. */
#define RESOLVE_TURNS 10000000u

static int n_tls;
static int all_handshakes_done(void)
{
	return n_clients_ready == n_tls && n_servers_ready == n_tls;
}

static struct peer *established;
static int established_ready(void)
{
	return established->ready;
}

static int hs_queued(void)
{
	struct gs_conn_hs_stats st;
	gs_conn__hs_stats(&st);
	return st.queued > 0;
}

/* Opens n TLS clients at once (n_tls = n). */
static void open_tls_burst(int n)
{
	n_tls = n;
	for (int i = 0; i < n; i++)
		client_open(tls_port);
}

/* A burst of n handshakes run to completion (asserted, within max_turns). *d gets what the burst
 * added to the counters (steps, deferred, ns, lifo) and the queue's length after it (queued). */
static void run_tls_burst(int n, unsigned max_turns, struct gs_conn_hs_stats *d)
{
	struct gs_conn_hs_stats st0, st;
	gs_conn__hs_stats(&st0);
	open_tls_burst(n);
	assert_true(run_turns(all_handshakes_done, max_turns));
	gs_conn__hs_stats(&st);
	d->steps = st.steps - st0.steps;
	d->deferred = st.deferred - st0.deferred;
	d->ns = st.ns - st0.ns;
	d->lifo = st.lifo - st0.lifo;
	d->queued = st.queued;
}

/* With budget 0 every read-driven step waits for the next turn and each turn runs one: a burst of
 * handshakes spreads over many turns instead of one. (Without the budget all eight ClientHellos
 * arriving together are answered in one poll phase.) */
static void test_one_step_per_turn(void **state)
{
	struct gs_conn_hs_stats d;
	gs_conn__hs_budget(0);
	run_tls_burst(8, 10000, &d);
	assert_int_equal(max_steps_per_turn, 1);
	/* Each handshake: the server's ClientHello and Finished steps, the client's two: 32 steps. */
	assert_true(d.steps >= 4 * (uint64_t)n_tls);
	assert_true(d.deferred >= d.steps); /* every one went through the queue */
	assert_true(turn >= d.steps);
	assert_int_equal(d.queued, 0);
}

/* A tiny budget (1 ns): the first step of a turn runs at once when nothing is queued (inline, in the
 * poll phase), every other one waits. Still one step per turn. */
static void test_tiny_budget_inline_then_queue(void **state)
{
	struct gs_conn_hs_stats d;
	gs_conn__hs_budget(1);
	run_tls_burst(8, 10000, &d);
	assert_int_equal(max_steps_per_turn, 1);
	assert_true(d.deferred > 0);
	assert_true(d.deferred < d.steps); /* some ran inline */
}

/* With the default budget (10 ms a turn) a burst of 40 completes, and no turn runs all the 40
 * ClientHellos that arrive together (without the budget one turn does: 40 steps; a step here costs
 * about 1 ms, an ECDHE key pair and an ECDSA signature, so the budget allows ~10). */
static void test_default_budget_completes(void **state)
{
	struct gs_conn_hs_stats d;
	run_tls_burst(40, 100000, &d);
	assert_true(d.steps >= 4 * (uint64_t)n_tls);
	assert_true(max_steps_per_turn < (uint64_t)n_tls);
	assert_true(d.deferred > 0);
	assert_int_equal(d.queued, 0);
}

/* A request on an established connection is answered within a few turns while handshakes are
 * queued: it never waits for the queue. */
static void test_established_not_starved(void **state)
{
	established = client_open(plain_port);
	assert_true(run_turns(established_ready, 100));
	gs_conn__hs_budget(0);
	open_tls_burst(16);
	assert_true(run_turns(hs_queued, 100)); /* a handshake burst is queued */
	struct gs_conn_hs_stats st0, st;
	gs_conn__hs_stats(&st0);
	assert_int_equal(gs_conn__write(&established->conn, request, strlen(request)), 0);
	unsigned t0 = turn;
	while (established->messages == 0 && turn - t0 < 100)
		uv_run(&loop, UV_RUN_NOWAIT);
	gs_conn__hs_stats(&st);
	assert_int_equal(established->messages, 1);
	assert_true(turn - t0 <= 4);
	assert_true(st.steps - st0.steps <= 4); /* at most one step per turn meanwhile */
	assert_true(hs_queued());               /* answered ahead of the queue, not after it */
	assert_true(run_turns(all_handshakes_done, 10000));
}

/* First steps go oldest first while the queue moves; once the oldest has waited past the LIFO
 * threshold, newest first. With one step per turn (budget 0) and all ClientHellos queued in one turn,
 * the first server to finish is the first accepted (FIFO) or the last (threshold 0: always LIFO). */
static void burst_first_ready(int n, uint64_t lifo_after, struct gs_conn_hs_stats *d)
{
	gs_conn__hs_budget(0);
	gs_conn__hs_lifo_after(lifo_after);
	run_tls_burst(n, 10000, d);
}

static void test_fifo_then_newest_first(void **state)
{
	struct gs_conn_hs_stats d;
	burst_first_ready(6, 60 * 1000000000ULL, &d); /* never reached, even under valgrind */
	assert_int_equal(d.lifo, 0);
	assert_int_equal(first_ready_index, 0);
}

static void test_newest_first_when_overloaded(void **state)
{
	struct gs_conn_hs_stats d;
	burst_first_ready(6, 0, &d);
	assert_true(d.lifo > 0);
	assert_int_equal(first_ready_index, 5);
}

static struct peer *busy;
static int busy_started(void)
{
	return busy->messages > 0;
}

/* A connection that always has a request in flight (every answer sends the next) makes every turn
 * do I/O; the queued handshakes still complete, one per turn at least. */
static void test_handshakes_not_starved(void **state)
{
	busy = client_open(plain_port);
	busy->pingpong = 1;
	established = busy;
	assert_true(run_turns(established_ready, 100));
	assert_int_equal(gs_conn__write(&busy->conn, request, strlen(request)), 0);
	assert_true(run_turns(busy_started, 100));
	gs_conn__hs_budget(0);
	open_tls_burst(8);
	int m0 = busy->messages;
	assert_true(run_turns(all_handshakes_done, 10000));
	assert_true(busy->messages > m0 + 10); /* the ping-pong went on throughout */
	assert_int_equal(max_steps_per_turn, 1);
}

static int one_closed(void)
{
	return n_closed > 0;
}

/* Closed while its name is being resolved: the close waits for getaddrinfo's callback (cancelled or
 * not), then on_close runs once. */
static void test_close_while_resolving(void **state)
{
	struct peer *p = peer_new(HTTP_RESPONSE, 0);
	assert_int_equal(gs_conn__connect(&p->conn, "localhost", plain_port, NULL), 0);
	assert_true(p->conn.gai_pending);
	gs_conn__close(&p->conn);
	gs_conn__close(&p->conn); /* idempotent */
	assert_true(run_turns(one_closed, RESOLVE_TURNS));
	for (int i = 0; i < 10; i++)
		uv_run(&loop, UV_RUN_NOWAIT);
	assert_int_equal(n_closed, 1);
	assert_null(peers);
	assert_int_equal(n_accepted, 0);
}

static struct peer *by_name;
static int established_ready_by_name(void)
{
	return by_name->ready;
}

static int by_name_answered(void)
{
	return by_name->messages == 1;
}

/* A connect by name resolves, connects and carries a request; its close then finishes once. */
static void test_connect_by_name(void **state)
{
	by_name = peer_new(HTTP_RESPONSE, 0);
	assert_int_equal(gs_conn__connect(&by_name->conn, "localhost", plain_port, NULL), 0);
	assert_true(by_name->conn.gai_pending);
	assert_true(run_turns(established_ready_by_name, RESOLVE_TURNS));
	assert_int_equal(gs_conn__write(&by_name->conn, request, strlen(request)), 0);
	assert_true(run_turns(by_name_answered, 10000));
	assert_int_equal(n_accepted, 1);
	gs_conn__close(&by_name->conn);
	assert_int_equal(n_closed, 0); /* never from inside the close call */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_step_per_turn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tiny_budget_inline_then_queue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_default_budget_completes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_then_newest_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newest_first_when_overloaded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_established_not_starved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handshakes_not_starved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_while_resolving, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_by_name, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
