/*
 * workload_out.h: the owner-level view (sched.h, gs_sched_workload) written out, as JSON for the secure
 * port's /debug/workloads/NS/KIND/NAME and `gpu-scheduler status -o json`, and as a table for
 * `gpu-scheduler status`. Pure: the caller gives the time (wall clock, milliseconds) ages are measured
 * against.
 *
 * JSON (one object, one line):
 *   {"kind":"StatefulSet","namespace":"team-a","name":"train","ownerUid":"...",
 *    "map":{"from":"template","entries":4},            ("from": template, pods, object or none; "object":
 *                                                        the GPUPlacementMap's name with object; "error"
 *                                                        when the template's map does not parse)
 *    "pods":3,"notCreated":1,"byState":{"WAITING":1,"QUEUED":0,...,"BOUND":2,...},
 *    "gang":null,                                       (an all-or-nothing workload: its gang as explain
 *                                                        writes it, gs_explain_gang_json: size, members
 *                                                        fitting, who blocks, seconds left)
 *    "rows":[{"index":0,"pod":"train-0","uid":"...","state":"BOUND","node":"node1","devices":"0",
 *             "mapLine":1,"ageSeconds":42},
 *            {"index":2,"pod":"train-2",...,"state":"WAITING","reason":"NODE_MISSING","message":"...",
 *             "node":"node9","mapNode":"n9" (the map's name, when it resolved to another node),...},
 *            {"index":3,"state":"NOT_CREATED","node":"node1","devices":"2","mapLine":4}]}
 * Rows are in the view's order (by index, pods without one last, as "index" left out). byState lists
 * every state, zeros included. Absent values are left out ("node" and "devices" without an entry).
 *
 * Text: a summary line, then one row per index (INDEX POD NODE DEVICES STATE REASON AGE; "-" for what a
 * row has not, "not created" as the state of an index with no pod), then each waiting pod's message.
 */
#ifndef GS_SCHED_WORKLOAD_OUT_H
#define GS_SCHED_WORKLOAD_OUT_H

#include <stdint.h>

#include "core/buf.h"
#include "sched/sched.h"

/* A row's state for people and JSON: the pod's state name, or "NOT_CREATED". */
const char *gs_workload_row_state(const struct gs_sched_workload_row *x);
/* Each returns 0, or -E2BIG when b's cap is reached (b then holds a cut-off text). */
int gs_workload_json(const struct gs_sched_workload *w, int64_t now_ms, struct gs_buf *b);
int gs_workload_text(const struct gs_sched_workload *w, int64_t now_ms, struct gs_buf *b);

/*
 * A GPUPlacementMap's status (sched.h, gs_sched_gpm_status), for `gpu-scheduler status
 * gpuplacementmap/NAME`. JSON, one object in the shape of the object's status subresource
 * (deploy/crd/gpuplacementmaps.yaml) plus the engine's own: {"observedGeneration":3,"entries":4,
 * "placed":2,"waiting":2,"reasons":[{"reason":"NODE_MISSING","count":2}] (non-zero counts only, in the
 * reasons' order),"oldestWaiting":{"index":2,"pod":"train-2","reason":"NODE_MISSING","message":"..."}
 * (null when none waits; "index" left out for a pod without one),"ready":false,"mapError":"line 3: ..."
 * (left out when the map parses)}. Text: a line "Status (generation 3): not ready; 4 entries, 2 placed,
 * 2 waiting (2 NODE_MISSING)", then the map's error and the oldest waiting pod, one line each when they
 * are. 0, or -E2BIG as above.
 */
int gs_workload_gpm_status_json(const struct gs_gpm_status *st, struct gs_buf *b);
int gs_workload_gpm_status_text(const struct gs_gpm_status *st, struct gs_buf *b);
/* A GPUPlacementMap's view (gs_sched_gpm_workload) as gs_workload_json writes it, with st as a last
 * member "status" (gs_workload_gpm_status_json): `gpu-scheduler status gpm/NAME -o json` and the
 * daemon's /debug/workloads/NS/gpuplacementmap/NAME. 0, or -E2BIG as above. */
int gs_workload_gpm_json(const struct gs_sched_workload *w, const struct gs_gpm_status *st, int64_t now_ms,
			 struct gs_buf *b);

#endif
