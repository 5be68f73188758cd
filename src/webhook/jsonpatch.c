#include "webhook/jsonpatch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <mbedtls/base64.h>

#include "core/log.h"

void gs_jsonpatch_init(struct gs_jsonpatch *p, size_t cap)
{
	gs_buf_init(&p->buf, cap);
	p->n_ops = 0;
	p->finished = 0;
}

void gs_jsonpatch_free(struct gs_jsonpatch *p)
{
	gs_buf_free(&p->buf);
	p->n_ops = 0;
	p->finished = 0;
}

int gs_jsonpatch_op(struct gs_jsonpatch *p, const char *op, const char *path, const char *value_json)
{
	GS_ASSERT(op && path);
	if (p->finished)
		return -EINVAL;
	/*
	 * Written piecewise into the document; on failure the length is rolled back so that a caller
	 * who ignores the error at least never sees half an operation.
	 */
	size_t mark = p->buf.len;
	int r = gs_buf_append_str(&p->buf, p->n_ops ? ",{\"op\":" : "[{\"op\":");
	if (r == 0)
		r = gs_buf_append_json_str(&p->buf, op);
	if (r == 0)
		r = gs_buf_append_str(&p->buf, ",\"path\":");
	if (r == 0)
		r = gs_buf_append_json_str(&p->buf, path);
	if (r == 0 && value_json) {
		r = gs_buf_append_str(&p->buf, ",\"value\":");
		if (r == 0)
			r = gs_buf_append_str(&p->buf, value_json);
	}
	if (r == 0)
		r = gs_buf_append_str(&p->buf, "}");
	if (r < 0) {
		p->buf.len = mark;
		if (p->buf.data)
			p->buf.data[mark] = '\0';
		return r;
	}
	p->n_ops++;
	return 0;
}

int gs_jsonpatch_finish(struct gs_jsonpatch *p)
{
	if (p->finished)
		return 0;
	int r = gs_buf_append_str(&p->buf, p->n_ops ? "]" : "[]");
	if (r == 0)
		p->finished = 1;
	return r;
}

int gs_jsonpatch_ptr_append(struct gs_buf *ptr, const char *token)
{
	int r = gs_buf_append(ptr, "/", 1);
	for (const char *s = token; r == 0 && *s; s++) {
		/* RFC 6901 section 3: '~' first, so "~1" in a name stays "~01" and not "/". */
		if (*s == '~')
			r = gs_buf_append(ptr, "~0", 2);
		else if (*s == '/')
			r = gs_buf_append(ptr, "~1", 2);
		else
			r = gs_buf_append(ptr, s, 1);
	}
	return r;
}

int gs_jsonpatch_ptr_append_index(struct gs_buf *ptr, size_t i)
{
	return gs_buf_printf(ptr, "/%zu", i);
}

int gs_jsonpatch_base64_append(struct gs_buf *out, const void *data, size_t len)
{
	if (len > (((size_t)-1) / 4) * 3 - 4)
		return -E2BIG;
	size_t need = 4 * ((len + 2) / 3);
	int r = gs_buf_reserve(out, need); /* reserve keeps one more byte for the NUL mbedTLS writes */
	if (r < 0)
		return r;
	size_t olen = 0;
	if (mbedtls_base64_encode((unsigned char *)out->data + out->len, need + 1, &olen, data, len) != 0)
		return -EINVAL; /* cannot happen: the room was computed above */
	out->len += olen;
	out->data[out->len] = '\0';
	return 0;
}
