/*
 * sched_preempt.h: preemption on the mapped node (sched_preempt.c; issue 33, docs/sched.md
 * "Preemption"), above sched_use.h: which pods of lower priority a waiting pod would take the place of
 * on the node its map names. That node is its one candidate, and the victims are chosen there as
 * kube-scheduler's DefaultPreemption chooses them on one node (SelectVictimsOnNode): every pod that may
 * be a victim is set aside; if the pod fits then, they are put back one by one, the most important
 * first (higher priority, then the older), and each that the pod still fits beside is reprieved; the
 * others are the victims. Those whose deletion would violate a PodDisruptionBudget (sched_pdb.h) are put
 * back before all the others, so the victims violate as few budgets as the pod's fit allows.
 *
 * May preempt: a pod whose spec.preemptionPolicy is not Never, that waits on its node for what the fit
 * checks (HOST_PORT, INSUFFICIENT_RESOURCE, DEVICE_BUSY: the node passed every other check).
 * May be a victim: a pod bound to that node (not a Binding in flight, a gang reservation or a
 * placeholder of ours) of strictly lower priority, not being deleted already (it still counts until it
 * stops). A member of a running all-or-nothing gang of ours goes only with its whole gang: the gang is a
 * candidate when each of its bound members is of lower priority, its members on the node are set aside
 * and put back as one unit, and a gang that is a victim brings its members on other nodes along. A
 * gathering gang's reservation of lower priority is a candidate too, alone: taking it deletes nothing
 * (the pull lets it go, sched_gang.h gs_sched__gang_release, and hands out only the pods to delete).
 *
 * The plan is read-only: every use set aside is put back before the call returns (sched_use.h,
 * gs_sched__use_hide). Cost: O(k log k) for the k pods on the node, plus one fit per candidate.
 *
 * The daemon's preemptions (sched.h, gs_sched_next_preemption): a pod that may preempt is queued on
 * s->preemptq by its placement (sched_place.h, gs_sched__place); the pull plans for it on the node as it is
 * then, marks the victims preempted (never chosen again) and nominates the pod there: a use of its uid
 * counting its requests, ports and devices (sched_int.h, gs_sched__use.nominated), so that what the
 * victims free goes to it. The nomination holds while the pod waits for room on that node or is
 * queued for it; its Binding's reservation replaces it (the same uid); it goes with the pod.
 * Invariant: a pod on s->preemptq is a pod of ours (linked by plink); what it waits for is checked again
 * at the pull. A member of a gathering all-or-nothing gang makes its whole gang plan (gang_plan): every
 * waiting member's victims, each member nominated before the next is planned, all kept or none.
 */
#ifndef GS_SCHED_SCHED_PREEMPT_H
#define GS_SCHED_SCHED_PREEMPT_H

#include "sched/sched_int.h"

struct gs_sched__pdb;

struct gs_sched__preempt {
	size_t n_victims;
	struct gs_sched__use **victims;   /* owned array; the uses are the engine's */
	const struct gs_sched__pdb **pdb; /* owned array beside victims: the budget each violates, or NULL */
	size_t n_violating;               /* victims with a budget */
	char why[512];                    /* with no victims: why none would do */
};

/*
 * What pod p (waiting with a reason gs_sched__fit_reason accepts) would preempt on n, its resolved
 * node: 1 with out->victims, else 0 with out->why ("its preemptionPolicy is Never", "it is a member of
 * an all-or-nothing gang ...", "it is nominated to node \"node2\" and 1 pod of lower priority there is
 * still terminating ...", "no pod of lower priority than 10 runs on node \"node2\"", "even with the 3
 * pods of lower priority on node \"node2\" gone: Insufficient cpu: ..."). The daemon's pull and explain
 * both ask this, so they agree. Release out with gs_sched__preempt_free.
 */
int gs_sched__preempt_plan(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
			   struct gs_sched__preempt *out);
void gs_sched__preempt_free(struct gs_sched__preempt *pl);

/* p leaves (deleted, finished, not ours): off the queue, its nomination gone. */
void gs_sched__preempt_forget(struct gs_sched *s, struct gs_sched__pod *p);
/* The node p is nominated to, or NULL. */
const char *gs_sched__nominated_node(const struct gs_sched *s, const struct gs_sched__pod *p);
/* gs_sched_next_preemption and gs_sched_preemption_failed (sched.h). */
int gs_sched__next_preemption(struct gs_sched *s, struct gs_preemption *out);
int gs_sched__preemption_failed(struct gs_sched *s, const char *victim_uid);
/* Frees the last preemption handed out (s->preempt_out). */
void gs_sched__preempt_out_free(struct gs_sched *s);
/* Frees it and those decided and not handed out yet (s->preempt_ready): the engine is being freed. */
void gs_sched__preempt_ready_free(struct gs_sched *s);

#endif
