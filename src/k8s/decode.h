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

#include "sched/objects.h"

enum gs_obj_kind {
	GS_OBJ_POD = 0,
	GS_OBJ_NODE,
};

/* Annotation and label names read from pods. */
#define GS_ANN_ASSIGNED  "gpu-scheduler.io/assigned"
#define GS_ANN_ALLOWED_NS "gpu-scheduler.io/allowed-namespaces"
#define GS_ANN_JOB_INDEX "batch.kubernetes.io/job-completion-index"
#define GS_ANN_ALLOW_SHARED "gpu-scheduler.io/allow-shared-devices" /* "true": allow_shared = 1 */
#define GS_LABEL_POD_INDEX "apps.kubernetes.io/pod-index"
#define GS_RES_GPU       "nvidia.com/gpu"
/* The taint of dedicated GPU nodes, NoSchedule (docs/deploy.md): the webhook tolerates it for mapped
 * pods (--tolerate-dedicated-taint), lint warns about mapped nodes without it that run plugin GPU pods. */
#define GS_TAINT_DEDICATED "gpu-scheduler.io/dedicated"

/*
 * A pod (a cJSON object) into *out. map_annotation names the scheduling-map annotation (NULL: not read).
 * metadata.uid, .namespace and .name are required. On success the caller owns *out and releases it
 * with gs_pod_obj_free().
 */
int gs_decode_pod(const cJSON *pod, const char *map_annotation, struct gs_pod_obj *out, char *err,
		  size_t errlen);

/* A node into *out. metadata.name is required. Release with gs_node_obj_free(). */
int gs_decode_node(const cJSON *node, struct gs_node_obj *out, char *err, size_t errlen);

/*
 * A Kubernetes quantity ("4", "1k", "2Ki", "500m", "1e3") as a whole number, rounded up as
 * resource.Quantity.Value() does. Negative or over INT64_MAX is -ERANGE; bad syntax -EINVAL.
 */
int gs_decode_quantity(const char *s, int64_t *out);

/*
 * The same quantity times 1000, rounded up, as resource.Quantity.MilliValue() does: cpu in millicores
 * ("500m" is 500, "2" is 2000, "0.1" is 100, "1u" is 1). Errors as gs_decode_quantity.
 */
int gs_decode_quantity_milli(const char *s, int64_t *out);

/* What a name in a resource list (requests, overhead, allocatable) stands for. */
enum gs_res_kind { GS_RES_CPU, GS_RES_MEMORY, GS_RES_EPHEMERAL, GS_RES_PODS, GS_RES_EXT };
enum gs_res_kind gs_decode_res_kind(const char *name, size_t n);

/*
 * One entry of a resource list, for both decoders: qty parsed for kind k (cpu in millicores, the rest
 * rounded up to whole units) into *v, and stored in out's field unless k is GS_RES_EXT (the caller
 * keeps extended resources by name). Errors as gs_decode_quantity.
 */
int gs_decode_res_set(struct gs_resources *out, enum gs_res_kind k, const char *qty, int64_t *v);

/* RFC 3339 ("2024-05-01T10:20:30Z", fractions and +hh:mm offsets too) -> ms since the epoch. */
int gs_decode_time(const char *s, int64_t *ms);

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
		      gs_decode_item_cb cb, void *ud, char **resource_version, char **continue_token,
		      unsigned *skipped, char *err, size_t errlen);

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

/* ---- protobuf (application/vnd.kubernetes.protobuf, decode_pb.c) --------------------------------- */

/*
 * The same records from the apiserver's protobuf encoding (docs/k8s-decode.md, "Protobuf"): same
 * rules, same outputs, same ownership as the JSON functions above. The wire format:
 *   an object or list body:  "k8s\0" then runtime.Unknown{1 typeMeta{2 kind}, 2 raw: the object}
 *   a watch stream:          frames of a 4-byte big-endian length then a metav1.WatchEvent{1 type,
 *                            2 object: RawExtension{1 raw: an object body as above}}
 */

/* 1 when a Content-Type names the protobuf media type (parameters such as ";stream=watch" allowed). */
int gs_decode_is_protobuf(const char *content_type);

/* A Pod / Node message (the envelope's raw bytes, or one item of a list). */
int gs_decode_pod_pb(const void *data, size_t len, const char *map_annotation, struct gs_pod_obj *out, char *err,
		     size_t errlen);
int gs_decode_node_pb(const void *data, size_t len, struct gs_node_obj *out, char *err, size_t errlen);

/*
 * An object body's envelope: checks the "k8s\0" prefix, copies typeMeta.kind into kind (may be "") and
 * points *raw at the object's message inside body. A contentEncoding other than none is refused.
 */
int gs_decode_unwrap_pb(const void *body, size_t len, const uint8_t **raw, size_t *raw_len, char *kind,
			size_t kindlen, char *err, size_t errlen);

/* One watch frame's WatchEvent (the bytes after the 4-byte length). */
int gs_decode_watch_event_pb(const void *frame, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			     struct gs_decode_event *ev, char *err, size_t errlen);

/*
 * What the reader of a pod watch already holds, so the decoder reads only what can still change. Once
 * the uid, the phase, the deletion timestamp and spec.nodeName are read, bound(uid, node, node_len, ud)
 * is asked whether the pod is held bound to that node (node is not NUL-terminated); on 1 the record is
 * partial (objects.h: no labels, annotations, containers, requests, constraints) and the rest of the
 * pod is skipped without being looked at. For a 14 KiB StatefulSet pod, the MODIFIED event its own
 * binding causes is then a few fields. Called only when spec.nodeName is set, synchronously.
 */
struct gs_decode_hint {
	int (*bound)(const char *uid, const char *node, size_t node_len, void *ud);
	void *ud;
};

/*
 * gs_decode_watch_event_pb with a hint (NULL: none). Whatever the hint, a DELETED pod event gives a
 * partial record: the reader only forgets the uid.
 */
int gs_decode_watch_event_pb_hint(const void *frame, size_t len, enum gs_obj_kind kind, const char *map_annotation,
				  const struct gs_decode_hint *hint, struct gs_decode_event *ev, char *err,
				  size_t errlen);

/* A whole list body (envelope, PodList/NodeList), as gs_decode_list_ex. A body whose kind is not the
 * list expected (a Status) fails before any callback. */
int gs_decode_list_pb_ex(const void *body, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			 gs_decode_item_cb cb, void *ud, char **resource_version, char **continue_token,
			 unsigned *skipped, char *err, size_t errlen);

/* One item of a streamed list (a Pod/Node message), as gs_decode_list_item. */
int gs_decode_list_item_pb(const void *data, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			   gs_decode_item_cb cb, void *ud, unsigned *skipped);

/* A list's ListMeta message: *resource_version (malloc'ed, NULL if absent). */
int gs_decode_list_meta_pb(const void *data, size_t len, char **resource_version, char *err, size_t errlen);

/* An error body in protobuf (envelope around a metav1.Status), as gs_decode_status. */
int gs_decode_status_pb(const void *body, size_t len, int *code, char **reason, char **message);

#endif
