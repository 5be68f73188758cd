/*
 * num.h: integer arithmetic that must not overflow (signed overflow is undefined in C).
 *
 * gs_num_sat_add(a, b): a + b, saturated at INT64_MAX and INT64_MIN, for sums of quantities a peer
 * or a manifest sizes (requests summed over containers, a node's use). Any a and b, either sign.
 */
#ifndef GS_CORE_NUM_H
#define GS_CORE_NUM_H

#include <stdint.h>

static inline int64_t gs_num_sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

#endif
