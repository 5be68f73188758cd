/*
 * decode_scalar.c: the scalar syntaxes of decode.h, Kubernetes quantities and RFC 3339 times. Plain
 * string functions, apart from decode.c's cJSON walking so that each can be tested (and fuzzed) alone.
 */
#include "k8s/decode_scalar.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <time.h>

/* ---- scalars ------------------------------------------------------------------------------------- */

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int gs_decode_time(const char *s, int64_t *ms)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int Y, M, D, h, m, sec, frac_ms = 0, off_min = 0;
	struct tm tm = {0};
	const char *p;

	*ms = 0;
	if (strlen(s) < 20 || digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) || s[7] != '-' ||
	    digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) || s[13] != ':' ||
	    digits(s + 14, 2, &m) || s[16] != ':' || digits(s + 17, 2, &sec))
		return -EINVAL;
	if (M < 1 || M > 12 || D < 1 || D > mdays[M - 1] || h > 23 || m > 59 || sec > 60)
		return -EINVAL;
	p = s + 19;
	if (*p == '.') {
		int n = 0;
		for (p++; isdigit((unsigned char)*p); p++, n++)
			if (n < 3)
				frac_ms = frac_ms * 10 + (*p - '0');
		if (n == 0)
			return -EINVAL;
		for (; n < 3; n++)
			frac_ms *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59)
			return -EINVAL;
		off_min = (oh * 60 + om) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	time_t t = timegm(&tm);
	*ms = ((int64_t)t - (int64_t)off_min * 60) * 1000 + frac_ms;
	return 0;
}

/*
 * Exact arithmetic on 128 bits: value = mantissa * 10^e10 * 2^e2, rounded up, where e10 starts at
 * scale (3 for millis). A mantissa of more than 36 significant digits cannot be held and is refused
 * (-ERANGE) unless e10 brings it down.
 */
/* The digits of a quantity, with a fraction: *mant, and *e10 lowered by the fraction's digits; *p moved
 * past them. 0, -EINVAL (no digit), or -ERANGE (past 2^120). */
static int quantity_digits(const char **p, unsigned __int128 *mant, int *e10)
{
	const unsigned __int128 lim = (unsigned __int128)1 << 120;
	int nd = 0, frac = 0;
	for (; isdigit((unsigned char)**p) || (**p == '.' && !frac); (*p)++) {
		if (**p == '.') {
			frac = 1;
			continue;
		}
		if (*mant >= lim / 10)
			return -ERANGE;
		*mant = *mant * 10 + (unsigned)(**p - '0');
		nd++;
		*e10 -= frac;
	}
	return nd ? 0 : -EINVAL;
}

/* What follows the digits: an exponent (e3, E-2) or a suffix (Ki, m, G...; "" too), into *e10 and
 * *e2. 0, -EINVAL (anything else), or -ERANGE (an exponent past 1000). */
static int quantity_suffix(const char *p, int *e10, int *e2)
{
	static const struct {
		const char *sfx;
		int e10, e2;
	} sfx[] = {
		{"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
		{"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"", 0, 0},    {"k", 3, 0},   {"M", 6, 0},
		{"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},
	};
	if ((*p == 'e' || *p == 'E') &&
	    (isdigit((unsigned char)p[1]) || ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
		int sign = 1, x = 0;
		p++;
		if (*p == '+' || *p == '-')
			sign = *p++ == '-' ? -1 : 1;
		for (; isdigit((unsigned char)*p); p++) {
			if (x > 1000)
				return -ERANGE;
			x = x * 10 + (*p - '0');
		}
		*e10 += sign * x;
		return *p == '\0' ? 0 : -EINVAL;
	}
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		if (strcmp(p, sfx[i].sfx) == 0) {
			*e10 += sfx[i].e10;
			*e2 = sfx[i].e2;
			return 0;
		}
	}
	return -EINVAL;
}

/* mant * 2^e2 * 10^e10, rounded up to an integer, into *out: 0, or -ERANGE past INT64_MAX. */
static int quantity_value(unsigned __int128 mant, int e10, int e2, int64_t *out)
{
	unsigned __int128 v = mant;
	for (; e2 > 0; e2--) {
		if (v > (unsigned __int128)INT64_MAX)
			return -ERANGE;
		v <<= 1;
	}
	for (; e10 > 0; e10--) {
		if (v > (unsigned __int128)INT64_MAX)
			return -ERANGE;
		v *= 10;
	}
	if (e10 < 0) {
		unsigned __int128 div = 1;
		for (; e10 < 0 && div <= v; e10++)
			div *= 10;
		if (e10 < 0) /* the divisor passed the value: 0 < value < 1, rounded up */
			v = 1;
		else
			v = v / div + (v % div != 0);
	}
	if (v > (unsigned __int128)INT64_MAX)
		return -ERANGE;
	*out = (int64_t)v;
	return 0;
}

static int quantity_scaled(const char *s, int scale, int64_t *out)
{
	unsigned __int128 mant = 0;
	int e10 = scale, e2 = 0, r;
	const char *p = s;

	*out = 0;
	if (*p == '+' || *p == '-')
		p++;
	if ((r = quantity_digits(&p, &mant, &e10)) < 0 || (r = quantity_suffix(p, &e10, &e2)) < 0)
		return r;
	if (mant == 0)
		return 0;
	if (*s == '-')
		return -ERANGE;
	return quantity_value(mant, e10, e2, out);
}

int gs_decode_quantity(const char *s, int64_t *out)
{
	return quantity_scaled(s, 0, out);
}

int gs_decode_quantity_milli(const char *s, int64_t *out)
{
	return quantity_scaled(s, 3, out);
}

enum gs_res_kind gs_decode_res_kind(const char *name, size_t n)
{
	static const struct {
		const char *name;
		enum gs_res_kind kind;
	} known[] = {
		{"cpu", GS_RES_CPU},
		{"memory", GS_RES_MEMORY},
		{"ephemeral-storage", GS_RES_EPHEMERAL},
		{"pods", GS_RES_PODS},
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strlen(known[i].name) == n && memcmp(known[i].name, name, n) == 0)
			return known[i].kind;
	return GS_RES_EXT;
}

int gs_decode_res_set(struct gs_resources *out, enum gs_res_kind k, const char *qty, int64_t *v)
{
	int r = k == GS_RES_CPU ? gs_decode_quantity_milli(qty, v) : gs_decode_quantity(qty, v);

	if (r < 0)
		return r;
	switch (k) {
	case GS_RES_CPU:
		out->milli_cpu = *v;
		break;
	case GS_RES_MEMORY:
		out->memory = *v;
		break;
	case GS_RES_EPHEMERAL:
		out->ephemeral = *v;
		break;
	case GS_RES_PODS:
		out->pods = *v;
		break;
	case GS_RES_EXT:
		break;
	}
	return 0;
}
