/*
 * sched_agent.h: the node agent's data as the engine counts it (sched_agent.c), above sched_ledger.h:
 * the devices the kubelet's device manager gave out on a node (annotation GS_INUSE_ANNOTATION,
 * inuse.h), their holders, the device-plugin part of the fit, and the conflicts between the two
 * (a device a map gives that the plugin also gave). It calls the ledger and the slots only; a node
 * whose data goes stale is put on s->dirty for placement to look at again (sched_place.h).
 *
 * Invariants (sched_int.h, struct gs_sched__agent): fresh implies data != NULL, and a slot is in
 * s->agents (oldest seen_ms first) exactly while fresh; ids indexes data's devices exactly while data
 * != NULL; a slot not present has no agent data (gs_sched__agent_clear when the node leaves).
 *
 * The GPU index table (issue 36): a node's table maps the indices maps are written with to the device
 * plugin's IDs, so a wrong one can make one GPU two. Hardware does not move without a reboot, so the
 * table believed is the first one seen, replaced only when the node's boot ID changed since; a table
 * that differs on the same boot (a forged annotation, a confused agent) is flagged (table_moved: a
 * warning, explain says so) and not used: indices keep going through the table believed, until the
 * node reboots or the data's table is that one again; so do data without a table on the same boot. (Not "unknown": with unknown identities the fit
 * only counts GPUs, and a count cannot see the one GPU a forged table would give twice.) Invariant:
 * table_moved implies table != NULL and the data's table differs from it. A restarted scheduler
 * believes the first table it sees again, and so does `explain`'s engine, which knows no history: it
 * shows the daemon's verdict beside its own when they differ.
 */
#ifndef GS_SCHED_SCHED_AGENT_H
#define GS_SCHED_SCHED_AGENT_H

#include "sched/sched_int.h"

/*
 * Takes n's annotation text (NULL: absent) as now: parsed, indexed, fresh or not; unchanged text
 * changes nothing. seen_ms is now_ms for a change, and on the first sight of a slot's text (the engine
 * starting, a node joining) the agent's own time when that is earlier (its data may be stale already).
 */
void gs_sched__agent_update(struct gs_sched *s, struct gs_sched__node *n, const char *text, int64_t now_ms);
/* Forgets n's agent data (the node left). */
void gs_sched__agent_clear(struct gs_sched *s, struct gs_sched__node *n);
/*
 * Data not changed for cfg.agent_stale_ms stops being fresh: those nodes go to the head of s->dirty,
 * in expiry order (one already there moves up), so that the drain (gs_sched__drain_dirty, which the
 * caller runs next) looks at their waiters again first.
 */
void gs_sched__agent_expire(struct gs_sched *s, int64_t now_ms);
/* When the next agent data goes stale, or -1. */
int64_t gs_sched__agent_deadline(const struct gs_sched *s);
/*
 * The device-plugin part of the fit (after the ledger's): DEVICE_BUSY with msg when, by n's fresh agent
 * data, a device of p's entry is held by another live pod (a pod bound to n, not p), or when the node's
 * GPUs cannot cover the map's holds, the plugin's devices and the entry's (devices of unknown identity:
 * no agent data, stale, an error, no index table for an index-written map, or pods not listed yet).
 */
enum gs_wait_reason gs_sched__fit_plugin(const struct gs_sched *s, const struct gs_sched__pod *p,
					 const struct gs_sched__node *n, char *msg, size_t size);
/*
 * n's device conflicts as they are now (fresh agent data only): a device a map gives to a pod on n that
 * the plugin gave to another live pod. Those not seen before are queued for report and counted.
 */
void gs_sched__agent_conflicts(struct gs_sched *s, struct gs_sched__node *n);
/* The plugin holder of n's device dev (len bytes; an index goes through the table) other than self_key,
 * (its device ID in the result's id); NULL when there is none (or no fresh data). */
const struct gs_inuse_dev *gs_sched__plugin_holder(const struct gs_sched__node *n, const char *dev, size_t len,
						   const char *self_key);
/* What r asks of the device plugin's GPU resources (cfg.gpu_resources): GPUs, or replicas of them. */
int64_t gs_sched__plugin_request(const struct gs_sched *s, const struct gs_sched__req *r);
/*
 * The other names of n's device dev (len bytes) that the ledger may hold it by, as the agent's data
 * tells them: a GPU named by its index has its ID too, one named by its ID its index (the table
 * believed), and both its MIG instances (the mig line); a MIG instance has its GPU, by index then ID. Calls fn with each until fn
 * returns non-NULL, and returns that (NULL: none did, or no data, or dev is no GPU the data knows).
 */
typedef const void *(*gs_sched__name_fn)(const char *name, size_t len, void *ud);
const void *gs_sched__agent_related(const struct gs_sched__node *n, const char *dev, size_t len, gs_sched__name_fn fn,
				    void *ud);
/* What the index table believed of n (sched_int.h) says of device dev, as a map names it: an index's
 * ID, or an ID's index; the other one is dev itself. *index -1 or *id NULL when the table does not say. */
void gs_sched__agent_gpu(const struct gs_sched__node *n, const char *dev, long *index, const char **id);
/* Why n's plugin devices have no known identity, as a phrase: "node4 has no agent data", ... */
void gs_sched__agent_why_unknown(const struct gs_sched *s, const struct gs_sched__node *n, char *out, size_t size);
/* The next conflict to report into *out (strings valid until the next call), 1; or 0. */
int gs_sched__next_conflict(struct gs_sched *s, struct gs_report *out);
void gs_sched__conflicts_free(struct gs_sched *s);

#endif
