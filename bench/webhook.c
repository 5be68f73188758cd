/*
 * webhook.c: gpu-scheduler-webhook-bench, the admission webhook under load, two ways, in one run.
 *
 *   build/gpu-scheduler-webhook-bench --kubeconfig build/bench-cluster/kubeconfig [--requests 20000]
 *       [--rate 1000] [--conns 8] [--pods 2000] [--create-conns 32] [--daemon build/gpu-scheduler]
 *       [--port 38443] [--health-port 38080] [--apiserver-pid PID] [--out DIR]
 *
 * It starts the daemon with a webhook certificate of its own making (a CA and a leaf for "localhost",
 * in DIR), --events=false and no nodes: pods only wait, nothing binds. Then:
 *
 * 1. Direct. AdmissionReviews shaped like the apiserver's for a StatefulSet pod carrying the task's
 *    map, POSTed to https://localhost:PORT/mutate over --conns kept-alive TLS connections, after a
 *    warm-up that is not reported (8 per connection: every TLS handshake done):
 *    - open loop at --rate requests/s, each request timed from the moment it was due (so a stall
 *      delays the ones behind it and shows in their latency: no coordinated omission);
 *    - closed loop, --conns in flight, as fast as they go: the ceiling.
 *    Latency at the client (due to answer) and on the server (the daemon's own
 *    gpu_scheduler_webhook_review_duration_seconds histogram, read from /metrics before and after:
 *    bucket bounds, so "<= 0.5 ms"); the daemon's CPU per review from /proc. Every answer must allow
 *    the pod with a patch; any other answer fails the run.
 * 2. Through the apiserver. --pods pod creations over --create-conns connections into four fresh
 *    namespaces in turn: without the webhook; with it (a MutatingWebhookConfiguration, failurePolicy
 *    Fail, that selects only the namespaces labelled for it); with it for pods of another scheduler
 *    (the webhook is called and answers without a patch: the apiserver's cost of calling a webhook
 *    at all); and without it again, so a drift of the machine between phases shows. Every pod
 *    created with the webhook must come back with CUDA_VISIBLE_DEVICES in its spec, none other.
 *
 * Output: a table on stdout and DIR/webhook.json. Exit status 0 when every check held.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/http.h"
#include "core/log.h"
#include "core/tls.h"
#include "k8s/kube.h"
#include "k8s/kubeconfig.h"
#include "util.h"
#include "webhook/jsonpatch.h"

/* The task's map: pod index i of a StatefulSet check-N lands on the node and devices of line i. */
#define MAP       "0=node1:0,1\\n1=node2:2\\n2=node3:0,1,2\\n3=node4:3\\n4=node4:3\\n"
#define MAP_LINES 5
#define HIST_MAX  32

struct cfg {
	const char *kubeconfig, *daemon, *out;
	int requests, rate, conns, pods, create_conns, port, health_port, apiserver_pid;
};

/* One load phase: latencies of its requests and what the daemon and the apiserver spent. */
struct phase {
	const char *name;
	int n, done, ok, bad;
	int64_t *lat_ns;
	int64_t t0, t_end;
	double daemon_cpu_s, apiserver_cpu_s;
	/* server side, from the daemon's histogram: bucket bounds (s) and counts within the phase */
	double le[HIST_MAX];
	double cum[HIST_MAX];
	int n_le;
	double srv_sum_s, srv_count;
	double conns; /* connections the webhook accepted during the phase (each a TLS handshake) */
	char first_bad[256];
	/* the readings at the start, subtracted at the end */
	double d0, a0, sum0, cnt0, conns0, cum0[HIST_MAX];
	int n0;
};

static uv_loop_t loop;
static struct cfg C;
static struct gs_http_client *hook, *health;
static struct gs_kube *kube;
static uv_process_t daemon_proc;
static int daemon_running, daemon_stopping;

/* ---- requests that are waited for -------------------------------------------------------------- */

struct wait_call {
	int done, status;
	struct gs_buf body;
};

static void on_wait_done(struct gs_http_call *call, int err, const struct gs_http_response *resp, void *ud)
{
	struct wait_call *w = ud;
	w->done = 1;
	w->status = err ? err : resp->status;
	if (!err)
		gs_buf_append(&w->body, resp->body, resp->body_len);
}

/* GET path from the daemon's health port; the status, body in w->body (caller frees). */
static int health_get(const char *path, struct wait_call *w)
{
	struct gs_http_request req = {.method = "GET", .path = path, .timeout_ms = 5000};
	memset(w, 0, sizeof(*w));
	gs_buf_init(&w->body, 0);
	if (gs_http_send(health, &req, on_wait_done, w, NULL) < 0)
		return -1;
	while (!w->done)
		uv_run(&loop, UV_RUN_ONCE);
	return w->status;
}

/* The review-duration histogram, cumulative, and the connections accepted, as /metrics shows them now. */
static int read_histogram(double *le, double *cum, int *n, double *sum, double *count, double *conns)
{
	struct wait_call w;
	const char *name = "gpu_scheduler_webhook_review_duration_seconds";
	size_t nl = strlen(name);
	*n = 0;
	if (health_get("/metrics", &w) != 200) {
		gs_buf_free(&w.body);
		return -1;
	}
	for (char *line = w.body.data; line && *line;) {
		char *eol = strchr(line, '\n');
		if (eol)
			*eol = '\0';
		sscanf(line, "gpu_scheduler_webhook_connections_total %lf", conns);
		if (!strncmp(line, name, nl)) {
			const char *rest = line + nl;
			double v;
			char bound[32];
			if (sscanf(rest, "_bucket{le=\"%31[^\"]\"} %lf", bound, &v) == 2 && *n < HIST_MAX) {
				le[*n] = !strcmp(bound, "+Inf") ? 1e9 : strtod(bound, NULL);
				cum[(*n)++] = v;
			} else if (sscanf(rest, "_sum %lf", &v) == 1) {
				*sum = v;
			} else if (sscanf(rest, "_count %lf", &v) == 1) {
				*count = v;
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	gs_buf_free(&w.body);
	return *n > 0 ? 0 : -1;
}

/* The smallest bucket bound holding the p-quantile of the phase's reviews, in ms; -1 unknown. */
static double server_quantile_ms(const struct phase *ph, double p)
{
	double total = ph->n_le ? ph->cum[ph->n_le - 1] : 0;
	for (int i = 0; i < ph->n_le && total > 0; i++)
		if (ph->cum[i] >= p * total)
			return ph->le[i] >= 1e9 ? -1 : ph->le[i] * 1e3;
	return -1;
}

/* Starts a phase: zeroes it and takes the readings that phase_end subtracts. */
static void phase_begin(struct phase *ph, const char *name, int n)
{
	double le0[HIST_MAX];
	memset(ph, 0, sizeof(*ph));
	ph->name = name;
	ph->n = n;
	ph->lat_ns = calloc((size_t)n, sizeof(int64_t));
	read_histogram(le0, ph->cum0, &ph->n0, &ph->sum0, &ph->cnt0, &ph->conns0);
	bench_proc_usage((int)daemon_proc.pid, &ph->d0, NULL);
	if (C.apiserver_pid)
		bench_proc_usage(C.apiserver_pid, &ph->a0, NULL);
	ph->t0 = bench_now_ns();
}

/* Ends a phase: what the daemon and the apiserver spent, and the daemon's own view of it. */
static void phase_end(struct phase *ph)
{
	double sum1 = 0, cnt1 = 0;
	ph->t_end = bench_now_ns();
	bench_proc_usage((int)daemon_proc.pid, &ph->daemon_cpu_s, NULL);
	ph->daemon_cpu_s -= ph->d0;
	if (C.apiserver_pid) {
		bench_proc_usage(C.apiserver_pid, &ph->apiserver_cpu_s, NULL);
		ph->apiserver_cpu_s -= ph->a0;
	}
	if (read_histogram(ph->le, ph->cum, &ph->n_le, &sum1, &cnt1, &ph->conns) == 0 && ph->n_le == ph->n0) {
		ph->conns -= ph->conns0;
		for (int k = 0; k < ph->n0; k++)
			ph->cum[k] -= ph->cum0[k];
		ph->srv_sum_s = sum1 - ph->sum0;
		ph->srv_count = cnt1 - ph->cnt0;
	} else {
		ph->n_le = 0;
	}
}

/* ---- 1. direct AdmissionReviews ----------------------------------------------------------------- */

static struct phase *cur;
static int sent;
static int open_rate; /* requests/s of the phase running; 0: closed loop */
static int64_t *due_ns;

static void review_body(struct gs_buf *b, int i)
{
	int idx = i % MAP_LINES;
	gs_buf_reset(b);
	gs_buf_printf(
		b,
		"{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{\"uid\":\"bench-%08d\","
		"\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"resource\":{\"group\":\"\",\"version\":\"v1\","
		"\"resource\":\"pods\"},\"requestKind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
		"\"requestResource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},\"name\":\"check-%d\","
		"\"namespace\":\"bench\",\"operation\":\"CREATE\",\"userInfo\":{\"username\":"
		"\"system:serviceaccount:kube-system:statefulset-controller\",\"uid\":\"5a3e6c1b-0000-4000-8000-000000000001\","
		"\"groups\":[\"system:serviceaccounts\",\"system:serviceaccounts:kube-system\",\"system:authenticated\"]},"
		"\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"check-%d\",\"generateName\":\"check-\","
		"\"namespace\":\"bench\",\"creationTimestamp\":null,\"labels\":{\"app\":\"gpu-scheduler-check\","
		"\"controller-revision-hash\":\"check-6d8f7b9c54\",\"statefulset.kubernetes.io/pod-name\":\"check-%d\"},"
		"\"annotations\":{\"gpu-scheduling-map\":\"" MAP "\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
		"\"kind\":\"StatefulSet\",\"name\":\"check\",\"uid\":\"5a3e6c1b-0000-4000-8000-000000000002\",\"controller\":true,"
		"\"blockOwnerDeletion\":true}]},\"spec\":{\"volumes\":[{\"name\":\"kube-api-access-x7k2p\",\"projected\":{"
		"\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":\"token\"}},{\"configMap\":{\"name\":"
		"\"kube-root-ca.crt\",\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}},{\"downwardAPI\":{\"items\":[{"
		"\"path\":\"namespace\",\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.namespace\"}}]}}],"
		"\"defaultMode\":420}}],\"containers\":[{\"name\":\"check\",\"image\":\"gpu-scheduler-check:latest\","
		"\"env\":[{\"name\":\"NODE_NAME\",\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":"
		"\"spec.nodeName\"}}}],\"resources\":{\"limits\":{\"cpu\":\"50m\",\"memory\":\"16Mi\"},\"requests\":{\"cpu\":"
		"\"10m\",\"memory\":\"8Mi\"}},\"volumeMounts\":[{\"name\":\"kube-api-access-x7k2p\",\"readOnly\":true,"
		"\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],\"terminationMessagePath\":"
		"\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\","
		"\"securityContext\":{\"runAsNonRoot\":true,\"readOnlyRootFilesystem\":true,\"allowPrivilegeEscalation\":false}}],"
		"\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\","
		"\"serviceAccountName\":\"default\",\"serviceAccount\":\"default\",\"securityContext\":{},\"hostname\":"
		"\"check-%d\",\"subdomain\":\"check\",\"schedulerName\":\"gpu-scheduler\",\"tolerations\":[{\"key\":"
		"\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300},"
		"{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","
		"\"tolerationSeconds\":300}],\"priority\":0,\"enableServiceLinks\":true,\"preemptionPolicy\":"
		"\"PreemptLowerPriority\"},\"status\":{}},\"oldObject\":null,\"dryRun\":false,\"options\":{\"kind\":"
		"\"CreateOptions\",\"apiVersion\":\"meta.k8s.io/v1\"}}}",
		i, idx, idx, idx, idx);
}

static void note_bad(struct phase *ph, const char *what)
{
	if (!ph->bad++)
		snprintf(ph->first_bad, sizeof(ph->first_bad), "%.250s", what);
}

static void send_review(int i);

static void on_review(struct gs_http_call *call, int err, const struct gs_http_response *resp, void *ud)
{
	int i = (int)(intptr_t)ud;
	struct phase *ph = cur;
	ph->lat_ns[i] = bench_now_ns() - due_ns[i];
	ph->done++;
	char uid[32];
	snprintf(uid, sizeof(uid), "\"bench-%08d\"", i);
	if (err)
		note_bad(ph, gs_http_call_error(call)[0] ? gs_http_call_error(call) : strerror(-err));
	else if (resp->status != 200 || !strstr(resp->body, "\"allowed\":true") || !strstr(resp->body, "\"patch\"") ||
		 !strstr(resp->body, uid))
		note_bad(ph, resp->body);
	else
		ph->ok++;
	if (!open_rate && sent < ph->n) /* closed loop: the next one at once */
		send_review(sent++);
}

static struct gs_buf review_buf; /* zeroed: an empty buffer, reused by every review; freed in main */

static void send_review(int i)
{
	static const struct gs_http_header ctype = {"Content-Type", "application/json"};
	struct gs_buf *body = &review_buf;
	review_body(body, i);
	struct gs_http_request req = {
		.method = "POST",
		.path = "/mutate?timeout=10s",
		.headers = &ctype,
		.n_headers = 1,
		.body = body->data,
		.body_len = body->len,
		.timeout_ms = 10000,
	};
	if (!due_ns[i])
		due_ns[i] = bench_now_ns();
	if (gs_http_send(hook, &req, on_review, (void *)(intptr_t)i, NULL) < 0) {
		cur->done++;
		note_bad(cur, "gs_http_send failed");
	}
}

static void on_tick(uv_timer_t *t)
{
	struct phase *ph = cur;
	int64_t now = bench_now_ns();
	while (sent < ph->n) {
		int64_t due = ph->t0 + (int64_t)sent * 1000000000LL / open_rate;
		if (due > now)
			break;
		due_ns[sent] = due;
		send_review(sent++);
	}
}

static void direct_phase(struct phase *ph, const char *name, int n, int rate)
{
	due_ns = calloc((size_t)n, sizeof(int64_t));
	phase_begin(ph, name, n);
	cur = ph;
	sent = 0;
	open_rate = rate;
	uv_timer_t tick;
	uv_timer_init(&loop, &tick);
	if (rate) {
		uv_timer_start(&tick, on_tick, 0, 1);
	} else {
		for (int k = 0; k < C.conns && sent < ph->n; k++)
			send_review(sent++);
	}
	while (ph->done < ph->n) {
		uv_run(&loop, UV_RUN_ONCE);
		bench_progress(name, ph->done, ph->n);
	}
	phase_end(ph);
	uv_close((uv_handle_t *)&tick, NULL);
	uv_run(&loop, UV_RUN_NOWAIT);
	free(due_ns);
	due_ns = NULL;
}

/* ---- 2. pod creation through the apiserver ------------------------------------------------------- */

struct create_ctx {
	struct phase *ph;
	int i, expect_env;
	int64_t t_sent;
};

static int creates_pending;

static void on_created(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct create_ctx *c = ud;
	struct phase *ph = c->ph;
	ph->lat_ns[c->i] = bench_now_ns() - c->t_sent;
	ph->done++;
	creates_pending--;
	if (err || resp->status != 201)
		note_bad(ph, err ? msg : resp->body);
	else if (!!strstr(resp->body, "\"CUDA_VISIBLE_DEVICES\"") != c->expect_env)
		note_bad(ph, c->expect_env ? "created without CUDA_VISIBLE_DEVICES although the webhook is registered"
					   : "created with CUDA_VISIBLE_DEVICES although no webhook is registered");
	else
		ph->ok++;
	free(c);
}

/* Pod i of a StatefulSet-like group of MAP_LINES, for scheduler (gpu-scheduler: the webhook patches it). */
static void pod_body(struct gs_buf *b, int i, const char *scheduler)
{
	gs_buf_reset(b);
	gs_buf_printf(b,
		      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"s%d-%d\",\"annotations\":"
		      "{\"gpu-scheduling-map\":\"" MAP "\"}},\"spec\":{\"schedulerName\":\"%s\","
		      "\"terminationGracePeriodSeconds\":0,\"automountServiceAccountToken\":false,"
		      "\"containers\":[{\"name\":\"main\",\"image\":\"busybox:stable\",\"command\":[\"sleep\",\"1d\"]}]}}",
		      i / MAP_LINES, i % MAP_LINES, scheduler);
}

static void create_phase(struct phase *ph, const char *name, const char *ns, const char *scheduler, int expect_env)
{
	char path[256];
	struct gs_buf body;
	gs_buf_init(&body, 0);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	phase_begin(ph, name, C.pods);
	for (int i = 0; i < ph->n; i++) {
		while (creates_pending >= C.create_conns) /* closed loop: create_conns in flight */
			uv_run(&loop, UV_RUN_ONCE);
		struct create_ctx *c = calloc(1, sizeof(*c));
		*c = (struct create_ctx){.ph = ph, .i = i, .expect_env = expect_env, .t_sent = bench_now_ns()};
		pod_body(&body, i, scheduler);
		if (bench_send(kube, "POST", path, body.data, NULL, on_created, c) < 0) {
			free(c);
			ph->done++;
			note_bad(ph, "gs_kube_send failed");
			continue;
		}
		creates_pending++;
		bench_progress(name, ph->done, ph->n);
	}
	while (creates_pending > 0) {
		uv_run(&loop, UV_RUN_ONCE);
		bench_progress(name, ph->done, ph->n);
	}
	bench_progress(name, ph->n, ph->n);
	phase_end(ph);
	gs_buf_free(&body);
}

#define WEBHOOK_CONFIG "gpu-scheduler-webhook-bench"

/* Registers the webhook for namespaces labelled gpu-scheduler.bench/webhook=on and waits until the
 * apiserver calls it (a dry-run create in ns comes back mutated). */
static int register_webhook(const char *ns, const char *ca_pem)
{
	struct gs_buf body, resp, ca64;
	char path[256];
	int ok = 0;
	gs_buf_init(&body, 0);
	gs_buf_init(&resp, 0);
	gs_buf_init(&ca64, 0);
	gs_jsonpatch_base64_append(&ca64, ca_pem, strlen(ca_pem));
	gs_buf_printf(&body,
		      "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"MutatingWebhookConfiguration\","
		      "\"metadata\":{\"name\":\"" WEBHOOK_CONFIG "\"},\"webhooks\":[{\"name\":\"gpu-scheduler.bench.io\","
		      "\"admissionReviewVersions\":[\"v1\"],\"sideEffects\":\"None\",\"failurePolicy\":\"Fail\","
		      "\"timeoutSeconds\":10,\"reinvocationPolicy\":\"Never\",\"clientConfig\":{\"url\":"
		      "\"https://localhost:%d/mutate\",\"caBundle\":\"%s\"},\"rules\":[{\"operations\":[\"CREATE\"],"
		      "\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"resources\":[\"pods\"]}],\"namespaceSelector\":"
		      "{\"matchLabels\":{\"gpu-scheduler.bench/webhook\":\"on\"}}}]}",
		      C.port, ca64.data);
	int st = bench_request(&loop, kube, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
			       body.data, NULL, &resp);
	if (st != 201) {
		fprintf(stderr, "registering the webhook: %d %.300s\n", st, resp.data ? resp.data : "");
		goto out;
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?dryRun=All", ns);
	pod_body(&body, 0, "gpu-scheduler");
	for (int tries = 0; tries < 300 && !ok; tries++) {
		st = bench_request(&loop, kube, "POST", path, body.data, NULL, &resp);
		ok = st == 201 && strstr(resp.data, "\"CUDA_VISIBLE_DEVICES\"");
		if (!ok)
			usleep(100000);
	}
	if (!ok)
		fprintf(stderr, "the apiserver did not call the webhook within 30 s: %d %.300s\n", st, resp.data ? resp.data : "");
out:
	gs_buf_free(&body);
	gs_buf_free(&resp);
	gs_buf_free(&ca64);
	return ok ? 0 : -1;
}

/* ---- the daemon and its certificate ------------------------------------------------------------ */

static int write_file(const char *dir, const char *name, const char *data)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f || fputs(data, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* A CA and a leaf for "localhost" (the apiserver calls https://localhost:PORT), written to DIR. */
static int make_certs(char **ca_pem)
{
	static const char *const names[] = {"localhost", NULL};
	char *ca_key = NULL, *leaf = NULL, *leaf_key = NULL, err[256];
	int64_t now = (int64_t)time(NULL);
	struct gs_tls_cert_req ca = {.common_name = "gpu-scheduler-webhook-bench-ca", .is_ca = 1,
				     .not_before = now - 3600, .not_after = now + 86400};
	struct gs_tls_cert_req lr = {.common_name = "localhost", .dns_names = names, .not_before = now - 3600,
				     .not_after = now + 86400};
	int r = -1;
	if (gs_tls_generate(&ca, NULL, NULL, ca_pem, &ca_key, err, sizeof(err)) < 0 ||
	    gs_tls_generate(&lr, *ca_pem, ca_key, &leaf, &leaf_key, err, sizeof(err)) < 0)
		fprintf(stderr, "certificates: %s\n", err);
	else if (write_file(C.out, "ca.crt", *ca_pem) == 0 && write_file(C.out, "tls.crt", leaf) == 0 &&
		 write_file(C.out, "tls.key", leaf_key) == 0)
		r = 0;
	free(ca_key);
	free(leaf);
	free(leaf_key);
	return r;
}

static void on_daemon_exit(uv_process_t *p, int64_t status, int sig)
{
	daemon_running = 0;
	if (!daemon_stopping)
		fprintf(stderr, "gpu-scheduler exited (status %lld, signal %d): see %s/gpu-scheduler.log\n",
			(long long)status, sig, C.out);
	uv_close((uv_handle_t *)p, NULL);
}

static int start_daemon(void)
{
	char waddr[64], haddr[64], cert[512], key[512], log[512];
	snprintf(waddr, sizeof(waddr), "--webhook-addr=127.0.0.1:%d", C.port);
	snprintf(haddr, sizeof(haddr), "--health-addr=127.0.0.1:%d", C.health_port);
	snprintf(cert, sizeof(cert), "--tls-cert-file=%s/tls.crt", C.out);
	snprintf(key, sizeof(key), "--tls-private-key-file=%s/tls.key", C.out);
	snprintf(log, sizeof(log), "%s/gpu-scheduler.log", C.out);
	/* /metrics on the plain health port, as before the secure port: a bench, not a deployment. */
	char *args[] = {(char *)C.daemon, "--kubeconfig", (char *)C.kubeconfig, waddr, haddr, cert, key,
			"--events=false", "--secure-addr=", "--insecure-debug-and-metrics", NULL};
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", log, strerror(errno));
		return -1;
	}
	uv_stdio_container_t stdio[3] = {
		{.flags = UV_IGNORE},
		{.flags = UV_INHERIT_FD, .data.fd = fd},
		{.flags = UV_INHERIT_FD, .data.fd = fd},
	};
	uv_process_options_t po = {.file = args[0], .args = args, .stdio = stdio, .stdio_count = 3,
				   .exit_cb = on_daemon_exit};
	int r = uv_spawn(&loop, &daemon_proc, &po);
	close(fd);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", C.daemon, uv_strerror(r));
		return -1;
	}
	daemon_running = 1;
	/* Ready means both watches synced and the webhook serving. */
	for (int tries = 0; tries < 300 && daemon_running; tries++) {
		struct wait_call w;
		int st = health_get("/readyz", &w);
		gs_buf_free(&w.body);
		if (st == 200)
			return 0;
		usleep(100000);
	}
	fprintf(stderr, "gpu-scheduler not ready within 30 s: see %s\n", log);
	return -1;
}

/* ---- report ------------------------------------------------------------------------------------- */

static void report(struct phase *ph, int n, FILE *js)
{
	printf("%-34s %7s %7s %9s %8s %8s %8s %11s %11s %7s %10s %10s\n", "phase", "ok", "bad", "req/s", "p50 ms",
	       "p99 ms", "max ms", "srv p50 ms", "srv p99 ms", "conns", "cpu us/req", "api us/req");
	fprintf(js, "{\"requests\":%d,\"rate\":%d,\"conns\":%d,\"pods\":%d,\"create_conns\":%d,\"phases\":[", C.requests,
		C.rate, C.conns, C.pods, C.create_conns);
	for (int k = 0; k < n; k++) {
		struct phase *p = &ph[k];
		double secs = (double)(p->t_end - p->t0) / 1e9;
		bench_sort_ns(p->lat_ns, p->n);
		double rps = secs > 0 ? p->n / secs : 0;
		double s50 = p->n_le ? server_quantile_ms(p, 0.5) : -1, s99 = p->n_le ? server_quantile_ms(p, 0.99) : -1;
		char s50s[16] = "-", s99s[16] = "-", s50j[16] = "null", s99j[16] = "null";
		if (s50 >= 0) {
			snprintf(s50s, sizeof(s50s), "<= %g", s50);
			snprintf(s50j, sizeof(s50j), "%.3f", s50);
		}
		if (s99 >= 0) {
			snprintf(s99s, sizeof(s99s), "<= %g", s99);
			snprintf(s99j, sizeof(s99j), "%.3f", s99);
		}
		double cpu_us = p->n ? p->daemon_cpu_s / p->n * 1e6 : 0, api_us = p->n ? p->apiserver_cpu_s / p->n * 1e6 : 0;
		printf("%-34s %7d %7d %9.0f %8.2f %8.2f %8.2f %11s %11s %7.0f %10.1f %10.1f\n", p->name, p->ok, p->bad, rps,
		       bench_pct_ms(p->lat_ns, p->n, 0.5), bench_pct_ms(p->lat_ns, p->n, 0.99),
		       bench_pct_ms(p->lat_ns, p->n, 1.0), s50s, s99s, p->conns, cpu_us, api_us);
		if (p->bad)
			printf("    first failure: %s\n", p->first_bad);
		fprintf(js,
			"%s{\"name\":\"%s\",\"n\":%d,\"ok\":%d,\"bad\":%d,\"seconds\":%.3f,\"per_s\":%.1f,\"p50_ms\":%.3f,"
			"\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"server_p50_le_ms\":%s,\"server_p99_le_ms\":%s,"
			"\"server_mean_ms\":%.4f,\"server_reviews\":%.0f,\"connections\":%.0f,\"daemon_cpu_us\":%.1f,"
			"\"apiserver_cpu_us\":%.1f}",
			k ? "," : "", p->name, p->n, p->ok, p->bad, secs, rps, bench_pct_ms(p->lat_ns, p->n, 0.5),
			bench_pct_ms(p->lat_ns, p->n, 0.9), bench_pct_ms(p->lat_ns, p->n, 0.99),
			bench_pct_ms(p->lat_ns, p->n, 1.0), s50j, s99j,
			p->srv_count > 0 ? p->srv_sum_s / p->srv_count * 1e3 : 0, p->srv_count, p->conns, cpu_us, api_us);
	}
	fprintf(js, "]}\n");
}

/* ---- main --------------------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: gpu-scheduler-webhook-bench --kubeconfig FILE [--requests N] [--rate R] [--conns K]\n"
			"  [--pods M] [--create-conns K] [--daemon PATH] [--port P] [--health-port P]\n"
			"  [--apiserver-pid PID] [--out DIR]\n");
}

int main(int argc, char **argv)
{
	C = (struct cfg){.daemon = "build/gpu-scheduler", .out = "build/bench-webhook", .requests = 20000, .rate = 1000,
			 .conns = 8, .pods = 2000, .create_conns = 32, .port = 38443, .health_port = 38080};
	static const struct option lo[] = {
		{"kubeconfig", 1, 0, 'k'}, {"requests", 1, 0, 'n'},   {"rate", 1, 0, 'r'},        {"conns", 1, 0, 'c'},
		{"pods", 1, 0, 'p'},       {"create-conns", 1, 0, 'C'}, {"daemon", 1, 0, 'd'},    {"port", 1, 0, 'P'},
		{"health-port", 1, 0, 'H'}, {"apiserver-pid", 1, 0, 'a'}, {"out", 1, 0, 'o'},     {"help", 0, 0, 'h'},
		{0, 0, 0, 0}};
	int o;
	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'k': C.kubeconfig = optarg; break;
		case 'n': C.requests = atoi(optarg); break;
		case 'r': C.rate = atoi(optarg); break;
		case 'c': C.conns = atoi(optarg); break;
		case 'p': C.pods = atoi(optarg); break;
		case 'C': C.create_conns = atoi(optarg); break;
		case 'd': C.daemon = optarg; break;
		case 'P': C.port = atoi(optarg); break;
		case 'H': C.health_port = atoi(optarg); break;
		case 'a': C.apiserver_pid = atoi(optarg); break;
		case 'o': C.out = optarg; break;
		default: usage(); return o == 'h' ? 0 : 2;
		}
	}
	if (!C.kubeconfig || C.requests < 1 || C.rate < 1 || C.conns < 1 || C.pods < 1 || C.create_conns < 1 ||
	    C.port < 1 || C.port > 65535 || C.health_port < 1 || C.health_port > 65535) {
		usage();
		return 2;
	}
	gs_log_setup(GS_LOG_WARN, GS_LOG_TEXT);
	signal(SIGPIPE, SIG_IGN);
	char cmd[600], err[512];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", C.out);
	if (system(cmd) != 0)
		return 1;
	struct gs_kubeconfig kc;
	if (gs_kubeconfig_load(C.kubeconfig, &kc, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	uv_loop_init(&loop);
	struct gs_kube_opts ko = {.kc = &kc, .max_conns = (unsigned)C.create_conns, .user_agent = "gpu-scheduler-bench"};
	int rc = gs_kube_new(&loop, &ko, &kube, err, sizeof(err));
	gs_kubeconfig_free(&kc);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	char *ca_pem = NULL;
	struct gs_tls_config *tls = NULL;
	if (make_certs(&ca_pem) < 0)
		return 1;
	struct gs_tls_client_opts to = {.ca = ca_pem, .ca_len = strlen(ca_pem) + 1};
	if (gs_tls_client_config_new(&to, &tls, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct gs_http_client_opts ho = {.host = "127.0.0.1", .port = C.port, .server_name = "localhost", .tls = tls,
					 .max_conns = (unsigned)C.conns};
	struct gs_http_client_opts hh = {.host = "127.0.0.1", .port = C.health_port, .max_conns = 1};
	if (gs_http_client_new(&loop, &ho, &hook) < 0 || gs_http_client_new(&loop, &hh, &health) < 0) {
		fprintf(stderr, "http clients: out of memory\n");
		return 1;
	}
	gs_tls_config_unref(tls);

	struct phase ph[6];
	int n = 0, all_ok = 0;
	char ns[4][64];
	unsigned tag = (unsigned)(bench_now_ns() & 0xffff);
	snprintf(ns[0], sizeof(ns[0]), "gsw-off-%04x", tag);
	snprintf(ns[1], sizeof(ns[1]), "gsw-on-%04x", tag);
	snprintf(ns[2], sizeof(ns[2]), "gsw-skip-%04x", tag);
	snprintf(ns[3], sizeof(ns[3]), "gsw-off2-%04x", tag);
	if (start_daemon() < 0)
		goto out;
	/* Warm-up, not reported: every connection's TLS handshake done, the daemon's map cache filled. */
	direct_phase(&ph[0], "warm-up", C.conns * 8 > C.requests ? C.requests : C.conns * 8, 0);
	free(ph[0].lat_ns);
	char name[64];
	snprintf(name, sizeof(name), "direct, open loop %d/s", C.rate);
	direct_phase(&ph[n++], strdup(name), C.requests, C.rate);
	direct_phase(&ph[n++], strdup("direct, closed loop"), C.requests, 0);
	static const char on[] = "{\"gpu-scheduler.bench/webhook\":\"on\"}";
	if (bench_namespace_create(&loop, kube, ns[0], NULL) < 0 || bench_namespace_create(&loop, kube, ns[1], on) < 0 ||
	    bench_namespace_create(&loop, kube, ns[2], on) < 0 || bench_namespace_create(&loop, kube, ns[3], NULL) < 0 ||
	    register_webhook(ns[1], ca_pem) < 0)
		goto out;
	create_phase(&ph[n++], strdup("pod creates, no webhook"), ns[0], "gpu-scheduler", 0);
	create_phase(&ph[n++], strdup("pod creates, webhook patches"), ns[1], "gpu-scheduler", 1);
	/* The same call for pods of another scheduler: the webhook answers "allowed", no patch. What the
	 * apiserver pays for calling any webhook, apart from what our answer makes it do. */
	create_phase(&ph[n++], strdup("pod creates, webhook, not ours"), ns[2], "gsb-nobody", 0);
	create_phase(&ph[n++], strdup("pod creates, no webhook (again)"), ns[3], "gpu-scheduler", 0);
	all_ok = 1;
out:
	bench_request(&loop, kube, "DELETE", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/" WEBHOOK_CONFIG,
		      NULL, NULL, NULL);
	for (int k = 0; k < 4; k++)
		bench_namespace_delete(&loop, kube, ns[k]);
	if (n) {
		char path[512];
		snprintf(path, sizeof(path), "%s/webhook.json", C.out);
		FILE *js = fopen(path, "w");
		printf("\nadmission webhook: %d reviews at %d/s and closed loop over %d TLS connections; %d pod creates over "
		       "%d connections\n",
		       C.requests, C.rate, C.conns, C.pods, C.create_conns);
		report(ph, n, js ? js : stdout);
		if (js)
			fclose(js);
		printf("results: %s\n", path);
	}
	for (int k = 0; k < n; k++) {
		all_ok &= ph[k].bad == 0 && ph[k].ok == ph[k].n;
		free(ph[k].lat_ns);
		free((char *)ph[k].name);
	}
	if (daemon_running) {
		daemon_stopping = 1;
		uv_process_kill(&daemon_proc, SIGTERM);
		while (daemon_running)
			uv_run(&loop, UV_RUN_ONCE);
	}
	free(ca_pem);
	gs_buf_free(&review_buf);
	gs_http_client_close(hook, NULL, NULL);
	gs_http_client_close(health, NULL, NULL);
	gs_kube_close(kube, NULL, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	return all_ok ? 0 : 1;
}
