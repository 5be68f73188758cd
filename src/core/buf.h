/*
 * buf.h: a growable byte buffer with a hard cap.
 *
 * Callers embed struct gs_buf (fields are readable: data/len). Every buffer fed by a peer is created
 * with a named cap; an append that would pass it fails with -E2BIG and leaves the buffer unchanged, so
 * the caller fails that one request or connection. The data is always NUL-terminated (the terminator
 * is not counted in len), so a complete body can be handed to a string parser as it is.
 *
 *   struct gs_buf b;
 *   gs_buf_init(&b, MY_BODY_MAX);   // the cap, a named constant of the caller (0: none)
 *   if (gs_buf_append(&b, p, n) < 0) ...
 *   gs_buf_free(&b);   // safe after init, and twice
 */
#ifndef GS_CORE_BUF_H
#define GS_CORE_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct gs_buf {
	char *data;  /* NULL until the first append; NUL-terminated after it */
	size_t len;  /* bytes used, not counting the terminator */
	size_t size; /* bytes allocated */
	size_t cap;  /* most bytes len may reach; 0 means unlimited */
};

void gs_buf_init(struct gs_buf *b, size_t cap);
void gs_buf_free(struct gs_buf *b);
/* Forgets the content, keeps the memory. */
static inline void gs_buf_reset(struct gs_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

/* 0, -E2BIG past the cap, -ENOMEM. On failure the buffer is unchanged. */
int gs_buf_append(struct gs_buf *b, const void *p, size_t n);
int gs_buf_append_str(struct gs_buf *b, const char *s);
int gs_buf_printf(struct gs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gs_buf_vprintf(struct gs_buf *b, const char *fmt, va_list ap);
/* Appends s as a JSON string literal, quotes included. */
int gs_buf_append_json_str(struct gs_buf *b, const char *s);
/* ,"key":"value" with value as gs_buf_append_json_str writes it; nothing for a NULL value. 0 or <0. */
int gs_buf_append_json_field(struct gs_buf *b, const char *key, const char *value);
/* Makes room for n more bytes; 0, -E2BIG or -ENOMEM. */
int gs_buf_reserve(struct gs_buf *b, size_t n);
/* Drops the first n bytes (n <= len: GS_ASSERT). */
void gs_buf_consume(struct gs_buf *b, size_t n);
/* Hands the memory to the caller (who frees it) and leaves the buffer empty. May return NULL. */
char *gs_buf_steal(struct gs_buf *b, size_t *len);

/*
 * Reads a whole file of at most max bytes (a certificate, a key) into a NUL-terminated buffer *out
 * (malloc'ed, max + 1 bytes; the caller frees it) of *len bytes. 0, -EFBIG over max, -ENOMEM,
 * or -errno.
 */
int gs_buf_read_file(const char *path, size_t max, char **out, size_t *len);

#endif
