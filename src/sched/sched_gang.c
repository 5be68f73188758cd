/*
 * sched_gang.c: all-or-nothing gangs. See sched_gang.h, sched_int.h (struct gs_sched__gang) and
 * docs/sched.md ("All or nothing").
 *
 * A gang is the set of pods of one owner that carry gpu-scheduler.io/placement: all-or-nothing. While
 * it gathers, a member that passes every check takes its reservation (the use a Binding in flight
 * takes) and waits with GANG; the other members wait with their own reasons. The reservations are real
 * uses, so every later decision (our other pods, the gang's other members) is measured against them:
 * members sharing a node are summed. When n_reserved reaches the size the gang is ready; the next pull
 * verifies all of it on one snapshot (sched_place.c) and hands the members out back to back.
 */
#include "sched/sched_gang.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backoff.h"
#include "core/log.h"
#include "sched/sched_node.h"
#include "sched/sched_use.h"

/* How long a gang that timed out rests before it gathers again: doubling from 10 s to 5 min. */
#define REST_MIN_MS 10000
#define REST_MAX_MS (5 * 60 * 1000)

static void ph_free(struct gs_sched__ph *ph);
static int ph_withdraw(struct gs_sched__ph *ph);
static const char *owner_kind(const struct gs_sched__gang *g);

/* ---- budgets -------------------------------------------------------------------------------------- */

/*
 * One namespace's gangs may hold reserved at once what its budget allows (cfg.gang_members_per_ns,
 * gang_gpus_per_ns, gang_limits; docs/sched.md "Budgets"). A gang is admitted whole, at its first
 * reservation: its claim (its size, and the GPUs of its map's size largest entries) must fit beside the
 * claims of the namespace's gangs admitted already. So admitted gangs never wait on each other for the
 * budget (two half-gathered gangs cannot hold it between them), and one that is not admitted holds
 * nothing. A gang stops holding its claim when it holds no reservation (committed, timed out, its
 * members gone or moved); then the namespace's capped gangs are placed again.
 */

static struct gs_sched__gang_ns *budget_ns(struct gs_sched *s, const char *ns, int create)
{
	struct gs_sched__gang_ns *b = gs_hmap_get_str(&s->gang_ns, ns);
	size_t l;

	if (b || !create)
		return b;
	l = strlen(ns) + 1;
	b = gs_xcalloc(1, sizeof(*b) + l);
	memcpy(b->ns, ns, l);
	gs_list_init(&b->holding);
	gs_list_init(&b->capped);
	gs_sched__hmap_put(&s->gang_ns, b->ns, b);
	return b;
}

static void budget_ns_gc(struct gs_sched *s, struct gs_sched__gang_ns *b)
{
	if (!b || b->seeded || !gs_list_empty(&b->holding) || !gs_list_empty(&b->capped))
		return;
	gs_hmap_del_str(&s->gang_ns, b->ns, NULL);
	free(b);
}

/* Namespace ns's bounds and the flags that set them, for messages. */
static const char *budget_caps(const struct gs_sched *s, const char *ns, long *members, long *gpus)
{
	const struct gs_sched__gang_ns *b = gs_hmap_get_str(&s->gang_ns, ns);

	if (b && b->seeded) {
		*members = b->cap_members;
		*gpus = b->cap_gpus;
		return "the daemon's bounds";
	}
	const struct gs_gang_limit *l = gs_hmap_get_str(&s->gang_limits, ns);
	if (l) {
		*members = l->members;
		*gpus = l->gpus;
		return "--gang-reservation-limits";
	}
	*members = s->cfg.gang_members_per_ns;
	*gpus = s->cfg.gang_gpus_per_ns;
	return "--gang-reservations-per-namespace, --gang-reserved-gpus-per-namespace";
}

static int cmp_long_desc(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x < y) - (x > y);
}

/* The GPUs of the size entries of m with the most devices: the most a gang of that size reserves. */
static long map_gpus(const struct gs_map *m, long size)
{
	size_t n = gs_map_count(m), take = (size_t)size < n ? (size_t)size : n;
	long total = 0, *v;

	if (take == n) {
		for (size_t i = 0; i < n; i++)
			total += gs_map_entry_at(m, i)->n_devices;
		return total;
	}
	v = gs_xcalloc(n, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = gs_map_entry_at(m, i)->n_devices;
	qsort(v, n, sizeof(*v), cmp_long_desc);
	for (size_t i = 0; i < take; i++)
		total += v[i];
	free(v);
	return total;
}

/* What g would claim, judged from member p's map (cached in g: a capped gang is judged at each event of
 * its members' nodes). Without a map (an inline map past the memory budget keeps only p's entry), each
 * member is taken to use as many devices as p's entry. */
static long need_gpus(struct gs_sched__gang *g, const struct gs_sched__pod *p)
{
	if (!p->map)
		return g->size * (long)p->entry->n_devices;
	if (g->need_map != p->map || g->need_size != g->size) {
		g->need_map = p->map;
		g->need_size = g->size;
		g->need_gpus = map_gpus(p->map, g->size);
	}
	return g->need_gpus;
}

/* What the namespace's admitted gangs but g claim (a gang reserving more than it was admitted for
 * claims what it holds), with the daemon's numbers when seeded. */
static void budget_held(const struct gs_sched *s, const struct gs_sched__gang *g, long *members, long *gpus)
{
	const struct gs_sched__gang_ns *b = gs_hmap_get_str(&s->gang_ns, g->ns);
	const struct gs_list *l;

	*members = b && b->seeded ? b->held_members : 0;
	*gpus = b && b->seeded ? b->held_gpus : 0;
	if (!b)
		return;
	GS_LIST_FOREACH(l, &b->holding) {
		const struct gs_sched__gang *o = GS_CONTAINER_OF(l, struct gs_sched__gang, nslink);
		if (o == g)
			continue;
		*members += (long)o->n_reserved > o->claim_members ? (long)o->n_reserved : o->claim_members;
		*gpus += o->gpus_reserved > o->claim_gpus ? o->gpus_reserved : o->claim_gpus;
	}
}

/* "300 members and 600 GPUs". */
static void claim_words(char *buf, size_t size, long members, long gpus)
{
	snprintf(buf, size, "%ld member%s and %ld GPU%s", members, members == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s");
}

enum gs_wait_reason gs_sched__gang_budget(const struct gs_sched *s, const struct gs_sched__pod *p,
					  const struct gs_sched__node *n, char *msg, size_t size)
{
	struct gs_sched__gang *g = p->gang;
	long cap_m, cap_g, need_m, need_g, held_m, held_g;
	char need[96], held[96], bound[96];
	const char *flags;

	if (g->admitted || g->resting)
		return GS_WAIT_NONE;
	flags = budget_caps(s, g->ns, &cap_m, &cap_g);
	if (!cap_m && !cap_g)
		return GS_WAIT_NONE;
	need_m = g->size;
	need_g = need_gpus(g, p);
	claim_words(need, sizeof(need), need_m, need_g);
	gs_gang_bound_words(bound, sizeof(bound), cap_m, cap_g);
	if ((cap_m && need_m > cap_m) || (cap_g && need_g > cap_g)) {
		snprintf(msg, size,
			 "fits node \"%s\", but its all-or-nothing gang (%s %s) needs %s reserved together, more "
			 "than the gangs of namespace \"%s\" may hold at once (%s: %s): it can never gather",
			 n->name, owner_kind(g), g->name, need, g->ns, bound, flags);
		return GS_WAIT_GANG_LIMIT;
	}
	budget_held(s, g, &held_m, &held_g);
	if ((cap_m && held_m + need_m > cap_m) || (cap_g && held_g + need_g > cap_g)) {
		claim_words(held, sizeof(held), held_m, held_g);
		snprintf(msg, size,
			 "fits node \"%s\", but its all-or-nothing gang (%s %s) needs %s reserved together and the "
			 "other gangs of namespace \"%s\" gathering hold %s of the %s it may hold at once (%s): "
			 "it gathers when they release theirs (bound, timed out or deleted)",
			 n->name, owner_kind(g), g->name, need, g->ns, held, bound, flags);
		return GS_WAIT_GANG_LIMIT;
	}
	return GS_WAIT_NONE;
}

void gs_sched__gang_capped(struct gs_sched *s, struct gs_sched__pod *p)
{
	struct gs_sched__gang_ns *b = budget_ns(s, p->gang->ns, 1);

	if (!gs_list_linked(&p->gang->caplink))
		gs_list_insert_tail(&b->capped, &p->gang->caplink);
}

/* g takes its first reservation: it holds its claim from now on. */
static void budget_admit(struct gs_sched *s, struct gs_sched__gang *g, const struct gs_sched__pod *p)
{
	struct gs_sched__gang_ns *b = budget_ns(s, g->ns, 1);

	g->admitted = 1;
	g->claim_members = g->size;
	g->claim_gpus = need_gpus(g, p);
	gs_list_insert_tail(&b->holding, &g->nslink);
	if (gs_list_linked(&g->caplink))
		gs_list_remove(&g->caplink);
}

/* The capped gangs of b may fit now: the nodes their members wait on are placed again at the next pull. */
static void budget_wake(struct gs_sched *s, struct gs_sched__gang_ns *b)
{
	while (!gs_list_empty(&b->capped)) {
		struct gs_sched__gang *c = GS_CONTAINER_OF(gs_list_first(&b->capped), struct gs_sched__gang, caplink);
		const struct gs_list *l;
		gs_list_remove(&c->caplink);
		GS_LIST_FOREACH(l, &c->members) {
			const struct gs_sched__pod *m = GS_CONTAINER_OF(l, struct gs_sched__pod, glink);
			if (m->state == GS_POD_WAITING && m->reason == GS_WAIT_GANG_LIMIT && m->wait_node)
				gs_sched__node_mark_dirty(s, m->wait_node);
		}
	}
}

void gs_sched__gang_settle(struct gs_sched *s, struct gs_sched__gang *g)
{
	struct gs_sched__gang_ns *b;

	if (!g || !g->admitted || g->n_reserved > 0)
		return;
	b = budget_ns(s, g->ns, 0);
	GS_ASSERT(b && gs_list_linked(&g->nslink));
	g->admitted = 0;
	gs_list_remove(&g->nslink);
	budget_wake(s, b);
	budget_ns_gc(s, b);
}

/* g goes (its last member left): off its namespace's lists. */
static void budget_forget(struct gs_sched *s, struct gs_sched__gang *g)
{
	struct gs_sched__gang_ns *b = budget_ns(s, g->ns, 0);

	if (gs_list_linked(&g->caplink))
		gs_list_remove(&g->caplink);
	if (g->admitted)
		gs_sched__gang_settle(s, g); /* n_reserved is 0: its last member released its reservation */
	budget_ns_gc(s, b);
}

int gs_sched__gang_budget_seed(struct gs_sched *s, const char *ns, long cap_members, long cap_gpus, long held_members,
			       long held_gpus)
{
	struct gs_sched__gang_ns *b;

	if (cap_members < 0 || cap_gpus < 0 || held_members < 0 || held_gpus < 0)
		return -EINVAL;
	b = budget_ns(s, ns, 1);
	b->seeded = 1;
	b->cap_members = cap_members;
	b->cap_gpus = cap_gpus;
	b->held_members = held_members;
	b->held_gpus = held_gpus;
	return 0;
}

static void budgets_free(struct gs_sched *s)
{
	struct gs_hmap_iter it = {0};

	while (gs_hmap_next(&s->gang_ns, &it))
		free(it.val);
	gs_hmap_free(&s->gang_ns);
}

/* ---- membership ---------------------------------------------------------------------------------- */

static struct gs_sched__gang *gang_new(struct gs_sched *s, const struct gs_sched__pod *p, int64_t now_ms)
{
	size_t ul = strlen(p->owner) + 1;
	struct gs_sched__gang *g = gs_xcalloc(1, sizeof(*g) + ul);

	memcpy(g->uid, p->owner, ul);
	gs_list_init(&g->members);
	gs_list_init(&g->rlink);
	gs_list_init(&g->nslink);
	gs_list_init(&g->caplink);
	gs_list_insert_tail(&s->gangs_gathering, &g->glink);
	s->n_gathering++;
	g->ns = gs_xstrdup(p->ns);
	g->kind = gs_xstrdup(p->owner_kind ? p->owner_kind : "");
	g->name = gs_xstrdup(p->owner_name ? p->owner_name : "");
	g->started_ms = now_ms;
	g->first_seen_ms = p->created_ms;
	gs_sched__hmap_put(&s->gangs, g->uid, g);
	gs_log_debug("gang %s/%s %s: gathering", g->ns, g->kind, g->name);
	return g;
}

static void gang_free(struct gs_sched__gang *g)
{
	free(g->from);
	free(g->ns);
	free(g->kind);
	free(g->name);
	free(g);
}

void gs_sched__gang_leave(struct gs_sched *s, struct gs_sched__pod *p)
{
	struct gs_sched__gang *g = p->gang;

	if (!g)
		return;
	gs_sched__gang_release(s, p);
	gs_list_remove(&p->glink);
	p->gang = NULL;
	p->committed = 0;
	GS_ASSERT(g->n_members > 0);
	if (--g->n_members)
		return;
	gs_log_debug("gang %s/%s %s: no member left", g->ns, g->kind, g->name);
	if (!g->ran) {
		gs_list_remove(&g->glink);
		s->n_gathering--;
	}
	if (gs_list_linked(&g->rlink))
		gs_list_remove(&g->rlink);
	budget_forget(s, g);
	gs_hmap_del_str(&s->gangs, g->uid, NULL);
	gang_free(g);
}

/* g's settings come from p's: its GPUPlacementMap's spec by reference, else its annotations. */
static void gang_from(struct gs_sched__gang *g, const struct gs_sched__pod *p)
{
	const char *label = p->ref ? p->ref->gpm->label : NULL;

	if (label == g->from || (label && g->from && strcmp(label, g->from) == 0))
		return;
	free(g->from);
	g->from = label ? gs_xstrdup(label) : NULL;
}

void gs_sched__gang_set(struct gs_sched *s, struct gs_sched__pod *p, const struct gs_gang_opts *opts, long map_entries,
			int64_t now_ms)
{
	struct gs_sched__gang *g;

	if (!opts || !opts->all_or_nothing || !p->owner) {
		gs_sched__gang_leave(s, p);
		return;
	}
	g = gs_hmap_get_str(&s->gangs, p->owner);
	if (p->gang != g || !g) {
		gs_sched__gang_leave(s, p);
		if (!g)
			g = gang_new(s, p, now_ms);
		gs_list_insert_tail(&g->members, &p->glink);
		g->n_members++;
		p->gang = g;
		if (p->created_ms && (!g->first_seen_ms || p->created_ms < g->first_seen_ms))
			g->first_seen_ms = p->created_ms;
	}
	if (opts->size > 0)
		g->size = opts->size;
	else if (map_entries > 0)
		g->size = map_entries;
	else if (g->size <= 0)
		g->size = 1; /* no map yet: the member waits for its own reason anyway */
	if (g->asked_ms != opts->timeout_ms) {
		g->asked_ms = opts->timeout_ms;
		g->timeout_ms =
			opts->timeout_ms < s->cfg.max_gang_timeout_ms ? opts->timeout_ms : s->cfg.max_gang_timeout_ms;
		g->deadline_ms = g->started_ms + g->timeout_ms;
	}
	gang_from(g, p);
}

/* ---- reservations -------------------------------------------------------------------------------- */

int gs_sched__gang_holds_back(const struct gs_sched__pod *p)
{
	return p->gang && !p->gang->ran;
}

void gs_sched__gang_reserve(struct gs_sched *s, struct gs_sched__pod *p, struct gs_sched__node *n)
{
	struct gs_sched__gang *g = p->gang;

	GS_ASSERT(g && !p->reserved);
	if (!g->admitted)
		budget_admit(s, g, p);
	p->reserved = 1; /* first: the agent's conflict check, which the use may run, skips reservations */
	p->reserved_gpus = p->entry->n_devices;
	gs_sched__pod_reserve(s, p, n);
	n->n_reserved++;
	g->n_reserved++;
	g->gpus_reserved += p->reserved_gpus;
	if (!g->resting && (long)g->n_reserved >= g->size && !gs_list_linked(&g->rlink)) {
		gs_list_insert_tail(&s->gangs_ready, &g->rlink);
		gs_log_debug("gang %s/%s %s: %zu of %ld members fit, ready to commit", g->ns, g->kind, g->name,
			     g->n_reserved, g->size);
	}
}

struct gs_sched__node *gs_sched__gang_unreserve(struct gs_sched *s, struct gs_sched__pod *p, int quiet)
{
	struct gs_sched__node *n;

	if (!p->reserved)
		return NULL;
	GS_ASSERT(p->gang && p->gang->n_reserved > 0);
	p->reserved = 0;
	p->gang->n_reserved--;
	p->gang->gpus_reserved -= p->reserved_gpus;
	p->reserved_gpus = 0;
	n = gs_sched__use_take(s, p->uid);
	GS_ASSERT(n && n->n_reserved > 0); /* a reservation is a use (sched_int.h) */
	n->n_reserved--;
	n->pinned++;
	if (!quiet) {
		gs_sched__node_mark_dirty(s, n);
		gs_sched__gang_settle(s, p->gang);
	}
	return n;
}

void gs_sched__gang_release(struct gs_sched *s, struct gs_sched__pod *p)
{
	struct gs_sched__node *n = gs_sched__gang_unreserve(s, p, 0);

	gs_sched__gang_ph_sync(s, p);
	if (!n)
		return;
	n->pinned--;
	gs_sched__node_gc(s, n);
}

void gs_sched__gang_ran(struct gs_sched *s, struct gs_sched__gang *g)
{
	if (g->ran)
		return;
	g->ran = 1;
	gs_list_remove(&g->glink);
	s->n_gathering--;
	if (gs_list_linked(&g->rlink))
		gs_list_remove(&g->rlink);
	gs_log_info("gang %s/%s %s: a member is bound already: its members are placed alone", g->ns, g->kind, g->name);
}

void gs_sched__gang_hand_out(struct gs_sched *s, struct gs_sched__pod *p)
{
	struct gs_sched__use *u = gs_hmap_get_str(&s->uses, p->uid);

	GS_ASSERT(p->reserved && u && u->node->n_reserved > 0);
	p->reserved = 0;
	p->gang->n_reserved--;
	p->gang->gpus_reserved -= p->reserved_gpus;
	p->reserved_gpus = 0;
	u->node->n_reserved--;
	gs_sched__gang_settle(s, p->gang); /* the last one handed out: its claim becomes Bindings */
	p->committed = 1;
	ph_free(s->ph_handed);
	if (p->ph)
		ph_withdraw(p->ph); /* never made: nothing to delete (asked stays 0) */
	s->ph_handed = p->ph;       /* deleted by the controller just before the Binding */
	if (p->ph)
		s->n_ph--;
	p->ph = NULL;
}

const char *gs_sched__gang_handed_placeholder(const struct gs_sched *s, const char **uid)
{
	if (!s->ph_handed || !s->ph_handed->asked) {
		*uid = NULL;
		return NULL; /* none made: none to delete */
	}
	*uid = s->ph_handed->uid;
	return s->ph_handed->name;
}

static const char *owner_kind(const struct gs_sched__gang *g)
{
	return *g->kind ? g->kind : "owner";
}

/* How messages name g's timeout: "gpu-scheduler.io/gang-timeout", or by reference "GPUPlacementMap
 * ns/name spec.gangTimeout". */
/* Where g's timeout comes from, for messages: "gpu-scheduler.io/gang-timeout" or "OBJECT spec.gangTimeout",
 * and ", cut to --max-gang-timeout" when the scheduler's cap made it shorter. */
static const char *timeout_name(const struct gs_sched__gang *g, char *buf, size_t size)
{
	const char *cut = g->asked_ms > g->timeout_ms ? " cut to the scheduler's --max-gang-timeout" : "";
	if (!g->from)
		snprintf(buf, size, "%s%s", GS_GANG_TIMEOUT, cut);
	else
		snprintf(buf, size, "%s %s%s", g->from, GS_GANG_SPEC_TIMEOUT, cut);
	return buf;
}

enum gs_wait_reason gs_sched__gang_wait(const struct gs_sched *s, const struct gs_sched__pod *p,
					const struct gs_sched__node *n, char *msg, size_t size)
{
	const struct gs_sched__gang *g = p->gang;
	char tn[400];

	if (g->resting) {
		snprintf(msg, size,
			 "fits node \"%s\", but its all-or-nothing gang (%s %s) did not complete within its "
			 "%s and holds nothing until it gathers again (%u %s so far)",
			 n->name, owner_kind(g), g->name, timeout_name(g, tn, sizeof(tn)), g->timeouts,
			 g->timeouts == 1 ? "timeout" : "timeouts");
		return GS_WAIT_GANG_TIMED_OUT;
	}
	if (gs_sched__gang_budget(s, p, n, msg, size) != GS_WAIT_NONE)
		return GS_WAIT_GANG_LIMIT;
	snprintf(msg, size,
		 "fits node \"%s\" and holds it (reserved) until all %ld members of its all-or-nothing gang (%s %s) "
		 "fit; `gpu-scheduler explain` on a member shows who blocks",
		 n->name, g->size, owner_kind(g), g->name);
	return GS_WAIT_GANG;
}

/* ---- placeholders -------------------------------------------------------------------------------- */

/* What a placeholder for member p asks: its requests but the map's GPUs, its tolerations, its node. */
/* The extended resources a placeholder for a member of spec sp asks, into out: the member's but
 * nvidia.com/gpu (the map's GPUs are the ledger's), at most GS_PLACEHOLDER_EXT_MAX. Their count. */
static uint32_t ph_ext(const struct gs_sched *s, const struct gs_sched__spec *sp, struct gs_sched__ext *out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < sp->req.n_ext && n < GS_PLACEHOLDER_EXT_MAX; i++)
		if (!s->res_gpu[sp->req.ext[i].id])
			out[n++] = sp->req.ext[i];
	return n;
}

static void ph_fill(const struct gs_sched *s, const struct gs_sched__pod *p, struct gs_placeholder *out)
{
	const struct gs_sched__spec *sp = p->spec;
	struct gs_sched__ext ext[GS_PLACEHOLDER_EXT_MAX];

	out->node = p->ph->node;
	out->member_uid = p->uid;
	out->member_name = p->name;
	out->priority = p->priority;
	if (!sp)
		return;
	out->cpu_milli = sp->req.cpu;
	out->memory = sp->req.mem;
	out->ephemeral = sp->req.eph;
	out->n_ext = ph_ext(s, sp, ext);
	for (size_t i = 0; i < out->n_ext; i++) {
		out->ext_name[i] = s->res_names[ext[i].id];
		out->ext_value[i] = ext[i].v;
	}
	out->tolerations = sp->cons.tolerations;
	out->n_tolerations = sp->cons.n_tolerations;
}

static void ph_free(struct gs_sched__ph *ph)
{
	if (!ph)
		return;
	free(ph->node);
	free(ph->uid);
	free(ph);
}

/* Copies the n strings of str (NULL skipped) into at, one after the other, setting *dst[i] to each. */
static void put_strs(char *at, const char *const *str, const char **const *dst, int n)
{
	for (int i = 0; i < n; i++) {
		size_t l;
		if (!str[i])
			continue;
		l = strlen(str[i]) + 1;
		*dst[i] = memcpy(at, str[i], l);
		at += l;
	}
}

/* The bytes the n strings of str take with their NULs (NULL: none). */
static size_t strs_size(const char *const *str, int n)
{
	size_t total = 0;

	for (int i = 0; i < n; i++)
		total += str[i] ? strlen(str[i]) + 1 : 0;
	return total;
}

/* Queues a create (member_uid) or a delete (uid, when known, its precondition: never another pod of the
 * same name). */
static struct gs_sched__ph_action *ph_action(struct gs_sched *s, int create, const char *member_uid, const char *ns,
					     const char *name, const char *uid)
{
	const char *str[] = {member_uid, ns, name, uid};
	struct gs_sched__ph_action *a = gs_xcalloc(1, sizeof(*a) + strs_size(str, 4));
	const char **dst[] = {&a->member_uid, &a->ns, &a->name, &a->uid};

	a->create = create;
	put_strs((char *)(a + 1), str, dst, 4);
	gs_list_insert_tail(&s->ph_actions, &a->link);
	return a;
}

/* ph's create, still queued, is withdrawn: 1; 0 when it was handed out already. */
static int ph_withdraw(struct gs_sched__ph *ph)
{
	if (!ph->pending)
		return 0;
	gs_list_remove(&ph->pending->link);
	free(ph->pending);
	ph->pending = NULL;
	return 1;
}

/*
 * A placeholder made and proven ours whose member gives it up stays on its node until the kubelet
 * sees its deletion: until then it counts as the pod it is (what it asks: the member's requests but
 * the map's GPUs), so that nothing is bound into room the kubelet still gives it (a pod admitted
 * against a node the placeholder still fills would fail there, OutOfcpu). Its deletion seen releases it
 * (gs_sched__gang_placeholder_gone).
 */
static void ph_leaving(struct gs_sched *s, const struct gs_sched__pod *p)
{
	struct gs_sched__ph_ours *k = gs_hmap_get_str(&s->ph_ours, p->ph->uid);
	struct gs_sched__ext ext[GS_PLACEHOLDER_EXT_MAX];
	struct gs_sched__req req;
	char key[512];

	if (!k || k->leaving || !p->spec)
		return;
	req = p->spec->req; /* what the placeholder asks (ph_fill) */
	req.n_ext = ph_ext(s, p->spec, ext);
	req.ext = ext;
	snprintf(key, sizeof(key), "%s/%s", p->ns, p->ph->name);
	gs_sched__use_add(s, k->uid, gs_sched__node_slot(s, p->ph->node), &req, NULL, 0, NULL, NULL, 0, key)
		->node->n_leaving++;
	k->leaving = 1;
}

/* p stops wanting its placeholder: asked to be deleted. */
static void ph_drop(struct gs_sched *s, struct gs_sched__pod *p)
{
	if (!p->ph)
		return;
	if (!ph_withdraw(p->ph)) { /* made, or being made: it must go */
		ph_action(s, 0, NULL, p->ns, p->ph->name, p->ph->uid);
		if (p->ph->uid)
			ph_leaving(s, p);
	}
	ph_free(p->ph);
	p->ph = NULL;
	s->n_ph--;
}

void gs_sched__gang_ph_sync(struct gs_sched *s, struct gs_sched__pod *p)
{
	const struct gs_sched__use *u = p->reserved ? gs_hmap_get_str(&s->uses, p->uid) : NULL;
	char name[256];

	if (!u || !s->cfg.gang_placeholders) {
		ph_drop(s, p);
		return;
	}
	if (p->ph && strcmp(p->ph->node, u->node->name) == 0)
		return;
	ph_drop(s, p);
	/* Unique among ours (the counter starts at a random value): a placeholder being deleted never
	 * holds the name of the next. A DNS subdomain: the member's name is one. */
	snprintf(name, sizeof(name), "%.200s-hold-%08" PRIx64, p->name, s->ph_seq++ & 0xffffffffu);
	size_t nl = strlen(name) + 1;
	p->ph = gs_xmalloc(sizeof(*p->ph) + nl);
	memcpy(p->ph->name, name, nl);
	p->ph->node = gs_xstrdup(u->node->name);
	p->ph->asked = 0;
	p->ph->uid = NULL;
	s->n_ph++;
	p->ph->pending = ph_action(s, 1, p->uid, p->ns, name, NULL);
}

/*
 * o claims to be a placeholder of a member m, and has the form of ours: our scheduler's name, and its
 * controller the Pod m (ownerReferences are namespace-local: m is in o's namespace). A pod of another
 * scheduler (another instance's placeholder) is never ours to touch.
 */
static int ph_our_form(const struct gs_sched *s, const struct gs_pod_obj *o)
{
	return o->scheduler_name && strcmp(o->scheduler_name, s->cfg.scheduler_name) == 0 && o->owner_uid &&
	       o->owner_kind && strcmp(o->owner_kind, "Pod") == 0 && strcmp(o->owner_uid, o->placeholder_for) == 0;
}

int gs_sched__gang_placeholder_seen(struct gs_sched *s, const struct gs_pod_obj *o)
{
	const struct gs_sched__pod *m;

	if (gs_hmap_get_str(&s->ph_ours, o->uid))
		return 1; /* ours, proven by its create's reply */
	if (!o->placeholder_for)
		return 0;
	/* A claim is no proof: from here on o counts as the ordinary pod it is (the caller's). */
	m = gs_hmap_get_str(&s->pods, o->placeholder_for);
	if (m && m->ph && !m->ph->uid && strcmp(m->ph->name, o->name) == 0 && strcmp(m->ns, o->ns) == 0)
		return 0; /* most likely the one being made: its reply proves it (counted until then) */
	if (o->deleting || !ph_our_form(s, o) || gs_hmap_get_str(&s->ph_orphans, o->uid))
		return 0;
	/* Ours by its form but wanted by nobody: left by a restart, another leader, a lost delete, a member
	 * gone. Deleted (that uid only), once; it counts as a use until its deletion is seen. */
	gs_log_info("placeholder %s/%s holds for nobody now (member %s): deleting it", o->ns, o->name,
		    o->placeholder_for);
	ph_action(s, 0, NULL, o->ns, o->name, o->uid);
	char *key = gs_xstrdup(o->uid);
	gs_sched__hmap_put(&s->ph_orphans, key, key);
	return 0;
}

void gs_sched__gang_placeholder_made(struct gs_sched *s, const char *member_uid, const char *ns, const char *name,
				     const char *uid)
{
	struct gs_sched__pod *m = gs_hmap_get_str(&s->pods, member_uid);
	const char *str[] = {member_uid, ns, name};
	struct gs_sched__ph_ours *k;

	if (gs_hmap_get_str(&s->ph_ours, uid))
		return; /* told twice */
	k = gs_xcalloc(1, sizeof(*k) + strlen(uid) + 1 + strs_size(str, 3));
	const char **dst[] = {&k->member_uid, &k->ns, &k->name};
	strcpy(k->uid, uid);
	put_strs(k->uid + strlen(uid) + 1, str, dst, 3);
	gs_sched__hmap_put(&s->ph_ours, k->uid, k);
	if (m && m->ph && !m->ph->uid && strcmp(m->ph->name, name) == 0 && strcmp(m->ns, ns) == 0)
		m->ph->uid = gs_xstrdup(uid);
	/* Else its member gave it up meanwhile: its delete (by name) is queued already. */
}

int gs_sched__gang_placeholder_gone(struct gs_sched *s, const char *uid)
{
	char *key = gs_hmap_get_str(&s->ph_orphans, uid); /* the key is its own value: ours to free */
	struct gs_sched__ph_ours *k = gs_hmap_get_str(&s->ph_ours, uid);
	struct gs_sched__pod *m;

	if (key) {
		gs_hmap_del_str(&s->ph_orphans, uid, NULL);
		free(key);
	}
	if (!k)
		return 0; /* an ordinary pod: its use goes as any pod's */
	gs_hmap_del_str(&s->ph_ours, uid, NULL);
	if (k->leaving) {
		const struct gs_sched__use *u = gs_hmap_get_str(&s->uses, uid);
		GS_ASSERT(u && u->node->n_leaving > 0); /* a use of its uid exactly while it leaves (sched_int.h) */
		u->node->n_leaving--;
		gs_sched__use_remove(s, uid); /* its room is free now: the pods waiting for it are placed again */
	}
	m = gs_hmap_get_str(&s->pods, k->member_uid);
	if (m && m->ph && m->ph->uid && strcmp(m->ph->uid, uid) == 0) {
		/* Deleted while its member still holds its reservation (by hand, a preemption, an eviction):
		 * made again, under a new name (docs/sched.md, "Placeholders"). */
		gs_log_info("placeholder %s/%s of %s/%s deleted: making another", k->ns, k->name, m->ns, m->name);
		ph_free(m->ph);
		m->ph = NULL;
		s->n_ph--;
		gs_sched__gang_ph_sync(s, m);
	}
	free(k);
	return 1;
}

int gs_sched__gang_next_placeholder(struct gs_sched *s, struct gs_placeholder *out)
{
	free(s->ph_pulled);
	s->ph_pulled = NULL;
	while (!gs_list_empty(&s->ph_actions)) {
		struct gs_sched__ph_action *a =
			GS_CONTAINER_OF(gs_list_first(&s->ph_actions), struct gs_sched__ph_action, link);
		struct gs_sched__pod *p = a->create ? gs_hmap_get_str(&s->pods, a->member_uid) : NULL;
		gs_list_remove(&a->link);
		s->ph_pulled = a;
		*out = (struct gs_placeholder){.create = a->create, .ns = a->ns, .name = a->name, .uid = a->uid};
		if (!a->create)
			return 1;
		if (!p || !p->ph || strcmp(p->ph->name, a->name) != 0) {
			free(a); /* wanted no longer: its delete (if any) is queued behind it */
			s->ph_pulled = NULL;
			continue;
		}
		p->ph->asked = 1;
		p->ph->pending = NULL;
		ph_fill(s, p, out);
		return 1;
	}
	return 0;
}

/* ---- timers -------------------------------------------------------------------------------------- */

static int64_t timer_of(const struct gs_sched__gang *g)
{
	return g->resting ? g->retry_ms : g->deadline_ms;
}

int64_t gs_sched__gang_deadline(const struct gs_sched *s)
{
	int64_t best = -1;
	const struct gs_list *l;

	GS_LIST_FOREACH(l, &s->gangs_gathering) {
		const struct gs_sched__gang *g = GS_CONTAINER_OF(l, struct gs_sched__gang, glink);
		if (gs_list_linked(&g->rlink))
			continue; /* committed at the next pull */
		if (best < 0 || timer_of(g) < best)
			best = timer_of(g);
	}
	return best;
}

struct gs_sched__gang *gs_sched__gang_due(const struct gs_sched *s, int64_t now_ms)
{
	const struct gs_list *l;

	GS_LIST_FOREACH(l, &s->gangs_gathering) {
		struct gs_sched__gang *g = GS_CONTAINER_OF(l, struct gs_sched__gang, glink);
		if (!gs_list_linked(&g->rlink) && timer_of(g) <= now_ms)
			return g;
	}
	return NULL;
}

/* Queues an event; pod NULL: on the owner. */
static struct gs_sched__gang_event *event_add(struct gs_sched *s, const struct gs_sched__gang *g,
					      const struct gs_sched__pod *pod, const char *reason, int warning,
					      const char *message)
{
	const char *str[] = {
		g->ns,  g->kind, g->name, gs_sched__owner_uid(g->uid), pod ? pod->uid : NULL, pod ? pod->name : NULL,
		message};
	size_t len[7], total = sizeof(struct gs_sched__gang_event);
	struct gs_sched__gang_event *e;
	char *at, **dst[7];

	for (int i = 0; i < 7; i++)
		total += (len[i] = str[i] ? strlen(str[i]) + 1 : 0);
	e = gs_xcalloc(1, total);
	e->reason = reason;
	e->warning = warning;
	dst[0] = &e->ns, dst[1] = &e->kind, dst[2] = &e->name, dst[3] = &e->owner_uid;
	dst[4] = &e->pod_uid, dst[5] = &e->pod_name, dst[6] = &e->message;
	at = (char *)(e + 1);
	for (int i = 0; i < 7; i++) {
		if (!str[i])
			continue;
		*dst[i] = memcpy(at, str[i], len[i]);
		at += len[i];
	}
	gs_list_insert_tail(&s->gang_events, &e->link);
	return e;
}

enum gs_wait_reason gs_sched__gang_blockers(const struct gs_sched *s, const struct gs_sched__gang *g, char *msg,
					    size_t size)
{
	enum gs_wait_reason first = GS_WAIT_NONE;
	const struct gs_list *l;
	size_t o = 0, shown = 0, more = 0, present = 0;

	msg[0] = '\0';
	GS_LIST_FOREACH(l, &g->members) {
		const struct gs_sched__pod *p = GS_CONTAINER_OF(l, struct gs_sched__pod, glink);
		if (p->state == GS_POD_FINISHED || p->state == GS_POD_GONE)
			continue;
		present++;
		if (p->state != GS_POD_WAITING || p->reason == GS_WAIT_GANG || p->reason == GS_WAIT_GANG_TIMED_OUT)
			continue;
		if (first == GS_WAIT_NONE)
			first = p->reason;
		if (shown == 3) {
			more++;
			continue;
		}
		if (o < size)
			o += (size_t)snprintf(msg + o, size - o, "%sindex %ld (%s) %s: %s", shown ? "; " : "", p->index,
					      p->name, gs_sched__wait_reason_name(p->reason), p->msg ? p->msg : "");
		shown++;
	}
	if (more && o < size)
		o += (size_t)snprintf(msg + o, size - o, "; and %zu more %s not fitting", more,
				      more == 1 ? "member" : "members");
	if ((long)present < g->size && o < size)
		o += (size_t)snprintf(msg + o, size - o, "%s%ld of %ld members not created yet", o ? "; " : "",
				      g->size - (long)present, g->size);
	(void)s;
	return first;
}

void gs_sched__gang_fire(struct gs_sched *s, struct gs_sched__gang *g, int64_t now_ms)
{
	char blockers[1536], msg[2560], left[32], tn[400];
	const struct gs_list *l;
	enum gs_wait_reason why;
	int64_t rest;

	if (g->resting) {
		g->resting = 0;
		g->started_ms = now_ms;
		g->deadline_ms = now_ms + g->timeout_ms;
		gs_log_info("gang %s/%s %s: gathers again (attempt %u)", g->ns, g->kind, g->name, g->timeouts + 1);
		return;
	}
	rest = (int64_t)gs_backoff_delay(REST_MIN_MS, REST_MAX_MS, g->timeouts + 1, &s->rng);
	g->timeouts++;
	s->gang_timeouts++;
	g->resting = 1;
	g->retry_ms = now_ms + rest;
	why = gs_sched__gang_blockers(s, g, blockers, sizeof(blockers));
	snprintf(left, sizeof(left), "%" PRId64 " s", (rest + 999) / 1000);
	snprintf(msg, sizeof(msg),
		 "all-or-nothing gang %s %s did not complete within %" PRId64 " s (%s): %zu of %ld members fit; "
		 "blocked by: %s; its reservations are released and it tries again in %s",
		 owner_kind(g), g->name, g->timeout_ms / 1000, timeout_name(g, tn, sizeof(tn)), g->n_reserved, g->size,
		 *blockers ? blockers : "nothing (the members fit only now)", left);
	gs_log_info("gang %s/%s %s: timed out: %s", g->ns, g->kind, g->name, msg);
	event_add(s, g, NULL, "GangTimedOut", 1, msg)->why = why;
	GS_LIST_FOREACH(l, &g->members) {
		const struct gs_sched__pod *p = GS_CONTAINER_OF(l, struct gs_sched__pod, glink);
		if (p->state == GS_POD_WAITING)
			event_add(s, g, p, "GangTimedOut", 1, msg);
	}
}

void gs_sched__gang_committed(struct gs_sched *s, struct gs_sched__gang *g, int64_t now_ms)
{
	char msg[512], after[48];

	GS_ASSERT(!g->ran);
	snprintf(after, sizeof(after), " (after %u %s)", g->timeouts, g->timeouts == 1 ? "timeout" : "timeouts");
	g->ran = 1;
	g->committing = 1;
	gs_list_remove(&g->glink);
	s->n_gathering--;
	s->gangs_bound++;
	snprintf(msg, sizeof(msg),
		 "all-or-nothing gang %s %s placed: %zu members bound together, each where its map entry says"
		 "%s; a member replaced later is placed alone",
		 owner_kind(g), g->name, g->n_reserved, g->timeouts ? after : "");
	gs_log_info("gang %s/%s %s: committing %zu members", g->ns, g->kind, g->name, g->n_reserved);
	event_add(s, g, NULL, "GangScheduled", 0, msg);
	(void)now_ms;
}

void gs_sched__gang_bind_failed(struct gs_sched *s, const struct gs_sched__pod *p, const char *what)
{
	char msg[512];

	snprintf(msg, sizeof(msg),
		 "the Binding of gang member %s (index %ld) %s; a binding cannot be undone, so the other members "
		 "stay bound and this one is retried alone",
		 p->name, p->index, what);
	event_add(s, p->gang, NULL, "GangBindingFailed", 1, msg);
}

int gs_sched__gang_next_event(struct gs_sched *s, struct gs_report *out)
{
	struct gs_sched__gang_event *e;

	free(s->gang_reported);
	s->gang_reported = NULL;
	if (gs_list_empty(&s->gang_events))
		return 0;
	e = GS_CONTAINER_OF(gs_list_first(&s->gang_events), struct gs_sched__gang_event, link);
	gs_list_remove(&e->link);
	s->gang_reported = e;
	*out = (struct gs_report){
		.kind = GS_REPORT_GANG,
		.uid = e->pod_uid,
		.ns = e->ns,
		.name = e->pod_name,
		.message = e->message,
		.index = -1,
		.event_reason = e->reason,
		.reason = e->why,
		.warning = e->warning,
		.owner_kind = e->kind,
		.owner_name = e->name,
		.owner_uid = e->owner_uid,
	};
	if (strcmp(e->reason, "GangScheduled") == 0) {
		char *key = gs_sched__owner_key(e->ns, e->owner_uid); /* the gang's key (sched_node.h) */
		struct gs_sched__gang *g = gs_hmap_get_str(&s->gangs, key);
		out->gang_created_ms = g ? g->first_seen_ms : 0;
		free(key);
	}
	return 1;
}

void gs_sched__gang_explain(const struct gs_sched *s, const struct gs_sched__pod *p, struct gs_explain_gang *out)
{
	const struct gs_sched__gang *g = p->gang;
	char msg[1536];

	memset(out, 0, sizeof(*out));
	if (!g)
		return;
	out->size = g->size;
	out->members = g->n_members;
	out->fitting = g->n_reserved;
	out->ran = g->ran;
	out->resting = g->resting;
	out->timeouts = g->timeouts;
	out->left_ms = g->ran ? -1 : timer_of(g) > s->now_ms ? timer_of(g) - s->now_ms : 0;
	out->kind = g->kind;
	out->name = g->name;
	out->admitted = g->admitted;
	budget_caps(s, g->ns, &out->cap_members, &out->cap_gpus);
	budget_held(s, g, &out->held_members, &out->held_gpus);
	out->need_members = g->admitted ? g->claim_members : g->size;
	out->need_gpus = g->admitted ? g->claim_gpus : p->entry ? need_gpus(p->gang, p) : 0;
	if (!g->ran) {
		gs_sched__gang_blockers(s, g, msg, sizeof(msg));
		if (*msg)
			out->blockers = gs_xstrdup(msg);
	}
}

void gs_sched__gang_limits_init(struct gs_sched *s)
{
	struct gs_gang_limit l;
	const char *at = s->cfg.gang_limits;
	int r;

	gs_hmap_init(&s->gang_limits, 0);
	/* As gs_gang_limits_lookup reads the text: a bad item is skipped, a namespace's first item counts. */
	while (at && (r = gs_gang_limits_next(&at, &l)) != 0) {
		if (r < 0 || gs_hmap_get(&s->gang_limits, l.ns, l.ns_len))
			continue;
		struct gs_gang_limit *v = gs_xmalloc(sizeof(*v));
		*v = l;
		if (gs_hmap_put(&s->gang_limits, v->ns, v->ns_len, v, NULL) < 0)
			gs_oom(0);
	}
}

void gs_sched__gangs_free(struct gs_sched *s)
{
	struct gs_hmap_iter it = {0};

	while (gs_hmap_next(&s->gang_limits, &it))
		free(it.val);
	gs_hmap_free(&s->gang_limits);
	memset(&it, 0, sizeof(it));

	while (gs_hmap_next(&s->gangs, &it))
		gang_free(it.val);
	gs_hmap_free(&s->gangs);
	budgets_free(s);
	while (!gs_list_empty(&s->gang_events)) {
		struct gs_sched__gang_event *e =
			GS_CONTAINER_OF(gs_list_first(&s->gang_events), struct gs_sched__gang_event, link);
		gs_list_remove(&e->link);
		free(e);
	}
	free(s->gang_reported);
	while (!gs_list_empty(&s->ph_actions)) {
		struct gs_sched__ph_action *a =
			GS_CONTAINER_OF(gs_list_first(&s->ph_actions), struct gs_sched__ph_action, link);
		gs_list_remove(&a->link);
		free(a);
	}
	free(s->ph_pulled);
	ph_free(s->ph_handed);
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&s->ph_ours, &it))
		free(it.val);
	gs_hmap_free(&s->ph_ours);
	it = (struct gs_hmap_iter){0};
	while (gs_hmap_next(&s->ph_orphans, &it))
		free((char *)it.key);
	gs_hmap_free(&s->ph_orphans);
}

void gs_sched__gang_pod_free(struct gs_sched__pod *p)
{
	ph_free(p->ph);
	p->ph = NULL;
}
