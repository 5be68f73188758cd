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
	return gs_checks_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, &t, 1, msg, sizeof(msg));
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
	assert_true(gs_checks_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, terms, 2, msg, sizeof(msg)));
	assert_false(gs_checks_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, &and_term, 1, msg, sizeof(msg)));
	assert_string_equal(msg, "node \"node1\" does not match the pod's required node affinity: zone In [x]: label zone is \"a\"");
	assert_false(gs_checks_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, &empty, 1, msg, sizeof(msg)));
	assert_non_null(strstr(msg, "an empty term matches no node"));
	assert_false(gs_checks_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, NULL, 0, msg, sizeof(msg)));
	/* No affinity at all: anything goes. */
	assert_true(gs_checks_affinity("node1", NULL, 0, NULL, 0, 0, NULL, 0, msg, sizeof(msg)));
	/* nodeSelector: every pair, exact values. */
	assert_true(gs_checks_affinity("node1", node_labels, N_LABELS, sel_ok, 1, 0, NULL, 0, msg, sizeof(msg)));
	assert_false(gs_checks_affinity("node1", node_labels, N_LABELS, sel_bad, 1, 0, NULL, 0, msg, sizeof(msg)));
	assert_string_equal(msg, "node \"node1\" does not match the pod's nodeSelector: label disktype is \"ssd\", not \"hdd\"");
	assert_false(gs_checks_affinity("node1", node_labels, N_LABELS, sel_missing, 1, 0, NULL, 0, msg, sizeof(msg)));
	assert_string_equal(msg, "node \"node1\" does not match the pod's nodeSelector: it has no label gpu=yes");
	/* The selector is checked before the affinity, and both must hold. */
	assert_false(gs_checks_affinity("node1", node_labels, N_LABELS, sel_bad, 1, 1, terms, 2, msg, sizeof(msg)));
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

	t = gs_checks_taints("node1", taints, 3, NULL, 0, msg, sizeof(msg));
	assert_ptr_equal(t, &taints[1]);
	assert_string_equal(msg, "node \"node1\" has the taint gpu=busy:NoSchedule that the pod does not tolerate");
	t = gs_checks_taints("node1", taints, 3, &gpu, 1, msg, sizeof(msg));
	assert_ptr_equal(t, &taints[2]);
	assert_string_equal(msg, "node \"node1\" has the taint maintenance:NoExecute that the pod does not tolerate");
	/* tolerationSeconds does not matter at binding. */
	assert_null(gs_checks_taints("node1", taints, 3, both, 2, msg, sizeof(msg)));
	assert_null(gs_checks_taints("node1", taints, 1, NULL, 0, msg, sizeof(msg)));
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

	gs_checks_pod_requests(&p, &r);
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
	gs_checks_pod_requests(&q, &r);
	assert_true(r.milli_cpu == INT64_MAX);
	gs_resources_free(&r);
}

/* cpu of a pod of regular containers ctr[] and init containers init[] (sidecar[i] 1: restartPolicy Always). */
static int64_t cpu_of(const int64_t *ctr, int n_ctr, const int64_t *init, const unsigned char *sidecar, int n_init)
{
	struct gs_resources c[8] = {{0}}, in[8] = {{0}}, r;
	struct gs_pod_obj p = {.n_ctr = n_ctr, .ctr_req = c, .n_init = n_init, .init_req = in,
			       .init_sidecar = (unsigned char *)sidecar};
	for (int i = 0; i < n_ctr; i++)
		c[i].milli_cpu = ctr[i];
	for (int i = 0; i < n_init; i++)
		in[i].milli_cpu = init[i];
	gs_checks_pod_requests(&p, &r);
	int64_t v = r.milli_cpu;
	gs_resources_free(&r);
	return v;
}

/*
 * Sidecars: the cases of component-helpers' resource helpers_test.go (TestPodResourceRequests), in cores
 * there, millicores here.
 */
static void test_requests_sidecars(void **state)
{
	(void)state;
	/* "restartable init container": 1 + 1. */
	assert_int_equal(cpu_of((int64_t[]){1000}, 1, (int64_t[]){1000}, (unsigned char[]){1}, 1), 2000);
	/* "multiple restartable init containers": max(5, 1+2+3 + 1) = 7. */
	assert_int_equal(cpu_of((int64_t[]){1000}, 1, (int64_t[]){5000, 1000, 2000, 3000},
				(unsigned char[]){0, 1, 1, 1}, 4), 7000);
	/* "multiple restartable and regular init containers": init-2 needs 5 + the sidecars before it (1+2) =
	 * 8; the sidecar that starts after it does not count. */
	assert_int_equal(cpu_of((int64_t[]){1000}, 1, (int64_t[]){5000, 1000, 2000, 5000, 3000},
				(unsigned char[]){0, 1, 1, 0, 1}, 5), 8000);
	/* "restartable-init, init and regular": init-1's 200 + the sidecar's 10 = 210 (containers 100 + 10). */
	assert_int_equal(cpu_of((int64_t[]){100}, 1, (int64_t[]){10, 200}, (unsigned char[]){1, 0}, 2), 210);
	/* Without sidecars, as before: max(sum, largest init). */
	assert_int_equal(cpu_of((int64_t[]){1000, 1000}, 2, (int64_t[]){3000, 1000}, NULL, 2), 3000);
	/* A sidecar's extended resources and memory add up too. */
	struct gs_res_ext nic = {"example.com/nic", 1};
	struct gs_resources c = {.memory = 100, .n_ext = 1, .ext = &nic}, in = {.memory = 50, .n_ext = 1, .ext = &nic}, r;
	struct gs_pod_obj p = {.n_ctr = 1, .ctr_req = &c, .n_init = 1, .init_req = &in, .init_sidecar = (unsigned char[]){1}};
	gs_checks_pod_requests(&p, &r);
	assert_int_equal(r.memory, 150);
	assert_int_equal(gs_resources_ext(&r, "example.com/nic"), 2);
	gs_resources_free(&r);
}

/*
 * In-place resize (component-helpers determineContainerReqs, 1.32-1.33): per container the larger of
 * spec and status, or the status alone when the resize is infeasible; a container without a status
 * counts its spec.
 */
static void test_requests_resize(void **state)
{
	(void)state;
	struct gs_res_ext gpu = {"example.com/fpga", 2};
	struct gs_resources spec[] = {{.milli_cpu = 2000, .memory = 1 << 30}, {.milli_cpu = 500}};
	struct gs_resources status[] = {{.milli_cpu = 1000, .memory = 2LL << 30, .n_ext = 1, .ext = &gpu}, {0}};
	unsigned char set[] = {1, 0};
	struct gs_pod_obj p = {.n_ctr = 2, .ctr_req = spec, .ctr_status_req = status, .ctr_status_set = set};
	struct gs_resources r;

	/* Resize pending or in progress: max(spec, status) for each resource of the first; the second's spec. */
	gs_checks_pod_requests(&p, &r);
	assert_int_equal(r.milli_cpu, 2000 + 500);
	assert_int_equal(r.memory, 2LL << 30);
	assert_int_equal(gs_resources_ext(&r, "example.com/fpga"), 2);
	gs_resources_free(&r);

	/* Infeasible: the node keeps what runs, the status. */
	p.resize_infeasible = 1;
	gs_checks_pod_requests(&p, &r);
	assert_int_equal(r.milli_cpu, 1000 + 500);
	assert_int_equal(r.memory, 2LL << 30);
	gs_resources_free(&r);

	/* No status at all: the spec, infeasible or not. */
	p.ctr_status_req = NULL;
	p.ctr_status_set = NULL;
	gs_checks_pod_requests(&p, &r);
	assert_int_equal(r.milli_cpu, 2500);
	assert_int_equal(r.memory, 1 << 30);
	gs_resources_free(&r);
}

/* Pod-level requests (1.32+): they replace the containers' total for cpu, memory and hugepages-* they name;
 * other resources keep the containers' total; overhead comes on top. */
static void test_requests_pod_level(void **state)
{
	(void)state;
	struct gs_res_ext cext[] = {{"example.com/nic", 1}, {"hugepages-2Mi", 2 << 20}};
	struct gs_res_ext pext[] = {{"hugepages-2Mi", 8 << 20}, {"example.com/nic", 5}};
	struct gs_resources ctr[] = {{.milli_cpu = 1000, .memory = 100, .ephemeral = 7, .n_ext = 2, .ext = cext}};
	struct gs_pod_obj p = {.n_ctr = 1, .ctr_req = ctr, .has_pod_req = 1,
			       .pod_req = {.milli_cpu = 4000, .n_ext = 2, .ext = pext},
			       .overhead = {.milli_cpu = 250, .memory = 10}};
	struct gs_resources r;

	gs_checks_pod_requests(&p, &r);
	assert_int_equal(r.milli_cpu, 4000 + 250);                     /* named: the pod's */
	assert_int_equal(r.memory, 100 + 10);                          /* not named: the containers' */
	assert_int_equal(r.ephemeral, 7);                              /* not a pod-level resource */
	assert_int_equal(gs_resources_ext(&r, "hugepages-2Mi"), 8 << 20);
	assert_int_equal(gs_resources_ext(&r, "example.com/nic"), 1);  /* not a pod-level resource */
	gs_resources_free(&r);

	p.has_pod_req = 0; /* the decoder's word: without it pod_req is not read */
	gs_checks_pod_requests(&p, &r);
	assert_int_equal(r.milli_cpu, 1250);
	gs_resources_free(&r);
}

/* labels.NewRequirement's refusals make the term match no node, with the reason in the message. */
static void test_invalid_requirements(void **state)
{
	(void)state;
	char msg[512];
	struct {
		const char *key;
		enum gs_sel_op op;
		int nv;
		char **values;
		const char *why;
	} cases[] = {
		{"zone", GS_SEL_NOT_IN, 1, (char *[]){"a b"}, "\"a b\" is not a valid label value"},
		{"zone", GS_SEL_IN, 2, (char *[]){"a", "-a"}, "\"-a\" is not a valid label value"},
		{"zone", GS_SEL_NOT_IN, 1,
		 (char *[]){"a123456789012345678901234567890123456789012345678901234567890123"}, "is not a valid label value"},
		{"zone", GS_SEL_NOT_IN, 0, NULL, "no values"},
		{"gpu-gen", GS_SEL_GT, 1, (char *[]){"2.5"}, "\"2.5\" is not an integer"},
		{"gpu-gen", GS_SEL_LT, 1, (char *[]){" 4"}, "\" 4\" is not an integer"},
		{"gpu-gen", GS_SEL_LT, 1, (char *[]){"99999999999999999999"}, "is not an integer"},
		{"gpu-gen", GS_SEL_GT, 1, (char *[]){"+1"}, "\"+1\" is not a valid label value"},
		{"gpu-gen", GS_SEL_GT, 2, (char *[]){"1", "2"}, "2 values (Gt and Lt take exactly one)"},
		{"gpu-gen", GS_SEL_GT, 0, NULL, "0 values"},
		{"zone", GS_SEL_EXISTS, 1, (char *[]){"a"}, "values given to Exists"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gs_sel_req q = {.key = (char *)cases[i].key, .op = cases[i].op, .n_values = cases[i].nv,
				       .values = cases[i].values};
		struct gs_sel_req ok = {.key = "zone", .op = GS_SEL_IN, .n_values = 1, .values = (char *[]){"a"}};
		struct gs_sel_term bad = {.n_reqs = 1, .reqs = &q}, good = {.n_reqs = 1, .reqs = &ok};
		struct gs_sel_term both[] = {bad, good};
		struct gs_sel_req pair[] = {ok, q};
		struct gs_sel_term later = {.n_reqs = 2, .reqs = pair};
		msg[0] = '\0';
		if (gs_checks_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, &bad, 1, msg, sizeof(msg)))
			fail_msg("case %zu matched", i);
		if (!strstr(msg, cases[i].why) || !strstr(msg, "so the term matches no node"))
			fail_msg("case %zu: %s", i, msg);
		/* Invalid after a requirement that holds: still the whole term. */
		assert_false(gs_checks_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, &later, 1, msg, sizeof(msg)));
		/* Another term of the pod still matches. */
		assert_true(gs_checks_affinity("node1", node_labels, N_LABELS, NULL, 0, 1, both, 2, msg, sizeof(msg)));
	}
	/* Valid edge values: an empty value, 63 characters, -5 for Lt is an integer but not a label value. */
	assert_true(match1("zone", GS_SEL_NOT_IN, 0, 1, (char *[]){""}));
	assert_true(match1("zone", GS_SEL_NOT_IN, 0, 1,
			   (char *[]){"a12345678901234567890123456789012345678901234567890123456789012"}));
	assert_true(match1("zone", GS_SEL_IN, 0, 2, (char *[]){"x_y.z", "a"}));
	assert_false(match1("gpu-gen", GS_SEL_LT, 0, 1, (char *[]){"-5"}));
	assert_true(match1("gpu-gen", GS_SEL_LT, 0, 1, (char *[]){"0010"})); /* ParseInt reads 10 */
}

/* spec.os against the node's kubernetes.io/os label (the kubelet's rejectPodAdmissionBasedOnOSField). */
static void test_os(void **state)
{
	(void)state;
	struct gs_label linux_node[] = {{"kubernetes.io/hostname", "n1"}, {GS_LABEL_OS, "linux"}};
	struct gs_label bare[] = {{"kubernetes.io/hostname", "n2"}};
	char msg[256] = "";

	assert_true(gs_checks_os("n1", linux_node, 2, NULL, msg, sizeof(msg)));    /* no spec.os */
	assert_true(gs_checks_os("n1", linux_node, 2, "linux", msg, sizeof(msg)));
	assert_true(gs_checks_os("n2", bare, 1, "windows", msg, sizeof(msg)));     /* no label: nothing to compare */
	assert_false(gs_checks_os("n1", linux_node, 2, "windows", msg, sizeof(msg)));
	assert_string_equal(msg, "node \"n1\" runs linux (label kubernetes.io/os) but the pod's spec.os.name is "
				 "\"windows\": its kubelet would refuse the pod (PodOSNotSupported)");
}

static void test_format(void **state)
{
	char b[32];
	assert_string_equal(gs_checks_qty_format(b, sizeof(b), 1950, GS_QTY_CPU), "1.95");
	assert_string_equal(gs_checks_qty_format(b, sizeof(b), 64000, GS_QTY_CPU), "64");
	assert_string_equal(gs_checks_qty_format(b, sizeof(b), 500, GS_QTY_CPU), "0.5");
	assert_string_equal(gs_checks_qty_format(b, sizeof(b), 1, GS_QTY_CPU), "0.001");
	assert_string_equal(gs_checks_qty_format(b, sizeof(b), 2LL << 30, GS_QTY_BYTES), "2Gi");
	assert_string_equal(gs_checks_qty_format(b, sizeof(b), 1536LL << 20, GS_QTY_BYTES), "1536Mi");
	assert_string_equal(gs_checks_qty_format(b, sizeof(b), 1000, GS_QTY_BYTES), "1000");
	assert_string_equal(gs_checks_qty_format(b, sizeof(b), 0, GS_QTY_BYTES), "0");
	assert_string_equal(gs_checks_qty_format(b, sizeof(b), 7, GS_QTY_COUNT), "7");
}

static void test_device_plugin_warning(void **state)
{
	char msg[512];
	struct gs_map_entry e = {.index = 0, .node = "node1", .devices = "0,1", .n_devices = 2, .line = 3};

	gs_checks_device_plugin_warning(msg, sizeof(msg), 2, &e, "gpu-scheduling-map");
	assert_non_null(strstr(msg, "containers request 2 nvidia.com/gpu"));
	assert_non_null(strstr(msg, "CUDA_VISIBLE_DEVICES=0,1 from gpu-scheduling-map line 3"));
	assert_null(strstr(msg, "but the containers request"));
	gs_checks_device_plugin_warning(msg, sizeof(msg), 1, &e, "gpu-scheduling-map");
	assert_non_null(strstr(msg, "; the entry names 2 devices but the containers request 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_operators),   cmocka_unit_test(test_terms_and_selector),
		cmocka_unit_test(test_tolerations), cmocka_unit_test(test_taints),
		cmocka_unit_test(test_requests),    cmocka_unit_test(test_format),
		cmocka_unit_test(test_device_plugin_warning), cmocka_unit_test(test_requests_sidecars),
		cmocka_unit_test(test_requests_resize),       cmocka_unit_test(test_requests_pod_level),
		cmocka_unit_test(test_invalid_requirements),  cmocka_unit_test(test_os),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
