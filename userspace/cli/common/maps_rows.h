/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A window's #maps rows (recfile.h): the maps reads of its targets that
 * the record does not have yet, each as the ranges its mappings covered
 * (mapped.h).  A read goes in once, and not at all when its ranges are
 * those of the target's last rows: most reads find the mappings of the
 * last one.  The recorder and policy --record write them, each from the
 * maps it labels the regions with.
 */
#ifndef DAPTRACE_MAPS_ROWS_H
#define DAPTRACE_MAPS_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "maps.h"
#include "recfile.h"

/* The #maps rows of a window: map reads and their ranges. */
struct maps_rows {
	struct rec_maps *v;
	struct rec_range *r;
	uint32_t n, nr;			/* reads, ranges */
	size_t cap, rcap;
};

/*
 * What a target's last #maps rows were; all zero for a target the record
 * has none of (a new one, another process that got the pid).
 * @reads:	the maps' nr_reads when they were made: a read since is new
 * @hash:	of their ranges, 0 if none: a read that finds the same ones
 *		is not written again
 */
struct maps_written {
	unsigned int reads;
	uint64_t hash;
};

/* Empty @rows for the next window. */
void maps_rows_reset(struct maps_rows *rows);
/*
 * Add @m's last read, made at @time_ns (since the start of the record), to
 * @rows if the record does not have it (@w says what it has).  0, or
 * -ENOMEM (@w stays: the read goes with a later window).
 */
int maps_rows_add(struct maps_rows *rows, const struct maps *m, uint64_t time_ns,
		  struct maps_written *w);
/* @rows as @s's #maps rows (valid until @rows changes). */
void maps_rows_put(const struct maps_rows *rows, struct rec_snapshot *s);
void maps_rows_free(struct maps_rows *rows);

#endif
