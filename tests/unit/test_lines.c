/* test_lines.c: the line splitter of src/core/lines.h. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/lines.h"

/* Collects lines as "a|b|c" so a whole transcript is checked with one string compare. */
struct sink {
	char text[4096];
	size_t n;
	int stop_at;  /* return -ECANCELED on this line (1-based), 0 never */
	int reset_in; /* call reset from inside the callback */
	struct gs_lines *s;
};

static int on_line(const char *line, size_t len, void *ud)
{
	struct sink *k = ud;
	k->n++;
	size_t used = strlen(k->text);
	snprintf(k->text + used, sizeof(k->text) - used, "%s%.*s", used ? "|" : "", (int)len, line);
	if (k->reset_in)
		gs_lines_reset(k->s);
	if (k->stop_at && (int)k->n == k->stop_at)
		return -ECANCELED;
	return 0;
}

static void feed_str(struct gs_lines *s, const char *str, int expect)
{
	assert_int_equal(gs_lines_feed(s, str, strlen(str)), expect);
}

static void test_whole_pieces(void **state)
{
	struct sink k = {0};
	struct gs_lines s;

	gs_lines_init(&s, 0, on_line, &k);
	assert_int_equal(s.max, GS_LINE_MAX);
	feed_str(&s, "one\ntwo\nthree\n", 0);
	assert_string_equal(k.text, "one|two|three");
	assert_int_equal(gs_lines_pending(&s), 0);
	assert_null(s.buf.data); /* lines whole in one piece are not copied */
	assert_int_equal(s.lines, 3);
	gs_lines_free(&s);
	gs_lines_free(&s);
}

/* Every split point of a transcript gives the same lines as one piece. */
static void test_every_split(void **state)
{
	const char *in = "{\"type\":\"ADDED\"}\r\n\n{\"a\":1}\n\r\nlast-no-newline";
	size_t n = strlen(in);

	for (size_t cut = 0; cut <= n; cut++) {
		struct sink k = {0};
		struct gs_lines s;
		gs_lines_init(&s, 64, on_line, &k);
		assert_int_equal(gs_lines_feed(&s, in, cut), 0);
		assert_int_equal(gs_lines_feed(&s, in + cut, n - cut), 0);
		assert_string_equal(k.text, "{\"type\":\"ADDED\"}|{\"a\":1}");
		assert_int_equal(gs_lines_pending(&s), strlen("last-no-newline"));
		assert_int_equal(gs_lines_flush(&s), 0);
		assert_string_equal(k.text, "{\"type\":\"ADDED\"}|{\"a\":1}|last-no-newline");
		assert_int_equal(gs_lines_pending(&s), 0);
		assert_int_equal(gs_lines_flush(&s), 0); /* nothing left: no call */
		assert_int_equal(k.n, 3);
		gs_lines_free(&s);
	}
}

static void test_byte_by_byte(void **state)
{
	const char *in = "alpha\nbeta\r\ngamma\n";
	struct sink k = {0};
	struct gs_lines s;

	gs_lines_init(&s, 8, on_line, &k);
	for (size_t i = 0; in[i]; i++)
		assert_int_equal(gs_lines_feed(&s, in + i, 1), 0);
	assert_string_equal(k.text, "alpha|beta|gamma");
	assert_int_equal(gs_lines_feed(&s, "", 0), 0);
	gs_lines_free(&s);
}

/* Exactly max bytes pass; max + 1 fail, in place or buffered, before any newline arrives. */
static void test_cap(void **state)
{
	struct sink k = {0};
	struct gs_lines s;

	gs_lines_init(&s, 4, on_line, &k);
	feed_str(&s, "abcd\n", 0);
	feed_str(&s, "ab", 0);
	feed_str(&s, "cd\n", 0);
	assert_string_equal(k.text, "abcd|abcd");

	feed_str(&s, "abcde\n", -E2BIG); /* in place */
	feed_str(&s, "x\n", -E2BIG);     /* sticky: nothing more is delivered */
	assert_string_equal(k.text, "abcd|abcd");

	gs_lines_reset(&s);
	feed_str(&s, "abc", 0);
	feed_str(&s, "de", -E2BIG); /* buffered: fails without waiting for '\n' */
	assert_int_equal(gs_lines_pending(&s), 0);
	assert_int_equal(gs_lines_flush(&s), -E2BIG);

	gs_lines_reset(&s);
	feed_str(&s, "ok\n", 0);
	assert_string_equal(k.text, "abcd|abcd|ok");
	gs_lines_free(&s);
}

static void test_callback_stops(void **state)
{
	struct sink k = {.stop_at = 2};
	struct gs_lines s;

	gs_lines_init(&s, 0, on_line, &k);
	feed_str(&s, "a\nb\nc\n", -ECANCELED);
	assert_string_equal(k.text, "a|b"); /* c never delivered */
	feed_str(&s, "d\n", -ECANCELED);
	assert_int_equal(k.n, 2);
	gs_lines_reset(&s);
	k.stop_at = 0;
	feed_str(&s, "e\n", 0);
	assert_string_equal(k.text, "a|b|e");

	/* A failing callback on a buffered line also fails the stream and drops the buffer. */
	k.stop_at = 4;
	feed_str(&s, "f", 0);
	feed_str(&s, "g\nh\n", -ECANCELED);
	assert_string_equal(k.text, "a|b|e|fg");
	assert_int_equal(gs_lines_pending(&s), 0);
	gs_lines_free(&s);
}

/* A callback that resets the splitter (a watch restarting) does not corrupt the rest of the piece. */
static void test_reset_inside_callback(void **state)
{
	struct sink k = {.reset_in = 1};
	struct gs_lines s;

	k.s = &s;
	gs_lines_init(&s, 0, on_line, &k);
	feed_str(&s, "par", 0);
	feed_str(&s, "tial\nnext\nrest", 0);
	assert_string_equal(k.text, "partial|next");
	assert_int_equal(gs_lines_pending(&s), 4);
	gs_lines_free(&s);
}

struct big_sink {
	size_t len;
	int ok;
};

static int on_big(const char *line, size_t len, void *ud)
{
	struct big_sink *b = ud;
	b->len = len;
	b->ok = 1;
	for (size_t i = 0; i < len; i++)
		if (line[i] != (char)('a' + i % 26))
			b->ok = 0;
	return 0;
}

/* A large line arriving in small pieces: gathered once, delivered intact. */
static void test_large_line(void **state)
{
	size_t n = 1 << 20;
	char *big = malloc(n + 1);
	struct gs_lines s;
	struct big_sink b = {0};

	assert_non_null(big);
	for (size_t i = 0; i < n; i++)
		big[i] = (char)('a' + i % 26);
	big[n] = '\n';
	gs_lines_init(&s, n, on_big, &b);
	for (size_t off = 0; off <= n; off += 16384) {
		size_t k = n + 1 - off < 16384 ? n + 1 - off : 16384;
		assert_int_equal(gs_lines_feed(&s, big + off, k), 0);
	}
	assert_int_equal(b.len, n);
	assert_true(b.ok);
	gs_lines_free(&s);
	free(big);
}

/* Framed mode: 4-byte big-endian lengths; every split of the stream gives the same records. */
static void test_framed(void **state)
{
	(void)state;
	static const char stream[] = "\0\0\0\3abc\0\0\0\0\0\0\0\1\n\0\0\0\5hello";
	const size_t n = sizeof(stream) - 1;
	for (size_t cut = 0; cut <= n; cut++) {
		struct sink k = {0};
		struct gs_lines s;
		gs_lines_init(&s, 16, on_line, &k);
		gs_lines_set_framed(&s, 1);
		assert_int_equal(gs_lines_feed(&s, stream, cut), 0);
		assert_int_equal(gs_lines_feed(&s, stream + cut, n - cut), 0);
		/* The empty record and the newline record are records here, not separators. */
		assert_string_equal(k.text, "abc||\n|hello");
		assert_int_equal(k.n, 4);
		assert_int_equal(gs_lines_pending(&s), 0);
		gs_lines_free(&s);
	}
	/* Byte by byte, and a record cut short stays pending. */
	struct sink k = {0};
	struct gs_lines s;
	gs_lines_init(&s, 16, on_line, &k);
	gs_lines_set_framed(&s, 1);
	for (size_t i = 0; i < n - 1; i++)
		assert_int_equal(gs_lines_feed(&s, stream + i, 1), 0);
	assert_string_equal(k.text, "abc||\n");
	assert_int_equal(gs_lines_pending(&s), 8);
	assert_int_equal(gs_lines_flush(&s), 0);
	assert_string_equal(k.text, "abc||\n");
	/* A length over the cap fails as soon as the prefix is in, whole or in pieces. */
	gs_lines_reset(&s);
	assert_int_equal(gs_lines_feed(&s, "\0\0\0\x11", 4), -E2BIG);
	assert_int_equal(gs_lines_feed(&s, "\0", 1), -E2BIG);
	gs_lines_reset(&s);
	assert_int_equal(gs_lines_feed(&s, "\0\0", 2), 0);
	assert_int_equal(gs_lines_feed(&s, "\x01\0", 2), -E2BIG);
	/* Exactly the cap passes. */
	gs_lines_reset(&s);
	memset(k.text, 0, sizeof(k.text));
	assert_int_equal(gs_lines_feed(&s,
				       "\0\0\0\x10"
				       "0123456789abcdef",
				       20),
			 0);
	assert_string_equal(k.text, "0123456789abcdef");
	gs_lines_reset(&s);
	memset(k.text, 0, sizeof(k.text));
	assert_int_equal(gs_lines_feed(&s,
				       "\0\0\0\x10"
				       "0123456789",
				       14),
			 0);
	assert_int_equal(gs_lines_feed(&s, "abcdef", 6), 0);
	assert_string_equal(k.text, "0123456789abcdef");
	gs_lines_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_pieces),   cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_byte_by_byte),   cmocka_unit_test(test_cap),
		cmocka_unit_test(test_callback_stops), cmocka_unit_test(test_reset_inside_callback),
		cmocka_unit_test(test_large_line),     cmocka_unit_test(test_framed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
