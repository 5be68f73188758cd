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
 * Node aliases (cfg.alias_label): the map's node name N means the node named N when one exists;
 * otherwise the one node whose alias label has the value N (kind cannot name its nodes; cloud node
 * names change). Two or more such nodes: the pod waits with NODE_ALIAS_AMBIGUOUS. The name is resolved
 * every time the pod is placed (and again at gs_sched_next_bind), so a node gaining, losing or changing
 * the label, or a node named N appearing, moves every pod not yet handed out; a pod already bound never
 * moves. Decisions carry the resolved node's real name; messages show both ("node1 (node gpu-worker3)").
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

/* cfg.max_gang_timeout_ms's default (issue 36: a tenant's never-complete gangs held most of a cluster
 * for a 720 h timeout). */
#define GS_SCHED_MAX_GANG_TIMEOUT_MS (60 * 60 * 1000)
/* The gang budgets' defaults (cfg.gang_members_per_ns, gang_gpus_per_ns): what one namespace's gathering
 * gangs may hold reserved at once (issue 36). */
#define GS_SCHED_GANG_MEMBERS_PER_NS 256
#define GS_SCHED_GANG_GPUS_PER_NS    256
/* The memory budgets' defaults (cfg.map_cache_bytes, gpm_bytes, gpm_bytes_per_ns). */
#define GS_SCHED_MAP_CACHE_BYTES     ((size_t)16 << 20)
#define GS_SCHED_GPM_BYTES           ((size_t)96 << 20)
#define GS_SCHED_GPM_BYTES_PER_NS    ((size_t)16 << 20)
/* cfg.agent_stale_ms's default: three of the agent's default heartbeats (600 s). */
#define GS_SCHED_AGENT_STALE_MS      (30 * 60 * 1000)

struct gs_sched_config {
	const char *scheduler_name; /* required; pods with another spec.schedulerName are ignored */
	const char *annotation;     /* the map annotation's name, for messages ("gpu-scheduling-map") */
	int check_env;              /* refuse pods whose containers' CUDA_VISIBLE_DEVICES != the entry's */
	int recreate_unmutated;     /* flag NOT_MUTATED reports of StatefulSet/Job pods for deletion */
	int64_t backoff_min_ms;     /* first retry ceiling after GS_BIND_RETRY; default 200 */
	int64_t backoff_max_ms;     /* ceiling cap; default 10000 */
	size_t map_cache_size;      /* unreferenced parsed maps kept; default 256 */
	/*
	 * Memory (issue 36; docs/sched.md, "Memory"): map_cache_bytes bounds what the map cache keeps of
	 * parsed maps nobody uses (--map-cache-memory, default GS_SCHED_MAP_CACHE_BYTES). gpm_bytes and
	 * gpm_bytes_per_ns bound what the engine keeps of GPUPlacementMaps, every namespace's together and
	 * each namespace's (--placement-map-memory, --placement-map-memory-per-namespace): an object whose
	 * cost (its slot, its text and its parse: sched_gpm.c, gpm_cost) would pass either is not held: its pods wait
	 * saying so, its status too. 0: the defaults.
	 */
	size_t map_cache_bytes;
	size_t gpm_bytes;
	size_t gpm_bytes_per_ns;
	int device_sharing_any;  /* --device-sharing=any: the ledger never refuses (it still counts) */
	const char *alias_label; /* --node-alias-label: a map's node name that names no node resolves to the
				     * one node whose label of this key has that value; NULL or "" turns aliases
				     * off. Default "gpu-scheduler.io/node" */
	uint64_t seed;           /* jitter PRNG seed; 0 picks a fixed one (deterministic) */
	/*
	 * Extended resources the fit does not check (kube-scheduler's NodeResourcesFit ignoredResources and
	 * ignoredResourceGroups): comma-separated names ("example.com/foo"), and groups ("example.com"
	 * ignores every "example.com/..."). NULL or "": none; hugepages-* are never ignored. A pod
	 * requesting a resource its node does not advertise waits unless the resource is ignored here.
	 */
	const char *ignored_resources;
	const char *ignored_resource_groups;
	/*
	 * How long the node agent's data (GS_INUSE_ANNOTATION on a Node, docs/agent.md) counts after it last
	 * changed; the agent rewrites it at least every heartbeat (600 s by default). Stale data is treated
	 * as none. Default 1,800,000 (three heartbeats).
	 */
	int64_t agent_stale_ms;
	/*
	 * --gang-placeholders: while a gang member holds its reservation, a placeholder pod on its node
	 * holds the same requests for every other scheduler (gs_sched_next_placeholder). Default off.
	 */
	int gang_placeholders;
	/*
	 * --max-gang-timeout: an all-or-nothing gang's timeout (its gang-timeout, or spec.gangTimeout, 10m
	 * when absent; at most 720h) is cut to this, and its messages say so: a gang that cannot complete
	 * releases what it reserved at the latest this long after it began gathering. Default
	 * GS_SCHED_MAX_GANG_TIMEOUT_MS; <= 0: the default.
	 */
	int64_t max_gang_timeout_ms;
	/*
	 * The namespaces' budgets for gang reservations (docs/sched.md, "Budgets"): the members and the
	 * GPUs that the gangs of one namespace holding reservations may claim at once
	 * (--gang-reservations-per-namespace, --gang-reserved-gpus-per-namespace; 0: no bound), and per
	 * namespace overrides (--gang-reservation-limits, sched/gang.h's form; NULL or "": none; items that
	 * do not parse are skipped: check it with gs_gang_limits_check first). A gang is admitted whole:
	 * it takes its first reservation only when its size and its map's GPUs fit beside what the
	 * namespace's other admitted gangs claim; otherwise its fitting members wait GANG_LIMIT.
	 * gs_sched_config_init sets GS_SCHED_GANG_MEMBERS_PER_NS and GS_SCHED_GANG_GPUS_PER_NS.
	 */
	long gang_members_per_ns;
	long gang_gpus_per_ns;
	const char *gang_limits;
	/*
	 * --preemption (docs/sched.md, "Preemption"): a pod of ours waiting on its mapped node for what pods
	 * of lower priority hold there takes their place (gs_sched_next_preemption). Default on (1), as
	 * kube-scheduler; 0: pods wait, and explain still says what preemption would do.
	 */
	int preemption;
	/*
	 * --gpu-resources: the resources the device plugin hands GPUs out as (gs_inuse_resource_match's
	 * list: names, or prefixes ending in '/' or '*'). Their requests are the node's plugin GPUs when no
	 * agent data says which, and the devices the agent lists under them are GPUs (a replica,
	 * "GPU-...::2", or a MIG instance its agent names, its GPU: docs/agent.md, "Shared GPUs").
	 * NULL: GS_SCHED_GPU_RESOURCES.
	 */
	const char *gpu_resources;
};

/* The device plugin's GPU resources by default: whole GPUs, time-sliced or MPS replicas when the plugin
 * renames them (sharing.timeSlicing.renameByDefault), MIG instances (the mixed strategy's resources). */
#define GS_SCHED_GPU_RESOURCES "nvidia.com/gpu,nvidia.com/gpu.shared,nvidia.com/mig-*"

/* Fills the defaults above (scheduler_name "gpu-scheduler", check_env on, recreate_unmutated off,
 * alias_label "gpu-scheduler.io/node"). */
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
/*
 * 1 when the engine counts pod uid on node node[0..node_len) (a use: the pod bound there, or our
 * binding's reservation), else 0. Then an upsert of that pod still bound there needs only what a
 * partial record holds (objects.h): its requests are counted already and a bound pod is never placed
 * again. gs_sched_pod_upsert refuses a partial record (-EINVAL) for a pod this does not hold.
 */
int gs_sched_pod_held(const struct gs_sched *s, const char *uid, const char *node, size_t node_len);
int gs_sched_pod_delete(struct gs_sched *s, const char *uid, int64_t now_ms);

/* ---- decisions --------------------------------------------------------------------------------- */

struct gs_bind_decision {
	const char *uid, *ns, *name;
	const char *node;     /* bind here: the node's real name */
	const char *map_node; /* the name the map gives; differs from node when resolved through the alias label */
	const char *devices;  /* canonical "0,1": the assigned annotation and CUDA_VISIBLE_DEVICES */
	int n_devices;
	long index;
	enum gs_index_source index_source;
	int map_line;       /* the entry's line in the annotation */
	int64_t created_ms; /* the pod's creationTimestamp (for scheduling latency) */
	unsigned attempt;   /* 1 for the first Binding of this pod, 2 after one retry, ... */
	/* A gang member handed out by its commit with a placeholder pod holding its node (in ns): delete
	 * that pod, and send the Binding once the apiserver has deleted it (the kubelet then never sees
	 * both). NULL otherwise. placeholder_uid: its uid, the delete's precondition, when the engine knows
	 * it (its create's reply was told: gs_sched_placeholder_created), else NULL. */
	const char *placeholder;
	const char *placeholder_uid;
};

/*
 * The next pod to bind, checked against the nodes as they are NOW (a node that went missing, NotReady
 * or cordoned since the pod was queued sends it back to waiting, reported). Returns 1 with *out, or 0
 * when nothing is ready. The pod is BINDING until gs_sched_bind_done; upserts do not re-queue it.
 */
int gs_sched_next_bind(struct gs_sched *s, int64_t now_ms, struct gs_bind_decision *out);

enum gs_bind_result {
	GS_BIND_OK = 0, /* bound; counts as bound before the watch shows spec.nodeName */
	GS_BIND_GONE,   /* 404 or 409: forget the pod until a new upsert says otherwise; its reservation
			 * stays until then (a 409: bound by someone else, whose binding the watch
			 * has not shown yet: its devices must not go to another pod meanwhile) */
	GS_BIND_RETRY,  /* 429, 5xx, network: retry after a jittered exponential backoff */
};

/* Returns 0, or -ENOENT when uid is unknown or not BINDING (deleted or bound meanwhile: nothing to do). */
int gs_sched_bind_done(struct gs_sched *s, const char *uid, enum gs_bind_result res, int64_t now_ms);

/*
 * GS_BIND_RETRY with a floor: the retry is due at now_ms + max(the backoff, not_before_ms). The floor
 * is the apiserver's Retry-After (a 429 or a 503 says when to come back; retrying sooner only earns
 * another refusal). not_before_ms <= 0 is gs_sched_bind_done(.., GS_BIND_RETRY, ..). Same returns.
 */
int gs_sched_bind_retry_after(struct gs_sched *s, const char *uid, int64_t now_ms, int64_t not_before_ms);

/* Earliest now_ms at which a retry becomes due, or -1 when none is pending. */
int64_t gs_sched_next_deadline(const struct gs_sched *s);

/* ---- placeholders (cfg.gang_placeholders; docs/sched.md, "Placeholders") ------------------------ */

#define GS_PLACEHOLDER_EXT_MAX 16

/*
 * A placeholder pod to create or delete. create: a pod named name in ns, bound to node at creation
 * (spec.nodeName), requesting what the member (member_uid, member_name, in ns) requests (its map's GPUs
 * are not requested: they are the ledger's), tolerating what it tolerates, annotated
 * gpu-scheduler.io/placeholder-for: member_uid and owned by the member (garbage collection removes it
 * with the member, its controller). Delete: the pod ns/name, at once (grace 0), only when its uid is uid
 * (the precondition; NULL: by name, for one whose create's reply was not told yet); a 404 or 409 is done.
 *
 * Which pods are placeholders (issue 36): only those whose uid the reply to our create named, told to
 * the engine by gs_sched_placeholder_created. Name and annotation are no proof: a pod that claims to be
 * one counts as the ordinary pod it is (its requests, its nvidia.com/gpu) on its node. After a restart
 * or a failover the engine knows none: the placeholders left over count as uses until deleted, and
 * those of our form (spec.schedulerName ours, the member Pod its controller) that nobody wants are
 * deleted (uid precondition); a pod of another scheduler name is never touched.
 */
struct gs_placeholder {
	int create;
	const char *ns, *name;
	const char *uid;                             /* delete only: the precondition, or NULL */
	const char *node, *member_uid, *member_name; /* create only, as below */
	int64_t priority;
	int64_t cpu_milli, memory, ephemeral;
	size_t n_ext; /* extended resources but nvidia.com/gpu, at most GS_PLACEHOLDER_EXT_MAX */
	const char *ext_name[GS_PLACEHOLDER_EXT_MAX];
	int64_t ext_value[GS_PLACEHOLDER_EXT_MAX];
	const struct gs_toleration *tolerations;
	int n_tolerations;
};

/* The next placeholder to create or delete, or 0. Strings valid until the next call that mutates s. */
int gs_sched_next_placeholder(struct gs_sched *s, int64_t now_ms, struct gs_placeholder *out);
/*
 * The apiserver created the placeholder ns/name that a create of member_uid asked for, and its reply
 * names the pod's uid: that pod is ours (a placeholder) until its deletion is seen, and any use the
 * engine counted for it (the watch showed it before the reply) goes. A placeholder of ours deleted while
 * its member still holds its reservation is made again. 0, or -EINVAL without the four strings.
 */
int gs_sched_placeholder_created(struct gs_sched *s, const char *member_uid, const char *ns, const char *name,
				 const char *uid, int64_t now_ms);

/* ---- preemption (cfg.preemption; sched_preempt.h; docs/sched.md, "Preemption") ---------------------
 * A pod of ours that waits on the node its map names (HOST_PORT, INSUFFICIENT_RESOURCE, DEVICE_BUSY:
 * the node passed every other check) for what pods of strictly lower priority hold there, and whose
 * preemptionPolicy is not Never, takes their place: the engine chooses the victims as kube-scheduler's
 * DefaultPreemption does on one node, nominates the pod to the node (its claim counts there for every
 * pod of its priority or lower from then on, so the room freed goes to it) and hands the preemption
 * out. The I/O layer writes status.nominatedNodeName on the preemptor, puts the DisruptionTarget
 * condition on each victim and deletes it (its own grace period, its uid the precondition), and tells
 * both sides by events. Victims handed out are never chosen again; they count until they stop, and
 * the pod binds when it fits. A nominee whose node still has lower-priority pods terminating does not
 * preempt again (kube-scheduler's PodEligibleToPreemptOthers).
 */
struct gs_preempt_victim {
	const char *uid, *ns, *name;
	int64_t priority;
	const char *pdb; /* the name of the PodDisruptionBudget of its namespace its deletion violates, or NULL */
};

struct gs_preemption {
	const char *uid, *ns, *name; /* the preemptor */
	const char *node;            /* its node (the real name): status.nominatedNodeName */
	int64_t priority;
	size_t n_victims; /* >= 1 */
	const struct gs_preempt_victim *victims;
};

/* The next preemption to carry out: 1 with *out (strings valid until the next call that mutates s), or
 * 0. Pull it after the binds, on the lane of reports. */
int gs_sched_next_preemption(struct gs_sched *s, int64_t now_ms, struct gs_preemption *out);
/*
 * The victim victim_uid of a preemption handed out was not deleted (an error that is not 404 or 409):
 * it may be chosen again, and the pods waiting for its node are placed again. 0, or -ENOENT when the
 * engine counts no such pod.
 */
int gs_sched_preemption_failed(struct gs_sched *s, const char *victim_uid, int64_t now_ms);

/* ---- reports ----------------------------------------------------------------------------------- */

enum gs_wait_reason {
	GS_WAIT_NONE = 0,
	GS_WAIT_NO_MAP,       /* our pod without the annotation */
	GS_WAIT_MAP_INVALID,  /* the annotation does not parse */
	GS_WAIT_NO_INDEX,     /* neither label, Job annotation nor name gives an index */
	GS_WAIT_NO_ENTRY,     /* the map has no entry for the index */
	GS_WAIT_NOT_MUTATED,  /* check_env: CUDA_VISIBLE_DEVICES is not the entry's devices */
	GS_WAIT_NODE_MISSING, /* the entry's node does not exist */
	GS_WAIT_NODE_NOT_READY,
	GS_WAIT_NODE_CORDONED,
	GS_WAIT_NODE_DEVICES,          /* the node advertises fewer nvidia.com/gpu than a device index of the entry */
	GS_WAIT_SCHEDULING_GATED,      /* spec.schedulingGates is not empty */
	GS_WAIT_NODE_AFFINITY,         /* the node fails the pod's nodeSelector or required node affinity */
	GS_WAIT_TAINT,                 /* the node has a NoSchedule or NoExecute taint the pod does not tolerate */
	GS_WAIT_HOST_PORT,             /* a host port the pod asks for is in use on the node */
	GS_WAIT_INSUFFICIENT_RESOURCE, /* requests exceed the node's allocatable minus its pods' requests */
	GS_WAIT_DEVICE_BUSY,           /* a pod of another owner holds one of the entry's devices on the node */
	GS_WAIT_NODE_ALIAS_AMBIGUOUS,  /* no node has the map's name and several carry it in the alias label */
	GS_WAIT_NODE_POLICY,           /* the node's allowed-namespaces annotation does not list the pod's namespace */
	GS_WAIT_GANG_INVALID,          /* the all-or-nothing annotations do not parse (sched/gang.h) */
	GS_WAIT_GANG,                  /* fits its node and holds it (reserved) until its whole gang fits */
	GS_WAIT_GANG_TIMED_OUT,        /* its gang did not complete in time: it rests, then gathers again */
	GS_WAIT_MAP_MISSING,           /* the referenced GPUPlacementMap does not exist (sched/gpm.h) */
	GS_WAIT_GANG_LIMIT,            /* its gang does not fit in its namespace's budget for reservations */
	GS_WAIT__COUNT
};

/* The node annotation of the node-side policy (gs_node_obj.allowed_ns). */
#define GS_SCHED_ALLOWED_NS "gpu-scheduler.io/allowed-namespaces"

/*
 * 1 when the node a map names (by name or alias, resolved as placement does) lets namespace ns map it,
 * or is not known (the scheduler then decides when it appears); 0 with msg when its allowed-namespaces
 * annotation does not list ns. For the webhook. O(1) plus the list's length.
 */
int gs_sched_node_allows(const struct gs_sched *s, const char *map_node, const char *ns, char *msg, size_t size);
/*
 * The physical GPUs of the node map_node resolves to, when they are known for certain: its agent's index
 * table believed or GPU Feature Discovery's nvidia.com/gpu.count (sched_node.h), with words ("has 4 GPUs
 * by its agent's index table"); -1 otherwise (no such node, or only what it advertises, which a device
 * plugin registering late or time-slicing changes). For the webhook, which refuses an index past them.
 */
int64_t gs_sched_node_gpus(const struct gs_sched *s, const char *map_node, char *words, size_t size);

/* "NO_MAP", "MAP_INVALID", ... ("NONE"). */
const char *gs_wait_reason_name(enum gs_wait_reason r);

enum gs_report_kind {
	GS_REPORT_WAITING = 0,     /* FailedScheduling: the pod waits for reason/message */
	GS_REPORT_DEVICE_PLUGIN,   /* a Warning DevicePluginRequest: the containers request nvidia.com/gpu as well
				 * as having a map entry (checks.h); the pod is still placed */
	GS_REPORT_DEVICE_CONFLICT, /* a Warning DeviceConflict for both pods: a device the map gives to the pod
				    * (uid, ns, name) was also given by the device plugin to other_ns/other_name */
	GS_REPORT_GANG,            /* an event about an all-or-nothing gang (event_reason, warning, message): on
				    * its owner (owner_kind/owner_name/owner_uid in ns; uid and name NULL) or
				    * on the member uid/name */
};

struct gs_report {
	enum gs_report_kind kind;
	const char *uid, *ns, *name;
	enum gs_wait_reason reason;
	const char *message; /* says exactly why, e.g. `node "node9" named by gpu-scheduling-map line 3
			      * for index 2 does not exist` */
	const char *node;    /* the node name the map gives (node reasons), else NULL */
	long index;          /* -1 when unknown */
	int recreate;        /* NOT_MUTATED, recreate_unmutated set, owned by a StatefulSet or Job: the
			      * I/O layer may delete the pod so its controller recreates it through the
			      * webhook */
	const char *other_uid, *other_ns, *other_name; /* DEVICE_CONFLICT: the pod the plugin gave it to */
	/* DEVICE_CONFLICT: message is the event for ns/name and other_message the one for the other pod;
	 * each names the other pod only when both are of one namespace (issue 36). */
	const char *other_message;
	/* GANG: "GangTimedOut" (Warning), "GangScheduled" (Normal), "GangBindingFailed" (Warning); reason
	 * on the owner's GangTimedOut: the first blocking member's, NONE when members are missing. */
	const char *event_reason;
	int warning;
	const char *owner_kind, *owner_name, *owner_uid;
	int64_t gang_created_ms; /* GangScheduled: the first member's creationTimestamp (for the latency) */
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
	GS_POD_GONE,     /* forgotten after GS_BIND_GONE */
	GS_POD_FINISHED, /* deleting or terminal */
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
	const char *resolved;       /* WAITING, QUEUED or BACKOFF with an entry: the node its name resolves to
				     * now (itself, or through the alias label); NULL when none or several */
	unsigned attempts;          /* Bindings handed out */
	int64_t due_ms;             /* with BACKOFF */
	int64_t created_ms;         /* creationTimestamp */
	int64_t priority;           /* spec.priority */
	int map_line;               /* the entry's line in the annotation, 0 without an entry */
	const char *nominated;      /* WAITING or QUEUED: the node its preemption nominated it to, else NULL */
};

/* 0 with *out, or -ENOENT. */
int gs_sched_pod_info(const struct gs_sched *s, const char *uid, struct gs_sched_pod_info *out);
int gs_sched_pod_find(const struct gs_sched *s, const char *ns, const char *name, struct gs_sched_pod_info *out);

/* ---- explain: what the engine would do with a pod now, and why ------------------------------------
 * Every check placement makes, each run on its own with its outcome (placement stops at the first
 * failure; explain runs them all), and who holds the entry's devices. For operators (/debug/pods,
 * `gpu-scheduler explain`); O(the pod's containers + ports on the node + the holders of its devices).
 */
enum gs_explain_check_id {
	GS_EXPLAIN_POD = 0, /* the pod's own inputs: map, index, entry, CUDA_VISIBLE_DEVICES, gates */
	GS_EXPLAIN_NODE_EXISTS,
	GS_EXPLAIN_NODE_READY,
	GS_EXPLAIN_NODE_SCHEDULABLE,
	GS_EXPLAIN_NODE_POLICY, /* the node lets the pod's namespace map it (allowed-namespaces) */
	GS_EXPLAIN_NODE_GPUS,   /* the node advertises the entry's highest GPU index */
	GS_EXPLAIN_AFFINITY,    /* nodeSelector and required node affinity */
	GS_EXPLAIN_TAINTS,
	GS_EXPLAIN_HOST_PORTS,
	GS_EXPLAIN_RESOURCES,
	GS_EXPLAIN_DEVICES, /* the ledger: no pod of another owner holds the entry's devices */
	GS_EXPLAIN__COUNT
};

/* "pod", "node-exists", "node-ready", "node-schedulable", "node-policy", "node-gpus", "affinity", "taints",
 * "host-ports", "resources", "devices". */
const char *gs_explain_check_name(enum gs_explain_check_id id);

enum gs_explain_outcome {
	GS_EXPLAIN_PASS = 0,
	GS_EXPLAIN_FAIL,
	GS_EXPLAIN_SKIPPED, /* not run: the pod is bound or finished, has no entry, or its node is missing */
};

#define GS_EXPLAIN_MSG 512

struct gs_explain_check {
	enum gs_explain_outcome outcome;
	enum gs_wait_reason reason; /* with FAIL */
	char msg[GS_EXPLAIN_MSG];   /* with FAIL: what failed; with SKIPPED: why it was not run; else "" */
};

/* A pod holding one of the entry's devices on its node. */
struct gs_explain_holder {
	char *device;   /* "0", "GPU-8f2c..." */
	char *pod;      /* "ns/name" */
	char *owner;    /* controller uid, or the pod's uid */
	int same_owner; /* the explained pod's own owner: no conflict */
	int shared;     /* the holder carries the sharing annotation */
	/* Not a holder: the pod claims the device through gpu-scheduler.io/assigned and the ledger ignores
	 * the claim (not a pod of ours, or not what its own map entry gives it); why says so (static). */
	const char *ignored;
	/* Held through the device plugin, as the node agent says: the device ID the kubelet gave (owner "") */
	char *plugin_id;
};

/* A pod the explained one would preempt (sched_preempt.h). */
struct gs_explain_victim {
	char *pod; /* "ns/name", or "a pod of another namespace" for a pod of another namespace than the explained one's */
	int64_t priority;
	int reservation; /* a gathering gang member's reservation: let go, nothing deleted */
	char *pdb;       /* the PodDisruptionBudget its deletion would violate (its namespace's), or NULL;
			  * NULL too for a pod of another namespace */
};

/* An all-or-nothing gang, as explain shows it. */
struct gs_explain_gang {
	long size;               /* members that must fit together; 0: the pod is in no gang */
	size_t members;          /* pods of the gang the engine knows (any state) */
	size_t fitting;          /* members that fit and hold their reservation now */
	int ran;                 /* placed (committed) once: its members are placed alone now */
	int resting;             /* timed out; gathers again in left_ms */
	int64_t left_ms;         /* gathering: until it times out; resting: until it gathers again (from the
				 * latest time the engine was given); -1 when ran */
	unsigned timeouts;       /* times it timed out */
	const char *kind, *name; /* the owner (engine-owned) */
	char *blockers;          /* owned: who blocks and why, "index 2 (ns/train-2) NODE_MISSING: ...; 1 of
				 * 4 members not created"; NULL when none */
	/*
	 * Its namespace's budget (cfg.gang_members_per_ns ...): the bound (0: none), what the gang claims
	 * (need_*: its size and its map's GPUs) and what the namespace's other admitted gangs claim now
	 * (held_*); admitted: it holds its claim. A daemon's answer carries these, so that `explain` may
	 * judge with the daemon's numbers (gs_sched_gang_budget_seed).
	 */
	long cap_members, cap_gpus, need_members, need_gpus, held_members, held_gpus;
	int admitted;
};

struct gs_sched_explain {
	struct gs_sched_pod_info pod; /* strings owned by the engine, as gs_sched_pod_info's */
	int shared;                   /* the pod carries the sharing annotation */
	int device_sharing_any;       /* --device-sharing=any: the ledger refuses nothing */
	enum gs_wait_reason verdict;  /* the first failed check's reason (placement's answer), or NONE */
	/* What clears verdict, for people ("" for NONE): gs_wait_reason_retry's phrase, or for a pod by
	 * reference one that names its GPUPlacementMap when an edit (or the creation) of the object clears
	 * it (the engine places the object's pods again on its upsert). Both writers of explain_out.h
	 * print this one text, so the daemon's /debug/pods and `gpu-scheduler explain` say the same. */
	char waits_for[GS_EXPLAIN_MSG];
	const char *bound_node; /* BOUND or BINDING: the node its use is on (engine-owned), else NULL */
	struct gs_explain_check checks[GS_EXPLAIN__COUNT];
	size_t n_holders;
	struct gs_explain_holder *holders; /* owned: gs_sched_explain_free */
	/* The node agent's data for the pod's node (docs/agent.md), a phrase: "fresh, 3 devices held through
	 * the device plugin, an index table up to GPU 3", "stale ...", ...; owned; NULL without a node or
	 * when the node has no agent annotation. */
	char *agent;
	struct gs_explain_gang gang; /* the pod's all-or-nothing gang; gang.size 0 when it is in none */
	/*
	 * By reference (sched/gpm.h): map_ref names the GPUPlacementMap of the pod's namespace its map
	 * comes from, NULL for a pod whose map is inline (or absent); map_ref_held: the engine holds that
	 * object, of generation map_ref_generation (0 when not held); map_ref_admitted: the generation the
	 * webhook recorded (GS_MAP_REF_GENERATION as written), NULL when absent. Engine-owned strings.
	 */
	const char *map_ref;
	int map_ref_held;
	int64_t map_ref_generation;
	const char *map_ref_admitted;
	/*
	 * Preemption (docs/sched.md, "Preemption"): with a verdict it may clear (HOST_PORT,
	 * INSUFFICIENT_RESOURCE, DEVICE_BUSY), preempt_node is the node, and victims the pods of lower
	 * priority there whose deletion would let the pod fit, most important first; or n_victims 0 and
	 * preempt_why says why none would. preempt_node NULL for every other verdict. preemption_off: the
	 * engine does not preempt (cfg.preemption 0): this is what it would do. A pod nominated to its
	 * node by a preemption handed out says so in pod.nominated.
	 */
	const char *preempt_node;
	int preemption_off;
	size_t n_victims;
	struct gs_explain_victim *victims; /* owned: gs_sched_explain_free */
	char preempt_why[GS_EXPLAIN_MSG];
};

/*
 * 0 with *out (release with gs_sched_explain_free), or -ENOENT for a pod the engine does not know (the
 * newest uid of ns/name). Changes nothing in the engine (s is not const only because the checks share
 * code with placement).
 */
int gs_sched_explain(struct gs_sched *s, const char *ns, const char *name, struct gs_sched_explain *out);
void gs_sched_explain_free(struct gs_sched_explain *e);
/*
 * For `explain` alone: the engine judges namespace ns's gang budget as the daemon does, with the
 * daemon's numbers (its answer's gang: cap_*, held_*): the bounds replace the configuration's for ns, and
 * held_* count as claimed by other gangs beside any the engine admits itself. 0, or -EINVAL for a
 * negative number.
 */
int gs_sched_gang_budget_seed(struct gs_sched *s, const char *ns, long cap_members, long cap_gpus, long held_members,
			      long held_gpus);

/* What clears a wait reason, for people: "the node joining the cluster", ... ("" for NONE). Said of a
 * pod whose map is inline; for one pod, gs_sched_explain's waits_for (a pod by reference's names its
 * object when an edit of it clears the reason). */
const char *gs_wait_reason_retry(enum gs_wait_reason r);

#define GS_PENDING_OLDEST 20

/* The pending pods: how many wait for each reason and the oldest ones (by creation time). */
struct gs_sched_pending {
	size_t pending; /* waiting + queued + binding + backoff */
	size_t waiting_by[GS_WAIT__COUNT];
	size_t n_oldest;
	struct gs_sched_pod_info oldest[GS_PENDING_OLDEST]; /* oldest first; strings as gs_sched_pod_info's */
};

/* O(pods of ours). */
void gs_sched_pending(const struct gs_sched *s, struct gs_sched_pending *out);

struct gs_sched_stats {
	size_t pods;    /* known pods of ours, any state */
	size_t pending; /* waiting + queued + binding + backoff */
	size_t by_state[GS_POD__COUNT];
	size_t waiting_by[GS_WAIT__COUNT];
	size_t nodes;             /* nodes that exist */
	size_t nodes_schedulable; /* of which Ready and not cordoned */
	size_t maps_cached;       /* annotation texts in the map cache */
	size_t maps_cached_bytes; /* what the map cache holds (texts, parses), idle entries included */
	size_t maps_idle_bytes;   /* of which its idle entries' (bounded by cfg.map_cache_bytes) */
	size_t gpm_bytes;         /* the held GPUPlacementMaps' and kept inline maps' costs (cfg.gpm_bytes) */
	size_t gpms_refused;      /* GPUPlacementMaps not held for the memory budgets */
	uint64_t inline_not_kept; /* pods' inline maps past the budgets: the pod kept its entry alone */
	size_t uses;              /* pods (any scheduler) counted on a node, reservations included */
	size_t devices_held;      /* (node, device) pairs in the ledger with a holder */
	size_t devices_shared;    /* of which held by more than one owner */
	uint64_t claims_ignored;  /* gpu-scheduler.io/assigned claims not believed (a pod's first sight on a node) */
	uint64_t binds_ok, binds_gone, binds_retry, reports;
	uint64_t device_conflicts;    /* devices found given by a map and by the device plugin (pairs of pods) */
	size_t gangs_waiting;         /* all-or-nothing gangs not placed yet (gathering or resting) */
	uint64_t gangs_bound;         /* gangs committed (their members handed out together) */
	uint64_t gang_timeouts;       /* gangs that timed out (each time) */
	size_t placeholders;          /* placeholder pods wanted now (one per reserved member, with the flag) */
	uint64_t preempt_none;        /* preemption plans made that found no set of victims */
	uint64_t preemptions;         /* preemptions handed out (gs_sched_next_preemption) */
	uint64_t preempt_victims;     /* victims in them */
	uint64_t preempt_pdb_victims; /* of which violating a PodDisruptionBudget */
	size_t pdbs;                  /* PodDisruptionBudgets held */
	size_t nominated;             /* pods nominated to a node now */
	/* Present nodes by their agent data (docs/agent.md): fresh, stale, unusable (the agent's error
	 * line or a text that does not parse), none. Kept as the data changes: O(1). */
	size_t agent_fresh, agent_stale, agent_unusable, agent_none;
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
 * order, waiter lists, each node's totals, ports and ledger against the uses, the alias index against
 * the nodes' labels), from scratch, and aborts
 * with the failed expression (GS_ASSERT) on a violation. O(pods + uses x nodes): for tests and debugging.
 */
void gs_sched_audit(const struct gs_sched *s);

/* ---- PodDisruptionBudgets (sched_pdb.h; docs/sched.md, "Preemption") ------------------------------
 * The budgets the I/O layer watches (policy/v1, every namespace). Preemption puts back the candidates
 * whose deletion would violate one before the others, as kube-scheduler does: a budget orders victims,
 * it never keeps a pod from preempting. An upsert copies b (what the engine held of ns/name goes); a
 * delete forgets it. Nothing is placed again: a budget changes which pods go, never whether one may.
 * -EINVAL without ns or name; gs_sched_pdb_delete returns -ENOENT for a budget not held. O(the budget).
 */
int gs_sched_pdb_upsert(struct gs_sched *s, const struct gs_pdb_obj *b);
int gs_sched_pdb_delete(struct gs_sched *s, const char *ns, const char *name);

/* ---- maps as objects (sched/gpm.h; docs/sched.md, "Maps as objects") ----------------------------
 * The GPUPlacementMaps the I/O layer watches. An upsert copies the object (and parses its map once per
 * generation, through the map cache) and places again every pod not yet handed out that references
 * ns/name; a delete makes those pods wait MAP_MISSING (bound pods never move; a pod whose Binding is in
 * flight or in backoff takes the object as it is and keeps its place, as on an update of its own map
 * annotation). An upsert with the uid, generation, text and settings the engine holds is a no-op. Give
 * the objects before the pods at a (re)start: a bound pod's gpu-scheduler.io/assigned claim is judged by
 * its object's entry when the pod is first seen. O(1) + O(the pods that name ns/name). -EINVAL for a view
 * without ns, name or uid; gs_sched_gpm_delete returns -ENOENT for an unknown object.
 */
struct gs_gpm_view;
int gs_sched_gpm_upsert(struct gs_sched *s, const struct gs_gpm_view *g, int64_t now_ms);
int gs_sched_gpm_delete(struct gs_sched *s, const char *ns, const char *name, int64_t now_ms);
/* 1 with *out (strings valid until the next call that mutates s) when the engine holds ns/name, else 0.
 * For the webhook, which resolves references from the same table. */
int gs_sched_gpm_find(const struct gs_sched *s, const char *ns, const char *name, struct gs_gpm_view *out);
/* Why the object ns/name exists but is not held (the memory budgets: gs_sched_gpm_find says 0 for it),
 * or NULL. Valid until the next call that mutates s. */
const char *gs_sched_gpm_refused(const struct gs_sched *s, const char *ns, const char *name);

/*
 * Memory: an object refused for the budgets (cfg.gpm_bytes, gpm_bytes_per_ns) keeps no text, so it can
 * be held only when the watch shows it again. When memory is freed while objects are refused (an
 * object deleted, shrunk or refused on update), this returns 1, at most once per
 * GS_GPM_RELIST_INTERVAL_MS, and the caller lists the objects again (k8s/watch.h, gs_watch_relist):
 * the refused ones are offered again in the list's order. Else 0, with *due_ms when one will be due
 * (-1: none wanted). Not a deadline of gs_sched_next_deadline: a follower relists too.
 */
#define GS_GPM_RELIST_INTERVAL_MS 5000
int gs_sched_gpm_take_relist(struct gs_sched *s, int64_t now_ms, int64_t *due_ms);


/*
 * The placement of one object, for its /status subresource: entries (the map's; 0 when it does not
 * parse), placed (its pods BOUND or BINDING), waiting (its pending pods not handed out: WAITING, QUEUED,
 * BACKOFF), waiting_by (the WAITING ones by reason), and of the WAITING ones the one of the lowest
 * index (pods without an index last, then by name). Counts only pods of ours that reference the object
 * (same namespace); pods GONE or FINISHED count nowhere. Counted from the object's pods when asked:
 * O(its pods).
 */
struct gs_gpm_status {
	const char *ns, *name;
	const char *uid;             /* the object's metadata.uid: the status write's precondition */
	int64_t observed_generation; /* the object's generation these counts were made under */
	size_t entries, placed, waiting;
	size_t waiting_by[GS_WAIT__COUNT];
	long oldest_index;       /* the lowest index among the waiting pods; -1 when none waits */
	const char *oldest_name; /* that pod's name */
	enum gs_wait_reason oldest_reason;
	const char *oldest_message; /* its wait message */
	int ready;                  /* waiting == 0 and placed == entries and the map parses */
	const char *map_error;      /* the map's parse error (with its line), NULL when it parses */
	const char *refused;        /* the object is not held, why (the memory budgets); NULL when held */
};

/*
 * The next object whose status differs from what was last handed out for it, at most once a second
 * per object (GS_GPM_STATUS_INTERVAL_MS): 1 with *out (strings valid until the next call that mutates
 * s), else 0. A status not yet due makes gs_sched_next_deadline report when it is; one due now is not a
 * deadline (pull after the events, as for reports). Pull it on a lane of its own: never before a pending
 * Binding.
 */
#define GS_GPM_STATUS_INTERVAL_MS 1000
int gs_sched_next_gpm_status(struct gs_sched *s, int64_t now_ms, struct gs_gpm_status *out);
/* The status of one object now (for explain and `gpu-scheduler status`); 1, or 0 when unknown. */
int gs_sched_gpm_status(const struct gs_sched *s, const char *ns, const char *name, struct gs_gpm_status *out);

/* ---- workload: every pod of one owner, by index (`gpu-scheduler status`, /debug/workloads/) -------
 * The owner-level view of a mapped workload: one row per index of its map and per pod of ours whose
 * controller is that owner (the ownerReference's kind and name, as the pod record keeps them), with
 * where each is (its use's node once bound or binding, else the node its entry names, resolved) and
 * its state. An index of the map with no pod is a row too, not created. Reads the engine, never changes
 * it. O(pods of ours) per call (a scan: for a debug view and a command, not for every event).
 *
 * An all-or-nothing workload's gang (its size, members fitting, who blocks, time left) is in gang, as
 * explain shows it (gang.size 0 for a workload placed pod by pod).
 */
struct gs_sched_workload_row {
	long index;          /* -1: a pod of the owner with no index (it waits NO_INDEX) */
	int created;         /* 0: the map has the index and no pod of the owner has it */
	int map_line;        /* the index's entry in the view's map, 0 when none */
	const char *node;    /* created: the node its use is on (BOUND, BINDING), else its entry's node, resolved
			   * (the map's name when it resolves to none); not created: the entry's node; NULL
			   * without an entry */
	const char *devices; /* held (BOUND, BINDING), else the entry's; NULL without an entry */
	struct gs_sched_pod_info pod; /* with created (strings as gs_sched_pod_info's) */
	char *held;                   /* owned: what devices points at when made from the use's holds */
};

/* Whose map the rows of indices not created come from. */
enum gs_workload_map {
	GS_WORKLOAD_MAP_NONE = 0, /* none: no map given (or it does not parse) and no pod with one */
	GS_WORKLOAD_MAP_TEMPLATE, /* the one the caller gives: the owner's pod template's annotation */
	GS_WORKLOAD_MAP_PODS,     /* that of the newest pod of the owner whose map parses */
	GS_WORKLOAD_MAP_OBJECT,   /* the GPUPlacementMap gs_sched_workload_ref was given, or (no map given) the
				   * one the newest such pod names: the object's as it is now (map_ref) */
};

struct gs_sched_workload {
	const char *kind, *name, *ns; /* as asked (borrowed from the caller) */
	const char *owner_uid;        /* the controller uid of its newest pod, NULL without pods */
	enum gs_workload_map map_from;
	const char *map_ref; /* GS_WORKLOAD_MAP_OBJECT: the GPUPlacementMap's name (in ns), engine-owned */
	size_t map_entries;  /* entries of that map */
	size_t pods;         /* rows with created */
	size_t by_state[GS_POD__COUNT];
	size_t not_created;
	size_t n_rows;
	struct gs_sched_workload_row *rows; /* by index (pods without one last), then creation, then name */
	struct gs_map *map;                 /* owned: the given map or the object's, parsed (NULL otherwise) */
	char map_error[256];                /* the given map's parse error, or gs_sched_workload_ref's object's
					     * (not held, or its map does not parse); "" when none */
	struct gs_explain_gang gang;        /* its all-or-nothing gang (gang.blockers owned); size 0: none */
};

/*
 * Fills *out for the owner of kind ("StatefulSet", "Job": the ownerReference's kind) and name in ns;
 * map_text[0..map_len) (NULL: none) is the map to list every index of, such as the owner's pod template's
 * annotation; without it, the newest pod's map (for a pod by reference, its GPUPlacementMap's as the engine
 * holds it now, sched/gpm.h). Returns 0 (no pod and no map is an empty view, not an
 * error); release with gs_sched_workload_free. Strings are valid until the next call that mutates s.
 */
int gs_sched_workload(const struct gs_sched *s, const char *ns, const char *kind, const char *name,
		      const char *map_text, size_t map_len, struct gs_sched_workload *out);
/*
 * gs_sched_workload for an owner whose pod template names its map by reference: map_ref (NULL: none, as
 * gs_sched_workload without a map) is the GPUPlacementMap of ns the template's GS_MAP_REF_ANNOTATION
 * names, and its map as the engine holds it now lists every index (map_from GS_WORKLOAD_MAP_OBJECT,
 * map_ref its name), so that an owner with no pod yet still has a row per index. An object the engine
 * holds whose map does not parse: map_from GS_WORKLOAD_MAP_NONE, map_error naming it and the line; one it
 * does not hold: map_error says so and the rows come from the newest pod's map, as without a map. Same
 * returns and release.
 */
int gs_sched_workload_ref(const struct gs_sched *s, const char *ns, const char *kind, const char *name,
			  const char *map_ref, struct gs_sched_workload *out);
/*
 * The same view of the pods of ours that reference the GPUPlacementMap ns/name (sched/gpm.h), whatever
 * their owner, for `gpu-scheduler status gpuplacementmap/NAME`: kind GS_GPM_KIND, a row per pod and per
 * index of the object's map with no pod; map_from GS_WORKLOAD_MAP_OBJECT (map_ref its name) when the
 * engine holds the object and its map parses, else GS_WORKLOAD_MAP_NONE (map_error the parse error when
 * it does not). owner_uid NULL. 0, or -ENOENT (an empty view) when the engine neither holds the object
 * nor has a pod naming it. O(its pods). Release with gs_sched_workload_free.
 */
int gs_sched_gpm_workload(const struct gs_sched *s, const char *ns, const char *name, struct gs_sched_workload *out);
void gs_sched_workload_free(struct gs_sched_workload *w);

/* ---- mapped GPUs: each GPU a running pod of ours holds by its map (gpu_scheduler_mapped_gpu_info) ----
 * What only the scheduler knows and the GPU exporters do not (the device plugin never gave these GPUs,
 * so PodResources does not name their pods): one row per device held by a pod of ours BOUND with
 * status.phase Running, as its use holds them (its map entry's devices). Reads the engine, never
 * changes it; O(pods of ours + their devices) per call, in no particular order.
 */
struct gs_sched_mapped_gpu {
	const char *node;            /* the node the pod is bound to */
	const char *device;          /* as its entry names it: an index ("3") or an ID ("GPU-8f2c...") */
	long gpu;                    /* the GPU's index on its node: device's, or its ID's in the agent's table
				      * believed (sched_agent.h); -1 when unknown */
	const char *uuid;            /* the GPU's ID: device's, or its index's in that table; NULL when unknown */
	const char *ns, *pod;        /* the pod */
	const char *kind, *workload; /* its controller (ownerReference kind and name); NULL for a bare pod */
	long index;                  /* its map index */
};
/* Calls fn for each row until fn returns non-zero, and returns that (0 after the last row). */
typedef int (*gs_sched_mapped_fn)(const struct gs_sched_mapped_gpu *g, void *ud);
int gs_sched_mapped_gpus(const struct gs_sched *s, gs_sched_mapped_fn fn, void *ud);

/* The kind of a command line or a URL ("statefulset", "statefulsets", "sts", "job", "jobs", in any case)
 * as an ownerReference writes it ("StatefulSet", "Job"), or NULL for another word. */
const char *gs_sched_workload_kind(const char *word);

#endif
