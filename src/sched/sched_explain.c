/*
 * sched_explain.c: the engine's answer to "why is my pod pending" (sched.h, explain). Each check of
 * placement (sched_place.c node_checks, sched_use.c gs_sched__fit) is run on its own, in placement's
 * order, so the first failure is the reason placement gives and the others show what else would
 * stand in the way once it is cleared. Reads the engine, never changes it.
 */
#include "sched/sched_explain.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "sched/checks.h"
#include "sched/sched_agent.h"
#include "sched/sched_gang.h"
#include "sched/sched_ledger.h"
#include "sched/sched_node.h"
#include "sched/sched_place.h"
#include "sched/sched_pdb.h"
#include "sched/sched_preempt.h"
#include "sched/sched_use.h"

static void set_check(struct gs_explain_check *c, enum gs_explain_outcome o, enum gs_wait_reason r, const char *msg)
{
	c->outcome = o;
	c->reason = o == GS_EXPLAIN_FAIL ? r : GS_WAIT_NONE;
	snprintf(c->msg, sizeof(c->msg), "%s", msg ? msg : "");
}

/* Runs one check returning a reason: PASS on NONE, else FAIL with what it wrote. */
static void outcome(struct gs_explain_check *c, enum gs_wait_reason r)
{
	c->outcome = r == GS_WAIT_NONE ? GS_EXPLAIN_PASS : GS_EXPLAIN_FAIL;
	c->reason = r;
	if (r == GS_WAIT_NONE)
		c->msg[0] = '\0';
}

struct holders_ctx {
	struct gs_sched_explain *e;
	const char *owner;
	const char *dev;
	size_t len;
	size_t cap;
	const struct gs_sched__use *self; /* the pod's own nomination (sched_preempt.h): not a holder */
};

static void add_holder(const struct gs_sched__use *u, int shared, void *ud)
{
	struct holders_ctx *h = ud;
	struct gs_sched_explain *e = h->e;

	if (u == h->self)
		return;
	if (e->n_holders == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 4;
		struct gs_explain_holder *v = gs_xreallocarray(e->holders, h->cap, sizeof(*v));
		e->holders = v;
	}
	struct gs_explain_holder *x = &e->holders[e->n_holders++];
	x->device = gs_xmalloc(h->len + 1);
	memcpy(x->device, h->dev, h->len);
	x->device[h->len] = '\0';
	x->pod = gs_xstrdup(u->key ? u->key : u->uid);
	x->ignored = NULL;
	x->plugin_id = NULL;
	x->same_owner = strcmp(u->owner ? u->owner : u->uid, h->owner) == 0; /* keys: namespace and uid */
	x->owner = gs_xstrdup(gs_sched__owner_uid(u->owner ? u->owner : u->uid));
	x->shared = shared;
}

/* The pod the device plugin gave h's device of n to, by the agent's fresh data (not self_key). */
static void add_plugin_holder(const struct gs_sched__node *n, const char *self_key, struct holders_ctx *h)
{
	const struct gs_inuse_dev *v = gs_sched__plugin_holder(n, h->dev, h->len, self_key);
	const struct gs_sched__use *u = v ? gs_hmap_get_str(&n->keyed, v->holder) : NULL;

	if (!u)
		return;
	add_holder(u, 0, h);
	struct gs_explain_holder *x = &h->e->holders[h->e->n_holders - 1];
	free(x->owner);
	x->owner = gs_xstrdup("");
	x->same_owner = 0;
	x->plugin_id = gs_xstrdup(v->id);
}

/* The agent's data for n as a phrase (explain_out.h). */
static char *agent_phrase(const struct gs_sched *s, const struct gs_sched__node *n)
{
	char buf[400], table[128] = "no index table";
	const struct gs_inuse *d = n->agent.data;

	if (!n->agent.text)
		return NULL; /* no agent here: nothing to say (messages that need it say it) */
	if (!n->agent.fresh) {
		gs_sched__agent_why_unknown(s, n, buf, sizeof(buf));
		return gs_xstrdup(buf);
	}
	if (d->n_index && n->agent.table_moved)
		snprintf(table, sizeof(table),
			 "an index table that changed without a reboot (not believed: the one before is used)");
	else if (d->n_index)
		snprintf(table, sizeof(table), "an index table up to GPU %zu", d->n_index - 1);
	snprintf(buf, sizeof(buf), "fresh: %zu devices held through the device plugin, %s", d->n_devs, table);
	return gs_xstrdup(buf);
}

/* Pods on n whose claim of one of the devices of list (canonical "0,1") the ledger ignores. O(uses):
 * explain is asked by people, not on the binding path. */
static void add_ignored(const struct gs_sched *s, const struct gs_sched__node *n, const char *list,
			struct holders_ctx *h)
{
	struct gs_hmap_iter it = {0};

	while (gs_hmap_next(&s->uses, &it)) {
		const struct gs_sched__use *u = it.val;
		if (u->node != n || !u->ignored)
			continue;
		for (const char *q = list; *q;) {
			size_t len;
			const char *d = q;
			q = gs_sched__next_dev(q, &len);
			if (!gs_sched__listed(u->ignored, d, len))
				continue;
			h->dev = d;
			h->len = len;
			add_holder(u, 0, h);
			struct gs_explain_holder *x = &h->e->holders[h->e->n_holders - 1];
			free(x->pod);
			x->pod = gs_xstrdup(u->ignored_key);
			x->same_owner = 0;
			x->ignored = u->ignored_why;
		}
	}
}

/* The node checks, each on its own, for a pending pod with an entry and a present node n. */
static void node_checks(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
			struct gs_sched_explain *e)
{
	const struct gs_sched__cons *c = p->spec ? &p->spec->cons : NULL;
	const struct gs_node_obj *o = &n->obj;
	struct gs_explain_check *k = e->checks;

	outcome(&k[GS_EXPLAIN_NODE_POLICY],
		gs_sched__check_policy(n, p->ns, k[GS_EXPLAIN_NODE_POLICY].msg, GS_EXPLAIN_MSG));
	outcome(&k[GS_EXPLAIN_NODE_GPUS], gs_sched__check_gpus(p, n, k[GS_EXPLAIN_NODE_GPUS].msg, GS_EXPLAIN_MSG));
	outcome(&k[GS_EXPLAIN_AFFINITY],
		c && (!gs_checks_affinity(n->name, o->labels, o->n_labels, c->node_selector, c->n_node_selector,
					  c->has_affinity, c->terms, c->n_terms, k[GS_EXPLAIN_AFFINITY].msg,
					  GS_EXPLAIN_MSG) ||
		      !gs_checks_os(n->name, o->labels, o->n_labels, c->os_name, k[GS_EXPLAIN_AFFINITY].msg,
				    GS_EXPLAIN_MSG))
			? GS_WAIT_NODE_AFFINITY
			: GS_WAIT_NONE);
	outcome(&k[GS_EXPLAIN_TAINTS],
		gs_checks_taints(n->name, o->taints, o->n_taints, c ? c->tolerations : NULL, c ? c->n_tolerations : 0,
				 k[GS_EXPLAIN_TAINTS].msg, GS_EXPLAIN_MSG)
			? GS_WAIT_TAINT
			: GS_WAIT_NONE);
	if (p->reserved) {
		/* Its reservation is counted on n: measured against it the pod would block itself. It fitted
		 * when it took it (every event that could change that placed it again); its gang's commit
		 * measures it once more. */
		for (int i = GS_EXPLAIN_HOST_PORTS; i <= GS_EXPLAIN_DEVICES; i++)
			set_check(&k[i], GS_EXPLAIN_PASS, GS_WAIT_NONE, NULL);
		return;
	}
	/* The nominations that do not count for p set aside, as placement's fit does (sched_use.h). */
	gs_sched__nominations_hide(s, p, n, 1);
	outcome(&k[GS_EXPLAIN_HOST_PORTS], gs_sched__fit_ports(p, n, k[GS_EXPLAIN_HOST_PORTS].msg, GS_EXPLAIN_MSG));
	outcome(&k[GS_EXPLAIN_RESOURCES],
		gs_sched__fit_resources(s, p, n, k[GS_EXPLAIN_RESOURCES].msg, GS_EXPLAIN_MSG));
	outcome(&k[GS_EXPLAIN_DEVICES], gs_sched__fit_devices(s, p, n, k[GS_EXPLAIN_DEVICES].msg, GS_EXPLAIN_MSG));
	gs_sched__nominations_hide(s, p, n, 0);
}

/* Ready and cordon as placement judges them (gs_sched__node_block_for): a pass says when a taint or a
 * toleration decided it. */
static void node_state(const struct gs_sched__pod *p, const struct gs_sched__node *n, struct gs_sched_explain *e)
{
	enum gs_wait_reason r = gs_sched__node_block_for(n, p);
	const struct gs_taint *t = gs_sched__condition_taint(n);
	char buf[GS_EXPLAIN_MSG];

	if (r == GS_WAIT_NODE_NOT_READY) {
		snprintf(buf, sizeof(buf), "node \"%s\" is not Ready (and carries neither the %s nor the %s taint)",
			 n->name, GS_TAINT_NOT_READY, GS_TAINT_UNREACHABLE);
		set_check(&e->checks[GS_EXPLAIN_NODE_READY], GS_EXPLAIN_FAIL, r, buf);
	} else if (!n->ready) {
		snprintf(buf, sizeof(buf), "node \"%s\" is not Ready: its taint %.63s decides (see taints)", n->name,
			 t->key);
		set_check(&e->checks[GS_EXPLAIN_NODE_READY], GS_EXPLAIN_PASS, GS_WAIT_NONE, buf);
	} else {
		set_check(&e->checks[GS_EXPLAIN_NODE_READY], GS_EXPLAIN_PASS, GS_WAIT_NONE, NULL);
	}
	if (!n->unschedulable) {
		set_check(&e->checks[GS_EXPLAIN_NODE_SCHEDULABLE], GS_EXPLAIN_PASS, GS_WAIT_NONE, NULL);
		return;
	}
	/* Judged on its own, also when Not Ready blocks first: as placement will once the node is Ready. */
	const struct gs_sched__cons *c = p->spec ? &p->spec->cons : NULL;
	int tolerated = c && gs_sched__tolerates_cordon(c->tolerations, c->n_tolerations);
	snprintf(buf, sizeof(buf), "node \"%s\" is cordoned (spec.unschedulable)%s%s%s", n->name,
		 tolerated ? ", tolerated by the pod (" : "", tolerated ? GS_TAINT_UNSCHEDULABLE : "",
		 tolerated ? ":NoSchedule)" : "");
	set_check(&e->checks[GS_EXPLAIN_NODE_SCHEDULABLE], tolerated ? GS_EXPLAIN_PASS : GS_EXPLAIN_FAIL,
		  GS_WAIT_NODE_CORDONED, buf);
}

/* NODE_ALIAS_AMBIGUOUS with every node named: "3 nodes carry the alias label K=V: a, b, c" (cut at
 * the buffer's end with "..."). */
static void alias_nodes(char *buf, size_t size, const struct gs_sched *s, const struct gs_sched__alias *a,
			const char *value)
{
	const struct gs_list *l;
	size_t at =
		(size_t)snprintf(buf, size, "%zu nodes carry the alias label %s=%s:", a->n, s->cfg.alias_label, value);
	int first = 1;

	GS_LIST_FOREACH(l, &a->nodes) {
		const struct gs_sched__node *n = GS_CONTAINER_OF(l, struct gs_sched__node, alink);
		if (at >= size)
			break;
		if (at + strlen(n->name) + 6 >= size) {
			snprintf(buf + at, size - at, " ...");
			break;
		}
		at += (size_t)snprintf(buf + at, size - at, "%s %s", first ? "" : ",", n->name);
		first = 0;
	}
}

static const char *state_skip(const struct gs_sched__pod *p, const char *bound_node, char *buf, size_t size)
{
	switch (p->state) {
	case GS_POD_BOUND:
		snprintf(buf, size, "the pod is bound to node \"%s\"", bound_node ? bound_node : "?");
		return buf;
	case GS_POD_BINDING:
		return "a Binding for the pod is in flight";
	case GS_POD_FINISHED:
		return "the pod is deleting or terminal";
	default:
		return NULL;
	}
}

void gs_sched__pod_info(const struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched_pod_info *out)
{
	const struct gs_sched__alias *amb;
	int pending = p->state == GS_POD_WAITING || p->state == GS_POD_QUEUED || p->state == GS_POD_BACKOFF;
	const struct gs_sched__node *n =
		p->entry && pending ? gs_sched__resolve(s, p->entry->node, &(int){0}, &amb) : NULL;

	*out = (struct gs_sched_pod_info){
		.uid = p->uid,
		.ns = p->ns,
		.name = p->name,
		.state = p->state,
		.reason = p->state == GS_POD_WAITING ? p->reason : GS_WAIT_NONE,
		.message = p->state == GS_POD_WAITING ? p->msg : NULL,
		.index = p->index,
		.index_source = p->index_source,
		.node = p->entry ? p->entry->node : NULL,
		.devices = p->entry ? p->entry->devices : NULL,
		.resolved = n ? n->name : NULL,
		.attempts = p->attempts,
		.due_ms = p->state == GS_POD_BACKOFF ? p->due_ms : 0,
		.created_ms = p->created_ms,
		.priority = p->priority,
		.map_line = p->entry ? p->entry->line : 0,
		.nominated = gs_sched__nominated_node(s, p),
	};
}

/* Every check from first on skipped, for why. */
static void skip_from(struct gs_sched_explain *e, int first, const char *why)
{
	for (int i = first; i < GS_EXPLAIN__COUNT; i++)
		set_check(&e->checks[i], GS_EXPLAIN_SKIPPED, GS_WAIT_NONE, why);
}

/* The checks of the entry's node n (resolved by name or alias; amb when the alias is ambiguous): the
 * node's own, then placement's node checks. Returns n, or NULL when there is no one node to judge. */
static struct gs_sched__node *node_all(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
				       const struct gs_sched__alias *amb, struct gs_sched_explain *e)
{
	char buf[GS_EXPLAIN_MSG];

	if (amb) {
		alias_nodes(buf, sizeof(buf), s, amb, p->entry->node);
		set_check(&e->checks[GS_EXPLAIN_NODE_EXISTS], GS_EXPLAIN_FAIL, GS_WAIT_NODE_ALIAS_AMBIGUOUS, buf);
		skip_from(e, GS_EXPLAIN_NODE_READY, "the node name is ambiguous");
		return NULL;
	}
	if (!n || !n->present) {
		if (s->cfg.alias_label)
			snprintf(buf, sizeof(buf), "node \"%s\" does not exist and no node carries the label %s=%s",
				 p->entry->node, s->cfg.alias_label, p->entry->node);
		else
			snprintf(buf, sizeof(buf), "node \"%s\" does not exist", p->entry->node);
		set_check(&e->checks[GS_EXPLAIN_NODE_EXISTS], GS_EXPLAIN_FAIL, GS_WAIT_NODE_MISSING, buf);
		skip_from(e, GS_EXPLAIN_NODE_READY, "the node does not exist");
		return NULL;
	}
	set_check(&e->checks[GS_EXPLAIN_NODE_EXISTS], GS_EXPLAIN_PASS, GS_WAIT_NONE, NULL);
	node_state(p, n, e);
	node_checks(s, p, n, e);
	return n;
}

/* Who else holds the pod's devices: on the entry's node n, or, for a pod bound without an entry in
 * view, on the node of its use u; and the agent's data of that node. */
static void holders(struct gs_sched *s, const struct gs_sched__pod *p, const struct gs_sched__use *u,
		    const struct gs_sched__node *n, struct gs_sched_explain *e)
{
	/* A pod first seen bound (a restart, the explain command) has no inputs read: its use knows its owner. */
	struct holders_ctx h = {.e = e,
				.owner = u && u->owner ? u->owner
					 : p->owner    ? p->owner
						       : p->uid,
				.self = u && u->nominated ? u : NULL};
	if (n) {
		for (const char *q = p->entry->devices; *q;) {
			h.dev = q;
			q = gs_sched__next_dev(q, &h.len);
			gs_sched__dev_holders(n, h.dev, h.len, add_holder, &h);
			add_plugin_holder(n, p->key, &h);
		}
		add_ignored(s, n, p->entry->devices, &h);
		e->agent = agent_phrase(s, n);
	} else if (e->bound_node) {
		for (size_t i = 0; i < u->n_holds; i++) {
			h.dev = u->holds[i].dev->name;
			h.len = strlen(h.dev);
			gs_sched__dev_holders(u->node, h.dev, h.len, add_holder, &h);
			add_plugin_holder(u->node, p->key, &h);
		}
		e->agent = agent_phrase(s, u->node);
	}
}

/*
 * What clears e->verdict (sched.h, waits_for). By reference, the object's upsert or delete places its
 * pods again (sched.c), so an edit of it clears what its map gives: a map that does not parse, no
 * entry, the entry's devices (NOT_MUTATED), its gang settings; its creation clears MAP_MISSING. What
 * the pod itself carries (an inline map or gang annotations beside the reference, its index) only an
 * update of the pod clears.
 */
static void waits_for(const struct gs_sched__pod *p, struct gs_sched_explain *e)
{
	const struct gs_sched__pref *r = p->ref;
	const char *obj = r ? r->gpm->label : NULL, *fmt = NULL;
	char *out = e->waits_for;

	switch (r ? e->verdict : GS_WAIT_NONE) {
	case GS_WAIT_MAP_INVALID:
		if (r->inline_map)
			break;
		/* fall through */
	case GS_WAIT_NO_ENTRY:
	case GS_WAIT_NOT_MUTATED:
		fmt = "an edit of %s, or an update of the pod itself (or its recreation by its controller with a "
		      "corrected template)";
		break;
	case GS_WAIT_MAP_MISSING:
		fmt = "the creation of %s (or an update of the pod itself naming another one)";
		break;
	case GS_WAIT_GANG_INVALID:
		fmt = r->own_gang ? "an update of the pod without its own gpu-scheduler.io/placement, gang-timeout "
				    "and gang-size annotations (by reference %s's spec gives them), or its "
				    "recreation from a corrected template"
				  : "an edit of %s with valid " GS_GANG_SPEC_PLACEMENT ", " GS_GANG_SPEC_TIMEOUT
				    " and " GS_GANG_SPEC_SIZE;
		break;
	default:
		break;
	}
	if (fmt)
		snprintf(out, GS_EXPLAIN_MSG, fmt, obj);
	else
		snprintf(out, GS_EXPLAIN_MSG, "%s", gs_sched__wait_reason_retry(e->verdict));
}

/* What the pod would preempt on its node n, when its verdict is one preemption may clear. */
static void preemption(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
		       struct gs_sched_explain *e)
{
	struct gs_sched__preempt pl;

	if (!n || !gs_sched__fit_reason(e->verdict))
		return;
	e->preempt_node = n->name;
	e->preemption_off = !s->cfg.preemption;
	if (!gs_sched__preempt_plan(s, p, n, &pl)) {
		snprintf(e->preempt_why, sizeof(e->preempt_why), "%s", pl.why);
		return;
	}
	e->victims = gs_xcalloc(pl.n_victims, sizeof(*e->victims));
	for (size_t i = 0; i < pl.n_victims; i++) {
		const char *shown = gs_sched__holder_shown(pl.victims[i]->key, p->key);
		e->victims[i].pod = gs_xstrdup(shown);
		/* the budget of a pod of another namespace is not shown either */
		if (pl.pdb[i] && shown == pl.victims[i]->key)
			e->victims[i].pdb = gs_xstrdup(pl.pdb[i]->name);
		e->victims[i].priority = pl.victims[i]->priority;
		e->victims[i].reservation = !pl.victims[i]->bound;
	}
	e->n_victims = pl.n_victims;
	gs_sched__preempt_free(&pl);
}

int gs_sched__explain(struct gs_sched *s, const char *ns, const char *name, struct gs_sched_explain *e)
{
	char key[600], buf[GS_EXPLAIN_MSG];
	int len = snprintf(key, sizeof(key), "%s/%s", ns, name);
	struct gs_sched__pod *p;
	struct gs_sched__node *n = NULL;
	const char *skip;

	memset(e, 0, sizeof(*e));
	if (len < 0 || (size_t)len >= sizeof(key) || !(p = gs_hmap_get(&s->pods_by_name, key, (size_t)len)))
		return -ENOENT;
	gs_sched__pod_info(s, p, &e->pod);
	if (p->ref) {
		e->map_ref = p->ref->gpm->name;
		e->map_ref_held = p->ref->gpm->present;
		e->map_ref_generation = p->ref->gpm->generation;
		e->map_ref_admitted = p->ref->gen_text;
	}
	e->shared = p->shared;
	e->device_sharing_any = s->cfg.device_sharing_any;

	if (p->intrinsic != GS_WAIT_NONE)
		set_check(&e->checks[GS_EXPLAIN_POD], GS_EXPLAIN_FAIL, p->intrinsic, p->imsg);
	else
		set_check(&e->checks[GS_EXPLAIN_POD], GS_EXPLAIN_PASS, GS_WAIT_NONE, NULL);

	/* A bound pod (or one being bound) has a use: its node and the devices it holds. A pod seen bound
	 * at its first upsert (a restart, or the explain command) has no entry: the use says where. */
	const struct gs_sched__use *u = gs_hmap_get_str(&s->uses, p->uid);
	if (u && (p->state == GS_POD_BOUND || p->state == GS_POD_BINDING))
		e->bound_node = u->node->name;
	const struct gs_sched__alias *amb = NULL;
	int via = 0;
	if (p->entry)
		n = gs_sched__resolve(s, p->entry->node, &via, &amb);
	skip = state_skip(p, e->bound_node, buf, sizeof(buf));
	if (skip)
		skip_from(e, GS_EXPLAIN_NODE_EXISTS, skip);
	else if (!p->entry)
		skip_from(e, GS_EXPLAIN_NODE_EXISTS,
			  "the pod has no map entry"); /* the pod check failed: the verdict */
	else
		n = node_all(s, p, n, amb, e);

	/* Placement's answer is the first failure in this order (sched_place.c gs_sched__place). */
	for (int i = 0; i < GS_EXPLAIN__COUNT && !skip; i++) {
		if (e->checks[i].outcome == GS_EXPLAIN_FAIL) {
			e->verdict = e->checks[i].reason;
			break;
		}
	}
	/* Every check passes, and still it waits: for its all-or-nothing gang (what placement says too). */
	if (!skip && e->verdict == GS_WAIT_NONE && p->intrinsic == GS_WAIT_NONE && gs_sched__gang_holds_back(p) && n)
		e->verdict = gs_sched__gang_wait(s, p, n, buf, sizeof(buf)); /* GANG, GANG_TIMED_OUT, GANG_LIMIT */
	waits_for(p, e);
	gs_sched__gang_explain(s, p, &e->gang);
	/* Not asserted against p->reason: that is the first failure when the pod was last placed; usage that
	 * went up since (a new holder, a host port taken) adds failures without placing waiters again. */
	holders(s, p, u, n, e);
	preemption(s, p, n, e);
	return 0;
}

void gs_sched__explain_free(struct gs_sched_explain *e)
{
	for (size_t i = 0; i < e->n_victims; i++) {
		free(e->victims[i].pod);
		free(e->victims[i].pdb);
	}
	free(e->victims);
	e->victims = NULL;
	e->n_victims = 0;
	free(e->agent);
	e->agent = NULL;
	free(e->gang.blockers);
	e->gang.blockers = NULL;
	for (size_t i = 0; i < e->n_holders; i++) {
		free(e->holders[i].device);
		free(e->holders[i].pod);
		free(e->holders[i].owner);
		free(e->holders[i].plugin_id);
	}
	free(e->holders);
	e->holders = NULL;
	e->n_holders = 0;
}

/* Creation time, then namespace and name: a stable order for pods created in the same second. */
static int older(const struct gs_sched__pod *p, const struct gs_sched_pod_info *q)
{
	int c;

	if (p->created_ms != q->created_ms)
		return p->created_ms < q->created_ms;
	c = strcmp(p->ns, q->ns);
	return c ? c < 0 : strcmp(p->name, q->name) < 0;
}

void gs_sched__pending(const struct gs_sched *s, struct gs_sched_pending *out)
{
	struct gs_hmap_iter it = {0};

	memset(out, 0, sizeof(*out));
	out->pending = s->by_state[GS_POD_WAITING] + s->by_state[GS_POD_QUEUED] + s->by_state[GS_POD_BINDING] +
		       s->by_state[GS_POD_BACKOFF];
	memcpy(out->waiting_by, s->waiting_by, sizeof(out->waiting_by));
	while (gs_hmap_next(&s->pods, &it)) {
		const struct gs_sched__pod *p = it.val;
		if (p->state != GS_POD_WAITING && p->state != GS_POD_QUEUED && p->state != GS_POD_BINDING &&
		    p->state != GS_POD_BACKOFF)
			continue;
		/* Insertion into the sorted array of the oldest. */
		size_t i = out->n_oldest;
		while (i > 0 && older(p, &out->oldest[i - 1]))
			i--;
		if (i >= GS_PENDING_OLDEST)
			continue;
		size_t last = out->n_oldest < GS_PENDING_OLDEST ? out->n_oldest : GS_PENDING_OLDEST - 1;
		memmove(&out->oldest[i + 1], &out->oldest[i], (last - i) * sizeof(out->oldest[0]));
		gs_sched__pod_info(s, p, &out->oldest[i]);
		if (out->n_oldest < GS_PENDING_OLDEST)
			out->n_oldest++;
	}
}
