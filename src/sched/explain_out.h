/*
 * explain_out.h: the engine's explanations (sched.h, gs_sched_explain and gs_sched_pending) written out,
 * as JSON for the health port's /debug/ endpoints and as text for `gpu-scheduler explain`. Pure: the
 * caller gives the time (wall clock, milliseconds) that ages are measured against.
 *
 * JSON of one pod (GET /debug/pods/NS/NAME):
 *   {"namespace":"ns","name":"train-2","uid":"...","state":"WAITING","reason":"DEVICE_BUSY",
 *    "message":"...","index":2,"indexSource":"label apps.kubernetes.io/pod-index","mapLine":3,
 *    "entry":"2=node3:0,1","node":"node3","resolvedNode":"gpu-worker3" (an alias only),"devices":"0,1","priority":0,"ageSeconds":42,
 *    "mapRef":{"name":"train-ranks","found":true,"generation":4,"admittedGeneration":"3"} (a pod whose
 *              map is a GPUPlacementMap, sched/gpm.h; no "generation" when not found, no
 *              "admittedGeneration" when the pod has none),
 *    "boundNode":"node3" (bound or binding only),"attempts":0,
 *    "verdict":"DEVICE_BUSY" ("NONE" when every check passes, as the command's text says),
 *    "waitsFor":"the pods holding the devices ending" (gs_sched_explain's waits_for; not with NONE),
 *    "checks":[{"name":"pod","outcome":"pass"},...,{"name":"devices","outcome":"fail",
 *              "reason":"DEVICE_BUSY","message":"..."}],
 *    "holders":[{"device":"0","pod":"ns/other-0","owner":"<uid>","sameOwner":false,"shared":false},
 *               {"device":"1","pod":"team-b/infer-8","owner":"","sameOwner":false,"shared":false,
 *                "devicePluginId":"GPU-bb"} (held through the device plugin, by the node agent)],
 *    "agent":"fresh: 1 devices held through the device plugin, an index table up to GPU 3",
 *    "gang":{...} (a member of an all-or-nothing gang: gs_explain_gang_json)}
 * Absent values are left out (no entry: no "mapLine", "entry", "node", "devices"; no index: no "index").
 *
 * JSON of the pending pods (GET /debug/pending):
 *   {"pending":3,"waitingByReason":{"DEVICE_BUSY":2,...},"oldest":[{"namespace":...,"name":...,
 *    "state":...,"reason":...,"message":...,"node":...,"ageSeconds":...},...]}
 * waitingByReason lists every reason, zeros included, so a reader sees the whole set.
 */
#ifndef GS_SCHED_EXPLAIN_OUT_H
#define GS_SCHED_EXPLAIN_OUT_H

#include <stdint.h>

#include "core/buf.h"
#include "sched/sched.h"

/* Each returns 0, or -E2BIG when b's cap is reached (b then holds a cut-off text). */
int gs_explain_json(const struct gs_sched_explain *e, int64_t now_ms, struct gs_buf *b);
int gs_explain_text(const struct gs_sched_explain *e, int64_t now_ms, struct gs_buf *b);
int gs_explain_pending_json(const struct gs_sched_pending *p, int64_t now_ms, struct gs_buf *b);
/*
 * An all-or-nothing gang (explain's and the workload view's): JSON ,"gang":{"owner":KIND,"name":...,
 * "size":N,"members":N,"fitting":N,"state":"gathering"|"resting"|"placed","timeouts":N,"secondsLeft":N
 * (not placed),"blockedBy":"..." (when any),"budget":{"maxMembers":N,"maxGpus":N,"heldMembers":N,
 * "heldGpus":N,"needMembers":N,"needGpus":N,"admitted":BOOL} (its namespace's budget: struct
 * gs_explain_gang)}, nothing when g->size is 0; text: its lines after a blank one, nothing when g->size
 * is 0.
 */
/* Whole seconds from created_ms to now_ms, 0 when either is unknown or now is before it. */
int64_t gs_explain_age_s(int64_t created_ms, int64_t now_ms);
int gs_explain_gang_json(struct gs_buf *b, const struct gs_explain_gang *g);
int gs_explain_gang_text(struct gs_buf *b, const struct gs_explain_gang *g);

#endif
