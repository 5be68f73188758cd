/*
 * check_records.h: what every decoded record must hold (counts against arrays, no NULL where
 * src/sched/objects.h promises a string, values in their ranges), shared by the decoder fuzzers
 * (fuzz_decode.c for JSON, fuzz_pb.c for protobuf). CHECK aborts, which libFuzzer reports.
 */
#ifndef GS_FUZZ_CHECK_RECORDS_H
#define GS_FUZZ_CHECK_RECORDS_H

#include <stdlib.h>
#include <string.h>

#include "k8s/decode.h"
#include "sched/objects.h"

#define CHECK(e) ((e) ? (void)0 : abort())

static void check_res(const struct gs_resources *r)
{
	CHECK(r->milli_cpu >= 0 && r->memory >= 0 && r->ephemeral >= 0 && r->pods >= 0);
	CHECK(r->n_ext >= 0 && (r->n_ext == 0 || r->ext));
	for (int i = 0; i < r->n_ext; i++) {
		CHECK(r->ext[i].name && r->ext[i].value >= 0);
		for (int j = 0; j < i; j++)
			CHECK(strcmp(r->ext[i].name, r->ext[j].name) != 0);
	}
}

static void check_labels(const struct gs_label *l, int n)
{
	CHECK(n >= 0 && (n == 0 || l));
	for (int i = 0; i < n; i++)
		CHECK(l[i].key && l[i].value);
}

static void check_pod(const struct gs_pod_obj *p)
{
	CHECK(p->uid && p->ns && p->name);
	CHECK(p->map_text || (!p->map_len && !p->map_owned));
	CHECK(!p->map_owned || p->map_text == p->map_owned);
	CHECK(!p->map_text || !memchr(p->map_text, 0, p->map_len));
	/* A partial record: the owner, allow-shared and what gs_checks_pod_requests reads, but no map, env, constraints. */
	CHECK(!p->partial || (!p->map_text && p->n_containers == 0 && !p->cuda_value && !p->assigned && !p->n_terms &&
			      !p->n_host_ports && !p->n_tolerations && !p->n_node_selector && !p->os_name && !p->n_gates &&
			      !p->placement && !p->gang_timeout && !p->gang_size && !p->map_ref && !p->map_ref_generation));
	CHECK(p->priority >= INT32_MIN && p->priority <= INT32_MAX);
	CHECK(p->n_gates >= 0 && (p->n_gates > 0 || !p->first_gate));
	CHECK(p->partial || p->n_containers == p->n_init + p->n_ctr);
	CHECK((p->n_init == 0) == !p->init_req && (p->n_ctr == 0) == !p->ctr_req);
	CHECK(!p->init_sidecar || p->n_init > 0);
	for (int i = 0; i < p->n_init; i++) {
		check_res(&p->init_req[i]);
		CHECK(!p->init_sidecar || p->init_sidecar[i] <= 1);
	}
	CHECK(!p->ctr_status_req == !p->ctr_status_set && (!p->ctr_status_req || p->n_ctr > 0));
	for (int i = 0; i < p->n_ctr; i++) {
		check_res(&p->ctr_req[i]);
		if (p->ctr_status_req) {
			CHECK(p->ctr_status_set[i] <= 1);
			check_res(&p->ctr_status_req[i]);
			CHECK(p->ctr_status_set[i] || p->ctr_status_req[i].n_ext == 0);
		}
	}
	CHECK(p->stopped == 0 || p->stopped == 1);
	CHECK(p->resize_infeasible == 0 || p->resize_infeasible == 1);
	CHECK(p->has_pod_req == 0 || p->has_pod_req == 1);
	check_res(&p->pod_req);
	CHECK(p->has_pod_req || (p->pod_req.n_ext == 0 && !p->pod_req.milli_cpu && !p->pod_req.memory));
	check_res(&p->overhead);
	CHECK((p->n_host_ports == 0) == !p->host_ports);
	for (int i = 0; i < p->n_host_ports; i++) {
		const struct gs_host_port *h = &p->host_ports[i];
		CHECK(h->port >= 1 && h->port <= 65535 && strchr("TUS", h->proto) && h->proto);
		CHECK(!h->host_ip || (h->host_ip[0] && strcmp(h->host_ip, "0.0.0.0") != 0));
	}
	check_labels(p->node_selector, p->n_node_selector);
	CHECK(p->has_affinity || p->n_terms == 0);
	CHECK((p->n_terms == 0) == !p->terms);
	for (int i = 0; i < p->n_terms; i++) {
		const struct gs_sel_term *t = &p->terms[i];
		CHECK((t->n_reqs == 0) == !t->reqs);
		for (int j = 0; j < t->n_reqs; j++) {
			const struct gs_sel_req *q = &t->reqs[j];
			CHECK(q->key && q->op >= GS_SEL_IN && q->op <= GS_SEL_INVALID && (q->field == 0 || q->field == 1));
			CHECK((q->n_values == 0) == !q->values);
			for (int k = 0; k < q->n_values; k++)
				CHECK(q->values[k]);
		}
	}
	CHECK((p->n_tolerations == 0) == !p->tolerations);
	for (int i = 0; i < p->n_tolerations; i++) {
		const struct gs_toleration *t = &p->tolerations[i];
		CHECK(!t->key || t->key[0]);
		CHECK(t->effect >= GS_EFFECT_ALL && t->effect <= GS_EFFECT_OTHER && t->seconds >= -1);
	}
}

static void check_node(const struct gs_node_obj *n)
{
	CHECK(n->name);
	check_labels(n->labels, n->n_labels);
	CHECK((n->n_taints == 0) == !n->taints);
	for (int i = 0; i < n->n_taints; i++)
		CHECK(n->taints[i].effect > GS_EFFECT_ALL && n->taints[i].effect <= GS_EFFECT_OTHER);
	check_res(&n->alloc);
	CHECK(n->gpus >= -1 && n->gpu_capacity >= -1);
	CHECK(!n->boot_id || n->boot_id[0]); /* "" is absent, in both encodings */
}

/* A list decoder's item callback: each record checked, counted in *(unsigned *)ud. */
static int check_item(enum gs_obj_kind kind, const void *obj, void *ud)
{
	if (kind == GS_OBJ_POD)
		check_pod(obj);
	else
		check_node(obj);
	(*(unsigned *)ud)++;
	return 0;
}

#endif
