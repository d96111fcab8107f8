/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The upper-level scan (upper.c): which 2 MiB and 1 GiB chunks of a large
 * region were touched, from the accessed bits of the non-leaf pud and pmd
 * entries that map them.
 */
#ifndef _DAPTRACE_UPPER_H
#define _DAPTRACE_UPPER_H

#include <linux/types.h>

#include "core.h"

struct mm_struct;
struct vm_area_struct;

/*
 * Pmd ranges whose accessed bit an arm cleared while it was set, kept per
 * target to be handed back (upper.c, "Reclaim"); more are joined to the
 * last one.
 */
#define DAPTRACE_UPPER_MAX_OWED		32

/**
 * struct daptrace_upper_walk - one arm or collect walk and what it found.
 * @budget:	Entries it may still read (see upper.c, "Cost").
 * @entries:	Entries read.
 * @nr_cleared:	Accessed bits cleared: the TLB needs a flush before they
 *		mean anything.
 * @uncovered:	Part of the range was not covered: the budget ran out, or
 *		the entries there are not ours to clear or read (see upper.c).
 * @runs:	Collect: the touched chunks, address order, runs of adjacent
 *		chunks joined; room for DAPTRACE_MAX_TOUCHED_RUNS, more are
 *		joined to the last one.
 * @nr_runs:	Entries of @runs.
 * @owed:	Arm: the pmd ranges whose set bit it cleared (in-VMA
 *		addresses), room for DAPTRACE_UPPER_MAX_OWED.
 * @nr_owed:	Entries of @owed.
 */
struct daptrace_upper_walk {
	unsigned long budget;
	unsigned long entries;
	unsigned int nr_cleared;
	bool uncovered;
	struct daptrace_addr_range *runs;
	unsigned int nr_runs;
	struct daptrace_addr_range *owed;
	unsigned int nr_owed;
};

/*
 * All: caller pins @mm, holds mmap_read_lock, and found @vma under it; the
 * walk stays in [@start, @end), which @vma contains.
 */
bool daptrace_upper_observable(struct vm_area_struct *vma);
void daptrace_upper_arm(struct mm_struct *mm, unsigned long start,
			unsigned long end, struct daptrace_upper_walk *w);
void daptrace_upper_collect(struct mm_struct *mm, unsigned long start,
			    unsigned long end, struct daptrace_upper_walk *w);
/* Caller pins @mm and holds mmap_read_lock; looks the VMAs up itself. */
void daptrace_upper_hand_back(struct mm_struct *mm,
			      const struct daptrace_addr_range *owed,
			      unsigned int nr, struct daptrace_upper_walk *w);

#endif /* _DAPTRACE_UPPER_H */
