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
	uint64_t ceiling; /* current ceiling, doubles per failure */
	uint64_t rng;     /* xorshift64 state; never 0 */
	unsigned failures;
};

void gs_backoff_init(struct gs_backoff *b, uint64_t min_ms, uint64_t max_ms, uint64_t seed);
/* The next delay: uniformly in [ceiling/2, ceiling], then the ceiling doubles up to max_ms. */
uint64_t gs_backoff_next(struct gs_backoff *b);
void gs_backoff_reset(struct gs_backoff *b);
/* A random number in [lo, hi] from the same generator (e.g. randomised watch timeouts). */
uint64_t gs_backoff_rand(struct gs_backoff *b, uint64_t lo, uint64_t hi);

#endif
