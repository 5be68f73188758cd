/*
 * test_checks.c: the node admission checks of src/sched/checks.c as pure functions: selector
 * requirements one operator at a time, terms ORed, toleration matching (kubernetes' own table of
 * ToleratesTaint cases), the effective request of a pod, the quantity formatting of messages, and the
 * device plugin warning. The engine that calls them is covered by the golden transcripts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/checks.h"

static struct gs_label node_labels[] = {
	{"zone", "a"}, {"gpu-gen", "3"}, {"disktype", "ssd"}, {"empty", ""},
};
#define N_LABELS 4

/* One term of one requirement against node "node1" with node_labels. */
static int match1(const char *key, enum gs_sel_op op, int field, int nv, char **values)
{
	struct gs_sel_req q = {.key = (char *)key, .op = op, .field = field, .n_values = nv, .values = values};
	struct gs_sel_term t = {.n_reqs = 1, .reqs = &q};
	char msg[512];
	return gs_check_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, &t, 1, msg, sizeof(msg));
}

static void test_operators(void **state)
{
	char *a[] = {"a"}, *bc[] = {"b", "c"}, *two[] = {"2"}, *three[] = {"3"}, *nan[] = {"x"}, *n1[] = {"node1"};
	char *both[] = {"1", "5"};

	assert_true(match1("zone", GS_SEL_IN, 0, 1, a));
	assert_false(match1("zone", GS_SEL_IN, 0, 2, bc));
	assert_false(match1("absent", GS_SEL_IN, 0, 1, a));
	assert_true(match1("zone", GS_SEL_NOT_IN, 0, 2, bc));
	assert_false(match1("zone", GS_SEL_NOT_IN, 0, 1, a));
	assert_true(match1("absent", GS_SEL_NOT_IN, 0, 1, a)); /* NotIn holds for a missing label */
	assert_true(match1("empty", GS_SEL_EXISTS, 0, 0, NULL));
	assert_false(match1("absent", GS_SEL_EXISTS, 0, 0, NULL));
	assert_true(match1("absent", GS_SEL_DOES_NOT_EXIST, 0, 0, NULL));
	assert_false(match1("zone", GS_SEL_DOES_NOT_EXIST, 0, 0, NULL));
	assert_true(match1("gpu-gen", GS_SEL_GT, 0, 1, two));
	assert_false(match1("gpu-gen", GS_SEL_GT, 0, 1, three));
	assert_false(match1("gpu-gen", GS_SEL_LT, 0, 1, three));
	assert_true(match1("gpu-gen", GS_SEL_LT, 0, 1, (char *[]){"4"}));
	assert_false(match1("gpu-gen", GS_SEL_GT, 0, 1, nan));     /* not an integer */
	assert_false(match1("zone", GS_SEL_GT, 0, 1, two));        /* the label is not an integer */
	assert_false(match1("gpu-gen", GS_SEL_GT, 0, 2, both));    /* Gt takes exactly one value */
	assert_false(match1("absent", GS_SEL_GT, 0, 1, two));
	assert_false(match1("zone", GS_SEL_INVALID, 0, 1, a));     /* unknown operator: no match */
	assert_true(match1("metadata.name", GS_SEL_IN, 1, 1, n1)); /* matchFields */
	assert_false(match1("metadata.name", GS_SEL_NOT_IN, 1, 1, n1));
	assert_false(match1("metadata.uid", GS_SEL_IN, 1, 1, n1));  /* only metadata.name is a field */
	assert_false(match1("metadata.name", GS_SEL_EXISTS, 1, 0, NULL));
}

static void test_terms_and_selector(void **state)
{
	char msg[512];
	char *x[] = {"x"}, *a[] = {"a"};
	struct gs_sel_req bad = {.key = "zone", .op = GS_SEL_IN, .n_values = 1, .values = x};
	struct gs_sel_req good = {.key = "zone", .op = GS_SEL_IN, .n_values = 1, .values = a};
	struct gs_sel_req both[] = {good, bad};
	struct gs_sel_term terms[] = {{.n_reqs = 1, .reqs = &bad}, {.n_reqs = 1, .reqs = &good}};
	struct gs_sel_term and_term = {.n_reqs = 2, .reqs = both};
	struct gs_sel_term empty = {0};
	struct gs_label sel_ok[] = {{"zone", "a"}}, sel_bad[] = {{"disktype", "hdd"}}, sel_missing[] = {{"gpu", "yes"}};

	/* Terms are ORed; requirements of one term ANDed; an empty term matches nothing. */
	assert_true(gs_check_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, terms, 2, msg, sizeof(msg)));
	assert_false(gs_check_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, &and_term, 1, msg, sizeof(msg)));
	assert_string_equal(msg, "node \"node1\" does not match the pod's required node affinity: zone In [x]: label zone is \"a\"");
	assert_false(gs_check_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, &empty, 1, msg, sizeof(msg)));
	assert_non_null(strstr(msg, "an empty term matches no node"));
	assert_false(gs_check_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, NULL, 0, msg, sizeof(msg)));
	/* No affinity at all: anything goes. */
	assert_true(gs_check_affinity("node1", NULL, 0, NULL, 0, 0, NULL, 0, msg, sizeof(msg)));
	/* nodeSelector: every pair, exact values. */
	assert_true(gs_check_affinity("node1", node_labels, N_LABELS, sel_ok, 1, 0, NULL, 0, msg, sizeof(msg)));
	assert_false(gs_check_affinity("node1", node_labels, N_LABELS, sel_bad, 1, 0, NULL, 0, msg, sizeof(msg)));
	assert_string_equal(msg, "node \"node1\" does not match the pod's nodeSelector: label disktype is \"ssd\", not \"hdd\"");
	assert_false(gs_check_affinity("node1", node_labels, N_LABELS, sel_missing, 1, 0, NULL, 0, msg, sizeof(msg)));
	assert_string_equal(msg, "node \"node1\" does not match the pod's nodeSelector: it has no label gpu=yes");
	/* The selector is checked before the affinity, and both must hold. */
	assert_false(gs_check_affinity("node1", node_labels, N_LABELS, sel_bad, 1, 1, terms, 2, msg, sizeof(msg)));
}

/* k8s.io/api/core/v1 toleration_test.go's table for ToleratesTaint, in our records. */
static void test_tolerations(void **state)
{
	const struct gs_taint t_ns = {"foo", "bar", GS_EFFECT_NO_SCHEDULE};
	const struct {
		struct gs_toleration tol;
		int want;
	} cases[] = {
		{{.key = "foo", .value = "bar", .effect = GS_EFFECT_NO_SCHEDULE}, 1},            /* equal, same effect */
		{{.key = "foo", .value = "bar", .effect = GS_EFFECT_NO_EXECUTE}, 0},             /* other effect */
		{{.key = "foo", .value = "bar"}, 1},                                             /* empty effect: all */
		{{.key = "foo", .exists = 1}, 1},                                                /* Exists, any value */
		{{.key = "foo", .value = "baz", .effect = GS_EFFECT_NO_SCHEDULE}, 0},           /* value differs */
		{{.key = "other", .exists = 1}, 0},                                              /* key differs */
		{{.key = NULL, .exists = 1}, 1},                                                 /* empty key + Exists */
		{{.key = "", .exists = 1, .effect = GS_EFFECT_NO_EXECUTE}, 0},                  /* ... of another effect */
		{{.key = "foo", .value = NULL, .effect = GS_EFFECT_NO_SCHEDULE}, 0},            /* "" != "bar" */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (gs_toleration_tolerates(&cases[i].tol, &t_ns) != cases[i].want)
			fail_msg("case %zu: want %d", i, cases[i].want);
	}
	/* A taint without a value is tolerated by Equal without one. */
	const struct gs_taint novalue = {"maintenance", NULL, GS_EFFECT_NO_EXECUTE};
	assert_true(gs_toleration_tolerates(&(struct gs_toleration){.key = "maintenance"}, &novalue));
}

static void test_taints(void **state)
{
	char msg[512];
	struct gs_taint taints[] = {
		{"slow", "yes", GS_EFFECT_PREFER_NO_SCHEDULE}, /* never refuses */
		{"gpu", "busy", GS_EFFECT_NO_SCHEDULE},
		{"maintenance", NULL, GS_EFFECT_NO_EXECUTE},
	};
	struct gs_toleration gpu = {.key = "gpu", .exists = 1, .seconds = -1};
	struct gs_toleration both[] = {gpu, {.key = "maintenance", .effect = GS_EFFECT_NO_EXECUTE, .seconds = 300}};
	const struct gs_taint *t;

	t = gs_check_taints("node1", taints, 3, NULL, 0, msg, sizeof(msg));
	assert_ptr_equal(t, &taints[1]);
	assert_string_equal(msg, "node \"node1\" has the taint gpu=busy:NoSchedule that the pod does not tolerate");
	t = gs_check_taints("node1", taints, 3, &gpu, 1, msg, sizeof(msg));
	assert_ptr_equal(t, &taints[2]);
	assert_string_equal(msg, "node \"node1\" has the taint maintenance:NoExecute that the pod does not tolerate");
	/* tolerationSeconds does not matter at binding. */
	assert_null(gs_check_taints("node1", taints, 3, both, 2, msg, sizeof(msg)));
	assert_null(gs_check_taints("node1", taints, 1, NULL, 0, msg, sizeof(msg)));
}

static void test_requests(void **state)
{
	struct gs_res_ext gpu1 = {"nvidia.com/gpu", 1}, gpu2 = {"nvidia.com/gpu", 2}, fpga = {"example.com/fpga", 1};
	struct gs_resources ctr[] = {
		{.milli_cpu = 100, .memory = 1 << 20, .n_ext = 1, .ext = &gpu1},
		{.milli_cpu = 200, .ephemeral = 10, .n_ext = 1, .ext = &gpu1},
	};
	struct gs_resources init[] = {
		{.milli_cpu = 250, .memory = 1 << 10},
		{.milli_cpu = 50, .memory = 4 << 20, .n_ext = 1, .ext = &gpu2},
		{.n_ext = 1, .ext = &fpga},
	};
	struct gs_pod_obj p = {.n_ctr = 2, .ctr_req = ctr, .n_init = 3, .init_req = init,
			       .overhead = {.milli_cpu = 10, .memory = 1, .n_ext = 0}};
	struct gs_resources r;

	gs_pod_requests(&p, &r);
	assert_int_equal(r.milli_cpu, 300 + 10);          /* sum 300 > largest init 250 */
	assert_int_equal(r.memory, (4 << 20) + 1);        /* largest init 4Mi > sum 1Mi */
	assert_int_equal(r.ephemeral, 10);
	assert_int_equal(gs_resources_ext(&r, "nvidia.com/gpu"), 2); /* max(sum 2, init 2) */
	assert_int_equal(gs_resources_ext(&r, "example.com/fpga"), 1);
	assert_int_equal(gs_resources_ext(&r, "absent"), 0);
	gs_resources_free(&r);

	/* Sums saturate instead of wrapping. */
	struct gs_resources huge[] = {{.milli_cpu = INT64_MAX}, {.milli_cpu = INT64_MAX}};
	struct gs_pod_obj q = {.n_ctr = 2, .ctr_req = huge};
	gs_pod_requests(&q, &r);
	assert_true(r.milli_cpu == INT64_MAX);
	gs_resources_free(&r);
}

static void test_format(void **state)
{
	char b[32];
	assert_string_equal(gs_qty_format(b, sizeof(b), 1950, GS_QTY_CPU), "1.95");
	assert_string_equal(gs_qty_format(b, sizeof(b), 64000, GS_QTY_CPU), "64");
	assert_string_equal(gs_qty_format(b, sizeof(b), 500, GS_QTY_CPU), "0.5");
	assert_string_equal(gs_qty_format(b, sizeof(b), 1, GS_QTY_CPU), "0.001");
	assert_string_equal(gs_qty_format(b, sizeof(b), 2LL << 30, GS_QTY_BYTES), "2Gi");
	assert_string_equal(gs_qty_format(b, sizeof(b), 1536LL << 20, GS_QTY_BYTES), "1536Mi");
	assert_string_equal(gs_qty_format(b, sizeof(b), 1000, GS_QTY_BYTES), "1000");
	assert_string_equal(gs_qty_format(b, sizeof(b), 0, GS_QTY_BYTES), "0");
	assert_string_equal(gs_qty_format(b, sizeof(b), 7, GS_QTY_COUNT), "7");
}

static void test_device_plugin_warning(void **state)
{
	char msg[512];
	struct gs_map_entry e = {.index = 0, .node = "node1", .devices = "0,1", .n_devices = 2, .line = 3};

	gs_device_plugin_warning(msg, sizeof(msg), 2, &e, "gpu-scheduling-map");
	assert_non_null(strstr(msg, "containers request 2 nvidia.com/gpu"));
	assert_non_null(strstr(msg, "CUDA_VISIBLE_DEVICES=0,1 from gpu-scheduling-map line 3"));
	assert_null(strstr(msg, "but the containers request"));
	gs_device_plugin_warning(msg, sizeof(msg), 1, &e, "gpu-scheduling-map");
	assert_non_null(strstr(msg, "; the entry names 2 devices but the containers request 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_operators),   cmocka_unit_test(test_terms_and_selector),
		cmocka_unit_test(test_tolerations), cmocka_unit_test(test_taints),
		cmocka_unit_test(test_requests),    cmocka_unit_test(test_format),
		cmocka_unit_test(test_device_plugin_warning),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
