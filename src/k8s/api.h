/*
 * api.h: the write calls the scheduler makes, each one request built from a few strings.
 *
 *   bind     POST   /api/v1/namespaces/NS/pods/NAME/binding       (high priority)
 *            the Binding carries the pod's UID (a recreated pod of the same name gets 409, never our
 *            node) and the annotation gpu-scheduler.io/assigned=NODE:DEVICES, which the binding
 *            subresource copies onto the pod: the assignment survives our restarts.
 *   event    POST   /api/v1/namespaces/NS/events                  (low priority)
 *   condition PATCH /api/v1/namespaces/NS/pods/NAME/status        (low priority, strategic merge:
 *            PodScheduled=False, reason Unschedulable, with our message)
 *   delete   DELETE /api/v1/namespaces/NS/pods/NAME               (low priority, UID precondition)
 *   preemption PATCH /api/v1/namespaces/NS/pods/NAME/status       (low priority, strategic merge, the
 *            pod's uid in the body: the preemptor's status.nominatedNodeName; a victim's condition
 *            DisruptionTarget=True, reason PreemptionByScheduler, before its delete)
 *   gpm status PATCH /apis/gpu-scheduler.io/v1alpha1/namespaces/NS/gpuplacementmaps/NAME/status
 *            (low priority, JSON patch: a GPUPlacementMap's placement counts, the object's uid tested
 *            first: a re-created object of the same name gets 422, never our status)
 *
 * done receives the HTTP status (0 for a transport failure, with err < 0) like gs_kube_done_cb.
 */
#ifndef GS_K8S_API_H
#define GS_K8S_API_H

#include "core/buf.h"
#include "k8s/kube.h"
#include "sched/sched.h"

#define GS_ASSIGNED_ANNOTATION "gpu-scheduler.io/assigned"

struct gs_api_pod_ref {
	const char *ns;
	const char *name;
	const char *uid;
	/* gs_api_event only: the involved object's kind when it is not a Pod ("StatefulSet", "Job": the
	 * owner of an all-or-nothing gang); NULL for a Pod. */
	const char *kind;
};

/* The apiVersion of an owner's kind for an event's involvedObject: "apps/v1" for StatefulSet,
 * ReplicaSet, Deployment, DaemonSet; "batch/v1" for Job; gpu-scheduler.io/v1alpha1 for a
 * GPUPlacementMap; "v1" otherwise (Pod, unknown kinds). */
const char *gs_api_version_of(const char *kind);

/* Result classes shared by the callers. */
enum gs_api_result {
	GS_API_OK,       /* 2xx */
	GS_API_GONE,     /* 404, 409: final for this object */
	GS_API_RETRY,    /* transport failure, 429, 5xx */
	GS_API_REJECTED, /* any other 4xx: a bug or missing RBAC; logged, not retried */
};
enum gs_api_result gs_api_classify(int err, const struct gs_http_response *resp);

/* may_send (NULL: always) is asked with ud before the binding is written (gs_kube_req's may_send). */
int gs_api_bind(struct gs_kube *k, const struct gs_api_pod_ref *pod, const char *node, const char *devices,
		int (*may_send)(void *ud), gs_kube_done_cb done, void *ud);

/*
 * 1 when resp is a 409 to a binding that says the pod "is already assigned to node" exactly `node`
 * (kube-apiserver: `Operation cannot be fulfilled on pods/binding "P": pod P is already assigned to
 * node "N"`); 0 for anything else (another node, a UID precondition, a pod being deleted, no Status).
 * A binding carries the pod's UID, so the pod is ours and already where we asked: an earlier binding
 * took effect and its answer was lost (the connection or the apiserver died first). The caller counts
 * it as bound rather than forgetting the pod, whose reservation would otherwise be free until the
 * watch shows the pod on the node.
 */
int gs_api_bind_already_on(const struct gs_http_response *resp, const char *node);

enum gs_event_type {
	GS_EVENT_NORMAL,
	GS_EVENT_WARNING,
};
/* now_ms: the event's timestamps. component: reportingComponent and source. */
int gs_api_event(struct gs_kube *k, const struct gs_api_pod_ref *pod, enum gs_event_type type, const char *reason,
		 const char *message, const char *component, int64_t now_ms, gs_kube_done_cb done, void *ud);

int gs_api_unschedulable(struct gs_kube *k, const struct gs_api_pod_ref *pod, const char *message, int64_t now_ms,
			 gs_kube_done_cb done, void *ud);

int gs_api_delete_pod(struct gs_kube *k, const struct gs_api_pod_ref *pod, gs_kube_done_cb done, void *ud);

/* Preemption (sched.h, gs_sched_next_preemption), as kube-scheduler's DefaultPreemption writes it: a
 * victim's DisruptionTarget condition (status True, reason PreemptionByScheduler, the message given),
 * and the preemptor's status.nominatedNodeName. Low priority. */
int gs_api_disruption_target(struct gs_kube *k, const struct gs_api_pod_ref *pod, const char *message, int64_t now_ms,
			     gs_kube_done_cb done, void *ud);
int gs_api_nominate(struct gs_kube *k, const struct gs_api_pod_ref *pod, const char *node, gs_kube_done_cb done,
		    void *ud);

/*
 * A gang member's placeholder (sched.h, struct gs_placeholder): create POSTs the pod bound to its node
 * (spec.nodeName), running image, labelled gpu-scheduler.io/placeholder=true, annotated
 * gpu-scheduler.io/placeholder-for with the member's uid and owned by the member, its controller
 * (garbage collection removes it with the member), with the member's requests and tolerations, no
 * service account token, no grace period: cpu, memory and ephemeral-storage as requests only, extended
 * resources (hugepages-* too) also as limits equal to the requests, as the apiserver requires of what
 * it cannot overcommit. Low priority; the reply (201) holds the pod, whose uid the engine is told
 * (gs_decode_object_uid, gs_sched_placeholder_created). delete: DELETE ns/name with gracePeriodSeconds
 * 0 and, when uid is not NULL, that uid as the precondition (another pod of the name: 409), at prio
 * (high when a Binding waits for it).
 */
int gs_api_placeholder_create(struct gs_kube *k, const struct gs_placeholder *ph, const char *image,
			      const char *scheduler_name, gs_kube_done_cb done, void *ud);
int gs_api_placeholder_delete(struct gs_kube *k, const char *ns, const char *name, const char *uid,
			      enum gs_kube_prio prio, gs_kube_done_cb done, void *ud);

/*
 * The status of a GPUPlacementMap (sched.h, struct gs_gpm_status) written to its status subresource,
 * PATCH /apis/gpu-scheduler.io/v1alpha1/namespaces/NS/gpuplacementmaps/NAME/status (low priority), as
 * a JSON patch (RFC 6902) of two operations:
 *
 *     [{"op":"test","path":"/metadata/uid","value":UID},
 *      {"op":"add","path":"/status","value":{observedGeneration, entries, placed, waiting, reasons:
 *       [{reason, count}] (the non-zero ones), topReason, oldestWaiting: {index, pod, reason, message},
 *       conditions: [Ready]}}]
 *
 * The test is the uid precondition: a write meant for an object that was deleted and re-created under
 * the same name is refused (gs_api_gpm_uid_mismatch) instead of landing on the new object. A JSON merge
 * patch cannot say it: on a custom resource's status subresource the apiserver copies the stored
 * object's metadata over the patched one, so a metadata.uid in a merge patch is dropped and the write
 * lands (measured on 1.20: 200). The add replaces the status whole: topReason and oldestWaiting are
 * absent (removed) when nothing waits. The fields are deploy/crd/gpuplacementmaps.yaml's. The Ready
 * condition is True when st->ready, with lastTransitionTime transition_ms (the caller keeps when it
 * last changed); messages are cut to the schema's 1024 characters at a UTF-8 boundary. st->uid is
 * required (-EINVAL without). may_send (NULL: always) is asked with ud before the request is written
 * (gs_kube_req's may_send: 0 withdraws it, done gets GS_HTTP_EWITHDRAWN). gs_api_gpm_status_body writes
 * the body alone (into b, initialised by the caller): 0 or <0.
 */
int gs_api_gpm_status_body(const struct gs_gpm_status *st, int64_t transition_ms, struct gs_buf *b);
int gs_api_gpm_status(struct gs_kube *k, const struct gs_gpm_status *st, int64_t transition_ms,
		      int (*may_send)(void *ud), gs_kube_done_cb done, void *ud);
/*
 * 1 when resp is the answer to a status write whose uid test failed: the object of that name is another
 * one (re-created). kube-apiserver answers a JSON patch that does not apply with 422, reason Invalid and
 * its generic message "the server rejected our request due to an error in our request", the patch
 * library's error dropped (1.20, handlers/patch.go); our patch's only operation that can fail is the
 * test. A 422 of the schema (a status the CRD refuses) names the object and the field: 0, as for
 * anything else.
 */
int gs_api_gpm_uid_mismatch(const struct gs_http_response *resp);

/* RFC 3339 UTC with seconds ("2026-11-22T10:00:00Z") into out (>= 21 bytes). */
void gs_api_time(int64_t ms, char *out, size_t outlen);

#endif
