/*
 * test_decode_pdb.c: PodDisruptionBudgets from JSON (src/k8s/decode_pdb.h): the fixtures pdb.json,
 * pdb-list.json and pdb-watch.jsonl of tests/fixtures/json field by field, each wrong type and missing
 * field with the message that names it, and the selector the record carries judged as preemption judges
 * it (sched/checks.h, gs_checks_label_selector).
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

#include "k8s/decode_pdb.h"
#include "sched/checks.h"
#include "slurp.h"

static void test_object(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp("tests/fixtures/json/pdb.json", &len), err[256] = "";
	cJSON *o = cJSON_ParseWithLength(text, len);
	struct gs_pdb_obj b;

	assert_int_equal(gs_decode_pdb(o, &b, err, sizeof(err)), 0);
	assert_string_equal(b.ns, "team-a");
	assert_string_equal(b.name, "web");
	assert_string_equal(b.uid, "5e0b7c1a-2b1f-4f0e-9a77-1d2f3c4b5a60");
	assert_string_equal(b.resource_version, "812");
	assert_int_equal(b.selector, 1);
	assert_int_equal(b.n_match, 1);
	assert_string_equal(b.match[0].key, "app");
	assert_string_equal(b.match[0].value, "web");
	assert_int_equal(b.n_exprs, 2);
	assert_string_equal(b.exprs[0].key, "tier");
	assert_int_equal(b.exprs[0].op, GS_SEL_IN);
	assert_int_equal(b.exprs[0].n_values, 2);
	assert_string_equal(b.exprs[0].values[1], "edge");
	assert_int_equal(b.exprs[1].op, GS_SEL_DOES_NOT_EXIST);
	assert_int_equal(b.disruptions_allowed, 1);
	assert_int_equal(b.n_disrupted, 1);
	assert_string_equal(b.disrupted[0], "web-2");

	/* The selector, as preemption reads it: every pair and every requirement. */
	struct gs_label web[] = {{"app", "web"}, {"tier", "front"}},
			canary[] = {{"app", "web"}, {"tier", "edge"}, {"canary", "1"}};
	struct gs_label other[] = {{"app", "web"}, {"tier", "back"}}, none[] = {{"tier", "front"}};
	assert_int_equal(gs_checks_label_selector(web, 2, b.match, b.n_match, b.exprs, b.n_exprs), 1);
	assert_int_equal(gs_checks_label_selector(canary, 3, b.match, b.n_match, b.exprs, b.n_exprs), 0);
	assert_int_equal(gs_checks_label_selector(other, 2, b.match, b.n_match, b.exprs, b.n_exprs), 0);
	assert_int_equal(gs_checks_label_selector(none, 1, b.match, b.n_match, b.exprs, b.n_exprs), 0);
	assert_int_equal(gs_checks_label_selector(NULL, 0, b.match, b.n_match, b.exprs, b.n_exprs), 0);
	/* An empty selector matches no pod (kube-scheduler's preemption); NotIn holds for an absent label. */
	assert_int_equal(gs_checks_label_selector(web, 2, NULL, 0, NULL, 0), 0);
	b.exprs[0].op = GS_SEL_NOT_IN;
	assert_int_equal(gs_checks_label_selector(other, 2, b.match, b.n_match, b.exprs, 1), 1);
	assert_int_equal(gs_checks_label_selector(web, 2, b.match, b.n_match, b.exprs, 1), 0);
	/* One that does not parse matches none: -EINVAL. */
	b.exprs[1].op = GS_SEL_EXISTS;
	b.exprs[0].op = GS_SEL_EXISTS; /* with values */
	assert_int_equal(gs_checks_label_selector(web, 2, b.match, b.n_match, b.exprs, 1), -EINVAL);
	b.exprs[0].op = GS_SEL_INVALID;
	assert_int_equal(gs_checks_label_selector(web, 2, b.match, b.n_match, b.exprs, 1), -EINVAL);
	gs_pdb_obj_free(&b);
	assert_null(b.ns);
	cJSON_Delete(o);
	free(text);
}

static int on_item(const struct gs_pdb_obj *b, void *ud)
{
	char *seen = ud;
	strcat(seen, b->name);
	strcat(seen, b->selector ? "+ " : "- ");
	return 0;
}

/* A list: the item that does not decode is skipped and counted, the others given in order. */
static void test_list(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp("tests/fixtures/json/pdb-list.json", &len), err[256] = "", *rv = NULL, *cont = NULL;
	char seen[64] = "";
	unsigned skipped = 0;

	assert_int_equal(gs_decode_pdb_list(text, len, on_item, seen, &rv, &cont, &skipped, err, sizeof(err)), 0);
	assert_string_equal(seen, "web+ open- ");
	assert_int_equal(skipped, 1);
	assert_string_equal(rv, "900");
	assert_string_equal(cont, "abc");
	free(rv);
	free(cont);
	free(text);
}

/* A watch line: Gt has no place in a label selector, so the requirement is kept as one that matches none. */
static void test_watch(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp("tests/fixtures/json/pdb-watch.jsonl", &len), err[256] = "";
	struct gs_pdb_event ev;
	struct gs_label l[] = {{"app", "5"}};

	assert_int_equal(gs_decode_pdb_event(text, len, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, GS_DECODE_EV_ADDED);
	assert_string_equal(ev.resource_version, "901");
	assert_int_equal(ev.pdb.n_exprs, 1);
	assert_int_equal(ev.pdb.exprs[0].op, GS_SEL_INVALID);
	assert_int_equal(ev.pdb.disruptions_allowed, 2);
	assert_int_equal(gs_checks_label_selector(l, 1, NULL, 0, ev.pdb.exprs, 1), -EINVAL);
	gs_pdb_event_free(&ev);
	free(text);
}

static void test_errors(void **state)
{
	(void)state;
#define META "\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\",\"uid\":\"u\"}"
	static const struct {
		const char *obj, *msg;
	} cases[] = {
		{"[]", "poddisruptionbudget watch event: object is not an object"},
		{"{\"spec\":{}}", "poddisruptionbudget watch event: metadata.namespace is missing"},
		{"{\"metadata\":{\"namespace\":\"ns\"}}", "poddisruptionbudget watch event: metadata.name is missing"},
		{"{" META ",\"spec\":{\"selector\":[]}}", "poddisruptionbudget ns/b: spec.selector is not an object"},
		{"{" META ",\"spec\":{\"selector\":{\"matchLabels\":{\"a\":1}}}}",
		 "poddisruptionbudget ns/b: spec.selector.matchLabels[\"a\"] is not a string"},
		{"{" META ",\"spec\":{\"selector\":{\"matchExpressions\":[{\"operator\":\"In\"}]}}}",
		 "poddisruptionbudget ns/b: spec.selector.matchExpressions[0].key is missing"},
		/* The requirement's key is kept before its operator fails: freed with the record (valgrind and
		 * LeakSanitizer see it otherwise; fuzz_pdb found it). */
		{"{" META ",\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\"},"
		 "{\"key\":\"k\",\"operator\":1}]}}}",
		 "poddisruptionbudget ns/b: spec.selector.matchExpressions[1].operator is not a string"},
		{"{" META ",\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"k\",\"values\":[\"x\",2]}]}}}",
		 "poddisruptionbudget ns/b: spec.selector.matchExpressions[0].values[1] is not a string"},
		{"{" META ",\"status\":{\"disruptionsAllowed\":\"1\"}}",
		 "poddisruptionbudget ns/b: status.disruptionsAllowed is not an integer"},
		{"{" META ",\"status\":{\"disruptionsAllowed\":4294967296}}",
		 "poddisruptionbudget ns/b: status.disruptionsAllowed 4.29497e+09 is out of range"},
		{"{" META ",\"status\":{\"disruptedPods\":[\"x\"]}}",
		 "poddisruptionbudget ns/b: status.disruptedPods is not an object"},
	};
	char line[512], err[256];
	struct gs_pdb_event ev;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = snprintf(line, sizeof(line), "{\"type\":\"MODIFIED\",\"object\":%s}", cases[i].obj);
		err[0] = 0;
		assert_int_equal(gs_decode_pdb_event(line, (size_t)n, &ev, err, sizeof(err)), -EINVAL);
		if (strcmp(err, cases[i].msg) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, err, cases[i].msg);
		assert_null(ev.pdb.name);
		assert_null(ev.resource_version);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_object),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_watch),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
