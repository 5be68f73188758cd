/*
 * gpm.h: maps as objects (issue 24; docs/sched.md, "Maps as objects"). A GPUPlacementMap
 * (deploy/crd/gpuplacementmaps.yaml) holds a map in its spec; a pod names one object of its own
 * namespace in the annotation GS_MAP_REF_ANNOTATION instead of carrying the map text. The engine keeps
 * the objects it is given (gs_sched_gpm_upsert, sched.h) and resolves a pod's reference from them,
 * never with a request per pod; the webhook resolves it from the same table.
 *
 *     metadata.annotations:
 *       gpu-scheduler.io/placement-map: train-ranks                 (set by the user, in the template)
 *       gpu-scheduler.io/placement-map-generation: "3"              (set by the webhook)
 *
 * Rules (one reading for the webhook, the engine, lint and explain):
 *   - A pod with both the inline map annotation and a reference is refused: the webhook denies it, the
 *     engine makes it wait MAP_INVALID saying so.
 *   - By reference, the object's spec.placement / gangTimeout / gangSize are the workload's
 *     all-or-nothing settings (read by gs_gang_opts_parse as the annotations are); the pod's own gang
 *     annotations beside a reference are refused the same way (denied; GANG_INVALID).
 *   - The webhook sets CUDA_VISIBLE_DEVICES from the object's entry and records the object's
 *     metadata.generation it used in GS_MAP_REF_GENERATION. The engine places by the object as it is
 *     now; a pod admitted under another generation whose entry's devices changed has the wrong
 *     CUDA_VISIBLE_DEVICES and is treated as an unmutated pod today (NOT_MUTATED: recreated through its
 *     controller with --recreate-unmutated, else it waits), its message naming both generations. An
 *     entry whose devices did not change (its node did, or another entry did) places the pod as usual.
 *   - A reference to an object the engine does not hold: the pod waits MAP_MISSING, and is placed again
 *     when an object of that namespace and name is upserted. An object whose map does not parse: the
 *     pod waits MAP_INVALID naming the object and the line.
 */
#ifndef GS_SCHED_GPM_H
#define GS_SCHED_GPM_H

#include <stddef.h>
#include <stdint.h>

#define GS_MAP_REF_ANNOTATION "gpu-scheduler.io/placement-map"
#define GS_MAP_REF_GENERATION "gpu-scheduler.io/placement-map-generation"
#define GS_GPM_KIND           "GPUPlacementMap"

/* A GPUPlacementMap as the engine takes it and hands it out: borrowed strings (NULL: absent). */
struct gs_gpm_view {
	const char *ns, *name, *uid; /* required */
	int64_t generation;          /* metadata.generation (>= 1 from the apiserver) */
	const char *map_text;        /* spec.map, map_len bytes (need not be NUL-terminated) */
	size_t map_len;
	const char *placement, *gang_timeout, *gang_size; /* spec's settings, as the annotations' text */
	const char *refused; /* the object exists but the scheduler does not hold it (its memory budgets,
			      * sched.h), why: a lookup's answer (its map_text NULL then), or, given to
			      * gs_sched_gpm_upsert by a command, what the daemon's status said: refused so */
};

#endif
