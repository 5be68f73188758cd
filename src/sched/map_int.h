/*
 * map_int.h: the parsed map's layout, owned by map.c; read by map_cache.c (which sets the hook), by
 * tests and by the fuzz harness. Not part of the public contract of map.h.
 */
#ifndef GS_SCHED_MAP_INT_H
#define GS_SCHED_MAP_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sched/map.h"

/*
 * Called by gs_map_ref with shared = 1 when the map gains its second reference, by gs_map_unref with
 * shared = 0 when it is back to one: whoever holds that one reference (the cache, map_cache.c) learns
 * when nobody else does. map.c knows nothing of its holder.
 */
typedef void (*gs_map__hook)(void *arg, int shared);

struct gs_map {
	int refs;
	size_t bytes;                 /* the one allocation's size (gs_map_bytes) */
	size_t n;                     /* entries */
	struct gs_map_entry *entries; /* in text order */
	uint32_t *table;              /* open addressing by index: position + 1, 0 = empty */
	size_t tmask;                 /* table size - 1 (a power of two minus one) */
	gs_map__hook hook;            /* set by the holder of one reference (the cache), or NULL */
	void *hook_arg;               /* the hook's argument (the cache entry) */
				      /* entries, table and the string pool follow in the same allocation */
};

static inline int gs_map__refs(const struct gs_map *m)
{
	return m->refs;
}

#endif
