/*
 * json_items.c: see json_items.h. A byte-at-a-time state machine over the top level of one object;
 * the bytes of a value being captured are copied in runs (one append per chunk, not per byte).
 */
#include "core/json_items.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"

enum {
	S_START,       /* before the object's '{' */
	S_KEY_OR_END,  /* after '{': a key or '}' */
	S_KEY_EXPECT,  /* after ',': a key */
	S_KEY,         /* inside a key's string */
	S_COLON,       /* after a key */
	S_VALUE,       /* after ':' */
	S_ELEM_OR_END, /* after the array member's '[' */
	S_ELEM,        /* after ',' inside the array */
	S_ELEM_NEXT,   /* after an element: ',' or ']' */
	S_NEXT,        /* after a member's value: ',' or '}' */
	S_CAP_NESTED,  /* capturing an object or array value */
	S_CAP_STRING,  /* capturing a string value */
	S_CAP_SCALAR,  /* capturing a number or literal */
	S_DONE,        /* after the closing '}' */
	S_ERROR,
};

/* JSON's whitespace: RFC 8259's four (isspace would add \f and \v). */
static int json_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int fail(struct gs_json_items *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct gs_json_items *s, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	s->state = S_ERROR;
	return code;
}

void gs_json_items_init(struct gs_json_items *s, const char *array_key, size_t max_value, gs_json_member_cb on_member,
			gs_json_element_cb on_element, void *ud)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->array_key, sizeof(s->array_key), "%s", array_key);
	s->max_value = max_value;
	s->on_member = on_member;
	s->on_element = on_element;
	s->ud = ud;
	gs_buf_init(&s->value, max_value);
}

void gs_json_items_free(struct gs_json_items *s)
{
	gs_buf_free(&s->value);
}

/* Starts capturing a value whose first byte is c; returns the capture state. */
static int capture_state(struct gs_json_items *s, char c)
{
	gs_buf_reset(&s->value);
	s->depth = 0;
	s->in_string = 0;
	s->escape = 0;
	if (c == '{' || c == '[')
		return S_CAP_NESTED;
	if (c == '"')
		return S_CAP_STRING;
	return S_CAP_SCALAR;
}

/* The captured value is complete: hand it out. */
static int deliver(struct gs_json_items *s)
{
	const char *v = s->value.data ? s->value.data : "";
	int r;
	if (s->in_array) {
		s->elements++;
		r = s->on_element ? s->on_element(v, s->value.len, s->ud) : 0;
	} else {
		r = s->on_member ? s->on_member(s->key, v, s->value.len, s->ud) : 0;
	}
	if (r < 0)
		return fail(s, r, "stopped by the caller (%d)", r);
	return 0;
}

static int append(struct gs_json_items *s, const char *p, size_t n)
{
	if (n && gs_buf_append(&s->value, p, n) < 0) {
		if (s->in_array)
			return fail(s, -E2BIG, "element %zu of \"%s\" is longer than %zu bytes", s->elements,
				    s->array_key, s->max_value);
		return fail(s, -E2BIG, "the value of \"%s\" is longer than %zu bytes", s->key, s->max_value);
	}
	return 0;
}

/*
 * Inside a string of a nested value, from i: the index of the next '"' or '\\', or len. Most of a
 * pod's bytes are string contents (a scheduling map, managedFields' keys): a tight loop over them
 * instead of one trip through the state machine per byte splits a list of 2,000 pods with 14 KiB
 * maps at 1.98 GB/s instead of 1.29 here. (Two memchr calls were tried and lost, 0.44 GB/s: a map
 * has an escape every dozen bytes, and each search for the quote ran on to the string's end.)
 */
static size_t string_skip(const char *data, size_t i, size_t len)
{
	while (i < len && data[i] != '"' && data[i] != '\\')
		i++;
	return i;
}

/*
 * The steps of feed, one per group of states, each for the byte c = data[*i] (a capture of an object or
 * array also for the bytes after it: it may move *i on). Each returns 0, or <0 once failed (s->err set). A step that hands
 * c over to a capture state sets *run = *i and steps *i back, so that the capture state sees c again.
 */

/* Before the object, after a member's value, after the object. */
static int feed_outer(struct gs_json_items *s, char c)
{
	if (json_ws(c))
		return 0;
	switch (s->state) {
	case S_START:
		if (c != '{')
			return fail(s, -EINVAL, "not a JSON object (starts with '%c')", c);
		s->state = S_KEY_OR_END;
		return 0;
	case S_NEXT:
		if (c == ',')
			s->state = S_KEY_EXPECT;
		else if (c == '}')
			s->state = S_DONE;
		else
			return fail(s, -EINVAL, "expected ',' or '}' after the value of \"%s\"", s->key);
		return 0;
	default: /* S_DONE */
		return fail(s, -EINVAL, "bytes after the end of the object");
	}
}

/* A member's name and its colon. */
static int feed_key(struct gs_json_items *s, char c)
{
	if (s->state == S_KEY) {
		if (s->escape) {
			s->escape = 0;
		} else if (c == '\\') {
			s->escape = 1;
		} else if (c == '"') {
			s->key[s->key_len] = '\0';
			s->state = S_COLON;
			return 0;
		}
		if (s->key_len + 1 < sizeof(s->key))
			s->key[s->key_len++] = c;
		else
			s->key_overflow = 1;
		return 0;
	}
	if (json_ws(c))
		return 0;
	if (s->state == S_COLON) {
		if (c != ':')
			return fail(s, -EINVAL, "expected ':' after \"%s\"", s->key);
		s->state = S_VALUE;
		return 0;
	}
	if (c == '}' && s->state == S_KEY_OR_END) {
		s->state = S_DONE;
		return 0;
	}
	if (c != '"')
		return fail(s, -EINVAL, "expected a member name at '%c'", c);
	s->key_len = 0;
	s->key_overflow = 0;
	s->escape = 0;
	s->state = S_KEY;
	return 0;
}

/* A member's value begins: the array member's '[' (or null), or a value to capture. */
static int feed_value(struct gs_json_items *s, char c, size_t *i, size_t *run)
{
	if (json_ws(c))
		return 0;
	if (c == ',' || c == '}' || c == ']') /* no value: as for an element, not an empty text */
		return fail(s, -EINVAL, "expected a value for \"%s\"", s->key);
	s->in_array = !s->key_overflow && strcmp(s->key, s->array_key) == 0;
	if (s->in_array && c == '[') {
		s->state = S_ELEM_OR_END;
		return 0;
	}
	if (s->in_array && c != 'n') /* null: Go's empty slice */
		return fail(s, -EINVAL, "\"%s\" is not an array", s->array_key);
	s->in_array = 0;
	s->state = capture_state(s, c);
	*run = (*i)--;
	return 0;
}

/* Between the array's elements: an element to capture, ',' or ']'. */
static int feed_element(struct gs_json_items *s, char c, size_t *i, size_t *run)
{
	if (json_ws(c))
		return 0;
	if (s->state == S_ELEM_NEXT) {
		if (c == ',') {
			s->state = S_ELEM;
			return 0;
		}
		if (c != ']')
			return fail(s, -EINVAL, "expected ',' or ']' after element %zu of \"%s\"", s->elements - 1,
				    s->array_key);
	}
	if (c == ']' && s->state != S_ELEM) {
		s->in_array = 0;
		s->state = S_NEXT;
		return 0;
	}
	if (c == ']' || c == ',' || c == '}')
		return fail(s, -EINVAL, "unexpected '%c' in \"%s\"", c, s->array_key);
	s->state = capture_state(s, c);
	*run = (*i)--;
	return 0;
}

/* The captured value [run, end) is complete: appended, handed out, and the state after it. */
static int captured(struct gs_json_items *s, const char *data, size_t run, size_t end)
{
	int r;
	if ((r = append(s, data + run, end - run)) < 0 || (r = deliver(s)) < 0)
		return r;
	s->state = s->in_array ? S_ELEM_NEXT : S_NEXT;
	return 0;
}

/* Inside an object or array being captured (its bytes from run on are in data): the hot loop, most of
 * a list's bytes are string contents skipped here. */
static int feed_nested(struct gs_json_items *s, const char *data, size_t len, size_t *i, size_t run)
{
	char c = data[*i];
	if (s->in_string) {
		if (s->escape)
			s->escape = 0;
		else if (c == '\\')
			s->escape = 1;
		else if (c == '"')
			s->in_string = 0;
		else
			*i = string_skip(data, *i, len) - 1; /* the loop's i++ lands on it */
	} else if (c == '"') {
		s->in_string = 1;
	} else if (c == '{' || c == '[') {
		s->depth++;
	} else if ((c == '}' || c == ']') && --s->depth == 0) {
		return captured(s, data, run, *i + 1);
	}
	return 0;
}

/* Inside a string value being captured. */
static int feed_string(struct gs_json_items *s, const char *data, size_t i, size_t run)
{
	char c = data[i];
	if (i == run && s->value.len == 0)
		return 0; /* the opening quote */
	if (s->escape)
		s->escape = 0;
	else if (c == '\\')
		s->escape = 1;
	else if (c == '"')
		return captured(s, data, run, i + 1);
	return 0;
}

/* Inside a number or literal being captured: it ends before a blank or a delimiter. */
static int feed_scalar(struct gs_json_items *s, const char *data, size_t *i, size_t run)
{
	char c = data[*i];
	if (json_ws(c) || c == ',' || c == '}' || c == ']') {
		(*i)--; /* the delimiter belongs to the next state */
		return captured(s, data, run, *i + 1);
	}
	return 0;
}

int gs_json_items_feed(struct gs_json_items *s, const char *data, size_t len)
{
	size_t i, run = 0; /* start of the captured run in data */
	int r = 0;

	GS_ASSERT(data || len == 0);
	if (s->state == S_ERROR)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		switch (s->state) {
		case S_START:
		case S_NEXT:
		case S_DONE:
			r = feed_outer(s, data[i]);
			break;
		case S_KEY_OR_END:
		case S_KEY_EXPECT:
		case S_KEY:
		case S_COLON:
			r = feed_key(s, data[i]);
			break;
		case S_VALUE:
			r = feed_value(s, data[i], &i, &run);
			break;
		case S_ELEM_OR_END:
		case S_ELEM:
		case S_ELEM_NEXT:
			r = feed_element(s, data[i], &i, &run);
			break;
		case S_CAP_NESTED:
			r = feed_nested(s, data, len, &i, run);
			break;
		case S_CAP_STRING:
			r = feed_string(s, data, i, run);
			break;
		case S_CAP_SCALAR:
			r = feed_scalar(s, data, &i, run);
			break;
		default:
			return -EINVAL;
		}
		if (r < 0)
			return r;
	}
	if (s->state == S_CAP_NESTED || s->state == S_CAP_STRING || s->state == S_CAP_SCALAR)
		return append(s, data + run, len - run);
	return 0;
}

int gs_json_items_finish(struct gs_json_items *s)
{
	if (s->state == S_ERROR)
		return -EINVAL;
	if (s->state != S_DONE)
		return fail(s, -EINVAL, "the document ended early (%zu element(s) of \"%s\" seen)", s->elements,
			    s->array_key);
	return 0;
}
