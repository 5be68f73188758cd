/*
 * gpm_status.h: the status writer of GPUPlacementMaps (deploy/crd/gpuplacementmaps.yaml; docs/deploy.md,
 * "GPUPlacementMaps"). The controller embeds one and calls gs_gpm_writer_pump from its pump, after the
 * bindings: the writer pulls gs_sched_next_gpm_status (the engine paces each object to one status a
 * second) and PATCHes the object's status subresource (api.h, gs_api_gpm_status) at low priority, on a
 * lane of its own: at most GS_GPM_WRITER_INFLIGHT requests, never pulled while a binding waits for a
 * slot (the caller says so), asked may_act again before each write (only the leader writes).
 *
 * The uid precondition: each write carries the object's metadata.uid (gs_gpm_status.uid, from the
 * object the engine holds) and the apiserver applies it only to the object of that uid (api.h,
 * gs_api_gpm_status: a JSON patch whose first operation tests /metadata/uid). A write queued or in flight
 * when its object is deleted and re-created under the same name, or sent while the watch has not shown
 * the new object yet, is refused (422) rather than landing on the new object; the new object gets its
 * own status once the watch brings it (the engine hands it out afresh). A merge patch carrying
 * metadata.uid would not do: the apiserver drops it on a custom resource's status (measured on 1.20:
 * 200, the old object's counts written on the new one; tests/integration/test_gpm.sh).
 *
 * Leadership: may_act is asked before each pull of a new status, before each retry, and again by the
 * client just before the request is written (gs_kube_req's may_send): a write that waited in the
 * client's queue (a connection, the rate limit) past the end of our leadership is withdrawn, never
 * sent, counted withdrawn and due again at once; it goes out, the status as it is then, when this
 * replica leads again (the retry asks may_act).
 *
 * Answers: 2xx counted ok; 404 (the object is gone), 409, and the 422 of a failed uid test
 * (gs_api_gpm_uid_mismatch: another object of that name) counted gone and dropped: the watch tells the
 * engine soon; a transport failure, 429, 5xx or another 4xx counted failed and sent again, the
 * object's status as it is then (gs_sched_gpm_status, with the uid the engine holds then), after a
 * backoff of its own (1 s doubling to 30 s). The Ready condition's lastTransitionTime is kept here per
 * object, from the wall clock, since the patch replaces the status whole (a restart starts it again).
 */
#ifndef GS_K8S_GPM_STATUS_H
#define GS_K8S_GPM_STATUS_H

#include <stdint.h>
#include <uv.h>

#include "core/hmap.h"
#include "core/metrics.h"
#include "k8s/kube.h"
#include "sched/sched.h"

#define GS_GPM_WRITER_INFLIGHT     4
#define GS_GPM_WRITER_RETRY_MIN_MS 1000
#define GS_GPM_WRITER_RETRY_MAX_MS 30000

/* gpu_scheduler_gpm_status_writes_total{result=...} */
enum gs_gpm_write_result {
	GS_GPM_WRITE_OK,
	GS_GPM_WRITE_GONE,      /* 404, 409, or 422 from the uid test: not retried */
	GS_GPM_WRITE_FAILED,    /* retried after a backoff */
	GS_GPM_WRITE_WITHDRAWN, /* not sent: leadership lapsed while it waited in the client; retried */
	GS_GPM_WRITE__COUNT
};

struct gs_gpm_writer {
	uv_loop_t *loop;
	struct gs_kube *kube;
	struct gs_sched *sched;
	int (*may_act)(void *ud); /* asked before each pull, each retry, and by the client before sending */
	void (*wake)(void *ud);   /* a request ended: pump again */
	void *ud;
	unsigned inflight;
	unsigned retries;    /* objects whose write failed and waits for its retry */
	struct gs_hmap objs; /* "NS/NAME" -> private record (Ready's transition, retry) */
	struct gs_counter writes[GS_GPM_WRITE__COUNT];
};

/* Cannot fail. The borrowed pointers outlive the writer's requests (the client cancels them first). */
void gs_gpm_writer_init(struct gs_gpm_writer *w, uv_loop_t *loop, struct gs_kube *kube, struct gs_sched *sched,
			int (*may_act)(void *ud), void (*wake)(void *ud), void *ud);
/*
 * Sends what is due, now_ms the loop's clock: retries first, then new statuses from the engine, while
 * fewer than GS_GPM_WRITER_INFLIGHT are in flight. Returns when the next retry is due (loop clock), or
 * -1 for none (the engine's own deadline covers new statuses).
 */
int64_t gs_gpm_writer_pump(struct gs_gpm_writer *w, int64_t now_ms);
/* The object is gone (the watch said so): its record goes. */
void gs_gpm_writer_forget(struct gs_gpm_writer *w, const char *ns, const char *name);
/* Registers gpu_scheduler_gpm_status_writes_total. */
void gs_gpm_writer_register(struct gs_gpm_writer *w, struct gs_metrics *m);
/* Frees the records; after every request ended (the client closed). */
void gs_gpm_writer_free(struct gs_gpm_writer *w);

#endif
