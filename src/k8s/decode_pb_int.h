/*
 * decode_pb_int.h: what decode_pb.c (objects) shares with decode_pb_wire.c (envelopes, lists, watch
 * events). Private to those two files.
 */
#ifndef GS_K8S_DECODE_PB_INT_H
#define GS_K8S_DECODE_PB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/pb.h"
#include "k8s/decode.h"

/* Where an error goes, and which object it is about ("pod default/web-0"). */
struct gs_decode__pctx {
	char *err;
	size_t errlen;
	char what[320];
};

/* How a string field that is empty reads: Go writes "" where JSON leaves an omitempty field out. */
enum { KEEP_EMPTY = 0, ABSENT_IF_EMPTY = 1 };

/* What ObjectMeta holds for a pod or a node. */
struct gs_decode__pb_meta {
	char *name, *ns, *uid, *rv;
	int64_t created_ms;
	int deleting;
	const uint8_t *data; /* the message, for the label and annotation passes */
	size_t len;
};

/* The message "what: fmt..." into d->err; returns -EINVAL. */
__attribute__((format(printf, 2, 3))) int gs_decode__pb_pfail(struct gs_decode__pctx *d, const char *fmt, ...);
int gs_decode__pb_pnomem(struct gs_decode__pctx *d);
/* A reader's failure, naming the message (path) it was reading. */
int gs_decode__pb_pbad(struct gs_decode__pctx *d, const struct gs_pb *r, const char *path);
/* f has the wire type wanted, or an error naming path.key. */
int gs_decode__pb_want(struct gs_decode__pctx *d, const struct gs_pb_field *f, enum gs_pb_wire wire, const char *path,
		       const char *key);
/* A string field borrowed (no NUL byte allowed), or copied into *out (the previous value freed). */
int gs_decode__pb_sref(struct gs_decode__pctx *d, const struct gs_pb_field *f, const char *path, const char *key,
		       const char **s, size_t *n);
int gs_decode__pb_sdup(struct gs_decode__pctx *d, const struct gs_pb_field *f, const char *path, const char *key,
		       int empty, char **out);
/* s[0..n) equals the C string lit (s may be NULL: never equal). */
int gs_decode__pb_eq(const char *s, size_t n, const char *lit);
/* An int32/int64 varint in [lo, hi]. */
int gs_decode__pb_ivarint(struct gs_decode__pctx *d, const struct gs_pb_field *f, const char *path, const char *key,
			  int64_t lo, int64_t hi, int64_t *out);
/* The scalars of an ObjectMeta field; gs_decode__pb_meta_free releases its strings. */
int gs_decode__pb_meta_scalars(struct gs_decode__pctx *d, const struct gs_pb_field *mf, struct gs_decode__pb_meta *m);
void gs_decode__pb_meta_free(struct gs_decode__pb_meta *m);

/* How much of a pod to read: all of it, what a bound pod can change (when hint->bound says so), or
 * the metadata (a DELETED event). */
enum gs_decode__pb_pod_mode { GS_DECODE__POD_FULL, GS_DECODE__POD_HINT, GS_DECODE__POD_META };
int gs_decode__pb_pod(const void *data, size_t len, const char *map_annotation, enum gs_decode__pb_pod_mode mode,
		      const struct gs_decode_hint *hint, struct gs_pod_obj *out, char *err, size_t errlen);

#endif
