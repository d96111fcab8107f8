/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reports by process, command name or cgroup (--by): a region's group is
 * that of its target as the record named it at the region's time (a
 * process that exec'ed counts under its new name from then on), and a
 * table of groups by key that the modes fill with their own numbers.
 */
#ifndef DAPTRACE_REPORT_GROUP_H
#define DAPTRACE_REPORT_GROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recfile.h"

enum report_by { BY_NONE, BY_PID, BY_COMM, BY_CGROUP };

/* "pid", "comm", "cgroup" to the enum; 0 or -EINVAL. */
int report_by_parse(const char *s, enum report_by *by);
const char *report_by_name(enum report_by by);
/*
 * The group of target @pid in @info now: its pid, its comm, or its cgroup
 * ("?" when the record does not say, as records before cgroups did).
 * The result is in @buf or in @info.
 */
const char *report_group_key(enum report_by by, const struct rec_info *info, pid_t pid,
			     char *buf, size_t len);

/* Bytes summed over regions and windows, saturating rather than wrapping. */
static inline uint64_t u64_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A non-negative double as a uint64_t, saturating (a plain cast of 2^64 is UB). */
static inline uint64_t u64_of(double d)
{
	return !(d > 0) ? 0 : d >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)d;
}

#define GROUP_VALUES	10

/* One group: its key, the processes seen in it, the mode's numbers. */
struct rgroup {
	char *key;
	uint64_t nr_procs;
	double v[GROUP_VALUES];
	uint64_t u[GROUP_VALUES];
};

struct rgroups {
	struct rgroup *g;
	size_t n, cap;
	size_t *slots;			/* open addressing: index + 1, 0 free */
	size_t nr_slots;
	size_t *seen;			/* per info->targets index: the group + 1 it counts in */
	size_t nr_seen;
};

/*
 * The group of @pid's target (created empty if new), counting the target
 * in its group's nr_procs the first time it is met; NULL when out of memory.
 */
struct rgroup *rgroups_of(struct rgroups *gs, enum report_by by, const struct rec_info *info,
			  pid_t pid);
/* The group of @key, created empty if new; NULL when out of memory. */
struct rgroup *rgroups_get(struct rgroups *gs, const char *key);
void rgroups_free(struct rgroups *gs);

#endif
