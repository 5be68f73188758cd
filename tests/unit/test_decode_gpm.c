/*
 * test_decode_gpm.c: GPUPlacementMaps from JSON (src/k8s/decode_gpm.h): the fixtures gpm.json,
 * gpm-list.json and gpm-watch.jsonl of tests/fixtures/json field by field, then each wrong type, each
 * cap and each missing required field, with the message that names it.
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

#include "k8s/decode_gpm.h"
#include "sched/gang.h"
#include "slurp.h"

static void test_object(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp("tests/fixtures/json/gpm.json", &len), err[256] = "";
	cJSON *o = cJSON_ParseWithLength(text, len);
	struct gs_gpm g;

	assert_int_equal(gs_decode_gpm(o, &g, err, sizeof(err)), 0);
	assert_string_equal(g.ns, "ml");
	assert_string_equal(g.name, "train");
	assert_string_equal(g.uid, "6a1f0c2e-5b1d-4f9e-9a51-0d2f7c3b9e11");
	assert_string_equal(g.resource_version, "4711");
	assert_int_equal(g.generation, 3);
	assert_string_equal(g.map_text, "0=node1:0,1\n1=node2:0,1\n");
	assert_int_equal(g.map_len, strlen(g.map_text));
	assert_string_equal(g.placement, "all-or-nothing");
	assert_string_equal(g.gang_timeout, "15m");
	assert_string_equal(g.gang_size, "2");
	/* The settings read as the annotations do. */
	struct gs_gang_opts opts;
	assert_int_equal(gs_gang_opts_parse(g.placement, g.gang_timeout, g.gang_size, &opts, err, sizeof(err)), 0);
	assert_true(opts.all_or_nothing);
	assert_int_equal(opts.timeout_ms, 15 * 60 * 1000);
	assert_int_equal(opts.size, 2);
	/* The view the engine and the webhook take: the record's strings; an absent gangSize NULL, not "". */
	struct gs_gpm_view v;
	gs_gpm_view_of(&g, &v);
	assert_ptr_equal(v.ns, g.ns);
	assert_ptr_equal(v.map_text, g.map_text);
	assert_int_equal(v.map_len, g.map_len);
	assert_int_equal(v.generation, 3);
	assert_string_equal(v.gang_size, "2");
	g.gang_size[0] = '\0';
	gs_gpm_view_of(&g, &v);
	assert_null(v.gang_size);
	gs_gpm_free(&g);
	assert_null(g.ns);
	cJSON_Delete(o);
	free(text);
}

/* status: only the scheduler's NotHeld condition for the object's own generation is read, leniently. */
static void test_not_held(void **state)
{
	static const struct {
		const char *status;
		const char *want; /* NULL: not read */
	} cases[] = {
		{"{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"NotHeld\","
		 "\"observedGeneration\":3,\"message\":\"not held by the scheduler: over\"}]}",
		 "not held by the scheduler: over"},
		{"{\"conditions\":[{\"reason\":\"NotHeld\",\"observedGeneration\":2,\"message\":\"old\"}]}", NULL},
		{"{\"conditions\":[{\"reason\":\"Waiting\",\"observedGeneration\":3,\"message\":\"m\"}]}", NULL},
		{"{\"conditions\":[{\"reason\":\"NotHeld\",\"observedGeneration\":\"3\",\"message\":\"m\"}]}", NULL},
		{"{\"conditions\":{\"reason\":\"NotHeld\"}}", NULL},
		{"\"garbage\"", NULL},
		{"{\"conditions\":[7,{\"reason\":\"NotHeld\",\"observedGeneration\":3,\"message\":\"second\"}]}",
		 "second"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char json[1024], err[256] = "";
		struct gs_gpm g;
		snprintf(json, sizeof(json),
			 "{\"metadata\":{\"namespace\":\"ml\",\"name\":\"x\",\"uid\":\"u\",\"generation\":3},"
			 "\"spec\":{\"map\":\"0=n:0\"},\"status\":%s}",
			 cases[i].status);
		cJSON *o = cJSON_Parse(json);
		assert_non_null(o);
		assert_int_equal(gs_decode_gpm(o, &g, err, sizeof(err)), 0); /* status never fails the object */
		if (cases[i].want)
			assert_string_equal(g.not_held, cases[i].want);
		else if (g.not_held)
			fail_msg("case %zu: read \"%s\"", i, g.not_held);
		gs_gpm_free(&g);
		cJSON_Delete(o);
	}
}

struct seen {
	int n;
	char names[4][16];
	char sizes[4][24];
};

static int on_item(const struct gs_gpm *g, void *ud)
{
	struct seen *s = ud;
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", g->name);
	snprintf(s->sizes[s->n++], sizeof(s->sizes[0]), "%s", g->gang_size);
	return 0;
}

static int stop(const struct gs_gpm *g, void *ud)
{
	(void)g;
	(void)ud;
	return -ECANCELED;
}

static void test_list(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp("tests/fixtures/json/gpm-list.json", &len), *rv, *cont, err[256] = "";
	struct seen s = {0};
	unsigned skipped;

	assert_int_equal(gs_decode_gpm_list(text, len, on_item, &s, &rv, &cont, &skipped, err, sizeof(err)), 0);
	assert_int_equal(s.n, 2); /* "bad" has gangSize "8", a string: skipped, the others go on */
	assert_int_equal(skipped, 1);
	assert_string_equal(s.names[0], "a");
	assert_string_equal(s.names[1], "b");
	assert_string_equal(s.sizes[0], "");
	assert_string_equal(rv, "5000");
	assert_string_equal(cont, "abc");
	free(rv);
	free(cont);
	assert_int_equal(gs_decode_gpm_list(text, len, stop, NULL, &rv, &cont, NULL, err, sizeof(err)), -ECANCELED);
	assert_null(rv);
	assert_non_null(strstr(err, "stopped by the caller"));
	static const char no_items[] = "{\"metadata\":{}}";
	assert_int_equal(
		gs_decode_gpm_list(no_items, strlen(no_items), on_item, &s, &rv, &cont, NULL, err, sizeof(err)),
		-EINVAL);
	assert_string_equal(err, "gpuplacementmap list: no items");
	free(text);
}

static void test_watch(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp("tests/fixtures/json/gpm-watch.jsonl", &len), err[256] = "";
	struct gs_gpm_event ev;
	char *line = text, *nl;
	int n = 0;

	for (; (nl = strchr(line, '\n')); line = nl + 1, n++) {
		assert_int_equal(gs_decode_gpm_event(line, (size_t)(nl - line), &ev, err, sizeof(err)), 0);
		switch (n) {
		case 0:
			assert_int_equal(ev.type, GS_DECODE_EV_ADDED);
			assert_string_equal(ev.gpm.gang_timeout, "1h30m");
			assert_string_equal(ev.resource_version, "10");
			break;
		case 1:
			assert_int_equal(ev.type, GS_DECODE_EV_BOOKMARK);
			assert_string_equal(ev.resource_version, "12");
			assert_null(ev.gpm.name);
			break;
		case 2:
			assert_int_equal(ev.type, GS_DECODE_EV_DELETED);
			assert_string_equal(ev.gpm.uid, "u-1");
			assert_int_equal(ev.gpm.generation, 2);
			break;
		default:
			assert_int_equal(ev.type, GS_DECODE_EV_ERROR);
			assert_int_equal(ev.status_code, 410);
			assert_string_equal(ev.status_reason, "Expired");
		}
		gs_gpm_event_free(&ev);
	}
	assert_int_equal(n, 4);
	free(text);
}

/* Each object (a watch event's) must fail with exactly that message, leaving nothing behind. */
static void test_errors(void **state)
{
	(void)state;
#define META "\"metadata\":{\"name\":\"m\",\"namespace\":\"ns\",\"uid\":\"u\"}"
	static const struct {
		const char *obj, *msg;
	} cases[] = {
		{"[]", "gpuplacementmap watch event: object is not an object"},
		{"{\"spec\":{\"map\":\"\"}}", "gpuplacementmap watch event: metadata.namespace is missing"},
		{"{\"metadata\":{\"name\":\"m\",\"namespace\":\"ns\"},\"spec\":{\"map\":\"\"}}",
		 "gpuplacementmap ns/m: metadata.uid is missing"},
		{"{\"metadata\":{\"name\":7,\"namespace\":\"ns\"}}",
		 "gpuplacementmap watch event: metadata.name is not a string"},
		{"{" META "}", "gpuplacementmap ns/m: spec.map is missing"},
		{"{" META ",\"spec\":[]}", "gpuplacementmap ns/m: spec is not an object"},
		{"{" META ",\"spec\":{\"map\":1}}", "gpuplacementmap ns/m: spec.map is not a string"},
		{"{" META ",\"spec\":{\"map\":\"\",\"placement\":true}}",
		 "gpuplacementmap ns/m: spec.placement is not a string"},
		{"{" META ",\"spec\":{\"map\":\"\",\"gangTimeout\":60}}",
		 "gpuplacementmap ns/m: spec.gangTimeout is not a string"},
		{"{" META ",\"spec\":{\"map\":\"\",\"gangSize\":1.5}}",
		 "gpuplacementmap ns/m: spec.gangSize is not an integer"},
		{"{" META ",\"spec\":{\"map\":\"\",\"gangSize\":0}}",
		 "gpuplacementmap ns/m: spec.gangSize 0 is out of range"},
		{"{" META ",\"spec\":{\"map\":\"\",\"gangSize\":100001}}",
		 "gpuplacementmap ns/m: spec.gangSize 100001 is out of range"},
		{"{\"metadata\":{\"name\":\"m\",\"namespace\":\"ns\",\"uid\":\"u\",\"generation\":-1},\"spec\":{\"map\":\"\"}}",
		 "gpuplacementmap ns/m: metadata.generation -1 is out of range"},
	};
	char line[512], err[256];
	struct gs_gpm_event ev;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = snprintf(line, sizeof(line), "{\"type\":\"ADDED\",\"object\":%s}", cases[i].obj);
		err[0] = 0;
		assert_int_equal(gs_decode_gpm_event(line, (size_t)n, &ev, err, sizeof(err)), -EINVAL);
		if (strcmp(err, cases[i].msg) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, err, cases[i].msg);
		assert_null(ev.gpm.name);
		assert_null(ev.resource_version);
	}
}

/* A string at its cap is read; one byte more fails the object, naming the field and the cap. */
static void test_caps(void **state)
{
	(void)state;
	size_t big = GS_GPM_MAX_MAP + 1, cap = 256 + big;
	char *obj = malloc(cap), *map = malloc(big + 1), err[256];
	cJSON *o;
	struct gs_gpm g;

	memset(map, '#', big);
	map[big] = 0;
	for (int over = 0; over <= 1; over++) {
		snprintf(obj, cap, "{" META ",\"spec\":{\"map\":\"%.*s\"}}", (int)(big - 1 + (size_t)over), map);
		assert_non_null(o = cJSON_Parse(obj));
		int r = gs_decode_gpm(o, &g, err, sizeof(err));
		assert_int_equal(r, over ? -EINVAL : 0);
		if (over)
			assert_string_equal(err, "gpuplacementmap ns/m: spec.map is longer than 65536 bytes");
		else
			assert_int_equal(g.map_len, GS_GPM_MAX_MAP);
		gs_gpm_free(&g);
		cJSON_Delete(o);
	}
	snprintf(obj, cap, "{" META ",\"spec\":{\"map\":\"\",\"gangTimeout\":\"%.65s\"}}", map);
	assert_non_null(o = cJSON_Parse(obj));
	assert_int_equal(gs_decode_gpm(o, &g, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "gpuplacementmap ns/m: spec.gangTimeout is longer than 64 bytes");
	cJSON_Delete(o);
	free(obj);
	free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_object), cmocka_unit_test(test_not_held), cmocka_unit_test(test_list),
		cmocka_unit_test(test_watch),  cmocka_unit_test(test_errors),   cmocka_unit_test(test_caps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
