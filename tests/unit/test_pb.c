/* test_pb.c: the protobuf reader and streaming splitter of src/core/pb.h, on hand-built byte strings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/pb.h"

#define B(...) ((const uint8_t[]){__VA_ARGS__})
#define N(...) sizeof((const uint8_t[]){__VA_ARGS__})

/* Reads every field and prints them as "1:v=150 2:len=3 ..." (or the error) for one compare. */
static void walk(const uint8_t *data, size_t len, char *outs, size_t outlen)
{
	struct gs_pb r;
	struct gs_pb_field f;
	size_t used = 0;
	int rc;

	outs[0] = '\0';
	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		if (f.wire == GS_PB_LEN)
			used += (size_t)snprintf(outs + used, outlen - used, "%s%u:len=%zu", used ? " " : "", f.num,
						 f.len);
		else
			used += (size_t)snprintf(outs + used, outlen - used, "%s%u:%s=%llu", used ? " " : "", f.num,
						 gs_pb_wire_name(f.wire), (unsigned long long)f.v);
	}
	if (rc < 0)
		snprintf(outs + used, outlen - used, "%sERR@%zu %s", used ? " " : "", gs_pb_offset(&r), r.err);
}

#define WALK(expect, ...)                                                 \
	do {                                                              \
		char got_[512];                                           \
		walk(B(__VA_ARGS__), N(__VA_ARGS__), got_, sizeof(got_)); \
		assert_string_equal(got_, expect);                        \
	} while (0)

static void test_scalars(void **state)
{
	(void)state;
	/* The protobuf documentation's 150, a fixed32, a fixed64, a string. */
	WALK("1:varint=150", 0x08, 0x96, 0x01);
	WALK("2:fixed32=16909060", 0x15, 0x04, 0x03, 0x02, 0x01);
	WALK("3:fixed64=1", 0x19, 1, 0, 0, 0, 0, 0, 0, 0);
	WALK("4:len=3 1:varint=0", 0x22, 0x03, 'a', 'b', 'c', 0x08, 0x00);
	/* The largest varint: 10 bytes, the last one carrying only bit 63. */
	WALK("1:varint=18446744073709551615", 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
	/* A big field number (2^29-1, wire 0). */
	WALK("536870911:varint=7", 0xf8, 0xff, 0xff, 0xff, 0x0f, 0x07);
	/* An empty string. */
	WALK("1:len=0", 0x0a, 0x00);
}

static void test_errors(void **state)
{
	(void)state;
	char got[256];
	walk(NULL, 0, got, sizeof(got));
	assert_string_equal(got, "");
	/* Overlong varint: 11 bytes; a 10th byte over bit 63; a truncated varint. */
	WALK("ERR@0 bad or truncated varint", 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01);
	WALK("ERR@0 bad or truncated varint", 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02);
	WALK("1:varint=1 ERR@2 bad or truncated varint", 0x08, 0x01, 0x08, 0x80);
	/* Truncated length: the length says 5, 2 bytes follow; a length varint cut short. */
	WALK("ERR@0 length past the end of the message", 0x0a, 0x05, 'a', 'b');
	WALK("ERR@0 bad or truncated length varint", 0x0a, 0x80);
	/* A length near 2^64 must not wrap the pointer arithmetic. */
	WALK("ERR@0 length past the end of the message", 0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	     0x01, 'x');
	/* Truncated fixed-width fields. */
	WALK("ERR@0 truncated fixed-width field", 0x0d, 1, 2, 3);
	WALK("ERR@0 truncated fixed-width field", 0x09, 1, 2, 3, 4, 5, 6, 7);
	/* Field number 0; over 2^29-1; groups; wire types 6 and 7. */
	WALK("ERR@0 field number out of range", 0x00, 0x01);
	WALK("ERR@0 field number out of range", 0x80, 0x80, 0x80, 0x80, 0x10, 0x00);
	WALK("ERR@0 group wire type not supported", 0x0b, 0x0c);
	WALK("ERR@0 group wire type not supported", 0x0c);
	WALK("ERR@0 undefined wire type", 0x0e);
	WALK("ERR@0 undefined wire type", 0x0f);
	/* A bad tag varint. */
	WALK("ERR@0 bad field tag varint", 0x88);
}

/* A failure sticks: the next call fails too, without reading. */
static void test_error_sticks(void **state)
{
	(void)state;
	struct gs_pb r;
	struct gs_pb_field f;
	const uint8_t bad[] = {0x0e, 0x08, 0x01};
	gs_pb_init(&r, bad, sizeof(bad));
	assert_int_equal(gs_pb_next(&r, &f), -EINVAL);
	assert_int_equal(gs_pb_next(&r, &f), -EINVAL);
	assert_string_equal(r.err, "undefined wire type");
}

/* A nested message is skipped in one step whatever it holds (even garbage: it is not looked at), and
 * read through gs_pb_sub when wanted, each level bounded by its own length. */
static void test_nested(void **state)
{
	(void)state;
	const uint8_t msg[] = {
		0x0a, 0x08,                         /* 1: message of 8 bytes */
		0x12, 0x04, 0x08, 0x07, 0x10, 0x09, /*   2: message {1: 7, 2: 9} */
		0x18, 0x2a,                         /*   3: 42 */
		0x12, 0x03, 0xff, 0xff, 0xff,       /* 2: 3 bytes of garbage (a bad varint if parsed) */
		0x18, 0x01,                         /* 3: 1 */
	};
	char got[256];
	walk(msg, sizeof(msg), got, sizeof(got));
	assert_string_equal(got, "1:len=8 2:len=3 3:varint=1");

	struct gs_pb r, sub, sub2;
	struct gs_pb_field f, g;
	gs_pb_init(&r, msg, sizeof(msg));
	assert_int_equal(gs_pb_next(&r, &f), 1);
	gs_pb_sub(&sub, &f);
	assert_int_equal(gs_pb_next(&sub, &g), 1);
	assert_int_equal(g.num, 2);
	gs_pb_sub(&sub2, &g);
	assert_int_equal(gs_pb_next(&sub2, &g), 1);
	assert_int_equal(g.v, 7);
	assert_int_equal(gs_pb_next(&sub2, &g), 1);
	assert_int_equal(g.v, 9);
	assert_int_equal(gs_pb_next(&sub2, &g), 0);
	assert_int_equal(gs_pb_next(&sub, &g), 1);
	assert_int_equal(g.v, 42);
	assert_int_equal(gs_pb_next(&sub, &g), 0);
	/* The garbage one, read as a message, fails in its own reader only. */
	assert_int_equal(gs_pb_next(&r, &f), 1);
	gs_pb_sub(&sub, &f);
	assert_int_equal(gs_pb_next(&sub, &g), -EINVAL);
	assert_int_equal(gs_pb_next(&r, &f), 1);
	assert_int_equal(f.v, 1);
	assert_int_equal(gs_pb_next(&r, &f), 0);
	/* An inner length past its parent's end is refused even though the outer buffer goes on. */
	const uint8_t cross[] = {0x0a, 0x02, 0x12, 0x05, 'a', 'b', 'c', 'd', 'e'};
	gs_pb_init(&r, cross, sizeof(cross));
	assert_int_equal(gs_pb_next(&r, &f), 1);
	gs_pb_sub(&sub, &f);
	assert_int_equal(gs_pb_next(&sub, &g), -EINVAL);
	assert_string_equal(sub.err, "length past the end of the message");
	assert_int_equal(gs_pb_count(msg, sizeof(msg), 2), 1);
	assert_int_equal(gs_pb_count(msg, sizeof(msg), 9), 0);
	assert_int_equal(gs_pb_count(cross + 2, 2, 2), -EINVAL);
}

/* ---- streaming ----------------------------------------------------------------------------------- */

struct sink {
	char text[4096];
	int stop_at;
	int n;
};

static int on_field(uint32_t num, int wire, uint64_t v, const uint8_t *data, size_t len, void *ud)
{
	struct sink *k = ud;
	size_t used = strlen(k->text);
	k->n++;
	if (data)
		snprintf(k->text + used, sizeof(k->text) - used, "%s%u=%.*s", used ? "|" : "", num, (int)len,
			 (const char *)data);
	else
		snprintf(k->text + used, sizeof(k->text) - used, "%s%u:%d=%llu", used ? "|" : "", num, wire,
			 (unsigned long long)v);
	return k->stop_at && k->n == k->stop_at ? -ECANCELED : 0;
}

/* "k8s\0", then {1: "tm", 2: {1: "meta", 2: "a", 2: "", 3: 5, 2: "bcd"}, 3: "x"}: the Kubernetes shape. */
static const uint8_t stream_msg[] = {
	'k', '8',  's',  0,    0x0a, 0x02, 't', 'm', 0x12, 0x17, 0x0a, 0x04, 'm', 'e', 't', 'a',  0x12, 0x01,
	'a', 0x12, 0x00, 0x18, 0x05, 0x15, 1,   0,   0,    0,    0x12, 0x03, 'b', 'c', 'd', 0x1a, 0x01, 'x',
};
static const uint32_t stream_path[] = {2};

/* Every split of the input into two pieces, and byte by byte, gives the same transcript. */
static void test_stream_splits(void **state)
{
	(void)state;
	const char *want = "1=meta|2=a|2=|3:0=5|2:5=1|2=bcd";
	for (size_t cut = 0; cut <= sizeof(stream_msg); cut++) {
		struct gs_pb_stream s;
		struct sink k = {0};
		gs_pb_stream_init(&s, "k8s", 4, stream_path, 1, 64, on_field, &k);
		assert_int_equal(gs_pb_stream_feed(&s, stream_msg, cut), 0);
		assert_int_equal(gs_pb_stream_feed(&s, stream_msg + cut, sizeof(stream_msg) - cut), 0);
		assert_int_equal(gs_pb_stream_finish(&s), 0);
		assert_string_equal(k.text, want);
		gs_pb_stream_free(&s);
	}
	struct gs_pb_stream s;
	struct sink k = {0};
	gs_pb_stream_init(&s, "k8s", 4, stream_path, 1, 64, on_field, &k);
	for (size_t i = 0; i < sizeof(stream_msg); i++)
		assert_int_equal(gs_pb_stream_feed(&s, stream_msg + i, 1), 0);
	assert_int_equal(gs_pb_stream_finish(&s), 0);
	assert_string_equal(k.text, want);
	gs_pb_stream_free(&s);
}

static int stream_err(const uint8_t *data, size_t len, size_t cap, char *why, size_t whylen)
{
	struct gs_pb_stream s;
	struct sink k = {0};
	int r;
	gs_pb_stream_init(&s, "k8s", 4, stream_path, 1, cap, on_field, &k);
	r = gs_pb_stream_feed(&s, data, len);
	if (r == 0)
		r = gs_pb_stream_finish(&s);
	snprintf(why, whylen, "%s", s.err);
	gs_pb_stream_free(&s);
	return r;
}

static void test_stream_errors(void **state)
{
	(void)state;
	char why[128];
	/* A truncation fails unless it falls between two top-level fields (the outermost message has no
	 * length of its own: the end of the body ends it). */
	for (size_t cut = 0; cut < sizeof(stream_msg); cut++)
		assert_int_equal(stream_err(stream_msg, cut, 64, why, sizeof(why)),
				 cut == 4 || cut == 8 || cut == 33 ? 0 : -EINVAL);
	/* Wrong magic. */
	assert_int_equal(stream_err(B('k', '8', 's', 1), 4, 64, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "byte 3: the stream does not start with the expected magic bytes");
	/* A field over the cap. */
	assert_int_equal(stream_err(stream_msg, sizeof(stream_msg), 3, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "byte 12: field 1 of 4 bytes over the cap of 3");
	/* An inner field longer than its message. */
	assert_int_equal(stream_err(B('k', '8', 's', 0, 0x12, 0x02, 0x0a, 0x05, 'a', 'b', 'c', 'd', 'e'), 13, 64, why,
				    sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "byte 8: length past the end of the message");
	/* A varint field crossing its message's end. */
	assert_int_equal(stream_err(B('k', '8', 's', 0, 0x12, 0x02, 0x08, 0x80, 0x01), 9, 64, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "byte 9: field crosses the end of its message");
	/* Groups; overlong varint. */
	assert_int_equal(stream_err(B('k', '8', 's', 0, 0x0b), 5, 64, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "byte 5: group wire type not supported");
	assert_int_equal(
		stream_err(B('k', '8', 's', 0, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80), 15,
			   64, why, sizeof(why)),
		-EINVAL);
	assert_string_equal(why, "byte 15: bad value varint");
}

static void test_stream_stop(void **state)
{
	(void)state;
	struct gs_pb_stream s;
	struct sink k = {.stop_at = 2};
	gs_pb_stream_init(&s, "k8s", 4, stream_path, 1, 64, on_field, &k);
	assert_int_equal(gs_pb_stream_feed(&s, stream_msg, sizeof(stream_msg)), -ECANCELED);
	assert_string_equal(s.err, "stopped by the caller");
	assert_int_equal(gs_pb_stream_feed(&s, stream_msg, 1), -EINVAL);
	assert_string_equal(k.text, "1=meta|2=a");
	gs_pb_stream_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars),       cmocka_unit_test(test_errors),
		cmocka_unit_test(test_error_sticks),  cmocka_unit_test(test_nested),
		cmocka_unit_test(test_stream_splits), cmocka_unit_test(test_stream_errors),
		cmocka_unit_test(test_stream_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
