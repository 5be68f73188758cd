/*
 * admission.h: the mutating admission decision, bytes in and bytes out, with no I/O.
 *
 * Input is an AdmissionReview (admission.k8s.io/v1) as the apiserver POSTs it; output is the
 * AdmissionReview answer. For a Pod CREATE with spec.schedulerName equal to ours and the map
 * annotation present, the answer carries a JSON Patch setting CUDA_VISIBLE_DEVICES to the devices of
 * the pod's entry in every container and init container. The map and the pod index come from
 * src/sched/map.h, so the webhook and the scheduler can never read one annotation two ways.
 *
 * Decisions (docs/webhook.md has the patch shapes and the reasoning):
 *   not a Pod CREATE, another scheduler, no annotation  -> allowed, no patch          (SKIPPED)
 *   (neither the map nor a reference)
 *   malformed map                                        -> denied, code 400           (DENIED)
 *   no index, or no entry for it                         -> allowed, a warning         (WARNED)
 *   every container already correct (and, with tolerate_dedicated, the pod already tolerates the
 *   dedicated taint)                                     -> allowed, no patch          (UNCHANGED)
 *   otherwise                                            -> allowed, JSONPatch         (PATCHED)
 * A pod of ours naming a GPUPlacementMap (GS_MAP_REF_ANNOTATION, sched/gpm.h; docs/webhook.md, "Maps by
 * reference"):
 *   beside the map annotation or a gang annotation      -> denied, code 400           (DENIED)
 *   no map_lookup                                        -> denied, code 500           (DENIED)
 *   the lookup's table not loaded yet (-EAGAIN)          -> denied, code 503, retry    (DENIED)
 *   no such object in the pod's namespace                -> denied, code 400           (DENIED)
 *   the object is not held (the lookup's view.refused)   -> denied, code 400, why      (DENIED)
 * With node_gpus, an entry naming an index past its node's physical GPUs -> denied, code 400 (DENIED).
 *   otherwise the rows above, with the object's map and settings for the annotations'; the patch also
 *   sets GS_MAP_REF_GENERATION to the object's generation unless the pod carries that value already
 *   (UNCHANGED needs the right variable and that value)
 * dryRun requests are answered exactly like the real ones (the apiserver discards the result).
 *
 * A PATCHED or UNCHANGED pod whose containers also request nvidia.com/gpu gets, in addition, a
 * warning in the response (gs_checks_device_plugin_warning, src/sched/checks.h): the NVIDIA device plugin
 * then exposes only the GPUs it allocates and numbers them from 0, so the entry's indices refer to
 * those. The patch and the outcome are the same as without the request.
 *
 * With tolerate_dedicated, a pod that gets (or already has) CUDA_VISIBLE_DEVICES from its entry, PATCHED
 * or UNCHANGED, also gets the toleration GS_DEDICATED_TOLERATION of the taint GS_DEDICATED_TAINT_KEY,
 * unless one of its tolerations already tolerates that taint (gs_admission_tolerates_dedicated). No
 * other pod ever gets it: a pod the scheduler cannot place from a map has no business on a dedicated node.
 *
 * Everything runs on the caller's thread; a struct gs_admission is not thread-safe (its map cache
 * is not).
 */
#ifndef GS_WEBHOOK_ADMISSION_H
#define GS_WEBHOOK_ADMISSION_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "sched/checks.h"
#include "sched/gpm.h"
#include "sched/map.h"

/* Bytes of JSON Patch at most (before base64): 4096 containers' worth of operations, far above any pod. */
#define GS_ADMISSION_PATCH_MAX  (1024 * 1024)
/*
 * JSON values (objects, arrays, scalars) at most in one AdmissionReview. cJSON spends about 64 bytes
 * per value, so without this a body of "[1,1,1,...]" would cost some 30 times its size in memory.
 * A real pod holds a few thousand values; 1,000,000 keeps the worst case near 100 MB.
 */
#define GS_ADMISSION_MAX_VALUES 1000000

#define GS_ADMISSION_CUDA_ENV "CUDA_VISIBLE_DEVICES"

/*
 * Dedicated GPU nodes (docs/deploy.md): the operator taints the nodes maps use with
 * gpu-scheduler.io/dedicated=true:NoSchedule, so that pods of other schedulers, which get GPUs from the
 * device plugin, stay off them; the webhook (--tolerate-dedicated-taint) lets mapped pods through.
 */
#define GS_DEDICATED_TAINT_KEY    GS_TAINT_DEDICATED
#define GS_DEDICATED_TAINT_EFFECT "NoSchedule"
#define GS_DEDICATED_TOLERATION \
	"{\"key\":\"" GS_DEDICATED_TAINT_KEY "\",\"operator\":\"Exists\",\"effect\":\"" GS_DEDICATED_TAINT_EFFECT "\"}"

struct gs_admission; /* opaque */

struct gs_admission_opts {
	const char *scheduler_name; /* spec.schedulerName that marks our pods; copied; required */
	const char *annotation;     /* name of the map annotation; copied; required */
	/*
	 * Parsed-map cache to use, e.g. the scheduler's own (both sides run on the loop thread).
	 * Borrowed: it must outlive the admission. NULL: the admission makes and owns one.
	 */
	struct gs_map_cache *cache;
	/*
	 * The node-side policy (docs/sched.md, "Who may map which node"): 1 when the node a map entry names
	 * lets namespace ns map it (or is not known), 0 with why when it does not; the pod is then denied
	 * with why. NULL: no policy is checked (the scheduler still keeps such pods waiting).
	 */
	int (*node_allows)(void *ud, const char *node, const char *ns, char *why, size_t size);
	void *node_allows_ud;
	/*
	 * The physical GPUs of the node a map entry names, when known for certain (the scheduler's node
	 * cache: its agent's index table or GPU Feature Discovery's count, sched.h gs_sched_node_gpus), with
	 * words saying so; -1 when not known. An entry naming an index past them is denied (400) with
	 * those words: a time-sliced node advertising 16 replicas of 4 GPUs has no GPU 7. NULL: not checked
	 * (the scheduler still keeps such pods waiting NODE_DEVICES).
	 */
	int64_t (*node_gpus)(void *ud, const char *node, char *words, size_t size);
	void *node_gpus_ud;
	/*
	 * Maps as objects (sched/gpm.h): the GPUPlacementMap ns/name, for a pod carrying
	 * GS_MAP_REF_ANNOTATION. Returns 1 with *out filled (its strings borrowed, valid until the review
	 * returns; a setting absent from the spec is NULL, as "" is a value that does not parse), 0 when there is no such object, -EAGAIN while the caller's table is not loaded yet (the
	 * pod is denied with 503 and asked to retry; any other negative value is taken the same way). Called
	 * synchronously, at most once per review. NULL: every pod naming a map by reference is denied.
	 */
	int (*map_lookup)(void *ud, const char *ns, const char *name, struct gs_gpm_view *out);
	void *map_lookup_ud;
	/* 1: a pod set up from its entry also gets GS_DEDICATED_TOLERATION (--tolerate-dedicated-taint). */
	int tolerate_dedicated;
};

/* 0, or -EINVAL (a required option is missing or empty). o and out may not be NULL (GS_ASSERT). */
int gs_admission_new(const struct gs_admission_opts *o, struct gs_admission **out);
void gs_admission_free(struct gs_admission *a); /* NULL is fine */

enum gs_admission_outcome {
	GS_ADMISSION_PATCHED = 0, /* allowed with a patch setting the variable somewhere, or adding the
				   * toleration */
	GS_ADMISSION_UNCHANGED,   /* ours, every container already has the right value (and the pod
				   * tolerates the dedicated taint, when asked): no patch */
	GS_ADMISSION_DENIED,      /* ours and the map does not parse or names a node the namespace may not
				   * map, or any pod created with gpu-scheduler.io/assigned: allowed=false */
	GS_ADMISSION_WARNED,      /* ours, no index or no entry: allowed with a warning, no patch */
	GS_ADMISSION_SKIPPED,     /* not ours (other kind, operation, scheduler, no annotation) */
	GS_ADMISSION_BAD_REQUEST, /* not an AdmissionReview we can answer: HTTP 400, no response JSON */
	GS_ADMISSION_OUTCOME_COUNT
};

/* "patched", "unchanged", "denied", "warned", "skipped", "bad_request" (metric label values). */
const char *gs_admission_outcome_name(enum gs_admission_outcome o);

/*
 * What happened, for logs and metrics. Strings are truncated copies (never NULL, "" when unknown):
 * the result does not point into the request or the map.
 */
struct gs_admission_result {
	enum gs_admission_outcome outcome;
	char uid[64];   /* request.uid */
	char ns[64];    /* request.namespace, else metadata.namespace */
	char name[254]; /* metadata.name, else request.name, else metadata.generateName */
	long index;     /* the pod's index, -1 when none was determined */
	enum gs_index_source index_source;
	char node[254];         /* node of the entry */
	char devices[256];      /* devices of the entry, "..." at the end when truncated */
	int containers_patched; /* containers and init containers that got an operation */
	int toleration_added;   /* 1: the patch adds GS_DEDICATED_TOLERATION */
	/* Maps as objects (sched/gpm.h): the pod's GS_MAP_REF_ANNOTATION, "" when none; the object's
	 * generation used (0 when none was found); 1 when the patch sets GS_MAP_REF_GENERATION to it. */
	char map_ref[254];
	int64_t map_generation;
	int generation_added;
	int dry_run; /* request.dryRun was true */
	/*
	 * Our pods only (schedulerName matches and the pod has a map, inline or by reference; 0 otherwise): the pod's effective
	 * nvidia.com/gpu request as Kubernetes counts it, max(largest init container, sum of regular
	 * containers) + spec.overhead, each container's resources.requests value or, without one, its
	 * resources.limits value. 0 when nothing asks; -1 when a value is not a whole number of devices
	 * (digits only: "1.5", "-1", "2k", "", a JSON number, a value past INT64_MAX), which gives no
	 * warning. resources, requests, limits or overhead that are not JSON objects count as absent.
	 * Sums saturate at INT64_MAX, as in gs_checks_pod_requests.
	 */
	int64_t gpu_requested;
	/*
	 * Denial message, warning, or why the request is bad; "" otherwise. With PATCHED or UNCHANGED and
	 * gpu_requested > 0: the device plugin warning (cut with "..." when longer; the response carries
	 * it whole).
	 */
	char message[512];
};

/*
 * Decides one AdmissionReview. body[0..len) need not be NUL-terminated.
 *
 * Returns 0 with the response JSON appended to out (answer it with HTTP 200, application/json), or
 *   -EINVAL  the body is not an AdmissionReview v1 request (not JSON, too deep or too big for the
 *            decoder, wrong apiVersion or kind, no request, no uid): answer HTTP 400; out unchanged;
 *            res->outcome is GS_ADMISSION_BAD_REQUEST and res->message says why;
 *   -ENOMEM, -E2BIG (out's cap): answer HTTP 500; out unchanged, res->outcome meaningless.
 * res is always filled. a, out and res may not be NULL (GS_ASSERT).
 */
/*
 * 1 when the JSON array tolerations (NULL, or not an array: none) holds a toleration equivalent to
 * GS_DEDICATED_TOLERATION: key GS_DEDICATED_TAINT_KEY with operator Exists, or Equal (the default when
 * absent) and value "true"; effect GS_DEDICATED_TAINT_EFFECT or empty/absent (all effects). An empty key
 * with operator Exists tolerates every taint, so it counts too.
 */
int gs_admission_tolerates_dedicated(const cJSON *tolerations);

int gs_admission_review(struct gs_admission *a, const char *body, size_t len, struct gs_buf *out,
			struct gs_admission_result *res);

#endif
