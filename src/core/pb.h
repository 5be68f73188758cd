/*
 * pb.h: a single-pass protocol buffers reader. It knows the wire format only (no schema, no generated
 * code): the caller walks a message field by field and picks the field numbers it wants.
 *
 *   struct gs_pb r;
 *   struct gs_pb_field f;
 *   gs_pb_init(&r, data, len);
 *   while ((rc = gs_pb_next(&r, &f)) > 0)
 *       if (f.num == 3 && f.wire == GS_PB_LEN) { struct gs_pb sub; gs_pb_sub(&sub, &f); ... }
 *   rc < 0: r.err says why, gs_pb_offset(&r) where
 *
 * Every read is bounds-checked against the message it belongs to; nothing is allocated; a field the
 * caller does not look at is skipped by gs_pb_next itself (a length-delimited one in one step, however
 * deep it nests). What is refused: a varint of more than 10 bytes or over 64 bits, a length past the
 * end of the message, field number 0 or over 2^29-1, the group wire types (3, 4: unused by proto3 and
 * by Kubernetes) and the undefined ones (6, 7). After a failure every later gs_pb_next fails the same.
 *
 * There is also a streaming splitter (gs_pb_stream) for a message that arrives in pieces: it descends
 * a fixed path of length-delimited fields without holding them and hands out each top-level field of
 * the innermost one, bounded by a cap, so that a list of any length is read one item at a time.
 */
#ifndef GS_CORE_PB_H
#define GS_CORE_PB_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

enum gs_pb_wire {
	GS_PB_VARINT = 0,
	GS_PB_I64 = 1,
	GS_PB_LEN = 2,
	GS_PB_I32 = 5,
};

#define GS_PB_MAX_FIELD ((1u << 29) - 1)

struct gs_pb {
	const uint8_t *start, *p, *end;
	const char *err; /* a static reason after a failure, NULL before */
};

struct gs_pb_field {
	uint32_t num;
	enum gs_pb_wire wire;
	uint64_t v;          /* VARINT, I64 and I32 values (little-endian already assembled) */
	const uint8_t *data; /* LEN: the bytes, inside the reader's buffer */
	size_t len;
};

/* The reader borrows data[0..len); it must outlive the reader and every field handed out. */
void gs_pb_init(struct gs_pb *r, const void *data, size_t len);

/* 1 with *f filled, 0 at the end of the message, -EINVAL on malformed input (r->err set). */
int gs_pb_next(struct gs_pb *r, struct gs_pb_field *f);

/* A reader over a LEN field's bytes (the embedded message). */
void gs_pb_sub(struct gs_pb *sub, const struct gs_pb_field *f);

/* Bytes consumed so far, for error messages. */
size_t gs_pb_offset(const struct gs_pb *r);

/* How many fields numbered num the message data[0..len) holds; <0 if it is malformed. */
int gs_pb_count(const void *data, size_t len, uint32_t num);

/* The name of a wire type for messages ("varint", "length-delimited", ...). */
const char *gs_pb_wire_name(unsigned wire);

/* ---- streaming ----------------------------------------------------------------------------------- */

/* One top-level field of the innermost message: its number and bytes (valid during the call). For
 * VARINT/I32/I64 fields data is NULL and v holds the value. Return <0 to stop the splitter. */
typedef int (*gs_pb_field_cb)(uint32_t num, int wire, uint64_t v, const uint8_t *data, size_t len, void *ud);

#define GS_PB_STREAM_DEPTH 4

struct gs_pb_stream {
	/* configuration */
	uint8_t magic[8]; /* the bytes the stream must start with */
	size_t magic_len;
	uint32_t path[GS_PB_STREAM_DEPTH]; /* LEN fields to descend into, outermost first */
	int depth;
	size_t max_field; /* longest field of the innermost message kept, in bytes */
	gs_pb_field_cb on_field;
	void *ud;
	/* state */
	size_t seen;                           /* bytes fed so far */
	uint64_t left[GS_PB_STREAM_DEPTH + 1]; /* bytes left in each open message; [0] is "unbounded" */
	int level;                             /* how many of path are open */
	uint8_t hdr[24];                       /* a field's tag and length, gathered across pieces */
	size_t hdr_len;
	uint64_t skip; /* bytes of a field being skipped */
	uint64_t want; /* bytes of a field being captured */
	uint32_t num;  /* the field being captured */
	struct gs_buf value;
	size_t fields; /* fields handed out */
	int failed;
	char err[128];
};

/*
 * magic (may be NULL with magic_len 0), then the fields of path[0]'s message, then path[1] inside it,
 * ... At each level other fields are skipped; at the innermost level every field goes to on_field.
 * A message on the path that appears twice is descended twice (protobuf merges repeated messages).
 */
void gs_pb_stream_init(struct gs_pb_stream *s, const void *magic, size_t magic_len, const uint32_t *path, int depth,
		       size_t max_field, gs_pb_field_cb on_field, void *ud);
/* 0, or <0 with s->err set (then every later call fails the same way). */
int gs_pb_stream_feed(struct gs_pb_stream *s, const void *data, size_t len);
/* 0 when the stream ended on a field boundary with every open message complete, else <0 and err. */
int gs_pb_stream_finish(struct gs_pb_stream *s);
void gs_pb_stream_free(struct gs_pb_stream *s);

#endif
