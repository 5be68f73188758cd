/*
 * alloc.c: allocations that cannot fail (see alloc.h for when to use them).
 */
#include "core/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

void gs_oom_at(size_t n, const char *file, int line)
{
	if (n)
		gs_log_emit(GS_LOG_ERROR, file, line, "out of memory (%zu bytes)", n);
	else
		gs_log_emit(GS_LOG_ERROR, file, line, "out of memory");
	abort();
}

void *gs_xmalloc_at(size_t n, const char *file, int line)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		gs_oom_at(n, file, line);
	return p;
}

void *gs_xcalloc_at(size_t n, size_t size, const char *file, int line)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		gs_oom_at(SIZE_MAX, file, line);
	p = calloc(n && size ? n : 1, n && size ? size : 1);
	if (!p)
		gs_oom_at(n * size, file, line);
	return p;
}

void *gs_xrealloc_at(void *p, size_t n, const char *file, int line)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		gs_oom_at(n, file, line);
	return q;
}

void *gs_xreallocarray_at(void *p, size_t n, size_t size, const char *file, int line)
{
	if (size && n > SIZE_MAX / size)
		gs_oom_at(SIZE_MAX, file, line);
	return gs_xrealloc_at(p, n * size, file, line);
}

char *gs_xstrdup_at(const char *s, const char *file, int line)
{
	size_t n = strlen(s) + 1;

	return memcpy(gs_xmalloc_at(n, file, line), s, n);
}

char *gs_xstrndup_at(const char *s, size_t n, const char *file, int line)
{
	size_t len = strnlen(s, n);
	char *p = gs_xmalloc_at(len + 1, file, line);

	memcpy(p, s, len);
	p[len] = 0;
	return p;
}
