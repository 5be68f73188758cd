/*
 * fuzz_map.c: libFuzzer driver for the gpu-scheduling-map grammar and its cache (src/sched/map.h):
 * gs_map_parse, gs_map_lookup, gs_map_count, gs_map_entry_at, gs_map_cache_get and gs_map_pod_index.
 *
 * The first byte picks where the input goes:
 *   0..127   the whole input is one annotation (seeds are map texts: they start with a digit, a blank,
 *            '#' or a newline). It is parsed; a map is checked entry by entry, written back in
 *            canonical form ("INDEX=NODE:DEVICES\n" per entry) and parsed again, which must give the
 *            same entries; a failure must name a line of the text (or line 0 for the whole text) and
 *            start its message with "line N: ". gs_map_parse_all (lint's) must report the same first
 *            problem, one problem a line in text order, and give exactly the map gs_map_parse makes
 *            of the text with those lines blanked. The same text then goes through a cache twice (a
 *            miss, then a hit): both must agree with the direct parse.
 *   128..191 a cache workout: the rest is split at NUL bytes into annotations (the first 64), each
 *            looked up in one cache of (byte & 3) entries; a piece's first byte decides whether its reference is kept
 *            (up to 8 held, the oldest dropped) or dropped at once. Every answer must equal a direct
 *            parse of the same text, cached errors included, and the counts must add up (hits + misses
 *            = lookups; after a miss, entries over the cap only while none is idle but the one just
 *            returned).
 *   192..255 gs_map_pod_index: the rest split at NUL bytes into the label, the Job annotation and the pod
 *            name (a missing piece, or one that byte & 7 marks, is NULL); the answer must equal the
 *            rule of map.h computed here independently.
 * Invariants are checked with abort(); ASan and UBSan catch the rest, LeakSanitizer every reference
 * not dropped.
 *
 * Build and run (from the repository root; `make fuzz` does both for every harness):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -Isrc \
 *     tests/fuzz/fuzz_map.c src/sched/map.c src/sched/map_cache.c src/core/hmap.c -o build/fuzz_map
 *   mkdir -p build/corpus/map
 *   build/fuzz_map -max_total_time=60 -dict=tests/fuzz/map.dict build/corpus/map tests/fuzz/corpus/map
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/map_cache.h"
#include "sched/map_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(e) ((e) ? (void)0 : abort())

/* memchr, not a byte loop: the harness's own comparisons would be traced like the parser's. */
static size_t count_lines(const char *text, size_t len)
{
	size_t n = 1;
	for (const char *p = text, *end = text + len; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
		n++;
	return n;
}

/* Node names: lowercase letters, digits, '-' and '.', at most 253 bytes, no empty label. */
static void check_node(const char *node)
{
	size_t n = strlen(node);
	CHECK(n > 0 && n <= 253 && node[0] != '.' && node[n - 1] != '.' && !strstr(node, ".."));
	for (size_t i = 0; i < n; i++)
		CHECK((node[i] >= 'a' && node[i] <= 'z') || (node[i] >= '0' && node[i] <= '9') || node[i] == '-' ||
		      node[i] == '.');
}

/* The canonical device list: no blanks, no empty item, n items, and max_index its highest GPU index. */
static void check_devices(const struct gs_map_entry *e)
{
	const char *d = e->devices;
	long max = -1;
	int n = 0;

	CHECK(d && d[0] && e->n_devices >= 1 && e->n_devices <= GS_MAP_MAX_DEVICES);
	for (const char *s = d;;) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		CHECK(len > 0);
		n++;
		if (s[0] >= '0' && s[0] <= '9') {
			long v = 0;
			CHECK(len <= 9);
			for (size_t i = 0; i < len; i++) {
				CHECK(s[i] >= '0' && s[i] <= '9');
				v = v * 10 + (s[i] - '0');
			}
			if (v > max)
				max = v;
		} else {
			CHECK(len > 4 && (!memcmp(s, "GPU-", 4) || !memcmp(s, "MIG-", 4)));
		}
		for (size_t i = 0; i < len; i++)
			CHECK(s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n' && s[i] != '#');
		if (!end)
			break;
		s = end + 1;
	}
	CHECK(n == e->n_devices && max == e->max_index);
}

/* Everything map.h promises about a parsed map of the text text[0..len). */
static void check_map(const struct gs_map *m, size_t len, size_t lines)
{
	size_t n = gs_map_count(m);
	long max_index = -1;
	int prev_line = 0;

	CHECK(n >= 1 && n <= GS_MAP_MAX_ENTRIES && n <= lines && len > 0);
	CHECK(gs_map_entry_at(m, n) == NULL && gs_map_entry_at(m, SIZE_MAX) == NULL);
	for (size_t i = 0; i < n; i++) {
		const struct gs_map_entry *e = gs_map_entry_at(m, i);
		CHECK(e && e->index >= 0);
		CHECK(e->line > prev_line && (size_t)e->line <= lines); /* text order, lines of the text */
		prev_line = e->line;
		check_node(e->node);
		check_devices(e);
		/* The lookup finds this very entry: so indexes are unique (a twin would shadow one of them). */
		CHECK(gs_map_lookup(m, e->index) == e);
		if (e->index > max_index)
			max_index = e->index;
	}
	CHECK(gs_map_lookup(m, -1) == NULL);
	if (max_index < LONG_MAX)
		CHECK(gs_map_lookup(m, max_index + 1) == NULL);
}

static void check_error(const struct gs_map_error *err, size_t len, size_t lines)
{
	CHECK(memchr(err->msg, '\0', sizeof(err->msg)) && err->msg[0]);
	CHECK(err->line >= 0 && (size_t)err->line <= lines);
	if (err->line > 0) {
		char prefix[32];
		int n = snprintf(prefix, sizeof(prefix), "line %d: ", err->line);
		CHECK(strncmp(err->msg, prefix, (size_t)n) == 0);
	} else {
		CHECK(strstr(err->msg, "no entries") || (len > GS_MAP_MAX_BYTES && strstr(err->msg, "over the limit")));
	}
}

static int same_entry(const struct gs_map_entry *a, const struct gs_map_entry *b, int same_line)
{
	return a->index == b->index && strcmp(a->node, b->node) == 0 && strcmp(a->devices, b->devices) == 0 &&
	       a->n_devices == b->n_devices && a->max_index == b->max_index && (!same_line || a->line == b->line);
}

static int same_map(const struct gs_map *a, const struct gs_map *b, int same_line)
{
	if (gs_map_count(a) != gs_map_count(b))
		return 0;
	for (size_t i = 0; i < gs_map_count(a); i++)
		if (!same_entry(gs_map_entry_at(a, i), gs_map_entry_at(b, i), same_line))
			return 0;
	return 1;
}

/* The canonical text of a map parses to the same entries (lines renumbered). */
static void round_trip(const struct gs_map *m, size_t len)
{
	size_t cap = len + 64, used = 0;
	char *text = malloc(cap);
	struct gs_map *again = NULL;
	struct gs_map_error err;

	CHECK(text != NULL);
	for (size_t i = 0; i < gs_map_count(m); i++) {
		const struct gs_map_entry *e = gs_map_entry_at(m, i);
		size_t need = (size_t)snprintf(NULL, 0, "%ld=%s:%s\n", e->index, e->node, e->devices);
		/* Never longer than the text it came from, give or take the newline after the last entry. */
		CHECK(used + need <= len + 1);
		snprintf(text + used, cap - used, "%ld=%s:%s\n", e->index, e->node, e->devices);
		used += need;
	}
	if (used <= GS_MAP_MAX_BYTES) {
		if (gs_map_parse(text, used, &again, &err) != 0)
			abort(); /* the canonical form of a valid map must parse */
		CHECK(same_map(m, again, 0));
		gs_map_unref(again);
	}
	free(text);
}

/* What gs_map_parse_all passed on. */
struct all_errors {
	int n; /* callbacks */
	int lines[GS_MAP_MAX_ERRORS];
	struct gs_map_error first;
	int stopped; /* a "too many entries" or a whole-text problem among them */
	size_t len, text_lines;
};

static void on_error(void *arg, const struct gs_map_error *err)
{
	struct all_errors *a = arg;

	CHECK(a->n < GS_MAP_MAX_ERRORS);
	check_error(err, a->len, a->text_lines);
	CHECK(a->n == 0 || (err->line > a->lines[a->n - 1])); /* text order, one problem a line */
	if (a->n == 0)
		a->first = *err;
	a->lines[a->n++] = err->line;
	a->stopped |= err->line == 0 || strstr(err->msg, "too many entries") != NULL;
}

/*
 * gs_map_parse_all against gs_map_parse: the same first problem, and its map is exactly what
 * gs_map_parse makes of the text with every bad line blanked (line numbers kept).
 */
static void parse_all(const char *text, size_t len, size_t lines, int r, const struct gs_map *m,
		      const struct gs_map_error *err)
{
	struct all_errors a = {.len = len, .text_lines = lines};
	struct gs_map *all = NULL, *again = NULL;
	struct gs_map_error err2;
	int n = gs_map_parse_all(text, len, &all, on_error, &a);

	CHECK(n >= 0 && a.n == (n < GS_MAP_MAX_ERRORS ? n : GS_MAP_MAX_ERRORS));
	if (r == 0) {
		CHECK(n == 0 && all && same_map(m, all, 1));
		gs_map_unref(all);
		return;
	}
	CHECK(n >= 1 && a.first.line == err->line && strcmp(a.first.msg, err->msg) == 0);
	if (all) {
		CHECK(gs_map__refs(all) == 1);
		check_map(all, len, lines);
	}
	if (!a.stopped && n <= GS_MAP_MAX_ERRORS) {
		char *blank = malloc(len + 1);
		int line = 1, k = 0;
		CHECK(blank != NULL);
		memcpy(blank, text, len);
		for (size_t i = 0; i < len; i++) {
			if (blank[i] == '\n')
				line++;
			else if (k < a.n && a.lines[k] == line)
				blank[i] = ' ';
			if (k < a.n && line > a.lines[k])
				k++;
		}
		int r2 = gs_map_parse(blank, len, &again, &err2);
		CHECK(all ? r2 == 0 && same_map(all, again, 1) : r2 == -EINVAL && strstr(err2.msg, "no entries"));
		gs_map_unref(again);
		free(blank);
	}
	gs_map_unref(all);
}

static void whole(const char *text, size_t len)
{
	size_t lines = count_lines(text, len);
	struct gs_map *m = NULL, *c1 = NULL, *c2 = NULL;
	struct gs_map_error err;
	const struct gs_map_error *cerr = NULL;
	struct gs_map__cache_stats st;
	int r = gs_map_parse(text, len, &m, &err);

	if (r == 0) {
		CHECK(m != NULL && gs_map__refs(m) == 1);
		check_map(m, len, lines);
		round_trip(m, len);
	} else {
		CHECK(r == -EINVAL && m == NULL); /* -ENOMEM would be an allocation failure, not input */
		check_error(&err, len, lines);
	}
	parse_all(text, len, lines, r, m, &err);

	struct gs_map_cache *c = gs_map_cache_new(2, 0);
	CHECK(c != NULL);
	for (int pass = 0; pass < 2; pass++) {
		struct gs_map **out = pass ? &c2 : &c1;
		int cr = gs_map_cache_get(c, text, len, out, &cerr);
		CHECK(cr == r);
		if (r == 0) {
			CHECK(*out && !cerr && same_map(m, *out, 1));
		} else {
			CHECK(!*out && cerr && cerr->line == err.line && strcmp(cerr->msg, err.msg) == 0);
		}
	}
	CHECK(c1 == c2); /* the second lookup is a hit on the same map */
	gs_map__cache_stats(c, &st);
	if (len <= GS_MAP_MAX_BYTES)
		CHECK(st.hits == 1 && st.misses == 1 && st.entries == 1 && st.idle == (r == 0 ? 0 : 1));
	else
		CHECK(st.hits == 0 && st.misses == 2 && st.entries == 0);
	if (c1) {
		CHECK(gs_map__refs(c1) == 3); /* the cache's and ours twice */
		gs_map_unref(c2);
		gs_map_unref(c1);
		gs_map__cache_stats(c, &st);
		CHECK(st.idle == 1 && gs_map__refs(c1) == 1);
	}
	gs_map_cache_free(c);
	gs_map_unref(m);
}

#define HELD    8
#define LOOKUPS 64 /* per input: a cache of at most 4 entries shows all it does by then */

static void cache_workout(size_t max, size_t max_bytes, const char *p, size_t len)
{
	struct gs_map_cache *c = gs_map_cache_new(max, max_bytes);
	struct gs_map *held[HELD] = {0};
	size_t n_held = 0, lookups = 0;
	uint64_t misses = 0;
	struct gs_map__cache_stats st;

	CHECK(c != NULL);
	for (const char *end = p + len; p <= end && lookups < LOOKUPS;) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);
		struct gs_map *m = NULL, *direct = NULL;
		const struct gs_map_error *cerr = NULL;
		struct gs_map_error err;
		int keep = n > 0 && (p[0] & 1);

		int r = gs_map_cache_get(c, p, n, &m, &cerr);
		int dr = gs_map_parse(p, n, &direct, &err);
		lookups++;
		CHECK(r == dr);
		if (r == 0) {
			CHECK(m && !cerr && same_map(m, direct, 1) && gs_map__refs(m) >= 2);
		} else {
			CHECK(!m && cerr && cerr->line == err.line && strcmp(cerr->msg, err.msg) == 0);
		}
		gs_map_unref(direct);
		if (m && keep) {
			if (n_held == HELD) {
				gs_map_unref(held[0]);
				memmove(held, held + 1, sizeof(held[0]) * (HELD - 1));
				n_held--;
			}
			held[n_held++] = m;
		} else {
			gs_map_unref(m);
		}
		gs_map__cache_stats(c, &st);
		CHECK(st.hits + st.misses == lookups && st.idle <= st.entries);
		/*
		 * A miss evicts idle entries until the cap holds or nothing idle is left but the entry just
		 * returned; a hit evicts nothing (an entry that went idle since waits for the next miss). So
		 * the cache never holds more than the cap, the maps referenced outside and that one entry.
		 */
		if (st.misses > misses)
			CHECK((st.entries <= max && (!max_bytes || st.idle_bytes <= max_bytes)) || st.idle <= 1);
		CHECK(st.idle_bytes <= st.bytes);
		CHECK(st.entries <= max + HELD + 1);
		misses = st.misses;
		if (!nul)
			break;
		p = nul + 1;
	}
	/* Held maps stay valid and intact while the cache churns; the cache may go first. */
	if (len & 1)
		gs_map_cache_free(c);
	for (size_t i = 0; i < n_held; i++) {
		CHECK(gs_map_count(held[i]) >= 1);
		gs_map_unref(held[i]);
	}
	if (!(len & 1))
		gs_map_cache_free(c);
}

/* map.h's rule: "0" or [1-9][0-9]* within a long. */
static int canonical(const char *s, long *out)
{
	long v = 0;
	if (!s || !s[0] || (s[0] == '0' && s[1]))
		return 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		if (v > (LONG_MAX - (*p - '0')) / 10)
			return 0;
		v = v * 10 + (*p - '0');
	}
	*out = v;
	return 1;
}

static void pod_index(unsigned nulls, const char *p, size_t len)
{
	char *copy = malloc(len + 1);
	const char *arg[3] = {NULL, NULL, NULL};
	long want = -1, got = -1;
	enum gs_index_source want_src = GS_INDEX_NONE, src = GS_INDEX_LABEL;
	size_t k = 0;

	CHECK(copy != NULL);
	memcpy(copy, p, len);
	copy[len] = '\0';
	for (char *s = copy; k < 3;) {
		arg[k++] = s;
		s += strlen(s);
		if (s == copy + len)
			break;
		s++;
	}
	for (k = 0; k < 3; k++)
		if (nulls & (1u << k))
			arg[k] = NULL;
	const char *dash = arg[2] ? strrchr(arg[2], '-') : NULL;
	if (canonical(arg[0], &want))
		want_src = GS_INDEX_LABEL;
	else if (canonical(arg[1], &want))
		want_src = GS_INDEX_JOB_ANNOTATION;
	else if (dash && canonical(dash + 1, &want))
		want_src = GS_INDEX_NAME;

	int r = gs_map_pod_index(arg[0], arg[1], arg[2], &got, &src);
	CHECK(src == want_src && gs_index_source_name(src) && gs_index_source_name(src)[0]);
	if (want_src == GS_INDEX_NONE)
		CHECK(r == -ENOENT);
	else
		CHECK(r == 0 && got == want);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0) {
		whole("", 0);
		return 0;
	}
	if (data[0] < 128)
		whole((const char *)data, size);
	else if (data[0] < 192)
		cache_workout(data[0] & 3, (data[0] & 4) ? (size_t)(data[0] >> 3) * 256 : 0, (const char *)data + 1,
			      size - 1);
	else
		pod_index(data[0] & 7, (const char *)data + 1, size - 1);
	return 0;
}
