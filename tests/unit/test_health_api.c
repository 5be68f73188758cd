/*
 * test_health_api.c: the operational endpoints (core/health.c) over a real socket, and the pure parts
 * of the apiserver calls (k8s/api.c result classes, k8s/kube.c path escaping, timestamps).
 * Binding, events, conditions and deletion themselves run against the real apiserver in
 * tests/integration/.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/health.h"
#include "core/http.h"
#include "k8s/api.h"
#include "k8s/kube.h"

static uv_loop_t loop;
static int ready;
static int done;
static int status;
static char body[8192];
static char ctype[128];

static int ready_cb(char *why, size_t whylen, void *ud)
{
	if (!ready)
		snprintf(why, whylen, "caches not synced");
	return ready;
}

static void on_done(struct gs_http_call *c, int err, const struct gs_http_response *r, void *ud)
{
	assert_int_equal(err, 0);
	status = r->status;
	snprintf(body, sizeof(body), "%s", r->body);
	snprintf(ctype, sizeof(ctype), "%s", r->content_type);
	done = 1;
}

static void get(struct gs_http_client *c, const char *method, const char *path)
{
	struct gs_http_request req = {.method = method, .path = path};
	done = 0;
	assert_int_equal(gs_http_send(c, &req, on_done, NULL, NULL), 0);
	while (!done)
		uv_run(&loop, UV_RUN_ONCE);
}

static int closed;
static void on_closed(void *ud)
{
	closed++;
}

/* Closes the client and the server, then checks that every handle is gone. */
static void stop(struct gs_http_client *cl, struct gs_health *h, struct gs_metrics *m)
{
	closed = 0;
	gs_http_client_close(cl, on_closed, NULL);
	gs_health_close(h, on_closed, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(closed, 2);
	assert_int_equal(uv_loop_close(&loop), 0);
	gs_metrics_free(m);
}

static int routed;
static char *route_cb(const char *path, int *st, const char **ct, void *ud)
{
	char *b = malloc(256);
	assert_non_null(b);
	snprintf(b, 256, "{\"path\":\"%s\"}", path);
	*st = 299;
	*ct = "application/json";
	(*(int *)ud)++;
	return b;
}

static void test_endpoints(void **state)
{
	uv_loop_init(&loop);
	struct gs_metrics *m = gs_metrics_new();
	struct gs_counter c = {42};
	gs_metrics_counter(m, "t_total", "A counter.", NULL, &c);
	struct gs_health *h;
	assert_int_equal(gs_health_start(&loop, "127.0.0.1:0", m, ready_cb, NULL, &h), 0);
	struct gs_http_client_opts o = {.host = "127.0.0.1", .port = gs_health_port(h), .max_conns = 1};
	struct gs_http_client *cl;
	assert_int_equal(gs_http_client_new(&loop, &o, &cl), 0);

	get(cl, "GET", "/healthz");
	assert_int_equal(status, 200);
	assert_string_equal(body, "ok\n");
	get(cl, "GET", "/livez");
	assert_int_equal(status, 200);
	ready = 0;
	get(cl, "GET", "/readyz");
	assert_int_equal(status, 503);
	assert_non_null(strstr(body, "caches not synced"));
	ready = 1;
	get(cl, "GET", "/readyz");
	assert_int_equal(status, 200);
	get(cl, "GET", "/metrics");
	assert_int_equal(status, 200);
	assert_string_equal(ctype, GS_METRICS_CONTENT_TYPE);
	assert_non_null(strstr(body, "t_total 42\n"));
	get(cl, "GET", "/nope");
	assert_int_equal(status, 404);
	/* A routed prefix: the owner answers with its status and type; the rest stays 404. */
	get(cl, "GET", "/debug/x");
	assert_int_equal(status, 404);
	gs_health_route(h, "/debug/", route_cb, &routed);
	get(cl, "GET", "/debug/pods/a/b");
	assert_int_equal(status, 299);
	assert_string_equal(ctype, "application/json");
	assert_string_equal(body, "{\"path\":\"/debug/pods/a/b\"}");
	assert_int_equal(routed, 1);
	get(cl, "GET", "/debugx");
	assert_int_equal(status, 404);
	get(cl, "POST", "/debug/pending");
	assert_int_equal(status, 405);
	assert_int_equal(routed, 1);
	get(cl, "POST", "/healthz");
	assert_int_equal(status, 405);

	stop(cl, h, m);
}

/* The daemon's plain port: probes only; /metrics and the route exist only when asked for. */
static void test_plain_port_no_data(void **state)
{
	uv_loop_init(&loop);
	struct gs_metrics *m = gs_metrics_new();
	struct gs_health *h;
	struct gs_health_opts ho = {.addr = "127.0.0.1:0", .metrics = m};
	assert_int_equal(gs_health_start_opts(&loop, &ho, &h), 0);
	struct gs_http_client_opts o = {.host = "127.0.0.1", .port = gs_health_port(h), .max_conns = 1};
	struct gs_http_client *cl;
	assert_int_equal(gs_http_client_new(&loop, &o, &cl), 0);
	ready = 1;
	get(cl, "GET", "/readyz");
	assert_int_equal(status, 200);
	get(cl, "GET", "/metrics");
	assert_int_equal(status, 404);
	get(cl, "GET", "/debug/pending");
	assert_int_equal(status, 404);
	stop(cl, h, m);
}

/* A gate that holds what it is given, and answers when the test says. */
static struct gs_http_server_req *gated;
static void hold_gate(struct gs_health *h, struct gs_http_server_req *r, void *ud)
{
	gated = r;
}

static int call_done, call_err;
static void on_call(struct gs_http_call *c, int err, const struct gs_http_response *r, void *ud)
{
	call_done = 1;
	call_err = err;
	status = r ? r->status : 0;
}

/* The gate answers later: refusal, then passage; and a close waits for the gate's last answer. */
static void test_gate(void **state)
{
	uv_loop_init(&loop);
	struct gs_metrics *m = gs_metrics_new();
	struct gs_health *h;
	struct gs_http_client *cl;
	struct gs_health_opts ho = {.addr = "127.0.0.1:0", .metrics = m, .serve_metrics = 1, .gate = hold_gate};
	struct gs_http_request req = {.method = "GET", .path = "/metrics"};
	assert_int_equal(gs_health_start_opts(&loop, &ho, &h), 0);
	struct gs_http_client_opts o = {.host = "127.0.0.1", .port = gs_health_port(h), .max_conns = 1};
	assert_int_equal(gs_http_client_new(&loop, &o, &cl), 0);

	get(cl, "GET", "/healthz"); /* the probes never meet the gate */
	assert_int_equal(status, 200);
	assert_null(gated);
	for (int pass = 0; pass < 2; pass++) {
		call_done = 0;
		assert_int_equal(gs_http_send(cl, &req, on_call, NULL, NULL), 0);
		while (!gated)
			uv_run(&loop, UV_RUN_ONCE);
		assert_false(call_done);
		gs_health_gate_done(h, gated, pass ? 0 : 401, "no\n", NULL, 0);
		gated = NULL;
		while (!call_done)
			uv_run(&loop, UV_RUN_ONCE);
		assert_int_equal(status, pass ? 200 : 401);
	}
	/* Held at the gate when the server closes: the close completes only after the gate answers. */
	call_done = 0;
	assert_int_equal(gs_http_send(cl, &req, on_call, NULL, NULL), 0);
	while (!gated)
		uv_run(&loop, UV_RUN_ONCE);
	closed = 0;
	gs_health_close(h, on_closed, NULL);
	for (int i = 0; i < 20; i++)
		uv_run(&loop, UV_RUN_NOWAIT);
	assert_int_equal(closed, 0);
	gs_health_gate_done(h, gated, 0, "", NULL, 0); /* into the void: the connection is gone */
	gated = NULL;
	while (closed < 1 || !call_done)
		uv_run(&loop, UV_RUN_ONCE);
	assert_true(call_err < 0);
	gs_http_client_close(cl, on_closed, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(closed, 2);
	assert_int_equal(uv_loop_close(&loop), 0);
	gs_metrics_free(m);
}

static void test_classify(void **state)
{
	struct gs_http_response r = {0};
	assert_int_equal(gs_api_classify(-ECONNREFUSED, NULL), GS_API_RETRY);
	int codes[][2] = {{200, GS_API_OK},       {201, GS_API_OK},      {404, GS_API_GONE},  {409, GS_API_GONE},
			  {429, GS_API_RETRY},    {500, GS_API_RETRY},   {503, GS_API_RETRY}, {400, GS_API_REJECTED},
			  {403, GS_API_REJECTED}, {422, GS_API_REJECTED}};
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		r.status = codes[i][0];
		assert_int_equal(gs_api_classify(0, &r), codes[i][1]);
	}
}

/* A 409 to a binding whose answer was lost the first time: the pod is already where we asked. */
static void test_bind_already_on(void **state)
{
	/* kube-apiserver 1.20's answer to a second binding of a bound pod, as sent. */
	static const char same[] =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":"
		"\"Operation cannot be fulfilled on pods/binding \\\"web-3\\\": pod web-3 is already assigned to node "
		"\\\"node1\\\"\",\"reason\":\"Conflict\",\"details\":{\"name\":\"web-3\",\"kind\":\"pods/binding\"},"
		"\"code\":409}";
	static const char uid[] =
		"{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"Operation cannot be fulfilled on pods/binding "
		"\\\"web-3\\\": Precondition failed: UID in precondition: 1, UID in object meta: 2\",\"reason\":\"Conflict\","
		"\"code\":409}";
	struct gs_http_response r = {.status = 409, .body = same, .body_len = sizeof(same) - 1};

	assert_int_equal(gs_api_bind_already_on(&r, "node1"), 1);
	/* Another node, a prefix of the name, a longer name: not ours. */
	assert_int_equal(gs_api_bind_already_on(&r, "node2"), 0);
	assert_int_equal(gs_api_bind_already_on(&r, "node"), 0);
	assert_int_equal(gs_api_bind_already_on(&r, "node10"), 0);
	assert_int_equal(gs_api_bind_already_on(&r, ""), 0);
	/* The same words with another status, or another conflict. */
	r.status = 201;
	assert_int_equal(gs_api_bind_already_on(&r, "node1"), 0);
	r = (struct gs_http_response){.status = 409, .body = uid, .body_len = sizeof(uid) - 1};
	assert_int_equal(gs_api_bind_already_on(&r, "node1"), 0);
	/* No Status at all, a truncated one, nothing. */
	r = (struct gs_http_response){.status = 409, .body = "", .body_len = 0};
	assert_int_equal(gs_api_bind_already_on(&r, "node1"), 0);
	r = (struct gs_http_response){.status = 409, .body = same, .body_len = 120};
	assert_int_equal(gs_api_bind_already_on(&r, "node1"), 0);
	assert_int_equal(gs_api_bind_already_on(NULL, "node1"), 0);
}

static void test_escape_and_time(void **state)
{
	char out[64];
	assert_int_equal(gs_kube_escape("web-0", out, sizeof(out)), 0);
	assert_string_equal(out, "web-0");
	assert_int_equal(gs_kube_escape("a b/c?d", out, sizeof(out)), 0);
	assert_string_equal(out, "a%20b%2Fc%3Fd");
	assert_int_equal(gs_kube_escape("0123456789", out, 8), -E2BIG);
	gs_api_time(1714558830123LL, out, sizeof(out));
	assert_non_null(strstr(out, "2024-05-01T10:20:30"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endpoints),
		cmocka_unit_test(test_plain_port_no_data),
		cmocka_unit_test(test_gate),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_bind_already_on),
		cmocka_unit_test(test_escape_and_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
