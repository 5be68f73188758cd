/*
 * sched_preempt.c: which pods a waiting pod would preempt on its mapped node (sched_preempt.h).
 */
#include "sched/sched_preempt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "sched/sched_gang.h"
#include "sched/sched_node.h"
#include "sched/sched_pdb.h"
#include "sched/sched_place.h"
#include "sched/sched_use.h"

/* The nomination of p (a use of its uid marked nominated), or NULL. */
static struct gs_sched__use *nomination(const struct gs_sched *s, const struct gs_sched__pod *p)
{
	struct gs_sched__use *u = gs_hmap_get_str(&s->uses, p->uid);

	return u && u->nominated ? u : NULL;
}

/*
 * kube-scheduler's PodEligibleToPreemptOthers: a pod nominated to n while pods of lower priority there
 * are still terminating (deleted, or chosen by a preemption handed out) waits for them to stop before
 * it preempts anyone else: they may well be what it waits for. The number of those pods (0: it may).
 */
static size_t terminating_below(const struct gs_sched *s, const struct gs_sched__pod *p, const struct gs_sched__node *n)
{
	const struct gs_sched__use *nom = nomination(s, p);
	const struct gs_list *l;
	size_t k = 0;

	if (!nom || nom->node != n)
		return 0;
	GS_LIST_FOREACH(l, &n->uses) {
		const struct gs_sched__use *u = GS_CONTAINER_OF(l, struct gs_sched__use, nlink);
		k += u->bound && u->priority < p->priority && (u->deleting || u->preempted);
	}
	return k;
}

/* kube-scheduler's MoreImportantPod: higher priority first, then the older; the uid breaks ties. */
static int more_important_first(const void *a, const void *b)
{
	const struct gs_sched__use *x = *(const struct gs_sched__use *const *)a;
	const struct gs_sched__use *y = *(const struct gs_sched__use *const *)b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->created_ms != y->created_ms)
		return x->created_ms < y->created_ms ? -1 : 1;
	return strcmp(x->uid, y->uid);
}

/* The gang of ours u's pod is a member of, or NULL. */
static struct gs_sched__gang *gang_of(const struct gs_sched *s, const struct gs_sched__use *u)
{
	const struct gs_sched__pod *vp = gs_hmap_get_str(&s->pods, u->uid);

	return vp ? vp->gang : NULL;
}

/*
 * May all-or-nothing gang g go as a whole for a pod of priority prio? 1 when each member with a use is
 * bound and of lower priority; 0 when one may not go (a member of equal or higher priority, or one
 * whose Binding is in flight); -1 when one is going already (deleted, or chosen by a preemption).
 */
static int gang_may_go(const struct gs_sched *s, const struct gs_sched__gang *g, int64_t prio)
{
	const struct gs_list *l;
	int r = 1;

	GS_LIST_FOREACH(l, &g->members) {
		const struct gs_sched__pod *m = GS_CONTAINER_OF(l, struct gs_sched__pod, glink);
		const struct gs_sched__use *u = gs_hmap_get_str(&s->uses, m->uid);
		if (!u)
			continue;
		if (!u->bound || u->priority >= prio)
			return 0;
		if (u->deleting || u->preempted)
			r = -1;
	}
	return r;
}

/* The member of a gathering gang whose reservation u is (sched_gang.h), or NULL. */
static struct gs_sched__pod *reservation_of(const struct gs_sched *s, const struct gs_sched__use *u)
{
	struct gs_sched__pod *vp = gs_hmap_get_str(&s->pods, u->uid);

	return !u->bound && vp && vp->reserved ? vp : NULL;
}

/*
 * May u be a victim of a pod of priority prio? *deleting and *gang count the lower ones that may not.
 * A gathering gang's reservation of lower priority may: taking it deletes nothing (issue 36: pods of
 * higher priority are not blocked by reservations of lower priority).
 */
static int may_be_victim(const struct gs_sched *s, const struct gs_sched__use *u, int64_t prio, size_t *deleting,
			 size_t *gang)
{
	const struct gs_sched__gang *g;
	int go;

	if (u->priority >= prio)
		return 0;
	if (!u->bound)
		return !u->preempted && reservation_of(s, u) != NULL;
	if (u->deleting || u->preempted) {
		(*deleting)++;
		return 0;
	}
	if (!(g = gang_of(s, u)))
		return 1;
	go = gang_may_go(s, g, prio);
	if (go < 0)
		(*deleting)++;
	else if (!go)
		(*gang)++;
	return go > 0;
}

/* ", 2 of them being deleted already (they count until they stop), 1 in an all-or-nothing gang". */
static void left_out(char *out, size_t size, size_t deleting, size_t gang)
{
	size_t at = 0;

	out[0] = '\0';
	if (deleting)
		at += (size_t)snprintf(out + at, size - at, " (%zu being deleted already: %s until %s)", deleting,
				       deleting == 1 ? "it counts" : "they count",
				       deleting == 1 ? "it stops" : "they stop");
	if (gang && at < size)
		snprintf(out + at, size - at,
			 " (%zu in an all-or-nothing gang with a member of equal or higher priority: a victim only "
			 "with its whole gang)",
			 gang);
}

static void victims_add(struct gs_sched__preempt *out, size_t *cap, struct gs_sched__use *u,
			const struct gs_sched__pdb *pdb)
{
	if (out->n_victims == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		out->victims = gs_xreallocarray(out->victims, *cap, sizeof(*out->victims));
		out->pdb = gs_xreallocarray(out->pdb, *cap, sizeof(*out->pdb));
	}
	out->pdb[out->n_victims] = pdb;
	out->victims[out->n_victims++] = u;
}

/* The members of gang g bound elsewhere than n, added to the victims. */
static void gang_elsewhere(const struct gs_sched *s, const struct gs_sched__gang *g, const struct gs_sched__node *n,
			   struct gs_sched__preempt *out, size_t *cap)
{
	const struct gs_list *l;

	GS_LIST_FOREACH(l, &g->members) {
		const struct gs_sched__pod *m = GS_CONTAINER_OF(l, struct gs_sched__pod, glink);
		struct gs_sched__use *u = gs_hmap_get_str(&s->uses, m->uid);
		if (u && u->node != n)
			victims_add(out, cap, u, NULL);
	}
}

/* The victims most important first again, each with its budget (the budget's pass put some first);
 * insertion: a handful. */
static void victims_sort(struct gs_sched__preempt *out)
{
	for (size_t i = 1; i < out->n_victims; i++) {
		struct gs_sched__use *u = out->victims[i];
		const struct gs_sched__pdb *b = out->pdb[i];
		size_t j = i;
		for (; j > 0 && more_important_first(&u, &out->victims[j - 1]) < 0; j--) {
			out->victims[j] = out->victims[j - 1];
			out->pdb[j] = out->pdb[j - 1];
		}
		out->victims[j] = u;
		out->pdb[j] = b;
	}
}

/*
 * The candidates c[0..nc) of n, all set aside, put back by units, the most important first: a pod alone,
 * or all the members on n of one all-or-nothing gang at once. Units whose deletion would violate a
 * PodDisruptionBudget (one member that would is enough) go first, then the others (kube-scheduler's
 * SelectVictimsOnNode). A unit p still fits beside is reprieved; the others are the victims, a gang's
 * with its members on other nodes (a gang goes whole or not at all: docs/sched.md, "Preemption"). Every
 * use of c is back when it returns.
 */
static void reprieve(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
		     struct gs_sched__use **c, size_t nc, struct gs_sched__preempt *out)
{
	const struct gs_sched__pdb **pdb = gs_xreallocarray(NULL, nc, sizeof(*pdb));
	size_t *unit = gs_xreallocarray(NULL, nc, sizeof(*unit)), cap = 0;
	unsigned char *violates = gs_xcalloc(nc, 1);
	char msg[400];

	qsort(c, nc, sizeof(*c), more_important_first);
	size_t nv = gs_sched__pdb_violations(s, c, nc, pdb);
	/* unit[j]: the first (most important) candidate of j's unit; violates[i] for that first one */
	for (size_t i = 0; i < nc; i++) {
		/* a running gang's members go together; a gathering gang's reservations one by one */
		struct gs_sched__gang *g = c[i]->bound ? gang_of(s, c[i]) : NULL;
		unit[i] = i;
		for (size_t j = 0; g && j < i; j++)
			if (unit[j] == j && c[j]->bound && gang_of(s, c[j]) == g) {
				unit[i] = j;
				break;
			}
		violates[unit[i]] |= pdb[i] != NULL;
	}
	for (int pass = 1; pass >= 0; pass--)
		for (size_t i = 0; i < nc; i++) {
			size_t first = out->n_victims;
			if (unit[i] != i || violates[i] != pass)
				continue;
			for (size_t j = i; j < nc; j++) /* the unit: c[i], and its gang's other members on n */
				if (unit[j] == i) {
					gs_sched__use_hide(s, c[j], 0);
					victims_add(out, &cap, c[j], pdb[j]);
				}
			if (gs_sched__fit(s, p, n, msg, sizeof(msg)) == GS_WAIT_NONE) {
				out->n_victims = first; /* reprieved */
				continue;
			}
			for (size_t k = first; k < out->n_victims; k++)
				gs_sched__use_hide(s, out->victims[k], 1);
			if (c[i]->bound && gang_of(s, c[i])) /* the members elsewhere go with it */
				gang_elsewhere(s, gang_of(s, c[i]), n, out, &cap);
		}
	for (size_t k = 0; k < out->n_victims; k++) {
		out->n_violating += out->pdb[k] != NULL;
		if (out->victims[k]->hidden)
			gs_sched__use_hide(s, out->victims[k], 0);
	}
	if (nv) /* as kube-scheduler: when the budgets' pass went first */
		victims_sort(out);
	free(violates);
	free(unit);
	free(pdb);
}

/* "it is nominated to node ... and 2 pods ... still terminating": 1 with why when p may not preempt. */
static int still_terminating(const struct gs_sched *s, const struct gs_sched__pod *p, const struct gs_sched__node *n,
			     char *why, size_t size)
{
	size_t k = terminating_below(s, p, n);

	if (k)
		snprintf(why, size,
			 "it is nominated to node \"%s\" and %zu pod%s of lower priority there %s still "
			 "terminating: it waits for %s to stop before it preempts again",
			 n->name, k, k == 1 ? "" : "s", k == 1 ? "is" : "are", k == 1 ? "it" : "them");
	return k > 0;
}

/* The victims of p on n alone (the what-if above): 1 with out->victims, else 0 with out->why. */
static int plan_on_node(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
			struct gs_sched__preempt *out)
{
	struct gs_sched__use **c;
	size_t nc = 0, deleting = 0, gang = 0;
	const struct gs_list *l;
	char msg[400], more[200];
	int fits;

	memset(out, 0, sizeof(*out));
	c = gs_xreallocarray(NULL, n->n_uses ? n->n_uses : 1, sizeof(*c));
	GS_LIST_FOREACH(l, &n->uses) {
		struct gs_sched__use *u = GS_CONTAINER_OF(l, struct gs_sched__use, nlink);
		if (may_be_victim(s, u, p->priority, &deleting, &gang))
			c[nc++] = u;
	}
	left_out(more, sizeof(more), deleting, gang);
	if (!nc) {
		snprintf(out->why, sizeof(out->why), "no pod of lower priority than %" PRId64 " runs on node \"%s\"%s",
			 p->priority, n->name, more);
		free(c);
		return 0;
	}
	/* All set aside: does it fit at all? */
	for (size_t i = 0; i < nc; i++)
		gs_sched__use_hide(s, c[i], 1);
	fits = gs_sched__fit(s, p, n, msg, sizeof(msg)) == GS_WAIT_NONE;
	if (!fits) {
		for (size_t i = 0; i < nc; i++)
			gs_sched__use_hide(s, c[i], 0);
		snprintf(out->why, sizeof(out->why),
			 "even with the %zu pod%s of lower priority on node \"%s\" gone%s: %s", nc, nc == 1 ? "" : "s",
			 n->name, more, msg);
		free(c);
		return 0;
	}
	reprieve(s, p, n, c, nc, out);
	free(c);
	if (!out->n_victims) /* it fits as things are (a gang's member planned after the others) */
		snprintf(out->why, sizeof(out->why), "it fits node \"%s\" as it is", n->name);
	return out->n_victims > 0;
}

static int gang_plan(struct gs_sched *s, struct gs_sched__gang *g, int commit, const struct gs_sched__pod *ask,
		     struct gs_sched__preempt *ask_out);

int gs_sched__preempt_plan(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
			   struct gs_sched__preempt *out)
{
	memset(out, 0, sizeof(*out));
	if (p->preempt_never) {
		snprintf(out->why, sizeof(out->why), "its preemptionPolicy is Never");
		return 0;
	}
	if (p->gang && !p->gang->ran) /* a gathering gang decides for all its members */
		return gang_plan(s, p->gang, 0, p, out);
	if (still_terminating(s, p, n, out->why, sizeof(out->why)))
		return 0;
	return plan_on_node(s, p, n, out);
}

void gs_sched__preempt_free(struct gs_sched__preempt *pl)
{
	free(pl->victims);
	free(pl->pdb);
	pl->victims = NULL;
	pl->pdb = NULL;
	pl->n_victims = pl->n_violating = 0;
}

/* ---- the daemon's preemptions ------------------------------------------------------------------- */

const char *gs_sched__nominated_node(const struct gs_sched *s, const struct gs_sched__pod *p)
{
	const struct gs_sched__use *u = nomination(s, p);

	return u ? u->node->name : NULL;
}

/* The node p's map entry names, resolved now (NULL: none, or several). */
static struct gs_sched__node *entry_node(const struct gs_sched *s, const struct gs_sched__pod *p)
{
	const struct gs_sched__alias *amb;
	int via;

	return p->entry ? gs_sched__resolve(s, p->entry->node, &via, &amb) : NULL;
}

void gs_sched__preempt_forget(struct gs_sched *s, struct gs_sched__pod *p)
{
	if (gs_list_linked(&p->plink))
		gs_list_remove(&p->plink);
	if (nomination(s, p))
		gs_sched__use_remove(s, p->uid);
}

/* A preemption decided, to hand out (on s->preempt_ready) or handed out last (s->preempt_out): the
 * preemptor's strings (one allocation, pe.uid first) and its victims' (one allocation each). */
struct gs_sched__preempt_out {
	struct gs_list link;
	struct gs_preemption pe;
	size_t n;
	struct gs_preempt_victim v[];
};

static void out_free(struct gs_sched__preempt_out *o)
{
	for (size_t i = 0; i < o->n; i++)
		free((char *)o->v[i].uid);
	free((char *)o->pe.uid);
	free(o);
}

void gs_sched__preempt_out_free(struct gs_sched *s)
{
	if (s->preempt_out)
		out_free(s->preempt_out);
	s->preempt_out = NULL;
}

void gs_sched__preempt_ready_free(struct gs_sched *s)
{
	while (!gs_list_empty(&s->preempt_ready)) {
		struct gs_sched__preempt_out *o =
			GS_CONTAINER_OF(gs_list_first(&s->preempt_ready), struct gs_sched__preempt_out, link);
		gs_list_remove(&o->link);
		out_free(o);
	}
	gs_sched__preempt_out_free(s);
}

/* p's preemption on n of pl's victims, as the pull hands it out: the strings copied (the victims' ns and
 * name split from the use's key). */
static struct gs_sched__preempt_out *decision(const struct gs_sched__pod *p, const struct gs_sched__node *n,
					      const struct gs_sched__preempt *pl)
{
	struct gs_sched__preempt_out *o = gs_xmalloc(sizeof(*o) + pl->n_victims * sizeof(o->v[0]));
	size_t ul = strlen(p->uid) + 1, nl = strlen(p->ns) + 1, ml = strlen(p->name) + 1, dl = strlen(n->name) + 1;
	char *str = gs_xmalloc(ul + nl + ml + dl);

	gs_list_init(&o->link);
	o->pe = (struct gs_preemption){
		.uid = memcpy(str, p->uid, ul),
		.ns = memcpy(str + ul, p->ns, nl),
		.name = memcpy(str + ul + nl, p->name, ml),
		.node = memcpy(str + ul + nl + ml, n->name, dl),
		.priority = p->priority,
		.n_victims = pl->n_victims,
		.victims = o->v,
	};
	o->n = pl->n_victims;
	for (size_t i = 0; i < pl->n_victims; i++) {
		const struct gs_sched__use *u = pl->victims[i];
		const char *pdb = pl->pdb[i] ? pl->pdb[i]->name : NULL;
		size_t vl = strlen(u->uid) + 1, kl = strlen(u->key) + 1, bl = pdb ? strlen(pdb) + 1 : 0;
		char *at = gs_xmalloc(vl + kl + bl), *slash;
		memcpy(at, u->uid, vl);
		memcpy(at + vl, u->key, kl);
		o->v[i].pdb = pdb ? memcpy(at + vl + kl, pdb, bl) : NULL;
		slash = strchr(at + vl, '/');
		o->v[i].uid = at;
		o->v[i].ns = slash ? at + vl : "";
		o->v[i].name = slash ? slash + 1 : at + vl;
		if (slash)
			*slash = '\0';
		o->v[i].priority = u->priority;
	}
	return o;
}

/* p's victims (pl) chosen on n: marked (never chosen again), p nominated there unless it is already (its
 * claim kept as it is: a what-if of explain then leaves the node's uses as they were). */
static void choose(struct gs_sched *s, struct gs_sched__pod *p, struct gs_sched__node *n,
		   const struct gs_sched__preempt *pl)
{
	const struct gs_sched__use *u = nomination(s, p);

	for (size_t i = 0; i < pl->n_victims; i++)
		pl->victims[i]->preempted = 1;
	if (!u || u->node != n)
		gs_sched__pod_nominate(s, p, n);
}

/* The decision for p on n, made: handed out by the next pulls. */
static void decided(struct gs_sched *s, struct gs_sched__pod *p, struct gs_sched__node *n,
		    const struct gs_sched__preempt *pl)
{
	struct gs_sched__preempt pods = {.n_victims = 0};
	struct gs_sched__pod **held = gs_xreallocarray(NULL, pl->n_victims + 1, sizeof(*held));
	size_t nh = 0, cap = 0;

	/* The pods to delete are handed out; the gathering gangs' reservations are let go here (their
	 * members first collected: a release may place other pods, and the uses are not looked at again). */
	for (size_t i = 0; i < pl->n_victims; i++) {
		struct gs_sched__pod *m = reservation_of(s, pl->victims[i]);
		if (m)
			held[nh++] = m;
		else
			victims_add(&pods, &cap, pl->victims[i], pl->pdb[i]);
	}
	if (pods.n_victims)
		gs_list_insert_tail(&s->preempt_ready, &decision(p, n, &pods)->link);
	s->preempt_victims += pods.n_victims;
	s->preempt_pdb_victims += pl->n_violating;
	for (size_t i = 0; i < nh; i++) {
		gs_log_info("pod %s/%s: its gang's reservation on node %s goes to %s/%s (priority %" PRId64 ")",
			    held[i]->ns, held[i]->name, n->name, p->ns, p->name, p->priority);
		gs_sched__gang_release(s, held[i]);
	}
	free(held);
	gs_log_info("pod %s/%s (priority %" PRId64 "): preempting %zu pod%s and %zu reservation%s on node %s", p->ns,
		    p->name, p->priority, pods.n_victims, pods.n_victims == 1 ? "" : "s", nh, nh == 1 ? "" : "s",
		    n->name);
	gs_sched__preempt_free(&pods);
}

/* Plans for p, queued for a preemption: a decision on s->preempt_ready, or none. */
static void plan_queued(struct gs_sched *s, struct gs_sched__pod *p)
{
	struct gs_sched__node *n;
	struct gs_sched__preempt pl;

	if (!gs_sched__may_preempt(s, p) || !(n = entry_node(s, p)))
		return;
	if (p->gang && !p->gang->ran) {
		s->preempt_attempts[gang_plan(s, p->gang, 1, NULL, NULL) ? 1 : 0]++;
		return;
	}
	if (!gs_sched__preempt_plan(s, p, n, &pl)) {
		s->preempt_attempts[0]++;
		gs_log_debug("pod %s/%s: no preemption on node %s: %s", p->ns, p->name, n->name, pl.why);
		return;
	}
	s->preempt_attempts[1]++;
	choose(s, p, n, &pl);
	decided(s, p, n, &pl);
	gs_sched__preempt_free(&pl);
}

int gs_sched__next_preemption(struct gs_sched *s, struct gs_preemption *out)
{
	gs_sched__preempt_out_free(s);
	while (gs_list_empty(&s->preempt_ready) && !gs_list_empty(&s->preemptq)) {
		struct gs_sched__pod *p = GS_CONTAINER_OF(gs_list_first(&s->preemptq), struct gs_sched__pod, plink);
		gs_list_remove(&p->plink);
		plan_queued(s, p);
	}
	if (gs_list_empty(&s->preempt_ready))
		return 0;
	s->preempt_out = GS_CONTAINER_OF(gs_list_first(&s->preempt_ready), struct gs_sched__preempt_out, link);
	gs_list_remove(&s->preempt_out->link);
	*out = s->preempt_out->pe;
	return 1;
}

int gs_sched__preemption_failed(struct gs_sched *s, const char *victim_uid)
{
	struct gs_sched__use *u = gs_hmap_get_str(&s->uses, victim_uid);

	if (!u)
		return -ENOENT;
	u->preempted = 0; /* a choice again: its node's waiters are placed again, and may pick it */
	gs_sched__node_mark_dirty(s, u->node);
	return 0;
}

/* ---- all-or-nothing gangs -------------------------------------------------------------------------- */

/* Why member m of a gathering gang keeps its gang from preempting, into why; 0 when it does not. */
static int member_blocks(const struct gs_sched *s, const struct gs_sched__pod *m, char *why, size_t size)
{
	const struct gs_sched__node *n;

	if (m->reserved)
		return 0;
	if (m->state != GS_POD_WAITING || !gs_sched__fit_reason(m->reason) || !(n = entry_node(s, m))) {
		snprintf(why, size,
			 "its all-or-nothing gang preempts only when each member waits for room on its node, and "
			 "%.100s %s %s: %.250s",
			 m->key, m->state == GS_POD_WAITING ? "waits" : "is not waiting",
			 m->state == GS_POD_WAITING ? gs_sched__wait_reason_name(m->reason) : "", m->msg ? m->msg : "");
		return 1;
	}
	if (m->preempt_never) {
		snprintf(why, size, "its all-or-nothing gang's member %s has preemptionPolicy Never", m->key);
		return 1;
	}
	if (still_terminating(s, m, n, why, size))
		return 1;
	return 0;
}

/* One member's part of a gang's decision, recorded to be handed out or undone. */
struct gang_step {
	struct gs_sched__pod *m;
	struct gs_sched__node *n;
	struct gs_sched__preempt pl;
	int was_nominated;
};

/* Undoes steps[0..k): victims unmarked, the nominations made here taken back (nothing went down: no
 * node is marked dirty). */
static void gang_undo(struct gs_sched *s, struct gang_step *steps, size_t k)
{
	while (k--) {
		for (size_t i = 0; i < steps[k].pl.n_victims; i++)
			steps[k].pl.victims[i]->preempted = 0;
		if (!steps[k].was_nominated)
			gs_sched__use_take(s, steps[k].m->uid);
	}
}

/*
 * A gathering all-or-nothing gang g preempts for all its members in one decision or not at all: each
 * member must exist and either hold its reservation or wait for room on its node (a fit reason); the
 * waiting ones are planned one after the other, each nominated before the next is planned, so that
 * their claims and victims add up where they share a node. All plans made: with commit, the members'
 * preemptions are queued (s->preempt_ready) and 1 returned; else (or when one plan fails) everything
 * is undone. ask (explain): its own victims copied into ask_out, or ask_out->why saying why none.
 */
static int gang_plan(struct gs_sched *s, struct gs_sched__gang *g, int commit, const struct gs_sched__pod *ask,
		     struct gs_sched__preempt *ask_out)
{
	struct gang_step *steps = gs_xcalloc(g->n_members ? g->n_members : 1, sizeof(*steps));
	char why[sizeof(ask_out->why)] = "";
	size_t k = 0;
	const struct gs_list *l;
	int ok = !g->resting && !g->committing && (long)g->n_members >= g->size;

	if (!ok)
		snprintf(why, sizeof(why), "its all-or-nothing gang %s",
			 g->resting      ? "rests after a timeout"
			 : g->committing ? "is being bound"
					 : "does not have all its members yet");
	GS_LIST_FOREACH(l, &g->members) {
		struct gs_sched__pod *m = GS_CONTAINER_OF(l, struct gs_sched__pod, glink);
		if (ok && member_blocks(s, m, why, sizeof(why)))
			ok = 0;
	}
	for (l = g->members.next; ok && l != &g->members; l = l->next) {
		struct gs_sched__pod *m = GS_CONTAINER_OF(l, struct gs_sched__pod, glink);
		struct gang_step *st = &steps[k];
		char msg[8];
		if (m->reserved)
			continue;
		st->m = m;
		st->n = entry_node(s, m);
		st->was_nominated = nomination(s, m) != NULL;
		if (gs_sched__fit(s, m, st->n, msg, sizeof(msg)) != GS_WAIT_NONE &&
		    !plan_on_node(s, m, st->n, &st->pl)) {
			snprintf(why, sizeof(why),
				 "its all-or-nothing gang preempts for all its members or none, and %.100s: %.300s",
				 m->key, st->pl.why);
			ok = 0;
			gs_sched__preempt_free(&st->pl);
			break;
		}
		choose(s, m, st->n, &st->pl);
		k++;
	}
	if (ask && ok) {
		for (size_t i = 0; i < k; i++)
			if (steps[i].m == ask) {
				size_t cap = 0;
				for (size_t j = 0; j < steps[i].pl.n_victims; j++)
					victims_add(ask_out, &cap, steps[i].pl.victims[j], steps[i].pl.pdb[j]);
				ask_out->n_violating = steps[i].pl.n_violating;
			}
		if (!ask_out->n_victims)
			snprintf(ask_out->why, sizeof(ask_out->why),
				 "its all-or-nothing gang preempts for its other members; it fits as they are planned");
	} else if (ask) {
		snprintf(ask_out->why, sizeof(ask_out->why), "%s", why);
	}
	if (!ok || !commit)
		gang_undo(s, steps, k);
	else
		for (size_t i = 0; i < k; i++)
			if (steps[i].pl.n_victims)
				decided(s, steps[i].m, steps[i].n, &steps[i].pl);
	if (commit && !ok)
		gs_log_debug("gang %s/%s %s: no preemption: %s", g->ns, g->kind, g->name, why);
	for (size_t i = 0; i < k; i++)
		gs_sched__preempt_free(&steps[i].pl);
	free(steps);
	return ok && (!ask || ask_out->n_victims > 0);
}
