/*
 * sched_node.c: the engine's bottom layer: node slots (made, freed), the alias index's counts, and the
 * small copies every layer above makes. See sched_node.h; docs/architecture.md draws the layers.
 */
#include "sched/sched_node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

void gs_sched__hmap_put(struct gs_hmap *m, const char *key, void *val)
{
	if (gs_hmap_put_str(m, key, val, NULL) < 0)
		gs_oom(0);
}

char *gs_sched__xstrdup_null(const char *str)
{
	return str ? gs_xstrdup(str) : NULL;
}

char *gs_sched__owner_key(const char *ns, const char *uid)
{
	size_t nl, ul;
	char *k;

	if (!uid)
		return NULL;
	nl = strlen(ns);
	ul = strlen(uid);
	k = gs_xmalloc(nl + ul + 2);
	memcpy(k, ns, nl);
	k[nl] = '/';
	memcpy(k + nl + 1, uid, ul + 1);
	return k;
}

const char *gs_sched__owner_uid(const char *key)
{
	const char *slash = strchr(key, '/');

	return slash ? slash + 1 : key;
}

struct gs_label *gs_sched__labels_dup(const struct gs_label *l, int n)
{
	struct gs_label *c;

	if (n <= 0)
		return NULL;
	c = gs_xcalloc((size_t)n, sizeof(*c));
	for (int i = 0; i < n; i++) {
		c[i].key = gs_xstrdup(l[i].key);
		c[i].value = gs_sched__xstrdup_null(l[i].value);
	}
	return c;
}

/* ---- node slots ---------------------------------------------------------------------------------- */

/* The slot's memory (sched_node.h): what is left in it is empty by invariant on the gc path;
 * gs_sched_free releases the ledgers, totals, ports and agent data before. */
void gs_sched__node_free(struct gs_sched__node *n)
{
	gs_hmap_free(&n->agent.ids);
	gs_hmap_free(&n->agent.conflicts);
	gs_hmap_free(&n->keyed);
	gs_hmap_free(&n->ledger);
	gs_node_obj_free(&n->obj);
	free(n->alloc.ext);
	free(n->used.ext);
	free(n->ports);
	free(n);
}

struct gs_sched__node *gs_sched__node_slot(struct gs_sched *s, const char *name)
{
	struct gs_sched__node *n = gs_hmap_get_str(&s->nodes, name);
	size_t len;

	if (n)
		return n;
	len = strlen(name);
	n = gs_xmalloc(sizeof(*n) + len + 1);
	memset(n, 0, sizeof(*n));
	memcpy(n->name, name, len + 1);
	gs_list_init(&n->waiters);
	gs_list_init(&n->uses);
	gs_list_init(&n->dirty);
	gs_list_init(&n->alink);
	gs_list_init(&n->agent.link);
	gs_hmap_init(&n->ledger, 0);
	gs_hmap_init(&n->keyed, 0);
	gs_hmap_init(&n->agent.ids, 0);
	gs_hmap_init(&n->agent.conflicts, 0);
	n->gpus = -1;
	n->obj.gpus = -1;
	gs_sched__hmap_put(&s->nodes, n->name, n);
	return n;
}

void gs_sched__node_gc(struct gs_sched *s, struct gs_sched__node *n)
{
	if (n->present || n->n_waiters || n->n_uses || n->pinned)
		return;
	GS_ASSERT(gs_hmap_len(&n->ledger) == 0 && n->n_ports == 0 && n->used_pods == 0 && !n->alias);
	GS_ASSERT(gs_hmap_len(&n->keyed) == 0 && !n->agent.fresh && !n->agent.text && !n->agent.data &&
		  !n->agent.problem && gs_hmap_len(&n->agent.conflicts) == 0);
	if (gs_list_linked(&n->dirty))
		gs_list_remove(&n->dirty);
	gs_hmap_del_str(&s->nodes, n->name, NULL);
	gs_sched__node_free(n);
}

size_t gs_sched__alias_waiters(const struct gs_sched *s, const struct gs_sched__node *n)
{
	const struct gs_sched__node *a = n->alias ? gs_hmap_get_str(&s->nodes, n->alias->value) : NULL;

	return a && a != n ? a->n_waiters : 0;
}

const char *gs_sched__wait_reason_name(enum gs_wait_reason r)
{
	static const char *const names[GS_WAIT__COUNT] = {
		"NONE",
		"NO_MAP",
		"MAP_INVALID",
		"NO_INDEX",
		"NO_ENTRY",
		"NOT_MUTATED",
		"NODE_MISSING",
		"NODE_NOT_READY",
		"NODE_CORDONED",
		"NODE_DEVICES",
		"SCHEDULING_GATED",
		"NODE_AFFINITY",
		"TAINT",
		"HOST_PORT",
		"INSUFFICIENT_RESOURCE",
		"DEVICE_BUSY",
		"NODE_ALIAS_AMBIGUOUS",
		"NODE_POLICY",
		"GANG_INVALID",
		"GANG",
		"GANG_TIMED_OUT",
		"MAP_MISSING",
		"GANG_LIMIT",
	};
	return (unsigned)r < GS_WAIT__COUNT ? names[r] : "?";
}

const char *gs_sched__wait_reason_retry(enum gs_wait_reason r)
{
	switch (r) {
	case GS_WAIT_NONE:
		return "";
	case GS_WAIT_NO_MAP:
	case GS_WAIT_MAP_INVALID:
	case GS_WAIT_NO_INDEX:
	case GS_WAIT_NO_ENTRY:
	case GS_WAIT_NOT_MUTATED:
		return "an update of the pod itself (or its recreation by its controller with a corrected template)";
	case GS_WAIT_SCHEDULING_GATED:
		return "the pod's last scheduling gate being removed";
	case GS_WAIT_NODE_MISSING:
		return "the node joining the cluster (or a node gaining the alias label)";
	case GS_WAIT_NODE_POLICY:
		return "the node's gpu-scheduler.io/allowed-namespaces annotation listing the pod's namespace";
	case GS_WAIT_NODE_ALIAS_AMBIGUOUS:
		return "the alias label being removed from all but one of the nodes that carry it";
	case GS_WAIT_NODE_NOT_READY:
		return "the node becoming Ready";
	case GS_WAIT_NODE_CORDONED:
		return "the node being uncordoned";
	case GS_WAIT_NODE_DEVICES:
		return "the node having more GPUs";
	case GS_WAIT_NODE_AFFINITY:
		return "the node's labels changing, or the pod's selector or affinity";
	case GS_WAIT_TAINT:
		return "the taint being removed from the node, or a toleration added to the pod";
	case GS_WAIT_HOST_PORT:
		return "the pod using the host port on the node ending";
	case GS_WAIT_INSUFFICIENT_RESOURCE:
		return "pods on the node ending, or the node's allocatable growing";
	case GS_WAIT_DEVICE_BUSY:
		return "the pods holding the devices ending";
	case GS_WAIT_GANG_INVALID:
		return "an update of the pod with valid gpu-scheduler.io/placement, gang-timeout and gang-size "
		       "annotations (or its recreation from a corrected template)";
	case GS_WAIT_GANG:
		return "every other member of its all-or-nothing gang fitting its node too (they are then bound "
		       "together)";
	case GS_WAIT_GANG_TIMED_OUT:
		return "its gang's rest after a timeout ending (it then gathers again)";
	case GS_WAIT_MAP_MISSING:
		return "the GPUPlacementMap it names being created in its namespace";
	case GS_WAIT_GANG_LIMIT:
		return "other all-or-nothing gangs of its namespace releasing their reservations (bound, timed out "
		       "or deleted), or a larger budget for the namespace";
	case GS_WAIT__COUNT:
		break;
	}
	return "";
}

void gs_sched__node_gpus(struct gs_sched__node *n)
{
	const char *label = NULL;

	for (int i = 0; i < n->obj.n_labels && !label; i++)
		if (strcmp(n->obj.labels[i].key, GS_GFD_COUNT_LABEL) == 0)
			label = n->obj.labels[i].value;
	n->gpus = gs_inuse_node_gpus(n->agent.n_table, label, n->obj.gpu_capacity, n->obj.gpus, &n->gpus_from);
}

void gs_sched__node_gpus_words(const struct gs_sched__node *n, char *out, size_t size)
{
	gs_inuse_node_gpus_words(n->gpus, n->gpus_from, out, size);
}
