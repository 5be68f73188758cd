/*
 * explain_cmd.c: `gpu-scheduler explain` (explain_cmd.h). One short-lived loop: each read is sent and
 * waited for in turn, then the engine is fed in the order that makes its own state current (the
 * daemon's numbers for the gang budgets, the GPUPlacementMaps, the node and the pods on it first, the
 * pod last) and asked.
 */
#include "k8s/explain_cmd.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/clock.h"
#include "k8s/cmd.h"
#include "k8s/decode.h"
#include "sched/gang.h"
#include "sched/explain_out.h"
#include "sched/sched.h"

/* What the running daemon says of the pod (ask_daemon). */
struct daemon_view {
	struct gs_cmd_daemon d; /* the leader and its /debug/pods answer */
	char state[32];         /* its state of the pod */
	char verdict[40];       /* its verdict, "NONE" when every check passes */
	char message[600];      /* its reason's message, "" when none */
	/* Its gang's namespace budget (gang.budget, explain_out.h): seeded into the command's engine,
	 * which cannot see the other gangs' reservations (budget_seed). */
	int has_budget, admitted;
	long budget[4]; /* maxMembers, maxGpus, heldMembers, heldGpus */
};

struct run {
	struct gs_cmd c;
	const struct gs_cmd_opts *o;
	struct gs_sched *s;
	unsigned skipped_on; /* of c.skipped, the pods on the node on (the rest: alias nodes, gang members) */
	char on[256];        /* the node whose pods were read, "" when none */
};

static void copy_json_str(char *out, size_t size, const cJSON *obj, const char *key, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	snprintf(out, size, "%s", cJSON_IsString(v) ? v->valuestring : dflt);
}

/* gang.budget of the daemon's answer (explain_out.h), when whole: four numbers >= 0 and admitted. */
static void read_budget(const cJSON *b, struct daemon_view *v)
{
	static const char *const keys[4] = {"maxMembers", "maxGpus", "heldMembers", "heldGpus"};
	const cJSON *adm = cJSON_GetObjectItemCaseSensitive(b, "admitted");

	if (!cJSON_IsObject(b) || !cJSON_IsBool(adm))
		return;
	for (int i = 0; i < 4; i++) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(b, keys[i]);
		if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > GS_GANG_LIMIT_MAX * 100.0)
			return;
		v->budget[i] = (long)n->valuedouble;
	}
	v->admitted = cJSON_IsTrue(adm);
	v->has_budget = 1;
}

/* The running daemon's verdict on the pod: its /debug/pods/NS/NAME (cmd.h, gs_cmd_ask_leader). */
static void ask_daemon(struct run *x, const char *ns, const char *name, struct daemon_view *v)
{
	char path[GS_CMD_PATH_MAX];

	memset(v, 0, sizeof(*v));
	snprintf(path, sizeof(path), "/debug/pods/%s/%s", ns, name);
	gs_cmd_ask_leader(&x->c, path, &v->d);
	if (!v->d.json)
		return;
	cJSON *j = gs_cmd_parse_json(v->d.json);
	copy_json_str(v->state, sizeof(v->state), j, "state", "?");
	copy_json_str(v->verdict, sizeof(v->verdict), j, "verdict", "NONE");
	copy_json_str(v->message, sizeof(v->message), j, "message", "");
	read_budget(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "gang"), "budget"), v);
	cJSON_Delete(j);
}

/* The command's engine judges the pod's gang against its namespace's budget with the daemon's numbers:
 * the bounds and what the other gangs hold are the daemon's state. A gang the daemon admitted holds
 * its claim there: no bound here either. */
static int budget_seed(struct gs_sched *s, const char *ns, const struct daemon_view *v)
{
	if (!v->has_budget)
		return 0;
	if (v->admitted)
		return gs_sched_gang_budget_seed(s, ns, 0, 0, 0, 0);
	return gs_sched_gang_budget_seed(s, ns, v->budget[0], v->budget[1], v->budget[2], v->budget[3]);
}

/* The daemon's view after the evaluation: beside it in text, as "daemon" in the JSON object. */
static int add_daemon_view(struct gs_buf *out, const struct daemon_view *v, enum gs_wait_reason verdict, int json)
{
	const char *mine = gs_wait_reason_name(verdict);
	int agree = v->d.json && strcmp(v->verdict, mine) == 0, r = 0;

	if (json) {
		/* gs_explain_json wrote one object and a newline: the view goes in as its last member. */
		while (out->len && (out->data[out->len - 1] == '\n' || out->data[out->len - 1] == '}'))
			if (out->data[--out->len] == '}')
				break;
		r |= gs_buf_append_str(out, ",\"daemon\":{");
		if (v->d.json) {
			r |= gs_buf_append_str(out, "\"leader\":");
			r |= gs_buf_append_json_str(out, v->d.leader);
			r |= gs_buf_printf(out, ",\"agrees\":%s,\"answer\":%s}}\n", agree ? "true" : "false",
					   v->d.json);
		} else {
			r |= gs_buf_append_str(out, "\"error\":");
			r |= gs_buf_append_json_str(out, v->d.why);
			r |= gs_buf_append_str(out, "}}\n");
		}
		return r < 0 ? -E2BIG : 0;
	}
	if (!v->d.json)
		return gs_buf_printf(out, "\nThe daemon: not asked: %s.\n", v->d.why) < 0 ? -E2BIG : 0;
	r |= gs_buf_printf(out, "\nThe daemon (leader %s, through the apiserver's pod proxy) says:\n  state:    %s\n",
			   v->d.leader, v->state);
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
	char path[GS_CMD_PATH_MAX], what[600], err[256];
	struct gs_cmd_fetch f;
	int r;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", x->o->ns, x->o->arg);
	snprintf(what, sizeof(what), "pod %s/%s", x->o->ns, x->o->arg);
	if ((r = gs_cmd_get(&x->c, path, what, 0, &f)) < 0)
		return r;
	cJSON *j = gs_cmd_parse_json(f.body);
	free(f.body);
	r = j ? gs_decode_pod(j, x->o->annotation, pod, err, sizeof(err)) : -EINVAL;
	cJSON_Delete(j);
	if (r < 0)
		fprintf(stderr, "gpu-scheduler explain: %s: %s\n", what,
			j ? err : "the apiserver's answer is not JSON");
	return r;
}

/* The pods on the node the map's name resolves to now (by name, else the one node with the alias): the
 * engine tells, from a look at the pod alone over the nodes fed so far. */
static int feed_pods_resolved(struct run *x, const char *ns, const char *name, const char *node,
			      const struct gs_pod_obj *pod)
{
	struct gs_sched_pod_info pi;

	if (pod->node_name && *pod->node_name) {
		snprintf(x->on, sizeof(x->on), "%s", pod->node_name);
	} else {
		gs_sched_pod_upsert(x->s, pod, 0);
		snprintf(x->on, sizeof(x->on), "%s",
			 gs_sched_pod_find(x->s, ns, name, &pi) == 0 && pi.resolved ? pi.resolved : node);
		gs_sched_pod_delete(x->s, pod->uid, 0);
	}
	return gs_cmd_feed_pods_on(&x->c, x->s, x->on, pod->uid);
}

/* Which node does its entry name? A first engine with the pod alone (and its object, for a pod by
 * reference) tells: *node (owned), NULL when none. 0, or <0 said. */
static int entry_node(struct run *x, const struct gs_pod_obj *pod, char **node)
{
	struct gs_sched_pod_info pi = {0};
	int r = 0;

	*node = NULL;
	if (!(x->s = gs_cmd_engine(x->o)))
		return -ENOMEM;
	if (pod->node_name && *pod->node_name) { /* bound: its node, whatever the map says now */
		*node = gs_xstrdup(pod->node_name);
	} else if (!pod->map_ref || (r = gs_cmd_feed_gpms(&x->c, x->s, pod->ns)) == 0) {
		gs_sched_pod_upsert(x->s, pod, 0); /* by reference, its entry is its object's */
		if (gs_sched_pod_find(x->s, pod->ns, pod->name, &pi) == 0 && pi.node)
			*node = gs_xstrdup(pi.node);
	}
	gs_sched_free(x->s);
	x->s = NULL;
	return r;
}

/* The engine as the daemon would hold it: every GPUPlacementMap (the pods on the node may name those of
 * any namespace) and PodDisruptionBudget, the node and its pods, the pod last. 0, or <0 said. */
static int feed_engine(struct run *x, const struct gs_pod_obj *pod, const char *node)
{
	unsigned skipped;
	int r;

	x->c.skipped_gpms = 0; /* counted again: the first engine's were of the pod's namespace */
	if ((r = gs_cmd_feed_gpms(&x->c, x->s, NULL)) < 0 || (r = gs_cmd_feed_pdbs(&x->c, x->s)) < 0)
		return r;
	if (node && (r = gs_cmd_feed_node(&x->c, x->s, node)) < 0)
		return r;
	if (node && r == 0 && !pod->node_name && x->o->alias_label && *x->o->alias_label &&
	    (r = gs_cmd_feed_alias_nodes(&x->c, x->s, node)) < 0)
		return r;
	skipped = x->c.skipped;
	if (node && (r = feed_pods_resolved(x, pod->ns, pod->name, node, pod)) < 0)
		return r;
	x->skipped_on = x->c.skipped - skipped;
	/* a gang placed already places this member alone, as the daemon does */
	if (pod->placement && pod->owner_uid && !pod->node_name &&
	    (r = gs_cmd_feed_bound_of(&x->c, x->s, pod->ns, pod->owner_uid, pod->uid)) < 0)
		return r;
	return gs_sched_pod_upsert(x->s, pod, 0);
}

/* What the feeds left out, on stderr. Pods are read on a node only when the pod's entry names one
 * (x->on; a pod without an entry has none), besides the nodes carrying the alias label and the bound
 * members of its all-or-nothing gang, whatever their node. */
static void say_skipped(const struct run *x)
{
	if (x->skipped_on)
		fprintf(stderr, "gpu-scheduler explain: %u pods on node %s did not decode and were left out\n",
			x->skipped_on, x->on);
	if (x->c.skipped > x->skipped_on)
		fprintf(stderr,
			"gpu-scheduler explain: %u other items read (nodes carrying the alias label, bound members "
			"of the pod's gang) did not decode and were left out\n",
			x->c.skipped - x->skipped_on);
	if (x->c.skipped_gpms)
		fprintf(stderr, "gpu-scheduler explain: %u GPUPlacementMaps did not decode and were left out\n",
			x->c.skipped_gpms);
}

static int explain(struct run *x)
{
	struct gs_pod_obj pod;
	struct gs_sched_explain e;
	struct daemon_view v;
	struct gs_buf out;
	char *node = NULL;
	int r;

	memset(&pod, 0, sizeof(pod));
	memset(&v, 0, sizeof(v));
	if ((r = read_pod(x, &pod)) < 0)
		return r;
	if (!pod.scheduler_name || strcmp(pod.scheduler_name, x->o->scheduler_name) != 0) {
		fprintf(stderr,
			"gpu-scheduler explain: pod %s/%s has spec.schedulerName \"%s\", not \"%s\": "
			"gpu-scheduler does not place it\n",
			x->o->ns, x->o->arg, pod.scheduler_name ? pod.scheduler_name : "default-scheduler",
			x->o->scheduler_name);
		gs_pod_obj_free(&pod);
		return -EINVAL;
	}
	if (x->o->ask_daemon)
		ask_daemon(x, pod.ns, pod.name, &v); /* first: its budget numbers go into the engine */
	if ((r = entry_node(x, &pod, &node)) == 0) {
		x->s = gs_cmd_engine(x->o);
		r = !x->s ? -ENOMEM : budget_seed(x->s, pod.ns, &v) < 0 ? -EINVAL : feed_engine(x, &pod, node);
	}
	if (r == 0 && (r = gs_sched_explain(x->s, pod.ns, pod.name, &e)) == 0) {
		int64_t now = gs_clock_wall_ms();
		gs_buf_init(&out, 0);
		int json = strcmp(x->o->output, "json") == 0;
		r = json ? gs_explain_json(&e, now, &out) : gs_explain_text(&e, now, &out);
		if (r == 0 && x->o->ask_daemon)
			r = add_daemon_view(&out, &v, e.verdict, json);
		if (r == 0)
			fwrite(out.data, 1, out.len, stdout);
		say_skipped(x);
		gs_buf_free(&out);
		gs_sched_explain_free(&e);
	}
	gs_sched_free(x->s);
	free(v.d.json);
	free(node);
	gs_pod_obj_free(&pod);
	return r;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: gpu-scheduler explain [-n NAMESPACE] [OPTIONS] POD\n\n"
		   "Says what gpu-scheduler would do with POD now and what it waits for: its map entry, every\n"
		   "placement check on the node the entry names, and who holds the entry's GPUs. Reads the\n"
		   "apiserver and asks the running daemon (when it can; a gang's namespace budget is judged with\n"
		   "the daemon's numbers) and says whether the two agree.\n"
		   "Also: kubectl gpu-scheduler explain POD.\n\n");
	gs_cmd_usage_options(f);
}

/* The explanation on a loop of its own, with its own apiserver client. */
static int run_explain(const struct gs_cmd_opts *o, struct gs_kubeconfig *kc)
{
	struct run x = {.o = o};
	int r;

	if ((r = gs_cmd_start(&x.c, o, kc)) < 0)
		return r;
	r = explain(&x);
	gs_cmd_stop(&x.c);
	return r;
}

int gs_explain_cmd(int argc, char **argv)
{
	struct gs_cmd_opts o;
	struct gs_kubeconfig kc;
	int r = gs_cmd_parse(argc, argv, &o, 1, usage);

	if (r >= 0)
		return r;
	if ((r = gs_cmd_setup(&o, &kc)) == 0)
		r = run_explain(&o, &kc) < 0 ? 1 : 0;
	gs_kubeconfig_free(&kc);
	return r;
}
