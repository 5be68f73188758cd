/*
 * str.h: C strings copied into fixed buffers.
 *
 * gs_str_copy(dst, size, src): src (NULL as "") into dst[size], always NUL-terminated; a string too
 * long is cut and ends in "..." (when size >= 4), so a cut never passes for the whole. size > 0.
 */
#ifndef GS_CORE_STR_H
#define GS_CORE_STR_H

#include <stddef.h>
#include <string.h>

#include "core/log.h"

static inline void gs_str_copy(char *dst, size_t size, const char *src)
{
	GS_ASSERT(size > 0);
	size_t n = src ? strlen(src) : 0;
	if (n < size) {
		memcpy(dst, src ? src : "", n + 1);
		return;
	}
	size_t keep = size >= 4 ? size - 4 : size - 1;
	memcpy(dst, src, keep);
	memcpy(dst + keep, "...", size - 1 - keep);
	dst[size - 1] = '\0';
}

#endif
