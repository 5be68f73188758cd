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
 * stops at once, even if its process was frozen and no timer ran: gs_leader_leading reads the monotonic
 * clock itself on every call (not the loop's cached time, which is stale when the freeze fell inside a
 * loop iteration), so the first question after waking is answered "no".
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

#endif
