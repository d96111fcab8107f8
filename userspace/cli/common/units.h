/* SPDX-License-Identifier: GPL-2.0-only */
/* Parsing and printing numbers with units, for flags and reports. */
#ifndef DAPTRACE_UNITS_H
#define DAPTRACE_UNITS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Strict decimal: digits only, no sign, no spaces; -EINVAL / -ERANGE. */
int parse_u64_dec(const char *s, uint64_t *v);
/*
 * An address: hex after "0x"/"0X", else decimal (a leading 0 is not octal,
 * as strtoull's base 0 would have it); -EINVAL / -ERANGE.
 */
int parse_u64_addr(const char *s, uint64_t *v);
/*
 * Duration to µs: "<number><us|ms|s|m>", number may have a fraction
 * ("1.5ms").  The unit is required: a bare "30" is -EINVAL, never silently
 * µs or s (daptrace-workload reads durations the same way).  The result
 * must be a whole number of µs.  -EINVAL junk/negative/no unit/fraction of
 * a µs, -ERANGE above DURATION_MAX_US.
 */
int parse_duration_us(const char *s, uint64_t *us);
/*
 * The longest duration, 10^9 s (31 years): in ns it stays far below
 * INT64_MAX, so callers may compute "now - 2 * dur * 1000" in int64_t.
 */
#define DURATION_MAX_US	1000000000000000ULL
#define DURATION_MAX_STR "1000000000s"
/* "MIN-MAX" region counts. */
int parse_range(const char *s, uint64_t *min, uint64_t *max);
/* "pid[,pid...]" into @pids (max @max); returns count or -errno. */
int parse_pid_list(const char *s, pid_t *pids, int max);
/* Human formats into @buf: "1.5 MiB", "250 ms". */
const char *fmt_bytes(uint64_t bytes, char *buf, size_t len);
const char *fmt_us(uint64_t us, char *buf, size_t len);
/* A span of time: "0 s", "0.25 s", "12.5 s", "1234 s". */
const char *fmt_secs(uint64_t ns, char *buf, size_t len);

#endif
