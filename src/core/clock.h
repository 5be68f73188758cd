/*
 * clock.h: the wall clock, for what is compared with the apiserver's timestamps (a pod's creation, an
 * event's time). Intervals and timeouts use the loop's monotonic clock (uv_now), never this one.
 *
 * gs_clock_wall_s(): seconds since the epoch, to the microsecond. gs_clock_wall_ms(): milliseconds.
 */
#ifndef GS_CORE_CLOCK_H
#define GS_CORE_CLOCK_H

#include <stdint.h>
#include <sys/time.h>

static inline double gs_clock_wall_s(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static inline int64_t gs_clock_wall_ms(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

#endif
