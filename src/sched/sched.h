/*
 * sched.h: the placement engine. Pure logic: no I/O, no clock reads (every call takes now_ms, a
 * monotonic or wall time in milliseconds as the caller likes, as long as it never goes backwards).
 *
 * The I/O layer feeds it node and pod events from its watches and PULLS decisions when it can act on
 * them (backpressure: nothing is pushed, nothing piles up outside the engine):
 *
 *     s = gs_sched_new(&cfg);
 *     on watch events:     gs_sched_node_upsert / node_delete / pod_upsert / pod_delete
 *     while (room for a request && gs_sched_next_bind(s, now, &d))   send a Binding for d
 *     on its response:     gs_sched_bind_done(s, d.uid, GS_BIND_OK | GS_BIND_GONE | GS_BIND_RETRY, now)
 *     while (room && gs_sched_next_report(s, now, &r))               post an Event for r
 *     arm a timer for gs_sched_next_deadline(s) and pull again when it fires
 *
 * A pod of ours (spec.schedulerName == cfg.scheduler_name) is placed on the node its
 * gpu-scheduling-map entry names for the pod's index (map.h), and nowhere else, when that node exists,
 * is Ready, is not cordoned, and would admit the pod as the kubelet does (checks.h: nodeSelector and
 * required node affinity, NoSchedule/NoExecute taints, host ports, resources and pod slots against
 * every pod on the node whatever its scheduler), and when no pod of another owner holds the entry's
 * devices (the ledger). Otherwise it waits with a reason, reported once per change, and is placed again
 * on the event that can clear it: its node's update, a pod on that node ending, its own update.
 *
 * Pods of other schedulers are kept as compact uses (node, requests, host ports, devices from
 * gpu-scheduler.io/assigned) while they are bound and not terminal. Pending pods are bound in order of
 * spec.priority (higher first), then creation time. docs/sched.md describes the states, the indexes
 * and the costs; every decision is O(1) per pod plus its own containers (a queue or retry step is
 * O(log q)).
 *
 * Ownership: inputs are copied as needed; the caller frees its objects after the call. Strings in a
 * decision, report or pod info are owned by the engine and valid until the next call that mutates it
 * (any call below except the const ones: gs_sched_next_deadline, gs_sched_stats, gs_sched_pod_info,
 * gs_sched_pod_find). Small allocations that fail abort the process with a message.
 */
#ifndef GS_SCHED_SCHED_H
#define GS_SCHED_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "sched/map.h"
#include "sched/objects.h"

struct gs_sched_config {
	const char *scheduler_name; /* required; pods with another spec.schedulerName are ignored */
	const char *annotation;     /* the map annotation's name, for messages ("gpu-scheduling-map") */
	int check_env;              /* refuse pods whose containers' CUDA_VISIBLE_DEVICES != the entry's */
	int recreate_unmutated;     /* flag NOT_MUTATED reports of StatefulSet/Job pods for deletion */
	int64_t backoff_min_ms;     /* first retry ceiling after GS_BIND_RETRY; default 200 */
	int64_t backoff_max_ms;     /* ceiling cap; default 10000 */
	size_t map_cache_size;      /* unreferenced parsed maps kept; default 256 */
	int device_sharing_any;     /* --device-sharing=any: the ledger never refuses (it still counts) */
	uint64_t seed;              /* jitter PRNG seed; 0 picks a fixed one (deterministic) */
};

/* Fills the defaults above (scheduler_name "gpu-scheduler", check_env on, recreate_unmutated off). */
void gs_sched_config_init(struct gs_sched_config *cfg);

struct gs_sched;

/* Copies cfg (and its strings). NULL when cfg->scheduler_name is NULL or empty. */
struct gs_sched *gs_sched_new(const struct gs_sched_config *cfg);
void gs_sched_free(struct gs_sched *s); /* NULL is fine */

/* ---- inputs ------------------------------------------------------------------------------------
 * Return 0, or -EINVAL for a record without its key fields (node: name; pod: uid, ns, name).
 * gs_sched_node_delete / gs_sched_pod_delete return -ENOENT for an unknown name / uid.
 */
int gs_sched_node_upsert(struct gs_sched *s, const struct gs_node_obj *n, int64_t now_ms);
int gs_sched_node_delete(struct gs_sched *s, const char *name, int64_t now_ms);
/*
 * A pod of another scheduler only counts as a use of its node while it has spec.nodeName and is not
 * terminal (deleting pods still hold their node until they are gone). Deleting or terminal pods of ours
 * leave the pending set for good. A pod with spec.nodeName is bound (the restart case, or our binding seen).
 * A bound pod stays bound whatever later upserts say: the engine never binds a pod twice. A pod whose
 * Binding is in flight or in backoff takes the new inputs but keeps its place; one forgotten after
 * GS_BIND_GONE is looked at again only when the upsert's resource_version differs (or is absent).
 */
int gs_sched_pod_upsert(struct gs_sched *s, const struct gs_pod_obj *p, int64_t now_ms);
int gs_sched_pod_delete(struct gs_sched *s, const char *uid, int64_t now_ms);

/* ---- decisions --------------------------------------------------------------------------------- */

struct gs_bind_decision {
	const char *uid, *ns, *name;
	const char *node;    /* bind here */
	const char *devices; /* canonical "0,1": the assigned annotation and CUDA_VISIBLE_DEVICES */
	int n_devices;
	long index;
	enum gs_index_source index_source;
	int map_line;        /* the entry's line in the annotation */
	int64_t created_ms;  /* the pod's creationTimestamp (for scheduling latency) */
	unsigned attempt;    /* 1 for the first Binding of this pod, 2 after one retry, ... */
};

/*
 * The next pod to bind, checked against the nodes as they are NOW (a node that went missing, NotReady
 * or cordoned since the pod was queued sends it back to waiting, reported). Returns 1 with *out, or 0
 * when nothing is ready. The pod is BINDING until gs_sched_bind_done; upserts do not re-queue it.
 */
int gs_sched_next_bind(struct gs_sched *s, int64_t now_ms, struct gs_bind_decision *out);

enum gs_bind_result {
	GS_BIND_OK = 0, /* bound; counts as bound before the watch shows spec.nodeName */
	GS_BIND_GONE,   /* 404 or 409: forget the pod until a new upsert says otherwise */
	GS_BIND_RETRY,  /* 429, 5xx, network: retry after a jittered exponential backoff */
};

/* Returns 0, or -ENOENT when uid is unknown or not BINDING (deleted or bound meanwhile: nothing to do). */
int gs_sched_bind_done(struct gs_sched *s, const char *uid, enum gs_bind_result res, int64_t now_ms);

/* Earliest now_ms at which a retry becomes due, or -1 when none is pending. */
int64_t gs_sched_next_deadline(const struct gs_sched *s);

/* ---- reports ----------------------------------------------------------------------------------- */

enum gs_wait_reason {
	GS_WAIT_NONE = 0,
	GS_WAIT_NO_MAP,         /* our pod without the annotation */
	GS_WAIT_MAP_INVALID,    /* the annotation does not parse */
	GS_WAIT_NO_INDEX,       /* neither label, Job annotation nor name gives an index */
	GS_WAIT_NO_ENTRY,       /* the map has no entry for the index */
	GS_WAIT_NOT_MUTATED,    /* check_env: CUDA_VISIBLE_DEVICES is not the entry's devices */
	GS_WAIT_NODE_MISSING,   /* the entry's node does not exist */
	GS_WAIT_NODE_NOT_READY,
	GS_WAIT_NODE_CORDONED,
	GS_WAIT_NODE_DEVICES,   /* the node advertises fewer nvidia.com/gpu than a device index of the entry */
	GS_WAIT_SCHEDULING_GATED, /* spec.schedulingGates is not empty */
	GS_WAIT_NODE_AFFINITY,  /* the node fails the pod's nodeSelector or required node affinity */
	GS_WAIT_TAINT,          /* the node has a NoSchedule or NoExecute taint the pod does not tolerate */
	GS_WAIT_HOST_PORT,      /* a host port the pod asks for is in use on the node */
	GS_WAIT_INSUFFICIENT_RESOURCE, /* requests exceed the node's allocatable minus its pods' requests */
	GS_WAIT_DEVICE_BUSY,    /* a pod of another owner holds one of the entry's devices on the node */
	GS_WAIT__COUNT
};

/* "NO_MAP", "MAP_INVALID", ... ("NONE"). */
const char *gs_wait_reason_name(enum gs_wait_reason r);

enum gs_report_kind {
	GS_REPORT_WAITING = 0,  /* FailedScheduling: the pod waits for reason/message */
	GS_REPORT_DEVICE_PLUGIN,/* a Warning DevicePluginRequest: the containers request nvidia.com/gpu as well
				 * as having a map entry (checks.h); the pod is still placed */
};

struct gs_report {
	enum gs_report_kind kind;
	const char *uid, *ns, *name;
	enum gs_wait_reason reason;
	const char *message; /* says exactly why, e.g. `node "node9" named by gpu-scheduling-map line 3
			      * for index 2 does not exist` */
	const char *node;    /* the node waited for (node reasons), else NULL */
	long index;          /* -1 when unknown */
	int recreate;        /* NOT_MUTATED, recreate_unmutated set, owned by a StatefulSet or Job: the
			      * I/O layer may delete the pod so its controller recreates it through the
			      * webhook */
};

/*
 * The next waiting pod whose reason or message changed since it was last reported (aggregation: a
 * pod waiting for the same reason is reported once however many upserts arrive), or the next
 * DevicePluginRequest warning (once per pod and message). Lower priority than binds; successful binds
 * are not reported here. Returns 1 with *out, or 0.
 */
int gs_sched_next_report(struct gs_sched *s, int64_t now_ms, struct gs_report *out);

/* ---- introspection ----------------------------------------------------------------------------- */

enum gs_pod_state {
	GS_POD_WAITING = 0, /* pending, blocked by a reason */
	GS_POD_QUEUED,      /* pending, in the bind queue */
	GS_POD_BINDING,     /* handed out by gs_sched_next_bind, result not yet known */
	GS_POD_BACKOFF,     /* pending, a retry is due at due_ms */
	GS_POD_BOUND,
	GS_POD_GONE,        /* forgotten after GS_BIND_GONE */
	GS_POD_FINISHED,    /* deleting or terminal */
	GS_POD__COUNT
};

const char *gs_pod_state_name(enum gs_pod_state st); /* "WAITING", ... */

struct gs_sched_pod_info {
	const char *uid, *ns, *name;
	enum gs_pod_state state;
	enum gs_wait_reason reason; /* with WAITING */
	const char *message;        /* with WAITING */
	long index;                 /* -1 when unknown */
	enum gs_index_source index_source;
	const char *node, *devices; /* the map entry, when there is one */
	unsigned attempts;          /* Bindings handed out */
	int64_t due_ms;             /* with BACKOFF */
};

/* 0 with *out, or -ENOENT. */
int gs_sched_pod_info(const struct gs_sched *s, const char *uid, struct gs_sched_pod_info *out);
int gs_sched_pod_find(const struct gs_sched *s, const char *ns, const char *name,
		      struct gs_sched_pod_info *out);

struct gs_sched_stats {
	size_t pods;                      /* known pods of ours, any state */
	size_t pending;                   /* waiting + queued + binding + backoff */
	size_t by_state[GS_POD__COUNT];
	size_t waiting_by[GS_WAIT__COUNT];
	size_t nodes;                     /* nodes that exist */
	size_t nodes_schedulable;         /* of which Ready and not cordoned */
	size_t maps_cached;               /* annotation texts in the map cache */
	size_t uses;                      /* pods (any scheduler) counted on a node, reservations included */
	size_t devices_held;              /* (node, device) pairs in the ledger with a holder */
	size_t devices_shared;            /* of which held by more than one owner */
	uint64_t binds_ok, binds_gone, binds_retry, reports;
};

void gs_sched_stats(const struct gs_sched *s, struct gs_sched_stats *st);

/*
 * For each wait reason, the creation time (the pod's created_ms, as given to gs_sched_pod_upsert) of the
 * oldest pod WAITING with it, or 0 when none waits with it (pods without a creation time are skipped).
 * A pending pod has never been bound, so now minus this is how long the longest wait has lasted:
 * gpu_scheduler_waiting_pods_max_age_seconds. O(pods): for a scrape, not for every event.
 */
void gs_sched_waiting_oldest(const struct gs_sched *s, int64_t oldest_created_ms[GS_WAIT__COUNT]);

/*
 * Checks every invariant this header and sched_int.h state (per-state counts against the pods, heap
 * order, waiter lists, each node's totals, ports and ledger against the uses), from scratch, and aborts
 * with the failed expression (GS_ASSERT) on a violation. O(pods + uses x nodes): for tests and debugging.
 */
void gs_sched_check(const struct gs_sched *s);

#endif
