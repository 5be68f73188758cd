/*
 * sched_explain.h: the engine seen from outside (sched_explain.c), above sched_place.h: a pod's public
 * view, "why is my pod pending" (each of placement's checks run on its own, in placement's order), and
 * the pending summary; behind sched.h's gs_sched_pod_info, gs_sched_explain and gs_sched_pending.
 * Reads the engine, never changes it (except the explain's own allocations, freed by
 * gs_sched__explain_free).
 */
#ifndef GS_SCHED_SCHED_EXPLAIN_H
#define GS_SCHED_SCHED_EXPLAIN_H

#include "sched/sched_int.h"

/* The public view of a pod (strings borrowed from it). */
void gs_sched__pod_info(const struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched_pod_info *out);
/* gs_sched_explain, gs_sched_explain_free and gs_sched_pending (sched.h). */
int gs_sched__explain(struct gs_sched *s, const char *ns, const char *name, struct gs_sched_explain *e);
void gs_sched__explain_free(struct gs_sched_explain *e);
void gs_sched__pending(const struct gs_sched *s, struct gs_sched_pending *out);

#endif
