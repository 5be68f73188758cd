/*
 * rand.h: the one pseudo-random generator, splitmix64 (Steele, Lea, Flood 2014): a 64-bit state, any
 * seed (0 too), every output a full 64 bits. For jitter and spreading load, never for secrets (TLS has
 * mbedTLS's CTR-DRBG). Deterministic for a given seed, so tests and golden transcripts replay.
 *
 *   uint64_t st = seed;
 *   uint64_t x = gs_rand_next(&st);
 *   uint64_t d = gs_rand_range(&st, 10, 20);   // in [10, 20] (modulo bias: negligible for spans far below 2^64)
 */
#ifndef GS_CORE_RAND_H
#define GS_CORE_RAND_H

#include <stdint.h>

static inline uint64_t gs_rand_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A number in [lo, hi]; lo when hi <= lo. */
static inline uint64_t gs_rand_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	uint64_t span = hi - lo + 1;
	return span ? lo + gs_rand_next(state) % span : gs_rand_next(state); /* span 0: the full range */
}

#endif
