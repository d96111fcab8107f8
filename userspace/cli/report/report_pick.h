/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One snapshot of a record, for report hot and report access: the last one,
 * or the one nearest --at, never an empty window when one with regions is
 * there; its regions (of --pid) copied with their frequency and age.
 */
#ifndef DAPTRACE_REPORT_PICK_H
#define DAPTRACE_REPORT_PICK_H

#include <stdint.h>

#include "report.h"
#include "report_mapped.h"

struct picked_region {
	struct rec_region r;		/* label owned */
	char *group;			/* --by: its group then (owned), else NULL */
	double freq;			/* % of the window's samples, < 0: not observable */
	uint64_t age_ns;		/* how long at this level */
	uint64_t window_ns;		/* the length of its window */
	/* with pick.maps: its memory and whether by its map (mapped_memory()) */
	uint64_t mem;
	int mem_known;
};

struct pick {
	const struct report_opts *o;
	const struct mapped_now *maps;	/* NULL, or the maps in force as offered */
	struct picked_region *regions;
	uint32_t nr;
	uint64_t seq, end_ns;
	double best_dist;
	int have;
	/* --at: the span of the snapshots read, and their longest window */
	uint64_t first_ns, last_ns, window_ns;
	int seen;
};

/*
 * Offer snapshot @s (read in order); keeps it if it is the better one,
 * with each region's --by group as @info names its target.
 */
int pick_offer(struct pick *p, const struct rec_snapshot *s, const struct rec_info *info);
/*
 * After the read: 0 if a snapshot with regions was picked, else an error
 * saying why (nothing read, --at far from the record, no regions).
 */
int pick_done(struct pick *p);
void pick_free(struct pick *p);

#endif
