/*
 * sched_agent.c: what the node agent publishes (inuse.h), as the engine counts it. The device plugin's
 * holds are kept apart from the ledger: the ledger holds what maps give, the agent's data what the
 * kubelet gave; the fit asks both, and a device in both is a conflict (reported once per pair).
 *
 * A hold the agent names counts while its holder is a pod bound to that node (n->keyed): the agent's
 * data lags the pods, and a pod that ended must free its device at once, not a poll later; and a name
 * that is not a pod there (a forged or stale annotation) blocks nothing.
 */
#include "sched/sched_agent.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/num.h"
#include "core/str.h"
#include "sched/sched_ledger.h"
#include "sched/sched_node.h"

/* ---- the data, as it changes ------------------------------------------------------------------- */

static void forget(struct gs_sched *s, struct gs_sched__node *n)
{
	struct gs_sched__agent *a = &n->agent;

	if (a->fresh)
		gs_list_remove(&a->link);
	a->fresh = 0;
	gs_hmap_free(&a->ids);
	gs_hmap_init(&a->ids, 0);
	free(a->chain);
	a->chain = NULL;
	gs_inuse_free(a->data);
	a->data = NULL;
	free(a->problem);
	a->problem = NULL;
}

static void conflicts_reset(struct gs_sched__agent *a)
{
	struct gs_hmap_iter it = {0};

	while (gs_hmap_next(&a->conflicts, &it))
		free((char *)it.key);
	gs_hmap_free(&a->conflicts);
	gs_hmap_init(&a->conflicts, 0);
}

/* n's agent data as gpu_scheduler_agent_nodes counts it: 0 fresh, 1 stale, 2 unusable, -1 none. */
static int state_of(const struct gs_sched__agent *a)
{
	return a->fresh ? 0 : a->data ? 1 : a->text ? 2 : -1;
}

static void count(struct gs_sched *s, const struct gs_sched__agent *a, int sign)
{
	int st = state_of(a);

	if (st >= 0)
		s->agent_nodes[st] += (size_t)sign; /* wraps back on the matching +1 */
}

static void table_forget(struct gs_sched__agent *a);

static void clear(struct gs_sched *s, struct gs_sched__node *n)
{
	forget(s, n);
	conflicts_reset(&n->agent);
	free(n->agent.text);
	n->agent.text = NULL;
	table_forget(&n->agent);
	n->agent.table_moved = 0;
}

/* u's index table as text ("0=GPU-aa 1=GPU-bb"), malloc'd; NULL when it has none. */
static char *table_text(const struct gs_inuse *u)
{
	struct gs_buf b;

	if (!u->n_index)
		return NULL;
	gs_buf_init(&b, 0);
	for (size_t i = 0; i < u->n_index; i++)
		if (u->index[i])
			gs_buf_printf(&b, "%s%zu=%s", b.len ? " " : "", i, u->index[i]);
	return gs_buf_steal(&b, NULL);
}

static void table_forget(struct gs_sched__agent *a)
{
	for (size_t i = 0; i < a->n_table; i++)
		free(a->table_ids[i]);
	free(a->table_ids);
	free(a->table);
	free(a->table_boot);
	a->table = a->table_boot = NULL;
	a->table_ids = NULL;
	a->n_table = 0;
}

/* Believes u's table, whose text is t (taken), on boot. */
static void table_believe(struct gs_sched__agent *a, const struct gs_inuse *u, char *t, const char *boot)
{
	table_forget(a);
	a->table = t;
	a->table_boot = gs_sched__xstrdup_null(boot);
	a->n_table = u->n_index;
	a->table_ids = gs_xcalloc(u->n_index, sizeof(*a->table_ids));
	for (size_t i = 0; i < u->n_index; i++)
		a->table_ids[i] = gs_sched__xstrdup_null(u->index[i]);
}

/* Believes the data's index table, or flags it (sched_agent.h, "The GPU index table"). */
static void check_table(struct gs_sched__node *n)
{
	struct gs_sched__agent *a = &n->agent;
	char *t = table_text(a->data);
	int was_moved = a->table_moved;

	a->table_moved = 0;
	if (!t) {
		/* None now (the agent lost the driver's files, or was made to say so): on the same boot the
		 * one believed still holds, and counting alone could not see a doubled GPU. */
		a->table_moved = a->table && gs_str_eq(a->table_boot, n->obj.boot_id);
		return;
	}
	if (a->table && strcmp(a->table, t) != 0 && gs_str_eq(a->table_boot, n->obj.boot_id)) {
		a->table_moved = 1;
		if (!was_moved)
			gs_log_warn(
				"node %s: the gpu-scheduler agent's GPU index table changed without a reboot (was "
				"\"%.300s\", now \"%.300s\"): not believed; its indices go through the one believed "
				"until the node reboots or the table is back",
				n->name, a->table, t);
		free(t);
		return;
	}
	if (a->table && strcmp(a->table, t) != 0)
		gs_log_info("node %s: GPU index table \"%.300s\" after a reboot (boot ID %s)", n->name, t,
			    n->obj.boot_id ? n->obj.boot_id : "none");
	else if (was_moved)
		gs_log_info("node %s: the GPU index table is back to the one believed", n->name);
	table_believe(a, a->data, t, n->obj.boot_id);
	GS_ASSERT(!a->table_moved && a->table);
}

/* a->ids and a->chain from a->data: each physical GPU's devices (its replicas, its MIG instances), in
 * the data's order. */
static void index_devices(struct gs_sched__agent *a)
{
	const struct gs_inuse *d = a->data;
	size_t *last = gs_xcalloc(d->n_devs + 1, sizeof(*last)); /* per chain head: its last index + 1 */

	a->chain = gs_xcalloc(d->n_devs + 1, sizeof(*a->chain));
	for (size_t i = 0; i < d->n_devs; i++) {
		const char *id;
		size_t len;
		gs_inuse_physical(d, d->devs[i].id, strlen(d->devs[i].id), &id, &len);
		uintptr_t head = (uintptr_t)gs_hmap_get(&a->ids, id, len);
		if (!head) {
			if (gs_hmap_put(&a->ids, id, len, (void *)(uintptr_t)(i + 1), NULL) < 0)
				gs_oom(len);
			last[i] = i + 1;
			continue;
		}
		a->chain[last[head - 1] - 1] = i + 1;
		last[head - 1] = i + 1;
	}
	free(last);
}

/* "reports: WHY" or "published data not used: WHY", for gs_sched__agent_why_unknown (WHY cut at 160). */
static char *problem(const char *what, const char *why)
{
	char buf[200];

	snprintf(buf, sizeof(buf), "%s: %.160s", what, why);
	return gs_xstrdup(buf);
}

static void update(struct gs_sched *s, struct gs_sched__node *n, const char *text, int64_t now_ms)
{
	struct gs_sched__agent *a = &n->agent;
	char err[256];
	int first = !a->text;

	if (text ? a->text && strcmp(a->text, text) == 0 : !a->text)
		return;
	forget(s, n);
	free(a->text);
	a->text = text ? gs_xstrdup(text) : NULL;
	if (!text) {
		conflicts_reset(a);
		gs_log_info("node %s: no gpu-scheduler agent data any more", n->name);
		return;
	}
	if (gs_inuse_parse(text, strlen(text), &a->data, err, sizeof(err)) < 0) {
		a->problem = problem("published data not used", err);
		gs_log_warn("node %s: annotation %s is not used: %s", n->name, GS_INUSE_ANNOTATION, err);
		return;
	}
	if (a->data->error) {
		a->problem = problem("reports", a->data->error);
		gs_inuse_free(a->data);
		a->data = NULL;
		gs_log_info("node %s: the gpu-scheduler agent %s", n->name, a->problem);
		return;
	}
	check_table(n);
	index_devices(a);
	/* The agent's time counts only when earlier: a clock ahead of ours must not keep data fresh. */
	a->seen_ms = first && a->data->at_ms < now_ms ? a->data->at_ms : now_ms;
	if (now_ms - a->seen_ms < s->cfg.agent_stale_ms) {
		/* In seen_ms order: only a first sight may be older than the tail, so the walk is short. */
		struct gs_list *at = &s->agents;
		while (at->prev != &s->agents &&
		       GS_CONTAINER_OF(at->prev, struct gs_sched__agent, link)->seen_ms > a->seen_ms)
			at = at->prev;
		gs_list_insert_before(at, &a->link);
		a->fresh = 1;
	}
	gs_log_debug("node %s: agent data: %zu devices held through the device plugin, %s", n->name, a->data->n_devs,
		     a->fresh ? "fresh" : "stale already");
	gs_sched__agent_conflicts(s, n);
}

void gs_sched__agent_clear(struct gs_sched *s, struct gs_sched__node *n)
{
	count(s, &n->agent, -1);
	clear(s, n);
}

void gs_sched__agent_update(struct gs_sched *s, struct gs_sched__node *n, const char *text, int64_t now_ms)
{
	count(s, &n->agent, -1);
	update(s, n, text, now_ms);
	count(s, &n->agent, +1);
}

void gs_sched__agent_expire(struct gs_sched *s, int64_t now_ms)
{
	/* Expired nodes go to the head of s->dirty in expiry order, ahead of the nodes already there (a node
	 * already there moves up): the drain that follows places their waiters in the order a placement at
	 * expiry would have, and a node once. */
	struct gs_list *first = gs_list_first(&s->dirty);

	while (!gs_list_empty(&s->agents)) {
		struct gs_sched__agent *a = GS_CONTAINER_OF(gs_list_first(&s->agents), struct gs_sched__agent, link);
		struct gs_sched__node *n = GS_CONTAINER_OF(a, struct gs_sched__node, agent);
		if (now_ms - a->seen_ms < s->cfg.agent_stale_ms)
			break;
		gs_list_remove(&a->link);
		a->fresh = 0;
		s->agent_nodes[0]--, s->agent_nodes[1]++; /* fresh -> stale */
		gs_log_warn("node %s: the gpu-scheduler agent's data has not changed for %" PRId64
			    " s: stale, counted as none",
			    n->name, (now_ms - a->seen_ms) / 1000);
		if (gs_list_linked(&n->dirty)) {
			if (first == &n->dirty)
				first = first->next;
			gs_list_remove(&n->dirty);
		}
		gs_list_insert_before(first, &n->dirty);
	}
}

int64_t gs_sched__agent_deadline(const struct gs_sched *s)
{
	if (gs_list_empty(&s->agents))
		return -1;
	const struct gs_sched__agent *a = GS_CONTAINER_OF(gs_list_first(&s->agents), struct gs_sched__agent, link);
	return a->seen_ms + s->cfg.agent_stale_ms;
}

/* ---- lookups ----------------------------------------------------------------------------------- */

static int is_index(const char *dev, size_t len)
{
	return len > 0 && dev[0] >= '0' && dev[0] <= '9';
}

/* The ID of the GPU of index i on n, through the index table believed; NULL when unknown. */
static const char *index_id(const struct gs_sched__node *n, long i)
{
	if (!n->agent.table_moved)
		return gs_inuse_index_id(n->agent.data, i);
	return i >= 0 && (size_t)i < n->agent.n_table ? n->agent.table_ids[i] : NULL;
}

/* The physical ID of n's device dev (len bytes): through the index table for an index; a MIG
 * instance's parent GPU (the agent's mig line: its index, through the table); else dev itself when the
 * agent lists it (one of its replicas); NULL when unknown. */
static const char *device_id(const struct gs_sched__node *n, const char *dev, size_t len)
{
	long parent;

	if (is_index(dev, len))
		return index_id(n, strtol(dev, NULL, 10));
	if ((parent = gs_inuse_mig_parent(n->agent.data, dev, len)) >= 0)
		return index_id(n, parent);
	return gs_hmap_get(&n->agent.ids, dev, len) ? dev : NULL;
}

/* The index of the GPU n's device dev (len bytes) is, or is part of: an index; a MIG instance's parent
 * (*mig set); a GPU ID of the table believed. -1 when the data does not say. */
static long gpu_of(const struct gs_sched__node *n, const char *dev, size_t len, int *mig)
{
	const struct gs_inuse *d = n->agent.data;
	size_t n_ids = n->agent.table_moved ? n->agent.n_table : d ? d->n_index : 0;
	const char *id;
	long gpu;

	*mig = 0;
	if (is_index(dev, len))
		return strtol(dev, NULL, 10);
	if ((gpu = gs_inuse_mig_parent(d, dev, len)) >= 0) {
		*mig = 1;
		return gpu;
	}
	for (size_t i = 0; i < n_ids; i++)
		if ((id = index_id(n, (long)i)) && strlen(id) == len && memcmp(id, dev, len) == 0)
			return (long)i;
	return -1;
}

void gs_sched__agent_gpu(const struct gs_sched__node *n, const char *dev, long *index, const char **id)
{
	size_t len = strlen(dev);
	int mig;

	/* a MIG instance is its parent GPU's: the GPU exporters label it so */
	*index = gpu_of(n, dev, len, &mig);
	*id = is_index(dev, len) || mig ? device_id(n, dev, len) : dev;
}

const void *gs_sched__agent_related(const struct gs_sched__node *n, const char *dev, size_t len, gs_sched__name_fn fn,
				    void *ud)
{
	const struct gs_inuse *d = n->agent.data;
	const char *id;
	const void *r = NULL;
	int mig;
	long gpu = d ? gpu_of(n, dev, len, &mig) : -1;
	char idx[24];

	if (gpu < 0)
		return NULL;
	/* the GPU by its index and by its ID, but by the name dev is */
	snprintf(idx, sizeof(idx), "%ld", gpu);
	id = index_id(n, gpu);
	if ((mig || !is_index(dev, len)) && (r = fn(idx, strlen(idx), ud)))
		return r;
	if (id && (mig || is_index(dev, len)) && (r = fn(id, strlen(id), ud)))
		return r;
	/* a GPU's MIG instances */
	for (size_t k = 0; !mig && k < d->n_mig; k++)
		if ((long)d->mig[k].parent == gpu && (r = fn(d->mig[k].id, strlen(d->mig[k].id), ud)))
			return r;
	return NULL;
}

/* 1 when the agent's holder is a pod bound to n now, other than self_key and not set aside by a
 * preemption's what-if. */
static int live(const struct gs_sched__node *n, const char *holder, const char *self_key)
{
	const struct gs_sched__use *u = gs_hmap_get_str(&n->keyed, holder);

	return (!self_key || strcmp(holder, self_key) != 0) && u && !u->hidden;
}

const struct gs_inuse_dev *gs_sched__plugin_holder(const struct gs_sched__node *n, const char *dev, size_t len,
						   const char *self_key)
{
	const struct gs_inuse *d = n->agent.data;
	const char *id = n->agent.fresh ? device_id(n, dev, len) : NULL;
	int mig = id && gs_inuse_mig_parent(d, dev, len) >= 0;
	size_t at = id ? (uintptr_t)gs_hmap_get(&n->agent.ids, id, id == dev ? len : strlen(id)) : 0;

	/* the GPU, or any replica or MIG instance of it, that a live pod holds: the first. A MIG instance
	 * wanted alone is held by the holder of that instance or of its whole GPU, not of another instance. */
	for (; at; at = n->agent.chain[at - 1]) {
		const struct gs_inuse_dev *v = &d->devs[at - 1];
		if (mig && gs_inuse_mig_parent(d, v->id, strlen(v->id)) >= 0 &&
		    (strlen(v->id) != len || memcmp(v->id, dev, len) != 0))
			continue;
		if (live(n, v->holder, self_key))
			return v;
	}
	return NULL;
}

void gs_sched__agent_why_unknown(const struct gs_sched *s, const struct gs_sched__node *n, char *out, size_t size)
{
	const struct gs_sched__agent *a = &n->agent;

	if (!a->text)
		snprintf(out, size, "%s has no gpu-scheduler agent data, docs/agent.md", n->name);
	else if (!a->data)
		snprintf(out, size, "the gpu-scheduler agent on %s %s", n->name, a->problem);
	else if (!a->fresh)
		snprintf(out, size, "the gpu-scheduler agent's data for %s is stale (unchanged for over %" PRId64 " s)",
			 n->name, s->cfg.agent_stale_ms / 1000);
	else if (a->table_moved)
		snprintf(out, size,
			 "the agent's GPU index table for %s changed without a reboot and is not believed, and the one "
			 "believed has no such GPU (docs/agent.md)",
			 n->name);
	else
		snprintf(out, size,
			 "the agent's data for %s has no GPU index table to match this map's indices "
			 "(write the map with GPU UUIDs, or give the agent /proc/driver/nvidia)",
			 n->name);
}

/* ---- the fit ----------------------------------------------------------------------------------- */

int64_t gs_sched__plugin_request(const struct gs_sched *s, const struct gs_sched__req *r)
{
	int64_t v = 0;

	for (uint32_t i = 0; i < r->n_ext; i++)
		if (s->res_gpu[r->ext[i].id])
			v = gs_num_sat_add(v, r->ext[i].v);
	return v;
}

/*
 * Without the agent's data: the pods on n (but self_key) whose requests of the plugin's GPU resources
 * are counted (n->plugin_gpus), into names as named_gpus writes them. O(n's uses).
 */
static void plugin_pods(const struct gs_sched *s, const struct gs_sched__node *n, const char *self_key, char *names,
			size_t size)
{
	const struct gs_list *l;
	size_t at = 0, named = 0, others = 0;

	names[0] = '\0';
	GS_LIST_FOREACH(l, &n->uses) {
		const struct gs_sched__use *u = GS_CONTAINER_OF(l, struct gs_sched__use, nlink);
		if (u->n_holds || u->hidden || !u->key || strcmp(u->key, self_key) == 0 ||
		    !gs_sched__plugin_request(s, &u->req))
			continue;
		if (gs_sched__holder_shown(u->key, self_key) != u->key)
			others++;
		else if (named < 3 && at < size)
			at += (size_t)snprintf(names + at, size - at, "%s%s", named++ ? ", " : "", u->key);
		else if (named++ == 3 && at < size)
			at += (size_t)snprintf(names + at, size - at, ", ...");
	}
	if (others && at < size)
		snprintf(names + at, size - at, "%s%zu %s", at ? ", " : "", others,
			 others == 1 ? "pod of another namespace" : "pods of other namespaces");
}

/* A device the agent lists under one of the plugin's GPU resources (cfg.gpu_resources). */
static int gpu_device(const struct gs_sched *s, const struct gs_inuse_dev *v)
{
	return gs_inuse_resource_match(s->cfg.gpu_resources, v->resource);
}

/* 1 when device i of n's data is the first GPU device of its physical GPU held by a live pod (the one
 * that counts the GPU). O(the GPU's replicas). */
static int first_live_replica(const struct gs_sched *s, const struct gs_sched__node *n, size_t i, const char *self_key)
{
	const struct gs_inuse_dev *v = &n->agent.data->devs[i];
	const char *id;
	size_t len, at;

	gs_inuse_physical(n->agent.data, v->id, strlen(v->id), &id, &len);
	at = (uintptr_t)gs_hmap_get(&n->agent.ids, id, len);

	for (; at && at - 1 != i; at = n->agent.chain[at - 1]) {
		const struct gs_inuse_dev *w = &n->agent.data->devs[at - 1];
		if (gpu_device(s, w) && live(n, w->holder, self_key))
			return 0;
	}
	return 1;
}

/*
 * The device plugin's GPUs on n held by live pods other than self_key, by the agent's data: the
 * physical GPUs (a GPU counted once however many of its replicas are held), and in *listed the devices
 * (replicas) themselves, which the pods' requests count. Into names the first three holders of
 * self_key's namespace, then how many GPUs pods of other namespaces hold (gs_sched__holder_shown: their
 * names are not told).
 */
static int64_t named_gpus(const struct gs_sched *s, const struct gs_sched__node *n, const char *self_key,
			  int64_t *listed, char *names, size_t size)
{
	const struct gs_inuse *d = n->agent.data;
	int64_t count = 0, named = 0, others = 0;
	size_t at = 0;

	names[0] = '\0';
	*listed = 0;
	for (size_t i = 0; i < d->n_devs; i++) {
		const struct gs_inuse_dev *v = &d->devs[i];
		if (!gpu_device(s, v) || !live(n, v->holder, self_key))
			continue;
		++*listed;
		if (!first_live_replica(s, n, i, self_key))
			continue; /* its GPU was counted with an earlier replica */
		count++;
		if (gs_sched__holder_shown(v->holder, self_key) != v->holder)
			others++;
		else if (named < 3 && at < size)
			at += (size_t)snprintf(names + at, size - at, "%s%s", named++ ? ", " : "", v->holder);
		else if (named++ == 3 && at < size)
			at += (size_t)snprintf(names + at, size - at, ", ...");
	}
	if (others && at < size)
		snprintf(names + at, size - at, "%s%lld held by pods of other namespaces", at ? ", " : "",
			 (long long)others);
	return count;
}

enum gs_wait_reason gs_sched__fit_plugin(const struct gs_sched *s, const struct gs_sched__pod *p,
					 const struct gs_sched__node *n, char *msg, size_t size)
{
	int64_t held = (int64_t)(gs_hmap_len(&n->ledger) - n->hidden_devs), more = 0, named = 0, plugin, unknown;
	int unresolved = 0;
	char names[200] = "", why[320], gave[80];

	for (const char *q = p->entry->devices; *q;) {
		size_t len;
		const char *d = q;
		q = gs_sched__next_dev(q, &len);
		if (!len)
			continue;
		const struct gs_sched__dev *dv = gs_hmap_get(&n->ledger, d, len);
		more += !dv || dv->n_hidden == dv->n;
		if (!n->agent.fresh)
			continue;
		const struct gs_inuse_dev *h = gs_sched__plugin_holder(n, d, len, p->key);
		if (h) {
			if (is_index(d, len))
				snprintf(msg, size, "%s GPU %.*s (%s) is held by %s through the device plugin", n->name,
					 (int)len, d, h->id, gs_sched__holder_shown(h->holder, p->key));
			else
				snprintf(msg, size, "%s device %s is held by %s through the device plugin", n->name,
					 h->id, gs_sched__holder_shown(h->holder, p->key));
			return GS_WAIT_DEVICE_BUSY;
		}
		unresolved += !device_id(n, d, len) && is_index(d, len);
	}
	if (n->gpus < 0)
		return GS_WAIT_NONE; /* no GPU count to compare with (NODE_DEVICES judged the indices) */
	/* Devices of unknown identity: GPUs, or replicas of GPUs, each on a GPU of its own at worst (so never
	 * more than the node has); granted and not listed yet when the agent lists the others. */
	if (n->agent.fresh) {
		int64_t listed;
		named = named_gpus(s, n, p->key, &listed, names, sizeof(names));
		unknown = n->plugin_gpus > listed ? n->plugin_gpus - listed : 0;
		if (!unresolved && !unknown)
			return GS_WAIT_NONE; /* every plugin device is known, and none is the entry's */
	} else {
		unknown = n->plugin_gpus;
	}
	if (!n->agent.fresh && unknown)
		plugin_pods(s, n, p->key, names, sizeof(names));
	plugin = named + (unknown < n->gpus ? unknown : n->gpus);
	if (plugin <= 0 || held + more + plugin <= n->gpus)
		return GS_WAIT_NONE;
	if (!n->agent.fresh || unresolved)
		gs_sched__agent_why_unknown(s, n, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "some are not listed by the agent yet");
	if (unknown > n->gpus) /* replicas: more than the node has GPUs */
		snprintf(gave, sizeof(gave), "%" PRId64 " replicas (at most %" PRId64 " GPUs)", named + unknown,
			 plugin);
	else
		snprintf(gave, sizeof(gave), "%" PRId64, plugin);
	snprintf(msg, size,
		 "%s has %" PRId64 " GPUs: the device plugin gave %s to pods requesting %s%s%s%s (which "
		 "ones is unknown: %s), maps hold %" PRId64 ", and this entry needs %" PRId64 " more",
		 n->name, n->gpus, gave,
		 strcmp(s->cfg.gpu_resources, GS_SCHED_GPU_RESOURCES) == 0 ? "GPUs" : s->cfg.gpu_resources,
		 names[0] ? " (" : "", names, names[0] ? ")" : "", why, held, more);
	return GS_WAIT_DEVICE_BUSY;
}

/* ---- conflicts --------------------------------------------------------------------------------- */

struct conflict_walk {
	struct gs_sched *s;
	struct gs_sched__node *n;
	const struct gs_inuse_dev *h;
	const char *dev;
	size_t len;
	struct gs_hmap *now; /* conflicts as they are now, keys allocated */
};

/* The conflict's message as told to a reader in the namespace of viewer (gs_sched__holder_shown). */
static void conflict_message(char *out, size_t size, const struct gs_sched__node *n, const struct gs_sched__use *u,
			     const struct gs_inuse_dev *h, const char *dev, size_t len, const char *viewer)
{
	int idx = is_index(dev, len);
	snprintf(out, size,
		 "%s %s%.*s%s%s%s is given by a gpu-scheduling-map to %s and by the device plugin to %s: two workloads "
		 "share it (keep the device plugin off mapped GPUs: taint the node gpu-scheduler.io/dedicated=true:"
		 "NoSchedule, docs/agent.md)",
		 n->name, idx ? "GPU " : "device ", (int)len, dev, idx ? " (" : "", idx ? h->id : "", idx ? ")" : "",
		 viewer ? gs_sched__holder_shown(u->key, viewer) : u->key,
		 viewer ? gs_sched__holder_shown(h->holder, viewer) : h->holder);
}

static void queue_conflict(struct gs_sched *s, struct gs_sched__node *n, const struct gs_sched__use *u,
			   const struct gs_inuse_dev *h, const char *dev, size_t len)
{
	char message[600], other[600];
	const char *slash = strchr(u->key, '/'), *oslash = strchr(h->holder, '/');
	const struct gs_sched__use *o = gs_hmap_get_str(&n->keyed, h->holder);

	if (!slash || !oslash || !o)
		return;
	conflict_message(message, sizeof(message), n, u, h, dev, len, u->key);
	conflict_message(other, sizeof(other), n, u, h, dev, len, h->holder);
	size_t lu = strlen(u->uid) + 1, lk = strlen(u->key) + 1, lh = strlen(h->holder) + 1, ln = strlen(n->name) + 1,
	       lm = strlen(message) + 1, lo = strlen(o->uid) + 1, lx = strlen(other) + 1;
	struct gs_sched__conflict *c = gs_xmalloc(sizeof(*c) + lu + lk + lh + ln + lm + lo + lx);
	char *at = (char *)(c + 1);
	c->uid = memcpy(at, u->uid, lu), at += lu;
	c->other_uid = memcpy(at, o->uid, lo), at += lo;
	c->ns = memcpy(at, u->key, lk), at[slash - u->key] = '\0', c->name = at + (slash - u->key) + 1, at += lk;
	c->other_ns = memcpy(at, h->holder, lh), at[oslash - h->holder] = '\0';
	c->other_name = at + (oslash - h->holder) + 1, at += lh;
	c->node = memcpy(at, n->name, ln), at += ln;
	c->message = memcpy(at, message, lm), at += lm;
	c->other_message = memcpy(at, other, lx);
	gs_list_insert_tail(&s->conflicts, &c->link);
	s->conflicts_seen++;
	/* The operator's log names both. */
	conflict_message(message, sizeof(message), n, u, h, dev, len, NULL);
	gs_log_warn("%s", message);
}

static void conflict_holder(const struct gs_sched__use *u, int shared, void *ud)
{
	struct conflict_walk *w = ud;
	char key[1200];
	int kl;

	(void)shared;
	if (!u->key || strcmp(u->key, w->h->holder) == 0)
		return;
	/* A gang member's reservation and a nomination (sched_preempt.h, made for a pending pod before its
	 * use is marked) run nothing: no conflict. */
	const struct gs_sched__pod *p = gs_hmap_get_str(&w->s->pods, u->uid);
	if ((p && (p->reserved || p->state == GS_POD_WAITING || p->state == GS_POD_QUEUED)) || u->nominated)
		return;
	kl = snprintf(key, sizeof(key), "%s %s %s", w->h->id, w->h->holder, u->uid);
	if (kl < 0 || (size_t)kl >= sizeof(key) || gs_hmap_get_str(w->now, key))
		return;
	gs_sched__hmap_put(w->now, gs_xstrdup(key), (void *)1);
	if (!gs_hmap_get_str(&w->n->agent.conflicts, key)) /* else reported when it began */
		queue_conflict(w->s, w->n, u, w->h, w->dev, w->len);
}

void gs_sched__agent_conflicts(struct gs_sched *s, struct gs_sched__node *n)
{
	struct gs_hmap now;
	struct gs_hmap_iter it = {0};

	if (!n->agent.fresh)
		return;
	gs_hmap_init(&now, 0);
	while (gs_hmap_next(&n->ledger, &it)) {
		const struct gs_sched__dev *d = it.val;
		size_t len = strlen(d->name);
		struct conflict_walk w = {.s = s, .n = n, .dev = d->name, .len = len, .now = &now};
		if (!(w.h = gs_sched__plugin_holder(n, d->name, len, NULL)))
			continue;
		gs_sched__dev_holders(n, d->name, len, conflict_holder, &w);
	}
	conflicts_reset(&n->agent);
	n->agent.conflicts = now;
}

int gs_sched__next_conflict(struct gs_sched *s, struct gs_report *out)
{
	struct gs_sched__conflict *c;

	free(s->reported);
	s->reported = NULL;
	if (gs_list_empty(&s->conflicts))
		return 0;
	c = GS_CONTAINER_OF(gs_list_first(&s->conflicts), struct gs_sched__conflict, link);
	gs_list_remove(&c->link);
	s->reported = c;
	*out = (struct gs_report){
		.kind = GS_REPORT_DEVICE_CONFLICT,
		.uid = c->uid,
		.ns = c->ns,
		.name = c->name,
		.message = c->message,
		.node = c->node,
		.index = -1,
		.other_uid = c->other_uid,
		.other_ns = c->other_ns,
		.other_name = c->other_name,
		.other_message = c->other_message,
	};
	return 1;
}

void gs_sched__conflicts_free(struct gs_sched *s)
{
	free(s->reported);
	s->reported = NULL;
	while (!gs_list_empty(&s->conflicts)) {
		struct gs_list *l = gs_list_first(&s->conflicts);
		gs_list_remove(l);
		free(GS_CONTAINER_OF(l, struct gs_sched__conflict, link));
	}
}
