/*
 * decode.c: see decode.h and docs/k8s-decode.md.
 *
 * cJSON builds the whole tree of one event or one list page; we then walk only the fixed paths we
 * need. The reading helpers below share one rule: absent or null is "not there" (0 returned, output
 * NULL), the wrong JSON type is an error that names the field.
 */
#include "k8s/decode.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"

/* Where an error goes, and which object it is about ("pod default/web-0"). */
struct dctx {
	char *err;
	size_t errlen;
	char what[320];
};

__attribute__((format(printf, 2, 3))) static int dfail(struct dctx *d, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (d->err && d->errlen)
		snprintf(d->err, d->errlen, "%s%s%s", d->what, d->what[0] ? ": " : "", msg);
	return -EINVAL;
}

static int dnomem(struct dctx *d)
{
	if (d->err && d->errlen)
		snprintf(d->err, d->errlen, "%s: out of memory", d->what[0] ? d->what : "decode");
	return -ENOMEM;
}

/* ---- reading helpers ----------------------------------------------------------------------------- */

/* obj[key], or NULL when obj is not an object, the key is absent, or its value is null. */
static const cJSON *get(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNull(v) ? NULL : v;
}

static int get_obj(struct dctx *d, const cJSON *parent, const char *key, const char *path, const cJSON **out)
{
	const cJSON *v = get(parent, key);
	*out = NULL;
	if (v && !cJSON_IsObject(v))
		return dfail(d, "%s is not an object", path);
	*out = v;
	return 0;
}

static int get_arr(struct dctx *d, const cJSON *parent, const char *key, const char *path, const cJSON **out)
{
	const cJSON *v = get(parent, key);
	*out = NULL;
	if (v && !cJSON_IsArray(v))
		return dfail(d, "%s is not a list", path);
	*out = v;
	return 0;
}

/* A string borrowed from the tree. */
static int get_sref(struct dctx *d, const cJSON *parent, const char *key, const char *path, const char **out)
{
	const cJSON *v = get(parent, key);
	*out = NULL;
	if (v && !cJSON_IsString(v))
		return dfail(d, "%s is not a string", path);
	*out = v ? v->valuestring : NULL;
	return 0;
}

/* A string copied out (malloc'ed). */
static int get_str(struct dctx *d, const cJSON *parent, const char *key, const char *path, char **out)
{
	const char *s;
	int r = get_sref(d, parent, key, path, &s);
	*out = NULL;
	if (r < 0 || !s)
		return r;
	*out = strdup(s);
	return *out ? 0 : dnomem(d);
}

static int get_bool(struct dctx *d, const cJSON *parent, const char *key, const char *path, int *out)
{
	const cJSON *v = get(parent, key);
	*out = 0;
	if (v && !cJSON_IsBool(v))
		return dfail(d, "%s is not a boolean", path);
	*out = cJSON_IsTrue(v);
	return 0;
}

/* map[key] where map is a string->string object (labels, annotations). */
static int get_map_str(struct dctx *d, const cJSON *map, const char *key, const char *mapname, char **out)
{
	char path[256];
	*out = NULL;
	if (!map || !key)
		return 0;
	snprintf(path, sizeof(path), "%s[\"%s\"]", mapname, key);
	return get_str(d, map, key, path, out);
}

/* ---- scalars ------------------------------------------------------------------------------------- */

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int gs_decode_time(const char *s, int64_t *ms)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int Y, M, D, h, m, sec, frac_ms = 0, off_min = 0;
	struct tm tm = {0};
	const char *p;

	*ms = 0;
	if (strlen(s) < 20 || digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) || s[7] != '-' ||
	    digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) || s[13] != ':' ||
	    digits(s + 14, 2, &m) || s[16] != ':' || digits(s + 17, 2, &sec))
		return -EINVAL;
	if (M < 1 || M > 12 || D < 1 || D > mdays[M - 1] || h > 23 || m > 59 || sec > 60)
		return -EINVAL;
	p = s + 19;
	if (*p == '.') {
		int n = 0;
		for (p++; isdigit((unsigned char)*p); p++, n++)
			if (n < 3)
				frac_ms = frac_ms * 10 + (*p - '0');
		if (n == 0)
			return -EINVAL;
		for (; n < 3; n++)
			frac_ms *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59)
			return -EINVAL;
		off_min = (oh * 60 + om) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	time_t t = timegm(&tm);
	*ms = ((int64_t)t - (int64_t)off_min * 60) * 1000 + frac_ms;
	return 0;
}

/*
 * Exact arithmetic on 128 bits: value = mantissa * 10^e10 * 2^e2, rounded up. A mantissa of more than
 * 36 significant digits cannot be held and is refused (-ERANGE) unless e10 brings it down.
 */
int gs_decode_quantity(const char *s, int64_t *out)
{
	static const struct {
		const char *sfx;
		int e10, e2;
	} sfx[] = {
		{"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
		{"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"", 0, 0},    {"k", 3, 0},   {"M", 6, 0},
		{"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},
	};
	const unsigned __int128 lim = (unsigned __int128)1 << 120;
	unsigned __int128 mant = 0, v;
	int e10 = 0, e2 = 0, nd = 0, found = 0;
	const char *p = s;

	*out = 0;
	if (*p == '+' || *p == '-')
		p++;
	int neg = *s == '-';
	for (; isdigit((unsigned char)*p); p++, nd++) {
		if (mant >= lim / 10)
			return -ERANGE;
		mant = mant * 10 + (unsigned)(*p - '0');
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, nd++) {
			if (mant >= lim / 10)
				return -ERANGE;
			mant = mant * 10 + (unsigned)(*p - '0');
			e10--;
		}
	}
	if (nd == 0)
		return -EINVAL;
	if ((*p == 'e' || *p == 'E') &&
	    (isdigit((unsigned char)p[1]) || ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
		int sign = 1, x = 0;
		p++;
		if (*p == '+' || *p == '-')
			sign = *p++ == '-' ? -1 : 1;
		for (; isdigit((unsigned char)*p); p++) {
			if (x > 1000)
				return -ERANGE;
			x = x * 10 + (*p - '0');
		}
		e10 += sign * x;
		found = *p == '\0';
	} else {
		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
			if (strcmp(p, sfx[i].sfx) == 0) {
				e10 += sfx[i].e10;
				e2 = sfx[i].e2;
				found = 1;
				break;
			}
		}
	}
	if (!found)
		return -EINVAL;
	if (mant == 0)
		return 0;
	if (neg)
		return -ERANGE;
	v = mant;
	for (; e2 > 0; e2--) {
		if (v > (unsigned __int128)INT64_MAX)
			return -ERANGE;
		v <<= 1;
	}
	for (; e10 > 0; e10--) {
		if (v > (unsigned __int128)INT64_MAX)
			return -ERANGE;
		v *= 10;
	}
	if (e10 < 0) {
		unsigned __int128 div = 1;
		for (; e10 < 0 && div <= v; e10++)
			div *= 10;
		if (e10 < 0) /* the divisor passed the value: 0 < value < 1, rounded up */
			v = 1;
		else
			v = v / div + (v % div != 0);
	}
	if (v > (unsigned __int128)INT64_MAX)
		return -ERANGE;
	*out = (int64_t)v;
	return 0;
}

/* ---- pods ---------------------------------------------------------------------------------------- */

/* What all containers say about CUDA_VISIBLE_DEVICES, folded one container at a time. */
struct cuda_fold {
	int n;            /* containers seen */
	int n_unset;      /* containers without it */
	int n_other;      /* containers that set it from valueFrom */
	int differ;       /* literal values differ */
	const char *value;/* the first literal value (borrowed) */
};

static int fold_container(struct dctx *d, const cJSON *c, const char *list, int i, struct cuda_fold *f)
{
	char path[128];
	const cJSON *env, *e;
	int j = 0, state = 0; /* 0 unset, 1 literal, 2 valueFrom */
	const char *val = NULL;

	snprintf(path, sizeof(path), "spec.%s[%d]", list, i);
	if (!cJSON_IsObject(c))
		return dfail(d, "%s is not an object", path);
	snprintf(path, sizeof(path), "spec.%s[%d].env", list, i);
	if (get_arr(d, c, "env", path, &env) < 0)
		return -EINVAL;
	cJSON_ArrayForEach(e, env) {
		const char *name, *v;
		const cJSON *from;
		snprintf(path, sizeof(path), "spec.%s[%d].env[%d]", list, i, j++);
		if (!cJSON_IsObject(e))
			return dfail(d, "%s is not an object", path);
		if (get_sref(d, e, "name", path, &name) < 0)
			return -EINVAL;
		if (!name || strcmp(name, "CUDA_VISIBLE_DEVICES") != 0)
			continue;
		if (get_sref(d, e, "value", path, &v) < 0 || get_obj(d, e, "valueFrom", path, &from) < 0)
			return -EINVAL;
		/* The kubelet lets a later duplicate win; so do we. An entry with neither is "". */
		if (from) {
			state = 2;
			val = NULL;
		} else {
			state = 1;
			val = v ? v : "";
		}
	}
	f->n++;
	if (state == 0) {
		f->n_unset++;
	} else if (state == 2) {
		f->n_other++;
	} else if (!f->value) {
		f->value = val;
	} else if (strcmp(f->value, val) != 0) {
		f->differ = 1;
	}
	return 0;
}

static int decode_cuda(struct dctx *d, const cJSON *spec, struct gs_pod_obj *out)
{
	static const char *const lists[] = {"initContainers", "containers"};
	struct cuda_fold f = {0};

	for (size_t l = 0; l < 2; l++) {
		const cJSON *arr, *c;
		char path[64];
		int i = 0;
		snprintf(path, sizeof(path), "spec.%s", lists[l]);
		if (get_arr(d, spec, lists[l], path, &arr) < 0)
			return -EINVAL;
		cJSON_ArrayForEach(c, arr) {
			if (fold_container(d, c, lists[l], i++, &f) < 0)
				return -EINVAL;
		}
	}
	out->n_containers = f.n;
	if (f.n_unset == f.n) {
		out->cuda_state = GS_CUDA_UNSET;
	} else if (f.n_unset == 0 && f.n_other == 0 && !f.differ) {
		out->cuda_state = GS_CUDA_SAME;
		if (!(out->cuda_value = strdup(f.value)))
			return dnomem(d);
	} else {
		out->cuda_state = GS_CUDA_MIXED;
	}
	return 0;
}

static int decode_owner(struct dctx *d, const cJSON *meta, struct gs_pod_obj *out)
{
	const cJSON *refs, *ref;
	char path[64];
	int i = 0, r;

	if (get_arr(d, meta, "ownerReferences", "metadata.ownerReferences", &refs) < 0)
		return -EINVAL;
	cJSON_ArrayForEach(ref, refs) {
		int controller;
		snprintf(path, sizeof(path), "metadata.ownerReferences[%d]", i++);
		if (!cJSON_IsObject(ref))
			return dfail(d, "%s is not an object", path);
		if (get_bool(d, ref, "controller", path, &controller) < 0)
			return -EINVAL;
		if (!controller || out->owner_kind)
			continue; /* the apiserver allows one controller; the first one counts */
		if ((r = get_str(d, ref, "kind", path, &out->owner_kind)) < 0 ||
		    (r = get_str(d, ref, "name", path, &out->owner_name)) < 0)
			return r;
	}
	return 0;
}

static int decode_pod(struct dctx *d, const cJSON *pod, const char *map_annotation, struct gs_pod_obj *out)
{
	const cJSON *meta, *spec, *status, *labels, *ann;
	const char *ts, *phase;
	int r;

	if (!cJSON_IsObject(pod))
		return dfail(d, "not an object");
	if ((r = get_obj(d, pod, "metadata", "metadata", &meta)) < 0 ||
	    (r = get_str(d, meta, "namespace", "metadata.namespace", &out->ns)) < 0 ||
	    (r = get_str(d, meta, "name", "metadata.name", &out->name)) < 0)
		return r;
	if (!out->ns || !out->name)
		return dfail(d, "metadata.%s is missing", out->ns ? "name" : "namespace");
	snprintf(d->what, sizeof(d->what), "pod %s/%s", out->ns, out->name);
	if ((r = get_str(d, meta, "uid", "metadata.uid", &out->uid)) < 0)
		return r;
	if (!out->uid)
		return dfail(d, "metadata.uid is missing");
	if ((r = get_str(d, meta, "resourceVersion", "metadata.resourceVersion", &out->resource_version)) < 0 ||
	    (r = get_obj(d, meta, "labels", "metadata.labels", &labels)) < 0 ||
	    (r = get_obj(d, meta, "annotations", "metadata.annotations", &ann)) < 0 ||
	    (r = get_map_str(d, labels, GS_LABEL_POD_INDEX, "metadata.labels", &out->label_pod_index)) < 0 ||
	    (r = get_map_str(d, ann, GS_ANN_JOB_INDEX, "metadata.annotations", &out->job_index)) < 0 ||
	    (r = get_map_str(d, ann, GS_ANN_ASSIGNED, "metadata.annotations", &out->assigned)) < 0 ||
	    (r = get_map_str(d, ann, map_annotation, "metadata.annotations", &out->map_text)) < 0 ||
	    (r = decode_owner(d, meta, out)) < 0)
		return r;
	if ((r = get_sref(d, meta, "creationTimestamp", "metadata.creationTimestamp", &ts)) < 0)
		return r;
	if (ts && gs_decode_time(ts, &out->created_ms) < 0)
		return dfail(d, "metadata.creationTimestamp \"%.40s\" is not an RFC 3339 time", ts);
	if ((r = get_sref(d, meta, "deletionTimestamp", "metadata.deletionTimestamp", &ts)) < 0)
		return r;
	out->deleting = ts != NULL;
	if ((r = get_obj(d, pod, "spec", "spec", &spec)) < 0 ||
	    (r = get_str(d, spec, "schedulerName", "spec.schedulerName", &out->scheduler_name)) < 0 ||
	    (r = get_str(d, spec, "nodeName", "spec.nodeName", &out->node_name)) < 0 ||
	    (r = decode_cuda(d, spec, out)) < 0)
		return r;
	if ((r = get_obj(d, pod, "status", "status", &status)) < 0 ||
	    (r = get_sref(d, status, "phase", "status.phase", &phase)) < 0)
		return r;
	out->terminal = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
	return 0;
}

int gs_decode_pod(const cJSON *pod, const char *map_annotation, struct gs_pod_obj *out, char *err, size_t errlen)
{
	struct dctx d = {.err = err, .errlen = errlen, .what = "pod"};

	memset(out, 0, sizeof(*out));
	int r = decode_pod(&d, pod, map_annotation, out);
	if (r < 0) {
		gs_pod_obj_free(out);
		memset(out, 0, sizeof(*out));
	}
	return r;
}

/* ---- nodes --------------------------------------------------------------------------------------- */

static int decode_node(struct dctx *d, const cJSON *node, struct gs_node_obj *out)
{
	const cJSON *meta, *spec, *status, *conds, *c, *alloc;
	const char *gpus;
	char path[64];
	int i = 0, r;

	out->gpus = -1;
	if (!cJSON_IsObject(node))
		return dfail(d, "not an object");
	if ((r = get_obj(d, node, "metadata", "metadata", &meta)) < 0 ||
	    (r = get_str(d, meta, "name", "metadata.name", &out->name)) < 0)
		return r;
	if (!out->name)
		return dfail(d, "metadata.name is missing");
	snprintf(d->what, sizeof(d->what), "node %s", out->name);
	if ((r = get_str(d, meta, "resourceVersion", "metadata.resourceVersion", &out->resource_version)) < 0 ||
	    (r = get_obj(d, node, "spec", "spec", &spec)) < 0 ||
	    (r = get_bool(d, spec, "unschedulable", "spec.unschedulable", &out->unschedulable)) < 0 ||
	    (r = get_obj(d, node, "status", "status", &status)) < 0 ||
	    (r = get_arr(d, status, "conditions", "status.conditions", &conds)) < 0)
		return r;
	cJSON_ArrayForEach(c, conds) {
		const char *type, *st;
		snprintf(path, sizeof(path), "status.conditions[%d]", i++);
		if (!cJSON_IsObject(c))
			return dfail(d, "%s is not an object", path);
		if ((r = get_sref(d, c, "type", path, &type)) < 0 || (r = get_sref(d, c, "status", path, &st)) < 0)
			return r;
		if (type && strcmp(type, "Ready") == 0)
			out->ready = st && strcmp(st, "True") == 0;
	}
	if ((r = get_obj(d, status, "allocatable", "status.allocatable", &alloc)) < 0 ||
	    (r = get_sref(d, alloc, GS_RES_GPU, "status.allocatable[\"" GS_RES_GPU "\"]", &gpus)) < 0)
		return r;
	if (gpus && gs_decode_quantity(gpus, &out->gpus) < 0)
		return dfail(d, "status.allocatable[\"" GS_RES_GPU "\"] \"%.40s\" is not a whole quantity", gpus);
	return 0;
}

int gs_decode_node(const cJSON *node, struct gs_node_obj *out, char *err, size_t errlen)
{
	struct dctx d = {.err = err, .errlen = errlen, .what = "node"};

	memset(out, 0, sizeof(*out));
	int r = decode_node(&d, node, out);
	if (r < 0) {
		gs_node_obj_free(out);
		memset(out, 0, sizeof(*out));
		out->gpus = -1;
	}
	return r;
}

/* ---- documents ----------------------------------------------------------------------------------- */

/* Parses json[0..len) as exactly one JSON value (blanks may follow). */
static cJSON *parse_doc(struct dctx *d, const char *json, size_t len, int *r)
{
	const char *end = NULL;
	cJSON *root;

	*r = 0;
	if (!json || len == 0) {
		*r = dfail(d, "empty document");
		return NULL;
	}
	root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
	if (!root) {
		size_t at = end && end >= json && end <= json + len ? (size_t)(end - json) : 0;
		*r = dfail(d, "invalid JSON near byte %zu of %zu", at, len);
		return NULL;
	}
	for (; end < json + len; end++) {
		if (!(*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) {
			*r = dfail(d, "trailing bytes after the JSON value at byte %zu", (size_t)(end - json));
			cJSON_Delete(root);
			return NULL;
		}
	}
	if (!cJSON_IsObject(root)) {
		*r = dfail(d, "not a JSON object");
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

static const char *const watch_types[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};

const char *gs_watch_type_name(enum gs_watch_type t)
{
	return (unsigned)t < sizeof(watch_types) / sizeof(watch_types[0]) ? watch_types[t] : "?";
}

static int decode_status_obj(struct dctx *d, const cJSON *st, int *code, char **reason, char **message)
{
	const cJSON *c = get(st, "code");
	int r;

	if (c && (!cJSON_IsNumber(c) || c->valuedouble < 0 || c->valuedouble > 999))
		return dfail(d, "status code is not an HTTP code");
	*code = c ? (int)c->valuedouble : 0;
	if ((r = get_str(d, st, "reason", "reason", reason)) < 0 || (r = get_str(d, st, "message", "message", message)) < 0)
		return r;
	return 0;
}

static int decode_event(struct dctx *d, const cJSON *root, const char *map_annotation, struct gs_watch_event *ev)
{
	const cJSON *obj, *meta;
	const char *type;
	size_t t;
	int r;

	if ((r = get_sref(d, root, "type", "type", &type)) < 0 || (r = get_obj(d, root, "object", "object", &obj)) < 0)
		return r;
	if (!type)
		return dfail(d, "no type");
	for (t = 0; t < sizeof(watch_types) / sizeof(watch_types[0]); t++)
		if (strcmp(type, watch_types[t]) == 0)
			break;
	if (t == sizeof(watch_types) / sizeof(watch_types[0]))
		return dfail(d, "unknown event type \"%.32s\"", type);
	ev->type = (enum gs_watch_type)t;
	if (ev->type == GS_WATCH_ERROR)
		return decode_status_obj(d, obj, &ev->status_code, &ev->status_reason, &ev->status_message);
	if (!obj)
		return dfail(d, "%s event without an object", type);
	if (ev->type == GS_WATCH_BOOKMARK) {
		if ((r = get_obj(d, obj, "metadata", "object.metadata", &meta)) < 0 ||
		    (r = get_str(d, meta, "resourceVersion", "object.metadata.resourceVersion", &ev->resource_version)) < 0)
			return r;
		if (!ev->resource_version)
			return dfail(d, "BOOKMARK without a resourceVersion");
		return 0;
	}
	char *dst = d->err;
	if (ev->kind == GS_OBJ_POD) {
		r = gs_decode_pod(obj, map_annotation, &ev->pod, dst, d->errlen);
		if (r == 0 && ev->pod.resource_version && !(ev->resource_version = strdup(ev->pod.resource_version)))
			r = dnomem(d);
	} else {
		r = gs_decode_node(obj, &ev->node, dst, d->errlen);
		if (r == 0 && ev->node.resource_version && !(ev->resource_version = strdup(ev->node.resource_version)))
			r = dnomem(d);
	}
	return r;
}

int gs_decode_watch_event(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			  struct gs_watch_event *ev, char *err, size_t errlen)
{
	struct dctx d = {.err = err, .errlen = errlen, .what = "watch event"};
	cJSON *root;
	int r;

	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->node.gpus = -1;
	if (!(root = parse_doc(&d, json, len, &r)))
		return r;
	r = decode_event(&d, root, map_annotation, ev);
	cJSON_Delete(root);
	if (r < 0) {
		gs_watch_event_free(ev);
		ev->kind = kind;
	}
	return r;
}

void gs_watch_event_free(struct gs_watch_event *ev)
{
	gs_pod_obj_free(&ev->pod);
	gs_node_obj_free(&ev->node);
	free(ev->resource_version);
	free(ev->status_reason);
	free(ev->status_message);
	memset(ev, 0, sizeof(*ev));
	ev->node.gpus = -1;
}

/* Decodes one list item into its record and hands it to cb. Returns cb's result (0 or < 0), -ENOMEM,
 * or 1 when the item does not decode (ierr says why). */
static int decode_item(const cJSON *it, enum gs_obj_kind kind, const char *map_annotation, gs_decode_item_cb cb,
		       void *ud, char *ierr, size_t ierrlen)
{
	struct gs_pod_obj pod;
	struct gs_node_obj node;
	int r = kind == GS_OBJ_POD ? gs_decode_pod(it, map_annotation, &pod, ierr, ierrlen)
				   : gs_decode_node(it, &node, ierr, ierrlen);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 1;
	r = cb(kind, kind == GS_OBJ_POD ? (const void *)&pod : (const void *)&node, ud);
	if (kind == GS_OBJ_POD)
		gs_pod_obj_free(&pod);
	else
		gs_node_obj_free(&node);
	return r;
}

int gs_decode_list_ex(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
		      gs_decode_item_cb cb, void *ud, char **resource_version, char **continue_token,
		      unsigned *skipped, char *err, size_t errlen)
{
	struct dctx d = {.err = err, .errlen = errlen};
	const cJSON *items, *meta, *it;
	char *rv = NULL, *cont = NULL, ierr[512];
	cJSON *root;
	unsigned nskip = 0;
	int i = 0, r;

	snprintf(d.what, sizeof(d.what), "%s list", kind == GS_OBJ_POD ? "pod" : "node");
	*resource_version = NULL;
	*continue_token = NULL;
	if (skipped)
		*skipped = 0;
	if (!(root = parse_doc(&d, json, len, &r)))
		return r;
	if ((r = get_obj(&d, root, "metadata", "metadata", &meta)) < 0 ||
	    (r = get_str(&d, meta, "resourceVersion", "metadata.resourceVersion", &rv)) < 0 ||
	    (r = get_str(&d, meta, "continue", "metadata.continue", &cont)) < 0 ||
	    (r = get_arr(&d, root, "items", "items", &items)) < 0)
		goto out;
	/* "items": null is how Go encodes an empty list; a missing key is not a list reply at all. */
	if (!items && !cJSON_HasObjectItem(root, "items")) {
		r = dfail(&d, "no items");
		goto out;
	}
	cJSON_ArrayForEach(it, items) {
		r = decode_item(it, kind, map_annotation, cb, ud, ierr, sizeof(ierr));
		i++;
		if (r == -ENOMEM) {
			r = dnomem(&d);
			goto out;
		}
		if (r > 0) {
			nskip++;
			gs_log_warn("%s: item %d skipped: %s", d.what, i - 1, ierr);
			continue;
		}
		if (r < 0) {
			snprintf(ierr, sizeof(ierr), "stopped by the caller (%d)", r);
			if (err && errlen)
				snprintf(err, errlen, "%s: item %d: %s", d.what, i - 1, ierr);
			goto out;
		}
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

int gs_decode_list_item(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
			gs_decode_item_cb cb, void *ud, unsigned *skipped)
{
	struct dctx d = {0};
	char ierr[512];
	cJSON *root;
	int r;

	d.err = ierr;
	d.errlen = sizeof(ierr);
	snprintf(d.what, sizeof(d.what), "%s list item", kind == GS_OBJ_POD ? "pod" : "node");
	if (!(root = parse_doc(&d, json, len, &r))) {
		if (r == -ENOMEM)
			return r;
		gs_log_warn("%s skipped: %s", d.what, ierr);
		(*skipped)++;
		return 0;
	}
	r = decode_item(root, kind, map_annotation, cb, ud, ierr, sizeof(ierr));
	cJSON_Delete(root);
	if (r > 0) {
		gs_log_warn("%s skipped: %s", d.what, ierr);
		(*skipped)++;
		return 0;
	}
	return r;
}

int gs_decode_list_meta(const char *json, size_t len, char **resource_version, char *err, size_t errlen)
{
	struct dctx d = {.err = err, .errlen = errlen};
	cJSON *root;
	int r;

	snprintf(d.what, sizeof(d.what), "list metadata");
	*resource_version = NULL;
	if (!(root = parse_doc(&d, json, len, &r)))
		return r;
	r = get_str(&d, root, "resourceVersion", "metadata.resourceVersion", resource_version);
	cJSON_Delete(root);
	return r < 0 ? r : 0;
}

int gs_decode_list(const char *json, size_t len, enum gs_obj_kind kind, const char *map_annotation,
		   gs_decode_item_cb cb, void *ud, char **resource_version, char **continue_token, char *err,
		   size_t errlen)
{
	return gs_decode_list_ex(json, len, kind, map_annotation, cb, ud, resource_version, continue_token, NULL, err,
				 errlen);
}

int gs_decode_status(const char *json, size_t len, int *code, char **reason, char **message)
{
	struct dctx d = {0};
	cJSON *root;
	int r;

	*code = 0;
	*reason = NULL;
	*message = NULL;
	if (!(root = parse_doc(&d, json, len, &r)))
		return r;
	r = decode_status_obj(&d, root, code, reason, message);
	cJSON_Delete(root);
	if (r < 0) {
		free(*reason);
		free(*message);
		*code = 0;
		*reason = NULL;
		*message = NULL;
	}
	return r;
}
