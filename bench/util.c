/*
 * util.c: clock, progress bar, /proc readings and percentiles shared by the load generators.
 */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

int64_t bench_now_ns(void)
{
	return (int64_t)uv_hrtime();
}

void bench_progress(const char *what, int done, int total)
{
	static int64_t last;
	int64_t t = bench_now_ns();
	if (t - last < 200000000 && done < total)
		return;
	last = t;
	int w = 40, fill = total ? done * w / total : w;
	if (fill > w)
		fill = w;
	fprintf(stderr, "\r%-28s [%.*s%*s] %d/%d", what, fill, "########################################", w - fill, "",
		done, total);
	if (done >= total)
		fputc('\n', stderr);
}

void bench_proc_usage(int pid, double *cpu_s, long *hwm_kb)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f)) {
		char *p = strrchr(buf, ')');
		unsigned long ut = 0, st = 0;
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
			*cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	}
	if (f)
		fclose(f);
	if (!hwm_kb)
		return;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "VmHWM: %ld", hwm_kb) == 1)
			break;
	if (f)
		fclose(f);
}

void bench_proc_io(int pid, uint64_t *rchar, uint64_t *wchar)
{
	char path[64], buf[256];
	unsigned long long v;
	snprintf(path, sizeof(path), "/proc/%d/io", pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(buf, sizeof(buf), f)) {
		if (sscanf(buf, "rchar: %llu", &v) == 1)
			*rchar = v;
		else if (sscanf(buf, "wchar: %llu", &v) == 1)
			*wchar = v;
	}
	if (f)
		fclose(f);
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

void bench_sort_ns(int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp64);
}

double bench_pct_ms(const int64_t *sorted, int n, double p)
{
	if (n <= 0)
		return 0;
	int i = (int)(p * (n - 1) + 0.5);
	return (double)sorted[i] / 1e6;
}

struct sync_req {
	int done, status;
	struct gs_buf *body;
};

static void on_sync_done(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct sync_req *s = ud;
	s->done = 1;
	s->status = err ? err : resp->status;
	if (s->body) {
		gs_buf_reset(s->body);
		if (err)
			gs_buf_append(s->body, msg, strlen(msg));
		else
			gs_buf_append(s->body, resp->body, resp->body_len);
	}
}

int bench_send(struct gs_kube *kube, const char *method, const char *path, const char *json, const char *content_type,
	       gs_kube_done_cb done, void *ud)
{
	return gs_kube_request(kube, method, path, json, content_type, GS_KUBE_HIGH, 60000, done, ud);
}

int bench_request(uv_loop_t *loop, struct gs_kube *kube, const char *method, const char *path, const char *json,
		  const char *content_type, struct gs_buf *body)
{
	struct sync_req s = {.body = body};
	int r = bench_send(kube, method, path, json, content_type, on_sync_done, &s);
	if (r < 0)
		return r;
	while (!s.done)
		uv_run(loop, UV_RUN_ONCE);
	return s.status;
}

int bench_namespace_create(uv_loop_t *loop, struct gs_kube *kube, const char *ns, const char *labels)
{
	char body[512], path[256];
	struct gs_buf resp;
	gs_buf_init(&resp, 0);
	snprintf(body, sizeof(body), "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"%s%s}}",
		 ns, labels ? ",\"labels\":" : "", labels ? labels : "");
	int st = bench_request(loop, kube, "POST", "/api/v1/namespaces", body, NULL, &resp);
	if (st != 201 && st != 409) {
		fprintf(stderr, "namespace %s: %d %.200s\n", ns, st, resp.data ? resp.data : "");
		gs_buf_free(&resp);
		return -1;
	}
	/* Pods are refused until the namespace's default ServiceAccount exists (its controller makes it). */
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/serviceaccounts/default", ns);
	for (int tries = 0; tries < 100; tries++) {
		if ((st = bench_request(loop, kube, "GET", path, NULL, NULL, NULL)) == 200)
			break;
		usleep(100000);
	}
	gs_buf_free(&resp);
	if (st != 200) {
		fprintf(stderr, "namespace %s: no default ServiceAccount after 10 s\n", ns);
		return -1;
	}
	return 0;
}

void bench_namespace_delete(uv_loop_t *loop, struct gs_kube *kube, const char *ns)
{
	char path[256];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?gracePeriodSeconds=0", ns);
	bench_request(loop, kube, "DELETE", path, NULL, NULL, NULL);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
	bench_request(loop, kube, "DELETE", path, NULL, NULL, NULL);
	/* Until it is gone: its controller's cleanup would otherwise load the apiserver while the next
	 * contender is measured. */
	int64_t until = bench_now_ns() + 120 * 1000000000LL;
	while (bench_request(loop, kube, "GET", path, NULL, NULL, NULL) == 200 && bench_now_ns() < until)
		usleep(200000);
}
