/*
 * decode_pb_wire.h: the apiserver's protobuf encoding around the objects (application/vnd.kubernetes.protobuf,
 * decode_pb_wire.c; docs/k8s-decode.md, "Protobuf"): envelopes, lists, watch frames, Status bodies.
 * Same rules, same outputs, same ownership as the JSON functions of decode.h. The wire format:
 *   an object or list body:  "k8s\0" then runtime.Unknown{1 typeMeta{2 kind}, 2 raw: the object}
 *   a watch stream:          frames of a 4-byte big-endian length then a metav1.WatchEvent{1 type,
 *                            2 object: RawExtension{1 raw: an object body as above}}
 */
#ifndef GS_K8S_DECODE_PB_WIRE_H
#define GS_K8S_DECODE_PB_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "k8s/decode.h"

/* 1 when a Content-Type names the protobuf media type (parameters such as ";stream=watch" allowed). */
int gs_decode_is_protobuf(const char *content_type);

/*
 * An object body's envelope: checks the "k8s\0" prefix, copies typeMeta.kind into kind (may be "") and
 * points *raw at the object's message inside body. A contentEncoding other than none is refused.
 */
int gs_decode_unwrap_pb(const void *body, size_t len, const uint8_t **raw, size_t *raw_len, char *kind, size_t kindlen,
			char *err, size_t errlen);

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
