/*
 * test_sched_preempt.c: preemption's victims (sched_preempt.h) against a model, and its what-if
 * against a twin engine.
 *
 * The golden transcript 37-preemption shows each rule once. Here, thousands of random nodes: pods of
 * another scheduler bound to one node (cpu, a host port, device-plugin GPUs, a priority, some being
 * deleted), then a mapped pod of ours that waits there; the victims explain names must be those a
 * brute-force model finds by the same rules (every lower-priority pod not being deleted set aside; put
 * back the most important first; those that still let it fit reprieved), or none when the model says
 * the pod does not fit even without them. The what-if must change nothing: a twin engine fed the same
 * events but never asked must hand out the same bindings and reports, and gs_sched_audit (which
 * asserts no use stays set aside) runs after every explain.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"

#define MAX_PODS 12
#define CPUS     8 /* the node's */
#define GPUS     4

struct mpod {
	char uid[16], name[16];
	int64_t milli, prio, created;
	int port; /* 0: none */
	int gpus; /* nvidia.com/gpu requested (the device plugin) */
	int deleting;
};

static unsigned rng = 12345;
static unsigned rnd(unsigned n)
{
	rng = rng * 1103515245u + 12345u;
	return (rng >> 16) % n;
}

static void node_upsert(struct gs_sched *s)
{
	struct gs_node_obj o = {
		.name = (char *)"n1",
		.ready = 1,
		.gpus = GPUS,
		.alloc = {.milli_cpu = CPUS * 1000, .pods = 110},
	};
	assert_int_equal(gs_sched_node_upsert(s, &o, 0), 0);
}

/* A bound pod of another scheduler, or (ours) the pending mapped pod. */
static void pod_upsert(struct gs_sched *s, const struct mpod *p, int ours, int gpu)
{
	struct gs_res_ext ext = {.name = (char *)"nvidia.com/gpu", .value = p->gpus};
	struct gs_resources req = {.milli_cpu = p->milli, .n_ext = p->gpus ? 1 : 0, .ext = p->gpus ? &ext : NULL};
	struct gs_host_port hp = {.port = p->port, .proto = 'T'};
	char map[32];
	struct gs_pod_obj o = {
		.uid = (char *)p->uid,
		.ns = (char *)"ns",
		.name = (char *)p->name,
		.scheduler_name = (char *)(ours ? "gpu-scheduler" : "default-scheduler"),
		.node_name = ours ? NULL : (char *)"n1",
		.n_containers = 1,
		.n_ctr = 1,
		.ctr_req = &req,
		.priority = p->prio,
		.created_ms = p->created,
		.deleting = p->deleting,
		.n_host_ports = p->port ? 1 : 0,
		.host_ports = p->port ? &hp : NULL,
	};
	if (ours) {
		snprintf(map, sizeof(map), "0=n1:%d", gpu);
		o.map_text = map;
		o.map_len = strlen(map);
		o.cuda_state = GS_CUDA_SAME;
		o.cuda_value = map + 5;
	}
	assert_int_equal(gs_sched_pod_upsert(s, &o, 0), 0);
}

/* The model's fit of the pending pod beside the pods in `in`. */
static int model_fits(const struct mpod *pods, const int *in, int n, const struct mpod *q)
{
	int64_t milli = q->milli;
	int gpus = 1; /* its map's device */

	for (int i = 0; i < n; i++) {
		if (!in[i])
			continue;
		milli += pods[i].milli;
		gpus += pods[i].gpus;
		if (q->port && pods[i].port == q->port)
			return 0;
	}
	return milli <= CPUS * 1000 && gpus <= GPUS;
}

static int more_important(const struct mpod *a, const struct mpod *b)
{
	if (a->prio != b->prio)
		return a->prio > b->prio;
	if (a->created != b->created)
		return a->created < b->created;
	return strcmp(a->uid, b->uid) < 0;
}

/* The model's victims (names, most important first, comma-separated), or "" when none would do. */
static void model_victims(const struct mpod *pods, int n, const struct mpod *q, char *out, size_t size)
{
	int in[MAX_PODS], order[MAX_PODS], nc = 0;
	size_t at = 0;

	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		int cand = pods[i].prio < q->prio && !pods[i].deleting;
		in[i] = !cand;
		if (cand)
			order[nc++] = i;
	}
	if (!nc || !model_fits(pods, in, n, q))
		return;
	for (int i = 1; i < nc; i++) /* insertion sort, most important first */
		for (int j = i; j > 0 && more_important(&pods[order[j]], &pods[order[j - 1]]); j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (int k = 0; k < nc; k++) {
		in[order[k]] = 1;
		if (!model_fits(pods, in, n, q)) {
			in[order[k]] = 0;
			at += (size_t)snprintf(out + at, size - at, "%sns/%s", at ? "," : "", pods[order[k]].name);
		}
	}
}

/* What the engine's explain says: the victims as the model writes them, "" for none; *any: a plan. */
static void engine_victims(struct gs_sched *s, char *out, size_t size, int *planned)
{
	struct gs_sched_explain e;
	size_t at = 0;

	assert_int_equal(gs_sched_explain(s, "ns", "want-0", &e), 0);
	out[0] = '\0';
	*planned = e.preempt_node != NULL;
	for (size_t i = 0; i < e.n_victims; i++)
		at += (size_t)snprintf(out + at, size - at, "%s%s", at ? "," : "", e.victims[i].pod);
	gs_sched_explain_free(&e);
	gs_sched_audit(s); /* nothing left set aside */
}

/* Everything the engine hands out, as text. */
static void drain(struct gs_sched *s, char *out, size_t size)
{
	struct gs_bind_decision d;
	struct gs_report r;
	size_t at = 0;

	out[0] = '\0';
	while (gs_sched_next_bind(s, 0, &d))
		at += (size_t)snprintf(out + at, size - at, "bind %s %s|", d.uid, d.node);
	while (gs_sched_next_report(s, 0, &r))
		at += (size_t)snprintf(out + at, size - at, "report %s %d %s|", r.uid, (int)r.reason, r.message);
}

static void test_victims_model(void **state)
{
	struct gs_sched_config cfg = {.scheduler_name = "gpu-scheduler"};
	unsigned rounds = 3000, planned = 0, with_victims = 0;

	(void)state;
	for (unsigned round = 0; round < rounds; round++) {
		struct gs_sched *s = gs_sched_new(&cfg), *twin = gs_sched_new(&cfg);
		struct mpod pods[MAX_PODS], q = {.uid = "want", .name = "want-0"};
		int n = 1 + (int)rnd(MAX_PODS);
		char want[512], got[512], a[4096], b[4096];
		int plan;

		node_upsert(s);
		node_upsert(twin);
		for (int i = 0; i < n; i++) {
			struct mpod *p = &pods[i];
			memset(p, 0, sizeof(*p));
			snprintf(p->uid, sizeof(p->uid), "u%02d", i);
			snprintf(p->name, sizeof(p->name), "p%02d", i);
			p->milli = 500 * (int64_t)(1 + rnd(4));
			p->prio = (int64_t)(rnd(3) * 50);
			p->created = (int64_t)rnd(4);
			p->port = rnd(4) == 0 ? 80 + (int)rnd(2) : 0;
			p->gpus = rnd(3) == 0 ? 1 : 0;
			p->deleting = rnd(10) == 0;
			pod_upsert(s, p, 0, 0);
			pod_upsert(twin, p, 0, 0);
		}
		q.milli = 1000 * (int64_t)(1 + rnd(6));
		q.prio = (int64_t)(25 + rnd(3) * 50);
		q.port = rnd(3) == 0 ? 80 : 0;
		int gpu = (int)rnd(GPUS);
		pod_upsert(s, &q, 1, gpu);
		pod_upsert(twin, &q, 1, gpu);

		engine_victims(s, got, sizeof(got), &plan);
		if (plan) { /* it waits for what preemption may clear: the model agrees on the victims */
			planned++;
			model_victims(pods, n, &q, want, sizeof(want));
			if (strcmp(want, got) != 0)
				fail_msg("round %u: the model's victims \"%s\", the engine's \"%s\"", round, want, got);
			with_victims += got[0] != '\0';
		}
		/* Asked again: the same answer; and the twin, never asked, hands out the same. */
		engine_victims(s, want, sizeof(want), &plan);
		assert_string_equal(want, got);
		drain(s, a, sizeof(a));
		drain(twin, b, sizeof(b));
		assert_string_equal(a, b);
		gs_sched_free(s);
		gs_sched_free(twin);
	}
	print_message("  %u rounds: %u waited for what preemption may clear, %u with victims\n", rounds, planned, with_victims);
	/* The random shapes reach both outcomes often. */
	assert_true(planned > rounds / 4);
	assert_true(with_victims > planned / 5 && with_victims < planned);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_victims_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
