/*
 * metrics.h: a small Prometheus registry rendered in the text exposition format 0.0.4.
 *
 * Series are registered once at startup into a registry; the values are plain integers/doubles that
 * the owning module updates directly on the loop thread (no atomics, no locks). Series that share a
 * family name (same metric, other labels) are rendered under one HELP/TYPE header, in registration
 * order. Gauges may be read through a callback at scrape time (cache sizes, process figures), and a
 * gauge family's series may all be made at scrape time, labels and all (gs_metrics_gauge_family): what
 * the engine holds, one series per object, bounded by its owner.
 *
 *   static struct gs_counter binds_ok;
 *   gs_metrics_counter(reg, "gpu_scheduler_binding_attempts_total", "Binding attempts by result.",
 *                      "result=\"success\"", &binds_ok);
 *   binds_ok.v++;
 */
#ifndef GS_CORE_METRICS_H
#define GS_CORE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* The exact content type Prometheus (3.x included) expects for this format. */
#define GS_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct gs_counter {
	uint64_t v;
};

struct gs_gauge {
	double v;
};

struct gs_histogram {
	const double *bounds; /* ascending upper bounds, +Inf implied */
	size_t n_bounds;
	uint64_t *buckets; /* n_bounds + 1 counts, non-cumulative; allocated by gs_histogram_init */
	uint64_t count;
	double sum;
};

/* Allocates the buckets (aborts on allocation failure: a fixed startup cost). */
void gs_histogram_init(struct gs_histogram *h, const double *bounds, size_t n_bounds);
void gs_histogram_free(struct gs_histogram *h);
void gs_histogram_observe(struct gs_histogram *h, double v);

/* Exponential bucket bounds (start, start*factor, ...), like the Go client's ExponentialBuckets. */
#define GS_LATENCY_BUCKETS_N 16
extern const double gs_metrics_latency_buckets[GS_LATENCY_BUCKETS_N]; /* 0.0005 s .. ~16 s */

typedef double (*gs_gauge_fn)(void *ud);

struct gs_metrics; /* opaque registry */

struct gs_metrics *gs_metrics_new(void);
void gs_metrics_free(struct gs_metrics *m);

/*
 * Registration. name must be a valid metric name, labels either NULL or the inside of the braces
 * ("result=\"success\""), help one line. The registry keeps the pointers: the series must outlive it.
 * Registration aborts with a message on misuse (mixed types in one family; a name, help or labels
 * breaking those rules: GS_ASSERT): a programming error.
 */
void gs_metrics_counter(struct gs_metrics *m, const char *name, const char *help, const char *labels,
			struct gs_counter *c);
void gs_metrics_gauge(struct gs_metrics *m, const char *name, const char *help, const char *labels, struct gs_gauge *g);
void gs_metrics_gauge_fn(struct gs_metrics *m, const char *name, const char *help, const char *labels, gs_gauge_fn fn,
			 void *ud);
void gs_metrics_counter_fn(struct gs_metrics *m, const char *name, const char *help, const char *labels, gs_gauge_fn fn,
			   void *ud);
void gs_metrics_histogram(struct gs_metrics *m, const char *name, const char *help, const char *labels,
			  struct gs_histogram *h);

/*
 * A gauge family whose series fn makes at scrape time, each by gs_metrics_put (none: the family shows
 * its HELP and TYPE only). fn returns 0, or the first error gs_metrics_put gave it, which ends the render.
 */
struct gs_metrics_put; /* the render in progress, valid during fn only */
typedef int (*gs_family_fn)(void *ud, struct gs_metrics_put *put);
void gs_metrics_gauge_family(struct gs_metrics *m, const char *name, const char *help, gs_family_fn fn, void *ud);
/*
 * One series of the family: labels names[i]="values[i]" for i < n, a NULL or empty value left out (as
 * Prometheus reads an empty label: absent). Names are label names ([a-zA-Z_][a-zA-Z0-9_]*, not starting
 * with "__": GS_ASSERT, a programming error); values are any text, escaped as the format wants (\\, \",
 * \n). 0 or a gs_buf error.
 */
int gs_metrics_put(struct gs_metrics_put *put, const char *const *names, const char *const *values, size_t n, double v);

/* Registers process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
 * process_open_fds, process_max_fds and process_start_time_seconds, read from /proc at scrape time. */
void gs_metrics_process(struct gs_metrics *m);

/* Appends the whole exposition to out. 0 or a gs_buf error. */
int gs_metrics_render(const struct gs_metrics *m, struct gs_buf *out);

#endif
