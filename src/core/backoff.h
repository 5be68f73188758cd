/*
 * backoff.h: jittered exponential backoff ("full jitter" over a doubling ceiling), for reconnects.
 *
 *   struct gs_backoff b;
 *   gs_backoff_init(&b, 800, 30000, seed);
 *   delay = gs_backoff_next(&b);   // 400..800, then up to 1600, ... capped at 30000
 *   gs_backoff_reset(&b);          // after a success
 */
#ifndef GS_CORE_BACKOFF_H
#define GS_CORE_BACKOFF_H

#include <stdint.h>

struct gs_backoff {
	uint64_t min_ms, max_ms;
	uint64_t rng;      /* core/rand.h's state */
	unsigned failures; /* since the last reset */
};

/*
 * The delay before retry number failures (1-based), without state: uniform in [ceiling/2, ceiling],
 * the ceiling min_ms doubled failures - 1 times, at most max_ms; rng is core/rand.h's state. For a
 * caller that keeps the count itself (the engine's retry heap); the others use struct gs_backoff.
 */
uint64_t gs_backoff_delay(uint64_t min_ms, uint64_t max_ms, unsigned failures, uint64_t *rng);

/* Any seed (core/rand.h); min_ms 0 counts as 1, max_ms below min_ms as min_ms. */
void gs_backoff_init(struct gs_backoff *b, uint64_t min_ms, uint64_t max_ms, uint64_t seed);
/* The next delay: gs_backoff_delay for one failure more. */
uint64_t gs_backoff_next(struct gs_backoff *b);
void gs_backoff_reset(struct gs_backoff *b);
/* A random number in [lo, hi] from the same generator (e.g. randomised watch timeouts). */
uint64_t gs_backoff_rand(struct gs_backoff *b, uint64_t lo, uint64_t hi);

#endif
