/*
 * decode_json.c: the JSON reading helpers (decode_json.h). cJSON builds the whole tree of one event or
 * one list page; the decoders then walk only the fixed paths they need with these.
 */
#include "k8s/decode_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_nul.h"
#include "k8s/decode_items.h"

#define DOT GS_DCTX_DOT

int gs_dctx_fail(struct gs_dctx *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int r = gs_decode__vfail(d->err, d->errlen, d->what, fmt, ap);
	va_end(ap);
	return r;
}

int gs_dctx_nomem(struct gs_dctx *d)
{
	return gs_decode__nomem(d->err, d->errlen, d->what);
}

const cJSON *gs_dctx_get(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNull(v) ? NULL : v;
}

int gs_dctx_get_obj(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, const cJSON **out)
{
	const cJSON *v = gs_dctx_get(parent, key);
	*out = NULL;
	if (v && !cJSON_IsObject(v))
		return gs_dctx_fail(d, "%s%s%s is not an object", path, DOT(path), key);
	*out = v;
	return 0;
}

int gs_dctx_get_arr(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, const cJSON **out)
{
	const cJSON *v = gs_dctx_get(parent, key);
	*out = NULL;
	if (v && !cJSON_IsArray(v))
		return gs_dctx_fail(d, "%s%s%s is not a list", path, DOT(path), key);
	*out = v;
	return 0;
}

int gs_dctx_get_sref(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, const char **out)
{
	const cJSON *v = gs_dctx_get(parent, key);
	*out = NULL;
	if (v && !cJSON_IsString(v))
		return gs_dctx_fail(d, "%s%s%s is not a string", path, DOT(path), key);
	*out = v ? v->valuestring : NULL;
	return 0;
}

int gs_dctx_get_str_max(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, size_t max,
			char **out)
{
	const char *s;
	int r = gs_dctx_get_sref(d, parent, key, path, &s);
	*out = NULL;
	if (r < 0 || !s)
		return r;
	if (strnlen(s, max + 1) > max)
		return gs_dctx_fail(d, "%s%s%s is longer than %zu bytes", path, DOT(path), key, max);
	return gs_dctx_dup(d, s, out);
}

int gs_dctx_get_str(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, char **out)
{
	return gs_dctx_get_str_max(d, parent, key, path, SIZE_MAX - 1, out);
}

int gs_dctx_dup(struct gs_dctx *d, const char *s, char **out)
{
	*out = s ? strdup(s) : NULL;
	return !s || *out ? 0 : gs_dctx_nomem(d);
}

int gs_dctx_get_bool(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, int *out)
{
	const cJSON *v = gs_dctx_get(parent, key);
	*out = 0;
	if (v && !cJSON_IsBool(v))
		return gs_dctx_fail(d, "%s%s%s is not a boolean", path, DOT(path), key);
	*out = cJSON_IsTrue(v);
	return 0;
}

int gs_dctx_get_int(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, int64_t lo, int64_t hi,
		    int64_t *out)
{
	const cJSON *v = gs_dctx_get(parent, key);
	double x;
	int64_t i;

	if (!v)
		return 0;
	x = v->valuedouble;
	if (!cJSON_IsNumber(v) || x != x)
		return gs_dctx_fail(d, "%s%s%s is not an integer", path, DOT(path), key);
	if (x < (double)lo || x > (double)hi)
		return gs_dctx_fail(d, "%s%s%s %g is out of range", path, DOT(path), key, x);
	i = x >= 0x1p63 ? INT64_MAX : (int64_t)x;
	if ((double)i != x)
		return gs_dctx_fail(d, "%s%s%s is not an integer", path, DOT(path), key);
	*out = i;
	return 0;
}

/* Only blanks may follow the value: anything else is an error at its byte. */
static int trailing(struct gs_dctx *d, const char *text, const char *end, size_t len)
{
	for (; end < text + len; end++)
		if (!(*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
			return gs_dctx_fail(d, "trailing bytes after the JSON value at byte %zu", (size_t)(end - text));
	return 0;
}

cJSON *gs_dctx_parse(struct gs_dctx *d, const char *json, size_t len, int *r)
{
	const char *end = NULL, *text;
	char *masked;
	cJSON *root;

	*r = 0;
	if (!json || len == 0) {
		*r = gs_dctx_fail(d, "empty document");
		return NULL;
	}
	/* Names compare exactly: a NUL would end cJSON's copy of a string early (core/json_nul.h). */
	if (!(text = gs_json_mask_nul(json, len, &masked))) {
		*r = gs_dctx_nomem(d);
		return NULL;
	}
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
		*r = gs_dctx_fail(d, "invalid JSON near byte %zu of %zu", at, len);
	} else if ((*r = trailing(d, text, end, len)) == 0 && !cJSON_IsObject(root)) {
		*r = gs_dctx_fail(d, "not a JSON object");
	}
	free(masked);
	if (*r < 0) {
		cJSON_Delete(root);
		root = NULL;
	}
	return root;
}

int gs_dctx_status(struct gs_dctx *d, const cJSON *st, int *code, char **reason, char **message)
{
	const cJSON *c = gs_dctx_get(st, "code");
	int r;

	if (c && (!cJSON_IsNumber(c) || c->valuedouble < 0 || c->valuedouble > 999))
		return gs_dctx_fail(d, "status code is not an HTTP code");
	*code = c ? (int)c->valuedouble : 0;
	if ((r = gs_dctx_get_str(d, st, "reason", "", reason)) < 0 ||
	    (r = gs_dctx_get_str(d, st, "message", "", message)) < 0)
		return r;
	return 0;
}

static const char *const watch_types[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
#define N_WATCH_TYPES (sizeof(watch_types) / sizeof(watch_types[0]))

const char *gs_dctx_event_type_name(enum gs_decode_event_type t)
{
	return (unsigned)t < N_WATCH_TYPES ? watch_types[t] : "?";
}

int gs_dctx_event(struct gs_dctx *d, const cJSON *root, enum gs_decode_event_type *type, const cJSON **obj, char **rv,
		  int *code, char **reason, char **message)
{
	const cJSON *meta;
	const char *name;
	size_t t;
	int r;

	if ((r = gs_dctx_get_sref(d, root, "type", "", &name)) < 0 ||
	    (r = gs_dctx_get_obj(d, root, "object", "", obj)) < 0)
		return r;
	if (!name)
		return gs_dctx_fail(d, "no type");
	for (t = 0; t < N_WATCH_TYPES && strcmp(name, watch_types[t]) != 0; t++)
		;
	if (t == N_WATCH_TYPES)
		return gs_dctx_fail(d, "unknown event type \"%.32s\"", name);
	*type = (enum gs_decode_event_type)t;
	if (*type == GS_DECODE_EV_ERROR)
		return (r = gs_dctx_status(d, *obj, code, reason, message)) < 0 ? r : 1;
	if (!*obj)
		return gs_dctx_fail(d, "%s event without an object", name);
	if (*type != GS_DECODE_EV_BOOKMARK)
		return 0;
	if ((r = gs_dctx_get_obj(d, *obj, "metadata", "object", &meta)) < 0 ||
	    (r = gs_dctx_get_str(d, meta, "resourceVersion", "object.metadata", rv)) < 0)
		return r;
	return *rv ? 1 : gs_dctx_fail(d, "BOOKMARK without a resourceVersion");
}

int gs_dctx_list(struct gs_dctx *d, const cJSON *root, char **rv, char **cont, const cJSON **items)
{
	const cJSON *meta;
	int r;

	*rv = *cont = NULL;
	if ((r = gs_dctx_get_obj(d, root, "metadata", "", &meta)) < 0 ||
	    (r = gs_dctx_get_str(d, meta, "resourceVersion", "metadata", rv)) < 0 ||
	    (r = gs_dctx_get_str(d, meta, "continue", "metadata", cont)) < 0 ||
	    (r = gs_dctx_get_arr(d, root, "items", "", items)) < 0)
		goto out;
	/* "items": null is how Go encodes an empty list; a missing key is not a list reply at all. */
	if (!*items && !cJSON_HasObjectItem(root, "items"))
		r = gs_dctx_fail(d, "no items");
out:
	if (r < 0) {
		free(*rv);
		free(*cont);
		*rv = *cont = NULL;
	}
	return r;
}

int gs_dctx_list_each(struct gs_dctx *d, const char *json, size_t len, gs_dctx_item_fn item, void *ud,
		      char **resource_version, char **continue_token, unsigned *skipped)
{
	const cJSON *items, *it;
	char *rv = NULL, *cont = NULL, ierr[512];
	cJSON *root;
	unsigned nskip = 0;
	int i = 0, r;

	*resource_version = *continue_token = NULL;
	if (skipped)
		*skipped = 0;
	if (!(root = gs_dctx_parse(d, json, len, &r)))
		return r;
	if ((r = gs_dctx_list(d, root, &rv, &cont, &items)) < 0)
		goto out;
	cJSON_ArrayForEach(it, items) {
		r = item(it, ud, ierr, sizeof(ierr));
		if ((r = gs_decode__item_outcome(r, d->what, i++, ierr, &nskip, d->err, d->errlen)) < 0)
			goto out;
	}
	r = 0;
	*resource_version = rv;
	*continue_token = cont;
	rv = cont = NULL;
	if (skipped)
		*skipped = nskip;
out:
	free(rv);
	free(cont);
	cJSON_Delete(root);
	return r;
}

int gs_dctx_event_record(struct gs_dctx *d, const char *json, size_t len, gs_dctx_record_fn rec, void *out,
			 enum gs_decode_event_type *type, char **rv, int *code, char **reason, char **message)
{
	const char *orv = NULL;
	const cJSON *obj;
	cJSON *root;
	int r;

	if (!(root = gs_dctx_parse(d, json, len, &r)))
		return r;
	r = gs_dctx_event(d, root, type, &obj, rv, code, reason, message);
	if (r == 0 && (r = rec(d, obj, out, &orv)) == 0)
		r = gs_dctx_dup(d, orv, rv);
	cJSON_Delete(root);
	return r < 0 ? r : 0;
}

/* ---- shared by the decoders of objects --------------------------------------------------------- */

/* parent[key], a string -> string object (labels, nodeSelector), in object order. A null value is
 * absent: that pair is left out. */
int gs_decode__labels(struct gs_dctx *d, const cJSON *parent, const char *key, const char *path, struct gs_label **out,
		      int *n_out)
{
	const cJSON *map, *v;
	int n, r;

	if ((r = gs_dctx_get_obj(d, parent, key, path, &map)) < 0 || !map || (n = cJSON_GetArraySize(map)) == 0)
		return r;
	if (!(*out = calloc((size_t)n, sizeof(**out))))
		return gs_dctx_nomem(d);
	cJSON_ArrayForEach(v, map) {
		struct gs_label *l = &(*out)[*n_out];
		if (cJSON_IsNull(v))
			continue;
		if (!cJSON_IsString(v))
			return gs_dctx_fail(d, "%s%s%s[\"%.64s\"] is not a string", path, GS_DCTX_DOT(path), key,
					    v->string);
		if (!(l->key = strdup(v->string)))
			return gs_dctx_nomem(d);
		(*n_out)++;
		if (!(l->value = strdup(v->valuestring)))
			return gs_dctx_nomem(d);
	}
	if (*n_out == 0) {
		free(*out);
		*out = NULL;
	}
	return 0;
}

/* In the order of enum gs_sel_op. */
static const char *const sel_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

/* One matchExpressions (field 0) or matchFields (field 1) entry; key is required (the apiserver
 * requires it, and a requirement on no key could not be shown). */
int gs_decode__sel_req(struct gs_dctx *d, const cJSON *q, const char *path, int field, struct gs_sel_req *out)
{
	const cJSON *vals, *v;
	const char *op;
	int i = 0, n, r;

	if (!cJSON_IsObject(q))
		return gs_dctx_fail(d, "%s is not an object", path);
	if ((r = gs_dctx_get_str(d, q, "key", path, &out->key)) < 0 ||
	    (r = gs_dctx_get_sref(d, q, "operator", path, &op)) < 0 ||
	    (r = gs_dctx_get_arr(d, q, "values", path, &vals)) < 0)
		return r;
	if (!out->key)
		return gs_dctx_fail(d, "%s.key is missing", path);
	out->field = field;
	out->op = GS_SEL_INVALID;
	for (size_t k = 0; op && k < sizeof(sel_ops) / sizeof(sel_ops[0]); k++) {
		if (strcmp(op, sel_ops[k]) == 0) {
			out->op = (enum gs_sel_op)k;
			break;
		}
	}
	if (!vals || (n = cJSON_GetArraySize(vals)) == 0)
		return 0;
	if (!(out->values = calloc((size_t)n, sizeof(*out->values))))
		return gs_dctx_nomem(d);
	out->n_values = n;
	cJSON_ArrayForEach(v, vals) {
		if (!cJSON_IsString(v))
			return gs_dctx_fail(d, "%s.values[%d] is not a string", path, i);
		if (!(out->values[i++] = strdup(v->valuestring)))
			return gs_dctx_nomem(d);
	}
	return 0;
}
