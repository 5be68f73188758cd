/*
 * objects.h: the compact pod, node and PodDisruptionBudget records placement works on.
 *
 * src/k8s/decode.c fills them from apiserver JSON, keeping only these fields (never whole objects);
 * src/sched copies what it keeps. All strings are NUL-terminated and owned by the record, but for the
 * pod's map_text (below); a NULL string means "absent"; an array with a count of 0 may be NULL. gs_pod_obj_free / gs_node_obj_free
 * release the strings and arrays, not the record.
 *
 * Resource amounts are Kubernetes quantities rounded up to whole units (bytes, pods, devices), except
 * cpu, in millicores ("500m" is 500, "2" is 2000), as the kubelet and kube-scheduler count them.
 */
#ifndef GS_SCHED_OBJECTS_H
#define GS_SCHED_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

/* What the pod's containers say about CUDA_VISIBLE_DEVICES, as decoded. */
enum gs_cuda_state {
	GS_CUDA_UNSET = 0, /* no container (init or regular) sets it */
	GS_CUDA_SAME,      /* every container sets it to cuda_value */
	GS_CUDA_MIXED,     /* some set it, others do not, or values differ */
};

/* An extended resource: any name other than cpu, memory, ephemeral-storage and pods. */
struct gs_res_ext {
	char *name; /* "nvidia.com/gpu", "hugepages-2Mi", "example.com/foo" */
	int64_t value;
};

/* A resource list: a container's resources.requests, spec.overhead, a node's status.allocatable. */
struct gs_resources {
	int64_t milli_cpu;
	int64_t memory;    /* bytes */
	int64_t ephemeral; /* ephemeral-storage, bytes */
	int64_t pods;      /* "pods"; 0 when absent (a node advertising none is not checked for slots) */
	int n_ext;
	struct gs_res_ext *ext; /* n_ext entries, each name once, in the order of the object */
};

/* A label, or a nodeSelector pair. */
struct gs_label {
	char *key;
	char *value;
};

/* A node selector requirement's operator; GS_SEL_INVALID for one the decoder does not know (the
 * apiserver validates them, so only a newer server could send one): it matches nothing. */
enum gs_sel_op {
	GS_SEL_IN = 0,
	GS_SEL_NOT_IN,
	GS_SEL_EXISTS,
	GS_SEL_DOES_NOT_EXIST,
	GS_SEL_GT,
	GS_SEL_LT,
	GS_SEL_INVALID,
};

/* One matchExpressions or matchFields requirement. */
struct gs_sel_req {
	char *key;
	enum gs_sel_op op;
	int field; /* from matchFields (key "metadata.name"), else matchExpressions */
	int n_values;
	char **values;
};

/* A nodeSelectorTerm: its requirements ANDed. A term with none matches no node (as in Kubernetes). */
struct gs_sel_term {
	int n_reqs;
	struct gs_sel_req *reqs;
};

enum gs_taint_effect {
	GS_EFFECT_ALL = 0, /* tolerations only: an empty effect tolerates every effect */
	GS_EFFECT_NO_SCHEDULE,
	GS_EFFECT_PREFER_NO_SCHEDULE,
	GS_EFFECT_NO_EXECUTE,
	GS_EFFECT_OTHER, /* an effect this decoder does not know: never tolerated but by ALL */
};

struct gs_taint {
	char *key;
	char *value; /* NULL: no value */
	enum gs_taint_effect effect;
};

struct gs_toleration {
	char *key;   /* NULL or "": every key (with exists) */
	int exists;  /* operator Exists; else Equal (the default) */
	char *value; /* with Equal; NULL is "" */
	enum gs_taint_effect effect;
	int64_t seconds; /* tolerationSeconds, -1 when absent */
};

/* A container port with hostPort > 0 (regular containers only, as kube-scheduler counts them). */
struct gs_host_port {
	int port;      /* 1..65535 */
	char proto;    /* 'T' TCP (the default), 'U' UDP, 'S' SCTP */
	char *host_ip; /* NULL for all addresses ("", "0.0.0.0") */
};

struct gs_pod_obj {
	char *uid;
	char *ns;
	char *name;
	char *resource_version;
	char *scheduler_name; /* spec.schedulerName */
	char *node_name;      /* spec.nodeName: set once bound */
	/*
	 * The scheduling-map annotation (name from --annotation): map_len bytes at map_text, NOT
	 * necessarily NUL-terminated; map_text NULL when absent. A 14 KiB map that every pod of a
	 * StatefulSet carries is not copied: the protobuf decoder points map_text into the message it
	 * decodes (valid as long as those bytes: the handler call, for the watch), and the engine looks
	 * the parsed map up by those bytes (gs_map_cache_get). When the decoder had to make the text
	 * (JSON unescapes it), map_owned holds it, map_text points at it, and gs_pod_obj_free frees it.
	 */
	const char *map_text;
	size_t map_len;
	char *map_owned;
	char *label_pod_index; /* label apps.kubernetes.io/pod-index */
	char *job_index;       /* annotation batch.kubernetes.io/job-completion-index */
	char *assigned;        /* annotation gpu-scheduler.io/assigned ("node4:3"), set by our binding */
	char *owner_kind;      /* kind of the controller ownerReference ("StatefulSet", "Job", ...) */
	char *owner_name;
	char *owner_uid;  /* uid of the controller ownerReference */
	char *cuda_value; /* with GS_CUDA_SAME: the common value */
	enum gs_cuda_state cuda_state;
	int n_containers;   /* regular + init containers */
	int64_t created_ms; /* metadata.creationTimestamp, ms since the epoch; 0 if absent */
	int deleting;       /* metadata.deletionTimestamp is set */
	int terminal;       /* status.phase is Succeeded or Failed */
	int running;        /* status.phase is Running */
	/*
	 * No regular container is running: every status.containerStatuses entry has state.terminated or
	 * state.waiting, or there is none (the kubelet's notRunning, pkg/kubelet/kubelet_pods.go). With
	 * deleting, the kubelet no longer counts the pod on its node (filterOutTerminatedPods).
	 */
	int stopped;
	int allow_shared; /* annotation gpu-scheduler.io/allow-shared-devices is "true" */
	/* The all-or-nothing annotations (sched/gang.h), as written; NULL when absent. Full records only. */
	char *placement;    /* gpu-scheduler.io/placement */
	char *gang_timeout; /* gpu-scheduler.io/gang-timeout */
	char *gang_size;    /* gpu-scheduler.io/gang-size */
	/* Maps as objects (sched/gpm.h): annotation gpu-scheduler.io/placement-map, the name of a
	 * GPUPlacementMap in the pod's namespace, and gpu-scheduler.io/placement-map-generation, the
	 * object's generation the webhook used (decimal text, as written). NULL when absent. Full records only. */
	char *map_ref;
	char *map_ref_generation;
	/* Annotation gpu-scheduler.io/placeholder-for: the uid of the gang member this pod holds a node's
	 * capacity for (a placeholder we created, sched.h); NULL for every other pod. Full records only. */
	char *placeholder_for;
	/* status.nominatedNodeName: the node a preemption nominated the pod to (sched.h, "preemption"), or
	 * NULL. Read by the engine only at a pod's first sight (a restart, a failover). */
	char *nominated_node;
	/* metadata.labels, in the object's order (both encodings sort them by key); full and partial records:
	 * a bound pod's labels still change, and preemption matches them against PodDisruptionBudgets. */
	int n_labels;
	struct gs_label *labels;
	/*
	 * Only what can still change for a pod already bound is set: uid, ns, name, resource_version,
	 * scheduler_name, node_name, created_ms, deleting, terminal, running, stopped, the owner (owner_kind,
	 * owner_name, owner_uid), allow_shared, the labels, and everything gs_checks_pod_requests reads (the containers'
	 * requests, the sidecar flags, their status after a resize and resize_infeasible, overhead, pod-level
	 * resources); everything else is absent (n_containers and cuda_state stay 0). The
	 * protobuf decoder makes such a record when its reader said it holds the pod bound to that node
	 * (decode.h, struct gs_decode_hint), and both decoders for a DELETED event (uid is all that is used); the
	 * engine takes one only for a pod it holds bound there (gs_sched_pod_upsert).
	 */
	int partial;

	/* What the node admission checks read (spec). */
	int64_t priority;  /* spec.priority, 0 when absent */
	int preempt_never; /* spec.preemptionPolicy is "Never" (absent: PreemptLowerPriority) */
	int n_gates;       /* spec.schedulingGates (Kubernetes 1.26+) */
	char *first_gate;  /* the first gate's name */
	int n_init;
	struct gs_resources *init_req; /* resources.requests of each init container, in order */
	unsigned char *init_sidecar;   /* n_init flags: restartPolicy Always (a sidecar, 1.28+); NULL: none */
	int n_ctr;
	struct gs_resources *ctr_req; /* resources.requests of each regular container */
	/*
	 * In-place resize (1.27+): per regular container (n_ctr entries; NULL when the status reports none),
	 * the requests the status reports for the container of that name (the first containerStatuses entry
	 * of the name: its resources.requests, else its allocatedResources; an empty map is none, as protobuf
	 * cannot tell it from an absent one); ctr_status_set[i] is 0 where it reports none (and that entry
	 * is zeroed). Sidecars' statuses (initContainerStatuses) are not read.
	 */
	struct gs_resources *ctr_status_req;
	unsigned char *ctr_status_set;
	int resize_infeasible;        /* status.resize Infeasible (1.27-1.32), or a PodResizePending condition
					 * with reason Infeasible (1.33+) */
	int has_pod_req;              /* spec.resources.requests has an entry (pod-level resources, 1.32+) */
	struct gs_resources pod_req;  /* spec.resources.requests */
	struct gs_resources overhead; /* spec.overhead */
	char *os_name;                /* spec.os.name (1.25+), NULL when absent */
	int n_host_ports;
	struct gs_host_port *host_ports;
	int n_node_selector;
	struct gs_label *node_selector; /* spec.nodeSelector */
	int has_affinity;               /* spec.affinity.nodeAffinity.requiredDuringScheduling...Execution */
	int n_terms;
	struct gs_sel_term *terms; /* its nodeSelectorTerms, ORed */
	int n_tolerations;
	struct gs_toleration *tolerations;
};

/*
 * A PodDisruptionBudget (policy/v1), what preemption reads of it (sched/sched_pdb.h): its selector and
 * how many more of its pods may go now. selector: 0 when spec.selector is absent or null, 1 when given
 * (then its matchLabels and matchExpressions, which may both be empty: a selector that matches every pod
 * for the disruption controller, and none for kube-scheduler's preemption). An expression's operator
 * outside In, NotIn, Exists, DoesNotExist (a label selector has no Gt or Lt) is GS_SEL_INVALID.
 */
struct gs_pdb_obj {
	char *ns, *name, *uid;
	char *resource_version;
	int selector;
	int n_match;
	struct gs_label *match; /* spec.selector.matchLabels */
	int n_exprs;
	struct gs_sel_req *exprs;    /* spec.selector.matchExpressions (field always 0) */
	int64_t disruptions_allowed; /* status.disruptionsAllowed; 0 when absent */
	int n_disrupted;
	char **disrupted; /* status.disruptedPods' names: evictions the apiserver took and the controller
			   * has not seen end yet (kube-scheduler does not count them again) */
};

struct gs_node_obj {
	char *name;
	char *resource_version;
	int ready;            /* condition Ready == True */
	int unschedulable;    /* spec.unschedulable (cordoned) */
	int64_t gpus;         /* status.allocatable["nvidia.com/gpu"], -1 if absent */
	int64_t gpu_capacity; /* status.capacity["nvidia.com/gpu"], -1 if absent (unhealthy GPUs: above gpus) */
	/*
	 * Annotation gpu-scheduler.io/allowed-namespaces: the namespaces whose pods may map this node,
	 * comma-separated ("*" any); NULL when absent (every namespace may). Set by an administrator
	 * (docs/sched.md, "Who may map which node").
	 */
	char *allowed_ns;
	/* Annotation gpu-scheduler.io/devices-in-use (sched/inuse.h), written by the node agent; NULL when
	 * absent. Kept as text: the engine parses it when it changes. */
	char *inuse;
	/* status.nodeInfo.bootID, the kubelet's; NULL when absent or "" (a node no kubelet runs). A change
	 * means the node rebooted: the only time its GPU index table may change (sched_agent.h). */
	char *boot_id;
	int n_labels;
	struct gs_label *labels;
	int n_taints;
	struct gs_taint *taints;
	struct gs_resources alloc; /* status.allocatable (nvidia.com/gpu included among ext) */
};

/* Releases one resource list's names and array (not the struct) and leaves it zeroed. */
void gs_resources_free(struct gs_resources *r);
void gs_pod_obj_free(struct gs_pod_obj *p);
void gs_node_obj_free(struct gs_node_obj *n);
void gs_pdb_obj_free(struct gs_pdb_obj *b);

/* The value of ext resource name in r, 0 when absent. */
int64_t gs_resources_ext(const struct gs_resources *r, const char *name);
/* "NoSchedule", "PreferNoSchedule", "NoExecute", "" for ALL, "?" for OTHER. */
const char *gs_taint_effect_name(enum gs_taint_effect e);
/* 1 when the toleration tolerates the taint (v1 Toleration.ToleratesTaint). */
int gs_toleration_tolerates(const struct gs_toleration *t, const struct gs_taint *taint);

#endif
