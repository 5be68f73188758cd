/*
 * gang.h: the all-or-nothing annotations of a workload (docs/sched.md, "All or nothing"), parsed one way
 * for the webhook (which denies bad values), lint and the engine (which makes a pod with bad values
 * wait, GANG_INVALID, when the webhook was not asked).
 *
 *     gpu-scheduler.io/placement: all-or-nothing     (or "independent", the default: each pod alone)
 *     gpu-scheduler.io/gang-timeout: 10m             (a Go duration, > 0 and <= 720h; default 10m)
 *     gpu-scheduler.io/gang-size: "8"                (1 .. 100000; default: the map's number of entries)
 *
 * A gang is the pods of one owner (the controller's uid); a bare pod is a gang of one. gang-timeout and
 * gang-size mean nothing without all-or-nothing, so either without it is an error (a typo in the
 * placement value must not silently place ranks one by one).
 *
 * Pure functions: no allocation, no clock; messages name the setting (the annotation, or by reference the
 * GPUPlacementMap's spec field: struct gs_gang_names) and quote the value (escaped, cut at 40 bytes:
 * annotation values are user text).
 */
#ifndef GS_SCHED_GANG_H
#define GS_SCHED_GANG_H

#include <stddef.h>
#include <stdint.h>

#define GS_GANG_PLACEMENT       "gpu-scheduler.io/placement"
#define GS_GANG_TIMEOUT         "gpu-scheduler.io/gang-timeout"
#define GS_GANG_SIZE            "gpu-scheduler.io/gang-size"
/* On a placeholder pod (sched.h, gs_sched_next_placeholder): the uid of the member it holds for. */
#define GS_GANG_PLACEHOLDER_FOR "gpu-scheduler.io/placeholder-for"

#define GS_GANG_ALL_OR_NOTHING "all-or-nothing"
#define GS_GANG_INDEPENDENT    "independent"

#define GS_GANG_TIMEOUT_DEFAULT_MS (10 * 60 * 1000LL)
#define GS_GANG_TIMEOUT_MAX_MS     (720 * 3600 * 1000LL)
#define GS_GANG_SIZE_MAX           100000

struct gs_gang_opts {
	int all_or_nothing;
	int64_t timeout_ms; /* GS_GANG_TIMEOUT_DEFAULT_MS when the annotation is absent */
	long size;          /* 0: absent (the map's number of entries decides) */
};

/* A GPUPlacementMap's fields that hold the same settings (sched/gpm.h, deploy/crd/gpuplacementmaps.yaml). */
#define GS_GANG_SPEC_PLACEMENT "spec.placement"
#define GS_GANG_SPEC_TIMEOUT   "spec.gangTimeout"
#define GS_GANG_SPEC_SIZE      "spec.gangSize"

/* How messages name the three settings: where they were read. */
struct gs_gang_names {
	const char *placement, *timeout, *size;
};

/* The annotations' names (GS_GANG_PLACEMENT, ...) and a GPUPlacementMap's (GS_GANG_SPEC_PLACEMENT, ...). */
extern const struct gs_gang_names gs_gang_annotation_names;
extern const struct gs_gang_names gs_gang_spec_names;

/*
 * Reads the three annotation values (NULL: absent) into *out. 0, or -EINVAL with msg (NUL-terminated,
 * cut to size) naming the first bad annotation: "gpu-scheduler.io/gang-timeout "10x" is not a duration
 * (Go's form: 90s, 10m, 1h30m)".
 */
int gs_gang_opts_parse(const char *placement, const char *timeout, const char *size, struct gs_gang_opts *out,
		       char *msg, size_t msg_size);
/* The same, msg naming the settings as names says (by reference: gs_gang_spec_names, "spec.gangTimeout
 * "10x" is not a duration ..."). */
int gs_gang_opts_parse_named(const struct gs_gang_names *names, const char *placement, const char *timeout,
			     const char *size, struct gs_gang_opts *out, char *msg, size_t msg_size);

/*
 * A Go duration (time.ParseDuration: "300ms", "-1.5h", "2h45m"; units ns us µs ms s m h; "0" alone) in
 * whole milliseconds, rounded down. 0 with *ms, or -EINVAL (not a duration), or -ERANGE (beyond
 * +-2^63 ns, Go's limit). One difference from Go: two components of 2^63 ns each sum to 2^64, which
 * Go's uint64 wraps to 0 and accepts; this refuses it (-ERANGE).
 */
int gs_gang_duration_ms(const char *s, int64_t *ms);

/*
 * The namespaces' budgets for reservations (docs/sched.md, "Budgets"): --gang-reservation-limits
 * overrides, per namespace, the scheduler's members and GPUs that one namespace's gangs may hold
 * reserved at once. Its text: items "NAMESPACE=MEMBERS/GPUS" separated by commas
 * ("team-a=512/2048,team-b=8/16"), each number 0..GS_GANG_LIMIT_MAX, 0 meaning no bound.
 */
#define GS_GANG_LIMIT_MAX  1000000
#define GS_GANG_LIMITS_MAX 4096 /* bytes of the whole text */

struct gs_gang_limit {
	const char *ns; /* in the text, ns_len bytes, not NUL-terminated */
	size_t ns_len;
	long members, gpus;
};

/* The item at *text: 1 with *l (pointing into the text), -EINVAL when it is not one, 0 at the end;
 * *text moves past it and its comma either way. */
int gs_gang_limits_next(const char **text, struct gs_gang_limit *l);
/* 0 when every item is one and no namespace is named twice; else -EINVAL with msg ("item \"x=1\" is
 * not NAMESPACE=MEMBERS/GPUS ...", "namespace a is named twice", "is longer than 4096 bytes"). */
int gs_gang_limits_check(const char *text, char *msg, size_t msg_size);
/* 1 with *members and *gpus from the first good item for ns in text (NULL: none), else 0 and both left
 * alone. */
int gs_gang_limits_lookup(const char *text, const char *ns, long *members, long *gpus);
/* A namespace's bounds in words, 0 being none: "8 members, any number of GPUs". */
void gs_gang_bound_words(char *buf, size_t size, long members, long gpus);

#endif
