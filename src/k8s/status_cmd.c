/*
 * status_cmd.c: `gpu-scheduler status` (status_cmd.h). The reads, then the engine fed in the order that
 * makes its state current (the GPUPlacementMaps, the nodes, the pods bound on them, the owner's or the
 * object's pods last), then the view and the daemon's beside it.
 */
#include "k8s/status_cmd.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/clock.h"
#include "k8s/cmd.h"
#include "k8s/decode.h"
#include "sched/gpm.h"
#include "sched/map.h"
#include "sched/sched.h"
#include "sched/workload_out.h"

#define MAX_NODES 4096 /* node names looked up: at most a map's entries */

/* What the owner says: its uid, its pods' selector and the map of its pod template (inline or by
 * reference). */
struct owner {
	const char *kind; /* "StatefulSet", "Job" */
	char *uid;
	char *selector; /* "k=v,k2=v2" from spec.selector.matchLabels, "" when none */
	char *map;      /* the pod template's annotation, NULL when absent */
	char *map_ref;  /* the GPUPlacementMap the pod template names (GS_MAP_REF_ANNOTATION), NULL: none */
	char *scheduler_name;
};

struct run {
	struct gs_cmd c;
	const struct gs_cmd_opts *o;
	struct gs_sched *s;
	struct owner ow;
	char *name;   /* the owner's name */
	char *pods;   /* the list of the namespace's pods with the selector (JSON) */
	char **nodes; /* node names to read, and then the real names to list pods on */
	size_t n_nodes;
	int pass; /* of the pod list: COLLECT, PLACE or FEED */
	int gpm;  /* the target is a GPUPlacementMap (ow.kind GS_GPM_KIND): its pods are those naming it */
};

enum { COLLECT, PLACE, FEED };

static void usage(FILE *f)
{
	fprintf(f, "Usage: gpu-scheduler status [-n NAMESPACE] [OPTIONS] statefulset/NAME|job/NAME|gpm/NAME\n\n"
		   "Shows every pod of a mapped StatefulSet or Job by index: its node, devices, state, why it\n"
		   "waits and its age, with the indices of the map that have no pod yet (not created). Reads the\n"
		   "apiserver, then asks the running daemon (when it can) and says whether the two agree.\n"
		   "gpuplacementmap/NAME (gpm/NAME): the object's status as the scheduler counts it, and the\n"
		   "same rows for the pods that name it.\n"
		   "Also: kubectl gpu-scheduler status statefulset/NAME.\n\n");
	gs_cmd_usage_options(f);
}

static void add_node(struct run *x, const char *name)
{
	for (size_t i = 0; i < x->n_nodes; i++)
		if (strcmp(x->nodes[i], name) == 0)
			return;
	if (x->n_nodes == MAX_NODES)
		return;
	x->nodes = gs_xreallocarray(x->nodes, x->n_nodes + 1, sizeof(*x->nodes));
	x->nodes[x->n_nodes++] = gs_xstrdup(name);
}

static void free_nodes(struct run *x)
{
	for (size_t i = 0; i < x->n_nodes; i++)
		free(x->nodes[i]);
	free(x->nodes);
	x->nodes = NULL;
	x->n_nodes = 0;
}

/* The node a pod's own map names for its index, when it has one. */
static void add_entry_node(struct run *x, const char *text, size_t len, const char *label, const char *job,
			   const char *name)
{
	struct gs_map *m;
	struct gs_map_error err;
	enum gs_index_source src;
	const struct gs_map_entry *e;
	long index;

	if (!text || gs_map_parse(text, len, &m, &err) < 0)
		return;
	if (gs_map_pod_index(label, job, name, &index, &src) == 0 && (e = gs_map_lookup(m, index)))
		add_node(x, e->node);
	gs_map_unref(m);
}

/* ---- the owner ------------------------------------------------------------------------------------- */

static char *json_dup(const cJSON *v)
{
	return cJSON_IsString(v) ? gs_xstrdup(v->valuestring) : NULL;
}

static int read_owner(struct run *x)
{
	const struct gs_cmd_opts *o = x->o;
	char path[GS_CMD_PATH_MAX], what[600];
	struct gs_cmd_fetch f;
	struct gs_buf sel;
	int r, stateful = strcmp(x->ow.kind, "StatefulSet") == 0;

	snprintf(path, sizeof(path), "/apis/%s/namespaces/%s/%s/%s", stateful ? "apps/v1" : "batch/v1", o->ns,
		 stateful ? "statefulsets" : "jobs", x->name);
	snprintf(what, sizeof(what), "%s %s/%s", x->ow.kind, o->ns, x->name);
	if ((r = gs_cmd_get(&x->c, path, what, 0, &f)) < 0)
		return r;
	cJSON *j = gs_cmd_parse_json(f.body), *v;
	free(f.body);
	x->ow.uid = json_dup(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "uid"));
	if (!x->ow.uid) {
		fprintf(stderr, "gpu-scheduler status: %s: the apiserver's answer has no metadata.uid\n", what);
		cJSON_Delete(j);
		return -EINVAL;
	}
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(j, "spec");
	cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(spec, "template");
	v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tmpl, "metadata"), "annotations");
	x->ow.map = json_dup(cJSON_GetObjectItemCaseSensitive(v, o->annotation));
	x->ow.map_ref = json_dup(cJSON_GetObjectItemCaseSensitive(v, GS_MAP_REF_ANNOTATION));
	v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tmpl, "spec"), "schedulerName");
	x->ow.scheduler_name = json_dup(v);
	gs_buf_init(&sel, 0);
	v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(spec, "selector"), "matchLabels");
	cJSON *l;
	cJSON_ArrayForEach(l, v) {
		if (cJSON_IsString(l))
			gs_buf_printf(&sel, "%s%s=%s", sel.len ? "," : "", l->string, l->valuestring);
	}
	x->ow.selector = gs_xstrdup(sel.len ? sel.data : "");
	gs_buf_free(&sel);
	cJSON_Delete(j);
	if (!x->ow.scheduler_name || strcmp(x->ow.scheduler_name, o->scheduler_name) != 0) {
		fprintf(stderr,
			"gpu-scheduler status: %s's pod template has spec.schedulerName \"%s\", not \"%s\": "
			"gpu-scheduler does not place its pods\n",
			what, x->ow.scheduler_name ? x->ow.scheduler_name : "default-scheduler", o->scheduler_name);
		return -EINVAL;
	}
	return 0;
}

/* The GPUPlacementMap as the engine holds it (fed already): its map, whose nodes are read. */
static int read_object(struct run *x)
{
	struct gs_gpm_view g;

	if (!gs_sched_gpm_find(x->s, x->o->ns, x->name, &g)) {
		fprintf(stderr,
			"gpu-scheduler status: GPUPlacementMap %s/%s not found (or its CRD, "
			"deploy/crd/gpuplacementmaps.yaml, is not installed)\n",
			x->o->ns, x->name);
		return -ENOENT;
	}
	x->ow.map = gs_xstrndup(g.map_text, g.map_len);
	x->ow.selector = gs_xstrdup("");
	return 0;
}

/* ---- the owner's pods ------------------------------------------------------------------------------ */

static int read_pods(struct run *x)
{
	char path[GS_CMD_PATH_MAX], esc[1800], what[600];
	struct gs_cmd_fetch f;
	int r;

	if (gs_kube_escape(x->ow.selector, esc, sizeof(esc)) < 0)
		return -E2BIG;
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods%s%s", x->o->ns, esc[0] ? "?labelSelector=" : "", esc);
	snprintf(what, sizeof(what), "the pods of %s %s/%s", x->ow.kind, x->o->ns, x->name); /* gpm: all */
	if ((r = gs_cmd_get(&x->c, path, what, 0, &f)) < 0)
		return r;
	x->pods = f.body;
	return 0;
}

/* A pod of the view: the owner's (its controller's uid), or one naming the GPUPlacementMap. */
static int ours(const struct run *x, const struct gs_pod_obj *p)
{
	if (x->gpm)
		return p->map_ref && strcmp(p->map_ref, x->name) == 0;
	return p->owner_uid && strcmp(p->owner_uid, x->ow.uid) == 0;
}

/* One pod of the list, in the pass x->pass: only the view's (ours). */
static int pod_item(enum gs_obj_kind kind, const void *obj, void *ud)
{
	struct run *x = ud;
	const struct gs_pod_obj *p = obj;
	struct gs_sched_pod_info pi;
	struct gs_gpm_view g;

	if (!ours(x, p))
		return 0;
	switch (x->pass) {
	case COLLECT:
		if (p->node_name && *p->node_name)
			add_node(x, p->node_name);
		else if (p->map_ref && gs_sched_gpm_find(x->s, p->ns, p->map_ref, &g))
			add_entry_node(x, g.map_text, g.map_len, p->label_pod_index, p->job_index, p->name);
		else
			add_entry_node(x, p->map_text, p->map_len, p->label_pod_index, p->job_index, p->name);
		break;
	case PLACE: /* where an unbound pod's entry resolves now, over the nodes read: whose pods to read */
		if (p->node_name && *p->node_name) {
			add_node(x, p->node_name);
			break;
		}
		gs_sched_pod_upsert(x->s, p, 0);
		if (gs_sched_pod_find(x->s, p->ns, p->name, &pi) == 0 && (pi.resolved || pi.node))
			add_node(x, pi.resolved ? pi.resolved : pi.node);
		gs_sched_pod_delete(x->s, p->uid, 0);
		break;
	default:
		gs_sched_pod_upsert(x->s, p, 0);
	}
	return 0;
}

static int pods_pass(struct run *x, int pass)
{
	char err[256], *rv = NULL, *cont = NULL;
	unsigned skipped = 0;
	int r;

	x->pass = pass;
	r = gs_decode_list_ex(x->pods, strlen(x->pods), GS_OBJ_POD, x->o->annotation, pod_item, x, &rv, &cont,
			      pass == FEED ? &x->c.skipped : &skipped, err, sizeof(err));
	free(rv);
	free(cont);
	if (r < 0)
		fprintf(stderr, "gpu-scheduler status: the pods of %s %s/%s: %s\n", x->ow.kind, x->o->ns, x->name, err);
	return r;
}

/* The map whose every index is a row: the template's (or the object's, for gpm/NAME), else the object
 * the template names by reference, as the engine holds it (the objects are fed first). NULL: none. */
static const char *view_map_text(const struct run *x, size_t *len)
{
	struct gs_gpm_view g;

	if (x->ow.map) {
		*len = strlen(x->ow.map);
		return x->ow.map;
	}
	if (!x->ow.map_ref || !gs_sched_gpm_find(x->s, x->o->ns, x->ow.map_ref, &g))
		return NULL;
	*len = g.map_len;
	return g.map_text;
}

/* The engine as the daemon would hold it: the nodes, the pods on them, the owner's pods last. */
static int feed(struct run *x)
{
	struct gs_map *m;
	struct gs_map_error err;
	size_t n, len = 0;
	const char *text = view_map_text(x, &len);
	int r;

	if (text && gs_map_parse(text, len, &m, &err) == 0) {
		for (size_t i = 0; i < gs_map_count(m); i++)
			add_node(x, gs_map_entry_at(m, i)->node);
		gs_map_unref(m);
	}
	if ((r = pods_pass(x, COLLECT)) < 0)
		return r;
	n = x->n_nodes;
	for (size_t i = 0; i < n; i++) {
		if ((r = gs_cmd_feed_node(&x->c, x->s, x->nodes[i])) < 0)
			return r;
		if (r == 0 && x->o->alias_label && *x->o->alias_label &&
		    (r = gs_cmd_feed_alias_nodes(&x->c, x->s, x->nodes[i])) < 0)
			return r;
	}
	free_nodes(x);
	if ((r = pods_pass(x, PLACE)) < 0)
		return r;
	for (size_t i = 0; i < x->n_nodes; i++)
		if ((r = gs_cmd_feed_pods_on(&x->c, x->s, x->nodes[i], NULL)) < 0)
			return r;
	return pods_pass(x, FEED);
}

/* ---- the daemon's view, row by row --------------------------------------------------------------- */

/* A row as the two views compare it: who (index and pod) and what (state, reason, node). */
struct key {
	char who[300];
	char what[300];
};

static int key_cmp(const void *a, const void *b)
{
	return strcmp(((const struct key *)a)->who, ((const struct key *)b)->who);
}

static void key_set(struct key *k, long index, const char *pod, const char *state, const char *reason, const char *node)
{
	if (index >= 0)
		snprintf(k->who, sizeof(k->who), "index %ld %s", index, pod ? pod : "(not created)");
	else
		snprintf(k->who, sizeof(k->who), "no index %s", pod ? pod : "?");
	snprintf(k->what, sizeof(k->what), "%s%s%s on %s", state, reason ? " " : "", reason ? reason : "",
		 node ? node : "no node");
}

static const char *str_of(const cJSON *row, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The daemon's rows (its JSON) as keys, sorted; *n of them. NULL when it has no "rows" array. */
static struct key *daemon_keys(const char *json, size_t *n)
{
	cJSON *j = gs_cmd_parse_json(json), *rows = cJSON_GetObjectItemCaseSensitive(j, "rows"), *row;
	struct key *k = NULL;

	*n = 0;
	if (!cJSON_IsArray(rows)) {
		cJSON_Delete(j);
		return NULL;
	}
	k = gs_xcalloc((size_t)cJSON_GetArraySize(rows) + 1, sizeof(*k));
	cJSON_ArrayForEach(row, rows) {
		const cJSON *i = cJSON_GetObjectItemCaseSensitive(row, "index");
		key_set(&k[(*n)++], cJSON_IsNumber(i) ? (long)i->valuedouble : -1, str_of(row, "pod"),
			str_of(row, "state") ? str_of(row, "state") : "?", str_of(row, "reason"), str_of(row, "node"));
	}
	cJSON_Delete(j);
	qsort(k, *n, sizeof(*k), key_cmp);
	return k;
}

/* Where the two differ, one line each into out (text) or counted only; returns how many. */
static size_t compare(const struct gs_sched_workload *w, const struct key *d, size_t nd, struct gs_buf *out)
{
	struct key *m = gs_xcalloc(w->n_rows + 1, sizeof(*m));
	size_t i = 0, j = 0, diff = 0;

	for (size_t r = 0; r < w->n_rows; r++) {
		const struct gs_sched_workload_row *x = &w->rows[r];
		key_set(&m[r], x->index, x->created ? x->pod.name : NULL, gs_workload_row_state(x),
			x->created && x->pod.state == GS_POD_WAITING ? gs_wait_reason_name(x->pod.reason) : NULL,
			x->node);
	}
	qsort(m, w->n_rows, sizeof(*m), key_cmp);
	while (i < w->n_rows || j < nd) {
		int c = i == w->n_rows ? 1 : j == nd ? -1 : strcmp(m[i].who, d[j].who);
		if (c == 0 && strcmp(m[i].what, d[j].what) == 0) {
			i++, j++;
			continue;
		}
		diff++;
		if (out && c == 0)
			gs_buf_printf(out, "  %s: here %s, the daemon %s\n", m[i].who, m[i].what, d[j].what);
		else if (out && c < 0)
			gs_buf_printf(out, "  %s: here %s, the daemon has no such row\n", m[i].who, m[i].what);
		else if (out)
			gs_buf_printf(out, "  %s: the daemon %s, no such row here\n", d[j].who, d[j].what);
		i += c <= 0;
		j += c >= 0;
	}
	free(m);
	return diff;
}

/* out ends with one JSON object and a newline: both cut, so that members go in after its last. */
static void reopen_object(struct gs_buf *out)
{
	while (out->len && (out->data[out->len - 1] == '\n' || out->data[out->len - 1] == '}'))
		if (out->data[--out->len] == '}')
			break;
}

/* The daemon's view after ours: beside it in text, as "daemon" in the JSON object. */
static int add_daemon_view(struct gs_buf *out, const struct gs_sched_workload *w, const struct gs_cmd_daemon *v,
			   int json)
{
	size_t nd = 0;
	struct key *d = v->json ? daemon_keys(v->json, &nd) : NULL;
	int r = 0, agree = d && compare(w, d, nd, NULL) == 0;

	if (json) {
		reopen_object(out);
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
	} else if (!v->json) {
		r |= gs_buf_printf(out, "\nThe daemon: not asked: %s.\n", v->why);
	} else if (agree) {
		r |= gs_buf_printf(out,
				   "\nThe daemon (leader %s, through the apiserver's pod proxy) agrees: the same "
				   "pods, states, reasons and nodes.\n",
				   v->leader);
	} else {
		r |= gs_buf_printf(out, "\nThe daemon (leader %s, through the apiserver's pod proxy) DISAGREES:\n",
				   v->leader);
		if (!d)
			r |= gs_buf_append_str(out, "  its answer has no rows\n");
		else
			compare(w, d, nd, out);
		r |= gs_buf_append_str(out,
				       "The daemon decides; its caches follow the apiserver's watch a moment "
				       "behind, and it counts what it has in flight (a binding, a reservation).\n");
	}
	free(d);
	return r < 0 ? -E2BIG : 0;
}

/* ---- the command ----------------------------------------------------------------------------------- */

/* The object's view: its status as the engine counts it as a block before the rows (text) or a member
 * "status" of the object (JSON). */
static int gpm_view(struct run *x, const struct gs_sched_workload *w, int64_t now, struct gs_buf *out, int json)
{
	struct gs_gpm_status st;
	int known = gs_sched_gpm_status(x->s, x->o->ns, x->name, &st), r = 0;

	if (json)
		return known ? gs_workload_gpm_json(w, &st, now, out) : gs_workload_json(w, now, out);
	if (known && gs_workload_gpm_status_text(&st, out) < 0)
		r = -E2BIG;
	return r ? r : gs_workload_text(w, now, out);
}

/* The view (with the object's status for a GPUPlacementMap) into out; w filled (free it). */
static int view(struct run *x, struct gs_sched_workload *w, struct gs_buf *out, int json)
{
	const struct gs_cmd_opts *o = x->o;
	int64_t now = gs_clock_wall_ms();

	if (!x->gpm) {
		if (!x->ow.map && x->ow.map_ref) /* by reference: every index of the object's map */
			gs_sched_workload_ref(x->s, o->ns, x->ow.kind, x->name, x->ow.map_ref, w);
		else
			gs_sched_workload(x->s, o->ns, x->ow.kind, x->name, x->ow.map,
					  x->ow.map ? strlen(x->ow.map) : 0, w);
		return json ? gs_workload_json(w, now, out) : gs_workload_text(w, now, out);
	}
	gs_sched_gpm_workload(x->s, o->ns, x->name, w);
	return gpm_view(x, w, now, out, json);
}

static int show(struct run *x)
{
	const struct gs_cmd_opts *o = x->o;
	struct gs_sched_workload w;
	struct gs_buf out;
	char path[GS_CMD_PATH_MAX];
	int json = strcmp(o->output, "json") == 0, r;

	gs_buf_init(&out, 0);
	r = view(x, &w, &out, json);
	if (r == 0 && o->ask_daemon) {
		struct gs_cmd_daemon v = {0};
		snprintf(path, sizeof(path), "/debug/workloads/%s/%s/%s", o->ns,
			 x->gpm                           ? "gpuplacementmap"
			 : strcmp(x->ow.kind, "Job") == 0 ? "job"
							  : "statefulset",
			 x->name);
		gs_cmd_ask_leader(&x->c, path, &v);
		r = add_daemon_view(&out, &w, &v, json);
		free(v.json);
	}
	if (r == 0)
		fwrite(out.data, 1, out.len, stdout);
	if (x->c.skipped)
		fprintf(stderr, "gpu-scheduler status: %u pods did not decode and were left out\n", x->c.skipped);
	if (x->c.skipped_gpms)
		fprintf(stderr, "gpu-scheduler status: %u GPUPlacementMaps did not decode and were left out\n",
			x->c.skipped_gpms);
	gs_buf_free(&out);
	gs_sched_workload_free(&w);
	return r;
}

static int run_status(struct run *x, struct gs_kubeconfig *kc)
{
	int r;

	if ((r = gs_cmd_start(&x->c, x->o, kc)) < 0)
		return r;
	/* The objects first, as the daemon holds them: the pods by reference are judged by them. */
	x->s = gs_cmd_engine(x->o);
	r = x->s ? gs_cmd_feed_gpms(&x->c, x->s, NULL) : -ENOMEM;
	if (r == 0)
		r = x->gpm ? read_object(x) : read_owner(x);
	if (r == 0 && (r = read_pods(x)) == 0 && (r = feed(x)) >= 0)
		r = show(x);
	gs_sched_free(x->s);
	gs_cmd_stop(&x->c);
	return r;
}

static int gpm_word(const char *word)
{
	return strcasecmp(word, "gpuplacementmap") == 0 || strcasecmp(word, "gpuplacementmaps") == 0 ||
	       strcasecmp(word, "gpm") == 0 || strcasecmp(word, "gpuplacementmap.gpu-scheduler.io") == 0 ||
	       strcasecmp(word, "gpuplacementmaps.gpu-scheduler.io") == 0;
}

/* "statefulset/NAME" (or sts/, job/, gpm/, ...) into the owner's kind and x->name: 0, or 2 said. */
static int parse_target(struct run *x, const char *arg)
{
	const char *slash = strchr(arg, '/');
	char word[32];

	if (slash && (size_t)(slash - arg) < sizeof(word)) {
		snprintf(word, sizeof(word), "%.*s", (int)(slash - arg), arg);
		x->ow.kind = gs_sched_workload_kind(word);
		x->gpm = !x->ow.kind && gpm_word(word);
		x->ow.kind = x->gpm ? GS_GPM_KIND : x->ow.kind;
	}
	if (!slash || !x->ow.kind) {
		fprintf(stderr, "gpu-scheduler status: \"%s\": expected statefulset/NAME, job/NAME or gpm/NAME\n", arg);
		return 2;
	}
	if (!gs_cmd_valid_name(slash + 1)) {
		fprintf(stderr, "gpu-scheduler status: \"%s\" is not a valid Kubernetes name\n", slash + 1);
		return 2;
	}
	x->name = gs_xstrdup(slash + 1);
	return 0;
}

int gs_status_cmd(int argc, char **argv)
{
	struct gs_cmd_opts o;
	struct gs_kubeconfig kc;
	struct run x = {.o = &o};
	int r = gs_cmd_parse(argc, argv, &o, 0, usage);

	if (r >= 0)
		return r;
	if ((r = parse_target(&x, o.arg)) != 0)
		return r;
	if ((r = gs_cmd_setup(&o, &kc)) == 0)
		r = run_status(&x, &kc) < 0 ? 1 : 0;
	gs_kubeconfig_free(&kc);
	free(x.name);
	free(x.ow.uid);
	free(x.ow.selector);
	free(x.ow.map);
	free(x.ow.map_ref);
	free(x.ow.scheduler_name);
	free(x.pods);
	free_nodes(&x);
	return r;
}
