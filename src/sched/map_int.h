/*
 * map_int.h: shared between map.c (parser, lookups) and map_cache.c; also read by tests and the
 * engine's stats. Not part of the public contract of map.h.
 */
#ifndef GS_SCHED_MAP_INT_H
#define GS_SCHED_MAP_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sched/map.h"

struct gs_map__cache_ent;

struct gs_map {
	int refs;
	size_t n;                       /* entries */
	struct gs_map_entry *entries;   /* in text order */
	uint32_t *table;                /* open addressing by index: position + 1, 0 = empty */
	size_t tmask;                   /* table size - 1 (a power of two minus one) */
	struct gs_map__cache_ent *ce;   /* the cache entry holding a reference, or NULL */
	/* entries, table and the string pool follow in the same allocation */
};

/* Called by gs_map_ref/unref when a cached map gains its first or loses its last outside reference. */
void gs_map__cache_busy(struct gs_map__cache_ent *ce);
void gs_map__cache_idle(struct gs_map__cache_ent *ce);

struct gs_map__cache_stats {
	size_t entries; /* cached texts, parsed or failed */
	size_t idle;    /* of which nobody outside the cache references (evictable) */
	uint64_t hits;
	uint64_t misses;
};

void gs_map__cache_stats(const struct gs_map_cache *c, struct gs_map__cache_stats *st);

static inline int gs_map__refs(const struct gs_map *m)
{
	return m->refs;
}

#endif
