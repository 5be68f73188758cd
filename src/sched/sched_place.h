/*
 * sched_place.h: where a pod goes, and the pulls (sched_place.c), above sched_use.h: the pod's own
 * inputs (map, index, CUDA check, spec), the node checks in placement's order, the one decision
 * between queue and waiting (gs_sched__place), the waiter lists, the bind queue and retry heap, and
 * the pulls behind gs_sched_next_bind, gs_sched_bind_done and gs_sched_next_report (sched.h; sched.c
 * calls these).
 *
 * Invariants: a pending pod is in exactly one place: the bind queue (QUEUED), the waiter list of the
 * slot of its map's node name (WAITING with a NODE_* reason), nowhere (WAITING for a reason of its
 * own), the retry heap (BACKOFF), or in flight (BINDING); s->by_state and s->waiting_by count them.
 * A node on s->dirty has its waiters placed again at the next pull (gs_sched__drain_dirty).
 */
#ifndef GS_SCHED_SCHED_PLACE_H
#define GS_SCHED_SCHED_PLACE_H

#include "sched/sched_int.h"

/* ---- states and places ------------------------------------------------------------------------- */

/* The NODE_* reason a node (slot or NULL) blocks placement with, or NONE, whatever the pod (counts
 * nodes_schedulable). */
enum gs_wait_reason gs_sched__node_block(const struct gs_sched__node *n);
/* n's first not-ready or unreachable taint (any effect), or NULL. */
const struct gs_taint *gs_sched__condition_taint(const struct gs_sched__node *n);
/* 1 when a toleration tolerates node.kubernetes.io/unschedulable:NoSchedule (kube-scheduler's
 * NodeUnschedulable plugin: such a pod may go to a cordoned node). */
int gs_sched__tolerates_cordon(const struct gs_toleration *tols, int n_tols);
/*
 * The NODE_* reason node n blocks pod p with, as kube-scheduler decides since 1.17: NODE_MISSING; a
 * node that is not Ready blocks with NODE_NOT_READY only when it carries neither the not-ready nor the
 * unreachable taint (with one, the taint check decides, through the pod's tolerations); a cordoned
 * node blocks with NODE_CORDONED unless p tolerates node.kubernetes.io/unschedulable:NoSchedule.
 */
enum gs_wait_reason gs_sched__node_block_for(const struct gs_sched__node *n, const struct gs_sched__pod *p);
/*
 * The node a map's node name means now: the present node of that name, else (aliases on) the one
 * present node whose alias label has that value (*via_alias = 1). NULL when there is none, or when
 * several carry the value (*ambiguous = that index entry). O(1).
 */
struct gs_sched__node *gs_sched__resolve(const struct gs_sched *s, const char *name, int *via_alias,
					 const struct gs_sched__alias **ambiguous);
void gs_sched__set_state(struct gs_sched *s, struct gs_sched__pod *p, enum gs_pod_state st);
/* Takes p out of the queue, waiter list or heap it is in (state unchanged). */
void gs_sched__detach(struct gs_sched *s, struct gs_sched__pod *p);

/* ---- heaps and their orders -------------------------------------------------------------------- */

int gs_sched__bind_before(const struct gs_sched__pod *a, const struct gs_sched__pod *b);
int gs_sched__due_before(const struct gs_sched__pod *a, const struct gs_sched__pod *b);
void gs_sched__heap_push(struct gs_sched__heap *h, struct gs_sched__pod *p);
void gs_sched__heap_remove(struct gs_sched__heap *h, struct gs_sched__pod *p);

/* ---- node checks and placement ----------------------------------------------------------------- */

/* 1 when n's allowed-namespaces annotation (gs_node_obj.allowed_ns, gs_sched__listed's form) is absent
 * or lists ns or "*". */
int gs_sched__policy_allows(const struct gs_sched__node *n, const char *ns);
/* NODE_POLICY with msg when gs_sched__policy_allows says no; else NONE. */
enum gs_wait_reason gs_sched__check_policy(const struct gs_sched__node *n, const char *ns, char *msg, size_t size);
/* NODE_DEVICES with msg when the node advertises fewer nvidia.com/gpu than the entry's highest index. */
enum gs_wait_reason gs_sched__check_gpus(const struct gs_sched__pod *p, const struct gs_sched__node *n, char *msg,
					 size_t size);
/* Queues p for binding or makes it wait, from its inputs and the node it names now. Then its nomination
 * (sched_preempt.h) holds only while it waits for room on that node (a fit reason) or is queued for it,
 * and a pod that may preempt (gs_sched__may_preempt) is put on s->preemptq. */
void gs_sched__place(struct gs_sched *s, struct gs_sched__pod *p);
/* 1 when p waits for what pods on its node hold (a fit reason) and may preempt for it: cfg.preemption,
 * its preemptionPolicy is not Never, its all-or-nothing gang (if any) is not resting after a timeout (a
 * gathering gang preempts for all its members at once: sched_preempt.h). */
int gs_sched__may_preempt(const struct gs_sched *s, const struct gs_sched__pod *p);
/* Places again every WAITING member of gang g (its commit's verification, its timers). */
void gs_sched__place_members(struct gs_sched *s, struct gs_sched__gang *g);
/* Recomputes the pod's own inputs (map, index, entry, CUDA check, spec) from o. */
void gs_sched__pod_inputs(struct gs_sched *s, struct gs_sched__pod *p, const struct gs_pod_obj *o);
/*
 * The map part of them: p's map and entry, its intrinsic reason (map, index, entry, CUDA check, gang
 * settings, gates), its DevicePluginRequest notice, its gang. From o (inline), or, for a pod by
 * reference (p->ref), from its object and what p->ref kept (o unused, may be NULL): what an object
 * event runs on each pod that references it (sched_gpm.c).
 */
void gs_sched__map_inputs(struct gs_sched *s, struct gs_sched__pod *p, const struct gs_pod_obj *o);
/* Where p's map comes from, for messages: cfg.annotation ("gpu-scheduling-map"), or "GPUPlacementMap
 * ns/name" for a pod by reference. */
const char *gs_sched__map_label(const struct gs_sched *s, const struct gs_sched__pod *p);

void gs_sched__spec_free(struct gs_sched__spec *sp);
/* Places again every pod waiting for a node whose usage went down or whose agent data went stale
 * (s->dirty), in the list's order. */
void gs_sched__drain_dirty(struct gs_sched *s);
/*
 * Places again every pod waiting for n's name and for n's alias value (the pods whose map name may
 * resolve to n). O(waiters of those two slots).
 */
void gs_sched__node_changed(struct gs_sched *s, struct gs_sched__node *n);
/* Places again every pod waiting for the map name `name` (a slot may not exist: nothing to do). */
void gs_sched__name_changed(struct gs_sched *s, const char *name);

/* ---- pulls (sched.h's gs_sched_next_bind, gs_sched_bind_done, gs_sched_next_report) ------------ */

int gs_sched__next_bind(struct gs_sched *s, int64_t now_ms, struct gs_bind_decision *out);
/* gs_sched_bind_done; with GS_BIND_RETRY, the retry is not due before not_before_ms from now. */
int gs_sched__bind_done(struct gs_sched *s, const char *uid, enum gs_bind_result res, int64_t now_ms,
			int64_t not_before_ms);
int gs_sched__next_report(struct gs_sched *s, int64_t now_ms, struct gs_report *out);

/* ---- the owner ---------------------------------------------------------------------------------- */

/* p's owner (uid, kind, name) from o, which may be partial (it carries the owner): with the inputs of a
 * pod placed here, and on every update of a pod seen bound (sched.c), so that adoption and orphaning
 * move a pod between workloads (sched_workload.c) whatever its state. */
void gs_sched__pod_owner(struct gs_sched__pod *p, const struct gs_pod_obj *o);

#endif
