#include "core/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

void gs_buf_init(struct gs_buf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->size = 0;
	b->cap = cap;
}

void gs_buf_free(struct gs_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->size = 0;
}

int gs_buf_reserve(struct gs_buf *b, size_t n)
{
	if (b->cap && (n > b->cap || b->len > b->cap - n))
		return -E2BIG;
	if (b->len + n + 1 <= b->size)
		return 0;
	size_t want = b->size ? b->size : 256;
	while (want < b->len + n + 1)
		want *= 2;
	char *p = realloc(b->data, want);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->size = want;
	return 0;
}

int gs_buf_append(struct gs_buf *b, const void *p, size_t n)
{
	int r = gs_buf_reserve(b, n);
	if (r < 0)
		return r;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int gs_buf_append_str(struct gs_buf *b, const char *s)
{
	return gs_buf_append(b, s, strlen(s));
}

int gs_buf_vprintf(struct gs_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return -EINVAL;
	int r = gs_buf_reserve(b, (size_t)n);
	if (r < 0)
		return r;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int gs_buf_printf(struct gs_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = gs_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

int gs_buf_append_json_str(struct gs_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t start = b->len;
	int r = gs_buf_append(b, "\"", 1);

	for (; r == 0 && *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[6];
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			r = gs_buf_append(b, esc, 2);
		} else if (c < 0x20) {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			r = gs_buf_append(b, esc, 6);
		} else {
			r = gs_buf_append(b, s, 1);
		}
	}
	if (r == 0)
		r = gs_buf_append(b, "\"", 1);
	if (r < 0 && b->data) {
		b->len = start;
		b->data[start] = '\0';
	}
	return r;
}

void gs_buf_consume(struct gs_buf *b, size_t n)
{
	GS_ASSERT(n <= b->len);
	if (n == b->len) {
		gs_buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

char *gs_buf_steal(struct gs_buf *b, size_t *len)
{
	char *p = b->data;
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = 0;
	b->size = 0;
	return p;
}

int gs_buf_read_file(const char *path, size_t max, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char *buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	size_t n = 0;
	int r = 0;
	while (r == 0 && n <= max) {
		ssize_t k = read(fd, buf + n, max + 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			r = -errno;
		else if (k == 0)
			break;
		else
			n += (size_t)k;
	}
	close(fd);
	if (r == 0 && n > max)
		r = -EFBIG;
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int gs_buf_append_json_field(struct gs_buf *b, const char *key, const char *value)
{
	if (!value)
		return 0;
	if (gs_buf_printf(b, ",\"%s\":", key) < 0)
		return -E2BIG;
	return gs_buf_append_json_str(b, value);
}
