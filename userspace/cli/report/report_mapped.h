/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The memory of a region: the bytes of it inside its target's mappings.
 * Regions are address ranges the monitor chose, and coarse ones straddle
 * the holes between mappings; the record's #maps rows (recfile.h) say
 * where the mappings were.  A target's map in force at a window is its
 * last read, until the next one; another process that gets the pid (a
 * #target row after the #exit) starts without.  Records made before the
 * rows, and targets whose map was never read, have none: their regions'
 * memory is not known, and the caller says so.
 */
#ifndef DAPTRACE_REPORT_MAPPED_H
#define DAPTRACE_REPORT_MAPPED_H

#include <stddef.h>
#include <stdint.h>

#include "common/recfile.h"

/* A target's map in force: its ranges, ascending and apart. */
struct mapped_target {
	struct rec_range *r;
	uint32_t nr;
	int known;
};

/* The maps in force, by entry of rec_info.targets. */
struct mapped_now {
	struct mapped_target *t;
	size_t cap;
	size_t *held;			/* the entries with a map */
	size_t nr_held, held_cap;
};

/* Bring @now to window @s; 0, or an error's exit code (printed). */
int mapped_now_update(struct mapped_now *now, const struct rec_snapshot *s,
		      const struct rec_info *info);
/*
 * 1 and in *@bytes the bytes of @r inside its target's map in force, or 0
 * and *@bytes untouched if the record has no map of that target.
 */
int mapped_bytes(const struct mapped_now *now, const struct rec_info *info,
		 const struct rec_region *r, uint64_t *bytes);
/*
 * 1 and in *@r, *@nr the map in force of @pid's target, or 0 and both
 * untouched if the record has none.
 */
int mapped_ranges_now(const struct mapped_now *now, const struct rec_info *info, pid_t pid,
		      const struct rec_range **r, uint32_t *nr);
/*
 * The memory of @r: 1 and its bytes inside its target's map in force, or 0
 * where the record has no map of that target and what its label says:
 * none of an "[unmapped]" region, all of any other, holes included (the
 * rule of the reports before there were maps).
 */
int mapped_memory(const struct mapped_now *now, const struct rec_info *info,
		  const struct rec_region *r, uint64_t *bytes);
void mapped_now_free(struct mapped_now *now);

#endif
