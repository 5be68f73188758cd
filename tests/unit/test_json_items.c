/* test_json_items.c: the streaming list splitter of src/core/json_items.h. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/json_items.h"

/* Collects what the splitter hands out as "key=value;" and "[element];" in order. */
struct sink {
	char text[8192];
	int stop_at; /* element number (1-based) whose callback returns -ECANCELED; 0 never */
	int elements;
};

static void add(struct sink *k, const char *fmt, const char *a, size_t alen, const char *b, size_t blen)
{
	size_t used = strlen(k->text);
	snprintf(k->text + used, sizeof(k->text) - used, fmt, (int)alen, a, (int)blen, b);
}

static int on_member(const char *key, const char *value, size_t len, void *ud)
{
	add(ud, "%.*s=%.*s;", key, strlen(key), value, len);
	return 0;
}

static int on_element(const char *value, size_t len, void *ud)
{
	struct sink *k = ud;
	add(k, "%.*s[%.*s];", "", 0, value, len);
	return ++k->elements == k->stop_at ? -ECANCELED : 0;
}

/* Feeds doc in pieces of `step` bytes (0: whole); returns feed's first error or finish's result. */
static int run(const char *doc, size_t step, size_t max, struct sink *k, char *err, size_t errlen)
{
	struct gs_json_items s;
	size_t len = strlen(doc), off = 0;
	int r = 0;

	memset(k->text, 0, sizeof(k->text));
	k->elements = 0;
	gs_json_items_init(&s, "items", max, on_member, on_element, k);
	while (off < len && r == 0) {
		size_t n = step && len - off > step ? step : len - off;
		r = gs_json_items_feed(&s, doc + off, n);
		off += n;
	}
	if (r == 0)
		r = gs_json_items_finish(&s);
	if (err)
		snprintf(err, errlen, "%s", s.err);
	gs_json_items_free(&s);
	return r;
}

static const char *const LIST =
	"{\"kind\":\"PodList\", \"apiVersion\" : \"v1\",\n"
	" \"metadata\":{\"resourceVersion\":\"42\",\"continue\":\"\"},\n"
	" \"items\":[{\"a\":1},{\"s\":\"}]{[\\\"\",\"n\":[1,[2]]} , {},{\"m\":\"0=a:1\\n1=b:2\\n}\\\\\"}],\"tail\":true, \"n\":-1.5e3 }\n";
static const char *const WANT =
	"kind=\"PodList\";apiVersion=\"v1\";metadata={\"resourceVersion\":\"42\",\"continue\":\"\"};"
	"[{\"a\":1}];[{\"s\":\"}]{[\\\"\",\"n\":[1,[2]]}];[{}];[{\"m\":\"0=a:1\\n1=b:2\\n}\\\\\"}];tail=true;n=-1.5e3;";

static void test_whole(void **state)
{
	struct sink k = {0};
	(void)state;
	assert_int_equal(run(LIST, 0, 1024, &k, NULL, 0), 0);
	assert_string_equal(k.text, WANT);
}

/* Every piece size, down to one byte at a time, gives the same transcript. */
static void test_every_split(void **state)
{
	struct sink k = {0};
	(void)state;
	for (size_t step = 1; step <= strlen(LIST); step++) {
		assert_int_equal(run(LIST, step, 1024, &k, NULL, 0), 0);
		assert_string_equal(k.text, WANT);
	}
}

static void test_empty_lists(void **state)
{
	struct sink k = {0};
	(void)state;
	assert_int_equal(run("{\"items\":null,\"metadata\":{}}", 3, 64, &k, NULL, 0), 0);
	assert_string_equal(k.text, "items=null;metadata={};");
	assert_int_equal(run(" {\"items\" : [ ] } ", 0, 64, &k, NULL, 0), 0);
	assert_string_equal(k.text, "");
	assert_int_equal(run("{}", 1, 64, &k, NULL, 0), 0);
	assert_string_equal(k.text, "");
	/* Elements need not be objects. */
	assert_int_equal(run("{\"items\":[1, \"x,]\" ,null]}", 2, 64, &k, NULL, 0), 0);
	assert_string_equal(k.text, "[1];[\"x,]\"];[null];");
}

static void expect_error(const char *doc, int code, const char *why)
{
	struct sink k = {0};
	char err[128];
	for (size_t step = 0; step <= 3; step++) {
		assert_int_equal(run(doc, step, 16, &k, err, sizeof(err)), code);
		if (!strstr(err, why))
			fail_msg("%s: error \"%s\" does not say \"%s\"", doc, err, why);
	}
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("[1,2]", -EINVAL, "not a JSON object");
	expect_error("{\"items\":{}}", -EINVAL, "is not an array");
	expect_error("{\"items\":[{\"a\":1}", -EINVAL, "ended early (1 element(s)");
	expect_error("{\"items\":[]} x", -EINVAL, "bytes after the end");
	expect_error("{\"items\":[1,]}", -EINVAL, "unexpected ']'");
	expect_error("{\"items\":[1 2]}", -EINVAL, "expected ',' or ']'");
	expect_error("{\"a\" 1}", -EINVAL, "expected ':'");
	expect_error("{\"a\":1 \"b\":2}", -EINVAL, "expected ',' or '}'");
	expect_error("{1:2}", -EINVAL, "expected a member name");
	/* A member without a value (found by tests/fuzz/fuzz_json_items.c: it was handed out as "") */
	expect_error("{\"a\":}", -EINVAL, "expected a value for \"a\"");
	expect_error("{\"a\": ,\"b\":1}", -EINVAL, "expected a value for \"a\"");
	expect_error("{\"items\":[],\"m\":]}", -EINVAL, "expected a value for \"m\"");
	expect_error("", -EINVAL, "ended early");
	/* max 16 bytes per value */
	expect_error("{\"items\":[\"0123456789abcdefXYZ\"]}", -E2BIG, "element 0 of \"items\" is longer than 16");
	expect_error("{\"metadata\":{\"resourceVersion\":\"1\"}}", -E2BIG, "value of \"metadata\" is longer");
}

static void test_callback_stops(void **state)
{
	struct sink k = {.stop_at = 2};
	char err[128];
	(void)state;
	assert_int_equal(run("{\"items\":[1,2,3]}", 0, 64, &k, err, sizeof(err)), -ECANCELED);
	assert_string_equal(k.text, "[1];[2];");
	assert_non_null(strstr(err, "stopped by the caller"));
}

/* A long list in small pieces: memory stays bounded by one element (max_value), all are seen. */
static void test_many(void **state)
{
	struct gs_json_items s;
	struct sink k = {0};
	char piece[64];
	(void)state;
	gs_json_items_init(&s, "items", 64, NULL, on_element, &k);
	assert_int_equal(gs_json_items_feed(&s, "{\"items\":[", 10), 0);
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(piece, sizeof(piece), "%s{\"i\":%d,\"s\":\"}\\\"\"}", i ? "," : "", i);
		assert_int_equal(gs_json_items_feed(&s, piece, (size_t)n), 0);
		if (i == 0)
			assert_string_equal(k.text, "[{\"i\":0,\"s\":\"}\\\"\"}];");
		k.text[0] = '\0';
	}
	assert_int_equal(gs_json_items_feed(&s, "]}", 2), 0);
	assert_int_equal(gs_json_items_finish(&s), 0);
	assert_int_equal(k.elements, 100000);
	assert_true(s.value.size <= 256); /* gs_buf's first allocation: never grown past it */
	gs_json_items_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),          cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_empty_lists),    cmocka_unit_test(test_errors),
		cmocka_unit_test(test_callback_stops), cmocka_unit_test(test_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
