/*
 * test_api_gpm.c: the status patch of a GPUPlacementMap (src/k8s/api.h, gs_api_gpm_status_body): the
 * fields deploy/crd/gpuplacementmaps.yaml's status schema names, nulls for what no waiting pod gives
 * (a merge patch removes them), the Ready condition's reasons, and messages cut to the schema's cap
 * without splitting a UTF-8 sequence.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "k8s/api.h"

/* The body of st as JSON (the caller deletes it); its "status" in *status. */
static cJSON *body_of(const struct gs_gpm_status *st, const cJSON **status)
{
	struct gs_buf b;
	cJSON *root;

	gs_buf_init(&b, 64 * 1024);
	assert_int_equal(gs_api_gpm_status_body(st, 1795780800000LL, &b), 0);
	root = cJSON_ParseWithLength(b.data, b.len);
	gs_buf_free(&b);
	assert_non_null(root);
	*status = cJSON_GetObjectItemCaseSensitive(root, "status");
	assert_non_null(*status);
	return root;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static const cJSON *ready_of(const cJSON *status)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	assert_int_equal(cJSON_GetArraySize(c), 1);
	assert_string_equal(str(cJSON_GetArrayItem(c, 0), "type"), "Ready");
	return cJSON_GetArrayItem(c, 0);
}

static void test_waiting(void **state)
{
	(void)state;
	struct gs_gpm_status st = {.ns = "ml",
				   .name = "ranks",
				   .observed_generation = 3,
				   .entries = 4,
				   .placed = 1,
				   .waiting = 3,
				   .oldest_index = 1,
				   .oldest_name = "train-1",
				   .oldest_reason = GS_WAIT_NODE_MISSING,
				   .oldest_message = "node n9 does not exist"};
	const cJSON *s, *r, *ow, *ready;

	st.waiting_by[GS_WAIT_NODE_MISSING] = 2;
	st.waiting_by[GS_WAIT_TAINT] = 1;
	cJSON *root = body_of(&st, &s);
	assert_int_equal(num(s, "observedGeneration"), 3);
	assert_int_equal(num(s, "entries"), 4);
	assert_int_equal(num(s, "placed"), 1);
	assert_int_equal(num(s, "waiting"), 3);
	r = cJSON_GetObjectItemCaseSensitive(s, "reasons");
	assert_int_equal(cJSON_GetArraySize(r), 2); /* only the reasons some pod gives, in the enum's order */
	assert_string_equal(str(cJSON_GetArrayItem(r, 0), "reason"), "NODE_MISSING");
	assert_int_equal(num(cJSON_GetArrayItem(r, 0), "count"), 2);
	assert_string_equal(str(cJSON_GetArrayItem(r, 1), "reason"), "TAINT");
	assert_string_equal(str(s, "topReason"), "NODE_MISSING");
	ow = cJSON_GetObjectItemCaseSensitive(s, "oldestWaiting");
	assert_int_equal(num(ow, "index"), 1);
	assert_string_equal(str(ow, "pod"), "train-1");
	assert_string_equal(str(ow, "reason"), "NODE_MISSING");
	assert_string_equal(str(ow, "message"), "node n9 does not exist");
	ready = ready_of(s);
	assert_string_equal(str(ready, "status"), "False");
	assert_string_equal(str(ready, "reason"), "Waiting");
	assert_string_equal(str(ready, "lastTransitionTime"), "2026-11-27T12:00:00Z");
	assert_int_equal(num(ready, "observedGeneration"), 3);
	cJSON_Delete(root);
}

static void test_ready_and_nulls(void **state)
{
	(void)state;
	struct gs_gpm_status st = {.ns = "ml",
				   .name = "ranks",
				   .observed_generation = 1,
				   .entries = 2,
				   .placed = 2,
				   .oldest_index = -1,
				   .ready = 1};
	const cJSON *s;
	cJSON *root = body_of(&st, &s);

	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "reasons")), 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(s, "topReason")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(s, "oldestWaiting")));
	assert_string_equal(str(ready_of(s), "status"), "True");
	assert_string_equal(str(ready_of(s), "reason"), "Placed");
	cJSON_Delete(root);

	st.ready = 0;
	st.placed = 1; /* nothing waits, an entry has no pod yet */
	root = body_of(&st, &s);
	assert_string_equal(str(ready_of(s), "reason"), "Incomplete");
	cJSON_Delete(root);

	st.map_error = "line 1: missing '=' between index and node";
	root = body_of(&st, &s);
	assert_string_equal(str(ready_of(s), "reason"), "MapInvalid");
	assert_string_equal(str(ready_of(s), "message"), st.map_error);
	cJSON_Delete(root);
}

/* A message of 2-byte characters past the cap: cut at a character, never inside one. */
static void test_message_cap(void **state)
{
	(void)state;
	char msg[3001];
	struct gs_gpm_status st = {.ns = "ml",
				   .name = "r",
				   .entries = 1,
				   .waiting = 1,
				   .oldest_index = 0,
				   .oldest_name = "r-0",
				   .oldest_reason = GS_WAIT_TAINT,
				   .oldest_message = msg};
	const cJSON *s;

	msg[0] = 'x'; /* odd offset: the cap falls inside a character */
	for (size_t i = 1; i + 1 < sizeof(msg); i += 2)
		memcpy(msg + i, "\xc3\xa9", 2);
	msg[sizeof(msg) - 1] = '\0';
	st.waiting_by[GS_WAIT_TAINT] = 1;
	cJSON *root = body_of(&st, &s);
	const char *m = str(cJSON_GetObjectItemCaseSensitive(s, "oldestWaiting"), "message");
	size_t n = strlen(m);
	assert_true(n <= 1000 && n >= 998);
	assert_int_equal((n - 1) % 2, 0); /* 'x' and whole characters */
	cJSON_Delete(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waiting),
		cmocka_unit_test(test_ready_and_nulls),
		cmocka_unit_test(test_message_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
