/*
 * objects.h: the compact pod and node records placement works on.
 *
 * src/k8s/decode.c fills them from apiserver JSON, keeping only these fields (never whole objects);
 * src/sched copies what it keeps. All strings are NUL-terminated and owned by the record; a NULL
 * string means "absent". gs_pod_obj_free / gs_node_obj_free release the strings, not the record.
 */
#ifndef GS_SCHED_OBJECTS_H
#define GS_SCHED_OBJECTS_H

#include <stdint.h>

/* What the pod's containers say about CUDA_VISIBLE_DEVICES, as decoded. */
enum gs_cuda_state {
	GS_CUDA_UNSET = 0, /* no container (init or regular) sets it */
	GS_CUDA_SAME,      /* every container sets it to cuda_value */
	GS_CUDA_MIXED,     /* some set it, others do not, or values differ */
};

struct gs_pod_obj {
	char *uid;
	char *ns;
	char *name;
	char *resource_version;
	char *scheduler_name;   /* spec.schedulerName */
	char *node_name;        /* spec.nodeName: set once bound */
	char *map_text;         /* the scheduling-map annotation (name from --annotation) */
	char *label_pod_index;  /* label apps.kubernetes.io/pod-index */
	char *job_index;        /* annotation batch.kubernetes.io/job-completion-index */
	char *assigned;         /* annotation gpu-scheduler.io/assigned ("node4:3"), set by our binding */
	char *owner_kind;       /* kind of the controller ownerReference ("StatefulSet", "Job", ...) */
	char *owner_name;
	char *cuda_value;       /* with GS_CUDA_SAME: the common value */
	enum gs_cuda_state cuda_state;
	int n_containers;       /* regular + init containers */
	int64_t created_ms;     /* metadata.creationTimestamp, ms since the epoch; 0 if absent */
	int deleting;           /* metadata.deletionTimestamp is set */
	int terminal;           /* status.phase is Succeeded or Failed */
};

struct gs_node_obj {
	char *name;
	char *resource_version;
	int ready;              /* condition Ready == True */
	int unschedulable;      /* spec.unschedulable (cordoned) */
	int64_t gpus;           /* status.allocatable["nvidia.com/gpu"], -1 if absent */
};

void gs_pod_obj_free(struct gs_pod_obj *p);
void gs_node_obj_free(struct gs_node_obj *n);

#endif
