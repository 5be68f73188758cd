/*
 * lines.c: see lines.h.
 *
 * Only the newly fed bytes are searched for '\n' (memchr), never the buffered prefix again, so a 16 MiB
 * line arriving in 16 KiB pieces costs one pass over its bytes, not a quadratic rescan.
 */
#include "core/lines.h"

#include <errno.h>
#include <string.h>

void gs_line_splitter_init(struct gs_line_splitter *s, size_t max, gs_line_cb cb, void *ud)
{
	s->max = max ? max : GS_LINE_MAX;
	/* The buffer's own cap is the line cap: an append past it fails with -E2BIG. */
	gs_buf_init(&s->buf, s->max);
	s->cb = cb;
	s->ud = ud;
	s->err = 0;
	s->lines = 0;
}

void gs_line_splitter_free(struct gs_line_splitter *s)
{
	gs_buf_free(&s->buf);
}

void gs_line_splitter_reset(struct gs_line_splitter *s)
{
	gs_buf_reset(&s->buf);
	s->err = 0;
}

size_t gs_line_splitter_pending(const struct gs_line_splitter *s)
{
	return s->buf.len;
}

static int fail(struct gs_line_splitter *s, int err)
{
	s->err = err;
	gs_buf_reset(&s->buf);
	return err;
}

/* Hands one line (without its '\n') to the callback, dropping a trailing '\r' and empty lines. */
static int emit(struct gs_line_splitter *s, const char *line, size_t len)
{
	if (len && line[len - 1] == '\r')
		len--;
	if (len == 0)
		return 0;
	s->lines++;
	return s->cb(line, len, s->ud);
}

int gs_line_splitter_feed(struct gs_line_splitter *s, const char *p, size_t n)
{
	int r;

	if (s->err)
		return s->err;
	while (n) {
		const char *nl = memchr(p, '\n', n);
		if (!nl) {
			/* The cap check is the buffer's: it refuses to grow past s->max. */
			r = gs_buf_append(&s->buf, p, n);
			return r < 0 ? fail(s, r) : 0;
		}
		size_t k = (size_t)(nl - p);
		if (s->buf.len == 0) {
			if (k > s->max)
				return fail(s, -E2BIG);
			r = emit(s, p, k);
		} else {
			r = gs_buf_append(&s->buf, p, k);
			if (r < 0)
				return fail(s, r);
			r = emit(s, s->buf.data, s->buf.len);
			gs_buf_reset(&s->buf);
		}
		if (r < 0)
			return fail(s, r);
		p = nl + 1;
		n -= k + 1;
	}
	return 0;
}

int gs_line_splitter_flush(struct gs_line_splitter *s)
{
	if (s->err)
		return s->err;
	if (s->buf.len == 0)
		return 0;
	int r = emit(s, s->buf.data, s->buf.len);
	gs_buf_reset(&s->buf);
	return r < 0 ? fail(s, r) : 0;
}
