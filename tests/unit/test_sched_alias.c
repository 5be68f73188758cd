/*
 * test_sched_alias.c: node aliases (sched.h, cfg.alias_label) against a model.
 *
 * The golden transcript 18-aliases shows each rule once; this test drives thousands of random node
 * and pod events (nodes gaining, losing and changing the alias label, cordoned, deleted, nodes named
 * like a map's names appearing) and, after every one, compares each waiting pod's reason with what a
 * brute-force scan of all nodes says its map name means now. A relabel that failed to place a waiter
 * again (the index's O(1) re-resolution) leaves a stale reason behind and fails here. Every binding
 * handed out must go to the node the scan names, and a bound pod never moves. gs_sched_audit runs
 * after every step too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"

#define LABEL "gpu-scheduler.io/node"

/* Node names: two that are also map names, four named like kind's workers. */
static const char *const node_names[] = {"node1", "node2", "gpu-worker", "gpu-worker2", "gpu-worker3", "gpu-worker4"};
#define N_NODES 6
/* Map names: node1 and node2 can be a real node or an alias; node3 only an alias; gpu-worker only a node. */
static const char *const map_names[] = {"node1", "node2", "node3", "gpu-worker"};
#define N_MAP 4
/* Alias values a node may carry (NULL: no label; "" : an empty value, no alias). */
static const char *const values[] = {NULL, "", "node1", "node2", "node3"};
#define N_VALUES 5
#define MAX_PODS 400

struct model_node {
	int present, cordoned;
	const char *value;
};

struct model_pod {
	char uid[16], name[32];
	int map;            /* index in map_names */
	int bound;          /* bound: to node bound_to */
	char bound_to[32];
	int gone;
};

struct model {
	struct gs_sched *s;
	struct model_node nodes[N_NODES];
	struct model_pod pods[MAX_PODS];
	int n_pods;
	unsigned rng;
	int64_t now;
	unsigned binds, waits_checked, ambiguous_seen, alias_binds;
};

static unsigned rnd(struct model *m, unsigned n)
{
	m->rng = m->rng * 1103515245u + 12345u;
	return (m->rng >> 16) % n;
}

/* What the map name means now, by scanning every node: the node index, -1 none, -2 several. */
static int expect(const struct model *m, const char *name, int *via)
{
	int found = -1;

	*via = 0;
	for (int i = 0; i < N_NODES; i++)
		if (m->nodes[i].present && strcmp(node_names[i], name) == 0)
			return i;
	for (int i = 0; i < N_NODES; i++) {
		const char *v = m->nodes[i].value;
		if (!m->nodes[i].present || !v || !*v || strcmp(v, name) != 0)
			continue;
		if (found >= 0)
			return -2;
		found = i;
	}
	*via = found >= 0;
	return found;
}

static void node_upsert(struct model *m, int i)
{
	struct gs_label l = {.key = (char *)LABEL, .value = (char *)m->nodes[i].value};
	struct gs_node_obj o = {
		.name = (char *)node_names[i],
		.ready = 1,
		.unschedulable = m->nodes[i].cordoned,
		.gpus = 4,
		.n_labels = m->nodes[i].value ? 1 : 0,
		.labels = m->nodes[i].value ? &l : NULL,
	};
	m->nodes[i].present = 1;
	assert_int_equal(gs_sched_node_upsert(m->s, &o, m->now), 0);
}

static void pod_upsert(struct model *m, struct model_pod *p)
{
	char map[64];
	struct gs_pod_obj o = {
		.uid = p->uid,
		.ns = (char *)"ns",
		.name = p->name,
		.scheduler_name = (char *)"gpu-scheduler",
		.map_text = map,
		.node_name = p->bound ? p->bound_to : NULL,
		.n_containers = 1,
	};
	snprintf(map, sizeof(map), "0=%s:0\n", map_names[p->map]);
	o.map_len = strlen(map);
	assert_int_equal(gs_sched_pod_upsert(m->s, &o, m->now), 0);
}

/* Every waiting pod waits for what the scan says; every bound pod is still bound. */
static void check_model(struct model *m)
{
	gs_sched_audit(m->s);
	for (int k = 0; k < m->n_pods; k++) {
		const struct model_pod *p = &m->pods[k];
		struct gs_sched_pod_info pi;
		int via, want;
		if (p->gone)
			continue;
		assert_int_equal(gs_sched_pod_info(m->s, p->uid, &pi), 0);
		if (p->bound) {
			assert_int_equal(pi.state, GS_POD_BOUND);
			continue;
		}
		want = expect(m, map_names[p->map], &via);
		if (pi.state == GS_POD_QUEUED || pi.state == GS_POD_WAITING) {
			/* The introspection resolves as the scan does. */
			if (want >= 0)
				assert_string_equal(pi.resolved, node_names[want]);
			else
				assert_null(pi.resolved);
		}
		if (pi.state != GS_POD_WAITING)
			continue; /* queued pods are checked again when pulled */
		m->waits_checked++;
		if (want == -2) {
			assert_int_equal(pi.reason, GS_WAIT_NODE_ALIAS_AMBIGUOUS);
			m->ambiguous_seen++;
		} else if (want == -1) {
			assert_int_equal(pi.reason, GS_WAIT_NODE_MISSING);
		} else {
			assert_true(m->nodes[want].cordoned);
			assert_int_equal(pi.reason, GS_WAIT_NODE_CORDONED);
			/* Both names in the message when resolved through the label. */
			if (via) {
				char who[80];
				snprintf(who, sizeof(who), "%s (node %s)", map_names[p->map], node_names[want]);
				assert_non_null(strstr(pi.message, who));
			}
		}
	}
}

static struct model_pod *pod_by_uid(struct model *m, const char *uid)
{
	for (int k = 0; k < m->n_pods; k++)
		if (strcmp(m->pods[k].uid, uid) == 0)
			return &m->pods[k];
	fail_msg("unknown uid %s", uid);
	return NULL;
}

/* Pulls every binding: each goes to the node the scan names; bound at once (the watch's MODIFIED). */
static void pull(struct model *m)
{
	struct gs_bind_decision d;
	struct gs_report r;

	while (gs_sched_next_bind(m->s, m->now, &d)) {
		struct model_pod *p = pod_by_uid(m, d.uid);
		int via, want = expect(m, map_names[p->map], &via);
		assert_true(want >= 0);
		assert_string_equal(d.node, node_names[want]);
		assert_string_equal(d.map_node, map_names[p->map]);
		assert_false(m->nodes[want].cordoned);
		assert_int_equal(gs_sched_bind_done(m->s, d.uid, GS_BIND_OK, m->now), 0);
		p->bound = 1;
		snprintf(p->bound_to, sizeof(p->bound_to), "%s", d.node);
		pod_upsert(m, p);
		m->binds++;
		m->alias_binds += via;
	}
	while (gs_sched_next_report(m->s, m->now, &r))
		;
}

static void step(struct model *m)
{
	unsigned op = rnd(m, 100);
	int i = (int)rnd(m, N_NODES);

	if (op < 35) { /* relabel: gain, lose, change */
		m->nodes[i].value = values[rnd(m, N_VALUES)];
		node_upsert(m, i);
	} else if (op < 45) { /* cordon or uncordon */
		m->nodes[i].cordoned = !m->nodes[i].cordoned;
		node_upsert(m, i);
	} else if (op < 55) {
		if (m->nodes[i].present) {
			assert_int_equal(gs_sched_node_delete(m->s, node_names[i], m->now), 0);
			m->nodes[i].present = 0;
		}
	} else if (op < 80 && m->n_pods < MAX_PODS) {
		struct model_pod *p = &m->pods[m->n_pods];
		snprintf(p->uid, sizeof(p->uid), "u%d", m->n_pods);
		snprintf(p->name, sizeof(p->name), "p%d-0", m->n_pods);
		p->map = (int)rnd(m, N_MAP);
		m->n_pods++;
		pod_upsert(m, p);
	} else if (op < 85 && m->n_pods) { /* a pod deleted */
		struct model_pod *p = &m->pods[rnd(m, (unsigned)m->n_pods)];
		if (!p->gone) {
			assert_int_equal(gs_sched_pod_delete(m->s, p->uid, m->now), 0);
			p->gone = 1;
		}
	} else {
		pull(m);
	}
	m->now += 10;
	check_model(m);
}

static void test_random_relabels(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 20; seed++) {
		struct gs_sched_config cfg;
		struct model *m = calloc(1, sizeof(*m));
		assert_non_null(m);
		gs_sched_config_init(&cfg);
		assert_string_equal(cfg.alias_label, LABEL); /* the default */
		cfg.check_env = 0;
		cfg.device_sharing_any = 1; /* the ledger is not what this test is about */
		m->s = gs_sched_new(&cfg);
		assert_non_null(m->s);
		m->rng = seed;
		m->now = 1000;
		for (int k = 0; k < 600; k++)
			step(m);
		pull(m);
		check_model(m);
		/* The walk reached the cases that matter. */
		assert_true(m->binds > 20 && m->alias_binds > 5);
		assert_true(m->waits_checked > 100 && m->ambiguous_seen > 0);
		gs_sched_free(m->s);
		free(m);
	}
}

/* Aliases off: a label never resolves anything. */
static void test_alias_off(void **state)
{
	struct gs_sched_config cfg;
	struct gs_label l = {.key = (char *)LABEL, .value = (char *)"node1"};
	struct gs_node_obj n = {.name = (char *)"gpu-worker", .ready = 1, .gpus = 4, .n_labels = 1, .labels = &l};
	struct gs_pod_obj p = {.uid = (char *)"u", .ns = (char *)"ns", .name = (char *)"a-0",
			       .scheduler_name = (char *)"gpu-scheduler", .map_text = "0=node1:0",
			       .map_len = 9, .n_containers = 1};
	struct gs_sched_pod_info pi;
	struct gs_bind_decision d;
	(void)state;

	gs_sched_config_init(&cfg);
	cfg.check_env = 0;
	cfg.alias_label = "";
	struct gs_sched *s = gs_sched_new(&cfg);
	assert_non_null(s);
	assert_int_equal(gs_sched_node_upsert(s, &n, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p, 0), 0);
	assert_int_equal(gs_sched_next_bind(s, 0, &d), 0);
	assert_int_equal(gs_sched_pod_info(s, "u", &pi), 0);
	assert_int_equal(pi.reason, GS_WAIT_NODE_MISSING);
	assert_null(pi.resolved);
	assert_null(strstr(pi.message, "label")); /* no talk of a label that means nothing */
	gs_sched_audit(s);
	gs_sched_free(s);

	/* The same with the label on: bound to gpu-worker, the map's name kept beside it. */
	gs_sched_config_init(&cfg);
	cfg.check_env = 0;
	s = gs_sched_new(&cfg);
	assert_int_equal(gs_sched_node_upsert(s, &n, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p, 0), 0);
	assert_int_equal(gs_sched_next_bind(s, 0, &d), 1);
	assert_string_equal(d.node, "gpu-worker");
	assert_string_equal(d.map_node, "node1");
	assert_string_equal(gs_wait_reason_name(GS_WAIT_NODE_ALIAS_AMBIGUOUS), "NODE_ALIAS_AMBIGUOUS");
	gs_sched_audit(s);
	gs_sched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_relabels),
		cmocka_unit_test(test_alias_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
