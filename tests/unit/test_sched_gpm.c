/*
 * test_sched_gpm.c: maps as objects in the engine (sched/gpm.h; sched.h, gs_sched_gpm_*): the store of
 * GPUPlacementMaps, pods placed by reference, and each object's status and its rate limit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "sched/gpm.h"
#include "sched/sched.h"

static struct gs_sched *new_engine(void)
{
	struct gs_sched_config cfg;
	struct gs_sched *s;

	gs_sched_config_init(&cfg);
	cfg.check_env = 0;
	s = gs_sched_new(&cfg);
	assert_non_null(s);
	return s;
}

static struct gs_gpm_view view(const char *ns, const char *name, int64_t gen, const char *text)
{
	struct gs_gpm_view v = {.ns = ns,
				.name = name,
				.uid = "gpm-uid",
				.generation = gen,
				.map_text = text,
				.map_len = text ? strlen(text) : 0};
	return v;
}

/* The store: upsert copies, find hands the copy back, delete forgets; bad views are refused. */
static void test_store(void **state)
{
	struct gs_sched *s = new_engine();
	char text[] = "0=node1:0\n1=node2:1";
	struct gs_gpm_view v = view("ml", "ranks", 3, text), got;
	struct gs_gpm_status st;
	(void)state;

	assert_int_equal(gs_sched_gpm_find(s, "ml", "ranks", &got), 0);
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), 0);
	memset(text, 'x', sizeof(text) - 1); /* the engine kept its own copy */
	assert_int_equal(gs_sched_gpm_find(s, "ml", "ranks", &got), 1);
	assert_string_equal(got.ns, "ml");
	assert_string_equal(got.name, "ranks");
	assert_string_equal(got.uid, "gpm-uid");
	assert_int_equal(got.generation, 3);
	assert_int_equal(got.map_len, strlen("0=node1:0\n1=node2:1"));
	assert_memory_equal(got.map_text, "0=node1:0\n1=node2:1", got.map_len);
	assert_null(got.placement);
	assert_int_equal(gs_sched_gpm_find(s, "other", "ranks", &got), 0);
	assert_int_equal(gs_sched_gpm_find(s, "ml", "rank", &got), 0);

	assert_int_equal(gs_sched_gpm_status(s, "ml", "ranks", &st), 1);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.placed, 0);
	assert_int_equal(st.waiting, 0);
	assert_int_equal(st.oldest_index, -1);
	assert_int_equal(st.ready, 0);
	assert_null(st.map_error);
	gs_sched_audit(s);

	v.ns = NULL;
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), -EINVAL);
	v.ns = "ml";
	v.uid = "";
	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), -EINVAL);

	assert_int_equal(gs_sched_gpm_delete(s, "ml", "nope", 0), -ENOENT);
	assert_int_equal(gs_sched_gpm_delete(s, "ml", "ranks", 0), 0);
	assert_int_equal(gs_sched_gpm_find(s, "ml", "ranks", &got), 0);
	assert_int_equal(gs_sched_gpm_status(s, "ml", "ranks", &st), 0);
	assert_int_equal(gs_sched_gpm_delete(s, "ml", "ranks", 0), -ENOENT);
	gs_sched_audit(s);
	gs_sched_free(s);
}

/* A map that does not parse is kept with its error; the status names it. */
static void test_bad_map(void **state)
{
	struct gs_sched *s = new_engine();
	struct gs_gpm_view v = view("ml", "bad", 1, "0=node1:0\n1 node2:1");
	struct gs_gpm_status st;
	(void)state;

	assert_int_equal(gs_sched_gpm_upsert(s, &v, 0), 0);
	assert_int_equal(gs_sched_gpm_status(s, "ml", "bad", &st), 1);
	assert_non_null(st.map_error);
	assert_non_null(strstr(st.map_error, "line 2"));
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.ready, 0);
	gs_sched_free(s);
}

/* Status pulls: handed out when it changed, at most once a second per object; the deadline says when. */
static void test_status_rate(void **state)
{
	struct gs_sched *s = new_engine();
	struct gs_gpm_view a = view("ml", "a", 1, "0=node1:0"), b = view("ml", "b", 1, "0=node1:0\n1=node1:1");
	struct gs_gpm_status st;
	(void)state;

	assert_int_equal(gs_sched_next_deadline(s), -1);
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 1000), 0);
	assert_int_equal(gs_sched_gpm_upsert(s, &b, 1000), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 1000, &st), 1);
	assert_string_equal(st.name, "a");
	assert_int_equal(st.entries, 1);
	assert_int_equal(gs_sched_next_gpm_status(s, 1000, &st), 1);
	assert_string_equal(st.name, "b");
	assert_int_equal(st.entries, 2);
	assert_int_equal(gs_sched_next_gpm_status(s, 1000, &st), 0);
	assert_int_equal(gs_sched_next_deadline(s), -1); /* nothing held back */

	/* An upsert that changes nothing is no news. */
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 1100), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 1100, &st), 0);
	assert_int_equal(gs_sched_next_deadline(s), -1);

	/* A new generation of a within its second: held back until 2000. */
	a = view("ml", "a", 2, "0=node1:0\n1=node1:1\n2=node1:2");
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 1200), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 1200, &st), 0);
	assert_int_equal(gs_sched_next_deadline(s), 2000);
	assert_int_equal(gs_sched_next_gpm_status(s, 1999, &st), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 2000, &st), 1);
	assert_string_equal(st.name, "a");
	assert_int_equal(st.observed_generation, 2);
	assert_int_equal(st.entries, 3);
	assert_int_equal(gs_sched_next_deadline(s), -1);

	/* A change and its undoing before the next pull: nothing differs, nothing handed out. */
	a.generation = 3;
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 2100), 0);
	a.generation = 2;
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 2200), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 3500, &st), 0);

	/* Deleted: never handed out again, nothing held back. */
	a.generation = 4;
	assert_int_equal(gs_sched_gpm_upsert(s, &a, 3600), 0);
	assert_int_equal(gs_sched_gpm_delete(s, "ml", "a", 3700), 0);
	assert_int_equal(gs_sched_next_gpm_status(s, 9000, &st), 0);
	assert_int_equal(gs_sched_next_deadline(s), -1);
	gs_sched_audit(s);
	gs_sched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store),
		cmocka_unit_test(test_bad_map),
		cmocka_unit_test(test_status_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
