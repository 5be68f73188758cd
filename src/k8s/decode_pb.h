/*
 * decode_pb.h: a Pod or Node protobuf message into the records of src/sched/objects.h (decode_pb.c);
 * same rules, outputs and ownership as gs_decode_pod / gs_decode_node (decode.h). Envelopes, lists and
 * watch frames around them: decode_pb_wire.h.
 */
#ifndef GS_K8S_DECODE_PB_H
#define GS_K8S_DECODE_PB_H

#include <stddef.h>

#include "sched/objects.h"

/* A Pod / Node message (the envelope's raw bytes, or one item of a list). */
int gs_decode_pod_pb(const void *data, size_t len, const char *map_annotation, struct gs_pod_obj *out, char *err,
		     size_t errlen);
int gs_decode_node_pb(const void *data, size_t len, struct gs_node_obj *out, char *err, size_t errlen);

#endif
