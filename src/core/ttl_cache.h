/*
 * ttl_cache.h: a bounded map from byte-string keys to owned values that expire.
 *
 * For answers worth keeping a few seconds (the apiserver's TokenReview and SubjectAccessReview
 * verdicts, src/k8s/authz.c): every entry carries its own expiry, the map holds at most max_entries,
 * and a put into a full map evicts the least recently used entry (a get counts as a use). Expired
 * entries are dropped when a get meets them, and first in line when a put needs room.
 *
 * Invariants (GS_ASSERT in ttl_cache.c): the number of entries never exceeds max_entries (>= 1); the
 * hash map and the LRU list hold the same entries.
 *
 * Time is a parameter (milliseconds on any monotonic clock), so the cache reads no clock itself.
 * Values are owned by the cache from the put on and freed with free_value (NULL: not freed) when
 * replaced, evicted, expired or at gs_ttl_cache_free. Loop thread only.
 */
#ifndef GS_CORE_TTL_CACHE_H
#define GS_CORE_TTL_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct gs_ttl_cache; /* opaque */

struct gs_ttl_cache_stats {
	size_t entries;
	uint64_t hits, misses, expired, evicted;
};

/* max_entries 0 is taken as 1. Cannot fail (aborts on allocation failure: a fixed-size record). */
struct gs_ttl_cache *gs_ttl_cache_new(size_t max_entries, void (*free_value)(void *v));
void gs_ttl_cache_free(struct gs_ttl_cache *c); /* NULL is fine */

/*
 * The value of key while now_ms < its expiry, else NULL (an expired entry is dropped). The pointer
 * stays valid until the next put or free.
 */
void *gs_ttl_cache_get(struct gs_ttl_cache *c, const void *key, size_t klen, uint64_t now_ms);
/* Sets the expiry of key's live entry to expires_ms (its value kept); 0, or -ENOENT when there is none. */
int gs_ttl_cache_touch(struct gs_ttl_cache *c, const void *key, size_t klen, uint64_t expires_ms, uint64_t now_ms);

/* Inserts or replaces key (copied) with value until expires_ms. A full cache drops an expired entry
 * if the least recently used one is, else the least recently used one. */
void gs_ttl_cache_put(struct gs_ttl_cache *c, const void *key, size_t klen, void *value, uint64_t expires_ms,
		      uint64_t now_ms);

void gs_ttl_cache_stats(const struct gs_ttl_cache *c, struct gs_ttl_cache_stats *st);

#endif
