/*
 * map.c: the gpu-scheduling-map parser, lookups by index, and the pod's index. See map.h.
 *
 * A parsed map is one allocation: the struct, the entries in text order, an open-addressing table
 * from index to entry, and a string pool holding each entry's node name and canonical device list.
 * The canonical forms are never longer than the text they come from, so the pool is sized from the
 * text up front and nothing moves once written (entries point into it).
 *
 * gs_map_parse stops at the first error: the message is for a person fixing one annotation, and the
 * first problem is the one to fix. gs_map_parse_all (lint) goes on: a bad line gives back the pool
 * bytes it wrote and leaves no entry, so the next line starts as if the bad one were blank. User text
 * quoted in messages is cut short and escaped, since the message travels into Kubernetes events and
 * admission responses.
 */
#include "sched/map.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "sched/map_int.h"

#define QUOTE_MAX 40 /* characters of user text shown in a message */

/* ---- helpers ----------------------------------------------------------------------------------- */

/* The map grammar's blanks: space, tab and the CR of a CRLF line end. Not isspace(), which also takes
 * \v and \f and follows the locale (kubeconfig.c uses it for tokens; json_items.c has JSON's own). */
static inline int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static inline int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline int is_lower_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z');
}

static void trim(const char **a, const char **b)
{
	while (*a < *b && is_blank(**a))
		(*a)++;
	while (*b > *a && is_blank((*b)[-1]))
		(*b)--;
}

/* Writes p[0..n) into out as a quoted, escaped string, cut after QUOTE_MAX characters. */
static const char *quote(char *out, size_t size, const char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	out[o++] = '"';
	for (i = 0; i < n && i < QUOTE_MAX && o + 6 < size; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	out[o++] = '"';
	if (i < n && o + 4 < size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

__attribute__((format(printf, 3, 4))) static int fail(struct gs_map_error *err, int line, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!err)
		return -EINVAL;
	err->line = line;
	if (line > 0)
		n = snprintf(err->msg, sizeof(err->msg), "line %d: ", line);
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Slot of the index table for an index (Fibonacci hashing). */
static inline size_t index_slot(long index, size_t mask)
{
	return (size_t)(((uint64_t)index * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

/* ---- one line ---------------------------------------------------------------------------------- */

/* Why a node name is not a DNS-1123 subdomain, or NULL when it is one. */
static const char *node_problem(const char *p, size_t n)
{
	size_t label = 0;

	if (n > 253)
		return "longer than 253 characters";
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c >= 'A' && c <= 'Z')
			return "uppercase letters are not allowed (node names are lowercase)";
		if (!is_lower_alnum(c) && c != '-' && c != '.')
			return "only lowercase letters, digits, '-' and '.' are allowed";
	}
	for (size_t i = 0; i <= n; i++) {
		if (i < n && p[i] != '.') {
			label++;
			continue;
		}
		if (label == 0)
			return "empty label (leading, trailing or doubled '.')";
		if (label > 63)
			return "a label is longer than 63 characters";
		if (!is_lower_alnum(p[i - label]) || !is_lower_alnum(p[i - 1]))
			return "each label must start and end with a letter or digit";
		label = 0;
	}
	return NULL;
}

/* A GPU index (1-9 digits) or a GPU-/MIG- UUID ("MIG-GPU-<uuid>/gi/ci" is covered by the charset). */
static int device_valid(const char *p, size_t n)
{
	size_t i;

	if (n > 0 && is_digit(p[0])) {
		if (n > 9)
			return 0;
		for (i = 0; i < n; i++) {
			if (!is_digit(p[i]))
				return 0;
		}
		return 1;
	}
	if (n <= 4 || (memcmp(p, "GPU-", 4) != 0 && memcmp(p, "MIG-", 4) != 0))
		return 0;
	for (i = 4; i < n; i++) {
		char c = p[i];
		if (!is_digit(c) && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && c != '-' && c != '/')
			return 0;
	}
	return 1;
}

static int parse_index(const char *a, const char *b, int line, long *out, struct gs_map_error *err)
{
	char q[QUOTE_MAX * 4 + 8];
	const char *d = a;
	long v = 0;

	if (a == b)
		return fail(err, line, "missing index before '='");
	if (*d == '-' && b - d > 1)
		d++;
	for (const char *s = d; s < b; s++) {
		if (!is_digit(*s))
			return fail(err, line, "index %s is not a decimal number",
				    quote(q, sizeof(q), a, (size_t)(b - a)));
	}
	if (d != a)
		return fail(err, line, "negative index %s", quote(q, sizeof(q), a, (size_t)(b - a)));
	for (const char *s = a; s < b; s++) {
		int digit = *s - '0';
		if (v > (LONG_MAX - digit) / 10)
			return fail(err, line, "index %s is too large (overflow)",
				    quote(q, sizeof(q), a, (size_t)(b - a)));
		v = v * 10 + digit;
	}
	*out = v;
	return 0;
}

/*
 * Validates the device list [a, b) and writes its canonical form (items trimmed, joined by ',') at
 * *pool, and the highest GPU index in it at *max_index (-1 if none). Returns the number of devices
 * or -EINVAL.
 */
static int parse_devices(const char *a, const char *b, int line, const char *node, char **pool, long *max_index,
			 struct gs_map_error *err)
{
	char q[QUOTE_MAX * 4 + 8];
	char *w = *pool;
	int n = 1;

	*max_index = -1;
	if (a == b)
		return fail(err, line, "empty device list for node \"%s\"", node);
	for (const char *s = a; s < b; s++)
		n += *s == ',';
	if (n > GS_MAP_MAX_DEVICES)
		return fail(err, line, "too many devices (%d, the limit is %d)", n, GS_MAP_MAX_DEVICES);

	for (const char *s = a; s <= b;) {
		const char *e = memchr(s, ',', (size_t)(b - s));
		const char *ia = s, *ib = e ? e : b;
		trim(&ia, &ib);
		if (ia == ib)
			return fail(err, line, "empty device in %s", quote(q, sizeof(q), a, (size_t)(b - a)));
		if (!device_valid(ia, (size_t)(ib - ia)))
			return fail(err, line, "invalid device %s (want a GPU index like 0 or a GPU-/MIG- UUID)",
				    quote(q, sizeof(q), ia, (size_t)(ib - ia)));
		if (is_digit(*ia)) { /* a GPU index: at most 9 digits (device_valid) */
			long v = 0;
			for (const char *d = ia; d < ib; d++)
				v = v * 10 + (*d - '0');
			if (v > *max_index)
				*max_index = v;
		}
		if (w != *pool)
			*w++ = ',';
		memcpy(w, ia, (size_t)(ib - ia));
		w += ib - ia;
		if (!e)
			break;
		s = e + 1;
	}
	*w++ = '\0';
	*pool = w;
	return n;
}

/*
 * Parses one line [ls, le) into m->entries[m->n] (and the pool). Returns 1 for an entry, 0 for a blank
 * or comment line, -EINVAL.
 */
static int parse_line(struct gs_map *m, const char *ls, const char *le, int line, char **pool, struct gs_map_error *err)
{
	char q[QUOTE_MAX * 4 + 8];
	const char *hash = memchr(ls, '#', (size_t)(le - ls));
	const char *eq, *colon, *na, *nb, *da, *db;
	struct gs_map_entry *e;
	const char *problem;
	long index = 0;
	int rc;

	if (hash)
		le = hash;
	trim(&ls, &le);
	if (ls == le)
		return 0;
	if (m->n >= GS_MAP_MAX_ENTRIES)
		return fail(err, line, "too many entries (the limit is %d)", GS_MAP_MAX_ENTRIES);

	eq = memchr(ls, '=', (size_t)(le - ls));
	if (!eq)
		return fail(err, line, "missing '=' between index and node");
	na = eq + 1;
	db = le;
	nb = eq;
	trim(&ls, &nb);
	if ((rc = parse_index(ls, nb, line, &index, err)) < 0)
		return rc;

	colon = memchr(na, ':', (size_t)(le - na));
	if (!colon)
		return fail(err, line, "missing ':' between node and devices");
	nb = colon;
	trim(&na, &nb);
	if (na == nb)
		return fail(err, line, "empty node name");
	if ((problem = node_problem(na, (size_t)(nb - na))) != NULL)
		return fail(err, line, "invalid node name %s: %s", quote(q, sizeof(q), na, (size_t)(nb - na)), problem);

	/* A duplicate is reported before the devices are looked at: it is the larger mistake. */
	size_t slot = index_slot(index, m->tmask);
	for (; m->table[slot]; slot = (slot + 1) & m->tmask) {
		const struct gs_map_entry *first = &m->entries[m->table[slot] - 1];
		if (first->index == index)
			return fail(err, line, "duplicate index %ld (first on line %d)", index, first->line);
	}

	e = &m->entries[m->n];
	e->index = index;
	e->line = line;
	e->node = *pool;
	memcpy(*pool, na, (size_t)(nb - na));
	(*pool)[nb - na] = '\0';
	*pool += nb - na + 1;

	da = colon + 1;
	trim(&da, &db);
	e->devices = *pool;
	if ((rc = parse_devices(da, db, line, e->node, pool, &e->max_index, err)) < 0)
		return rc;
	e->n_devices = rc;
	m->table[slot] = (uint32_t)(m->n + 1);
	m->n++;
	return 1;
}

/* ---- the map ----------------------------------------------------------------------------------- */

/* Stops at the first problem (err filled) when on_error is NULL, else as gs_map_parse_all. Returns the
 * number of problems, -EINVAL (stopped at the first) or -ENOMEM. */
static int parse_text(const char *text, size_t len, struct gs_map **out, struct gs_map_error *err,
		      gs_map_error_cb on_error, void *arg)
{
	const char *end = text + len, *ls = text;
	size_t lines = 1, max_ent, tcap = 2, pool_size;
	struct gs_map *m;
	char *pool;
	int rc = 0, line, problems = 0;

	*out = NULL;
	err->line = 0;
	err->msg[0] = '\0';
	if (len > GS_MAP_MAX_BYTES) {
		rc = fail(err, 0, "annotation is %zu bytes, over the limit of %d", len, GS_MAP_MAX_BYTES);
		if (on_error)
			on_error(arg, err);
		return on_error ? 1 : rc;
	}
	for (const char *s = text; (s = memchr(s, '\n', (size_t)(end - s))) != NULL; s++)
		lines++;
	max_ent = lines < GS_MAP_MAX_ENTRIES ? lines : GS_MAP_MAX_ENTRIES;
	while (tcap < max_ent * 2)
		tcap *= 2;
	pool_size = len + 2 * max_ent + 1;

	size_t bytes = sizeof(*m) + max_ent * sizeof(struct gs_map_entry) + tcap * sizeof(uint32_t) + pool_size;
	m = malloc(bytes);
	if (!m)
		return -ENOMEM;
	m->refs = 1;
	m->bytes = bytes;
	m->n = 0;
	m->hook = NULL;
	m->hook_arg = NULL;
	m->entries = (struct gs_map_entry *)(m + 1);
	m->table = (uint32_t *)(m->entries + max_ent);
	m->tmask = tcap - 1;
	memset(m->table, 0, tcap * sizeof(uint32_t));
	pool = (char *)(m->table + tcap);

	for (line = 1;; line++) {
		const char *le = memchr(ls, '\n', (size_t)(end - ls));
		char *mark = pool;
		if (!le)
			le = end;
		if ((rc = parse_line(m, ls, le, line, &pool, err)) < 0) {
			if (!on_error)
				goto out;
			pool = mark; /* the bad line's node or devices, written before the problem was seen */
			if (++problems <= GS_MAP_MAX_ERRORS)
				on_error(arg, err);
			if (m->n >= GS_MAP_MAX_ENTRIES)
				break; /* every later line would say the same */
		}
		if (le == end)
			break;
		ls = le + 1;
	}
	GS_ASSERT((size_t)(pool - (char *)(m->table + tcap)) <= pool_size);
	if (m->n == 0 && problems == 0) {
		rc = fail(err, 0, "no entries (only blank lines and comments)");
		if (!on_error)
			goto out;
		problems = 1;
		on_error(arg, err);
	}
	rc = problems;
	if (m->n > 0)
		*out = m;
out:
	if (!*out)
		free(m);
	return rc;
}

int gs_map_parse(const char *text, size_t len, struct gs_map **out, struct gs_map_error *err)
{
	struct gs_map_error own;

	return parse_text(text, len, out, err ? err : &own, NULL, NULL);
}

int gs_map_parse_all(const char *text, size_t len, struct gs_map **out, gs_map_error_cb on_error, void *arg)
{
	struct gs_map_error err;

	GS_ASSERT(on_error);
	return parse_text(text, len, out, &err, on_error, arg);
}

void gs_map_ref(struct gs_map *m)
{
	GS_ASSERT(m->refs > 0);
	if (++m->refs == 2 && m->hook)
		m->hook(m->hook_arg, 1);
}

void gs_map_unref(struct gs_map *m)
{
	if (!m)
		return;
	GS_ASSERT(m->refs > 0); /* one unref per reference (map.h) */
	if (--m->refs == 0) {
		free(m);
		return;
	}
	if (m->refs == 1 && m->hook)
		m->hook(m->hook_arg, 0);
}

const struct gs_map_entry *gs_map_lookup(const struct gs_map *m, long index)
{
	for (size_t s = index_slot(index, m->tmask); m->table[s]; s = (s + 1) & m->tmask) {
		const struct gs_map_entry *e = &m->entries[m->table[s] - 1];
		if (e->index == index)
			return e;
	}
	return NULL;
}

size_t gs_map_count(const struct gs_map *m)
{
	return m->n;
}

size_t gs_map_bytes(const struct gs_map *m)
{
	return m->bytes;
}

const struct gs_map_entry *gs_map_entry_at(const struct gs_map *m, size_t i)
{
	return i < m->n ? &m->entries[i] : NULL;
}

/* ---- the pod's index --------------------------------------------------------------------------- */

const char *gs_index_source_name(enum gs_index_source s)
{
	switch (s) {
	case GS_INDEX_LABEL:
		return "label apps.kubernetes.io/pod-index";
	case GS_INDEX_JOB_ANNOTATION:
		return "annotation batch.kubernetes.io/job-completion-index";
	case GS_INDEX_NAME:
		return "name suffix -N";
	case GS_INDEX_NONE:
		break;
	}
	return "none";
}

/* "0" or [1-9][0-9]* that fits a long, ending at end (or the NUL when end is NULL). */
static int parse_canonical(const char *s, const char *end, long *out)
{
	long v = 0;
	const char *p;

	if (!end)
		end = s + strlen(s);
	if (s == end || (s[0] == '0' && end - s > 1))
		return -EINVAL;
	for (p = s; p < end; p++) {
		if (!is_digit(*p))
			return -EINVAL;
		if (v > (LONG_MAX - (*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*p - '0');
	}
	*out = v;
	return 0;
}

int gs_map_pod_index(const char *label_pod_index, const char *job_index, const char *name, long *index,
		     enum gs_index_source *src)
{
	const char *dash;

	if (label_pod_index && parse_canonical(label_pod_index, NULL, index) == 0) {
		*src = GS_INDEX_LABEL;
		return 0;
	}
	if (job_index && parse_canonical(job_index, NULL, index) == 0) {
		*src = GS_INDEX_JOB_ANNOTATION;
		return 0;
	}
	if (name && (dash = strrchr(name, '-')) != NULL && parse_canonical(dash + 1, NULL, index) == 0) {
		*src = GS_INDEX_NAME;
		return 0;
	}
	*src = GS_INDEX_NONE;
	return -ENOENT;
}
