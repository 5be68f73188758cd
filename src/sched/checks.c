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
#include "core/num.h"
#include "core/str.h"

/* ---- labels and selectors ---------------------------------------------------------------------- */

static const char *label_of(const struct gs_label *labels, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (strcmp(labels[i].key, key) == 0)
			return labels[i].value ? labels[i].value : "";
	return NULL;
}

/* Go's strconv.ParseInt(s, 10, 64): an optional sign, then decimal digits only, within int64. */
static int parse_i64(const char *s, int64_t *out)
{
	const char *d = s && (*s == '+' || *s == '-') ? s + 1 : s;
	char *end;

	if (!d || !*d || strspn(d, "0123456789") != strlen(d))
		return -EINVAL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* apimachinery validation.IsValidLabelValue: at most 63 characters, empty or alphanumeric at both ends with
 * alphanumerics, '-', '_' and '.' between. */
static int valid_label_value(const char *v)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t n = strlen(v);

	if (n == 0)
		return 1;
	if (n > 63 || !strchr(alnum, v[0]) || !strchr(alnum, v[n - 1]))
		return 0;
	for (size_t i = 1; i + 1 < n; i++)
		if (!strchr(alnum, v[i]) && v[i] != '-' && v[i] != '_' && v[i] != '.')
			return 0;
	return 1;
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

/*
 * 0 when labels.NewRequirement accepts the matchExpressions requirement q, else -EINVAL with why[] saying
 * why. The apiserver (1.20 and later) accepts what the selector code then refuses: an In/NotIn value that
 * is not a label value, a Gt/Lt value that is not an integer; kube-scheduler and the kubelet then skip
 * the term (component-helpers nodeaffinity: a term that does not parse matches no node).
 */
static int req_invalid(const struct gs_sel_req *q, char *why, size_t size)
{
	int64_t ignored;

	switch (q->op) {
	case GS_SEL_IN:
	case GS_SEL_NOT_IN:
		if (q->n_values == 0) {
			snprintf(why, size, "no values (In and NotIn need one at least)");
			return -EINVAL;
		}
		break;
	case GS_SEL_EXISTS:
	case GS_SEL_DOES_NOT_EXIST:
		if (q->n_values != 0) {
			snprintf(why, size, "values given to %s", op_name(q->op));
			return -EINVAL;
		}
		break;
	case GS_SEL_GT:
	case GS_SEL_LT:
		if (q->n_values != 1) {
			snprintf(why, size, "%d values (Gt and Lt take exactly one)", q->n_values);
			return -EINVAL;
		}
		if (parse_i64(q->values[0], &ignored) < 0) {
			snprintf(why, size, "\"%.40s\" is not an integer", q->values[0]);
			return -EINVAL;
		}
		break;
	default:
		return 0; /* an unknown operator matches nothing (req_matches) */
	}
	for (int i = 0; i < q->n_values; i++) {
		if (!valid_label_value(q->values[i])) {
			snprintf(why, size, "\"%.40s\" is not a valid label value", q->values[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* 1 when the term matches; else 0 with why[] naming its first invalid requirement, or its first failing one. */
static int term_matches(const char *node, const struct gs_label *labels, int n_labels, const struct gs_sel_term *t,
			char *why, size_t size)
{
	char rq[256], bad[96];

	if (t->n_reqs == 0) {
		snprintf(why, size, "an empty term matches no node");
		return 0;
	}
	for (int i = 0; i < t->n_reqs; i++) {
		if (!t->reqs[i].field && req_invalid(&t->reqs[i], bad, sizeof(bad)) < 0) {
			req_text(rq, sizeof(rq), &t->reqs[i]);
			snprintf(why, size, "%.200s is not a valid selector: %.90s, so the term matches no node", rq,
				 bad);
			return 0;
		}
	}
	for (int i = 0; i < t->n_reqs; i++) {
		const struct gs_sel_req *q = &t->reqs[i];
		const char *v;
		if (q->field)
			v = strcmp(q->key, "metadata.name") == 0 ? node : NULL;
		else
			v = label_of(labels, n_labels, q->key);
		/* matchFields supports In and NotIn on metadata.name only. */
		int ok = q->field && (strcmp(q->key, "metadata.name") != 0 ||
				      (q->op != GS_SEL_IN && q->op != GS_SEL_NOT_IN))
				 ? 0
				 : req_matches(q, v);
		if (!ok) {
			req_text(rq, sizeof(rq), q);
			if (v)
				snprintf(why, size, "%s: %s %s is \"%.63s\"", rq, q->field ? "field" : "label", q->key,
					 v);
			else
				snprintf(why, size, "%s: %s", rq, q->field ? "unsupported field" : "no such label");
			return 0;
		}
	}
	return 1;
}

int gs_checks_label_selector(const struct gs_label *labels, int n_labels, const struct gs_label *match, int n_match,
			     const struct gs_sel_req *exprs, int n_exprs)
{
	char why[96];

	for (int i = 0; i < n_exprs; i++)
		if (exprs[i].op == GS_SEL_GT || exprs[i].op == GS_SEL_LT || exprs[i].op == GS_SEL_INVALID ||
		    req_invalid(&exprs[i], why, sizeof(why)) < 0)
			return -EINVAL;
	for (int i = 0; i < n_match; i++)
		if (!valid_label_value(match[i].value ? match[i].value : ""))
			return -EINVAL;
	if (n_match == 0 && n_exprs == 0)
		return 0;
	for (int i = 0; i < n_match; i++) {
		const char *v = label_of(labels, n_labels, match[i].key);
		if (!v || strcmp(v, match[i].value ? match[i].value : "") != 0)
			return 0;
	}
	for (int i = 0; i < n_exprs; i++)
		if (!req_matches(&exprs[i], label_of(labels, n_labels, exprs[i].key)))
			return 0;
	return 1;
}

int gs_checks_affinity(const char *node, const struct gs_label *labels, int n_labels, const struct gs_label *selector,
		       int n_selector, int has_affinity, const struct gs_sel_term *terms, int n_terms, char *msg,
		       size_t size)
{
	char why[384];

	for (int i = 0; i < n_selector; i++) {
		const char *v = label_of(labels, n_labels, selector[i].key);
		const char *want = selector[i].value ? selector[i].value : "";
		if (v && strcmp(v, want) == 0)
			continue;
		if (v)
			snprintf(
				msg, size,
				"node \"%s\" does not match the pod's nodeSelector: label %s is \"%.63s\", not \"%.63s\"",
				node, selector[i].key, v, want);
		else
			snprintf(msg, size,
				 "node \"%s\" does not match the pod's nodeSelector: it has no label %s=%.63s", node,
				 selector[i].key, want);
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

/* ---- the pod's OS ------------------------------------------------------------------------------ */

int gs_checks_os(const char *node, const struct gs_label *labels, int n_labels, const char *os_name, char *msg,
		 size_t size)
{
	const char *node_os = label_of(labels, n_labels, GS_LABEL_OS);

	if (!os_name || !node_os || strcmp(os_name, node_os) == 0)
		return 1;
	snprintf(msg, size,
		 "node \"%s\" runs %.31s (label %s) but the pod's spec.os.name is \"%.31s\": its kubelet would "
		 "refuse the pod (PodOSNotSupported)",
		 node, node_os, GS_LABEL_OS, os_name);
	return 0;
}

/* ---- taints ------------------------------------------------------------------------------------ */

const struct gs_taint *gs_checks_taints(const char *node, const struct gs_taint *taints, int n_taints,
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

/* acc += r, or acc = max(acc, r) with max, resource by resource (extended ones by name). */
static void res_fold(struct gs_resources *acc, const struct gs_resources *r, int max)
{
	acc->milli_cpu = max ? max64(acc->milli_cpu, r->milli_cpu) : gs_num_sat_add(acc->milli_cpu, r->milli_cpu);
	acc->memory = max ? max64(acc->memory, r->memory) : gs_num_sat_add(acc->memory, r->memory);
	acc->ephemeral = max ? max64(acc->ephemeral, r->ephemeral) : gs_num_sat_add(acc->ephemeral, r->ephemeral);
	for (int j = 0; j < r->n_ext; j++) {
		struct gs_res_ext *e = ext_slot(acc, r->ext[j].name);
		e->value = max ? max64(e->value, r->ext[j].value) : gs_num_sat_add(e->value, r->ext[j].value);
	}
}

/*
 * Regular container i as counted: its spec; after an in-place resize the larger of the spec and what the
 * status reports, or what the status reports alone when the resize is infeasible (component-helpers
 * determineContainerReqs, 1.32-1.33). Into *out (zeroed first; release with gs_resources_free).
 */
static void ctr_counted(const struct gs_pod_obj *p, int i, struct gs_resources *out)
{
	int has_status = p->ctr_status_set && p->ctr_status_set[i];

	memset(out, 0, sizeof(*out));
	if (!has_status || !p->resize_infeasible)
		res_fold(out, &p->ctr_req[i], 0);
	if (has_status)
		res_fold(out, &p->ctr_status_req[i], 1);
}

/* A resource pod-level requests may set (component-helpers IsSupportedPodLevelResource). */
static int pod_level_ext(const char *name)
{
	return strncmp(name, "hugepages-", 10) == 0;
}

void gs_checks_pod_requests(const struct gs_pod_obj *p, struct gs_resources *out)
{
	struct gs_resources c, sidecars = {0}, init_peak = {0}, use;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < p->n_ctr; i++) {
		ctr_counted(p, i, &c);
		res_fold(out, &c, 0);
		gs_resources_free(&c);
	}
	/* Init container i runs beside the sidecars started before it; a sidecar runs on beside everything. */
	for (int i = 0; i < p->n_init; i++) {
		memset(&use, 0, sizeof(use));
		res_fold(&use, &p->init_req[i], 0);
		if (p->init_sidecar && p->init_sidecar[i]) {
			res_fold(out, &p->init_req[i], 0);
			res_fold(&sidecars, &p->init_req[i], 0);
			gs_resources_free(&use);
			res_fold(&use, &sidecars, 0);
		} else {
			res_fold(&use, &sidecars, 0);
		}
		res_fold(&init_peak, &use, 1);
		gs_resources_free(&use);
	}
	res_fold(out, &init_peak, 1);
	gs_resources_free(&sidecars);
	gs_resources_free(&init_peak);
	/* Pod-level requests replace the containers' total for the resources they name (0 is not named: the
	 * apiserver refuses pod-level requests below the containers', so a 0 there leaves a total of 0 too). */
	if (p->has_pod_req) {
		if (p->pod_req.milli_cpu)
			out->milli_cpu = p->pod_req.milli_cpu;
		if (p->pod_req.memory)
			out->memory = p->pod_req.memory;
		for (int j = 0; j < p->pod_req.n_ext; j++)
			if (pod_level_ext(p->pod_req.ext[j].name))
				ext_slot(out, p->pod_req.ext[j].name)->value = p->pod_req.ext[j].value;
	}
	res_fold(out, &p->overhead, 0);
}

const char *gs_checks_qty_format(char *out, size_t size, int64_t v, enum gs_qty_kind k)
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

const char *gs_checks_device_plugin_warning(char *msg, size_t size, int64_t requested, const struct gs_map_entry *e,
					    const char *annotation)
{
	char diff[160] = "";

	if (requested != e->n_devices)
		snprintf(diff, sizeof(diff), "; the entry names %d device%s but the containers request %" PRId64,
			 e->n_devices, e->n_devices == 1 ? "" : "s", requested);
	snprintf(msg, size,
		 "containers request %" PRId64 " nvidia.com/gpu: the device plugin then exposes only the GPUs it "
		 "allocates and numbers them from 0, so CUDA_VISIBLE_DEVICES=%s from %s line %d refers to those, "
		 "not to the node's GPUs %s%s",
		 requested, e->devices, annotation, e->line, e->devices, diff);
	return msg;
}

int gs_checks_cuda_env(const char *label, enum gs_cuda_state st, const char *value, const struct gs_map_entry *e,
		       char *msg, size_t size)
{
	char q[64];

	switch (st) {
	case GS_CUDA_SAME:
		if (value && strcmp(value, e->devices) == 0)
			return 1;
		snprintf(msg, size,
			 "containers have CUDA_VISIBLE_DEVICES=%s but %s line %d gives %s for index %ld "
			 "(the pod was mutated for another map)",
			 value ? gs_str_quote(q, sizeof(q), value) : "\"\"", label, e->line, e->devices, e->index);
		break;
	case GS_CUDA_MIXED:
		snprintf(msg, size,
			 "containers disagree on CUDA_VISIBLE_DEVICES, want CUDA_VISIBLE_DEVICES=%s in every "
			 "container (the admission webhook did not mutate this pod)",
			 e->devices);
		break;
	default:
		snprintf(msg, size,
			 "containers lack CUDA_VISIBLE_DEVICES=%s (the admission webhook did not mutate this pod)",
			 e->devices);
		break;
	}
	return 0;
}
