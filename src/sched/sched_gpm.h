/*
 * sched_gpm.h: maps as objects (sched_gpm.c; sched/gpm.h has the rules, docs/sched.md "Maps as
 * objects" the story): the GPUPlacementMaps the engine holds (s->gpms), the pods of ours that reference
 * each, a pod's map resolved by reference, and each object's status for its /status subresource. Below
 * placement (sched_place.c asks it for a referencing pod's map part and tells it of state changes): it
 * never places a pod; sched.c places an object's pods again after an object event.
 *
 * Costs: an object event is O(1) plus O(its referencing pods) (they are placed again); a pod event
 * O(1) (its link, its slot marked dirty); a status pull O(that object's pods) (counted at pull time,
 * never on events); nothing scans all pods.
 */
#ifndef GS_SCHED_SCHED_GPM_H
#define GS_SCHED_SCHED_GPM_H

#include "sched/gang.h"
#include "sched/gpm.h"
#include "sched/sched_int.h"

/*
 * The store behind sched.h's gs_sched_gpm_upsert and _delete; placing the pods that name the object
 * again is the caller's (sched.c, which sits above placement). Upsert: 1 with *out, the slot, when the
 * object changed (taken, its map parsed through the map cache), 0 when it is what the engine holds
 * already, -EINVAL. Delete: 0 with *out, the slot, now absent and still allocated (the caller runs
 * gs_sched__gpm_gc once its pods were placed again), or -ENOENT.
 */
int gs_sched__gpm_upsert(struct gs_sched *s, const struct gs_gpm_view *g, struct gs_sched__gpm **out);
int gs_sched__gpm_delete(struct gs_sched *s, const char *ns, const char *name, struct gs_sched__gpm **out);
/* Frees g when nothing needs it any more (the object is gone and no pod names it); else nothing. */
void gs_sched__gpm_gc(struct gs_sched *s, struct gs_sched__gpm *g);
/* The slot of ns/name (the object held, or only referenced), NULL when none. O(1). */
const struct gs_sched__gpm *gs_sched__gpm_slot(const struct gs_sched *s, const char *ns, const char *name);
/* sched.h's gs_sched_gpm_find, _next_gpm_status, _gpm_status. */
int gs_sched__gpm_find(const struct gs_sched *s, const char *ns, const char *name, struct gs_gpm_view *out);
int gs_sched__gpm_next_status(struct gs_sched *s, int64_t now_ms, struct gs_gpm_status *out);
int gs_sched__gpm_status(const struct gs_sched *s, const char *ns, const char *name, struct gs_gpm_status *out);

/* The status of slot g now (strings borrowed from the pods and the slot). O(g's pods). */
void gs_sched__gpm_count(const struct gs_sched__gpm *g, struct gs_gpm_status *out);
/* When a held-back status becomes due (the first slot cooling, when a dirty one cools), or -1. */
int64_t gs_sched__gpm_deadline(const struct gs_sched *s);
/* Frees every slot (gs_sched_free; the pods' references are freed with the pods). */
void gs_sched__gpms_free(struct gs_sched *s);

/* p's status counts may have changed (its state, reason or message): its object's slot goes dirty.
 * O(1); nothing for a pod without a reference. */
void gs_sched__gpm_touch(struct gs_sched *s, const struct gs_sched__pod *p);

/*
 * p's reference from its full record o: links p to the slot of o->ns/o->map_ref (created when none)
 * and keeps what resolving needs (struct gs_sched__pref); with no map_ref, unlinks p. Returns 1 when p
 * references an object now.
 */
int gs_sched__gpm_link(struct gs_sched *s, struct gs_sched__pod *p, const struct gs_pod_obj *o);
/*
 * The map part of a pod by reference's inputs (gs_sched__map_inputs): its object's map (a new
 * reference in *m) and entry (*e), its gang settings (*gopts; *gang_ok 0 when they are refused or the
 * object is missing), and NONE or the first reason with msg, in sched/gpm.h's order: inline map beside
 * the reference, object missing, map not parsing, no index, no entry, CUDA_VISIBLE_DEVICES (naming both
 * generations when the pod was admitted under another), gang settings, gates.
 */
enum gs_wait_reason gs_sched__gpm_inputs(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_map **m,
					 const struct gs_map_entry **e, struct gs_gang_opts *gopts, int *gang_ok,
					 char *msg, size_t size);
/* Slot g's map, parsed (a new reference: the one kept while pods name it, else from cache, or parsed
 * now when cache is NULL, as the read-only views do), NULL when the object is not held or its map does
 * not parse. */
struct gs_map *gs_sched__gpm_parsed(struct gs_map_cache *cache, const struct gs_sched__gpm *g);
/* sched.h's gs_sched_gpm_take_relist. */
int gs_sched__gpm_take_relist(struct gs_sched *s, int64_t now_ms, int64_t *due_ms);

/*
 * Memory (docs/sched.md, "Memory"): p's map and entry from its inputs (m a new reference, or NULL; e
 * in m). A pod by reference keeps its object's map (charged with the object). A pod's inline map of
 * len bytes of text is kept and charged once per namespace and text while it fits the budgets;
 * past them p keeps a copy of its entry alone and lets the map go: it is placed the same, only the
 * workload view of its owner lists no index without a pod. Drops what p held before.
 */
void gs_sched__inline_take(struct gs_sched *s, struct gs_sched__pod *p, struct gs_map *m, const struct gs_map_entry *e,
			   size_t len);
/* Lets go of p's map and entry (and their charge). */
void gs_sched__inline_drop(struct gs_sched *s, struct gs_sched__pod *p);

/* Takes p's reference away (its slot freed when nothing needs it any more). */
void gs_sched__gpm_unlink(struct gs_sched *s, struct gs_sched__pod *p);

#endif
