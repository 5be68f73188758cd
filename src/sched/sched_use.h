/*
 * sched_use.h: what the pods on a node take from it (sched_use.c), above sched_agent.h: resource
 * requests in compact form, each pod's use (sched_int.h, struct gs_sched__use) counted in its node's
 * running totals, host ports and ledger, and the fit of a pod on a node against them (which asks the
 * ledger, then the agent's data).
 *
 * Invariants: a use is in s->uses exactly while it is counted in its node (n->used, used_pods,
 * n_uses, ports, ledger, plugin_gpus); the keyed index n->keyed holds, by "ns/name", the newest use
 * with extended resources of that name. Removing a use marks its node dirty (s->dirty) when pods wait
 * for it, so that placement looks at them again once, at the next pull; adding one marks nothing.
 */
#ifndef GS_SCHED_SCHED_USE_H
#define GS_SCHED_SCHED_USE_H

#include "sched/sched_int.h"

/* The id of an extended resource name, made on first use. */
uint32_t gs_sched__res_id(struct gs_sched *s, const char *name);
/* A compact request from a resource list (ext names to ids). */
void gs_sched__req_from(struct gs_sched *s, struct gs_sched__req *out, const struct gs_resources *r);
void gs_sched__req_free(struct gs_sched__req *r);
int64_t gs_sched__req_ext(const struct gs_sched__req *r, uint32_t id);
/* Copies the host ports of a pod record (counts 0). */
struct gs_sched__port *gs_sched__ports_from(const struct gs_pod_obj *o, size_t *n);
void gs_sched__ports_free(struct gs_sched__port *p, size_t n);
/*
 * Creates the use of uid on node (replacing an existing one) and adds it to the node's totals, ports
 * and ledger. devices: "0,1" (NULL or "" for none). Marks nothing dirty: usage only went up.
 */
struct gs_sched__use *gs_sched__use_add(struct gs_sched *s, const char *uid, struct gs_sched__node *node,
					const struct gs_sched__req *req, const struct gs_sched__port *ports,
					size_t n_ports, const char *devices, const char *owner, int shared,
					const char *key);
/* u's labels become l[0..n) (copied, one allocation; nothing done when they are the same). */
void gs_sched__use_labels(struct gs_sched__use *u, const struct gs_label *l, int n);
/* Records on u an ignored claim of devices and the pod's "ns/name" (both copied) and why (static). */
void gs_sched__use_ignore(struct gs_sched__use *u, const char *devices, const char *why, const char *key);
/* Removes the use of uid (if any): totals down, node marked dirty for its waiters. 1 if it existed. */
int gs_sched__use_remove(struct gs_sched *s, const char *uid);
/* Removes the use of uid (if any) and returns its node, neither marked dirty nor collected (the caller
 * does both, or puts the use back: a gang member placed again, sched_gang.h); NULL when none. */
struct gs_sched__node *gs_sched__use_take(struct gs_sched *s, const char *uid);
/* Marks n dirty (s->dirty) when pods wait for it or for its alias value: usage went down. */
void gs_sched__node_mark_dirty(struct gs_sched *s, struct gs_sched__node *n);
/* Counts pod p of ours on node n (its entry's, resolved) as a use: its requests, host ports and its
 * entry's devices, owned by its owner. The reservation of a Binding in flight or of a gang member. */
void gs_sched__pod_reserve(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n);
/* Nominates p to n (sched_preempt.h): its claim there, a use of its uid marked nominated (sched_int.h),
 * replacing any use of that uid; p->status_nominated is forgotten. */
void gs_sched__pod_nominate(struct gs_sched *s, struct gs_sched__pod *p, struct gs_sched__node *n);
/* u is no nomination any more (the pod's own use from here on, or going): the counts follow. */
void gs_sched__use_unnominate(struct gs_sched *s, struct gs_sched__use *u);
/*
 * Sets u aside (hide) or back: its requests, host ports, device-plugin GPUs and ledger holds stop or
 * start counting in its node's fit (gs_sched__fit and its parts) without the use going anywhere: no
 * list, index or order changes, no node marked dirty. Only within one call (sched_preempt.c's what-if,
 * gs_sched__nominations_hide), which puts back every use it set aside before returning (u->hidden is
 * never set between calls).
 */
void gs_sched__use_hide(struct gs_sched *s, struct gs_sched__use *u, int hide);
/*
 * Sets aside (hide) or back the nominations on n (sched_preempt.h) that do not count for pod p: its own,
 * and those of lower priority than its (kube-scheduler counts a nominated pod for the pods of its
 * priority or lower). gs_sched__fit does it around its parts; explain, which runs them one by one, too.
 * O(n's uses) when n has a nomination.
 */
void gs_sched__nominations_hide(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n, int hide);
/* Frees a use's memory only (the engine is being freed: no totals or ledger kept up to date). */
void gs_sched__use_free(struct gs_sched__use *u);
/* Releases a node's totals, ports and ledger, whatever still holds them (the slot is being freed). */
void gs_sched__node_usage_free(struct gs_sched__node *n);

/*
 * The first reason pod p (its spec, owner, devices) cannot take node n now, beside the node's own
 * state: HOST_PORT, INSUFFICIENT_RESOURCE or DEVICE_BUSY with msg, or NONE.
 */
enum gs_wait_reason gs_sched__fit(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
				  char *msg, size_t size);
/* 1 when r is one of the fit's reasons (HOST_PORT, INSUFFICIENT_RESOURCE, DEVICE_BUSY): what pods on the
 * node hold, the reasons preemption may clear (sched_preempt.h). */
int gs_sched__fit_reason(enum gs_wait_reason r);
/* The three parts of gs_sched__fit, in its order, each on its own (explain runs them all). */
enum gs_wait_reason gs_sched__fit_ports(const struct gs_sched__pod *p, const struct gs_sched__node *n, char *msg,
					size_t size);
enum gs_wait_reason gs_sched__fit_resources(struct gs_sched *s, const struct gs_sched__pod *p, struct gs_sched__node *n,
					    char *msg, size_t size);
enum gs_wait_reason gs_sched__fit_devices(const struct gs_sched *s, const struct gs_sched__pod *p,
					  const struct gs_sched__node *n, char *msg, size_t size);

#endif
