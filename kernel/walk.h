/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page walk of the vaddr operations (walk.c): check and prepare one
 * sampled page of a process's address space.
 */
#ifndef _DAPTRACE_WALK_H
#define _DAPTRACE_WALK_H

#include <linux/types.h>

struct mm_struct;
struct vm_area_struct;

/**
 * enum daptrace_walk_seen - what a check of a sampled page found.
 * @DAPTRACE_WALK_OLD:		Not accessed since it was prepared (or not
 *				mapped, which cannot have been accessed).
 * @DAPTRACE_WALK_YOUNG:	Accessed since it was prepared.
 * @DAPTRACE_WALK_UNOBSERVED:	Accesses there leave no trace the module can
 *				read (a PFN or I/O mapping, hugetlb page
 *				tables that processes may share), or one it
 *				cannot tell from what a move of the page
 *				leaves (migration; a putback into the
 *				youngest MGLRU generation).
 */
enum daptrace_walk_seen {
	DAPTRACE_WALK_OLD,
	DAPTRACE_WALK_YOUNG,
	DAPTRACE_WALK_UNOBSERVED,
};

/**
 * struct daptrace_walk_page - where a checked page lives.
 * @pfn:	Its page frame, DAPTRACE_NO_PFN if none was present.
 * @nid:	Its NUMA node, -1 if unknown or not asked for.
 * @shift:	log2 of the bytes the entry walked to maps (PAGE_SHIFT,
 *		PMD_SHIFT or PUD_SHIFT): what one accessed bit covers there.
 *		PAGE_SHIFT if the walk found no entry.
 * @aged:	A check found that MGLRU aged the memory of the page's folio
 *		since prepare.  The aging walk clears accessed bits of the
 *		whole address space without a TLB flush, so a pass that saw
 *		it flushes after its prepares as if it had cleared bits
 *		itself (kernel/tlb.c), or accesses through translations
 *		cached before the aging set no bit for our samples.
 */
struct daptrace_walk_page {
	unsigned long pfn;
	int nid;
	unsigned int shift;
	bool aged;
};

/*
 * Both: caller pins @mm, holds mmap_read_lock, and found @vma, which
 * contains @addr, under it.  @state carries what prepare recorded of the
 * page to the check (the LRU state of its folio).
 */
enum daptrace_walk_seen daptrace_walk_check(struct mm_struct *mm,
					    struct vm_area_struct *vma,
					    unsigned long addr,
					    unsigned long state,
					    bool placement,
					    struct daptrace_walk_page *page);
bool daptrace_walk_prepare(struct mm_struct *mm, struct vm_area_struct *vma,
			   unsigned long addr, unsigned long *state,
			   unsigned int *shift);
bool daptrace_walk_observable(struct vm_area_struct *vma, unsigned long addr);

#endif /* _DAPTRACE_WALK_H */
