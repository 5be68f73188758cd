/*
 * sched_workload.h: the owner-level view (sched_workload.c), layer 5 beside sched_explain.h: every pod of
 * one owner by index, and the indices of its map with no pod; behind sched.h's gs_sched_workload,
 * gs_sched_workload_free and gs_sched_workload_kind. Reads the engine, never changes it: one scan of
 * s->pods per call, O(pods of ours) (the engine keeps no index by owner: a debug view and a command ask
 * this, never the binding path), plus O(rows log rows) to sort. And behind gs_sched_mapped_gpus: the
 * GPUs each running pod of ours holds, with the agent's word on their index and UUID (sched_agent.h).
 */
#ifndef GS_SCHED_SCHED_WORKLOAD_H
#define GS_SCHED_SCHED_WORKLOAD_H

#include "sched/sched_int.h"

int gs_sched__workload(const struct gs_sched *s, const char *ns, const char *kind, const char *name,
		       const char *map_text, size_t map_len, struct gs_sched_workload *out);
/* sched.h's gs_sched_workload_ref: the owner's pods' rows, the indices from the object map_ref names. */
int gs_sched__workload_ref(const struct gs_sched *s, const char *ns, const char *kind, const char *name,
			   const char *map_ref, struct gs_sched_workload *out);
/* sched.h's gs_sched_gpm_workload: the pods that reference the slot of ns/name (O(its pods)). */
int gs_sched__gpm_workload(const struct gs_sched *s, const char *ns, const char *name, struct gs_sched_workload *out);
void gs_sched__workload_free(struct gs_sched_workload *w);
/* gs_sched_mapped_gpus. */
int gs_sched__mapped_gpus(const struct gs_sched *s, gs_sched_mapped_fn fn, void *ud);
const char *gs_sched__workload_kind(const char *word);

#endif
