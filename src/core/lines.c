/*
 * lines.c: see lines.h.
 *
 * Only the newly fed bytes are searched for '\n' (memchr), never the buffered prefix again, so a 16 MiB
 * line arriving in 16 KiB pieces costs one pass over its bytes, not a quadratic rescan.
 */
#include "core/lines.h"

#include <errno.h>
#include <string.h>

void gs_lines_init(struct gs_lines *s, size_t max, gs_line_cb cb, void *ud)
{
	s->max = max ? max : GS_LINE_MAX;
	/* The buffer's own cap is the line cap: an append past it fails with -E2BIG. */
	gs_buf_init(&s->buf, s->max);
	s->cb = cb;
	s->ud = ud;
	s->err = 0;
	s->framed = 0;
	s->lines = 0;
}

void gs_lines_free(struct gs_lines *s)
{
	gs_buf_free(&s->buf);
}

void gs_lines_reset(struct gs_lines *s)
{
	gs_buf_reset(&s->buf);
	s->err = 0;
}

size_t gs_lines_pending(const struct gs_lines *s)
{
	return s->buf.len;
}

static int fail(struct gs_lines *s, int err)
{
	s->err = err;
	gs_buf_reset(&s->buf);
	return err;
}

/* Hands one line (without its '\n') to the callback, dropping a trailing '\r' and empty lines. */
static int emit(struct gs_lines *s, const char *line, size_t len)
{
	if (len && line[len - 1] == '\r')
		len--;
	if (len == 0)
		return 0;
	s->lines++;
	return s->cb(line, len, s->ud);
}

void gs_lines_set_framed(struct gs_lines *s, int framed)
{
	s->framed = framed;
	/* A framed record is kept with its 4-byte prefix. */
	s->buf.cap = framed ? s->max + 4 : s->max;
}

static size_t be32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	return (size_t)u[0] << 24 | (size_t)u[1] << 16 | (size_t)u[2] << 8 | (size_t)u[3];
}

/* Framed mode: whole records inside the piece go out in place, the rest is gathered. */
static int feed_framed(struct gs_lines *s, const char *p, size_t n)
{
	int r;

	while (n) {
		size_t len, take;
		if (s->buf.len == 0 && n >= 4) {
			if ((len = be32(p)) > s->max)
				return fail(s, -E2BIG);
			if (n - 4 >= len) {
				s->lines++;
				if ((r = s->cb(p + 4, len, s->ud)) < 0)
					return fail(s, r);
				p += 4 + len;
				n -= 4 + len;
				continue;
			}
		}
		if (s->buf.len < 4) {
			take = 4 - s->buf.len < n ? 4 - s->buf.len : n;
		} else {
			if ((len = be32(s->buf.data)) > s->max)
				return fail(s, -E2BIG);
			take = 4 + len - s->buf.len < n ? 4 + len - s->buf.len : n;
		}
		if ((r = gs_buf_append(&s->buf, p, take)) < 0)
			return fail(s, r);
		p += take;
		n -= take;
		if (s->buf.len >= 4 && (len = be32(s->buf.data)) > s->max)
			return fail(s, -E2BIG);
		if (s->buf.len >= 4 && s->buf.len == 4 + len) {
			s->lines++;
			r = s->cb(s->buf.data + 4, len, s->ud);
			gs_buf_reset(&s->buf);
			if (r < 0)
				return fail(s, r);
		}
	}
	return 0;
}

int gs_lines_feed(struct gs_lines *s, const char *p, size_t n)
{
	int r;

	if (s->err)
		return s->err;
	if (s->framed)
		return feed_framed(s, p, n);
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

int gs_lines_flush(struct gs_lines *s)
{
	if (s->err)
		return s->err;
	if (s->buf.len == 0 || s->framed)
		return 0; /* an unfinished record has no end to assume */
	int r = emit(s, s->buf.data, s->buf.len);
	gs_buf_reset(&s->buf);
	return r < 0 ? fail(s, r) : 0;
}
