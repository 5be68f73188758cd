/*
 * json_items.h: splits one JSON object that arrives in pieces into its top-level members, handing out
 * each element of one array member separately, so that a list of any length is decoded one element at
 * a time in bounded memory (the apiserver's unpaginated lists: {"kind":..,"metadata":{..},"items":[..]}).
 *
 *   struct gs_json_items s;
 *   gs_json_items_init(&s, "items", 4 << 20, on_member, on_element, ud);
 *   while (data) if (gs_json_items_feed(&s, data, len) < 0) -> s.err says why
 *   gs_json_items_finish(&s)      -> 0 once the top-level object was closed, else <0
 *   gs_json_items_free(&s);
 *
 * It is a splitter, not a validator: it tracks strings, escapes and nesting, and hands out the exact
 * text of each element of the array member and of every other member's value; the caller parses those
 * (with cJSON), which is where malformed JSON inside them is caught. Structure outside them is checked:
 * the document must be one object, members must be "key": value, the array member must be an array (or
 * null), and nothing but blanks may follow the object.
 *
 * Callbacks run synchronously inside feed; the text they get is valid only during the call. A callback
 * returning <0 stops the splitter (feed returns that code, err says "stopped by the caller").
 */
#ifndef GS_CORE_JSON_ITEMS_H
#define GS_CORE_JSON_ITEMS_H

#include <stddef.h>

#include "core/buf.h"

/* A top-level member other than the array: its key and the text of its value. */
typedef int (*gs_json_member_cb)(const char *key, const char *value, size_t len, void *ud);
/* One element of the array member, as text. */
typedef int (*gs_json_element_cb)(const char *value, size_t len, void *ud);

struct gs_json_items {
	/* configuration */
	char array_key[32];
	size_t max_value; /* longest element or member value kept, in bytes */
	gs_json_member_cb on_member;
	gs_json_element_cb on_element;
	void *ud;
	/* state */
	int state; /* private: where in the top-level object we are */
	int depth; /* nesting inside the value being captured */
	int in_string, escape;
	int in_array; /* the current member is the array */
	char key[64];
	size_t key_len;
	int key_overflow;
	struct gs_buf value; /* the value being captured */
	size_t elements;     /* elements handed out */
	char err[128];
};

void gs_json_items_init(struct gs_json_items *s, const char *array_key, size_t max_value, gs_json_member_cb on_member,
			gs_json_element_cb on_element, void *ud);
/* 0, or <0 with s->err set (then every later call fails the same way). data is NULL only with len 0
 * (GS_ASSERT). */
int gs_json_items_feed(struct gs_json_items *s, const char *data, size_t len);
/* 0 when the document ended properly, else <0 with s->err set. */
int gs_json_items_finish(struct gs_json_items *s);
void gs_json_items_free(struct gs_json_items *s);

#endif
