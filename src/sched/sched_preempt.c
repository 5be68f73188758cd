/*
 * sched_preempt.c: which pods a waiting pod would preempt on its mapped node (sched_preempt.h).
 */
#include "sched/sched_preempt.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched_use.h"

int gs_sched__preempt_reason(enum gs_wait_reason r)
{
	return r == GS_WAIT_HOST_PORT || r == GS_WAIT_INSUFFICIENT_RESOURCE || r == GS_WAIT_DEVICE_BUSY;
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

/* May u be a victim of a pod of priority prio? *deleting and *gang count the lower ones that may not. */
static int may_be_victim(const struct gs_sched *s, const struct gs_sched__use *u, int64_t prio, size_t *deleting,
			 size_t *gang)
{
	const struct gs_sched__pod *vp;

	if (!u->bound || u->priority >= prio)
		return 0;
	if (u->deleting) {
		(*deleting)++;
		return 0;
	}
	vp = gs_hmap_get_str(&s->pods, u->uid);
	if (vp && vp->gang) {
		(*gang)++;
		return 0;
	}
	return 1;
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
			 " (%zu in an all-or-nothing gang of ours: a victim only with its whole gang, not yet done)",
			 gang);
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
	/* Put back the most important first; those it still fits beside are reprieved. */
	qsort(c, nc, sizeof(*c), more_important_first);
	for (size_t i = 0; i < nc; i++) {
		gs_sched__use_hide(s, c[i], 0);
		if (gs_sched__fit(s, p, n, msg, sizeof(msg)) != GS_WAIT_NONE) {
			gs_sched__use_hide(s, c[i], 1);
			c[out->n_victims++] = c[i];
		}
	}
	for (size_t i = 0; i < out->n_victims; i++)
		gs_sched__use_hide(s, c[i], 0);
	GS_ASSERT(out->n_victims > 0); /* it did not fit with them all there */
	out->victims = c;
	return 1;
}

void gs_sched__preempt_free(struct gs_sched__preempt *pl)
{
	free(pl->victims);
	pl->victims = NULL;
	pl->n_victims = 0;
}
