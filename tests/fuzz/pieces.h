/*
 * pieces.h: how the fuzzers that feed a stream cut it into reads, one way for all of them
 * (fuzz_http_client.c, fuzz_http_server.c, fuzz_json_items.c). The sizes come from a hash of the input,
 * so a crash replays with the same cuts.
 */
#ifndef GS_FUZZ_PIECES_H
#define GS_FUZZ_PIECES_H

#include <stddef.h>
#include <stdint.h>

/* The seed of the sizes: FNV-1a of the whole input, never 0 (xorshift's fixed point). */
static inline uint32_t pieces_seed(const uint8_t *data, size_t size)
{
	uint32_t seed = 2166136261u;
	for (size_t i = 0; i < size; i++)
		seed = (seed ^ data[i]) * 16777619u;
	return seed ? seed : 1;
}

/* The next number of xorshift32; *seed is not 0. */
static inline uint32_t pieces_rand(uint32_t *seed)
{
	*seed ^= *seed << 13;
	*seed ^= *seed >> 17;
	*seed ^= *seed << 5;
	return *seed;
}

/* The size of the next read with `left` bytes to go: 1 to 8 bytes when cut in pieces, else all that
 * is left up to `max` (a socket read's size). */
static inline size_t pieces_next(uint32_t *seed, int pieces, size_t left, size_t max)
{
	if (pieces) {
		uint32_t k = 1 + pieces_rand(seed) % 8;
		return left > k ? k : left;
	}
	return left > max ? max : left;
}

/* A stream handed over in reads: data[off..len) is still to go. */
struct pieces {
	const char *data;
	size_t len, off;
	uint32_t seed; /* pieces_seed()'s */
	int cut;       /* in pieces of 1 to 8 bytes, else in reads as large as they may be */
};

/* The stream text[0..len) of the fuzzer's input data[0..size). */
static inline void pieces_start(struct pieces *p, const char *text, size_t len, int cut, const uint8_t *data,
				size_t size)
{
	p->data = text;
	p->len = len;
	p->off = 0;
	p->cut = cut;
	p->seed = pieces_seed(data, size);
}

/* The next read (of up to max bytes), at *at; its length, 0 once all is handed over. */
static inline size_t pieces_take(struct pieces *p, const char **at, size_t max)
{
	size_t n = pieces_next(&p->seed, p->cut, p->len - p->off, max);
	*at = p->data + p->off;
	p->off += n;
	return n;
}

#endif
