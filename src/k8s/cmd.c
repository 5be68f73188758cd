/*
 * cmd.c: what explain and status share (cmd.h). Each read is sent and waited for in turn on the
 * command's own loop.
 */
#include "k8s/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_nul.h"
#include "core/log.h"
#include "k8s/authz.h"
#include "k8s/decode.h"
#include "k8s/decode_gpm.h"
#include "k8s/decode_pdb.h"
#include "k8s/lease.h"
#include "sched/gpm.h"

#define FETCH_TIMEOUT_MS 15000

/* ---- options ------------------------------------------------------------------------------------- */

int gs_cmd_valid_name(const char *v)
{
	size_t n = strlen(v);
	return n > 0 && n <= 253 && strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-.") == n;
}

/* A TCP port number in decimal: 1..5 digits, 1..65535. */
static int valid_port(const char *v)
{
	size_t n = strlen(v);
	return n > 0 && n <= 5 && strspn(v, "0123456789") == n && atoi(v) >= 1 && atoi(v) <= 65535;
}

static int one_of(const char *v, const char *a, const char *b)
{
	return strcmp(v, a) == 0 || strcmp(v, b) == 0;
}

void gs_cmd_usage_options(FILE *f)
{
	fprintf(f, "  -n, --namespace NS          default: the kubeconfig context's, else default\n"
		   "      --kubeconfig PATH       default: $KUBECONFIG, ~/.kube/config, then in-cluster\n"
		   "      --scheduler-name NAME   the daemon's --scheduler-name (default gpu-scheduler)\n"
		   "      --annotation NAME       the daemon's --annotation (default gpu-scheduling-map)\n"
		   "      --device-sharing MODE   the daemon's --device-sharing: exclusive (default) or any\n"
		   "      --require-env BOOL      the daemon's --require-env: true (default) or false\n"
		   "      --preemption BOOL       the daemon's --preemption: true (default) or false\n"
		   "      --node-alias-label KEY  the daemon's --node-alias-label (default gpu-scheduler.io/node; "
		   "empty: off)\n"
		   "      --ignored-resources LIST, --ignored-resource-groups LIST  the daemon's (default: none)\n"
		   "      --gpu-resources LIST    the daemon's (default " GS_SCHED_GPU_RESOURCES ")\n"
		   "  -o, --output FORMAT         text (default) or json (the daemon's /debug/ answer, with the\n"
		   "                              running daemon's own answer as \"daemon\")\n"
		   "      --daemon BOOL           also ask the running daemon (default true): the Lease's\n"
		   "                              holder, through the apiserver's pod proxy, with your own token\n"
		   "      --scheduler-namespace NS  the daemon's namespace and Lease namespace (default kube-system)\n"
		   "      --lease-name NAME       the daemon's --leader-elect-resource-name (default gpu-scheduler)\n"
		   "      --secure-port PORT      the daemon's --secure-addr port (default 10259)\n"
		   "  -h, --help\n");
}

int gs_cmd_parse(int argc, char **argv, struct gs_cmd_opts *o, int arg_is_name, void (*usage)(FILE *f))
{
	static const struct option longs[] = {
		{"namespace", required_argument, NULL, 'n'},
		{"kubeconfig", required_argument, NULL, 'k'},
		{"scheduler-name", required_argument, NULL, 's'},
		{"annotation", required_argument, NULL, 'a'},
		{"device-sharing", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"require-env", required_argument, NULL, 'r'},
		{"preemption", required_argument, NULL, 'p'},
		{"node-alias-label", required_argument, NULL, 'l'},
		{"daemon", required_argument, NULL, 'D'},
		{"ignored-resources", required_argument, NULL, 'I'},
		{"ignored-resource-groups", required_argument, NULL, 'G'},
		{"gpu-resources", required_argument, NULL, 'R'},
		{"scheduler-namespace", required_argument, NULL, 'N'},
		{"lease-name", required_argument, NULL, 'L'},
		{"secure-port", required_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	*o = (struct gs_cmd_opts){.name = argv[0],
				  .scheduler_name = "gpu-scheduler",
				  .annotation = "gpu-scheduling-map",
				  .output = "text",
				  .alias_label = "gpu-scheduler.io/node",
				  .sched_ns = "kube-system",
				  .lease = "gpu-scheduler",
				  .secure_port = "10259"};
	const char *sharing = "exclusive", *env = "true", *daemon = "true", *preempt = "true";
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:o:h", longs, NULL)) != -1) {
		/* clang-format off */
		switch (c) {
		case 'n': o->ns = optarg; break;
		case 'k': o->kubeconfig = optarg; break;
		case 's': o->scheduler_name = optarg; break;
		case 'a': o->annotation = optarg; break;
		case 'd': sharing = optarg; break;
		case 'o': o->output = optarg; break;
		case 'r': env = optarg; break;
		case 'p': preempt = optarg; break;
		case 'l': o->alias_label = optarg; break;
		case 'D': daemon = optarg; break;
		case 'I': o->ignored_resources = optarg; break;
		case 'G': o->ignored_groups = optarg; break;
		case 'R': o->gpu_resources = optarg; break;
		case 'N': o->sched_ns = optarg; break;
		case 'L': o->lease = optarg; break;
		case 'P': o->secure_port = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		/* clang-format on */
	}
	if (optind != argc - 1 || !one_of(o->output, "text", "json") || !one_of(sharing, "exclusive", "any") ||
	    !one_of(env, "true", "false") || !one_of(daemon, "true", "false") || !one_of(preempt, "true", "false") ||
	    !gs_cmd_valid_name(o->sched_ns) || !gs_cmd_valid_name(o->lease) || !valid_port(o->secure_port)) {
		usage(stderr);
		return 2;
	}
	o->arg = argv[optind];
	o->sharing_any = strcmp(sharing, "any") == 0;
	o->check_env = strcmp(env, "true") == 0;
	o->preemption = strcmp(preempt, "true") == 0;
	o->ask_daemon = strcmp(daemon, "true") == 0;
	if ((arg_is_name && !gs_cmd_valid_name(o->arg)) || (o->ns && !gs_cmd_valid_name(o->ns))) {
		fprintf(stderr, "gpu-scheduler %s: \"%s\" is not a valid Kubernetes name\n", o->name,
			o->ns && !gs_cmd_valid_name(o->ns) ? o->ns : o->arg);
		return 2;
	}
	return -1;
}

/* --kubeconfig, $KUBECONFIG (first of its list), ~/.kube/config if it exists, in-cluster. */
static int load_kubeconfig(const char *flag, struct gs_kubeconfig *kc, char *err, size_t errlen)
{
	char home[GS_CMD_PATH_MAX], first[GS_CMD_PATH_MAX];
	const char *env = getenv("KUBECONFIG"), *h = getenv("HOME");

	if (flag)
		return gs_kubeconfig_load(flag, kc, err, errlen);
	if (env && *env) {
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(env, ":"), env);
		return gs_kubeconfig_load(first, kc, err, errlen);
	}
	if (h && snprintf(home, sizeof(home), "%s/.kube/config", h) < (int)sizeof(home)) {
		FILE *f = fopen(home, "r");
		if (f) {
			fclose(f);
			return gs_kubeconfig_load(home, kc, err, errlen);
		}
	}
	return gs_kubeconfig_in_cluster(NULL, kc, err, errlen);
}

int gs_cmd_setup(struct gs_cmd_opts *o, struct gs_kubeconfig *kc)
{
	char err[512];

	gs_log_setup(GS_LOG_WARN, GS_LOG_TEXT);
	memset(kc, 0, sizeof(*kc));
	if (load_kubeconfig(o->kubeconfig, kc, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpu-scheduler %s: %s\n", o->name, err);
		return 1;
	}
	if (!o->ns)
		o->ns = kc->namespace && *kc->namespace ? kc->namespace : "default";
	/* Names go into URL paths as they are: refuse what a Kubernetes name cannot hold. */
	if (!gs_cmd_valid_name(o->ns)) {
		fprintf(stderr, "gpu-scheduler %s: \"%s\" is not a valid Kubernetes name\n", o->name, o->ns);
		return 2;
	}
	return 0;
}

/* ---- the loop and its GETs ----------------------------------------------------------------------- */

int gs_cmd_start(struct gs_cmd *c, const struct gs_cmd_opts *o, struct gs_kubeconfig *kc)
{
	char err[512], agent[64];
	int r;

	memset(c, 0, sizeof(*c));
	c->o = o;
	snprintf(agent, sizeof(agent), "gpu-scheduler-%s", o->name);
	struct gs_kube_opts ko = {.kc = kc, .max_conns = 1, .user_agent = agent};
	uv_loop_init(&c->loop);
	if ((r = gs_kube_new(&c->loop, &ko, &c->kube, err, sizeof(err))) < 0) {
		fprintf(stderr, "gpu-scheduler %s: %s\n", o->name, err);
		uv_loop_close(&c->loop);
	}
	return r;
}

static void on_closed(void *ud)
{
	(void)ud;
}

void gs_cmd_stop(struct gs_cmd *c)
{
	gs_kube_close(c->kube, on_closed, NULL);
	uv_run(&c->loop, UV_RUN_DEFAULT);
	uv_loop_close(&c->loop);
}

static void on_fetch(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct gs_cmd_fetch *f = ud;

	f->done = 1;
	f->err = err;
	snprintf(f->msg, sizeof(f->msg), "%s", msg ? msg : "");
	if (!err) {
		f->status = resp->status;
		f->body = strdup(resp->body ? resp->body : "");
		if (!f->body)
			f->err = -ENOMEM;
	}
}

/* The apiserver's own words for a failed request (a Status message), else the status code. */
static int fail_status(const struct gs_cmd *c, const char *what, const struct gs_cmd_fetch *f)
{
	int code = 0;
	char *reason = NULL, *message = NULL;

	if (gs_decode_status(f->body, strlen(f->body), &code, &reason, &message) == 0 && message)
		fprintf(stderr, "gpu-scheduler %s: %s: %s\n", c->o->name, what, message);
	else
		fprintf(stderr, "gpu-scheduler %s: %s: HTTP %d\n", c->o->name, what, f->status);
	free(reason);
	free(message);
	return -EIO;
}

int gs_cmd_get(struct gs_cmd *c, const char *path, const char *what, int allow_404, struct gs_cmd_fetch *f)
{
	int r = gs_cmd_get_quiet(c, path, NULL, f);

	if (r < 0) {
		fprintf(stderr, "gpu-scheduler %s: GET %s: %s\n", c->o->name, path, f->msg);
		return r;
	}
	if (f->status == 200)
		return 0;
	r = f->status == 404 && allow_404 ? 1 : fail_status(c, what, f);
	free(f->body);
	f->body = NULL;
	return r;
}

int gs_cmd_get_quiet(struct gs_cmd *c, const char *path, const char *token_header, struct gs_cmd_fetch *f)
{
	struct gs_kube_req req = {.method = "GET",
				  .path = path,
				  .timeout_ms = FETCH_TIMEOUT_MS,
				  .prio = GS_KUBE_HIGH,
				  .token_header = token_header};
	int r;

	memset(f, 0, sizeof(*f));
	if ((r = gs_kube_send(c->kube, &req, on_fetch, f, NULL)) < 0) {
		snprintf(f->msg, sizeof(f->msg), "%s", uv_strerror(r));
		return r;
	}
	while (!f->done)
		uv_run(&c->loop, UV_RUN_ONCE);
	if (f->err && !f->msg[0])
		snprintf(f->msg, sizeof(f->msg), "%s", uv_strerror(f->err));
	return f->err;
}

cJSON *gs_cmd_parse_json(const char *body)
{
	size_t len = strlen(body);
	char *masked;
	const char *text = gs_json_mask_nul(body, len, &masked);
	cJSON *j = text ? cJSON_ParseWithLength(text, len) : NULL;

	free(masked);
	return j;
}

/* ---- a fresh engine ------------------------------------------------------------------------------ */

struct gs_sched *gs_cmd_engine(const struct gs_cmd_opts *o)
{
	struct gs_sched_config cfg;

	gs_sched_config_init(&cfg);
	cfg.scheduler_name = o->scheduler_name;
	cfg.annotation = o->annotation;
	cfg.device_sharing_any = o->sharing_any;
	cfg.check_env = o->check_env;
	cfg.preemption = o->preemption;
	cfg.alias_label = o->alias_label && *o->alias_label ? o->alias_label : NULL;
	cfg.ignored_resources = o->ignored_resources;
	cfg.ignored_resource_groups = o->ignored_groups;
	cfg.gpu_resources = o->gpu_resources;
	/* The daemon's memory budgets are its own: what it does not hold, each object's status says
	 * (gpm_item); this engine holds everything else. */
	cfg.gpm_bytes = cfg.gpm_bytes_per_ns = SIZE_MAX / 4;
	/* The namespaces' gang budgets are the daemon's too, and what the other gangs claim is its state:
	 * explain takes both from the daemon's answer (gs_sched_gang_budget_seed); none without it. */
	cfg.gang_members_per_ns = cfg.gang_gpus_per_ns = 0;
	return gs_sched_new(&cfg);
}

int gs_cmd_feed_node(struct gs_cmd *c, struct gs_sched *s, const char *name)
{
	char path[GS_CMD_PATH_MAX], err[256];
	struct gs_node_obj n;
	struct gs_cmd_fetch f;
	int r;

	snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
	if ((r = gs_cmd_get(c, path, path, 1, &f)) != 0)
		return r > 0 ? 0 : r; /* absent: the engine then says so */
	cJSON *j = gs_cmd_parse_json(f.body);
	free(f.body);
	memset(&n, 0, sizeof(n));
	r = j ? gs_decode_node(j, &n, err, sizeof(err)) : -EINVAL;
	cJSON_Delete(j);
	if (r < 0) {
		fprintf(stderr, "gpu-scheduler %s: node %s: %s\n", c->o->name, name, j ? err : "not JSON");
		return r;
	}
	r = gs_sched_node_upsert(s, &n, 0);
	gs_node_obj_free(&n);
	return r < 0 ? r : 1;
}

struct feed {
	struct gs_sched *s;
	const char *skip_uid;
	const char *owner_uid; /* only pods of this controller (NULL: every pod) */
};

static int feed_item(enum gs_obj_kind kind, const void *obj, void *ud)
{
	struct feed *x = ud;

	if (kind == GS_OBJ_NODE)
		return gs_sched_node_upsert(x->s, obj, 0);
	const struct gs_pod_obj *p = obj;
	if (x->owner_uid && (!p->owner_uid || strcmp(p->owner_uid, x->owner_uid) != 0))
		return 0;
	if (!x->skip_uid || !p->uid || strcmp(p->uid, x->skip_uid) != 0)
		gs_sched_pod_upsert(x->s, p, 0);
	return 0;
}

/* A list GET of kind under path?SELECTOR_KEY=sel into s (the pods but skip_uid). 0, or <0 said. */
static int feed_list(struct gs_cmd *c, struct gs_sched *s, const char *path, const char *sel_key, const char *sel,
		     enum gs_obj_kind kind, const char *skip_uid, const char *owner_uid)
{
	char url[GS_CMD_PATH_MAX], esc[1800], err[256];
	char *rv = NULL, *cont = NULL;
	struct feed x = {.s = s, .skip_uid = skip_uid, .owner_uid = owner_uid};
	struct gs_cmd_fetch f;
	int r;

	if (gs_kube_escape(sel, esc, sizeof(esc)) < 0)
		return -E2BIG;
	snprintf(url, sizeof(url), "%s?%s=%s", path, sel_key, esc);
	if ((r = gs_cmd_get(c, url, kind == GS_OBJ_NODE ? "nodes by alias" : "pods on the node", 0, &f)) < 0)
		return r;
	r = gs_decode_list_ex(f.body, strlen(f.body), kind, kind == GS_OBJ_POD ? c->o->annotation : NULL, feed_item, &x,
			      &rv, &cont, &c->skipped, err, sizeof(err));
	free(f.body);
	free(rv);
	free(cont);
	if (r < 0)
		fprintf(stderr, "gpu-scheduler %s: %s %s: %s\n", c->o->name,
			kind == GS_OBJ_NODE ? "nodes labelled" : "pods with", sel, err);
	return r;
}

int gs_cmd_feed_alias_nodes(struct gs_cmd *c, struct gs_sched *s, const char *name)
{
	char sel[600];

	snprintf(sel, sizeof(sel), "%s=%s", c->o->alias_label, name);
	return feed_list(c, s, "/api/v1/nodes", "labelSelector", sel, GS_OBJ_NODE, NULL, NULL);
}

int gs_cmd_feed_pods_on(struct gs_cmd *c, struct gs_sched *s, const char *node, const char *skip_uid)
{
	char sel[600];

	snprintf(sel, sizeof(sel), "spec.nodeName=%s,status.phase!=Succeeded,status.phase!=Failed", node);
	return feed_list(c, s, "/api/v1/pods", "fieldSelector", sel, GS_OBJ_POD, skip_uid, NULL);
}

int gs_cmd_feed_bound_of(struct gs_cmd *c, struct gs_sched *s, const char *ns, const char *owner_uid,
			 const char *skip_uid)
{
	char path[GS_CMD_PATH_MAX];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	return feed_list(c, s, path, "fieldSelector", "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed",
			 GS_OBJ_POD, skip_uid, owner_uid);
}

/* One GPUPlacementMap of the list into the engine, as the daemon's watch gives it. */
static int gpm_item(const struct gs_gpm *g, void *ud)
{
	struct gs_gpm_view v;

	gs_gpm_view_of(g, &v);
	v.refused = g->not_held; /* as the daemon holds it: not held when it said so */
	gs_sched_gpm_upsert(ud, &v, 0);
	return 0;
}

int gs_cmd_feed_gpms(struct gs_cmd *c, struct gs_sched *s, const char *ns)
{
	char path[GS_CMD_PATH_MAX], err[256], *rv = NULL, *cont = NULL;
	struct gs_cmd_fetch f;
	int r;

	if (ns)
		snprintf(path, sizeof(path), "/apis/%s/%s/namespaces/%s/%s", GS_GPM_GROUP, GS_GPM_VERSION, ns,
			 GS_GPM_RESOURCE);
	else
		snprintf(path, sizeof(path), "/apis/%s/%s/%s", GS_GPM_GROUP, GS_GPM_VERSION, GS_GPM_RESOURCE);
	if ((r = gs_cmd_get(c, path, "GPUPlacementMaps", 1, &f)) != 0) {
		if (r < 0 && f.status == 403)
			fprintf(stderr,
				"gpu-scheduler %s: the caller needs get and list on gpuplacementmaps.gpu-scheduler.io "
				"(ClusterRole gpu-scheduler-status, deploy/rbac.yaml)\n",
				c->o->name);
		return r > 0 ? 0 : r; /* 404: the CRD is not installed, so there is no object */
	}
	r = gs_decode_gpm_list(f.body, strlen(f.body), gpm_item, s, &rv, &cont, &c->skipped_gpms, err, sizeof(err));
	free(f.body);
	free(rv);
	free(cont);
	if (r < 0)
		fprintf(stderr, "gpu-scheduler %s: GPUPlacementMaps: %s\n", c->o->name, err);
	return r;
}

static int pdb_item(const struct gs_pdb_obj *b, void *ud)
{
	gs_sched_pdb_upsert(ud, b);
	return 0;
}

int gs_cmd_feed_pdbs(struct gs_cmd *c, struct gs_sched *s)
{
	char err[256], *rv = NULL, *cont = NULL;
	struct gs_cmd_fetch f;
	unsigned skipped = 0;
	int r;

	if ((r = gs_cmd_get(c, GS_PDB_PATH, "PodDisruptionBudgets", 1, &f)) != 0) {
		if (r < 0 && f.status == 403)
			fprintf(stderr,
				"gpu-scheduler %s: the caller needs list on poddisruptionbudgets.policy (ClusterRole "
				"gpu-scheduler-status, deploy/rbac.yaml); preemption is judged without them\n",
				c->o->name);
		return 0; /* they order the victims; without them, explain still judges */
	}
	r = gs_decode_pdb_list(f.body, strlen(f.body), pdb_item, s, &rv, &cont, &skipped, err, sizeof(err));
	free(f.body);
	free(rv);
	free(cont);
	if (r < 0)
		fprintf(stderr, "gpu-scheduler %s: PodDisruptionBudgets: %s\n", c->o->name, err);
	else if (skipped)
		fprintf(stderr, "gpu-scheduler %s: %u PodDisruptionBudget(s) did not decode and were left out\n",
			c->o->name, skipped);
	return r;
}

/* ---- the running daemon -------------------------------------------------------------------------- */

/* The Lease's holder's pod into v->leader: 0, or -1 with v->why. */
static int find_leader(struct gs_cmd *c, struct gs_cmd_daemon *v)
{
	const struct gs_cmd_opts *o = c->o;
	char path[GS_CMD_PATH_MAX], err[256];
	struct gs_lease lease;
	struct gs_cmd_fetch f;

	snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", o->sched_ns, o->lease);
	if (gs_cmd_get_quiet(c, path, NULL, &f) < 0) {
		snprintf(v->why, sizeof(v->why), "reading the Lease %s/%s: %s", o->sched_ns, o->lease, f.msg);
		return -1;
	}
	if (f.status != 200 || gs_lease_decode(f.body, strlen(f.body), &lease, err, sizeof(err)) < 0 ||
	    !lease.holder[0]) {
		snprintf(v->why, sizeof(v->why),
			 "%s Lease %s/%s (--scheduler-namespace, --lease-name): is the daemon "
			 "running with leader election?",
			 f.status == 200 ? "no holder in the" : "cannot read the", o->sched_ns, o->lease);
		free(f.body);
		return -1;
	}
	free(f.body);
	const char *us = strrchr(lease.holder, '_');
	snprintf(v->leader, sizeof(v->leader), "%.*s", us ? (int)(us - lease.holder) : (int)strlen(lease.holder),
		 lease.holder);
	if (!gs_cmd_valid_name(v->leader)) {
		snprintf(v->why, sizeof(v->why), "the Lease's holder \"%.200s\" names no pod", lease.holder);
		return -1;
	}
	return 0;
}

void gs_cmd_ask_leader(struct gs_cmd *c, const char *debug_path, struct gs_cmd_daemon *v)
{
	char path[GS_CMD_PATH_MAX];
	struct gs_cmd_fetch f;

	memset(v, 0, sizeof(*v));
	if (find_leader(c, v) < 0)
		return;
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/https:%s:%s/proxy%s", c->o->sched_ns, v->leader,
		 c->o->secure_port, debug_path);
	if (gs_cmd_get_quiet(c, path, GS_AUTHZ_HEADER, &f) < 0) {
		snprintf(v->why, sizeof(v->why), "asking the leader %s: %s", v->leader, f.msg);
		return;
	}
	if (f.status != 200) {
		const char *hint = f.status == 401   ? ": it checks a bearer token only (a kubeconfig with a client "
						       "certificate has none to forward)"
				   : f.status == 403 ? ": the caller needs get on /debug/* (ClusterRole "
						       "gpu-scheduler-debug-reader) and pods/proxy in the daemon's "
						       "namespace"
						     : "";
		snprintf(v->why, sizeof(v->why), "the leader %s answered HTTP %d%s", v->leader, f.status, hint);
		free(f.body);
		return;
	}
	cJSON *j = gs_cmd_parse_json(f.body);
	int object = cJSON_IsObject(j);
	cJSON_Delete(j);
	if (!object) {
		snprintf(v->why, sizeof(v->why), "the leader %s's answer is not a JSON object", v->leader);
		free(f.body);
		return;
	}
	v->json = f.body;
	size_t len = strlen(v->json);
	while (len && (v->json[len - 1] == '\n' || v->json[len - 1] == ' '))
		v->json[--len] = '\0';
}
