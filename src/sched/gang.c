/*
 * gang.c: the all-or-nothing annotations. See gang.h.
 */
#include "sched/gang.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/str.h"


/* Go's units, longest first where one is a prefix of another ("ms" before "m"). */
static const struct {
	const char *name;
	int64_t ns;
} units[] = {
	{"ns", 1},       {"us", 1000},        {"\xc2\xb5s", 1000},      {"\xce\xbcs", 1000},
	{"ms", 1000000}, {"s", 1000000000LL}, {"m", 60 * 1000000000LL}, {"h", 3600 * 1000000000LL},
};

/* One "12.5h" component at *sp: its value in ns added to *total (which stays below 2^63). */
static int component(const char **sp, uint64_t *total)
{
	const char *p = *sp;
	uint64_t whole = 0, frac = 0, scale = 1, v;
	int digits = 0;
	size_t u, best = sizeof(units) / sizeof(units[0]), best_len = 0;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			if (scale < 1000000000000000000ULL) { /* further digits are below a nanosecond */
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
		}
	}
	if (!digits)
		return -EINVAL;
	for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		size_t l = strlen(units[u].name);
		if (strncmp(p, units[u].name, l) == 0 && l > best_len) {
			best = u;
			best_len = l;
		}
	}
	if (!best_len)
		return -EINVAL; /* Go: "missing unit" or "unknown unit" */
	if (whole > (uint64_t)INT64_MAX / (uint64_t)units[best].ns)
		return -ERANGE;
	v = whole * (uint64_t)units[best].ns;
	/* frac/scale of a unit, in ns, without overflow: unit ns <= 3.6e12, scale <= 1e18. */
	v += (uint64_t)((long double)frac * (long double)units[best].ns / (long double)scale);
	if (v > (uint64_t)INT64_MAX || *total > (uint64_t)INT64_MAX - v)
		return -ERANGE;
	*total += v;
	*sp = p + best_len;
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

int gs_gang_opts_parse(const char *placement, const char *timeout, const char *size, struct gs_gang_opts *out,
		       char *msg, size_t msg_size)
{
	char q[64];
	int r;

	*out = (struct gs_gang_opts){.timeout_ms = GS_GANG_TIMEOUT_DEFAULT_MS};
	if (placement && strcmp(placement, GS_GANG_ALL_OR_NOTHING) == 0) {
		out->all_or_nothing = 1;
	} else if (placement && strcmp(placement, GS_GANG_INDEPENDENT) != 0) {
		snprintf(msg, msg_size, "%s %s is not a placement (want %s or %s)", GS_GANG_PLACEMENT,
			 gs_str_quote(q, sizeof(q), placement), GS_GANG_ALL_OR_NOTHING, GS_GANG_INDEPENDENT);
		return -EINVAL;
	}
	if ((timeout || size) && !out->all_or_nothing) {
		snprintf(msg, msg_size,
			 "%s is set but %s is not %s (a gang's settings need an all-or-nothing workload)",
			 timeout ? GS_GANG_TIMEOUT : GS_GANG_SIZE, GS_GANG_PLACEMENT, GS_GANG_ALL_OR_NOTHING);
		return -EINVAL;
	}
	if (timeout) {
		r = gs_gang_duration_ms(timeout, &out->timeout_ms);
		if (r == -EINVAL) {
			snprintf(msg, msg_size, "%s %s is not a duration (Go's form: 90s, 10m, 1h30m)", GS_GANG_TIMEOUT,
				 gs_str_quote(q, sizeof(q), timeout));
			return -EINVAL;
		}
		if (r < 0 || out->timeout_ms <= 0 || out->timeout_ms > GS_GANG_TIMEOUT_MAX_MS) {
			snprintf(msg, msg_size, "%s %s is out of range (more than 0, at most 720h)", GS_GANG_TIMEOUT,
				 gs_str_quote(q, sizeof(q), timeout));
			return -EINVAL;
		}
	}
	if (size && (r = parse_size(size, &out->size)) < 0) {
		snprintf(msg, msg_size, "%s %s is not a number of pods from 1 to %d", GS_GANG_SIZE,
			 gs_str_quote(q, sizeof(q), size), GS_GANG_SIZE_MAX);
		return -EINVAL;
	}
	return 0;
}
