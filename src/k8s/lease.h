/*
 * lease.h: the pure part of leader election (lease.c): a Lease's JSON into a record, and the decision
 * to take it or wait. No I/O: leader.c drives it, and it is unit-tested and fuzzed alone
 * (tests/unit/test_leader.c, tests/fuzz/fuzz_lease.c).
 */
#ifndef GS_K8S_LEASE_H
#define GS_K8S_LEASE_H

#include <stddef.h>
#include <stdint.h>

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
