/*
 * fuzz_pdb.c: libFuzzer driver for the PodDisruptionBudget decoders of src/k8s/decode_pdb.h.
 *
 * The whole input goes to gs_decode_pdb_event, to gs_decode_pdb_list and, parsed by cJSON, to
 * gs_decode_pdb (the fixtures pdb*.json of tests/fixtures/json seed it). On success a record must hold
 * together (identity present and within its caps, counts matching arrays, every string present, the
 * selector within its cap, disruptionsAllowed an int32) and its selector must judge a pod's labels
 * without fault (sched/checks.h); on failure there is a reason and nothing left.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "k8s/decode_pdb.h"
#include "sched/checks.h"

#define CHECK(e) ((e) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_pdb(const struct gs_pdb_obj *b)
{
	static const struct gs_label pod[] = {{"app", "web"}, {"tier", "front"}};

	CHECK(b->ns && b->name && *b->ns && *b->name);
	CHECK(strlen(b->ns) <= GS_PDB_MAX_NAME && strlen(b->name) <= GS_PDB_MAX_NAME);
	CHECK(!b->uid || strlen(b->uid) <= GS_PDB_MAX_META);
	CHECK(b->n_match >= 0 && b->n_exprs >= 0 && b->n_match + b->n_exprs <= GS_PDB_MAX_SELECTOR);
	CHECK(b->selector || (!b->n_match && !b->n_exprs));
	for (int i = 0; i < b->n_match; i++)
		CHECK(b->match[i].key && b->match[i].value);
	for (int i = 0; i < b->n_exprs; i++) {
		CHECK(b->exprs[i].key && !b->exprs[i].field);
		CHECK(b->exprs[i].op != GS_SEL_GT && b->exprs[i].op != GS_SEL_LT);
		for (int k = 0; k < b->exprs[i].n_values; k++)
			CHECK(b->exprs[i].values[k] != NULL);
	}
	CHECK(b->disruptions_allowed >= INT32_MIN && b->disruptions_allowed <= INT32_MAX);
	CHECK(b->n_disrupted >= 0 && b->n_disrupted <= GS_PDB_MAX_DISRUPTED);
	for (int i = 0; i < b->n_disrupted; i++)
		CHECK(b->disrupted[i] && strlen(b->disrupted[i]) <= GS_PDB_MAX_NAME);
	int m = gs_checks_label_selector(pod, 2, b->match, b->n_match, b->exprs, b->n_exprs);
	CHECK(m == 0 || m == 1 || m == -22);
	CHECK(!(m == 1 && !b->n_match && !b->n_exprs));
}

static int on_item(const struct gs_pdb_obj *b, void *ud)
{
	(void)ud;
	check_pdb(b);
	return 0;
}

static void event(const char *json, size_t len)
{
	struct gs_pdb_event ev;
	char err[512] = "";

	if (gs_decode_pdb_event(json, len, &ev, err, sizeof(err)) < 0) {
		CHECK(err[0] && !ev.resource_version && !ev.pdb.name && !ev.status_reason && !ev.status_message);
		return;
	}
	if (ev.type <= GS_DECODE_EV_DELETED)
		check_pdb(&ev.pdb);
	else if (ev.type == GS_DECODE_EV_BOOKMARK)
		CHECK(ev.resource_version != NULL);
	gs_pdb_event_free(&ev);
}

static void list(const char *json, size_t len)
{
	char err[512] = "", *rv, *cont;
	unsigned skipped;

	if (gs_decode_pdb_list(json, len, on_item, NULL, &rv, &cont, &skipped, err, sizeof(err)) < 0) {
		CHECK(err[0] && !rv && !cont);
		return;
	}
	free(rv);
	free(cont);
}

static void object(const char *json, size_t len)
{
	cJSON *o = cJSON_ParseWithLength(json, len);
	struct gs_pdb_obj b;
	char err[512] = "";

	if (gs_decode_pdb(o, &b, err, sizeof(err)) < 0)
		CHECK(err[0] && !b.name && !b.match && !b.exprs && !b.disrupted);
	else
		check_pdb(&b);
	gs_pdb_obj_free(&b);
	cJSON_Delete(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	event((const char *)data, size);
	list((const char *)data, size);
	object((const char *)data, size);
	return 0;
}
