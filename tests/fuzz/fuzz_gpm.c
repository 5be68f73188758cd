/*
 * fuzz_gpm.c: libFuzzer driver for the GPUPlacementMap decoders of src/k8s/decode_gpm.h.
 *
 * The whole input goes to gs_decode_gpm_event, to gs_decode_gpm_list and, parsed by cJSON, to
 * gs_decode_gpm (so the fixtures gpm*.json of tests/fixtures/json seed it as they are). On success a
 * record must hold together (identity present, map_len the text's length and within its cap, each
 * string within its cap, gang_size empty or 1..100000); on failure there is a reason and nothing left.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "k8s/decode_gpm.h"
#include "sched/gang.h"

/* As check_records.h's (whose pod and node checks this harness has no use for). */
#define CHECK(e) ((e) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_gpm(const struct gs_gpm *g)
{
	CHECK(g->ns && g->name && g->uid && g->map_text);
	CHECK(strlen(g->name) <= GS_GPM_MAX_NAME && strlen(g->uid) <= GS_GPM_MAX_META);
	CHECK(g->map_len == strlen(g->map_text) && g->map_len <= GS_GPM_MAX_MAP);
	CHECK(!g->placement || strlen(g->placement) <= GS_GPM_MAX_SETTING);
	CHECK(!g->gang_timeout || strlen(g->gang_timeout) <= GS_GPM_MAX_SETTING);
	CHECK(!g->gang_size[0] || (atol(g->gang_size) >= 1 && atol(g->gang_size) <= GS_GANG_SIZE_MAX));
	CHECK(g->generation >= 0);
}

static int on_item(const struct gs_gpm *g, void *ud)
{
	(void)ud;
	check_gpm(g);
	return 0;
}

static void event(const char *json, size_t len)
{
	struct gs_gpm_event ev;
	char err[512] = "";

	if (gs_decode_gpm_event(json, len, &ev, err, sizeof(err)) < 0) {
		CHECK(err[0] && !ev.resource_version && !ev.gpm.name && !ev.status_reason && !ev.status_message);
		return;
	}
	if (ev.type <= GS_DECODE_EV_DELETED)
		check_gpm(&ev.gpm);
	else if (ev.type == GS_DECODE_EV_BOOKMARK)
		CHECK(ev.resource_version != NULL);
	gs_gpm_event_free(&ev);
}

static void list(const char *json, size_t len)
{
	char err[512] = "", *rv, *cont;
	unsigned skipped;

	if (gs_decode_gpm_list(json, len, on_item, NULL, &rv, &cont, &skipped, err, sizeof(err)) < 0) {
		CHECK(err[0] && !rv && !cont);
		return;
	}
	free(rv);
	free(cont);
}

static void object(const char *json, size_t len)
{
	cJSON *o = cJSON_ParseWithLength(json, len);
	struct gs_gpm g;
	char err[512] = "";

	if (gs_decode_gpm(o, &g, err, sizeof(err)) < 0)
		CHECK(err[0] && !g.name && !g.map_text);
	else
		check_gpm(&g);
	gs_gpm_free(&g);
	cJSON_Delete(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	event((const char *)data, size);
	list((const char *)data, size);
	object((const char *)data, size);
	return 0;
}
