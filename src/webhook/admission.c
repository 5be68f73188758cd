#include "webhook/admission.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/alloc.h"
#include "core/json_nul.h"
#include "core/log.h"
#include "core/num.h"
#include "core/str.h"
#include "sched/checks.h"
#include "sched/gang.h"
#include "sched/gpm.h"
#include "sched/map_cache.h"
#include "webhook/jsonpatch.h"

#define ADMISSION_API_VERSION "admission.k8s.io/v1"
#define LABEL_POD_INDEX       "apps.kubernetes.io/pod-index"
#define ANNOTATION_JOB_INDEX  "batch.kubernetes.io/job-completion-index"
#define ANNOTATION_ASSIGNED   "gpu-scheduler.io/assigned"
#define RESOURCE_GPU          "nvidia.com/gpu"
/* The device plugin warning repeats the devices twice; past this it is not worth sending whole. */
#define WARNING_MAX           (64 * 1024)
/* Our own cache when the caller shares none: a handful of workloads is the common case. */
#define OWN_CACHE_ENTRIES     64

#define STRINGIFY_(x) #x
#define STRINGIFY(x)  STRINGIFY_(x)

struct gs_admission {
	char *scheduler_name;
	char *annotation;
	struct gs_map_cache *cache;
	int own_cache;
	int (*node_allows)(void *ud, const char *node, const char *ns, char *why, size_t size);
	void *node_allows_ud;
	int64_t (*node_gpus)(void *ud, const char *node, char *words, size_t size);
	void *node_gpus_ud;
	int (*map_lookup)(void *ud, const char *ns, const char *name, struct gs_gpm_view *out);
	void *map_lookup_ud;
	int tolerate_dedicated;
};

/*
 * Where a pod's map and all-or-nothing settings come from: its own annotations (inline), or the
 * GPUPlacementMap its GS_MAP_REF_ANNOTATION names (sched/gpm.h). Everything after that is one path.
 */
struct map_source {
	char label[384];  /* how messages name the map: the annotation, or "GPUPlacementMap ns/name" */
	const char *text; /* the map, len bytes (borrowed); NULL: the pod has none */
	size_t len;
	const char *placement, *gang_timeout, *gang_size; /* the settings' text, NULL when absent */
	int by_ref;                                       /* 1: from an object; then: */
	int64_t generation;                               /* its metadata.generation */
};

/* What the response will say; filled by decide(), written by write_response(). */
struct verdict {
	int allowed;
	int deny_code; /* with !allowed */
	const char *deny_reason;
	const struct gs_jsonpatch *patch; /* non-NULL with at least one operation */
	char *warning;                    /* the device plugin warning, or NULL; owned, freed by gs_admission_review */
};

static const char *const outcome_names[GS_ADMISSION_OUTCOME_COUNT] = {
	[GS_ADMISSION_PATCHED] = "patched", [GS_ADMISSION_UNCHANGED] = "unchanged",
	[GS_ADMISSION_DENIED] = "denied",   [GS_ADMISSION_WARNED] = "warned",
	[GS_ADMISSION_SKIPPED] = "skipped", [GS_ADMISSION_BAD_REQUEST] = "bad_request",
};

const char *gs_admission_outcome_name(enum gs_admission_outcome o)
{
	if ((unsigned)o >= GS_ADMISSION_OUTCOME_COUNT)
		return "unknown";
	return outcome_names[o];
}

int gs_admission_new(const struct gs_admission_opts *o, struct gs_admission **out)
{
	GS_ASSERT(o && out);
	*out = NULL;
	if (!o->scheduler_name || !*o->scheduler_name || !o->annotation || !*o->annotation)
		return -EINVAL;
	struct gs_admission *a = gs_xcalloc(1, sizeof(*a));
	a->scheduler_name = gs_xstrdup(o->scheduler_name);
	a->annotation = gs_xstrdup(o->annotation);
	a->cache = o->cache;
	a->node_allows = o->node_allows;
	a->node_allows_ud = o->node_allows_ud;
	a->node_gpus = o->node_gpus;
	a->node_gpus_ud = o->node_gpus_ud;
	a->map_lookup = o->map_lookup;
	a->map_lookup_ud = o->map_lookup_ud;
	a->tolerate_dedicated = o->tolerate_dedicated;
	if (!a->cache) {
		a->cache = gs_map_cache_new(OWN_CACHE_ENTRIES, 0);
		a->own_cache = 1;
	}
	*out = a;
	return 0;
}

void gs_admission_free(struct gs_admission *a)
{
	if (!a)
		return;
	if (a->own_cache)
		gs_map_cache_free(a->cache);
	free(a->scheduler_name);
	free(a->annotation);
	free(a);
}

/* ---- small helpers ------------------------------------------------------------------------------ */

/* The string value of obj[key], or NULL when absent or not a string. */
static const char *get_str(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

static const cJSON *get_obj(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsObject(it) ? it : NULL;
}

/*
 * An upper bound on the values cJSON would allocate for body: every value but the first follows a
 * ',' or opens with '[' or '{'. Bytes inside strings do not count. Stops counting past limit.
 */
static size_t count_json_values(const char *body, size_t len, size_t limit)
{
	size_t n = 1;
	int in_str = 0;
	for (size_t i = 0; i < len && n <= limit; i++) {
		char c = body[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == ',' || c == '[' || c == '{') {
			n++;
		}
	}
	return n;
}

static int is_json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* ---- the patch for one container ---------------------------------------------------------------- */

/*
 * Appends to p what makes container c (at /spec/<field>/<ci>) carry CUDA_VISIBLE_DEVICES=devices:
 * nothing when it already does, else add the env array, append to it, or fix each occurrence of
 * the variable (the kubelet takes the last of duplicates; fixing all of them is simplest to reason
 * about). elem is the JSON of the whole env element. Sets *changed when an operation was added.
 */
static int patch_container(struct gs_jsonpatch *p, const char *field, size_t ci, const cJSON *c, const char *devices,
			   const char *elem, int *changed)
{
	struct gs_buf path, val;
	gs_buf_init(&path, 0);
	gs_buf_init(&val, 0);
	int r = gs_jsonpatch_ptr_append(&path, "spec");
	if (r == 0)
		r = gs_jsonpatch_ptr_append(&path, field);
	if (r == 0)
		r = gs_jsonpatch_ptr_append_index(&path, ci);
	if (r == 0)
		r = gs_jsonpatch_ptr_append(&path, "env");
	if (r < 0)
		goto out;
	size_t base = path.len;

	*changed = 0;
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(c, "env");
	if (!cJSON_IsArray(env)) {
		/* Absent (or null): "add" creates the member, and would also replace a non-array. */
		r = gs_buf_printf(&val, "[%s]", elem);
		if (r == 0)
			r = gs_jsonpatch_op(p, "add", path.data, val.data);
		*changed = 1;
		goto out;
	}

	int found = 0;
	size_t k = 0;
	for (const cJSON *e = env->child; e; e = e->next, k++) {
		if (!gs_str_eq(get_str(e, "name"), GS_ADMISSION_CUDA_ENV))
			continue;
		found = 1;
		const cJSON *value = cJSON_GetObjectItemCaseSensitive(e, "value");
		const cJSON *from = cJSON_GetObjectItemCaseSensitive(e, "valueFrom");
		int literal = cJSON_IsString(value) && (!from || cJSON_IsNull(from));
		if (literal && strcmp(value->valuestring, devices) == 0)
			continue; /* already right: the second delivery of a request changes nothing */
		path.len = base;
		path.data[base] = '\0';
		r = gs_jsonpatch_ptr_append_index(&path, k);
		if (r < 0)
			goto out;
		if (literal) {
			r = gs_jsonpatch_ptr_append(&path, "value");
			gs_buf_reset(&val);
			if (r == 0)
				r = gs_buf_append_json_str(&val, devices);
			if (r == 0)
				r = gs_jsonpatch_op(p, "replace", path.data, val.data);
		} else {
			/* valueFrom, or no usable value: the whole element goes, so no valueFrom survives. */
			r = gs_jsonpatch_op(p, "replace", path.data, elem);
		}
		if (r < 0)
			goto out;
		*changed = 1;
	}
	if (!found) {
		r = gs_jsonpatch_ptr_append(&path, "-");
		if (r == 0)
			r = gs_jsonpatch_op(p, "add", path.data, elem);
		*changed = 1;
	}
out:
	gs_buf_free(&path);
	gs_buf_free(&val);
	return r;
}

static int patch_pod(struct gs_jsonpatch *p, const cJSON *spec, const char *devices, int *n_changed)
{
	static const char *const fields[] = {"containers", "initContainers"};
	struct gs_buf elem;
	gs_buf_init(&elem, 0);
	int r = gs_buf_append_str(&elem, "{\"name\":\"" GS_ADMISSION_CUDA_ENV "\",\"value\":");
	if (r == 0)
		r = gs_buf_append_json_str(&elem, devices);
	if (r == 0)
		r = gs_buf_append_str(&elem, "}");
	*n_changed = 0;
	for (size_t f = 0; r == 0 && f < sizeof(fields) / sizeof(fields[0]); f++) {
		const cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, fields[f]);
		if (!cJSON_IsArray(list))
			continue;
		size_t ci = 0;
		for (const cJSON *c = list->child; r == 0 && c; c = c->next, ci++) {
			int changed = 0;
			if (!cJSON_IsObject(c))
				continue;
			r = patch_container(p, fields[f], ci, c, devices, elem.data, &changed);
			*n_changed += changed;
		}
	}
	gs_buf_free(&elem);
	return r;
}

/* ---- the dedicated-node toleration ---------------------------------------------------------------- */

int gs_admission_tolerates_dedicated(const cJSON *tolerations)
{
	const cJSON *t;
	if (!cJSON_IsArray(tolerations))
		return 0;
	cJSON_ArrayForEach(t, tolerations) {
		if (!cJSON_IsObject(t))
			continue;
		const char *key = get_str(t, "key");
		const char *op = get_str(t, "operator");
		const char *effect = get_str(t, "effect");
		int exists = gs_str_eq(op, "Exists");
		if (effect && *effect && !gs_str_eq(effect, GS_DEDICATED_TAINT_EFFECT))
			continue;
		/* An empty key with Exists is the wildcard (the API allows no other use of an empty key). */
		if ((!key || !*key) && exists)
			return 1;
		if (!gs_str_eq(key, GS_DEDICATED_TAINT_KEY))
			continue;
		if (exists || ((!op || !*op || gs_str_eq(op, "Equal")) && gs_str_eq(get_str(t, "value"), "true")))
			return 1;
	}
	return 0;
}

/* Appends the operation that adds GS_DEDICATED_TOLERATION to spec.tolerations (made when absent). */
static int patch_toleration(struct gs_jsonpatch *p, const cJSON *spec)
{
	if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(spec, "tolerations")))
		return gs_jsonpatch_op(p, "add", "/spec/tolerations/-", GS_DEDICATED_TOLERATION);
	/* Absent or null ("add" creates the member, and would also replace a non-array). */
	return gs_jsonpatch_op(p, "add", "/spec/tolerations", "[" GS_DEDICATED_TOLERATION "]");
}

/* ---- the nvidia.com/gpu request ------------------------------------------------------------------ */

/*
 * A device count: a quantity string of decimal digits only. The apiserver hands us quantities in
 * canonical form, where a whole number of devices is plain digits ("2"); anything else ("1.5", "-1",
 * "2k", "", a JSON number, null, a value past INT64_MAX) is not a count, and gets no warning rather
 * than a guess. Returns 0 with *out, or -EINVAL.
 */
static int parse_count(const cJSON *v, int64_t *out)
{
	if (!cJSON_IsString(v) || !v->valuestring || !*v->valuestring)
		return -EINVAL;
	int64_t n = 0;
	for (const char *p = v->valuestring; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		int d = *p - '0';
		if (n > (INT64_MAX - d) / 10)
			return -EINVAL;
		n = n * 10 + d;
	}
	*out = n;
	return 0;
}

/*
 * One container's nvidia.com/gpu: resources.requests, else resources.limits (the object may not be
 * defaulted yet, and Kubernetes defaults a missing request to the limit). A resources, requests or
 * limits that is not an object counts as absent. 0 when absent, -EINVAL when not a count.
 */
static int container_gpus(const cJSON *c, int64_t *out)
{
	const cJSON *resources = get_obj(c, "resources");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(get_obj(resources, "requests"), RESOURCE_GPU);
	if (!v)
		v = cJSON_GetObjectItemCaseSensitive(get_obj(resources, "limits"), RESOURCE_GPU);
	*out = 0;
	return v ? parse_count(v, out) : 0;
}

/* The largest (init) or the sum (regular) of the containers in spec[field]. -EINVAL: not a count. */
static int containers_gpus(const cJSON *spec, const char *field, int init, int64_t *out)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, field);
	*out = 0;
	if (!cJSON_IsArray(list))
		return 0;
	for (const cJSON *c = list->child; c; c = c->next) {
		int64_t n;
		if (!cJSON_IsObject(c))
			continue;
		if (container_gpus(c, &n) < 0)
			return -EINVAL;
		*out = init ? (n > *out ? n : *out) : gs_num_sat_add(*out, n);
	}
	return 0;
}

/*
 * The pod's effective nvidia.com/gpu request, as the kubelet and kube-scheduler count it:
 * max(largest init container, sum of regular containers) + spec.overhead. -1 when a value is not a
 * count.
 */
static int64_t pod_gpus(const cJSON *spec)
{
	int64_t sum, init, overhead = 0;
	if (containers_gpus(spec, "containers", 0, &sum) < 0 || containers_gpus(spec, "initContainers", 1, &init) < 0)
		return -1;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(get_obj(spec, "overhead"), RESOURCE_GPU);
	if (v && parse_count(v, &overhead) < 0)
		return -1;
	return gs_num_sat_add(sum > init ? sum : init, overhead);
}

/*
 * The device plugin warning for entry e, whole, into v->warning, and cut into res->message. The
 * text is checks.c's; its length is found by growing the buffer until it is no longer full.
 */
static int device_plugin_warning(const char *label, const struct gs_map_entry *e, struct gs_admission_result *res,
				 struct verdict *v)
{
	size_t size = 2 * strlen(e->devices) + strlen(label) + 512;
	for (;;) {
		char *msg = malloc(size);
		if (!msg)
			return -ENOMEM;
		gs_checks_device_plugin_warning(msg, size, res->gpu_requested, e, label);
		if (strlen(msg) + 1 < size || size >= WARNING_MAX) {
			v->warning = msg;
			break;
		}
		free(msg);
		size *= 2;
	}
	gs_str_copy(res->message, sizeof(res->message), v->warning);
	return 0;
}

/* ---- the decision ------------------------------------------------------------------------------- */

static int is_pod_create(const cJSON *req)
{
	const cJSON *kind = get_obj(req, "kind");
	const char *sub = get_str(req, "subResource");
	return kind && gs_str_eq(get_str(kind, "group"), "") && gs_str_eq(get_str(kind, "version"), "v1") &&
	       gs_str_eq(get_str(kind, "kind"), "Pod") && gs_str_eq(get_str(req, "operation"), "CREATE") &&
	       (!sub || !*sub);
}

/* A refusal: res->message says why (the caller writes it). */
static void deny(struct gs_admission_result *res, struct verdict *v, int code, const char *reason)
{
	res->outcome = GS_ADMISSION_DENIED;
	v->allowed = 0;
	v->deny_code = code;
	v->deny_reason = reason;
}

/* The pod's name for the log (a generateName prefix when it has none yet) and its namespace. */
static void pod_name_ns(const cJSON *req, const cJSON *meta, struct gs_admission_result *res)
{
	const char *name = get_str(meta, "name");
	if (!name || !*name)
		name = get_str(req, "name");
	if (!name || !*name)
		name = get_str(meta, "generateName");
	gs_str_copy(res->name, sizeof(res->name), name);
	if (!res->ns[0])
		gs_str_copy(res->ns, sizeof(res->ns), get_str(meta, "namespace"));
}

/* The map's entry for the pod's index; NULL with res WARNED and why when there is none. */
static const struct gs_map_entry *map_entry(const struct map_source *src, const struct gs_map *map, const cJSON *req,
					    const cJSON *meta, struct gs_admission_result *res)
{
	const cJSON *labels = get_obj(meta, "labels");
	const cJSON *annotations = get_obj(meta, "annotations");
	/* The pod's own name only: metadata.name, never a generateName prefix ("job-3-" is no index). */
	const char *pod_name = get_str(meta, "name");
	if (!pod_name || !*pod_name)
		pod_name = get_str(req, "name");
	if (gs_map_pod_index(get_str(labels, LABEL_POD_INDEX), get_str(annotations, ANNOTATION_JOB_INDEX), pod_name,
			     &res->index, &res->index_source) < 0) {
		res->index = -1;
		res->outcome = GS_ADMISSION_WARNED;
		snprintf(res->message, sizeof(res->message),
			 "%s: cannot tell the pod's index (no pod-index label, job completion index or -N name "
			 "suffix); " GS_ADMISSION_CUDA_ENV " not set",
			 src->label);
		return NULL;
	}
	const struct gs_map_entry *e = gs_map_lookup(map, res->index);
	if (!e) {
		res->outcome = GS_ADMISSION_WARNED;
		snprintf(res->message, sizeof(res->message),
			 "%s has no entry for pod index %ld; " GS_ADMISSION_CUDA_ENV " not set", src->label,
			 res->index);
	}
	return e;
}

/*
 * By reference: the operation recording the object's generation in GS_MAP_REF_GENERATION, unless the pod
 * already says it. metadata.annotations exists: the reference is one of them.
 */
static int patch_generation(struct gs_jsonpatch *p, const cJSON *annotations, int64_t generation, int *added)
{
	char want[24], value[32];
	struct gs_buf path;
	int r;

	snprintf(want, sizeof(want), "%lld", (long long)generation);
	*added = 0;
	if (gs_str_eq(get_str(annotations, GS_MAP_REF_GENERATION), want))
		return 0;
	snprintf(value, sizeof(value), "\"%s\"", want);
	gs_buf_init(&path, 0);
	r = gs_jsonpatch_ptr_append(&path, "metadata");
	if (r == 0)
		r = gs_jsonpatch_ptr_append(&path, "annotations");
	if (r == 0)
		r = gs_jsonpatch_ptr_append(&path, GS_MAP_REF_GENERATION);
	if (r == 0)
		r = gs_jsonpatch_op(p, "add", path.data, value);
	*added = r == 0;
	gs_buf_free(&path);
	return r;
}

/* Applies the pod's entry e: the node's policy, then the patch, then the device plugin's warning. 0, or
 * an allocation error. */
static int apply_entry(struct gs_admission *a, const cJSON *spec, const cJSON *annotations,
		       const struct map_source *src, const struct gs_map_entry *e, struct gs_jsonpatch *patch,
		       struct gs_admission_result *res, struct verdict *v)
{
	char why[400];
	int r;

	gs_str_copy(res->node, sizeof(res->node), e->node);
	gs_str_copy(res->devices, sizeof(res->devices), e->devices);
	if (a->node_allows && res->ns[0] && !a->node_allows(a->node_allows_ud, e->node, res->ns, why, sizeof(why))) {
		snprintf(res->message, sizeof(res->message), "%.64s line %d for index %ld: %.380s", src->label, e->line,
			 res->index, why);
		deny(res, v, 403, "Forbidden");
		return 0;
	}
	if (a->node_gpus && e->max_index >= 0) {
		int64_t gpus = a->node_gpus(a->node_gpus_ud, e->node, why, sizeof(why));
		if (gpus >= 0 && e->max_index >= gpus) {
			snprintf(res->message, sizeof(res->message),
				 "%.64s line %d for index %ld: node \"%.253s\" %.100s, so it has no device %ld",
				 src->label, e->line, res->index, e->node, why, e->max_index);
			deny(res, v, 400, "BadRequest");
			return 0;
		}
	}
	r = patch_pod(patch, spec, e->devices, &res->containers_patched);
	if (r == 0 && a->tolerate_dedicated &&
	    !gs_admission_tolerates_dedicated(cJSON_GetObjectItemCaseSensitive(spec, "tolerations"))) {
		r = patch_toleration(patch, spec);
		res->toleration_added = r == 0;
	}
	if (r == 0 && src->by_ref)
		r = patch_generation(patch, annotations, src->generation, &res->generation_added);
	if (r == 0)
		r = gs_jsonpatch_finish(patch);
	if (r < 0)
		return r;
	res->outcome = res->containers_patched || res->toleration_added || res->generation_added
			       ? GS_ADMISSION_PATCHED
			       : GS_ADMISSION_UNCHANGED;
	if (patch->n_ops)
		v->patch = patch;
	/* In addition to the patch: the entry's indices will not mean what the map's author thinks. */
	if (res->gpu_requested > 0)
		r = device_plugin_warning(src->label, e, res, v);
	return r;
}

/* The all-or-nothing settings of a pod of ours (sched/gang.h), its annotations' or its object's: 0 when
 * they parse (opts filled), else the pod is denied with the parser's message (after the object's name),
 * as a bad map is. */
static int gang_ok(const struct map_source *src, struct gs_gang_opts *opts, struct gs_admission_result *res,
		   struct verdict *v)
{
	int n = src->by_ref ? snprintf(res->message, sizeof(res->message), "%.380s: ", src->label) : 0;

	if (gs_gang_opts_parse_named(src->by_ref ? &gs_gang_spec_names : &gs_gang_annotation_names, src->placement,
				     src->gang_timeout, src->gang_size, opts, res->message + n,
				     sizeof(res->message) - (size_t)n) == 0) {
		res->message[0] = '\0';
		return 0;
	}
	deny(res, v, 400, "BadRequest");
	return -EINVAL;
}

/* A gang larger than the map can never have all its pods placed: denied while the user is watching. */
static int gang_fits(const struct map_source *src, const struct gs_gang_opts *opts, const struct gs_map *map,
		     struct gs_admission_result *res, struct verdict *v)
{
	size_t n = gs_map_count(map);

	if (!opts->all_or_nothing || !opts->size || (size_t)opts->size <= n)
		return 0;
	if (src->by_ref)
		snprintf(res->message, sizeof(res->message),
			 "%.380s " GS_GANG_SPEC_SIZE " %ld is more than the %zu %s of its spec.map: the gang could "
			 "never complete",
			 src->label, opts->size, n, n == 1 ? "entry" : "entries");
	else
		snprintf(res->message, sizeof(res->message),
			 "%s %ld is more than the %zu %s of %.64s: the gang could never complete", GS_GANG_SIZE,
			 opts->size, n, n == 1 ? "entry" : "entries", src->label);
	deny(res, v, 400, "BadRequest");
	return -EINVAL;
}

/* The map and settings a pod carries in its own annotations. */
static void inline_source(const struct gs_admission *a, const cJSON *annotations, struct map_source *src)
{
	gs_str_copy(src->label, sizeof(src->label), a->annotation);
	src->text = get_str(annotations, a->annotation);
	src->len = src->text ? strlen(src->text) : 0;
	src->placement = get_str(annotations, GS_GANG_PLACEMENT);
	src->gang_timeout = get_str(annotations, GS_GANG_TIMEOUT);
	src->gang_size = get_str(annotations, GS_GANG_SIZE);
}

/* A pod naming its map by reference carries neither a map nor settings of its own (sched/gpm.h): 0, or
 * -EINVAL with the pod denied. */
static int ref_alone(const struct gs_admission *a, const cJSON *annotations, struct gs_admission_result *res,
		     struct verdict *v)
{
	static const char *const gang[] = {GS_GANG_PLACEMENT, GS_GANG_TIMEOUT, GS_GANG_SIZE};

	if (cJSON_GetObjectItemCaseSensitive(annotations, a->annotation)) {
		snprintf(res->message, sizeof(res->message),
			 "the annotations %.64s and " GS_MAP_REF_ANNOTATION " are both set: a pod carries its map "
			 "inline or names a " GS_GPM_KIND ", not both",
			 a->annotation);
		deny(res, v, 400, "BadRequest");
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(gang) / sizeof(gang[0]); i++) {
		if (!cJSON_GetObjectItemCaseSensitive(annotations, gang[i]))
			continue;
		snprintf(res->message, sizeof(res->message),
			 "the annotation %s is set beside " GS_MAP_REF_ANNOTATION ": the all-or-nothing settings of "
			 "a map by reference are its " GS_GPM_KIND "'s spec (placement, gangTimeout, gangSize)",
			 gang[i]);
		deny(res, v, 400, "BadRequest");
		return -EINVAL;
	}
	return 0;
}

/* The GPUPlacementMap ref of the pod's namespace into src: 0, or -EINVAL with the pod denied. */
static int ref_source(struct gs_admission *a, const char *ref, struct map_source *src, struct gs_admission_result *res,
		      struct verdict *v)
{
	struct gs_gpm_view g;
	int r;

	snprintf(src->label, sizeof(src->label), GS_GPM_KIND " %.63s/%.253s", res->ns, ref);
	if (!a->map_lookup) {
		snprintf(res->message, sizeof(res->message),
			 GS_MAP_REF_ANNOTATION ": this webhook cannot resolve references (%.400s)", src->label);
		deny(res, v, 500, "InternalError");
		return -EINVAL;
	}
	memset(&g, 0, sizeof(g));
	r = a->map_lookup(a->map_lookup_ud, res->ns, ref, &g);
	if (r < 0) {
		snprintf(res->message, sizeof(res->message),
			 "the scheduler has not loaded its " GS_GPM_KIND "s yet (%.400s): retry", src->label);
		deny(res, v, 503, "ServiceUnavailable");
		return -EINVAL;
	}
	if (r == 0) {
		snprintf(res->message, sizeof(res->message), "%.400s not found", src->label);
		deny(res, v, 400, "BadRequest");
		return -EINVAL;
	}
	if (g.refused) {
		snprintf(res->message, sizeof(res->message), "%.200s is %.300s", src->label, g.refused);
		deny(res, v, 400, "BadRequest");
		return -EINVAL;
	}
	src->text = g.map_text ? g.map_text : "";
	src->len = g.map_text ? g.map_len : 0;
	src->placement = g.placement;
	src->gang_timeout = g.gang_timeout;
	src->gang_size = g.gang_size;
	src->by_ref = 1;
	src->generation = g.generation;
	res->map_generation = g.generation;
	return 0;
}

/* A pod of ours: its map (inline or by reference), the settings, the entry, the patch. 0 or an allocation
 * error. */
static int decide_ours(struct gs_admission *a, const cJSON *req, const cJSON *meta, const cJSON *spec,
		       struct gs_jsonpatch *patch, struct gs_admission_result *res, struct verdict *v)
{
	const cJSON *annotations = get_obj(meta, "annotations");
	const char *ref = get_str(annotations, GS_MAP_REF_ANNOTATION);
	struct map_source src;
	struct gs_gang_opts gang;

	memset(&src, 0, sizeof(src));
	if (ref)
		gs_str_copy(res->map_ref, sizeof(res->map_ref), ref);
	if (!ref)
		inline_source(a, annotations, &src);
	else if (ref_alone(a, annotations, res, v) < 0 || ref_source(a, ref, &src, res, v) < 0)
		return 0;
	if (gang_ok(&src, &gang, res, v) < 0 || !src.text)
		return 0;
	res->gpu_requested = pod_gpus(spec);

	struct gs_map *map = NULL;
	const struct gs_map_error *err = NULL;
	int r = gs_map_cache_get(a->cache, src.text, src.len, &map, &err);
	if (r < 0 && r != -EINVAL)
		return r;
	if (r < 0) {
		snprintf(res->message, sizeof(res->message), "%s: %s", src.label, err ? err->msg : "cannot be parsed");
		deny(res, v, 400, "BadRequest");
		return 0;
	}
	if (gang_fits(&src, &gang, map, res, v) < 0) {
		gs_map_unref(map);
		return 0;
	}
	const struct gs_map_entry *e = map_entry(&src, map, req, meta, res);
	r = e ? apply_entry(a, spec, annotations, &src, e, patch, res, v) : 0;
	gs_map_unref(map);
	return r;
}

/*
 * Fills res and v for a well-formed request. Returns 0, -EINVAL for a Pod CREATE without an object
 * (a protocol violation, not a pod to judge), or an allocation error.
 */
static int decide(struct gs_admission *a, const cJSON *req, struct gs_jsonpatch *patch, struct gs_admission_result *res,
		  struct verdict *v)
{
	v->allowed = 1;
	res->outcome = GS_ADMISSION_SKIPPED;
	if (!is_pod_create(req))
		return 0;
	const cJSON *obj = get_obj(req, "object");
	if (!obj) {
		gs_str_copy(res->message, sizeof(res->message), "Pod CREATE without request.object");
		return -EINVAL;
	}
	const cJSON *meta = get_obj(obj, "metadata");
	const cJSON *spec = get_obj(obj, "spec");
	const cJSON *annotations = get_obj(meta, "annotations");
	pod_name_ns(req, meta, res);

	/* Only our binding writes it (a Binding's annotations, the pods/binding subresource, never seen
	 * here); a pod created with it, of any scheduler, would claim GPUs by text (docs/webhook.md). */
	if (cJSON_GetObjectItemCaseSensitive(annotations, ANNOTATION_ASSIGNED)) {
		snprintf(res->message, sizeof(res->message),
			 "the annotation " ANNOTATION_ASSIGNED
			 " is set only by gpu-scheduler's binding; remove it from "
			 "the pod (or its template) and create it again");
		deny(res, v, 400, "BadRequest");
		return 0;
	}
	if (!gs_str_eq(get_str(spec, "schedulerName"), a->scheduler_name))
		return 0;
	return decide_ours(a, req, meta, spec, patch, res, v);
}

/* ---- the answer --------------------------------------------------------------------------------- */

static int write_response(struct gs_buf *out, const char *uid, const struct verdict *v,
			  const struct gs_admission_result *res)
{
	int r = gs_buf_append_str(out, "{\"apiVersion\":\"" ADMISSION_API_VERSION "\",\"kind\":\"AdmissionReview\","
				       "\"response\":{\"uid\":");
	if (r == 0)
		r = gs_buf_append_json_str(out, uid);
	if (r == 0)
		r = gs_buf_append_str(out, v->allowed ? ",\"allowed\":true" : ",\"allowed\":false");
	if (r == 0 && v->patch) {
		r = gs_buf_append_str(out, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
		if (r == 0)
			r = gs_jsonpatch_base64_append(out, v->patch->buf.data, v->patch->buf.len);
		if (r == 0)
			r = gs_buf_append_str(out, "\"");
	}
	if (r == 0 && !v->allowed) {
		r = gs_buf_printf(out, ",\"status\":{\"status\":\"Failure\",\"code\":%d,\"reason\":\"%s\",\"message\":",
				  v->deny_code, v->deny_reason);
		if (r == 0)
			r = gs_buf_append_json_str(out, res->message);
		if (r == 0)
			r = gs_buf_append_str(out, "}");
	}
	if (r == 0 && (res->outcome == GS_ADMISSION_WARNED || v->warning)) {
		r = gs_buf_append_str(out, ",\"warnings\":[");
		if (r == 0)
			r = gs_buf_append_json_str(out, v->warning ? v->warning : res->message);
		if (r == 0)
			r = gs_buf_append_str(out, "]");
	}
	if (r == 0)
		r = gs_buf_append_str(out, "}}");
	return r;
}

static int bad_request(struct gs_admission_result *res, const char *why)
{
	res->outcome = GS_ADMISSION_BAD_REQUEST;
	gs_str_copy(res->message, sizeof(res->message), why);
	return -EINVAL;
}

int gs_admission_review(struct gs_admission *a, const char *body, size_t len, struct gs_buf *out,
			struct gs_admission_result *res)
{
	GS_ASSERT(a && out && res);
	memset(res, 0, sizeof(*res));
	res->index = -1;

	if (len == 0 || !body)
		return bad_request(res, "empty body");
	if (count_json_values(body, len, GS_ADMISSION_MAX_VALUES) > GS_ADMISSION_MAX_VALUES)
		return bad_request(res, "too many JSON values");

	/* Names compare exactly: a NUL would end cJSON's copy of a string early (core/json_nul.h). */
	char *masked;
	const char *text = gs_json_mask_nul(body, len, &masked);
	if (!text)
		return -ENOMEM;
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		free(masked);
		return bad_request(res, "not JSON, or nested deeper than " STRINGIFY(CJSON_NESTING_LIMIT));
	}
	/* cJSON stops after the first value; anything but blanks after it makes the body not JSON. */
	while (end && end < text + len && is_json_space(*end))
		end++;

	struct gs_jsonpatch patch;
	gs_jsonpatch_init(&patch, GS_ADMISSION_PATCH_MAX);
	struct verdict v = {0};
	int r;
	const cJSON *req = get_obj(root, "request");
	const char *uid = get_str(req, "uid");
	if (!end || end != text + len) {
		r = bad_request(res, "trailing bytes after the JSON value");
		goto out;
	}
	if (!cJSON_IsObject(root)) {
		r = bad_request(res, "not a JSON object");
		goto out;
	}
	if (!gs_str_eq(get_str(root, "apiVersion"), ADMISSION_API_VERSION) ||
	    !gs_str_eq(get_str(root, "kind"), "AdmissionReview")) {
		r = bad_request(res, "not an " ADMISSION_API_VERSION " AdmissionReview");
		goto out;
	}
	if (!req || !uid || !*uid) {
		r = bad_request(res, "AdmissionReview without request or request.uid");
		goto out;
	}
	gs_str_copy(res->uid, sizeof(res->uid), uid);
	gs_str_copy(res->ns, sizeof(res->ns), get_str(req, "namespace"));
	gs_str_copy(res->name, sizeof(res->name), get_str(req, "name"));
	res->dry_run = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "dryRun"));

	r = decide(a, req, &patch, res, &v);
	if (r == -EINVAL) {
		res->outcome = GS_ADMISSION_BAD_REQUEST;
		goto out;
	}
	if (r == 0) {
		size_t mark = out->len;
		r = write_response(out, uid, &v, res);
		if (r < 0 && out->data) {
			out->len = mark;
			out->data[mark] = '\0';
		}
	}
out:
	free(v.warning);
	gs_jsonpatch_free(&patch);
	cJSON_Delete(root);
	free(masked);
	return r;
}
