/*
 * checks.h: the node admission checks, pure functions on the records of objects.h.
 *
 * The kubelet re-runs the scheduler's predicates when a pod reaches it (pkg/kubelet/lifecycle/
 * predicate.go) and fails a pod it refuses; so before every binding the engine (sched_place.c) asks
 * the same questions kube-scheduler asks, with the same semantics:
 *   - nodeSelector: every pair is a label of the node;
 *   - required node affinity: one of the nodeSelectorTerms matches (a term: all its matchExpressions
 *     on labels and matchFields on metadata.name; In, NotIn, Exists, DoesNotExist, Gt, Lt). A term with
 *     a matchExpressions requirement that labels.NewRequirement refuses (an In/NotIn value that is not a
 *     label value, a Gt/Lt without exactly one integer value) matches no node, as in kube-scheduler;
 *   - spec.os against the node's kubernetes.io/os label (gs_checks_os);
 *   - taints: every NoSchedule and NoExecute taint of the node is tolerated (PreferNoSchedule is a
 *     preference, never a refusal);
 *   - host ports, resources and pod slots: in sched_place.c, against the node's running total.
 * Each check that fails writes a message that says exactly what failed, for the pod's event.
 */
#ifndef GS_SCHED_CHECKS_H
#define GS_SCHED_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "sched/map.h"
#include "sched/objects.h"

/*
 * 1 when the node (name, labels) satisfies the pod's nodeSelector and required node affinity, else 0
 * with msg: `node "node3" does not match the pod's nodeSelector: label disktype=ssd missing (has
 * none)` or `... required node affinity: no nodeSelectorTerm matches (term 1: zone In [a, b]: label
 * zone is "c")`.
 */
int gs_checks_affinity(const char *node, const struct gs_label *labels, int n_labels, const struct gs_label *selector,
		       int n_selector, int has_affinity, const struct gs_sel_term *terms, int n_terms, char *msg,
		       size_t size);

/*
 * A metav1.LabelSelector (a PodDisruptionBudget's spec.selector) against a pod's labels, as
 * metav1.LabelSelectorAsSelector and kube-scheduler's preemption read it: 1 when every matchLabels pair
 * is a label and every matchExpressions requirement (In, NotIn, Exists, DoesNotExist) holds; 0 when one
 * does not, and when the selector is empty (no pair, no requirement: kube-scheduler's preemption counts
 * such a budget for no pod); -EINVAL when the selector does not parse (an operator outside those four,
 * In/NotIn without values, values to Exists/DoesNotExist, a value that is not a label value), which
 * kube-scheduler counts for no pod either.
 */
int gs_checks_label_selector(const struct gs_label *labels, int n_labels, const struct gs_label *match, int n_match,
			     const struct gs_sel_req *exprs, int n_exprs);

/* The node label the kubelet sets to its operating system (runtime.GOOS). */
#define GS_LABEL_OS "kubernetes.io/os"

/*
 * spec.os (1.25+), as the kubelet admits a pod (pkg/kubelet/lifecycle/predicate.go, 1.26+,
 * rejectPodAdmissionBasedOnOSField): 1 when the pod names no OS (os_name NULL), when the node has no
 * kubernetes.io/os label (the kubelet sets it to its own OS; without it there is nothing to compare), or
 * when they are equal; else 0 with msg: `node "win1" runs windows (label kubernetes.io/os) but the pod's
 * spec.os.name is "linux": its kubelet would refuse the pod (PodOSNotSupported)`.
 */
int gs_checks_os(const char *node, const struct gs_label *labels, int n_labels, const char *os_name, char *msg,
		 size_t size);

/*
 * The first NoSchedule or NoExecute taint no toleration tolerates, or NULL; with msg naming it:
 * `node "node1" has the taint gpu=busy:NoSchedule that the pod does not tolerate`.
 */
const struct gs_taint *gs_checks_taints(const char *node, const struct gs_taint *taints, int n_taints,
					const struct gs_toleration *tols, int n_tols, char *msg, size_t size);

/*
 * The effective request of a pod, as the kubelet and kube-scheduler count it (component-helpers
 * resource.PodRequests, 1.32-1.33 rules):
 *   - each regular container counts its spec requests; after an in-place resize (ctr_status_set) the
 *     larger of its spec and its status, or its status alone when the resize is infeasible;
 *   - init containers run one after the other, each beside the sidecars (restartPolicy Always) started
 *     before it; a sidecar also runs on beside the regular containers, so it adds to their sum;
 *   - for each resource: the larger of that sum and the largest init-time total;
 *   - pod-level requests (has_pod_req) replace the result for cpu, memory and hugepages-* where they name
 *     them (a 0 is not named: the apiserver refuses pod-level requests below the containers');
 *   - plus spec.overhead.
 * out's ext names are copied (release with gs_resources_free). pods stays 0.
 */
void gs_checks_pod_requests(const struct gs_pod_obj *p, struct gs_resources *out);

/*
 * A quantity for messages: cpu millicores as "1.95" / "64" / "0.5", bytes as "2Gi" / "1536Mi" /
 * "1000" (the largest binary suffix that divides exactly, else plain), counts as plain integers.
 */
enum gs_qty_kind { GS_QTY_CPU, GS_QTY_BYTES, GS_QTY_COUNT };
const char *gs_checks_qty_format(char *out, size_t size, int64_t v, enum gs_qty_kind k);

/*
 * The DevicePluginRequest warning for a pod whose containers request `requested` (> 0)
 * nvidia.com/gpu while its map entry e gives it devices: the device plugin exposes only the GPUs it
 * allocates and numbers them from 0, so the entry's indices refer to those; when the counts differ,
 * it says so. Used by the webhook (an AdmissionReview warning) and the scheduler (a Warning event),
 * so both say the same. Returns msg.
 */
const char *gs_checks_device_plugin_warning(char *msg, size_t size, int64_t requested, const struct gs_map_entry *e,
					    const char *annotation);

/*
 * What the containers say about CUDA_VISIBLE_DEVICES (st, value, as decoded) against map entry e of the
 * map label names ("gpu-scheduling-map", "GPUPlacementMap ns/x"): 1 when every container has exactly
 * the entry's devices, else 0 with msg saying what is wrong (the engine's NOT_MUTATED message).
 */
int gs_checks_cuda_env(const char *label, enum gs_cuda_state st, const char *value, const struct gs_map_entry *e,
		       char *msg, size_t size);

/* The taint of dedicated GPU nodes, NoSchedule (docs/deploy.md): the webhook tolerates it for mapped
 * pods (--tolerate-dedicated-taint), lint warns about mapped nodes without it that run plugin GPU pods. */
#define GS_TAINT_DEDICATED "gpu-scheduler.io/dedicated"

#endif
