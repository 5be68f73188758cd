/*
 * status_cmd.h: `gpu-scheduler status [-n NAMESPACE] statefulset/NAME|job/NAME`, the owner-level view of
 * a mapped workload: one row per index (INDEX POD NODE DEVICES STATE REASON AGE), the indices of its map
 * with no pod yet among them (not created). Like explain (explain_cmd.h) it reads the apiserver itself:
 * the owner (its uid, its pod template's map and schedulerName), the owner's pods, the nodes their
 * entries name and the pods bound there, fed to a fresh engine (sched.h, gs_sched_workload;
 * sched/workload_out.h writes it); then it asks the running daemon for its /debug/workloads answer
 * (cmd.h, gs_cmd_ask_leader) and says whether the two agree, row by row. Without a daemon to ask it
 * prints its own view and says why.
 *
 * `gpu-scheduler status gpuplacementmap/NAME` (gpm/NAME): the same rows for the pods of ours that name
 * the GPUPlacementMap (sched.h, gs_sched_gpm_workload), under its status as the engine counts it
 * (gs_sched_gpm_status), compared with the daemon's /debug/workloads/NS/gpuplacementmap/NAME. Both views
 * feed the GPUPlacementMaps first (cmd.h, gs_cmd_feed_gpms), as the daemon holds them.
 *
 * Options, credentials and namespace as explain's (cmd.h). Also `kubectl gpu-scheduler status ...`.
 * Exit status: 0 when the view was printed, 1 when it could not be (the owner or object not found, not
 * ours, the apiserver unreachable: a message on stderr), 2 for a usage error.
 */
#ifndef GS_K8S_STATUS_CMD_H
#define GS_K8S_STATUS_CMD_H

/* argv[0] is "status". */
int gs_status_cmd(int argc, char **argv);

#endif
