/*
 * leader.h: leader election with a coordination.k8s.io/v1 Lease, client-go's leaderelection in C.
 *
 * Every replica runs one; at most one is leading at any time, and only the leader binds, records events
 * and conditions, deletes unmutated pods and renews self-signed certificates (the caller asks
 * gs_leader_leading before each of those). The followers keep their caches warm and serve the webhook,
 * so a new leader binds at once.
 *
 * The cycle, every retry period (jittered up to 1.2x while following, as client-go does):
 *   GET the Lease (404: create it, holding it). If another holder renewed it less than lease_duration
 *   ago (measured on OUR clock, from when we first saw its current record: clocks of other machines
 *   are never compared), wait. Otherwise PUT it with our identity and the resourceVersion read: a
 *   409 means another replica wrote first. A follower whose holder's term ends before its next poll
 *   polls at that end instead (gs_lease_wait_ms; client-go polls on): a dead leader is replaced within
 *   lease_duration + one poll (the delay before we saw its last renewal) instead of + two.
 * A leader renews the same way. Its leadership is valid until renew_deadline after it SENT its last
 * successful renewal; a replica that sees that renewal waits at least lease_duration after it saw it,
 * so with renew_deadline < lease_duration two replicas never lead at once. A leader past its deadline
 * stops at once, even if its process was frozen and no timer ran: gs_leader_leading reads the loop's
 * clock on every call, so the first question after waking is answered "no".
 *
 * gs_leader_stop releases the Lease when leading (holder "", leaseDurationSeconds 1, as client-go's
 * ReleaseOnCancel) so the next replica takes over at its next retry instead of after expiry.
 *
 * RBAC: leases get/update on the Lease's name, create in its namespace.
 */
#ifndef GS_K8S_LEADER_H
#define GS_K8S_LEADER_H

#include <stdint.h>
#include <uv.h>

#include "k8s/kube.h"

#define GS_LEADER_LEASE_MS          15000
#define GS_LEADER_RENEW_DEADLINE_MS 10000
#define GS_LEADER_RETRY_MS          2000

struct gs_leader_opts {
	const char *ns;                                /* the Lease's namespace */
	const char *name;                              /* the Lease's name */
	const char *identity;                          /* this replica: pod name + random suffix */
	int64_t lease_ms, renew_deadline_ms, retry_ms; /* 0: the defaults above */
	/* leading changed (1: we lead now, 0: we stopped). Never from inside a gs_leader_* call. */
	void (*on_change)(int leading, void *ud);
	void *ud;
	uint64_t seed; /* jitter */
};

struct gs_leader;

/* client-go's rule for the durations (ms): lease > renew_deadline > 1.2 x retry > 0. 1 if they keep it. */
int gs_leader_durations_ok(int64_t lease_ms, int64_t renew_deadline_ms, int64_t retry_ms);

/*
 * The durations must keep gs_leader_durations_ok: -EINVAL with a message in err otherwise. Starts at once. Strings are copied.
 */
int gs_leader_start(uv_loop_t *loop, struct gs_kube *kube, const struct gs_leader_opts *o, struct gs_leader **out,
		    char *err, size_t errlen);

/* 1 while this replica holds the Lease and its last renewal is within the renew deadline (now). */
int gs_leader_leading(const struct gs_leader *l);

struct gs_leader_stats {
	int leading;
	uint64_t acquired; /* times this replica became the leader */
	uint64_t lost;     /* times it stopped leading (deadline, another holder, release) */
	uint64_t errors;   /* Lease requests that failed */
	char holder[256];  /* the holder last seen ("" when none) */
};
void gs_leader_stats(const struct gs_leader *l, struct gs_leader_stats *st);

/*
 * Stops: releases the Lease if leading (one PUT, at most renew_deadline), then closes its timer and
 * frees l; done(ud) then. The kube client must stay open until done.
 */
void gs_leader_stop(struct gs_leader *l, void (*done)(void *ud), void *ud);

/* ---- the pure part, for tests ------------------------------------------------------------------ */

/* A Lease's spec as read (strings truncated to their buffers). */
struct gs_lease {
	char rv[64];                 /* metadata.resourceVersion */
	char holder[256];            /* spec.holderIdentity, "" when none */
	int64_t duration_s;          /* spec.leaseDurationSeconds, 0 when absent */
	int64_t transitions;         /* spec.leaseTransitions */
	char acquire[40], renew[40]; /* spec.acquireTime, spec.renewTime as written */
};

/* A Lease object's JSON into *out. 0, or -EINVAL with err (not an object, a field of the wrong type). */
int gs_lease_decode(const char *json, size_t len, struct gs_lease *out, char *err, size_t errlen);

/*
 * The decision after a GET: 1 to write the Lease (take or renew it), 0 to wait. observed_ms is when
 * we first saw this exact record (our clock); lease_ms the holder's term.
 */
int gs_lease_may_take(const struct gs_lease *cur, const char *identity, int64_t observed_ms, int64_t lease_ms,
		      int64_t now_ms);

/*
 * A follower's wait before its next GET: poll_ms, or less when another holder's term (counted as in
 * gs_lease_may_take) ends sooner: then exactly at its end, so a dead leader is replaced lease_ms after
 * we saw its last renewal, not up to one more poll later. Never 0 for a term already over (a write
 * that failed is retried a poll later, not in a loop).
 */
int64_t gs_lease_wait_ms(const struct gs_lease *cur, const char *identity, int64_t observed_ms, int64_t lease_ms,
			 int64_t now_ms, int64_t poll_ms);

#endif
