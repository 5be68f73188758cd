/*
 * fuzz_admission.c: libFuzzer driver for gs_admission_review.
 *
 * The first byte picks where the rest of the input goes, so that the fuzzer reaches past the JSON
 * syntax check:
 *   0..127   the whole input is the request body (seeds: tests/golden/admission/<case>.request.json)
 *   128..191 the map annotation of a fixed Pod CREATE
 *   192..223 the raw JSON of the "env" of its first container
 *   224..255 the map of the GPUPlacementMap d/fz that a fixed Pod CREATE names by reference
 * Maps as objects: the lookup (gs_admission_opts.map_lookup) holds fixed objects of the namespaces
 * "default" (the golden cases') and "d": ranks (a good map), gang (all-or-nothing settings), bad-map (a
 * map that does not parse), bad-gang (settings that do not parse), fz (the input's map, mode 224..255);
 * the name "later" answers -EAGAIN, every other name is unknown.
 * Every answer must be valid JSON, and a patch must decode from base64 to a JSON array; a patch that
 * records the generation comes with a pod by reference, and only with PATCHED.
 *
 * Build and run (from the repository root):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -Isrc \
 *     tests/fuzz/fuzz_admission.c src/webhook/admission.c src/webhook/jsonpatch.c src/sched/map.c \
 *     src/sched/map_cache.c src/sched/checks.c src/sched/objects.c \
 *     src/core/buf.c src/core/log.c src/core/hmap.c \
 *     -lcjson -lmbedcrypto -o build/fuzz_admission
 *   mkdir -p build/corpus/admission
 *   build/fuzz_admission -max_total_time=60 -dict=tests/fuzz/admission.dict \
 *     build/corpus/admission tests/golden/admission
 * (a seed file from the golden directory gets mode "whole body" through its first byte '{' or '[').
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <mbedtls/base64.h>

#include "core/buf.h"
#include "webhook/admission.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct gs_admission *adm;
static const char *fz_text = "";
static size_t fz_len;

static int lookup(void *ud, const char *ns, const char *name, struct gs_gpm_view *out)
{
	static const struct gs_gpm_view fixed[] = {
		{.name = "ranks", .generation = 3, .map_text = "0=node1:0,1\n1=node2:2\n2=node3:0,1,2\n3=node4:3\n"},
		{.name = "gang",
		 .generation = 5,
		 .map_text = "0=n:0\n1=n:1\n",
		 .placement = "all-or-nothing",
		 .gang_timeout = "10m",
		 .gang_size = "2"},
		{.name = "bad-map", .generation = 1, .map_text = "0=node1:0\n1=node2\n"},
		{.name = "bad-gang",
		 .generation = 2,
		 .map_text = "0=n:0\n",
		 .placement = "all-or-nothing",
		 .gang_timeout = "forever"},
	};
	(void)ud;
	if (strcmp(ns, "default") != 0 && strcmp(ns, "d") != 0)
		return 0;
	if (strcmp(name, "later") == 0)
		return -EAGAIN;
	if (strcmp(name, "fz") == 0) {
		*out = (struct gs_gpm_view){
			.ns = ns, .name = name, .uid = "u", .generation = 9, .map_text = fz_text, .map_len = fz_len};
		return 1;
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (strcmp(name, fixed[i].name) != 0)
			continue;
		*out = fixed[i];
		out->ns = ns;
		out->uid = "u";
		out->map_len = strlen(fixed[i].map_text);
		return 1;
	}
	return 0;
}

#define HEAD                                                                                                          \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"f\","            \
	"\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"namespace\":\"d\"," \
	"\"object\":{\"metadata\":{\"name\":\"w-2\",\"annotations\":{\"gpu-scheduling-map\":"

/* A pod of namespace d, index 1, naming the object fz. */
#define REF_POD                                                                                                       \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"f\","            \
	"\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"namespace\":\"d\"," \
	"\"object\":{\"metadata\":{\"name\":\"w-1\",\"annotations\":{\"gpu-scheduler.io/placement-map\":\"fz\","      \
	"\"gpu-scheduler.io/placement-map-generation\":\"8\"}},\"spec\":{\"schedulerName\":\"gpu-scheduler\","        \
	"\"containers\":[{\"name\":\"c\",\"env\":[{\"name\":\"CUDA_VISIBLE_DEVICES\",\"value\":\"1\"}]}]}}}}"

static void check_answer(const struct gs_buf *out, const struct gs_admission_result *res)
{
	if (res->generation_added && (res->outcome != GS_ADMISSION_PATCHED || !res->map_ref[0]))
		abort();
	cJSON *j = cJSON_ParseWithLength(out->data, out->len);
	if (!j)
		abort();
	const cJSON *resp = cJSON_GetObjectItemCaseSensitive(j, "response");
	const cJSON *patch = cJSON_GetObjectItemCaseSensitive(resp, "patch");
	if (patch) {
		size_t n = strlen(patch->valuestring), olen = 0;
		unsigned char *dec = malloc(n + 1);
		if (!dec || mbedtls_base64_decode(dec, n + 1, &olen, (const unsigned char *)patch->valuestring, n) != 0)
			abort();
		cJSON *ops = cJSON_ParseWithLength((const char *)dec, olen);
		if (!cJSON_IsArray(ops) || cJSON_GetArraySize(ops) == 0)
			abort();
		cJSON_Delete(ops);
		free(dec);
	}
	cJSON_Delete(j);
}

/* Mode 224..255: the input is the map of d/fz as it lies (an exact-size copy, not NUL-terminated). */
static int review_ref(const uint8_t *data, size_t size, struct gs_buf *out, struct gs_admission_result *res)
{
	char *map = malloc(size ? size : 1);
	if (!map)
		abort();
	memcpy(map, data, size);
	fz_text = map;
	fz_len = size;
	int r = gs_admission_review(adm, REF_POD, strlen(REF_POD), out, res);
	fz_text = "";
	fz_len = 0;
	free(map);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!adm) {
		struct gs_admission_opts o = {
			.scheduler_name = "gpu-scheduler", .annotation = "gpu-scheduling-map", .map_lookup = lookup};
		if (gs_admission_new(&o, &adm) < 0)
			abort();
	}
	struct gs_buf body, out;
	gs_buf_init(&body, 0);
	gs_buf_init(&out, 0);
	struct gs_admission_result res;
	int r;
	if (size == 0 || data[0] < 128) {
		r = gs_admission_review(adm, (const char *)data, size, &out, &res);
	} else if (data[0] >= 224) {
		r = review_ref(data + 1, size - 1, &out, &res);
	} else {
		char *text = malloc(size);
		if (!text)
			abort();
		memcpy(text, data + 1, size - 1);
		text[size - 1] = '\0'; /* JSON strings end at a NUL anyway */
		gs_buf_append_str(&body, HEAD);
		if (data[0] < 192) {
			gs_buf_append_json_str(&body, text);
			gs_buf_append_str(&body, "}},\"spec\":{\"schedulerName\":\"gpu-scheduler\","
						 "\"containers\":[{\"name\":\"c\"}]}}}}");
		} else {
			gs_buf_append_str(&body, "\"0=n:0\\n2=m:1,2\"}},\"spec\":{\"schedulerName\":\"gpu-scheduler\","
						 "\"initContainers\":[{\"name\":\"i\",\"env\":");
			gs_buf_append(&body, data + 1, size - 1);
			gs_buf_append_str(&body, "}],\"containers\":[{\"name\":\"c\",\"env\":");
			gs_buf_append(&body, data + 1, size - 1);
			gs_buf_append_str(&body, "}]}}}}");
		}
		free(text);
		r = gs_admission_review(adm, body.data, body.len, &out, &res);
	}
	if (r == 0)
		check_answer(&out, &res);
	else if (r == -EINVAL && (out.len != 0 || res.outcome != GS_ADMISSION_BAD_REQUEST || !res.message[0]))
		abort();
	gs_buf_free(&body);
	gs_buf_free(&out);
	return 0;
}
