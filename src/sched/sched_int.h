/*
 * sched_int.h: the engine's records and indexes, shared by sched.c (inputs, introspection) and
 * sched_place.c (placement, queues, pulls). Not a public header.
 */
#ifndef GS_SCHED_SCHED_INT_H
#define GS_SCHED_SCHED_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/hmap.h"
#include "sched/map.h"
#include "sched/sched.h"

/* An intrusive doubly-linked list; a head is a link pointing at itself when empty. */
struct gs_sched__link {
	struct gs_sched__link *prev, *next;
};

static inline void gs_sched__list_init(struct gs_sched__link *h)
{
	h->prev = h->next = h;
}

static inline int gs_sched__list_empty(const struct gs_sched__link *h)
{
	return h->next == h;
}

static inline void gs_sched__list_add_tail(struct gs_sched__link *h, struct gs_sched__link *l)
{
	l->prev = h->prev;
	l->next = h;
	h->prev->next = l;
	h->prev = l;
}

static inline void gs_sched__list_del(struct gs_sched__link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	l->prev = l->next = l;
}

#define GS_SCHED__CONTAINER(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/*
 * A node slot exists while the node exists OR some pod waits for it (a pod may name a node that has
 * not joined yet): the slot holds that node's waiter list.
 */
struct gs_sched__node {
	struct gs_sched__link waiters; /* pods WAITING with a NODE_* reason for this node */
	size_t n_waiters;
	int present;
	int ready;
	int unschedulable;
	int64_t gpus;
	char name[];                   /* the key of s->nodes */
};

struct gs_sched__pod {
	struct gs_sched__link qlink;    /* in s->bindq (QUEUED) or wait_node->waiters (WAITING) */
	struct gs_sched__link rlink;    /* in s->reportq when a report may be due */
	enum gs_pod_state state;
	enum gs_wait_reason reason;     /* with WAITING */
	struct gs_sched__node *wait_node; /* with a NODE_* reason */
	char *msg;                      /* with WAITING: why */
	enum gs_wait_reason reported_reason;
	char *reported;                 /* the last reported message, or NULL */

	/* What the pod's own fields say; recomputed on upserts, never from node events. */
	struct gs_map *map;             /* a reference, or NULL */
	const struct gs_map_entry *entry; /* in map; NULL unless the index has an entry */
	enum gs_wait_reason intrinsic;  /* NONE when the pod itself is ready to place */
	char *imsg;                     /* with intrinsic != NONE */
	long index;                     /* -1 when unknown */
	enum gs_index_source index_source;
	int recreate_ok;                /* owned by a StatefulSet or a Job */
	int64_t created_ms;
	char *rv;                       /* resource_version of the last upsert taken */

	unsigned attempts;              /* Bindings handed out */
	int64_t due_ms;                 /* with BACKOFF */
	size_t heap_pos;                /* with BACKOFF: position in s->heap */

	char *uid, *ns, *name, *key;    /* key is "ns/name"; all four in one allocation (uid) */
};

struct gs_sched {
	struct gs_sched_config cfg;     /* strings copied */
	struct gs_hmap pods;            /* uid -> pod (key borrowed from the pod) */
	struct gs_hmap pods_by_name;    /* "ns/name" -> pod (the newest uid for that name) */
	struct gs_hmap nodes;           /* name -> node slot (key borrowed from the slot) */
	struct gs_map_cache *maps;
	struct gs_sched__link bindq;    /* QUEUED pods, FIFO */
	struct gs_sched__link reportq;  /* pods whose report may be due, FIFO */
	struct gs_sched__pod **heap;    /* BACKOFF pods, a min-heap by due_ms */
	size_t heap_len, heap_cap;
	uint64_t rng;
	size_t by_state[GS_POD__COUNT];
	size_t waiting_by[GS_WAIT__COUNT];
	size_t nodes_present, nodes_schedulable;
	uint64_t binds_ok, binds_gone, binds_retry, reports;
};

/* Allocation of small records: aborts with a message on failure. */
void *gs_sched__xmalloc(size_t n);
char *gs_sched__xstrdup(const char *s);

/* sched_place.c */
/* The NODE_* reason a node (slot or NULL) blocks placement with, or NONE. */
enum gs_wait_reason gs_sched__node_block(const struct gs_sched__node *n);
void gs_sched__set_state(struct gs_sched *s, struct gs_sched__pod *p, enum gs_pod_state st);
/* Takes p out of the queue, waiter list or heap it is in (state unchanged). */
void gs_sched__detach(struct gs_sched *s, struct gs_sched__pod *p);
/* Queues p for binding or makes it wait, from its inputs and the node it names now. */
void gs_sched__place(struct gs_sched *s, struct gs_sched__pod *p);
/* Recomputes the pod's own inputs (map, index, entry, CUDA check) from o. */
void gs_sched__pod_inputs(struct gs_sched *s, struct gs_sched__pod *p, const struct gs_pod_obj *o);
/* The slot for a node name, created (absent, no waiters) when there is none. */
struct gs_sched__node *gs_sched__node_slot(struct gs_sched *s, const char *name);
/* Frees a node slot nobody needs any more (absent, no waiters). */
void gs_sched__node_gc(struct gs_sched *s, struct gs_sched__node *n);

#endif
