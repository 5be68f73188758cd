/*
 * test_leader.c: the pure part of leader election (src/k8s/lease.h): decoding a Lease as the
 * apiserver returns it, and the decision to take or wait, on our own clock. The cycle against a real
 * apiserver (two replicas, SIGTERM, SIGKILL, SIGSTOP) is tests/integration/test_leader.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slurp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/leader.h"
#include "k8s/lease.h"

static void test_decode_recorded(void **state)
{
	struct gs_lease l;
	char err[256];
	size_t n;
	char *j = slurp("tests/fixtures/json/lease.json", &n);

	assert_int_equal(gs_lease_decode(j, n, &l, err, sizeof(err)), 0);
	assert_string_equal(l.rv, "4711");
	assert_string_equal(l.holder, "gpu-scheduler-7d9c-abcde_1a2b3c4d");
	assert_int_equal(l.duration_s, 15);
	assert_int_equal(l.transitions, 3);
	assert_string_equal(l.acquire, "2026-11-23T17:00:00.000000Z");
	assert_string_equal(l.renew, "2026-11-23T17:05:02.123456Z");
	free(j);
}

static void test_decode_released_and_bad(void **state)
{
	struct gs_lease l;
	char err[256];
	/* Released (holder "") and a Lease with no spec at all: no holder. */
	const char *rel =
		"{\"metadata\":{\"resourceVersion\":\"9\"},\"spec\":{\"holderIdentity\":\"\",\"leaseDurationSeconds\":1}}";
	const char *nospec = "{\"metadata\":{\"resourceVersion\":\"10\"}}";
	assert_int_equal(gs_lease_decode(rel, strlen(rel), &l, err, sizeof(err)), 0);
	assert_string_equal(l.holder, "");
	assert_int_equal(l.duration_s, 1);
	assert_int_equal(gs_lease_decode(nospec, strlen(nospec), &l, err, sizeof(err)), 0);
	assert_string_equal(l.holder, "");
	assert_string_equal(l.rv, "10");

	const struct {
		const char *json, *want;
	} bad[] = {
		{"[]", "not a JSON object"},
		{"{\"spec\":{}}", "metadata"},
		{"{\"metadata\":{},\"spec\":{}}", "resourceVersion"},
		{"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":[]}", "spec"},
		{"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":5}}",
		 "spec.holderIdentity is not a string"},
		{"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"leaseDurationSeconds\":\"15\"}}",
		 "leaseDurationSeconds"},
		{"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"leaseTransitions\":-1}}", "leaseTransitions"},
		{"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"renewTime\":{}}}",
		 "spec.renewTime is not a string"},
		{"not json", "not a JSON object"},
		{"{\"metadata\":{\"resourceVersion\":\"\"}}",
		 "resourceVersion is missing or empty"}, /* found by fuzz_lease */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&l, 0x5a, sizeof(l));
		err[0] = '\0';
		assert_int_equal(gs_lease_decode(bad[i].json, strlen(bad[i].json), &l, err, sizeof(err)), -22);
		if (!strstr(err, bad[i].want))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err, bad[i].want);
		assert_string_equal(l.holder, ""); /* zeroed on failure */
	}
	/* A holder longer than the buffer is cut, never overflows. */
	char big[1024];
	int o = snprintf(big, sizeof(big), "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":\"");
	memset(big + o, 'x', 600);
	snprintf(big + o + 600, sizeof(big) - (size_t)o - 600, "\"}}");
	assert_int_equal(gs_lease_decode(big, strlen(big), &l, err, sizeof(err)), 0);
	assert_int_equal(strlen(l.holder), sizeof(l.holder) - 1);
}

static void test_may_take(void **state)
{
	struct gs_lease l = {.rv = "1"};
	const int64_t lease = 15000;

	/* Nobody holds it (never held, or released): take it at once. */
	assert_true(gs_lease_may_take(&l, "me_1", 1000, lease, 1000));
	/* Ours: renew. */
	snprintf(l.holder, sizeof(l.holder), "me_1");
	assert_true(gs_lease_may_take(&l, "me_1", 1000, lease, 1001));
	/* Another holder: wait the whole lease from when WE saw its record, on our clock. */
	snprintf(l.holder, sizeof(l.holder), "other_2");
	assert_false(gs_lease_may_take(&l, "me_1", 1000, lease, 1000));
	assert_false(gs_lease_may_take(&l, "me_1", 1000, lease, 15999));
	assert_true(gs_lease_may_take(&l, "me_1", 1000, lease, 16000));
	/* A restarted pod of the same name has another suffix: another holder. */
	assert_false(gs_lease_may_take(&l, "other_3", 1000, lease, 2000));
}

/* A follower polls every poll_ms, but at the end of another holder's term when that comes sooner. */
static void test_wait(void **state)
{
	struct gs_lease l = {.rv = "1"};
	const int64_t lease = 15000, poll = 2200;

	/* Nobody holds it, or we do: the poll period. */
	assert_int_equal(gs_lease_wait_ms(&l, "me_1", 1000, lease, 15000, poll), poll);
	snprintf(l.holder, sizeof(l.holder), "me_1");
	assert_int_equal(gs_lease_wait_ms(&l, "me_1", 1000, lease, 15000, poll), poll);
	/* Another holder, its term far from over: the poll period. */
	snprintf(l.holder, sizeof(l.holder), "other_2");
	assert_int_equal(gs_lease_wait_ms(&l, "me_1", 1000, lease, 1000, poll), poll);
	assert_int_equal(gs_lease_wait_ms(&l, "me_1", 1000, lease, 13800, poll), poll);
	/* Its term ends before the next poll: wake exactly then, when gs_lease_may_take says yes. */
	assert_int_equal(gs_lease_wait_ms(&l, "me_1", 1000, lease, 13801, poll), 2199);
	assert_int_equal(gs_lease_wait_ms(&l, "me_1", 1000, lease, 15999, poll), 1);
	assert_false(gs_lease_may_take(&l, "me_1", 1000, lease, 15999));
	assert_true(gs_lease_may_take(&l, "me_1", 1000, lease, 15999 + 1));
	/* Already over (our write failed): a poll later, never a loop of zero waits. */
	assert_int_equal(gs_lease_wait_ms(&l, "me_1", 1000, lease, 16000, poll), poll);
	assert_int_equal(gs_lease_wait_ms(&l, "me_1", 1000, lease, 99000, poll), poll);
}

static void test_durations(void **state)
{
	assert_true(gs_leader_durations_ok(15000, 10000, 2000));  /* kube-scheduler's defaults */
	assert_false(gs_leader_durations_ok(10000, 10000, 2000)); /* lease must exceed the deadline */
	assert_false(gs_leader_durations_ok(15000, 2400, 2000));  /* deadline must exceed 1.2 x retry */
	assert_true(gs_leader_durations_ok(15000, 2401, 2000));
	assert_false(gs_leader_durations_ok(15000, 10000, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_recorded), cmocka_unit_test(test_decode_released_and_bad),
		cmocka_unit_test(test_may_take),        cmocka_unit_test(test_wait),
		cmocka_unit_test(test_durations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
