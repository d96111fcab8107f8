/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What report wss and report footprints share: each live target's
 * footprint in force at a window (its #footprint row of the window, or in
 * a footprints=latest record its last one until it leaves), and a
 * percentile of sorted values.
 */
#ifndef DAPTRACE_REPORT_FP_H
#define DAPTRACE_REPORT_FP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/recfile.h"

/* A target's last footprint, carried until its next one or its exit. */
struct fp_last {
	pid_t pid;
	uint64_t rss, vsz;
};

/* The footprints in force, by pid. */
struct fp_now {
	struct fp_last *fp;
	size_t nr, cap;
};

/* Bring @now to window @s; 0, or an error's exit code (printed). */
int fp_now_update(struct fp_now *now, const struct rec_snapshot *s,
		  const struct rec_info *info);
void fp_now_free(struct fp_now *now);

/*
 * Percentile @p of @n sorted values: the nearest rank, or with @damo
 * damo's floor index (sorted[int(p / 100.0 * n)], its _damo_dist.py).
 */
uint64_t report_percentile(int damo, const uint64_t *sorted, size_t n, unsigned int p);

#endif
