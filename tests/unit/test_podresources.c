/*
 * test_podresources.c: the PodResources v1 List reply decoder (k8s/podresources.h), on replies encoded
 * from JSON by pb_encode.h (pbe_pr_list) and on hand-built bytes for what JSON cannot say (field
 * order, truncation, caps).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/podresources.h"
#include "pb_encode.h"

static char err[512];

/* Encodes json as a ListPodResourcesResponse into b (initialised here). */
static void encode(struct gs_buf *b, const char *json)
{
	cJSON *o = cJSON_Parse(json);
	assert_non_null(o);
	gs_buf_init(b, 0);
	pbe_failed_key = "";
	assert_int_equal(pbe_msg(b, o, pbe_pr_list), 0);
	cJSON_Delete(o);
}

static int decode_json(const char *json, struct gs_podres_list *l)
{
	struct gs_buf b;
	int rc;
	encode(&b, json);
	rc = gs_podres_list_decode(b.data ? b.data : "", b.len, l, err, sizeof err);
	gs_buf_free(&b);
	return rc;
}

static void assert_dev(const struct gs_podres_dev *d, const char *ns, const char *pod, const char *ctr, const char *res,
		       const char *id)
{
	assert_string_equal(d->ns, ns);
	assert_string_equal(d->pod, pod);
	assert_string_equal(d->container, ctr);
	assert_string_equal(d->resource, res);
	assert_string_equal(d->id, id);
}

static void test_typical(void **state)
{
	struct gs_podres_list l;
	assert_int_equal(
		decode_json(
			"{\"pod_resources\": ["
			" {\"name\": \"infer-7\", \"namespace\": \"team-b\", \"containers\": ["
			"   {\"name\": \"main\", \"devices\": ["
			"     {\"resource_name\": \"nvidia.com/gpu\", \"device_ids\": [\"GPU-8f2c0a51-1b7e-4c3d-9a2f-0d6e5b4c3a21\","
			"      \"GPU-11111111-2222-3333-4444-555555555555\"]},"
			"     {\"resource_name\": \"example.com/nic\", \"device_ids\": [\"nic0\"]}]},"
			"   {\"name\": \"sidecar\"}]},"
			" {\"name\": \"web\", \"namespace\": \"default\", \"containers\": [{\"name\": \"nginx\"}]},"
			" {\"name\": \"train-0\", \"namespace\": \"ml\", \"containers\": ["
			"   {\"name\": \"rank\", \"devices\": [{\"resource_name\": \"nvidia.com/gpu\","
			"     \"device_ids\": [\"MIG-4f1d2e3c-aaaa-bbbb-cccc-0123456789ab\"]}]}]}]}",
			&l),
		0);
	assert_string_equal(err, "");
	assert_int_equal(l.n, 4);
	assert_int_equal(l.pods, 3);
	assert_int_equal(l.containers, 4);
	assert_dev(&l.devs[0], "team-b", "infer-7", "main", "nvidia.com/gpu",
		   "GPU-8f2c0a51-1b7e-4c3d-9a2f-0d6e5b4c3a21");
	assert_dev(&l.devs[1], "team-b", "infer-7", "main", "nvidia.com/gpu",
		   "GPU-11111111-2222-3333-4444-555555555555");
	assert_dev(&l.devs[2], "team-b", "infer-7", "main", "example.com/nic", "nic0");
	assert_dev(&l.devs[3], "ml", "train-0", "rank", "nvidia.com/gpu", "MIG-4f1d2e3c-aaaa-bbbb-cccc-0123456789ab");
	/* one copy of each string per message it came from */
	assert_ptr_equal(l.devs[0].pod, l.devs[2].pod);
	assert_ptr_equal(l.devs[0].resource, l.devs[1].resource);
	gs_podres_list_free(&l);
	gs_podres_list_free(&l); /* twice is safe */
}

static void test_empty_and_later_fields(void **state)
{
	struct gs_podres_list l;
	assert_int_equal(gs_podres_list_decode("", 0, &l, err, sizeof err), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.pods, 0);
	assert_null(l.devs);
	gs_podres_list_free(&l);
	/* fields of later kubelets (topology, cpu_ids) are skipped */
	assert_int_equal(
		decode_json("{\"pod_resources\": [{\"name\": \"p\", \"namespace\": \"n\", \"containers\": ["
			    " {\"name\": \"c\", \"cpu_ids\": 3, \"devices\": [{\"resource_name\": \"nvidia.com/gpu\","
			    "  \"device_ids\": [\"GPU-1\"], \"topology\": {}}]}]}]}",
			    &l),
		0);
	assert_int_equal(l.n, 1);
	assert_dev(&l.devs[0], "n", "p", "c", "nvidia.com/gpu", "GPU-1");
	gs_podres_list_free(&l);
}

/* Field order is not promised: children before the names they belong to. */
static void test_names_after_children(void **state)
{
	struct gs_buf dev, ctr, pod, list;
	struct gs_podres_list l;
	gs_buf_init(&dev, 0), gs_buf_init(&ctr, 0), gs_buf_init(&pod, 0), gs_buf_init(&list, 0);
	pbe_bytes(&dev, 2, "GPU-a", 5);
	pbe_bytes(&dev, 1, "nvidia.com/gpu", 14);
	pbe_bytes(&dev, 2, "GPU-b", 5);
	pbe_bytes(&ctr, 2, dev.data, dev.len);
	pbe_bytes(&ctr, 1, "c", 1);
	pbe_bytes(&pod, 3, ctr.data, ctr.len);
	pbe_bytes(&pod, 2, "ns", 2);
	pbe_bytes(&pod, 1, "p", 1);
	pbe_bytes(&list, 1, pod.data, pod.len);
	assert_int_equal(gs_podres_list_decode(list.data, list.len, &l, err, sizeof err), 0);
	assert_int_equal(l.n, 2);
	assert_dev(&l.devs[0], "ns", "p", "c", "nvidia.com/gpu", "GPU-a");
	assert_dev(&l.devs[1], "ns", "p", "c", "nvidia.com/gpu", "GPU-b");
	gs_podres_list_free(&l);
	/* truncated anywhere: refused, nothing left */
	for (size_t cut = 1; cut < list.len; cut++) {
		int rc = gs_podres_list_decode(list.data, cut, &l, err, sizeof err);
		assert_int_equal(rc, -EINVAL);
		assert_non_null(strstr(err, "malformed protobuf"));
		assert_null(l.devs);
		assert_null(l.arena);
	}
	gs_buf_free(&dev), gs_buf_free(&ctr), gs_buf_free(&pod), gs_buf_free(&list);
}

static void expect_error(const char *json, const char *want)
{
	struct gs_podres_list l;
	int rc = decode_json(json, &l);
	assert_int_equal(rc, -EINVAL);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not say \"%s\"", err, want);
	assert_int_equal(l.n, 0);
	assert_null(l.devs);
}

static void test_refused(void **state)
{
	expect_error("{\"pod_resources\": [{\"name\": 7, \"namespace\": \"n\"}]}",
		     "pod_resources[0].name: varint, not a string");
	expect_error("{\"pod_resources\": [{\"name\": \"p\"}]}", "pod_resources[0]: a pod without a namespace");
	expect_error("{\"pod_resources\": [{\"namespace\": \"n\"}]}", "a pod without a name");
	expect_error(
		"{\"pod_resources\": [{\"name\": \"p\", \"namespace\": \"n\", \"containers\": [{\"devices\": []}]}]}",
		"containers[0]: a container without a name");
	expect_error("{\"pod_resources\": [{\"name\": \"p\", \"namespace\": \"n\", \"containers\": [{\"name\": \"c\","
		     " \"devices\": [{\"device_ids\": [\"GPU-1\"]}]}]}]}",
		     "pod_resources[0].containers[0].devices[0]: no resource_name");
	expect_error(
		"{\"pod_resources\": [{\"name\": \"p\", \"namespace\": \"n\", \"containers\": [{\"name\": \"c\","
		" \"devices\": [{\"resource_name\": \"nvidia.com/gpu\", \"device_ids\": [\"GPU-1\", \"GPU 2\"]}]}]}]}",
		"devices[0].device_ids[1]: byte 0x20 at 3 is not printable ASCII");
	expect_error("{\"pod_resources\": [{\"name\": \"p\", \"namespace\": \"n\", \"containers\": [{\"name\": \"c\","
		     " \"devices\": [{\"resource_name\": \"nvidia.com/gpu\", \"device_ids\": [\"\"]}]}]}]}",
		     "device_ids[0]: empty");
	/* a message where a repeated message belongs */
	struct gs_buf b;
	struct gs_podres_list l;
	gs_buf_init(&b, 0);
	pbe_tag(&b, 1, 0);
	pbe_varint(&b, 5);
	assert_int_equal(gs_podres_list_decode(b.data, b.len, &l, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "pod_resources[0]: varint, not a message"));
	/* a name over its cap */
	char name[GS_PODRES_MAX_NAME + 2];
	memset(name, 'a', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	char json[600];
	snprintf(json, sizeof json, "{\"pod_resources\": [{\"name\": \"%s\", \"namespace\": \"n\"}]}", name);
	expect_error(json, "254 bytes, over the cap of 253");
	name[GS_PODRES_MAX_NAME] = '\0';
	snprintf(json, sizeof json, "{\"pod_resources\": [{\"name\": \"%s\", \"namespace\": \"n\"}]}", name);
	assert_int_equal(decode_json(json, &l), 0);
	assert_int_equal(l.pods, 1);
	gs_podres_list_free(&l);
	gs_buf_free(&b);
}

static void test_device_cap(void **state)
{
	struct gs_buf dev, ctr, pod, list;
	struct gs_podres_list l;
	gs_buf_init(&dev, 0), gs_buf_init(&ctr, 0), gs_buf_init(&pod, 0), gs_buf_init(&list, 0);
	pbe_bytes(&dev, 1, "r", 1);
	for (int i = 0; i < GS_PODRES_MAX_DEVICES; i++)
		pbe_bytes(&dev, 2, "x", 1);
	pbe_bytes(&ctr, 1, "c", 1);
	pbe_bytes(&ctr, 2, dev.data, dev.len);
	pbe_bytes(&pod, 1, "p", 1);
	pbe_bytes(&pod, 2, "n", 1);
	pbe_bytes(&pod, 3, ctr.data, ctr.len);
	pbe_bytes(&list, 1, pod.data, pod.len);
	assert_int_equal(gs_podres_list_decode(list.data, list.len, &l, err, sizeof err), 0);
	assert_int_equal(l.n, GS_PODRES_MAX_DEVICES);
	gs_podres_list_free(&l);
	pbe_bytes(&list, 1, pod.data, pod.len); /* the same pod twice: one over */
	assert_int_equal(gs_podres_list_decode(list.data, list.len, &l, err, sizeof err), -E2BIG);
	assert_non_null(strstr(err, "more than 65536 devices"));
	assert_null(l.devs);
	gs_buf_free(&dev), gs_buf_free(&ctr), gs_buf_free(&pod), gs_buf_free(&list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_typical),
		cmocka_unit_test(test_empty_and_later_fields),
		cmocka_unit_test(test_names_after_children),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_device_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
