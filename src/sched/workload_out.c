/*
 * workload_out.c: the owner-level view as JSON and as a table (workload_out.h).
 */
#include "sched/workload_out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sched/explain_out.h"

const char *gs_workload_row_state(const struct gs_sched_workload_row *x)
{
	return x->created ? gs_pod_state_name(x->pod.state) : "NOT_CREATED";
}

static const char *map_from_name(enum gs_workload_map m)
{
	return m == GS_WORKLOAD_MAP_TEMPLATE ? "template"
	       : m == GS_WORKLOAD_MAP_PODS   ? "pods"
	       : m == GS_WORKLOAD_MAP_OBJECT ? "object"
					     : "none";
}

static int row_json(struct gs_buf *b, const struct gs_sched_workload_row *x, int64_t now_ms)
{
	const struct gs_sched_pod_info *p = &x->pod;
	int r = gs_buf_append_str(b, "{");

	r |= x->index >= 0 ? gs_buf_printf(b, "\"index\":%ld,", x->index) : 0;
	r |= gs_buf_printf(b, "\"state\":\"%s\"", gs_workload_row_state(x));
	if (x->created) {
		r |= gs_buf_append_json_field(b, "pod", p->name);
		r |= gs_buf_append_json_field(b, "uid", p->uid);
		if (p->state == GS_POD_WAITING) {
			r |= gs_buf_append_json_field(b, "reason", gs_wait_reason_name(p->reason));
			r |= gs_buf_append_json_field(b, "message", p->message);
		}
	}
	r |= gs_buf_append_json_field(b, "node", x->node);
	if (x->created && x->node && p->node && strcmp(x->node, p->node) != 0)
		r |= gs_buf_append_json_field(b, "mapNode", p->node);
	r |= gs_buf_append_json_field(b, "devices", x->devices);
	if (x->map_line)
		r |= gs_buf_printf(b, ",\"mapLine\":%d", x->map_line);
	if (x->created)
		r |= gs_buf_printf(b, ",\"ageSeconds\":%" PRId64, gs_explain_age_s(p->created_ms, now_ms));
	r |= gs_buf_append_str(b, "}");
	return r < 0 ? -E2BIG : 0;
}

/* The workload's all-or-nothing gang, or null (workload_out.h). */
static int gang_json(struct gs_buf *b, const struct gs_sched_workload *w)
{
	return w->gang.size > 0 ? gs_explain_gang_json(b, &w->gang) : gs_buf_append_str(b, ",\"gang\":null");
}

/* The workload's JSON; with st (a GPUPlacementMap's view), its status as a member "status" too. */
static int workload_json(const struct gs_sched_workload *w, const struct gs_gpm_status *st, int64_t now_ms,
			 struct gs_buf *b)
{
	int r = gs_buf_append_str(b, "{\"kind\":");

	r |= gs_buf_append_json_str(b, w->kind);
	r |= gs_buf_append_json_field(b, "namespace", w->ns);
	r |= gs_buf_append_json_field(b, "name", w->name);
	r |= gs_buf_append_json_field(b, "ownerUid", w->owner_uid);
	r |= gs_buf_printf(b, ",\"map\":{\"from\":\"%s\",\"entries\":%zu", map_from_name(w->map_from), w->map_entries);
	r |= gs_buf_append_json_field(b, "object", w->map_ref);
	if (w->map_error[0])
		r |= gs_buf_append_json_field(b, "error", w->map_error);
	r |= gs_buf_printf(b, "},\"pods\":%zu,\"notCreated\":%zu,\"byState\":{", w->pods, w->not_created);
	for (int i = 0; i < GS_POD__COUNT; i++)
		r |= gs_buf_printf(b, "%s\"%s\":%zu", i ? "," : "", gs_pod_state_name(i), w->by_state[i]);
	r |= gs_buf_append_str(b, "}");
	r |= gang_json(b, w);
	r |= gs_buf_append_str(b, ",\"rows\":[");
	for (size_t i = 0; i < w->n_rows; i++) {
		r |= i ? gs_buf_append_str(b, ",") : 0;
		r |= row_json(b, &w->rows[i], now_ms);
	}
	r |= gs_buf_append_str(b, "]");
	if (st) {
		r |= gs_buf_append_str(b, ",\"status\":");
		r |= gs_workload_gpm_status_json(st, b);
	}
	r |= gs_buf_append_str(b, "}\n");
	return r < 0 ? -E2BIG : 0;
}

int gs_workload_json(const struct gs_sched_workload *w, int64_t now_ms, struct gs_buf *b)
{
	return workload_json(w, NULL, now_ms, b);
}

int gs_workload_gpm_json(const struct gs_sched_workload *w, const struct gs_gpm_status *st, int64_t now_ms,
			 struct gs_buf *b)
{
	return workload_json(w, st, now_ms, b);
}

/* ---- text ---------------------------------------------------------------------------------------- */

enum { COL_INDEX, COL_POD, COL_NODE, COL_DEVICES, COL_STATE, COL_REASON, COL_AGE, N_COLS };

static const char *const col_names[N_COLS] = {"INDEX", "POD", "NODE", "DEVICES", "STATE", "REASON", "AGE"};

/* An age as kubectl prints one: 42s, 5m, 3h, 2d. */
static void age_text(char *out, size_t size, int64_t s)
{
	if (s < 120)
		snprintf(out, size, "%" PRId64 "s", s);
	else if (s < 2 * 3600)
		snprintf(out, size, "%" PRId64 "m", s / 60);
	else if (s < 48 * 3600)
		snprintf(out, size, "%" PRId64 "h", s / 3600);
	else
		snprintf(out, size, "%" PRId64 "d", s / 86400);
}

/* The cells of one row; index and age in the caller's buffers. */
static void row_cells(const struct gs_sched_workload_row *x, int64_t now_ms, char index[24], char age[24],
		      const char *cell[N_COLS])
{
	const struct gs_sched_pod_info *p = &x->pod;

	if (x->index >= 0)
		snprintf(index, 24, "%ld", x->index);
	else
		snprintf(index, 24, "-");
	if (x->created)
		age_text(age, 24, gs_explain_age_s(p->created_ms, now_ms));
	else
		snprintf(age, 24, "-");
	cell[COL_INDEX] = index;
	cell[COL_POD] = x->created ? p->name : "-";
	cell[COL_NODE] = x->node ? x->node : "-";
	cell[COL_DEVICES] = x->devices ? x->devices : "-";
	cell[COL_STATE] = x->created ? gs_pod_state_name(p->state) : "not created";
	cell[COL_REASON] = x->created && p->state == GS_POD_WAITING ? gs_wait_reason_name(p->reason) : "-";
	cell[COL_AGE] = age;
}

static int summary_text(const struct gs_sched_workload *w, struct gs_buf *b)
{
	int r = gs_buf_printf(b, "%s %s/%s: %zu %s", w->kind, w->ns, w->name, w->pods, w->pods == 1 ? "pod" : "pods");
	const char *sep = " (";

	for (int i = 0; i < GS_POD__COUNT; i++) {
		if (!w->by_state[i])
			continue;
		r |= gs_buf_printf(b, "%s%zu %s", sep, w->by_state[i], gs_pod_state_name(i));
		sep = ", ";
	}
	r |= gs_buf_printf(b, "%s, %zu %s not created; ", w->pods ? ")" : "", w->not_created,
			   w->not_created == 1 ? "index" : "indices");
	if (w->map_from == GS_WORKLOAD_MAP_NONE)
		r |= gs_buf_printf(b, "no map%s%s\n", w->map_error[0] ? ": " : "", w->map_error);
	else if (w->map_from == GS_WORKLOAD_MAP_OBJECT)
		r |= gs_buf_printf(b, "the map has %zu %s (from GPUPlacementMap %s/%s)\n", w->map_entries,
				   w->map_entries == 1 ? "entry" : "entries", w->ns, w->map_ref);
	else
		r |= gs_buf_printf(b, "the map has %zu %s (from %s)\n", w->map_entries,
				   w->map_entries == 1 ? "entry" : "entries",
				   w->map_from == GS_WORKLOAD_MAP_TEMPLATE ? "the pod template" : "its newest pod");
	r |= gs_explain_gang_text(b, &w->gang);
	return r < 0 ? -E2BIG : 0;
}

int gs_workload_text(const struct gs_sched_workload *w, int64_t now_ms, struct gs_buf *b)
{
	size_t width[N_COLS];
	const char *cell[N_COLS];
	char index[24], age[24];
	int r = summary_text(w, b), waiting = 0;

	for (int c = 0; c < N_COLS; c++)
		width[c] = strlen(col_names[c]);
	for (size_t i = 0; i < w->n_rows; i++) {
		row_cells(&w->rows[i], now_ms, index, age, cell);
		for (int c = 0; c < N_COLS; c++)
			width[c] = strlen(cell[c]) > width[c] ? strlen(cell[c]) : width[c];
		waiting |= w->rows[i].created && w->rows[i].pod.state == GS_POD_WAITING;
	}
	r |= gs_buf_append_str(b, "\n");
	for (size_t i = 0; i <= w->n_rows; i++) {
		if (i)
			row_cells(&w->rows[i - 1], now_ms, index, age, cell);
		for (int c = 0; c < N_COLS; c++) {
			const char *v = i ? cell[c] : col_names[c];
			if (c == N_COLS - 1)
				r |= gs_buf_printf(b, "%s\n", v);
			else
				r |= gs_buf_printf(b, "%-*s  ", (int)width[c], v);
		}
	}
	if (!w->n_rows)
		r |= gs_buf_append_str(b, "(no pod of ours and no map entry)\n");
	if (waiting)
		r |= gs_buf_append_str(b, "\nWaiting:\n");
	for (size_t i = 0; waiting && i < w->n_rows; i++) {
		const struct gs_sched_workload_row *x = &w->rows[i];
		if (x->created && x->pod.state == GS_POD_WAITING)
			r |= gs_buf_printf(b, "  %s: %s: %s\n", x->pod.name, gs_wait_reason_name(x->pod.reason),
					   x->pod.message ? x->pod.message : "");
	}
	return r < 0 ? -E2BIG : 0;
}

/* ---- a GPUPlacementMap's status ------------------------------------------------------------------ */

int gs_workload_gpm_status_json(const struct gs_gpm_status *st, struct gs_buf *b)
{
	const char *sep = "";
	int r = gs_buf_printf(b, "{\"observedGeneration\":%" PRId64 ",\"entries\":%zu,\"placed\":%zu,\"waiting\":%zu",
			      st->observed_generation, st->entries, st->placed, st->waiting);

	r |= gs_buf_append_str(b, ",\"reasons\":[");
	for (int i = 0; i < GS_WAIT__COUNT; i++) {
		if (!st->waiting_by[i])
			continue;
		r |= gs_buf_printf(b, "%s{\"reason\":\"%s\",\"count\":%zu}", sep, gs_wait_reason_name(i),
				   st->waiting_by[i]);
		sep = ",";
	}
	r |= gs_buf_append_str(b, "],\"oldestWaiting\":");
	if (st->oldest_name) {
		r |= st->oldest_index >= 0 ? gs_buf_printf(b, "{\"index\":%ld,", st->oldest_index)
					   : gs_buf_append_str(b, "{");
		r |= gs_buf_append_str(b, "\"pod\":");
		r |= gs_buf_append_json_str(b, st->oldest_name);
		r |= gs_buf_append_json_field(b, "reason", gs_wait_reason_name(st->oldest_reason));
		r |= gs_buf_append_json_field(b, "message", st->oldest_message);
		r |= gs_buf_append_str(b, "}");
	} else {
		r |= gs_buf_append_str(b, "null");
	}
	r |= gs_buf_printf(b, ",\"ready\":%s", st->ready ? "true" : "false");
	r |= gs_buf_append_json_field(b, "mapError", st->map_error);
	r |= gs_buf_append_str(b, "}");
	return r < 0 ? -E2BIG : 0;
}

int gs_workload_gpm_status_text(const struct gs_gpm_status *st, struct gs_buf *b)
{
	const char *sep = " (";
	int r = gs_buf_printf(b, "Status (generation %" PRId64 "): %s; %zu %s, %zu placed, %zu waiting",
			      st->observed_generation, st->ready ? "ready" : "not ready", st->entries,
			      st->entries == 1 ? "entry" : "entries", st->placed, st->waiting);

	for (int i = 0; i < GS_WAIT__COUNT; i++) {
		if (!st->waiting_by[i])
			continue;
		r |= gs_buf_printf(b, "%s%zu %s", sep, st->waiting_by[i], gs_wait_reason_name(i));
		sep = ", ";
	}
	r |= gs_buf_append_str(b, *sep == ',' ? ")\n" : "\n");
	if (st->map_error)
		r |= gs_buf_printf(b, "  the map does not parse: %s\n", st->map_error);
	if (st->oldest_name && st->oldest_index >= 0)
		r |= gs_buf_printf(b, "  oldest waiting: index %ld, %s: %s: %s\n", st->oldest_index, st->oldest_name,
				   gs_wait_reason_name(st->oldest_reason),
				   st->oldest_message ? st->oldest_message : "");
	else if (st->oldest_name)
		r |= gs_buf_printf(b, "  oldest waiting: %s (no index): %s: %s\n", st->oldest_name,
				   gs_wait_reason_name(st->oldest_reason),
				   st->oldest_message ? st->oldest_message : "");
	return r < 0 ? -E2BIG : 0;
}
