/*
 * map.h: the gpu-scheduling-map annotation: grammar, parsed form, the pod's index (map.c). The cache by
 * content is map_cache.h's.
 *
 * Grammar, one entry per line:
 *     INDEX=NODE:DEVICES        e.g.  "0=node1:0,1"   "3=node4:GPU-8f2c...,MIG-1a2b..."
 * INDEX is a non-negative decimal integer; NODE a DNS-1123 subdomain; DEVICES a comma-separated list of
 * GPU indices (decimal) or GPU-/MIG- UUIDs. Blanks around tokens and empty lines are ignored; '#'
 * starts a comment that runs to the end of the line. Limits: GS_MAP_MAX_BYTES (64 KiB) of text,
 * GS_MAP_MAX_ENTRIES (4096) entries, GS_MAP_MAX_DEVICES (64) devices per entry.
 *
 * Errors name the line and the problem, for events and admission messages:
 *     "line 3: missing '=' between index and node"
 */
#ifndef GS_SCHED_MAP_H
#define GS_SCHED_MAP_H

#include <stddef.h>

#define GS_MAP_MAX_BYTES   (64 * 1024)
#define GS_MAP_MAX_ENTRIES 4096
#define GS_MAP_MAX_DEVICES 64

struct gs_map_entry {
	long index;
	const char *node;    /* NUL-terminated, owned by the map */
	const char *devices; /* canonical: devices joined by ',' with no blanks, e.g. "0,1" */
	int n_devices;
	long max_index; /* the highest GPU index among devices; -1 when they are all UUIDs */
	int line;       /* 1-based line of the entry in the annotation */
};

struct gs_map; /* opaque, immutable once parsed, reference counted */

struct gs_map_error {
	int line;      /* 1-based; 0 for errors about the whole text (size) */
	char msg[256]; /* "line 3: duplicate index 2 (first on line 1)" */
};

/* Parses text[0..len). Returns 0 and a map with one reference, or -EINVAL and err filled (the first
 * problem: the daemon and the webhook show it; the first one is the one to fix), or -ENOMEM. */
int gs_map_parse(const char *text, size_t len, struct gs_map **out, struct gs_map_error *err);

/* What gs_map_parse_all passes each problem to; err lives only during the call. */
typedef void (*gs_map_error_cb)(void *arg, const struct gs_map_error *err);

/* Problems gs_map_parse_all passes on; it counts the rest. Bounds what one annotation makes lint print. */
#define GS_MAP_MAX_ERRORS 100

/*
 * Like gs_map_parse, but goes on after a bad line (for `gpu-scheduler lint`, which reports every
 * problem at once): on_error gets each problem synchronously, in text order, with the same message
 * gs_map_parse would give had it been the first, at most GS_MAP_MAX_ERRORS of them. A bad line adds
 * no entry (a duplicate index keeps its first entry); parsing stops early only at "too many entries".
 * Still one pass over the text: linear, and the map is sized as gs_map_parse's.
 * "no entries" is a problem only when no line had another.
 * Returns the number of problems (also those past the cap), 0 when there is none, or -ENOMEM; *out is
 * a map of the good entries (one reference) whenever there is at least one, else NULL. With 0
 * problems, *out is exactly what gs_map_parse gives.
 */
int gs_map_parse_all(const char *text, size_t len, struct gs_map **out, gs_map_error_cb on_error, void *arg);
void gs_map_ref(struct gs_map *m);
void gs_map_unref(struct gs_map *m); /* NULL is fine */

/* The entry for index, or NULL. O(1) average. */
const struct gs_map_entry *gs_map_lookup(const struct gs_map *m, long index);
size_t gs_map_count(const struct gs_map *m);
/* The bytes the parsed map holds (one allocation: entries, index table, strings), for the memory
 * budgets (sched.h): about 60 bytes an entry more than the text. */
size_t gs_map_bytes(const struct gs_map *m);
const struct gs_map_entry *gs_map_entry_at(const struct gs_map *m, size_t i); /* in text order */

/* ---- the pod's index -------------------------------------------------------------------------- */

enum gs_index_source {
	GS_INDEX_NONE = 0,
	GS_INDEX_LABEL,          /* label apps.kubernetes.io/pod-index */
	GS_INDEX_JOB_ANNOTATION, /* annotation batch.kubernetes.io/job-completion-index */
	GS_INDEX_NAME,           /* trailing "-N" of the pod name */
};

/* Name of a source for logs: "label apps.kubernetes.io/pod-index", ... */
const char *gs_index_source_name(enum gs_index_source s);

/*
 * The pod's index from, in order: the label, the Job annotation, the trailing -N of the name.
 * Any argument may be NULL. A present but invalid label/annotation value is skipped in favour of the
 * next source. Returns 0 with *index and *src, or -ENOENT when no source gives an index.
 */
int gs_map_pod_index(const char *label_pod_index, const char *job_index, const char *name, long *index,
		     enum gs_index_source *src);

#endif
