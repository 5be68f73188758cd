/*
 * inuse.h: the devices in use on one node, as the node agent publishes them (`gpu-scheduler agent`,
 * docs/agent.md) in the annotation GS_INUSE_ANNOTATION of that Node, and as the engine reads them.
 *
 * Text, lines separated by '\n', fields by one space, printable ASCII:
 *     v1 2026-11-25T15:21:34Z               always first: the version, the agent's clock (UTC) when it
 *                                           last read the kubelet (or found it could not)
 *     index 0=GPU-8f2c... 1=GPU-3a1b...     optional, second: GPU index -> device ID, as the node's
 *                                           driver numbers them (PCI bus order, nvidia-smi's index)
 *     mig MIG-0c7e...=0 MIG-5d1a...=0       optional, right after the index line: the node's MIG
 *                                           instances, each MIG-<uuid> with its parent GPU's index in
 *                                           the table, sorted by ID (only written when there is one:
 *                                           schedulers before it read no such line)
 *     error the kubelet's PodResources ...  optional, instead of device lines: why the agent has no data
 *     RESOURCE DEVICE-ID NAMESPACE/POD      one per device held through the device plugin, sorted by
 *                                           resource then ID, each (RESOURCE, DEVICE-ID) once
 * e.g.
 *     v1 2026-11-25T15:21:34Z
 *     index 0=GPU-aa 1=GPU-bb
 *     nvidia.com/gpu GPU-bb team-b/infer-7
 *
 * Limits: GS_INUSE_MAX_BYTES of text, GS_INUSE_MAX_DEVS device lines, GS_INUSE_MAX_INDEX table entries
 * (indices 0..GS_INUSE_MAX_INDEX-1), fields of at most 256 bytes (holders: 63-byte namespace, 253-byte
 * name). A text that breaks any rule is refused whole, with the line and the problem; a version other
 * than v1 too (a newer agent than this scheduler: the node is treated as having no agent data).
 */
#ifndef GS_SCHED_INUSE_H
#define GS_SCHED_INUSE_H

#include <stddef.h>
#include <stdint.h>

#define GS_INUSE_ANNOTATION "gpu-scheduler.io/devices-in-use"
#define GS_INUSE_MAX_BYTES  (128 * 1024)
#define GS_INUSE_MAX_DEVS   1024
#define GS_INUSE_MAX_INDEX  64
#define GS_INUSE_MAX_MIG    448 /* 7 instances on each of 64 GPUs */

struct gs_inuse_dev {
	const char *resource; /* "nvidia.com/gpu" */
	const char *id;       /* "GPU-8f2c...", as the device plugin names the device */
	const char *holder;   /* "namespace/pod" */
};

/* A MIG instance of a GPU of the table: its ID ("MIG-0c7e...") and its parent's index. */
struct gs_inuse_mig {
	const char *id;
	size_t parent;
};

/*
 * Parsed (gs_inuse_parse: one allocation, strings inside) or to format (gs_inuse_format: the
 * caller's). Invariants: error != NULL implies n_devs == 0; index[i] is NULL where the table has no i;
 * n_mig > 0 implies a table, each mig[k].parent one of its GPUs, mig sorted by ID without repeats.
 */
struct gs_inuse {
	int64_t at_ms;     /* the agent's time of the data, ms since the epoch, whole seconds */
	const char *error; /* NULL, or what kept the agent from the kubelet's answer */
	size_t n_index;    /* 0: no table */
	const char **index;
	size_t n_mig;
	struct gs_inuse_mig *mig;
	size_t n_devs;
	struct gs_inuse_dev *devs;
};

/* Parses text[0..len) into *out (gs_inuse_free it). Returns 0, -EINVAL with err ("line 3: ...") filled,
 * or -ENOMEM. */
int gs_inuse_parse(const char *text, size_t len, struct gs_inuse **out, char *err, size_t errsize);
void gs_inuse_free(struct gs_inuse *u); /* NULL is fine */

/*
 * The annotation's text for u (devs in any order; sorted and checked here), malloc'd; NULL with err
 * filled when u breaks a rule above (a field with a blank, a duplicate device, over a limit). What
 * gs_inuse_parse reads back is u.
 */
char *gs_inuse_format(const struct gs_inuse *u, char *err, size_t errsize);

/*
 * The length of the physical device's ID within a device ID: the ID up to its first "::", which the
 * NVIDIA device plugin puts between a GPU's ID and a replica's number when it shares the GPU by
 * time-slicing or MPS ("GPU-8f2c...::3" is replica 3 of GPU-8f2c...); the whole ID when there is none.
 */
size_t gs_inuse_physical_len(const char *id);
/* The index of the GPU whose MIG instance id[0..len) is by u's mig line, or -1 (not one it lists). */
long gs_inuse_mig_parent(const struct gs_inuse *u, const char *id, size_t len);
/*
 * The physical GPU of device ID id[0..len) by u (NULL: none), into *phys and *phys_len: a MIG instance's
 * parent GPU (its ID in u's table), else the ID up to its first "::" (gs_inuse_physical_len).
 */
void gs_inuse_physical(const struct gs_inuse *u, const char *id, size_t len, const char **phys, size_t *phys_len);

/*
 * 1 when resource is named by list: a comma-separated list of resource names ("nvidia.com/gpu"),
 * prefixes ending in '/' ("nvidia.com/" matches nvidia.com/gpu and nvidia.com/mig-1g.5gb) or prefixes
 * ending in '*' ("nvidia.com/mig-*" matches nvidia.com/mig-1g.5gb, not nvidia.com/mig-); blanks around
 * items are ignored, empty items match nothing. NULL matches nothing.
 */
int gs_inuse_resource_match(const char *list, const char *resource);

/* The device ID GPU index i has in u's table, or NULL. */
const char *gs_inuse_index_id(const struct gs_inuse *u, long i);

/*
 * A node's physical GPUs, as the scheduler, its webhook and lint all count them (docs/agent.md, "Shared
 * GPUs"): the entries of the agent's index table (table; 0 when it has none), else GPU Feature
 * Discovery's count (gfd_count: the value of its label GS_GFD_COUNT_LABEL, NULL when absent; one that is
 * not a count of at most 6 digits is none), else what the node advertises, the larger of its
 * nvidia.com/gpu capacity and allocatable (each -1 when absent). Returns the count (-1: none of them) and
 * says in *from which it is. Time-slicing and MPS advertise replicas: the first two count GPUs.
 */
#define GS_GFD_COUNT_LABEL "nvidia.com/gpu.count"
enum gs_gpus_from {
	GS_GPUS_ADVERTISED = 0, /* status.capacity / .allocatable nvidia.com/gpu */
	GS_GPUS_TABLE,          /* the node agent's GPU index table */
	GS_GPUS_LABEL,          /* GPU Feature Discovery's nvidia.com/gpu.count */
};
int64_t gs_inuse_node_gpus(size_t table, const char *gfd_count, int64_t capacity, int64_t allocatable,
			   enum gs_gpus_from *from);
/* The count in words, for messages: "has 4 GPUs by its agent's index table", "has 1 GPU by its label
 * nvidia.com/gpu.count", "advertises 16 nvidia.com/gpu". */
void gs_inuse_node_gpus_words(int64_t gpus, enum gs_gpus_from from, char *out, size_t size);

/* "2026-11-25T15:21:34Z" <-> ms since the epoch (whole seconds; -EINVAL for anything else). */
int gs_inuse_time_parse(const char *s, size_t len, int64_t *ms);
void gs_inuse_time_format(int64_t ms, char out[21]);

#endif
