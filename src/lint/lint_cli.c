/*
 * lint_cli.c: `gpu-scheduler lint` (lint_cli.h). The one part of src/lint that uses src/k8s: the
 * apiserver is asked for its nodes and its GPU pods only with --kubeconfig, on a loop of its own that
 * ends with the calls.
 */
#include "lint/lint_cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "k8s/kube.h"
#include "k8s/decode.h"
#include "k8s/kubeconfig.h"
#include "sched/inuse.h"
#include "lint/lint.h"
#include "sched/checks.h"

#define NODES_TIMEOUT_MS 30000
/* Bound pods that are not terminal, a page at a time: only those can hold a device-plugin GPU. */
#define PODS_PATH \
	"/api/v1/pods?limit=500&fieldSelector=spec.nodeName%21%3D%2Cstatus.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: gpu-scheduler lint [OPTIONS] FILE...\n\n"
		"Checks the gpu-scheduling-map annotations of the Pods, StatefulSets, Jobs, CronJobs and Deployments\n"
		"in YAML or JSON manifests (several documents, Lists) with the scheduler's own parser, and the\n"
		"GPUPlacementMaps and the workloads naming them (gpu-scheduler.io/placement-map); prints\n"
		"FILE:LINE: error|warning|note: MESSAGE (a note never fails). FILE - is stdin.\n\n"
		"  --nodes FILE               a NodeList (kubectl get nodes -o yaml): check node names and devices\n"
		"  --kubeconfig FILE          read the nodes from the apiserver instead, and the pods that get\n"
		"                             nvidia.com/gpu from the device plugin: a node the maps use that runs\n"
		"                             such pods without the taint gpu-scheduler.io/dedicated:NoSchedule is\n"
		"                             warned about\n"
		"  --node-alias-label KEY     map names also resolve through this node label [gpu-scheduler.io/node]\n"
		"  --annotation NAME          the map's annotation [gpu-scheduling-map]\n"
		"  --scheduler-name NAME      [gpu-scheduler]\n"
		"  --strict                   warnings fail too (exit 1)\n"
		"  -q, --quiet                errors only\n"
		"  --help\n\n"
		"Exit status: 0 clean (warnings allowed), 1 errors (or warnings with --strict), 2 usage or I/O.\n");
}

/* The whole file (or stdin), NUL-terminated. 0, or -errno. */
static int read_all(const char *path, char **out, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	size_t cap = 65536, n = 0;
	char *buf;
	int r = 0;

	*out = NULL;
	if (!f)
		return -errno;
	buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (n < cap - 1) {
			if (ferror(f))
				r = -EIO;
			break;
		}
		if (cap > GS_LINT_MAX_BYTES + 2u) {
			r = -EFBIG;
			break;
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb)
			free(buf);
		buf = nb;
		cap *= 2;
	}
	if (f != stdin)
		fclose(f);
	if (!buf)
		return -ENOMEM;
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

/* ---- nodes from the apiserver ------------------------------------------------------------------------ */

struct fetch {
	const char *alias_label;
	struct gs_lint_node *nodes;
	size_t n, cap;
	struct gs_lint_gpu_pod *pods; /* the device-plugin GPU pods */
	size_t n_pods, cap_pods;
	/* The pods could not be read (no list permission, ...): the check that needs them is skipped,
	 * with this on stderr; the nodes' checks still run. */
	int pods_failed;
	char pods_err[512];
	char err[512];
	int done, rc;
	struct gs_kube *kube;
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* arr with room for element n (of size elem): arr itself, or a larger copy with *cap updated; NULL when
 * that cannot be had (arr is then kept). */
static void *grow(void *arr, size_t n, size_t *cap, size_t elem)
{
	if (n < *cap)
		return arr;
	size_t c = *cap ? *cap * 2 : 64;
	void *v = realloc(arr, c * elem);
	if (v)
		*cap = c;
	return v;
}

/* A node's GPUs as the daemon counts them (lint.h, gs_lint_node.gpus): the agent's table, GFD's count,
 * what it advertises. */
static void node_gpus(const struct gs_node_obj *n, struct gs_lint_node *o)
{
	const char *label = NULL;
	struct gs_inuse *u = NULL;
	char err[160];

	for (int i = 0; i < n->n_labels && !label; i++)
		if (!strcmp(n->labels[i].key, GS_GFD_COUNT_LABEL))
			label = n->labels[i].value;
	if (n->inuse && gs_inuse_parse(n->inuse, strlen(n->inuse), &u, err, sizeof(err)) < 0)
		u = NULL;
	o->gpus = gs_inuse_node_gpus(u ? u->n_index : 0, label, n->gpu_capacity, n->gpus, &o->gpus_from);
	gs_inuse_free(u);
}

static int on_node(enum gs_obj_kind kind, const void *obj, void *ud)
{
	const struct gs_node_obj *n = obj;
	struct fetch *f = ud;
	const char *alias = NULL;

	struct gs_lint_node *nodes = grow(f->nodes, f->n, &f->cap, sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	f->nodes = nodes;
	for (int i = 0; f->alias_label && *f->alias_label && i < n->n_labels; i++)
		if (!strcmp(n->labels[i].key, f->alias_label))
			alias = n->labels[i].value;
	f->nodes[f->n] = (struct gs_lint_node){.name = dup_or_null(n->name), .alias = dup_or_null(alias)};
	node_gpus(n, &f->nodes[f->n]);
	for (int i = 0; i < n->n_taints; i++)
		if (n->taints[i].key && !strcmp(n->taints[i].key, GS_TAINT_DEDICATED) &&
		    n->taints[i].effect == GS_EFFECT_NO_SCHEDULE)
			f->nodes[f->n].dedicated = 1;
	if (!f->nodes[f->n].name || (alias && !f->nodes[f->n].alias))
		return -ENOMEM;
	f->n++;
	return 0;
}

/* nvidia.com/gpu asked by any container or init container: the decoder's requests, which for an
 * extended resource the apiserver makes equal to the limits (defaulted from them, validated equal). */
static int asks_gpus(const struct gs_pod_obj *p)
{
	for (int c = 0; c < p->n_ctr + p->n_init; c++) {
		const struct gs_resources *r = c < p->n_ctr ? &p->ctr_req[c] : &p->init_req[c - p->n_ctr];
		for (int i = 0; i < r->n_ext; i++)
			if (r->ext[i].name && !strcmp(r->ext[i].name, GS_RES_GPU) && r->ext[i].value > 0)
				return 1;
	}
	return 0;
}

static int on_pod(enum gs_obj_kind kind, const void *obj, void *ud)
{
	const struct gs_pod_obj *p = obj;
	struct fetch *f = ud;

	/* The field selector already keeps only bound, non-terminal pods; checked again all the same. */
	if (!p->node_name || !*p->node_name || p->terminal || !asks_gpus(p))
		return 0;
	struct gs_lint_gpu_pod *pods = grow(f->pods, f->n_pods, &f->cap_pods, sizeof(*pods));
	if (!pods)
		return -ENOMEM;
	f->pods = pods;
	f->pods[f->n_pods] = (struct gs_lint_gpu_pod){
		.ns = dup_or_null(p->ns), .name = dup_or_null(p->name), .node = dup_or_null(p->node_name)};
	if (!f->pods[f->n_pods].ns || !f->pods[f->n_pods].name || !f->pods[f->n_pods].node)
		return -ENOMEM;
	f->n_pods++;
	return 0;
}

static void on_closed(void *ud)
{
	(void)ud;
}

static void on_pods(int err, const struct gs_http_response *resp, const char *msg, void *ud);

/* Asks for the next page of pods, after the continue token cont (escaped; NULL: the first page); on
 * failure, ends the fetch with pods_failed. */
static void get_pods(struct fetch *f, const char *cont)
{
	char path[4096];
	int r;

	if (snprintf(path, sizeof(path), "%s%s%s", PODS_PATH, cont ? "&continue=" : "", cont ? cont : "") >=
	    (int)sizeof(path)) {
		snprintf(f->pods_err, sizeof(f->pods_err), "GET /api/v1/pods: continue token too long");
	} else if ((r = gs_kube_request(f->kube, "GET", path, NULL, NULL, GS_KUBE_HIGH, NODES_TIMEOUT_MS, on_pods,
					f)) == 0) {
		return;
	} else {
		snprintf(f->pods_err, sizeof(f->pods_err), "GET /api/v1/pods: %s", uv_strerror(r));
	}
	f->pods_failed = 1;
	f->done = 1;
	gs_kube_close(f->kube, on_closed, f);
}

/* Checks one list answer; 0 with the items decoded through cb and *cont the next page's token, else
 * <0 with why in e[size]. */
static int list_answer(struct fetch *f, const char *what, int err, const struct gs_http_response *resp, const char *msg,
		       enum gs_obj_kind kind, gs_decode_item_cb cb, char **cont, char *e, size_t size)
{
	char *rv = NULL;
	int r = -EIO;

	*cont = NULL;
	if (err < 0)
		snprintf(e, size, "GET %s: %s", what, msg && *msg ? msg : uv_strerror(err));
	else if (resp->status != 200)
		snprintf(e, size, "GET %s: HTTP %d: %.300s", what, resp->status, resp->body);
	else if ((r = gs_decode_list(resp->body, resp->body_len, kind, "gpu-scheduling-map", cb, f, &rv, cont, e,
				     size)) < 0 &&
		 !e[0])
		snprintf(e, size, "GET %s: %s", what, strerror(-r));
	free(rv);
	/* One line: a Status body ends with a newline, and the message may go on after it. */
	for (char *c = e; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	for (size_t n = strlen(e); n && e[n - 1] == ' '; n--)
		e[n - 1] = 0;
	return r;
}

/* s as a query value, %XX for every byte but unreserved ones, into out (cut at a whole escape; a cut
 * token then fails on the server with a clear error). */
static void url_escape(char *out, size_t size, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (const unsigned char *c = (const unsigned char *)s; *c && n + 4 <= size; c++) {
		if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' ||
		    *c == '_' || *c == '.' || *c == '~') {
			out[n++] = (char)*c;
		} else {
			out[n++] = '%';
			out[n++] = hex[*c >> 4];
			out[n++] = hex[*c & 15];
		}
	}
	out[n] = 0;
}

static void on_pods(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct fetch *f = ud;
	char *cont = NULL;

	if (list_answer(f, "/api/v1/pods", err, resp, msg, GS_OBJ_POD, on_pod, &cont, f->pods_err,
			sizeof(f->pods_err)) < 0) {
		f->pods_failed = 1;
	} else if (cont && *cont) {
		char enc[3 * 1024 + 1];
		url_escape(enc, sizeof(enc), cont);
		free(cont);
		get_pods(f, enc);
		return;
	}
	free(cont);
	f->done = 1;
	gs_kube_close(f->kube, on_closed, f);
}

static void on_nodes(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct fetch *f = ud;
	char *cont = NULL;

	f->rc = list_answer(f, "/api/v1/nodes", err, resp, msg, GS_OBJ_NODE, on_node, &cont, f->err, sizeof(f->err));
	free(cont);
	if (f->rc == 0) {
		get_pods(f, NULL);
		return;
	}
	f->done = 1;
	gs_kube_close(f->kube, on_closed, f);
}

static int nodes_from_apiserver(const char *kubeconfig, struct fetch *f)
{
	struct gs_kubeconfig kc;
	uv_loop_t loop;
	int r;

	memset(&kc, 0, sizeof(kc));
	if ((r = gs_kubeconfig_load(kubeconfig, &kc, f->err, sizeof(f->err))) < 0)
		return r;
	uv_loop_init(&loop);
	struct gs_kube_opts ko = {.kc = &kc, .max_conns = 1, .user_agent = "gpu-scheduler-lint"};
	r = gs_kube_new(&loop, &ko, &f->kube, f->err, sizeof(f->err));
	gs_kubeconfig_free(&kc);
	if (r == 0) {
		r = gs_kube_request(f->kube, "GET", "/api/v1/nodes", NULL, NULL, GS_KUBE_HIGH, NODES_TIMEOUT_MS,
				    on_nodes, f);
		if (r < 0) {
			snprintf(f->err, sizeof(f->err), "GET /api/v1/nodes: %s", uv_strerror(r));
			gs_kube_close(f->kube, on_closed, f);
		}
		uv_run(&loop, UV_RUN_DEFAULT);
		if (r == 0)
			r = f->done ? f->rc : -EIO;
	}
	if (uv_loop_close(&loop) != 0 && r == 0)
		r = -EBUSY;
	return r;
}

static void nodes_free(struct fetch *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free((char *)f->nodes[i].name);
		free((char *)f->nodes[i].alias);
	}
	free(f->nodes);
	for (size_t i = 0; i < f->n_pods; i++) {
		free((char *)f->pods[i].ns);
		free((char *)f->pods[i].name);
		free((char *)f->pods[i].node);
	}
	free(f->pods);
}

/* ---- the command --------------------------------------------------------------------------------------- */

/* What the command line asks. */
struct args {
	const char *nodes_file, *kubeconfig, *alias;
	int strict, quiet;
	struct gs_lint_opts lo; /* the annotation and the scheduler name; the nodes come from load_nodes */
};

/* Reads the options into a. 0: go on with argv[optind..]; else the exit code (--help: 0, done). */
static int parse_args(int argc, char **argv, struct args *a, int *exit_code)
{
	enum { O_NODES = 256, O_KUBECONFIG, O_ALIAS, O_ANNOTATION, O_SCHEDULER, O_STRICT, O_HELP };
	static const struct option longopts[] = {
		{"nodes", required_argument, NULL, O_NODES},
		{"kubeconfig", required_argument, NULL, O_KUBECONFIG},
		{"node-alias-label", required_argument, NULL, O_ALIAS},
		{"annotation", required_argument, NULL, O_ANNOTATION},
		{"scheduler-name", required_argument, NULL, O_SCHEDULER},
		{"strict", no_argument, NULL, O_STRICT},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	int c;

	a->alias = "gpu-scheduler.io/node";
	*exit_code = 2;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+q", longopts, NULL)) != -1) {
		/* clang-format off */
		switch (c) {
		case O_NODES: a->nodes_file = optarg; break;
		case O_KUBECONFIG: a->kubeconfig = optarg; break;
		case O_ALIAS: a->alias = optarg; break;
		case O_ANNOTATION: a->lo.annotation = optarg; break;
		case O_SCHEDULER: a->lo.scheduler_name = optarg; break;
		case O_STRICT: a->strict = 1; break;
		case 'q': a->quiet = 1; break;
		case O_HELP: usage(stdout); *exit_code = 0; return -1;
		/* clang-format on */
		default:
			fprintf(stderr, "gpu-scheduler lint: unknown option or missing value: %s\n", argv[optind - 1]);
			usage(stderr);
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "gpu-scheduler lint: no file given\n");
		usage(stderr);
		return -1;
	}
	if (a->nodes_file && a->kubeconfig) {
		fprintf(stderr, "gpu-scheduler lint: --nodes and --kubeconfig exclude each other\n");
		return -1;
	}
	return 0;
}

/* --nodes FILE: its nodes into a->lo (*file_nodes, the caller frees). -1 after a message. */
static int nodes_from_file(struct args *a, struct gs_lint_node **file_nodes)
{
	char *text, err[512];
	size_t len;
	int r = read_all(a->nodes_file, &text, &len);
	if (r < 0) {
		fprintf(stderr, "gpu-scheduler lint: --nodes %s: %s\n", a->nodes_file, strerror(-r));
		return -1;
	}
	r = gs_lint_nodes_parse(text, len, a->alias, file_nodes, &a->lo.n_nodes, err, sizeof(err));
	free(text);
	if (r < 0) {
		fprintf(stderr, "gpu-scheduler lint: --nodes %s: %s\n", a->nodes_file, err);
		return -1;
	}
	a->lo.nodes = *file_nodes;
	a->lo.have_nodes = 1;
	return 0;
}

/* --kubeconfig FILE: the nodes and the device-plugin GPU pods into a->lo (held by f). -1 after a message. */
static int nodes_from_kubeconfig(struct args *a, struct fetch *f)
{
	f->alias_label = a->alias;
	if (nodes_from_apiserver(a->kubeconfig, f) < 0) {
		fprintf(stderr, "gpu-scheduler lint: --kubeconfig %s: %s\n", a->kubeconfig,
			f->err[0] ? f->err : "cannot read the nodes");
		return -1;
	}
	a->lo.nodes = f->nodes;
	a->lo.n_nodes = f->n;
	a->lo.have_nodes = 1;
	if (f->pods_failed) {
		fprintf(stderr,
			"gpu-scheduler lint: --kubeconfig %s: %s: mapped nodes without the %s taint are not "
			"checked for device-plugin GPU pods\n",
			a->kubeconfig, f->pods_err, GS_TAINT_DEDICATED);
	} else {
		a->lo.gpu_pods = f->pods;
		a->lo.n_gpu_pods = f->n_pods;
		a->lo.have_pods = 1;
		a->lo.dedicated_taint = GS_TAINT_DEDICATED;
	}
	return 0;
}

/* Lints every file named, then the checks across them. -1 after a message (a file unreadable). */
static int lint_files(struct gs_lint *l, int argc, char **argv)
{
	for (int i = optind; i < argc; i++) {
		char *text;
		size_t len;
		int r = read_all(argv[i], &text, &len);
		if (r < 0) {
			fprintf(stderr, "gpu-scheduler lint: %s: %s\n", argv[i], strerror(-r));
			return -1;
		}
		gs_lint_add(l, strcmp(argv[i], "-") ? argv[i] : "<stdin>", text, len);
		free(text);
	}
	gs_lint_finish(l);
	return 0;
}

/* The diagnostics on stdout, the summary on stderr; the exit code. */
static int report(const struct gs_lint *l, const struct args *a, int n_files)
{
	char notes[40] = "";

	if (gs_lint_notes(l))
		snprintf(notes, sizeof(notes), ", %zu note%s", gs_lint_notes(l), gs_lint_notes(l) == 1 ? "" : "s");
	for (size_t i = 0; i < gs_lint_count(l); i++) {
		const struct gs_lint_diag *d = gs_lint_diag_at(l, i);
		if (a->quiet && d->severity != GS_LINT_ERROR)
			continue;
		printf("%s:%d: %s: %s\n", d->file, d->line,
		       d->severity == GS_LINT_ERROR     ? "error"
		       : d->severity == GS_LINT_WARNING ? "warning"
							: "note",
		       d->msg);
	}
	fflush(stdout);
	if (!a->quiet || gs_lint_errors(l))
		fprintf(stderr,
			"gpu-scheduler lint: %d file%s, %zu workload%s with a map%s: %zu error%s, %zu warning%s%s\n",
			n_files, n_files == 1 ? "" : "s", gs_lint_workloads(l), gs_lint_workloads(l) == 1 ? "" : "s",
			a->lo.have_nodes ? "" : " (no node list: node names and devices not checked)",
			gs_lint_errors(l), gs_lint_errors(l) == 1 ? "" : "s", gs_lint_warnings(l),
			gs_lint_warnings(l) == 1 ? "" : "s", notes);
	return gs_lint_errors(l) || (a->strict && gs_lint_warnings(l)) ? 1 : 0;
}

int gs_lint_main(int argc, char **argv)
{
	struct args a = {0};
	struct fetch f = {0};
	struct gs_lint_node *file_nodes = NULL;
	struct gs_lint *l = NULL;
	int rc = 2;

	if (parse_args(argc, argv, &a, &rc) < 0)
		return rc;
	if (a.nodes_file && nodes_from_file(&a, &file_nodes) < 0)
		return 2;
	if (a.kubeconfig && nodes_from_kubeconfig(&a, &f) < 0)
		goto out;
	l = gs_lint_new(&a.lo);
	if (lint_files(l, argc, argv) == 0)
		rc = report(l, &a, argc - optind);
out:
	gs_lint_free(l);
	free(file_nodes);
	nodes_free(&f);
	return rc;
}
