/*
 * test_sched_held.c: partial records of bound pods (objects.h, partial; sched.h, gs_sched_pod_held).
 *
 * The pod watch reads only what can still change of a pod the engine holds bound to its node (the
 * decoder asks gs_sched_pod_held). Such a record must leave the engine exactly where the whole pod
 * would, and a partial record of a pod the engine does not hold there must be refused: it lacks the
 * requests, the map and the constraints.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "sched/sched.h"

static void test_partial_upserts(void **state)
{
	struct gs_sched_config cfg;
	struct gs_node_obj n1 = {.name = (char *)"node1", .ready = 1, .gpus = 4};
	struct gs_node_obj n2 = {.name = (char *)"node2", .ready = 1, .gpus = 4};
	struct gs_pod_obj p = {.uid = (char *)"u", .ns = (char *)"ns", .name = (char *)"a-0",
			       .scheduler_name = (char *)"gpu-scheduler", .map_text = "0=node1:0", .map_len = 9,
			       .n_containers = 1};
	struct gs_pod_obj part = {.uid = (char *)"u", .ns = (char *)"ns", .name = (char *)"a-0",
				  .scheduler_name = (char *)"gpu-scheduler", .node_name = (char *)"node1",
				  .partial = 1};
	struct gs_sched_pod_info pi;
	struct gs_sched_stats st;
	struct gs_bind_decision d;
	(void)state;

	gs_sched_config_init(&cfg);
	cfg.check_env = 0;
	struct gs_sched *s = gs_sched_new(&cfg);
	assert_non_null(s);
	assert_int_equal(gs_sched_node_upsert(s, &n1, 0), 0);
	assert_int_equal(gs_sched_node_upsert(s, &n2, 0), 0);

	/* Pending, not yet held anywhere: a partial record is refused and changes nothing. */
	assert_int_equal(gs_sched_pod_upsert(s, &p, 0), 0);
	assert_int_equal(gs_sched_pod_held(s, "u", "node1", 5), 0);
	assert_int_equal(gs_sched_pod_upsert(s, &part, 0), -EINVAL);
	assert_int_equal(gs_sched_pod_info(s, "u", &pi), 0);
	assert_int_equal(pi.state, GS_POD_QUEUED);

	/* Our binding reserves node1: held there (not on node2, nor a prefix of the name). */
	assert_int_equal(gs_sched_next_bind(s, 0, &d), 1);
	assert_string_equal(d.node, "node1");
	assert_int_equal(gs_sched_pod_held(s, "u", "node1", 5), 1);
	assert_int_equal(gs_sched_pod_held(s, "u", "node1x", 5), 1); /* node_len counts, not the NUL */
	assert_int_equal(gs_sched_pod_held(s, "u", "node1", 4), 0);
	assert_int_equal(gs_sched_pod_held(s, "u", "node2", 5), 0);
	assert_int_equal(gs_sched_pod_held(s, "v", "node1", 5), 0);
	assert_int_equal(gs_sched_bind_done(s, "u", GS_BIND_OK, 0), 0);

	/* The watch's MODIFIED for that binding, partial: bound, the node's use unchanged. */
	gs_sched_stats(s, &st);
	size_t uses = st.uses;
	assert_int_equal(gs_sched_pod_upsert(s, &part, 0), 0);
	assert_int_equal(gs_sched_pod_info(s, "u", &pi), 0);
	assert_int_equal(pi.state, GS_POD_BOUND);
	gs_sched_stats(s, &st);
	assert_int_equal(st.uses, uses);
	gs_sched_audit(s);

	/* A partial record naming another node is not held: refused. */
	part.node_name = (char *)"node2";
	assert_int_equal(gs_sched_pod_upsert(s, &part, 0), -EINVAL);
	part.node_name = (char *)"node1";

	/* Ending, partial: the pod is finished and its use released, as the whole pod would do. */
	part.terminal = 1;
	assert_int_equal(gs_sched_pod_upsert(s, &part, 0), 0);
	assert_int_equal(gs_sched_pod_info(s, "u", &pi), 0);
	assert_int_equal(pi.state, GS_POD_FINISHED);
	assert_int_equal(gs_sched_pod_held(s, "u", "node1", 5), 0);
	gs_sched_audit(s);
	gs_sched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partial_upserts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
