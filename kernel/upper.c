// SPDX-License-Identifier: GPL-2.0
/*
 * The upper-level scan: which 2 MiB and 1 GiB chunks of a large region were
 * touched in a window, from the accessed bits of the page-table entries
 * above the ptes (Telescope, ATC'24; issue 35).
 *
 * Why.  A region's one sampled page per interval almost never lands on a
 * few MiB accessed somewhere in hundreds of GiB: such a region reads cold
 * and is never cut where the accesses are.  But an x86 page walk sets the
 * accessed bit of every paging-structure entry it uses, the non-leaf pud
 * and pmd entries included (SDM vol. 3, 4.8), and so does QEMU's TCG
 * walker: a non-leaf bit that stayed clear since it was cleared (and the
 * TLB flushed) says that nothing under it was reached, a whole GiB or 2 MiB
 * ruled out with one read.  The kernel relies on this itself: MGLRU's
 * aging walk skips the pte table of a non-leaf pmd that is not young
 * (walk_pmd_range(), CONFIG_ARCH_HAS_NONLEAF_PMD_YOUNG, 6.1 on).  The
 * chunks found touched are handed to daptrace_split_touched() (core.c),
 * which cuts the region there; the regions' samples then measure the
 * pieces.  So the scan only decides where regions are cut, never a count:
 * a chunk read touched that was not (see below) costs a cut the next merge
 * undoes, one read untouched that was touched a cut not yet made.
 *
 * An observation spans one window: the arm, at an aggregation boundary,
 * clears the accessed bits of the populated non-leaf puds and pmds of the
 * target's large regions and has the TLB flushed; the collect, at the next
 * boundary, reads them: a pud still clear rules out its GiB without its
 * pmds being read, a set one has its pmds read.  A pud is not cleared at
 * the collect, so at the next arm its bit says whether anything under it
 * was walked since the last arm: if not, its pmds are left as they are
 * (clear, or handed back: a hand-back under a pud found touched later
 * reads as touched, a cut too many), and a GiB that stays cold costs one
 * read per arm.  Then the cleared bits that
 * reclaim may want are handed back, and the next window rests (vaddr.c):
 * observing every other window keeps the bits handed back visible to
 * reclaim half the time (see "Reclaim").
 *
 * Sleep.  A target armed at a boundary whose next window it did not run in
 * (&daptrace_target.quiet: no check found that its threads ran) is not
 * collected there: its collect, put off to the end of the first window it
 * is found running in, observes a longer span (more reads touched, nothing
 * less; a run the window's checks could not see, in the moment between the
 * arm and the prepare pass's ask, is read then too).  So a stopped or
 * sleeping process costs one arm, not an arm and a collect every other
 * boundary, each with its walk and the arm's TLB flush.  What the arm owes
 * reclaim stays owed while it sleeps (see "Reclaim"), and is handed back
 * if it is removed meanwhile (&daptrace_ops.upper_leave) or monitoring
 * ends.  A quiet target not armed is armed as usual: when it runs again,
 * the first boundary after collects.
 *
 * The TLB.  A translation, or a paging-structure cache entry (PML4, PDPT,
 * PDE caches), still cached after the clear lets the CPU reach the page
 * without walking the entry, and the bit stays clear however hot the chunk
 * is: the same blind spot as for a pte's bit, and the same cure.  The arm's
 * clears are followed by a flush of the target's translations under the
 * tlb_flush policy (tlb.c), which drops the paging-structure caches along
 * with the TLB entries: a CR3 write without the no-flush bit invalidates
 * the TLB and paging-structure cache entries of its PCID, INVPCID
 * all-context and a CR4.PGE toggle those of every PCID (SDM vol. 3,
 * 4.10.4.1), and a CPU catching up with the mm's tlb_gen on its next
 * switch-in writes CR3 without the no-flush bit (tlb.c, cases 2-4).  With
 * tlb_flush=none nothing is armed: an upper-level bit would stay clear under
 * a translation cached before the clear, i.e. under exactly the hot chunks
 * (vaddr.c counts the regions so left uncovered).
 *
 * Reclaim.  Nothing but MGLRU reads a non-leaf bit, and only at the pmd
 * level: its aging walk skips a pte table whose pmd is not young
 * (walk_pmd_range() in mm/vmscan.c: read in Debian's 6.12 source; the
 * same test since MGLRU came in 6.1, bd74fdaea146, and in the newest
 * upstream snapshot, with pmdp_get(); 7.3's source was not read, only
 * its headers; it clears
 * the bit itself, without a TLB flush, in walk_pmd_range_locked(), and
 * only where should_clear_pmd_young(): arch_has_hw_nonleaf_pmd_young()
 * and the LRU_GEN_NONLEAF_YOUNG capability); walk_pud_range() never looks
 * at a pud's bit, nor does anything else.  So:
 *  - a pud's bit is cleared freely;
 *  - a pmd's bit that the arm finds set and clears is reclaim's too: had we
 *    not cleared it, the aging walk would descend into that pte table.  The
 *    arm records such pmds (@owed, address ranges), and after the collect
 *    has read them, daptrace_upper_hand_back() sets the bit again where it
 *    is still clear, under the pmd lock, as prepare hands a pte's reference
 *    back with folio_set_young() (walk.c).  Until then (one window, or as
 *    long as the target sleeps: "Sleep" above), an aging walk may skip
 *    that table: the young ptes under it stay young
 *    (the scan never clears a pte or leaf bit), so eviction's
 *    folio_referenced() and look-around still see them, only the aging
 *    walk's promotion of those folios waits for the next aging or the hand
 *    back.  Owed ranges beyond DAPTRACE_UPPER_MAX_OWED are joined, which
 *    can set bits that were clear: an aging walk then reads one pte table
 *    too many, it never misses one.  Likewise a bit handed back that the
 *    next arm finds still set is owed again: whether the CPU set it in the
 *    window between cannot be told, and an extra pte table for the aging
 *    walk is the safe side (its own clear ends that);
 *  - leaf entries (THP pmds, and 1 GiB pages, which the walk does not
 *    enter) are the regions' samples' bits and reclaim's: only read, never
 *    cleared.  A young THP pmd reads as touched although its bit may be
 *    older than the window: a cut too many, merged back when its samples
 *    read cold.
 *  - MGLRU's own clears of a pmd during the observation erase what it saw:
 *    such a chunk reads untouched (a cut not made), unless touched again
 *    after the regions' next flush.
 * Before 6.1 (5.10) a non-leaf pmd without its accessed bit is "bad"
 * (pmd_bad() compares all of its flags), and the kernel's walkers clear a
 * bad pmd, which would free what it maps: there the arm clears pud bits
 * only (compat.h, daptrace_nonleaf_pmd_young()), and under a touched pud
 * every populated pmd reads as touched (their bits are set when the tables
 * are made and nothing clears them): the cut is at populated 2 MiB chunks
 * of a touched GiB.
 *
 * Locking (the walk rules of walk.c apply): the caller pins the mm, holds
 * mmap_read_lock and walks inside a VMA found under it (not hugetlb, which
 * may share pmd tables, nor PFN/IO mappings: daptrace_upper_observable()),
 * so no pud or pmd table it reaches can be freed (free_pgtables() runs only
 * for detached VMAs); pte tables may be (retract_page_tables(), 6.5 on; empty
 * ones after zap with CONFIG_PT_RECLAIM, 7.3), but the walk never enters
 * one: it reads and changes pmd entries only.  A pud entry is read
 * locklessly and cleared under pud_lockptr() (the mm's page_table_lock,
 * which pud_populate() takes), re-checked there; a pmd table's entries are
 * cleared, and handed back, under its pmd lock (pmd_lock(), which
 * __pte_alloc(), retract_page_tables(), the THP collapse and split, and
 * 7.3's empty-table reclaim hold to change a pmd), re-checked to be a
 * present non-leaf entry under it, so a bit is never cleared on a THP
 * collapsed meanwhile nor set on an entry that went.  The clear is atomic
 * (the CPU sets accessed bits concurrently).  Collect reads pmds
 * locklessly: a racing change only moves the read to one side of it.
 *
 * Cost: every entry read counts against the walk's budget (@budget; the
 * caller gives one budget per boundary for all targets): the pgd/p4d/pud
 * entries over the range (a hole of 1 GiB or 512 GiB costs one read), and
 * the pmds of the puds walked since the last arm (arm) or since the arm
 * (collect).  So
 * the cost follows what is mapped, not the span; what the budget does not
 * cover is reported (@uncovered), never read as untouched.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hugetlb_inline.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/spinlock.h>

#include "upper.h"

/* The accessed bit handed back, atomically: the CPU sets bits concurrently. */
static inline void daptrace_upper_pmdp_set_young(pmd_t *pmdp)
{
	set_bit(_PAGE_BIT_ACCESSED, (unsigned long *)pmdp);
}

/* One entry from the budget; false (and the walk uncovered) if none is left. */
static bool daptrace_upper_take(struct daptrace_upper_walk *w)
{
	if (!w->budget) {
		w->uncovered = true;
		return false;
	}
	w->budget--;
	w->entries++;
	return true;
}

/**
 * daptrace_upper_observable() - may the scan walk @vma?
 * @vma:	A VMA found under mmap_read_lock.
 *
 * Not hugetlb (its pmd tables may be shared with other processes, and
 * unsharing them takes locks a module cannot: see walk.c), nor PFN or I/O
 * mappings.
 */
bool daptrace_upper_observable(struct vm_area_struct *vma)
{
	return !is_vm_hugetlb_page(vma) && !(vma->vm_flags & (VM_PFNMAP | VM_IO));
}

/*
 * The pud entry covering @addr, or NULL if the pgd or p4d entry above it is
 * empty (or bad); *@next is where the walk goes on: past the pud's GiB, or
 * past the empty upper entry's span.
 */
static pud_t *daptrace_upper_pud(struct mm_struct *mm, unsigned long addr,
				 unsigned long end, unsigned long *next)
{
	pgd_t *pgd = pgd_offset(mm, addr), pgdval;
	p4d_t *p4d, p4dval;

	pgdval = READ_ONCE(*pgd);
	if (pgd_none(pgdval) || pgd_bad(pgdval)) {
		*next = pgd_addr_end(addr, end);
		return NULL;
	}
	/* Folds onto the pgd unless 5-level paging is on. */
	p4d = p4d_offset(pgd, addr);
	p4dval = READ_ONCE(*p4d);
	if (p4d_none(p4dval) || p4d_bad(p4dval)) {
		*next = p4d_addr_end(addr, end);
		return NULL;
	}
	*next = pud_addr_end(addr, end);
	return pud_offset(p4d, addr);
}

/* A pud entry that maps a pmd table: present, no leaf, not bad. */
static bool daptrace_upper_pud_table(pud_t pudval)
{
	return pud_present(pudval) && !pud_leaf(pudval) && !pud_bad(pudval);
}

/* A pmd entry that maps a pte table (pmd_bad() ignores the accessed bit from 6.1). */
static bool daptrace_upper_pmd_table(pmd_t pmdval)
{
	return pmd_present(pmdval) && !pmd_leaf(pmdval) && !pmd_bad(pmdval);
}

/*
 * Add [@start, @end) to the address-ordered ranges @r (*@nr of @max used):
 * joined to the last one if it reaches @start, or if there is no room (a
 * touched run that says more, a hand-back that sets more: see "Reclaim").
 */
static void daptrace_upper_add(struct daptrace_addr_range *r, unsigned int *nr,
			       unsigned int max, unsigned long start,
			       unsigned long end)
{
	struct daptrace_addr_range *last = *nr ? &r[*nr - 1] : NULL;

	if (last && (last->end >= start || *nr == max)) {
		last->end = max(last->end, end);
		return;
	}
	r[*nr].start = start;
	r[*nr].end = end;
	(*nr)++;
}

/* Clear a pud's bit under the mm's page_table_lock; true if it was set. */
static bool daptrace_upper_clear_pud(struct mm_struct *mm, pud_t *pud)
{
	spinlock_t *ptl = pud_lockptr(mm, pud);	/* guards *pud */
	bool cleared = false;

	spin_lock(ptl);
	if (daptrace_upper_pud_table(READ_ONCE(*pud)))
		cleared = daptrace_pudp_test_and_clear_young(pud);
	spin_unlock(ptl);
	return cleared;
}

/* Arm the pmds of one pmd table over [@addr, @end), under its lock. */
static void daptrace_upper_arm_pmds(struct mm_struct *mm, pud_t pudval,
				    unsigned long addr, unsigned long end,
				    struct daptrace_upper_walk *w)
{
	/* From the snapshot: the table stays while our VMA does (above). */
	pmd_t *pmd = pmd_offset(&pudval, addr);
	spinlock_t *ptl;	/* the pmd table's lock, guards its entries */
	unsigned long next;

	ptl = pmd_lock(mm, pmd);
	for (; addr != end; pmd++, addr = next) {
		next = pmd_addr_end(addr, end);
		if (!daptrace_upper_take(w))
			break;
		if (!daptrace_upper_pmd_table(READ_ONCE(*pmd)))
			continue;	/* none, a leaf (the samples' bit) or not present */
		if (daptrace_pmdp_test_and_clear_young(pmd)) {
			w->nr_cleared++;
			daptrace_upper_add(w->owed, &w->nr_owed,
					   DAPTRACE_UPPER_MAX_OWED, addr, next);
		}
	}
	spin_unlock(ptl);
}

/* Collect the pmds of one pmd table over [@addr, @end), locklessly. */
static void daptrace_upper_collect_pmds(pud_t pudval, unsigned long addr,
					unsigned long end,
					struct daptrace_upper_walk *w)
{
	pmd_t *pmd = pmd_offset(&pudval, addr), pmdval;
	unsigned long next;

	for (; addr != end; pmd++, addr = next) {
		next = pmd_addr_end(addr, end);
		if (!daptrace_upper_take(w))
			break;
		pmdval = READ_ONCE(*pmd);
		if (!pmd_present(pmdval) || !pmd_young(pmdval))
			continue;
		/* a leaf's bit: maybe older than the window (see "Reclaim") */
		if (pmd_leaf(pmdval) || !pmd_bad(pmdval))
			daptrace_upper_add(w->runs, &w->nr_runs,
					   DAPTRACE_MAX_TOUCHED_RUNS, addr, next);
	}
}

/*
 * Arm (@arm) or collect [@addr, @end), which one observable VMA contains:
 * the walk over pgd/p4d/pud entries shared by both.
 */
static void daptrace_upper_range(struct mm_struct *mm, unsigned long addr,
				 unsigned long end, bool arm,
				 struct daptrace_upper_walk *w)
{
	unsigned long next;
	pud_t *pud, pudval;

	for (; addr < end; addr = next) {
		if (!daptrace_upper_take(w))
			return;
		pud = daptrace_upper_pud(mm, addr, end, &next);
		if (!pud)
			continue;
		pudval = READ_ONCE(*pud);
		if (pud_none(pudval))
			continue;
		if (!daptrace_upper_pud_table(pudval)) {
			/* a 1 GiB leaf outside hugetlb (DAX): not ours to read */
			w->uncovered = true;
			continue;
		}
		if (arm) {
			/*
			 * Not young: nothing under it was walked since the
			 * last arm cleared it, so its pmds are as that arm
			 * (and the hand-back) left them.
			 */
			if (!pud_young(pudval))
				continue;
			if (daptrace_upper_clear_pud(mm, pud))
				w->nr_cleared++;
			if (daptrace_nonleaf_pmd_young())
				daptrace_upper_arm_pmds(mm, pudval, addr, next, w);
		} else if (pud_young(pudval)) {
			/* Not young: nothing under it was walked, its GiB ruled out. */
			daptrace_upper_collect_pmds(pudval, addr, next, w);
		}
	}
}

/**
 * daptrace_upper_arm() - start an observation of [@start, @end).
 * @mm:		The address space, pinned, mmap_read_lock held.
 * @start:	First byte, in an observable VMA found under that lock.
 * @end:	One past the last, in the same VMA.
 * @w:		The walk: budget, and what it cleared and owes.
 *
 * Clears the accessed bits of the non-leaf puds and pmds over the range
 * (pmds only where the kernel lets non-leaf pmd bits be clear); the caller
 * flushes the TLB if @w->nr_cleared.
 */
void daptrace_upper_arm(struct mm_struct *mm, unsigned long start,
			unsigned long end, struct daptrace_upper_walk *w)
{
	daptrace_upper_range(mm, start, end, true, w);
}

/**
 * daptrace_upper_collect() - end an observation of [@start, @end).
 * @mm:		The address space, pinned, mmap_read_lock held.
 * @start:	First byte, in an observable VMA found under that lock.
 * @end:	One past the last, in the same VMA.
 * @w:		The walk: budget, and the touched runs it adds to.
 *
 * Clears nothing.
 */
void daptrace_upper_collect(struct mm_struct *mm, unsigned long start,
			    unsigned long end, struct daptrace_upper_walk *w)
{
	daptrace_upper_range(mm, start, end, false, w);
}

/*
 * Hand back the bit of the pmd at @addr (in an observable VMA) if it still
 * maps a pte table and its bit is clear.
 */
static void daptrace_upper_hand_back_pmd(struct mm_struct *mm,
					 unsigned long addr,
					 struct daptrace_upper_walk *w)
{
	unsigned long next;
	spinlock_t *ptl;	/* the pmd table's lock, guards *pmd */
	pud_t *pud, pudval;
	pmd_t *pmd;

	w->entries++;
	pud = daptrace_upper_pud(mm, addr, addr + 1, &next);
	if (!pud)
		return;
	pudval = READ_ONCE(*pud);
	if (!daptrace_upper_pud_table(pudval))
		return;
	pmd = pmd_offset(&pudval, addr);
	ptl = pmd_lock(mm, pmd);
	if (daptrace_upper_pmd_table(READ_ONCE(*pmd)) && !pmd_young(READ_ONCE(*pmd)))
		daptrace_upper_pmdp_set_young(pmd);
	spin_unlock(ptl);
}

/**
 * daptrace_upper_hand_back() - give reclaim back the pmd bits an arm took.
 * @mm:		The address space, pinned, mmap_read_lock held.
 * @owed:	What the arm recorded (&daptrace_upper_walk.owed).
 * @nr:		Entries of @owed.
 * @w:		Counts the entries read (no budget: what is owed is bounded
 *		by what the arm's budget let it clear, and joined ranges by
 *		the VMAs in them).
 *
 * Only inside observable VMAs found now: where the map changed meanwhile,
 * the tables the bits were in went with it, or belong to a new mapping.
 */
void daptrace_upper_hand_back(struct mm_struct *mm,
			      const struct daptrace_addr_range *owed,
			      unsigned int nr, struct daptrace_upper_walk *w)
{
	struct vm_area_struct *vma;
	unsigned long addr, next;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		for (addr = owed[i].start; addr < owed[i].end; addr = next) {
			next = pmd_addr_end(addr, owed[i].end);
			vma = find_vma(mm, addr);
			if (!vma || vma->vm_start >= owed[i].end)
				break;
			if (vma->vm_start >= next) {
				/* no VMA in this pmd's span: on to the next one's */
				next = vma->vm_start;
				continue;
			}
			if (daptrace_upper_observable(vma))
				daptrace_upper_hand_back_pmd(mm, max(addr, vma->vm_start), w);
		}
	}
}
