/*
 * sched.c: the engine's top layer and the owner of sched.h: lifecycle, inputs (node and pod events),
 * counts; every other function of sched.h is a line here calling the layer below that does the work
 * (pulls: sched_place.h; explain and pending: sched_explain.h; invariants: sched_audit.h). The layers,
 * bottom up: sched_node, sched_ledger, sched_agent, sched_use, sched_gang, sched_gpm, sched_place, sched_explain and
 * sched_audit, sched.c; each calls only those below it (docs/architecture.md). docs/sched.md tells
 * the whole story.
 *
 * Every input costs O(1) plus, for a node whose schedulability changes, O(waiters of that node), and for a
 * GPUPlacementMap, O(the pods that name it) (sched_gpm.c): pods
 * are found by uid (and ns/name), nodes by name, and each node slot lists exactly the pods waiting for
 * it, so nothing ever scans all pods.
 */
#include "sched/sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/str.h"
#include "sched/checks.h"
#include "sched/map_cache.h"
#include "sched/sched_agent.h"
#include "sched/sched_audit.h"
#include "sched/sched_explain.h"
#include "sched/sched_gang.h"
#include "sched/sched_gpm.h"
#include "sched/sched_int.h"
#include "sched/sched_node.h"
#include "sched/sched_pdb.h"
#include "sched/sched_place.h"
#include "sched/sched_preempt.h"
#include "sched/sched_use.h"
#include "sched/sched_workload.h"

#define DEFAULT_SEED 0x6a09e667f3bcc908ull

const char *gs_wait_reason_name(enum gs_wait_reason r)
{
	return gs_sched__wait_reason_name(r);
}

const char *gs_pod_state_name(enum gs_pod_state st)
{
	static const char *const names[GS_POD__COUNT] = {
		"WAITING", "QUEUED", "BINDING", "BACKOFF", "BOUND", "GONE", "FINISHED",
	};
	return (unsigned)st < GS_POD__COUNT ? names[st] : "?";
}

const char *gs_explain_check_name(enum gs_explain_check_id id)
{
	static const char *const names[GS_EXPLAIN__COUNT] = {
		"pod",      "node-exists", "node-ready", "node-schedulable", "node-policy", "node-gpus",
		"affinity", "taints",      "host-ports", "resources",        "devices",
	};
	return (unsigned)id < GS_EXPLAIN__COUNT ? names[id] : "?";
}

const char *gs_wait_reason_retry(enum gs_wait_reason r)
{
	return gs_sched__wait_reason_retry(r);
}

int gs_sched_gang_budget_seed(struct gs_sched *s, const char *ns, long cap_members, long cap_gpus, long held_members,
			      long held_gpus)
{
	return gs_sched__gang_budget_seed(s, ns, cap_members, cap_gpus, held_members, held_gpus);
}

/* ---- lifecycle --------------------------------------------------------------------------------- */

void gs_sched_config_init(struct gs_sched_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->scheduler_name = "gpu-scheduler";
	cfg->annotation = "gpu-scheduling-map";
	cfg->check_env = 1;
	cfg->recreate_unmutated = 0;
	cfg->backoff_min_ms = 200;
	cfg->backoff_max_ms = 10000;
	cfg->map_cache_size = 256;
	cfg->alias_label = "gpu-scheduler.io/node";
	cfg->agent_stale_ms = GS_SCHED_AGENT_STALE_MS;
	cfg->max_gang_timeout_ms = GS_SCHED_MAX_GANG_TIMEOUT_MS;
	cfg->gang_members_per_ns = GS_SCHED_GANG_MEMBERS_PER_NS;
	cfg->gang_gpus_per_ns = GS_SCHED_GANG_GPUS_PER_NS;
	cfg->preemption = 1;
}

struct gs_sched *gs_sched_new(const struct gs_sched_config *cfg)
{
	struct gs_sched *s;

	if (!cfg->scheduler_name || !*cfg->scheduler_name)
		return NULL;
	s = gs_xcalloc(1, sizeof(*s));
	s->cfg = *cfg;
	s->cfg.scheduler_name = gs_xstrdup(cfg->scheduler_name);
	s->cfg.annotation = gs_xstrdup(cfg->annotation && *cfg->annotation ? cfg->annotation : "gpu-scheduling-map");
	s->cfg.alias_label = cfg->alias_label && *cfg->alias_label ? gs_xstrdup(cfg->alias_label) : NULL;
	s->cfg.ignored_resources = gs_sched__xstrdup_null(cfg->ignored_resources);
	s->cfg.ignored_resource_groups = gs_sched__xstrdup_null(cfg->ignored_resource_groups);
	s->cfg.gang_limits = gs_sched__xstrdup_null(cfg->gang_limits);
	s->cfg.gpu_resources = gs_xstrdup(cfg->gpu_resources ? cfg->gpu_resources : GS_SCHED_GPU_RESOURCES);
	if (s->cfg.gang_members_per_ns < 0)
		s->cfg.gang_members_per_ns = 0;
	if (s->cfg.gang_gpus_per_ns < 0)
		s->cfg.gang_gpus_per_ns = 0;
	if (s->cfg.backoff_min_ms <= 0)
		s->cfg.backoff_min_ms = 200;
	if (s->cfg.backoff_max_ms <= 0)
		s->cfg.backoff_max_ms = 10000;
	if (s->cfg.backoff_max_ms < s->cfg.backoff_min_ms)
		s->cfg.backoff_max_ms = s->cfg.backoff_min_ms;
	if (s->cfg.map_cache_size == 0)
		s->cfg.map_cache_size = 256;
	if (s->cfg.map_cache_bytes == 0)
		s->cfg.map_cache_bytes = GS_SCHED_MAP_CACHE_BYTES;
	if (s->cfg.gpm_bytes == 0)
		s->cfg.gpm_bytes = GS_SCHED_GPM_BYTES;
	if (s->cfg.gpm_bytes_per_ns == 0)
		s->cfg.gpm_bytes_per_ns = GS_SCHED_GPM_BYTES_PER_NS;
	if (s->cfg.agent_stale_ms <= 0)
		s->cfg.agent_stale_ms = GS_SCHED_AGENT_STALE_MS;
	if (s->cfg.max_gang_timeout_ms <= 0)
		s->cfg.max_gang_timeout_ms = GS_SCHED_MAX_GANG_TIMEOUT_MS;
	s->rng = cfg->seed ? cfg->seed : DEFAULT_SEED;
	gs_hmap_init(&s->pods, 0);
	gs_hmap_init(&s->pods_by_name, 0);
	gs_hmap_init(&s->nodes, 0);
	gs_hmap_init(&s->aliases, 0);
	gs_hmap_init(&s->uses, 0);
	gs_hmap_init(&s->res_ids, 0);
	s->bindq.less = gs_sched__bind_before;
	s->retry.less = gs_sched__due_before;
	gs_list_init(&s->reportq);
	gs_list_init(&s->preemptq);
	gs_list_init(&s->preempt_ready);
	gs_list_init(&s->dirty);
	gs_list_init(&s->agents);
	gs_list_init(&s->conflicts);
	gs_hmap_init(&s->gangs, 0);
	gs_hmap_init(&s->gang_ns, 0);
	gs_sched__gang_limits_init(s);
	gs_list_init(&s->gangs_gathering);
	gs_list_init(&s->gangs_ready);
	gs_list_init(&s->gang_events);
	gs_list_init(&s->ph_actions);
	gs_hmap_init(&s->ph_orphans, 0);
	gs_hmap_init(&s->ph_ours, 0);
	gs_hmap_init(&s->gpms, 0);
	gs_hmap_init(&s->pdbs, 0);
	gs_hmap_init(&s->gpm_ns, 0);
	gs_hmap_init(&s->inline_maps, 0);
	gs_list_init(&s->gpm_ready);
	gs_list_init(&s->gpm_cooling);
	s->ph_seq = s->rng >> 32;
	s->maps = gs_map_cache_new(s->cfg.map_cache_size, s->cfg.map_cache_bytes);
	return s;
}

static void pod_free(struct gs_sched__pod *p)
{
	GS_ASSERT(!p->map && !p->entry_copy); /* gs_sched__inline_drop first */
	gs_sched__spec_free(p->spec);
	free(p->owner);
	free(p->owner_kind);
	free(p->owner_name);
	gs_sched__gang_pod_free(p);
	free(p->noticed);
	free(p->status_nominated);
	free(p->msg);
	free(p->reported);
	free(p->imsg);
	free(p->rv);
	free(p->uid);
	free(p);
}

void gs_sched_free(struct gs_sched *s)
{
	struct gs_hmap_iter it = {0};

	if (!s)
		return;
	while (gs_hmap_next(&s->pods, &it))
		gs_sched__inline_drop(s, it.val); /* their charges, before the namespaces' table goes */
	memset(&it, 0, sizeof(it));
	gs_sched__gpms_free(s); /* the pods' references first: they point at the slots */
	while (gs_hmap_next(&s->pods, &it))
		pod_free(it.val);
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&s->uses, &it))
		gs_sched__use_free(it.val); /* the nodes' ledgers and totals go with the nodes */
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&s->nodes, &it)) {
		struct gs_sched__node *n = it.val;
		gs_sched__agent_clear(s, n);
		gs_sched__node_usage_free(n);
		gs_sched__node_free(n);
	}
	gs_sched__conflicts_free(s);
	gs_sched__gangs_free(s);
	gs_sched__preempt_ready_free(s);
	gs_sched__pdbs_free(s);
	memset(&it, 0, sizeof(it));
	while (gs_hmap_next(&s->aliases, &it))
		free(it.val);
	gs_hmap_free(&s->aliases);
	gs_hmap_free(&s->pods);
	gs_hmap_free(&s->pods_by_name);
	gs_hmap_free(&s->nodes);
	gs_hmap_free(&s->uses);
	gs_hmap_free(&s->res_ids);
	for (uint32_t i = 0; i < s->n_res; i++)
		free(s->res_names[i]);
	free(s->res_names);
	gs_map_cache_free(s->maps);
	free(s->bindq.v);
	free(s->retry.v);
	free((char *)s->cfg.scheduler_name);
	free((char *)s->cfg.annotation);
	free((char *)s->cfg.alias_label);
	free((char *)s->cfg.ignored_resources);
	free((char *)s->cfg.ignored_resource_groups);
	free((char *)s->cfg.gang_limits);
	free((char *)s->cfg.gpu_resources);
	free(s->res_ignored);
	free(s->res_gpu);
	free(s);
}

/* ---- nodes ------------------------------------------------------------------------------------- */


/* ---- the alias index ---------------------------------------------------------------------------- */

/* The value of the alias label in a node record, or NULL (aliases off, no label, or empty). */
static const char *alias_of(const struct gs_sched *s, const struct gs_node_obj *o)
{
	if (!s->cfg.alias_label)
		return NULL;
	for (int i = 0; i < o->n_labels; i++)
		if (o->labels[i].key && strcmp(o->labels[i].key, s->cfg.alias_label) == 0)
			return o->labels[i].value && *o->labels[i].value ? o->labels[i].value : NULL;
	return NULL;
}

/* Takes n out of its alias entry (freed when it was the last node carrying the value). */
static void alias_unlink(struct gs_sched *s, struct gs_sched__node *n)
{
	struct gs_sched__alias *a = n->alias;

	if (!a)
		return;
	gs_list_remove(&n->alink);
	n->alias = NULL;
	if (--a->n == 0) {
		gs_hmap_del_str(&s->aliases, a->value, NULL);
		free(a);
	}
}

static void alias_link(struct gs_sched *s, struct gs_sched__node *n, const char *value)
{
	struct gs_sched__alias *a = gs_hmap_get_str(&s->aliases, value);

	if (!a) {
		size_t len = strlen(value);
		a = gs_xmalloc(sizeof(*a) + len + 1);
		gs_list_init(&a->nodes);
		a->n = 0;
		memcpy(a->value, value, len + 1);
		gs_sched__hmap_put(&s->aliases, a->value, a);
	}
	gs_list_insert_tail(&a->nodes, &n->alink);
	a->n++;
	n->alias = a;
}

/*
 * 1 when o says nothing new of what placement reads of the node (state, GPU count, labels, taints,
 * allocatable): a kubelet's status updates mostly change only heartbeats and images, and such an
 * update then costs a comparison, not a copy and a pass over the node's waiters.
 */
static int node_same(const struct gs_sched *s, const struct gs_sched__node *n, const struct gs_node_obj *o)
{
	const struct gs_node_obj *c = &n->obj;
	uint32_t n_ext = 0;

	if (!n->present || n->ready != !!o->ready || n->unschedulable != !!o->unschedulable || c->gpus != o->gpus ||
	    c->gpu_capacity != o->gpu_capacity || c->n_labels != o->n_labels || c->n_taints != o->n_taints ||
	    c->alloc.milli_cpu != o->alloc.milli_cpu || c->alloc.memory != o->alloc.memory ||
	    c->alloc.ephemeral != o->alloc.ephemeral || c->alloc.pods != o->alloc.pods ||
	    !gs_str_eq(c->allowed_ns, o->allowed_ns) || !gs_str_eq(n->agent.text, o->inuse) ||
	    !gs_str_eq(c->boot_id, o->boot_id))
		return 0;
	for (int i = 0; i < o->n_labels; i++)
		if (!gs_str_eq_empty(c->labels[i].key, o->labels[i].key) ||
		    !gs_str_eq_empty(c->labels[i].value, o->labels[i].value))
			return 0;
	for (int i = 0; i < o->n_taints; i++)
		if (c->taints[i].effect != o->taints[i].effect ||
		    !gs_str_eq_empty(c->taints[i].key, o->taints[i].key) ||
		    !gs_str_eq_empty(c->taints[i].value, o->taints[i].value))
			return 0;
	for (int i = 0; i < o->alloc.n_ext; i++) {
		uintptr_t id = (uintptr_t)gs_hmap_get_str(&s->res_ids, o->alloc.ext[i].name);
		if (o->alloc.ext[i].value <= 0)
			continue; /* not kept (gs_sched__req_from) */
		if (!id || gs_sched__req_ext(&n->alloc, (uint32_t)(id - 1)) != o->alloc.ext[i].value)
			return 0;
		n_ext++;
	}
	return n_ext == n->alloc.n_ext;
}

/* What the checks read of a node: labels, taints and allocatable, copied into the slot. */
static void node_copy(struct gs_sched *s, struct gs_sched__node *n, const struct gs_node_obj *o)
{
	struct gs_node_obj *c = &n->obj;

	gs_node_obj_free(c);
	c->labels = gs_sched__labels_dup(o->labels, o->n_labels);
	c->n_labels = c->labels ? o->n_labels : 0;
	if (o->n_taints > 0) {
		c->taints = gs_xcalloc((size_t)o->n_taints, sizeof(*c->taints));
		for (int i = 0; i < o->n_taints; i++) {
			c->taints[i].key = gs_sched__xstrdup_null(o->taints[i].key);
			c->taints[i].value = gs_sched__xstrdup_null(o->taints[i].value);
			c->taints[i].effect = o->taints[i].effect;
		}
		c->n_taints = o->n_taints;
	}
	/* the advertised count: capacity, which unhealthy GPUs stay in (they keep their index: docs/sched.md,
	 * "Allocatable below capacity"), else allocatable (gs_sched__node_gpus) */
	c->gpus = o->gpus;
	c->gpu_capacity = o->gpu_capacity;
	c->alloc.milli_cpu = o->alloc.milli_cpu;
	c->alloc.memory = o->alloc.memory;
	c->alloc.ephemeral = o->alloc.ephemeral;
	c->alloc.pods = o->alloc.pods;
	c->allowed_ns = gs_sched__xstrdup_null(o->allowed_ns);
	c->boot_id = gs_sched__xstrdup_null(o->boot_id);
	gs_sched__req_free(&n->alloc);
	gs_sched__req_from(s, &n->alloc, &o->alloc);
}

int gs_sched_node_upsert(struct gs_sched *s, const struct gs_node_obj *o, int64_t now_ms)
{
	struct gs_sched__node *n;
	enum gs_wait_reason before, after;
	const char *value;
	char *old = NULL;

	if (!o->name || !*o->name)
		return -EINVAL;
	n = gs_sched__node_slot(s, o->name);
	if (node_same(s, n, o))
		return 0;
	before = gs_sched__node_block(n);
	if (!n->present) {
		n->present = 1;
		s->nodes_present++;
	}
	n->ready = !!o->ready;
	n->unschedulable = !!o->unschedulable;
	node_copy(s, n, o);
	gs_sched__agent_update(s, n, o->inuse, now_ms);
	gs_sched__node_gpus(n); /* its table, its labels, what it advertises: all just taken */
	value = alias_of(s, o);
	if (n->alias ? !value || strcmp(n->alias->value, value) != 0 : value != NULL) {
		if (n->alias)
			old = gs_xstrdup(n->alias->value);
		alias_unlink(s, n);
		if (value)
			alias_link(s, n, value);
		gs_log_debug("node %s: alias label %s: %s -> %s", n->name, s->cfg.alias_label, old ? old : "(none)",
			     value ? value : "(none)");
	}
	after = gs_sched__node_block(n);
	if (before != after) {
		if (before == GS_WAIT_NONE)
			s->nodes_schedulable--;
		if (after == GS_WAIT_NONE)
			s->nodes_schedulable++;
		gs_log_debug("node %s: %s -> %s, %zu pods wait for it", n->name,
			     before == GS_WAIT_NONE ? "schedulable" : gs_wait_reason_name(before),
			     after == GS_WAIT_NONE ? "schedulable" : gs_wait_reason_name(after), n->n_waiters);
	}
	/* Labels, taints, allocatable or devices changed, or the state: the waiters of this node's name
	 * and of its alias value are placed again, each with its own checks; so are those of the value it
	 * no longer carries (their name may now resolve to another node, or to none). */
	gs_sched__node_changed(s, n);
	if (old) {
		gs_sched__name_changed(s, old);
		free(old);
	}
	return 0;
}

int gs_sched_node_delete(struct gs_sched *s, const char *name, int64_t now_ms)
{
	struct gs_sched__node *n = gs_hmap_get_str(&s->nodes, name);

	if (!n || !n->present)
		return -ENOENT;
	if (gs_sched__node_block(n) == GS_WAIT_NONE)
		s->nodes_schedulable--;
	n->present = 0;
	s->nodes_present--;
	gs_node_obj_free(&n->obj);
	gs_sched__req_free(&n->alloc);
	gs_sched__agent_clear(s, n);
	gs_log_debug("node %s: deleted, %zu pods wait for it", n->name, n->n_waiters);
	n->pinned++; /* its alias value may be its own name: that walk must not free it */
	if (n->alias) {
		char *old = gs_xstrdup(n->alias->value);
		alias_unlink(s, n);
		gs_sched__name_changed(s, old);
		free(old);
	}
	gs_sched__node_changed(s, n);
	n->pinned--;
	gs_sched__node_gc(s, n); /* frees the slot if nothing needs it any more */
	return 0;
}

/* ---- pods -------------------------------------------------------------------------------------- */

static struct gs_sched__pod *pod_new(struct gs_sched *s, const struct gs_pod_obj *o)
{
	size_t lu = strlen(o->uid) + 1, ln = strlen(o->ns) + 1, lm = strlen(o->name) + 1;
	struct gs_sched__pod *p = gs_xmalloc(sizeof(*p));
	char *str = gs_xmalloc(lu + ln + lm + ln + lm);

	memset(p, 0, sizeof(*p));
	p->state = GS_POD__COUNT; /* none yet: the first set_state counts it */
	p->index = -1;
	gs_list_init(&p->qlink);
	gs_list_init(&p->rlink);
	gs_list_init(&p->plink);
	p->uid = memcpy(str, o->uid, lu);
	p->ns = memcpy(str + lu, o->ns, ln);
	p->name = memcpy(str + lu + ln, o->name, lm);
	p->key = str + lu + ln + lm;
	snprintf(p->key, ln + lm, "%s/%s", o->ns, o->name);
	gs_sched__hmap_put(&s->pods, p->uid, p);
	gs_sched__hmap_put(&s->pods_by_name, p->key, p);
	return p;
}

static void pod_remove(struct gs_sched *s, struct gs_sched__pod *p)
{
	gs_sched__preempt_forget(s, p);
	gs_sched__detach(s, p);
	gs_sched__gang_leave(s, p);
	gs_sched__gpm_unlink(s, p);
	gs_sched__inline_drop(s, p);
	if (gs_list_linked(&p->rlink))
		gs_list_remove(&p->rlink);
	if (p->state < GS_POD__COUNT)
		s->by_state[p->state]--;
	gs_hmap_del_str(&s->pods, p->uid, NULL);
	if (gs_hmap_get_str(&s->pods_by_name, p->key) == p)
		gs_hmap_del_str(&s->pods_by_name, p->key, NULL);
	pod_free(p);
}

/* Leaves the pending set for good (or as bound): out of every queue, list and heap. */
static void pod_settle(struct gs_sched *s, struct gs_sched__pod *p, enum gs_pod_state st)
{
	if (p->state == st)
		return;
	if (st != GS_POD_BOUND)
		gs_sched__preempt_forget(s, p); /* a nominee that ends frees its claim (bound: its use replaces it) */
	free(p->status_nominated);
	p->status_nominated = NULL;
	gs_sched__detach(s, p);
	gs_sched__set_state(s, p, st);
	gs_log_debug("pod %s/%s: %s", p->ns, p->name, gs_pod_state_name(st));
}

/*
 * The devices of o's gpu-scheduler.io/assigned claim on its node, when the ledger may believe it: o is
 * a pod of ours (schedulerName), its own map entry names that node (by name, or by the alias value
 * the node carries now) and exactly those devices, as our binding writes it, and its namespace may map
 * the node (allowed-namespaces). The annotation is text anyone who can create a pod may write; a claim
 * that fails this is ignored (*why says why) and the pod holds no device through it. NULL and *why NULL
 * when the pod claims nothing on that node.
 *
 * A node not known yet (a restart whose pod list arrives before its node list) cannot say its alias
 * or its policy: the claim is then judged by the pod's own fields alone, so that a pod bound through
 * an alias keeps its GPUs across a restart. The decision is not revisited when the node appears.
 */
static const char *trusted_claim(struct gs_sched *s, const struct gs_pod_obj *o, const char **why)
{
	size_t nl = strlen(o->node_name);
	const char *devs;
	const struct gs_map_error *err = NULL;
	const struct gs_map_entry *e;
	const struct gs_sched__node *n;
	struct gs_map *m = NULL;
	enum gs_index_source src;
	long index;
	int ok;

	*why = NULL;
	if (!o->assigned || strncmp(o->assigned, o->node_name, nl) != 0 || o->assigned[nl] != ':')
		return NULL;
	devs = o->assigned + nl + 1;
	if (!o->scheduler_name || strcmp(o->scheduler_name, s->cfg.scheduler_name) != 0) {
		*why = "the pod is not scheduled by us";
		return NULL;
	}
	if ((!o->map_text && !o->map_ref) ||
	    gs_map_pod_index(o->label_pod_index, o->job_index, o->name, &index, &src) < 0) {
		*why = "the pod has no map or no index";
		return NULL;
	}
	if (o->map_ref && !o->map_text) {
		/* By reference: the object as the engine holds it now (the I/O layer lists the objects before
		 * the pods, so a restart knows them). */
		if (!(m = gs_sched__gpm_parsed(s->maps, gs_sched__gpm_slot(s, o->ns, o->map_ref)))) {
			*why = "the GPUPlacementMap the pod names is unknown, not held or its map is invalid";
			return NULL;
		}
	} else {
		int rc = gs_map_cache_get(s->maps, o->map_text, o->map_len, &m, &err);
		if (rc == -ENOMEM)
			gs_oom(o->map_len);
		if (rc < 0) {
			*why = "the pod's map is invalid";
			return NULL;
		}
	}
	e = gs_map_lookup(m, index);
	n = gs_hmap_get_str(&s->nodes, o->node_name);
	ok = e && strcmp(e->devices, devs) == 0 &&
	     (strcmp(e->node, o->node_name) == 0 || !n || !n->present ||
	      (n->alias && strcmp(n->alias->value, e->node) == 0));
	gs_map_unref(m);
	if (!ok) {
		*why = "the pod's own map entry does not give it that node and those devices";
		return NULL;
	}
	if (n && n->present && !gs_sched__policy_allows(n, o->ns)) {
		*why = "its namespace may not map that node (allowed-namespaces)";
		return NULL;
	}
	return devs;
}

static int req_same(const struct gs_sched__req *a, const struct gs_sched__req *b)
{
	if (a->cpu != b->cpu || a->mem != b->mem || a->eph != b->eph || a->n_ext != b->n_ext)
		return 0;
	for (uint32_t i = 0; i < a->n_ext; i++)
		if (gs_sched__req_ext(b, a->ext[i].id) != a->ext[i].v)
			return 0;
	return 1;
}

/* The devices a use holds, as the canonical list "0,1" (malloc'd; NULL when none). */
static char *use_devices(const struct gs_sched__use *u)
{
	size_t len = 0, at = 0;
	char *out;

	if (!u->n_holds)
		return NULL;
	for (size_t i = 0; i < u->n_holds; i++)
		len += strlen(u->holds[i].dev->name) + 1;
	out = gs_xmalloc(len);
	for (size_t i = 0; i < u->n_holds; i++)
		at += (size_t)sprintf(out + at, "%s%s", i ? "," : "", u->holds[i].dev->name);
	return out;
}

/*
 * The use a pod with spec.nodeName makes of its node, brought up to date on every update of the pod
 * (docs/sched.md, "What the engine keeps of a pod, and what refreshes it"):
 *   - requests: an in-place resize changes them (gs_checks_pod_requests reads the status);
 *   - owner and sharing annotation: adoption, orphaning and a re-created owner change the controller
 *     uid; the devices the pod holds move to its new owner's bucket;
 *   - devices: a bound pod's never change (its containers got them at creation): kept from the use on
 *     the same node, else taken from its trusted claim (trusted_claim);
 *   - host ports: immutable in a pod's spec, kept from the use on the same node (a partial record,
 *     objects.h, does not carry them).
 * Nothing is rebuilt when nothing changed, so a status update costs a comparison.
 */
/* What preemption reads of the bound pod o (sched_int.h, struct gs_sched__use): the pod's own use from
 * here on, a nomination or a reservation of ours until now maybe. */
static void use_pod_fields(struct gs_sched *s, struct gs_sched__use *u, const struct gs_pod_obj *o, int64_t priority)
{
	gs_sched__use_unnominate(s, u);
	u->bound = 1;
	u->priority = priority;
	u->created_ms = o->created_ms;
	u->deleting = (unsigned char)!!o->deleting;
	gs_sched__use_labels(u, o->labels, o->n_labels);
}

static void use_from_obj(struct gs_sched *s, const struct gs_pod_obj *o)
{
	struct gs_sched__use *u = gs_hmap_get_str(&s->uses, o->uid);
	char *okey = gs_sched__owner_key(o->ns, o->owner_uid); /* by namespace and uid (sched_node.h) */
	const char *owner = okey ? okey : o->uid, *devs = NULL, *why = NULL;
	int same = u && strcmp(u->node->name, o->node_name) == 0;
	struct gs_resources r;
	struct gs_sched__req req;
	struct gs_sched__port *ports;
	char key[600], *held = NULL, *ignored = NULL;
	size_t n_ports;

	/* spec.priority is immutable, and a partial record (objects.h) does not carry it: kept. */
	int64_t priority = o->partial && u ? u->priority : o->priority;

	gs_checks_pod_requests(o, &r);
	gs_sched__req_from(s, &req, &r);
	gs_resources_free(&r);
	if (same && req_same(&u->req, &req) && !u->shared == !o->allow_shared &&
	    (!u->n_holds || strcmp(u->owner, owner) == 0)) {
		use_pod_fields(s, u, o, priority);
		gs_sched__req_free(&req);
		free(okey);
		return;
	}
	if (same) {
		gs_log_debug("pod %s/%s on node %s: requests, owner or sharing changed; its use follows", o->ns,
			     o->name, o->node_name);
		n_ports = u->n_ports;
		ports = n_ports ? gs_xcalloc(n_ports, sizeof(*ports)) : NULL;
		for (size_t i = 0; i < n_ports; i++) {
			ports[i] = u->ports[i];
			ports[i].ip = gs_sched__xstrdup_null(u->ports[i].ip);
		}
		devs = held = use_devices(u);
		if (u->ignored) {
			ignored = gs_xstrdup(u->ignored); /* the devices, up to the NUL before the key */
			why = u->ignored_why;
		}
	} else {
		ports = gs_sched__ports_from(o, &n_ports);
		devs = trusted_claim(s, o, &why);
		if (why) {
			s->claims_ignored++;
			ignored = gs_xstrdup(o->assigned + strlen(o->node_name) + 1);
			gs_log_warn("pod %s/%s: its gpu-scheduler.io/assigned annotation \"%.120s\" is ignored: %s; "
				    "the pod holds no GPU through it",
				    o->ns, o->name, o->assigned, why);
		}
	}
	snprintf(key, sizeof(key), "%s/%s", o->ns, o->name);
	u = gs_sched__use_add(s, o->uid, gs_sched__node_slot(s, o->node_name), &req, ports, n_ports, devs, okey,
			      o->allow_shared, key);
	use_pod_fields(s, u, o, priority);
	if (ignored)
		gs_sched__use_ignore(u, ignored, why, key);
	free(ignored);
	free(held);
	free(okey);
	gs_sched__req_free(&req);
	gs_sched__ports_free(ports, n_ports);
}

int gs_sched_node_allows(const struct gs_sched *s, const char *map_node, const char *ns, char *msg, size_t size)
{
	const struct gs_sched__alias *amb;
	int via;
	const struct gs_sched__node *n = gs_sched__resolve(s, map_node, &via, &amb);

	return !n || gs_sched__check_policy(n, ns, msg, size) == GS_WAIT_NONE;
}

int64_t gs_sched_node_gpus(const struct gs_sched *s, const char *map_node, char *words, size_t size)
{
	const struct gs_sched__alias *amb;
	int via;
	const struct gs_sched__node *n = gs_sched__resolve(s, map_node, &via, &amb);

	if (!n || n->gpus < 0 || n->gpus_from == GS_GPUS_ADVERTISED)
		return -1;
	gs_sched__node_gpus_words(n, words, size);
	return n->gpus;
}

int gs_sched_pod_held(const struct gs_sched *s, const char *uid, const char *node, size_t node_len)
{
	const struct gs_sched__use *u = gs_hmap_get_str(&s->uses, uid);

	return u && strlen(u->node->name) == node_len && memcmp(u->node->name, node, node_len) == 0;
}

/*
 * A bound pod: a pod first seen bound (a restart, the explain and status commands) was never placed here,
 * so its owner (on every update: adoption, orphaning), its creation and its index (once, from a whole
 * record) come from here; they are what the workload view (sched_workload.c) groups and sorts by.
 */
static void pod_seen_bound(struct gs_sched__pod *p, const struct gs_pod_obj *o)
{
	long index;
	enum gs_index_source src;

	gs_sched__pod_owner(p, o);
	p->created_ms = o->created_ms; /* out of the bind queue: no heap key to keep */
	p->running = o->running;
	if (p->index < 0 && !o->partial &&
	    gs_map_pod_index(o->label_pod_index, o->job_index, o->name, &index, &src) == 0) {
		p->index = index;
		p->index_source = src;
	}
}

/* The engine's clock: the latest now_ms it was given (gang timers started from pod events, explain). */
static void tick(struct gs_sched *s, int64_t now_ms)
{
	if (now_ms > s->now_ms)
		s->now_ms = now_ms;
	gs_map_cache_trim(s->maps); /* what the last call let go idle */
}

/*
 * p, seen bound at its first full sight (a restart, another replica's binding), is a member of an
 * all-or-nothing gang: that gang was placed already, so its other members are placed alone (its owner
 * is pod_seen_bound's).
 */
static void bound_member(struct gs_sched *s, struct gs_sched__pod *p, const struct gs_pod_obj *o)
{
	struct gs_gang_opts opts;
	struct gs_gpm_view v = {.placement = o->placement, .gang_timeout = o->gang_timeout, .gang_size = o->gang_size};
	char msg[256];

	if (o->partial || p->gang || !o->owner_uid)
		return;
	if (o->map_ref && !gs_sched__gpm_find(s, o->ns, o->map_ref, &v))
		return; /* by reference: the object's settings (sched/gpm.h) */
	if (gs_gang_opts_parse(v.placement, v.gang_timeout, v.gang_size, &opts, msg, sizeof(msg)) < 0 ||
	    !opts.all_or_nothing)
		return;
	gs_sched__gang_set(s, p, &opts, 0, s->now_ms);
	if (p->gang && !p->gang->ran) {
		gs_sched__gang_ran(s, p->gang);
		gs_sched__place_members(s, p->gang);
	}
}

int gs_sched_pod_upsert(struct gs_sched *s, const struct gs_pod_obj *o, int64_t now_ms)
{
	struct gs_sched__pod *p;

	if (!o->uid || !o->ns || !o->name || !*o->uid)
		return -EINVAL;
	if (o->partial && !(o->node_name && gs_sched_pod_held(s, o->uid, o->node_name, strlen(o->node_name))))
		return -EINVAL; /* its requests, map and constraints are not in the record */
	tick(s, now_ms);
	if (gs_sched__gang_placeholder_seen(s, o))
		return 0; /* ours (proven: sched_gang.h), holding a node for a gang member: never a use, never placed */
	/* A gang member's reservation goes before the pod's own use replaces it (bound) or the pod ends. */
	p = gs_hmap_get_str(&s->pods, o->uid);
	if (p && p->reserved && (o->terminal || o->deleting || (o->node_name && *o->node_name)))
		gs_sched__gang_release(s, p);
	/* Any pod, ours or not, counts on its node until it ends: terminal, or deleting with no container
	 * running (the kubelet's filterOutTerminatedPods); a deleting pod still running keeps its use. */
	if (o->terminal || (o->deleting && o->stopped))
		gs_sched__use_remove(s, o->uid);
	else if (o->node_name && *o->node_name)
		use_from_obj(s, o);

	p = gs_hmap_get_str(&s->pods, o->uid);
	if (!o->scheduler_name || strcmp(o->scheduler_name, s->cfg.scheduler_name) != 0) {
		if (p)
			pod_remove(s, p);
		return 0;
	}
	int first = !p;
	if (!p)
		p = pod_new(s, o);

	if (o->deleting || o->terminal || p->state == GS_POD_FINISHED) {
		pod_settle(s, p, GS_POD_FINISHED);
		return 0;
	}
	if (o->node_name || p->state == GS_POD_BOUND) {
		pod_settle(s, p, GS_POD_BOUND); /* never bind twice, whatever a stale event says */
		pod_seen_bound(p, o);
		if (!o->partial)
			gs_sched__gpm_link(s, p, o); /* counted as placed in its object's status */
		bound_member(s, p, o);
		return 0;
	}
	if (p->state == GS_POD_GONE && o->resource_version && p->rv && strcmp(o->resource_version, p->rv) == 0)
		return 0;

	free(p->rv);
	p->rv = o->resource_version ? gs_xstrdup(o->resource_version) : NULL;
	gs_sched__pod_inputs(s, p, o);
	switch (p->state) {
	case GS_POD_BINDING:
	case GS_POD_BACKOFF:
		return 0; /* the new inputs count when the result arrives or the retry is due */
	case GS_POD_GONE:
		gs_sched__use_remove(s, p->uid); /* the reservation the refused binding left */
		p->attempts = 0;
		break;
	default:
		break;
	}
	/* A pod first seen pending with status.nominatedNodeName (a restart or a failover between a
	 * preemption and its binding) takes its nomination back once it waits for room on that node
	 * (sched_place.c), so that it preempts no one else while its victims terminate. Read at the first
	 * sight only: a nomination the engine let go stays let go. */
	if (first && o->nominated_node && *o->nominated_node && s->cfg.preemption)
		p->status_nominated = gs_xstrdup(o->nominated_node);
	gs_sched__place(s, p);
	return 0;
}

int gs_sched_pod_delete(struct gs_sched *s, const char *uid, int64_t now_ms)
{
	struct gs_sched__pod *p = gs_hmap_get_str(&s->pods, uid);
	int used;

	tick(s, now_ms);
	if (gs_sched__gang_placeholder_gone(s, uid))
		return 0; /* ours: never a pod record nor a use (invariant) */
	if (p && p->reserved)
		gs_sched__gang_release(s, p); /* its reservation is its use: released as the gang's */
	used = gs_sched__use_remove(s, uid);

	if (!p)
		return used ? 0 : -ENOENT;
	pod_remove(s, p);
	return 0;
}

int gs_sched_placeholder_created(struct gs_sched *s, const char *member_uid, const char *ns, const char *name,
				 const char *uid, int64_t now_ms)
{
	struct gs_sched__pod *p;

	if (!member_uid || !ns || !name || !uid || !*uid)
		return -EINVAL;
	tick(s, now_ms);
	gs_sched__gang_placeholder_made(s, member_uid, ns, name, uid);
	/* Seen before the reply, it counted as the ordinary pod it claimed not to be: it is ours now. */
	if ((p = gs_hmap_get_str(&s->pods, uid)) != NULL)
		pod_remove(s, p);
	gs_sched__use_remove(s, uid);
	return 0;
}

/* ---- pulls (sched_place.c) --------------------------------------------------------------------- */

int gs_sched_next_bind(struct gs_sched *s, int64_t now_ms, struct gs_bind_decision *out)
{
	tick(s, now_ms);
	return gs_sched__next_bind(s, now_ms, out);
}

int gs_sched_bind_done(struct gs_sched *s, const char *uid, enum gs_bind_result res, int64_t now_ms)
{
	tick(s, now_ms);
	return gs_sched__bind_done(s, uid, res, now_ms, 0);
}

int gs_sched_bind_retry_after(struct gs_sched *s, const char *uid, int64_t now_ms, int64_t not_before_ms)
{
	tick(s, now_ms);
	return gs_sched__bind_done(s, uid, GS_BIND_RETRY, now_ms, not_before_ms);
}

int64_t gs_sched_next_deadline(const struct gs_sched *s)
{
	int64_t t[4] = {s->retry.len ? s->retry.v[0]->due_ms : -1, gs_sched__agent_deadline(s),
			gs_sched__gang_deadline(s), gs_sched__gpm_deadline(s)};
	int64_t best = -1;

	for (int i = 0; i < 4; i++)
		if (t[i] >= 0 && (best < 0 || t[i] < best))
			best = t[i];
	return best;
}

int gs_sched_next_placeholder(struct gs_sched *s, int64_t now_ms, struct gs_placeholder *out)
{
	tick(s, now_ms);
	return gs_sched__gang_next_placeholder(s, out);
}

int gs_sched_next_preemption(struct gs_sched *s, int64_t now_ms, struct gs_preemption *out)
{
	tick(s, now_ms);
	return gs_sched__next_preemption(s, out);
}

int gs_sched_preemption_failed(struct gs_sched *s, const char *victim_uid, int64_t now_ms)
{
	tick(s, now_ms);
	return gs_sched__preemption_failed(s, victim_uid);
}

int gs_sched_next_report(struct gs_sched *s, int64_t now_ms, struct gs_report *out)
{
	tick(s, now_ms);
	return gs_sched__next_report(s, now_ms, out);
}

/* ---- introspection ----------------------------------------------------------------------------- */

int gs_sched_pod_info(const struct gs_sched *s, const char *uid, struct gs_sched_pod_info *out)
{
	const struct gs_sched__pod *p = gs_hmap_get_str(&s->pods, uid);

	if (!p)
		return -ENOENT;
	gs_sched__pod_info(s, p, out);
	return 0;
}

int gs_sched_pod_find(const struct gs_sched *s, const char *ns, const char *name, struct gs_sched_pod_info *out)
{
	char key[600];
	const struct gs_sched__pod *p;
	int n = snprintf(key, sizeof(key), "%s/%s", ns, name);

	if (n < 0 || (size_t)n >= sizeof(key))
		return -ENOENT; /* longer than any valid namespace/name */
	p = gs_hmap_get(&s->pods_by_name, key, (size_t)n);
	if (!p)
		return -ENOENT;
	gs_sched__pod_info(s, p, out);
	return 0;
}

void gs_sched_stats(const struct gs_sched *s, struct gs_sched_stats *st)
{
	struct gs_map__cache_stats cs;

	memset(st, 0, sizeof(*st));
	st->pods = gs_hmap_len(&s->pods);
	memcpy(st->by_state, s->by_state, sizeof(st->by_state));
	memcpy(st->waiting_by, s->waiting_by, sizeof(st->waiting_by));
	st->pending = s->by_state[GS_POD_WAITING] + s->by_state[GS_POD_QUEUED] + s->by_state[GS_POD_BINDING] +
		      s->by_state[GS_POD_BACKOFF];
	st->nodes = s->nodes_present;
	st->nodes_schedulable = s->nodes_schedulable;
	gs_map__cache_stats(s->maps, &cs);
	st->maps_cached = cs.entries;
	st->maps_cached_bytes = cs.bytes;
	st->maps_idle_bytes = cs.idle_bytes;
	st->gpm_bytes = s->gpm_bytes;
	st->gpms_refused = s->gpm_refused;
	st->inline_not_kept = s->inline_not_kept;
	st->uses = gs_hmap_len(&s->uses);
	st->devices_held = s->devs_held;
	st->devices_shared = s->devs_shared;
	st->claims_ignored = s->claims_ignored;
	st->binds_ok = s->binds_ok;
	st->binds_gone = s->binds_gone;
	st->binds_retry = s->binds_retry;
	st->reports = s->reports;
	st->device_conflicts = s->conflicts_seen;
	st->gangs_waiting = s->n_gathering;
	st->gangs_bound = s->gangs_bound;
	st->gang_timeouts = s->gang_timeouts;
	st->placeholders = s->n_ph;
	st->preempt_none = s->preempt_attempts[0];
	st->preemptions = s->preempt_attempts[1];
	st->preempt_victims = s->preempt_victims;
	st->preempt_pdb_victims = s->preempt_pdb_victims;
	st->pdbs = s->pdbs.len;
	st->nominated = s->n_nominated;
	st->agent_fresh = s->agent_nodes[0];
	st->agent_stale = s->agent_nodes[1];
	st->agent_unusable = s->agent_nodes[2];
	st->agent_none = s->nodes_present - st->agent_fresh - st->agent_stale - st->agent_unusable;
}

void gs_sched_waiting_oldest(const struct gs_sched *s, int64_t oldest_created_ms[GS_WAIT__COUNT])
{
	struct gs_hmap_iter it = {0};

	for (int r = 0; r < GS_WAIT__COUNT; r++)
		oldest_created_ms[r] = 0;
	while (gs_hmap_next(&s->pods, &it)) {
		const struct gs_sched__pod *p = it.val;
		int64_t *o;

		if (p->state != GS_POD_WAITING || p->created_ms <= 0)
			continue;
		GS_ASSERT(p->reason > GS_WAIT_NONE && p->reason < GS_WAIT__COUNT);
		o = &oldest_created_ms[p->reason];
		if (*o == 0 || p->created_ms < *o)
			*o = p->created_ms;
	}
}

int gs_sched_explain(struct gs_sched *s, const char *ns, const char *name, struct gs_sched_explain *out)
{
	return gs_sched__explain(s, ns, name, out);
}

void gs_sched_explain_free(struct gs_sched_explain *e)
{
	gs_sched__explain_free(e);
}

void gs_sched_pending(const struct gs_sched *s, struct gs_sched_pending *out)
{
	gs_sched__pending(s, out);
}

/* ---- maps as objects (sched_gpm.c) ------------------------------------------------------------- */

/* Every pod naming g and not handed out takes g as it is now; the pending ones are placed again. A pod
 * being bound or in backoff takes it too and keeps its place, as on an update of its own annotation
 * (sched.c, gs_sched_pod_upsert): the result or the retry decides. Bound pods never move. */
static void place_referrers(struct gs_sched *s, struct gs_sched__gpm *g)
{
	struct gs_list *l, *next;

	GS_LIST_FOREACH_SAFE(l, next, &g->pods) {
		struct gs_sched__pod *p = GS_CONTAINER_OF(l, struct gs_sched__pref, link)->pod;

		switch (p->state) {
		case GS_POD_WAITING:
		case GS_POD_QUEUED:
			gs_sched__map_inputs(s, p, NULL);
			gs_sched__place(s, p);
			break;
		case GS_POD_BINDING:
		case GS_POD_BACKOFF:
			gs_sched__map_inputs(s, p, NULL);
			break;
		default:
			break;
		}
	}
}

int gs_sched_gpm_upsert(struct gs_sched *s, const struct gs_gpm_view *g, int64_t now_ms)
{
	struct gs_sched__gpm *slot = NULL;
	int rc;

	tick(s, now_ms);
	rc = gs_sched__gpm_upsert(s, g, &slot);
	if (rc > 0)
		place_referrers(s, slot);
	return rc < 0 ? rc : 0;
}

int gs_sched_pdb_upsert(struct gs_sched *s, const struct gs_pdb_obj *b)
{
	return gs_sched__pdb_upsert(s, b);
}

int gs_sched_pdb_delete(struct gs_sched *s, const char *ns, const char *name)
{
	return gs_sched__pdb_delete(s, ns, name);
}

int gs_sched_gpm_delete(struct gs_sched *s, const char *ns, const char *name, int64_t now_ms)
{
	struct gs_sched__gpm *slot = NULL;
	int rc;

	tick(s, now_ms);
	rc = gs_sched__gpm_delete(s, ns, name, &slot);
	if (rc < 0)
		return rc;
	place_referrers(s, slot); /* they wait MAP_MISSING */
	gs_sched__gpm_gc(s, slot);
	return 0;
}

int gs_sched_gpm_find(const struct gs_sched *s, const char *ns, const char *name, struct gs_gpm_view *out)
{
	return gs_sched__gpm_find(s, ns, name, out);
}

const char *gs_sched_gpm_refused(const struct gs_sched *s, const char *ns, const char *name)
{
	const struct gs_sched__gpm *g = ns && name ? gs_sched__gpm_slot(s, ns, name) : NULL;

	return g && g->present ? g->refused : NULL;
}

int gs_sched_gpm_take_relist(struct gs_sched *s, int64_t now_ms, int64_t *due_ms)
{
	return gs_sched__gpm_take_relist(s, now_ms, due_ms);
}

int gs_sched_next_gpm_status(struct gs_sched *s, int64_t now_ms, struct gs_gpm_status *out)
{
	tick(s, now_ms);
	return gs_sched__gpm_next_status(s, now_ms, out);
}

int gs_sched_gpm_status(const struct gs_sched *s, const char *ns, const char *name, struct gs_gpm_status *out)
{
	return gs_sched__gpm_status(s, ns, name, out);
}

void gs_sched_audit(const struct gs_sched *s)
{
	gs_sched__audit(s);
}

int gs_sched_workload(const struct gs_sched *s, const char *ns, const char *kind, const char *name,
		      const char *map_text, size_t map_len, struct gs_sched_workload *out)
{
	return gs_sched__workload(s, ns, kind, name, map_text, map_len, out);
}

int gs_sched_workload_ref(const struct gs_sched *s, const char *ns, const char *kind, const char *name,
			  const char *map_ref, struct gs_sched_workload *out)
{
	return gs_sched__workload_ref(s, ns, kind, name, map_ref, out);
}

int gs_sched_mapped_gpus(const struct gs_sched *s, gs_sched_mapped_fn fn, void *ud)
{
	return gs_sched__mapped_gpus(s, fn, ud);
}

int gs_sched_gpm_workload(const struct gs_sched *s, const char *ns, const char *name, struct gs_sched_workload *out)
{
	return gs_sched__gpm_workload(s, ns, name, out);
}

void gs_sched_workload_free(struct gs_sched_workload *w)
{
	gs_sched__workload_free(w);
}

const char *gs_sched_workload_kind(const char *word)
{
	return gs_sched__workload_kind(word);
}
