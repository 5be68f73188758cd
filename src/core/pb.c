/*
 * pb.c: see pb.h. The wire format: every field is a varint tag (field number << 3 | wire type) then
 * a varint (0), 8 bytes (1), a varint length and that many bytes (2), or 4 bytes (5).
 */
#include "core/pb.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *gs_pb_wire_name(unsigned wire)
{
	switch (wire) {
	case 0:
		return "varint";
	case 1:
		return "fixed64";
	case 2:
		return "length-delimited";
	case 3:
	case 4:
		return "group";
	case 5:
		return "fixed32";
	default:
		return "undefined";
	}
}

/*
 * A varint in p[0..n): 1 complete (*v, *used), 0 needs more bytes (n < 10, every byte continues),
 * -1 malformed (10 bytes without an end, or a 10th byte over the 64th bit).
 */
static int varint_part(const uint8_t *p, size_t n, uint64_t *v, size_t *used)
{
	uint64_t x = 0;
	for (size_t i = 0; i < n && i < 10; i++) {
		if (i == 9 && p[i] > 1)
			return -1;
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = x;
			*used = i + 1;
			return 1;
		}
	}
	return n >= 10 ? -1 : 0;
}

static inline int rd_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	size_t used;
	if (*p < end && **p < 0x80) { /* one byte: most tags, lengths and values */
		*v = *(*p)++;
		return 0;
	}
	if (*p > end || varint_part(*p, (size_t)(end - *p), v, &used) != 1)
		return -EINVAL;
	*p += used;
	return 0;
}

void gs_pb_init(struct gs_pb *r, const void *data, size_t len)
{
	r->start = r->p = data;
	r->end = data ? r->p + len : r->p; /* NULL + 0 is undefined in C */
	r->err = NULL;
}

void gs_pb_sub(struct gs_pb *sub, const struct gs_pb_field *f)
{
	gs_pb_init(sub, f->data, f->len);
}

size_t gs_pb_offset(const struct gs_pb *r)
{
	return (size_t)(r->p - r->start);
}

static int fail(struct gs_pb *r, const char *why)
{
	r->err = why;
	return -EINVAL;
}

int gs_pb_next(struct gs_pb *r, struct gs_pb_field *f)
{
	const uint8_t *p = r->p;
	uint64_t tag, n;

	if (r->err)
		return -EINVAL;
	if (p >= r->end)
		return 0;
	if (rd_varint(&p, r->end, &tag) < 0)
		return fail(r, "bad field tag varint");
	if ((tag >> 3) == 0 || (tag >> 3) > GS_PB_MAX_FIELD)
		return fail(r, "field number out of range");
	f->num = (uint32_t)(tag >> 3);
	f->wire = (enum gs_pb_wire)(tag & 7);
	f->v = 0;
	f->data = NULL;
	f->len = 0;
	switch (tag & 7) {
	case GS_PB_VARINT:
		if (rd_varint(&p, r->end, &f->v) < 0)
			return fail(r, "bad or truncated varint");
		break;
	case GS_PB_I64:
	case GS_PB_I32:
		n = (tag & 7) == GS_PB_I64 ? 8 : 4;
		if ((uint64_t)(r->end - p) < n)
			return fail(r, "truncated fixed-width field");
		for (unsigned i = 0; i < n; i++)
			f->v |= (uint64_t)p[i] << (8 * i);
		p += n;
		break;
	case GS_PB_LEN:
		if (rd_varint(&p, r->end, &n) < 0)
			return fail(r, "bad or truncated length varint");
		if (n > (uint64_t)(r->end - p))
			return fail(r, "length past the end of the message");
		f->data = p;
		f->len = (size_t)n;
		p += n;
		break;
	default:
		return fail(r,
			    (tag & 7) == 3 || (tag & 7) == 4 ? "group wire type not supported" : "undefined wire type");
	}
	r->p = p;
	return 1;
}

int gs_pb_count(const void *data, size_t len, uint32_t num)
{
	struct gs_pb r;
	struct gs_pb_field f;
	int n = 0, rc;

	gs_pb_init(&r, data, len);
	while ((rc = gs_pb_next(&r, &f)) > 0)
		n += f.num == num;
	return rc < 0 ? rc : n;
}

/* ---- streaming ----------------------------------------------------------------------------------- */

void gs_pb_stream_init(struct gs_pb_stream *s, const void *magic, size_t magic_len, const uint32_t *path, int depth,
		       size_t max_field, gs_pb_field_cb on_field, void *ud)
{
	memset(s, 0, sizeof(*s));
	if (magic_len > sizeof(s->magic))
		magic_len = sizeof(s->magic);
	if (magic_len)
		memcpy(s->magic, magic, magic_len);
	s->magic_len = magic_len;
	if (depth > GS_PB_STREAM_DEPTH)
		depth = GS_PB_STREAM_DEPTH;
	for (int i = 0; i < depth; i++)
		s->path[i] = path[i];
	s->depth = depth;
	s->max_field = max_field;
	s->on_field = on_field;
	s->ud = ud;
	gs_buf_init(&s->value, max_field);
}

void gs_pb_stream_free(struct gs_pb_stream *s)
{
	gs_buf_free(&s->value);
}

__attribute__((format(printf, 2, 3))) static int sfail(struct gs_pb_stream *s, const char *fmt, ...)
{
	va_list ap;
	char msg[96];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!s->failed)
		snprintf(s->err, sizeof(s->err), "byte %zu: %s", s->seen, msg);
	s->failed = 1;
	return -EINVAL;
}

/* n bytes of the current level were consumed: every open message has n fewer left. */
static int eat(struct gs_pb_stream *s, uint64_t n)
{
	for (int l = 1; l <= s->level; l++) {
		if (s->left[l] < n)
			return sfail(s, "field crosses the end of its message");
		s->left[l] -= n;
	}
	return 0;
}

/* Closes the messages that ended exactly here. */
static void pop_done(struct gs_pb_stream *s)
{
	while (s->level > 0 && s->left[s->level] == 0)
		s->level--;
}

static int deliver(struct gs_pb_stream *s, uint32_t num, int wire, uint64_t v, const uint8_t *data, size_t len)
{
	int r = s->on_field(num, wire, v, data, len, s->ud);
	s->fields++;
	if (r < 0) {
		if (!s->failed)
			snprintf(s->err, sizeof(s->err), "stopped by the caller");
		s->failed = 1;
		return r;
	}
	return 0;
}

/* The gathered header is complete: act on it. 1 done with it, 0 need more bytes, <0 error. */
static int header(struct gs_pb_stream *s)
{
	uint64_t tag, v = 0, n;
	size_t used, used2;
	int r = varint_part(s->hdr, s->hdr_len, &tag, &used);
	unsigned wire;

	if (r < 0)
		return sfail(s, "bad field tag varint");
	if (r == 0)
		return 0;
	if ((tag >> 3) == 0 || (tag >> 3) > GS_PB_MAX_FIELD)
		return sfail(s, "field number out of range");
	wire = tag & 7;
	switch (wire) {
	case GS_PB_VARINT:
	case GS_PB_LEN:
		r = varint_part(s->hdr + used, s->hdr_len - used, &v, &used2);
		if (r < 0)
			return sfail(s, "bad %s varint", wire == GS_PB_LEN ? "length" : "value");
		if (r == 0)
			return 0;
		used += used2;
		break;
	case GS_PB_I64:
	case GS_PB_I32:
		n = wire == GS_PB_I64 ? 8 : 4;
		if (s->hdr_len < used + n)
			return 0;
		for (unsigned i = 0; i < n; i++)
			v |= (uint64_t)s->hdr[used + i] << (8 * i);
		used += n;
		break;
	default:
		return sfail(s, "%s wire type not supported", gs_pb_wire_name(wire));
	}
	s->hdr_len = 0;
	if ((r = eat(s, used)) < 0)
		return r;
	if (wire != GS_PB_LEN) {
		if (s->level == s->depth && (r = deliver(s, (uint32_t)(tag >> 3), (int)wire, v, NULL, 0)) < 0)
			return r;
		pop_done(s);
		return 1;
	}
	if (s->level > 0 && v > s->left[s->level])
		return sfail(s, "length past the end of the message");
	if (s->level < s->depth && (tag >> 3) == s->path[s->level]) {
		s->level++;
		s->left[s->level] = v;
		/* The parent's count includes the child's bytes: they are subtracted as the child eats them. */
		pop_done(s);
		return 1;
	}
	if (s->level < s->depth) {
		s->skip = v;
	} else {
		if (v > s->max_field)
			return sfail(s, "field %u of %llu bytes over the cap of %zu", (unsigned)(tag >> 3),
				     (unsigned long long)v, s->max_field);
		s->want = v;
		s->num = (uint32_t)(tag >> 3);
		gs_buf_reset(&s->value);
		if (v == 0) {
			if ((r = deliver(s, s->num, GS_PB_LEN, 0, (const uint8_t *)"", 0)) < 0)
				return r;
			pop_done(s);
		} else if (gs_buf_reserve(&s->value, (size_t)v) < 0) {
			return sfail(s, "out of memory");
		}
	}
	if (s->skip == 0 && s->want == 0)
		pop_done(s);
	return 1;
}

int gs_pb_stream_feed(struct gs_pb_stream *s, const void *data, size_t len)
{
	const uint8_t *p = data, *end = p + len;
	int r;

	if (s->failed)
		return -EINVAL;
	while (p < end) {
		if (s->seen < s->magic_len) {
			if (*p != s->magic[s->seen])
				return sfail(s, "the stream does not start with the expected magic bytes");
			p++;
			s->seen++;
			continue;
		}
		if (s->skip) {
			size_t n = (size_t)(end - p) < s->skip ? (size_t)(end - p) : (size_t)s->skip;
			if ((r = eat(s, n)) < 0)
				return r;
			s->skip -= n;
			p += n;
			s->seen += n;
			if (!s->skip)
				pop_done(s);
			continue;
		}
		if (s->want) {
			size_t n = (size_t)(end - p) < s->want ? (size_t)(end - p) : (size_t)s->want;
			if ((r = eat(s, n)) < 0)
				return r;
			if (gs_buf_append(&s->value, p, n) < 0)
				return sfail(s, "out of memory");
			s->want -= n;
			p += n;
			s->seen += n;
			if (!s->want) {
				if ((r = deliver(s, s->num, GS_PB_LEN, 0, (const uint8_t *)s->value.data,
						 s->value.len)) < 0)
					return r;
				pop_done(s);
			}
			continue;
		}
		if (s->hdr_len >= sizeof(s->hdr))
			return sfail(s, "field header too long");
		s->hdr[s->hdr_len++] = *p++;
		s->seen++;
		if ((r = header(s)) < 0)
			return r;
	}
	return 0;
}

int gs_pb_stream_finish(struct gs_pb_stream *s)
{
	if (s->failed)
		return -EINVAL;
	if (s->seen < s->magic_len)
		return sfail(s, "the stream ended inside its magic bytes");
	if (s->hdr_len || s->skip || s->want)
		return sfail(s, "the stream ended inside a field");
	if (s->level > 0)
		return sfail(s, "the stream ended inside an embedded message");
	return 0;
}
