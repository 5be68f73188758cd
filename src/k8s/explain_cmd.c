/*
 * explain_cmd.c: `gpu-scheduler explain` (explain_cmd.h). One short-lived loop: each read is sent and
 * waited for in turn, then the engine is fed in the order that makes its own state current (the node
 * and the pods on it first, the pod last) and asked.
 */
#include "k8s/explain_cmd.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "core/buf.h"
#include "core/json_nul.h"
#include "core/log.h"
#include "k8s/authz.h"
#include "k8s/kube.h"
#include "k8s/decode.h"
#include "k8s/leader.h"
#include "k8s/lease.h"
#include "k8s/kubeconfig.h"
#include "sched/explain_out.h"
#include "sched/sched.h"

#define FETCH_TIMEOUT_MS 15000
#define PATH_MAX_LEN     2048

struct opts {
	const char *ns, *pod, *kubeconfig, *scheduler_name, *annotation, *output, *alias_label;
	const char *sched_ns, *lease, *secure_port; /* where the daemon runs: its Lease and secure port */
	const char *ignored_resources, *ignored_groups;
	int sharing_any;
	int check_env;
	int ask_daemon;
};

static int valid_name(const char *v);

/* What the running daemon says of the pod (ask_daemon). */
struct daemon_view {
	char leader[256];  /* the leader's pod */
	char state[32];    /* its state of the pod */
	char verdict[40];  /* its verdict, "NONE" when every check passes */
	char message[600]; /* its reason's message, "" when none */
	char *json;        /* its /debug/pods answer (owned); NULL when it was not asked or did not answer */
	char why[512];     /* with json NULL: why */
};

struct fetch {
	int done, err, status;
	char *body;
	char msg[256];
};

struct run {
	uv_loop_t loop;
	struct gs_kube *kube;
	const struct opts *o;
	struct gs_sched *s;
	const char *skip_uid; /* the explained pod, fed last */
	unsigned skipped;
};

static void on_fetch(int err, const struct gs_http_response *resp, const char *msg, void *ud)
{
	struct fetch *f = ud;

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
static int fail_status(const char *what, const struct fetch *f)
{
	int code = 0;
	char *reason = NULL, *message = NULL;

	if (gs_decode_status(f->body, strlen(f->body), &code, &reason, &message) == 0 && message)
		fprintf(stderr, "gpu-scheduler explain: %s: %s\n", what, message);
	else
		fprintf(stderr, "gpu-scheduler explain: %s: HTTP %d\n", what, f->status);
	free(reason);
	free(message);
	return -EIO;
}

/*
 * GET path: 0 with f->body (the caller frees it) for a 200, 1 for a 404 when allow_404 (nothing to
 * free), else <0 with a message naming what on stderr.
 */
static int fetch(struct run *x, const char *path, const char *what, int allow_404, struct fetch *f)
{
	memset(f, 0, sizeof(*f));
	int r = gs_kube_request(x->kube, "GET", path, NULL, NULL, GS_KUBE_HIGH, FETCH_TIMEOUT_MS, on_fetch, f);
	if (r < 0) {
		fprintf(stderr, "gpu-scheduler explain: GET %s: %s\n", path, uv_strerror(r));
		return r;
	}
	while (!f->done)
		uv_run(&x->loop, UV_RUN_ONCE);
	if (f->err) {
		fprintf(stderr, "gpu-scheduler explain: GET %s: %s\n", path, f->msg[0] ? f->msg : uv_strerror(f->err));
		return f->err;
	}
	if (f->status == 200)
		return 0;
	r = f->status == 404 && allow_404 ? 1 : fail_status(what, f);
	free(f->body);
	f->body = NULL;
	return r;
}

/* An answer as cJSON, each NUL of a string masked as the daemon's decoder masks it (core/json_nul.h),
 * so that explain reads a name exactly as the daemon does. NULL when it is not JSON. */
static cJSON *parse_body(const char *body)
{
	size_t len = strlen(body);
	char *masked;
	const char *text = gs_json_mask_nul(body, len, &masked);
	cJSON *j = text ? cJSON_ParseWithLength(text, len) : NULL;

	free(masked);
	return j;
}

/* A GET that says nothing on stderr: 0 with f->status and f->body (the caller frees it), or <0 with f->msg. */
static int fetch_quiet(struct run *x, const char *path, const char *token_header, struct fetch *f)
{
	struct gs_kube_req req = {.method = "GET",
				  .path = path,
				  .timeout_ms = FETCH_TIMEOUT_MS,
				  .prio = GS_KUBE_HIGH,
				  .token_header = token_header};
	int r;

	memset(f, 0, sizeof(*f));
	if ((r = gs_kube_send(x->kube, &req, on_fetch, f, NULL)) < 0) {
		snprintf(f->msg, sizeof(f->msg), "%s", uv_strerror(r));
		return r;
	}
	while (!f->done)
		uv_run(&x->loop, UV_RUN_ONCE);
	if (f->err && !f->msg[0])
		snprintf(f->msg, sizeof(f->msg), "%s", uv_strerror(f->err));
	return f->err;
}

static void copy_json_str(char *out, size_t size, const cJSON *obj, const char *key, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	snprintf(out, size, "%s", cJSON_IsString(v) ? v->valuestring : dflt);
}

/*
 * The running daemon's verdict on the pod: the leader (the holder of the Lease sched_ns/lease, whose
 * identity is its pod name and a suffix, main.c) asked for /debug/pods/NS/NAME on its secure port
 * through the apiserver's pod proxy, with the caller's own token in GS_AUTHZ_HEADER (the proxy drops
 * Authorization; the daemon checks the token with TokenReview and SubjectAccessReview). Fills v; v->json
 * NULL with v->why when it could not be asked.
 */
static void ask_daemon(struct run *x, const char *ns, const char *name, struct daemon_view *v)
{
	char path[PATH_MAX_LEN], err[256];
	struct gs_lease lease;
	struct fetch f;
	const char *us;

	memset(v, 0, sizeof(*v));
	snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", x->o->sched_ns,
		 x->o->lease);
	if (fetch_quiet(x, path, NULL, &f) < 0) {
		snprintf(v->why, sizeof(v->why), "reading the Lease %s/%s: %s", x->o->sched_ns, x->o->lease, f.msg);
		return;
	}
	if (f.status != 200 || gs_lease_decode(f.body, strlen(f.body), &lease, err, sizeof(err)) < 0 ||
	    !lease.holder[0]) {
		snprintf(v->why, sizeof(v->why),
			 "%s Lease %s/%s (--scheduler-namespace, --lease-name): is the daemon "
			 "running with leader election?",
			 f.status == 200 ? "no holder in the" : "cannot read the", x->o->sched_ns, x->o->lease);
		free(f.body);
		return;
	}
	free(f.body);
	us = strrchr(lease.holder, '_');
	snprintf(v->leader, sizeof(v->leader), "%.*s", us ? (int)(us - lease.holder) : (int)strlen(lease.holder),
		 lease.holder);
	if (!valid_name(v->leader)) {
		snprintf(v->why, sizeof(v->why), "the Lease's holder \"%.200s\" names no pod", lease.holder);
		return;
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/https:%s:%s/proxy/debug/pods/%s/%s", x->o->sched_ns,
		 v->leader, x->o->secure_port, ns, name);
	if (fetch_quiet(x, path, GS_AUTHZ_HEADER, &f) < 0) {
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
	cJSON *j = parse_body(f.body);
	if (!cJSON_IsObject(j)) {
		snprintf(v->why, sizeof(v->why), "the leader %s's answer is not a JSON object", v->leader);
		cJSON_Delete(j);
		free(f.body);
		return;
	}
	copy_json_str(v->state, sizeof(v->state), j, "state", "?");
	copy_json_str(v->verdict, sizeof(v->verdict), j, "verdict", "NONE");
	copy_json_str(v->message, sizeof(v->message), j, "message", "");
	cJSON_Delete(j);
	v->json = f.body;
	size_t len = strlen(v->json);
	while (len && (v->json[len - 1] == '\n' || v->json[len - 1] == ' '))
		v->json[--len] = '\0';
}

/* The daemon's view after the evaluation: beside it in text, as "daemon" in the JSON object. */
static int add_daemon_view(struct gs_buf *out, const struct daemon_view *v, enum gs_wait_reason verdict, int json)
{
	const char *mine = gs_wait_reason_name(verdict);
	int agree = v->json && strcmp(v->verdict, mine) == 0, r = 0;

	if (json) {
		/* gs_explain_json wrote one object and a newline: the view goes in as its last member. */
		while (out->len && (out->data[out->len - 1] == '\n' || out->data[out->len - 1] == '}'))
			if (out->data[--out->len] == '}')
				break;
		r |= gs_buf_append_str(out, ",\"daemon\":{");
		if (v->json) {
			r |= gs_buf_append_str(out, "\"leader\":");
			r |= gs_buf_append_json_str(out, v->leader);
			r |= gs_buf_printf(out, ",\"agrees\":%s,\"answer\":%s}}\n", agree ? "true" : "false", v->json);
		} else {
			r |= gs_buf_append_str(out, "\"error\":");
			r |= gs_buf_append_json_str(out, v->why);
			r |= gs_buf_append_str(out, "}}\n");
		}
		return r < 0 ? -E2BIG : 0;
	}
	if (!v->json)
		return gs_buf_printf(out, "\nThe daemon: not asked: %s.\n", v->why) < 0 ? -E2BIG : 0;
	r |= gs_buf_printf(out, "\nThe daemon (leader %s, through the apiserver's pod proxy) says:\n  state:    %s\n",
			   v->leader, v->state);
	r |= gs_buf_printf(out, "  verdict:  %s%s%s\n", v->verdict, v->message[0] ? ": " : "", v->message);
	if (agree)
		r |= gs_buf_append_str(out, "  It agrees with the evaluation above.\n");
	else
		r |= gs_buf_printf(out,
				   "  It DISAGREES: the daemon's verdict is %s, the evaluation above says %s. The "
				   "daemon "
				   "decides; its caches follow the apiserver's watch a moment behind, and it counts "
				   "what it "
				   "has in flight (a binding, a reservation).\n",
				   v->verdict, mine);
	return r < 0 ? -E2BIG : 0;
}

static int read_pod(struct run *x, struct gs_pod_obj *pod)
{
	char path[PATH_MAX_LEN], what[600], err[256];
	struct fetch f;
	int r;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", x->o->ns, x->o->pod);
	snprintf(what, sizeof(what), "pod %s/%s", x->o->ns, x->o->pod);
	if ((r = fetch(x, path, what, 0, &f)) < 0)
		return r;
	cJSON *j = parse_body(f.body);
	free(f.body);
	r = j ? gs_decode_pod(j, x->o->annotation, pod, err, sizeof(err)) : -EINVAL;
	cJSON_Delete(j);
	if (r < 0)
		fprintf(stderr, "gpu-scheduler explain: %s: %s\n", what,
			j ? err : "the apiserver's answer is not JSON");
	return r;
}

/* The node named name into the engine; absent is fine (the engine then says it does not exist). */
static int feed_node(struct run *x, const char *name)
{
	char path[PATH_MAX_LEN], err[256];
	struct gs_node_obj n;
	struct fetch f;
	int r;

	snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
	if ((r = fetch(x, path, path, 1, &f)) != 0)
		return r > 0 ? 0 : r; /* absent: the engine then says so */
	cJSON *j = parse_body(f.body);
	free(f.body);
	memset(&n, 0, sizeof(n));
	r = j ? gs_decode_node(j, &n, err, sizeof(err)) : -EINVAL;
	cJSON_Delete(j);
	if (r < 0) {
		fprintf(stderr, "gpu-scheduler explain: node %s: %s\n", name, j ? err : "not JSON");
		return r;
	}
	r = gs_sched_node_upsert(x->s, &n, 0);
	gs_node_obj_free(&n);
	return r < 0 ? r : 1;
}

static int feed_node_item(enum gs_obj_kind kind, const void *obj, void *ud)
{
	struct run *x = ud;
	return gs_sched_node_upsert(x->s, obj, 0);
}

/* The nodes carrying the alias label with value name (the map names no node by that name). */
static int feed_alias_nodes(struct run *x, const char *name)
{
	char path[PATH_MAX_LEN], sel[600], esc[1800], err[256];
	char *rv = NULL, *cont = NULL;
	struct fetch f;
	int r;

	snprintf(sel, sizeof(sel), "%s=%s", x->o->alias_label, name);
	if (gs_kube_escape(sel, esc, sizeof(esc)) < 0)
		return -E2BIG;
	snprintf(path, sizeof(path), "/api/v1/nodes?labelSelector=%s", esc);
	if ((r = fetch(x, path, "nodes by alias", 0, &f)) < 0)
		return r;
	r = gs_decode_list_ex(f.body, strlen(f.body), GS_OBJ_NODE, NULL, feed_node_item, x, &rv, &cont, &x->skipped,
			      err, sizeof(err));
	free(f.body);
	free(rv);
	free(cont);
	if (r < 0)
		fprintf(stderr, "gpu-scheduler explain: nodes labelled %s: %s\n", sel, err);
	return r;
}

static int feed_item(enum gs_obj_kind kind, const void *obj, void *ud)
{
	struct run *x = ud;
	const struct gs_pod_obj *p = obj;

	if (x->skip_uid && p->uid && strcmp(p->uid, x->skip_uid) == 0)
		return 0;
	gs_sched_pod_upsert(x->s, p, 0);
	return 0;
}

/* Every non-terminal pod bound to node, whatever its scheduler: what the node's totals and ledger hold. */
static int feed_pods_on(struct run *x, const char *node)
{
	char path[PATH_MAX_LEN], sel[600], esc[1800], err[256];
	struct fetch f;
	char *rv = NULL, *cont = NULL;
	int r;

	snprintf(sel, sizeof(sel), "spec.nodeName=%s,status.phase!=Succeeded,status.phase!=Failed", node);
	if (gs_kube_escape(sel, esc, sizeof(esc)) < 0)
		return -E2BIG;
	snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=%s", esc);
	if ((r = fetch(x, path, "pods on the node", 0, &f)) < 0)
		return r;
	r = gs_decode_list_ex(f.body, strlen(f.body), GS_OBJ_POD, x->o->annotation, feed_item, x, &rv, &cont,
			      &x->skipped, err, sizeof(err));
	free(f.body);
	free(rv);
	free(cont);
	if (r < 0)
		fprintf(stderr, "gpu-scheduler explain: pods on node %s: %s\n", node, err);
	return r;
}

/* The pods on the node the map's name resolves to now (by name, else the one node with the alias): the
 * engine tells, from a look at the pod alone over the nodes fed so far. */
static int feed_pods_resolved(struct run *x, const char *ns, const char *name, const char *node,
			      const struct gs_pod_obj *pod)
{
	struct gs_sched_pod_info pi;
	char *real = NULL;
	int r;

	if (pod->node_name && *pod->node_name)
		return feed_pods_on(x, pod->node_name);
	gs_sched_pod_upsert(x->s, pod, 0);
	if (gs_sched_pod_find(x->s, ns, name, &pi) == 0 && pi.resolved)
		real = gs_xstrdup(pi.resolved);
	gs_sched_pod_delete(x->s, pod->uid, 0);
	r = feed_pods_on(x, real ? real : node);
	free(real);
	return r;
}

static struct gs_sched *new_engine(const struct opts *o)
{
	struct gs_sched_config cfg;

	gs_sched_config_init(&cfg);
	cfg.scheduler_name = o->scheduler_name;
	cfg.annotation = o->annotation;
	cfg.device_sharing_any = o->sharing_any;
	cfg.check_env = o->check_env;
	cfg.alias_label = o->alias_label && *o->alias_label ? o->alias_label : NULL;
	cfg.ignored_resources = o->ignored_resources;
	cfg.ignored_resource_groups = o->ignored_groups;
	return gs_sched_new(&cfg);
}

static int explain(struct run *x)
{
	struct gs_pod_obj pod;
	struct gs_sched_pod_info pi = {0};
	struct gs_sched_explain e;
	struct gs_buf out;
	char *node = NULL;
	int r;

	memset(&pod, 0, sizeof(pod));
	if ((r = read_pod(x, &pod)) < 0)
		return r;
	if (!pod.scheduler_name || strcmp(pod.scheduler_name, x->o->scheduler_name) != 0) {
		fprintf(stderr,
			"gpu-scheduler explain: pod %s/%s has spec.schedulerName \"%s\", not \"%s\": "
			"gpu-scheduler does not place it\n",
			x->o->ns, x->o->pod, pod.scheduler_name ? pod.scheduler_name : "default-scheduler",
			x->o->scheduler_name);
		gs_pod_obj_free(&pod);
		return -EINVAL;
	}
	/* Which node does its entry name? A first engine with the pod alone tells. */
	x->s = new_engine(x->o);
	if (!x->s) {
		gs_pod_obj_free(&pod);
		return -ENOMEM;
	}
	gs_sched_pod_upsert(x->s, &pod, 0);
	if (pod.node_name && *pod.node_name) /* bound: its node, whatever the map says now */
		node = gs_xstrdup(pod.node_name);
	else if (gs_sched_pod_find(x->s, pod.ns, pod.name, &pi) == 0 && pi.node)
		node = gs_xstrdup(pi.node);
	gs_sched_free(x->s);

	/* Then the engine as the daemon would hold it: the node and its pods, the pod last. */
	x->s = r < 0 ? NULL : new_engine(x->o);
	x->skip_uid = pod.uid;
	if (!x->s)
		r = -ENOMEM;
	else if (node && (r = feed_node(x, node)) < 0)
		;
	else if (node && r == 0 && !pod.node_name && x->o->alias_label && *x->o->alias_label &&
		 (r = feed_alias_nodes(x, node)) < 0)
		;
	else if (node && (r = feed_pods_resolved(x, pod.ns, pod.name, node, &pod)) < 0)
		;
	else
		r = gs_sched_pod_upsert(x->s, &pod, 0);
	if (r == 0 && (r = gs_sched_explain(x->s, pod.ns, pod.name, &e)) == 0) {
		int64_t now = gs_clock_wall_ms();
		gs_buf_init(&out, 0);
		int json = strcmp(x->o->output, "json") == 0;
		r = json ? gs_explain_json(&e, now, &out) : gs_explain_text(&e, now, &out);
		if (r == 0 && x->o->ask_daemon) {
			struct daemon_view v;
			ask_daemon(x, pod.ns, pod.name, &v);
			r = add_daemon_view(&out, &v, e.verdict, json);
			free(v.json);
		}
		if (r == 0)
			fwrite(out.data, 1, out.len, stdout);
		if (x->skipped)
			fprintf(stderr, "gpu-scheduler explain: %u pods on node %s did not decode and were left out\n",
				x->skipped, node);
		gs_buf_free(&out);
		gs_sched_explain_free(&e);
	}
	gs_sched_free(x->s);
	free(node);
	gs_pod_obj_free(&pod);
	return r;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: gpu-scheduler explain [-n NAMESPACE] [OPTIONS] POD\n\n"
		   "Says what gpu-scheduler would do with POD now and what it waits for: its map entry, every\n"
		   "placement check on the node the entry names, and who holds the entry's GPUs. Reads the\n"
		   "apiserver, then asks the running daemon (when it can) and says whether the two agree.\n"
		   "Also: kubectl gpu-scheduler explain POD.\n\n"
		   "  -n, --namespace NS          the pod's namespace (default: the kubeconfig context's, else "
		   "default)\n"
		   "      --kubeconfig PATH       default: $KUBECONFIG, ~/.kube/config, then in-cluster\n"
		   "      --scheduler-name NAME   the daemon's --scheduler-name (default gpu-scheduler)\n"
		   "      --annotation NAME       the daemon's --annotation (default gpu-scheduling-map)\n"
		   "      --device-sharing MODE   the daemon's --device-sharing: exclusive (default) or any\n"
		   "      --require-env BOOL      the daemon's --require-env: true (default) or false\n"
		   "      --node-alias-label KEY  the daemon's --node-alias-label (default gpu-scheduler.io/node; "
		   "empty: off)\n"
		   "      --ignored-resources LIST, --ignored-resource-groups LIST  the daemon's (default: none)\n"
		   "  -o, --output FORMAT         text (default) or json (the daemon's /debug/pods answer, with the\n"
		   "                              running daemon's own answer as \"daemon\")\n"
		   "      --daemon BOOL           also ask the running daemon for its verdict (default true): the "
		   "Lease's\n"
		   "                              holder, through the apiserver's pod proxy, with your own token\n"
		   "      --scheduler-namespace NS  the daemon's namespace and Lease namespace (default kube-system)\n"
		   "      --lease-name NAME       the daemon's --leader-elect-resource-name (default gpu-scheduler)\n"
		   "      --secure-port PORT      the daemon's --secure-addr port (default 10259)\n"
		   "  -h, --help\n");
}

/* --kubeconfig, $KUBECONFIG (first of its list), ~/.kube/config if it exists, in-cluster. */
static int load_kubeconfig(const char *flag, struct gs_kubeconfig *kc, char *err, size_t errlen)
{
	char home[PATH_MAX_LEN], first[PATH_MAX_LEN];
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

/* A DNS-1123 subdomain's characters (pod names; namespaces are a subset), 1..253 of them. */
static int valid_name(const char *v)
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

static void on_closed(void *ud)
{
	(void)ud;
}

/* The command line into *o: -1 to go on, else the exit code (0 after --help, 2 for a usage error). */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{"namespace", required_argument, NULL, 'n'},
		{"kubeconfig", required_argument, NULL, 'k'},
		{"scheduler-name", required_argument, NULL, 's'},
		{"annotation", required_argument, NULL, 'a'},
		{"device-sharing", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"require-env", required_argument, NULL, 'r'},
		{"node-alias-label", required_argument, NULL, 'l'},
		{"daemon", required_argument, NULL, 'D'},
		{"ignored-resources", required_argument, NULL, 'I'},
		{"ignored-resource-groups", required_argument, NULL, 'G'},
		{"scheduler-namespace", required_argument, NULL, 'N'},
		{"lease-name", required_argument, NULL, 'L'},
		{"secure-port", required_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	*o = (struct opts){.scheduler_name = "gpu-scheduler",
			   .annotation = "gpu-scheduling-map",
			   .output = "text",
			   .alias_label = "gpu-scheduler.io/node",
			   .sched_ns = "kube-system",
			   .lease = "gpu-scheduler",
			   .secure_port = "10259"};
	const char *sharing = "exclusive", *env = "true", *daemon = "true";
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
		case 'l': o->alias_label = optarg; break;
		case 'D': daemon = optarg; break;
		case 'I': o->ignored_resources = optarg; break;
		case 'G': o->ignored_groups = optarg; break;
		case 'N': o->sched_ns = optarg; break;
		case 'L': o->lease = optarg; break;
		case 'P': o->secure_port = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		/* clang-format on */
	}
	if (optind != argc - 1 || (strcmp(o->output, "text") != 0 && strcmp(o->output, "json") != 0) ||
	    (strcmp(sharing, "exclusive") != 0 && strcmp(sharing, "any") != 0) ||
	    (strcmp(env, "true") != 0 && strcmp(env, "false") != 0) ||
	    (strcmp(daemon, "true") != 0 && strcmp(daemon, "false") != 0) || !valid_name(o->sched_ns) ||
	    !valid_name(o->lease) || !valid_port(o->secure_port)) {
		usage(stderr);
		return 2;
	}
	o->pod = argv[optind];
	o->sharing_any = strcmp(sharing, "any") == 0;
	o->check_env = strcmp(env, "true") == 0;
	o->ask_daemon = strcmp(daemon, "true") == 0;
	if (!valid_name(o->pod) || (o->ns && !valid_name(o->ns))) {
		fprintf(stderr, "gpu-scheduler explain: \"%s\" is not a valid Kubernetes name\n",
			valid_name(o->pod) ? o->ns : o->pod);
		return 2;
	}
	return -1;
}

/* The explanation on a loop of its own, with its own apiserver client. */
static int run_explain(struct opts *o, struct gs_kubeconfig *kc)
{
	struct run x = {.o = o};
	struct gs_kube_opts ko = {.kc = kc, .max_conns = 1, .user_agent = "gpu-scheduler-explain"};
	char err[512];
	int r;

	uv_loop_init(&x.loop);
	if ((r = gs_kube_new(&x.loop, &ko, &x.kube, err, sizeof(err))) < 0) {
		fprintf(stderr, "gpu-scheduler explain: %s\n", err);
	} else {
		r = explain(&x);
		gs_kube_close(x.kube, on_closed, NULL);
		uv_run(&x.loop, UV_RUN_DEFAULT);
	}
	uv_loop_close(&x.loop);
	return r;
}

int gs_explain_cmd(int argc, char **argv)
{
	struct opts o;
	struct gs_kubeconfig kc;
	char err[512];
	int r = parse_args(argc, argv, &o);

	if (r >= 0)
		return r;
	gs_log_setup(GS_LOG_WARN, GS_LOG_TEXT);
	memset(&kc, 0, sizeof(kc));
	if (load_kubeconfig(o.kubeconfig, &kc, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpu-scheduler explain: %s\n", err);
		return 1;
	}
	if (!o.ns)
		o.ns = kc.namespace && *kc.namespace ? kc.namespace : "default";
	/* Names go into URL paths as they are: refuse what a Kubernetes name cannot hold. */
	if (!valid_name(o.pod) || !valid_name(o.ns)) {
		fprintf(stderr, "gpu-scheduler explain: \"%s\" is not a valid Kubernetes name\n",
			valid_name(o.pod) ? o.ns : o.pod);
		gs_kubeconfig_free(&kc);
		return 2;
	}

	r = run_explain(&o, &kc);
	gs_kubeconfig_free(&kc);
	return r < 0 ? 1 : 0;
}
