// SPDX-License-Identifier: GPL-2.0
/*
 * daptrace operations for the virtual address space of processes.
 *
 * Everything here touches a live address space: the targets' memory maps
 * (initial regions and updates) and the page-table accessed bit of one page
 * per region per sampling round.  Only exported symbols and header inlines
 * are used: the kernel's page walker, ptep_test_and_clear_young() and
 * pte_offset_map_lock() are not available to modules (see DESIGN.md, 3), so
 * the walk is written out by hand below, with the locking rules next to the
 * code that relies on them.
 *
 * The accessed bit and the TLB flushes are x86-64 specific: so is the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/mm.h>
/* After mm.h: without CONFIG_HUGETLB_PAGE it does not declare vm_area_struct. */
#include <linux/hugetlb_inline.h>
#include <linux/mmap_lock.h>
#include <linux/mutex.h>
#include <linux/page_idle.h>
#include <linux/pgtable.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <asm/tlbflush.h>

#include "ops.h"

/* Page-table changes under us are retried this often; then one sample is lost. */
#define DAPTRACE_VA_MAX_TRIES		4
/* Regions between looks at a waiting mmap_lock writer or a pending resched. */
#define DAPTRACE_VA_BATCH		64
/* Spare slots for mappings created between sizing the buffer and locking. */
#define DAPTRACE_VA_MAPS_SLACK		32U
#define DAPTRACE_VA_MAPS_TRIES		3

/*
 * Targets: &daptrace_target.priv is the struct pid reference of the process,
 * resolved once in the writer's pid namespace.
 */

/*
 * Pin the address space of the process @pid names.  Any of its threads will
 * do since they share one mm, and looking beyond the first one matters: a
 * thread-group leader that called pthread_exit() is a zombie without an mm
 * while the rest of its process keeps running.  Once no thread has an mm
 * (all exited, the leader a zombie), the process counts as exited.
 *
 * pid_task() under RCU instead of get_pid_task(): the task is needed only
 * inside this function, so the task reference (an atomic pair) is saved.
 * get_task_mm() takes the thread's alloc_lock, a spinlock: fine under RCU.
 */
static struct mm_struct *daptrace_va_get_mm(struct pid *pid)
{
	struct task_struct *task, *th;
	struct mm_struct *mm = NULL;

	rcu_read_lock();
	task = pid_task(pid, PIDTYPE_PID);
	if (task) {
		for_each_thread(task, th) {
			mm = get_task_mm(th);
			if (mm)
				break;
		}
	}
	rcu_read_unlock();
	return mm;
}

static void *daptrace_va_target_get(int pid_nr)
{
	struct task_struct *task;
	struct mm_struct *mm;
	struct pid *pid;
	bool kthread;

	if (pid_nr <= 0)
		return ERR_PTR(-ESRCH);
	/* Resolved in the pid namespace of the writing task. */
	pid = find_get_pid(pid_nr);
	if (!pid)
		return ERR_PTR(-ESRCH);
	task = get_pid_task(pid, PIDTYPE_PID);
	if (!task) {
		put_pid(pid);
		return ERR_PTR(-ESRCH);
	}
	kthread = task->flags & PF_KTHREAD;
	put_task_struct(task);
	if (kthread)
		goto err_inval;
	mm = daptrace_va_get_mm(pid);
	if (!mm)
		goto err_inval;
	mmput(mm);
	return pid;

err_inval:
	put_pid(pid);
	return ERR_PTR(-EINVAL);
}

static void daptrace_va_target_put(void *priv)
{
	put_pid(priv);
}

static bool daptrace_va_target_valid(struct daptrace_target *t)
{
	struct mm_struct *mm = daptrace_va_get_mm(t->priv);

	if (!mm)
		return false;
	/* May be the last reference and tear the mm down: we may sleep. */
	mmput(mm);
	return true;
}

/*
 * Memory maps: the "three regions".
 */

/*
 * Copy the mappings of @mm into @maps as sorted ranges, merging mappings
 * that touch (a binary's text, data and bss, the heap right after them,
 * neighbouring anonymous mappings) since only the gaps between them matter:
 * the result has a non-empty gap between any two entries.  Every VMA counts,
 * also those the sampler skips (hugetlb, PFNMAP/IO): they belong to the
 * layout, and their samples simply read as not accessed.  Caller holds
 * mmap_read_lock(); @cap is at least mm->map_count.
 */
static unsigned int daptrace_va_collect(struct mm_struct *mm,
					struct daptrace_addr_range *maps,
					unsigned int cap)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vma;
	unsigned int nr = 0;

	for_each_vma(vmi, vma) {
		if (nr && maps[nr - 1].end == vma->vm_start) {
			maps[nr - 1].end = vma->vm_end;
			continue;
		}
		if (WARN_ON_ONCE(nr == cap))
			break;
		maps[nr].start = vma->vm_start;
		maps[nr].end = vma->vm_end;
		nr++;
	}
	return nr;
}

/*
 * Compute the ranges to monitor in @mm, the way DAMON does: a process's
 * mappings form three clusters (text/data/heap, the mmap area, the stack)
 * separated by two huge unmapped gaps, which daptrace_three_regions() cuts
 * out.  A target with fewer than three clusters (fewer than two gaps; rare,
 * as the vDSO alone usually sits apart from both the program and its stack)
 * is monitored as its one or two clusters, which is exactly what is mapped.
 *
 * The buffer is sized from mm->map_count before taking mmap_lock, so no
 * allocation happens under it; map_count only changes under the write lock,
 * so a count that grew in between is noticed and the sizing redone.
 *
 * Return: the number of ranges in @out (0 if nothing is mapped), or -ENOMEM,
 * or -EAGAIN if the map kept growing faster than we could size the buffer.
 */
static int daptrace_va_ranges(struct mm_struct *mm,
			      struct daptrace_addr_range out[3])
{
	struct daptrace_addr_range *maps;
	unsigned int cap, nr, i;
	int tries, err = 0;

	for (tries = 0; ; tries++) {
		if (tries == DAPTRACE_VA_MAPS_TRIES)
			return -EAGAIN;
		cap = (unsigned int)READ_ONCE(mm->map_count) + DAPTRACE_VA_MAPS_SLACK;
		maps = kvmalloc_array(cap, sizeof(*maps), GFP_KERNEL);
		if (!maps)
			return -ENOMEM;
		mmap_read_lock(mm);
		if ((unsigned int)mm->map_count <= cap)
			break;
		mmap_read_unlock(mm);
		kvfree(maps);
	}
	nr = daptrace_va_collect(mm, maps, cap);
	mmap_read_unlock(mm);

	if (nr >= 3) {
		/* Sorted, disjoint, gaps non-empty: this cannot fail. */
		err = daptrace_three_regions(maps, nr, out);
		nr = 3;
	} else {
		for (i = 0; i < nr; i++)
			out[i] = maps[i];
	}
	kvfree(maps);
	return WARN_ON_ONCE(err) ? err : nr;
}

/*
 * Build the initial regions of every target still alive.  A target that has
 * exited is skipped: the worker notices it through target_valid().  Errors
 * of one target do not stop the others; the first one is returned.
 */
static int daptrace_va_init(struct daptrace_ctx *ctx)
{
	struct daptrace_addr_range ranges[3];
	struct daptrace_target *t;
	struct mm_struct *mm;
	int nr, err, ret = 0;

	daptrace_for_each_target(t, ctx) {
		if (t->exited)
			continue;
		mm = daptrace_va_get_mm(t->priv);
		if (!mm)
			continue;
		nr = daptrace_va_ranges(mm, ranges);
		mmput(mm);
		if (nr <= 0) {
			/* Nothing mapped: the next update builds the regions. */
			if (nr < 0 && !ret)
				ret = nr;
			continue;
		}
		err = daptrace_init_regions(ctx, t, ranges, nr);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

/*
 * Follow mmap/munmap/mremap/brk: fit every live target's regions to its
 * current three regions.  On error the target keeps its old regions until
 * the next update; sampling an address that is no longer mapped is harmless
 * (it reads as not accessed).
 */
static void daptrace_va_update(struct daptrace_ctx *ctx)
{
	struct daptrace_addr_range ranges[3];
	struct daptrace_target *t;
	struct mm_struct *mm;
	int nr;

	daptrace_for_each_target(t, ctx) {
		if (t->exited)
			continue;
		mm = daptrace_va_get_mm(t->priv);
		if (!mm)
			continue;
		nr = daptrace_va_ranges(mm, ranges);
		mmput(mm);
		if (nr >= 0)
			daptrace_set_regions(ctx, t, ranges, nr);
	}
}

/*
 * The page walk.
 *
 * Rules (DESIGN.md, 3; each was needed under THP split/collapse churn and
 * shmem collapse on both kernels):
 *  - The caller pins the mm (mm_users) and holds mmap_read_lock, and we walk
 *    only inside a VMA it found: then no upper-level table (pgd/p4d/pud/pmd
 *    page) can be freed under us, since free_pgtables() runs only for
 *    detached VMAs or on the last mm_users put.  Entries can still change:
 *    none -> table when faults populate them, never table -> something else.
 *  - A PTE *table*, however, can be freed under the read lock from 6.5 on:
 *    khugepaged's retract_page_tables() detaches it holding only the pmd and
 *    pte locks, and frees it with pte_free_defer(), i.e. after an RCU grace
 *    period (the table's split ptlock goes with it).  Hence the pmd is read
 *    once, locklessly, inside rcu_read_lock(); the table and its lock are
 *    reached from that snapshot; and once the pte lock is held the pmd is
 *    re-read and the walk retried unless pmd_same(): retract takes the same
 *    pte lock before clearing the pmd, so a table still linked while we hold
 *    its lock stays linked until we drop it.  On 6.1 tables are only freed
 *    under the write lock, and the same code is merely cautious there.
 *  - This is what pte_offset_map_lock() does, but it is not usable: 6.12
 *    does not export __pte_offset_map_lock(), and its pte_unmap() is an
 *    rcu_read_unlock() we would have to pair by hand.  pte_offset_kernel() on
 *    the snapshot needs no unmapping (no HIGHPTE on x86-64).
 *  - "Huge" (pmd_trans_huge, pmd_devmap) is tested before pmd_bad(), because
 *    x86's pmd_bad() is true for a leaf pmd; and nothing is ever cleared on a
 *    bad, none or non-present entry: pmd_clear_bad() is not exported on 6.1
 *    and fixing page tables is not our business.  A pud leaf (1 GiB DAX) is
 *    skipped, as are hugetlb and PFNMAP/IO VMAs.
 *  - Bits are tested and cleared under the page-table lock of the entry, the
 *    same lock rmap and THP split take, and cleared with an atomic
 *    test_and_clear_bit() on the entry's value word, because the hardware
 *    sets accessed/dirty bits concurrently: this is exactly what x86's
 *    unexported ptep_test_and_clear_young() / pmdp_test_and_clear_young() do.
 *    The bit is cleared only if it was set.
 */

/*
 * Hand reclaim the reference that clearing the accessed bit takes away from
 * it, as DAMON does: folio_referenced() counts a young folio as referenced.
 * The caller holds the lock of the entry mapping @pfn, so the page cannot be
 * unmapped, split or freed meanwhile, and pte_special() mappings (zero page,
 * raw PFNs) and devmap pages have been filtered out.
 *
 * folio_set_young() is a real flag only with CONFIG_PAGE_IDLE_FLAG, which
 * DAMON and IDLE_PAGE_TRACKING select: Debian's 6.12 has it, Debian's 6.1
 * does not, and there it is an empty stub.  So on 6.1 the reference is
 * hidden from reclaim: at most one sampled page per region per sampling
 * interval looks unreferenced to the LRU (classic or MGLRU) once more than it
 * should.  Clearing a bit that reclaim would have cleared anyway cannot lose
 * data, only make that page a little likelier to be reclaimed.
 */
static void daptrace_va_folio_set_young(unsigned long pfn)
{
	if (IS_ENABLED(CONFIG_PAGE_IDLE_FLAG) && pfn_valid(pfn))
		folio_set_young(page_folio(pfn_to_page(pfn)));
}

/*
 * NUMA node of @pfn, -1 if not a valid RAM page (DAPTRACE_NO_PFN, device
 * memory without a memmap).
 */
static int daptrace_va_pfn_nid(unsigned long pfn)
{
	if (pfn == DAPTRACE_NO_PFN || !pfn_valid(pfn))
		return -1;
	return page_to_nid(pfn_to_page(pfn));
}

/*
 * @pmd looked like a huge pmd (THP, or DAX devmap) in the lockless read.
 * Return: 1 if its accessed bit was set (and is now clear if @mkold), 0 if
 * not, -EAGAIN if it stopped being huge before we got the lock (split or
 * zapped meanwhile: walk again).
 */
static int daptrace_va_pmd_young(struct mm_struct *mm, pmd_t *pmd, bool mkold,
				 unsigned long addr, unsigned long *pfn)
{
	spinlock_t *ptl;	/* the pmd table's lock, guards *pmd */
	pmd_t pmdval;
	int young = 0;

	ptl = pmd_lock(mm, pmd);
	/* Re-check under the lock: split and zap hold it to change the pmd. */
	pmdval = READ_ONCE(*pmd);
	if (!pmd_trans_huge(pmdval) && !pmd_devmap(pmdval)) {
		spin_unlock(ptl);
		return -EAGAIN;
	}
	if (pmd_present(pmdval))
		*pfn = pmd_pfn(pmdval) + ((addr & ~PMD_MASK) >> PAGE_SHIFT);
	if (pmd_present(pmdval) && pmd_young(pmdval)) {
		young = 1;
		if (mkold &&
		    test_and_clear_bit(_PAGE_BIT_ACCESSED, (unsigned long *)pmd) &&
		    !pmd_devmap(pmdval))
			daptrace_va_folio_set_young(pmd_pfn(pmdval));
	}
	spin_unlock(ptl);
	return young;
}

/*
 * @pmdval, read locklessly from @pmd under rcu_read_lock(), points to a PTE
 * table.  Return: 1 if the pte for @addr is present and young (and is now
 * old if @mkold), 0 if not, -EAGAIN if the pmd changed before we held the
 * table's lock (table retracted, or replaced by a THP: walk again).
 */
static int daptrace_va_pte_young(struct mm_struct *mm, pmd_t *pmd,
				 pmd_t pmdval, unsigned long addr, bool mkold,
				 unsigned long *pfn)
{
	spinlock_t *ptl;	/* the pte table's lock, guards *pte */
	pte_t *pte, ptent;
	int young = 0;

	/*
	 * Both from the snapshot: RCU keeps that table and its lock alive even
	 * if it was detached after our read.
	 */
	pte = pte_offset_kernel(&pmdval, addr);
	ptl = pte_lockptr(mm, &pmdval);
	spin_lock(ptl);
	if (unlikely(!pmd_same(pmdval, READ_ONCE(*pmd)))) {
		spin_unlock(ptl);
		return -EAGAIN;
	}
	ptent = ptep_get(pte);
	if (pte_present(ptent))
		*pfn = pte_pfn(ptent);
	if (pte_present(ptent) && pte_young(ptent)) {
		young = 1;
		if (mkold &&
		    test_and_clear_bit(_PAGE_BIT_ACCESSED,
				       (unsigned long *)&pte->pte) &&
		    !pte_special(ptent) && !pte_devmap(ptent))
			daptrace_va_folio_set_young(pte_pfn(ptent));
	}
	spin_unlock(ptl);
	return young;
}

/*
 * Was the page mapping @addr in @vma accessed since its bit was last
 * cleared?  With @mkold, also clear the bit.  *@pfn gets the pfn of a
 * present page, else stays DAPTRACE_NO_PFN.  Caller: mm pinned,
 * mmap_read_lock held, @vma found under it and containing @addr.
 */
static bool daptrace_va_young(struct mm_struct *mm, struct vm_area_struct *vma,
			      unsigned long addr, bool mkold, unsigned long *pfn)
{
	pgd_t *pgd, pgdval;
	p4d_t *p4d, p4dval;
	pud_t *pud, pudval;
	pmd_t *pmd, pmdval;
	int tries, young = 0;

	if ((vma->vm_flags & (VM_PFNMAP | VM_IO)) || is_vm_hugetlb_page(vma))
		return false;

	/*
	 * Upper levels: a table seen here stays linked (see above), so the
	 * p4d/pud/pmd_offset() helpers may re-read the entries they follow.
	 */
	pgd = pgd_offset(mm, addr);
	pgdval = READ_ONCE(*pgd);
	if (pgd_none(pgdval) || pgd_bad(pgdval))
		return false;
	/* Folds onto the pgd unless 5-level paging is on (pgtable_l5_enabled). */
	p4d = p4d_offset(pgd, addr);
	p4dval = READ_ONCE(*p4d);
	if (p4d_none(p4dval) || p4d_bad(p4dval))
		return false;
	pud = pud_offset(p4d, addr);
	pudval = READ_ONCE(*pud);
	/* Leaf first: x86's pud_bad() is true for a 1 GiB leaf too. */
	if (pud_none(pudval) || pud_leaf(pudval) || pud_bad(pudval))
		return false;
	pmd = pmd_offset(pud, addr);

	rcu_read_lock();
	for (tries = 0; tries < DAPTRACE_VA_MAX_TRIES; tries++) {
		/*
		 * One lockless read: x86-64 pmds are a single word, so this
		 * is what pmdp_get_lockless() is on 6.12 (6.1 lacks it).
		 */
		pmdval = READ_ONCE(*pmd);
		if (pmd_none(pmdval))
			young = 0;
		else if (pmd_trans_huge(pmdval) || pmd_devmap(pmdval))
			young = daptrace_va_pmd_young(mm, pmd, mkold, addr,
						      pfn);
		else if (!pmd_present(pmdval) || pmd_bad(pmdval))
			young = 0;	/* migration entry, or garbage: hands off */
		else
			young = daptrace_va_pte_young(mm, pmd, pmdval, addr,
						      mkold, pfn);
		if (young != -EAGAIN)
			break;
	}
	rcu_read_unlock();
	return young > 0;
}

/*
 * One sampling step over the regions of @t: with @prepare pick each region's
 * sampling address and clear the accessed bit there, otherwise test the bit
 * at the address picked last time and account the result.
 *
 * One mm pin and one mmap_read_lock cover the whole target: the regions are
 * sorted, so their sampling addresses ascend and the VMA found for one region
 * usually serves the next ones without a maple tree lookup.  Only when a
 * writer waits for the lock (the target's own mmap/munmap) or the scheduler
 * wants the CPU is the lock dropped for a moment, every DAPTRACE_VA_BATCH
 * regions, so thousands of regions never stall the target.
 *
 * Return: the number of regions found accessed (0 with @prepare).
 */
static unsigned int daptrace_va_sample(struct daptrace_ctx *ctx,
				       struct daptrace_target *t, bool prepare)
{
	struct vm_area_struct *vma = NULL;
	struct daptrace_region *r;
	unsigned int n = 0, nr_young = 0;
	struct mm_struct *mm;
	unsigned long addr;
	bool young;

	mm = daptrace_va_get_mm(t->priv);
	if (!mm)
		return 0;	/* exited: the worker reaps it via target_valid */

	mmap_read_lock(mm);
	daptrace_for_each_region(r, t) {
		if (!(++n % DAPTRACE_VA_BATCH) &&
		    (mmap_lock_is_contended(mm) || need_resched())) {
			mmap_read_unlock(mm);
			cond_resched();
			mmap_read_lock(mm);
			vma = NULL;	/* VMAs may have changed meanwhile */
		}
		if (prepare)
			daptrace_pick_sampling_addr(ctx, r);
		addr = r->sampling_addr;
		if (!vma || addr < vma->vm_start || addr >= vma->vm_end)
			vma = vma_lookup(mm, addr);
		r->sample_pfn = DAPTRACE_NO_PFN;
		young = vma && daptrace_va_young(mm, vma, addr, prepare,
						 &r->sample_pfn);
		if (prepare)
			continue;
		daptrace_account_access(r, young);
		daptrace_account_placement(r, daptrace_va_pfn_nid(r->sample_pfn));
		nr_young += young;
	}
	mmap_read_unlock(mm);
	mmput(mm);
	return nr_young;
}

static void daptrace_va_prepare_access_checks(struct daptrace_ctx *ctx)
{
	struct daptrace_target *t;

	daptrace_for_each_target(t, ctx) {
		if (!t->exited)
			daptrace_va_sample(ctx, t, true);
	}
}

static unsigned int daptrace_va_check_accesses(struct daptrace_ctx *ctx)
{
	struct daptrace_target *t;
	unsigned int nr = 0;

	daptrace_for_each_target(t, ctx) {
		if (!t->exited)
			nr += daptrace_va_sample(ctx, t, false);
	}
	return nr;
}

/*
 * TLB flushes.
 *
 * A translation cached in a TLB keeps its accessed bit "set" in the CPU's
 * view: the CPU does not write the bit again until it walks the page table
 * anew, so a page we just made old reads as never accessed for as long as
 * the entry stays cached (DESIGN.md, 3: the TLB caveat).  After a prepare
 * round we therefore flush, per the policy:
 *
 * DAPTRACE_TLB_ROUND: every online CPU runs __flush_tlb_all().  Simple and
 * certainly sufficient; costs an IPI to every CPU every sampling interval.
 * (In both policies the IPIs are asynchronous: see daptrace_va_tlb_flush().)
 *
 * DAPTRACE_TLB_MM: flush only what can hold the targets' translations, by
 * joining the x86 TLB-generation protocol (arch/x86/mm/tlb.c, the same on
 * 6.1 and 6.12).  Each mm has a generation, mm->context.tlb_gen; each CPU
 * remembers, per ASID slot, the generation it last flushed that mm's entries
 * to (cpu_tlbstate.ctxs[asid].tlb_gen).  Page-table writers bump the mm's
 * generation with inc_mm_tlb_gen() and IPI the CPUs in mm_cpumask();
 * everybody else catches up when it next loads the mm.  We do the same for
 * each target: bump the generation after the clears, then run
 * __flush_tlb_all() on the union of the targets' mm_cpumask()s.
 * Why every CPU that may hold a stale translation is covered:
 *
 *  1. CPU running the target (in mm_cpumask, not lazy) when we read the
 *     mask: it gets the IPI.  __flush_tlb_all() (INVPCID all-context or a
 *     CR4.PGE toggle) drops the entries of every PCID, user PCIDs of PTI
 *     included.  It does not update the CPU's recorded generation, so the
 *     CPU merely does one more full flush than needed later.
 *  2. CPU that switched away before (no longer in mm_cpumask): with PCID its
 *     TLB still holds our entries under the old ASID, which is why flushing
 *     mm_cpumask alone is not enough.  When it switches back,
 *     switch_mm_irqs_off() -> choose_new_asid() finds the slot and flushes it
 *     because slot tlb_gen < mm tlb_gen, which our bump guarantees (without
 *     PCID, every switch flushes anyway; a recycled slot flushes too).
 *  3. Lazy CPU (a kernel thread runs on the mm; the CPU stays in
 *     mm_cpumask): it gets the IPI as in 1.  The kernel skips lazy CPUs
 *     (they compare generations when they leave lazy mode), but
 *     cpu_tlbstate_shared.is_lazy is declared only for !MODULE builds, so we
 *     pay the extra IPI rather than copy a private struct layout.
 *  4. CPU switching to the mm concurrently: it sets its bit in mm_cpumask
 *     (a locked op) and then reads tlb_gen; we increment tlb_gen (locked)
 *     and then read mm_cpumask.  On x86 one of the two reads must see the
 *     other side's write: we IPI it, or it sees the new generation and
 *     flushes as in 2.  This is the ordering the comment in
 *     inc_mm_tlb_gen() asks of callers: paging-structure writes (our atomic
 *     clears, which precede the bump), then the bump, then mm_cpumask.
 *  5. No CPU can mark itself up to date with our generation without a flush
 *     that follows our clears: it records a generation only after reading
 *     it and then flushing (switch_mm_irqs_off, flush_tlb_func's full
 *     flush); the only range-limited catch-up in flush_tlb_func is for a
 *     flush request carrying exactly that generation, and the generation we
 *     got from inc_mm_tlb_gen() belongs to no request.
 *
 * Risks: this relies on arch/x86/mm/tlb.c internals that are not an API,
 * and inc_mm_tlb_gen() itself sits in the "#ifndef MODULE" part of
 * <asm/tlbflush.h> on both kernels (hidden from modules on purpose), so
 * daptrace_va_inc_tlb_gen() below repeats its one line on the
 * mm_context_t field, which modules do see.  A stray bump is harmless by
 * design of the protocol: a CPU whose recorded generation is behind only
 * flushes more, never less, so the worst case of a mistake here is extra
 * flushing.  The protocol holds on 6.1 and 6.12 (read from both); kernels
 * that change it (e.g. broadcast flushes with AMD INVLPGB) need a new look
 * before this policy is allowed there.  Cost on the target: after each
 * round a switched-out CPU does one full flush of the target's ASID on its
 * next switch-in (PCID retention is lost at most once per CPU per round).
 * Untested on PCID hardware so far: QEMU's default qemu64 CPU has no PCID,
 * so every switch flushes anyway and a VM test exercises only cases 1, 3
 * and 4 unless it is given a CPU model with PCID.
 */

/* inc_mm_tlb_gen(), which is hidden from modules: see above. */
static void daptrace_va_inc_tlb_gen(struct mm_struct *mm)
{
	/* Returning atomic: a full barrier, as the protocol requires. */
	atomic64_inc_return(&mm->context.tlb_gen);
}

/*
 * The union of the targets' mm_cpumask()s.  Static: too big for the stack
 * with NR_CPUS=8192 and no need to allocate it every round.  The lock makes
 * it safe should two workers ever run.
 */
static struct cpumask daptrace_va_flush_mask;
static DEFINE_MUTEX(daptrace_va_flush_lock);

static void daptrace_va_flush_cpu(void *unused)
{
	__flush_tlb_all();
}

static void daptrace_va_flush_mm(struct daptrace_ctx *ctx)
{
	struct daptrace_target *t;
	struct mm_struct *mm;

	mutex_lock(&daptrace_va_flush_lock);
	cpumask_clear(&daptrace_va_flush_mask);
	daptrace_for_each_target(t, ctx) {
		if (t->exited)
			continue;
		mm = daptrace_va_get_mm(t->priv);
		if (!mm)
			continue;
		/* Full barrier: orders our clears before, the mask read after. */
		daptrace_va_inc_tlb_gen(mm);
		cpumask_or(&daptrace_va_flush_mask, &daptrace_va_flush_mask,
			   mm_cpumask(mm));
		mmput(mm);
	}
	if (!cpumask_empty(&daptrace_va_flush_mask))
		on_each_cpu_mask(&daptrace_va_flush_mask,
				 daptrace_va_flush_cpu, NULL, false);
	mutex_unlock(&daptrace_va_flush_lock);
}

/*
 * The flush IPIs are not waited for: the check comes a sampling interval
 * later, and only accesses between our clears and a remote CPU's flush (an
 * IPI's latency) can go unseen; later ones set the bit again.  Waiting made
 * the worker spin for as long as a busy remote CPU took to take the IPI,
 * which under emulation was most of the worker's CPU time.
 */
static void daptrace_va_tlb_flush(struct daptrace_ctx *ctx,
				  enum daptrace_tlb_policy policy)
{
	switch (policy) {
	case DAPTRACE_TLB_ROUND:
		on_each_cpu(daptrace_va_flush_cpu, NULL, false);
		break;
	case DAPTRACE_TLB_MM:
		daptrace_va_flush_mm(ctx);
		break;
	default:
		break;
	}
}

const struct daptrace_ops daptrace_vaddr_ops = {
	.target_get		= daptrace_va_target_get,
	.target_put		= daptrace_va_target_put,
	.init			= daptrace_va_init,
	.update			= daptrace_va_update,
	.prepare_access_checks	= daptrace_va_prepare_access_checks,
	.check_accesses		= daptrace_va_check_accesses,
	.target_valid		= daptrace_va_target_valid,
	.tlb_flush		= daptrace_va_tlb_flush,
};
