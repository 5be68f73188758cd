/*
 * agent.h: the node agent's pure parts (docs/agent.md), no I/O but reading the driver's directory:
 * what the kubelet's PodResources List says -> the devices-in-use annotation (sched/inuse.h).
 *
 *   gs_agent_collect     List records -> devices held, filtered by resource, one per (resource, ID)
 *   gs_agent_union       the settle period: what was published before, plus what the kubelet says now
 *   gs_agent_same_data   change detection: two annotation texts equal but for their time line
 *   gs_agent_nvinfo_*    the GPU index table from /proc/driver/nvidia/gpus/<bus>/information
 *
 * The daemon around them (polling, the node's pod watch, PATCH, metrics) is agent_cmd.c.
 */
#ifndef GS_K8S_AGENT_H
#define GS_K8S_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "k8s/podresources.h"
#include "sched/inuse.h"

/* Where the NVIDIA driver lists its GPUs, one directory per PCI address. */
#define GS_AGENT_NVIDIA_PROC_DIR "/proc/driver/nvidia/gpus"
/* Cap on one `information` file (a real one is ~400 bytes). */
#define GS_AGENT_NVINFO_MAX      16384
/* The default --resources. */
#define GS_AGENT_RESOURCES       "nvidia.com/"

/* --resources' rule: sched/inuse.h's gs_inuse_resource_match, which the engine reads its GPU resources by. */
int gs_agent_resource_match(const char *list, const char *resource);

/*
 * A set of devices held: each dev's strings are owned by the set (one allocation each). Invariant:
 * each (resource, id) at most once, as the annotation requires.
 */
struct gs_agent_devs {
	struct gs_inuse_dev *devs;
	size_t n, cap;
};
void gs_agent_devs_free(struct gs_agent_devs *s); /* safe on a zeroed set and twice */
/* The index of (resource, id) in s, or -1. */
long gs_agent_devs_find(const struct gs_agent_devs *s, const char *resource, const char *id);
/* Adds a copy of d unless its (resource, id) is there. 1 added, 0 already there (the first kept). */
int gs_agent_devs_add(struct gs_agent_devs *s, const struct gs_inuse_dev *d);

/*
 * List records -> *out (zeroed by the caller): the records whose resource matches `resources`, holder
 * "namespace/pod". The same device twice for one pod (two containers, or a repeated entry) is one;
 * for two pods the first record is kept and *conflicts counts each other pod's record (the caller
 * logs them: gs_agent_collect's conflict callback, when not NULL, is told each one).
 */
typedef void (*gs_agent_conflict_cb)(const struct gs_podres_dev *kept_by, const struct gs_podres_dev *dropped,
				     void *ud);
void gs_agent_collect(const struct gs_podres_list *l, const char *resources, struct gs_agent_devs *out,
		      size_t *conflicts, gs_agent_conflict_cb cb, void *ud);

/*
 * The settle period's set: every device of now, plus each device of before whose (resource, id) now
 * does not list (the kubelet's holder wins where both name the device). Added to *out (zeroed).
 */
void gs_agent_union(const struct gs_agent_devs *before, const struct gs_agent_devs *now, struct gs_agent_devs *out);

/* 1 when a and b are the same annotation but for their first line (the version and time). */
int gs_agent_same_data(const char *a, const char *b);

/* ---- the GPU index table ------------------------------------------------------------------------- */

struct gs_agent_gpu {
	char uuid[GS_PODRES_MAX_ID + 1]; /* "GPU-8f2c..." */
	uint64_t bus;                    /* domain:bus:device.function as one number, for ordering */
};

/*
 * One `information` file of the driver (text[0..len)): lines "Key: value" with blanks after the
 * colon; the two read are
 *     GPU UUID:        GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b
 *     Bus Location:    0000:62:00.0
 * (hex domain of 1-8 digits, bus 2, device 2, function 1). Other lines are skipped. 0, or -EINVAL with
 * err saying what is missing or malformed (the UUID must be printable ASCII without blanks, at most
 * GS_PODRES_MAX_ID bytes, each key at most once).
 */
int gs_agent_nvinfo_parse(const char *text, size_t len, struct gs_agent_gpu *out, char *err, size_t errlen);

/*
 * The index table from gpus[0..n) (reordered): sorted by bus location, index i = the i-th GPU (the
 * driver's and nvidia-smi's numbering; CUDA's only with CUDA_DEVICE_ORDER=PCI_BUS_ID). Fills ids[i]
 * with pointers into gpus. -EINVAL (err filled) for two GPUs on one bus location or one UUID twice, or
 * more than GS_INUSE_MAX_INDEX GPUs.
 */
int gs_agent_nvinfo_order(struct gs_agent_gpu *gpus, size_t n, const char **ids, char *err, size_t errlen);

/*
 * Reads dir (GS_AGENT_NVIDIA_PROC_DIR): each subdirectory's `information`, then orders them. 0 with
 * *gpus (malloc'd, free it) and *n; -ENOENT when dir does not exist (no table, no error to report);
 * another negative code with err (a file unreadable, malformed, over its cap; too many GPUs).
 */
int gs_agent_nvinfo_read(const char *dir, struct gs_agent_gpu **gpus, size_t *n, char *err, size_t errlen);

#endif
