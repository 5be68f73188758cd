#include "core/ttl_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/hmap.h"
#include "core/list.h"
#include "core/log.h"

struct entry {
	struct gs_list lru; /* c->lru: least recently used first */
	void *value;
	uint64_t expires;
	size_t klen;
	char key[]; /* the map borrows it */
};

struct gs_ttl_cache {
	struct gs_hmap map;
	struct gs_list lru;
	size_t max;
	void (*free_value)(void *v);
	struct gs_ttl_cache_stats st;
};

struct gs_ttl_cache *gs_ttl_cache_new(size_t max_entries, void (*free_value)(void *v))
{
	struct gs_ttl_cache *c = gs_xcalloc(1, sizeof(*c));
	gs_hmap_init(&c->map, 0);
	gs_list_init(&c->lru);
	c->max = max_entries ? max_entries : 1;
	c->free_value = free_value;
	return c;
}

static void entry_drop(struct gs_ttl_cache *c, struct entry *e)
{
	void *old = NULL;
	int r = gs_hmap_del(&c->map, e->key, e->klen, &old);
	GS_ASSERT(r == 0 && old == e);
	gs_list_remove(&e->lru);
	if (c->free_value)
		c->free_value(e->value);
	free(e);
}

void gs_ttl_cache_free(struct gs_ttl_cache *c)
{
	struct gs_list *l, *n;
	if (!c)
		return;
	GS_LIST_FOREACH_SAFE(l, n, &c->lru)
		entry_drop(c, GS_CONTAINER_OF(l, struct entry, lru));
	gs_hmap_free(&c->map);
	free(c);
}

void *gs_ttl_cache_get(struct gs_ttl_cache *c, const void *key, size_t klen, uint64_t now_ms)
{
	struct entry *e = gs_hmap_get(&c->map, key, klen);
	if (!e) {
		c->st.misses++;
		return NULL;
	}
	if (now_ms >= e->expires) {
		c->st.expired++;
		c->st.misses++;
		entry_drop(c, e);
		return NULL;
	}
	c->st.hits++;
	gs_list_remove(&e->lru);
	gs_list_insert_tail(&c->lru, &e->lru);
	return e->value;
}

int gs_ttl_cache_touch(struct gs_ttl_cache *c, const void *key, size_t klen, uint64_t expires_ms, uint64_t now_ms)
{
	struct entry *e = gs_hmap_get(&c->map, key, klen);
	if (!e || now_ms >= e->expires)
		return -ENOENT; /* an expired one is dropped by the next get or put, as it would be */
	e->expires = expires_ms;
	return 0;
}

/* Room for one more: an expired entry if the oldest used one is, else the oldest used one. */
static void make_room(struct gs_ttl_cache *c, uint64_t now_ms)
{
	struct entry *e = GS_CONTAINER_OF(gs_list_first(&c->lru), struct entry, lru);
	if (now_ms >= e->expires)
		c->st.expired++;
	else
		c->st.evicted++;
	entry_drop(c, e);
}

void gs_ttl_cache_put(struct gs_ttl_cache *c, const void *key, size_t klen, void *value, uint64_t expires_ms,
		      uint64_t now_ms)
{
	struct entry *e = gs_hmap_get(&c->map, key, klen);
	if (e)
		entry_drop(c, e);
	else if (gs_hmap_len(&c->map) >= c->max)
		make_room(c, now_ms);
	e = gs_xmalloc(sizeof(*e) + klen + 1);
	memcpy(e->key, key, klen);
	e->key[klen] = '\0';
	e->klen = klen;
	e->value = value;
	e->expires = expires_ms;
	gs_list_insert_tail(&c->lru, &e->lru);
	if (gs_hmap_put(&c->map, e->key, klen, e, NULL) < 0)
		gs_oom(sizeof(*e));
	GS_ASSERT(gs_hmap_len(&c->map) <= c->max && gs_list_last(&c->lru) == &e->lru);
}

void gs_ttl_cache_stats(const struct gs_ttl_cache *c, struct gs_ttl_cache_stats *st)
{
	*st = c->st;
	st->entries = gs_hmap_len(&c->map);
}
