/*
 * fuzz_gang.c: libFuzzer driver for the all-or-nothing annotations (src/sched/gang.h), user text that
 * the webhook, lint and the engine read: gs_gang_duration_ms and gs_gang_opts_parse.
 *
 * The first byte: bits 0-2 make the placement, timeout and size NULL (absent); the next byte is the
 * size of msg (0 to 255). The rest is split at NUL bytes into the three values (a missing piece is
 * NULL). Then:
 *   - each piece goes through gs_gang_duration_ms, checked against an independent reading of Go's
 *     grammar ([-+]?([0-9]*(.[0-9]*)?UNIT)+ or [-+]?0, a component having a digit): anything outside
 *     it fails (-EINVAL, or -ERANGE when an earlier component overflows, as Go stops there); inside it
 *     the answer is 0 or -ERANGE; without a fraction the value is computed
 *     exactly here (128-bit) and must match, -ERANGE exactly past Go's limits; with one, within 1 ms
 *     of a long double estimate. A failure leaves *ms alone.
 *   - gs_gang_opts_parse: 0 or -EINVAL; msg always NUL-terminated inside its size, nothing written
 *     past it; "" on success; a failure's message (with room) names an annotation and holds only
 *     printable ASCII (values are escaped). On success: all_or_nothing exactly when placement is
 *     "all-or-nothing", a timeout or size only with it, the timeout in (0, 720h] and equal to
 *     gs_gang_duration_ms's, the size 0 when absent, else 1..GS_GANG_SIZE_MAX.
 *   - the whole text (to its first NUL) as --gang-reservation-limits: check_limits below.
 * Invariants are checked with abort(); ASan and UBSan catch the rest.
 *
 * Build and run (from the repository root; `make fuzz FUZZ_NAMES=gang` does both):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -Isrc \
 *     tests/fuzz/fuzz_gang.c src/sched/gang.c -o build-fuzz/fuzz_gang
 *   build-fuzz/fuzz_gang -max_total_time=60 -dict=tests/fuzz/gang.dict build-fuzz/corpus/gang tests/fuzz/corpus/gang
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sched/gang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(e) ((e) ? (void)0 : abort())

#define LIMIT ((unsigned __int128)1 << 63)

struct reading {
	int grammar;          /* matches Go's grammar */
	int has_frac;         /* some component has a fraction digit */
	int neg;              /* a leading '-' */
	unsigned __int128 ns; /* whole parts times units, saturated above 2^64 (no fraction) */
	long double approx;   /* the value with fractions, in ns */
	int int_overflow;     /* a component's digits alone past 2^63 (Go's leadingInt fails) */
};

static unsigned long long unit_ns(const char *p, size_t n)
{
	static const struct {
		const char *name;
		unsigned long long ns;
	} u[] = {{"ns", 1},       {"us", 1000},         {"\xc2\xb5s", 1000},   {"\xce\xbcs", 1000},
		 {"ms", 1000000}, {"s", 1000000000ULL}, {"m", 60000000000ULL}, {"h", 3600000000000ULL}};
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (strlen(u[i].name) == n && memcmp(u[i].name, p, n) == 0)
			return u[i].ns;
	return 0;
}

static int digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Go's grammar, read here without gang.c's code, and the value in two precisions. */
static void read_go(const char *s, struct reading *r)
{
	memset(r, 0, sizeof(*r));
	if (*s == '-' || *s == '+')
		r->neg = *s++ == '-';
	if (strcmp(s, "0") == 0) {
		r->grammar = 1;
		return;
	}
	if (!*s)
		return;
	while (*s) {
		unsigned __int128 whole = 0;
		long double frac = 0, scale = 1;
		size_t nd = 0, nf = 0, nu = 0;
		unsigned long long unit;
		for (; digit(*s); s++, nd++) {
			whole = whole * 10 + (unsigned)(*s - '0');
			if (whole > LIMIT)
				r->int_overflow = 1, whole = LIMIT + 1;
		}
		if (*s == '.')
			for (s++; digit(*s); s++, nf++) {
				scale *= 10;
				frac += (long double)(*s - '0') / scale;
			}
		if (!nd && !nf)
			return;
		while (s[nu] && s[nu] != '.' && !digit(s[nu]))
			nu++;
		if (!(unit = unit_ns(s, nu)))
			return;
		s += nu;
		if (nf && frac > 0)
			r->has_frac = 1;
		r->ns += whole * unit;
		if (r->ns > ((unsigned __int128)1 << 64))
			r->ns = ((unsigned __int128)1 << 64) + 1;
		r->approx += (long double)whole * unit + frac * unit;
	}
	r->grammar = 1;
}

static void check_duration(const char *s)
{
	struct reading go;
	int64_t ms = 0x5a5a5a5a;
	int rc = gs_gang_duration_ms(s, &ms);

	read_go(s, &go);
	CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE);
	if (rc < 0)
		CHECK(ms == 0x5a5a5a5a);
	if (!go.grammar) { /* -ERANGE too when a component before the bad part overflows: Go stops there */
		CHECK(rc < 0);
		return;
	}
	CHECK(rc != -EINVAL);
	if (go.int_overflow) {
		CHECK(rc == -ERANGE);
		return;
	}
	if (!go.has_frac) {
		int over = go.ns > (go.neg ? LIMIT : LIMIT - 1);
		CHECK(over ? rc == -ERANGE : rc == 0);
		if (rc == 0)
			CHECK(ms == (go.neg ? -(int64_t)(go.ns / 1000000) : (int64_t)(go.ns / 1000000)));
		return;
	}
	if (rc == 0) {
		long double want = go.approx / 1e6L;
		long double got = go.neg ? -(long double)ms : (long double)ms;
		CHECK(got >= want - 1.5L && got <= want + 1.5L);
		CHECK(go.neg ? ms <= 0 : ms >= 0);
	} else {
		CHECK(go.approx > 9.2e18L); /* -ERANGE only near or past 2^63 ns */
	}
}

static int printable(const char *m)
{
	for (; *m; m++)
		if ((unsigned char)*m < 0x20 || (unsigned char)*m > 0x7e)
			return 0;
	return 1;
}

static void check_opts(const char *pl, const char *to, const char *sz, size_t msg_size)
{
	char buf[512];
	struct gs_gang_opts o;
	int rc;

	memset(buf, 0xa5, sizeof(buf));
	rc = gs_gang_opts_parse(pl, to, sz, &o, buf, msg_size);
	CHECK(rc == 0 || rc == -EINVAL);
	for (size_t i = msg_size; i < sizeof(buf); i++)
		CHECK((unsigned char)buf[i] == 0xa5);
	if (msg_size)
		CHECK(memchr(buf, '\0', msg_size) != NULL);
	if (rc == 0) {
		int64_t ms;
		CHECK(!msg_size || buf[0] == '\0');
		CHECK(o.all_or_nothing == (pl && strcmp(pl, GS_GANG_ALL_OR_NOTHING) == 0));
		CHECK(!pl || o.all_or_nothing || strcmp(pl, GS_GANG_INDEPENDENT) == 0);
		CHECK(o.all_or_nothing || (!to && !sz));
		CHECK(o.timeout_ms > 0 && o.timeout_ms <= GS_GANG_TIMEOUT_MAX_MS);
		if (to)
			CHECK(gs_gang_duration_ms(to, &ms) == 0 && ms == o.timeout_ms);
		else
			CHECK(o.timeout_ms == GS_GANG_TIMEOUT_DEFAULT_MS);
		CHECK(sz ? o.size >= 1 && o.size <= GS_GANG_SIZE_MAX : o.size == 0);
		return;
	}
	if (msg_size >= 256) {
		CHECK(strncmp(buf, GS_GANG_PLACEMENT, strlen(GS_GANG_PLACEMENT)) == 0 ||
		      strncmp(buf, GS_GANG_TIMEOUT, strlen(GS_GANG_TIMEOUT)) == 0 ||
		      strncmp(buf, GS_GANG_SIZE, strlen(GS_GANG_SIZE)) == 0);
		CHECK(printable(buf));
	}
}

/*
 * --gang-reservation-limits: the check answers 0 or -EINVAL with msg ended inside its size ("" on
 * success); on text it accepts, every item walks as one (1, never -EINVAL), each number in 0..
 * GS_GANG_LIMIT_MAX, and the lookup of each item's namespace finds the item's numbers (no namespace is
 * named twice). The lookup never writes without answering 1.
 */
static void check_limits(const char *text, size_t msg_size)
{
	char msg[256], ns[80];
	const char *at = text;
	struct gs_gang_limit l;
	long m = -7, g = -7;
	int r, ok;

	memset(msg, 'Z', sizeof(msg));
	ok = gs_gang_limits_check(text, msg, msg_size) == 0;
	if (msg_size)
		CHECK(memchr(msg, '\0', msg_size) != NULL);
	CHECK(!ok || !msg_size || msg[0] == '\0');
	if (gs_gang_limits_lookup(text, "ns", &m, &g) == 0)
		CHECK(m == -7 && g == -7);
	if (!ok)
		return;
	while ((r = gs_gang_limits_next(&at, &l)) != 0) {
		CHECK(r == 1 && l.ns_len >= 1 && l.ns_len <= 63);
		CHECK(l.members >= 0 && l.members <= GS_GANG_LIMIT_MAX && l.gpus >= 0 && l.gpus <= GS_GANG_LIMIT_MAX);
		memcpy(ns, l.ns, l.ns_len);
		ns[l.ns_len] = '\0';
		CHECK(gs_gang_limits_lookup(text, ns, &m, &g) == 1 && m == l.members && g == l.gpus);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *piece[3] = {NULL, NULL, NULL}, *text;
	size_t at = 2;
	unsigned flags;

	if (size < 2 || size > 4096)
		return 0;
	flags = data[0];
	text = malloc(size - 2 + 1);
	CHECK(text != NULL);
	memcpy(text, data + 2, size - 2);
	text[size - 2] = '\0';
	for (int i = 0; i < 3 && at <= size; i++) {
		size_t n = strlen(text + (at - 2));
		if (!(flags & (1u << i)))
			piece[i] = text + (at - 2);
		at += n + 1;
	}
	for (int i = 0; i < 3; i++)
		if (piece[i])
			check_duration(piece[i]);
	check_opts(piece[0], piece[1], piece[2], data[1]);
	check_opts(piece[0], piece[1], piece[2], 256);
	check_limits(text, data[1]);
	free(text);
	return 0;
}
