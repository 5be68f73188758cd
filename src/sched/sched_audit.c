/*
 * sched_audit.c: gs_sched_audit, the engine's invariants checked from scratch (see sched_audit.h).
 * It walks everything, so it is for tests and debugging: the golden transcripts run it after every
 * step.
 */
#include "sched/sched_audit.h"

#include <string.h>

#include "core/log.h"
#include "sched/sched_agent.h"
#include "sched/sched_use.h"

static size_t list_len(const struct gs_list *h)
{
	const struct gs_list *l;
	size_t n = 0;

	GS_LIST_FOREACH(l, h) {
		GS_ASSERT(l->next->prev == l);
		n++;
	}
	return n;
}

static void check_heap(const struct gs_sched__heap *h, enum gs_pod_state st, size_t count)
{
	GS_ASSERT(h->len == count);
	for (size_t i = 0; i < h->len; i++) {
		GS_ASSERT(h->v[i]->heap_pos == i);
		GS_ASSERT(h->v[i]->state == st);
		if (i)
			GS_ASSERT(!h->less(h->v[i], h->v[(i - 1) / 2]));
	}
}

/* The reasons that put a pod on a node slot's waiter list (the others are the pod's own). */
static int node_reason(enum gs_wait_reason r)
{
	switch (r) {
	case GS_WAIT_NO_MAP:
	case GS_WAIT_MAP_INVALID:
	case GS_WAIT_NO_INDEX:
	case GS_WAIT_NO_ENTRY:
	case GS_WAIT_NOT_MUTATED:
	case GS_WAIT_SCHEDULING_GATED:
	case GS_WAIT_GANG_INVALID:
	case GS_WAIT_GANG_TIMED_OUT:
	case GS_WAIT_MAP_MISSING:
		return 0;
	default:
		return 1;
	}
}

static void check_pods(const struct gs_sched *s)
{
	size_t by_state[GS_POD__COUNT] = {0}, waiting_by[GS_WAIT__COUNT] = {0}, n_ph = 0;
	struct gs_hmap_iter it = {0};

	while (gs_hmap_next(&s->pods, &it)) {
		const struct gs_sched__pod *p = it.val;
		GS_ASSERT(p->state < GS_POD__COUNT);
		by_state[p->state]++;
		if (p->state == GS_POD_WAITING) {
			GS_ASSERT(p->reason != GS_WAIT_NONE && p->msg);
			waiting_by[p->reason]++;
			/* A node reason waits on the slot of the map's name, whatever it resolves to. */
			GS_ASSERT(!node_reason(p->reason) == !p->wait_node);
			if (p->wait_node)
				GS_ASSERT(p->entry && strcmp(p->wait_node->name, p->entry->node) == 0);
		} else {
			GS_ASSERT(!p->wait_node);
		}
		if (p->state == GS_POD_BINDING)
			GS_ASSERT(gs_hmap_get_str(&s->uses, p->uid) != NULL); /* its reservation */
		/* GONE may keep it: the reservation outlives a refused binding until the watch speaks. */
		/* Placement never measures a pod against itself: only BINDING pods of ours and gang members
		 * waiting for their gang hold a reservation before the watch shows them bound. */
		if (p->reserved)
			GS_ASSERT(p->gang && p->state == GS_POD_WAITING && p->reason == GS_WAIT_GANG &&
				  gs_hmap_get_str(&s->uses, p->uid) != NULL);
		else if (p->state == GS_POD_WAITING || p->state == GS_POD_QUEUED || p->state == GS_POD_BACKOFF) {
			/* ... or its nomination (sched_preempt.h): while it waits for room on that node
			 * (a fit reason) or is queued for it */
			const struct gs_sched__use *u = gs_hmap_get_str(&s->uses, p->uid);
			GS_ASSERT(!u || (u->nominated && p->state != GS_POD_BACKOFF &&
					 (p->state == GS_POD_QUEUED || gs_sched__fit_reason(p->reason))));
		}
		if (p->state == GS_POD_WAITING && p->reason == GS_WAIT_GANG)
			GS_ASSERT(p->reserved);
		if (p->ph) { /* a placeholder follows its member's reservation */
			const struct gs_sched__use *u = gs_hmap_get_str(&s->uses, p->uid);
			GS_ASSERT(p->reserved && u && s->cfg.gang_placeholders &&
				  strcmp(u->node->name, p->ph->node) == 0);
			GS_ASSERT(!p->ph->uid || gs_hmap_get_str(&s->ph_ours, p->ph->uid)); /* proven ours */
			n_ph++;
		}
		/* Not BINDING: an update of the pod (or of its GPUPlacementMap) while its Binding is in flight
		 * changes its inputs, which count when the result arrives (sched.h, gs_sched_pod_upsert). */
		if (p->state == GS_POD_QUEUED)
			GS_ASSERT(p->entry && p->intrinsic == GS_WAIT_NONE);
	}
	GS_ASSERT(n_ph == s->n_ph);
	/* A placeholder of ours is neither a pod record nor a use (its member's reservation is) but while it
	 * leaves; every other pod, a claimed placeholder too, is counted as any pod is (sched_gang.h). */
	it = (struct gs_hmap_iter){0};
	while (gs_hmap_next(&s->ph_ours, &it)) {
		const struct gs_sched__ph_ours *k = it.val;
		GS_ASSERT(!gs_hmap_get_str(&s->pods, it.key));
		GS_ASSERT((gs_hmap_get_str(&s->uses, it.key) != NULL) == (k->leaving != 0));
	}
	GS_ASSERT(memcmp(by_state, s->by_state, sizeof(by_state)) == 0);
	GS_ASSERT(memcmp(waiting_by, s->waiting_by, sizeof(waiting_by)) == 0);
	check_heap(&s->bindq, GS_POD_QUEUED, by_state[GS_POD_QUEUED]);
	check_heap(&s->retry, GS_POD_BACKOFF, by_state[GS_POD_BACKOFF]);
}

/* One use of n on its own (up: the pod record of its uid, if any). */
static void check_use(const struct gs_sched__node *n, const struct gs_sched__use *u, const struct gs_sched__pod *up)
{
	GS_ASSERT(!u->ignored || (u->n_holds == 0 && u->ignored_why)); /* an ignored claim holds nothing */
	GS_ASSERT(!u->hidden && u->key);                               /* preemption's what-if put it back */
	if (u->nominated) /* a claim of a pod of ours, not a pod that runs */
		GS_ASSERT(!u->bound && up && (up->state == GS_POD_WAITING || up->state == GS_POD_QUEUED));
	GS_ASSERT(!u->req.n_ext || (u->key && gs_hmap_get_str(&n->keyed, u->key))); /* keyed by name */
	for (uint32_t i = 0; i < u->req.n_ext; i++)
		GS_ASSERT(u->req.ext[i].id < n->used.n_ext);
}

/* Every device of the agent's data once in the chain of its physical GPU (sched_int.h, ids and chain). */
static void check_agent_ids(const struct gs_sched__agent *a)
{
	struct gs_hmap_iter it = {0};
	size_t seen = 0;

	if (!a->data) {
		GS_ASSERT(gs_hmap_len(&a->ids) == 0);
		return;
	}
	while (gs_hmap_next(&a->ids, &it))
		for (size_t at = (uintptr_t)it.val; at; at = a->chain[at - 1]) {
			const char *id;
			size_t len;
			GS_ASSERT(at <= a->data->n_devs);
			gs_inuse_physical(a->data, a->data->devs[at - 1].id, strlen(a->data->devs[at - 1].id), &id,
					  &len);
			GS_ASSERT(len == it.klen && memcmp(id, it.key, it.klen) == 0);
			seen++;
		}
	GS_ASSERT(seen == a->data->n_devs);
}

/* A node's totals, ports and ledger against its uses, summed again. */
static void check_node(const struct gs_sched *s, const struct gs_sched__node *n, size_t *held, size_t *shared)
{
	struct gs_sched__req sum = {0};
	struct gs_hmap_iter it = {0};
	size_t uses = 0, ports = 0, holds = 0, nport = 0, reserved = 0, leaving = 0, nominated = 0;
	int64_t plugin = 0;

	GS_ASSERT(list_len(&n->waiters) == n->n_waiters);
	GS_ASSERT(n->n_reserved <= n->n_uses);
	const struct gs_list *l;
	GS_LIST_FOREACH(l, &n->waiters) {
		const struct gs_sched__pod *p = GS_CONTAINER_OF(l, struct gs_sched__pod, qlink);
		GS_ASSERT(p->state == GS_POD_WAITING && p->wait_node == n);
	}
	/* Its list: each in s->uses under its uid and on this node; with the sum of the lists' lengths being
	 * the table's size (gs_sched_audit), every use is on exactly its node's list. O(its uses). */
	GS_LIST_FOREACH(l, &n->uses) {
		const struct gs_sched__use *u = GS_CONTAINER_OF(l, struct gs_sched__use, nlink);
		GS_ASSERT(u->node == n && gs_hmap_get_str(&s->uses, u->uid) == u);
		uses++;
		const struct gs_sched__pod *up = gs_hmap_get_str(&s->pods, u->uid);
		reserved += up && up->reserved;
		const struct gs_sched__ph_ours *k = up ? NULL : gs_hmap_get_str(&s->ph_ours, u->uid);
		leaving += k && k->leaving;
		sum.cpu += u->req.cpu;
		sum.mem += u->req.mem;
		sum.eph += u->req.eph;
		ports += u->n_ports;
		holds += u->n_holds;
		if (!u->n_holds)
			plugin += gs_sched__plugin_request(s, &u->req);
		nominated += u->nominated;
		check_use(n, u, up);
	}
	GS_ASSERT(uses == n->n_uses && (int64_t)uses == n->used_pods && reserved == n->n_reserved);
	GS_ASSERT(n->hidden_devs == 0);
	GS_ASSERT(leaving == n->n_leaving);
	GS_ASSERT(nominated == n->n_nominated);
	GS_ASSERT(plugin == n->plugin_gpus);
	/* the agent's data (sched_int.h, struct gs_sched__agent) */
	GS_ASSERT(!n->agent.fresh || n->agent.data);
	GS_ASSERT(!n->agent.fresh == !gs_list_linked(&n->agent.link));
	check_agent_ids(&n->agent);
	GS_ASSERT(!n->agent.data || n->agent.text);
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&n->keyed, &it)) {
		const struct gs_sched__use *u = it.val;
		GS_ASSERT(u->node == n && u->req.n_ext && strcmp(u->key, it.key) == 0);
	}
	GS_ASSERT(sum.cpu == n->used.cpu && sum.mem == n->used.mem && sum.eph == n->used.eph);
	for (size_t i = 0; i < n->n_ports; i++) {
		GS_ASSERT(n->ports[i].count > 0 && n->ports[i].hidden == 0);
		nport += n->ports[i].count;
	}
	GS_ASSERT(nport == ports);
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&n->ledger, &it)) {
		const struct gs_sched__dev *d = it.val;
		size_t owners = 0, nd = 0;
		GS_LIST_FOREACH(l, &d->owners) {
			const struct gs_sched__bucket *b = GS_CONTAINER_OF(l, struct gs_sched__bucket, link);
			GS_ASSERT(b->n > 0 && b->n == list_len(&b->shared) + list_len(&b->solo));
			owners++;
			nd += b->n;
		}
		GS_ASSERT(owners == d->n_owners && nd == d->n && nd > 0 && d->n_hidden == 0);
		holds -= nd;
		(*held)++;
		*shared += owners > 1;
	}
	GS_ASSERT(holds == 0);
	GS_ASSERT(n->present || n->n_waiters || n->n_uses);
	GS_ASSERT(n->pinned == 0); /* only while a walk over waiters runs */
}

/* The alias label's value on a present node, as the index should hold it (NULL: none). */
static const char *alias_value(const struct gs_sched *s, const struct gs_sched__node *n)
{
	if (!s->cfg.alias_label || !n->present)
		return NULL;
	for (int i = 0; i < n->obj.n_labels; i++)
		if (strcmp(n->obj.labels[i].key, s->cfg.alias_label) == 0)
			return n->obj.labels[i].value && *n->obj.labels[i].value ? n->obj.labels[i].value : NULL;
	return NULL;
}

/* The alias index against the nodes: every present node with the label is in the entry of its value,
 * once, and nothing else is; no entry is empty. Returns the nodes the index holds. */
static size_t check_aliases(const struct gs_sched *s)
{
	struct gs_hmap_iter it = {0};
	size_t total = 0;

	if (!s->cfg.alias_label)
		GS_ASSERT(gs_hmap_len(&s->aliases) == 0);
	while (gs_hmap_next(&s->aliases, &it)) {
		const struct gs_sched__alias *a = it.val;
		GS_ASSERT(a->n > 0 && list_len(&a->nodes) == a->n);
		GS_ASSERT(gs_hmap_get_str(&s->aliases, a->value) == a);
		const struct gs_list *l;
		GS_LIST_FOREACH(l, &a->nodes) {
			const struct gs_sched__node *n = GS_CONTAINER_OF(l, struct gs_sched__node, alink);
			const char *v = alias_value(s, n);
			GS_ASSERT(n->alias == a && v && strcmp(v, a->value) == 0);
			GS_ASSERT(gs_hmap_get_str(&s->nodes, n->name) == n);
		}
		total += a->n;
	}
	return total;
}

/* Each gang's counts against its members, and the gathering and ready lists against the flags. */
static void check_gangs(const struct gs_sched *s)
{
	struct gs_hmap_iter it = {0};
	size_t gathering = 0, listed = 0, ready = 0, members = 0, in_pods = 0;
	const struct gs_list *l;

	while (gs_hmap_next(&s->gangs, &it)) {
		const struct gs_sched__gang *g = it.val;
		size_t n = 0, reserved = 0;
		long gpus = 0;
		GS_LIST_FOREACH(l, &g->members) {
			const struct gs_sched__pod *p = GS_CONTAINER_OF(l, struct gs_sched__pod, glink);
			GS_ASSERT(p->gang == g && gs_hmap_get_str(&s->pods, p->uid) == p);
			GS_ASSERT(p->reserved || !p->reserved_gpus);
			n++;
			reserved += p->reserved != 0;
			gpus += p->reserved_gpus;
		}
		GS_ASSERT(n > 0 && n == g->n_members && reserved == g->n_reserved);
		GS_ASSERT(gpus == g->gpus_reserved);
		/* the budget (sched_int.h): admitted exactly while on its namespace's holding list */
		GS_ASSERT(g->admitted == (gs_list_linked(&g->nslink) != 0));
		GS_ASSERT(!g->n_reserved || g->admitted);
		GS_ASSERT((g->ran == 0) == (gs_list_linked(&g->glink) != 0));
		GS_ASSERT(!g->committing || g->ran);
		GS_ASSERT(!gs_list_linked(&g->rlink) || !g->ran || g->committing);
		GS_ASSERT(!g->resting || !g->ran);
		gathering += !g->ran;
		ready += gs_list_linked(&g->rlink);
		members += n;
	}
	GS_LIST_FOREACH(l, &s->gangs_gathering)
		listed++;
	GS_ASSERT(listed == gathering && gathering == s->n_gathering);
	listed = 0;
	GS_LIST_FOREACH(l, &s->gangs_ready)
		listed++;
	GS_ASSERT(listed == ready);
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&s->pods, &it))
		in_pods += ((const struct gs_sched__pod *)it.val)->gang != NULL;
	GS_ASSERT(in_pods == members);
	/* Every namespace record exists for a reason, and its gangs are of its namespace. */
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&s->gang_ns, &it)) {
		const struct gs_sched__gang_ns *b = it.val;
		GS_ASSERT(b->seeded || !gs_list_empty(&b->holding) || !gs_list_empty(&b->capped));
		GS_LIST_FOREACH(l, &b->holding) {
			const struct gs_sched__gang *g = GS_CONTAINER_OF(l, struct gs_sched__gang, nslink);
			GS_ASSERT(g->admitted && strcmp(g->ns, b->ns) == 0);
		}
		GS_LIST_FOREACH(l, &b->capped) {
			const struct gs_sched__gang *g = GS_CONTAINER_OF(l, struct gs_sched__gang, caplink);
			GS_ASSERT(!g->admitted && strcmp(g->ns, b->ns) == 0);
		}
	}
}

/* One GPUPlacementMap slot (struct gs_sched__gpm): its pods, its place on the status lists, its map. */
static void check_gpm(const struct gs_sched *s, const struct gs_sched__gpm *g, size_t *cool_dirty)
{
	const struct gs_list *l;
	size_t n = 0;

	GS_ASSERT(g->present || g->n_pods > 0); /* else freed */
	GS_ASSERT(gs_hmap_get_str(&s->gpms, g->key) == g);
	GS_LIST_FOREACH(l, &g->pods) {
		const struct gs_sched__pref *r = GS_CONTAINER_OF(l, struct gs_sched__pref, link);
		GS_ASSERT(r->gpm == g && r->pod->ref == r && strcmp(r->pod->ns, g->ns) == 0);
		GS_ASSERT(gs_hmap_get_str(&s->pods, r->pod->uid) == r->pod);
		/* A pod naming an object the engine does not hold waits for it, or went past waiting. */
		if (r->pod->state == GS_POD_WAITING && r->pod->reason == GS_WAIT_MAP_MISSING)
			GS_ASSERT(!g->present);
		n++;
	}
	GS_ASSERT(n == g->n_pods);
	GS_ASSERT(g->on >= 0 && g->on <= 2 && (!g->on || g->present) && gs_list_linked(&g->slink) == (g->on != 0));
	GS_ASSERT(g->on != 1 || g->dirty);
	GS_ASSERT(g->present || !g->dirty);
	*cool_dirty += g->on == 2 && g->dirty;
	if (g->present && g->refused)
		GS_ASSERT(g->uid && !g->text && !g->map && !g->map_error && !g->cost);
	else if (g->present)
		GS_ASSERT(g->uid && g->text && g->cost && !g->map == (g->map_error || !g->n_pods) &&
			  (!g->map_error || !g->entries));
	else
		GS_ASSERT(!g->map && !g->map_error && !g->uid && !g->handed && !g->cost && !g->refused);
}

/* The GPUPlacementMap slots, and every reference of a pod against them (sched_gpm.c). */
static void check_gpms(const struct gs_sched *s)
{
	struct gs_hmap_iter it = {0};
	size_t cool_dirty = 0, refs = 0, linked = 0, bytes = 0, refused = 0, ns_bytes = 0, ns_refused = 0;
	const struct gs_list *l;

	while (gs_hmap_next(&s->gpms, &it)) {
		const struct gs_sched__gpm *g = it.val;
		const struct gs_sched__gpm_ns *n = gs_hmap_get_str(&s->gpm_ns, g->ns);
		check_gpm(s, g, &cool_dirty);
		refs += g->n_pods;
		bytes += g->cost;
		refused += g->refused != NULL;
		GS_ASSERT(n || (!g->cost && !g->refused)); /* a charged or refused slot's namespace is counted */
	}
	GS_ASSERT(cool_dirty == s->n_cool_dirty);
	/* The budgets: the totals are the sums of the slots' and the kept inline maps', every namespace
	 * within its budget; an inline map is kept while pods are charged for it, as many as its refs. */
	size_t charged = 0, refs_in = 0;
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&s->inline_maps, &it)) {
		const struct gs_sched__inline *in = it.val;
		GS_ASSERT(in->refs > 0 && in->cost > 0);
		bytes += in->cost;
		refs_in += in->refs;
	}
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&s->pods, &it)) {
		const struct gs_sched__pod *p = it.val;
		charged += p->map_charged;
		GS_ASSERT(!p->map_charged || (p->map && !p->ref));
		GS_ASSERT(!p->entry_copy || (!p->map && p->entry == p->entry_copy));
	}
	GS_ASSERT(charged == refs_in);
	GS_ASSERT(bytes == s->gpm_bytes && refused == s->gpm_refused && s->gpm_bytes <= s->cfg.gpm_bytes);
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&s->gpm_ns, &it)) {
		const struct gs_sched__gpm_ns *n = it.val;
		GS_ASSERT((n->bytes || n->refused) && n->bytes <= s->cfg.gpm_bytes_per_ns);
		ns_bytes += n->bytes;
		ns_refused += n->refused;
	}
	GS_ASSERT(ns_bytes == s->gpm_bytes && ns_refused == s->gpm_refused);
	GS_LIST_FOREACH(l, &s->gpm_ready)
		GS_ASSERT(GS_CONTAINER_OF(l, struct gs_sched__gpm, slink)->on == 1);
	GS_LIST_FOREACH(l, &s->gpm_cooling) {
		const struct gs_sched__gpm *g = GS_CONTAINER_OF(l, struct gs_sched__gpm, slink);
		GS_ASSERT(g->on == 2);
		if (l->next != &s->gpm_cooling) /* by due time */
			GS_ASSERT(g->due_ms <= GS_CONTAINER_OF(l->next, struct gs_sched__gpm, slink)->due_ms);
	}
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&s->pods, &it))
		linked += ((const struct gs_sched__pod *)it.val)->ref != NULL;
	GS_ASSERT(linked == refs);
}

void gs_sched__audit(const struct gs_sched *s)
{
	struct gs_hmap_iter it = {0};
	size_t held = 0, shared = 0, present = 0, uses = 0, aliased = 0, agent[3] = {0}, nominated = 0;

	check_pods(s);
	check_gangs(s);
	check_gpms(s);
	int64_t seen = INT64_MIN;
	const struct gs_list *al;
	GS_LIST_FOREACH(al, &s->agents) { /* oldest first: gs_sched__agent_expire stops at the first fresh one */
		const struct gs_sched__agent *a = GS_CONTAINER_OF(al, struct gs_sched__agent, link);
		GS_ASSERT(a->fresh && a->seen_ms >= seen);
		seen = a->seen_ms;
	}
	while (gs_hmap_next(&s->nodes, &it)) {
		const struct gs_sched__node *n = it.val;
		const char *v = alias_value(s, n);
		check_node(s, n, &held, &shared);
		present += n->present != 0;
		uses += n->n_uses;
		nominated += n->n_nominated;
		/* In the index exactly when the label says so (check_aliases checks which entry). */
		GS_ASSERT(!v == !n->alias);
		GS_ASSERT((n->alias == NULL) == gs_list_empty(&n->alink));
		aliased += n->alias != NULL;
		GS_ASSERT(n->present || !n->agent.text); /* cleared when the node leaves */
		agent[0] += n->agent.fresh;
		agent[1] += !n->agent.fresh && n->agent.data;
		agent[2] += !n->agent.data && n->agent.text;
	}
	GS_ASSERT(agent[0] == s->agent_nodes[0] && agent[1] == s->agent_nodes[1] && agent[2] == s->agent_nodes[2]);
	GS_ASSERT(check_aliases(s) == aliased);
	GS_ASSERT(held == s->devs_held && shared == s->devs_shared);
	GS_ASSERT(present == s->nodes_present && uses == gs_hmap_len(&s->uses));
	GS_ASSERT(nominated == s->n_nominated);
	/* The preemption queue holds pods of ours (sched_preempt.h). */
	const struct gs_list *l;
	GS_LIST_FOREACH(l, &s->preemptq) {
		const struct gs_sched__pod *p = GS_CONTAINER_OF(l, struct gs_sched__pod, plink);
		GS_ASSERT(gs_hmap_get_str(&s->pods, p->uid) == p);
	}
}
