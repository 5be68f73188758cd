#include "core/backoff.h"

#include <limits.h>

#include "core/rand.h"

uint64_t gs_backoff_delay(uint64_t min_ms, uint64_t max_ms, unsigned failures, uint64_t *rng)
{
	uint64_t ceiling = min_ms;
	for (unsigned i = 1; i < failures && ceiling < max_ms; i++)
		ceiling *= 2;
	if (ceiling > max_ms)
		ceiling = max_ms;
	return gs_rand_range(rng, ceiling / 2, ceiling);
}

void gs_backoff_init(struct gs_backoff *b, uint64_t min_ms, uint64_t max_ms, uint64_t seed)
{
	b->min_ms = min_ms ? min_ms : 1;
	b->max_ms = max_ms < b->min_ms ? b->min_ms : max_ms;
	b->rng = seed;
	b->failures = 0;
}

uint64_t gs_backoff_rand(struct gs_backoff *b, uint64_t lo, uint64_t hi)
{
	return gs_rand_range(&b->rng, lo, hi);
}

uint64_t gs_backoff_next(struct gs_backoff *b)
{
	if (b->failures < UINT_MAX)
		b->failures++;
	return gs_backoff_delay(b->min_ms, b->max_ms, b->failures, &b->rng);
}

void gs_backoff_reset(struct gs_backoff *b)
{
	b->failures = 0;
}
