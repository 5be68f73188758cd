/*
 * num.h: integer arithmetic that must not overflow (signed overflow is undefined in C).
 *
 * gs_num_sat_add(a, b): a + b, saturated at INT64_MAX and INT64_MIN, for sums of quantities a peer
 * or a manifest sizes (requests summed over containers, a node's use). Any a and b, either sign.
 *
 * gs_num_days_from_civil(y, m, d): the days from 1970-01-01 to the date y-m-d (m 1-12, d 1-31) of the
 * proleptic Gregorian calendar, negative before it (Howard Hinnant's days_from_civil): for timestamps
 * read as text (a certificate's validity, the agent's RFC 3339 times). Reads no clock.
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

static inline int64_t gs_num_days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

#endif
