/*
 * hmap.h: a hash map from byte-string keys to void * values.
 *
 * Open addressing with linear probing over a power-of-two table; each slot keeps the key's full hash,
 * so a probe compares keys only when the hashes match. Deletion leaves a tombstone (no entries move),
 * which makes deleting the current entry during iteration safe; tombstones are swept by the next
 * rehash. Lookups, inserts and deletes are O(1) on average.
 *
 * Keys are (pointer, length) pairs and may hold any bytes; the _str helpers take NUL-terminated keys.
 * Key ownership is chosen per map at init:
 *   - default (flags 0): the map BORROWS keys. The caller keeps each key alive and unchanged while its
 *     entry is in the map; typically the key points into the value (a pod's uid inside the pod record).
 *     A put that replaces an entry also replaces the stored key pointer with the new one, so the old
 *     record may be freed after the put.
 *   - GS_HMAP_COPY_KEYS: the map copies keys on insert (NUL-terminated copy) and frees them on delete
 *     and gs_hmap_free; a replacing put keeps the copy it has.
 * Values are never owned by the map and must not be NULL (NULL means "absent" in gs_hmap_get).
 *
 * The hash is keyed with a process-wide seed read when a map is initialised (gs_hmap_set_seed); the
 * daemon sets a random one at startup so that keys chosen by users (pod names) cannot be made to
 * collide on purpose. Tests leave the fixed default.
 *
 *   struct gs_hmap m;
 *   gs_hmap_init(&m, 0);
 *   gs_hmap_put_str(&m, pod->uid, pod, NULL);
 *   pod = gs_hmap_get_str(&m, uid);
 *   struct gs_hmap_iter it = {0};
 *   while (gs_hmap_next(&m, &it))
 *           use(it.key, it.klen, it.val);
 *   gs_hmap_free(&m);
 *
 * Not thread-safe.
 */
#ifndef GS_CORE_HMAP_H
#define GS_CORE_HMAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GS_HMAP_COPY_KEYS 1u

struct gs_hmap_slot {
	uint64_t hash; /* 0: empty, 1: tombstone, otherwise the key's hash (forced >= 2) */
	const char *key;
	size_t klen;
	void *val;
};

struct gs_hmap {
	struct gs_hmap_slot *slots;
	size_t cap;   /* slots in the table: 0 or a power of two */
	size_t len;   /* live entries */
	size_t tombs; /* tombstones */
	uint64_t seed;
	unsigned flags;
};

/* Position and current entry of an iteration; start from {0}. */
struct gs_hmap_iter {
	size_t pos;
	const char *key;
	size_t klen;
	void *val;
};

/* The seed for maps initialised from now on (existing maps keep theirs). */
void gs_hmap_set_seed(uint64_t seed);

/* A fast keyed 64-bit hash of p[0..n) (a wyhash-like multiply-mix). Exposed for callers' own tables. */
uint64_t gs_hmap_hash(const void *p, size_t n, uint64_t seed);

/* Cannot fail; allocates nothing until the first put. */
void gs_hmap_init(struct gs_hmap *m, unsigned flags);
/* Frees the table and copied keys, never the values. Safe after init, and twice. */
void gs_hmap_free(struct gs_hmap *m);

/*
 * Inserts or replaces. Returns 0 when the key was new, 1 when an entry was replaced (its old value in
 * *old if old is not NULL), -ENOMEM (map unchanged) or -EINVAL for a NULL value.
 * Invalidates iterators.
 */
int gs_hmap_put(struct gs_hmap *m, const char *key, size_t klen, void *val, void **old);
/* The value for key, or NULL. */
void *gs_hmap_get(const struct gs_hmap *m, const char *key, size_t klen);
/* Removes key. Returns 0 (its value in *old if old is not NULL) or -ENOENT. Safe during iteration. */
int gs_hmap_del(struct gs_hmap *m, const char *key, size_t klen, void **old);
/* Advances it to the next entry: 1 with it->key/klen/val set, 0 at the end. Order is unspecified. */
int gs_hmap_next(const struct gs_hmap *m, struct gs_hmap_iter *it);

static inline size_t gs_hmap_len(const struct gs_hmap *m)
{
	return m->len;
}

static inline int gs_hmap_put_str(struct gs_hmap *m, const char *key, void *val, void **old)
{
	return gs_hmap_put(m, key, strlen(key), val, old);
}

static inline void *gs_hmap_get_str(const struct gs_hmap *m, const char *key)
{
	return gs_hmap_get(m, key, strlen(key));
}

static inline int gs_hmap_del_str(struct gs_hmap *m, const char *key, void **old)
{
	return gs_hmap_del(m, key, strlen(key), old);
}

#endif
