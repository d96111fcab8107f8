/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Monotonic time for the C selftests: a clock in milliseconds and a sleep
 * that an interrupting signal does not cut short.
 */
#ifndef DT_TIME_H
#define DT_TIME_H

#include <errno.h>
#include <time.h>

static __attribute__((unused)) double dt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static __attribute__((unused)) void dt_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

#endif /* DT_TIME_H */
