/*
 * decode_gpm.c: GPUPlacementMaps from JSON (decode_gpm.h), with decode_json.h's reading helpers.
 */
#include "k8s/decode_gpm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "k8s/decode_items.h"
#include "k8s/decode_json.h"
#include "sched/gang.h"

void gs_gpm_free(struct gs_gpm *g)
{
	free(g->ns);
	free(g->name);
	free(g->uid);
	free(g->resource_version);
	free(g->map_text);
	free(g->placement);
	free(g->gang_timeout);
	free(g->not_held);
	memset(g, 0, sizeof(*g));
}

void gs_gpm_view_of(const struct gs_gpm *g, struct gs_gpm_view *out)
{
	*out = (struct gs_gpm_view){
		.ns = g->ns,
		.name = g->name,
		.uid = g->uid,
		.generation = g->generation,
		.map_text = g->map_text,
		.map_len = g->map_len,
		.placement = g->placement,
		.gang_timeout = g->gang_timeout,
		.gang_size = g->gang_size[0] ? g->gang_size : NULL,
	};
}

/* metadata: identity (namespace, name and uid required), resourceVersion, generation. */
static int decode_meta(struct gs_dctx *d, const cJSON *obj, struct gs_gpm *out)
{
	const cJSON *meta;
	int r;

	if ((r = gs_dctx_get_obj(d, obj, "metadata", "", &meta)) < 0 ||
	    (r = gs_dctx_get_str_max(d, meta, "namespace", "metadata", GS_GPM_MAX_NAME, &out->ns)) < 0 ||
	    (r = gs_dctx_get_str_max(d, meta, "name", "metadata", GS_GPM_MAX_NAME, &out->name)) < 0)
		return r;
	if (!out->ns || !out->name)
		return gs_dctx_fail(d, "metadata.%s is missing", out->ns ? "name" : "namespace");
	snprintf(d->what, sizeof(d->what), "gpuplacementmap %s/%s", out->ns, out->name);
	if ((r = gs_dctx_get_str_max(d, meta, "uid", "metadata", GS_GPM_MAX_META, &out->uid)) < 0 ||
	    (r = gs_dctx_get_str_max(d, meta, "resourceVersion", "metadata", GS_GPM_MAX_META, &out->resource_version)) <
		    0 ||
	    (r = gs_dctx_get_int(d, meta, "generation", "metadata", 0, INT64_MAX, &out->generation)) < 0)
		return r;
	return out->uid ? 0 : gs_dctx_fail(d, "metadata.uid is missing");
}

/* spec: the map text (required) and the all-or-nothing settings. */
static int decode_spec(struct gs_dctx *d, const cJSON *obj, struct gs_gpm *out)
{
	const cJSON *spec;
	int64_t size = 0;
	int r;

	if ((r = gs_dctx_get_obj(d, obj, "spec", "", &spec)) < 0 ||
	    (r = gs_dctx_get_str_max(d, spec, "map", "spec", GS_GPM_MAX_MAP, &out->map_text)) < 0 ||
	    (r = gs_dctx_get_str_max(d, spec, "placement", "spec", GS_GPM_MAX_SETTING, &out->placement)) < 0 ||
	    (r = gs_dctx_get_str_max(d, spec, "gangTimeout", "spec", GS_GPM_MAX_SETTING, &out->gang_timeout)) < 0 ||
	    (r = gs_dctx_get_int(d, spec, "gangSize", "spec", 1, GS_GANG_SIZE_MAX, &size)) < 0)
		return r;
	if (!out->map_text)
		return gs_dctx_fail(d, "spec.map is missing");
	out->map_len = strlen(out->map_text);
	if (size > 0)
		snprintf(out->gang_size, sizeof(out->gang_size), "%lld", (long long)size);
	return 0;
}

/*
 * status: only whether the scheduler said it does not hold this generation (its Ready condition, reason
 * NotHeld, observedGeneration the object's), for the commands that judge as the daemon does
 * (gs_gpm.not_held). The scheduler's own words: read leniently, anything else is ignored.
 */
static void decode_not_held(const cJSON *obj, struct gs_gpm *out)
{
	const cJSON *c, *conds = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"),
								  "conditions");

	if (!cJSON_IsArray(conds))
		return;
	cJSON_ArrayForEach(c, conds) {
		const cJSON *reason = cJSON_GetObjectItemCaseSensitive(c, "reason");
		const cJSON *gen = cJSON_GetObjectItemCaseSensitive(c, "observedGeneration");
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(c, "message");

		if (cJSON_IsString(reason) && strcmp(reason->valuestring, "NotHeld") == 0 && cJSON_IsNumber(gen) &&
		    gen->valuedouble == (double)out->generation && cJSON_IsString(msg)) {
			out->not_held = gs_xstrndup(msg->valuestring, strnlen(msg->valuestring, GS_GPM_MAX_STATUS));
			return;
		}
	}
}

static int gpm_record(struct gs_dctx *d, const cJSON *obj, struct gs_gpm *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(obj))
		r = gs_dctx_fail(d, "not an object");
	else if ((r = decode_meta(d, obj, out)) == 0)
		r = decode_spec(d, obj, out);
	if (r < 0)
		gs_gpm_free(out);
	else
		decode_not_held(obj, out);
	return r;
}

int gs_decode_gpm(const cJSON *obj, struct gs_gpm *out, char *err, size_t errlen)
{
	struct gs_dctx d = {.err = err, .errlen = errlen, .what = "gpuplacementmap"};

	return gpm_record(&d, obj, out);
}

void gs_gpm_event_free(struct gs_gpm_event *ev)
{
	gs_gpm_free(&ev->gpm);
	free(ev->resource_version);
	free(ev->status_reason);
	free(ev->status_message);
	memset(ev, 0, sizeof(*ev));
}

/* gpm_record as decode_json.h's gs_dctx_record_fn. */
static int event_record(struct gs_dctx *d, const cJSON *obj, void *out, const char **orv)
{
	int r = gpm_record(d, obj, out);

	*orv = r == 0 ? ((struct gs_gpm *)out)->resource_version : NULL;
	return r;
}

int gs_decode_gpm_event(const char *json, size_t len, struct gs_gpm_event *ev, char *err, size_t errlen)
{
	struct gs_dctx d = {.err = err, .errlen = errlen, .what = "gpuplacementmap watch event"};
	int r;

	memset(ev, 0, sizeof(*ev));
	r = gs_dctx_event_record(&d, json, len, event_record, &ev->gpm, &ev->type, &ev->resource_version,
				 &ev->status_code, &ev->status_reason, &ev->status_message);
	if (r < 0)
		gs_gpm_event_free(ev);
	return r;
}

/* Item idx of a list: cb's result, 1 when it did not decode (ierr says why), or -ENOMEM. */
struct list_ctx {
	gs_gpm_item_cb cb;
	void *ud;
};

static int list_item(const cJSON *it, void *ud, char *ierr, size_t ierrlen)
{
	const struct list_ctx *x = ud;
	struct gs_gpm g;
	int r = gs_decode_gpm(it, &g, ierr, ierrlen);

	if (r < 0)
		return r == -ENOMEM ? r : 1;
	r = x->cb(&g, x->ud);
	gs_gpm_free(&g);
	return r;
}

int gs_decode_gpm_list(const char *json, size_t len, gs_gpm_item_cb cb, void *ud, char **resource_version,
		       char **continue_token, unsigned *skipped, char *err, size_t errlen)
{
	struct gs_dctx d = {.err = err, .errlen = errlen, .what = "gpuplacementmap list"};
	struct list_ctx x = {.cb = cb, .ud = ud};

	return gs_dctx_list_each(&d, json, len, list_item, &x, resource_version, continue_token, skipped);
}
