/*
 * jsonpatch.h: writing RFC 6902 JSON Patch documents and RFC 6901 JSON Pointers, base64 for the
 * AdmissionReview "patch" field. Encoding only: the webhook never applies a patch (the apiserver does).
 *
 *   struct gs_jsonpatch p;
 *   gs_jsonpatch_init(&p, GS_ADMISSION_PATCH_MAX);
 *   gs_jsonpatch_op(&p, "add", "/spec/containers/0/env/-", "{\"name\":\"A\",\"value\":\"1\"}");
 *   gs_jsonpatch_finish(&p);          // p.buf.data is now "[{...}]"
 *   gs_jsonpatch_base64_append(&out, p.buf.data, p.buf.len);
 *   gs_jsonpatch_free(&p);
 *
 * Every function returns 0, or a gs_buf error (-E2BIG past the cap, -ENOMEM); after an error the
 * document is incomplete and must be dropped.
 */
#ifndef GS_WEBHOOK_JSONPATCH_H
#define GS_WEBHOOK_JSONPATCH_H

#include <stddef.h>

#include "core/buf.h"

struct gs_jsonpatch {
	struct gs_buf buf; /* the document so far: "[" op ("," op)* and "]" after finish */
	int n_ops;
	int finished;
};

/* cap bounds the whole document (0: unlimited). Cannot fail. */
void gs_jsonpatch_init(struct gs_jsonpatch *p, size_t cap);
void gs_jsonpatch_free(struct gs_jsonpatch *p); /* safe after init, and twice */

/*
 * Appends {"op":op,"path":path,"value":value_json}. path is an already-built JSON Pointer (see
 * gs_jsonpatch_ptr_append); it is written as a JSON string. value_json is raw JSON text copied as it is,
 * or NULL for ops without a value ("remove"). -EINVAL after gs_jsonpatch_finish. op and path are
 * not NULL (GS_ASSERT).
 */
int gs_jsonpatch_op(struct gs_jsonpatch *p, const char *op, const char *path, const char *value_json);

/* Closes the array. An empty patch is "[]". Idempotent. */
int gs_jsonpatch_finish(struct gs_jsonpatch *p);

/* Appends "/" and token escaped as a JSON Pointer reference token ('~' -> "~0", '/' -> "~1"). */
int gs_jsonpatch_ptr_append(struct gs_buf *ptr, const char *token);
/* Appends "/" and the decimal array index i. */
int gs_jsonpatch_ptr_append_index(struct gs_buf *ptr, size_t i);

/* Appends the standard (RFC 4648, padded) base64 encoding of data[0..len) to out. */
int gs_jsonpatch_base64_append(struct gs_buf *out, const void *data, size_t len);

#endif
