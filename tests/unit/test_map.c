/*
 * test_map.c: the gpu-scheduling-map grammar, its limits and error messages, the cache by content and
 * the pod index sources.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/map.h"
#include "sched/map_cache.h"

static struct gs_map *parse_ok(const char *text)
{
	struct gs_map *m = NULL;
	struct gs_map_error err;
	int r = gs_map_parse(text, strlen(text), &m, &err);
	if (r != 0)
		fail_msg("parse of \"%s\" failed: %s", text, err.msg);
	return m;
}

/* Parses text expecting a failure on line `line` with a message containing `want`. */
static void parse_bad(const char *text, int line, const char *want)
{
	struct gs_map *m = NULL;
	struct gs_map_error err;
	assert_int_equal(gs_map_parse(text, strlen(text), &m, &err), -EINVAL);
	assert_null(m);
	assert_int_equal(err.line, line);
	if (!strstr(err.msg, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err.msg, want);
	if (line > 0) {
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "line %d: ", line);
		assert_memory_equal(err.msg, prefix, strlen(prefix));
	}
}

static void test_task_map(void **state)
{
	struct gs_map *m = parse_ok("0=node1:0,1\n1=node2:2\n2=node3:0,1,2\n3=node4:3\n4=node4:3\n");
	assert_int_equal(gs_map_count(m), 5);
	const struct gs_map_entry *e = gs_map_lookup(m, 2);
	assert_non_null(e);
	assert_string_equal(e->node, "node3");
	assert_string_equal(e->devices, "0,1,2");
	assert_int_equal(e->n_devices, 3);
	assert_int_equal(e->max_index, 2);
	assert_int_equal(e->line, 3);
	assert_string_equal(gs_map_lookup(m, 4)->node, "node4");
	assert_null(gs_map_lookup(m, 5));
	assert_null(gs_map_lookup(m, -1));
	assert_string_equal(gs_map_entry_at(m, 0)->node, "node1");
	gs_map_unref(m);
}

static void test_blanks_comments_uuids(void **state)
{
	struct gs_map *m =
		parse_ok("# header\n\n  7 = gpu-a.example.com : GPU-8f2c0a7e-1d2b-4c3d-9e8f-0123456789ab , 3  # two\n"
			 "\t\n8=n:MIG-1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809\r\n");
	assert_int_equal(gs_map_count(m), 2);
	const struct gs_map_entry *e = gs_map_lookup(m, 7);
	assert_string_equal(e->node, "gpu-a.example.com");
	assert_string_equal(e->devices, "GPU-8f2c0a7e-1d2b-4c3d-9e8f-0123456789ab,3");
	assert_int_equal(e->max_index, 3); /* the UUID does not count */
	assert_int_equal(e->line, 3);
	assert_string_equal(gs_map_lookup(m, 8)->devices, "MIG-1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809");
	assert_int_equal(gs_map_lookup(m, 8)->max_index, -1);
	gs_map_unref(m);
}

static void test_errors_name_the_line(void **state)
{
	parse_bad("0=node1:0\n1 node2:1\n", 2, "missing '='");
	parse_bad("0=node1:0\n\n1=node2\n", 3, "':'");
	parse_bad("x=node1:0\n", 1, "\"x\"");
	parse_bad("-1=node1:0\n", 1, "-1");
	parse_bad("0=node1:0\n0=node2:1\n", 2, "duplicate index 0 (first on line 1)");
	parse_bad("0=:0\n", 1, "node");
	parse_bad("0=Node_1:0\n", 1, "Node_1");
	parse_bad("0=node1:\n", 1, "empty device list");
	parse_bad("0=node1:0,,1\n", 1, "device");
	parse_bad("0=node1:zero\n", 1, "zero");
	parse_bad("", 0, "");
}

struct problems {
	int n;
	int line[8];
	char msg[8][256];
};

static void collect(void *arg, const struct gs_map_error *err)
{
	struct problems *p = arg;
	if (p->n < 8) {
		p->line[p->n] = err->line;
		memcpy(p->msg[p->n], err->msg, sizeof(err->msg));
	}
	p->n++;
}

/* lint's parse: every bad line is a problem with gs_map_parse's message, and the good lines still count. */
static void test_parse_all_goes_on(void **state)
{
	const char *t = "0=node1:0\n0=node2:1\n2 node3:2\n3=node4:0,,1\n4=node5:4,5\n# done\n";
	struct problems p = {0};
	struct gs_map *m = NULL, *none = NULL;
	struct gs_map_error first;
	(void)state;

	assert_int_equal(gs_map_parse_all(t, strlen(t), &m, collect, &p), 3);
	assert_int_equal(p.n, 3);
	assert_int_equal(p.line[0], 2);
	assert_string_equal(p.msg[0], "line 2: duplicate index 0 (first on line 1)");
	assert_int_equal(p.line[1], 3);
	assert_string_equal(p.msg[1], "line 3: missing '=' between index and node");
	assert_int_equal(p.line[2], 4);
	assert_non_null(strstr(p.msg[2], "line 4: empty device in"));
	/* The first problem is the one gs_map_parse (the daemon, the webhook) reports, word for word. */
	assert_int_equal(gs_map_parse(t, strlen(t), &none, &first), -EINVAL);
	assert_null(none);
	assert_string_equal(first.msg, p.msg[0]);
	/* The good entries: the first 0 (the duplicate added nothing) and 4, whose node and devices were
	 * written where the bad lines' had been. */
	assert_non_null(m);
	assert_int_equal(gs_map_count(m), 2);
	assert_string_equal(gs_map_lookup(m, 0)->node, "node1");
	assert_string_equal(gs_map_lookup(m, 0)->devices, "0");
	assert_string_equal(gs_map_lookup(m, 4)->node, "node5");
	assert_string_equal(gs_map_lookup(m, 4)->devices, "4,5");
	assert_int_equal(gs_map_lookup(m, 4)->line, 5);
	assert_null(gs_map_lookup(m, 2));
	assert_null(gs_map_lookup(m, 3));
	gs_map_unref(m);

	/* A good map: no problem, the same entries as gs_map_parse. */
	p.n = 0;
	assert_int_equal(gs_map_parse_all("0=n:0\n1=n:1\n", 12, &m, collect, &p), 0);
	assert_int_equal(p.n, 0);
	assert_int_equal(gs_map_count(m), 2);
	gs_map_unref(m);

	/* Only bad lines: no map, and no "no entries" on top of them; nothing but comments: that one. */
	p.n = 0;
	assert_int_equal(gs_map_parse_all("x\ny\n", 4, &m, collect, &p), 2);
	assert_null(m);
	assert_int_equal(p.n, 2);
	p.n = 0;
	assert_int_equal(gs_map_parse_all("# c\n", 4, &m, collect, &p), 1);
	assert_null(m);
	assert_int_equal(p.line[0], 0);
	assert_non_null(strstr(p.msg[0], "no entries"));
}

/* Bounded: at most GS_MAP_MAX_ERRORS problems passed on (all counted), one "too many entries". */
static void test_parse_all_bounds(void **state)
{
	size_t cap = GS_MAP_MAX_BYTES;
	char *b = malloc(cap + 2);
	size_t n = 0;
	struct problems p = {0};
	struct gs_map *m = NULL;
	(void)state;

	for (int i = 0; i < 3 * GS_MAP_MAX_ERRORS; i++)
		n += (size_t)sprintf(b + n, "bad line %d\n", i);
	n += (size_t)sprintf(b + n, "7=n:7\n");
	assert_int_equal(gs_map_parse_all(b, n, &m, collect, &p), 3 * GS_MAP_MAX_ERRORS);
	assert_int_equal(p.n, GS_MAP_MAX_ERRORS);
	assert_int_equal(gs_map_count(m), 1);
	gs_map_unref(m);

	n = 0;
	for (int i = 0; i < GS_MAP_MAX_ENTRIES + 3; i++)
		n += (size_t)sprintf(b + n, "%d=n:0\n", i);
	p.n = 0;
	assert_int_equal(gs_map_parse_all(b, n, &m, collect, &p), 1);
	assert_int_equal(p.line[0], GS_MAP_MAX_ENTRIES + 1);
	assert_non_null(strstr(p.msg[0], "too many entries"));
	assert_int_equal(gs_map_count(m), GS_MAP_MAX_ENTRIES);
	gs_map_unref(m);

	memset(b, ' ', cap + 1);
	p.n = 0;
	assert_int_equal(gs_map_parse_all(b, cap + 1, &m, collect, &p), 1);
	assert_null(m);
	assert_int_equal(p.line[0], 0);
	assert_non_null(strstr(p.msg[0], "over the limit"));
	free(b);
}

static void test_limits(void **state)
{
	struct gs_buf_like {
		char *p;
		size_t n;
	} b = {malloc(GS_MAP_MAX_BYTES + 64), 0};
	/* 4096 entries parse; 4097 do not. */
	for (int i = 0; i < GS_MAP_MAX_ENTRIES; i++)
		b.n += (size_t)sprintf(b.p + b.n, "%d=n:%d\n", i, i % 8);
	struct gs_map *m = parse_ok(b.p);
	assert_int_equal(gs_map_count(m), GS_MAP_MAX_ENTRIES);
	gs_map_unref(m);
	sprintf(b.p + b.n, "%d=n:0\n", GS_MAP_MAX_ENTRIES);
	parse_bad(b.p, GS_MAP_MAX_ENTRIES + 1, "entries");

	/* 64 devices per entry parse; 65 do not. */
	b.n = (size_t)sprintf(b.p, "0=n:0");
	for (int i = 1; i < GS_MAP_MAX_DEVICES; i++)
		b.n += (size_t)sprintf(b.p + b.n, ",%d", i);
	m = parse_ok(b.p);
	assert_int_equal(gs_map_lookup(m, 0)->n_devices, GS_MAP_MAX_DEVICES);
	gs_map_unref(m);
	sprintf(b.p + b.n, ",64");
	parse_bad(b.p, 1, "devices");

	/* Past 64 KiB of text: refused as a whole. */
	memset(b.p, ' ', GS_MAP_MAX_BYTES + 1);
	b.p[GS_MAP_MAX_BYTES + 1] = '\0';
	parse_bad(b.p, 0, "over the limit of 65536");
	free(b.p);
}

static void test_cache_by_content(void **state)
{
	struct gs_map_cache *c = gs_map_cache_new(4, 0);
	const char *t = "0=node1:0\n1=node2:1\n";
	struct gs_map *a, *b;
	const struct gs_map_error *err;
	assert_int_equal(gs_map_cache_get(c, t, strlen(t), &a, &err), 0);
	char copy[64];
	strcpy(copy, t);
	assert_int_equal(gs_map_cache_get(c, copy, strlen(copy), &b, &err), 0);
	assert_ptr_equal(a, b); /* the same string parsed once */
	gs_map_unref(a);
	gs_map_unref(b);
	const char *bad = "0 node1:0\n";
	assert_int_equal(gs_map_cache_get(c, bad, strlen(bad), &a, &err), -EINVAL);
	assert_int_equal(err->line, 1);
	assert_non_null(strstr(err->msg, "missing '='"));
	/* Filling the cache past its size evicts unreferenced maps without harm. */
	for (int i = 0; i < 20; i++) {
		char tx[32];
		snprintf(tx, sizeof(tx), "%d=n:0\n", i);
		assert_int_equal(gs_map_cache_get(c, tx, strlen(tx), &a, &err), 0);
		assert_non_null(gs_map_lookup(a, i));
		gs_map_unref(a);
	}
	gs_map_cache_free(c);
}

/*
 * The text is looked up where it lies (a slice of a message, not NUL-terminated, as the protobuf
 * decoder hands it over: objects.h), and a hit allocates nothing: no copy of a 14 KiB map per pod.
 * mallinfo2's bytes in use are the witness (under ASan or valgrind they may read 0 throughout).
 */
static void test_cache_hit_in_place(void **state)
{
	struct gs_map_cache *c = gs_map_cache_new(4, 0);
	struct gs_map *a, *b, *d;
	const struct gs_map_error *err;
	char msg1[] = "ANN0=node1:0\n1=node2:1,2\nTAIL";
	char msg2[] = "xx0=node1:0\n1=node2:1,2\nyy";
	size_t n = strlen("0=node1:0\n1=node2:1,2\n");
	(void)state;

	assert_non_null(c);
	assert_int_equal(gs_map_cache_get(c, msg1 + 3, n, &a, &err), 0); /* a miss: parsed, copied once */
	assert_int_equal(gs_map_count(a), 2);
	assert_string_equal(gs_map_lookup(a, 1)->devices, "1,2");
	size_t before = mallinfo2().uordblks;
	assert_int_equal(gs_map_cache_get(c, msg2 + 2, n, &b, &err), 0); /* the same bytes elsewhere */
	assert_int_equal(gs_map_cache_get(c, msg1 + 3, n, &d, &err), 0);
	assert_int_equal(mallinfo2().uordblks, before);
	assert_ptr_equal(a, b);
	assert_ptr_equal(a, d);
	gs_map_unref(d);
	/* One byte less is other text: a miss, another map. */
	assert_int_equal(gs_map_cache_get(c, msg1 + 3, n - 1, &d, &err), 0);
	assert_ptr_not_equal(a, d);
	gs_map_unref(a);
	gs_map_unref(b);
	gs_map_unref(d);
	gs_map_cache_free(c);
}

/*
 * Idle entries are bounded in bytes too (issue 36): a few large unused maps are let go where a count
 * alone would keep 256 of them; a map in use is never evicted, and what its entry holds is counted.
 */
static void test_cache_idle_bytes(void **state)
{
	char text[8192];
	size_t n = 0;
	struct gs_map *m, *held;
	const struct gs_map_error *err;
	struct gs_map__cache_stats st;
	(void)state;

	n = (size_t)snprintf(text, sizeof(text), "#00\n"); /* the comment makes each text another */
	for (int i = 0; i < 400; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%d=n%d:0,1\n", i, i % 7);
	struct gs_map_cache *probe = gs_map_cache_new(1, 0);
	assert_int_equal(gs_map_cache_get(probe, text, n, &m, &err), 0);
	size_t one = gs_map_cache_cost(n, m); /* every text below weighs the same */
	gs_map_unref(m);
	gs_map_cache_free(probe);
	assert_true(one > 4 * n);         /* 400 entries: the parse weighs more than the text */
	size_t bound = 2 * one + one / 2; /* two idle maps fit, not three */
	struct gs_map_cache *c = gs_map_cache_new(256, bound);

	/* The first map, kept in use; then ten others, each dropped at once. */
	assert_int_equal(gs_map_cache_get(c, text, n, &held, &err), 0);
	for (int i = 0; i < 10; i++) {
		text[1] = (char)('a' + i);
		assert_int_equal(gs_map_cache_get(c, text, n, &m, &err), 0);
		gs_map__cache_stats(c, &st);
		assert_true(st.idle_bytes <= bound); /* a miss evicts */
		gs_map_unref(m);
		gs_map__cache_stats(c, &st);
		assert_true(st.idle_bytes <= bound + one); /* the one just let go, until the next miss */
	}
	gs_map_cache_trim(c);
	gs_map__cache_stats(c, &st);
	assert_int_equal(st.idle_bytes, 2 * one);
	assert_int_equal(st.entries, 3); /* two idle, the one in use kept */
	assert_int_equal(st.bytes, 3 * one);
	/* Let go, it goes idle; trimming brings the idle bytes within the bound again. */
	gs_map_unref(held);
	gs_map_cache_trim(c);
	gs_map__cache_stats(c, &st);
	assert_int_equal(st.idle_bytes, 2 * one);
	assert_int_equal(st.bytes, st.idle_bytes);
	gs_map_cache_free(c);
}

static void test_pod_index_sources(void **state)
{
	long idx;
	enum gs_index_source src;
	assert_int_equal(gs_map_pod_index("3", "5", "web-7", &idx, &src), 0);
	assert_int_equal(idx, 3);
	assert_int_equal(src, GS_INDEX_LABEL);
	assert_int_equal(gs_map_pod_index(NULL, "5", "web-7", &idx, &src), 0);
	assert_int_equal(idx, 5);
	assert_int_equal(src, GS_INDEX_JOB_ANNOTATION);
	assert_int_equal(gs_map_pod_index(NULL, NULL, "web-7", &idx, &src), 0);
	assert_int_equal(idx, 7);
	assert_int_equal(src, GS_INDEX_NAME);
	assert_int_equal(gs_map_pod_index("x", "-1", "webhook-test-12", &idx, &src), 0); /* bad ones skipped */
	assert_int_equal(idx, 12);
	assert_int_equal(src, GS_INDEX_NAME);
	assert_int_equal(gs_map_pod_index(NULL, NULL, "train-abcde", &idx, &src), -ENOENT);
	assert_int_equal(gs_map_pod_index(NULL, NULL, "web-", &idx, &src), -ENOENT);
	assert_int_equal(gs_map_pod_index(NULL, NULL, NULL, &idx, &src), -ENOENT);
	assert_string_equal(gs_index_source_name(GS_INDEX_LABEL), "label apps.kubernetes.io/pod-index");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_task_map),
		cmocka_unit_test(test_blanks_comments_uuids),
		cmocka_unit_test(test_errors_name_the_line),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_parse_all_goes_on),
		cmocka_unit_test(test_parse_all_bounds),
		cmocka_unit_test(test_cache_by_content),
		cmocka_unit_test(test_cache_hit_in_place),
		cmocka_unit_test(test_cache_idle_bytes),
		cmocka_unit_test(test_pod_index_sources),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
