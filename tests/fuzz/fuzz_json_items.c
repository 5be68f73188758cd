/*
 * fuzz_json_items.c: libFuzzer driver for the streaming list splitter of src/core/json_items.h.
 *
 * The first byte picks how the input is read:
 *   0..127   the whole input is the document (seeds are apiserver lists: they start with '{' or a
 *            blank), fed in pieces whose sizes (1 to 17 bytes, now and then a few hundred) come from a
 *            generator seeded with a hash of the input, with no cap on a value and no callback stop.
 *   128..255 the next byte n says that the n % 16 bytes after it are piece sizes (used in turn; 0 is an
 *            empty feed), and the document follows them. Bit 0x40 caps a value at 1 + 4 * (byte & 31)
 *            bytes (-E2BIG past it); bit 0x20 makes the callback number 1 + (byte & 3) return
 *            -ECANCELED.
 * Checked every time (abort() on a violation):
 *   - the pieces give exactly what one feed of the whole document gives: the same callbacks with the
 *     same keys and texts, the same return codes, the same error message (so every split point
 *     behaves like no split at all);
 *   - a failure says why, and every later feed and finish fail too;
 *   - every text handed out is non-empty, starts with no blank, fits the cap, and is a piece of the
 *     document, in document order;
 *   - when cJSON parses the document whole into an object (and the text holds no control bytes, which
 *     cJSON would take for blanks), the splitter succeeds (or refuses an "items" that is not an array,
 *     which cJSON has no opinion on) and hands out, in order, each member other than "items" with its
 *     key and a value text that cJSON parses to the same value, and each element of "items" the same
 *     way.
 *
 * Build and run (from the repository root; `make fuzz` does both for every harness):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -Isrc \
 *     tests/fuzz/fuzz_json_items.c src/core/json_items.c src/core/buf.c -lcjson -o build/fuzz_json_items
 *   mkdir -p build/corpus/json_items
 *   build/fuzz_json_items -max_total_time=60 -dict=tests/fuzz/json_items.dict build/corpus/json_items \
 *     tests/fuzz/corpus/json_items tests/fixtures/json
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/json_items.h"

#include "pieces.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(e) ((e) ? (void)0 : abort())
#define ARRAY_KEY "items"

struct event {
	int member;       /* a member (else an element of "items") */
	int key_overflow; /* the splitter kept only a prefix of the key */
	char key[64];
	char *value;
	size_t len;
};

struct run {
	struct gs_json_items *s;
	struct event *ev;
	size_t n, cap;
	int stop_at;      /* callback number that returns -ECANCELED; 0 never */
	size_t max_value; /* 0: no cap */
	int rc;           /* first failure of feed, else finish's result */
	char err[128];
};

static int record(struct run *r, int member, const char *key, const char *value, size_t len)
{
	CHECK(len > 0 && value[0] != ' ' && value[0] != '\t' && value[0] != '\n' && value[0] != '\r');
	CHECK(r->max_value == 0 || len <= r->max_value);
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->ev = realloc(r->ev, r->cap * sizeof(*r->ev));
		CHECK(r->ev != NULL);
	}
	struct event *e = &r->ev[r->n++];
	memset(e, 0, sizeof(*e));
	e->member = member;
	if (member) {
		CHECK(strlen(key) < sizeof(e->key));
		snprintf(e->key, sizeof(e->key), "%s", key);
		e->key_overflow = r->s->key_overflow;
	}
	e->value = malloc(len);
	CHECK(e->value != NULL);
	memcpy(e->value, value, len);
	e->len = len;
	return r->stop_at && (int)r->n == r->stop_at ? -ECANCELED : 0;
}

static int on_member(const char *key, const char *value, size_t len, void *ud)
{
	return record(ud, 1, key, value, len);
}

static int on_element(const char *value, size_t len, void *ud)
{
	return record(ud, 0, NULL, value, len);
}

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->ev[i].value);
	free(r->ev);
}

/* Feeds doc[0..len) in pieces: sizes[] in turn when n_sizes > 0, else from the generator; 0 pieces: whole. */
static void feed(struct run *r, const char *doc, size_t len, const uint8_t *sizes, size_t n_sizes, uint32_t seed,
		 int whole)
{
	struct gs_json_items s;
	size_t off = 0, k = 0, empty = 0;
	int rc = 0;

	r->s = &s;
	gs_json_items_init(&s, ARRAY_KEY, r->max_value, on_member, on_element, r);
	while (rc == 0 && (off < len || (whole && off == 0))) {
		size_t n;
		if (whole) {
			n = len;
		} else if (n_sizes) {
			n = sizes[k++ % n_sizes];
			if (n == 0 && ++empty > n_sizes)
				n = 1; /* all sizes 0: still move on */
		} else {
			uint32_t x = pieces_rand(&seed);
			n = x % 16 == 0 ? x % 512 : 1 + x % 17;
		}
		if (n > len - off)
			n = len - off;
		rc = gs_json_items_feed(&s, doc + off, n);
		off += n;
		if (whole)
			break;
	}
	if (rc == 0)
		rc = gs_json_items_finish(&s);
	r->rc = rc;
	snprintf(r->err, sizeof(r->err), "%s", s.err);
	if (rc < 0) {
		CHECK(s.err[0] != '\0');
		CHECK(gs_json_items_feed(&s, " ", 1) < 0 && gs_json_items_finish(&s) < 0);
	} else {
		CHECK(rc == 0);
	}
	gs_json_items_free(&s);
	r->s = NULL;
}

static void same_runs(const struct run *a, const struct run *b)
{
	CHECK(a->rc == b->rc && strcmp(a->err, b->err) == 0 && a->n == b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct event *x = &a->ev[i], *y = &b->ev[i];
		CHECK(x->member == y->member && x->key_overflow == y->key_overflow && strcmp(x->key, y->key) == 0);
		CHECK(x->len == y->len && memcmp(x->value, y->value, x->len) == 0);
	}
}

/* Every text handed out is a piece of the document, in order, never overlapping. */
static void in_document(const struct run *r, const char *doc, size_t len)
{
	const char *p = doc, *end = doc + len;
	for (size_t i = 0; i < r->n; i++) {
		const char *at = memmem(p, (size_t)(end - p), r->ev[i].value, r->ev[i].len);
		CHECK(at != NULL);
		p = at + r->ev[i].len;
	}
}

/* cJSON's parse of text[0..len) (NUL-terminated for it), NULL unless it is one value and nothing after. */
static cJSON *parse_whole(const char *text, size_t len)
{
	char *z = malloc(len + 1);
	CHECK(z != NULL);
	memcpy(z, text, len);
	z[len] = '\0';
	cJSON *j = cJSON_ParseWithLengthOpts(z, len + 1, NULL, 1);
	free(z);
	return j;
}

/* cJSON's reading of a text: printed unformatted, or NULL when it does not parse whole. */
static char *canonical(const char *text, size_t len)
{
	cJSON *j = parse_whole(text, len);
	if (!j)
		return NULL;
	char *out = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	CHECK(out != NULL);
	return out;
}

static void same_value(const struct event *e, const cJSON *want)
{
	char *got = canonical(e->value, e->len), *w = cJSON_PrintUnformatted(want);
	CHECK(got != NULL && w != NULL); /* a piece of a valid document that is a whole value parses */
	CHECK(strcmp(got, w) == 0);
	free(got);
	free(w);
}

/* The key as cJSON reads it: the splitter's raw text unescaped. */
static int key_is(const struct event *e, const char *want)
{
	char quoted[80];
	snprintf(quoted, sizeof(quoted), "\"%s\"", e->key);
	cJSON *k = cJSON_Parse(quoted);
	int same = cJSON_IsString(k) && strcmp(k->valuestring, want) == 0;
	cJSON_Delete(k);
	return same;
}

/*
 * Whether member n (from 0) of the top-level object is written with the literal key "items". Only the
 * raw text tells: cJSON unescapes keys, and "items\u0000x" reads as "items" through its C strings.
 * The document is valid JSON (cJSON parsed it whole).
 */
static int literal_array_key(const char *doc, size_t len, size_t n)
{
	int depth = 0, expect_key = 0;
	size_t member = 0;

	for (size_t i = 0; i < len; i++) {
		char ch = doc[i];
		if (ch == '"') {
			size_t start = ++i;
			while (i < len && doc[i] != '"')
				i += doc[i] == '\\' ? 2 : 1;
			if (depth == 1 && expect_key) {
				if (member++ == n)
					return i - start == strlen(ARRAY_KEY) && memcmp(doc + start, ARRAY_KEY, i - start) == 0;
				expect_key = 0;
			}
		} else if (ch == '{' || ch == '[') {
			expect_key = ++depth == 1 && ch == '{';
		} else if (ch == '}' || ch == ']') {
			depth--;
		} else if (ch == ',' && depth == 1) {
			expect_key = 1;
		}
	}
	return 0;
}

static void compare_with_cjson(const struct run *r, const char *doc, size_t len)
{
	if (len >= 3 && memcmp(doc, "\xef\xbb\xbf", 3) == 0)
		return; /* cJSON skips a byte order mark; the splitter wants '{' */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)doc[i];
		if (c < 0x20 && c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return; /* cJSON takes any byte up to 0x20 for a blank, and stops at a NUL */
	}
	cJSON *root = parse_whole(doc, len);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return;
	}
	if (r->rc < 0) {
		/* The one refusal a valid object can get: "items" that is neither an array nor null. */
		const cJSON *items = NULL;
		for (const cJSON *c = root->child; c; c = c->next)
			if (strcmp(c->string, ARRAY_KEY) == 0 && !cJSON_IsArray(c) && !cJSON_IsNull(c))
				items = c;
		CHECK(r->rc == -EINVAL && strstr(r->err, "is not an array") && items);
		cJSON_Delete(root);
		return;
	}
	size_t ev = 0, member = 0;
	for (const cJSON *c = root->child; c; c = c->next, member++) {
		const struct event *e = ev < r->n ? &r->ev[ev] : NULL;
		/* A literal "items" key names the array (its elements come one by one); an escaped one is
		 * just another member to the splitter, though cJSON reads the same name. */
		int array = cJSON_IsArray(c) && literal_array_key(doc, len, member);
		if (array) {
			for (const cJSON *el = c->child; el; el = el->next) {
				CHECK(ev < r->n && !r->ev[ev].member);
				same_value(&r->ev[ev], el);
				ev++;
			}
			continue;
		}
		CHECK(e && e->member);
		if (!e->key_overflow)
			CHECK(key_is(e, c->string));
		same_value(e, c);
		ev++;
	}
	CHECK(ev == r->n);
	cJSON_Delete(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sizes = NULL;
	size_t n_sizes = 0;
	const char *doc = (const char *)data;
	size_t len = size;
	struct run chunked = {0}, whole = {0};

	if (size > 0 && data[0] >= 128) {
		if (size < 2)
			return 0;
		n_sizes = data[1] % 16;
		if (size < 2 + n_sizes)
			return 0;
		sizes = data + 2;
		doc = (const char *)data + 2 + n_sizes;
		len = size - 2 - n_sizes;
		if (data[0] & 0x40)
			chunked.max_value = whole.max_value = 1 + 4 * (size_t)(data[0] & 31);
		if (data[0] & 0x20)
			chunked.stop_at = whole.stop_at = 1 + (data[0] & 3);
	}
	feed(&chunked, doc, len, sizes, n_sizes, pieces_seed(data, size), 0);
	feed(&whole, doc, len, NULL, 0, 0, 1);
	same_runs(&chunked, &whole);
	in_document(&whole, doc, len);
	if (!whole.max_value && !whole.stop_at)
		compare_with_cjson(&whole, doc, len);
	run_free(&chunked);
	run_free(&whole);
	return 0;
}
