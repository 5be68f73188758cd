/*
 * test_inuse.c: the devices-in-use annotation (sched/inuse.h): parse, format, the round trip, every
 * refusal with its line, the limits, and the time fields.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/inuse.h"

static char err[256];

static struct gs_inuse *parse_ok(const char *text)
{
	struct gs_inuse *u = NULL;
	int r = gs_inuse_parse(text, strlen(text), &u, err, sizeof(err));
	if (r != 0)
		fail_msg("%s: %s", text, err);
	return u;
}

static void refused(const char *text, const char *want)
{
	struct gs_inuse *u = (void *)1;
	int r = gs_inuse_parse(text, strlen(text), &u, err, sizeof(err));
	if (r != -EINVAL || u != NULL || !strstr(err, want))
		fail_msg("%s: r=%d err=\"%s\", want \"%s\"", text, r, err, want);
}

static void test_typical(void **state)
{
	(void)state;
	struct gs_inuse *u = parse_ok("v1 2026-11-25T15:21:34Z\n"
				      "index 0=GPU-aa 1=GPU-bb 3=GPU-dd\n"
				      "nvidia.com/gpu GPU-bb team-b/infer-7\n"
				      "nvidia.com/gpu GPU-dd team-b/infer-8\n"
				      "nvidia.com/mig-1g.5gb MIG-01 ml/r-0\n");
	int64_t want;
	assert_int_equal(gs_inuse_time_parse("2026-11-25T15:21:34Z", 20, &want), 0);
	assert_int_equal(u->at_ms, want);
	assert_null(u->error);
	assert_int_equal(u->n_index, 4);
	assert_string_equal(gs_inuse_index_id(u, 0), "GPU-aa");
	assert_string_equal(gs_inuse_index_id(u, 1), "GPU-bb");
	assert_null(gs_inuse_index_id(u, 2));
	assert_string_equal(gs_inuse_index_id(u, 3), "GPU-dd");
	assert_null(gs_inuse_index_id(u, 4));
	assert_null(gs_inuse_index_id(u, -1));
	assert_int_equal(u->n_devs, 3);
	assert_string_equal(u->devs[0].resource, "nvidia.com/gpu");
	assert_string_equal(u->devs[0].id, "GPU-bb");
	assert_string_equal(u->devs[0].holder, "team-b/infer-7");
	assert_string_equal(u->devs[2].resource, "nvidia.com/mig-1g.5gb");
	assert_string_equal(u->devs[2].holder, "ml/r-0");
	gs_inuse_free(u);

	u = parse_ok("v1 1970-01-01T00:00:00Z");
	assert_int_equal(u->at_ms, 0);
	assert_int_equal(u->n_devs, 0);
	assert_null(gs_inuse_index_id(u, 0));
	gs_inuse_free(u);

	u = parse_ok("v1 2026-11-25T15:21:34Z\nerror the kubelet's PodResources socket /x/kubelet.sock does not exist");
	assert_string_equal(u->error, "the kubelet's PodResources socket /x/kubelet.sock does not exist");
	assert_int_equal(u->n_devs, 0);
	gs_inuse_free(u);
	gs_inuse_free(NULL);
}

static void test_refused(void **state)
{
	(void)state;
	refused("", "line 1: want \"v1");
	refused("v2 2026-11-25T15:21:34Z", "line 1: version v2, this scheduler reads v1");
	refused("v1 2026-11-25 15:21:34Z", "line 1: want");
	refused("v1 2026-02-30T00:00:00Z", "line 1: want");
	refused("v1 2025-02-29T00:00:00Z", "line 1: want");
	refused("v1 2026-11-25T15:21:34Z\n\n", "line 2: want RESOURCE DEVICE-ID NAMESPACE/POD");
	refused("v1 2026-11-25T15:21:34Z\nnvidia.com/gpu GPU-aa", "line 2: want RESOURCE");
	refused("v1 2026-11-25T15:21:34Z\nnvidia.com/gpu GPU-aa a/b extra", "line 2: want RESOURCE");
	refused("v1 2026-11-25T15:21:34Z\nnvidia.com/gpu  GPU-aa a/b", "line 2: want RESOURCE");
	refused("v1 2026-11-25T15:21:34Z\nnvidia.com/gpu GPU-aa ab", "line 2: holder: not namespace/pod");
	refused("v1 2026-11-25T15:21:34Z\nnvidia.com/gpu GPU-aa a/b/c", "holder: not namespace/pod");
	refused("v1 2026-11-25T15:21:34Z\nnvidia.com/gpu GPU-aa /b", "holder: not namespace/pod");
	refused("v1 2026-11-25T15:21:34Z\nr GPU-bb a/b\nr GPU-aa a/b", "line 3: r GPU-aa out of order");
	refused("v1 2026-11-25T15:21:34Z\nr GPU-aa a/b\nr GPU-aa c/d", "line 3: r GPU-aa given twice");
	refused("v1 2026-11-25T15:21:34Z\nr GPU-aa a/b\nindex 0=GPU-aa", "line 3: want RESOURCE");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa 0=GPU-bb", "line 2: index 0 given twice");
	refused("v1 2026-11-25T15:21:34Z\nindex 2=GPU-aa 1=GPU-bb", "line 2: index 1 after 2");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa 1=GPU-aa", "device GPU-aa given indices 0 and 1");
	refused("v1 2026-11-25T15:21:34Z\nindex 64=GPU-aa", "index 64: the table has room for 0..63");
	refused("v1 2026-11-25T15:21:34Z\nindex 01=GPU-aa", "want INDEX=ID");
	refused("v1 2026-11-25T15:21:34Z\nindex x=GPU-aa", "want INDEX=ID");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=", "index 0: device ID empty");
	refused("v1 2026-11-25T15:21:34Z\nindex ", "index entry \"\": want INDEX=ID");
	refused("v1 2026-11-25T15:21:34Z\nerror gone\nr GPU-aa a/b", "line 3: nothing may follow the error line");
	refused("v1 2026-11-25T15:21:34Z\nr GPU-aa a/b\nerror gone", "line 3: want RESOURCE");
	refused("v1 2026-11-25T15:21:34Z\nr GPU-\x01 a/b", "line 2: byte 0x01 is not printable ASCII");
	refused("v1 2026-11-25T15:21:34Z\tx", "line 1: byte 0x09");
	/* the mig line: right after the table, MIG-UUID=INDEX of a GPU of it, sorted by ID */
	refused("v1 2026-11-25T15:21:34Z\nmig MIG-a1=0", "line 2: want RESOURCE");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa\nr GPU-aa a/b\nmig MIG-a1=0", "line 4: want RESOURCE");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa\nmig MIG-a1=1", "line 3: mig MIG-a1: the table has no GPU 1");
	refused("v1 2026-11-25T15:21:34Z\nindex 1=GPU-aa\nmig MIG-a1=0", "line 3: mig MIG-a1: the table has no GPU 0");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa\nmig GPU-a1=0", "mig entry \"GPU-a1=0\": want MIG-UUID=INDEX");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa\nmig MIG-=0", "want MIG-UUID=INDEX");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa\nmig MIG-a1=00", "want MIG-UUID=INDEX");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa\nmig MIG-a1=0=0", "want MIG-UUID=INDEX"); /* fuzz_inuse */
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa\nmig MIG-a1=", "want MIG-UUID=INDEX");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa\nmig MIG-a2=0 MIG-a1=0", "mig MIG-a1 out of order");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa\nmig MIG-a1=0 MIG-a1=0", "mig MIG-a1 given twice");
	refused("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa\nmig MIG-a1=0  MIG-a2=0", "want MIG-UUID=INDEX");

	/* a field of 257 bytes; a pod name of 254 */
	char text[1024];
	snprintf(text, sizeof(text), "v1 2026-11-25T15:21:34Z\nr %0257d a/b", 0);
	refused(text, "device ID: longer than 256 bytes");
	snprintf(text, sizeof(text), "v1 2026-11-25T15:21:34Z\nr GPU-aa a/%0254d", 0);
	refused(text, "holder: ");
}

static void test_limits(void **state)
{
	(void)state;
	size_t size = 64 + (GS_INUSE_MAX_DEVS + 1) * 40;
	char *text = malloc(size);
	size_t len = (size_t)snprintf(text, size, "v1 2026-11-25T15:21:34Z");
	struct gs_inuse *u;

	for (int i = 0; i < GS_INUSE_MAX_DEVS; i++)
		len += (size_t)snprintf(text + len, size - len, "\nr GPU-%06d ns/p%d", i, i);
	u = parse_ok(text);
	assert_int_equal(u->n_devs, GS_INUSE_MAX_DEVS);
	gs_inuse_free(u);
	snprintf(text + len, size - len, "\nr GPU-999999 ns/p");
	refused(text, "more than 1024 devices");
	free(text);

	text = malloc(GS_INUSE_MAX_BYTES + 2);
	memset(text, 'a', GS_INUSE_MAX_BYTES + 1);
	text[GS_INUSE_MAX_BYTES + 1] = '\0';
	refused(text, "bytes, more than");
	free(text);
}

static void test_format_round_trip(void **state)
{
	(void)state;
	const char *index[] = {"GPU-aa", NULL, "GPU-cc"};
	struct gs_inuse_dev devs[] = {
		{"nvidia.com/gpu", "GPU-cc", "team-b/infer-7"},
		{"nvidia.com/gpu", "GPU-aa", "team-a/x"},
		{"a.io/dev", "z", "n/p"},
	};
	struct gs_inuse in = {.at_ms = 1795620094000, .n_index = 3, .index = index, .n_devs = 3, .devs = devs};
	char *text = gs_inuse_format(&in, err, sizeof(err));

	assert_non_null(text);
	assert_string_equal(text, "v1 2026-11-25T15:21:34Z\n"
				  "index 0=GPU-aa 2=GPU-cc\n"
				  "a.io/dev z n/p\n"
				  "nvidia.com/gpu GPU-aa team-a/x\n"
				  "nvidia.com/gpu GPU-cc team-b/infer-7");
	struct gs_inuse *u = parse_ok(text);
	assert_int_equal(u->at_ms, in.at_ms);
	assert_int_equal(u->n_index, 3);
	assert_string_equal(gs_inuse_index_id(u, 2), "GPU-cc");
	assert_int_equal(u->n_devs, 3);
	assert_string_equal(u->devs[1].holder, "team-a/x");
	char *again = gs_inuse_format(u, err, sizeof(err));
	assert_string_equal(again, text);
	free(again);
	free(text);
	gs_inuse_free(u);

	struct gs_inuse e = {.at_ms = 0, .error = "socket missing"};
	text = gs_inuse_format(&e, err, sizeof(err));
	assert_string_equal(text, "v1 1970-01-01T00:00:00Z\nerror socket missing");
	free(text);
}

static void test_format_refused(void **state)
{
	(void)state;
	struct gs_inuse_dev dup[] = {{"r", "GPU-aa", "a/b"}, {"r", "GPU-aa", "c/d"}};
	struct gs_inuse_dev blank[] = {{"r", "GPU aa", "a/b"}};
	struct gs_inuse_dev holder[] = {{"r", "GPU-aa", "ab"}};
	const char *index[] = {"GPU a"};
	struct gs_inuse in = {.n_devs = 2, .devs = dup};

	assert_null(gs_inuse_format(&in, err, sizeof(err)));
	assert_non_null(strstr(err, "r GPU-aa held twice"));
	in = (struct gs_inuse){.n_devs = 1, .devs = blank};
	assert_null(gs_inuse_format(&in, err, sizeof(err)));
	assert_non_null(strstr(err, "device ID \"GPU aa\": a blank"));
	in = (struct gs_inuse){.n_devs = 1, .devs = holder};
	assert_null(gs_inuse_format(&in, err, sizeof(err)));
	assert_non_null(strstr(err, "holder \"ab\": not namespace/pod"));
	in = (struct gs_inuse){.n_index = 1, .index = index};
	assert_null(gs_inuse_format(&in, err, sizeof(err)));
	assert_non_null(strstr(err, "index 0"));
	in = (struct gs_inuse){.error = "two\nlines"};
	assert_null(gs_inuse_format(&in, err, sizeof(err)));
	in = (struct gs_inuse){.error = "x", .n_devs = 1, .devs = holder};
	assert_null(gs_inuse_format(&in, err, sizeof(err)));
	in = (struct gs_inuse){.n_index = GS_INUSE_MAX_INDEX + 1, .index = index};
	assert_null(gs_inuse_format(&in, err, sizeof(err)));
}

static void test_time(void **state)
{
	(void)state;
	static const char *const ok[] = {"1970-01-01T00:00:00Z", "2000-02-29T23:59:59Z", "2026-11-25T15:21:34Z",
					 "2100-12-31T00:00:01Z", "9999-12-31T23:59:59Z"};
	char out[21];
	int64_t ms;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(gs_inuse_time_parse(ok[i], 20, &ms), 0);
		gs_inuse_time_format(ms, out);
		assert_string_equal(out, ok[i]);
	}
	assert_int_equal(gs_inuse_time_parse("2026-11-25T15:21:34Z", 20, &ms), 0);
	assert_int_equal(ms, 1795620094000);
	assert_int_equal(gs_inuse_time_parse("1969-12-31T23:59:59Z", 20, &ms), -EINVAL);
	assert_int_equal(gs_inuse_time_parse("2026-11-25T24:00:00Z", 20, &ms), -EINVAL);
	assert_int_equal(gs_inuse_time_parse("2026-11-25T15:21:34+00:00", 25, &ms), -EINVAL);
	assert_int_equal(gs_inuse_time_parse("2026-11-25T15:21:34.5Z", 22, &ms), -EINVAL);
	assert_int_equal(gs_inuse_time_parse("2026-13-25T15:21:34Z", 20, &ms), -EINVAL);
	gs_inuse_time_format(1795620094999, out);
	assert_string_equal(out, "2026-11-25T15:21:34Z");
}

/* A replica's device ID names its GPU up to the first "::" (the NVIDIA device plugin's AnnotatedID). */
static void test_physical(void **state)
{
	(void)state;
	assert_int_equal(gs_inuse_physical_len("GPU-8f2c"), 8);
	assert_int_equal(gs_inuse_physical_len("GPU-8f2c::3"), 8);
	assert_int_equal(gs_inuse_physical_len("MIG-1a2b::0"), 8);
	assert_int_equal(gs_inuse_physical_len("GPU-aa::1::2"), 6); /* the first "::", as SplitN(id, "::", 2) */
	assert_int_equal(gs_inuse_physical_len("::0"), 0);
	assert_int_equal(gs_inuse_physical_len("GPU-aa:1"), 8); /* one colon is part of an ID */
	assert_int_equal(gs_inuse_physical_len(""), 0);
	/* the resources a list names (the engine's --gpu-resources, the agent's --resources) */
	assert_true(gs_inuse_resource_match("nvidia.com/gpu, nvidia.com/gpu.shared", "nvidia.com/gpu.shared"));
	assert_false(gs_inuse_resource_match("nvidia.com/gpu", "nvidia.com/gpu.shared"));
	assert_true(gs_inuse_resource_match("nvidia.com/mig-,nvidia.com/", "nvidia.com/mig-1g.5gb"));
	assert_false(gs_inuse_resource_match(NULL, "nvidia.com/gpu"));
	assert_true(gs_inuse_resource_match("nvidia.com/gpu,nvidia.com/mig-*", "nvidia.com/mig-1g.10gb"));
	assert_false(gs_inuse_resource_match("nvidia.com/mig-*", "nvidia.com/mig-"));
	assert_false(gs_inuse_resource_match("nvidia.com/mig-*", "nvidia.com/gpu"));
	assert_true(gs_inuse_resource_match("*", "example.com/vgpu"));

	/* MIG instances: their parent by the mig line; the physical GPU of an ID */
	struct gs_inuse *u =
		parse_ok("v1 2026-11-25T15:21:34Z\nindex 0=GPU-aa 1=GPU-bb\nmig MIG-a1=0 MIG-a2=0 MIG-b1=1\n"
			 "nvidia.com/mig-1g.10gb MIG-a1 ml/x-0");
	const char *id;
	size_t len;
	assert_int_equal(u->n_mig, 3);
	assert_int_equal(gs_inuse_mig_parent(u, "MIG-a1", 6), 0);
	assert_int_equal(gs_inuse_mig_parent(u, "MIG-b1,0", 6), 1); /* a device of a list: its length */
	assert_int_equal(gs_inuse_mig_parent(u, "MIG-a", 5), -1);
	assert_int_equal(gs_inuse_mig_parent(u, "MIG-c1", 6), -1);
	assert_int_equal(gs_inuse_mig_parent(u, "GPU-aa", 6), -1);
	assert_int_equal(gs_inuse_mig_parent(NULL, "MIG-a1", 6), -1);
	gs_inuse_physical(u, "MIG-a2", 6, &id, &len);
	assert_int_equal(len, 6);
	assert_memory_equal(id, "GPU-aa", 6);
	gs_inuse_physical(u, "GPU-bb::3", 9, &id, &len);
	assert_int_equal(len, 6);
	assert_memory_equal(id, "GPU-bb", 6);
	gs_inuse_physical(NULL, "MIG-zz::1,2", 9, &id, &len); /* no data: up to "::" within len */
	assert_int_equal(len, 6);
	gs_inuse_physical(u, "GPU-b::", 6, &id, &len); /* a "::" past len is not one */
	assert_int_equal(len, 6);
	char ferr[128], *t = gs_inuse_format(u, ferr, sizeof(ferr));
	assert_non_null(t);
	assert_non_null(strstr(t, "\nmig MIG-a1=0 MIG-a2=0 MIG-b1=1\nnvidia.com/mig-1g.10gb MIG-a1 ml/x-0"));
	free(t);
	u->mig[0].parent = 5; /* no such GPU: format refuses */
	assert_null(gs_inuse_format(u, ferr, sizeof(ferr)));
	assert_non_null(strstr(ferr, "mig MIG-a1"));
	gs_inuse_free(u);
	assert_false(gs_inuse_resource_match(",,", "nvidia.com/gpu"));
}

/* A node's physical GPUs: the table, else GFD's count, else the larger of capacity and allocatable. */
static void test_node_gpus(void **state)
{
	static const struct {
		size_t table;
		const char *label;
		int64_t cap, alloc, want;
		enum gs_gpus_from from;
		const char *words;
	} cases[] = {
		{4, "8", 16, 16, 4, GS_GPUS_TABLE, "has 4 GPUs by its agent's index table"},
		{0, "4", 16, 16, 4, GS_GPUS_LABEL, "has 4 GPUs by its label nvidia.com/gpu.count"},
		{0, "1", 4, 4, 1, GS_GPUS_LABEL, "has 1 GPU by its label nvidia.com/gpu.count"},
		{0, "0", 4, 4, 0, GS_GPUS_LABEL, "has 0 GPUs by its label nvidia.com/gpu.count"},
		{0, NULL, 16, 12, 16, GS_GPUS_ADVERTISED, "advertises 16 nvidia.com/gpu"}, /* unhealthy: capacity */
		{0, NULL, -1, 2, 2, GS_GPUS_ADVERTISED, "advertises 2 nvidia.com/gpu"},
		{0, "", 3, -1, 3, GS_GPUS_ADVERTISED, "advertises 3 nvidia.com/gpu"},       /* not a count */
		{0, "-4", 3, 3, 3, GS_GPUS_ADVERTISED, "advertises 3 nvidia.com/gpu"},      /* not a count */
		{0, "1234567", 3, 3, 3, GS_GPUS_ADVERTISED, "advertises 3 nvidia.com/gpu"}, /* 7 digits */
		{0, "4x", -1, -1, -1, GS_GPUS_ADVERTISED, "advertises -1 nvidia.com/gpu"},  /* none */
	};
	char words[128];
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum gs_gpus_from from = (enum gs_gpus_from) - 1;
		int64_t n = gs_inuse_node_gpus(cases[i].table, cases[i].label, cases[i].cap, cases[i].alloc, &from);
		if (n != cases[i].want || from != cases[i].from)
			fail_msg("case %zu: %lld from %d, want %lld from %d", i, (long long)n, (int)from,
				 (long long)cases[i].want, (int)cases[i].from);
		gs_inuse_node_gpus_words(n, from, words, sizeof(words));
		assert_string_equal(words, cases[i].words);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_typical),        cmocka_unit_test(test_refused),
		cmocka_unit_test(test_limits),         cmocka_unit_test(test_format_round_trip),
		cmocka_unit_test(test_format_refused), cmocka_unit_test(test_time),
		cmocka_unit_test(test_physical),       cmocka_unit_test(test_node_gpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
