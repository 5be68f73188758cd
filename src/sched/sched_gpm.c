/*
 * sched_gpm.c: maps as objects (see sched_gpm.h, sched/gpm.h). A slot per "ns/name" holds the object
 * when the engine was given it and lists the pods of ours that name it, so that an object event places
 * again exactly those pods. The status of an object is counted from its pods when it is pulled; events
 * only mark the slot dirty, and a slot handed out cools for GS_GPM_STATUS_INTERVAL_MS before it may be
 * handed out again.
 */
#include "sched/sched_gpm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "sched/checks.h"
#include "sched/map_cache.h"
#include "sched/sched_node.h"

/* ---- slots ------------------------------------------------------------------------------------- */

static struct gs_sched__gpm *slot_get(const struct gs_sched *s, const char *ns, const char *name)
{
	char key[600];
	int n = snprintf(key, sizeof(key), "%s/%s", ns, name);

	if (n < 0 || (size_t)n >= sizeof(key))
		return NULL; /* longer than any valid namespace/name */
	return gs_hmap_get(&s->gpms, key, (size_t)n);
}

const struct gs_sched__gpm *gs_sched__gpm_slot(const struct gs_sched *s, const char *ns, const char *name)
{
	return slot_get(s, ns, name);
}

static struct gs_sched__gpm *slot_new(struct gs_sched *s, const char *ns, const char *name)
{
	size_t ln = strlen(ns), lm = strlen(name);
	size_t ll = sizeof(GS_GPM_KIND) + 1 + ln + 1 + lm; /* "KIND ns/name" and its NUL */
	struct gs_sched__gpm *g = gs_xcalloc(1, sizeof(*g) + 2 * (ln + lm + 2) + ll);

	gs_list_init(&g->pods);
	gs_list_init(&g->slink);
	memcpy(g->key, ns, ln);
	g->key[ln] = '/';
	memcpy(g->key + ln + 1, name, lm + 1);
	g->ns = g->key + ln + lm + 2;
	memcpy(g->ns, ns, ln + 1);
	g->name = g->ns + ln + 1;
	memcpy(g->name, name, lm + 1);
	g->label = g->name + lm + 1;
	snprintf(g->label, ll, "%s %s", GS_GPM_KIND, g->key);
	gs_sched__hmap_put(&s->gpms, g->key, g);
	return g;
}

/* ---- memory ------------------------------------------------------------------------------------ */

/*
 * What a held object costs, in bytes: its slot and strings at their longest (GPM_SLOT_BYTES: the key's
 * three copies of a namespace of 63 and a name of 253 bytes, a uid, three settings of 64), its text,
 * and what its parse keeps in the map cache while pods reference it (gs_map_cache_cost: the cache's
 * copy of the text, its entry and the parsed map). Charged whole from the moment the object is held,
 * referenced or not, so the budgets bound what the engine may come to keep, not what it keeps today.
 */
#define GPM_SLOT_BYTES (sizeof(struct gs_sched__gpm) + 3 * (63 + 253 + 2) + 128 + 3 * 64)

static size_t gpm_cost(size_t len, const struct gs_map *m)
{
	return GPM_SLOT_BYTES + len + 1 + gs_map_cache_cost(len, m);
}

static struct gs_sched__gpm_ns *ns_get(struct gs_sched *s, const char *ns, int create)
{
	struct gs_sched__gpm_ns *n = gs_hmap_get_str(&s->gpm_ns, ns);
	size_t len;

	if (n || !create)
		return n;
	len = strlen(ns);
	n = gs_xcalloc(1, sizeof(*n) + len + 1);
	memcpy(n->ns, ns, len + 1);
	gs_sched__hmap_put(&s->gpm_ns, n->ns, n);
	return n;
}

static void ns_gc(struct gs_sched *s, struct gs_sched__gpm_ns *n)
{
	if (n->bytes || n->refused)
		return;
	gs_hmap_del_str(&s->gpm_ns, n->ns, NULL);
	free(n);
}

/* "17.2 MiB", "600 KiB", "512 bytes" */
static void fmt_size(char *b, size_t size, size_t bytes)
{
	if (bytes >= (size_t)1 << 20)
		snprintf(b, size, "%.1f MiB", (double)bytes / (1 << 20));
	else if (bytes >= 1024)
		snprintf(b, size, "%.1f KiB", (double)bytes / 1024);
	else
		snprintf(b, size, "%zu bytes", bytes);
}

/*
 * Charges cost to g's namespace and the total, or returns -1 with why when either budget would be
 * passed (the message names no other namespace: issue 36, item 7).
 */
static int budget_take(struct gs_sched *s, struct gs_sched__gpm *g, size_t cost, char *why, size_t size)
{
	struct gs_sched__gpm_ns *n = ns_get(s, g->ns, 1);
	char have[32], cap[32];

	/* The words depend only on the object and the budget, never on what else is held: a relist that
	 * refuses it again rewrites no status. */
	fmt_size(have, sizeof(have), cost);
	if (n->bytes + cost > s->cfg.gpm_bytes_per_ns) {
		fmt_size(cap, sizeof(cap), s->cfg.gpm_bytes_per_ns);
		snprintf(why, size,
			 "not held by the scheduler: it would take %s of its memory, and the maps of namespace %s "
			 "would pass its --placement-map-memory-per-namespace of %s; delete or shrink some of them",
			 have, g->ns, cap);
		return -1;
	}
	if (s->gpm_bytes + cost > s->cfg.gpm_bytes) {
		fmt_size(cap, sizeof(cap), s->cfg.gpm_bytes);
		snprintf(why, size,
			 "not held by the scheduler: it would take %s of its memory, and the maps of every namespace "
			 "would pass its --placement-map-memory of %s",
			 have, cap);
		return -1;
	}
	n->bytes += cost;
	s->gpm_bytes += cost;
	g->cost = cost;
	return 0;
}

/* Gives back what g was charged, or its refusal; memory freed while objects are refused asks for a
 * relist of the objects (gs_sched_gpm_take_relist), which offers the refused ones again. */
static void budget_give(struct gs_sched *s, struct gs_sched__gpm *g)
{
	struct gs_sched__gpm_ns *n;

	if (!g->cost && !g->refused)
		return;
	n = ns_get(s, g->ns, 0);
	GS_ASSERT(n);
	if (g->refused) {
		n->refused--;
		s->gpm_refused--;
	}
	n->bytes -= g->cost;
	s->gpm_bytes -= g->cost;
	if (g->cost && s->gpm_refused)
		s->gpm_relist = 1;
	g->cost = 0;
	ns_gc(s, n);
}

int gs_sched__gpm_take_relist(struct gs_sched *s, int64_t now_ms, int64_t *due_ms)
{
	*due_ms = -1;
	if (!s->gpm_relist || !s->gpm_refused) {
		s->gpm_relist = 0;
		return 0;
	}
	if (s->gpm_relist_ms && now_ms < s->gpm_relist_ms + GS_GPM_RELIST_INTERVAL_MS) {
		*due_ms = s->gpm_relist_ms + GS_GPM_RELIST_INTERVAL_MS;
		return 0;
	}
	s->gpm_relist = 0;
	s->gpm_relist_ms = now_ms;
	return 1;
}

/* Forgets what the object said (not its pods), and gives back what it was charged. */
static void slot_clear(struct gs_sched *s, struct gs_sched__gpm *g)
{
	budget_give(s, g);
	free(g->refused);
	g->refused = NULL;
	g->entries = 0;
	free(g->uid);
	free(g->text);
	free(g->placement);
	free(g->gang_timeout);
	free(g->gang_size);
	free(g->map_error);
	gs_map_unref(g->map);
	g->uid = g->text = g->placement = g->gang_timeout = g->gang_size = g->map_error = NULL;
	g->map = NULL;
	g->map_len = 0;
	g->generation = 0;
}

static void slot_forget_status(struct gs_sched__gpm *g)
{
	free(g->last_name);
	free(g->last_msg);
	free(g->last_err);
	free(g->last_refused);
	g->last_name = g->last_msg = g->last_err = g->last_refused = NULL;
	g->handed = 0;
}

/* Off gpm_ready and gpm_cooling. */
static void slot_off(struct gs_sched *s, struct gs_sched__gpm *g)
{
	if (g->on == 2 && g->dirty)
		s->n_cool_dirty--;
	if (g->on)
		gs_list_remove(&g->slink);
	g->on = 0;
	g->dirty = 0;
}

static void slot_free(struct gs_sched *s, struct gs_sched__gpm *g)
{
	slot_clear(s, g);
	slot_forget_status(g);
	free(g);
}

/* Frees g when nothing needs it: the object is gone and no pod names it. */
void gs_sched__gpm_gc(struct gs_sched *s, struct gs_sched__gpm *g)
{
	if (g->present || g->n_pods)
		return;
	slot_off(s, g);
	gs_hmap_del_str(&s->gpms, g->key, NULL);
	slot_free(s, g);
}

static void mark_dirty(struct gs_sched *s, struct gs_sched__gpm *g)
{
	if (!g->present || g->dirty)
		return;
	g->dirty = 1;
	if (g->on == 2) {
		s->n_cool_dirty++;
	} else if (!g->on) {
		gs_list_insert_tail(&s->gpm_ready, &g->slink);
		g->on = 1;
	}
}

void gs_sched__gpm_touch(struct gs_sched *s, const struct gs_sched__pod *p)
{
	if (p->ref)
		mark_dirty(s, p->ref->gpm);
}

static void pref_free(struct gs_sched__pref *r);

void gs_sched__gpms_free(struct gs_sched *s)
{
	struct gs_hmap_iter it = {0};

	while (gs_hmap_next(&s->gpms, &it)) {
		struct gs_sched__gpm *g = it.val;
		struct gs_list *l, *next;

		GS_LIST_FOREACH_SAFE(l, next, &g->pods) {
			struct gs_sched__pref *r = GS_CONTAINER_OF(l, struct gs_sched__pref, link);
			r->pod->ref = NULL;
			pref_free(r);
		}
		slot_free(s, g);
	}
	gs_hmap_free(&s->gpms);
	GS_ASSERT(gs_hmap_len(&s->gpm_ns) == 0 && s->gpm_bytes == 0 && s->gpm_refused == 0);
	GS_ASSERT(gs_hmap_len(&s->inline_maps) == 0);
	gs_hmap_free(&s->gpm_ns);
	gs_hmap_free(&s->inline_maps);
}

/* ---- the objects ------------------------------------------------------------------------------- */

static int str_same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* 1 when g holds exactly what v says (an upsert of it changes nothing). */
static int slot_same(const struct gs_sched__gpm *g, const struct gs_gpm_view *v)
{
	size_t len = v->map_text ? v->map_len : 0;

	return g->present && !g->refused && g->generation == v->generation && str_same(g->uid, v->uid) &&
	       g->map_len == len && (len == 0 || memcmp(g->text, v->map_text, len) == 0) &&
	       str_same(g->placement, v->placement) && str_same(g->gang_timeout, v->gang_timeout) &&
	       str_same(g->gang_size, v->gang_size);
}

/* g is not held, for why: counted against its namespace, nothing kept. */
static void refuse(struct gs_sched *s, struct gs_sched__gpm *g, const char *why)
{
	struct gs_sched__gpm_ns *n = ns_get(s, g->ns, 1);

	g->refused = gs_xstrdup(why);
	n->refused++;
	s->gpm_refused++;
}

/*
 * Takes v's fields: parses its map once (through the map cache) for its entries and its error, and
 * holds the object when its cost fits the budgets (the parse is kept while pods reference it), else
 * refuses it: its text and parse are let go, its settings kept.
 */
static void slot_take(struct gs_sched *s, struct gs_sched__gpm *g, const struct gs_gpm_view *v)
{
	const struct gs_map_error *err = NULL;
	size_t len = v->map_text ? v->map_len : 0;
	struct gs_map *m = NULL;
	char why[512];
	int rc;

	slot_clear(s, g);
	g->uid = gs_xstrdup(v->uid);
	g->generation = v->generation;
	g->placement = gs_sched__xstrdup_null(v->placement);
	g->gang_timeout = gs_sched__xstrdup_null(v->gang_timeout);
	g->gang_size = gs_sched__xstrdup_null(v->gang_size);
	g->present = 1;
	if (v->refused) { /* a command's view: the daemon said it does not hold it */
		refuse(s, g, v->refused);
		return;
	}
	rc = gs_map_cache_get(s->maps, len ? v->map_text : "", len, &m, &err);
	if (rc == -ENOMEM)
		gs_oom(len);
	if (budget_take(s, g, gpm_cost(len, m), why, sizeof(why)) < 0) {
		gs_map_unref(m);
		refuse(s, g, why);
		gs_log_warn("%s %s generation %lld: %s", GS_GPM_KIND, g->key, (long long)g->generation, why);
		return;
	}
	g->text = gs_xmalloc(len + 1);
	if (len)
		memcpy(g->text, v->map_text, len);
	g->text[len] = '\0';
	g->map_len = len;
	if (rc < 0) {
		g->map_error = gs_xstrdup(err->msg);
		gs_log_info("%s %s generation %lld: spec.map does not parse: %s", GS_GPM_KIND, g->key,
			    (long long)g->generation, g->map_error);
		return;
	}
	g->entries = gs_map_count(m);
	if (g->n_pods)
		g->map = m;
	else
		gs_map_unref(m); /* parsed again when a pod names it, or found in the cache */
}

struct gs_map *gs_sched__gpm_parsed(struct gs_map_cache *cache, const struct gs_sched__gpm *g)
{
	const struct gs_map_error *cerr = NULL;
	struct gs_map_error err;
	struct gs_map *m = NULL;
	int rc;

	if (!g || !g->present || g->refused || g->map_error)
		return NULL;
	if (g->map) {
		gs_map_ref(g->map);
		return g->map;
	}
	rc = cache ? gs_map_cache_get(cache, g->text, g->map_len, &m, &cerr)
		   : gs_map_parse(g->text, g->map_len, &m, &err);
	if (rc == -ENOMEM)
		gs_oom(g->map_len);
	GS_ASSERT(rc == 0); /* it parsed when taken, and parsing is a function of the text */
	return m;
}

/* A held object's map, parsed, for a pod that now names it (n_pods went from 0). */
static void slot_parse(struct gs_sched *s, struct gs_sched__gpm *g)
{
	if (!g->map)
		g->map = gs_sched__gpm_parsed(s->maps, g);
}

int gs_sched__gpm_upsert(struct gs_sched *s, const struct gs_gpm_view *v, struct gs_sched__gpm **out)
{
	struct gs_sched__gpm *g;

	if (!v->ns || !*v->ns || !v->name || !*v->name || !v->uid || !*v->uid)
		return -EINVAL;
	g = slot_get(s, v->ns, v->name);
	if (!g)
		g = slot_new(s, v->ns, v->name);
	if (slot_same(g, v))
		return 0; /* a resync, or a status write echoed back */
	if (g->present && !str_same(g->uid, v->uid))
		slot_forget_status(g); /* another object of that name (re-created, seen by a relist): none yet */
	slot_take(s, g, v);
	gs_log_debug("%s %s: generation %lld, %zu pods name it", GS_GPM_KIND, g->key, (long long)g->generation,
		     g->n_pods);
	mark_dirty(s, g);
	*out = g;
	return 1;
}

int gs_sched__gpm_delete(struct gs_sched *s, const char *ns, const char *name, struct gs_sched__gpm **out)
{
	struct gs_sched__gpm *g = ns && name ? slot_get(s, ns, name) : NULL;

	if (!g || !g->present)
		return -ENOENT;
	slot_off(s, g);
	slot_clear(s, g);
	slot_forget_status(g);
	g->present = 0;
	gs_log_debug("%s %s: deleted, %zu pods name it", GS_GPM_KIND, g->key, g->n_pods);
	*out = g;
	return 0;
}

int gs_sched__gpm_find(const struct gs_sched *s, const char *ns, const char *name, struct gs_gpm_view *out)
{
	const struct gs_sched__gpm *g = ns && name ? slot_get(s, ns, name) : NULL;

	if (!g || !g->present || g->refused)
		return 0;
	memset(out, 0, sizeof(*out));
	out->ns = g->ns;
	out->name = g->name;
	out->uid = g->uid;
	out->generation = g->generation;
	out->map_text = g->text;
	out->map_len = g->map_len;
	out->placement = g->placement;
	out->gang_timeout = g->gang_timeout;
	out->gang_size = g->gang_size;
	return 1;
}

/* ---- inline maps ------------------------------------------------------------------------------- */

static int inline_key(char *key, size_t size, const char *ns, const struct gs_map *m)
{
	int n = snprintf(key, size, "%s/%p", ns, (const void *)m);

	GS_ASSERT(n > 0 && (size_t)n < size); /* a namespace is at most 63 bytes */
	return n;
}

/* A copy of e alone, its strings in its own block. */
static struct gs_map_entry *entry_copy(const struct gs_map_entry *e)
{
	size_t ln = strlen(e->node) + 1, ld = strlen(e->devices) + 1;
	struct gs_map_entry *c = gs_xmalloc(sizeof(*c) + ln + ld);
	char *str = (char *)(c + 1);

	*c = *e;
	memcpy(str, e->node, ln);
	memcpy(str + ln, e->devices, ld);
	c->node = str;
	c->devices = str + ln;
	return c;
}

void gs_sched__inline_drop(struct gs_sched *s, struct gs_sched__pod *p)
{
	if (p->map_charged) {
		char key[128];
		int n = inline_key(key, sizeof(key), p->ns, p->map);
		struct gs_sched__inline *in = gs_hmap_get(&s->inline_maps, key, (size_t)n);
		struct gs_sched__gpm_ns *ns = ns_get(s, p->ns, 0);

		GS_ASSERT(in && ns && in->refs > 0);
		if (--in->refs == 0) {
			ns->bytes -= in->cost;
			s->gpm_bytes -= in->cost;
			if (s->gpm_refused)
				s->gpm_relist = 1;
			gs_hmap_del(&s->inline_maps, key, (size_t)n, NULL);
			free(in);
			ns_gc(s, ns);
		}
		p->map_charged = 0;
	}
	gs_map_unref(p->map);
	free(p->entry_copy);
	p->map = NULL;
	p->entry_copy = NULL;
	p->entry = NULL;
}

void gs_sched__inline_take(struct gs_sched *s, struct gs_sched__pod *p, struct gs_map *m, const struct gs_map_entry *e,
			   size_t len)
{
	struct gs_sched__inline *in;
	struct gs_sched__gpm_ns *ns;
	char key[128];
	size_t cost;
	int n;

	gs_sched__inline_drop(s, p); /* m holds its own reference: the same map taken again is safe */
	p->map = m;
	p->entry = e;
	if (!m || p->ref)
		return; /* by reference: the object's map, charged with the object */
	n = inline_key(key, sizeof(key), p->ns, m);
	if ((in = gs_hmap_get(&s->inline_maps, key, (size_t)n)) != NULL) {
		in->refs++;
		p->map_charged = 1;
		return;
	}
	cost = gs_map_cache_cost(len, m);
	ns = ns_get(s, p->ns, 1);
	if (ns->bytes + cost <= s->cfg.gpm_bytes_per_ns && s->gpm_bytes + cost <= s->cfg.gpm_bytes) {
		in = gs_xcalloc(1, sizeof(*in) + (size_t)n + 1);
		memcpy(in->key, key, (size_t)n + 1);
		in->refs = 1;
		in->cost = cost;
		gs_sched__hmap_put(&s->inline_maps, in->key, in);
		ns->bytes += cost;
		s->gpm_bytes += cost;
		p->map_charged = 1;
		return;
	}
	ns_gc(s, ns);
	/* Past the budgets: the entry alone (placement needs no more); the map goes idle in the cache. */
	s->inline_not_kept++;
	p->entry = p->entry_copy = e ? entry_copy(e) : NULL;
	p->map = NULL;
	gs_map_unref(m);
}

/* ---- pods -------------------------------------------------------------------------------------- */

static void pref_free(struct gs_sched__pref *r)
{
	free(r->gen_text);
	free(r->cuda_value);
	free(r->no_index);
	free(r->gated);
	free(r);
}

void gs_sched__gpm_unlink(struct gs_sched *s, struct gs_sched__pod *p)
{
	struct gs_sched__pref *r = p->ref;
	struct gs_sched__gpm *g;

	if (!r)
		return;
	g = r->gpm;
	gs_list_remove(&r->link);
	if (--g->n_pods == 0) {
		gs_map_unref(g->map); /* idle in the cache, which bounds what it keeps of those */
		g->map = NULL;
	}
	mark_dirty(s, g);
	pref_free(r);
	p->ref = NULL;
	gs_sched__gpm_gc(s, g);
}

/* The generation text as a number, -1 when it is not one. */
static int64_t gen_parse(const char *t)
{
	int64_t v = 0;

	if (!t || !*t)
		return -1;
	for (; *t; t++) {
		if (*t < '0' || *t > '9' || v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*t - '0');
	}
	return v;
}

int gs_sched__gpm_link(struct gs_sched *s, struct gs_sched__pod *p, const struct gs_pod_obj *o)
{
	struct gs_sched__pref *r = p->ref;
	struct gs_sched__gpm *g;

	if (!o->map_ref || !*o->map_ref) {
		gs_sched__gpm_unlink(s, p);
		return 0;
	}
	if (r && strcmp(r->gpm->name, o->map_ref) != 0) {
		gs_sched__gpm_unlink(s, p);
		r = NULL;
	}
	if (!r) {
		g = slot_get(s, p->ns, o->map_ref);
		if (!g)
			g = slot_new(s, p->ns, o->map_ref);
		r = gs_xcalloc(1, sizeof(*r));
		r->gpm = g;
		r->pod = p;
		gs_list_insert_tail(&g->pods, &r->link);
		g->n_pods++;
		p->ref = r;
		slot_parse(s, g);
		mark_dirty(s, g); /* else only what the status shows marks it (gs_sched__gpm_touch) */
	}
	free(r->gen_text);
	free(r->cuda_value);
	r->gen_text = gs_sched__xstrdup_null(o->map_ref_generation);
	r->generation = gen_parse(o->map_ref_generation);
	r->cuda_state = o->cuda_state;
	r->cuda_value = gs_sched__xstrdup_null(o->cuda_value);
	r->inline_map = o->map_text != NULL;
	r->own_gang = o->placement || o->gang_timeout || o->gang_size;
	return 1;
}

/* ---- status ------------------------------------------------------------------------------------ */

/* 1 when p goes before cur as the waiting pod a status names: the lowest index (pods without one
 * last), then the name. */
static int names_first(const struct gs_sched__pod *p, const struct gs_sched__pod *cur)
{
	if (!cur)
		return 1;
	if ((p->index >= 0) != (cur->index >= 0))
		return p->index >= 0;
	if (p->index != cur->index)
		return p->index < cur->index;
	return strcmp(p->name, cur->name) < 0;
}

void gs_sched__gpm_count(const struct gs_sched__gpm *g, struct gs_gpm_status *out)
{
	const struct gs_sched__pod *first = NULL;
	const struct gs_list *l;

	memset(out, 0, sizeof(*out));
	out->ns = g->ns;
	out->name = g->name;
	out->uid = g->uid;
	out->observed_generation = g->generation;
	out->entries = g->entries;
	GS_LIST_FOREACH(l, &g->pods) {
		const struct gs_sched__pod *p = GS_CONTAINER_OF(l, struct gs_sched__pref, link)->pod;

		switch (p->state) {
		case GS_POD_BOUND:
		case GS_POD_BINDING:
			out->placed++;
			break;
		case GS_POD_WAITING:
			out->waiting_by[p->reason]++;
			if (names_first(p, first))
				first = p;
			/* fall through */
		case GS_POD_QUEUED:
		case GS_POD_BACKOFF:
			out->waiting++;
			break;
		default:
			break;
		}
	}
	out->oldest_index = -1;
	if (first) {
		out->oldest_index = first->index;
		out->oldest_name = first->name;
		out->oldest_reason = first->reason;
		out->oldest_message = first->msg;
	}
	out->map_error = g->map_error;
	out->refused = g->refused;
	out->ready = g->present && !g->refused && !g->map_error && out->waiting == 0 && out->placed == out->entries;
}

static int status_same(const struct gs_gpm_status *a, const struct gs_gpm_status *b)
{
	return a->observed_generation == b->observed_generation && a->entries == b->entries && a->placed == b->placed &&
	       a->waiting == b->waiting && memcmp(a->waiting_by, b->waiting_by, sizeof(a->waiting_by)) == 0 &&
	       a->oldest_index == b->oldest_index && str_same(a->oldest_name, b->oldest_name) &&
	       a->oldest_reason == b->oldest_reason && str_same(a->oldest_message, b->oldest_message) &&
	       a->ready == b->ready && str_same(a->map_error, b->map_error) && str_same(a->refused, b->refused);
}

/* Keeps st as the last status handed out for g (its strings copied). */
static void remember(struct gs_sched__gpm *g, const struct gs_gpm_status *st)
{
	slot_forget_status(g);
	g->last = *st;
	g->last.uid = NULL; /* not kept: slot_take replaces g->uid, and another uid forgets the status */
	g->last.oldest_name = g->last_name = gs_sched__xstrdup_null(st->oldest_name);
	g->last.oldest_message = g->last_msg = gs_sched__xstrdup_null(st->oldest_message);
	g->last.map_error = g->last_err = gs_sched__xstrdup_null(st->map_error);
	g->last.refused = g->last_refused = gs_sched__xstrdup_null(st->refused);
	g->handed = 1;
}

/* Slots whose cooling ended: dirty ones become ready, the others leave the lists. */
static void cool(struct gs_sched *s, int64_t now_ms)
{
	while (!gs_list_empty(&s->gpm_cooling)) {
		struct gs_sched__gpm *g = GS_CONTAINER_OF(gs_list_first(&s->gpm_cooling), struct gs_sched__gpm, slink);
		int dirty = g->dirty;

		if (g->due_ms > now_ms)
			break;
		slot_off(s, g);
		if (dirty)
			mark_dirty(s, g);
	}
}

int gs_sched__gpm_next_status(struct gs_sched *s, int64_t now_ms, struct gs_gpm_status *out)
{
	struct gs_gpm_status st;

	cool(s, now_ms);
	while (!gs_list_empty(&s->gpm_ready)) {
		struct gs_sched__gpm *g = GS_CONTAINER_OF(gs_list_first(&s->gpm_ready), struct gs_sched__gpm, slink);

		slot_off(s, g);
		gs_sched__gpm_count(g, &st);
		if (g->handed && status_same(&g->last, &st))
			continue;
		remember(g, &st);
		g->due_ms = now_ms + GS_GPM_STATUS_INTERVAL_MS;
		gs_list_insert_tail(&s->gpm_cooling, &g->slink);
		g->on = 2;
		*out = g->last;
		out->uid = g->uid;
		return 1;
	}
	return 0;
}

int gs_sched__gpm_status(const struct gs_sched *s, const char *ns, const char *name, struct gs_gpm_status *out)
{
	const struct gs_sched__gpm *g = ns && name ? slot_get(s, ns, name) : NULL;

	if (!g || !g->present)
		return 0;
	gs_sched__gpm_count(g, out);
	return 1;
}

int64_t gs_sched__gpm_deadline(const struct gs_sched *s)
{
	const struct gs_list *l;

	if (!s->n_cool_dirty)
		return -1;
	GS_LIST_FOREACH(l, &s->gpm_cooling) {
		const struct gs_sched__gpm *g = GS_CONTAINER_OF(l, struct gs_sched__gpm, slink);
		if (g->dirty)
			return g->due_ms;
	}
	return -1;
}

/* ---- resolution -------------------------------------------------------------------------------- */

/* The object's map and p's entry in it: NONE, or MAP_INVALID, MAP_MISSING, NO_INDEX, NO_ENTRY with msg. */
static enum gs_wait_reason ref_map(const struct gs_sched *s, const struct gs_sched__pod *p, struct gs_map **m,
				   const struct gs_map_entry **e, char *msg, size_t size)
{
	const struct gs_sched__pref *r = p->ref;
	const struct gs_sched__gpm *g = r->gpm;
	size_t n;

	if (r->inline_map) {
		snprintf(msg, size, "pod has both the %s annotation and %s: %s (a pod names its map one way)",
			 s->cfg.annotation, GS_MAP_REF_ANNOTATION, g->name);
		return GS_WAIT_MAP_INVALID;
	}
	if (!g->present) {
		snprintf(msg, size, "%s named by %s does not exist", g->label, GS_MAP_REF_ANNOTATION);
		return GS_WAIT_MAP_MISSING;
	}
	if (g->refused) {
		snprintf(msg, size, "%s (generation %lld) is %s", g->label, (long long)g->generation, g->refused);
		return GS_WAIT_MAP_INVALID;
	}
	if (!g->map) {
		snprintf(msg, size,
			 strncmp(g->map_error, "line ", 5) == 0 ? "%s (generation %lld) spec.map %s"
								: "%s (generation %lld) spec.map: %s",
			 g->label, (long long)g->generation, g->map_error);
		return GS_WAIT_MAP_INVALID;
	}
	*m = g->map;
	gs_map_ref(g->map);
	if (p->index < 0) {
		snprintf(msg, size, "%s", r->no_index ? r->no_index : "the pod has no index");
		return GS_WAIT_NO_INDEX;
	}
	if (!(*e = gs_map_lookup(g->map, p->index))) {
		n = gs_map_count(g->map);
		snprintf(msg, size,
			 "%s (generation %lld) has no entry for index %ld (index from %s; the map has %zu %s)",
			 g->label, (long long)g->generation, p->index, gs_index_source_name(p->index_source), n,
			 n == 1 ? "entry" : "entries");
		return GS_WAIT_NO_ENTRY;
	}
	return GS_WAIT_NONE;
}

/* NOT_MUTATED (entry e's devices are not what the containers have) with msg naming both generations
 * when the webhook used another one, else NONE. */
static enum gs_wait_reason ref_cuda(const struct gs_sched__pod *p, const struct gs_map_entry *e, char *msg, size_t size)
{
	const struct gs_sched__pref *r = p->ref;
	const struct gs_sched__gpm *g = r->gpm;
	char why[768];

	if (gs_checks_cuda_env(g->label, r->cuda_state, r->cuda_value, e, why, sizeof(why)))
		return GS_WAIT_NONE;
	if (r->generation >= 0 && r->generation != g->generation)
		snprintf(msg, size, "admitted under generation %lld of %s; %s; the object is now generation %lld",
			 (long long)r->generation, g->label, why, (long long)g->generation);
	else
		snprintf(msg, size, "%s", why);
	return GS_WAIT_NOT_MUTATED;
}

/* The object's all-or-nothing settings (*gopts, *gang_ok): GANG_INVALID with msg when the pod has its
 * own beside the reference or the object's do not parse, else NONE. */
static enum gs_wait_reason ref_gang(const struct gs_sched__pod *p, struct gs_gang_opts *gopts, int *gang_ok, char *msg,
				    size_t size)
{
	const struct gs_sched__gpm *g = p->ref->gpm;
	char why[512];

	*gang_ok = 0;
	if (p->ref->own_gang) {
		snprintf(msg, size,
			 "pod has %s, %s or %s annotations beside %s: by reference, %s's spec gives them "
			 "(placement, gangTimeout, gangSize)",
			 GS_GANG_PLACEMENT, GS_GANG_TIMEOUT, GS_GANG_SIZE, GS_MAP_REF_ANNOTATION, g->label);
		return GS_WAIT_GANG_INVALID;
	}
	if (!g->present)
		return GS_WAIT_NONE;
	if (gs_gang_opts_parse_named(&gs_gang_spec_names, g->placement, g->gang_timeout, g->gang_size, gopts, why,
				     sizeof(why)) < 0) {
		snprintf(msg, size, "%s (generation %lld): %s", g->label, (long long)g->generation, why);
		return GS_WAIT_GANG_INVALID;
	}
	*gang_ok = 1;
	return GS_WAIT_NONE;
}

enum gs_wait_reason gs_sched__gpm_inputs(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_map **m,
					 const struct gs_map_entry **e, struct gs_gang_opts *gopts, int *gang_ok,
					 char *msg, size_t size)
{
	enum gs_wait_reason r = ref_map(s, p, m, e, msg, size);
	char gmsg[1024];

	if (r == GS_WAIT_NONE && s->cfg.check_env)
		r = ref_cuda(p, *e, msg, size);
	if (ref_gang(p, gopts, gang_ok, gmsg, sizeof(gmsg)) != GS_WAIT_NONE && r == GS_WAIT_NONE) {
		r = GS_WAIT_GANG_INVALID;
		snprintf(msg, size, "%s", gmsg);
	}
	/* Gates last: a gated pod with a broken map is told about the map first, which it can fix now. */
	if (r == GS_WAIT_NONE && p->ref->gated) {
		r = GS_WAIT_SCHEDULING_GATED;
		snprintf(msg, size, "%s", p->ref->gated);
	}
	return r;
}
