/*
 * test_decode.c: apiserver JSON into the compact records, from the fixtures in tests/fixtures/json
 * (real object shapes) and from hostile inputs: never a crash, always a reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "k8s/decode.h"

#define FIX "tests/fixtures/json/"
#define MAP_ANN "gpu-scheduler.io/map"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s (run from the repository root)", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc((size_t)n + 1);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return p;
}

static int decode_pod_file(const char *path, struct gs_pod_obj *p, char *err, size_t errlen)
{
	char *text = slurp(path, NULL);
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	memset(p, 0, sizeof(*p));
	int r = gs_decode_pod(j, MAP_ANN, p, err, errlen);
	cJSON_Delete(j);
	free(text);
	return r;
}

static void test_statefulset_pod(void **state)
{
	struct gs_pod_obj p;
	char err[256];
	assert_int_equal(decode_pod_file(FIX "pod-statefulset.json", &p, err, sizeof(err)), 0);
	assert_string_equal(p.ns, "ml");
	assert_string_equal(p.name, "trainer-2");
	assert_string_equal(p.uid, "5f0c7c1e-8d4b-4b7e-9b1a-3c2d1e0f9a82");
	assert_string_equal(p.resource_version, "184467");
	assert_string_equal(p.scheduler_name, "gpu-scheduler");
	assert_null(p.node_name);
	assert_string_equal(p.label_pod_index, "2");
	assert_string_equal(p.owner_kind, "StatefulSet");
	assert_string_equal(p.map_text, "0=node1:0,1\n1=node1:2,3\n2=node2:0,1\n");
	assert_int_equal(p.cuda_state, GS_CUDA_SAME);
	assert_string_equal(p.cuda_value, "0,1");
	assert_int_equal(p.n_containers, 2);
	assert_int_equal(p.created_ms, 1714558830000LL); /* 2024-05-01T10:20:30Z */
	assert_false(p.deleting);
	gs_pod_obj_free(&p);
}

static void test_job_pod_and_mixed_env(void **state)
{
	struct gs_pod_obj p;
	char err[256];
	assert_int_equal(decode_pod_file(FIX "pod-job.json", &p, err, sizeof(err)), 0);
	assert_string_equal(p.job_index, "3");
	/* valueFrom in one container, a literal in the other: not the same value everywhere. */
	assert_int_equal(p.cuda_state, GS_CUDA_MIXED);
	gs_pod_obj_free(&p);

	assert_int_equal(decode_pod_file(FIX "pod-bound.json", &p, err, sizeof(err)), 0);
	assert_string_equal(p.node_name, "node4");
	assert_int_equal(p.cuda_state, GS_CUDA_UNSET);
	gs_pod_obj_free(&p);
}

static void test_nodes(void **state)
{
	struct {
		const char *file, *name;
		int ready, cordoned;
		int64_t gpus;
	} cases[] = {
		{FIX "node-ready.json", "node1", 1, 0, 4},
		{FIX "node-cordoned.json", "node3", 1, 1, 8},
		{FIX "node-notready.json", "node2", 0, 0, -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = slurp(cases[i].file, NULL), err[256];
		cJSON *j = cJSON_Parse(text);
		struct gs_node_obj n;
		memset(&n, 0, sizeof(n));
		assert_int_equal(gs_decode_node(j, &n, err, sizeof(err)), 0);
		assert_string_equal(n.name, cases[i].name);
		assert_int_equal(n.ready, cases[i].ready);
		assert_int_equal(n.unschedulable, cases[i].cordoned);
		assert_int_equal(n.gpus, cases[i].gpus);
		gs_node_obj_free(&n);
		cJSON_Delete(j);
		free(text);
	}
}

static int count_item(enum gs_obj_kind kind, const void *obj, void *ud)
{
	(*(int *)ud)++;
	const struct gs_pod_obj *p = obj;
	assert_int_equal(kind, GS_OBJ_POD);
	assert_non_null(p->uid);
	return 0;
}

static void test_list_pages_and_status(void **state)
{
	size_t len;
	char *text = slurp(FIX "list-pods-page1.json", &len), *rv = NULL, *cont = NULL, err[256];
	int n = 0;
	unsigned skipped = 0;
	/* The page holds three pods, one with a spec.nodeName that is not a string: skipped, not fatal. */
	assert_int_equal(gs_decode_list_ex(text, len, GS_OBJ_POD, MAP_ANN, count_item, &n, &rv, &cont, &skipped, err,
					   sizeof(err)),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(skipped, 1);
	assert_string_equal(rv, "184470");
	assert_non_null(cont);
	assert_true(strlen(cont) > 10);
	free(rv);
	free(cont);
	free(text);

	text = slurp(FIX "status-410.json", &len);
	int code;
	char *reason = NULL, *message = NULL;
	assert_int_equal(gs_decode_status(text, len, &code, &reason, &message), 0);
	assert_int_equal(code, 410);
	assert_string_equal(reason, "Expired");
	free(reason);
	free(message);
	free(text);
}

static void test_watch_stream(void **state)
{
	size_t len;
	char *text = slurp(FIX "watch-pods.jsonl", &len), err[256];
	int events = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		struct gs_watch_event ev;
		memset(&ev, 0, sizeof(ev));
		int r = gs_decode_watch_event(line, strlen(line), GS_OBJ_POD, MAP_ANN, &ev, err, sizeof(err));
		assert_int_equal(r, 0);
		if (ev.type == GS_WATCH_ADDED || ev.type == GS_WATCH_MODIFIED || ev.type == GS_WATCH_DELETED)
			assert_non_null(ev.pod.uid);
		events++;
		gs_watch_event_free(&ev);
	}
	assert_int_equal(events, 5);
	free(text);
}

/* Hostile and broken inputs: each fails with a reason, none crashes or leaks (valgrind/ASan runs). */
static void test_bad_inputs(void **state)
{
	const char *bad[] = {
		"",
		"{",
		"null",
		"[]",
		"{\"type\":\"ADDED\"}",
		"{\"type\":\"ADDED\",\"object\":7}",
		"{\"type\":\"NOPE\",\"object\":{}}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":1,\"namespace\":\"n\",\"uid\":\"u\"}}}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"u\"},\"spec\":[]}}",
		"{\"type\":\"ADDED\",\"object\":{}} trailing",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gs_watch_event ev;
		char err[256] = "";
		memset(&ev, 0, sizeof(ev));
		int r = gs_decode_watch_event(bad[i], strlen(bad[i]), GS_OBJ_POD, MAP_ANN, &ev, err, sizeof(err));
		if (r == 0)
			fail_msg("accepted bad input %zu: %s", i, bad[i]);
		if (!err[0])
			fail_msg("no reason for bad input %zu", i);
		gs_watch_event_free(&ev);
	}

	/* Deep nesting must not recurse without bound. */
	size_t depth = 100000;
	char *deep = malloc(2 * depth + 1);
	memset(deep, '[', depth);
	memset(deep + depth, ']', depth);
	deep[2 * depth] = '\0';
	struct gs_watch_event ev;
	char err[256];
	memset(&ev, 0, sizeof(ev));
	assert_true(gs_decode_watch_event(deep, 2 * depth, GS_OBJ_POD, MAP_ANN, &ev, err, sizeof(err)) < 0);
	gs_watch_event_free(&ev);
	free(deep);

	/* A list with one broken item: the others still come through. */
	const char *list = "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"5\"},\"items\":["
			   "{\"metadata\":{\"name\":\"ok-0\",\"namespace\":\"n\",\"uid\":\"u1\"},\"spec\":{}},"
			   "{\"metadata\":{\"name\":\"broken\"}},"
			   "{\"metadata\":{\"name\":\"ok-1\",\"namespace\":\"n\",\"uid\":\"u2\"},\"spec\":{}}]}";
	int n = 0;
	unsigned skipped = 0;
	char *rv = NULL, *cont = NULL;
	assert_int_equal(gs_decode_list_ex(list, strlen(list), GS_OBJ_POD, MAP_ANN, count_item, &n, &rv, &cont, &skipped,
					   err, sizeof(err)),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(skipped, 1);
	free(rv);
	free(cont);
}

static void test_quantities_and_times(void **state)
{
	int64_t v;
	assert_int_equal(gs_decode_quantity("4", &v), 0);
	assert_int_equal(v, 4);
	assert_true(gs_decode_quantity("abc", &v) < 0);
	int64_t ms;
	assert_int_equal(gs_decode_time("1970-01-01T00:00:01Z", &ms), 0);
	assert_int_equal(ms, 1000);
	assert_true(gs_decode_time("yesterday", &ms) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statefulset_pod),
		cmocka_unit_test(test_job_pod_and_mixed_env),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_list_pages_and_status),
		cmocka_unit_test(test_watch_stream),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_quantities_and_times),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
