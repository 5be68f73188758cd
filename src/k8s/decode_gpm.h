/*
 * decode_gpm.h: a GPUPlacementMap (deploy/crd/gpuplacementmaps.yaml; group gpu-scheduler.io, version
 * v1alpha1, namespaced) from the apiserver's JSON into a plain record, for lists and watch events. No I/O.
 * CRDs have no protobuf encoding: JSON only.
 *
 * Strict like the pod decoder (decode.h): absent or null is absent (NULL, 0, ""), a wrong type fails
 * the object with a message naming the field ("spec.gangSize is not an integer"), and every string a
 * peer sizes has a cap (GS_GPM_MAX_*), past which the object fails too. The settings are kept as text,
 * unchecked beyond their type and size: gs_gang_opts_parse (sched/gang.h) reads them as it reads the
 * annotations, so one object and one annotation mean one thing. status is the scheduler's own: only its
 * NotHeld condition is read (not_held), leniently.
 *
 * Errors: 0 or -EINVAL (with a one-line reason in err, which may be NULL) or -ENOMEM. On failure every
 * output is left zeroed/NULL: nothing to free.
 */
#ifndef GS_K8S_DECODE_GPM_H
#define GS_K8S_DECODE_GPM_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "k8s/decode.h"
#include "sched/gpm.h"
#include "sched/map.h"

#define GS_GPM_GROUP    "gpu-scheduler.io"
#define GS_GPM_VERSION  "v1alpha1"
#define GS_GPM_RESOURCE "gpuplacementmaps"

/* Caps on what a peer sizes: the Kubernetes limits of names and uids, generous ones for the rest. */
#define GS_GPM_MAX_NAME    253              /* metadata.name (a DNS subdomain) and .namespace (63, within it) */
#define GS_GPM_MAX_META    128              /* metadata.uid, .resourceVersion */
#define GS_GPM_MAX_SETTING 64               /* spec.placement, spec.gangTimeout */
#define GS_GPM_MAX_MAP     GS_MAP_MAX_BYTES /* spec.map, as the map grammar caps it */
#define GS_GPM_MAX_STATUS  1024             /* status's NotHeld message, cut there */

struct gs_gpm {
	char *ns, *name, *uid;  /* required */
	char *resource_version; /* NULL when absent */
	int64_t generation;     /* metadata.generation; 0 when absent */
	char *map_text;         /* spec.map (required), map_len bytes, NUL-terminated */
	size_t map_len;
	char *placement;    /* spec.placement; NULL when absent */
	char *gang_timeout; /* spec.gangTimeout; NULL when absent */
	char gang_size[24]; /* spec.gangSize (1..GS_GANG_SIZE_MAX) as decimal text; "" when absent */
	char *not_held;     /* status: the scheduler's NotHeld message for this generation, or NULL; read
			     * leniently, for the commands (cmd.c) only: the daemon judges for itself */
};

/* Releases what a record holds and zeroes it; safe on a zeroed record. */
void gs_gpm_free(struct gs_gpm *g);

/* The engine's and the webhook's view of a record (sched/gpm.h): its strings borrowed, an absent
 * gangSize NULL (gs_gang_opts_parse refuses ""). */
void gs_gpm_view_of(const struct gs_gpm *g, struct gs_gpm_view *out);

/* One object (a cJSON object) into *out; the caller owns it after a success. */
int gs_decode_gpm(const cJSON *obj, struct gs_gpm *out, char *err, size_t errlen);

/*
 * One line of a watch on gpuplacementmaps, as gs_decode_watch_event (decode.h) reads it for pods:
 * ADDED/MODIFIED/DELETED fill gpm (and resource_version, the object's); BOOKMARK only resource_version;
 * ERROR the Status fields. Release with gs_gpm_event_free (safe after a failure too).
 */
struct gs_gpm_event {
	enum gs_decode_event_type type;
	struct gs_gpm gpm;
	char *resource_version;
	int status_code;
	char *status_reason;
	char *status_message;
};

int gs_decode_gpm_event(const char *json, size_t len, struct gs_gpm_event *ev, char *err, size_t errlen);
void gs_gpm_event_free(struct gs_gpm_event *ev);

/*
 * Called synchronously for each item of a list that decoded, in order; gpm is valid only during the call.
 * Return 0 to go on, < 0 to stop (the list call then returns that code).
 */
typedef int (*gs_gpm_item_cb)(const struct gs_gpm *gpm, void *ud);

/*
 * A GPUPlacementMapList: cb for every item, then *resource_version and *continue_token (malloc'ed, NULL
 * when absent). An item that does not decode is logged and skipped (counted in *skipped if non-NULL), as
 * gs_decode_list_ex does; a malformed list fails before any callback.
 */
int gs_decode_gpm_list(const char *json, size_t len, gs_gpm_item_cb cb, void *ud, char **resource_version,
		       char **continue_token, unsigned *skipped, char *err, size_t errlen);

#endif
