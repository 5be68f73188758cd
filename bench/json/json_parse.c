/*
 * json_parse.c: what parsing apiserver JSON costs with each JSON library Debian bookworm ships
 * (cJSON, jansson, json-c), on the shapes gpu-scheduler parses: one pod (~30 KiB, a realistic
 * object with managedFields, env and annotations) and a PodList of 1,000 of them (a relist page
 * set). Reports MB/s, microseconds per pod and the peak heap of one parse (malloc counted by a
 * wrapper around each library's allocator hooks where the library has them, else by mallinfo2).
 *
 *   make -C bench/json && bench/json/json_parse tests/fixtures/json/pod-statefulset.json
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <jansson.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

size_t heap_in_use(void);
size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* Pads a pod with realistic bulk: managedFields entries, env variables, annotations. */
static char *make_pod(const char *base, int i, size_t *len)
{
	size_t cap = 64 * 1024;
	char *out = malloc(cap);
	char extra[40000];
	size_t n = 0;
	n += (size_t)snprintf(extra + n, sizeof(extra) - n, "\"x-bulk\":{\"managedFields\":[");
	for (int k = 0; k < 40; k++)
		n += (size_t)snprintf(extra + n, sizeof(extra) - n,
				      "%s{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
				      "\"time\":\"2024-05-01T10:20:30Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":"
				      "{\"f:labels\":{\".\":{},\"f:app\":{}},\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"%d\\\"}\":{}}},"
				      "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"main\\\"}\":{\"f:env\":{}}}}}}",
				      k ? "," : "", k);
	n += (size_t)snprintf(extra + n, sizeof(extra) - n, "],\"env\":[");
	for (int k = 0; k < 60; k++)
		n += (size_t)snprintf(extra + n, sizeof(extra) - n, "%s{\"name\":\"VAR_%d\",\"value\":\"value-%d-%d\"}",
				      k ? "," : "", k, k, i);
	n += (size_t)snprintf(extra + n, sizeof(extra) - n, "]}");
	/* base is an object: insert the bulk after its opening brace */
	const char *brace = strchr(base, '{');
	size_t blen = strlen(base);
	*len = (size_t)snprintf(out, cap, "{%s,%.*s", extra, (int)(blen - (size_t)(brace + 1 - base)), brace + 1);
	return out;
}

typedef int (*parse_fn)(const char *s, size_t len);

static int p_cjson(const char *s, size_t len)
{
	cJSON *j = cJSON_ParseWithLength(s, len);
	int ok = j != NULL;
	cJSON_Delete(j);
	return ok;
}

static int p_jansson(const char *s, size_t len)
{
	json_error_t e;
	json_t *j = json_loadb(s, len, 0, &e);
	int ok = j != NULL;
	json_decref(j);
	return ok;
}

/* json_parse_jsonc.c: json-c's headers clash with jansson's (both define json_object...). */
int p_jsonc(const char *s, size_t len);
size_t jsonc_tree_bytes(const char *s, size_t len, size_t (*heap)(void));

/* Peak heap during one parse, by keeping the tree alive and measuring it. */
static size_t tree_bytes(const char *name, const char *s, size_t len)
{
	size_t before = heap_in_use(), after;
	if (!strcmp(name, "cJSON")) {
		cJSON *j = cJSON_ParseWithLength(s, len);
		after = heap_in_use();
		cJSON_Delete(j);
	} else if (!strcmp(name, "jansson")) {
		json_error_t e;
		json_t *j = json_loadb(s, len, 0, &e);
		after = heap_in_use();
		json_decref(j);
	} else {
		return jsonc_tree_bytes(s, len, heap_in_use);
	}
	return after > before ? after - before : 0;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "tests/fixtures/json/pod-statefulset.json";
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	static char base[1 << 20];
	size_t bl = fread(base, 1, sizeof(base) - 1, f);
	base[bl] = '\0';
	fclose(f);

	size_t pod_len;
	char *pod = make_pod(base, 0, &pod_len);
	/* A list of 1,000 such pods. */
	size_t list_cap = 1000 * (pod_len + 1024) + 256, list_len = 0;
	char *list = malloc(list_cap);
	list_len += (size_t)sprintf(list, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[");
	for (int i = 0; i < 1000; i++) {
		size_t l;
		char *p = make_pod(base, i, &l);
		if (i)
			list[list_len++] = ',';
		memcpy(list + list_len, p, l);
		list_len += l;
		free(p);
	}
	list_len += (size_t)sprintf(list + list_len, "]}");

	struct {
		const char *name;
		parse_fn fn;
	} libs[] = {{"cJSON", p_cjson}, {"jansson", p_jansson}, {"json-c", p_jsonc}};
	printf("pod: %zu bytes; list: 1000 pods, %.1f MB\n", pod_len, (double)list_len / 1e6);
	printf("%-8s %12s %12s %14s %14s\n", "library", "pod us", "list MB/s", "us per pod", "tree/pod bytes");
	for (size_t k = 0; k < 3; k++) {
		if (!libs[k].fn(pod, pod_len) || !libs[k].fn(list, list_len)) {
			printf("%s: parse failed\n", libs[k].name);
			return 1;
		}
		int reps = 2000;
		double t0 = now_s();
		for (int i = 0; i < reps; i++)
			libs[k].fn(pod, pod_len);
		double pod_us = (now_s() - t0) / reps * 1e6;
		t0 = now_s();
		for (int i = 0; i < 5; i++)
			libs[k].fn(list, list_len);
		double list_s = (now_s() - t0) / 5;
		size_t tree = tree_bytes(libs[k].name, list, list_len) / 1000;
		printf("%-8s %12.1f %12.1f %14.1f %14zu\n", libs[k].name, pod_us, (double)list_len / 1e6 / list_s,
		       list_s / 1000 * 1e6, tree);
	}
	free(pod);
	free(list);
	return 0;
}
