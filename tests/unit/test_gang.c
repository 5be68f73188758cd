/*
 * test_gang.c: the all-or-nothing annotations (src/sched/gang.h): Go's duration grammar, case by case
 * against what time.ParseDuration answers, and every message of gs_gang_opts_parse (and of
 * gs_gang_opts_parse_named with a GPUPlacementMap's field names).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sched/gang.h"

#define H (3600 * 1000LL)

/* Each a string Go's time.ParseDuration accepts, and its value in whole ms (rounded toward zero). */
static void test_duration_ok(void **state)
{
	static const struct {
		const char *s;
		int64_t ms;
	} cases[] = {
		{"300ms", 300},
		{"1.5h", 90 * 60 * 1000LL},
		{"-1.5h", -90 * 60 * 1000LL},
		{"2h45m", (2 * 60 + 45) * 60 * 1000LL},
		{"1h0.5m", H + 30000},
		{".5s", 500},
		{"1.s", 1000},
		{"0", 0},
		{"-0", 0},
		{"+0", 0},
		{"0s", 0},
		{"000h", 0},
		{"+5s", 5000},
		{"10m", 600000},
		{"90s", 90000},
		{"1h30m", 90 * 60 * 1000LL},
		{"720h", 720 * H},
		{"1500us", 1},
		{"1500\xc2\xb5s", 1}, /* U+00B5 micro sign */
		{"1500\xce\xbcs", 1}, /* U+03BC Greek small mu */
		{"999999ns", 0},
		{"3000000ns", 3},
		{"1h1m1s1ms1us1ns", H + 61001},
		{"1m1h", H + 60000}, /* any order, as Go */
		{"1s1s", 2000},      /* and repeated */
		{"0.001s", 1},
		{"0.3h", 18 * 60 * 1000LL},
		{"1.0000000000000000000000000001s", 1000}, /* digits far below a ns are read and dropped */
		{"2562047h", 2562047 * H},                 /* 9.22e18 ns: just below 2^63 */
		{"9223372036854775807ns", 9223372036854LL},
		{"-9223372036854775808ns", -9223372036854LL}, /* -2^63 ns: Go's minimum */
		{"9223372036.854775807s", 9223372036854LL},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ms = -42;
		int r = gs_gang_duration_ms(cases[i].s, &ms);
		if (r != 0 || ms != cases[i].ms)
			fail_msg("\"%s\": %d, %lld ms; want 0, %lld ms", cases[i].s, r, (long long)ms,
				 (long long)cases[i].ms);
	}
}

/* Each a string Go refuses: -EINVAL for the grammar, -ERANGE past 2^63 ns. *ms is left alone. */
static void test_duration_bad(void **state)
{
	static const struct {
		const char *s;
		int r;
	} cases[] = {
		{"", -EINVAL},
		{"1", -EINVAL}, /* Go: missing unit */
		{"h", -EINVAL},
		{"1x", -EINVAL}, /* Go: unknown unit "x" */
		{"1.2.3s", -EINVAL},
		{".", -EINVAL},
		{".s", -EINVAL},
		{"-.s", -EINVAL},
		{"-", -EINVAL},
		{"+", -EINVAL},
		{"+-1s", -EINVAL},
		{"--1s", -EINVAL},
		{"00", -EINVAL}, /* only "0" alone goes without a unit */
		{"1hx", -EINVAL},
		{"1hh", -EINVAL},
		{"1h5", -EINVAL},
		{"1 h", -EINVAL},
		{" 1h", -EINVAL},
		{"1h ", -EINVAL},
		{"1H", -EINVAL},
		{"1u", -EINVAL},
		{"1\xc2\xb5", -EINVAL}, /* the micro sign without its s */
		{"1\xc2s", -EINVAL},
		{"1sec", -EINVAL},
		{"1e3s", -EINVAL},
		{"0x10s", -EINVAL},
		{"1,5h", -EINVAL},
		{"9999999999h", -ERANGE},
		{"2562048h", -ERANGE},
		{"9223372036854775808ns", -ERANGE}, /* +2^63 ns */
		{"-9223372036854775809ns", -ERANGE},
		{"99999999999999999999ns", -ERANGE}, /* past 2^64 in the digits alone */
		{"2562047h2562047h", -ERANGE},       /* the sum */
		{"9223372036854775807ns1ns", -ERANGE},
		/* 2^63 + 2^63 is 2^64, 0 in a uint64: Go wraps and reads 0 here; refused (fuzz_gang found it) */
		{"-9223372036854775808ns9223372036854775808ns", -ERANGE},
		{"9223372036854775808ns9223372036854775808ns", -ERANGE},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ms = -42;
		int r = gs_gang_duration_ms(cases[i].s, &ms);
		if (r != cases[i].r)
			fail_msg("\"%s\": %d (%lld ms); want %d", cases[i].s, r, (long long)ms, cases[i].r);
		assert_int_equal(ms, -42);
	}
	assert_int_equal(gs_gang_duration_ms(NULL, &(int64_t){0}), -EINVAL);
}

/* A good set of annotations: the options, and msg "". */
static void opts_ok(const char *placement, const char *timeout, const char *size, int aon, int64_t ms, long n)
{
	struct gs_gang_opts o;
	char msg[256] = "old";
	int r = gs_gang_opts_parse(placement, timeout, size, &o, msg, sizeof(msg));
	if (r != 0)
		fail_msg("%s/%s/%s: %d %s", placement, timeout, size, r, msg);
	assert_string_equal(msg, "");
	assert_int_equal(o.all_or_nothing, aon);
	assert_int_equal(o.timeout_ms, ms);
	assert_int_equal(o.size, n);
}

/* A bad one: -EINVAL and exactly this message. */
static void opts_bad(const char *placement, const char *timeout, const char *size, const char *want)
{
	struct gs_gang_opts o;
	char msg[256] = "";
	int r = gs_gang_opts_parse(placement, timeout, size, &o, msg, sizeof(msg));
	if (r != -EINVAL || strcmp(msg, want) != 0)
		fail_msg("%s/%s/%s: %d \"%s\"; want -EINVAL \"%s\"", placement, timeout, size, r, msg, want);
}

static void test_opts_ok(void **state)
{
	(void)state;
	opts_ok(NULL, NULL, NULL, 0, GS_GANG_TIMEOUT_DEFAULT_MS, 0);
	opts_ok("independent", NULL, NULL, 0, GS_GANG_TIMEOUT_DEFAULT_MS, 0);
	opts_ok("all-or-nothing", NULL, NULL, 1, GS_GANG_TIMEOUT_DEFAULT_MS, 0);
	opts_ok("all-or-nothing", "90s", NULL, 1, 90000, 0);
	opts_ok("all-or-nothing", NULL, "8", 1, GS_GANG_TIMEOUT_DEFAULT_MS, 8);
	opts_ok("all-or-nothing", "1ms", "1", 1, 1, 1);
	opts_ok("all-or-nothing", "720h", "100000", 1, GS_GANG_TIMEOUT_MAX_MS, GS_GANG_SIZE_MAX);
	opts_ok("all-or-nothing", "+1h", "007", 1, H, 7);
	opts_ok("all-or-nothing", "720h999us", NULL, 1, GS_GANG_TIMEOUT_MAX_MS, 0); /* whole ms, rounded down */
}

static void test_opts_messages(void **state)
{
	(void)state;
	/* placement */
	opts_bad("All-or-nothing", NULL, NULL,
		 "gpu-scheduler.io/placement \"All-or-nothing\" is not a placement (want all-or-nothing or "
		 "independent)");
	opts_bad("", NULL, NULL,
		 "gpu-scheduler.io/placement \"\" is not a placement (want all-or-nothing or independent)");
	opts_bad("all-or-nothing ", "10m", "2",
		 "gpu-scheduler.io/placement \"all-or-nothing \" is not a placement (want all-or-nothing or "
		 "independent)");
	/* settings without all-or-nothing: the timeout is named first */
	opts_bad(NULL, "10m", NULL,
		 "gpu-scheduler.io/gang-timeout is set but gpu-scheduler.io/placement is not all-or-nothing (a "
		 "gang's settings need an all-or-nothing workload)");
	opts_bad("independent", NULL, "4",
		 "gpu-scheduler.io/gang-size is set but gpu-scheduler.io/placement is not all-or-nothing (a gang's "
		 "settings need an all-or-nothing workload)");
	opts_bad(NULL, "bad", "bad",
		 "gpu-scheduler.io/gang-timeout is set but gpu-scheduler.io/placement is not all-or-nothing (a "
		 "gang's settings need an all-or-nothing workload)");
	/* the timeout */
	opts_bad("all-or-nothing", "10x", NULL,
		 "gpu-scheduler.io/gang-timeout \"10x\" is not a duration (Go's form: 90s, 10m, 1h30m)");
	opts_bad("all-or-nothing", "10", NULL,
		 "gpu-scheduler.io/gang-timeout \"10\" is not a duration (Go's form: 90s, 10m, 1h30m)");
	opts_bad("all-or-nothing", "", NULL,
		 "gpu-scheduler.io/gang-timeout \"\" is not a duration (Go's form: 90s, 10m, 1h30m)");
	opts_bad("all-or-nothing", "0", NULL,
		 "gpu-scheduler.io/gang-timeout \"0\" is out of range (more than 0, at most 720h)");
	opts_bad("all-or-nothing", "-5m", NULL,
		 "gpu-scheduler.io/gang-timeout \"-5m\" is out of range (more than 0, at most 720h)");
	opts_bad("all-or-nothing", "999us", NULL, /* below a millisecond: 0 ms */
		 "gpu-scheduler.io/gang-timeout \"999us\" is out of range (more than 0, at most 720h)");
	opts_bad("all-or-nothing", "720h1ms", NULL,
		 "gpu-scheduler.io/gang-timeout \"720h1ms\" is out of range (more than 0, at most 720h)");
	opts_bad("all-or-nothing", "9999999999h", NULL,
		 "gpu-scheduler.io/gang-timeout \"9999999999h\" is out of range (more than 0, at most 720h)");
	/* the size */
	opts_bad("all-or-nothing", "10m", "0",
		 "gpu-scheduler.io/gang-size \"0\" is not a number of pods from 1 to 100000");
	opts_bad("all-or-nothing", NULL, "100001",
		 "gpu-scheduler.io/gang-size \"100001\" is not a number of pods from 1 to 100000");
	opts_bad("all-or-nothing", NULL, "99999999999999999999999",
		 "gpu-scheduler.io/gang-size \"99999999999999999999999\" is not a number of pods from 1 to 100000");
	opts_bad("all-or-nothing", NULL, "-1",
		 "gpu-scheduler.io/gang-size \"-1\" is not a number of pods from 1 to 100000");
	opts_bad("all-or-nothing", NULL, "+4",
		 "gpu-scheduler.io/gang-size \"+4\" is not a number of pods from 1 to 100000");
	opts_bad("all-or-nothing", NULL, "4 ",
		 "gpu-scheduler.io/gang-size \"4 \" is not a number of pods from 1 to 100000");
	opts_bad("all-or-nothing", NULL, "",
		 "gpu-scheduler.io/gang-size \"\" is not a number of pods from 1 to 100000");
	opts_bad("all-or-nothing", NULL, "eight",
		 "gpu-scheduler.io/gang-size \"eight\" is not a number of pods from 1 to 100000");
	/* the timeout is checked before the size */
	opts_bad("all-or-nothing", "x", "0",
		 "gpu-scheduler.io/gang-timeout \"x\" is not a duration (Go's form: 90s, 10m, 1h30m)");
}

/* By reference the settings are a GPUPlacementMap's spec fields (sched/gpm.h): messages name those. */
static void named_bad(const char *placement, const char *timeout, const char *size, const char *want)
{
	struct gs_gang_opts o;
	char msg[256] = "";
	int r = gs_gang_opts_parse_named(&gs_gang_spec_names, placement, timeout, size, &o, msg, sizeof(msg));
	if (r != -EINVAL || strcmp(msg, want) != 0)
		fail_msg("%s/%s/%s: %d \"%s\"; want -EINVAL \"%s\"", placement, timeout, size, r, msg, want);
}

static void test_opts_spec_names(void **state)
{
	struct gs_gang_opts o;
	char msg[64] = "old";
	(void)state;

	named_bad("sometimes", NULL, NULL,
		  "spec.placement \"sometimes\" is not a placement (want all-or-nothing or independent)");
	named_bad(NULL, "5m", NULL,
		  "spec.gangTimeout is set but spec.placement is not all-or-nothing (a gang's settings need an "
		  "all-or-nothing workload)");
	named_bad("independent", NULL, "2",
		  "spec.gangSize is set but spec.placement is not all-or-nothing (a gang's settings need an "
		  "all-or-nothing workload)");
	named_bad("all-or-nothing", "forever", NULL,
		  "spec.gangTimeout \"forever\" is not a duration (Go's form: 90s, 10m, 1h30m)");
	named_bad("all-or-nothing", "0", NULL, "spec.gangTimeout \"0\" is out of range (more than 0, at most 720h)");
	named_bad("all-or-nothing", NULL, "many", "spec.gangSize \"many\" is not a number of pods from 1 to 100000");
	assert_int_equal(
		gs_gang_opts_parse_named(&gs_gang_spec_names, "all-or-nothing", "90s", "3", &o, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	assert_int_equal(o.timeout_ms, 90000);
	assert_int_equal(o.size, 3);
	/* The annotations' names are gs_gang_opts_parse's. */
	assert_int_equal(gs_gang_opts_parse_named(&gs_gang_annotation_names, "x", NULL, NULL, &o, msg, sizeof(msg)),
			 -EINVAL);
	assert_true(strncmp(msg, GS_GANG_PLACEMENT " \"x\"", strlen(GS_GANG_PLACEMENT) + 4) == 0);
}

/* Values are user text: escaped, cut at 40 bytes; msg is cut to its size and always ends. */
static void test_opts_quoting(void **state)
{
	struct gs_gang_opts o;
	char msg[256], small[24];
	char long_value[100];

	(void)state;
	opts_bad("a\"b\\c\n\x7f\xc3\xa9", NULL, NULL,
		 "gpu-scheduler.io/placement \"a\\x22b\\x5cc\\x0a\\x7f\\xc3\\xa9\" is not a placement (want "
		 "all-or-nothing or independent)");
	memset(long_value, 'x', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = '\0';
	assert_int_equal(gs_gang_opts_parse("all-or-nothing", long_value, NULL, &o, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "gpu-scheduler.io/gang-timeout \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"... is "
				 "not a duration (Go's form: 90s, 10m, 1h30m)");

	memset(small, 'x', sizeof(small));
	assert_int_equal(gs_gang_opts_parse("bad", NULL, NULL, &o, small, sizeof(small)), -EINVAL);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, "gpu-scheduler.io/placem", sizeof(small));

	/* No room at all: nothing written, still the answer. */
	assert_int_equal(gs_gang_opts_parse("bad", NULL, NULL, &o, NULL, 0), -EINVAL);
	assert_int_equal(gs_gang_opts_parse("all-or-nothing", "1m", "2", &o, NULL, 0), 0);
	assert_int_equal(o.timeout_ms, 60000);
}

/* --gang-reservation-limits: NAMESPACE=MEMBERS/GPUS items; the lookup takes the namespace's own. */
static void test_limits(void **state)
{
	char msg[200];
	long m = -1, g = -1;

	(void)state;
	assert_int_equal(gs_gang_limits_check("", msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	assert_int_equal(gs_gang_limits_check("train=1024/4096,ci=8/0,a-1=0/0", msg, sizeof(msg)), 0);
	assert_int_equal(gs_gang_limits_lookup("train=1024/4096,ci=8/0", "ci", &m, &g), 1);
	assert_int_equal(m, 8);
	assert_int_equal(g, 0);
	assert_int_equal(gs_gang_limits_lookup("train=1024/4096,ci=8/0", "train", &m, &g), 1);
	assert_int_equal(m, 1024);
	assert_int_equal(g, 4096);
	/* a prefix is not the namespace; absent: both left alone */
	m = g = -1;
	assert_int_equal(gs_gang_limits_lookup("train=1/2", "trai", &m, &g), 0);
	assert_int_equal(gs_gang_limits_lookup("train=1/2", "trainx", &m, &g), 0);
	assert_int_equal(gs_gang_limits_lookup(NULL, "train", &m, &g), 0);
	assert_true(m == -1 && g == -1);
	/* a bad item is skipped by the lookup, refused by the check */
	assert_int_equal(gs_gang_limits_lookup("x=1,ci=3/4", "ci", &m, &g), 1);
	assert_int_equal(m, 3);

	assert_int_equal(gs_gang_limits_check("ci=8", msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "item \"ci=8\" is not NAMESPACE=MEMBERS/GPUS (a namespace's name, two numbers "
				 "from 0 to 1000000; 0: no bound)");
	assert_int_equal(gs_gang_limits_check("a=1/2,,b=1/2", msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "item \"\" is not NAMESPACE=MEMBERS/GPUS (a namespace's name, two numbers "
				 "from 0 to 1000000; 0: no bound)");
	assert_int_equal(gs_gang_limits_check("Team=1/2", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(gs_gang_limits_check("-a=1/2", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(gs_gang_limits_check("a=1/-2", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(gs_gang_limits_check("a=1000001/2", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(gs_gang_limits_check("a=1000000/1000000", msg, sizeof(msg)), 0);
	assert_int_equal(gs_gang_limits_check("a=1/2/3", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(gs_gang_limits_check("a=1/2,b=3/4,a=5/6", msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "namespace a is named twice");
	/* a name of 63 bytes is one, of 64 not */
	char name[100];
	memset(name, 'n', 63);
	strcpy(name + 63, "=1/1");
	assert_int_equal(gs_gang_limits_check(name, msg, sizeof(msg)), 0);
	memset(name, 'n', 64);
	strcpy(name + 64, "=1/1");
	assert_int_equal(gs_gang_limits_check(name, msg, sizeof(msg)), -EINVAL);
	/* the whole text is bounded */
	char big[GS_GANG_LIMITS_MAX + 8];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(gs_gang_limits_check(big, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "is longer than 4096 bytes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_ok),  cmocka_unit_test(test_duration_bad),
		cmocka_unit_test(test_opts_ok),      cmocka_unit_test(test_opts_messages),
		cmocka_unit_test(test_opts_quoting), cmocka_unit_test(test_opts_spec_names),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
