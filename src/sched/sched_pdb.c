/*
 * sched_pdb.c: the PodDisruptionBudgets preemption orders its candidates by (sched_pdb.h).
 */
#include "sched/sched_pdb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/checks.h"
#include "sched/sched_node.h"

/* The engine's copy of b (its identity checked by the caller). */
static void pdb_copy(struct gs_pdb_obj *d, const struct gs_pdb_obj *b)
{
	memset(d, 0, sizeof(*d));
	d->ns = gs_xstrdup(b->ns);
	d->name = gs_xstrdup(b->name);
	d->uid = gs_sched__xstrdup_null(b->uid);
	d->resource_version = gs_sched__xstrdup_null(b->resource_version);
	d->selector = b->selector;
	d->disruptions_allowed = b->disruptions_allowed;
	d->match = gs_sched__labels_dup(b->match, b->n_match); /* a NULL value stays NULL: read as "" */
	d->n_match = d->match ? b->n_match : 0;
	d->n_exprs = b->n_exprs > 0 ? b->n_exprs : 0;
	d->exprs = d->n_exprs ? gs_xcalloc((size_t)d->n_exprs, sizeof(*d->exprs)) : NULL;
	for (int i = 0; i < d->n_exprs; i++) {
		const struct gs_sel_req *q = &b->exprs[i];
		d->exprs[i].key = gs_xstrdup(q->key);
		d->exprs[i].op = q->op;
		d->exprs[i].n_values = q->n_values > 0 ? q->n_values : 0;
		d->exprs[i].values = q->n_values > 0 ? gs_xcalloc((size_t)q->n_values, sizeof(char *)) : NULL;
		for (int k = 0; k < d->exprs[i].n_values; k++)
			d->exprs[i].values[k] = gs_xstrdup(q->values[k]);
	}
	d->n_disrupted = b->n_disrupted > 0 ? b->n_disrupted : 0;
	d->disrupted = d->n_disrupted ? gs_xcalloc((size_t)d->n_disrupted, sizeof(char *)) : NULL;
	for (int i = 0; i < d->n_disrupted; i++)
		d->disrupted[i] = gs_xstrdup(b->disrupted[i]);
}

static void pdb_free(struct gs_sched__pdb *b)
{
	gs_pdb_obj_free(&b->o);
	free(b->key);
	free(b);
}

int gs_sched__pdb_upsert(struct gs_sched *s, const struct gs_pdb_obj *b)
{
	struct gs_sched__pdb *old, *nb;
	size_t nl;

	if (!b->ns || !b->name || !*b->ns || !*b->name || strchr(b->ns, '/'))
		return -EINVAL;
	nl = strlen(b->ns);
	nb = gs_xcalloc(1, sizeof(*nb));
	nb->key = gs_xmalloc(nl + 1 + strlen(b->name) + 1);
	sprintf(nb->key, "%s/%s", b->ns, b->name);
	nb->name = nb->key + nl + 1;
	pdb_copy(&nb->o, b);
	if ((old = gs_hmap_get_str(&s->pdbs, nb->key)) != NULL) {
		gs_hmap_del_str(&s->pdbs, old->key, NULL);
		pdb_free(old);
	}
	gs_sched__hmap_put(&s->pdbs, nb->key, nb);
	return 0;
}

int gs_sched__pdb_delete(struct gs_sched *s, const char *ns, const char *name)
{
	struct gs_sched__pdb *b;
	char key[600];

	if (!ns || !name || snprintf(key, sizeof(key), "%s/%s", ns, name) >= (int)sizeof(key))
		return -EINVAL;
	if (!(b = gs_hmap_get_str(&s->pdbs, key)))
		return -ENOENT;
	gs_hmap_del_str(&s->pdbs, b->key, NULL);
	pdb_free(b);
	return 0;
}

void gs_sched__pdbs_free(struct gs_sched *s)
{
	struct gs_hmap_iter it = {0};

	while (gs_hmap_next(&s->pdbs, &it))
		pdb_free(it.val);
	gs_hmap_free(&s->pdbs);
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(const struct gs_sched__pdb *const *)a)->key, (*(const struct gs_sched__pdb *const *)b)->key);
}

/* Is name among b's status.disruptedPods? */
static int disrupted(const struct gs_sched__pdb *b, const char *name)
{
	for (int i = 0; i < b->o.n_disrupted; i++)
		if (strcmp(b->o.disrupted[i], name) == 0)
			return 1;
	return 0;
}

size_t gs_sched__pdb_violations(const struct gs_sched *s, struct gs_sched__use *const *c, size_t nc,
				const struct gs_sched__pdb **out)
{
	struct gs_sched__pdb **all;
	int64_t *allowed;
	size_t n = 0, violating = 0;
	struct gs_hmap_iter it = {0};

	for (size_t i = 0; i < nc; i++)
		out[i] = NULL;
	if (!nc || !s->pdbs.len)
		return 0;
	/* By key, so that a pod that violates two budgets is said to violate the same one every time. */
	all = gs_xreallocarray(NULL, s->pdbs.len, sizeof(*all));
	allowed = gs_xreallocarray(NULL, s->pdbs.len, sizeof(*allowed));
	while (gs_hmap_next(&s->pdbs, &it))
		all[n++] = it.val;
	qsort(all, n, sizeof(*all), by_key);
	for (size_t j = 0; j < n; j++)
		allowed[j] = all[j]->o.disruptions_allowed;
	for (size_t i = 0; i < nc; i++) {
		const struct gs_sched__use *u = c[i];
		const char *slash = strchr(u->key, '/');
		size_t nsl = slash ? (size_t)(slash - u->key) : 0;
		if (!u->bound || !slash || !u->n_labels)
			continue; /* a pod without labels matches no budget */
		for (size_t j = 0; j < n; j++) {
			const struct gs_pdb_obj *o = &all[j]->o;
			if (strlen(o->ns) != nsl || memcmp(o->ns, u->key, nsl) != 0 || !o->selector ||
			    gs_checks_label_selector(u->labels, u->n_labels, o->match, o->n_match, o->exprs,
						     o->n_exprs) != 1 ||
			    disrupted(all[j], slash + 1))
				continue;
			if (--allowed[j] < 0 && !out[i])
				out[i] = all[j];
		}
		violating += out[i] != NULL;
	}
	free(all);
	free(allowed);
	return violating;
}
