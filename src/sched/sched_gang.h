/*
 * sched_gang.h: all-or-nothing gangs (sched_gang.c), above sched_use.h and below sched_place.h: who is
 * in which gang, the reservations its fitting members hold, its timers, its messages and its events.
 * It never places a pod: placement (sched_place.c) asks it whether a pod that fits may be queued, and
 * places a gang's members again when one of its timers fires or its commit is verified.
 * docs/sched.md, "All or nothing", tells the whole protocol; struct gs_sched__gang (sched_int.h) its
 * invariants.
 *
 * Costs: joining, leaving, reserving are O(1) plus the pod's own use; the timers walk the gangs still
 * gathering (O(gangs not placed yet), a handful per cluster, never pods); a message naming who blocks
 * walks one gang's members.
 */
#ifndef GS_SCHED_SCHED_GANG_H
#define GS_SCHED_SCHED_GANG_H

#include "sched/gang.h"
#include "sched/sched_int.h"

/*
 * Makes p a member of its owner's gang (created on first use, at now_ms) when opts says all-or-nothing
 * and p has an owner, else takes it out of any gang. The gang's size is opts->size, else map_entries
 * (when > 0); its timeout opts->timeout_ms; the newest member's annotations win. Leaving releases
 * p's reservation; the last member leaving frees the gang.
 */
void gs_sched__gang_set(struct gs_sched *s, struct gs_sched__pod *p, const struct gs_gang_opts *opts, long map_entries,
			int64_t now_ms);
/* Takes p out of its gang (nothing when it is in none), as gs_sched__gang_set with no options. */
void gs_sched__gang_leave(struct gs_sched *s, struct gs_sched__pod *p);

/* 1 when p fits and must still wait for its gang instead of being queued alone: p is in a gang that has
 * not ran. */
int gs_sched__gang_holds_back(const struct gs_sched__pod *p);
/* p (a member that passes every check on node n) holds its reservation there; its gang goes on
 * s->gangs_ready when that makes n_reserved reach its size. */
void gs_sched__gang_reserve(struct gs_sched *s, struct gs_sched__pod *p, struct gs_sched__node *n);
/*
 * Releases p's reservation (p->reserved: the use of its uid) and returns the node it was on, pinned
 * (pinned + 1: the caller unpins it and runs gs_sched__node_gc). quiet: the node is not marked dirty
 * (the caller is placing p again and marks it if p does not take it back); else it is. NULL when p
 * held nothing.
 */
struct gs_sched__node *gs_sched__gang_unreserve(struct gs_sched *s, struct gs_sched__pod *p, int quiet);

/* gs_sched__gang_unreserve, not quiet, and the node unpinned and collected: p's reservation goes for
 * good (p leaves, ends, is bound by someone else, or stops waiting for its gang). */
void gs_sched__gang_release(struct gs_sched *s, struct gs_sched__pod *p);
/* A member of g is bound already (a restart, another replica's commit): g counts as placed, its
 * members are placed alone from now on (the caller places the reserved ones again). No event. */
void gs_sched__gang_ran(struct gs_sched *s, struct gs_sched__gang *g);

/* p's reservation becomes its Binding's (its gang's commit hands it out): p keeps the use, is no longer
 * reserved, and is marked committed (a failed Binding is told on its owner). */
void gs_sched__gang_hand_out(struct gs_sched *s, struct gs_sched__pod *p);

/* Why a member that fits waits: GANG ("fits node ... and holds it until ..."), or, resting,
 * GANG_TIMED_OUT, or, its gang not admitted to its namespace's budget, GANG_LIMIT (as
 * gs_sched__gang_budget). */
enum gs_wait_reason gs_sched__gang_wait(const struct gs_sched *s, const struct gs_sched__pod *p,
					const struct gs_sched__node *n, char *msg, size_t size);

/*
 * The namespace's budget (sched_gang.c, "budgets"; sched_int.h, struct gs_sched__gang_ns): NONE when
 * p's gang is admitted (it holds its claim), resting, or fits beside the claims of its namespace's
 * admitted gangs; else GANG_LIMIT with msg (it can never fit, or what the others hold). Pure but for a
 * cache of the claim in the gang.
 */
enum gs_wait_reason gs_sched__gang_budget(const struct gs_sched *s, const struct gs_sched__pod *p,
					  const struct gs_sched__node *n, char *msg, size_t size);
/* p waits GANG_LIMIT: its gang goes on its namespace's capped list, placed again when a claim goes. */
void gs_sched__gang_capped(struct gs_sched *s, struct gs_sched__pod *p);
/* g holds no reservation any more (after a quiet gs_sched__gang_unreserve that was not taken back,
 * or a hand-out): it gives its claim back and the namespace's capped gangs are placed again. Nothing
 * when it still holds one, or holds no claim. */
void gs_sched__gang_settle(struct gs_sched *s, struct gs_sched__gang *g);

/* ---- timers and commits (driven by gs_sched__next_bind) -------------------------------------------- */

/* The earliest time a gathering gang times out or a resting one gathers again, or -1. */
int64_t gs_sched__gang_deadline(const struct gs_sched *s);
/* A gathering gang whose timer is due at now_ms (not one on s->gangs_ready), or NULL. */
struct gs_sched__gang *gs_sched__gang_due(const struct gs_sched *s, int64_t now_ms);
/* Timer of g fired: a gathering gang times out (events on its owner and every member not placed,
 * naming who blocked; it rests until a backoff passes), a resting one gathers again. The caller then
 * places every member of g again. */
void gs_sched__gang_fire(struct gs_sched *s, struct gs_sched__gang *g, int64_t now_ms);
/* g's verified members are being handed out: it ran (placed alone from now on); a GangScheduled event. */
void gs_sched__gang_committed(struct gs_sched *s, struct gs_sched__gang *g, int64_t now_ms);
/* The Binding of p, handed out by its gang's commit, failed: an event on the owner (it is retried alone). */
void gs_sched__gang_bind_failed(struct gs_sched *s, const struct gs_sched__pod *p, const char *what);
/* The next gang event as a report (GS_REPORT_GANG), or 0. Strings valid until the next call. */
int gs_sched__gang_next_event(struct gs_sched *s, struct gs_report *out);
/* Who blocks g: members not fitting (up to three, with their reason and message) and members not
 * created, into msg ("" when nobody blocks). Returns the first such member's reason, NONE when only
 * members not created (or nobody) block. */
enum gs_wait_reason gs_sched__gang_blockers(const struct gs_sched *s, const struct gs_sched__gang *g, char *msg,
					    size_t size);
/* explain's view of p's gang (out->size 0 when p is in none); out->blockers is allocated. */
void gs_sched__gang_explain(const struct gs_sched *s, const struct gs_sched__pod *p, struct gs_explain_gang *out);
/* ---- placeholders (cfg.gang_placeholders) ------------------------------------------------------------ */

/* Brings p's placeholder in line with its reservation: one on its use's node while it is reserved (a
 * create queued, and the one on another node, if any, a delete), none otherwise (a delete queued).
 * Nothing without the flag. O(1). */
void gs_sched__gang_ph_sync(struct gs_sched *s, struct gs_sched__pod *p);
/*
 * 1 when o is a placeholder pod of ours: its uid is one our create's reply named
 * (gs_sched__gang_placeholder_made); such a pod is not a use of its node (its member's reservation is)
 * and never a pod to place. 0 for every other pod, those that merely claim to be placeholders
 * (GS_GANG_PLACEHOLDER_FOR, a name) included: they count as the ordinary pods they are, so a forged
 * placeholder can never hide a use (the rule cannot undercount). A claimed one of our form (our
 * scheduler's name, controlled by the Pod it claims to hold for: after a restart or a failover the
 * engine knows none of its own) that no member wants gets a delete queued, once, with its uid as the
 * precondition; one of another scheduler is never touched.
 */
int gs_sched__gang_placeholder_seen(struct gs_sched *s, const struct gs_pod_obj *o);
/* The apiserver created the placeholder ns/name for member_uid with this uid (the create's reply): ours
 * from now on, until its deletion is seen. The caller drops any pod record and use of uid. */
void gs_sched__gang_placeholder_made(struct gs_sched *s, const char *member_uid, const char *ns, const char *name,
				     const char *uid);
/* The pod uid is gone: 1 when it was a placeholder of ours (forgotten; one its member still wants is made
 * again under a new name), else 0 (an orphan's delete asked is forgotten; its use goes as any pod's). */
int gs_sched__gang_placeholder_gone(struct gs_sched *s, const char *uid);
/* gs_sched_next_placeholder (sched.h). */
int gs_sched__gang_next_placeholder(struct gs_sched *s, struct gs_placeholder *out);
/* The name of the placeholder of the member gs_sched__gang_hand_out handed out last, or NULL; *uid its uid
 * when its create's reply told it, else NULL. */
const char *gs_sched__gang_handed_placeholder(const struct gs_sched *s, const char **uid);
/* Frees a pod's placeholder record (the pod is being freed). */
void gs_sched__gang_pod_free(struct gs_sched__pod *p);

/* Frees every gang and pending event (the engine is being freed; pods free themselves). */
/* gs_sched_gang_budget_seed (sched.h). */
int gs_sched__gang_budget_seed(struct gs_sched *s, const char *ns, long cap_members, long cap_gpus, long held_members,
			       long held_gpus);
/* s->gang_limits from s->cfg.gang_limits (at gs_sched_new; gs_sched__gangs_free frees it). */
void gs_sched__gang_limits_init(struct gs_sched *s);
void gs_sched__gangs_free(struct gs_sched *s);

#endif
