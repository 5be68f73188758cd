/*
 * bench.c: gpu-scheduler-bench, thousands of pending pods bound by each contender in turn, measured
 * from a watch, on one apiserver, in one run (only same-run ratios mean anything).
 *
 *   build/gpu-scheduler-bench --kubeconfig build/cluster/kubeconfig --nodes 100 --pods 2000 \
 *       [--shape sts|per-pod|mixed|gang|ref] [--contenders raw,gpu-scheduler,kube-scheduler,kube-scheduler-qps] \
 *       [--raw-conns 32] [--kube-scheduler PATH] [--apiserver-pid PID] [--events=false] [--out DIR]
 *       [--foreign N] [--encoding protobuf,json] [--gang-hold MS] [--crd FILE]
 *
 * Contenders:
 *   raw                 the bench POSTs the Bindings itself over --raw-conns connections, no logic:
 *                       the ceiling of this apiserver on this machine. Its "cpu us/pod" is the bench
 *                       process's own over the same window (getrusage): the Bindings (the same TLS
 *                       library and client as the daemon's) and the bench's watch of the pods (JSON),
 *                       what sending a request per pod and reading the pods back costs without a scheduler
 *   gpu-scheduler       build/gpu-scheduler started by the bench (its CPU and peak RSS from /proc), once
 *                       per --encoding (protobuf,json by default: both, side by side, rows
 *                       "gpu-scheduler" and "gpu-scheduler-json"; --kube-api-content-type)
 *   kube-scheduler      the cluster's kube-scheduler (--kube-scheduler; bench.sh: 1.37.2) with its default client
 *                       QPS, pods pinned by nodeSelector
 *   kube-scheduler-qps  the same with --kube-api-qps 10000 --kube-api-burst 10000
 * Each gets a fresh namespace with the same pods (created before it starts, not timed), and the
 * clock runs from its start to the last pod seen bound. Fake Ready nodes bn-0..bn-N-1 are made (and
 * deleted at the end). Output: a table on stdout, DIR/results.json, DIR/bound.csv (bound pods over
 * time per contender) and DIR/bound.png (gnuplot, when installed).
 *
 * Shapes: sts (groups of 1,000 pods named gK-I sharing one map, like StatefulSets), per-pod (each pod
 * its own one-line map), mixed (sts, with every tenth entry naming a node that does not exist: those
 * pods wait, the rest must all bind). Pod i goes to node bn-(i mod N) with GPU (i div N) mod 8, and
 * every pod carries gpu-scheduler.io/allow-shared-devices: "true": beyond 8 pods per node, devices
 * are shared (bare pods are each their own owner for the device ledger).
 *
 * Shape ref: maps as objects (issue 24; src/sched/gpm.h). The pods and placements of sts, but each group
 * of 1,000 pods gK-I has its map in a GPUPlacementMap gK of the namespace (made before the pods, not
 * timed), and its pods carry the reference gpu-scheduler.io/placement-map: gK, the generation
 * annotation and the CUDA_VISIBLE_DEVICES the webhook would have set, and no map text. The bench installs
 * the CRD (--crd, default deploy/crd/gpuplacementmaps.yaml, with kubectl) when the apiserver lacks it,
 * waits until it is Established, and deletes it at the end if it installed it. The raw binder binds the
 * same pods to the same nodes (it reads no map: it binds pod i where the bench put it).
 *
 * Shape gang: the pods are the members of one all-or-nothing gang (gpu-scheduler.io/placement:
 * all-or-nothing, gang-size the map's count: every pod), all named g0-I and carrying one map of
 * --pods lines, spread over the nodes as above, with one owner: a ConfigMap "gang" made in the
 * namespace first (a real object, or the garbage collector would delete pods owned by nothing), named
 * by a controller ownerReference on every pod. Here the contender starts first, on an empty namespace
 * (gpu-scheduler: the bench waits until its log says both caches synced); then the bench creates every
 * member but the last, waits --gang-hold ms (default 2000: the contender has seen them all), and
 * creates the last. The clock starts when the last member's create returned (the bench's clock, not
 * its creationTimestamp, which has whole seconds) and stops when the last member is seen bound:
 * "seconds", pods/s and the latencies measure the gang's binding from its completion. Any member seen
 * bound before the last member's create was sent fails the run. The raw binder, which knows nothing of
 * gangs either, binds every member once the last create returned: the ceiling of the same handing out
 * with no logic. kube-scheduler is skipped (without the Workload API, beta and off in 1.37, it has no gangs: it would bind members as they come,
 * which measures nothing a gang needs). The apiserver's CPU and requests are counted from the last
 * create on (the gang's binding); the contender's CPU and RSS over its whole run (start, every
 * member read and reserved, the binding).
 *
 * --foreign N: N pods of another scheduler, bound at creation to the nodes in turn (10m cpu, 16Mi),
 * in their own namespace for the whole run: what every contender has to list, watch and count.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/log.h"
#include "k8s/kube.h"
#include "k8s/kubeconfig.h"
#include "k8s/watch.h"
#include "util.h"

#define GROUP 1000

struct cfg {
	const char *kubeconfig, *shape, *contenders, *kube_scheduler, *out, *daemon, *encoding, *crd;
	int nodes, pods, raw_conns, apiserver_pid, events, foreign, gang_hold_ms;
};

#define REQ_KINDS 256 /* kinds seen in a run: ~100 on an idle 1.20 apiserver */

/* Requests the apiserver served, by "VERB resource[/subresource]", from its apiserver_request_total. */
struct req_counts {
	int n;
	char key[REQ_KINDS][80];
	double v[REQ_KINDS];
};

struct run {
	const char *name; /* the contender; "gpu-scheduler-json" is gpu-scheduler speaking JSON */
	char ns[64];
	int expected;        /* pods that can bind */
	int64_t *created_ns; /* per pod: when its POST returned */
	int64_t *bound_ns;   /* per pod: when the watch first showed spec.nodeName */
	int bound;
	int wrong; /* pods bound to a node other than their map's, or that should wait */
	int64_t t0, t_end;
	int64_t t0_wall_ms; /* t0 on the wall clock, to compare with the contender's log */
	double ready_s;     /* gpu-scheduler: start to both caches synced, from its log; < 0 unknown */
	double cpu_s, apiserver_cpu_s;
	struct req_counts requests; /* what the apiserver served while this contender ran (a delta) */
	long rss_kb;
	uint64_t rchar, wchar; /* bytes the contender read and wrote (its network traffic, TLS included) */
	int ok;
	int *series; /* bound count per 100 ms since t0 */
	int n_series;
	/* The gang shape: when the first member's create was sent and when the last one's was (a member
	 * exists no earlier than that), and the owner's uid. */
	int64_t first_sent_ns, last_sent_ns;
	char owner_uid[64];
};

static uv_loop_t loop;
static struct gs_kube *kube;
static struct cfg C;
static int pending; /* requests in flight */
static int failures;
static char last_err[256];

/* The gang shape: one all-or-nothing gang of every pod (see the top of this file). */
static int is_gang(void)
{
	return !strcmp(C.shape, "gang");
}

/* The ref shape: maps in GPUPlacementMaps, pods naming theirs (see the top of this file). */
static int is_ref(void)
{
	return !strcmp(C.shape, "ref");
}

/* Pods per group gK-I sharing one map: the whole gang in the gang shape. */
static int group_size(void)
{
	return is_gang() ? C.pods : GROUP;
}

/* ---- requests ----------------------------------------------------------------------------------- */

static void on_done(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	int64_t *stamp = ud;
	pending--;
	if (err || resp->status / 100 != 2) {
		if (!(resp && resp->status == 409)) { /* 409: already there (a re-run) */
			failures++;
			snprintf(last_err, sizeof(last_err), "%s", err ? msg : resp->body);
		}
	}
	if (stamp)
		*stamp = bench_now_ns();
}

static void send_json(const char *method, const char *path, const char *body, const char *ctype, int64_t *stamp)
{
	if (bench_send(kube, method, path, body, ctype, on_done, stamp) == 0)
		pending++;
	else
		failures++;
}

static void wait_all(const char *what, int total)
{
	while (pending > 0) {
		uv_run(&loop, UV_RUN_ONCE);
		bench_progress(what, total - pending, total);
	}
	bench_progress(what, total, total);
}

/* ---- nodes and pods ----------------------------------------------------------------------------- */

static void make_nodes(void)
{
	char path[256], body[1024];
	for (int i = 0; i < C.nodes; i++) {
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"bn-%d\",\"labels\":"
			 "{\"kubernetes.io/hostname\":\"bn-%d\",\"gpu-scheduler.bench/fake\":\"true\"}}}",
			 i, i);
		send_json("POST", "/api/v1/nodes", body, NULL, NULL);
	}
	wait_all("nodes", C.nodes);
	for (int i = 0; i < C.nodes; i++) {
		snprintf(path, sizeof(path), "/api/v1/nodes/bn-%d", i);
		send_json("PATCH", path, "{\"spec\":{\"taints\":null}}", "application/merge-patch+json", NULL);
		snprintf(path, sizeof(path), "/api/v1/nodes/bn-%d/status", i);
		snprintf(
			body, sizeof(body),
			"{\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"1000\",\"nvidia.com/gpu\":\"8\"},"
			"\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"1000\",\"nvidia.com/gpu\":\"8\"},"
			"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Bench\"}]}}");
		send_json("PATCH", path, body, "application/merge-patch+json", NULL);
	}
	wait_all("node status", 2 * C.nodes);
}

/* The node and device of pod i, and whether the map points it at a node that does not exist. */
static int pod_target(int i, char *node, size_t nl, int *dev)
{
	int missing = !strcmp(C.shape, "mixed") && i % 10 == 9;
	if (missing)
		snprintf(node, nl, "bn-missing-%d", i % C.nodes);
	else
		snprintf(node, nl, "bn-%d", i % C.nodes);
	*dev = (i / C.nodes) % 8;
	return missing;
}

static void append_map_line(struct gs_buf *b, int j, int i)
{
	char node[64];
	int dev;
	pod_target(i, node, sizeof(node), &dev);
	gs_buf_printf(b, "%d=%s:%d\\n", j, node, dev);
}

/* Into b (reset first): the map of pod i as a pod annotation's JSON member, the one the ref shape's
 * object holds in its spec.map too (JSON-escaped). */
static void pod_map(struct gs_buf *b, int i)
{
	int group = group_size(), g = i / group, j = i % group;
	gs_buf_reset(b);
	if (is_ref()) {
		gs_buf_printf(b, "\"%s\":\"g%d\",\"%s\":\"1\"", "gpu-scheduler.io/placement-map", g,
			      "gpu-scheduler.io/placement-map-generation");
		return;
	}
	gs_buf_printf(b, "\"gpu-scheduling-map\":\"");
	if (!strcmp(C.shape, "per-pod")) {
		append_map_line(b, j, i);
	} else {
		int first = g * group, last = first + group < C.pods ? first + group : C.pods;
		for (int k = first; k < last; k++)
			append_map_line(b, k - first, k);
	}
	gs_buf_printf(b, "\"");
}

/* What a gang member's metadata carries beside its name and map: the placement annotation (into ann)
 * and the controller ownerReference to the run's owner (into owner). Nothing in the other shapes. */
static void gang_metadata(const struct run *r, struct gs_buf *ann, struct gs_buf *owner)
{
	if (!is_gang())
		return;
	gs_buf_printf(ann, ",\"gpu-scheduler.io/placement\":\"all-or-nothing\"");
	gs_buf_printf(owner,
		      ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"gang\","
		      "\"uid\":\"%s\",\"controller\":true}]",
		      r->owner_uid);
}

/* Creates pods [from, to) and waits for every answer; r->created_ns[i] is when pod i's returned. */
static void make_pods(struct run *r, int kube_sched, int from, int to)
{
	char path[256];
	struct gs_buf map, body, ann, owner;
	int group = group_size();
	gs_buf_init(&map, 0);
	gs_buf_init(&body, 0);
	gs_buf_init(&ann, 0);
	gs_buf_init(&owner, 0);
	gang_metadata(r, &ann, &owner);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", r->ns);
	for (int i = from; i < to; i++) {
		int g = i / group, j = i % group;
		char node[64];
		int dev;
		pod_target(i, node, sizeof(node), &dev);
		pod_map(&map, i);
		gs_buf_reset(&body);
		gs_buf_printf(
			&body,
			"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"g%d-%d\"%s,\"annotations\":"
			"{%s,\"gpu-scheduler.io/allow-shared-devices\":\"true\"%s}},"
			"\"spec\":{\"schedulerName\":\"%s\","
			"\"terminationGracePeriodSeconds\":0,\"automountServiceAccountToken\":false,%s%s%s"
			"\"containers\":[{\"name\":\"main\",\"image\":\"busybox:stable\",\"command\":[\"sleep\",\"1d\"],"
			"\"env\":[{\"name\":\"CUDA_VISIBLE_DEVICES\",\"value\":\"%d\"}]}]}}",
			g, j, owner.data ? owner.data : "", map.data, ann.data ? ann.data : "",
			kube_sched                ? "default-scheduler"
			: !strcmp(r->name, "raw") ? "gsb-nobody"
						  : "gpu-scheduler",
			kube_sched ? "\"nodeSelector\":{\"kubernetes.io/hostname\":\"" : "", kube_sched ? node : "",
			kube_sched ? "\"}," : "", dev);
		if (i == from && !r->first_sent_ns)
			r->first_sent_ns = bench_now_ns();
		if (i == C.pods - 1)
			r->last_sent_ns = bench_now_ns();
		send_json("POST", path, body.data, NULL, &r->created_ns[i]);
		if (pending >= 256) /* keep memory flat: at most 256 bodies queued */
			while (pending >= 128)
				uv_run(&loop, UV_RUN_ONCE);
		bench_progress("pods", i + 1 - from - pending, to - from);
	}
	wait_all("pods", to - from);
	gs_buf_free(&map);
	gs_buf_free(&body);
	gs_buf_free(&ann);
	gs_buf_free(&owner);
}

/* The ref shape: one GPUPlacementMap gK per group of pods, holding the map an sts pod of the group
 * carries inline, in r->ns; waits for every answer. */
static void make_gpms(struct run *r)
{
	char path[256];
	struct gs_buf body;
	int group = group_size();
	gs_buf_init(&body, 0);
	snprintf(path, sizeof(path), "/apis/gpu-scheduler.io/v1alpha1/namespaces/%s/gpuplacementmaps", r->ns);
	for (int first = 0, g = 0; first < C.pods; first += group, g++) {
		int last = first + group < C.pods ? first + group : C.pods;
		gs_buf_reset(&body);
		gs_buf_printf(&body,
			      "{\"apiVersion\":\"gpu-scheduler.io/v1alpha1\",\"kind\":\"GPUPlacementMap\","
			      "\"metadata\":{\"name\":\"g%d\"},\"spec\":{\"map\":\"",
			      g);
		for (int k = first; k < last; k++)
			append_map_line(&body, k - first, k);
		gs_buf_printf(&body, "\"}}");
		send_json("POST", path, body.data, NULL, NULL);
	}
	wait_all("placement maps", (C.pods + group - 1) / group);
	gs_buf_free(&body);
}

#define CRD_NAME "gpuplacementmaps.gpu-scheduler.io"

/* The ref shape needs the GPUPlacementMap CRD: applied from C.crd with kubectl when the apiserver does
 * not serve the resource, then waited for (Established, and the resource listed). 1 when this run
 * installed it (to delete at the end), 0 when it was there, -1 on failure. */
static int crd_install(void)
{
	char cmd[1024];
	const char *list = "/apis/gpu-scheduler.io/v1alpha1/gpuplacementmaps?limit=1";
	const char *crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" CRD_NAME;
	struct gs_buf body;
	gs_buf_init(&body, 0);
	/* One being deleted (an earlier run's, a test's) still lists but refuses creates: wait it out. */
	for (int64_t until = bench_now_ns() + 60000000000LL; bench_now_ns() < until; usleep(500000)) {
		gs_buf_reset(&body);
		if (bench_request(&loop, kube, "GET", crd, NULL, NULL, &body) != 200 || !body.data ||
		    !strstr(body.data, "\"deletionTimestamp\""))
			break;
	}
	gs_buf_free(&body);
	if (bench_request(&loop, kube, "GET", list, NULL, NULL, NULL) == 200)
		return 0;
	snprintf(cmd, sizeof(cmd),
		 "kubectl --kubeconfig '%s' apply -f '%s' >/dev/null && kubectl --kubeconfig '%s' wait "
		 "--for condition=established --timeout=60s crd/" CRD_NAME " >/dev/null",
		 C.kubeconfig, C.crd, C.kubeconfig);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot install the GPUPlacementMap CRD from %s\n", C.crd);
		return -1;
	}
	for (int64_t until = bench_now_ns() + 30000000000LL; bench_now_ns() < until; usleep(200000))
		if (bench_request(&loop, kube, "GET", list, NULL, NULL, NULL) == 200)
			return 1;
	fprintf(stderr, "the GPUPlacementMap CRD is established but its resource is not served after 30 s\n");
	return -1;
}

static void crd_delete(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd),
		 "kubectl --kubeconfig '%s' delete crd " CRD_NAME " --ignore-not-found --wait=false >/dev/null",
		 C.kubeconfig);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot delete the GPUPlacementMap CRD\n");
}

/* Pods that can bind (their map names a node that exists). */
static int expected_bound(void)
{
	int n = 0;
	for (int i = 0; i < C.pods; i++) {
		char node[64];
		int dev;
		n += !pod_target(i, node, sizeof(node), &dev);
	}
	return n;
}

/* The gang's owner: ConfigMap "gang" in r->ns, its uid into r->owner_uid. 0, or -1 with a message. */
static int make_owner(struct run *r)
{
	char path[256];
	struct gs_buf body;
	int rc = -1;
	gs_buf_init(&body, 0);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", r->ns);
	int status = bench_request(&loop, kube, "POST", path,
				   "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"gang\"}}",
				   NULL, &body);
	const char *u = status / 100 == 2 && body.data ? strstr(body.data, "\"uid\":\"") : NULL;
	size_t n = u ? strcspn(u + 7, "\"") : 0;
	if (n && n < sizeof(r->owner_uid)) {
		memcpy(r->owner_uid, u + 7, n);
		r->owner_uid[n] = '\0';
		rc = 0;
	} else {
		fprintf(stderr, "%s: cannot create the gang's owner (%d): %.200s\n", r->name, status,
			body.data ? body.data : "");
	}
	gs_buf_free(&body);
	return rc;
}

/* Pods of another scheduler, bound at creation (spec.nodeName), in namespace ns. */
static void make_foreign(const char *ns)
{
	char path[256], body[1024];

	if (bench_namespace_create(&loop, kube, ns, NULL) < 0) {
		fprintf(stderr, "cannot create namespace %s\n", ns);
		exit(1);
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	for (int i = 0; i < C.foreign; i++) {
		snprintf(
			body, sizeof(body),
			"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"f-%d\"},\"spec\":{"
			"\"nodeName\":\"bn-%d\",\"terminationGracePeriodSeconds\":0,\"automountServiceAccountToken\":false,"
			"\"containers\":[{\"name\":\"main\",\"image\":\"busybox:stable\",\"resources\":{\"requests\":"
			"{\"cpu\":\"10m\",\"memory\":\"16Mi\"}}}]}}",
			i, i % C.nodes);
		send_json("POST", path, body, NULL, NULL);
		if (pending >= 256)
			while (pending >= 128)
				uv_run(&loop, UV_RUN_ONCE);
		bench_progress("foreign pods", i + 1 - pending, C.foreign);
	}
	wait_all("foreign pods", C.foreign);
}

/* ---- the watch that measures ---------------------------------------------------------------------- */

static struct run *watching;

static void w_upsert(struct gs_watch *w, enum gs_obj_kind kind, const void *obj, void *ud)
{
	const struct gs_pod_obj *p = obj;
	struct run *r = watching;
	int g, j;
	if (!r || !p->node_name || sscanf(p->name, "g%d-%d", &g, &j) != 2)
		return;
	int i = g * group_size() + j;
	if (i < 0 || i >= C.pods || r->bound_ns[i])
		return;
	r->bound_ns[i] = bench_now_ns();
	r->bound++;
	char node[64];
	int dev;
	if (pod_target(i, node, sizeof(node), &dev) || strcmp(node, p->node_name) != 0)
		r->wrong++;
}

static void w_remove(struct gs_watch *w, enum gs_obj_kind kind, const char *key, void *ud)
{
}

static int synced;
static void w_synced(struct gs_watch *w, void *ud)
{
	synced = 1;
}

/* ---- what the apiserver served ------------------------------------------------------------------ */

/* The value of label name in a Prometheus series' {...}, or "" (into out). */
static void label(const char *series, const char *name, char *out, size_t size)
{
	char pat[48];
	snprintf(pat, sizeof(pat), "%s=\"", name);
	const char *p = strstr(series, pat);
	size_t n = 0;
	if (p) {
		p += strlen(pat);
		while (p[n] && p[n] != '"' && n + 1 < size)
			n++;
		memcpy(out, p, n);
	}
	out[n] = '\0';
}

/* apiserver_request_total summed by verb, resource and subresource (WATCH and LIST included). */
static void read_requests(struct req_counts *rc)
{
	struct gs_buf body;
	gs_buf_init(&body, 0);
	memset(rc, 0, sizeof(*rc));
	if (bench_request(&loop, kube, "GET", "/metrics", NULL, NULL, &body) != 200) {
		gs_buf_free(&body);
		return;
	}
	for (char *line = body.data; line && *line;) {
		char *eol = strchr(line, '\n');
		if (eol)
			*eol = '\0';
		if (!strncmp(line, "apiserver_request_total{", 24)) {
			char verb[16], res[32], sub[24], key[80];
			const char *val = strrchr(line, ' ');
			label(line, "verb", verb, sizeof(verb));
			label(line, "resource", res, sizeof(res));
			label(line, "subresource", sub, sizeof(sub));
			snprintf(key, sizeof(key), "%s %s%s%s", verb, res, *sub ? "/" : "", sub);
			int k = 0;
			while (k < rc->n && strcmp(rc->key[k], key) != 0)
				k++;
			if (k == rc->n && rc->n < REQ_KINDS)
				snprintf(rc->key[rc->n++], sizeof(rc->key[0]), "%s", key);
			if (k < rc->n && val)
				rc->v[k] += strtod(val + 1, NULL);
		}
		line = eol ? eol + 1 : NULL;
	}
	gs_buf_free(&body);
}

/* after -= before, key by key. */
static void requests_delta(struct req_counts *after, const struct req_counts *before)
{
	for (int k = 0; k < after->n; k++)
		for (int j = 0; j < before->n; j++)
			if (!strcmp(after->key[k], before->key[j]))
				after->v[k] -= before->v[j];
}

/* ---- contenders --------------------------------------------------------------------------------- */

/* This process's CPU so far (user and system), seconds: the raw binder's, which runs in it. */
static double self_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void on_proc_exit(uv_process_t *p, int64_t status, int sig);

static int spawn_contender(const struct run *r, uv_process_t *proc, const char *log)
{
	char *args[16];
	int n = 0;
	char qps_arg[] = "--kube-api-qps=10000", burst_arg[] = "--kube-api-burst=10000";
	char events_arg[32];
	snprintf(events_arg, sizeof(events_arg), "--events=%s", C.events ? "true" : "false");
	if (!strncmp(r->name, "gpu-scheduler", 13)) {
		args[n++] = (char *)C.daemon;
		args[n++] = !strcmp(r->name, "gpu-scheduler-json") ? "--kube-api-content-type=json"
								   : "--kube-api-content-type=protobuf";
		args[n++] = "--kubeconfig";
		args[n++] = (char *)C.kubeconfig;
		args[n++] = "--no-webhook";
		args[n++] = "--health-addr=127.0.0.1:0";
		args[n++] = "--secure-addr="; /* no port of its own to collide on: the bench reads no /metrics of it */
		args[n++] = events_arg;
		/* the gang shape is one gang of every pod: measured without the namespaces' budgets */
		args[n++] = "--gang-reservations-per-namespace=0";
		args[n++] = "--gang-reserved-gpus-per-namespace=0";
	} else {
		args[n++] = (char *)C.kube_scheduler;
		args[n++] = "--kubeconfig";
		args[n++] = (char *)C.kubeconfig;
		args[n++] = "--leader-elect=false";
		args[n++] = "--secure-port=0"; /* 1.24+ has no insecure port; bench.sh passes the cluster's binary */
		if (!strcmp(r->name, "kube-scheduler-qps")) {
			args[n++] = qps_arg;
			args[n++] = burst_arg;
		}
	}
	args[n] = NULL;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	uv_stdio_container_t stdio[3] = {
		{.flags = UV_IGNORE},
		{.flags = UV_INHERIT_FD, .data.fd = fd},
		{.flags = UV_INHERIT_FD, .data.fd = fd},
	};
	uv_process_options_t po = {
		.file = args[0], .args = args, .stdio = stdio, .stdio_count = 3, .exit_cb = on_proc_exit};
	int rc = uv_spawn(&loop, proc, &po);
	close(fd);
	return rc;
}

/* Seconds from t0_wall_ms to the later of gpu-scheduler's "nodes synced" and "pods synced" log lines
 * (its /readyz turns ok then: --no-webhook), or -1 when the log does not show both. */
static double log_ready_s(const char *log, int64_t t0_wall_ms)
{
	FILE *f = fopen(log, "r");
	char line[1024];
	int64_t nodes_ms = 0, pods_ms = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && !(nodes_ms && pods_ms)) {
		struct tm tm = {0};
		int ms;
		int64_t *slot = strstr(line, "info  nodes synced: ")  ? &nodes_ms
				: strstr(line, "info  pods synced: ") ? &pods_ms
								      : NULL;
		if (!slot || *slot ||
		    sscanf(line, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
			   &tm.tm_min, &tm.tm_sec, &ms) != 7)
			continue;
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		*slot = (int64_t)timegm(&tm) * 1000 + ms;
	}
	fclose(f);
	if (!nodes_ms || !pods_ms)
		return -1;
	return (double)((nodes_ms > pods_ms ? nodes_ms : pods_ms) - t0_wall_ms) / 1000.0;
}

static void raw_bind_all(struct run *r)
{
	char path[256], body[512];
	for (int i = 0; i < C.pods; i++) {
		char node[64];
		int dev;
		if (pod_target(i, node, sizeof(node), &dev))
			continue;
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/g%d-%d/binding", r->ns, i / group_size(),
			 i % group_size());
		snprintf(body, sizeof(body),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"g%d-%d\"},"
			 "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"%s\"}}",
			 i / group_size(), i % group_size(), node);
		send_json("POST", path, body, NULL, NULL);
	}
}

static void on_proc_exit(uv_process_t *p, int64_t status, int sig)
{
	uv_close((uv_handle_t *)p, NULL);
}

/* Runs the loop for ms milliseconds. */
static void run_for_ms(int64_t ms)
{
	for (int64_t until = bench_now_ns() + ms * 1000000; bench_now_ns() < until;) {
		uv_run(&loop, UV_RUN_NOWAIT);
		usleep(2000);
	}
}

/* What the apiserver has served and spent so far, for the deltas of a run. */
static void apiserver_sample(struct req_counts *req, double *cpu_s)
{
	read_requests(req);
	if (C.apiserver_pid)
		bench_proc_usage(C.apiserver_pid, cpu_s, NULL);
}

/*
 * The gang shape, once the contender runs: waits until gpu-scheduler says both caches synced (log, or
 * NULL for the raw binder), creates every member but the last, waits --gang-hold ms, samples the
 * apiserver (into req0, api_cpu0) and creates the last member. The clock r->t0 starts when its create
 * returned. -1 when gpu-scheduler did not get ready within a minute.
 */
static int gang_arrive(struct run *r, const char *log, struct req_counts *req0, double *api_cpu0)
{
	for (int64_t until = bench_now_ns() + 60000000000LL; log && r->ready_s < 0; run_for_ms(50)) {
		r->ready_s = log_ready_s(log, r->t0_wall_ms);
		if (r->ready_s < 0 && bench_now_ns() > until) {
			fprintf(stderr, "%s: not ready after 60 s (see %s)\n", r->name, log);
			return -1;
		}
	}
	make_pods(r, 0, 0, C.pods - 1);
	run_for_ms(C.gang_hold_ms);
	apiserver_sample(req0, api_cpu0);
	make_pods(r, 0, C.pods - 1, C.pods);
	r->t0 = r->created_ns[C.pods - 1];
	return 0;
}

/* Until every pod that can bind is bound or the deadline: the bound count every 100 ms into
 * r->series, the contender's CPU, RSS and bytes (proc: NULL for the raw binder). */
static void measure(struct run *r, uv_process_t *proc)
{
	int64_t deadline = r->t0 + (int64_t)(60 + C.pods / 20) * 1000000000LL;
	r->n_series = 0;
	r->series = calloc(100000, sizeof(int));
	while (r->bound < r->expected && bench_now_ns() < deadline) {
		uv_run(&loop, UV_RUN_NOWAIT);
		int slot = (int)((bench_now_ns() - r->t0) / 100000000);
		while (r->n_series <= slot && r->n_series < 100000)
			r->series[r->n_series++] = r->bound;
		if (proc) {
			bench_proc_usage(proc->pid, &r->cpu_s, &r->rss_kb);
			bench_proc_io(proc->pid, &r->rchar, &r->wchar);
		}
		bench_progress(r->name, r->bound, r->expected);
		usleep(2000);
	}
	r->t_end = bench_now_ns();
	if (r->n_series < 100000) /* the last slot holds the final count */
		r->series[r->n_series++] = r->bound;
}

/* Members seen bound before the last member's create was sent (the gang shape; 0 in the others). */
static int bound_early(const struct run *r)
{
	int n = 0;
	for (int i = 0; is_gang() && i < C.pods; i++)
		n += r->bound_ns[i] && r->bound_ns[i] < r->last_sent_ns;
	return n;
}

static void run_one(struct run *r)
{
	char log[512];
	snprintf(r->ns, sizeof(r->ns), "gsb-%s-%04x", r->name, (unsigned)(bench_now_ns() & 0xffff));
	r->created_ns = calloc((size_t)C.pods, sizeof(int64_t));
	r->bound_ns = calloc((size_t)C.pods, sizeof(int64_t));
	if (bench_namespace_create(&loop, kube, r->ns, NULL) < 0 || (is_gang() && make_owner(r) < 0)) {
		failures++;
		return; /* r->ok stays 0 */
	}
	int kube_sched = !strncmp(r->name, "kube-scheduler", 14), raw = !strcmp(r->name, "raw");
	fprintf(stderr, "== %s: namespace %s\n", r->name, r->ns);
	r->expected = expected_bound();
	if (is_ref())
		make_gpms(r);
	if (!is_gang())
		make_pods(r, kube_sched, 0, C.pods);

	char wpath[128];
	snprintf(wpath, sizeof(wpath), "/api/v1/namespaces/%s/pods", r->ns);
	struct gs_watch_opts wo = {
		.kind = GS_OBJ_POD, .path = wpath, .map_annotation = "gpu-scheduling-map", .seed = 1};
	struct gs_watch_handlers wh = {.upsert = w_upsert, .remove = w_remove, .synced = w_synced};
	struct gs_watch *w;
	watching = r;
	synced = 0;
	gs_watch_start(&loop, kube, &wo, &wh, NULL, &w);
	while (!synced)
		uv_run(&loop, UV_RUN_ONCE);

	double api_cpu0 = 0, api_cpu1 = 0;
	struct req_counts req0;
	apiserver_sample(&req0, &api_cpu0);
	uv_process_t proc;
	int spawned = 0;
	r->t0 = bench_now_ns();
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	r->t0_wall_ms = (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000;
	r->ready_s = -1;
	snprintf(log, sizeof(log), "%s/%s.log", C.out, r->name);
	if (!raw) {
		int rc = spawn_contender(r, &proc, log);
		if (rc < 0) {
			fprintf(stderr, "%s: cannot start: %s\n", r->name, uv_strerror(rc));
			r->ok = 0;
			goto out;
		}
		spawned = 1;
	}
	if (is_gang() && gang_arrive(r, raw ? NULL : log, &req0, &api_cpu0) < 0) {
		r->t_end = r->t0;
		goto stop;
	}
	double self0 = raw ? self_cpu_s() : 0;
	if (raw)
		raw_bind_all(r);
	measure(r, spawned ? &proc : NULL);
	if (raw)
		r->cpu_s = self_cpu_s() - self0;
	/* A second more: anything bound now was bound wrongly (the pods left wait for missing nodes). */
	run_for_ms(1000);
	int early = bound_early(r);
	r->ok = r->bound == r->expected && r->wrong == 0 && early == 0;
	if (r->wrong)
		fprintf(stderr, "\n%s: %d pods bound where their map does not say\n", r->name, r->wrong);
	if (early)
		fprintf(stderr, "\n%s: %d gang members bound before the last member was created\n", r->name, early);
	if (r->bound != r->expected)
		fprintf(stderr, "\n%s: only %d of %d bound before the deadline\n", r->name, r->bound, r->expected);
	if (C.apiserver_pid) {
		bench_proc_usage(C.apiserver_pid, &api_cpu1, NULL);
		r->apiserver_cpu_s = api_cpu1 - api_cpu0;
	}
	read_requests(&r->requests);
	requests_delta(&r->requests, &req0);
stop:
	if (spawned) {
		bench_proc_usage(proc.pid, &r->cpu_s, &r->rss_kb);
		bench_proc_io(proc.pid, &r->rchar, &r->wchar);
		uv_process_kill(&proc, SIGTERM);
		uv_run(&loop, UV_RUN_NOWAIT);
		if (!strncmp(r->name, "gpu-scheduler", 13))
			r->ready_s = log_ready_s(log, r->t0_wall_ms);
	}
	wait_all("binds", C.pods);
out:
	watching = NULL;
	gs_watch_stop(w, NULL, NULL);
	bench_namespace_delete(&loop, kube, r->ns);
	if (spawned)
		while (uv_is_active((uv_handle_t *)&proc))
			uv_run(&loop, UV_RUN_ONCE);
}

/* ---- report ------------------------------------------------------------------------------------- */

/* The gang shape's figures of one run, in ms from the last member's create returned (r->t0). */
struct gang_figures {
	double first_ms, last_ms; /* the first and the last member seen bound */
	double create_ms;         /* the first member's create sent to the last-but-one's returned */
	double last_create_ms;    /* the last member's create, sent to returned */
	int early;                /* members bound before the last member's create was sent */
};

static void gang_figures(const struct run *r, struct gang_figures *f)
{
	int64_t first = 0, last = 0, made = 0;
	for (int i = 0; i < C.pods; i++) {
		if (r->bound_ns[i] && (!first || r->bound_ns[i] < first))
			first = r->bound_ns[i];
		if (r->bound_ns[i] > last)
			last = r->bound_ns[i];
		if (i < C.pods - 1 && r->created_ns[i] > made)
			made = r->created_ns[i];
	}
	f->first_ms = first ? (double)(first - r->t0) / 1e6 : -1;
	f->last_ms = last ? (double)(last - r->t0) / 1e6 : -1;
	f->create_ms = made ? (double)(made - r->first_sent_ns) / 1e6 : 0;
	f->last_create_ms = (double)(r->t0 - r->last_sent_ns) / 1e6;
	f->early = bound_early(r);
}

/* ,"gang":{...} for results.json, or ,"gang":null outside the gang shape. */
static void gang_json(FILE *js, const struct run *r)
{
	struct gang_figures f;
	if (!is_gang() || !r->last_sent_ns) {
		fprintf(js, ",\"gang\":null");
		return;
	}
	gang_figures(r, &f);
	fprintf(js,
		",\"gang\":{\"members\":%d,\"hold_ms\":%d,\"create_ms\":%.1f,\"last_create_ms\":%.1f,"
		"\"first_bound_ms\":%.1f,\"last_bound_ms\":%.1f,\"bound_before_last\":%d}",
		C.pods, C.gang_hold_ms, f.create_ms, f.last_create_ms, f.first_ms, f.last_ms, f.early);
}

/* The gang shape's lines under the table: from the last member's creation to its gang bound. */
static void gang_report(const struct run *runs, int n)
{
	if (!is_gang())
		return;
	printf("\nall-or-nothing gang of %d members (one owner), the last created %d ms after the others; from its create "
	       "returned (the bench's clock) to the first and the last member seen bound:\n",
	       C.pods, C.gang_hold_ms);
	for (int k = 0; k < n; k++) {
		struct gang_figures f;
		if (!runs[k].last_sent_ns)
			continue;
		gang_figures(&runs[k], &f);
		printf("  %-20s first %9.1f ms, last %9.1f ms; %d bound before the last member existed "
		       "(members 0..%d created in %.0f ms, the last create took %.1f ms)\n",
		       runs[k].name, f.first_ms, f.last_ms, f.early, C.pods - 2, f.create_ms, f.last_create_ms);
	}
}

static void report(struct run *runs, int n)
{
	char path[512];
	double raw_tp = 0, ks_tp = 0;
	double tp[8];
	int64_t *lat = malloc(sizeof(int64_t) * (size_t)C.pods);
	snprintf(path, sizeof(path), "%s/results.json", C.out);
	FILE *js = fopen(path, "w");
	fprintf(js, "{\"nodes\":%d,\"pods\":%d,\"foreign_pods\":%d,\"shape\":\"%s\",\"events\":%s,\"contenders\":[",
		C.nodes, C.pods, C.foreign, C.shape, C.events ? "true" : "false");
	printf("\n%d pods (%s), %d nodes, %d pods of another scheduler, %s\n", C.pods, C.shape, C.nodes, C.foreign,
	       C.events ? "events on" : "events off");
	printf("%-20s %8s %8s %10s %9s %9s %9s %10s %9s %10s %10s %8s %8s\n", "contender", "ok", "ready s", "seconds",
	       "pods/s", "p50 ms", "p99 ms", "cpu us/pod", "rss MiB", "KiB in/pod", "api us/pod", "x raw", "x k-s");
	for (int k = 0; k < n; k++) {
		struct run *r = &runs[k];
		double secs = (double)(r->t_end - r->t0) / 1e9;
		tp[k] = secs > 0 ? r->bound / secs : 0;
		if (!strcmp(r->name, "raw"))
			raw_tp = tp[k];
		if (!strcmp(r->name, "kube-scheduler-qps") || (!ks_tp && !strcmp(r->name, "kube-scheduler")))
			ks_tp = tp[k];
	}
	for (int k = 0; k < n; k++) {
		struct run *r = &runs[k];
		int m = 0;
		for (int i = 0; i < C.pods; i++)
			if (r->bound_ns[i] && r->created_ns[i])
				lat[m++] = r->bound_ns[i] - (r->created_ns[i] > r->t0 ? r->created_ns[i] : r->t0);
		bench_sort_ns(lat, m);
		double secs = (double)(r->t_end - r->t0) / 1e9;
		double cpu_us = r->bound ? r->cpu_s / r->bound * 1e6 : 0;
		double api_us = r->bound ? r->apiserver_cpu_s / r->bound * 1e6 : 0;
		char ready[16] = "-", ready_js[16] = "null";
		if (r->ready_s >= 0) {
			snprintf(ready, sizeof(ready), "%.3f", r->ready_s);
			snprintf(ready_js, sizeof(ready_js), "%.3f", r->ready_s);
		}
		double kib_in = r->bound ? (double)r->rchar / 1024 / r->bound : 0;
		printf("%-20s %8s %8s %10.2f %9.0f %9.1f %9.1f %10.1f %9.1f %10.1f %10.1f %8.2f %8.2f\n", r->name,
		       r->ok ? "yes" : "NO", ready, secs, tp[k], bench_pct_ms(lat, m, 0.5), bench_pct_ms(lat, m, 0.99),
		       cpu_us, (double)r->rss_kb / 1024, kib_in, api_us, raw_tp ? tp[k] / raw_tp : 0,
		       ks_tp ? tp[k] / ks_tp : 0);
		fprintf(js,
			"%s{\"name\":\"%s\",\"ok\":%s,\"bound\":%d,\"expected\":%d,\"seconds\":%.3f,\"pods_per_s\":%.1f,"
			"\"p50_ms\":%.1f,\"p90_ms\":%.1f,\"p99_ms\":%.1f,\"cpu_s\":%.3f,\"cpu_us_per_pod\":%.1f,\"peak_rss_kb\":%ld,"
			"\"apiserver_cpu_s\":%.3f,\"ready_s\":%s,\"read_bytes\":%llu,\"written_bytes\":%llu,"
			"\"apiserver_requests\":{",
			k ? "," : "", r->name, r->ok ? "true" : "false", r->bound, r->expected, secs, tp[k],
			bench_pct_ms(lat, m, 0.5), bench_pct_ms(lat, m, 0.9), bench_pct_ms(lat, m, 0.99), r->cpu_s,
			cpu_us, r->rss_kb, r->apiserver_cpu_s, ready_js, (unsigned long long)r->rchar,
			(unsigned long long)r->wchar);
		for (int q = 0, first = 1; q < r->requests.n; q++) {
			if (r->requests.v[q] <= 0)
				continue;
			fprintf(js, "%s\"%s\":%.0f", first ? "" : ",", r->requests.key[q], r->requests.v[q]);
			first = 0;
		}
		fprintf(js, "}");
		gang_json(js, &runs[k]);
		fprintf(js, "}");
	}
	fprintf(js, "]}\n");
	gang_report(runs, n);
	/* gpu-scheduler in both encodings in this run: protobuf against JSON. */
	const struct run *pb = NULL, *js_run = NULL;
	for (int k = 0; k < n; k++) {
		if (!strcmp(runs[k].name, "gpu-scheduler"))
			pb = &runs[k];
		if (!strcmp(runs[k].name, "gpu-scheduler-json"))
			js_run = &runs[k];
	}
	if (pb && js_run && pb->bound && js_run->bound && pb->t_end > pb->t0 && js_run->t_end > js_run->t0) {
		double tp_pb = pb->bound / ((double)(pb->t_end - pb->t0) / 1e9);
		double tp_js = js_run->bound / ((double)(js_run->t_end - js_run->t0) / 1e9);
		printf("\ngpu-scheduler, protobuf against JSON: pods/s %.2fx, CPU per pod %.2fx, KiB in per pod %.2fx, "
		       "apiserver CPU per pod %.2fx\n",
		       tp_pb / tp_js, js_run->cpu_s > 0 ? (pb->cpu_s / pb->bound) / (js_run->cpu_s / js_run->bound) : 0,
		       js_run->rchar ? ((double)pb->rchar / pb->bound) / ((double)js_run->rchar / js_run->bound) : 0,
		       js_run->apiserver_cpu_s > 0
			       ? (pb->apiserver_cpu_s / pb->bound) / (js_run->apiserver_cpu_s / js_run->bound)
			       : 0);
	}
	/* What each contender made the apiserver do, per pod bound: where its CPU went. */
	printf("\napiserver requests per pod bound (>= 0.01; WATCH counts a watch, not its events):\n");
	for (int k = 0; k < n; k++) {
		struct run *r = &runs[k];
		printf("  %-20s", r->name);
		for (int q = 0; q < r->requests.n && r->bound; q++)
			if (r->requests.v[q] / r->bound >= 0.01)
				printf(" %s %.2f;", r->requests.key[q], r->requests.v[q] / r->bound);
		printf("\n");
	}
	fclose(js);
	free(lat);

	snprintf(path, sizeof(path), "%s/bound.csv", C.out);
	FILE *csv = fopen(path, "w");
	int longest = 0;
	fprintf(csv, "seconds");
	for (int k = 0; k < n; k++) {
		fprintf(csv, ",%s", runs[k].name);
		if (runs[k].n_series > longest)
			longest = runs[k].n_series;
	}
	fprintf(csv, "\n");
	for (int t = 0; t < longest; t++) {
		fprintf(csv, "%.1f", t / 10.0);
		for (int k = 0; k < n; k++)
			fprintf(csv, ",%d",
				runs[k].n_series ? runs[k].series[t < runs[k].n_series ? t : runs[k].n_series - 1] : 0);
		fprintf(csv, "\n");
	}
	fclose(csv);

	if (access("/usr/bin/gnuplot", X_OK) == 0) {
		char cmd[2048];
		int len = snprintf(
			cmd, sizeof(cmd),
			"gnuplot -e \"set terminal png size 900,500; set output '%s/bound.png'; set datafile separator ',';"
			" set key autotitle columnhead left top; set xlabel 'seconds'; set ylabel 'pods bound';"
			" set title '%d pods, %d nodes (%s)'; plot ",
			C.out, C.pods, C.nodes, C.shape);
		for (int k = 0; k < n; k++)
			len += snprintf(cmd + len, sizeof(cmd) - (size_t)len,
					"%s'%s/bound.csv' using 1:%d with lines lw 2", k ? ", " : "", C.out, k + 2);
		snprintf(cmd + len, sizeof(cmd) - (size_t)len, "\"");
		if (system(cmd) != 0)
			fprintf(stderr, "gnuplot failed\n");
	}
	printf("results: %s/results.json, %s/bound.csv%s\n", C.out, C.out,
	       access("/usr/bin/gnuplot", X_OK) == 0 ? ", bound.png" : "");
}

/* The runs in order: --contenders, with gpu-scheduler once per --encoding ("gpu-scheduler" for
 * protobuf, "gpu-scheduler-json" for JSON). Returns how many (at most max); exits on a bad encoding. */
static int contender_names(const char **out, int max)
{
	static char list[256], enc[64];
	int n = 0;
	snprintf(list, sizeof(list), "%s", C.contenders);
	for (char *t = strtok(list, ","); t && n < max; t = strtok(NULL, ",")) {
		if (strcmp(t, "gpu-scheduler") != 0) {
			out[n++] = t;
			continue;
		}
		snprintf(enc, sizeof(enc), "%s", C.encoding);
		for (const char *e = enc; *e && n < max;) {
			size_t l = strcspn(e, ",");
			if (l == 8 && !strncmp(e, "protobuf", 8))
				out[n++] = "gpu-scheduler";
			else if (l == 4 && !strncmp(e, "json", 4))
				out[n++] = "gpu-scheduler-json";
			else {
				fprintf(stderr, "--encoding: %.*s is neither protobuf nor json\n", (int)l, e);
				exit(2);
			}
			e += l + (e[l] == ',');
		}
	}
	return n;
}

/* ---- main --------------------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: gpu-scheduler-bench --kubeconfig FILE [--nodes N] [--pods M] [--shape sts|per-pod|mixed|gang|ref]\n"
		"  [--contenders raw,gpu-scheduler,kube-scheduler,kube-scheduler-qps] [--raw-conns K]\n"
		"  [--kube-scheduler PATH] [--daemon PATH] [--apiserver-pid PID] [--events=false] [--out DIR]\n"
		"  [--foreign N] [--encoding protobuf,json] [--gang-hold MS] [--crd FILE]\n");
}

int main(int argc, char **argv)
{
	C = (struct cfg){.shape = "sts",
			 .contenders = "raw,gpu-scheduler,kube-scheduler,kube-scheduler-qps",
			 .kube_scheduler = "/var/cache/gpu-scheduler/k8s-1.37.2/bin/kube-scheduler",
			 .out = "build/bench",
			 .daemon = "build/gpu-scheduler",
			 .encoding = "protobuf,json",
			 .crd = "deploy/crd/gpuplacementmaps.yaml",
			 .nodes = 100,
			 .pods = 1000,
			 .raw_conns = 32,
			 .events = 1,
			 .gang_hold_ms = 2000};
	static const struct option lo[] = {{"kubeconfig", 1, 0, 'k'},
					   {"nodes", 1, 0, 'n'},
					   {"pods", 1, 0, 'p'},
					   {"shape", 1, 0, 's'},
					   {"contenders", 1, 0, 'c'},
					   {"raw-conns", 1, 0, 'r'},
					   {"kube-scheduler", 1, 0, 'K'},
					   {"daemon", 1, 0, 'd'},
					   {"apiserver-pid", 1, 0, 'a'},
					   {"events", 1, 0, 'e'},
					   {"out", 1, 0, 'o'},
					   {"help", 0, 0, 'h'},
					   {"foreign", 1, 0, 'f'},
					   {"encoding", 1, 0, 'E'},
					   {"gang-hold", 1, 0, 'G'},
					   {"crd", 1, 0, 'C'},
					   {0, 0, 0, 0}};
	int o;
	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'k':
			C.kubeconfig = optarg;
			break;
		case 'n':
			C.nodes = atoi(optarg);
			break;
		case 'p':
			C.pods = atoi(optarg);
			break;
		case 's':
			C.shape = optarg;
			break;
		case 'c':
			C.contenders = optarg;
			break;
		case 'r':
			C.raw_conns = atoi(optarg);
			break;
		case 'K':
			C.kube_scheduler = optarg;
			break;
		case 'd':
			C.daemon = optarg;
			break;
		case 'a':
			C.apiserver_pid = atoi(optarg);
			break;
		case 'e':
			C.events = strcmp(optarg, "false") != 0;
			break;
		case 'o':
			C.out = optarg;
			break;
		case 'f':
			C.foreign = atoi(optarg);
			break;
		case 'E':
			C.encoding = optarg;
			break;
		case 'G':
			C.gang_hold_ms = atoi(optarg);
			break;
		case 'C':
			C.crd = optarg;
			break;
		default:
			usage();
			return o == 'h' ? 0 : 2;
		}
	}
	if (!C.kubeconfig || C.nodes < 1 || C.pods < 1 || C.raw_conns < 1 || C.foreign < 0 || C.gang_hold_ms < 0 ||
	    (strcmp(C.shape, "sts") && strcmp(C.shape, "per-pod") && strcmp(C.shape, "mixed") && !is_gang() &&
	     !is_ref()) ||
	    (is_gang() && C.pods < 2)) {
		usage();
		return 2;
	}
	gs_log_setup(GS_LOG_WARN, GS_LOG_TEXT);
	signal(SIGPIPE, SIG_IGN);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", C.out);
	if (system(cmd) != 0)
		return 1;
	struct gs_kubeconfig kc;
	char err[512];
	if (gs_kubeconfig_load(C.kubeconfig, &kc, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	uv_loop_init(&loop);
	/* protobuf: the bench's own watch (the same for every contender) costs the apiserver less. */
	struct gs_kube_opts ko = {
		.kc = &kc, .max_conns = (unsigned)C.raw_conns, .user_agent = "gpu-scheduler-bench", .protobuf = 1};
	if (gs_kube_new(&loop, &ko, &kube, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	gs_kubeconfig_free(&kc);

	int crd_ours = is_ref() ? crd_install() : 0;
	if (crd_ours < 0)
		return 1;
	make_nodes();
	char foreign_ns[64] = "";
	if (C.foreign) {
		snprintf(foreign_ns, sizeof(foreign_ns), "gsb-foreign-%04x", (unsigned)(bench_now_ns() & 0xffff));
		make_foreign(foreign_ns);
	}
	struct run runs[8];
	const char *names[8];
	int n = 0, m = contender_names(names, 8);
	for (int k = 0; k < m; k++) {
		if (!strncmp(names[k], "kube-scheduler", 14) && access(C.kube_scheduler, X_OK) != 0) {
			fprintf(stderr, "%s: %s not found, skipped\n", names[k], C.kube_scheduler);
			continue;
		}
		if (!strncmp(names[k], "kube-scheduler", 14) && is_gang()) {
			fprintf(stderr,
				"%s: no all-or-nothing gangs in kube-scheduler 1.20, skipped for --shape gang\n",
				names[k]);
			continue;
		}
		memset(&runs[n], 0, sizeof(runs[n]));
		runs[n].name = strdup(names[k]);
		run_one(&runs[n]);
		n++;
	}
	report(runs, n);
	if (C.foreign)
		bench_namespace_delete(&loop, kube, foreign_ns);

	char path[128];
	for (int i = 0; i < C.nodes; i++) {
		snprintf(path, sizeof(path), "/api/v1/nodes/bn-%d", i);
		send_json("DELETE", path, NULL, NULL, NULL);
	}
	wait_all("node cleanup", C.nodes);
	if (crd_ours)
		crd_delete();
	int all_ok = 1;
	for (int k = 0; k < n; k++) {
		all_ok &= runs[k].ok;
		free(runs[k].created_ns);
		free(runs[k].bound_ns);
		free(runs[k].series);
		free((char *)runs[k].name);
	}
	gs_kube_close(kube, NULL, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	if (failures)
		fprintf(stderr, "%d requests failed; last: %.200s\n", failures, last_err);
	return all_ok ? 0 : 1;
}
