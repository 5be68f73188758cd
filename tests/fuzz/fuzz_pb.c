/*
 * fuzz_pb.c: libFuzzer driver for the protobuf reader (src/core/pb.h) and the protobuf decoders of
 * src/k8s/decode.h (decode_pb.c).
 *
 * The whole input goes, in turn, to: the reader (every field walked, every LEN field walked as a
 * message too); gs_decode_pod_pb and gs_decode_node_pb as a bare object; gs_decode_unwrap_pb and then
 * the object inside; gs_decode_list_pb_ex (pods, nodes) and gs_decode_status_pb as a body; the
 * streaming list splitter (gs_pb_stream, the way the watch reads the first list) in pieces of 5 bytes;
 * a watch stream of 4-byte-length frames (gs_lines in framed mode) decoded with
 * gs_decode_watch_event_pb for pods and nodes. The seeds are the recorded
 * protobuf fixtures (tests/fixtures/recorded, NAME.pb and NAME.pbw).
 * On success every record must hold together (check_records.h); on failure there must be a reason and
 * nothing left to free.
 *
 * Build and run: make fuzz FUZZ_NAMES=pb FUZZ_SECONDS=60 (see the Makefile's fuzz section).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/lines.h"
#include "core/log.h"
#include "core/pb.h"
#include "k8s/decode.h"

#include "check_records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAP_ANN "gpu-scheduler.io/map"

/* Walks a message and, to a small depth, every LEN field as a message of its own. */
static void walk(const uint8_t *p, size_t len, int depth)
{
	struct gs_pb r;
	struct gs_pb_field f;
	int rc;

	gs_pb_init(&r, p, len);
	while ((rc = gs_pb_next(&r, &f)) > 0) {
		CHECK(f.num >= 1 && f.num <= GS_PB_MAX_FIELD);
		if (f.wire == GS_PB_LEN) {
			CHECK(f.data >= p && f.data + f.len <= p + len);
			if (depth < 4)
				walk(f.data, f.len, depth + 1);
		}
	}
	CHECK(rc == 0 || (rc == -EINVAL && r.err));
	CHECK(gs_pb_offset(&r) <= len);
}

static void objects(const uint8_t *p, size_t len)
{
	struct gs_pod_obj pod;
	struct gs_node_obj node;
	char err[512] = "";

	if (gs_decode_pod_pb(p, len, MAP_ANN, &pod, err, sizeof(err)) == 0) {
		check_pod(&pod);
		gs_pod_obj_free(&pod);
	} else {
		CHECK(err[0] && !pod.uid && !pod.name && !pod.ns && !pod.ctr_req);
	}
	err[0] = '\0';
	if (gs_decode_node_pb(p, len, &node, err, sizeof(err)) == 0) {
		check_node(&node);
		gs_node_obj_free(&node);
	} else {
		CHECK(err[0] && !node.name && !node.labels && node.gpus == -1);
	}
}

static void bodies(const uint8_t *p, size_t len)
{
	const uint8_t *raw;
	size_t raw_len;
	char kind[64], err[512] = "", *rv, *cont, *reason, *message;
	unsigned n, skipped;
	int code;

	if (gs_decode_unwrap_pb(p, len, &raw, &raw_len, kind, sizeof(kind), err, sizeof(err)) == 0) {
		CHECK(raw_len <= len && strlen(kind) < sizeof(kind));
		objects(raw, raw_len);
		if (gs_decode_list_meta_pb(raw, raw_len, &rv, err, sizeof(err)) == 0)
			free(rv);
		else
			CHECK(!rv);
	} else {
		CHECK(err[0]);
	}
	for (int k = 0; k < 2; k++) {
		n = 0;
		err[0] = '\0';
		if (gs_decode_list_pb_ex(p, len, (enum gs_obj_kind)k, MAP_ANN, check_item, &n, &rv, &cont, &skipped, err,
					 sizeof(err)) < 0) {
			CHECK(err[0] && !rv && !cont);
		} else {
			free(rv);
			free(cont);
		}
	}
	if (gs_decode_status_pb(p, len, &code, &reason, &message) < 0)
		CHECK(code == 0 && !reason && !message);
	CHECK(code >= 0 && code <= 999);
	free(reason);
	free(message);
}

struct stream {
	unsigned items, skipped;
};

static int on_field(uint32_t num, int wire, uint64_t v, const uint8_t *p, size_t len, void *ud)
{
	struct stream *s = ud;
	char *rv, err[256];
	(void)v;
	if (wire != GS_PB_LEN)
		return 0;
	if (num == 1) {
		if (gs_decode_list_meta_pb(p, len, &rv, err, sizeof(err)) == 0)
			free(rv);
		return 0;
	}
	if (num == 2) {
		unsigned before = s->items + s->skipped;
		int r = gs_decode_list_item_pb(p, len, GS_OBJ_POD, MAP_ANN, check_item, &s->items, &s->skipped);
		CHECK(r == 0 && s->items + s->skipped == before + 1);
	}
	return 0;
}

static void streamed_list(const uint8_t *p, size_t len)
{
	static const uint32_t path[] = {2};
	struct gs_pb_stream ps;
	struct stream s = {0};
	int r = 0;

	gs_pb_stream_init(&ps, "k8s", 4, path, 1, 1 << 20, on_field, &s);
	for (size_t i = 0; i < len && r == 0; i += 5)
		r = gs_pb_stream_feed(&ps, p + i, len - i < 5 ? len - i : 5);
	if (r == 0)
		r = gs_pb_stream_finish(&ps);
	CHECK(r == 0 || ps.err[0]);
	gs_pb_stream_free(&ps);
}

/* The reader's answer for a bound pod: from the node name's length, so both ways are explored; the
 * node given is the one spec.nodeName holds, never empty. */
static int hint_held(const char *uid, const char *node, size_t node_len, void *ud)
{
	CHECK(uid && uid[0] && node && node_len > 0);
	return (int)(node_len & 1);
}

static int on_frame(const char *p, size_t len, void *ud)
{
	enum gs_obj_kind kind = *(enum gs_obj_kind *)ud;
	static const struct gs_decode_hint hint = {.bound = hint_held};
	struct gs_decode_event ev;
	char err[512] = "";

	if (gs_decode_watch_event_pb_hint(p, len, kind, MAP_ANN, &hint, &ev, err, sizeof(err)) < 0) {
		CHECK(err[0] && ev.kind == kind && !ev.resource_version && !ev.status_reason && !ev.status_message &&
		      !ev.pod.uid && !ev.node.name && ev.node.gpus == -1);
		return 0;
	}
	if (ev.type <= GS_DECODE_EV_DELETED) {
		if (kind == GS_OBJ_POD) {
			check_pod(&ev.pod);
			/* Partial only for DELETED, or a bound pod the reader holds (an odd-length node name). */
			CHECK(!ev.pod.partial || ev.type == GS_DECODE_EV_DELETED ||
			      (ev.pod.node_name && (strlen(ev.pod.node_name) & 1)));
		}
		else
			check_node(&ev.node);
	} else if (ev.type == GS_DECODE_EV_BOOKMARK) {
		CHECK(ev.resource_version);
	}
	CHECK(ev.status_code >= 0 && ev.status_code <= 999);
	gs_decode_event_free(&ev);
	return 0;
}

static void watch_stream(const uint8_t *p, size_t len, enum gs_obj_kind kind)
{
	struct gs_lines ls;
	gs_lines_init(&ls, 1 << 20, on_frame, &kind);
	gs_lines_set_framed(&ls, 1);
	int r = gs_lines_feed(&ls, (const char *)p, len);
	CHECK(r == 0 || r == -E2BIG);
	gs_lines_free(&ls);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;

	if (!init) {
		gs_log_setup(GS_LOG_ERROR, GS_LOG_TEXT); /* skipped list items are logged as warnings */
		init = 1;
	}
	walk(data, size, 0);
	objects(data, size);
	bodies(data, size);
	streamed_list(data, size);
	watch_stream(data, size, GS_OBJ_POD);
	watch_stream(data, size, GS_OBJ_NODE);
	return 0;
}
