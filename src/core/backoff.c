#include "core/backoff.h"

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

void gs_backoff_init(struct gs_backoff *b, uint64_t min_ms, uint64_t max_ms, uint64_t seed)
{
	b->min_ms = min_ms ? min_ms : 1;
	b->max_ms = max_ms < b->min_ms ? b->min_ms : max_ms;
	b->ceiling = b->min_ms;
	b->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
	b->failures = 0;
}

uint64_t gs_backoff_rand(struct gs_backoff *b, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	return lo + xorshift64(&b->rng) % (hi - lo + 1);
}

uint64_t gs_backoff_next(struct gs_backoff *b)
{
	uint64_t d = gs_backoff_rand(b, b->ceiling / 2, b->ceiling);
	b->failures++;
	b->ceiling = b->ceiling * 2 > b->max_ms ? b->max_ms : b->ceiling * 2;
	return d;
}

void gs_backoff_reset(struct gs_backoff *b)
{
	b->ceiling = b->min_ms;
	b->failures = 0;
}
