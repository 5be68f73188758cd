/*
 * util.h: what both load generators (bench.c, webhook.c) measure with: a monotonic clock, a progress
 * bar on stderr, a process's CPU time and peak RSS from /proc, and percentiles of sorted samples.
 */
#ifndef GS_BENCH_UTIL_H
#define GS_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/buf.h"
#include "k8s/kube.h"

/* Monotonic nanoseconds (uv_hrtime). */
int64_t bench_now_ns(void);

/* Redraws "what [####    ] done/total" on stderr at most every 200 ms, and once more at the end. */
void bench_progress(const char *what, int done, int total);

/* utime+stime of pid in seconds into *cpu_s, and its VmHWM in KiB into *hwm_kb (when non-NULL).
 * Either is left untouched when /proc does not say. */
void bench_proc_usage(int pid, double *cpu_s, long *hwm_kb);

/* Bytes pid has read and written through syscalls (sockets included), from /proc/PID/io; 0 when
 * unreadable. For a daemon that reads no files after its start, that is its network traffic. */
void bench_proc_io(int pid, uint64_t *rchar, uint64_t *wchar);

/* Sorts v[0..n) ascending (nanoseconds). */
void bench_sort_ns(int64_t *v, int n);

/* The p-quantile (0..1) of sorted nanoseconds, in milliseconds; 0 when n is 0. */
double bench_pct_ms(const int64_t *sorted, int n, double p);

/* Sends one request (JSON body or NULL, 60 s timeout): gs_kube_send's result; done runs unless < 0. */
int bench_send(struct gs_kube *kube, const char *method, const char *path, const char *json, const char *content_type,
	       gs_kube_done_cb done, void *ud);

/*
 * One request, waited for by running the loop: the HTTP status, or a negative code (the reason in
 * *body). The response body is copied into body when non-NULL.
 */
int bench_request(uv_loop_t *loop, struct gs_kube *kube, const char *method, const char *path, const char *json,
		  const char *content_type, struct gs_buf *body);

/* Creates namespace ns (labels: a JSON object or NULL) and waits until pods can be created in it (its
 * default ServiceAccount exists). 0, or -1 with a message on stderr. */
int bench_namespace_create(uv_loop_t *loop, struct gs_kube *kube, const char *ns, const char *labels);

/* Deletes every pod of ns at once (grace period 0: no kubelet will confirm) and then ns, and waits
 * (2 minutes at most) until ns is gone. */
void bench_namespace_delete(uv_loop_t *loop, struct gs_kube *kube, const char *ns);

#endif
