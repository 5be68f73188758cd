/*
 * sched_pdb.h: the PodDisruptionBudgets the engine holds (sched_pdb.c; s->pdbs), which preemption
 * (sched_preempt.h) reads to order its candidates as kube-scheduler's DefaultPreemption does
 * (filterPodsWithPDBViolation): the candidates whose deletion would violate a budget are put back first,
 * so that a budget is violated only when nothing else lets the pod fit. A budget never keeps a pod from
 * preempting (kube-scheduler deletes its victims; it does not evict them).
 *
 * A candidate violates a budget of its namespace whose selector matches its labels (checks.h,
 * gs_checks_label_selector: an empty or unparsable selector matches none, and a pod without labels
 * matches none), unless its name is among the budget's status.disruptedPods (the apiserver took its
 * eviction already), when the budget's status.disruptionsAllowed, less one for each candidate before it
 * (most important first) that the budget matched, is below one.
 *
 * Costs: an upsert or delete O(the budget); the violations of k candidates O(k x the budgets held).
 */
#ifndef GS_SCHED_SCHED_PDB_H
#define GS_SCHED_SCHED_PDB_H

#include "sched/sched_int.h"

struct gs_sched__pdb {
	char *key;           /* "ns/name" */
	const char *name;    /* in key, after the slash */
	struct gs_pdb_obj o; /* the engine's copy */
};

/* sched.h's gs_sched_pdb_upsert and gs_sched_pdb_delete. */
int gs_sched__pdb_upsert(struct gs_sched *s, const struct gs_pdb_obj *b);
int gs_sched__pdb_delete(struct gs_sched *s, const char *ns, const char *name);
/* Frees every budget held (gs_sched_free). */
void gs_sched__pdbs_free(struct gs_sched *s);

/*
 * The budget each of the candidates c[0..nc) (most important first) would violate, into out[i] (NULL:
 * none; a candidate that is not bound, a gang's reservation, violates none). Returns how many violate one.
 * Read-only.
 */
size_t gs_sched__pdb_violations(const struct gs_sched *s, struct gs_sched__use *const *c, size_t nc,
				const struct gs_sched__pdb **out);

#endif
