/*
 * checks.c: see checks.h. The semantics follow kube-scheduler's NodeAffinity and TaintToleration
 * filters and k8s.io/api/core/v1's Toleration.ToleratesTaint, which the kubelet's admission reuses.
 */
#include "sched/checks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

/* ---- labels and selectors ---------------------------------------------------------------------- */

static const char *label_of(const struct gs_label *labels, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (strcmp(labels[i].key, key) == 0)
			return labels[i].value ? labels[i].value : "";
	return NULL;
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static const char *op_name(enum gs_sel_op op)
{
	static const char *const names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "(unknown)"};
	return (unsigned)op <= GS_SEL_INVALID ? names[op] : "?";
}

static int values_has(const struct gs_sel_req *q, const char *v)
{
	for (int i = 0; i < q->n_values; i++)
		if (strcmp(q->values[i], v) == 0)
			return 1;
	return 0;
}

/* One requirement against a value (NULL: the label is absent). */
static int req_matches(const struct gs_sel_req *q, const char *v)
{
	int64_t a, b;

	switch (q->op) {
	case GS_SEL_IN:
		return v && values_has(q, v);
	case GS_SEL_NOT_IN:
		return !v || !values_has(q, v);
	case GS_SEL_EXISTS:
		return v != NULL;
	case GS_SEL_DOES_NOT_EXIST:
		return v == NULL;
	case GS_SEL_GT:
	case GS_SEL_LT:
		if (!v || q->n_values != 1 || parse_i64(v, &a) < 0 || parse_i64(q->values[0], &b) < 0)
			return 0;
		return q->op == GS_SEL_GT ? a > b : a < b;
	default:
		return 0;
	}
}

/* "zone In [a, b]" into out. */
static void req_text(char *out, size_t size, const struct gs_sel_req *q)
{
	size_t o = (size_t)snprintf(out, size, "%s%s %s", q->field ? "field " : "", q->key, op_name(q->op));

	if (q->op == GS_SEL_EXISTS || q->op == GS_SEL_DOES_NOT_EXIST || o >= size)
		return;
	o += (size_t)snprintf(out + o, size - o, " [");
	for (int i = 0; i < q->n_values && o < size; i++)
		o += (size_t)snprintf(out + o, size - o, "%s%s", i ? ", " : "", q->values[i]);
	if (o < size)
		snprintf(out + o, size - o, "]");
}

/* 1 when the term matches; else 0 with why[] naming its first failing requirement. */
static int term_matches(const char *node, const struct gs_label *labels, int n_labels, const struct gs_sel_term *t,
			char *why, size_t size)
{
	char rq[256];

	if (t->n_reqs == 0) {
		snprintf(why, size, "an empty term matches no node");
		return 0;
	}
	for (int i = 0; i < t->n_reqs; i++) {
		const struct gs_sel_req *q = &t->reqs[i];
		const char *v;
		if (q->field)
			v = strcmp(q->key, "metadata.name") == 0 ? node : NULL;
		else
			v = label_of(labels, n_labels, q->key);
		/* matchFields supports In and NotIn on metadata.name only. */
		int ok = q->field && (strcmp(q->key, "metadata.name") != 0 || (q->op != GS_SEL_IN && q->op != GS_SEL_NOT_IN))
				 ? 0
				 : req_matches(q, v);
		if (!ok) {
			req_text(rq, sizeof(rq), q);
			if (v)
				snprintf(why, size, "%s: %s %s is \"%.63s\"", rq, q->field ? "field" : "label", q->key, v);
			else
				snprintf(why, size, "%s: %s", rq, q->field ? "unsupported field" : "no such label");
			return 0;
		}
	}
	return 1;
}

int gs_check_affinity(const char *node, const struct gs_label *labels, int n_labels,
		      const struct gs_label *selector, int n_selector, int has_affinity,
		      const struct gs_sel_term *terms, int n_terms, char *msg, size_t size)
{
	char why[384];

	for (int i = 0; i < n_selector; i++) {
		const char *v = label_of(labels, n_labels, selector[i].key);
		const char *want = selector[i].value ? selector[i].value : "";
		if (v && strcmp(v, want) == 0)
			continue;
		if (v)
			snprintf(msg, size, "node \"%s\" does not match the pod's nodeSelector: label %s is \"%.63s\", not \"%.63s\"",
				 node, selector[i].key, v, want);
		else
			snprintf(msg, size, "node \"%s\" does not match the pod's nodeSelector: it has no label %s=%.63s",
				 node, selector[i].key, want);
		return 0;
	}
	if (!has_affinity)
		return 1;
	why[0] = '\0';
	for (int i = 0; i < n_terms; i++) {
		char w[384];
		if (term_matches(node, labels, n_labels, &terms[i], w, sizeof(w)))
			return 1;
		if (i == 0)
			snprintf(why, sizeof(why), "%s", w);
	}
	if (n_terms == 0)
		snprintf(why, sizeof(why), "it has no nodeSelectorTerms");
	snprintf(msg, size, "node \"%s\" does not match the pod's required node affinity: %s%s", node,
		 n_terms > 1 ? "none of its terms matches; the first: " : "", why);
	return 0;
}

/* ---- taints ------------------------------------------------------------------------------------ */

const char *gs_taint_effect_name(enum gs_taint_effect e)
{
	switch (e) {
	case GS_EFFECT_ALL:
		return "";
	case GS_EFFECT_NO_SCHEDULE:
		return "NoSchedule";
	case GS_EFFECT_PREFER_NO_SCHEDULE:
		return "PreferNoSchedule";
	case GS_EFFECT_NO_EXECUTE:
		return "NoExecute";
	default:
		return "?";
	}
}

int gs_toleration_tolerates(const struct gs_toleration *t, const struct gs_taint *taint)
{
	if (t->effect != GS_EFFECT_ALL && t->effect != taint->effect)
		return 0;
	if (t->key && *t->key && strcmp(t->key, taint->key ? taint->key : "") != 0)
		return 0;
	if (t->exists)
		return 1;
	return strcmp(t->value ? t->value : "", taint->value ? taint->value : "") == 0;
}

const struct gs_taint *gs_check_taints(const char *node, const struct gs_taint *taints, int n_taints,
				       const struct gs_toleration *tols, int n_tols, char *msg, size_t size)
{
	for (int i = 0; i < n_taints; i++) {
		const struct gs_taint *tt = &taints[i];
		int ok = 0;
		if (tt->effect != GS_EFFECT_NO_SCHEDULE && tt->effect != GS_EFFECT_NO_EXECUTE)
			continue;
		for (int j = 0; j < n_tols && !ok; j++)
			ok = gs_toleration_tolerates(&tols[j], tt);
		if (ok)
			continue;
		snprintf(msg, size, "node \"%s\" has the taint %.63s%s%.63s:%s that the pod does not tolerate", node,
			 tt->key ? tt->key : "", tt->value && *tt->value ? "=" : "", tt->value ? tt->value : "",
			 gs_taint_effect_name(tt->effect));
		return tt;
	}
	return NULL;
}

/* ---- resources --------------------------------------------------------------------------------- */

int64_t gs_resources_ext(const struct gs_resources *r, const char *name)
{
	for (int i = 0; i < r->n_ext; i++)
		if (strcmp(r->ext[i].name, name) == 0)
			return r->ext[i].value;
	return 0;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* The slot for name in out, appended (value 0) when absent. */
static struct gs_res_ext *ext_slot(struct gs_resources *out, const char *name)
{
	for (int i = 0; i < out->n_ext; i++)
		if (strcmp(out->ext[i].name, name) == 0)
			return &out->ext[i];
	size_t len = strlen(name) + 1;
	struct gs_res_ext *e;

	out->ext = gs_xreallocarray(out->ext, (size_t)out->n_ext + 1, sizeof(*e));
	e = &out->ext[out->n_ext++];
	e->name = memcpy(gs_xmalloc(len), name, len);
	e->value = 0;
	return e;
}

void gs_pod_requests(const struct gs_pod_obj *p, struct gs_resources *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < p->n_ctr; i++) {
		const struct gs_resources *c = &p->ctr_req[i];
		out->milli_cpu = sat_add(out->milli_cpu, c->milli_cpu);
		out->memory = sat_add(out->memory, c->memory);
		out->ephemeral = sat_add(out->ephemeral, c->ephemeral);
		for (int j = 0; j < c->n_ext; j++) {
			struct gs_res_ext *e = ext_slot(out, c->ext[j].name);
			e->value = sat_add(e->value, c->ext[j].value);
		}
	}
	for (int i = 0; i < p->n_init; i++) {
		const struct gs_resources *c = &p->init_req[i];
		out->milli_cpu = max64(out->milli_cpu, c->milli_cpu);
		out->memory = max64(out->memory, c->memory);
		out->ephemeral = max64(out->ephemeral, c->ephemeral);
		for (int j = 0; j < c->n_ext; j++) {
			struct gs_res_ext *e = ext_slot(out, c->ext[j].name);
			e->value = max64(e->value, c->ext[j].value);
		}
	}
	out->milli_cpu = sat_add(out->milli_cpu, p->overhead.milli_cpu);
	out->memory = sat_add(out->memory, p->overhead.memory);
	out->ephemeral = sat_add(out->ephemeral, p->overhead.ephemeral);
	for (int j = 0; j < p->overhead.n_ext; j++) {
		struct gs_res_ext *e = ext_slot(out, p->overhead.ext[j].name);
		e->value = sat_add(e->value, p->overhead.ext[j].value);
	}
}

const char *gs_qty_format(char *out, size_t size, int64_t v, enum gs_qty_kind k)
{
	static const struct {
		const char *sfx;
		int64_t unit;
	} bin[] = {{"Ti", 1LL << 40}, {"Gi", 1LL << 30}, {"Mi", 1LL << 20}, {"Ki", 1LL << 10}};

	if (k == GS_QTY_CPU) {
		int64_t whole = v / 1000, frac = v % 1000;
		if (frac == 0)
			snprintf(out, size, "%" PRId64, whole);
		else if (frac % 100 == 0)
			snprintf(out, size, "%" PRId64 ".%" PRId64, whole, frac / 100);
		else if (frac % 10 == 0)
			snprintf(out, size, "%" PRId64 ".%02" PRId64, whole, frac / 10);
		else
			snprintf(out, size, "%" PRId64 ".%03" PRId64, whole, frac);
		return out;
	}
	if (k == GS_QTY_BYTES) {
		for (size_t i = 0; i < sizeof(bin) / sizeof(bin[0]); i++) {
			if (v >= bin[i].unit && v % bin[i].unit == 0) {
				snprintf(out, size, "%" PRId64 "%s", v / bin[i].unit, bin[i].sfx);
				return out;
			}
		}
	}
	snprintf(out, size, "%" PRId64, v);
	return out;
}

/* ---- the device plugin ------------------------------------------------------------------------- */

const char *gs_device_plugin_warning(char *msg, size_t size, int64_t requested, const struct gs_map_entry *e,
				     const char *annotation)
{
	char diff[160] = "";

	if (requested != e->n_devices)
		snprintf(diff, sizeof(diff), "; the entry names %d device%s but the containers request %" PRId64, e->n_devices,
			 e->n_devices == 1 ? "" : "s", requested);
	snprintf(msg, size,
		 "containers request %" PRId64 " nvidia.com/gpu: the device plugin then exposes only the GPUs it "
		 "allocates and numbers them from 0, so CUDA_VISIBLE_DEVICES=%s from %s line %d refers to those, "
		 "not to the node's GPUs %s%s",
		 requested, e->devices, annotation, e->line, e->devices, diff);
	return msg;
}
