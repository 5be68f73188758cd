/*
 * sched_workload.c: every pod of one owner by index (sched_workload.h, sched.h's workload section). The
 * rows of pods come from one scan of the pods of ours; the rows of indices with no pod from the map the
 * caller gives (the owner's template), else from the newest pod's. Each pod's public view is
 * sched_explain.c's (gs_sched__pod_info), so the two views never say different things of one pod.
 * And the GPUs of the running pods of ours, for the per-workload metric (gs_sched_mapped_gpus).
 */
#include "sched/sched_workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/str.h"
#include "sched/map.h"
#include "sched/sched_agent.h"
#include "sched/sched_explain.h"
#include "sched/sched_gang.h"
#include "sched/sched_gpm.h"
#include "sched/sched_node.h"

struct rows {
	struct gs_sched_workload *w;
	size_t cap;
};

static struct gs_sched_workload_row *add_row(struct rows *r)
{
	struct gs_sched_workload *w = r->w;

	if (w->n_rows == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 8;
		w->rows = gs_xreallocarray(w->rows, r->cap, sizeof(*w->rows));
	}
	struct gs_sched_workload_row *x = &w->rows[w->n_rows++];
	memset(x, 0, sizeof(*x));
	return x;
}

/* "0,1" from the devices a use holds, in the order it took them. */
static char *held_list(const struct gs_sched__use *u)
{
	size_t len = 0, at = 0;
	char *out;

	for (size_t i = 0; i < u->n_holds; i++)
		len += strlen(u->holds[i].dev->name) + 1;
	out = gs_xmalloc(len);
	for (size_t i = 0; i < u->n_holds; i++) {
		size_t n = strlen(u->holds[i].dev->name);
		if (i)
			out[at++] = ',';
		memcpy(out + at, u->holds[i].dev->name, n);
		at += n;
	}
	out[at] = '\0';
	return out;
}

/* Where the pod is or goes, and with which devices: its use once handed out, else its entry. */
static void pod_row(const struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched_workload_row *x)
{
	const struct gs_sched__use *u = gs_hmap_get_str(&s->uses, p->uid);

	x->created = 1;
	x->index = p->index;
	gs_sched__pod_info(s, p, &x->pod);
	x->map_line = x->pod.map_line;
	if (u && (p->state == GS_POD_BOUND || p->state == GS_POD_BINDING)) {
		x->node = u->node->name;
		if (u->n_holds)
			x->devices = x->held = held_list(u);
		else
			x->devices = p->entry ? p->entry->devices : NULL;
		return;
	}
	if (p->entry) {
		x->node = x->pod.resolved ? x->pod.resolved : p->entry->node;
		x->devices = p->entry->devices;
	}
}

/* By index (none last), then creation, then name: a re-created pod follows the one it replaces. */
static int row_cmp(const void *a, const void *b)
{
	const struct gs_sched_workload_row *x = a, *y = b;

	if ((x->index < 0) != (y->index < 0))
		return x->index < 0 ? 1 : -1;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	if (x->created != y->created)
		return x->created ? -1 : 1;
	if (x->pod.created_ms != y->pod.created_ms)
		return x->pod.created_ms < y->pod.created_ms ? -1 : 1;
	return x->created ? strcmp(x->pod.name, y->pod.name) : 0;
}

static int has_index(const struct gs_sched_workload *w, size_t n, long index)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		long v = w->rows[mid].index;
		if (v >= 0 && v < index)
			lo = mid + 1;
		else if (v >= 0 && v == index)
			return 1;
		else
			hi = mid;
	}
	return 0;
}

/* The map a pod's indices come from now: its GPUPlacementMap's for a pod by reference (the object as it is
 * now, which a bound pod's inputs were not read again for), else its own. */
static const struct gs_map *pod_map(const struct gs_sched__pod *p)
{
	return p->ref ? p->ref->gpm->map : p->map;
}

/* The map whose indices are listed: the given one, else that of the newest pod (NULL: none). */
static const struct gs_map *view_map(struct gs_sched_workload *w, const char *text, size_t len,
				     const struct gs_sched__pod *newest)
{
	struct gs_map_error err;

	if (text) {
		if (gs_map_parse(text, len, &w->map, &err) < 0) {
			snprintf(w->map_error, sizeof(w->map_error), "%s", err.msg);
			w->map = NULL;
			return NULL;
		}
		w->map_from = GS_WORKLOAD_MAP_TEMPLATE;
		return w->map;
	}
	if (!newest)
		return NULL;
	w->map_from = newest->ref ? GS_WORKLOAD_MAP_OBJECT : GS_WORKLOAD_MAP_PODS;
	w->map_ref = newest->ref ? newest->ref->gpm->name : NULL;
	return pod_map(newest);
}

/* Pod p's row, with its gang (the first met) and state counted. */
static void add_pod(const struct gs_sched *s, const struct gs_sched__pod *p, struct rows *r)
{
	struct gs_sched_workload *out = r->w;

	pod_row(s, p, add_row(r));
	if (p->gang && !out->gang.size)
		gs_sched__gang_explain(s, p, &out->gang);
	if (p->state < GS_POD__COUNT)
		out->by_state[p->state]++;
}

/* The pods' rows sorted, then a row for each index of m (NULL: none) that no pod has, sorted in. */
static void finish_rows(struct rows *r, const struct gs_map *m)
{
	struct gs_sched_workload *out = r->w;
	size_t n = m ? gs_map_count(m) : 0;

	out->pods = out->n_rows;
	if (out->n_rows) /* qsort's array may not be NULL, even for no element */
		qsort(out->rows, out->n_rows, sizeof(*out->rows), row_cmp);
	out->map_entries = n;
	for (size_t i = 0; i < n; i++) {
		const struct gs_map_entry *e = gs_map_entry_at(m, i);
		if (has_index(out, out->pods, e->index))
			continue;
		struct gs_sched_workload_row *x = add_row(r);
		x->index = e->index;
		x->map_line = e->line;
		x->node = e->node;
		x->devices = e->devices;
		out->not_created++;
	}
	if (out->not_created)
		qsort(out->rows, out->n_rows, sizeof(*out->rows), row_cmp);
}

/* The rows of the owner's pods into out; the newest of them whose map is known, NULL when none. */
static const struct gs_sched__pod *owner_pods(const struct gs_sched *s, const char *ns, const char *kind,
					      const char *name, struct rows *r)
{
	struct gs_sched_workload *out = r->w;
	struct gs_hmap_iter it = {0};
	const struct gs_sched__pod *newest = NULL, *newest_map = NULL;

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	out->name = name;
	out->ns = ns;
	while (gs_hmap_next(&s->pods, &it)) {
		const struct gs_sched__pod *p = it.val;
		if (strcmp(p->ns, ns) != 0 || !gs_str_eq(p->owner_kind, kind) || !gs_str_eq(p->owner_name, name))
			continue;
		add_pod(s, p, r);
		if (!newest || p->created_ms > newest->created_ms)
			newest = p;
		if (pod_map(p) && (!newest_map || p->created_ms > newest_map->created_ms))
			newest_map = p;
	}
	out->owner_uid = newest && newest->owner ? gs_sched__owner_uid(newest->owner) : NULL;
	return newest_map;
}

int gs_sched__workload(const struct gs_sched *s, const char *ns, const char *kind, const char *name,
		       const char *map_text, size_t map_len, struct gs_sched_workload *out)
{
	struct rows r = {.w = out};
	const struct gs_sched__pod *newest_map = owner_pods(s, ns, kind, name, &r);

	finish_rows(&r, view_map(out, map_text, map_len, newest_map));
	return 0;
}

int gs_sched__workload_ref(const struct gs_sched *s, const char *ns, const char *kind, const char *name,
			   const char *map_ref, struct gs_sched_workload *out)
{
	struct rows r = {.w = out};
	const struct gs_sched__pod *newest_map = owner_pods(s, ns, kind, name, &r);
	const struct gs_sched__gpm *g = map_ref ? gs_sched__gpm_slot(s, ns, map_ref) : NULL;

	if (g && (out->map = gs_sched__gpm_parsed(NULL, g)) != NULL) {
		out->map_from = GS_WORKLOAD_MAP_OBJECT;
		out->map_ref = g->name;
		finish_rows(&r, out->map);
		return 0;
	}
	if (g && g->present)
		snprintf(out->map_error, sizeof(out->map_error), "%s (generation %lld) %s%s", g->label,
			 (long long)g->generation,
			 g->refused ? "is " : "spec.map: ", g->refused ? g->refused : g->map_error);
	else if (map_ref)
		snprintf(out->map_error, sizeof(out->map_error), "%s %s/%s does not exist", GS_GPM_KIND, ns, map_ref);
	finish_rows(&r, g && g->present ? NULL : view_map(out, NULL, 0, newest_map));
	return 0;
}

int gs_sched__gpm_workload(const struct gs_sched *s, const char *ns, const char *name, struct gs_sched_workload *out)
{
	struct rows r = {.w = out};
	const struct gs_sched__gpm *g = gs_sched__gpm_slot(s, ns, name);
	const struct gs_list *l;

	memset(out, 0, sizeof(*out));
	out->kind = GS_GPM_KIND;
	out->name = name;
	out->ns = ns;
	if (!g)
		return -ENOENT;
	GS_LIST_FOREACH(l, &g->pods)
		add_pod(s, GS_CONTAINER_OF(l, struct gs_sched__pref, link)->pod, &r);
	if ((out->map = gs_sched__gpm_parsed(NULL, g)) != NULL) {
		out->map_from = GS_WORKLOAD_MAP_OBJECT;
		out->map_ref = g->name;
	} else if (g->present) {
		snprintf(out->map_error, sizeof(out->map_error), "%s", g->refused ? g->refused : g->map_error);
	}
	finish_rows(&r, out->map);
	return 0;
}

void gs_sched__workload_free(struct gs_sched_workload *w)
{
	for (size_t i = 0; i < w->n_rows; i++)
		free(w->rows[i].held);
	free(w->rows);
	gs_map_unref(w->map);
	free(w->gang.blockers);
	w->gang.blockers = NULL;
	w->rows = NULL;
	w->map = NULL;
	w->n_rows = 0;
}

const char *gs_sched__workload_kind(const char *word)
{
	static const struct {
		const char *word, *kind;
	} kinds[] = {
		{"statefulset", "StatefulSet"},
		{"statefulsets", "StatefulSet"},
		{"sts", "StatefulSet"},
		{"job", "Job"},
		{"jobs", "Job"},
	};

	for (size_t i = 0; word && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcasecmp(word, kinds[i].word) == 0)
			return kinds[i].kind;
	return NULL;
}

int gs_sched__mapped_gpus(const struct gs_sched *s, gs_sched_mapped_fn fn, void *ud)
{
	struct gs_hmap_iter it = {0};
	int r;

	while (gs_hmap_next(&s->pods, &it)) {
		const struct gs_sched__pod *p = it.val;
		const struct gs_sched__use *u;
		if (p->state != GS_POD_BOUND || !p->running || !(u = gs_hmap_get_str(&s->uses, p->uid)) || u->nominated)
			continue;
		for (size_t i = 0; i < u->n_holds; i++) {
			struct gs_sched_mapped_gpu g = {
				.node = u->node->name,
				.device = u->holds[i].dev->name,
				.ns = p->ns,
				.pod = p->name,
				.kind = p->owner_kind,
				.workload = p->owner_name,
				.index = p->index,
			};
			gs_sched__agent_gpu(u->node, g.device, &g.gpu, &g.uuid);
			if ((r = fn(&g, ud)) != 0)
				return r;
		}
	}
	return 0;
}
