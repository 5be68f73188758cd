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

/* May u be a victim of a pod of priority prio? *deleting and *gang count the lower ones that may not. */
static int may_be_victim(const struct gs_sched *s, const struct gs_sched__use *u, int64_t prio, size_t *deleting,
			 size_t *gang)
{
	const struct gs_sched__gang *g;
	int go;

	if (!u->bound || u->priority >= prio)
		return 0;
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

static void victims_add(struct gs_sched__preempt *out, size_t *cap, struct gs_sched__use *u)
{
	if (out->n_victims == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		out->victims = gs_xreallocarray(out->victims, *cap, sizeof(*out->victims));
	}
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
			victims_add(out, cap, u);
	}
}

/*
 * The candidates c[0..nc) of n, all set aside, put back by units, the most important first: a pod alone,
 * or all the members on n of one all-or-nothing gang at once. A unit p still fits beside is reprieved;
 * the others are the victims, a gang's with its members on other nodes (a gang goes whole or not at
 * all: docs/sched.md, "Preemption"). Every use of c is back when it returns.
 */
static void reprieve(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
		     struct gs_sched__use **c, size_t nc, struct gs_sched__preempt *out)
{
	unsigned char *done = gs_xcalloc(nc, 1);
	size_t cap = 0;
	char msg[400];

	qsort(c, nc, sizeof(*c), more_important_first);
	for (size_t i = 0; i < nc; i++) {
		struct gs_sched__gang *g = gang_of(s, c[i]);
		size_t first = out->n_victims;
		if (done[i])
			continue;
		for (size_t j = i; j < nc; j++) /* the unit: c[i], and its gang's other members on n */
			if (j == i || (g && !done[j] && gang_of(s, c[j]) == g)) {
				done[j] = 1;
				gs_sched__use_hide(s, c[j], 0);
				victims_add(out, &cap, c[j]);
			}
		if (gs_sched__fit(s, p, n, msg, sizeof(msg)) == GS_WAIT_NONE) {
			out->n_victims = first; /* reprieved */
			continue;
		}
		for (size_t k = first; k < out->n_victims; k++)
			gs_sched__use_hide(s, out->victims[k], 1);
		if (g) /* the members elsewhere go with it */
			gang_elsewhere(s, g, n, out, &cap);
	}
	for (size_t k = 0; k < out->n_victims; k++)
		if (out->victims[k]->hidden)
			gs_sched__use_hide(s, out->victims[k], 0);
	free(done);
}

int gs_sched__preempt_plan(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
			   struct gs_sched__preempt *out)
{
	struct gs_sched__use **c;
	size_t nc = 0, deleting = 0, gang = 0;
	const struct gs_list *l;
	char msg[400], more[200];
	int fits;

	memset(out, 0, sizeof(*out));
	if (p->preempt_never) {
		snprintf(out->why, sizeof(out->why), "its preemptionPolicy is Never");
		return 0;
	}
	if (p->gang) {
		snprintf(out->why, sizeof(out->why),
			 "it is a member of an all-or-nothing gang, and gangs do not preempt yet");
		return 0;
	}
	if ((nc = terminating_below(s, p, n)) > 0) {
		snprintf(out->why, sizeof(out->why),
			 "it is nominated to node \"%s\" and %zu pod%s of lower priority there %s still "
			 "terminating: it waits for %s to stop before it preempts again",
			 n->name, nc, nc == 1 ? "" : "s", nc == 1 ? "is" : "are", nc == 1 ? "it" : "them");
		return 0;
	}
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
	GS_ASSERT(out->n_victims > 0); /* it did not fit with them all there */
	return 1;
}

void gs_sched__preempt_free(struct gs_sched__preempt *pl)
{
	free(pl->victims);
	pl->victims = NULL;
	pl->n_victims = 0;
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

/* The preemption handed out last: its victims' strings, one allocation per victim. */
struct gs_sched__preempt_out {
	size_t n;
	struct gs_preempt_victim v[];
};

void gs_sched__preempt_out_free(struct gs_sched *s)
{
	struct gs_sched__preempt_out *o = s->preempt_out;

	if (!o)
		return;
	for (size_t i = 0; i < o->n; i++)
		free((char *)o->v[i].uid);
	free(o);
	s->preempt_out = NULL;
}

/* The victims of pl as the pull hands them out: uid, and ns/name split from the use's key. */
static struct gs_sched__preempt_out *victims_out(const struct gs_sched__preempt *pl)
{
	struct gs_sched__preempt_out *o = gs_xmalloc(sizeof(*o) + pl->n_victims * sizeof(o->v[0]));

	o->n = pl->n_victims;
	for (size_t i = 0; i < pl->n_victims; i++) {
		const struct gs_sched__use *u = pl->victims[i];
		size_t ul = strlen(u->uid) + 1, kl = strlen(u->key) + 1;
		char *at = gs_xmalloc(ul + kl), *slash;
		memcpy(at, u->uid, ul);
		memcpy(at + ul, u->key, kl);
		slash = strchr(at + ul, '/');
		o->v[i].uid = at;
		o->v[i].ns = slash ? at + ul : "";
		o->v[i].name = slash ? slash + 1 : at + ul;
		if (slash)
			*slash = '\0';
		o->v[i].priority = u->priority;
	}
	return o;
}

int gs_sched__next_preemption(struct gs_sched *s, struct gs_preemption *out)
{
	gs_sched__preempt_out_free(s);
	while (!gs_list_empty(&s->preemptq)) {
		struct gs_sched__pod *p = GS_CONTAINER_OF(gs_list_first(&s->preemptq), struct gs_sched__pod, plink);
		struct gs_sched__node *n;
		struct gs_sched__preempt pl;

		gs_list_remove(&p->plink);
		if (!gs_sched__may_preempt(s, p) || !(n = entry_node(s, p)))
			continue;
		if (!gs_sched__preempt_plan(s, p, n, &pl)) {
			s->preempt_attempts[0]++;
			gs_log_debug("pod %s/%s: no preemption on node %s: %s", p->ns, p->name, n->name, pl.why);
			continue;
		}
		s->preempt_attempts[1]++;
		s->preempt_victims += pl.n_victims;
		for (size_t i = 0; i < pl.n_victims; i++)
			pl.victims[i]->preempted = 1;
		s->preempt_out = victims_out(&pl);
		gs_sched__preempt_free(&pl);
		gs_sched__pod_nominate(s, p, n);
		*out = (struct gs_preemption){
			.uid = p->uid,
			.ns = p->ns,
			.name = p->name,
			.node = n->name,
			.priority = p->priority,
			.n_victims = s->preempt_out->n,
			.victims = s->preempt_out->v,
		};
		gs_log_info("pod %s/%s (priority %" PRId64 "): preempting %zu pod%s on node %s", p->ns, p->name,
			    p->priority, out->n_victims, out->n_victims == 1 ? "" : "s", n->name);
		return 1;
	}
	return 0;
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
