/*
 * map_cache.c: the cache of parsed maps by annotation content. See map_cache.h.
 *
 * Each entry owns a copy of the text (the hash key) and either one reference to the parsed map or the
 * parse error. An entry is "idle" when nothing outside the cache references it: a failed parse always,
 * a map whose only reference is the cache's. Idle entries sit on an LRU list (most recent first); only
 * they are evicted, from the tail, and only inside gs_map_cache_get, so an error pointer handed out
 * stays valid until the next call on the cache as map_cache.h promises. gs_map_ref/unref tell the
 * cache, through the hook it sets in each map it holds (map_int.h), when a map crosses between one and
 * two references, which keeps the list exact in O(1).
 *
 * Text over GS_MAP_MAX_BYTES is rejected without being hashed or copied: such an entry could only
 * ever hold an error, and holding it would let one pod pin 64 KiB of garbage per distinct value.
 *
 * Besides -EINVAL, gs_map_cache_get may return -ENOMEM with *err set to NULL (map_cache.h lists -EINVAL
 * only; out of memory is the one other outcome).
 */
#include "sched/map_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/hmap.h"
#include "core/list.h"
#include "sched/map_int.h"

struct gs_map__cache_ent {
	struct gs_list lru; /* in the idle LRU list while idle, else self-linked */
	struct gs_map_cache *cache;
	int idle;
	struct gs_map *map;      /* NULL for a failed parse */
	struct gs_map_error err; /* with map == NULL */
	size_t len;
	size_t bytes; /* the entry, its text and its parse: what freeing it gives back */
	char text[];  /* the key, NUL-terminated for debugging */
};

struct gs_map_cache {
	struct gs_hmap by_text; /* text -> entry; keys borrowed from the entries */
	struct gs_list lru;     /* idle entries, the most recently idle first */
	size_t max;
	size_t max_idle_bytes; /* 0: none */
	size_t idle;
	size_t bytes, idle_bytes;
	uint64_t hits, misses;
	struct gs_map_error too_big; /* the error for uncached oversize text */
};

/* Puts e at the head of the idle list (moving it there if it is already idle). */
static void make_idle(struct gs_map__cache_ent *e)
{
	struct gs_map_cache *c = e->cache;

	if (e->idle) {
		gs_list_remove(&e->lru);
	} else {
		c->idle++;
		c->idle_bytes += e->bytes;
	}
	e->idle = 1;
	gs_list_insert_head(&c->lru, &e->lru);
}

static void make_busy(struct gs_map__cache_ent *e)
{
	if (!e->idle)
		return;
	gs_list_remove(&e->lru);
	e->idle = 0;
	e->cache->idle--;
	e->cache->idle_bytes -= e->bytes;
}

/* The map's hook (map_int.h): its second reference taken, or its last outside one dropped. */
static void on_shared(void *arg, int shared)
{
	if (shared)
		make_busy(arg);
	else
		make_idle(arg);
}

/* Removes e from the cache and frees it; its map lives on while others reference it. */
static void ent_free(struct gs_map__cache_ent *e)
{
	struct gs_map_cache *c = e->cache;

	gs_hmap_del(&c->by_text, e->text, e->len, NULL);
	if (e->idle) {
		gs_list_remove(&e->lru);
		c->idle--;
		c->idle_bytes -= e->bytes;
	}
	c->bytes -= e->bytes;
	if (e->map) {
		e->map->hook = NULL;
		e->map->hook_arg = NULL;
		gs_map_unref(e->map);
	}
	free(e);
}

struct gs_map_cache *gs_map_cache_new(size_t max_entries, size_t max_idle_bytes)
{
	struct gs_map_cache *c = gs_xcalloc(1, sizeof(*c));

	gs_hmap_init(&c->by_text, 0);
	gs_list_init(&c->lru);
	c->max = max_entries;
	c->max_idle_bytes = max_idle_bytes;
	return c;
}

void gs_map_cache_free(struct gs_map_cache *c)
{
	struct gs_hmap_iter it = {0};

	if (!c)
		return;
	while (gs_hmap_next(&c->by_text, &it))
		ent_free(it.val);
	gs_hmap_free(&c->by_text);
	free(c);
}

static int over(const struct gs_map_cache *c)
{
	return gs_hmap_len(&c->by_text) > c->max || (c->max_idle_bytes && c->idle_bytes > c->max_idle_bytes);
}

/* Evicts idle entries from the LRU tail until the cache is within both bounds; keeps `keep`. */
static void evict(struct gs_map_cache *c, const struct gs_map__cache_ent *keep)
{
	struct gs_list *l = gs_list_last(&c->lru);

	while (over(c) && l != &c->lru) {
		struct gs_list *prev = l->prev;
		struct gs_map__cache_ent *e = GS_CONTAINER_OF(l, struct gs_map__cache_ent, lru);
		if (e != keep)
			ent_free(e);
		l = prev;
	}
}

size_t gs_map_cache_cost(size_t len, const struct gs_map *m)
{
	return sizeof(struct gs_map__cache_ent) + len + 1 + (m ? gs_map_bytes(m) : 0);
}

void gs_map_cache_trim(struct gs_map_cache *c)
{
	evict(c, NULL);
}

int gs_map_cache_get(struct gs_map_cache *c, const char *text, size_t len, struct gs_map **out,
		     const struct gs_map_error **err)
{
	struct gs_map__cache_ent *e;
	int rc;

	*out = NULL;
	*err = NULL;
	if (len > GS_MAP_MAX_BYTES) {
		c->misses++;
		rc = gs_map_parse(text, len, out, &c->too_big);
		*err = &c->too_big;
		return rc;
	}

	e = gs_hmap_get(&c->by_text, text, len);
	if (e) {
		c->hits++;
		if (e->map) {
			gs_map_ref(e->map);
			*out = e->map;
			return 0;
		}
		make_idle(e); /* refresh its place in the LRU */
		*err = &e->err;
		return -EINVAL;
	}

	c->misses++;
	e = calloc(1, sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	gs_list_init(&e->lru);
	e->cache = c;
	e->len = len;
	memcpy(e->text, text, len);
	rc = gs_map_parse(text, len, &e->map, &e->err);
	if (rc == -ENOMEM || gs_hmap_put(&c->by_text, e->text, e->len, e, NULL) < 0) {
		gs_map_unref(e->map);
		free(e);
		return -ENOMEM;
	}
	e->bytes = gs_map_cache_cost(len, e->map);
	c->bytes += e->bytes;
	if (e->map) {
		e->map->hook = on_shared;
		e->map->hook_arg = e;
		gs_map_ref(e->map); /* the caller's; the parse's one is the cache's */
		*out = e->map;
	} else {
		make_idle(e);
		*err = &e->err;
	}
	evict(c, e);
	return e->map ? 0 : -EINVAL;
}

void gs_map__cache_stats(const struct gs_map_cache *c, struct gs_map__cache_stats *st)
{
	st->entries = gs_hmap_len(&c->by_text);
	st->idle = c->idle;
	st->bytes = c->bytes;
	st->idle_bytes = c->idle_bytes;
	st->hits = c->hits;
	st->misses = c->misses;
}
