/*
 * options.h: command-line and environment configuration driven by one table.
 *
 * Each row names a setting once: its flag, its environment variable, its type and bounds, its default
 * and an optional validator. gs_options_parse fills a caller's struct (fields found by offset) with, in
 * order of precedence, the flag, the environment variable, the default; every value is validated and
 * the first problem is reported as one clear sentence ("--max-inflight-binds: 0 is below the minimum 1").
 *
 * String values point into argv, the environment or the table (not copied): they live as long as the
 * process.
 */
#ifndef GS_CORE_OPTIONS_H
#define GS_CORE_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

enum gs_opt_type {
	GS_OPT_STRING,   /* const char * field */
	GS_OPT_INT,      /* long field, bounded by min/max */
	GS_OPT_BOOL,     /* int field; "--flag", "--flag=true|false", env "true|false|1|0" */
	GS_OPT_DURATION, /* long field in milliseconds, written as Go durations ("15s", "500ms", "1m30s"),
			  * bounded by min/max (ms) */
	GS_OPT_BYTES,    /* long field in bytes, written as a Kubernetes quantity with a binary suffix
			  * ("16Mi", "512Ki", "1Gi") or a plain number of bytes, bounded by min/max */
};

/* Returns 0, or <0 with a reason written to err (without the option's name; the parser adds it). */
typedef int (*gs_opt_validate_cb)(const char *value, char *err, size_t errlen);

struct gs_opt {
	const char *flag; /* without the dashes: "kube-api-qps" */
	const char *env;  /* environment variable, or NULL */
	enum gs_opt_type type;
	const char *def; /* default as text; NULL for "unset" (strings only) */
	long min, max;   /* GS_OPT_INT bounds */
	size_t offset;   /* offsetof(struct your_config, field) */
	gs_opt_validate_cb validate;
	const char *help; /* one line */
};

enum {
	GS_OPTIONS_OK = 0,
	GS_OPTIONS_HELP = 1,    /* --help or -h was given */
	GS_OPTIONS_VERSION = 2, /* --version was given */
};

/*
 * Parses argv (flags as "--name value" or "--name=value") over the table into cfg.
 * Returns GS_OPTIONS_OK, GS_OPTIONS_HELP, GS_OPTIONS_VERSION, or -EINVAL with err filled.
 */
int gs_options_parse(const struct gs_opt *table, size_t n, int argc, char **argv, void *cfg, char *err, size_t errlen);

/* Prints one line per option: flag, environment variable, default, help. */
void gs_options_usage(FILE *f, const struct gs_opt *table, size_t n);

/* A Go-style duration ("15s", "1m30s", "250ms", "2h"; a sum of number+unit, units h m s ms) into
 * milliseconds. 0 or -EINVAL (bad syntax, an empty string, over a year). */
int gs_options_parse_duration_ms(const char *s, long *ms);

/* A size as a Kubernetes binary quantity ("16Mi", "512Ki", "2Gi", "1048576"; no fraction, no
 * decimal suffix) into bytes. 0 or -EINVAL (bad syntax, an empty string, over 1 Ti). */
int gs_options_parse_bytes(const char *s, long *bytes);

/* Validators shared by daemons: "host:port" with a port in 1..65535 (host may be empty or [v6]). */
int gs_opt_validate_hostport(const char *value, char *err, size_t errlen);

/* Splits "host:port" / "[v6]:port" / ":port". host receives "" for an empty host. 0 or -EINVAL. */
int gs_options_split_hostport(const char *value, char *host, size_t hostlen, int *port);

#endif
