/*
 * objects.c: see objects.h. The records are plain data; freeing releases the strings and arrays and
 * leaves the record zeroed, so a second free is harmless and a freed record can be filled again.
 * Below the frees, what a record says read as Kubernetes reads it (a toleration against a taint);
 * the checks that use them are checks.c's.
 */
#include "sched/objects.h"

#include <stdlib.h>
#include <string.h>

void gs_resources_free(struct gs_resources *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n_ext; i++)
		free(r->ext[i].name);
	free(r->ext);
	memset(r, 0, sizeof(*r));
}

static void labels_free(struct gs_label *l, int n)
{
	for (int i = 0; i < n; i++) {
		free(l[i].key);
		free(l[i].value);
	}
	free(l);
}

static void reqs_free(struct gs_sel_req *q, int n)
{
	for (int j = 0; j < n; j++) {
		free(q[j].key);
		for (int k = 0; k < q[j].n_values; k++)
			free(q[j].values[k]);
		free(q[j].values);
	}
	free(q);
}

static void terms_free(struct gs_sel_term *t, int n)
{
	for (int i = 0; i < n; i++)
		reqs_free(t[i].reqs, t[i].n_reqs);
	free(t);
}

void gs_pdb_obj_free(struct gs_pdb_obj *b)
{
	if (!b)
		return;
	free(b->ns);
	free(b->name);
	free(b->uid);
	free(b->resource_version);
	labels_free(b->match, b->n_match);
	reqs_free(b->exprs, b->n_exprs);
	for (int i = 0; i < b->n_disrupted; i++)
		free(b->disrupted[i]);
	free(b->disrupted);
	memset(b, 0, sizeof(*b));
}

void gs_pod_obj_free(struct gs_pod_obj *p)
{
	if (!p)
		return;
	free(p->uid);
	free(p->ns);
	free(p->name);
	free(p->resource_version);
	free(p->scheduler_name);
	free(p->node_name);
	free(p->map_owned);
	free(p->label_pod_index);
	free(p->job_index);
	free(p->assigned);
	free(p->owner_kind);
	free(p->owner_name);
	free(p->owner_uid);
	free(p->placement);
	free(p->gang_timeout);
	free(p->gang_size);
	free(p->placeholder_for);
	free(p->nominated_node);
	free(p->map_ref);
	free(p->map_ref_generation);
	free(p->cuda_value);
	free(p->first_gate);
	for (int i = 0; i < p->n_init; i++)
		gs_resources_free(&p->init_req[i]);
	free(p->init_req);
	free(p->init_sidecar);
	for (int i = 0; i < p->n_ctr; i++) {
		gs_resources_free(&p->ctr_req[i]);
		if (p->ctr_status_req)
			gs_resources_free(&p->ctr_status_req[i]);
	}
	free(p->ctr_req);
	free(p->ctr_status_req);
	free(p->ctr_status_set);
	gs_resources_free(&p->pod_req);
	gs_resources_free(&p->overhead);
	free(p->os_name);
	for (int i = 0; i < p->n_host_ports; i++)
		free(p->host_ports[i].host_ip);
	free(p->host_ports);
	labels_free(p->node_selector, p->n_node_selector);
	labels_free(p->labels, p->n_labels);
	terms_free(p->terms, p->n_terms);
	for (int i = 0; i < p->n_tolerations; i++) {
		free(p->tolerations[i].key);
		free(p->tolerations[i].value);
	}
	free(p->tolerations);
	memset(p, 0, sizeof(*p));
}

void gs_node_obj_free(struct gs_node_obj *n)
{
	if (!n)
		return;
	free(n->name);
	free(n->resource_version);
	labels_free(n->labels, n->n_labels);
	for (int i = 0; i < n->n_taints; i++) {
		free(n->taints[i].key);
		free(n->taints[i].value);
	}
	free(n->taints);
	gs_resources_free(&n->alloc);
	free(n->allowed_ns);
	free(n->inuse);
	free(n->boot_id);
	memset(n, 0, sizeof(*n));
	n->gpus = -1;
	n->gpu_capacity = -1;
}

/* ---- what the records say, read as Kubernetes reads it --------------------------------------------- */

int64_t gs_resources_ext(const struct gs_resources *r, const char *name)
{
	for (int i = 0; i < r->n_ext; i++)
		if (strcmp(r->ext[i].name, name) == 0)
			return r->ext[i].value;
	return 0;
}

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
