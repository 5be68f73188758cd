/*
 * json_nul.h: JSON text made safe for cJSON's C strings.
 *
 * cJSON keeps every string and member name as a C string with no length, so a NUL inside one, written
 * "\u0000" (or a raw NUL byte, which cJSON lets through), ends it early: an env var named
 * "CUDA_VISIBLE_DEVICES\u0000x" reads as "CUDA_VISIBLE_DEVICES", a member "name\u0000x" as "name",
 * and strcmp calls them equal. gs_json_mask_nul rewrites each such NUL into U+001A (SUB): "\u0000"
 * becomes "\u001a" and a NUL byte 0x1a. The text keeps its length and every offset (error positions
 * name the same bytes), valid JSON stays valid, invalid stays invalid, and a string that held a NUL
 * now holds a control character instead, so it compares unequal to every name without one: names are
 * compared as the exact strings they are. Nothing else changes.
 *
 *   char *copy;
 *   const char *t = gs_json_mask_nul(body, len, &copy);   // NULL: out of memory
 *   cJSON *root = cJSON_ParseWithLengthOpts(t, len, &end, 0);
 *   free(copy);
 */
#ifndef GS_CORE_JSON_NUL_H
#define GS_CORE_JSON_NUL_H

#include <stddef.h>

/*
 * text[0..len) with every NUL of a string masked as above. Returns text itself (and *copy = NULL)
 * when there is none, which is the common case and allocates nothing; else a malloc'd copy of len
 * bytes plus a terminating NUL, also stored in *copy for the caller to free. NULL when that allocation
 * fails. One pass: memchr from backslash to backslash.
 */
const char *gs_json_mask_nul(const char *text, size_t len, char **copy);

#endif
