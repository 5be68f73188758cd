/*
 * decode.h: apiserver JSON -> the compact records of src/sched/objects.h. No I/O.
 *
 * Only the fields the daemon needs are read; whole objects are never kept. Decoding is strict about
 * types and lenient about absence: a field that is missing or JSON null is "absent" (NULL string,
 * 0 flag), a field of the wrong type (a number where a string belongs, an object where a list does)
 * fails the object with a message naming the field, never a crash and never a silent default.
 * See docs/k8s-decode.md for the field list and the CUDA_VISIBLE_DEVICES rules.
 *
 * Errors: 0, or a negative errno-style code (-EINVAL bad or unexpected content, -ENOMEM), with a
 * one-line reason in err (err may be NULL). On failure every output is left zeroed/NULL: nothing to free.
 */
#ifndef GS_K8S_DECODE_H
#define GS_K8S_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "k8s/decode_scalar.h"
#include "sched/objects.h"

enum gs_obj_kind {
	GS_OBJ_POD = 0,
	GS_OBJ_NODE,
	GS_OBJ_GPM, /* a GPUPlacementMap (decode_gpm.h): watch.c only, never given to the pod and node decoders */
	GS_OBJ_PDB, /* a PodDisruptionBudget (decode_pdb.h): the same */
};

/* Annotation and label names read from pods. */
#define GS_ANN_ASSIGNED     "gpu-scheduler.io/assigned"
#define GS_ANN_ALLOWED_NS   "gpu-scheduler.io/allowed-namespaces"
#define GS_ANN_JOB_INDEX    "batch.kubernetes.io/job-completion-index"
#define GS_ANN_ALLOW_SHARED "gpu-scheduler.io/allow-shared-devices" /* "true": allow_shared = 1 */
#define GS_LABEL_POD_INDEX  "apps.kubernetes.io/pod-index"
#define GS_RES_GPU          "nvidia.com/gpu"

/*
 * A pod (a cJSON object) into *out. map_annotation names the scheduling-map annotation (NULL: not read).
 * metadata.uid, .namespace and .name are required. On success the caller owns *out and releases it
 * with gs_pod_obj_free().
 */
int gs_decode_pod(const cJSON *pod, const char *map_annotation, struct gs_pod_obj *out, char *err, size_t errlen);

/* A node into *out. metadata.name is required. Release with gs_node_obj_free(). */
int gs_decode_node(const cJSON *node, struct gs_node_obj *out, char *err, size_t errlen);

/* ---- watch events -------------------------------------------------------------------------------- */

enum gs_decode_event_type {
	GS_DECODE_EV_ADDED = 0,
	GS_DECODE_EV_MODIFIED,
	GS_DECODE_EV_DELETED,
	GS_DECODE_EV_BOOKMARK,
	GS_DECODE_EV_ERROR,
};

/*
 * One line of a watch stream: {"type": ..., "object": {...}}.
 *   ADDED/MODIFIED/DELETED: pod or node (by kind) is filled; resource_version is the object's.
 *   BOOKMARK: only resource_version (the object carries nothing else worth reading).
 *   ERROR: the object is a metav1.Status: status_code (410 = the resourceVersion is too old: relist),
 *          status_reason ("Expired", "Gone"), status_message; any of them may be 0/NULL.
 * All strings are owned by the event; gs_decode_event_free() releases them (safe after a failure too).
 */
struct gs_decode_event {
	enum gs_decode_event_type type;
	enum gs_obj_kind kind;
	struct gs_pod_obj pod;
	struct gs_node_obj node;
	char *resource_version;
	int status_code;
	char *status_reason;
	char *status_message;
};

/* json[0..len) need not be NUL-terminated. Trailing bytes other than blanks are an error. */
int gs_decode_watch_event(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			  struct gs_decode_event *ev, char *err, size_t errlen);
void gs_decode_event_free(struct gs_decode_event *ev);

/* The name of a watch type, for logs ("ADDED"). */
const char *gs_decode_event_type_name(enum gs_decode_event_type t);

/* ---- lists --------------------------------------------------------------------------------------- */

/*
 * Called synchronously for every item of a list that decoded, in order. obj is a const struct
 * gs_pod_obj * or gs_node_obj * (by kind), valid only during the call: copy what you keep. Return 0 to
 * go on, <0 to stop (gs_decode_list then returns that code).
 */
typedef int (*gs_decode_item_cb)(enum gs_obj_kind kind, const void *obj, void *ud);

/*
 * A PodList/NodeList: calls cb for every item, then sets *resource_version (metadata.resourceVersion)
 * and *continue_token (metadata.continue; NULL or "" on the last page), both malloc'ed for the caller.
 * An item that fails to decode is logged (gs_log_warn, naming the item and the field) and skipped, so
 * one odd object cannot hide the others; *skipped (if non-NULL) counts them. The list itself being
 * malformed (bad JSON, no items array) fails the call before any callback.
 */
int gs_decode_list_ex(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
		      gs_decode_item_cb cb, void *ud, char **resource_version, char **continue_token, unsigned *skipped,
		      char *err, size_t errlen);

/* gs_decode_list_ex without the skipped count. */
int gs_decode_list(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
		   gs_decode_item_cb cb, void *ud, char **resource_version, char **continue_token, char *err,
		   size_t errlen);

/*
 * One item of a list, as text (what src/core/json_items.h hands out of a streamed list): decodes it
 * and calls cb with the record. Returns cb's result, 0 when the item did not decode (logged with
 * gs_log_warn and counted in *skipped, like gs_decode_list_ex), or -ENOMEM.
 */
int gs_decode_list_item(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			gs_decode_item_cb cb, void *ud, unsigned *skipped);

/* A list's "metadata" value, as text: *resource_version (malloc'ed, NULL if absent). 0 or <0 with err. */
int gs_decode_list_meta(const char *json, size_t len, char **resource_version, char *err, size_t errlen);

/*
 * An error body (metav1.Status): {"kind":"Status","code":410,"reason":"Expired","message":"..."}.
 * Returns 0 with whatever of the three was present (others 0/NULL), or -EINVAL if the body is not a JSON
 * object (the outputs are then 0/NULL too, so callers may ignore the return). reason/message malloc'ed.
 */
int gs_decode_status(const char *json, size_t len, int *code, char **reason, char **message);
/* metadata.uid of the object a create's reply body holds (a 201: the object as stored), malloc'ed; NULL
 * when the body is not JSON or has none. */
char *gs_decode_object_uid(const char *json, size_t len);

/* The protobuf decoders (decode_pb.c: Pod and Node messages; decode_pb_wire.c: envelopes, lists, watch
 * frames) have their own headers, included here for the callers of both encodings. */
#include "k8s/decode_pb.h"
#include "k8s/decode_pb_wire.h"

#endif
