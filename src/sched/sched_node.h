/*
 * sched_node.h: the engine's bottom layer (sched_node.c): node slots, the alias index's counts, and the
 * copies every layer above makes. It calls nothing of the engine above it.
 *
 * A slot exists while the node exists OR some pod waits for it OR some pod uses it OR a walk over its
 * waiters pins it (sched_int.h, struct gs_sched__node). gs_sched__node_gc frees it the moment none of
 * these holds; at that moment everything the upper layers keep in it is empty, by invariant (checked):
 * no ledger entry, port, use or keyed use (the uses are gone), no agent data (cleared when the node is
 * deleted, never set on a slot that was not present). So freeing a slot is memory only; gs_sched_free,
 * which frees slots still in use, releases the ledgers, totals, ports and agent data itself first.
 */
#ifndef GS_SCHED_SCHED_NODE_H
#define GS_SCHED_SCHED_NODE_H

#include "sched/sched_int.h"

/* gs_xstrdup (core/alloc.h, which the engine uses for all its records), NULL staying NULL. */
char *gs_sched__xstrdup_null(const char *s);
/*
 * The key an owner groups pods by (the ledger's buckets, gangs, the workload's owner): "NS/UID", the
 * controller's uid qualified by the pod's namespace (an ownerReference names an object of the pod's own
 * namespace, so a pod naming another namespace's StatefulSet by uid is not of that StatefulSet: issue
 * 36, item 4). Invariant: two pods share an owner key only when they are in one namespace. NULL when
 * uid is NULL (a bare pod: its own uid is its key, and no key has a '/' before a namespace's end but
 * these). Allocated (gs_xmalloc).
 */
char *gs_sched__owner_key(const char *ns, const char *uid);
/* The uid part of an owner key (what messages, explain and events show), or key itself for a bare
 * pod's uid. */
const char *gs_sched__owner_uid(const char *key);
/* A copy of n labels (NULL when n <= 0); released by gs_pod_obj_free/gs_node_obj_free with the record. */
struct gs_label *gs_sched__labels_dup(const struct gs_label *l, int n);
/* gs_hmap_put_str that cannot fail (out of memory aborts, gs_oom). */
void gs_sched__hmap_put(struct gs_hmap *m, const char *key, void *val);

/* The slot for a node name, created (absent, no waiters) when there is none. */
struct gs_sched__node *gs_sched__node_slot(struct gs_sched *s, const char *name);
/* Frees a node slot nobody needs any more (absent, no waiters, no uses, not pinned); else nothing. */
void gs_sched__node_gc(struct gs_sched *s, struct gs_sched__node *n);
/* Frees a slot's memory only: its ledger, ports and agent data must be empty or released already. */
void gs_sched__node_free(struct gs_sched__node *n);
/* The number of pods waiting for n's alias value (their map name may resolve to n). O(1). */
size_t gs_sched__alias_waiters(const struct gs_sched *s, const struct gs_sched__node *n);

/* gs_wait_reason_name (sched.h): "NODE_MISSING", ...; here, at the bottom, since every layer's messages
 * may name a reason. */
const char *gs_sched__wait_reason_name(enum gs_wait_reason r);
/* gs_wait_reason_retry's phrases (sched.h), here below sched_explain.c, which reads them too. */
const char *gs_sched__wait_reason_retry(enum gs_wait_reason r);

/* n->gpus and n->gpus_from from its agent table believed, its labels and what it advertises (its obj), as
 * they are now: inuse.h's gs_inuse_node_gpus, the one rule lint and the webhook follow too. */
void gs_sched__node_gpus(struct gs_sched__node *n);
/* "advertises 4 nvidia.com/gpu", "has 4 GPUs by its agent's index table", "has 4 GPUs by its label
 * nvidia.com/gpu.count": n's count and where it comes from, for messages. */
void gs_sched__node_gpus_words(const struct gs_sched__node *n, char *out, size_t size);

#endif
