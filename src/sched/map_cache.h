/*
 * map_cache.h: a cache of parsed maps by annotation content (map_cache.c), above map.h: every pod of a
 * StatefulSet carries the same string, so it is parsed once. Failed parses are cached too. Entries
 * nobody references ("idle") are evicted, least recently used first, while the cache holds more than
 * max_entries entries or its idle entries more than max_idle_bytes (their text, parse and entry):
 * what the cache keeps that nobody uses is bounded in bytes (issue 36), whatever the maps' sizes.
 *
 * The cache holds one reference to each map it parsed and sets the map's hook (map_int.h), so that
 * gs_map_ref/unref tell it when a map gains or loses its last outside reference; map.c never calls
 * the cache. Invariant: an entry is on the idle list exactly while nothing outside the cache
 * references it (a failed parse always; a map whose only reference is the cache's).
 */
#ifndef GS_SCHED_MAP_CACHE_H
#define GS_SCHED_MAP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "sched/map.h"

struct gs_map_cache;
/* never NULL; max_idle_bytes 0: idle entries are bounded by count alone */
struct gs_map_cache *gs_map_cache_new(size_t max_entries, size_t max_idle_bytes);
void gs_map_cache_free(struct gs_map_cache *c);
/*
 * text[0..len) need not be NUL-terminated: it is hashed and compared where it lies (a slice of the
 * apiserver's message), and a hit copies nothing; only a miss keeps a copy, as the entry's key.
 * Returns 0 and *out (a new reference the caller unrefs), or -EINVAL with *err pointing at the cached
 * error (valid until the next call on the cache).
 */
int gs_map_cache_get(struct gs_map_cache *c, const char *text, size_t len, struct gs_map **out,
		     const struct gs_map_error **err);

/* What an entry for a text of len bytes holds, with m its parse (NULL: a failed one): what the cache's
 * counts add for it, and what a holder's budget charges for it (sched_gpm.c). */
size_t gs_map_cache_cost(size_t len, const struct gs_map *m);

/*
 * Evicts idle entries until the cache is within its bounds. gs_map_cache_get does it on every miss; an
 * entry goes idle in gs_map_unref, which never evicts (the caller may hold an error pointer), so a
 * holder that drops many maps (the engine: at every event, sched.c tick) trims after.
 */
void gs_map_cache_trim(struct gs_map_cache *c);

/* The cache's counts, for the engine's stats and the tests. */
struct gs_map__cache_stats {
	size_t entries;    /* cached texts, parsed or failed */
	size_t idle;       /* of which nobody outside the cache references (evictable) */
	size_t bytes;      /* what every entry holds: its text, its parse and the entry itself */
	size_t idle_bytes; /* of which the idle entries' */
	uint64_t hits;
	uint64_t misses;
};

void gs_map__cache_stats(const struct gs_map_cache *c, struct gs_map__cache_stats *st);

#endif
