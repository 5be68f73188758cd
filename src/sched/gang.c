/*
 * gang.c: the all-or-nothing annotations. See gang.h.
 */
#include "sched/gang.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/str.h"


/* Go's units (time.ParseDuration's unitMap), matched whole: Go takes the longest run of bytes that are
 * neither a digit nor '.' as the unit, so "1hx" is an unknown unit, not 1h followed by garbage. */
static const struct {
	const char *name;
	uint64_t ns;
} units[] = {
	{"ns", 1},       {"us", 1000},         {"\xc2\xb5s", 1000},       {"\xce\xbcs", 1000},
	{"ms", 1000000}, {"s", 1000000000ULL}, {"m", 60 * 1000000000ULL}, {"h", 3600 * 1000000000ULL},
};

#define NS_LIMIT (1ULL << 63) /* Go's bound on the magnitude while reading; a positive total must stay below */

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Go's leadingInt: digits into *v, more than 2^63 an error. */
static int leading_int(const char **sp, uint64_t *v)
{
	const char *p = *sp;

	for (*v = 0; is_digit(*p); p++) {
		if (*v > NS_LIMIT / 10)
			return -ERANGE;
		*v = *v * 10 + (uint64_t)(*p - '0');
		if (*v > NS_LIMIT)
			return -ERANGE;
	}
	*sp = p;
	return 0;
}

/* Go's leadingFraction: the digits after '.', those past 2^63 skipped (they are far below a ns). */
static void leading_fraction(const char **sp, uint64_t *f, double *scale)
{
	const char *p = *sp;
	int overflow = 0;

	for (*f = 0, *scale = 1; is_digit(*p); p++) {
		uint64_t y;
		if (overflow)
			continue;
		if (*f > (NS_LIMIT - 1) / 10) {
			overflow = 1;
			continue;
		}
		y = *f * 10 + (uint64_t)(*p - '0');
		if (y > NS_LIMIT) {
			overflow = 1;
			continue;
		}
		*f = y;
		*scale *= 10;
	}
	*sp = p;
}

/* The unit at *sp (the whole run up to a digit, '.' or the end): its ns, 0 when missing or unknown. */
static uint64_t unit_at(const char **sp)
{
	const char *p = *sp;
	size_t n = 0, u;

	while (p[n] && p[n] != '.' && !is_digit(p[n]))
		n++;
	for (u = 0; n && u < sizeof(units) / sizeof(units[0]); u++) {
		if (strlen(units[u].name) == n && memcmp(p, units[u].name, n) == 0) {
			*sp = p + n;
			return units[u].ns;
		}
	}
	return 0;
}

/* One "12.5h" component at *sp, Go's arithmetic step for step: its ns added to *total (at most 2^63). */
static int component(const char **sp, uint64_t *total)
{
	const char *p = *sp, *start;
	uint64_t v, f = 0, unit;
	double scale = 1;
	int pre, post = 0, r;

	if (!is_digit(*p) && *p != '.')
		return -EINVAL;
	start = p;
	if ((r = leading_int(&p, &v)) < 0)
		return r;
	pre = p != start;
	if (*p == '.') {
		start = ++p;
		leading_fraction(&p, &f, &scale);
		post = p != start;
	}
	if (!pre && !post) /* "." or ".s" */
		return -EINVAL;
	if (!(unit = unit_at(&p)))
		return -EINVAL; /* Go: "missing unit" or "unknown unit" */
	if (v > NS_LIMIT / unit)
		return -ERANGE;
	v *= unit;
	if (f > 0) {
		/* Go's float64 for ns accuracy with fractions of hours: f/scale < 1, so this is below unit. */
		v += (uint64_t)((double)f * ((double)unit / scale));
		if (v > NS_LIMIT)
			return -ERANGE;
	}
	/* Both are at most 2^63, so their sum may be 2^64: tested before adding. Go adds first and its
	 * uint64 wraps there ("9223372036854775808ns" twice reads as 0); this refuses it as out of range. */
	if (v > NS_LIMIT - *total)
		return -ERANGE;
	*total += v;
	*sp = p;
	return 0;
}

int gs_gang_duration_ms(const char *s, int64_t *ms)
{
	uint64_t total = 0;
	int neg = 0, r;

	if (!s)
		return -EINVAL;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (strcmp(s, "0") == 0) {
		*ms = 0;
		return 0;
	}
	if (!*s)
		return -EINVAL;
	while (*s)
		if ((r = component(&s, &total)) < 0)
			return r;
	if (!neg && total > NS_LIMIT - 1) /* -2^63 ns is a duration, +2^63 is not */
		return -ERANGE;
	*ms = (int64_t)(total / 1000000);
	if (neg)
		*ms = -*ms;
	return 0;
}

static int parse_size(const char *v, long *out)
{
	long n = 0;

	if (!*v)
		return -EINVAL;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -EINVAL;
		n = n * 10 + (*v - '0');
		if (n > GS_GANG_SIZE_MAX)
			return -ERANGE;
	}
	if (n < 1)
		return -ERANGE;
	*out = n;
	return 0;
}

const struct gs_gang_names gs_gang_annotation_names = {GS_GANG_PLACEMENT, GS_GANG_TIMEOUT, GS_GANG_SIZE};
const struct gs_gang_names gs_gang_spec_names = {GS_GANG_SPEC_PLACEMENT, GS_GANG_SPEC_TIMEOUT, GS_GANG_SPEC_SIZE};

/* The timeout's value (not NULL) into out->timeout_ms: 0, or -EINVAL with msg. */
static int parse_timeout(const struct gs_gang_names *names, const char *timeout, struct gs_gang_opts *out, char *msg,
			 size_t msg_size)
{
	char q[64];
	int r = gs_gang_duration_ms(timeout, &out->timeout_ms);

	if (r == -EINVAL) {
		snprintf(msg, msg_size, "%s %s is not a duration (Go's form: 90s, 10m, 1h30m)", names->timeout,
			 gs_str_quote(q, sizeof(q), timeout));
		return -EINVAL;
	}
	if (r < 0 || out->timeout_ms <= 0 || out->timeout_ms > GS_GANG_TIMEOUT_MAX_MS) {
		snprintf(msg, msg_size, "%s %s is out of range (more than 0, at most 720h)", names->timeout,
			 gs_str_quote(q, sizeof(q), timeout));
		return -EINVAL;
	}
	return 0;
}

int gs_gang_opts_parse_named(const struct gs_gang_names *names, const char *placement, const char *timeout,
			     const char *size, struct gs_gang_opts *out, char *msg, size_t msg_size)
{
	char q[64];

	*out = (struct gs_gang_opts){.timeout_ms = GS_GANG_TIMEOUT_DEFAULT_MS};
	if (msg_size)
		*msg = '\0'; /* "" on success: a caller that prints msg prints nothing, never old bytes */
	if (placement && strcmp(placement, GS_GANG_ALL_OR_NOTHING) == 0) {
		out->all_or_nothing = 1;
	} else if (placement && strcmp(placement, GS_GANG_INDEPENDENT) != 0) {
		snprintf(msg, msg_size, "%s %s is not a placement (want %s or %s)", names->placement,
			 gs_str_quote(q, sizeof(q), placement), GS_GANG_ALL_OR_NOTHING, GS_GANG_INDEPENDENT);
		return -EINVAL;
	}
	if ((timeout || size) && !out->all_or_nothing) {
		snprintf(msg, msg_size,
			 "%s is set but %s is not %s (a gang's settings need an all-or-nothing workload)",
			 timeout ? names->timeout : names->size, names->placement, GS_GANG_ALL_OR_NOTHING);
		return -EINVAL;
	}
	if (timeout && parse_timeout(names, timeout, out, msg, msg_size) < 0)
		return -EINVAL;
	if (size && parse_size(size, &out->size) < 0) {
		snprintf(msg, msg_size, "%s %s is not a number of pods from 1 to %d", names->size,
			 gs_str_quote(q, sizeof(q), size), GS_GANG_SIZE_MAX);
		return -EINVAL;
	}
	return 0;
}

int gs_gang_opts_parse(const char *placement, const char *timeout, const char *size, struct gs_gang_opts *out,
		       char *msg, size_t msg_size)
{
	return gs_gang_opts_parse_named(&gs_gang_annotation_names, placement, timeout, size, out, msg, msg_size);
}

/* ---- the namespaces' budgets ---------------------------------------------------------------------- */

/* A namespace's name: a DNS label (RFC 1123), as the apiserver requires. */
static int is_dns_label(const char *s, size_t len)
{
	if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || is_digit(s[i]) || s[i] == '-'))
			return 0;
	return 1;
}

/* A number of s[0..len): 0..GS_GANG_LIMIT_MAX digits only. */
static int limit_number(const char *s, size_t len, long *out)
{
	long n = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(s[i]))
			return -EINVAL;
		n = n * 10 + (s[i] - '0');
		if (n > GS_GANG_LIMIT_MAX)
			return -ERANGE;
	}
	*out = n;
	return 0;
}

/* One item "NS=MEMBERS/GPUS", it[0..len): 0 with l filled, else -EINVAL. */
static int limit_item(const char *it, size_t len, struct gs_gang_limit *l)
{
	const char *eq = memchr(it, '=', len), *slash;

	if (!eq || !is_dns_label(it, (size_t)(eq - it)))
		return -EINVAL;
	slash = memchr(eq + 1, '/', len - (size_t)(eq + 1 - it));
	if (!slash)
		return -EINVAL;
	l->ns = it;
	l->ns_len = (size_t)(eq - it);
	if (limit_number(eq + 1, (size_t)(slash - eq - 1), &l->members) < 0 ||
	    limit_number(slash + 1, len - (size_t)(slash + 1 - it), &l->gpus) < 0)
		return -EINVAL;
	return 0;
}

int gs_gang_limits_next(const char **text, struct gs_gang_limit *l)
{
	const char *it = *text, *end;
	size_t len;

	if (!*it)
		return 0;
	end = strchr(it, ',');
	len = end ? (size_t)(end - it) : strlen(it);
	*text = end ? end + 1 : it + len;
	return limit_item(it, len, l) < 0 ? -EINVAL : 1;
}

int gs_gang_limits_check(const char *text, char *msg, size_t msg_size)
{
	struct gs_gang_limit l, o;
	const char *at = text, *item = text, *seen;
	char q[64];
	int r;

	if (msg_size)
		*msg = '\0';
	if (strlen(text) > GS_GANG_LIMITS_MAX) {
		snprintf(msg, msg_size, "is longer than %d bytes", GS_GANG_LIMITS_MAX);
		return -EINVAL;
	}
	while ((r = gs_gang_limits_next(&at, &l)) != 0) {
		size_t len = (size_t)(at - item) - (at[-1] == ',' ? 1 : 0);
		char one[GS_GANG_LIMITS_MAX + 1];
		memcpy(one, item, len);
		one[len] = '\0';
		if (r < 0) {
			snprintf(msg, msg_size,
				 "item %s is not NAMESPACE=MEMBERS/GPUS (a namespace's name, two numbers from 0 "
				 "to %d; 0: no bound)",
				 gs_str_quote(q, sizeof(q), one), GS_GANG_LIMIT_MAX);
			return -EINVAL;
		}
		for (seen = text; seen < item && gs_gang_limits_next(&seen, &o) > 0;) {
			if (o.ns_len == l.ns_len && memcmp(o.ns, l.ns, l.ns_len) == 0) {
				snprintf(msg, msg_size, "namespace %.*s is named twice", (int)l.ns_len, l.ns);
				return -EINVAL;
			}
		}
		item = at;
	}
	return 0;
}

int gs_gang_limits_lookup(const char *text, const char *ns, long *members, long *gpus)
{
	struct gs_gang_limit l;
	size_t len = strlen(ns);
	int r;

	while (text && (r = gs_gang_limits_next(&text, &l)) != 0) {
		if (r > 0 && l.ns_len == len && memcmp(l.ns, ns, len) == 0) {
			*members = l.members;
			*gpus = l.gpus;
			return 1;
		}
	}
	return 0;
}

void gs_gang_bound_words(char *buf, size_t size, long members, long gpus)
{
	char m[40], g[40];

	snprintf(m, sizeof(m), members ? "%ld members" : "any number of members", members);
	snprintf(g, sizeof(g), gpus ? "%ld GPUs" : "any number of GPUs", gpus);
	snprintf(buf, size, "%s, %s", m, g);
}
