/* test_hmap.c: the string-keyed hash map of src/core/hmap.h. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/hmap.h"

static void test_put_get_del(void **state)
{
	struct gs_hmap m;
	int a = 1, b = 2, c = 3;
	void *old = NULL;

	gs_hmap_init(&m, 0);
	assert_null(gs_hmap_get_str(&m, "x")); /* empty map, no table yet */
	assert_int_equal(gs_hmap_del_str(&m, "x", NULL), -ENOENT);
	assert_int_equal(gs_hmap_put_str(&m, "a", &a, NULL), 0);
	assert_int_equal(gs_hmap_put_str(&m, "b", &b, NULL), 0);
	assert_int_equal(gs_hmap_len(&m), 2);
	assert_ptr_equal(gs_hmap_get_str(&m, "a"), &a);
	assert_ptr_equal(gs_hmap_get_str(&m, "b"), &b);
	assert_null(gs_hmap_get_str(&m, "c"));

	assert_int_equal(gs_hmap_put_str(&m, "a", &c, &old), 1);
	assert_ptr_equal(old, &a);
	assert_ptr_equal(gs_hmap_get_str(&m, "a"), &c);
	assert_int_equal(gs_hmap_len(&m), 2);

	assert_int_equal(gs_hmap_del_str(&m, "a", &old), 0);
	assert_ptr_equal(old, &c);
	assert_null(gs_hmap_get_str(&m, "a"));
	assert_int_equal(gs_hmap_del_str(&m, "a", NULL), -ENOENT);
	assert_int_equal(gs_hmap_len(&m), 1);
	assert_int_equal(gs_hmap_put_str(&m, "z", NULL, NULL), -EINVAL);
	gs_hmap_free(&m);
	gs_hmap_free(&m); /* twice is fine */
}

/* Keys are byte strings: embedded NULs and prefixes are distinct keys. */
static void test_binary_keys(void **state)
{
	struct gs_hmap m;
	int a, b, c;

	gs_hmap_init(&m, GS_HMAP_COPY_KEYS);
	assert_int_equal(gs_hmap_put(&m, "ab\0c", 4, &a, NULL), 0);
	assert_int_equal(gs_hmap_put(&m, "ab\0d", 4, &b, NULL), 0);
	assert_int_equal(gs_hmap_put(&m, "ab", 2, &c, NULL), 0);
	assert_int_equal(gs_hmap_put(&m, "", 0, &c, NULL), 0);
	assert_ptr_equal(gs_hmap_get(&m, "ab\0c", 4), &a);
	assert_ptr_equal(gs_hmap_get(&m, "ab\0d", 4), &b);
	assert_ptr_equal(gs_hmap_get(&m, "ab", 2), &c);
	assert_ptr_equal(gs_hmap_get(&m, "", 0), &c);
	assert_null(gs_hmap_get(&m, "ab\0", 3));
	gs_hmap_free(&m);
}

/* With copied keys the caller's buffer may change after the put; without, the map reads it. */
static void test_key_ownership(void **state)
{
	struct gs_hmap copy, borrow;
	char key[16];
	int v = 7;

	gs_hmap_init(&copy, GS_HMAP_COPY_KEYS);
	gs_hmap_init(&borrow, 0);
	strcpy(key, "node1");
	assert_int_equal(gs_hmap_put_str(&copy, key, &v, NULL), 0);
	assert_int_equal(gs_hmap_put_str(&borrow, key, &v, NULL), 0);
	strcpy(key, "nodeX");
	assert_ptr_equal(gs_hmap_get_str(&copy, "node1"), &v);
	assert_null(gs_hmap_get_str(&borrow, "node1")); /* the borrowed key now reads "nodeX" */

	/* A replacing put moves a borrowed key to the new pointer, so the old one may be freed. */
	char *k1 = strdup("pod"), *k2 = strdup("pod");
	int w = 8;
	assert_int_equal(gs_hmap_put_str(&borrow, k1, &v, NULL), 0);
	assert_int_equal(gs_hmap_put_str(&borrow, k2, &w, NULL), 1);
	free(k1);
	assert_ptr_equal(gs_hmap_get_str(&borrow, "pod"), &w);
	struct gs_hmap_iter it = {0};
	int seen = 0;
	while (gs_hmap_next(&borrow, &it)) {
		if (it.val == &w) {
			assert_ptr_equal(it.key, k2);
			seen++;
		}
	}
	assert_int_equal(seen, 1);
	free(k2);
	gs_hmap_free(&copy);
	gs_hmap_free(&borrow);
}

#define N 20000

/* Many keys, growth, deletes of half, churn: every lookup stays right and the table does not grow. */
static void test_many_and_churn(void **state)
{
	struct gs_hmap m;
	static int vals[N];
	char k[32];

	gs_hmap_init(&m, GS_HMAP_COPY_KEYS);
	for (int i = 0; i < N; i++) {
		vals[i] = i;
		snprintf(k, sizeof(k), "pod-%d", i);
		assert_int_equal(gs_hmap_put_str(&m, k, &vals[i], NULL), 0);
	}
	assert_int_equal(gs_hmap_len(&m), N);
	for (int i = 0; i < N; i += 2) {
		snprintf(k, sizeof(k), "pod-%d", i);
		assert_int_equal(gs_hmap_del_str(&m, k, NULL), 0);
	}
	assert_int_equal(gs_hmap_len(&m), N / 2);
	for (int i = 0; i < N; i++) {
		snprintf(k, sizeof(k), "pod-%d", i);
		void *v = gs_hmap_get_str(&m, k);
		if (i % 2)
			assert_ptr_equal(v, &vals[i]);
		else
			assert_null(v);
	}
	size_t cap = m.cap;
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 1000; i++) {
			snprintf(k, sizeof(k), "churn-%d-%d", round, i);
			assert_int_equal(gs_hmap_put_str(&m, k, &vals[i], NULL), 0);
		}
		for (int i = 0; i < 1000; i++) {
			snprintf(k, sizeof(k), "churn-%d-%d", round, i);
			assert_int_equal(gs_hmap_del_str(&m, k, NULL), 0);
		}
	}
	assert_int_equal(gs_hmap_len(&m), N / 2);
	assert_int_equal(m.cap, cap);
	assert_true(m.tombs * 4 < m.cap * 3);
	gs_hmap_free(&m);
}

/* Iteration visits each entry once; deleting the current entry while iterating is allowed. */
static void test_iterate_and_delete(void **state)
{
	struct gs_hmap m;
	static int vals[1000];
	static char seen[1000];
	char k[32];
	struct gs_hmap_iter it = {0};
	int n = 0;

	gs_hmap_init(&m, GS_HMAP_COPY_KEYS);
	for (int i = 0; i < 1000; i++) {
		vals[i] = i;
		snprintf(k, sizeof(k), "k%d", i);
		assert_int_equal(gs_hmap_put_str(&m, k, &vals[i], NULL), 0);
	}
	memset(seen, 0, sizeof(seen));
	while (gs_hmap_next(&m, &it)) {
		int i = *(int *)it.val;
		assert_int_equal(seen[i], 0);
		seen[i] = 1;
		n++;
		if (i % 3 == 0)
			assert_int_equal(gs_hmap_del(&m, it.key, it.klen, NULL), 0);
	}
	assert_int_equal(n, 1000);
	assert_int_equal(gs_hmap_len(&m), 1000 - 334);
	for (int i = 0; i < 1000; i++) {
		snprintf(k, sizeof(k), "k%d", i);
		assert_true((gs_hmap_get_str(&m, k) == NULL) == (i % 3 == 0));
	}
	gs_hmap_free(&m);
}

/* The hash depends on every byte, the length and the seed. */
static void test_hash(void **state)
{
	char buf[100];

	memset(buf, 'a', sizeof(buf));
	for (size_t n = 0; n < sizeof(buf); n++) {
		uint64_t h = gs_hmap_hash(buf, n, 1);
		assert_int_not_equal(h, gs_hmap_hash(buf, n + 1, 1));
		assert_int_not_equal(h, gs_hmap_hash(buf, n, 2));
		for (size_t i = 0; i < n; i++) {
			buf[i] = 'b';
			assert_int_not_equal(h, gs_hmap_hash(buf, n, 1));
			buf[i] = 'a';
		}
	}
	/* A new seed applies to maps initialised afterwards. */
	struct gs_hmap m1, m2;
	gs_hmap_init(&m1, 0);
	gs_hmap_set_seed(42);
	gs_hmap_init(&m2, 0);
	assert_true(m1.seed != m2.seed);
	assert_int_equal(m2.seed, 42);
	gs_hmap_free(&m1);
	gs_hmap_free(&m2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_del),        cmocka_unit_test(test_binary_keys),
		cmocka_unit_test(test_key_ownership),      cmocka_unit_test(test_many_and_churn),
		cmocka_unit_test(test_iterate_and_delete), cmocka_unit_test(test_hash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
