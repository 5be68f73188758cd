/*
 * gpm_status.h: the status writer of GPUPlacementMaps (deploy/crd/gpuplacementmaps.yaml; docs/deploy.md,
 * "GPUPlacementMaps"). The controller embeds one and calls gs_gpm_writer_pump from its pump, after the
 * bindings: the writer pulls gs_sched_next_gpm_status (the engine paces each object to one status a
 * second) and PATCHes the object's status subresource (api.h, gs_api_gpm_status) at low priority, on a
 * lane of its own: at most GS_GPM_WRITER_INFLIGHT requests, never pulled while a binding waits for a
 * slot (the caller says so), asked may_act again before each write (only the leader writes).
 *
 * Answers: 2xx counted ok; 404 (the object is gone) and 409 counted gone and dropped: the watch tells
 * the engine soon; a transport failure, 429, 5xx or another 4xx counted failed and sent again, the
 * object's status as it is then (gs_sched_gpm_status), after a backoff of its own (1 s doubling to
 * 30 s). The Ready condition's lastTransitionTime is kept here per object, from the wall clock, since
 * a merge patch replaces the list whole (a restart starts it again).
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
	GS_GPM_WRITE_GONE,   /* 404 or 409: not retried */
	GS_GPM_WRITE_FAILED, /* retried after a backoff */
	GS_GPM_WRITE__COUNT
};

struct gs_gpm_writer {
	uv_loop_t *loop;
	struct gs_kube *kube;
	struct gs_sched *sched;
	int (*may_act)(void *ud); /* asked before each pull and each write */
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
