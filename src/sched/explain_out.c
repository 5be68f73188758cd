/*
 * explain_out.c: explanations as JSON and as text (explain_out.h).
 */
#include "sched/explain_out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sched/gang.h"
#include "sched/gpm.h"

static const char *outcome_name(enum gs_explain_outcome o)
{
	return o == GS_EXPLAIN_PASS ? "pass" : o == GS_EXPLAIN_FAIL ? "fail" : "skipped";
}

int64_t gs_explain_age_s(int64_t created_ms, int64_t now_ms)
{
	return created_ms > 0 && now_ms > created_ms ? (now_ms - created_ms) / 1000 : 0;
}

/* The fields one pod's summary and its full explanation share. */
static int pod_fields(struct gs_buf *b, const struct gs_sched_pod_info *p, int64_t now_ms)
{
	int r = gs_buf_append_str(b, "{\"namespace\":");
	r |= gs_buf_append_json_str(b, p->ns);
	r |= gs_buf_append_json_field(b, "name", p->name);
	r |= gs_buf_append_json_field(b, "uid", p->uid);
	r |= gs_buf_append_json_field(b, "state", gs_pod_state_name(p->state));
	if (p->state == GS_POD_WAITING) {
		r |= gs_buf_append_json_field(b, "reason", gs_wait_reason_name(p->reason));
		r |= gs_buf_append_json_field(b, "message", p->message);
	}
	if (p->index >= 0)
		r |= gs_buf_printf(b, ",\"index\":%ld", p->index);
	if (p->node) {
		r |= gs_buf_append_json_field(b, "node", p->node);
		if (p->resolved && strcmp(p->resolved, p->node) != 0)
			r |= gs_buf_append_json_field(b, "resolvedNode", p->resolved);
		r |= gs_buf_append_json_field(b, "devices", p->devices);
	}
	r |= gs_buf_printf(b, ",\"priority\":%" PRId64 ",\"ageSeconds\":%" PRId64, p->priority,
			   gs_explain_age_s(p->created_ms, now_ms));
	return r < 0 ? -E2BIG : 0;
}

int gs_explain_gang_json(struct gs_buf *b, const struct gs_explain_gang *g)
{
	int r;

	if (g->size <= 0)
		return 0;
	r = gs_buf_append_str(b, ",\"gang\":{\"owner\":");
	r |= gs_buf_append_json_str(b, g->kind);
	r |= gs_buf_append_json_field(b, "name", g->name);
	r |= gs_buf_printf(b, ",\"size\":%ld,\"members\":%zu,\"fitting\":%zu,\"state\":\"%s\",\"timeouts\":%u", g->size,
			   g->members, g->fitting,
			   g->ran       ? "placed"
			   : g->resting ? "resting"
					: "gathering",
			   g->timeouts);
	if (!g->ran)
		r |= gs_buf_printf(b, ",\"secondsLeft\":%" PRId64, (g->left_ms + 999) / 1000);
	if (g->blockers)
		r |= gs_buf_append_json_field(b, "blockedBy", g->blockers);
	r |= gs_buf_printf(b,
			   ",\"budget\":{\"maxMembers\":%ld,\"maxGpus\":%ld,\"heldMembers\":%ld,\"heldGpus\":%ld,"
			   "\"needMembers\":%ld,\"needGpus\":%ld,\"admitted\":%s}",
			   g->cap_members, g->cap_gpus, g->held_members, g->held_gpus, g->need_members, g->need_gpus,
			   g->admitted ? "true" : "false");
	return r | gs_buf_append_str(b, "}");
}

int gs_explain_gang_text(struct gs_buf *b, const struct gs_explain_gang *g)
{
	int r;

	if (g->size <= 0)
		return 0;
	r = gs_buf_printf(b, "\nAll-or-nothing gang %s %s: %ld members must fit together; %zu known, %zu fit now\n",
			  *g->kind ? g->kind : "owner", g->name, g->size, g->members, g->fitting);
	if (g->ran)
		return r | gs_buf_append_str(b, "  placed already: its members are placed alone now\n");
	if (g->resting)
		r |= gs_buf_printf(b, "  timed out %u %s; gathers again in %" PRId64 " s\n", g->timeouts,
				   g->timeouts == 1 ? "time" : "times", (g->left_ms + 999) / 1000);
	else
		r |= gs_buf_printf(b, "  gathering: times out in %" PRId64 " s%s\n", (g->left_ms + 999) / 1000,
				   g->timeouts ? " (tried before)" : "");
	if (g->blockers)
		r |= gs_buf_printf(b, "  blocked by: %s\n", g->blockers);
	if (g->cap_members || g->cap_gpus) {
		char bound[96];
		gs_gang_bound_words(bound, sizeof(bound), g->cap_members, g->cap_gpus);
		r |= gs_buf_printf(b,
				   "  its namespace's budget: %s reserved at once; the other gangs gathering there "
				   "hold %ld members, %ld GPUs; this gang %s %ld members, %ld GPUs\n",
				   bound, g->held_members, g->held_gpus, g->admitted ? "holds" : "needs",
				   g->need_members, g->need_gpus);
	}
	return r;
}

/* "preemption": {"node": N, "victims": [{"pod": P, "priority": 10[, "violatesBudget": B]}, ...]} or {"node": N,
 * "none": WHY}, with
 * "off": true under --preemption=false and "nominated": NODE for a nominee. */
static int preemption_json(struct gs_buf *b, const struct gs_sched_explain *e)
{
	int r;

	if (!e->preempt_node && !e->pod.nominated)
		return 0;
	r = gs_buf_append_str(b, ",\"preemption\":{\"node\":");
	r |= gs_buf_append_json_str(b, e->preempt_node ? e->preempt_node : e->pod.nominated);
	if (e->pod.nominated)
		r |= gs_buf_append_json_field(b, "nominated", e->pod.nominated);
	if (e->preemption_off)
		r |= gs_buf_append_str(b, ",\"off\":true");
	if (!e->preempt_node)
		return r | gs_buf_append_str(b, "}");
	if (!e->n_victims)
		r |= gs_buf_append_json_field(b, "none", e->preempt_why);
	else
		r |= gs_buf_append_str(b, ",\"victims\":[");
	for (size_t i = 0; i < e->n_victims; i++) {
		r |= gs_buf_printf(b, "%s{\"pod\":", i ? "," : "");
		r |= gs_buf_append_json_str(b, e->victims[i].pod);
		r |= gs_buf_printf(b, ",\"priority\":%" PRId64 "%s", e->victims[i].priority,
				   e->victims[i].reservation ? ",\"reservation\":true" : "");
		if (e->victims[i].pdb)
			r |= gs_buf_append_json_field(b, "violatesBudget", e->victims[i].pdb);
		r |= gs_buf_append_str(b, "}");
	}
	r |= gs_buf_append_str(b, e->n_victims ? "]}" : "}");
	return r;
}

/* "Nominated to node2 ...", then "Preemption on node2: deleting 2 pods ...: ns/a (priority 10), ..." or why
 * none would. */
static int preemption_text(struct gs_buf *b, const struct gs_sched_explain *e)
{
	int r = 0;

	if (e->pod.nominated)
		r |= gs_buf_printf(b,
				   "\nNominated to %s by its preemption: its claim there counts for every pod of its "
				   "priority or lower until it binds\n",
				   e->pod.nominated);
	if (!e->preempt_node)
		return r;
	if (!e->n_victims)
		return r | gs_buf_printf(b, "\nPreemption on %s: none would let it fit: %s\n", e->preempt_node,
					 e->preempt_why);
	r |= gs_buf_printf(b, "\nPreemption on %s%s: deleting %zu pod%s of lower priority would let it fit:\n",
			   e->preempt_node, e->preemption_off ? " (off: --preemption=false; what it would do)" : "",
			   e->n_victims, e->n_victims == 1 ? "" : "s");
	for (size_t i = 0; i < e->n_victims; i++)
		r |= gs_buf_printf(b, "  %s (priority %" PRId64 "%s%s%s)\n", e->victims[i].pod, e->victims[i].priority,
				   e->victims[i].reservation
					   ? "; the reservation of its gathering gang: let go, nothing deleted"
					   : "",
				   e->victims[i].pdb ? "; violates PodDisruptionBudget " : "",
				   e->victims[i].pdb ? e->victims[i].pdb : "");
	return r;
}

int gs_explain_json(const struct gs_sched_explain *e, int64_t now_ms, struct gs_buf *b)
{
	const struct gs_sched_pod_info *p = &e->pod;
	char entry[600];
	int r = pod_fields(b, p, now_ms);

	if (p->index >= 0)
		r |= gs_buf_append_json_field(b, "indexSource", gs_index_source_name(p->index_source));
	if (p->node) {
		snprintf(entry, sizeof(entry), "%ld=%s:%s", p->index, p->node, p->devices);
		r |= gs_buf_printf(b, ",\"mapLine\":%d", p->map_line);
		r |= gs_buf_append_json_field(b, "entry", entry);
	}
	if (e->map_ref) {
		r |= gs_buf_append_str(b, ",\"mapRef\":{\"name\":");
		r |= gs_buf_append_json_str(b, e->map_ref);
		r |= gs_buf_printf(b, ",\"found\":%s", e->map_ref_held ? "true" : "false");
		if (e->map_ref_held)
			r |= gs_buf_printf(b, ",\"generation\":%" PRId64, e->map_ref_generation);
		r |= gs_buf_append_json_field(b, "admittedGeneration", e->map_ref_admitted);
		r |= gs_buf_append_str(b, "}");
	}
	r |= gs_buf_append_json_field(b, "boundNode", e->bound_node);
	r |= gs_buf_printf(b, ",\"attempts\":%u", p->attempts);
	r |= gs_buf_append_json_field(b, "verdict", gs_wait_reason_name(e->verdict)); /* "NONE": every check passes */
	if (e->verdict != GS_WAIT_NONE)
		r |= gs_buf_append_json_field(b, "waitsFor", e->waits_for);
	r |= gs_buf_append_str(b, ",\"checks\":[");
	for (int i = 0; i < GS_EXPLAIN__COUNT; i++) {
		const struct gs_explain_check *c = &e->checks[i];
		r |= gs_buf_printf(b, "%s{\"name\":\"%s\",\"outcome\":\"%s\"", i ? "," : "", gs_explain_check_name(i),
				   outcome_name(c->outcome));
		if (c->outcome == GS_EXPLAIN_FAIL)
			r |= gs_buf_append_json_field(b, "reason", gs_wait_reason_name(c->reason));
		if (c->msg[0])
			r |= gs_buf_append_json_field(b, "message", c->msg);
		r |= gs_buf_append_str(b, "}");
	}
	r |= gs_buf_append_str(b, "],\"holders\":[");
	for (size_t i = 0; i < e->n_holders; i++) {
		const struct gs_explain_holder *h = &e->holders[i];
		r |= gs_buf_printf(b, "%s{\"device\":", i ? "," : "");
		r |= gs_buf_append_json_str(b, h->device);
		r |= gs_buf_append_json_field(b, "pod", h->pod);
		r |= gs_buf_append_json_field(b, "owner", h->owner);
		r |= gs_buf_printf(b, ",\"sameOwner\":%s,\"shared\":%s", h->same_owner ? "true" : "false",
				   h->shared ? "true" : "false");
		if (h->ignored)
			r |= gs_buf_append_json_field(b, "ignoredClaim", h->ignored);
		if (h->plugin_id)
			r |= gs_buf_append_json_field(b, "devicePluginId", h->plugin_id);
		r |= gs_buf_append_str(b, "}");
	}
	r |= gs_buf_append_str(b, "]");
	if (e->agent)
		r |= gs_buf_append_json_field(b, "agent", e->agent);
	r |= gs_explain_gang_json(b, &e->gang);
	r |= preemption_json(b, e);
	r |= gs_buf_append_str(b, "}\n");
	return r < 0 ? -E2BIG : 0;
}

int gs_explain_pending_json(const struct gs_sched_pending *p, int64_t now_ms, struct gs_buf *b)
{
	int r = gs_buf_printf(b, "{\"pending\":%zu,\"waitingByReason\":{", p->pending);

	for (int i = GS_WAIT_NONE + 1; i < GS_WAIT__COUNT; i++)
		r |= gs_buf_printf(b, "%s\"%s\":%zu", i > 1 ? "," : "", gs_wait_reason_name(i), p->waiting_by[i]);
	r |= gs_buf_append_str(b, "},\"oldest\":[");
	for (size_t i = 0; i < p->n_oldest; i++) {
		if (i)
			r |= gs_buf_append_str(b, ",");
		r |= pod_fields(b, &p->oldest[i], now_ms);
		r |= gs_buf_append_str(b, "}");
	}
	r |= gs_buf_append_str(b, "]}\n");
	return r < 0 ? -E2BIG : 0;
}

/* ---- text ---------------------------------------------------------------------------------------- */

static const char *state_phrase(enum gs_pod_state st)
{
	switch (st) {
	case GS_POD_WAITING:
		return "waits";
	case GS_POD_QUEUED:
		return "is queued: it will be bound now";
	case GS_POD_BINDING:
		return "is being bound: a Binding is in flight";
	case GS_POD_BACKOFF:
		return "is in backoff after a failed Binding and will be tried again";
	case GS_POD_BOUND:
		return "is bound";
	case GS_POD_GONE:
		return "was forgotten after its Binding was refused (404 or 409); an update of the pod brings it back";
	case GS_POD_FINISHED:
		return "is deleting or terminal: nothing to schedule";
	case GS_POD__COUNT:
		break;
	}
	return "?";
}

/* "  map ref:  GPUPlacementMap ns/x generation 5 (the pod was admitted under generation 3)" */
static int map_ref_text(struct gs_buf *b, const struct gs_sched_explain *e)
{
	const struct gs_sched_pod_info *p = &e->pod;
	char gen[32];

	if (!e->map_ref)
		return 0;
	if (!e->map_ref_held)
		return gs_buf_printf(
			b, "  map ref:  %s %s/%s, which the scheduler does not know (not created, or deleted)\n",
			GS_GPM_KIND, p->ns, e->map_ref);
	snprintf(gen, sizeof(gen), "%" PRId64, e->map_ref_generation);
	if (!e->map_ref_admitted)
		return gs_buf_printf(b,
				     "  map ref:  %s %s/%s generation %s (no %s: the webhook did not admit the pod)\n",
				     GS_GPM_KIND, p->ns, e->map_ref, gen, GS_MAP_REF_GENERATION);
	if (strcmp(gen, e->map_ref_admitted) == 0)
		return gs_buf_printf(b, "  map ref:  %s %s/%s generation %s (the pod was admitted under it)\n",
				     GS_GPM_KIND, p->ns, e->map_ref, gen);
	return gs_buf_printf(b, "  map ref:  %s %s/%s generation %s (the pod was admitted under generation %s)\n",
			     GS_GPM_KIND, p->ns, e->map_ref, gen, e->map_ref_admitted);
}

/* The pod's lines: index, entry, reference, state, reason. */
static int pod_text(const struct gs_sched_explain *e, struct gs_buf *b)
{
	const struct gs_sched_pod_info *p = &e->pod;
	int r = 0;

	if (p->index >= 0)
		r |= gs_buf_printf(b, "  index:    %ld (from the %s)\n", p->index,
				   gs_index_source_name(p->index_source));
	else
		r |= gs_buf_append_str(b, "  index:    none\n");
	if (p->node)
		r |= gs_buf_printf(
			b,
			"  map:      line %d: %ld=%s:%s\n  node:     %s%s%s%s, devices %s (CUDA_VISIBLE_DEVICES=%s)\n",
			p->map_line, p->index, p->node, p->devices, p->node,
			p->resolved && strcmp(p->resolved, p->node) ? " (node " : "",
			p->resolved && strcmp(p->resolved, p->node) ? p->resolved : "",
			p->resolved && strcmp(p->resolved, p->node) ? ")" : "", p->devices, p->devices);
	r |= map_ref_text(b, e);
	r |= gs_buf_printf(b, "  state:    %s: the pod %s\n", gs_pod_state_name(p->state), state_phrase(p->state));
	if (e->bound_node && (!p->node || strcmp(p->node, e->bound_node) != 0))
		r |= gs_buf_printf(b, "  bound to: %s\n", e->bound_node);
	if (p->state == GS_POD_WAITING)
		r |= gs_buf_printf(b, "  reason:   %s: %s\n", gs_wait_reason_name(p->reason),
				   p->message ? p->message : "");

	return r;
}

int gs_explain_text(const struct gs_sched_explain *e, int64_t now_ms, struct gs_buf *b)
{
	const struct gs_sched_pod_info *p = &e->pod;
	int r = gs_buf_printf(b, "Pod %s/%s (uid %s), created %" PRId64 " s ago, priority %" PRId64 "\n", p->ns,
			      p->name, p->uid, gs_explain_age_s(p->created_ms, now_ms), p->priority);

	r |= pod_text(e, b);
	r |= gs_buf_append_str(b, "\nChecks, in the order placement makes them:\n");
	for (int i = 0; i < GS_EXPLAIN__COUNT; i++) {
		const struct gs_explain_check *c = &e->checks[i];
		const char *mark = c->outcome == GS_EXPLAIN_PASS ? "ok" : c->outcome == GS_EXPLAIN_FAIL ? "FAIL" : "-";
		if (c->msg[0])
			r |= gs_buf_printf(b, "  %-4s  %-16s  %s\n", mark, gs_explain_check_name(i), c->msg);
		else
			r |= gs_buf_printf(b, "  %-4s  %s\n", mark, gs_explain_check_name(i));
	}
	if (p->node || e->n_holders) {
		if (p->node)
			r |= gs_buf_printf(b, "\nDevices %s on %s:\n", p->devices, p->resolved ? p->resolved : p->node);
		else
			r |= gs_buf_printf(b, "\nDevices held on %s:\n", e->bound_node);
		if (!e->n_holders)
			r |= gs_buf_append_str(b, "  no pod holds them\n");
		for (size_t i = 0; i < e->n_holders; i++) {
			const struct gs_explain_holder *h = &e->holders[i];
			if (h->ignored) {
				r |= gs_buf_printf(
					b, "  %s claimed by %s through gpu-scheduler.io/assigned, ignored: %s\n",
					h->device, h->pod, h->ignored);
				continue;
			}
			if (h->plugin_id) {
				r |= gs_buf_printf(b, "  %s%s%s%s %sheld by %s through the device plugin%s\n",
						   h->device, strcmp(h->device, h->plugin_id) ? " (" : "",
						   strcmp(h->device, h->plugin_id) ? h->plugin_id : "",
						   strcmp(h->device, h->plugin_id) ? ")" : "", p->node ? "" : "also ",
						   h->pod, p->node ? "" : ": a conflict (two workloads on one GPU)");
				continue;
			}
			r |= gs_buf_printf(b, "  %s held by %s (owner %s)%s%s\n", h->device, h->pod, h->owner,
					   h->same_owner ? ", the same owner as this pod" : ", another owner",
					   h->shared ? ", shared" : "");
		}
		if (e->device_sharing_any)
			r |= gs_buf_append_str(b, "  (--device-sharing=any: held devices do not stop placement)\n");
	}
	if (e->agent)
		r |= gs_buf_printf(b, "Agent data: %s\n", e->agent);
	r |= gs_explain_gang_text(b, &e->gang);
	r |= preemption_text(b, e);

	r |= gs_buf_append_str(b, "\nNow: ");
	if (e->verdict != GS_WAIT_NONE)
		r |= gs_buf_printf(b, "the pod waits (%s); it is placed again on %s.\n",
				   gs_wait_reason_name(e->verdict), e->waits_for);
	else if (p->state == GS_POD_WAITING || p->state == GS_POD_QUEUED || p->state == GS_POD_BACKOFF)
		r |= gs_buf_printf(b, "every check passes: the pod is bound to %s with CUDA_VISIBLE_DEVICES=%s%s.\n",
				   p->node, p->devices, p->state == GS_POD_BACKOFF ? " once its backoff ends" : "");
	else
		r |= gs_buf_printf(b, "the pod %s.\n", state_phrase(p->state));
	return r < 0 ? -E2BIG : 0;
}
