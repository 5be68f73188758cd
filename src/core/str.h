/*
 * str.h: C strings copied into fixed buffers.
 *
 * gs_str_copy(dst, size, src): src (NULL as "") into dst[size], always NUL-terminated; a string too
 * long is cut and ends in "..." (when size >= 4), so a cut never passes for the whole. size > 0.
 *
 * Comparing, two contracts for two meanings of NULL:
 * gs_str_eq(a, b): 1 when a and b are equal strings or both NULL. NULL is absent, and absent is not
 *   "" (a field present and empty): gs_str_eq(NULL, "") is 0.
 * gs_str_eq_empty(a, b): NULL read as "", for an optional field whose absent and empty values mean
 *   the same (a taint's value: the JSON decoder keeps "", the protobuf one NULL).
 *
 * gs_str_quote(out, size, s): s between double quotes into out[size] (size >= 8), for messages that
 *   show user text (a label, an annotation value): bytes below 0x20, from 0x7f, '"' and '\' as \xHH,
 *   at most 40 bytes of s, then "..." when s is longer. Returns out.
 */
#ifndef GS_CORE_STR_H
#define GS_CORE_STR_H

#include <stddef.h>
#include <stdio.h>
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

static inline int gs_str_eq(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

static inline int gs_str_eq_empty(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static inline const char *gs_str_quote(char *out, size_t size, const char *s)
{
	size_t o = 0, i;

	GS_ASSERT(size >= 8);
	out[o++] = '"';
	for (i = 0; s[i] && i < 40 && o + 6 < size; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o++] = '"';
	if (s[i] && o + 4 < size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

#endif
