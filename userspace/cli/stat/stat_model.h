/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What daptrace stat reports of one snapshot, for the whole and per
 * cgroup: resident memory, working set, estimated access bandwidth, memory
 * that cannot be observed, and DAMON_STAT's memory_idle_ms_percentiles.
 *
 * Idle time, as mm/damon/stat.c defines it (since 6.18; 6.17 reported 0
 * for accessed memory): a region not accessed in the window has been idle
 * for (age + 1) aggregation intervals; one accessed in it gets the
 * negative of that: it has been hot that long.  Percentile p is the idle
 * time of the region in which the bytes, sorted by idle time, reach p % of
 * the total (DAMON_STAT's walk: p0 is the hottest region's).
 *
 * Bytes are resident bytes: a region's size times the share of the
 * window's samples that found its page present (the module's placement
 * counts).  DAMON_STAT watches physical memory; a virtual address space
 * also holds reserved, never touched ranges, which would otherwise count
 * as idle memory.  From a module without placement counts, virtual bytes.
 * Memory that cannot be observed is never idle nor hot: counted apart.
 */
#ifndef DAPTRACE_STAT_MODEL_H
#define DAPTRACE_STAT_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daptrace.h"

#define STAT_PERCENTILES	101

struct stat_sum {
	char *key;			/* cgroup path, or NULL for the whole */
	uint64_t nr_procs;		/* targets with regions in the snapshot */
	uint64_t resident;		/* observable bytes (see above) */
	uint64_t wss;			/* of them, in regions accessed in the window */
	uint64_t unobserved;		/* bytes that cannot be observed */
	uint64_t bandwidth;		/* bytes x accesses per second */
	int64_t idle_ms[STAT_PERCENTILES];	/* memory_idle_ms_percentiles */
};

struct stat_model {
	struct stat_sum all;
	struct stat_sum *cg;		/* per cgroup, largest resident first */
	size_t nr_cg;
	int resident_weighted;		/* the snapshot had placement counts */
};

/*
 * A target's cgroup for @pid (NULL: unknown), asked once per target per
 * snapshot.
 */
typedef const char *(*stat_cgroup_fn)(void *ctx, pid_t pid);

/*
 * Fill @m from @s.  @depth > 0 folds cgroups to their first @depth
 * levels ("/system.slice/x.service" at depth 1 is "/system.slice");
 * @cgroup_of NULL: no per-cgroup sums.  0 or -ENOMEM.
 */
int stat_model_compute(struct stat_model *m, const struct daptrace_snapshot *s,
		       stat_cgroup_fn cgroup_of, void *ctx, unsigned int depth);
void stat_model_free(struct stat_model *m);
/*
 * Cgroup @path at @depth ("/a/b/c" at depth 2 is "/a/b"; the root stays
 * "/"; 0: as it is), in @buf or @path; "?" for NULL.
 */
const char *stat_cgroup_fold(const char *path, unsigned int depth, char *buf, size_t len);
/*
 * DAMON_STAT's percentile walk over @n (idle time in ms, weight) pairs
 * sorted by idle time: exposed for tests.  Writes STAT_PERCENTILES values.
 */
struct stat_idle {
	int64_t idle_ms;
	uint64_t bytes;
};
void stat_percentiles(const struct stat_idle *v, size_t n, int64_t *out);

#endif
