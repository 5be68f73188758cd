/*
 * hmap.c: see hmap.h.
 *
 * Linear probing keeps a lookup within one or two cache lines; storing the full hash in each slot means
 * a long key (a 64 KiB annotation in the map cache) is compared only on a real match. Tombstones rather
 * than backward-shift deletion: deleting during iteration must not move entries under the iterator.
 * The load factor (live + tombstones) stays under 3/4; a rehash drops the tombstones and doubles the
 * table only when live entries need it, so a churn of inserts and deletes does not grow it.
 */
#include "core/hmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HMAP_EMPTY   0
#define HMAP_TOMB    1
#define HMAP_MIN_CAP 8

static const uint64_t P0 = 0xa0761d6478bd642full;
static const uint64_t P1 = 0xe7037ed1a0b428dbull;
static const uint64_t P2 = 0x8ebc6af09c88c6e3ull;

static uint64_t hmap_seed = 0x9e3779b97f4a7c15ull;

void gs_hmap_set_seed(uint64_t seed)
{
	hmap_seed = seed;
}

/* 64x64 -> 128 multiply folded to 64 bits: the mixing step of wyhash. */
static inline uint64_t mum(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t rd64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t rd32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

uint64_t gs_hmap_hash(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t a, b;

	seed ^= mum(seed ^ P0, P1);
	if (n <= 16) {
		if (n >= 4) {
			size_t q = (n >> 3) << 2;
			a = (rd32(p) << 32) | rd32(p + q);
			b = (rd32(p + n - 4) << 32) | rd32(p + n - 4 - q);
		} else if (n > 0) {
			a = ((uint64_t)p[0] << 16) | ((uint64_t)p[n >> 1] << 8) | p[n - 1];
			b = 0;
		} else {
			a = b = 0;
		}
	} else {
		size_t i = n;
		while (i > 16) {
			seed = mum(rd64(p) ^ P1, rd64(p + 8) ^ seed);
			p += 16;
			i -= 16;
		}
		/* The last 16 bytes of the key, overlapping what the loop read (n > 16, so in bounds). */
		a = rd64(p + i - 16);
		b = rd64(p + i - 8);
	}
	return mum(P1 ^ (uint64_t)n, mum(a ^ P1, b ^ seed ^ P2));
}

static inline uint64_t slot_hash(const struct gs_hmap *m, const char *key, size_t klen)
{
	uint64_t h = gs_hmap_hash(key, klen, m->seed);
	return h < 2 ? h + 2 : h;
}

void gs_hmap_init(struct gs_hmap *m, unsigned flags)
{
	memset(m, 0, sizeof(*m));
	m->flags = flags;
	m->seed = hmap_seed;
}

void gs_hmap_free(struct gs_hmap *m)
{
	if (m->slots && (m->flags & GS_HMAP_COPY_KEYS)) {
		for (size_t i = 0; i < m->cap; i++) {
			if (m->slots[i].hash >= 2)
				free((char *)m->slots[i].key);
		}
	}
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = m->tombs = 0;
}

/* The slot holding key, or SIZE_MAX. */
static size_t find(const struct gs_hmap *m, const char *key, size_t klen, uint64_t h)
{
	size_t mask = m->cap - 1;

	if (m->cap == 0)
		return SIZE_MAX;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		const struct gs_hmap_slot *s = &m->slots[i];
		if (s->hash == HMAP_EMPTY)
			return SIZE_MAX;
		if (s->hash == h && s->klen == klen && memcmp(s->key, key, klen) == 0)
			return i;
	}
}

static int rehash(struct gs_hmap *m, size_t cap)
{
	struct gs_hmap_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		struct gs_hmap_slot *s = &m->slots[i];
		if (s->hash < 2)
			continue;
		size_t j = s->hash & (cap - 1);
		while (slots[j].hash != HMAP_EMPTY)
			j = (j + 1) & (cap - 1);
		slots[j] = *s;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	m->tombs = 0;
	return 0;
}

/* Makes room for one more entry while keeping (live + tombstones) under 3/4 of the table. */
static int reserve_one(struct gs_hmap *m)
{
	size_t cap;

	if ((m->len + m->tombs + 1) * 4 <= m->cap * 3)
		return 0;
	cap = m->cap ? m->cap : HMAP_MIN_CAP;
	while ((m->len + 1) * 2 > cap) /* after the rehash, at most half full */
		cap *= 2;
	return rehash(m, cap);
}

int gs_hmap_put(struct gs_hmap *m, const char *key, size_t klen, void *val, void **old)
{
	uint64_t h;
	size_t i, mask, tomb = SIZE_MAX;
	int rc;

	if (!val)
		return -EINVAL;
	h = slot_hash(m, key, klen);
	i = find(m, key, klen, h);
	if (i != SIZE_MAX) {
		if (old)
			*old = m->slots[i].val;
		m->slots[i].val = val;
		if (!(m->flags & GS_HMAP_COPY_KEYS))
			m->slots[i].key = key;
		return 1;
	}
	if ((rc = reserve_one(m)) < 0)
		return rc;

	char *copy = NULL;
	if (m->flags & GS_HMAP_COPY_KEYS) {
		copy = malloc(klen + 1);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, key, klen);
		copy[klen] = '\0';
		key = copy;
	}

	mask = m->cap - 1;
	for (i = h & mask; m->slots[i].hash != HMAP_EMPTY; i = (i + 1) & mask) {
		if (m->slots[i].hash == HMAP_TOMB && tomb == SIZE_MAX)
			tomb = i;
	}
	if (tomb != SIZE_MAX) {
		i = tomb;
		m->tombs--;
	}
	m->slots[i] = (struct gs_hmap_slot){.hash = h, .key = key, .klen = klen, .val = val};
	m->len++;
	return 0;
}

void *gs_hmap_get(const struct gs_hmap *m, const char *key, size_t klen)
{
	size_t i = find(m, key, klen, slot_hash(m, key, klen));
	return i == SIZE_MAX ? NULL : m->slots[i].val;
}

int gs_hmap_del(struct gs_hmap *m, const char *key, size_t klen, void **old)
{
	size_t i = find(m, key, klen, slot_hash(m, key, klen));
	struct gs_hmap_slot *s;

	if (i == SIZE_MAX)
		return -ENOENT;
	s = &m->slots[i];
	if (old)
		*old = s->val;
	if (m->flags & GS_HMAP_COPY_KEYS)
		free((char *)s->key);
	/* A slot followed by an empty one can be emptied outright: no probe chain runs through it. */
	if (m->slots[(i + 1) & (m->cap - 1)].hash == HMAP_EMPTY) {
		*s = (struct gs_hmap_slot){0};
	} else {
		*s = (struct gs_hmap_slot){.hash = HMAP_TOMB};
		m->tombs++;
	}
	m->len--;
	return 0;
}

int gs_hmap_next(const struct gs_hmap *m, struct gs_hmap_iter *it)
{
	for (; it->pos < m->cap; it->pos++) {
		const struct gs_hmap_slot *s = &m->slots[it->pos];
		if (s->hash >= 2) {
			it->key = s->key;
			it->klen = s->klen;
			it->val = s->val;
			it->pos++;
			return 1;
		}
	}
	return 0;
}
