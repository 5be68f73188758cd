/*
 * test_core.c: the small core modules: buf (caps, JSON strings), log (levels, JSON lines), metrics (the
 * exposition format, and promtool on it when installed), options (precedence, bounds, messages),
 * backoff (bounds and growth), list (order, removal while walking, membership), alloc (the
 * x-allocators: never NULL, an impossible size aborts naming the caller) and closer (the close
 * protocol: one completion, after the release, never inside the close call).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/alloc.h"
#include "core/backoff.h"
#include "core/closer.h"
#include "core/buf.h"
#include "core/json_nul.h"
#include "core/list.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/num.h"
#include "core/options.h"
#include "core/rand.h"
#include "core/str.h"

/* ---- buf ---------------------------------------------------------------------------------------- */

static void test_buf_cap(void **state)
{
	struct gs_buf b;
	gs_buf_init(&b, 8);
	assert_int_equal(gs_buf_append_str(&b, "12345"), 0);
	assert_int_equal(gs_buf_append_str(&b, "6789"), -E2BIG); /* would pass the cap: unchanged */
	assert_int_equal(b.len, 5);
	assert_string_equal(b.data, "12345");
	assert_int_equal(gs_buf_printf(&b, "%d", 678), 0);
	assert_string_equal(b.data, "12345678");
	gs_buf_consume(&b, 3);
	assert_string_equal(b.data, "45678");
	size_t n;
	char *p = gs_buf_steal(&b, &n);
	assert_int_equal(n, 5);
	assert_string_equal(p, "45678");
	free(p);
	assert_int_equal(b.len, 0);
	gs_buf_free(&b);
	gs_buf_free(&b); /* twice is fine */
}

static void test_buf_json_string(void **state)
{
	struct gs_buf b;
	gs_buf_init(&b, 0);
	const char *in = "a\"b\\c\n\t\x01 é";
	assert_int_equal(gs_buf_append_json_str(&b, in), 0);
	assert_null(strchr(b.data, '\n')); /* control characters escaped */
	cJSON *j = cJSON_Parse(b.data);    /* a valid JSON string that decodes to the input */
	assert_non_null(j);
	assert_string_equal(cJSON_GetStringValue(j), in);
	cJSON_Delete(j);
	gs_buf_free(&b);
}

/* ---- log ---------------------------------------------------------------------------------------- */

static char last_line[1024];
static int lines;
static void sink(enum gs_log_level level, const char *msg, void *data)
{
	snprintf(last_line, sizeof(last_line), "%s", msg);
	lines++;
}

static int evaluated;
static int side_effect(void)
{
	return ++evaluated;
}

/* Points stderr at a new temporary file (path, a mkstemp template) and returns its descriptor; *saved
 * is the old stderr, for dup2 back. */
static int stderr_to_temp(char *path, int *saved)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	*saved = dup(2);
	fflush(stderr);
	dup2(fd, 2);
	return fd;
}

/* Bytes written to the file so far (from the start). */
static size_t file_size(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);
	return end < 0 ? 0 : (size_t)end;
}

/* Batches: info lines wait for gs_log_flush; a warning goes out at once with what came before it;
 * a batch that would overflow is written first; gs_log_batch(0) writes what is left. */
static void test_log_batch(void **state)
{
	char path[] = "/tmp/gs-log-XXXXXX";
	int saved, fd = stderr_to_temp(path, &saved);
	gs_log_setup(GS_LOG_INFO, GS_LOG_TEXT);
	gs_log_batch(1);
	gs_log_info("first %d", 1);
	gs_log_info("second %d", 2);
	size_t held = file_size(fd);
	gs_log_flush();
	size_t flushed = file_size(fd);
	gs_log_info("third %d", 3);
	size_t third = file_size(fd);
	gs_log_warn("a warning");
	size_t warned = file_size(fd);
	char big[1000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < 2 * GS_LOG_BATCH_MAX / (int)sizeof(big); i++)
		gs_log_info("%s", big);
	size_t overflowed = file_size(fd);
	gs_log_batch(0);
	size_t all = file_size(fd);
	gs_log_info("unbatched");
	size_t unbatched = file_size(fd);
	dup2(saved, 2);
	close(saved);

	assert_int_equal(held, 0);        /* nothing written before the flush */
	assert_true(flushed > 0);         /* both lines at the flush */
	assert_int_equal(third, flushed); /* the next info line waits again */
	assert_true(warned > third);      /* the warning took it out */
	assert_true(overflowed > warned && overflowed < warned + 2 * GS_LOG_BATCH_MAX);
	assert_true(all > overflowed); /* gs_log_batch(0) wrote the rest */
	assert_true(unbatched > all);  /* and lines go out at once again */
	char text[256] = "";
	assert_int_equal(pread(fd, text, sizeof(text) - 1, 0) > 0, 1);
	char *a = strstr(text, "first 1"), *b = strstr(text, "second 2"), *c = strstr(text, "third 3");
	assert_true(a && b && c && a < b && b < c); /* in order, whole lines */
	close(fd);
	unlink(path);
}

static void test_log_levels_and_json(void **state)
{
	char path[] = "/tmp/gs-log-XXXXXX";
	int saved, fd = stderr_to_temp(path, &saved);
	gs_log_set_sink(sink, NULL);
	gs_log_setup(GS_LOG_INFO, GS_LOG_TEXT);
	lines = 0;
	evaluated = 0;
	gs_log_debug("hidden %d", side_effect());
	gs_log_info("pod %s/%s bound", "ns", "p");
	gs_log_setup(GS_LOG_DEBUG, GS_LOG_JSON);
	gs_log_warn("quote \" and newline \n here");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	gs_log_set_sink(NULL, NULL);
	gs_log_setup(GS_LOG_INFO, GS_LOG_TEXT);

	assert_int_equal(evaluated, 0); /* arguments of a disabled level are not evaluated */
	assert_int_equal(lines, 2);
	assert_string_equal(last_line, "quote \" and newline \n here");
	char text[2048] = "";
	lseek(fd, 0, SEEK_SET);
	ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	unlink(path);
	assert_true(n > 0);
	char *second = strchr(text, '\n');
	assert_non_null(second);
	*second++ = '\0';
	assert_non_null(strstr(text, " info "));
	assert_non_null(strstr(text, "pod ns/p bound"));
	second[strcspn(second, "\n")] = '\0'; /* the JSON event is one line, and valid JSON */
	cJSON *j = cJSON_Parse(second);
	assert_non_null(j);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "level")), "warn");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "msg")), "quote \" and newline \n here");
	cJSON_Delete(j);

	enum gs_log_level l;
	assert_int_equal(gs_log_level_parse("trace", &l), 0);
	assert_int_equal(l, GS_LOG_TRACE);
	assert_int_equal(gs_log_level_parse("loud", &l), -EINVAL);
	enum gs_log_format f;
	assert_int_equal(gs_log_format_parse("json", &f), 0);
	assert_int_equal(gs_log_format_parse("xml", &f), -EINVAL);
}

/* ---- metrics ------------------------------------------------------------------------------------ */

static double seven(void *ud)
{
	return 7;
}

/* Two series made at scrape time: a value to escape, an empty one left out, one with no label. */
static int two_series(void *ud, struct gs_metrics_put *put)
{
	static const char *const names[] = {"node", "pod", "gpu"};
	const char *const v1[] = {"node1", "web\\\"0\"\n", "3"}, *const v2[] = {"node2", "", NULL};
	int r, *calls = ud;

	(*calls)++;
	if ((r = gs_metrics_put(put, names, v1, 3, 1)) < 0 || (r = gs_metrics_put(put, names, v2, 3, 0.5)) < 0)
		return r;
	return gs_metrics_put(put, names, v2, 0, 2);
}

static int no_series(void *ud, struct gs_metrics_put *put)
{
	(void)ud;
	(void)put;
	return 0;
}

static void test_metrics_exposition(void **state)
{
	struct gs_metrics *m = gs_metrics_new();
	struct gs_counter ok = {3}, bad = {1};
	struct gs_gauge g = {2.5};
	struct gs_histogram h;
	static const double bounds[] = {0.1, 1};
	gs_histogram_init(&h, bounds, 2);
	gs_histogram_observe(&h, 0.05);
	gs_histogram_observe(&h, 0.5);
	gs_histogram_observe(&h, 5);
	gs_metrics_counter(m, "t_requests_total", "Requests by result.", "result=\"ok\"", &ok);
	gs_metrics_counter(m, "t_requests_total", "Requests by result.", "result=\"bad\"", &bad);
	gs_metrics_gauge(m, "t_level", "A level with a \\ backslash.", NULL, &g);
	gs_metrics_gauge_fn(m, "t_fn", "From a callback.", NULL, seven, NULL);
	gs_metrics_histogram(m, "t_seconds", "Latency.", NULL, &h);
	int calls = 0;
	gs_metrics_gauge_family(m, "t_made_info", "Made at scrape time.", two_series, &calls);
	gs_metrics_gauge_family(m, "t_none_info", "None now.", no_series, NULL);
	gs_metrics_process(m);
	struct gs_buf b;
	gs_buf_init(&b, 0);
	assert_int_equal(gs_metrics_render(m, &b), 0);
	const char *t = b.data;
	assert_non_null(strstr(t, "# HELP t_requests_total Requests by result.\n# TYPE t_requests_total counter\n"
				  "t_requests_total{result=\"ok\"} 3\nt_requests_total{result=\"bad\"} 1\n"));
	assert_non_null(strstr(t, "# HELP t_level A level with a \\\\ backslash.\n"));
	assert_non_null(strstr(t, "t_level 2.5\n"));
	assert_non_null(strstr(t, "t_fn 7\n"));
	assert_non_null(strstr(t, "# TYPE t_seconds histogram\n"));
	assert_non_null(strstr(t, "t_seconds_bucket{le=\"0.1\"} 1\n"));
	assert_non_null(strstr(t, "t_seconds_bucket{le=\"1\"} 2\n")); /* cumulative */
	assert_non_null(strstr(t, "t_seconds_bucket{le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(t, "t_seconds_sum 5.55\n"));
	assert_non_null(strstr(t, "t_seconds_count 3\n"));
	assert_non_null(strstr(t, "process_resident_memory_bytes "));
	assert_non_null(strstr(t, "process_open_fds "));
	assert_int_equal(calls, 1);
	assert_non_null(strstr(t, "# TYPE t_made_info gauge\n"
				  "t_made_info{node=\"node1\",pod=\"web\\\\\\\"0\\\"\\n\",gpu=\"3\"} 1\n"
				  "t_made_info{node=\"node2\"} 0.5\nt_made_info 2\n"));
	assert_non_null(strstr(t, "# TYPE t_none_info gauge\n# HELP process_cpu_seconds_total"));

	/* The format checked by Prometheus' own linter, when the Debian package is installed. */
	if (access("/usr/bin/promtool", X_OK) == 0) {
		char path[] = "/tmp/gs-metrics-XXXXXX";
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
		close(fd);
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "/usr/bin/promtool check metrics < %s > /dev/null 2>&1", path);
		int rc = system(cmd);
		unlink(path);
		assert_int_equal(rc, 0);
	}
	gs_buf_free(&b);
	gs_metrics_free(m);
	gs_histogram_free(&h);
}

/* ---- options ------------------------------------------------------------------------------------ */

struct cfg {
	const char *name;
	long n;
	int flag;
	const char *addr;
};

static const struct gs_opt table[] = {
	{"name", "GS_T_NAME", GS_OPT_STRING, "dflt", 0, 0, offsetof(struct cfg, name), NULL, "a name"},
	{"n", "GS_T_N", GS_OPT_INT, "5", 1, 10, offsetof(struct cfg, n), NULL, "a number"},
	{"flag", "GS_T_FLAG", GS_OPT_BOOL, "false", 0, 0, offsetof(struct cfg, flag), NULL, "a switch"},
	{"addr", NULL, GS_OPT_STRING, "0.0.0.0:80", 0, 0, offsetof(struct cfg, addr), gs_opt_validate_hostport,
	 "an address"},
};

static int parse(struct cfg *c, char *err, int argc, ...)
{
	char *argv[16] = {"prog"};
	va_list ap;
	va_start(ap, argc);
	for (int i = 1; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	memset(c, 0, sizeof(*c));
	return gs_options_parse(table, 4, argc, argv, c, err, 256);
}

static void test_options(void **state)
{
	struct cfg c;
	char err[256];
	unsetenv("GS_T_NAME");
	unsetenv("GS_T_N");
	assert_int_equal(parse(&c, err, 1), 0);
	assert_string_equal(c.name, "dflt");
	assert_int_equal(c.n, 5);
	assert_int_equal(c.flag, 0);
	setenv("GS_T_NAME", "env", 1);
	setenv("GS_T_N", "7", 1);
	assert_int_equal(parse(&c, err, 1), 0);
	assert_string_equal(c.name, "env");
	assert_int_equal(c.n, 7);
	assert_int_equal(parse(&c, err, 4, "--name", "flag", "--n=9"), 0); /* the flag wins */
	assert_string_equal(c.name, "flag");
	assert_int_equal(c.n, 9);
	assert_int_equal(parse(&c, err, 2, "--flag"), 0);
	assert_int_equal(c.flag, 1);
	assert_int_equal(parse(&c, err, 2, "--flag=false"), 0);
	assert_int_equal(c.flag, 0);
	unsetenv("GS_T_NAME");
	unsetenv("GS_T_N");

	assert_int_equal(parse(&c, err, 2, "--n=0"), -EINVAL);
	assert_non_null(strstr(err, "--n"));
	assert_int_equal(parse(&c, err, 2, "--n=x"), -EINVAL);
	assert_int_equal(parse(&c, err, 2, "--flag=maybe"), -EINVAL);
	assert_int_equal(parse(&c, err, 2, "--nope"), -EINVAL);
	assert_non_null(strstr(err, "nope"));
	assert_int_equal(parse(&c, err, 2, "--name"), -EINVAL); /* missing value */
	assert_int_equal(parse(&c, err, 2, "--addr=host:99999"), -EINVAL);
	assert_non_null(strstr(err, "--addr"));
	assert_int_equal(parse(&c, err, 2, "--help"), GS_OPTIONS_HELP);
	assert_int_equal(parse(&c, err, 2, "--version"), GS_OPTIONS_VERSION);

	/* Go-style durations (the --leader-elect-* flags). */
	static const struct {
		const char *text;
		long ms;
	} good[] = {{"15s", 15000}, {"500ms", 500}, {"1m30s", 90000}, {"2h", 7200000}, {"1m500ms", 60500}, {"0", 0}};
	long ms;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ms = -1;
		int rc = gs_options_parse_duration_ms(good[i].text, &ms);
		if (rc != 0 || ms != good[i].ms)
			fail_msg("\"%s\": %d, %ld ms; want 0, %ld ms", good[i].text, rc, ms, good[i].ms);
	}
	const char *bad[] = {"", "15", "s", "1.5s", "-1s", "15x", "1s ", "9999999h", "1d"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (gs_options_parse_duration_ms(bad[i], &ms) != -EINVAL)
			fail_msg("\"%s\" accepted as %ld ms", bad[i], ms);

	/* Sizes as Kubernetes binary quantities (the memory budgets). */
	static const struct {
		const char *text;
		long bytes;
	} sizes[] = {{"0", 0},          {"4096", 4096},   {"512Ki", 512L << 10}, {"16Mi", 16L << 20},
		     {"2Gi", 2L << 30}, {"1Ti", 1L << 40}};
	long b;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		b = -1;
		int rc = gs_options_parse_bytes(sizes[i].text, &b);
		if (rc != 0 || b != sizes[i].bytes)
			fail_msg("\"%s\": %d, %ld bytes; want 0, %ld", sizes[i].text, rc, b, sizes[i].bytes);
	}
	const char *bad_sizes[] = {"", "Mi", "16M", "16mi", "1.5Gi", "-1", "16Mi ", "2Ti", "99999999999999999"};
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++)
		if (gs_options_parse_bytes(bad_sizes[i], &b) != -EINVAL)
			fail_msg("\"%s\" accepted as %ld bytes", bad_sizes[i], b);

	char host[64];
	int port;
	assert_int_equal(gs_options_split_hostport("[::1]:8443", host, sizeof(host), &port), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 8443);
	assert_int_equal(gs_options_split_hostport(":8080", host, sizeof(host), &port), 0);
	assert_string_equal(host, "");
	assert_int_equal(gs_options_split_hostport("nohost", host, sizeof(host), &port), -EINVAL);
}

/* ---- backoff ------------------------------------------------------------------------------------ */

static void test_backoff(void **state)
{
	struct gs_backoff b;
	gs_backoff_init(&b, 800, 30000, 42);
	uint64_t ceiling = 800, max_seen = 0;
	for (int i = 0; i < 40; i++) {
		uint64_t d = gs_backoff_next(&b);
		assert_true(d <= ceiling);
		assert_true(d <= 30000);
		if (d > max_seen)
			max_seen = d;
		ceiling = ceiling * 2 > 30000 ? 30000 : ceiling * 2;
	}
	assert_true(max_seen > 15000); /* it does grow to the cap's region */
	gs_backoff_reset(&b);
	assert_true(gs_backoff_next(&b) <= 800);
	for (int i = 0; i < 1000; i++) {
		uint64_t r = gs_backoff_rand(&b, 10, 20);
		assert_true(r >= 10 && r <= 20);
	}
}

static void test_backoff_delay(void **state)
{
	(void)state;
	uint64_t rng = 7;
	for (int i = 0; i < 200; i++) {
		uint64_t d1 = gs_backoff_delay(100, 10000, 1, &rng);
		uint64_t d3 = gs_backoff_delay(100, 10000, 3, &rng);
		uint64_t dmax = gs_backoff_delay(100, 10000, 1000, &rng);
		assert_true(d1 >= 50 && d1 <= 100);
		assert_true(d3 >= 200 && d3 <= 400);
		assert_true(dmax >= 5000 && dmax <= 10000);
	}
	/* the same seed, the same delays: the engine's golden transcripts replay */
	uint64_t a = 42, b = 42;
	for (unsigned f = 1; f < 20; f++)
		assert_int_equal(gs_backoff_delay(800, 30000, f, &a), gs_backoff_delay(800, 30000, f, &b));
}

/* ---- num, rand, str ----------------------------------------------------------------------------- */

static void test_num_sat_add(void **state)
{
	(void)state;
	assert_true(gs_num_sat_add(2, 3) == 5);
	assert_true(gs_num_sat_add(5, -3) == 2);
	assert_true(gs_num_sat_add(INT64_MAX - 1, 1) == INT64_MAX);
	assert_true(gs_num_sat_add(INT64_MAX, 1) == INT64_MAX);
	assert_true(gs_num_sat_add(INT64_MAX, INT64_MAX) == INT64_MAX);
	assert_true(gs_num_sat_add(INT64_MIN, -1) == INT64_MIN);
	assert_true(gs_num_sat_add(-5, INT64_MIN) == INT64_MIN);
	assert_true(gs_num_sat_add(INT64_MIN, INT64_MAX) == -1);
	assert_true(gs_num_sat_add(-1, INT64_MIN + 1) == INT64_MIN);
}

static void test_rand(void **state)
{
	(void)state;
	uint64_t st = 0;
	assert_true(gs_rand_next(&st) == 0xe220a8397b1dcdafull); /* splitmix64's first output for seed 0 */
	uint64_t a = 99, b = 99;
	for (int i = 0; i < 100; i++)
		assert_true(gs_rand_next(&a) == gs_rand_next(&b));
	int seen[11] = {0};
	for (int i = 0; i < 2000; i++) {
		uint64_t r = gs_rand_range(&a, 10, 20);
		assert_true(r >= 10 && r <= 20);
		seen[r - 10] = 1;
	}
	for (int i = 0; i < 11; i++)
		assert_true(seen[i]);
	assert_true(gs_rand_range(&a, 7, 7) == 7);
	assert_true(gs_rand_range(&a, 9, 3) == 9);
	(void)gs_rand_range(&a, 0, UINT64_MAX); /* the full range: no division by zero */
}

static void test_str_copy(void **state)
{
	(void)state;
	char buf[7];
	gs_str_copy(buf, sizeof(buf), "abcdef");
	assert_string_equal(buf, "abcdef");
	gs_str_copy(buf, sizeof(buf), "abcdefghij");
	assert_string_equal(buf, "abc...");
	gs_str_copy(buf, sizeof(buf), "abcdefg");
	assert_string_equal(buf, "abc...");
	gs_str_copy(buf, sizeof(buf), NULL);
	assert_string_equal(buf, "");
	char small[2];
	gs_str_copy(small, sizeof(small), "xyz");
	assert_string_equal(small, "x");
}

/* The two contracts of NULL (core/str.h): absent is not "" for gs_str_eq, the same for gs_str_eq_empty. */
static void test_str_eq(void **state)
{
	(void)state;
	assert_true(gs_str_eq("a", "a"));
	assert_false(gs_str_eq("a", "b"));
	assert_true(gs_str_eq(NULL, NULL));
	assert_false(gs_str_eq(NULL, ""));
	assert_false(gs_str_eq("", NULL));
	assert_false(gs_str_eq(NULL, "a"));
	assert_true(gs_str_eq_empty(NULL, ""));
	assert_true(gs_str_eq_empty("", NULL));
	assert_true(gs_str_eq_empty(NULL, NULL));
	assert_false(gs_str_eq_empty(NULL, "a"));
	assert_false(gs_str_eq_empty("a", "b"));
	assert_true(gs_str_eq_empty("a", "a"));
}

/* ---- list --------------------------------------------------------------------------------------- */

struct item {
	int v;
	struct gs_list link;
};

/* The values of h's records, first to last, as "1,2,3". */
static const char *list_str(const struct gs_list *h)
{
	static char s[64];
	const struct gs_list *l;
	size_t n = 0;

	s[0] = 0;
	GS_LIST_FOREACH(l, h) {
		assert_ptr_equal(l->next->prev, l);
		n += (size_t)snprintf(s + n, sizeof(s) - n, "%s%d", n ? "," : "",
				      GS_CONTAINER_OF(l, struct item, link)->v);
	}
	return s;
}

static void test_list(void **state)
{
	struct gs_list h, *l, *next;
	struct item it[5];

	gs_list_init(&h);
	assert_true(gs_list_empty(&h));
	assert_ptr_equal(gs_list_first(&h), &h);
	for (int i = 0; i < 5; i++) {
		it[i].v = i;
		gs_list_init(&it[i].link);
		assert_false(gs_list_linked(&it[i].link));
	}
	gs_list_insert_tail(&h, &it[1].link);
	gs_list_insert_tail(&h, &it[2].link);
	gs_list_insert_head(&h, &it[0].link);
	gs_list_insert_before(&it[2].link, &it[3].link);
	gs_list_insert_tail(&h, &it[4].link);
	assert_string_equal(list_str(&h), "0,1,3,2,4");
	assert_ptr_equal(gs_list_first(&h), &it[0].link);
	assert_ptr_equal(gs_list_last(&h), &it[4].link);
	assert_true(gs_list_linked(&it[3].link));

	gs_list_remove(&it[3].link);
	assert_false(gs_list_linked(&it[3].link));
	gs_list_remove(&it[3].link); /* self-linked: a no-op */
	assert_string_equal(list_str(&h), "0,1,2,4");

	/* Removing the current link while walking (the odd ones). */
	GS_LIST_FOREACH_SAFE(l, next, &h) {
		if (GS_CONTAINER_OF(l, struct item, link)->v % 2)
			gs_list_remove(l);
	}
	assert_string_equal(list_str(&h), "0,2,4");
	GS_LIST_FOREACH_SAFE(l, next, &h)
		gs_list_remove(l);
	assert_true(gs_list_empty(&h));
	assert_string_equal(list_str(&h), "");
}

/* ---- alloc -------------------------------------------------------------------------------------- */

static void test_alloc(void **state)
{
	char *p = gs_xmalloc(0), *s;
	int *v = NULL, fds[2], status;
	char msg[256] = "";

	assert_non_null(p);
	free(p);
	p = gs_xcalloc(0, 8);
	assert_non_null(p);
	free(p);
	for (int i = 1; i <= 1000; i++) {
		v = gs_xreallocarray(v, (size_t)i, sizeof(*v));
		v[i - 1] = i;
	}
	assert_int_equal(v[999], 1000);
	free(v);
	s = gs_xstrndup("abcdef", 3);
	assert_string_equal(s, "abc");
	free(s);
	s = gs_xstrndup("ab", 10);
	assert_string_equal(s, "ab");
	free(s);
	s = gs_xstrdup("");
	assert_string_equal(s, "");
	free(s);

	/* A size that cannot be had: the child aborts with one line naming this file. */
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		gs_log_setup(GS_LOG_ERROR, GS_LOG_TEXT);
		p = gs_xcalloc(SIZE_MAX / 2, 4);
		_exit(0);
	}
	close(fds[1]);
	assert_true(read(fds[0], msg, sizeof(msg) - 1) > 0);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_non_null(strstr(msg, "out of memory"));
	assert_non_null(strstr(msg, "test_core.c:"));
}

/* ---- closer -------------------------------------------------------------------------------------- */

struct toy {
	uv_timer_t a, b;
	struct gs_closer closer;
	int *released;
};

static void toy_release(struct gs_closer *c)
{
	struct toy *t = GS_CONTAINER_OF(c, struct toy, closer);
	(*t->released)++;
	free(t);
}

static int closer_done, closer_released_at_done;
static int toy_released;

static void toy_closed(void *ud)
{
	closer_done++;
	closer_released_at_done = toy_released;
	assert_ptr_equal(ud, &closer_done);
}

/* A sub-part: its completion arrives later, from a timer. */
static struct gs_closer *pending_part;

static void on_part_timer(uv_timer_t *t)
{
	gs_closer_drop(pending_part);
	uv_close((uv_handle_t *)t, NULL);
}

/* Whether fn, run in a child with stderr silenced, dies of SIGABRT. */
static int aborts(void (*fn)(void))
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		fn();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

/* Armed with nothing closing: close_cb would run inside the close call. */
static void arm_with_nothing_closing(void)
{
	struct gs_closer c;

	gs_closer_init(&c);
	gs_closer_start(&c, NULL, NULL, NULL);
	gs_closer_arm(&c);
}

static void start_twice(void)
{
	struct gs_closer c;

	gs_closer_init(&c);
	gs_closer_start(&c, NULL, NULL, NULL);
	gs_closer_start(&c, NULL, NULL, NULL);
}

static void test_closer(void **state)
{
	uv_loop_t loop;
	uv_timer_t part;
	struct toy *t = calloc(1, sizeof(*t));

	assert_int_equal(uv_loop_init(&loop), 0);
	t->released = &toy_released;
	uv_timer_init(&loop, &t->a);
	uv_timer_init(&loop, &t->b);
	uv_timer_init(&loop, &part);
	gs_closer_init(&t->closer);

	/* Parts held and dropped before the close never complete anything. */
	gs_closer_hold(&t->closer);
	gs_closer_drop(&t->closer);

	gs_closer_start(&t->closer, toy_release, toy_closed, &closer_done);
	gs_closer_uv(&t->closer, (uv_handle_t *)&t->a);
	gs_closer_uv(&t->closer, (uv_handle_t *)&t->b);
	gs_closer_hold(&t->closer);
	pending_part = &t->closer;
	uv_timer_start(&part, on_part_timer, 20, 0);
	gs_closer_arm(&t->closer);
	assert_int_equal(closer_done, 0); /* never inside the close */
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(closer_done, 1);
	assert_int_equal(closer_released_at_done, 1); /* released first, then the owner told */
	assert_int_equal(toy_released, 1);
	assert_int_equal(uv_loop_close(&loop), 0);

	assert_true(aborts(arm_with_nothing_closing));
	assert_true(aborts(start_twice));
}

/* json_nul: each NUL of a string becomes U+001A at the same offset; all else is left as it is. */
static void test_json_mask_nul(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *want; /* NULL: the text itself comes back, nothing allocated */
	} cases[] = {
		{"{\"a\":\"b\\n\"}", 11, NULL},
		{"{\"a\":\"\\u0000x\"}", 15, "{\"a\":\"\\u001ax\"}"},
		{"{\"a\\u0000\":1,\"b\":\"\\u0000\\u0000\"}", 32, "{\"a\\u001a\":1,\"b\":\"\\u001a\\u001a\"}"},
		{"\"\\\\u0000\"", 9, NULL},                 /* an escaped backslash, then text */
		{"\"\\\\\\u0000\"", 10, "\"\\\\\\u001a\""}, /* ... then an escape */
		{"\"\\u000", 6, NULL},                      /* cut short: not an escape */
		{"\"a\0b\"", 5,
		 "\"a\x1a"
		 "b\""}, /* a raw NUL byte */
		{"\\", 1, NULL},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *copy = (char *)1;
		const char *t = gs_json_mask_nul(cases[i].in, cases[i].len, &copy);
		if (!cases[i].want) {
			assert_ptr_equal(t, cases[i].in);
			assert_null(copy);
			continue;
		}
		assert_ptr_equal(t, copy);
		assert_memory_equal(t, cases[i].want, cases[i].len);
		assert_int_equal(t[cases[i].len], '\0');
		free(copy);
	}
	/* what cJSON then reads: the whole name, with the control character, never the short one */
	char *copy;
	const char *t = gs_json_mask_nul("{\"n\":\"AB\\u0000x\"}", 17, &copy);
	cJSON *j = cJSON_ParseWithLength(t, 17);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "n")->valuestring, "AB\x1ax");
	cJSON_Delete(j);
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_cap),
		cmocka_unit_test(test_buf_json_string),
		cmocka_unit_test(test_log_levels_and_json),
		cmocka_unit_test(test_log_batch),
		cmocka_unit_test(test_metrics_exposition),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_backoff_delay),
		cmocka_unit_test(test_num_sat_add),
		cmocka_unit_test(test_rand),
		cmocka_unit_test(test_str_copy),
		cmocka_unit_test(test_str_eq),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_alloc),
		cmocka_unit_test(test_closer),
		cmocka_unit_test(test_json_mask_nul),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
