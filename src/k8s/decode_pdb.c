/*
 * decode_pdb.c: PodDisruptionBudgets from JSON (decode_pdb.h), with decode_json.h's reading helpers.
 */
#include "k8s/decode_pdb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/decode_json.h"

static int decode_meta(struct gs_dctx *d, const cJSON *obj, struct gs_pdb_obj *out)
{
	const cJSON *meta;
	int r;

	if ((r = gs_dctx_get_obj(d, obj, "metadata", "", &meta)) < 0 ||
	    (r = gs_dctx_get_str_max(d, meta, "namespace", "metadata", GS_PDB_MAX_NAME, &out->ns)) < 0 ||
	    (r = gs_dctx_get_str_max(d, meta, "name", "metadata", GS_PDB_MAX_NAME, &out->name)) < 0)
		return r;
	if (!out->ns || !out->name || !*out->ns || !*out->name)
		return gs_dctx_fail(d, "metadata.%s is missing", out->ns && *out->ns ? "name" : "namespace");
	snprintf(d->what, sizeof(d->what), "poddisruptionbudget %s/%s", out->ns, out->name);
	if ((r = gs_dctx_get_str_max(d, meta, "uid", "metadata", GS_PDB_MAX_META, &out->uid)) < 0 ||
	    (r = gs_dctx_get_str_max(d, meta, "resourceVersion", "metadata", GS_PDB_MAX_META, &out->resource_version)) <
		    0)
		return r;
	return 0;
}

/* spec.selector: matchLabels and matchExpressions; absent or null is no selector (matches no pod). */
static int decode_selector(struct gs_dctx *d, const cJSON *obj, struct gs_pdb_obj *out)
{
	const cJSON *spec, *sel, *exprs, *q;
	char path[96];
	int r, i = 0, n;

	if ((r = gs_dctx_get_obj(d, obj, "spec", "", &spec)) < 0 ||
	    (r = gs_dctx_get_obj(d, spec, "selector", "spec", &sel)) < 0 || !sel)
		return r;
	out->selector = 1;
	if ((r = gs_decode__labels(d, sel, "matchLabels", "spec.selector", &out->match, &out->n_match)) < 0 ||
	    (r = gs_dctx_get_arr(d, sel, "matchExpressions", "spec.selector", &exprs)) < 0)
		return r;
	n = exprs ? cJSON_GetArraySize(exprs) : 0;
	if (out->n_match + n > GS_PDB_MAX_SELECTOR)
		return gs_dctx_fail(d, "spec.selector has more than %d requirements", GS_PDB_MAX_SELECTOR);
	if (n && !(out->exprs = calloc((size_t)n, sizeof(*out->exprs))))
		return gs_dctx_nomem(d);
	out->n_exprs = n; /* all counted first: a requirement that fails half-decoded is freed with the rest */
	cJSON_ArrayForEach(q, exprs) {
		struct gs_sel_req *e = &out->exprs[i];
		snprintf(path, sizeof(path), "spec.selector.matchExpressions[%d]", i++);
		if ((r = gs_decode__sel_req(d, q, path, 0, e)) < 0)
			return r;
		if (e->op == GS_SEL_GT || e->op == GS_SEL_LT)
			e->op = GS_SEL_INVALID; /* a label selector has neither */
	}
	return 0;
}

/* status: disruptionsAllowed (int32, >= 0 as the controller writes it) and disruptedPods' names. */
static int decode_status(struct gs_dctx *d, const cJSON *obj, struct gs_pdb_obj *out)
{
	const cJSON *st, *dp, *e;
	int r, n;

	if ((r = gs_dctx_get_obj(d, obj, "status", "", &st)) < 0 || !st ||
	    (r = gs_dctx_get_int(d, st, "disruptionsAllowed", "status", INT32_MIN, INT32_MAX,
				 &out->disruptions_allowed)) < 0 ||
	    (r = gs_dctx_get_obj(d, st, "disruptedPods", "status", &dp)) < 0 || !dp)
		return r;
	if ((n = cJSON_GetArraySize(dp)) > GS_PDB_MAX_DISRUPTED)
		return gs_dctx_fail(d, "status.disruptedPods has more than %d entries", GS_PDB_MAX_DISRUPTED);
	if (n && !(out->disrupted = calloc((size_t)n, sizeof(*out->disrupted))))
		return gs_dctx_nomem(d);
	cJSON_ArrayForEach(e, dp) {
		if (strlen(e->string) > GS_PDB_MAX_NAME)
			return gs_dctx_fail(d, "status.disruptedPods has a name longer than %d bytes", GS_PDB_MAX_NAME);
		if (!(out->disrupted[out->n_disrupted] = strdup(e->string)))
			return gs_dctx_nomem(d);
		out->n_disrupted++;
	}
	return 0;
}

static int pdb_record(struct gs_dctx *d, const cJSON *obj, struct gs_pdb_obj *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(obj))
		r = gs_dctx_fail(d, "not an object");
	else if ((r = decode_meta(d, obj, out)) == 0 && (r = decode_selector(d, obj, out)) == 0)
		r = decode_status(d, obj, out);
	if (r < 0)
		gs_pdb_obj_free(out);
	return r;
}

int gs_decode_pdb(const cJSON *obj, struct gs_pdb_obj *out, char *err, size_t errlen)
{
	struct gs_dctx d = {.err = err, .errlen = errlen, .what = "poddisruptionbudget"};

	return pdb_record(&d, obj, out);
}

void gs_pdb_event_free(struct gs_pdb_event *ev)
{
	gs_pdb_obj_free(&ev->pdb);
	free(ev->resource_version);
	free(ev->status_reason);
	free(ev->status_message);
	memset(ev, 0, sizeof(*ev));
}

/* pdb_record as decode_json.h's gs_dctx_record_fn. */
static int event_record(struct gs_dctx *d, const cJSON *obj, void *out, const char **orv)
{
	int r = pdb_record(d, obj, out);

	*orv = r == 0 ? ((struct gs_pdb_obj *)out)->resource_version : NULL;
	return r;
}

int gs_decode_pdb_event(const char *json, size_t len, struct gs_pdb_event *ev, char *err, size_t errlen)
{
	struct gs_dctx d = {.err = err, .errlen = errlen, .what = "poddisruptionbudget watch event"};
	int r;

	memset(ev, 0, sizeof(*ev));
	r = gs_dctx_event_record(&d, json, len, event_record, &ev->pdb, &ev->type, &ev->resource_version,
				 &ev->status_code, &ev->status_reason, &ev->status_message);
	if (r < 0)
		gs_pdb_event_free(ev);
	return r;
}

struct list_ctx {
	gs_pdb_item_cb cb;
	void *ud;
};

static int list_item(const cJSON *it, void *ud, char *ierr, size_t ierrlen)
{
	const struct list_ctx *x = ud;
	struct gs_pdb_obj b;
	int r = gs_decode_pdb(it, &b, ierr, ierrlen);

	if (r < 0)
		return r == -ENOMEM ? r : 1;
	r = x->cb(&b, x->ud);
	gs_pdb_obj_free(&b);
	return r;
}

int gs_decode_pdb_list(const char *json, size_t len, gs_pdb_item_cb cb, void *ud, char **resource_version,
		       char **continue_token, unsigned *skipped, char *err, size_t errlen)
{
	struct gs_dctx d = {.err = err, .errlen = errlen, .what = "poddisruptionbudget list"};
	struct list_ctx x = {.cb = cb, .ud = ud};

	return gs_dctx_list_each(&d, json, len, list_item, &x, resource_version, continue_token, skipped);
}
