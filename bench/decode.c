/*
 * decode.c: gpu-scheduler-decode-bench, the apiserver decoders alone: bytes and CPU per pod for the
 * same objects in JSON and in protobuf, from recorded fixtures (tests/fixtures/record.sh).
 *
 *   build/gpu-scheduler-decode-bench [--rounds 2000] [--dir tests/fixtures/recorded]
 *
 * For each pair it reads DIR/NAME.json and DIR/NAME.pb (a list body) or NAME.jsonl and NAME.pbw (a
 * watch stream) and decodes each --rounds times the way the daemon does:
 *   list, whole     gs_decode_list / gs_decode_list_pb_ex on the body (the paginated relist)
 *   list, streamed  json_items + gs_decode_list_item / gs_pb_stream + gs_decode_list_item_pb, fed in
 *                   16 KiB pieces (the first list, from the watch cache)
 *   watch           the line splitter / framed splitter + gs_decode_watch_event(_pb) per event
 * and prints bytes per object and CPU (CLOCK_PROCESS_CPUTIME_ID) per object for each. Single thread,
 * no I/O inside the timed loops. Then the protobuf watch once more with a reader that holds every bound
 * pod (decode.h, gs_decode_hint: the daemon's case for the events its own bindings cause), whole
 * against partial.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json_items.h"
#include "core/lines.h"
#include "core/log.h"
#include "core/pb.h"
#include "k8s/decode.h"

#define MAP_ANN "gpu-scheduler.io/map"
#define PIECE   16384

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "decode-bench: cannot open %s\n", path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc((size_t)n + 1);
	if (!p || fread(p, 1, (size_t)n, f) != (size_t)n)
		exit(2);
	p[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return p;
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int count(enum gs_obj_kind kind, const void *obj, void *ud)
{
	(void)kind;
	(void)obj;
	(*(unsigned *)ud)++;
	return 0;
}

/* ---- the three ways, each returning the objects it decoded ---------------------------------------- */

static unsigned list_whole(const char *body, size_t len, int pb)
{
	char *rv, *cont, err[256];
	unsigned n = 0;
	int r = pb ? gs_decode_list_pb_ex(body, len, GS_OBJ_POD, MAP_ANN, count, &n, &rv, &cont, NULL, err, sizeof(err))
		   : gs_decode_list(body, len, GS_OBJ_POD, MAP_ANN, count, &n, &rv, &cont, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "decode-bench: %s\n", err);
		exit(1);
	}
	free(rv);
	free(cont);
	return n;
}

struct streamed {
	unsigned n, skipped;
};

static int on_member(const char *key, const char *value, size_t len, void *ud)
{
	char *rv, err[128];
	(void)ud;
	if (strcmp(key, "metadata") == 0 && gs_decode_list_meta(value, len, &rv, err, sizeof(err)) == 0)
		free(rv);
	return 0;
}

static int on_element(const char *value, size_t len, void *ud)
{
	struct streamed *s = ud;
	return gs_decode_list_item(value, len, GS_OBJ_POD, MAP_ANN, count, &s->n, &s->skipped);
}

static int on_field(uint32_t num, int wire, uint64_t v, const uint8_t *data, size_t len, void *ud)
{
	struct streamed *s = ud;
	char *rv, err[128];
	(void)wire;
	(void)v;
	if (num == 1 && gs_decode_list_meta_pb(data, len, &rv, err, sizeof(err)) == 0)
		free(rv);
	if (num == 2)
		return gs_decode_list_item_pb(data, len, GS_OBJ_POD, MAP_ANN, count, &s->n, &s->skipped);
	return 0;
}

static unsigned list_streamed(const char *body, size_t len, int pb)
{
	static const uint32_t path[] = {2};
	struct streamed s = {0};
	struct gs_json_items ji;
	struct gs_pb_stream ps;
	int r = 0;

	if (pb)
		gs_pb_stream_init(&ps, "k8s", 4, path, 1, 4u << 20, on_field, &s);
	else
		gs_json_items_init(&ji, "items", 4u << 20, on_member, on_element, &s);
	for (size_t i = 0; i < len && r == 0; i += PIECE) {
		size_t k = len - i < PIECE ? len - i : PIECE;
		r = pb ? gs_pb_stream_feed(&ps, body + i, k) : gs_json_items_feed(&ji, body + i, k);
	}
	if (r == 0)
		r = pb ? gs_pb_stream_finish(&ps) : gs_json_items_finish(&ji);
	if (r < 0 || s.skipped) {
		fprintf(stderr, "decode-bench: streamed list failed\n");
		exit(1);
	}
	if (pb)
		gs_pb_stream_free(&ps);
	else
		gs_json_items_free(&ji);
	return s.n;
}

struct ev {
	int pb;
	unsigned n;
};

static int held_all; /* the hint says every bound pod is held */

static int hint_held(const char *uid, const char *node, size_t node_len, void *ud)
{
	return held_all;
}

static int on_event(const char *data, size_t len, void *ud)
{
	struct ev *e = ud;
	struct gs_decode_event ev;
	char err[256];
	static const struct gs_decode_hint hint = {.bound = hint_held};
	int r = e->pb ? gs_decode_watch_event_pb_hint(data, len, GS_OBJ_POD, MAP_ANN, &hint, &ev, err, sizeof(err))
		      : gs_decode_watch_event(data, len, GS_OBJ_POD, MAP_ANN, &ev, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "decode-bench: %s\n", err);
		exit(1);
	}
	gs_decode_event_free(&ev);
	e->n++;
	return 0;
}

static unsigned watch_stream(const char *body, size_t len, int pb)
{
	struct gs_lines ls;
	struct ev e = {.pb = pb};
	gs_lines_init(&ls, 0, on_event, &e);
	gs_lines_set_framed(&ls, pb);
	for (size_t i = 0; i < len; i += PIECE)
		if (gs_lines_feed(&ls, body + i, len - i < PIECE ? len - i : PIECE) < 0)
			exit(1);
	gs_lines_free(&ls);
	return e.n;
}

/* ---- driver ------------------------------------------------------------------------------------- */

static void run(const char *what, const char *dir, const char *name, const char *jext, const char *pext,
		unsigned (*fn)(const char *, size_t, int), int rounds)
{
	char path[512];
	size_t len[2];
	char *body[2];
	double us[2];
	unsigned n[2] = {0, 0};

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, jext);
	body[0] = slurp(path, &len[0]);
	snprintf(path, sizeof(path), "%s/%s%s", dir, name, pext);
	body[1] = slurp(path, &len[1]);
	for (int pb = 0; pb < 2; pb++) {
		fn(body[pb], len[pb], pb); /* warm up */
		double t0 = cpu_now();
		for (int i = 0; i < rounds; i++)
			n[pb] = fn(body[pb], len[pb], pb);
		us[pb] = (cpu_now() - t0) * 1e6 / rounds / (n[pb] ? n[pb] : 1);
	}
	if (n[0] != n[1]) {
		fprintf(stderr, "decode-bench: %s: %u objects in JSON, %u in protobuf\n", name, n[0], n[1]);
		exit(1);
	}
	printf("%-16s %-14s %4u  %8.0f %8.0f %6.2f   %7.2f %7.2f %6.2f\n", what, name, n[0], (double)len[0] / n[0],
	       (double)len[1] / n[1], (double)len[0] / (double)len[1], us[0], us[1], us[0] / us[1]);
	free(body[0]);
	free(body[1]);
}

int main(int argc, char **argv)
{
	const char *dir = "tests/fixtures/recorded";
	int rounds = 2000, c;
	static const struct option opts[] = {{"rounds", required_argument, NULL, 'r'},
					     {"dir", required_argument, NULL, 'd'},
					     {NULL, 0, NULL, 0}};

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 'd')
			dir = optarg;
		else
			return 2;
	}
	if (rounds < 1)
		rounds = 1;
	gs_log_setup(GS_LOG_ERROR, GS_LOG_TEXT);
	printf("%d rounds; per object: bytes JSON, protobuf, ratio; CPU us JSON, protobuf, ratio\n", rounds);
	printf("%-16s %-14s %4s  %8s %8s %6s   %7s %7s %6s\n", "path", "fixture", "objs", "B json", "B pb", "x",
	       "us json", "us pb", "x");
	run("list, whole", dir, "list-pods", ".json", ".pb", list_whole, rounds);
	run("list, streamed", dir, "list-pods", ".json", ".pb", list_streamed, rounds);
	run("watch events", dir, "watch-pods", ".jsonl", ".pbw", watch_stream, rounds);

	char path[512];
	size_t len;
	snprintf(path, sizeof(path), "%s/watch-pods.pbw", dir);
	char *body = slurp(path, &len);
	double us[2];
	unsigned n = 0;
	for (held_all = 0; held_all < 2; held_all++) {
		watch_stream(body, len, 1);
		double t0 = cpu_now();
		for (int i = 0; i < rounds; i++)
			n = watch_stream(body, len, 1);
		us[held_all] = (cpu_now() - t0) * 1e6 / rounds / (n ? n : 1);
	}
	printf("watch events, protobuf, bound pods held (partial): %.2f us per event against %.2f whole (%.2fx)\n",
	       us[1], us[0], us[1] > 0 ? us[0] / us[1] : 0);
	free(body);
	return 0;
}
