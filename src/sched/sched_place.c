/*
 * sched_place.c: where a pod goes, and the pulls. See sched_place.h, sched.h and docs/sched.md.
 *
 * A pending pod is in exactly one place: the bind queue (QUEUED), the waiter list of the node it waits
 * for (WAITING with a NODE_* reason), nowhere (WAITING for a reason of its own: it waits for its next
 * upsert), the retry heap (BACKOFF), or in flight (BINDING). gs_sched__place is the one function that
 * decides between queue and waiting, and it is called again at pull time, so a decision handed out is
 * always checked against the nodes as they are now; everything else just moves pods between places.
 *
 * Reports: a pod whose (reason, message) differs from what it last reported is put on the report
 * queue once; the pull skips it if it stopped waiting or came back to what was reported meanwhile.
 */
#include "sched/sched_place.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backoff.h"
#include "core/log.h"
#include "core/str.h"
#include "sched/checks.h"
#include "sched/map_cache.h"
#include "sched/gang.h"
#include "sched/sched_agent.h"
#include "sched/sched_gang.h"
#include "sched/sched_gpm.h"
#include "sched/sched_ledger.h"
#include "sched/sched_node.h"
#include "sched/sched_use.h"

#define MSG_MAX 1024

/* ---- states and places ------------------------------------------------------------------------- */

enum gs_wait_reason gs_sched__node_block(const struct gs_sched__node *n)
{
	if (!n || !n->present)
		return GS_WAIT_NODE_MISSING;
	if (!n->ready)
		return GS_WAIT_NODE_NOT_READY;
	if (n->unschedulable)
		return GS_WAIT_NODE_CORDONED;
	return GS_WAIT_NONE;
}

const struct gs_taint *gs_sched__condition_taint(const struct gs_sched__node *n)
{
	for (int i = 0; i < n->obj.n_taints; i++) {
		const char *k = n->obj.taints[i].key;
		if (k && (strcmp(k, GS_TAINT_NOT_READY) == 0 || strcmp(k, GS_TAINT_UNREACHABLE) == 0))
			return &n->obj.taints[i];
	}
	return NULL;
}

int gs_sched__tolerates_cordon(const struct gs_toleration *tols, int n_tols)
{
	static const struct gs_taint cordon = {.key = (char *)GS_TAINT_UNSCHEDULABLE, .effect = GS_EFFECT_NO_SCHEDULE};

	for (int i = 0; i < n_tols; i++)
		if (gs_toleration_tolerates(&tols[i], &cordon))
			return 1;
	return 0;
}

enum gs_wait_reason gs_sched__node_block_for(const struct gs_sched__node *n, const struct gs_sched__pod *p)
{
	const struct gs_sched__cons *c = p->spec ? &p->spec->cons : NULL;

	if (!n || !n->present)
		return GS_WAIT_NODE_MISSING;
	if (!n->ready && !gs_sched__condition_taint(n))
		return GS_WAIT_NODE_NOT_READY;
	if (n->unschedulable && !(c && gs_sched__tolerates_cordon(c->tolerations, c->n_tolerations)))
		return GS_WAIT_NODE_CORDONED;
	return GS_WAIT_NONE;
}

struct gs_sched__node *gs_sched__resolve(const struct gs_sched *s, const char *name, int *via_alias,
					 const struct gs_sched__alias **ambiguous)
{
	struct gs_sched__node *n = gs_hmap_get_str(&s->nodes, name);
	const struct gs_sched__alias *a;

	*via_alias = 0;
	*ambiguous = NULL;
	if (n && n->present)
		return n; /* the name wins */
	a = s->cfg.alias_label ? gs_hmap_get_str(&s->aliases, name) : NULL;
	if (!a)
		return NULL;
	if (a->n > 1) {
		*ambiguous = a;
		return NULL;
	}
	*via_alias = 1;
	return GS_CONTAINER_OF(gs_list_first(&a->nodes), struct gs_sched__node, alink);
}

void gs_sched__set_state(struct gs_sched *s, struct gs_sched__pod *p, enum gs_pod_state st)
{
	if (p->state < GS_POD__COUNT)
		s->by_state[p->state]--;
	s->by_state[st]++;
	if (p->state != st)
		gs_sched__gpm_touch(s, p);
	p->state = st;
}

/* ---- heaps ------------------------------------------------------------------------------------- */

int gs_sched__bind_before(const struct gs_sched__pod *a, const struct gs_sched__pod *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	if (a->created_ms != b->created_ms)
		return a->created_ms < b->created_ms;
	return a->seq < b->seq;
}

int gs_sched__due_before(const struct gs_sched__pod *a, const struct gs_sched__pod *b)
{
	return a->due_ms < b->due_ms;
}

static void heap_put(struct gs_sched__heap *h, size_t i, struct gs_sched__pod *p)
{
	h->v[i] = p;
	p->heap_pos = i;
}

static void heap_up(struct gs_sched__heap *h, size_t i)
{
	struct gs_sched__pod *p = h->v[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!h->less(p, h->v[parent]))
			break;
		heap_put(h, i, h->v[parent]);
		i = parent;
	}
	heap_put(h, i, p);
}

static void heap_down(struct gs_sched__heap *h, size_t i)
{
	struct gs_sched__pod *p = h->v[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->len)
			break;
		if (c + 1 < h->len && h->less(h->v[c + 1], h->v[c]))
			c++;
		if (!h->less(h->v[c], p))
			break;
		heap_put(h, i, h->v[c]);
		i = c;
	}
	heap_put(h, i, p);
}

void gs_sched__heap_push(struct gs_sched__heap *h, struct gs_sched__pod *p)
{
	if (h->len == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 16;
		struct gs_sched__pod **v = gs_xreallocarray(h->v, cap, sizeof(*v));
		h->v = v;
		h->cap = cap;
	}
	heap_put(h, h->len++, p);
	heap_up(h, h->len - 1);
}

void gs_sched__heap_remove(struct gs_sched__heap *h, struct gs_sched__pod *p)
{
	size_t i = p->heap_pos;
	struct gs_sched__pod *last;

	GS_ASSERT(i < h->len && h->v[i] == p);
	last = h->v[--h->len];
	if (i < h->len) {
		heap_put(h, i, last);
		heap_down(h, i);
		heap_up(h, last->heap_pos);
	}
}

void gs_sched__detach(struct gs_sched *s, struct gs_sched__pod *p)
{
	switch (p->state) {
	case GS_POD_WAITING:
		gs_sched__gang_release(s, p); /* a reservation held for its gang goes with the wait */
		s->waiting_by[p->reason]--;
		p->reason = GS_WAIT_NONE;
		if (p->wait_node) {
			struct gs_sched__node *n = p->wait_node;
			gs_list_remove(&p->qlink);
			n->n_waiters--;
			p->wait_node = NULL;
			gs_sched__node_gc(s, n);
		}
		break;
	case GS_POD_QUEUED:
		gs_sched__heap_remove(&s->bindq, p);
		break;
	case GS_POD_BACKOFF:
		gs_sched__heap_remove(&s->retry, p);
		break;
	default:
		break;
	}
}

static int in_report_queue(const struct gs_sched__pod *p)
{
	return gs_list_linked(&p->rlink);
}

/* Makes p wait for reason r (on node slot n for NODE_* reasons), noting a report if it is news. */
static void set_waiting(struct gs_sched *s, struct gs_sched__pod *p, enum gs_wait_reason r, struct gs_sched__node *n,
			const char *msg)
{
	if (p->state == GS_POD_WAITING && p->wait_node == n) {
		s->waiting_by[p->reason]--;
	} else {
		gs_sched__detach(s, p);
		gs_sched__set_state(s, p, GS_POD_WAITING);
		if (n) {
			gs_list_insert_tail(&n->waiters, &p->qlink);
			n->n_waiters++;
			p->wait_node = n;
		}
	}
	if (p->reason != r || !p->msg || strcmp(p->msg, msg) != 0) {
		gs_log_debug("pod %s/%s: waiting (%s): %s", p->ns, p->name, gs_sched__wait_reason_name(r), msg);
		gs_sched__gpm_touch(s, p); /* its object's status names the first waiting pod's reason */
	}
	p->reason = r;
	s->waiting_by[r]++;
	if (!p->msg || strcmp(p->msg, msg) != 0) {
		free(p->msg);
		p->msg = gs_xstrdup(msg);
	}
	if (!in_report_queue(p) && (p->reported_reason != r || !p->reported || strcmp(p->reported, p->msg) != 0))
		gs_list_insert_tail(&s->reportq, &p->rlink);
}

static void set_queued(struct gs_sched *s, struct gs_sched__pod *p)
{
	if (p->state == GS_POD_QUEUED)
		return; /* keeps its place in the queue */
	gs_sched__detach(s, p);
	gs_sched__set_state(s, p, GS_POD_QUEUED);
	p->seq = s->seq++;
	gs_sched__heap_push(&s->bindq, p);
	free(p->msg);
	p->msg = NULL;
	gs_log_debug("pod %s/%s: queued for node %s devices %s", p->ns, p->name, p->entry->node, p->entry->devices);
}

/*
 * Places again the waiters of slot n. Placing a pod of n's list either leaves it where it is (it waits
 * for the same name) or takes it off; the slot is pinned meanwhile so that the last one leaving does
 * not free it under the walk.
 */
static void place_waiters(struct gs_sched *s, struct gs_sched__node *n)
{
	struct gs_list *l, *next;

	n->pinned++;
	GS_LIST_FOREACH_SAFE(l, next, &n->waiters) {
		gs_sched__place(s, GS_CONTAINER_OF(l, struct gs_sched__pod, qlink));
	}
	n->pinned--;
}

void gs_sched__node_changed(struct gs_sched *s, struct gs_sched__node *n)
{
	struct gs_sched__node *a = n->alias ? gs_hmap_get_str(&s->nodes, n->alias->value) : NULL;

	n->pinned++;
	if (a && a != n)
		a->pinned++;
	place_waiters(s, n);
	if (a && a != n) {
		place_waiters(s, a);
		a->pinned--;
		gs_sched__node_gc(s, a);
	}
	n->pinned--;
	gs_sched__node_gc(s, n);
}

void gs_sched__name_changed(struct gs_sched *s, const char *name)
{
	struct gs_sched__node *n = gs_hmap_get_str(&s->nodes, name);

	if (!n)
		return;
	place_waiters(s, n);
	gs_sched__node_gc(s, n);
}

void gs_sched__drain_dirty(struct gs_sched *s)
{
	while (!gs_list_empty(&s->dirty)) {
		struct gs_sched__node *n = GS_CONTAINER_OF(gs_list_first(&s->dirty), struct gs_sched__node, dirty);
		gs_list_remove(&n->dirty);
		gs_sched__node_changed(s, n);
	}
}

int gs_sched__policy_allows(const struct gs_sched__node *n, const char *ns)
{
	const char *list = n->obj.allowed_ns;

	return !list || gs_sched__listed(list, "*", 1) || gs_sched__listed(list, ns, strlen(ns));
}

enum gs_wait_reason gs_sched__check_policy(const struct gs_sched__node *n, const char *ns, char *msg, size_t size)
{
	if (gs_sched__policy_allows(n, ns))
		return GS_WAIT_NONE;
	snprintf(msg, size, "node \"%s\" does not let namespace \"%s\" map it (its annotation %s is \"%.200s\")",
		 n->name, ns, GS_SCHED_ALLOWED_NS, n->obj.allowed_ns);
	return GS_WAIT_NODE_POLICY;
}

/* GPU indexes against the node's physical GPUs (gs_sched__node_gpus); UUIDs, and nodes with no count,
 * unchecked. */
enum gs_wait_reason gs_sched__check_gpus(const struct gs_sched__pod *p, const struct gs_sched__node *n, char *msg,
					 size_t size)
{
	char words[96];

	if (n->gpus < 0 || p->entry->max_index < n->gpus)
		return GS_WAIT_NONE;
	gs_sched__node_gpus_words(n, words, sizeof(words));
	snprintf(msg, size, "node \"%s\" %s, so it has no device %ld", n->name, words, p->entry->max_index);
	return GS_WAIT_NODE_DEVICES;
}

/* What blocks p on its (present, Ready, uncordoned) node n beside the node's state: the kubelet's
 * admission checks and the ledger, cheapest first. NONE or a reason with msg. */
static enum gs_wait_reason node_checks(struct gs_sched *s, struct gs_sched__pod *p, struct gs_sched__node *n, char *msg,
				       size_t size)
{
	const struct gs_sched__cons *c = p->spec ? &p->spec->cons : NULL;
	const struct gs_node_obj *o = &n->obj;

	if (gs_sched__check_policy(n, p->ns, msg, size) != GS_WAIT_NONE)
		return GS_WAIT_NODE_POLICY;
	if (gs_sched__check_gpus(p, n, msg, size) != GS_WAIT_NONE)
		return GS_WAIT_NODE_DEVICES;
	if (c && !gs_checks_affinity(n->name, o->labels, o->n_labels, c->node_selector, c->n_node_selector,
				     c->has_affinity, c->terms, c->n_terms, msg, size))
		return GS_WAIT_NODE_AFFINITY;
	if (c && !gs_checks_os(n->name, o->labels, o->n_labels, c->os_name, msg, size))
		return GS_WAIT_NODE_AFFINITY; /* the node's OS: the kubelet's PodOSNotSupported */
	if (gs_checks_taints(n->name, o->taints, o->n_taints, c ? c->tolerations : NULL, c ? c->n_tolerations : 0, msg,
			     size))
		return GS_WAIT_TAINT;
	/* Only pods without a use are placed (a reservation exists from next_bind to bind_done only). */
	return gs_sched__fit(s, p, n, msg, size);
}

/* NODE_ALIAS_AMBIGUOUS: "nodes gpu-worker and gpu-worker2 carry", "nodes a, b and 3 more carry" (list order). */
static void ambiguous_msg(char *msg, size_t size, const struct gs_sched *s, const struct gs_sched__pod *p,
			  const struct gs_sched__alias *a)
{
	const struct gs_sched__node *n1 = GS_CONTAINER_OF(gs_list_first(&a->nodes), struct gs_sched__node, alink);
	const struct gs_sched__node *n2 = GS_CONTAINER_OF(gs_list_first(&a->nodes)->next, struct gs_sched__node, alink);
	char more[48] = "";

	if (a->n > 2)
		snprintf(more, sizeof(more), " and %zu more", a->n - 2);
	snprintf(msg, size,
		 "node \"%s\" named by %s line %d for index %ld is ambiguous: no node has that name and "
		 "nodes %s%s %s%s carry the label %s=%s (remove it from all but one)",
		 p->entry->node, gs_sched__map_label(s, p), p->entry->line, p->index, n1->name, a->n > 2 ? "," : " and",
		 n2->name, more, s->cfg.alias_label, a->value);
}

/* p fits node n (resolved from its map name; via: through the alias label) but its gang has not been
 * placed: it holds its reservation there and waits for the rest (or, the gang resting, holds nothing). */
static void gang_wait(struct gs_sched *s, struct gs_sched__pod *p, struct gs_sched__node *n, int via)
{
	struct gs_sched__node *slot = n && !via ? n : gs_sched__node_slot(s, p->entry->node);
	char msg[MSG_MAX];
	enum gs_wait_reason r = gs_sched__gang_wait(s, p, n, msg, sizeof(msg));

	set_waiting(s, p, r, r == GS_WAIT_GANG_TIMED_OUT ? NULL : slot, msg);
	if (r == GS_WAIT_GANG)
		gs_sched__gang_reserve(s, p, n);
	else if (r == GS_WAIT_GANG_LIMIT)
		gs_sched__gang_capped(s, p);
}

static void place_now(struct gs_sched *s, struct gs_sched__pod *p)
{
	struct gs_sched__node *n, *slot;
	const struct gs_sched__alias *amb;
	enum gs_wait_reason r;
	char msg[2 * MSG_MAX], why[MSG_MAX - 256], who[520];
	const char *what = "", *label = gs_sched__map_label(s, p);
	int via;

	if (p->intrinsic != GS_WAIT_NONE) {
		set_waiting(s, p, p->intrinsic, NULL, p->imsg);
		return;
	}
	n = gs_sched__resolve(s, p->entry->node, &via, &amb);
	/* Both names when they differ: node1 (node gpu-worker3). */
	if (via)
		snprintf(who, sizeof(who), "%s (node %s)", p->entry->node, n->name);
	r = amb ? GS_WAIT_NODE_ALIAS_AMBIGUOUS : gs_sched__node_block_for(n, p);
	if (r == GS_WAIT_NONE) {
		r = node_checks(s, p, n, why, sizeof(why));
		if (r == GS_WAIT_NONE && gs_sched__gang_holds_back(p)) {
			gang_wait(s, p, n, via);
			return;
		}
		if (r == GS_WAIT_NONE) {
			set_queued(s, p);
			return;
		}
		snprintf(msg, sizeof(msg), "%s%s%s (%s line %d for index %ld)", via ? who : "", via ? ": " : "", why,
			 label, p->entry->line, p->index);
	} else if (r == GS_WAIT_NODE_ALIAS_AMBIGUOUS) {
		ambiguous_msg(msg, sizeof(msg), s, p, amb);
	} else {
		switch (r) {
		case GS_WAIT_NODE_MISSING:
			what = "does not exist";
			break;
		case GS_WAIT_NODE_NOT_READY:
			what = "is not Ready";
			break;
		default:
			what = "is cordoned (spec.unschedulable)";
			break;
		}
		if (via)
			snprintf(msg, sizeof(msg), "%s named by %s line %d for index %ld %s", who, label,
				 p->entry->line, p->index, what);
		else if (r == GS_WAIT_NODE_MISSING && s->cfg.alias_label)
			snprintf(msg, sizeof(msg),
				 "node \"%s\" named by %s line %d for index %ld does not exist "
				 "(and no node carries the label %s=%s)",
				 p->entry->node, label, p->entry->line, p->index, s->cfg.alias_label, p->entry->node);
		else
			snprintf(msg, sizeof(msg), "node \"%s\" named by %s line %d for index %ld %s", p->entry->node,
				 label, p->entry->line, p->index, what);
	}
	/* Every node reason waits on the slot of the map's name (sched_int.h). */
	slot = n && !via ? n : gs_sched__node_slot(s, p->entry->node);
	set_waiting(s, p, r, slot, msg);
}

int gs_sched__may_preempt(const struct gs_sched *s, const struct gs_sched__pod *p)
{
	return s->cfg.preemption && p->state == GS_POD_WAITING && gs_sched__fit_reason(p->reason) &&
	       !p->preempt_never && !(p->gang && p->gang->resting);
}

/* After p was placed: its nomination (sched_preempt.h) holds while it waits for room on that node or
 * is queued for it, and goes otherwise; a pod that may preempt is queued for the preemption pull. */
static void nomination_follows(struct gs_sched *s, struct gs_sched__pod *p)
{
	const struct gs_sched__use *u;
	const struct gs_sched__alias *amb;
	struct gs_sched__node *n = NULL;
	int via, may;

	if (!s->cfg.preemption)
		return; /* no nomination exists without it */
	u = gs_hmap_get_str(&s->uses, p->uid);
	may = gs_sched__may_preempt(s, p);
	if (!may && !(u && u->nominated))
		return; /* nothing to keep, nothing to queue: no second resolve on placement's common path */
	if (may || p->state == GS_POD_QUEUED)
		n = gs_sched__resolve(s, p->entry->node, &via, &amb);
	if (u && u->nominated && u->node != n)
		gs_sched__use_remove(s, p->uid);
	else if (!u && may && n && p->status_nominated && strcmp(n->name, p->status_nominated) == 0)
		gs_sched__pod_nominate(s, p, n); /* taken back from its status (sched.c) */
	if (may && n && !gs_list_linked(&p->plink))
		gs_list_insert_tail(&s->preemptq, &p->plink);
}

void gs_sched__place(struct gs_sched *s, struct gs_sched__pod *p)
{
	/* A gang member's reservation is taken out while it is judged (placement never measures a pod
	 * against itself) and put back when it still fits there; its node is told only if it did not. */
	struct gs_sched__node *held = gs_sched__gang_unreserve(s, p, 1);
	const struct gs_sched__use *u;

	place_now(s, p);
	if (p->gang)
		gs_sched__gang_ph_sync(s, p); /* its placeholder follows its reservation */
	nomination_follows(s, p);
	if (!held)
		return;
	gs_sched__gang_settle(s, p->gang); /* it did not take it back: the gang's claim may go */
	u = p->reserved ? gs_hmap_get_str(&s->uses, p->uid) : NULL;
	if (!u || u->node != held)
		gs_sched__node_mark_dirty(s, held);
	held->pinned--;
	gs_sched__node_gc(s, held);
}

void gs_sched__place_members(struct gs_sched *s, struct gs_sched__gang *g)
{
	struct gs_list *l, *next;

	GS_LIST_FOREACH_SAFE(l, next, &g->members) {
		struct gs_sched__pod *p = GS_CONTAINER_OF(l, struct gs_sched__pod, glink);
		if (p->state == GS_POD_WAITING)
			gs_sched__place(s, p);
	}
}

/* ---- the pod's own inputs ---------------------------------------------------------------------- */


static void no_index_msg(char *msg, size_t size, const struct gs_pod_obj *o)
{
	char ql[64], qj[64], lab[160], job[160];

	if (o->label_pod_index)
		snprintf(lab, sizeof(lab), "label apps.kubernetes.io/pod-index is %s, not an index",
			 gs_str_quote(ql, sizeof(ql), o->label_pod_index));
	else
		snprintf(lab, sizeof(lab), "no label apps.kubernetes.io/pod-index");
	if (o->job_index)
		snprintf(job, sizeof(job), "annotation batch.kubernetes.io/job-completion-index is %s, not an index",
			 gs_str_quote(qj, sizeof(qj), o->job_index));
	else
		snprintf(job, sizeof(job), "no annotation batch.kubernetes.io/job-completion-index");
	snprintf(msg, size, "cannot tell the pod's index: %s, %s, and the name does not end in -N", lab, job);
}

void gs_sched__spec_free(struct gs_sched__spec *sp)
{
	if (!sp)
		return;
	gs_sched__req_free(&sp->req);
	gs_sched__ports_free(sp->ports, sp->n_ports);
	/* A pod record holding only the copies: gs_pod_obj_free frees exactly those fields. */
	struct gs_pod_obj o = {
		.node_selector = sp->cons.node_selector,
		.n_node_selector = sp->cons.n_node_selector,
		.terms = sp->cons.terms,
		.n_terms = sp->cons.n_terms,
		.tolerations = sp->cons.tolerations,
		.n_tolerations = sp->cons.n_tolerations,
		.os_name = sp->cons.os_name,
	};
	gs_pod_obj_free(&o);
	free(sp);
}

/* Deep copies of the constraints the checks read; the pod record keeps them while it is pending. */
static void copy_constraints(struct gs_sched__cons *c, const struct gs_pod_obj *o)
{
	c->node_selector = gs_sched__labels_dup(o->node_selector, o->n_node_selector);
	c->n_node_selector = c->node_selector ? o->n_node_selector : 0;
	c->has_affinity = o->has_affinity;
	c->os_name = gs_sched__xstrdup_null(o->os_name);
	if (o->n_terms > 0) {
		c->terms = gs_xcalloc((size_t)o->n_terms, sizeof(*c->terms));
		for (int i = 0; i < o->n_terms; i++) {
			const struct gs_sel_term *t = &o->terms[i];
			c->terms[i].reqs = gs_xcalloc((size_t)(t->n_reqs > 0 ? t->n_reqs : 1), sizeof(*t->reqs));
			for (int j = 0; j < t->n_reqs; j++) {
				const struct gs_sel_req *q = &t->reqs[j];
				struct gs_sel_req *d = &c->terms[i].reqs[j];
				d->key = gs_xstrdup(q->key ? q->key : "");
				d->op = q->op;
				d->field = q->field;
				d->values = gs_xcalloc((size_t)(q->n_values > 0 ? q->n_values : 1), sizeof(char *));
				for (int k = 0; k < q->n_values; k++)
					d->values[k] = gs_xstrdup(q->values[k] ? q->values[k] : "");
				d->n_values = q->n_values;
			}
			c->terms[i].n_reqs = t->n_reqs;
		}
		c->n_terms = o->n_terms;
	}
	if (o->n_tolerations > 0) {
		c->tolerations = gs_xcalloc((size_t)o->n_tolerations, sizeof(*c->tolerations));
		for (int i = 0; i < o->n_tolerations; i++) {
			c->tolerations[i] = o->tolerations[i];
			c->tolerations[i].key = gs_sched__xstrdup_null(o->tolerations[i].key);
			c->tolerations[i].value = gs_sched__xstrdup_null(o->tolerations[i].value);
		}
		c->n_tolerations = o->n_tolerations;
	}
}

/* The pod's requests, ports and constraints, or NULL when it asks for nothing of them (most pods of
 * a plain GPU workload: no record kept). *gpu_req: its nvidia.com/gpu request. */
static struct gs_sched__spec *spec_from(struct gs_sched *s, const struct gs_pod_obj *o, int64_t *gpu_req)
{
	struct gs_resources r;
	struct gs_sched__spec *sp;

	gs_checks_pod_requests(o, &r);
	*gpu_req = gs_resources_ext(&r, "nvidia.com/gpu");
	if (!r.milli_cpu && !r.memory && !r.ephemeral && !r.n_ext && !o->n_host_ports && !o->n_node_selector &&
	    !o->has_affinity && !o->n_tolerations && !o->os_name) {
		gs_resources_free(&r);
		return NULL;
	}
	sp = gs_xcalloc(1, sizeof(*sp));
	gs_sched__req_from(s, &sp->req, &r);
	gs_resources_free(&r);
	sp->ports = gs_sched__ports_from(o, &sp->n_ports);
	copy_constraints(&sp->cons, o);
	return sp;
}

static void gated_msg(char *msg, size_t size, const struct gs_pod_obj *o)
{
	char q[64];

	if (o->n_gates > 1)
		snprintf(msg, size,
			 "pod has %d schedulingGates (%s and %d more); it is bound once the last one is removed",
			 o->n_gates, gs_str_quote(q, sizeof(q), o->first_gate ? o->first_gate : ""), o->n_gates - 1);
	else
		snprintf(msg, size, "pod has the schedulingGate %s; it is bound once it is removed",
			 gs_str_quote(q, sizeof(q), o->first_gate ? o->first_gate : ""));
}

/* A DevicePluginRequest warning is due when the pod has an entry and requests nvidia.com/gpu, once per
 * distinct message. */
static void notice_check(struct gs_sched *s, struct gs_sched__pod *p)
{
	char msg[MSG_MAX];

	if (!p->entry || p->gpu_req <= 0)
		return;
	gs_checks_device_plugin_warning(msg, sizeof(msg), p->gpu_req, p->entry, gs_sched__map_label(s, p));
	if (p->noticed && strcmp(p->noticed, msg) == 0)
		return;
	free(p->noticed);
	p->noticed = gs_xstrdup(msg);
	p->notice_due = 1;
	if (!in_report_queue(p))
		gs_list_insert_tail(&s->reportq, &p->rlink);
}

/* The map of o (a reference in *m, or NULL) and its entry for index (*e): NONE, or NO_MAP, MAP_INVALID,
 * NO_INDEX, NO_ENTRY with msg. */
static enum gs_wait_reason map_inputs(struct gs_sched *s, const struct gs_pod_obj *o, long index,
				      enum gs_index_source src, struct gs_map **m, const struct gs_map_entry **e,
				      char *msg, size_t size)
{
	const struct gs_map_error *err = NULL;
	int rc;

	if (!o->map_text) {
		snprintf(msg, size, "pod has no %s annotation", s->cfg.annotation);
		return GS_WAIT_NO_MAP;
	}
	rc = gs_map_cache_get(s->maps, o->map_text, o->map_len, m, &err);
	if (rc == -ENOMEM)
		gs_oom(o->map_len);
	if (rc < 0) {
		snprintf(msg, size, err->line ? "%s %s" : "%s: %s", s->cfg.annotation, err->msg);
		return GS_WAIT_MAP_INVALID;
	}
	if (index < 0) {
		no_index_msg(msg, size, o);
		return GS_WAIT_NO_INDEX;
	}
	if (!(*e = gs_map_lookup(*m, index))) {
		size_t n = gs_map_count(*m);
		snprintf(msg, size, "%s has no entry for index %ld (index from %s; the map has %zu %s)",
			 s->cfg.annotation, index, gs_index_source_name(src), n, n == 1 ? "entry" : "entries");
		return GS_WAIT_NO_ENTRY;
	}
	return GS_WAIT_NONE;
}

/* What the pod's own fields say once its map entry is known: CUDA_VISIBLE_DEVICES, the all-or-nothing
 * annotations (*gopts, *gang_ok), the scheduling gates. NONE or the first reason with msg. */
static enum gs_wait_reason own_inputs(struct gs_sched *s, const struct gs_pod_obj *o, const struct gs_map_entry *e,
				      enum gs_wait_reason r, struct gs_gang_opts *gopts, int *gang_ok, char *msg,
				      size_t size)
{
	char gmsg[MSG_MAX];

	if (r == GS_WAIT_NONE && s->cfg.check_env)
		r = gs_checks_cuda_env(s->cfg.annotation, o->cuda_state, o->cuda_value, e, msg, size)
			    ? GS_WAIT_NONE
			    : GS_WAIT_NOT_MUTATED;
	*gang_ok = gs_gang_opts_parse(o->placement, o->gang_timeout, o->gang_size, gopts, gmsg, sizeof(gmsg)) == 0;
	if (r == GS_WAIT_NONE && !*gang_ok) {
		r = GS_WAIT_GANG_INVALID;
		gs_str_copy(msg, size, gmsg);
	}
	/* Gates last: a gated pod with a broken map is told about the map first, which it can fix now. */
	if (r == GS_WAIT_NONE && o->n_gates > 0) {
		r = GS_WAIT_SCHEDULING_GATED;
		gated_msg(msg, size, o);
	}
	return r;
}

const char *gs_sched__map_label(const struct gs_sched *s, const struct gs_sched__pod *p)
{
	return p->ref ? p->ref->gpm->label : s->cfg.annotation;
}

void gs_sched__map_inputs(struct gs_sched *s, struct gs_sched__pod *p, const struct gs_pod_obj *o)
{
	const struct gs_map_entry *e = NULL;
	enum gs_wait_reason r;
	struct gs_gang_opts gopts;
	struct gs_map *m = NULL;
	char msg[MSG_MAX];
	int gang_ok;

	if (p->ref) {
		r = gs_sched__gpm_inputs(s, p, &m, &e, &gopts, &gang_ok, msg, sizeof(msg));
	} else {
		r = map_inputs(s, o, p->index, p->index_source, &m, &e, msg, sizeof(msg));
		r = own_inputs(s, o, e, r, &gopts, &gang_ok, msg, sizeof(msg));
	}
	long n_entries = m ? (long)gs_map_count(m) : 0; /* m may be let go below */
	gs_sched__inline_take(s, p, m, e, o && !p->ref ? o->map_len : 0);
	p->intrinsic = r;
	free(p->imsg);
	p->imsg = r != GS_WAIT_NONE ? gs_xstrdup(msg) : NULL;
	notice_check(s, p);
	gs_sched__gang_set(s, p, gang_ok ? &gopts : NULL, n_entries, s->now_ms);
}

/* What a pod by reference keeps of its record to resolve its map again without it (struct
 * gs_sched__pref): why it has no index, its gates. */
static void ref_inputs(struct gs_sched__pref *r, const struct gs_pod_obj *o, long index)
{
	char msg[MSG_MAX];

	free(r->no_index);
	free(r->gated);
	r->no_index = r->gated = NULL;
	if (index < 0) {
		no_index_msg(msg, sizeof(msg), o);
		r->no_index = gs_xstrdup(msg);
	}
	if (o->n_gates > 0) {
		gated_msg(msg, sizeof(msg), o);
		r->gated = gs_xstrdup(msg);
	}
}

void gs_sched__pod_inputs(struct gs_sched *s, struct gs_sched__pod *p, const struct gs_pod_obj *o)
{
	enum gs_index_source src;
	long index;

	if (gs_map_pod_index(o->label_pod_index, o->job_index, o->name, &index, &src) < 0)
		index = -1;
	if (index != p->index || src != p->index_source) {
		gs_sched__gpm_touch(s, p); /* its object's status names the waiting pod of the lowest index */
		if (index >= 0)
			gs_log_debug("pod %s/%s: index %ld from %s", p->ns, p->name, index, gs_index_source_name(src));
		else
			gs_log_debug("pod %s/%s: no index", p->ns, p->name);
	}
	p->index = index;
	p->index_source = src;
	if (gs_sched__gpm_link(s, p, o))
		ref_inputs(p->ref, o, index);
	p->recreate_ok =
		o->owner_kind && (strcmp(o->owner_kind, "StatefulSet") == 0 || strcmp(o->owner_kind, "Job") == 0);
	if (p->state == GS_POD_QUEUED && (p->created_ms != o->created_ms || p->priority != o->priority)) {
		/* Its place in the bind queue follows its new key. */
		gs_sched__heap_remove(&s->bindq, p);
		p->created_ms = o->created_ms;
		p->priority = o->priority;
		gs_sched__heap_push(&s->bindq, p);
	}
	p->created_ms = o->created_ms;
	p->priority = o->priority;
	p->preempt_never = o->preempt_never;
	p->shared = o->allow_shared;
	gs_sched__pod_owner(p, o);
	gs_sched__spec_free(p->spec);
	p->spec = spec_from(s, o, &p->gpu_req);
	gs_sched__map_inputs(s, p, o);
}

/* ---- pulls ------------------------------------------------------------------------------------- */

static void decide(struct gs_sched__pod *p, const struct gs_sched__node *n, int via, struct gs_bind_decision *out);

/*
 * The gangs ready to commit, in the order they completed: the first time a gang comes up, every
 * reserved member is placed again, each measured against the others' reservations and everything
 * else on its node as it is now (one snapshot: nothing happens between these placements); if the gang
 * still has its size, it is committed and its reserved members are handed out one per call, back to
 * back and ahead of every other pod, each Binding keeping the member's reservation. 1 with *out.
 */
static int gang_commit_next(struct gs_sched *s, int64_t now_ms, struct gs_bind_decision *out)
{
	while (!gs_list_empty(&s->gangs_ready)) {
		struct gs_sched__gang *g =
			GS_CONTAINER_OF(gs_list_first(&s->gangs_ready), struct gs_sched__gang, rlink);
		struct gs_sched__pod *p = NULL;
		struct gs_list *l;
		if (!g->committing) {
			gs_sched__place_members(s, g);
			if (g->resting || (long)g->n_reserved < g->size) {
				gs_list_remove(&g->rlink); /* back on the list when it completes again */
				continue;
			}
			gs_sched__gang_committed(s, g, now_ms);
		}
		GS_LIST_FOREACH(l, &g->members) {
			struct gs_sched__pod *m = GS_CONTAINER_OF(l, struct gs_sched__pod, glink);
			if (m->reserved) {
				p = m;
				break;
			}
		}
		if (!p) {
			g->committing = 0;
			gs_list_remove(&g->rlink);
			continue;
		}
		const struct gs_sched__use *u = gs_hmap_get_str(&s->uses, p->uid);
		GS_ASSERT(u && p->state == GS_POD_WAITING && p->reason == GS_WAIT_GANG);
		gs_sched__gang_hand_out(s, p); /* the reservation becomes the Binding's: the use stays */
		gs_sched__detach(s, p);
		gs_sched__set_state(s, p, GS_POD_BINDING);
		decide(p, u->node, strcmp(u->node->name, p->entry->node) != 0, out);
		out->placeholder = gs_sched__gang_handed_placeholder(s, &out->placeholder_uid);
		return 1;
	}
	return 0;
}

/* Gang timers that are due: a gathering gang times out (its members placed again release their
 * reservations), a resting one gathers again (its members placed again take them). */
static void gang_timers(struct gs_sched *s, int64_t now_ms)
{
	struct gs_sched__gang *g;

	while ((g = gs_sched__gang_due(s, now_ms))) {
		gs_sched__gang_fire(s, g, now_ms);
		gs_sched__place_members(s, g);
	}
}

int gs_sched__next_bind(struct gs_sched *s, int64_t now_ms, struct gs_bind_decision *out)
{
	/* Agent data that went stale no longer names holders: its nodes' waiters are judged again. */
	gs_sched__agent_expire(s, now_ms);
	/* Waiters of nodes that lost a pod first: they may fit now. */
	gs_sched__drain_dirty(s);
	gang_timers(s, now_ms);
	/* Gangs complete: ahead of everything else, so that what they reserved goes to them. */
	if (gang_commit_next(s, now_ms, out))
		return 1;
	/* Due retries join the queue (or wait, if their node went away meanwhile). */
	while (s->retry.len && s->retry.v[0]->due_ms <= now_ms)
		gs_sched__place(s, s->retry.v[0]);

	while (s->bindq.len) {
		struct gs_sched__pod *p = s->bindq.v[0];
		const struct gs_sched__alias *amb;
		struct gs_sched__node *n;
		int via;
		gs_sched__place(s, p); /* the node as it is now, its name resolved again */
		if (p->state != GS_POD_QUEUED)
			continue;
		n = gs_sched__resolve(s, p->entry->node, &via, &amb);
		GS_ASSERT(n && n->present); /* place just queued it for n */
		gs_sched__heap_remove(&s->bindq, p);
		gs_sched__set_state(s, p, GS_POD_BINDING);
		gs_sched__pod_reserve(s, p, n); /* the next decision sees it while the Binding is in flight */
		decide(p, n, via, out);
		return 1;
	}
	return 0;
}

/* p (BINDING, its use on n) handed out: the decision. */
static void decide(struct gs_sched__pod *p, const struct gs_sched__node *n, int via, struct gs_bind_decision *out)
{
	p->attempts++;
	*out = (struct gs_bind_decision){
		.uid = p->uid,
		.ns = p->ns,
		.name = p->name,
		.node = n->name,
		.map_node = p->entry->node,
		.devices = p->entry->devices,
		.n_devices = p->entry->n_devices,
		.index = p->index,
		.index_source = p->index_source,
		.map_line = p->entry->line,
		.created_ms = p->created_ms,
		.attempt = p->attempts,
	};
	gs_log_debug("pod %s/%s: bind to %s%s%s%s devices %s (index %ld from %s, attempt %u)", p->ns, p->name,
		     out->map_node, via ? " (node " : "", via ? n->name : "", via ? ")" : "", out->devices, p->index,
		     gs_index_source_name(p->index_source), p->attempts);
}

int gs_sched__bind_done(struct gs_sched *s, const char *uid, enum gs_bind_result res, int64_t now_ms,
			int64_t not_before_ms)
{
	struct gs_sched__pod *p = gs_hmap_get_str(&s->pods, uid);
	int64_t delay;

	if (!p || p->state != GS_POD_BINDING)
		return -ENOENT;
	switch (res) {
	case GS_BIND_OK:
		gs_sched__set_state(s, p, GS_POD_BOUND);
		p->committed = 0;
		s->binds_ok++;
		break;
	case GS_BIND_GONE:
		/* The reservation stays: a 409 says someone bound the pod (a leader before us, its binding
		 * not yet in our watch), most likely where its map says. Released when the watch tells:
		 * bound (it becomes the pod's use), unbound with a new version (placed again), deleted. */
		gs_sched__set_state(s, p, GS_POD_GONE);
		if (p->committed && p->gang)
			gs_sched__gang_bind_failed(s, p, "was refused (404 or 409: the pod is gone or bound already)");
		p->committed = 0;
		s->binds_gone++;
		gs_log_debug("pod %s/%s: binding gone, forgotten until it changes", p->ns, p->name);
		break;
	case GS_BIND_RETRY:
		gs_sched__use_remove(s, p->uid);
		delay = (int64_t)gs_backoff_delay((uint64_t)s->cfg.backoff_min_ms, (uint64_t)s->cfg.backoff_max_ms,
						  p->attempts, &s->rng);
		p->due_ms = now_ms + (delay > not_before_ms ? delay : not_before_ms);
		gs_sched__set_state(s, p, GS_POD_BACKOFF);
		gs_sched__heap_push(&s->retry, p);
		if (p->committed && p->gang)
			gs_sched__gang_bind_failed(s, p, "failed (the apiserver or the network: retryable)");
		p->committed = 0;
		s->binds_retry++;
		gs_log_debug("pod %s/%s: binding failed, retry at %lld", p->ns, p->name, (long long)p->due_ms);
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int gs_sched__next_report(struct gs_sched *s, int64_t now_ms, struct gs_report *out)
{
	gs_sched__drain_dirty(s);
	if (gs_sched__next_conflict(s, out) || gs_sched__gang_next_event(s, out)) {
		s->reports++;
		return 1;
	}
	while (!gs_list_empty(&s->reportq)) {
		struct gs_sched__pod *p = GS_CONTAINER_OF(gs_list_first(&s->reportq), struct gs_sched__pod, rlink);
		if (p->notice_due) {
			/* The pod stays queued when a waiting report may be due too: the next call takes it. */
			p->notice_due = 0;
			if (p->state != GS_POD_WAITING ||
			    (p->reported && p->reported_reason == p->reason && strcmp(p->reported, p->msg) == 0))
				gs_list_remove(&p->rlink);
			if (!p->entry || p->state == GS_POD_FINISHED || p->state == GS_POD_GONE)
				continue;
			*out = (struct gs_report){
				.kind = GS_REPORT_DEVICE_PLUGIN,
				.uid = p->uid,
				.ns = p->ns,
				.name = p->name,
				.message = p->noticed,
				.node = p->entry->node,
				.index = p->index,
			};
			s->reports++;
			return 1;
		}
		gs_list_remove(&p->rlink);
		if (p->state != GS_POD_WAITING)
			continue;
		if (p->reported && p->reported_reason == p->reason && strcmp(p->reported, p->msg) == 0)
			continue;
		free(p->reported);
		p->reported = gs_xstrdup(p->msg);
		p->reported_reason = p->reason;
		*out = (struct gs_report){
			.uid = p->uid,
			.ns = p->ns,
			.name = p->name,
			.reason = p->reason,
			.message = p->msg,
			.node = p->wait_node ? p->wait_node->name : NULL,
			.index = p->index,
			.recreate = p->reason == GS_WAIT_NOT_MUTATED && s->cfg.recreate_unmutated && p->recreate_ok,
		};
		s->reports++;
		return 1;
	}
	return 0;
}

/* ---- the owner (sched_place.h) ------------------------------------------------------------------- */

void gs_sched__pod_owner(struct gs_sched__pod *p, const struct gs_pod_obj *o)
{
	char *key = gs_sched__owner_key(o->ns, o->owner_uid);

	if (!p->owner || !key || strcmp(p->owner, key) != 0) {
		free(p->owner);
		p->owner = key;
	} else {
		free(key);
	}
	if (!gs_str_eq(p->owner_kind, o->owner_kind) || !gs_str_eq(p->owner_name, o->owner_name)) {
		free(p->owner_kind);
		free(p->owner_name);
		p->owner_kind = gs_sched__xstrdup_null(o->owner_kind);
		p->owner_name = gs_sched__xstrdup_null(o->owner_name);
	}
}
