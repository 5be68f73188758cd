#include "core/options.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

static int parse_bool(const char *v, int *out)
{
	if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcmp(v, "yes") == 0) {
		*out = 1;
		return 0;
	}
	if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcmp(v, "no") == 0) {
		*out = 0;
		return 0;
	}
	return -EINVAL;
}

/* Sets one option from text; where says where the value came from, for the error message. */
int gs_options_parse_duration_ms(const char *s, long *ms)
{
	static const struct {
		const char *unit;
		long ms;
	} units[] = {{"ms", 1}, {"h", 3600000}, {"m", 60000}, {"s", 1000}};
	long total = 0;

	*ms = 0;
	if (!s || !*s)
		return -EINVAL;
	if (strcmp(s, "0") == 0)
		return 0;
	while (*s) {
		long n = 0;
		size_t u, len = 0;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++) {
			n = n * 10 + (*s - '0');
			if (n > 31536000000L)
				return -EINVAL;
		}
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			len = strlen(units[u].unit);
			if (strncmp(s, units[u].unit, len) == 0 &&
			    !(len == 1 && units[u].unit[0] == 'm' && s[1] == 's'))
				break;
		}
		if (u == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		s += len;
		total += n * units[u].ms;
		if (total > 31536000000L) /* a year */
			return -EINVAL;
	}
	*ms = total;
	return 0;
}

int gs_options_parse_bytes(const char *s, long *bytes)
{
	static const struct {
		const char *suffix;
		int shift;
	} units[] = {{"", 0}, {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}};
	long n = 0;

	*bytes = 0;
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		n = n * 10 + (*s - '0');
		if (n > (1L << 40))
			return -EINVAL;
	}
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		if (strcmp(s, units[u].suffix) != 0)
			continue;
		if (n > (1L << 40) >> units[u].shift)
			return -EINVAL;
		*bytes = n << units[u].shift;
		return 0;
	}
	return -EINVAL;
}

static int set_value(const struct gs_opt *o, const char *value, const char *where, void *cfg, char *err, size_t errlen)
{
	char *field = (char *)cfg + o->offset;
	char why[160] = "";

	switch (o->type) {
	case GS_OPT_STRING:
		*(const char **)(void *)field = value;
		break;
	case GS_OPT_INT: {
		char *end;
		errno = 0;
		long v = strtol(value, &end, 10);
		if (errno || end == value || *end != '\0') {
			snprintf(err, errlen, "%s: \"%s\" is not a whole number", where, value);
			return -EINVAL;
		}
		if (v < o->min || v > o->max) {
			snprintf(err, errlen, "%s: %ld is outside %ld..%ld", where, v, o->min, o->max);
			return -EINVAL;
		}
		*(long *)(void *)field = v;
		break;
	}
	case GS_OPT_DURATION: {
		long v;
		if (gs_options_parse_duration_ms(value, &v) < 0) {
			snprintf(err, errlen, "%s: \"%s\" is not a duration such as 15s, 500ms or 1m30s", where, value);
			return -EINVAL;
		}
		if (v < o->min || v > o->max) {
			snprintf(err, errlen, "%s: %s is outside %ldms..%ldms", where, value, o->min, o->max);
			return -EINVAL;
		}
		*(long *)(void *)field = v;
		break;
	}
	case GS_OPT_BYTES: {
		long v;
		if (gs_options_parse_bytes(value, &v) < 0) {
			snprintf(err, errlen, "%s: \"%s\" is not a size such as 16Mi, 512Ki or 1Gi", where, value);
			return -EINVAL;
		}
		if (v < o->min || v > o->max) {
			snprintf(err, errlen, "%s: %s is outside %ld..%ld bytes", where, value, o->min, o->max);
			return -EINVAL;
		}
		*(long *)(void *)field = v;
		break;
	}
	case GS_OPT_BOOL:
		if (parse_bool(value, (int *)(void *)field) < 0) {
			snprintf(err, errlen, "%s: \"%s\" is not true or false", where, value);
			return -EINVAL;
		}
		break;
	}
	if (o->validate && value && o->validate(value, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", where, why);
		return -EINVAL;
	}
	return 0;
}

static const struct gs_opt *find(const struct gs_opt *table, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(table[i].flag) == len && strncmp(table[i].flag, name, len) == 0)
			return &table[i];
	return NULL;
}

int gs_options_parse(const struct gs_opt *table, size_t n, int argc, char **argv, void *cfg, char *err, size_t errlen)
{
	char where[128];
	unsigned char *seen = gs_xcalloc(n, 1);
	int r = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			r = GS_OPTIONS_HELP;
			goto out;
		}
		if (strcmp(a, "--version") == 0) {
			r = GS_OPTIONS_VERSION;
			goto out;
		}
		if (strncmp(a, "--", 2) != 0) {
			snprintf(err, errlen, "unexpected argument \"%s\" (options start with --)", a);
			r = -EINVAL;
			goto out;
		}
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct gs_opt *o = find(table, n, name, len);
		const char *value;
		if (!o) {
			snprintf(err, errlen, "unknown option --%.*s (see --help)", (int)len, name);
			r = -EINVAL;
			goto out;
		}
		if (eq) {
			value = eq + 1;
		} else if (o->type == GS_OPT_BOOL && (i + 1 >= argc || parse_bool(argv[i + 1], &(int){0}) < 0)) {
			value = "true";
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			snprintf(err, errlen, "--%s needs a value", o->flag);
			r = -EINVAL;
			goto out;
		}
		snprintf(where, sizeof(where), "--%s", o->flag);
		if ((r = set_value(o, value, where, cfg, err, errlen)) < 0)
			goto out;
		seen[o - table] = 1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct gs_opt *o = &table[i];
		const char *env = o->env ? getenv(o->env) : NULL;
		if (seen[i])
			continue;
		if (env && *env) {
			snprintf(where, sizeof(where), "%s (environment)", o->env);
			r = set_value(o, env, where, cfg, err, errlen);
		} else if (o->def) {
			snprintf(where, sizeof(where), "--%s default", o->flag);
			r = set_value(o, o->def, where, cfg, err, errlen);
		} else if (o->type == GS_OPT_STRING) {
			*(const char **)(void *)((char *)cfg + o->offset) = NULL;
		}
		if (r < 0)
			goto out;
	}
out:
	free(seen);
	return r;
}

void gs_options_usage(FILE *f, const struct gs_opt *table, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct gs_opt *o = &table[i];
		char flag[64];
		snprintf(flag, sizeof(flag), "--%s%s", o->flag, o->type == GS_OPT_BOOL ? "[=BOOL]" : " VALUE");
		fprintf(f, "  %-32s %s\n", flag, o->help);
		if (o->env || o->def)
			fprintf(f, "  %-32s %s%s%s%s%s\n", "", o->env ? "env " : "", o->env ? o->env : "",
				o->env && o->def ? ", " : "", o->def ? "default " : "", o->def ? o->def : "");
	}
}

int gs_options_split_hostport(const char *value, char *host, size_t hostlen, int *port)
{
	const char *colon;
	size_t hl;

	if (value[0] == '[') {
		const char *close = strchr(value, ']');
		if (!close || close[1] != ':')
			return -EINVAL;
		hl = (size_t)(close - value - 1);
		value++;
		colon = close + 1;
	} else {
		colon = strrchr(value, ':');
		if (!colon || memchr(value, ':', (size_t)(colon - value)))
			return -EINVAL;
		hl = (size_t)(colon - value);
	}
	if (hl >= hostlen)
		return -EINVAL;
	memcpy(host, value, hl);
	host[hl] = '\0';
	char *end;
	errno = 0;
	long p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 0 || p > 65535)
		return -EINVAL;
	*port = (int)p;
	return 0;
}

int gs_opt_validate_hostport(const char *value, char *err, size_t errlen)
{
	char host[256];
	int port;
	if (gs_options_split_hostport(value, host, sizeof(host), &port) < 0) {
		snprintf(err, errlen, "\"%s\" is not HOST:PORT (e.g. 0.0.0.0:8080 or [::]:8080)", value);
		return -EINVAL;
	}
	return 0;
}
