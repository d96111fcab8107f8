/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the policy engine's host tests share: a scheme parsed (or the test
 * aborts), the regions of a synthetic snapshot, and an engine over pid 42
 * whose actions and memory map are the test's own functions.  What a test
 * checks stays in the test.
 */
#ifndef DAPTRACE_POLICY_FIXTURE_H
#define DAPTRACE_POLICY_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define MiB (1ULL << 20)

/* The regions of the snapshot snap_of() makes; each test fills them. */
static struct daptrace_region regs[8];

#define REGION(s, e, nr, a) \
	((struct daptrace_region){ .start = (s), .end = (e), .nr_accesses = (nr), \
				   .age = (a), .pid = 42 })

/* A snapshot of regs[0..n): 20 samples in a 100 ms window. */
static inline void snap_of(struct daptrace_snapshot *snap, int n)
{
	memset(snap, 0, sizeof(*snap));
	snap->nr_samples = 20;
	snap->aggr_us = 100000;
	snap->nr_regions = (uint32_t)n;
	snap->regions = regs;
}

/* @spec parsed; a spec the test wrote wrong aborts the test binary. */
static inline struct pol_scheme parsed(const char *spec)
{
	struct pol_scheme s;
	char err[POL_ERRMSG_LEN];

	if (pol_scheme_parse(spec, &s, err, sizeof(err)))
		abort();
	return s;
}

typedef uint64_t (*fixture_act_fn)(struct pol_engine *e, const struct pol_scheme *s,
				   struct pol_target *t, uint64_t start, uint64_t len,
				   int *err);

/*
 * An engine of @n schemes on target pid 42: @act stands for the syscalls,
 * @maps for /proc/42/maps, and each range is one call to @act (no chunks).
 */
static inline void engine_fake(struct pol_engine *e, struct pol_scheme *s, int n,
			       fixture_act_fn act, int (*maps)(struct maps *m))
{
	pid_t pid = 42;

	pol_engine_init(e, s, n, &pid, 1);
	e->act = act;
	e->maps_refresh = maps;
	e->act_chunk = UINT64_MAX;
}

/* Frees @e and the @n schemes of it that parsed() made. */
static inline void engine_done(struct pol_engine *e, struct pol_scheme *s, int n)
{
	pol_engine_free(e);
	for (int i = 0; i < n; i++)
		pol_scheme_free(&s[i]);
}

/*
 * What pol_stats_write_csv() (@json 0) or pol_stats_write_json() writes for
 * @e, as a string to free; NULL where the writer failed.
 */
static inline char *stats_text(const struct pol_engine *e, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	if (!f)
		return NULL;
	r = json ? pol_stats_write_json(f, e, 1.5) : pol_stats_write_csv(f, e);
	fclose(f);
	if (r) {
		free(buf);
		return NULL;
	}
	return buf;
}

#endif
