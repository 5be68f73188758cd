/*
 * test_lint.c: src/lint/lint.c on the manifests of tests/fixtures/lint/, the examples in deploy/ and
 * the README's examples (extracted from README.md here, so they stay in sync): every diagnostic's file,
 * line, severity and words; and none on the clean ones. Run from the repository's root (make unit).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "slurp.h"

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint/lint.h"

#define FX "tests/fixtures/lint/"

static void add_file(struct gs_lint *l, const char *path)
{
	size_t len;
	char *text = slurp(path, &len);
	gs_lint_add(l, path, text, len);
	free(text);
}

static struct gs_lint *lint_files(const struct gs_lint_node *nodes, size_t n_nodes, ...)
{
	struct gs_lint_opts o = {.nodes = nodes, .n_nodes = n_nodes, .have_nodes = nodes != NULL};
	struct gs_lint *l = gs_lint_new(&o);
	const char *p;
	va_list ap;

	va_start(ap, n_nodes);
	while ((p = va_arg(ap, const char *)))
		add_file(l, p);
	va_end(ap);
	gs_lint_finish(l);
	return l;
}

static void dump(const struct gs_lint *l)
{
	for (size_t i = 0; i < gs_lint_count(l); i++) {
		const struct gs_lint_diag *d = gs_lint_diag_at(l, i);
		print_message("  %s:%d: %s: %s\n", d->file, d->line,
			      d->severity == GS_LINT_ERROR     ? "error"
			      : d->severity == GS_LINT_WARNING ? "warning"
							       : "note",
			      d->msg);
	}
}

/* A diagnostic at file:line of that severity whose message holds every word given. */
static int has(const struct gs_lint *l, const char *file, int line, enum gs_lint_severity sev, ...)
{
	for (size_t i = 0; i < gs_lint_count(l); i++) {
		const struct gs_lint_diag *d = gs_lint_diag_at(l, i);
		const char *w;
		int ok = !strcmp(d->file, file) && d->line == line && d->severity == sev;
		va_list ap;
		va_start(ap, sev);
		while (ok && (w = va_arg(ap, const char *)))
			ok = strstr(d->msg, w) != NULL;
		va_end(ap);
		if (ok)
			return 1;
	}
	dump(l);
	return 0;
}
#define HAS(l, file, line, sev, ...) assert_true(has((l), (file), (line), (sev), __VA_ARGS__, NULL))

static void test_bad_map_names_the_line_in_the_file(void **state)
{
	struct gs_lint *l = lint_files(NULL, 0, FX "bad-map.yaml", NULL);
	(void)state;
	assert_int_equal(gs_lint_errors(l), 1);
	HAS(l, FX "bad-map.yaml", 15, GS_LINT_ERROR, "StatefulSet ml/bad-map", "line 3", "missing '='");
	/* the good lines are still checked: index 2's line was the bad one */
	assert_int_equal(gs_lint_warnings(l), 1);
	HAS(l, FX "bad-map.yaml", 8, GS_LINT_WARNING, "replicas 3", "no entry for index 2", "NO_ENTRY");
	gs_lint_free(l);
}

/* Issue 20 item 7: a duplicate index, a line without '=' and indices without an entry are three
 * findings of one run, each at its line (lint went no further than the first). */
static void test_every_problem_of_a_map(void **state)
{
	const char *f = FX "many-problems.yaml";
	struct gs_lint *l = lint_files(NULL, 0, f, NULL);
	(void)state;
	HAS(l, f, 16, GS_LINT_ERROR, "StatefulSet ml/many-problems", "line 2", "duplicate index 0 (first on line 1)");
	HAS(l, f, 17, GS_LINT_ERROR, "StatefulSet ml/many-problems", "line 3", "missing '='");
	HAS(l, f, 9, GS_LINT_WARNING, "replicas 3", "no entry for index 1, 2", "NO_ENTRY");
	assert_int_equal(gs_lint_errors(l), 2);
	assert_int_equal(gs_lint_warnings(l), 1);
	gs_lint_free(l);
}

/* A map of more problems than the parser passes on: GS_MAP_MAX_ERRORS diagnostics and one count. */
static void test_problems_are_bounded(void **state)
{
	struct gs_lint_opts o = {0};
	struct gs_lint *l = gs_lint_new(&o);
	size_t cap = 64 * 1024, n;
	char *t = malloc(cap);
	(void)state;

	n = (size_t)snprintf(t, cap, "kind: Pod\nmetadata:\n  name: p-0\n  annotations:\n    gpu-scheduling-map: |\n");
	for (int i = 0; i < 250; i++)
		n += (size_t)snprintf(t + n, cap - n, "      bad %d\n", i);
	n += (size_t)snprintf(t + n, cap - n, "      0=node1:0\nspec:\n  schedulerName: gpu-scheduler\n");
	gs_lint_add(l, "b", t, n);
	gs_lint_finish(l);
	assert_int_equal(gs_lint_errors(l), 101);
	HAS(l, "b", 6, GS_LINT_ERROR, "line 1: missing '='");
	HAS(l, "b", 5, GS_LINT_ERROR, "150 more problems not shown");
	assert_int_equal(gs_lint_warnings(l), 0); /* the good entry, index 0, is the pod's */
	gs_lint_free(l);
	free(t);
}

/* Issue 22: a key twice in one mapping is an error at its line, naming the first; what lint checks is
 * the last, as kubectl and a non-strict apiserver keep it. */
static void test_duplicate_keys(void **state)
{
	const char *f = FX "dup-keys.yaml";
	static const char json[] = "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"j-0\", \"name\": \"j-1\"},\n"
				   " \"a\": {\"x\\u0000\": 1, \"x\": 2, \"k\": 1, \"k\": 2, \"k\": 3}}\n";
	struct gs_lint *l = lint_files(NULL, 0, f, NULL);
	struct gs_lint_opts o = {0};
	(void)state;
	HAS(l, f, 11, GS_LINT_ERROR, "duplicate key \"gpu-scheduling-map\" at line 11 (first at line 9)");
	HAS(l, f, 15, GS_LINT_ERROR, "duplicate key \"schedulerName\" at line 15 (first at line 14)");
	HAS(l, f, 12, GS_LINT_ERROR, "Pod dup-0", "line 1", "invalid device \"x\"");
	assert_int_equal(gs_lint_errors(l), 3);
	gs_lint_free(l);

	/* JSON is YAML: the same rule; a key with a NUL is another key; each repeat is one error. */
	l = gs_lint_new(&o);
	gs_lint_add(l, "j", json, sizeof(json) - 1);
	gs_lint_finish(l);
	HAS(l, "j", 1, GS_LINT_ERROR, "duplicate key \"name\" at line 1 (first at line 1)");
	assert_int_equal(gs_lint_errors(l), 3);
	HAS(l, "j", 2, GS_LINT_ERROR, "duplicate key \"k\"");
	gs_lint_free(l);
}

/* Issue 22: 100,000 nested brackets took 30 s in libyaml's loader. Past GS_LINT_MAX_DEPTH the file
 * ends with one error at the line where it went too deep; the documents before are linted; exactly
 * the limit is fine. */
static void test_nesting_depth_is_capped(void **state)
{
	static const char pod[] =
		"kind: Pod\nmetadata:\n  name: p-0\n  annotations:\n    gpu-scheduling-map: \"0=n:0\\n0=n:1\"\n"
		"spec:\n  schedulerName: gpu-scheduler\n---\n";
	size_t deep = 100000, n = sizeof(pod) - 1;
	char *t = malloc(n + 2 * deep + 64);
	struct gs_lint_opts o = {0};
	struct gs_lint *l = gs_lint_new(&o);
	struct gs_lint_node *nodes;
	size_t n_nodes;
	char err[256];
	(void)state;

	memcpy(t, pod, n);
	n += (size_t)sprintf(t + n, "# the deep one\n");
	memset(t + n, '[', deep);
	memset(t + n + deep, ']', deep);
	n += 2 * deep;
	gs_lint_add(l, "deep", t, n);
	gs_lint_finish(l);
	HAS(l, "deep", 5, GS_LINT_ERROR, "Pod p-0", "duplicate index 0"); /* the document before: linted */
	HAS(l, "deep", 10, GS_LINT_ERROR, "nesting deeper than 100 at line 10");
	assert_int_equal(gs_lint_errors(l), 2);
	gs_lint_free(l);
	/* a NodeList reader refuses it too */
	assert_int_equal(gs_lint_nodes_parse(t + sizeof(pod) - 1, n - (sizeof(pod) - 1), NULL, &nodes, &n_nodes, err,
					     sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "line 2: nesting deeper than 100");

	/* 100 levels (a sequence of 99 nested flow sequences) are read as usual; 101 are not */
	l = gs_lint_new(&o);
	for (int extra = 0; extra < 2; extra++) {
		size_t k = GS_LINT_MAX_DEPTH - 1 + (size_t)extra;
		n = (size_t)sprintf(t, "- ");
		memset(t + n, '[', k);
		memset(t + n + k, ']', k);
		gs_lint_add(l, extra ? "over" : "edge", t, n + 2 * k);
	}
	assert_int_equal(gs_lint_count(l), 1);
	HAS(l, "over", 1, GS_LINT_ERROR, "nesting deeper than 100 at line 1");
	gs_lint_free(l);
	free(t);
}

static void test_reach(void **state)
{
	const char *f = FX "reach.yaml";
	struct gs_lint *l = lint_files(NULL, 0, f, NULL);
	(void)state;
	assert_int_equal(gs_lint_errors(l), 0);
	HAS(l, f, 16, GS_LINT_WARNING, "StatefulSet reach", "index 7 is never used", "replicas 4", "0-3");
	HAS(l, f, 8, GS_LINT_WARNING, "replicas 4", "no entry for index 1, 3", "NO_ENTRY");
	HAS(l, f, 28, GS_LINT_WARNING, "Job indexed", "completions 2", "index 1", "NO_ENTRY");
	HAS(l, f, 44, GS_LINT_WARNING, "Job plain", "not completionMode: Indexed", "NO_INDEX");
	HAS(l, f, 56, GS_LINT_WARNING, "Deployment deploy", "NO_INDEX");
	HAS(l, f, 70, GS_LINT_WARNING, "StatefulSet other-scheduler", "schedulerName is unset");
	HAS(l, f, 79, GS_LINT_WARNING, "Pod no-map-3", "NO_MAP");
	assert_int_equal(gs_lint_warnings(l), 7);
	assert_int_equal(gs_lint_workloads(l), 5);
	gs_lint_free(l);
}

static void test_good_is_clean(void **state)
{
	struct gs_lint_node *nodes;
	size_t n, len;
	char err[256];
	char *text = slurp(FX "nodes.yaml", &len);
	struct gs_lint *l;

	(void)state;
	assert_int_equal(gs_lint_nodes_parse(text, len, "gpu-scheduler.io/node", &nodes, &n, err, sizeof(err)), 0);
	free(text);
	l = lint_files(nodes, n, FX "good.yaml", NULL);
	assert_int_equal(gs_lint_count(l), 0);
	assert_int_equal(gs_lint_workloads(l), 3);
	gs_lint_free(l);
	free(nodes);
}

static struct gs_lint *lint_text(const struct gs_lint_node *nodes, size_t n_nodes, const char *text);

/* A node's GPUs as the daemon counts them: its agent's index table, else GPU Feature Discovery's count,
 * else the larger of capacity and allocatable (a time-sliced node advertises replicas). */
static void test_node_gpus(void **state)
{
	static const char text[] =
		"kind: List\nitems:\n"
		"- metadata:\n    name: t\n    labels: {nvidia.com/gpu.count: \"2\"}\n"
		"    annotations: {gpu-scheduler.io/devices-in-use: \"v1 2026-12-07T18:00:00Z\\nindex 0=GPU-a 1=GPU-b "
		"2=GPU-c\"}\n  status: {capacity: {nvidia.com/gpu: \"12\"}}\n"
		"- metadata:\n    name: l\n    labels: {nvidia.com/gpu.count: \"4\", nvidia.com/gpu.replicas: \"4\"}\n"
		"  status: {capacity: {nvidia.com/gpu: \"16\"}, allocatable: {nvidia.com/gpu: \"16\"}}\n"
		"- metadata:\n    name: a\n  status: {capacity: {nvidia.com/gpu: \"4\"}, allocatable: {nvidia.com/gpu: \"3\"}}\n"
		"- metadata:\n    name: x\n    annotations: {gpu-scheduler.io/devices-in-use: \"not data\"}\n";
	static const char map[] = "kind: Pod\nmetadata:\n  name: p-0\n  annotations:\n"
				  "    gpu-scheduling-map: \"0=t:3\"\nspec:\n  schedulerName: gpu-scheduler\n";
	struct gs_lint_node *nodes;
	size_t n;
	char err[256];

	(void)state;
	assert_int_equal(gs_lint_nodes_parse(text, sizeof(text) - 1, NULL, &nodes, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 4);
	assert_int_equal(nodes[0].gpus, 3);
	assert_int_equal(nodes[0].gpus_from, GS_GPUS_TABLE);
	assert_int_equal(nodes[1].gpus, 4);
	assert_int_equal(nodes[1].gpus_from, GS_GPUS_LABEL);
	assert_int_equal(nodes[2].gpus, 4); /* capacity: an unhealthy GPU keeps its index */
	assert_int_equal(nodes[2].gpus_from, GS_GPUS_ADVERTISED);
	assert_int_equal(nodes[3].gpus, -1); /* unreadable data, nothing advertised */
	struct gs_lint *l = lint_text(nodes, n, map);
	HAS(l, "t", 5, GS_LINT_WARNING, "node \"t\" has 3 GPUs by its agent's index table, so it has no device 3");
	gs_lint_free(l);
	free(nodes);
}

static void test_claims_across_files(void **state)
{
	struct gs_lint *l = lint_files(NULL, 0, FX "claims-a.yaml", FX "claims-b.yaml", NULL);
	(void)state;
	/* node2 GPU 1: the Job against the StatefulSet; GPU 0 twice by the same StatefulSet: nothing */
	HAS(l, FX "claims-b.yaml", 13, GS_LINT_WARNING, "Job ml/eval", "node \"node2\" device 1",
	    "StatefulSet ml/train (" FX "claims-a.yaml:13)", "DEVICE_BUSY");
	assert_int_equal(gs_lint_count(l), 1);
	gs_lint_free(l);
}

static void test_shared_claims(void **state)
{
	static const char a[] =
		"kind: Pod\nmetadata:\n  name: a-0\n  annotations:\n"
		"    gpu-scheduler.io/allow-shared-devices: \"true\"\n    gpu-scheduling-map: \"0=node1:0\"\n"
		"spec:\n  schedulerName: gpu-scheduler\n";
	static const char b[] =
		"kind: Pod\nmetadata:\n  name: b-0\n  annotations:\n"
		"    gpu-scheduler.io/allow-shared-devices: \"true\"\n    gpu-scheduling-map: \"0=node1:0\"\n"
		"spec:\n  schedulerName: gpu-scheduler\n";
	static const char c[] = "kind: Pod\nmetadata:\n  name: c-0\n  annotations:\n"
				"    gpu-scheduling-map: \"0=node1:0\"\nspec:\n  schedulerName: gpu-scheduler\n";
	struct gs_lint_opts o = {0};
	struct gs_lint *l = gs_lint_new(&o);
	(void)state;
	gs_lint_add(l, "a", a, sizeof(a) - 1);
	gs_lint_add(l, "b", b, sizeof(b) - 1);
	gs_lint_finish(l);
	assert_int_equal(gs_lint_count(l), 0); /* both share on purpose */
	gs_lint_free(l);

	l = gs_lint_new(&o);
	gs_lint_add(l, "a", a, sizeof(a) - 1);
	gs_lint_add(l, "c", c, sizeof(c) - 1);
	gs_lint_finish(l);
	HAS(l, "c", 5, GS_LINT_WARNING, "Pod c-0", "Pod a-0 (a:6)", "DEVICE_BUSY"); /* only one shares */
	gs_lint_free(l);
}

static void test_nodes(void **state)
{
	struct gs_lint_node *yn, *jn, *an;
	size_t ny, nj, na, len;
	char err[256];
	char *text;
	struct gs_lint *l;

	(void)state;
	text = slurp(FX "nodes.yaml", &len);
	assert_int_equal(gs_lint_nodes_parse(text, len, "gpu-scheduler.io/node", &yn, &ny, err, sizeof(err)), 0);
	free(text);
	text = slurp(FX "nodes.json", &len);
	assert_int_equal(gs_lint_nodes_parse(text, len, "gpu-scheduler.io/node", &jn, &nj, err, sizeof(err)), 0);
	free(text);
	assert_int_equal(ny, 5);
	assert_int_equal(nj, 5);
	for (size_t i = 0; i < ny; i++) { /* JSON and YAML read alike */
		assert_string_equal(yn[i].name, jn[i].name);
		assert_int_equal(yn[i].gpus, jn[i].gpus);
		assert_int_equal(!yn[i].alias, !jn[i].alias);
	}
	assert_string_equal(yn[2].name, "cpu-only");
	assert_int_equal(yn[2].gpus, -1);
	assert_string_equal(yn[3].alias, "node3");

	/* claims-a: node3 resolves through the alias to gpu-worker3, which has no device 5 */
	l = lint_files(yn, ny, FX "claims-a.yaml", NULL);
	HAS(l, FX "claims-a.yaml", 14, GS_LINT_WARNING, "node \"node3\" (node gpu-worker3)", "advertises 4",
	    "no device 5", "NODE_DEVICES");
	assert_int_equal(gs_lint_count(l), 1);
	gs_lint_free(l);

	/* two nodes with the alias node1, and no node named node2 */
	text = slurp(FX "nodes-ambiguous.json", &len);
	assert_int_equal(gs_lint_nodes_parse(text, len, "gpu-scheduler.io/node", &an, &na, err, sizeof(err)), 0);
	free(text);
	l = lint_files(an, na, FX "good.yaml", NULL);
	HAS(l, FX "good.yaml", 13, GS_LINT_WARNING, "Pod solo-2", "alias of both gpu-worker and gpu-worker2",
	    "NODE_ALIAS_AMBIGUOUS");
	HAS(l, FX "good.yaml", 29, GS_LINT_WARNING, "StatefulSet from-one", "node \"node2\"", "NODE_MISSING");
	gs_lint_free(l);

	/* an empty alias label turns aliases off: node3 is then missing */
	text = slurp(FX "nodes.yaml", &len);
	free(an);
	assert_int_equal(gs_lint_nodes_parse(text, len, "", &an, &na, err, sizeof(err)), 0);
	free(text);
	l = lint_files(an, na, FX "claims-a.yaml", NULL);
	HAS(l, FX "claims-a.yaml", 14, GS_LINT_WARNING, "node \"node3\"", "NODE_MISSING");
	gs_lint_free(l);
	free(an);

	assert_int_equal(gs_lint_nodes_parse("kind: Pod\n", 10, "x", &an, &na, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a NodeList"));
	assert_int_equal(gs_lint_nodes_parse("items: [\n", 9, "x", &an, &na, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "YAML"));
	free(yn);
	free(jn);
}

/* lint_pods: claims-a.yaml and claims-b.yaml linted with nodes and the cluster's device-plugin GPU pods. */
static struct gs_lint *lint_pods(const struct gs_lint_node *nodes, size_t n_nodes, const struct gs_lint_gpu_pod *pods,
				 size_t n_pods, int have_pods)
{
	struct gs_lint_opts o = {.nodes = nodes,
				 .n_nodes = n_nodes,
				 .have_nodes = 1,
				 .gpu_pods = pods,
				 .n_gpu_pods = n_pods,
				 .have_pods = have_pods,
				 .dedicated_taint = "gpu-scheduler.io/dedicated"};
	struct gs_lint *l = gs_lint_new(&o);

	add_file(l, FX "claims-a.yaml");
	add_file(l, FX "claims-b.yaml");
	gs_lint_finish(l);
	return l;
}

/* Mapped nodes without the dedicated taint that run device-plugin GPU pods: one warning per node, at its
 * first use, naming up to 3 pods and the kubectl command; none for a tainted node or a node no map uses. */
static void test_dedicated_taint(void **state)
{
	struct gs_lint_node nodes[] = {
		{.name = "node2", .gpus = 4},
		{.name = "gpu-worker3", .alias = "node3", .gpus = 8},
		{.name = "node4", .gpus = 4},
	};
	struct gs_lint_gpu_pod pods[] = {
		{"ml", "a", "node2"},      {"ml", "b", "node2"}, {"x", "c", "node2"}, {"y", "d", "node2"},
		{"z", "e", "gpu-worker3"}, {"w", "f", "node4"},  {"v", "g", "node9"},
	};
	struct gs_lint *l;

	(void)state;
	l = lint_pods(nodes, 3, pods, 7, 1);
	/* node2 is used by both files (claims-a.yaml first) and claimed twice: one warning, at its first use */
	HAS(l, FX "claims-a.yaml", 13, GS_LINT_WARNING, "node \"node2\", which maps use,",
	    "no gpu-scheduler.io/dedicated:NoSchedule taint",
	    "runs 4 pods that get nvidia.com/gpu from the device plugin", "(ml/a, ml/b, x/c and 1 more)",
	    "kubectl taint nodes node2 gpu-scheduler.io/dedicated=true:NoSchedule", "--tolerate-dedicated-taint");
	/* through the alias: the command names the real node */
	HAS(l, FX "claims-a.yaml", 14, GS_LINT_WARNING, "node \"node3\" (node gpu-worker3)", "runs 1 pod that", "(z/e)",
	    "kubectl taint nodes gpu-worker3 gpu-scheduler.io/dedicated=true:NoSchedule");
	/* plus the DEVICE_BUSY of claims-b.yaml: nothing about node4 (no map uses it) or node9 */
	assert_int_equal(gs_lint_count(l), 3);
	assert_int_equal(gs_lint_errors(l), 0);
	gs_lint_free(l);

	/* tainted: no warning for it */
	nodes[1].dedicated = 1;
	l = lint_pods(nodes, 3, pods, 7, 1);
	assert_int_equal(gs_lint_count(l), 2);
	for (size_t i = 0; i < gs_lint_count(l); i++)
		assert_null(strstr(gs_lint_diag_at(l, i)->msg, "gpu-worker3"));
	gs_lint_free(l);

	/* no GPU pod on the mapped nodes, or no pod list at all (--nodes): only DEVICE_BUSY */
	l = lint_pods(nodes, 3, pods + 5, 2, 1);
	assert_int_equal(gs_lint_count(l), 1);
	gs_lint_free(l);
	nodes[1].dedicated = 0;
	l = lint_pods(nodes, 3, NULL, 0, 0);
	assert_int_equal(gs_lint_count(l), 1);
	HAS(l, FX "claims-b.yaml", 13, GS_LINT_WARNING, "DEVICE_BUSY");
	gs_lint_free(l);

	/* exactly 3 pods: all named, no "more" */
	l = lint_pods(nodes, 3, pods + 1, 3, 1);
	HAS(l, FX "claims-a.yaml", 13, GS_LINT_WARNING, "runs 3 pods", "(ml/b, x/c, y/d)");
	for (size_t i = 0; i < gs_lint_count(l); i++)
		assert_null(strstr(gs_lint_diag_at(l, i)->msg, "more"));
	gs_lint_free(l);
}

static void test_yaml_errors_and_scalar_styles(void **state)
{
	static const char quoted[] =
		"kind: Pod\nmetadata:\n  name: q-0\n  annotations:\n"
		"    gpu-scheduling-map: \"0=node1:0\\n1=node1:x\"\nspec:\n  schedulerName: gpu-scheduler\n";
	static const char notstr[] = "kind: Pod\nmetadata:\n  name: q-0\n  annotations:\n"
				     "    gpu-scheduling-map: [1, 2]\nspec:\n  schedulerName: gpu-scheduler\n";
	struct gs_lint *l = lint_files(NULL, 0, FX "syntax.yaml", NULL);
	struct gs_lint_opts o = {0};

	(void)state;
	HAS(l, FX "syntax.yaml", 7, GS_LINT_ERROR, "YAML");
	gs_lint_free(l);

	/* a double-quoted map: the annotation's own line (escapes make the map's lines no file lines) */
	l = gs_lint_new(&o);
	gs_lint_add(l, "q", quoted, sizeof(quoted) - 1);
	gs_lint_add(l, "n", notstr, sizeof(notstr) - 1);
	gs_lint_finish(l);
	HAS(l, "q", 5, GS_LINT_ERROR, "line 2", "device");
	HAS(l, "n", 5, GS_LINT_ERROR, "not a string");
	gs_lint_free(l);
}

/* The all-or-nothing rules: bad values as the webhook denies them, OrderedReady, a gang larger than
 * the replicas, a Job's parallelism or completions, or the map; none for independent, a gang of one, or
 * a template of another scheduler. */
static void test_gang(void **state)
{
	const char *f = FX "gang.yaml";
	struct gs_lint *l = lint_files(NULL, 0, f, NULL);
	static const char nomap[] = "kind: Pod\nmetadata:\n  name: p-0\n  annotations:\n"
				    "    gpu-scheduler.io/gang-size: \"2\"\nspec:\n  schedulerName: gpu-scheduler\n";
	static const char pod[] =
		"kind: Pod\nmetadata:\n  name: p-0\n  annotations:\n"
		"    gpu-scheduler.io/placement: all-or-nothing\n    gpu-scheduler.io/gang-size: \"2\"\n"
		"    gpu-scheduling-map: \"0=node1:0\"\nspec:\n  schedulerName: gpu-scheduler\n";
	static const char notstr[] =
		"kind: Pod\nmetadata:\n  name: p-0\n  annotations:\n"
		"    gpu-scheduler.io/placement: [all-or-nothing]\nspec:\n  schedulerName: gpu-scheduler\n";
	struct gs_lint_opts o = {0};

	(void)state;
	HAS(l, f, 39, GS_LINT_ERROR, "StatefulSet ml/gang-ordered", "podManagementPolicy OrderedReady (the default)",
	    "can never complete: pod 1 is not created until pod 0 is Ready; set podManagementPolicy: Parallel");
	HAS(l, f, 53, GS_LINT_ERROR, "StatefulSet ml/gang-explicit-ordered", "OrderedReady can never complete");
	HAS(l, f, 116, GS_LINT_ERROR, "StatefulSet ml/gang-above-replicas",
	    "gpu-scheduler.io/gang-size 3 is more than replicas 2: the gang could never complete");
	HAS(l, f, 120, GS_LINT_WARNING, "gang-above-replicas", "index 2 is never used");
	HAS(l, f, 137, GS_LINT_ERROR, "StatefulSet ml/gang-default-size", "the map's 4 entries",
	    "more than replicas 2");
	HAS(l, f, 141, GS_LINT_WARNING, "gang-default-size", "index 2 is never used");
	HAS(l, f, 142, GS_LINT_WARNING, "gang-default-size", "index 3 is never used");
	HAS(l, f, 160, GS_LINT_ERROR, "StatefulSet ml/gang-above-map",
	    "gang-size 8 is more than the 4 entries of gpu-scheduling-map: the gang could never complete");
	HAS(l, f, 153, GS_LINT_WARNING, "gang-above-map", "NO_ENTRY");
	HAS(l, f, 182, GS_LINT_ERROR, "StatefulSet ml/gang-bad-timeout",
	    "gpu-scheduler.io/gang-timeout \"10x\" is not a duration (Go's form: 90s, 10m, 1h30m)");
	HAS(l, f, 201, GS_LINT_ERROR, "StatefulSet ml/gang-bad-placement",
	    "gpu-scheduler.io/placement \"all-or-nothin\" is not a placement");
	HAS(l, f, 223, GS_LINT_ERROR, "StatefulSet ml/gang-unquoted", "gang-size: 2 is not a string", "(\"2\")");
	HAS(l, f, 248, GS_LINT_WARNING, "StatefulSet ml/gang-not-ours", "will not place its pods");
	HAS(l, f, 265, GS_LINT_ERROR, "Job ml/gang-job", "gang-size 4 is more than parallelism 2",
	    "at most 2 pods of the Job run at once");
	HAS(l, f, 288, GS_LINT_ERROR, "Job ml/gang-job-default", "the map's 4 entries",
	    "more than parallelism 1 (the default): at most 1 pod of the Job runs at once");
	HAS(l, f, 313, GS_LINT_ERROR, "Job ml/gang-job-completions", "gang-size 4 is more than completions 2");
	HAS(l, f, 317, GS_LINT_WARNING, "gang-job-completions", "index 2 is never used");
	HAS(l, f, 318, GS_LINT_WARNING, "gang-job-completions", "index 3 is never used");
	HAS(l, f, 366, GS_LINT_ERROR, "CronJob ml/gang-cron", "gang-size 3 is more than parallelism 2");
	assert_int_equal(gs_lint_errors(l), 12);
	assert_int_equal(gs_lint_warnings(l), 7);
	gs_lint_free(l);

	/* ours without a map: the values still checked; a bare pod: the map's entries; not a string */
	l = gs_lint_new(&o);
	gs_lint_add(l, "nomap", nomap, sizeof(nomap) - 1);
	gs_lint_add(l, "pod", pod, sizeof(pod) - 1);
	gs_lint_add(l, "notstr", notstr, sizeof(notstr) - 1);
	gs_lint_finish(l);
	HAS(l, "nomap", 5, GS_LINT_ERROR, "Pod p-0",
	    "gpu-scheduler.io/gang-size is set but gpu-scheduler.io/placement");
	HAS(l, "nomap", 7, GS_LINT_WARNING, "NO_MAP");
	HAS(l, "pod", 6, GS_LINT_ERROR, "gang-size 2 is more than the 1 entry of gpu-scheduling-map");
	HAS(l, "notstr", 5, GS_LINT_ERROR, "the gpu-scheduler.io/placement annotation is not a string");
	assert_int_equal(gs_lint_errors(l), 3);
	gs_lint_free(l);

	/* plain scalars: a string to YAML is judged by the parser, a boolean is not a string */
	static const char *const plain[][2] = {
		{"gang-timeout: 1.2.3", "gang-timeout \"1.2.3\" is not a duration"},
		{"gang-timeout: 1h", NULL},
		{"gang-timeout: -1.5", "gang-timeout: -1.5 is not a string"},
		{"gang-size: true", "gang-size: true is not a string"},
		{"gang-size: ~", "gang-size: ~ is not a string"},
	};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		char text[512];
		int n = snprintf(text, sizeof(text),
				 "kind: Pod\nmetadata:\n  name: p-0\n  annotations:\n"
				 "    gpu-scheduler.io/placement: all-or-nothing\n    gpu-scheduler.io/%s\n"
				 "    gpu-scheduling-map: \"0=node1:0\"\nspec:\n  schedulerName: gpu-scheduler\n",
				 plain[i][0]);
		l = gs_lint_new(&o);
		gs_lint_add(l, "p", text, (size_t)n);
		gs_lint_finish(l);
		if (plain[i][1])
			HAS(l, "p", 6, GS_LINT_ERROR, plain[i][1]);
		else
			assert_int_equal(gs_lint_errors(l), 0);
		gs_lint_free(l);
	}
}

/* ---- maps as objects (GPUPlacementMap, sched/gpm.h) ------------------------------------------------- */

static struct gs_lint *lint_text(const struct gs_lint_node *nodes, size_t n_nodes, const char *text)
{
	struct gs_lint_opts o = {.nodes = nodes, .n_nodes = n_nodes, .have_nodes = nodes != NULL};
	struct gs_lint *l = gs_lint_new(&o);

	gs_lint_add(l, "t", text, strlen(text));
	gs_lint_finish(l);
	return l;
}

/* The objects' own rules (spec.map, the settings and their types, gangSize against the entries) and a
 * workload's against the object it names, across files: entries never used and missing, the gang
 * against replicas, parallelism and the policy; map and reference together, gang annotations beside a
 * reference, another namespace, another scheduler; two workloads naming one object claim its devices. */
static void test_gpm(void **state)
{
	const char *f = FX "gpm.yaml", *fo = FX "gpm-objects.yaml";
	struct gs_lint *l = lint_files(NULL, 0, f, fo, NULL);

	(void)state;
	HAS(l, f, 13, GS_LINT_ERROR, "GPUPlacementMap ml/ranks: spec.map line 3: missing '='");
	HAS(l, f, 39, GS_LINT_ERROR, "GPUPlacementMap ml/sized",
	    "spec.gangSize 4 is more than the 2 entries of spec.map: the gang could never complete");
	HAS(l, f, 49, GS_LINT_ERROR, "GPUPlacementMap ml/bad-timeout", "spec.gangTimeout \"10x\" is not a duration");
	HAS(l, f, 59, GS_LINT_ERROR, "GPUPlacementMap ml/quoted-size", "spec.gangSize: 1 is not an integer",
	    "the CRD's type is integer");
	HAS(l, f, 68, GS_LINT_ERROR, "GPUPlacementMap ml/size-alone",
	    "spec.gangSize is set but spec.placement is not all-or-nothing");
	HAS(l, f, 83, GS_LINT_ERROR, "StatefulSet ml/both",
	    "both gpu-scheduling-map and gpu-scheduler.io/placement-map", "MAP_INVALID");
	HAS(l, f, 99, GS_LINT_ERROR, "StatefulSet ml/gang-beside",
	    "gpu-scheduler.io/gang-size beside gpu-scheduler.io/placement-map", "GANG_INVALID");
	HAS(l, f, 145, GS_LINT_WARNING, "Deployment ml/not-ours", "gpu-scheduler.io/placement-map annotation",
	    "will not place its pods");
	HAS(l, f, 145, GS_LINT_WARNING, "Deployment ml/not-ours", "NO_INDEX");
	/* against the object: its entry's line in its file, the workload's counts at the reference */
	HAS(l, f, 14, GS_LINT_WARNING, "StatefulSet ml/train", "index 3 is never used: replicas 2");
	HAS(l, f, 28, GS_LINT_ERROR, "StatefulSet ml/train",
	    "the gang of the map's 3 entries (no GPUPlacementMap ml/ranks spec.gangSize: the default) is more than "
	    "replicas 2");
	HAS(l, f, 98, GS_LINT_ERROR, "StatefulSet ml/gang-beside", "OrderedReady (the default) can never complete");
	HAS(l, f, 111, GS_LINT_WARNING, "Job ml/job", "completions 4 but no entry for index 2, 3", "NO_ENTRY");
	HAS(l, f, 131, GS_LINT_NOTE, "StatefulSet other/elsewhere", "GPUPlacementMap other/ranks is not in the files",
	    "MAP_MISSING");
	HAS(l, fo, 11, GS_LINT_WARNING,
	    "Job ml/job: node \"node3\" device 1 is also claimed by StatefulSet ml/gang-beside", "DEVICE_BUSY");
	HAS(l, fo, 12, GS_LINT_WARNING, "Job ml/job", "device 2", "DEVICE_BUSY");
	assert_int_equal(gs_lint_errors(l), 9);
	assert_int_equal(gs_lint_warnings(l), 6);
	assert_int_equal(gs_lint_notes(l), 1);
	assert_int_equal(gs_lint_count(l), 16);
	assert_int_equal(gs_lint_workloads(l), 6);
	gs_lint_free(l);

	/* without the objects' file: the references to ranks-ok are notes, nothing checked against it */
	l = lint_files(NULL, 0, f, NULL);
	HAS(l, f, 98, GS_LINT_NOTE, "StatefulSet ml/gang-beside", "GPUPlacementMap ml/ranks-ok is not in the files");
	HAS(l, f, 116, GS_LINT_NOTE, "Job ml/job", "ranks-ok");
	assert_int_equal(gs_lint_notes(l), 3);
	assert_int_equal(gs_lint_errors(l), 8);
	assert_int_equal(gs_lint_warnings(l), 3);
	gs_lint_free(l);
}

/* A workload by reference is clean when the object fits it, whichever comes first; the object's
 * entries meet the node list at their lines; a Pod's own index; a CronJob's parallelism. */
static void test_gpm_reference(void **state)
{
	static const struct gs_lint_node nodes[] = {{"node1", NULL, 4, 0, 0}, {"node2", NULL, 2, 0, 0}};
	static const char before[] =
		"kind: StatefulSet\nmetadata: {name: s, namespace: ml}\nspec:\n  replicas: 2\n"
		"  podManagementPolicy: Parallel\n  template:\n    metadata:\n      annotations:\n"
		"        gpu-scheduler.io/placement-map: m\n    spec: {schedulerName: gpu-scheduler}\n---\n"
		"apiVersion: gpu-scheduler.io/v1alpha1\nkind: GPUPlacementMap\nmetadata: {name: m, namespace: ml}\n"
		"spec:\n  placement: all-or-nothing\n  gangSize: 2\n  map: |\n    0=node1:0\n    1=node2:3\n";
	static const char pod[] =
		"kind: List\nitems:\n- kind: GPUPlacementMap\n  metadata: {name: m}\n  spec: {map: \"0=node1:0\"}\n"
		"- kind: Pod\n  metadata:\n    name: p-1\n    annotations: {gpu-scheduler.io/placement-map: m}\n"
		"  spec: {schedulerName: gpu-scheduler}\n";
	static const char cron[] =
		"kind: GPUPlacementMap\nmetadata: {name: m}\nspec:\n  placement: all-or-nothing\n"
		"  map: \"0=node1:0\\n1=node1:1\\n2=node1:2\"\n---\nkind: CronJob\nmetadata: {name: c}\nspec:\n"
		"  jobTemplate:\n    spec:\n      completionMode: Indexed\n      completions: 3\n      parallelism: 2\n"
		"      template:\n        metadata:\n          annotations: {gpu-scheduler.io/placement-map: m}\n"
		"        spec: {schedulerName: gpu-scheduler}\n";
	static const char quoted[] = "kind: GPUPlacementMap\nmetadata: {name: q}\nspec:\n  map: \"0=node1:0\\nbad\"\n";
	static const char empty[] = "kind: Pod\nmetadata:\n  name: p-0\n  annotations:\n"
				    "    gpu-scheduler.io/placement-map: \"\"\nspec: {schedulerName: gpu-scheduler}\n";
	struct gs_lint *l;

	(void)state;
	l = lint_text(NULL, 0, before);
	assert_int_equal(gs_lint_count(l), 0);
	assert_int_equal(gs_lint_workloads(l), 1);
	gs_lint_free(l);
	/* node2 advertises 2 GPUs: device 3 of the object's entry 1, at its line */
	l = lint_text(nodes, 2, before);
	HAS(l, "t", 20, GS_LINT_WARNING, "StatefulSet ml/s", "node \"node2\" advertises 2 nvidia.com/gpu",
	    "NODE_DEVICES");
	assert_int_equal(gs_lint_count(l), 1);
	gs_lint_free(l);

	/* a Pod's index 1 has no entry in the object's map (a List, no namespace on either) */
	l = lint_text(NULL, 0, pod);
	HAS(l, "t", 9, GS_LINT_WARNING, "Pod p-1", "index 1 has no entry", "NO_ENTRY");
	assert_int_equal(gs_lint_count(l), 1);
	gs_lint_free(l);

	/* the gang of the map's 3 entries against parallelism 2, at the reference */
	l = lint_text(NULL, 0, cron);
	HAS(l, "t", 17, GS_LINT_ERROR, "CronJob c",
	    "the gang of the map's 3 entries (no GPUPlacementMap m spec.gangSize", "more than parallelism 2");
	assert_int_equal(gs_lint_count(l), 1);
	gs_lint_free(l);

	/* a quoted map: its problem at spec.map's line, the map's line in the message */
	l = lint_text(NULL, 0, quoted);
	HAS(l, "t", 4, GS_LINT_ERROR, "GPUPlacementMap q: spec.map line 2: missing '='");
	assert_int_equal(gs_lint_count(l), 1);
	gs_lint_free(l);

	l = lint_text(NULL, 0, empty);
	HAS(l, "t", 5, GS_LINT_ERROR, "Pod p-0",
	    "the gpu-scheduler.io/placement-map annotation is not an object's name");
	assert_int_equal(gs_lint_count(l), 1);
	gs_lint_free(l);

	/* an object's fields of the wrong YAML type, or no map: one error each, at its line */
	static const struct {
		const char *spec, *msg;
		int line;
	} fields[] = {
		{"  gangTimeout: 10\n  map: \"0=n:0\"", "spec.gangTimeout: 10 is not a string in YAML", 4},
		{"  placement: true\n  map: \"0=n:0\"", "spec.placement: true is not a string in YAML", 4},
		{"  gangSize: [2]\n  map: \"0=n:0\"", "spec.gangSize is not an integer", 4},
		{"  map: [0=n:0]", "spec.map is not a string", 4},
		{"  placement: all-or-nothing", "no spec.map (the CRD requires it)", 4}, /* the spec mapping's line */
		{"  placement: all-or-nothing\n  gangSize: 1\n  gangTimeout: 1h\n  map: \"0=n:0\"", NULL, 0},
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), "kind: GPUPlacementMap\nmetadata: {name: f}\nspec:\n%s\n", fields[i].spec);
		l = lint_text(NULL, 0, text);
		if (fields[i].msg)
			HAS(l, "t", fields[i].line, GS_LINT_ERROR, "GPUPlacementMap f", fields[i].msg);
		assert_int_equal(gs_lint_count(l), fields[i].msg ? 1 : 0);
		gs_lint_free(l);
	}
}

/* ---- the examples: deploy/ and the README ------------------------------------------------------------ */

static void test_deploy_examples_are_clean(void **state)
{
	struct gs_lint_node nodes[] = {
		{"node1", NULL, 4, 0, 0}, {"node2", NULL, 4, 0, 0}, {"node3", NULL, 4, 0, 0}, {"node4", NULL, 4, 0, 0}};
	glob_t g;
	(void)state;
	assert_int_equal(glob("deploy/examples/*.yaml", 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 1);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct gs_lint *l = lint_files(nodes, 4, g.gl_pathv[i], NULL);
		print_message("  %s: %zu workloads\n", g.gl_pathv[i], gs_lint_workloads(l));
		dump(l);
		assert_int_equal(gs_lint_count(l), 0);
		assert_true(gs_lint_workloads(l) >= 1);
		gs_lint_free(l);
	}
	/* all together: they run side by side (no device of two), check-statefulset-by-reference.yaml's
	 * object found by its StatefulSet (no note) */
	struct gs_lint_opts o = {.nodes = nodes, .n_nodes = 4, .have_nodes = 1};
	struct gs_lint *all = gs_lint_new(&o);
	for (size_t i = 0; i < g.gl_pathc; i++)
		add_file(all, g.gl_pathv[i]);
	gs_lint_finish(all);
	dump(all);
	assert_int_equal(gs_lint_count(all), 0);
	assert_int_equal(gs_lint_workloads(all), g.gl_pathc);
	gs_lint_free(all);
	globfree(&g);
}

/*
 * The README's ```yaml blocks (a line holding only "..." elides the rest of a spec: dropped), and the
 * map of its "The annotation" block in a StatefulSet of 3 replicas (linted apart: the two examples share
 * node1's GPUs, as two workloads of one cluster should not).
 */
static void test_readme_examples_are_clean(void **state)
{
	struct gs_lint_node nodes[] = {
		{"node1", NULL, 4, 0, 0}, {"node2", NULL, 4, 0, 0}, {"node3", NULL, 4, 0, 0}, {"node4", NULL, 4, 0, 0}};
	struct gs_lint_opts o = {.nodes = nodes, .n_nodes = 4, .have_nodes = 1};
	struct gs_lint *l = gs_lint_new(&o), *la = gs_lint_new(&o);
	size_t len, blocks = 0, maps = 0;
	char *readme = slurp("README.md", &len), *p = readme;

	(void)state;
	while ((p = strstr(p, "\n```"))) {
		char *start = p + 4, *body = strchr(start, '\n'), *end;
		if (!body)
			break;
		end = strstr(body, "\n```");
		assert_non_null(end);
		char lang[16] = "";
		snprintf(lang, sizeof(lang), "%.*s", (int)(body - start < 15 ? body - start : 15), start);
		size_t n = (size_t)(end - body);
		char *text = calloc(1, n + 512);
		assert_non_null(text);
		if (!strcmp(lang, "yaml")) {
			/* copy line by line, without the "..." elisions */
			char *o2 = text;
			for (char *line = body + 1; line < end;) {
				char *nl = memchr(line, '\n', (size_t)(end - line));
				size_t ll = nl ? (size_t)(nl - line) : (size_t)(end - line);
				if (strspn(line, " ") + 3 != ll || strncmp(line + strspn(line, " "), "...", 3)) {
					memcpy(o2, line, ll);
					o2 += ll;
					*o2++ = '\n';
				}
				line += ll + 1;
			}
			gs_lint_add(l, "README.md yaml block", text, strlen(text));
			blocks++;
		} else if (!strncmp(body + 1, "gpu-scheduling-map: |", 21)) {
			int w = snprintf(text, n + 512,
					 "kind: StatefulSet\nmetadata: {name: readme}\nspec:\n  replicas: 3\n"
					 "  template:\n    metadata:\n      annotations:\n");
			for (char *line = body + 1; line < end;) {
				char *nl = memchr(line, '\n', (size_t)(end - line));
				size_t ll = nl ? (size_t)(nl - line) : (size_t)(end - line);
				w += snprintf(text + w, n + 512 - (size_t)w, "        %.*s\n", (int)ll, line);
				line += ll + 1;
			}
			snprintf(text + w, n + 512 - (size_t)w, "    spec: {schedulerName: gpu-scheduler}\n");
			gs_lint_add(la, "README.md annotation block", text, strlen(text));
			maps++;
		}
		free(text);
		p = end + 4;
	}
	free(readme);
	gs_lint_finish(l);
	gs_lint_finish(la);
	dump(l);
	dump(la);
	assert_true(blocks >= 1);
	assert_int_equal(maps, 1);
	assert_int_equal(gs_lint_workloads(l), blocks);
	assert_int_equal(gs_lint_workloads(la), maps);
	assert_int_equal(gs_lint_count(l), 0);
	assert_int_equal(gs_lint_count(la), 0);
	gs_lint_free(l);
	gs_lint_free(la);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_map_names_the_line_in_the_file),
		cmocka_unit_test(test_every_problem_of_a_map),
		cmocka_unit_test(test_problems_are_bounded),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_nesting_depth_is_capped),
		cmocka_unit_test(test_reach),
		cmocka_unit_test(test_good_is_clean),
		cmocka_unit_test(test_node_gpus),
		cmocka_unit_test(test_claims_across_files),
		cmocka_unit_test(test_shared_claims),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_dedicated_taint),
		cmocka_unit_test(test_yaml_errors_and_scalar_styles),
		cmocka_unit_test(test_gang),
		cmocka_unit_test(test_gpm),
		cmocka_unit_test(test_gpm_reference),
		cmocka_unit_test(test_deploy_examples_are_clean),
		cmocka_unit_test(test_readme_examples_are_clean),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
