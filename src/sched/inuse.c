/*
 * inuse.c: the devices-in-use annotation (inuse.h): one strict parser, one formatter that sorts.
 * The parser copies the text into the result's own block and cuts it in place; every string of the
 * result points there.
 */
#include "sched/inuse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/log.h"
#include "core/num.h"

#define FIELD_MAX 256
#define NS_MAX    63
#define NAME_MAX_ 253

static int fail(char *err, size_t size, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t size, int line, const char *fmt, ...)
{
	va_list ap;
	int n = line ? snprintf(err, size, "line %d: ", line) : 0;

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < size)
		vsnprintf(err + n, size - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ---- time ---------------------------------------------------------------------------------------- */

static int digits(const char *s, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		*v = *v * 10 + (s[i] - '0');
	}
	return 1;
}

int gs_inuse_time_parse(const char *s, size_t len, int64_t *ms)
{
	static const char mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y, mo, d, h, mi, se;

	if (len != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' ||
	    !digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) || !digits(s + 11, 2, &h) ||
	    !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &se))
		return -EINVAL;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 59)
		return -EINVAL;
	if (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
		return -EINVAL;
	*ms = ((gs_num_days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000 + se * 1000LL;
	return 0;
}

void gs_inuse_time_format(int64_t ms, char out[21])
{
	time_t secs = (time_t)(ms >= 0 ? ms / 1000 : 0);
	struct tm tm;

	if (!gmtime_r(&secs, &tm) || strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm) != 20)
		memcpy(out, "1970-01-01T00:00:00Z", 21);
}

/* ---- fields -------------------------------------------------------------------------------------- */

/* NULL when s[0..len) may be a field (1..FIELD_MAX printable characters, no blank), else why not. */
static const char *field_problem(const char *s, size_t len)
{
	if (!len)
		return "empty";
	if (len > FIELD_MAX)
		return "longer than 256 bytes";
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] > '~')
			return "a blank or a character that is not printable ASCII";
	return NULL;
}

/* 1 when s is a non-empty line of printable ASCII (blanks allowed). */
static int printable_line(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || (unsigned char)*s > '~')
			return 0;
	return 1;
}

/* NULL when s is "namespace/name" (each non-empty, within the API's lengths), else why not. */
static const char *holder_problem(const char *s, size_t len)
{
	const char *why = len > NS_MAX + 1 + NAME_MAX_ ? "longer than namespace/name may be" : field_problem(s, len);
	const char *slash = why ? NULL : memchr(s, '/', len);

	if (why)
		return why;
	if (!slash || slash == s || slash == s + len - 1 || memchr(slash + 1, '/', len - (size_t)(slash + 1 - s)))
		return "not namespace/pod";
	if ((size_t)(slash - s) > NS_MAX || len - (size_t)(slash - s) - 1 > NAME_MAX_)
		return "namespace or pod name too long";
	return NULL;
}

/* Order of device lines: by resource, then ID. */
static int dev_cmp(const struct gs_inuse_dev *a, const struct gs_inuse_dev *b)
{
	int c = strcmp(a->resource, b->resource);
	return c ? c : strcmp(a->id, b->id);
}

static int dev_cmp_qsort(const void *a, const void *b)
{
	return dev_cmp(a, b);
}

/* ---- parse --------------------------------------------------------------------------------------- */

struct parse {
	struct gs_inuse *u;
	char *err;
	size_t errsize;
	int line;
};

/* Splits line at single spaces into at most max fields (the last keeps the rest); returns the count,
 * or -1 when a field is empty (two blanks, a blank at an end). */
static int split(char *line, char **f, int max)
{
	int n = 0;

	for (char *p = line;;) {
		char *sp = n + 1 < max ? strchr(p, ' ') : NULL;
		f[n++] = p;
		if (!sp)
			break;
		*sp = '\0';
		p = sp + 1;
	}
	for (int i = 0; i < n; i++)
		if (!*f[i])
			return -1;
	return n;
}

static int parse_header(struct parse *ps, char *line)
{
	char *f[3];
	int n = split(line, f, 3);

	if (n >= 1 && f[0][0] == 'v' && strcmp(f[0], "v1") != 0)
		return fail(ps->err, ps->errsize, 1, "version %.16s, this scheduler reads v1", f[0]);
	if (n != 2 || strcmp(f[0], "v1") != 0 || gs_inuse_time_parse(f[1], strlen(f[1]), &ps->u->at_ms) < 0)
		return fail(ps->err, ps->errsize, 1, "want \"v1 YYYY-MM-DDTHH:MM:SSZ\"");
	return 0;
}

static int parse_index(struct parse *ps, char *rest)
{
	struct gs_inuse *u = ps->u;

	for (char *tok = rest, *next; tok; tok = next) {
		if ((next = strchr(tok, ' ')))
			*next++ = '\0';
		char *eq = strchr(tok, '=');
		const char *why;
		int i;
		if (!eq || eq == tok || eq - tok > 2 || !digits(tok, (int)(eq - tok), &i) ||
		    (eq - tok == 2 && tok[0] == '0'))
			return fail(ps->err, ps->errsize, ps->line, "index entry \"%.64s\": want INDEX=ID", tok);
		if (i >= GS_INUSE_MAX_INDEX)
			return fail(ps->err, ps->errsize, ps->line, "index %d: the table has room for 0..%d", i,
				    GS_INUSE_MAX_INDEX - 1);
		if ((why = field_problem(eq + 1, strlen(eq + 1))))
			return fail(ps->err, ps->errsize, ps->line, "index %d: device ID %s", i, why);
		if (u->index[i])
			return fail(ps->err, ps->errsize, ps->line, "index %d given twice", i);
		if ((size_t)i < u->n_index)
			return fail(ps->err, ps->errsize, ps->line,
				    "index %d after %zu (the table is in increasing order)", i, u->n_index - 1);
		for (size_t j = 0; j < u->n_index; j++)
			if (u->index[j] && strcmp(u->index[j], eq + 1) == 0)
				return fail(ps->err, ps->errsize, ps->line, "device %.64s given indices %zu and %d",
					    eq + 1, j, i);
		u->index[i] = eq + 1;
		if ((size_t)i + 1 > u->n_index)
			u->n_index = (size_t)i + 1;
	}
	GS_ASSERT(u->n_index > 0);
	return 0;
}

/* "mig ID=INDEX ...": u's table's GPUs' MIG instances, sorted by ID. */
static int parse_mig(struct parse *ps, char *rest)
{
	struct gs_inuse *u = ps->u;

	for (char *tok = rest, *next; tok; tok = next) {
		if ((next = strchr(tok, ' ')))
			*next++ = '\0';
		char *eq = strchr(tok, '=');
		const char *why;
		int i;
		if (!eq || eq - tok < 5 || strncmp(tok, "MIG-", 4) != 0 || !eq[1] || strlen(eq + 1) > 2 ||
		    !digits(eq + 1, (int)strlen(eq + 1), &i) || (eq[1] == '0' && eq[2]))
			return fail(ps->err, ps->errsize, ps->line, "mig entry \"%.64s\": want MIG-UUID=INDEX", tok);
		*eq = '\0';
		if ((why = field_problem(tok, strlen(tok))))
			return fail(ps->err, ps->errsize, ps->line, "mig %.64s: %s", tok, why);
		if ((size_t)i >= u->n_index || !u->index[i])
			return fail(ps->err, ps->errsize, ps->line, "mig %.64s: the table has no GPU %d", tok, i);
		if (u->n_mig == GS_INUSE_MAX_MIG)
			return fail(ps->err, ps->errsize, ps->line, "more than %d MIG instances", GS_INUSE_MAX_MIG);
		if (u->n_mig && strcmp(u->mig[u->n_mig - 1].id, tok) >= 0)
			return fail(ps->err, ps->errsize, ps->line, "mig %.64s %s", tok,
				    strcmp(u->mig[u->n_mig - 1].id, tok) ? "out of order (sorted by ID)"
									 : "given twice");
		u->mig[u->n_mig++] = (struct gs_inuse_mig){.id = tok, .parent = (size_t)i};
	}
	return 0;
}

static int parse_dev(struct parse *ps, char *line)
{
	struct gs_inuse *u = ps->u;
	struct gs_inuse_dev *d = &u->devs[u->n_devs];
	char *f[4];
	const char *why;
	int n = split(line, f, 4);

	if (n != 3)
		return fail(ps->err, ps->errsize, ps->line, "want RESOURCE DEVICE-ID NAMESPACE/POD");
	if ((why = field_problem(f[0], strlen(f[0]))))
		return fail(ps->err, ps->errsize, ps->line, "resource: %s", why);
	if ((why = field_problem(f[1], strlen(f[1]))))
		return fail(ps->err, ps->errsize, ps->line, "device ID: %s", why);
	if ((why = holder_problem(f[2], strlen(f[2]))))
		return fail(ps->err, ps->errsize, ps->line, "holder: %s", why);
	if (u->n_devs == GS_INUSE_MAX_DEVS)
		return fail(ps->err, ps->errsize, ps->line, "more than %d devices", GS_INUSE_MAX_DEVS);
	*d = (struct gs_inuse_dev){.resource = f[0], .id = f[1], .holder = f[2]};
	if (u->n_devs && dev_cmp(d - 1, d) >= 0)
		return fail(ps->err, ps->errsize, ps->line, "%s %.64s %s", d->resource, d->id,
			    dev_cmp(d - 1, d) ? "out of order (lines are sorted by resource, then ID)" : "given twice");
	u->n_devs++;
	return 0;
}

static int parse_lines(struct parse *ps, char *text, size_t len)
{
	struct gs_inuse *u = ps->u;
	char *p = text, *end = text + len;

	if (len && text[len - 1] == '\n')
		end[-1] = '\0', end--;
	for (ps->line = 1; p <= end; ps->line++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		int r;
		if (nl)
			*nl = '\0';
		else
			nl = end;
		if (ps->line == 1)
			r = parse_header(ps, p);
		else if (u->error)
			r = fail(ps->err, ps->errsize, ps->line, "nothing may follow the error line");
		else if (strncmp(p, "index ", 6) == 0 && ps->line == 2)
			r = parse_index(ps, p + 6);
		else if (strncmp(p, "mig ", 4) == 0 && ps->line == 3 && u->n_index)
			r = parse_mig(ps, p + 4);
		else if (strncmp(p, "error ", 6) == 0 && !u->n_devs && p[6])
			r = (u->error = p + 6, 0);
		else
			r = parse_dev(ps, p);
		if (r < 0)
			return r;
		p = nl + 1;
	}
	return 0;
}

int gs_inuse_parse(const char *text, size_t len, struct gs_inuse **out, char *err, size_t errsize)
{
	size_t lines = 1, size, n_mig;
	struct gs_inuse *u;
	struct parse ps = {.err = err, .errsize = errsize};
	char *copy;
	int r;

	*out = NULL;
	if (len > GS_INUSE_MAX_BYTES)
		return fail(err, errsize, 0, "%zu bytes, more than %d", len, GS_INUSE_MAX_BYTES);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\n')
			lines++;
		else if (c < ' ' || c > '~')
			return fail(err, errsize, (int)lines, "byte 0x%02x is not printable ASCII", c);
	}
	/* room for a mig line's entries only when the text may have one */
	n_mig = len > 4 && memmem(text, len, "\nmig ", 5) ? GS_INUSE_MAX_MIG : 0;
	size = sizeof(*u) + GS_INUSE_MAX_INDEX * sizeof(char *) + n_mig * sizeof(struct gs_inuse_mig) +
	       lines * sizeof(struct gs_inuse_dev) + len + 1;
	u = gs_xcalloc(1, size);
	u->index = (const char **)(void *)(u + 1);
	u->mig = (struct gs_inuse_mig *)(void *)(u->index + GS_INUSE_MAX_INDEX);
	u->devs = (struct gs_inuse_dev *)(void *)(u->mig + n_mig);
	copy = memcpy((char *)(u->devs + lines), text, len);
	copy[len] = '\0';
	GS_ASSERT(copy + len + 1 <= (char *)u + size);
	ps.u = u;
	if ((r = parse_lines(&ps, copy, len)) < 0) {
		free(u);
		return r;
	}
	if (!u->n_index)
		u->index = NULL;
	if (!u->n_mig)
		u->mig = NULL;
	GS_ASSERT(!u->error || !u->n_devs);
	GS_ASSERT(!u->n_mig || u->n_index);
	*out = u;
	return 0;
}

void gs_inuse_free(struct gs_inuse *u)
{
	free(u); /* one block */
}

size_t gs_inuse_physical_len(const char *id)
{
	const char *sep = strstr(id, "::");

	return sep ? (size_t)(sep - id) : strlen(id);
}

int gs_inuse_resource_match(const char *list, const char *resource)
{
	size_t rlen = strlen(resource);
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ','), *next = end ? end + 1 : NULL;
		if (!end)
			end = p + strlen(p);
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		size_t n = (size_t)(end - p), k = n && end[-1] == '*' ? n - 1 : n;
		if (n && (end[-1] == '/' || end[-1] == '*') ? rlen > k && strncmp(resource, p, k) == 0
							    : n && n == rlen && strncmp(resource, p, n) == 0)
			return 1;
		p = next;
	}
	return 0;
}

static int mig_cmp(const char *id, size_t len, const char *b)
{
	int c = strncmp(id, b, len);
	return c ? c : b[len] ? -1 : 0;
}

long gs_inuse_mig_parent(const struct gs_inuse *u, const char *id, size_t len)
{
	size_t lo = 0, hi = u ? u->n_mig : 0;

	if (len < 4 || memcmp(id, "MIG-", 4) != 0)
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = mig_cmp(id, len, u->mig[mid].id);
		if (c == 0)
			return (long)u->mig[mid].parent;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

void gs_inuse_physical(const struct gs_inuse *u, const char *id, size_t len, const char **phys, size_t *phys_len)
{
	long parent = gs_inuse_mig_parent(u, id, len);
	const char *sep;

	if (parent >= 0) {
		*phys = u->index[parent];
		*phys_len = strlen(*phys);
		return;
	}
	*phys = id;
	for (sep = id; sep + 1 < id + len && !(sep[0] == ':' && sep[1] == ':'); sep++)
		;
	*phys_len = sep + 1 < id + len ? (size_t)(sep - id) : len;
}

const char *gs_inuse_index_id(const struct gs_inuse *u, long i)
{
	return u && i >= 0 && (size_t)i < u->n_index ? u->index[i] : NULL;
}

int64_t gs_inuse_node_gpus(size_t table, const char *gfd_count, int64_t capacity, int64_t allocatable,
			   enum gs_gpus_from *from)
{
	size_t len = gfd_count ? strlen(gfd_count) : 0;

	if (table) {
		*from = GS_GPUS_TABLE;
		return (int64_t)table;
	}
	if (len && len <= 6 && strspn(gfd_count, "0123456789") == len) {
		*from = GS_GPUS_LABEL;
		return strtol(gfd_count, NULL, 10);
	}
	*from = GS_GPUS_ADVERTISED;
	return capacity > allocatable ? capacity : allocatable;
}

void gs_inuse_node_gpus_words(int64_t gpus, enum gs_gpus_from from, char *out, size_t size)
{
	const char *s = gpus == 1 ? "" : "s";

	if (from == GS_GPUS_TABLE)
		snprintf(out, size, "has %lld GPU%s by its agent's index table", (long long)gpus, s);
	else if (from == GS_GPUS_LABEL)
		snprintf(out, size, "has %lld GPU%s by its label " GS_GFD_COUNT_LABEL, (long long)gpus, s);
	else
		snprintf(out, size, "advertises %lld nvidia.com/gpu", (long long)gpus);
}

/* ---- format -------------------------------------------------------------------------------------- */

static int check_dev(const struct gs_inuse_dev *d, char *err, size_t errsize)
{
	const char *why;

	if ((why = field_problem(d->resource, strlen(d->resource))))
		return fail(err, errsize, 0, "resource \"%.64s\": %s", d->resource, why);
	if ((why = field_problem(d->id, strlen(d->id))))
		return fail(err, errsize, 0, "device ID \"%.64s\": %s", d->id, why);
	if ((why = holder_problem(d->holder, strlen(d->holder))))
		return fail(err, errsize, 0, "holder \"%.64s\": %s", d->holder, why);
	return 0;
}

char *gs_inuse_format(const struct gs_inuse *u, char *err, size_t errsize)
{
	struct gs_inuse_dev *devs = NULL;
	struct gs_buf b;
	char ts[21];
	int bad = 0;

	if (u->n_devs > GS_INUSE_MAX_DEVS || u->n_index > GS_INUSE_MAX_INDEX || u->n_mig > GS_INUSE_MAX_MIG) {
		fail(err, errsize, 0, "over a limit (%d devices, %d indices, %d MIG instances)", GS_INUSE_MAX_DEVS,
		     GS_INUSE_MAX_INDEX, GS_INUSE_MAX_MIG);
		return NULL;
	}
	if (u->error && (u->n_devs || !printable_line(u->error))) {
		fail(err, errsize, 0, "an error line needs text, printable on one line, and no devices");
		return NULL;
	}
	gs_buf_init(&b, 0);
	gs_inuse_time_format(u->at_ms, ts);
	gs_buf_printf(&b, "v1 %s\n", ts);
	for (size_t i = 0, first = 1; i < u->n_index && !bad; i++) {
		if (!u->index[i])
			continue;
		if (field_problem(u->index[i], strlen(u->index[i])))
			bad = fail(err, errsize, 0, "index %zu: device ID \"%.64s\" is not a field", i, u->index[i]);
		gs_buf_printf(&b, "%s%zu=%s", first ? "index " : " ", i, u->index[i]);
		first = 0;
	}
	if (b.len && b.data[b.len - 1] != '\n')
		gs_buf_append(&b, "\n", 1);
	for (size_t k = 0; k < u->n_mig && !bad; k++) {
		const struct gs_inuse_mig *m = &u->mig[k];
		if (strncmp(m->id, "MIG-", 4) != 0 || strlen(m->id) < 5 || field_problem(m->id, strlen(m->id)) ||
		    strchr(m->id, '=') || m->parent >= u->n_index || !u->index[m->parent] ||
		    (k && strcmp(u->mig[k - 1].id, m->id) >= 0))
			bad = fail(err, errsize, 0, "mig %.64s: not a MIG-UUID of a GPU of the table, in order", m->id);
		gs_buf_printf(&b, "%s%s=%zu%s", k ? " " : "mig ", m->id, m->parent, k + 1 == u->n_mig ? "\n" : "");
	}
	if (u->error)
		gs_buf_printf(&b, "error %s\n", u->error);
	if (u->n_devs) {
		devs = gs_xmalloc(u->n_devs * sizeof(*devs));
		memcpy(devs, u->devs, u->n_devs * sizeof(*devs));
		qsort(devs, u->n_devs, sizeof(*devs), dev_cmp_qsort);
	}
	for (size_t i = 0; i < u->n_devs && !bad; i++) {
		if ((bad = check_dev(&devs[i], err, errsize)) < 0)
			break;
		if (i && dev_cmp(&devs[i - 1], &devs[i]) == 0)
			bad = fail(err, errsize, 0, "%s %.64s held twice", devs[i].resource, devs[i].id);
		gs_buf_printf(&b, "%s %s %s\n", devs[i].resource, devs[i].id, devs[i].holder);
	}
	free(devs);
	if (!bad && b.len > GS_INUSE_MAX_BYTES)
		bad = fail(err, errsize, 0, "%zu bytes, more than %d", b.len, GS_INUSE_MAX_BYTES);
	if (bad) {
		gs_buf_free(&b);
		return NULL;
	}
	b.data[--b.len] = '\0'; /* no final newline */
	char *text = gs_buf_steal(&b, NULL);
	if (!text)
		fail(err, errsize, 0, "out of memory");
	return text;
}
