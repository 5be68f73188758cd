/*
 * json_nul.c: see json_nul.h. An escape starts at a backslash that is not itself escaped; scanning
 * from the start and stepping over each escape's second character finds exactly those (outside
 * strings a backslash is invalid JSON either way, so treating it alike changes no verdict).
 */
#include "core/json_nul.h"

#include <stdlib.h>
#include <string.h>

#define SUB 0x1a

/* Makes the copy on the first change. */
static char *own(const char *text, size_t len, char **copy)
{
	if (!*copy && (*copy = malloc(len + 1)) != NULL) {
		memcpy(*copy, text, len);
		(*copy)[len] = '\0';
	}
	return *copy;
}

const char *gs_json_mask_nul(const char *text, size_t len, char **copy)
{
	const char *end = text + len, *p = text, *z;

	*copy = NULL;
	while ((p = memchr(p, '\\', (size_t)(end - p))) != NULL) {
		if (end - p >= 6 && !memcmp(p + 1, "u0000", 5)) {
			if (!own(text, len, copy))
				return NULL;
			memcpy(*copy + (p - text) + 4, "1a", 2);
		}
		p += end - p >= 2 ? 2 : 1; /* the backslash and the character it escapes */
	}
	for (p = text; (z = memchr(p, '\0', (size_t)(end - p))) != NULL; p = z + 1) {
		if (!own(text, len, copy))
			return NULL;
		(*copy)[z - text] = SUB;
	}
	return *copy ? *copy : text;
}
