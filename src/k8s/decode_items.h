/*
 * decode_items.h: what the JSON decoder (decode.c) and the protobuf one (decode_pb_wire.c) share about
 * errors and list items: a decoded record handed to the caller and freed, and one item's outcome in a list loop
 * (skipped and logged, out of memory, stopped by the caller). Private to src/k8s/decode*.c.
 */
#ifndef GS_K8S_DECODE_ITEMS_H
#define GS_K8S_DECODE_ITEMS_H

#include <stdarg.h>
#include <stddef.h>

#include "k8s/decode.h"

/*
 * Both decoders' errors, into err[0..errlen) when err and errlen: "WHAT: MESSAGE" (MESSAGE from fmt;
 * no prefix when what is ""), returning -EINVAL; "WHAT: out of memory" ("decode" for an empty what),
 * returning -ENOMEM.
 */
int gs_decode__vfail(char *err, size_t errlen, const char *what, const char *fmt, va_list ap);
int gs_decode__nomem(char *err, size_t errlen, const char *what);

/*
 * rc is what decoding the item into *pod or *node (by kind) returned. 0: the record goes to cb and is
 * freed after; returns cb's result (0, or < 0 to stop). -ENOMEM is returned as it is; another < 0 (the
 * item did not decode, the record already released by its decoder) gives 1.
 */
int gs_decode__deliver(int rc, enum gs_obj_kind kind, struct gs_pod_obj *pod, struct gs_node_obj *node,
		       gs_decode_item_cb cb, void *ud);

/*
 * The outcome of item idx of a list (what: "pod list"), r from gs_decode__deliver: 1 logs why the item
 * was skipped (ierr) and counts it in *nskip, and the loop goes on (0); -ENOMEM and a caller's stop
 * write the error into err and return < 0, which ends the loop.
 */
int gs_decode__item_outcome(int r, const char *what, int idx, const char *ierr, unsigned *nskip, char *err,
			    size_t errlen);

/* A streamed list's single item, r from gs_decode__deliver: 1 is logged ("pod list item skipped: ...")
 * and counted in *skipped, giving 0; anything else is returned as it is. */
int gs_decode__stream_outcome(int r, enum gs_obj_kind kind, const char *ierr, unsigned *skipped);

/*
 * What all containers say about CUDA_VISIBLE_DEVICES, folded one container at a time by
 * gs_decode__cuda_add: state 0 the container does not set it, 1 a literal value val[0..len), 2 from
 * valueFrom (val ignored). val is borrowed: it must live until gs_decode__containers_done.
 */
struct gs_decode__cuda_fold {
	int n;             /* containers seen */
	int n_unset;       /* containers without it */
	int n_other;       /* containers that set it from valueFrom */
	int differ;        /* literal values differ */
	const char *value; /* the first literal value (borrowed), value_len bytes */
	size_t value_len;
};

void gs_decode__cuda_add(struct gs_decode__cuda_fold *f, int state, const char *val, size_t len);

/*
 * After the containers: an empty host-port array released, n_containers set, and the pod's
 * CUDA_VISIBLE_DEVICES state from the fold (its first literal value copied when every container
 * sets the same one). 0, or -ENOMEM.
 */
int gs_decode__containers_done(struct gs_pod_obj *out, const struct gs_decode__cuda_fold *f);

/* Init container i (of out->n_init) is a sidecar, restartPolicy Always: its flag set, the array allocated at the
 * first (NULL while there is none). 0, or -ENOMEM. */
int gs_decode__sidecar(struct gs_pod_obj *out, int i);

/*
 * The status requests of regular container i (of out->n_ctr), zeroed, to be filled by the caller, who then
 * sets out->ctr_status_set[i]; both arrays are allocated at the first (NULL while the status reports none).
 * NULL when out of memory.
 */
struct gs_resources *gs_decode__status_slot(struct gs_pod_obj *out, int i);

/* A node selector term's n requirements (matchExpressions then matchFields), zeroed; none for n 0.
 * 0, or -ENOMEM. */
int gs_decode__term_reqs(struct gs_sel_term *t, int n);

/* A node that failed to decode, as gs_decode_node and gs_decode_node_pb leave it: what was filled
 * freed, the record zeroed, gpus and gpu_capacity -1 (unknown). */
void gs_decode__node_failed(struct gs_node_obj *out);

#endif
