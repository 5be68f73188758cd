/*
 * sched_int.h: the engine's records and indexes, the structs every file of the engine reads (sched.c and
 * the sched_*.c below it, docs/architecture.md draws the layers). Structs and macros only: each
 * function is declared in the header of the file that defines it (sched_node.h ... sched_audit.h).
 * Not a public header.
 */
#ifndef GS_SCHED_SCHED_INT_H
#define GS_SCHED_SCHED_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "core/hmap.h"
#include "core/list.h"
#include "sched/inuse.h"
#include "sched/map.h"
#include "sched/sched.h"

/* An extended resource amount: id from s->res_names. */
struct gs_sched__ext {
	uint32_t id;
	int64_t v;
};

/* A host port in use on a node (or asked for by a pod). */
struct gs_sched__port {
	int port;
	char proto;    /* 'T', 'U', 'S' */
	char *ip;      /* NULL: every address */
	size_t count;  /* on a node: pods using it */
	size_t hidden; /* on a node: of which uses set aside by a preemption's what-if (sched_preempt.h) */
};

/* A compact resource request or total: cpu in millicores, bytes, ext by resource id. */
struct gs_sched__req {
	int64_t cpu, mem, eph;
	uint32_t n_ext;
	struct gs_sched__ext *ext;
};

struct gs_sched__use;

/*
 * One device of a node in the ledger, and its holders grouped by owner: a pod may take a device held
 * only by pods of its own owner, or, when it carries the sharing annotation, by pods that carry it too.
 * Invariant: a bucket is in dev->owners exactly while it has a holder; n counts all holders.
 */
struct gs_sched__bucket {
	struct gs_list link;   /* in dev->owners */
	struct gs_list shared; /* holds of sharing pods */
	struct gs_list solo;   /* holds of the others */
	size_t n;
	char owner[];
};

struct gs_sched__dev {
	struct gs_list owners; /* buckets */
	size_t n_owners;
	size_t n;        /* holds */
	size_t n_hidden; /* of which holds of uses set aside by a preemption's what-if (sched_preempt.h) */
	char name[];     /* "0", "GPU-8f2c...": the key in node->ledger */
};

struct gs_sched__hold {
	struct gs_list link; /* in bucket->shared or ->solo */
	struct gs_sched__bucket *bucket;
	struct gs_sched__dev *dev;
	struct gs_sched__use *use; /* the use whose holds[] this is */
};

/*
 * What a pod on a node takes from it, for every non-terminal pod with spec.nodeName (whatever its
 * scheduler) and for our pods while their Binding is in flight (the reservation, so the next decision
 * sees it). Keyed by uid in s->uses; counted in node->used exactly while it exists.
 */
struct gs_sched__use {
	struct gs_sched__node *node;
	struct gs_list nlink; /* in node->uses */
	struct gs_sched__req req;
	size_t n_ports, n_holds;
	struct gs_sched__port *ports; /* ip strings owned */
	struct gs_sched__hold *holds; /* one per device held */
	int shared;
	char *uid;
	char *owner; /* the owner key "NS/UID" (gs_sched__owner_key), or the pod's uid; with holds only */
	char *key;   /* "ns/name": who it is, for messages and preemption (the uid when not given) */
	/*
	 * For preemption (sched_preempt.h): bound is set on the use of a pod bound to its node (sched.c,
	 * use_from_obj), never on a reservation or a placeholder; priority and created_ms are that pod's,
	 * deleting its metadata.deletionTimestamp (still running: it still counts). hidden: set aside by a
	 * preemption's what-if, only during one call (gs_sched__use_hide); never set between calls.
	 * preempted: a preemption handed out chose it as a victim (its delete was asked; an update of the
	 * pod does not clear it); it is never chosen again, and it counts until it stops, as deleting.
	 * nominated: not a running pod but the claim of a pod of ours nominated to this node by its
	 * preemption (sched_preempt.h): it counts for every pod of its priority or lower, the nominee
	 * included never (its fit sets it aside); priority is the nominee's. Invariant: nominated implies
	 * !bound, a pod of ours of that uid WAITING or QUEUED, and counted in node->n_nominated.
	 */
	int64_t priority;
	int64_t created_ms;
	unsigned char bound, deleting, hidden, preempted, nominated;
	/* With bound: the pod's metadata.labels, brought up to date on every update (one allocation,
	 * gs_sched__use_labels), which PodDisruptionBudgets select by (sched_pdb.h); NULL when none. */
	int n_labels;
	struct gs_label *labels;
	/*
	 * An ignored gpu-scheduler.io/assigned claim on this node (sched.c trusted_claim): the devices it
	 * named, and why it was not believed (a static string); NULL for almost every pod. Such a pod holds
	 * nothing in the ledger through it (invariant: ignored implies no holds); explain shows it.
	 */
	char *ignored;
	const char *ignored_why;
	const char *ignored_key; /* "ns/name", in the same allocation as ignored */
	/* One allocation: the struct, then holds[], req.ext[], and the strings (ports and ignored apart). */
};

/*
 * What the node agent published for a node (annotation GS_INUSE_ANNOTATION, inuse.h; sched_agent.c):
 * the devices the kubelet's device manager gave out there, by device ID, with the pod holding each.
 * Invariants: fresh implies data != NULL, and the slot is in s->agents (oldest seen_ms first) exactly
 * while fresh; ids indexes data's devices exactly while data != NULL.
 */
struct gs_sched__agent {
	struct gs_list link;   /* in s->agents while fresh */
	char *text;            /* the annotation as last seen; NULL: absent */
	struct gs_inuse *data; /* text parsed, without an error line; else NULL */
	char *problem;   /* with text and no data: "reports: ERROR-LINE" or "published data not used: PARSE-ERROR" */
	int64_t seen_ms; /* when the text last changed (the engine's clock; see gs_sched__agent_update) */
	int fresh;       /* data, and seen_ms + cfg.agent_stale_ms is still ahead */
	/* physical device ID (inuse.h, gs_inuse_physical: a replica's or a MIG instance's GPU) -> the first
	 * of data's devices of that GPU, by its index in data->devs (+ 1); chain[i] the index of the next one
	 * (+ 1), 0 after the last: every replica or instance of a GPU the device plugin handed out */
	struct gs_hmap ids;
	size_t *chain;
	struct gs_hmap conflicts; /* "device ID\0holder" of conflicts already reported -> (void *)1 */
	/*
	 * The GPU index table believed (sched_agent.h): its text ("0=GPU-aa 1=GPU-bb"), its IDs by index
	 * (n_table, NULL where it has none), the node's boot ID when it was believed, and table_moved while
	 * the data's table differs from it on the same boot (then indices go through the believed one).
	 */
	char *table;
	char **table_ids;
	size_t n_table;
	char *table_boot;
	int table_moved;
};

/*
 * A node slot exists while the node exists OR some pod waits for it OR some pod uses it OR a node
 * change is visiting its waiters (pinned) (a pod may name a node that has not joined yet; a pod bound
 * to a node outlives the node's deletion): the slot holds that node's waiter list, its running totals
 * and its device ledger.
 *
 * Waiters: a pod WAITING with a node reason is on the slot of the name its map entry gives, always,
 * whether that name is a node, an alias of one (cfg.alias_label), several, or nothing yet. A node's
 * change therefore places again the waiters of its own name and of its alias value (O(1) slots).
 */
struct gs_sched__node {
	struct gs_list waiters;        /* pods WAITING with a node reason whose map names this slot */
	struct gs_list dirty;          /* in s->dirty: usage went down, waiters to look at again */
	struct gs_list alink;          /* in alias->nodes while alias is set */
	struct gs_sched__alias *alias; /* present nodes with a non-empty alias label: their index entry */
	size_t n_waiters;
	int pinned; /* > 0: not freed by gs_sched__node_gc (a walk over its waiters runs) */
	int present;
	int ready;
	int unschedulable;
	/*
	 * Its physical GPUs, which a map's indices are bounded by and the device fit counts against
	 * (sched_node.h, gs_sched__node_gpus): the agent's index table believed, else GPU Feature
	 * Discovery's label nvidia.com/gpu.count, else the nvidia.com/gpu capacity (else allocatable) it
	 * advertises; -1: none of them (inuse.h, gs_inuse_node_gpus). gpus_from says which.
	 */
	int64_t gpus;
	enum gs_gpus_from gpus_from;
	struct gs_node_obj obj;     /* labels, taints, allocatable (name and rv not kept) */
	struct gs_sched__req alloc; /* obj.alloc, compact */
	struct gs_sched__req used;  /* sum of the uses on this node (used.ext sized to s->n_res) */
	int64_t used_pods;
	/*
	 * GPUs the device plugin gave out here: the nvidia.com/gpu requests of the uses that hold no device
	 * in the ledger (pods of other schedulers; a mapped pod's own request is its map's devices,
	 * renumbered). Which GPUs they got is unknown without the node agent, so they are counted against
	 * the node's GPUs, not named (gs_sched__fit_devices).
	 */
	int64_t plugin_gpus;
	size_t n_uses;
	struct gs_list uses; /* the n_uses uses (gs_sched__use.nlink), oldest first */
	size_t hidden_devs;  /* devices of the ledger whose every holder is hidden (sched_preempt.h), 0 between calls */
	size_t n_nominated;  /* of which nominations (gs_sched__use.nominated) */
	size_t n_reserved;   /* of which reservations of gang members waiting for their gang (sched_gang.c) */
	size_t n_leaving;    /* of which placeholders of ours given up, until their deletion is seen */
	size_t n_ports, cap_ports;
	struct gs_sched__port *ports; /* host ports in use, with counts */
	struct gs_hmap ledger;        /* device name -> struct gs_sched__dev */
	/* "ns/name" -> use, for the uses here with extended resources (who the agent may name) */
	struct gs_hmap keyed;
	struct gs_sched__agent agent;
	char name[]; /* the key of s->nodes */
};

/*
 * The alias index: one entry per alias label value carried by at least one present node, listing those
 * nodes in the order they took the value. Invariant: an entry is in s->aliases exactly while n > 0.
 */
struct gs_sched__alias {
	struct gs_list nodes; /* gs_sched__node.alink */
	size_t n;
	char value[]; /* the key of s->aliases */
};

/* What an pending pod of ours asks of its node beyond the map: NULL in the pod when it asks nothing. */
/*
 * The constraints of a pod that the node checks read, deep copies of its record's fields of the same
 * names (sched_place.c, copy_constraints). Their own record and not a struct gs_pod_obj: every pod
 * carries tolerations (the apiserver adds two), so every pending pod keeps one, and 10,000 whole pod
 * records of 472 bytes each were most of the engine's memory at the bench's peak (docs/performance.md).
 */
struct gs_sched__cons {
	struct gs_label *node_selector; /* spec.nodeSelector */
	struct gs_sel_term *terms;      /* required node affinity's nodeSelectorTerms, ORed */
	struct gs_toleration *tolerations;
	char *os_name; /* spec.os.name, NULL when absent */
	int n_node_selector;
	int has_affinity;
	int n_terms;
	int n_tolerations;
};

struct gs_sched__spec {
	struct gs_sched__req req;
	size_t n_ports;
	struct gs_sched__port *ports;
	struct gs_sched__cons cons;
};

struct gs_sched__gang;
struct gs_sched__gpm;

/*
 * What a pod of ours that names a GPUPlacementMap (gpu-scheduler.io/placement-map, sched/gpm.h) keeps
 * of its own fields to resolve its map again without its record when the object changes
 * (sched_gpm.c): the object's slot, and the inputs the checks after the map read. Kept while the pod
 * exists, is ours and its last full record names an object; NULL otherwise.
 */
struct gs_sched__pref {
	struct gs_list link;       /* in gpm->pods */
	struct gs_sched__gpm *gpm; /* the slot of ns/map_ref */
	struct gs_sched__pod *pod;
	int64_t generation; /* gpu-scheduler.io/placement-map-generation; -1 when absent or not a number */
	char *gen_text;     /* as written (NULL: absent), for messages */
	enum gs_cuda_state cuda_state;
	char *cuda_value;
	int inline_map; /* the pod carries the inline map annotation too: refused */
	int own_gang;   /* the pod carries gang annotations of its own: refused */
	char *no_index; /* with index < 0: why (no_index_msg) */
	char *gated;    /* with scheduling gates: the message */
};

/*
 * A GPUPlacementMap slot (sched_gpm.c), keyed "ns/name" in s->gpms. It exists while the object does
 * (present) OR a pod of ours references ns/name (n_pods > 0): a reference to an object not seen yet
 * waits on the slot. Invariants: n_pods is the length of pods; a slot is on s->gpm_ready (on 1) or
 * s->gpm_cooling (on 2) only while present; on s->gpm_ready implies dirty; n_cool_dirty counts the
 * dirty slots on s->gpm_cooling. With present, the object is held (refused == NULL: its text kept, its
 * bytes charged to its namespace's budget, s->gpm_ns) or refused for memory (refused set: no text, no
 * map, no charge); a held object's map is parsed once when taken (entries, map_error) and kept parsed
 * (map) only while pods reference it: map != NULL exactly when held, parsing and n_pods > 0.
 */
struct gs_sched__gpm {
	struct gs_list pods;  /* gs_sched__pref.link */
	size_t n_pods;        /* referencing pods of ours (any state) */
	struct gs_list slink; /* in s->gpm_ready or s->gpm_cooling */
	int on;               /* 0: neither; 1: gpm_ready; 2: gpm_cooling */
	int dirty;            /* its status may differ from the last one handed out */
	int64_t due_ms;       /* on gpm_cooling: no hand-out before then */
	int present;
	int64_t generation;
	char *uid;
	char *text; /* spec.map (map_len bytes, NUL-terminated copy); NULL when refused */
	size_t map_len;
	char *placement, *gang_timeout, *gang_size;
	struct gs_map *map; /* a reference from s->maps while pods reference the object, else NULL */
	char *map_error;    /* the parse error ("line 3: ..."), NULL when it parses */
	size_t entries;     /* the map's entries (0 when it does not parse) */
	size_t cost;        /* bytes charged to the budgets while held (sched_gpm.c, gpm_cost) */
	char *refused;      /* not held, why (the memory budgets), or NULL */
	int handed;         /* last holds the last status handed out */
	struct gs_gpm_status last;
	char *last_name, *last_msg, *last_err, *last_refused; /* last's strings, owned */
	char *ns, *name;                                      /* in key's allocation */
	char *label; /* "GPUPlacementMap ns/name", for messages; in key's allocation */
	char key[];  /* "ns/name\0ns\0name\0GPUPlacementMap ns/name" */
};

/* An inline map kept for the pods of one namespace (sched_gpm.c, gs_sched__inline_take): charged once
 * to the namespace however many of its pods carry that text. */
struct gs_sched__inline {
	size_t refs; /* pods with map_charged on that map */
	size_t cost;
	char key[]; /* "ns/MAP-ADDRESS", the table's key */
};

/* The maps of one namespace against --placement-map-memory-per-namespace: its GPUPlacementMaps held and
 * the inline maps its pods keep. Exists while bytes or refused is not 0. */
struct gs_sched__gpm_ns {
	size_t bytes;   /* the held objects' and kept inline maps' costs */
	size_t refused; /* its slots refused for memory */
	char ns[];
};

struct gs_sched__pod {
	struct gs_list qlink; /* in wait_node->waiters (WAITING) */
	struct gs_list rlink; /* in s->reportq when a report may be due */
	struct gs_list plink; /* in s->preemptq: waits for what preemption may clear (sched_preempt.h) */
	enum gs_pod_state state;
	enum gs_wait_reason reason;       /* with WAITING */
	struct gs_sched__node *wait_node; /* with a node reason */
	char *msg;                        /* with WAITING: why */
	enum gs_wait_reason reported_reason;
	char *reported; /* the last reported message, or NULL */

	/* What the pod's own fields say; recomputed on upserts, never from node events. */
	struct gs_map *map;               /* a reference, or NULL (see map_charged) */
	const struct gs_map_entry *entry; /* in map, or entry_copy; NULL unless the index has an entry */
	struct gs_map_entry *entry_copy;  /* the entry alone, its strings in its block: an inline map
					   * past its namespace's budget is not kept (sched_gpm.c) */
	int map_charged;                  /* map is an inline map counted in s->inline_maps */
	enum gs_wait_reason intrinsic;    /* NONE when the pod itself is ready to place */
	char *imsg;                       /* with intrinsic != NONE */
	long index;                       /* -1 when unknown */
	enum gs_index_source index_source;
	int recreate_ok; /* owned by a StatefulSet or a Job */
	int shared;      /* allow-shared-devices */
	int running;     /* BOUND: its phase is Running, as last seen (gs_sched_mapped_gpus) */
	int64_t created_ms;
	int64_t priority;
	int preempt_never; /* spec.preemptionPolicy Never */
	/* status.nominatedNodeName at its first sight (a restart, a failover: sched.c), until it is taken
	 * back (the pod waits for room on that node: sched_place.c) or the pod stops pending; else NULL. */
	char *status_nominated;
	int64_t gpu_req;             /* nvidia.com/gpu the containers request (device plugin) */
	struct gs_sched__spec *spec; /* NULL: requests nothing, no ports, no constraints */
	char *owner;                 /* owner key "NS/UID" (sched_node.h), or NULL for a bare pod (its uid counts) */
	char *owner_kind;            /* the controller's kind ("StatefulSet") and name, with owner; else NULL */
	char *owner_name;
	char *rv;       /* resource_version of the last upsert taken */
	char *noticed;  /* the DevicePluginRequest message last reported, or NULL */
	int notice_due; /* a DevicePluginRequest warning waits in reportq */

	/*
	 * All or nothing (sched_gang.c): the gang of its owner when the pod is an all-or-nothing member
	 * (an owner and gpu-scheduler.io/placement: all-or-nothing), else NULL. reserved: WAITING with
	 * GS_WAIT_GANG and holding its reservation (a use on its node, as a Binding in flight does);
	 * invariant: reserved implies gang, WAITING, reason GANG and a use of its uid.
	 */
	struct gs_sched__gang *gang;
	struct gs_list glink; /* in gang->members */
	int reserved;
	int reserved_gpus; /* with reserved: its entry's devices when it reserved (its gang's gpus_reserved) */
	int committed;     /* handed out by its gang's commit (not alone): a failed Binding is told on the owner */
	/* Its placeholder pod (cfg.gang_placeholders): the name and node of the one asked for while it holds
	 * its reservation; NULL otherwise. Invariant: ph implies reserved, and ph->node is its use's node. */
	struct gs_sched__ph *ph;
	/* Its GPUPlacementMap reference (sched_gpm.c), NULL when its map is inline or absent. */
	struct gs_sched__pref *ref;

	unsigned attempts; /* Bindings handed out */
	int64_t due_ms;    /* with BACKOFF */
	uint64_t seq;      /* with QUEUED: order among equal priority and creation time */
	size_t heap_pos;   /* with QUEUED or BACKOFF: position in s->bindq or s->retry */

	char *uid, *ns, *name, *key; /* key is "ns/name"; all four in one allocation (uid) */
};

/*
 * The pods of one owner placed all or nothing (sched_gang.c, docs/sched.md "All or nothing"). A gang
 * exists while it has a member (s->gangs, keyed by the owner's namespace and uid). Gathering: no member is queued;
 * each member that passes every check holds a reservation and waits (GANG); when n_reserved reaches
 * size the gang goes on s->gangs_ready and the next pull verifies every reservation on one snapshot and
 * hands its members out back to back, ahead of every other pod (committing). After that (ran) its
 * members are placed alone, as pods without a gang are. A gang not complete by deadline_ms times out:
 * its reservations are released and it rests until retry_ms (backoff), then gathers again.
 * Invariants: n_members counts members; n_reserved counts the reserved ones; a gang is on
 * s->gangs_gathering exactly while !ran; on s->gangs_ready only while !ran or committing.
 */
struct gs_sched__gang {
	struct gs_list members; /* gs_sched__pod.glink */
	struct gs_list glink;   /* in s->gangs_gathering while !ran */
	struct gs_list rlink;   /* in s->gangs_ready: complete at its last placement, or committing */
	size_t n_members, n_reserved;
	long size;              /* members that must fit together: gang-size, else the map's entries */
	int64_t timeout_ms;     /* gang-timeout, cut to cfg.max_gang_timeout_ms */
	int64_t asked_ms;       /* gang-timeout as asked (above the cap: timeout_ms was cut) */
	int64_t started_ms;     /* gathering since (the engine's clock) */
	int64_t deadline_ms;    /* started_ms + timeout_ms */
	int64_t retry_ms;       /* with resting: gathering starts again */
	int64_t first_seen_ms;  /* its first member's creation time (the pods' clock), for the latency */
	unsigned timeouts;      /* times it timed out */
	int ran;                /* committed once, or seen with a bound member */
	int committing;         /* handing its reserved members out */
	int resting;            /* timed out, until retry_ms */
	char *ns, *kind, *name; /* the owner, for messages and events */
	char *from;             /* where its settings were read, for messages: its newest member's
				 * GPUPlacementMap's label ("GPUPlacementMap ns/name"), NULL: the annotations */
	/*
	 * Its namespace's budget (sched_gang.c, "budgets"): admitted from its first reservation until it
	 * holds none (then on its namespace's holding list), claiming claim_members and claim_gpus (its
	 * size and its map's GPUs when admitted; more while it reserves more). On the capped list while one
	 * of its members waits GANG_LIMIT. need_*: the claim it would make, for need_map and need_size.
	 * Invariant: admitted exactly while nslink is linked; n_reserved > 0 implies admitted.
	 */
	struct gs_list nslink, caplink;
	int admitted;
	long claim_members, claim_gpus, gpus_reserved;
	const struct gs_map *need_map;
	long need_size, need_gpus;
	char uid[]; /* the owner's key, "NS/UID" (gs_sched__owner_key): the key of s->gangs */
};

/* One namespace's gangs against its budget (sched_gang.c): those admitted, those capped, and, in
 * `explain`'s engine, the daemon's numbers (seeded). Exists while a list is not empty or seeded. */
struct gs_sched__gang_ns {
	struct gs_list holding; /* gs_sched__gang.nslink */
	struct gs_list capped;  /* gs_sched__gang.caplink */
	int seeded;
	long cap_members, cap_gpus, held_members, held_gpus; /* with seeded */
	char ns[];
};

/* An event about a gang (sched_gang.c) not pulled yet: on its owner (pod NULL) or on one member. */
struct gs_sched__gang_event {
	struct gs_list link;     /* in s->gang_events, FIFO */
	const char *reason;      /* "GangTimedOut", "GangScheduled", "GangBindingFailed" (static) */
	enum gs_wait_reason why; /* GangTimedOut on the owner: the first blocking member's reason (NONE: none
				  * created blocks, members are missing) */
	int warning;
	char *ns, *kind, *name, *owner_uid; /* the owner */
	char *pod_uid, *pod_name;           /* the member told, or NULL for the owner */
	char *message;
	/* One allocation: the struct, then the strings. */
};

struct gs_sched__ph_action;

struct gs_sched__ph {
	char *node;
	int asked; /* its create was handed out (the controller may have made it) */
	/* The pod's uid, from its create's reply (gs_sched_placeholder_created), NULL before: then it is in
	 * s->ph_ours under that uid (invariant, audited). */
	char *uid;
	/* Its create, queued and not handed out yet (NULL once it is): a placeholder given up before that
	 * costs nothing, so the queue of a replica that does not lead (and pulls nothing) stays as long
	 * as the placeholders wanted now. */
	struct gs_sched__ph_action *pending;
	char name[]; /* the placeholder pod's name, in the member's namespace */
};

/* A placeholder to create (for member_uid, named name: skipped at the pull unless that member still
 * wants exactly that one) or to delete (ns/name; uid, when known, the delete's precondition). All
 * strings in the same allocation. */
struct gs_sched__ph_action {
	struct gs_list link; /* in s->ph_actions, FIFO */
	int create;
	const char *member_uid, *ns, *name, *uid;
};

/*
 * A placeholder pod we created: the apiserver's reply to our create named its uid (issue 36). Only
 * these are placeholders to the engine; a pod that merely claims to be one (its name, its
 * gpu-scheduler.io/placeholder-for annotation: anyone who can create a pod can write both) counts as
 * the ordinary pod it is. In s->ph_ours from the reply until the pod's DELETED event. Invariant
 * (audited): no pod record and no use has the uid of one. One allocation.
 */
struct gs_sched__ph_ours {
	const char *member_uid, *ns, *name;
	/* Its member gave it up (its delete is queued): until its deletion is seen it counts as the pod it
	 * is, a use of its node under its uid with what it requests (ph_drop). Invariant: a use of this uid
	 * exists exactly while leaving. */
	int leaving;
	char uid[];
};

/* A binary min-heap of pods; a pod is in at most one heap at a time (heap_pos). */
struct gs_sched__heap {
	struct gs_sched__pod **v;
	size_t len, cap;
	int (*less)(const struct gs_sched__pod *a, const struct gs_sched__pod *b);
};

struct gs_sched {
	struct gs_sched_config cfg;  /* strings copied */
	struct gs_hmap pods;         /* uid -> pod (key borrowed from the pod) */
	struct gs_hmap pods_by_name; /* "ns/name" -> pod (the newest uid for that name) */
	struct gs_hmap nodes;        /* name -> node slot (key borrowed from the slot) */
	struct gs_hmap aliases;      /* alias label value -> struct gs_sched__alias (key borrowed) */
	struct gs_hmap uses;         /* uid -> use (key borrowed), every pod that takes from a node */
	struct gs_hmap res_ids;      /* extended resource name -> id + 1 */
	char **res_names;            /* id -> name */
	unsigned char *res_ignored;  /* id -> 1 when the fit ignores it (cfg.ignored_resources, _groups) */
	unsigned char *res_gpu;      /* id -> 1 for a GPU resource of the device plugin (cfg.gpu_resources) */
	uint32_t n_res;
	struct gs_map_cache *maps;
	struct gs_sched__heap bindq;                /* QUEUED pods: priority, then creation time, then seq */
	struct gs_sched__heap retry;                /* BACKOFF pods by due_ms */
	struct gs_list reportq;                     /* pods whose report may be due, FIFO */
	struct gs_list dirty;                       /* node slots whose waiters must be placed again */
	struct gs_list agents;                      /* node slots with fresh agent data, oldest seen_ms first */
	struct gs_list conflicts;                   /* struct gs_sched__conflict to report, FIFO */
	struct gs_sched__conflict *reported;        /* the last one handed out, freed at the next call */
	struct gs_hmap gangs;                       /* owner uid -> struct gs_sched__gang (key borrowed) */
	struct gs_list gangs_gathering;             /* gangs not ran yet (sched_gang.c's timers walk these) */
	struct gs_hmap gang_ns;                     /* namespace -> struct gs_sched__gang_ns (key borrowed) */
	struct gs_hmap gang_limits;                 /* cfg.gang_limits parsed once: namespace (borrowed from
						     * that text) -> struct gs_gang_limit */
	struct gs_list gangs_ready;                 /* gangs to commit at the next pull, in the order they completed */
	struct gs_list gang_events;                 /* struct gs_sched__gang_event to report, FIFO */
	struct gs_sched__gang_event *gang_reported; /* the last one handed out, freed at the next call */
	size_t n_gathering;                         /* gangs on gangs_gathering */
	uint64_t gangs_bound, gang_timeouts;        /* gangs committed; timeouts */
	int64_t now_ms;                             /* the latest now_ms the engine was given (explain's time left) */
	struct gs_list ph_actions;                  /* struct gs_sched__ph_action, FIFO */
	struct gs_sched__ph_action *ph_pulled;      /* the last one handed out, freed at the next call */
	struct gs_hmap gpms;                        /* "ns/name" -> struct gs_sched__gpm (key borrowed) */
	struct gs_list gpm_ready;                   /* slots whose status may be handed out now, FIFO */
	struct gs_list gpm_cooling;                 /* slots handed out less than the interval ago, by due_ms */
	size_t n_cool_dirty;                        /* of which dirty */
	struct gs_hmap gpm_ns;                      /* namespace -> struct gs_sched__gpm_ns (key borrowed) */
	struct gs_hmap inline_maps;                 /* "ns/MAP-ADDRESS" -> struct gs_sched__inline (key borrowed) */
	uint64_t inline_not_kept;                   /* inline maps past a budget: their pods keep the entry */
	size_t gpm_bytes;                           /* the held objects' costs, every namespace */
	size_t gpm_refused;                         /* slots refused for memory */
	int gpm_relist;                             /* memory was freed while some were refused */
	int64_t gpm_relist_ms;                      /* when the last relist was handed out */
	struct gs_list preemptq;                    /* pods that may preempt, FIFO (sched_preempt.h) */
	struct gs_list preempt_ready;               /* preemptions decided, to hand out (sched_preempt.c) */
	struct gs_sched__preempt_out *preempt_out;  /* the last preemption handed out, freed at the next call */
	uint64_t preempt_attempts[2];               /* plans made: [0] none would do, [1] victims handed out */
	uint64_t preempt_victims;                   /* victims handed out */
	size_t n_nominated;                         /* nominations, every node's (node->n_nominated summed) */
	uint64_t preempt_pdb_victims;               /* victims handed out whose deletion violated a budget */
	struct gs_hmap pdbs;                        /* "ns/name" -> struct gs_sched__pdb (key borrowed) */
	struct gs_hmap ph_orphans;                  /* placeholder pod uid -> its key (owned): delete asked */
	struct gs_hmap ph_ours;                     /* placeholder pod uid -> struct gs_sched__ph_ours (key borrowed) */
	size_t n_ph;                                /* members with ph */
	uint64_t ph_seq;                            /* placeholder names' counter (seeded from the rng) */
	struct gs_sched__ph *ph_handed;             /* the placeholder of the last member handed out (its name is in
						* the decision), freed at the next hand-out or with the engine */
	size_t agent_nodes[3];   /* nodes by agent data: fresh, stale, unusable (sched_agent.c; audited) */
	uint64_t conflicts_seen; /* device conflicts found (gpu_scheduler_device_conflicts_total) */
	uint64_t seq;
	uint64_t rng;
	size_t by_state[GS_POD__COUNT];
	size_t waiting_by[GS_WAIT__COUNT];
	size_t nodes_present, nodes_schedulable;
	size_t devs_held, devs_shared; /* ledger: devices with a holder, of which with several owners */
	uint64_t claims_ignored;       /* pods first seen on a node with a claim not believed (trusted_claim) */
	uint64_t binds_ok, binds_gone, binds_retry, reports;
};

/* A device conflict found and not reported yet (sched_agent.c): a device the map gives to pod uid is also
 * held through the device plugin by other ("ns/name"). All strings in the same allocation. */
struct gs_sched__conflict {
	struct gs_list link; /* in s->conflicts */
	const char *uid, *ns, *name, *other_uid, *other_ns, *other_name, *node, *message, *other_message;
};

/* The taints the node lifecycle controller puts on nodes (TaintNodesByCondition, 1.17+). */
#define GS_TAINT_NOT_READY     "node.kubernetes.io/not-ready"
#define GS_TAINT_UNREACHABLE   "node.kubernetes.io/unreachable"
#define GS_TAINT_UNSCHEDULABLE "node.kubernetes.io/unschedulable"

#endif
