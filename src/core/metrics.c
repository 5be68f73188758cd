/*
 * metrics.c: see metrics.h. A registry is an array of series in registration order; families are
 * found by name at render time (a few dozen series: a linear scan is cheaper than an index).
 */
#include "core/metrics.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "core/log.h"

enum series_type {
	SERIES_COUNTER,
	SERIES_GAUGE,
	SERIES_HISTOGRAM,
};

struct series {
	const char *name;
	const char *help;
	const char *labels;
	enum series_type type;
	struct gs_counter *counter;
	struct gs_gauge *gauge;
	struct gs_histogram *hist;
	gs_gauge_fn fn;
	gs_family_fn family; /* with SERIES_GAUGE: the series are fn's */
	void *ud;
};

struct gs_metrics_put {
	struct gs_buf *out;
	const char *name;
};

struct gs_metrics {
	struct series *v;
	size_t n, size;
	double start_time;
};

const double gs_metrics_latency_buckets[GS_LATENCY_BUCKETS_N] = {
	0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064,
	0.128,  0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384,
};

void gs_histogram_init(struct gs_histogram *h, const double *bounds, size_t n_bounds)
{
	h->bounds = bounds;
	h->n_bounds = n_bounds;
	h->buckets = gs_xcalloc(n_bounds + 1, sizeof(*h->buckets));
	h->count = 0;
	h->sum = 0;
}

void gs_histogram_free(struct gs_histogram *h)
{
	free(h->buckets);
	h->buckets = NULL;
}

void gs_histogram_observe(struct gs_histogram *h, double v)
{
	size_t i = 0;
	while (i < h->n_bounds && v > h->bounds[i])
		i++;
	h->buckets[i]++;
	h->count++;
	h->sum += v;
}

struct gs_metrics *gs_metrics_new(void)
{
	struct gs_metrics *m = gs_xcalloc(1, sizeof(*m));
	m->start_time = gs_clock_wall_s();
	return m;
}

void gs_metrics_free(struct gs_metrics *m)
{
	if (!m)
		return;
	free(m->v);
	free(m);
}

/* Prometheus' metric name grammar: [a-zA-Z_:][a-zA-Z0-9_:]*. */
static int valid_name(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == ':'))
			return 0;
	return 1;
}

static struct series *add(struct gs_metrics *m, const char *name, const char *help, const char *labels,
			  enum series_type type)
{
	GS_ASSERT(name && valid_name(name) && help && !strchr(help, '\n'));
	GS_ASSERT(!labels || (!strchr(labels, '{') && !strchr(labels, '}')));
	for (size_t i = 0; i < m->n; i++) {
		if (strcmp(m->v[i].name, name) == 0 && m->v[i].type != type) {
			fprintf(stderr, "gpu-scheduler: metric %s registered with two types\n", name);
			abort();
		}
	}
	if (m->n == m->size) {
		size_t size = m->size ? m->size * 2 : 32;
		m->v = gs_xreallocarray(m->v, size, sizeof(*m->v));
		m->size = size;
	}
	struct series *s = &m->v[m->n++];
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->help = help;
	s->labels = labels;
	s->type = type;
	return s;
}

void gs_metrics_counter(struct gs_metrics *m, const char *name, const char *help, const char *labels,
			struct gs_counter *c)
{
	add(m, name, help, labels, SERIES_COUNTER)->counter = c;
}

void gs_metrics_gauge(struct gs_metrics *m, const char *name, const char *help, const char *labels, struct gs_gauge *g)
{
	add(m, name, help, labels, SERIES_GAUGE)->gauge = g;
}

void gs_metrics_gauge_fn(struct gs_metrics *m, const char *name, const char *help, const char *labels, gs_gauge_fn fn,
			 void *ud)
{
	struct series *s = add(m, name, help, labels, SERIES_GAUGE);
	s->fn = fn;
	s->ud = ud;
}

void gs_metrics_counter_fn(struct gs_metrics *m, const char *name, const char *help, const char *labels, gs_gauge_fn fn,
			   void *ud)
{
	struct series *s = add(m, name, help, labels, SERIES_COUNTER);
	s->fn = fn;
	s->ud = ud;
}

void gs_metrics_histogram(struct gs_metrics *m, const char *name, const char *help, const char *labels,
			  struct gs_histogram *h)
{
	add(m, name, help, labels, SERIES_HISTOGRAM)->hist = h;
}

void gs_metrics_gauge_family(struct gs_metrics *m, const char *name, const char *help, gs_family_fn fn, void *ud)
{
	struct series *s = add(m, name, help, NULL, SERIES_GAUGE);
	s->family = fn;
	s->ud = ud;
}

/* ---- process metrics, read from /proc at scrape time ---------------------------------------- */

static double proc_cpu_seconds(void *ud)
{
	struct rusage ru;
	(void)ud;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* Field 'key' of /proc/self/status in kB, as bytes. */
static double proc_status_bytes(const char *key)
{
	char line[256];
	double v = 0;
	size_t klen = strlen(key);
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtod(line + klen + 1, NULL) * 1024.0;
			break;
		}
	}
	fclose(f);
	return v;
}

static double proc_rss(void *ud)
{
	(void)ud;
	return proc_status_bytes("VmRSS");
}

static double proc_vsize(void *ud)
{
	(void)ud;
	return proc_status_bytes("VmSize");
}

static double proc_open_fds(void *ud)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	double n = 0;
	(void)ud;
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory stream's own descriptor */
}

static double proc_max_fds(void *ud)
{
	struct rlimit rl;
	(void)ud;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	return (double)rl.rlim_cur;
}

static double proc_start_time(void *ud)
{
	return ((struct gs_metrics *)ud)->start_time;
}

void gs_metrics_process(struct gs_metrics *m)
{
	gs_metrics_counter_fn(m, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", NULL,
			      proc_cpu_seconds, NULL);
	gs_metrics_gauge_fn(m, "process_resident_memory_bytes", "Resident memory size in bytes.", NULL, proc_rss, NULL);
	gs_metrics_gauge_fn(m, "process_virtual_memory_bytes", "Virtual memory size in bytes.", NULL, proc_vsize, NULL);
	gs_metrics_gauge_fn(m, "process_open_fds", "Number of open file descriptors.", NULL, proc_open_fds, NULL);
	gs_metrics_gauge_fn(m, "process_max_fds", "Maximum number of open file descriptors.", NULL, proc_max_fds, NULL);
	gs_metrics_gauge_fn(m, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
			    NULL, proc_start_time, m);
}

/* ---- rendering ---------------------------------------------------------------------------------- */

/* Prometheus floats: integers without a fraction, +Inf/-Inf/NaN spelled as the format wants. */
static int put_value(struct gs_buf *out, double v)
{
	if (isnan(v))
		return gs_buf_append_str(out, "NaN");
	if (isinf(v))
		return gs_buf_append_str(out, v > 0 ? "+Inf" : "-Inf");
	if (v == floor(v) && fabs(v) < 1e15)
		return gs_buf_printf(out, "%.0f", v);
	return gs_buf_printf(out, "%.9g", v);
}

/* A sample line's end: " VALUE\n". */
static int put_tail(struct gs_buf *out, double v)
{
	int r = gs_buf_append(out, " ", 1);
	if (r == 0)
		r = put_value(out, v);
	if (r == 0)
		r = gs_buf_append(out, "\n", 1);
	return r;
}

static int put_sample(struct gs_buf *out, const char *name, const char *suffix, const char *labels, const char *extra,
		      double v)
{
	int r = gs_buf_printf(out, "%s%s", name, suffix);
	int has = labels && *labels;
	if (r == 0 && (has || extra))
		r = gs_buf_printf(out, "{%s%s%s}", has ? labels : "", has && extra ? "," : "", extra ? extra : "");
	return r == 0 ? put_tail(out, v) : r;
}

/* Label name grammar, without the reserved "__" prefix. */
static int valid_label_name(const char *s)
{
	return *s && !(s[0] == '_' && s[1] == '_') && valid_name(s) && !strchr(s, ':');
}

/* A label value: backslash, double quote and newline escaped (text format 0.0.4). */
static int append_label_value(struct gs_buf *out, const char *v)
{
	int r = 0;
	for (const char *p = v; r == 0 && *p; p++) {
		if (*p == '\\' || *p == '"')
			r = gs_buf_printf(out, "\\%c", *p);
		else if (*p == '\n')
			r = gs_buf_append(out, "\\n", 2);
		else
			r = gs_buf_append(out, p, 1);
	}
	return r;
}

int gs_metrics_put(struct gs_metrics_put *put, const char *const *names, const char *const *values, size_t n, double v)
{
	struct gs_buf *out = put->out;
	int r = gs_buf_append_str(out, put->name), first = 1;

	for (size_t i = 0; r == 0 && i < n; i++) {
		GS_ASSERT(valid_label_name(names[i]));
		if (!values[i] || !*values[i])
			continue;
		r = gs_buf_printf(out, "%c%s=\"", first ? '{' : ',', names[i]);
		if (r == 0)
			r = append_label_value(out, values[i]);
		if (r == 0)
			r = gs_buf_append(out, "\"", 1);
		first = 0;
	}
	if (r == 0 && !first)
		r = gs_buf_append(out, "}", 1);
	return r == 0 ? put_tail(out, v) : r;
}

static int render_series(const struct series *s, struct gs_buf *out)
{
	int r = 0;
	switch (s->type) {
	case SERIES_COUNTER:
		return put_sample(out, s->name, "", s->labels, NULL, s->fn ? s->fn(s->ud) : (double)s->counter->v);
	case SERIES_GAUGE:
		if (s->family) {
			struct gs_metrics_put put = {.out = out, .name = s->name};
			return s->family(s->ud, &put);
		}
		return put_sample(out, s->name, "", s->labels, NULL, s->fn ? s->fn(s->ud) : s->gauge->v);
	case SERIES_HISTOGRAM: {
		const struct gs_histogram *h = s->hist;
		uint64_t cum = 0;
		char le[48];
		for (size_t i = 0; r == 0 && i <= h->n_bounds; i++) {
			cum += h->buckets[i];
			if (i < h->n_bounds)
				snprintf(le, sizeof(le), "le=\"%.9g\"", h->bounds[i]);
			else
				snprintf(le, sizeof(le), "le=\"+Inf\"");
			r = put_sample(out, s->name, "_bucket", s->labels, le, (double)cum);
		}
		if (r == 0)
			r = put_sample(out, s->name, "_sum", s->labels, NULL, h->sum);
		if (r == 0)
			r = put_sample(out, s->name, "_count", s->labels, NULL, (double)h->count);
		return r;
	}
	}
	return -EINVAL;
}

/* HELP text escapes backslash and newline (text format 0.0.4). */
static int append_help(struct gs_buf *out, const char *help)
{
	int r = 0;
	for (const char *p = help; r == 0 && *p; p++) {
		if (*p == '\\')
			r = gs_buf_append(out, "\\\\", 2);
		else if (*p == '\n')
			r = gs_buf_append(out, "\\n", 2);
		else
			r = gs_buf_append(out, p, 1);
	}
	return r;
}

int gs_metrics_render(const struct gs_metrics *m, struct gs_buf *out)
{
	static const char *const type_names[] = {"counter", "gauge", "histogram"};
	int r = 0;

	for (size_t i = 0; r == 0 && i < m->n; i++) {
		const struct series *s = &m->v[i];
		size_t j;
		/* Only the first series of a family opens it; its siblings follow right away. */
		for (j = 0; j < i; j++)
			if (strcmp(m->v[j].name, s->name) == 0)
				break;
		if (j < i)
			continue;
		r = gs_buf_printf(out, "# HELP %s ", s->name);
		if (r == 0)
			r = append_help(out, s->help);
		if (r == 0)
			r = gs_buf_printf(out, "\n# TYPE %s %s\n", s->name, type_names[s->type]);
		for (j = i; r == 0 && j < m->n; j++)
			if (strcmp(m->v[j].name, s->name) == 0)
				r = render_series(&m->v[j], out);
	}
	return r;
}
