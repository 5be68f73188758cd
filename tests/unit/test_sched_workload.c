/*
 * test_sched_workload.c: the owner-level view (sched.h, gs_sched_workload; sched/workload_out.h).
 *
 * A StatefulSet's pods fed to the engine as the watch would: one bound by our binding, one first seen
 * bound (a restart: its owner and index come from that record alone), one waiting for a node that does
 * not exist, one index of the map with no pod; beside them a pod of another owner, one of the same name
 * in another namespace, and a Job's. Rows, counts and both writers are checked, then the map of the
 * owner's template (more entries, or one that does not parse), and an orphaned pod leaving the view.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/buf.h"
#include "sched/gpm.h"
#include "sched/sched.h"
#include "sched/workload_out.h"

#define MAP "0=node1:0\n1=node1:1\n2=node9:0\n3=node1:2\n"

static struct gs_pod_obj pod(const char *uid, const char *ns, const char *name, const char *kind, const char *owner)
{
	return (struct gs_pod_obj){.uid = (char *)uid,
				   .ns = (char *)ns,
				   .name = (char *)name,
				   .scheduler_name = (char *)"gpu-scheduler",
				   .map_text = MAP,
				   .map_len = strlen(MAP),
				   .owner_kind = (char *)kind,
				   .owner_name = (char *)owner,
				   .owner_uid = (char *)(owner ? "sts-uid" : NULL),
				   .created_ms = 1000,
				   .n_containers = 1};
}

static struct gs_sched *engine(void)
{
	struct gs_sched_config cfg;
	struct gs_node_obj n1 = {.name = (char *)"node1", .ready = 1, .gpus = 4};

	gs_sched_config_init(&cfg);
	cfg.check_env = 0;
	struct gs_sched *s = gs_sched_new(&cfg);
	assert_non_null(s);
	assert_int_equal(gs_sched_node_upsert(s, &n1, 0), 0);
	return s;
}

/* The workload of the header comment, fed in; train-0 bound through our binding. */
static struct gs_sched *fed(void)
{
	struct gs_sched *s = engine();
	struct gs_bind_decision d;
	struct gs_pod_obj p0 = pod("u0", "ns", "train-0", "StatefulSet", "train");
	struct gs_pod_obj p1 = pod("u1", "ns", "train-1", "StatefulSet", "train");
	struct gs_pod_obj p2 = pod("u2", "ns", "train-2", "StatefulSet", "train");
	struct gs_pod_obj other = pod("u9", "ns", "other-3", "StatefulSet", "other");
	struct gs_pod_obj elsewhere = pod("u8", "ns2", "train-3", "StatefulSet", "train");
	struct gs_pod_obj job = pod("u7", "ns", "train-3", "Job", "train");

	p1.node_name = (char *)"node1";
	p1.assigned = (char *)"node1:1";
	p1.created_ms = 500;
	p2.created_ms = 2000;
	assert_int_equal(gs_sched_pod_upsert(s, &p0, 0), 0);
	assert_int_equal(gs_sched_next_bind(s, 0, &d), 1);
	assert_string_equal(d.name, "train-0");
	assert_int_equal(gs_sched_bind_done(s, "u0", GS_BIND_OK, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p1, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p2, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &other, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &elsewhere, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &job, 0), 0);
	gs_sched_audit(s);
	return s;
}

static void test_rows(void **state)
{
	struct gs_sched *s = fed();
	struct gs_sched_workload w;
	(void)state;

	assert_int_equal(gs_sched_workload(s, "ns", "StatefulSet", "train", NULL, 0, &w), 0);
	assert_int_equal(w.pods, 3);
	assert_int_equal(w.not_created, 1);
	assert_int_equal(w.n_rows, 4);
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_PODS);
	assert_int_equal(w.map_entries, 4);
	assert_string_equal(w.owner_uid, "sts-uid");
	assert_int_equal(w.by_state[GS_POD_BOUND], 2);
	assert_int_equal(w.by_state[GS_POD_WAITING], 1);

	/* Bound through our binding: its use's node and the devices it holds. */
	assert_int_equal(w.rows[0].index, 0);
	assert_true(w.rows[0].created);
	assert_string_equal(w.rows[0].pod.name, "train-0");
	assert_int_equal(w.rows[0].pod.state, GS_POD_BOUND);
	assert_string_equal(w.rows[0].node, "node1");
	assert_string_equal(w.rows[0].devices, "0");
	assert_int_equal(w.rows[0].map_line, 1);
	/* First seen bound: owner and index from that record, devices from its trusted claim. */
	assert_int_equal(w.rows[1].index, 1);
	assert_string_equal(w.rows[1].pod.name, "train-1");
	assert_int_equal(w.rows[1].pod.state, GS_POD_BOUND);
	assert_string_equal(w.rows[1].node, "node1");
	assert_string_equal(w.rows[1].devices, "1");
	/* Waiting: its entry's node, its reason. */
	assert_int_equal(w.rows[2].index, 2);
	assert_int_equal(w.rows[2].pod.state, GS_POD_WAITING);
	assert_int_equal(w.rows[2].pod.reason, GS_WAIT_NODE_MISSING);
	assert_string_equal(w.rows[2].node, "node9");
	assert_string_equal(w.rows[2].devices, "0");
	/* The map's index 3 has no pod of this owner (the other namespace's and the Job's do not count). */
	assert_int_equal(w.rows[3].index, 3);
	assert_false(w.rows[3].created);
	assert_string_equal(w.rows[3].node, "node1");
	assert_string_equal(w.rows[3].devices, "2");
	assert_int_equal(w.rows[3].map_line, 4);
	gs_sched_workload_free(&w);

	/* The Job of the same name is another workload. */
	assert_int_equal(gs_sched_workload(s, "ns", "Job", "train", NULL, 0, &w), 0);
	assert_int_equal(w.pods, 1);
	assert_string_equal(w.rows[3].pod.name, "train-3");
	gs_sched_workload_free(&w);

	/* Nothing known: an empty view. */
	assert_int_equal(gs_sched_workload(s, "ns", "StatefulSet", "nope", NULL, 0, &w), 0);
	assert_int_equal(w.n_rows, 0);
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_NONE);
	assert_null(w.owner_uid);
	gs_sched_workload_free(&w);
	gs_sched_free(s);
}

static void test_template_map(void **state)
{
	struct gs_sched *s = fed();
	struct gs_sched_workload w;
	const char *tmpl = "0=node1:0\n1=node1:1\n2=node9:0\n3=node1:2\n4=node2:0,1\n";
	(void)state;

	assert_int_equal(gs_sched_workload(s, "ns", "StatefulSet", "train", tmpl, strlen(tmpl), &w), 0);
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_TEMPLATE);
	assert_int_equal(w.map_entries, 5);
	assert_int_equal(w.not_created, 2);
	assert_int_equal(w.n_rows, 5);
	assert_int_equal(w.rows[4].index, 4);
	assert_string_equal(w.rows[4].node, "node2");
	assert_string_equal(w.rows[4].devices, "0,1");
	assert_int_equal(w.rows[4].map_line, 5);
	gs_sched_workload_free(&w);

	/* A template map that does not parse: said, and only the pods are rows. */
	assert_int_equal(gs_sched_workload(s, "ns", "StatefulSet", "train", "0=node1", 7, &w), 0);
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_NONE);
	assert_true(strstr(w.map_error, "line 1") != NULL);
	assert_int_equal(w.n_rows, 3);
	assert_int_equal(w.not_created, 0);
	gs_sched_workload_free(&w);
	gs_sched_free(s);
}

/* A template by reference (gs_sched_workload_ref): with no pod yet, every index of the object's map is a
 * row; an object whose map does not parse, or that the engine does not hold, is said. */
static void test_template_ref(void **state)
{
	struct gs_sched *s = engine();
	struct gs_sched_workload w;
	const char *map = "0=node1:0\n1=node2:1\n";
	struct gs_gpm_view g = {.ns = "ns", .name = "ranks", .uid = "g1", .generation = 2, .map_text = map,
				.map_len = strlen(map)};
	struct gs_gpm_view bad = {.ns = "ns", .name = "bad", .uid = "g2", .generation = 1, .map_text = "0_node1",
				  .map_len = 7};
	struct gs_buf b;
	(void)state;

	assert_int_equal(gs_sched_gpm_upsert(s, &g, 0), 0);
	assert_int_equal(gs_sched_gpm_upsert(s, &bad, 0), 0);
	assert_int_equal(gs_sched_workload_ref(s, "ns", "StatefulSet", "train", "ranks", &w), 0);
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_OBJECT);
	assert_string_equal(w.map_ref, "ranks");
	assert_int_equal(w.map_entries, 2);
	assert_int_equal(w.pods, 0);
	assert_int_equal(w.not_created, 2);
	assert_int_equal(w.n_rows, 2);
	assert_string_equal(w.rows[1].node, "node2");
	assert_string_equal(w.rows[1].devices, "1");
	gs_buf_init(&b, 0);
	assert_int_equal(gs_workload_text(&w, 1000, &b), 0);
	assert_non_null(strstr(b.data, "StatefulSet ns/train: 0 pods, 2 indices not created; the map has 2 entries "
				       "(from GPUPlacementMap ns/ranks)\n"));
	gs_buf_free(&b);
	gs_sched_workload_free(&w);

	assert_int_equal(gs_sched_workload_ref(s, "ns", "StatefulSet", "train", "bad", &w), 0);
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_NONE);
	assert_string_equal(w.map_error, "GPUPlacementMap ns/bad (generation 1) spec.map: line 1: missing '=' "
					 "between index and node");
	assert_int_equal(w.n_rows, 0);
	gs_sched_workload_free(&w);

	assert_int_equal(gs_sched_workload_ref(s, "ns", "StatefulSet", "train", "nope", &w), 0);
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_NONE);
	assert_string_equal(w.map_error, "GPUPlacementMap ns/nope does not exist");
	gs_sched_workload_free(&w);
	/* No reference: gs_sched_workload without a map. */
	assert_int_equal(gs_sched_workload_ref(s, "ns", "StatefulSet", "train", NULL, &w), 0);
	assert_int_equal(w.map_from, GS_WORKLOAD_MAP_NONE);
	assert_string_equal(w.map_error, "");
	gs_sched_workload_free(&w);
	gs_sched_free(s);
}

/* Orphaned (--cascade=orphan), the bound pod leaves its workload; adopted again, it comes back. */
static void test_orphaned(void **state)
{
	struct gs_sched *s = fed();
	struct gs_sched_workload w;
	struct gs_pod_obj part = {.uid = (char *)"u1",
				  .ns = (char *)"ns",
				  .name = (char *)"train-1",
				  .scheduler_name = (char *)"gpu-scheduler",
				  .node_name = (char *)"node1",
				  .partial = 1};
	(void)state;

	assert_int_equal(gs_sched_pod_upsert(s, &part, 0), 0);
	assert_int_equal(gs_sched_workload(s, "ns", "StatefulSet", "train", NULL, 0, &w), 0);
	assert_int_equal(w.pods, 2);
	assert_int_equal(w.not_created, 2);
	assert_false(w.rows[1].created);
	assert_int_equal(w.rows[1].index, 1);
	gs_sched_workload_free(&w);

	part.owner_kind = (char *)"StatefulSet";
	part.owner_name = (char *)"train";
	part.owner_uid = (char *)"sts-uid";
	assert_int_equal(gs_sched_pod_upsert(s, &part, 0), 0);
	assert_int_equal(gs_sched_workload(s, "ns", "StatefulSet", "train", NULL, 0, &w), 0);
	assert_int_equal(w.pods, 3);
	assert_string_equal(w.rows[1].pod.name, "train-1");
	assert_int_equal(w.rows[1].index, 1); /* kept from the whole record */
	gs_sched_workload_free(&w);
	gs_sched_audit(s);
	gs_sched_free(s);
}

static void test_out(void **state)
{
	struct gs_sched *s = fed();
	struct gs_sched_workload w;
	struct gs_buf b;
	(void)state;

	assert_int_equal(gs_sched_workload(s, "ns", "StatefulSet", "train", NULL, 0, &w), 0);
	gs_buf_init(&b, 0);
	assert_int_equal(gs_workload_json(&w, 3000, &b), 0);
	assert_non_null(strstr(b.data, "{\"kind\":\"StatefulSet\",\"namespace\":\"ns\",\"name\":\"train\","
				       "\"ownerUid\":\"sts-uid\",\"map\":{\"from\":\"pods\",\"entries\":4},\"pods\":3,"
				       "\"notCreated\":1,\"byState\":{\"WAITING\":1,"));
	assert_non_null(strstr(b.data, "\"gang\":null,\"rows\":[{\"index\":0,\"state\":\"BOUND\",\"pod\":\"train-0\","
				       "\"uid\":\"u0\",\"node\":\"node1\",\"devices\":\"0\",\"mapLine\":1,"
				       "\"ageSeconds\":2}"));
	assert_non_null(strstr(b.data, "{\"index\":2,\"state\":\"WAITING\",\"pod\":\"train-2\",\"uid\":\"u2\","
				       "\"reason\":\"NODE_MISSING\",\"message\":\"node \\\"node9\\\""));
	assert_non_null(strstr(b.data, "{\"index\":3,\"state\":\"NOT_CREATED\",\"node\":\"node1\",\"devices\":\"2\","
				       "\"mapLine\":4}]}\n"));
	gs_buf_free(&b);

	gs_buf_init(&b, 0);
	assert_int_equal(gs_workload_text(&w, 3000, &b), 0);
	assert_non_null(strstr(b.data, "StatefulSet ns/train: 3 pods (1 WAITING, 2 BOUND), 1 index not created; the "
				       "map has 4 entries (from its newest pod)\n\n"
				       "INDEX  POD      NODE   DEVICES  STATE        REASON        AGE\n"
				       "0      train-0  node1  0        BOUND        -             2s\n"
				       "1      train-1  node1  1        BOUND        -             2s\n"
				       "2      train-2  node9  0        WAITING      NODE_MISSING  1s\n"
				       "3      -        node1  2        not created  -             -\n"
				       "\nWaiting:\n  train-2: NODE_MISSING: node \"node9\""));
	gs_buf_free(&b);
	gs_sched_workload_free(&w);
	gs_sched_free(s);

	assert_string_equal(gs_sched_workload_kind("statefulset"), "StatefulSet");
	assert_string_equal(gs_sched_workload_kind("STS"), "StatefulSet");
	assert_string_equal(gs_sched_workload_kind("Jobs"), "Job");
	assert_null(gs_sched_workload_kind("deployment"));
	assert_null(gs_sched_workload_kind(NULL));
}

/* An all-or-nothing workload: the view carries its gang (explain's), and both writers show it. */
static void test_gang(void **state)
{
	(void)state;
	struct gs_sched *s = engine();
	struct gs_sched_workload w;
	struct gs_bind_decision d;
	struct gs_buf b;
	struct gs_pod_obj p0 = pod("g0", "ns", "ring-0", "StatefulSet", "ring");
	struct gs_pod_obj p2 = pod("g2", "ns", "ring-2", "StatefulSet", "ring");

	p0.placement = p2.placement = (char *)"all-or-nothing";
	assert_int_equal(gs_sched_pod_upsert(s, &p0, 0), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &p2, 0), 0);
	assert_int_equal(gs_sched_next_bind(s, 0, &d), 0); /* ring-2's node9 is missing: none bound */
	gs_sched_audit(s);
	assert_int_equal(gs_sched_workload(s, "ns", "StatefulSet", "ring", NULL, 0, &w), 0);
	assert_int_equal(w.gang.size, 4); /* the map's entries */
	assert_int_equal(w.gang.members, 2);
	assert_int_equal(w.gang.fitting, 1);
	assert_false(w.gang.ran);
	assert_non_null(w.gang.blockers);
	assert_non_null(strstr(w.gang.blockers, "index 2 (ring-2) NODE_MISSING"));
	assert_non_null(strstr(w.gang.blockers, "2 of 4 members not created yet"));
	gs_buf_init(&b, 0);
	assert_int_equal(gs_workload_json(&w, 1000, &b), 0);
	assert_non_null(strstr(b.data, "\"gang\":{\"owner\":\"StatefulSet\",\"name\":\"ring\",\"size\":4,"
				       "\"members\":2,\"fitting\":1,\"state\":\"gathering\""));
	gs_buf_reset(&b);
	assert_int_equal(gs_workload_text(&w, 1000, &b), 0);
	assert_non_null(strstr(b.data, "All-or-nothing gang StatefulSet ring: 4 members must fit together"));
	gs_buf_free(&b);
	gs_sched_workload_free(&w);
	/* A workload placed pod by pod has no gang. */
	assert_int_equal(gs_sched_workload(s, "ns", "StatefulSet", "train", NULL, 0, &w), 0);
	assert_int_equal(w.gang.size, 0);
	gs_buf_init(&b, 0);
	assert_int_equal(gs_workload_json(&w, 1000, &b), 0);
	assert_non_null(strstr(b.data, "\"gang\":null"));
	gs_buf_free(&b);
	gs_sched_workload_free(&w);
	gs_sched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows), cmocka_unit_test(test_template_map), cmocka_unit_test(test_orphaned),
		cmocka_unit_test(test_out),  cmocka_unit_test(test_gang),         cmocka_unit_test(test_template_ref),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
