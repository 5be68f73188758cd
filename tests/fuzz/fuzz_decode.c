/*
 * fuzz_decode.c: libFuzzer driver for the apiserver decoders of src/k8s/decode.h.
 *
 * The first byte picks where the input goes:
 *   128..255 the rest of the input, by (byte & 3): gs_decode_watch_event for pods, for nodes,
 *            gs_decode_list for pods, for nodes
 *   0..127   the whole input, to all four, to gs_decode_list_item (pods, nodes: the streamed first
 *            list), gs_decode_status, gs_decode_list_meta and gs_decode_object_uid (a placeholder's
 *            create reply, issue 36), and also as the object of an ADDED watch
 *            event (pod and node), so that the fixtures seed it as they are: a Pod, a Node, a list, a
 *            Status or a watch line starts with '{' (byte 123)
 * On success every record must hold together (counts against arrays, no NULL where the header promises
 * a string, values in their ranges) and is freed; on failure there must be a reason and nothing left.
 *
 * Build and run (from the repository root):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -Isrc \
 *     tests/fuzz/fuzz_decode.c src/k8s/decode.c src/k8s/decode_json.c src/k8s/decode_items.c src/k8s/decode_scalar.c src/sched/objects.c src/core/json_nul.c \
 *     src/core/log.c -lcjson -o build/fuzz_decode
 *   mkdir -p build/corpus/decode
 *   build/fuzz_decode -max_total_time=60 -dict=tests/fuzz/decode.dict build/corpus/decode tests/fixtures/json
 * (watch-*.jsonl hold several lines: as a seed only the first decodes, the rest is "trailing bytes",
 * which the fuzzer soon cuts.)
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/log.h"
#include "k8s/decode.h"

#include "check_records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAP_ANN "gpu-scheduler.io/map"
static void watch(const char *json, size_t len, enum gs_obj_kind kind)
{
	static const struct gs_pod_obj zero_pod;
	struct gs_decode_event ev;
	char err[512] = "";

	int r = gs_decode_watch_event(json, len, kind, MAP_ANN, &ev, err, sizeof(err));
	if (r < 0) {
		CHECK(err[0] && ev.kind == kind && !ev.resource_version && !ev.status_reason && !ev.status_message);
		CHECK(memcmp(&ev.pod, &zero_pod, sizeof(zero_pod)) == 0 && !ev.node.name && !ev.node.labels &&
		      !ev.node.taints && !ev.node.alloc.ext && ev.node.gpus == -1);
		return;
	}
	if (ev.type <= GS_DECODE_EV_DELETED) {
		if (kind == GS_OBJ_POD)
			check_pod(&ev.pod);
		else
			check_node(&ev.node);
	}
	gs_decode_event_free(&ev);
}

static void list(const char *json, size_t len, enum gs_obj_kind kind)
{
	char *rv = NULL, *cont = NULL, err[512] = "";
	unsigned n = 0;

	int r = gs_decode_list(json, len, kind, MAP_ANN, check_item, &n, &rv, &cont, err, sizeof(err));
	if (r < 0)
		CHECK(err[0] && !rv && !cont);
	free(rv);
	free(cont);
}

static void one_item(const char *json, size_t len, enum gs_obj_kind kind)
{
	unsigned n = 0, skipped = 0;

	int r = gs_decode_list_item(json, len, kind, MAP_ANN, check_item, &n, &skipped);
	CHECK(r == 0 && n + skipped == 1);
}

static void status(const char *json, size_t len)
{
	char *reason, *message, *rv, err[512] = "";
	int code;

	if (gs_decode_status(json, len, &code, &reason, &message) < 0)
		CHECK(code == 0 && !reason && !message);
	CHECK(code >= 0 && code <= 999);
	free(reason);
	free(message);
	if (gs_decode_list_meta(json, len, &rv, err, sizeof(err)) < 0)
		CHECK(err[0] && !rv);
	free(rv);
	char *uid = gs_decode_object_uid(json, len); /* NULL, or a non-empty string */
	CHECK(!uid || uid[0]);
	free(uid);
}

/* {"type":"ADDED","object":<json>} */
static void wrapped(const char *json, size_t len, enum gs_obj_kind kind)
{
	static const char head[] = "{\"type\":\"ADDED\",\"object\":";
	char *w = malloc(sizeof(head) + len + 1);

	if (!w)
		abort();
	memcpy(w, head, sizeof(head) - 1);
	memcpy(w + sizeof(head) - 1, json, len);
	w[sizeof(head) - 1 + len] = '}';
	watch(w, sizeof(head) + len, kind);
	free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;

	if (!init) {
		gs_log_setup(GS_LOG_ERROR, GS_LOG_TEXT); /* the skipped list items are logged as warnings */
		init = 1;
	}
	if (size == 0)
		return 0;
	if (data[0] >= 128) {
		const char *json = (const char *)data + 1;
		size_t len = size - 1;
		switch (data[0] & 3) {
		case 0:
			watch(json, len, GS_OBJ_POD);
			break;
		case 1:
			watch(json, len, GS_OBJ_NODE);
			break;
		case 2:
			list(json, len, GS_OBJ_POD);
			break;
		default:
			list(json, len, GS_OBJ_NODE);
			break;
		}
		return 0;
	}
	const char *json = (const char *)data;
	watch(json, size, GS_OBJ_POD);
	watch(json, size, GS_OBJ_NODE);
	list(json, size, GS_OBJ_POD);
	list(json, size, GS_OBJ_NODE);
	one_item(json, size, GS_OBJ_POD);
	one_item(json, size, GS_OBJ_NODE);
	status(json, size);
	wrapped(json, size, GS_OBJ_POD);
	wrapped(json, size, GS_OBJ_NODE);
	return 0;
}
