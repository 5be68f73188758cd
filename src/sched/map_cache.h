/*
 * map_cache.h: a cache of parsed maps by annotation content (map_cache.c), above map.h: every pod of a
 * StatefulSet carries the same string, so it is parsed once. Failed parses are cached too. Entries
 * nobody references are evicted beyond max_entries.
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
struct gs_map_cache *gs_map_cache_new(size_t max_entries); /* never NULL */
void gs_map_cache_free(struct gs_map_cache *c);
/*
 * text[0..len) need not be NUL-terminated: it is hashed and compared where it lies (a slice of the
 * apiserver's message), and a hit copies nothing; only a miss keeps a copy, as the entry's key.
 * Returns 0 and *out (a new reference the caller unrefs), or -EINVAL with *err pointing at the cached
 * error (valid until the next call on the cache).
 */
int gs_map_cache_get(struct gs_map_cache *c, const char *text, size_t len, struct gs_map **out,
		     const struct gs_map_error **err);

/* The cache's counts, for the engine's stats and the tests. */
struct gs_map__cache_stats {
	size_t entries; /* cached texts, parsed or failed */
	size_t idle;    /* of which nobody outside the cache references (evictable) */
	uint64_t hits;
	uint64_t misses;
};

void gs_map__cache_stats(const struct gs_map_cache *c, struct gs_map__cache_stats *st);

#endif
