// SPDX-License-Identifier: GPL-2.0
/*
 * daptrace operations for the virtual address space of processes.
 *
 * Everything here touches a live address space: the targets' memory maps
 * (initial regions and updates) and the page-table accessed bit of one page
 * per region per sampling round.  Only exported symbols and header inlines
 * are used: the kernel's page walker, ptep_test_and_clear_young() and
 * pte_offset_map_lock() are not available to modules (docs/kernel-facts.md, exports), so
 * the walk is written out by hand below, with the locking rules next to the
 * code that relies on them.
 *
 * The accessed bit and the TLB flushes are x86-64 specific: so is the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/mm.h>
/* After mm.h: without CONFIG_HUGETLB_PAGE it does not declare vm_area_struct. */
#include <linux/hugetlb_inline.h>
#include <linux/mmap_lock.h>
#include <linux/moduleparam.h>
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
#include <linux/spinlock.h>

#include "ops.h"
#include "tlb.h"

/* Page-table changes under us are retried this often; then one sample is lost. */
#define DAPTRACE_VA_MAX_TRIES		4
/* Regions between looks at a waiting mmap_lock writer or a pending resched. */
#define DAPTRACE_VA_BATCH		64
/* Batches the pass after one cut short walks without looking: see sample_target(). */
#define DAPTRACE_VA_HOLD_BATCHES	16
/* Spare slots for mappings created between sizing the buffer and locking. */
#define DAPTRACE_VA_MAPS_SLACK		32U
#define DAPTRACE_VA_MAPS_TRIES		3

/*
 * Fixed at load (0444): a user who needs no placement skips its work, and
 * one module build can be measured with and without it (bench/placement.sh).
 */
static bool placement = true;
module_param(placement, bool, 0444);
MODULE_PARM_DESC(placement,
		 "Record the NUMA node and physical page of each sample (default Y)");

/**
 * struct daptrace_va_target - &daptrace_target.priv of a process.
 * @pid:	The process, resolved once in the writer's pid namespace.
 * @runtime:	Its threads' summed runtime when the last walk began.
 * @unprep_start: With @unprep_end, the regions (by start address) that a
 * @unprep_end:	pass cut short by a busy mmap_lock left without a prepared
 *		sample: checked but not prepared again, or (after a
 *		prepare-only pass) with addresses picked for old regions.
 *		Passes do not check them until one prepares them.  Addresses,
 *		not region pointers: aggregation may free regions in between,
 *		and the prepare-only pass that follows it prepares them all
 *		(or leaves a span of its own).
 *		Circular, as the passes walk: wraps past the last region if
 *		@unprep_start > @unprep_end; empty if they are equal.
 * @cut:	The last pass was cut short at a batch boundary: the next one
 *		keeps the lock longer (see daptrace_va_sample_target()).
 * @resume:	Where the next pass begins, by address: the first region
 *		the last pass cut short did not prepare (the start of the
 *		span above while that is not empty) or, checking only, did
 *		not reach; after a pass that checked and prepared to its
 *		end, the first it did not visit (daptrace_va_stop()), or 0,
 *		the first region, if it went round them all.
 * @nr_cleared:	Accessed bits cleared by the current pass.
 * @fresh:	Regions were (re)built, merged or split since the last
 *		checking walk (a prepare-only walk follows every such change):
 *		where their pages live is unknown -- a merged region has only
 *		its left part's last sample, a split piece its parent's -- so
 *		the next check walks even if the target is idle (placement of
 *		a sleeping target).  Such a walk of an idle target does not
 *		make its window busy (@ran).
 * @ran:	A check of the current aggregation window found that the
 *		target had run, and walked it (or tried to): see
 *		daptrace_va_window_idle().
 * @maps_runtime: Its threads' summed runtime when its memory map was last
 *		read into the regions; DAPTRACE_VA_RAN to read it again.
 *
 * Touched only by the worker.
 */
struct daptrace_va_target {
	struct pid *pid;
	u64 runtime;
	unsigned long unprep_start;
	unsigned long unprep_end;
	bool cut;
	unsigned long resume;
	unsigned int nr_cleared;
	bool fresh;
	bool ran;
	u64 maps_runtime;
};

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

static void *daptrace_va_target_get(struct pid *pid)
{
	struct daptrace_va_target *vt;
	struct task_struct *task;
	struct mm_struct *mm;
	bool kthread;

	task = get_pid_task(pid, PIDTYPE_PID);
	if (!task)
		return ERR_PTR(-ESRCH);
	kthread = task->flags & PF_KTHREAD;
	put_task_struct(task);
	if (kthread)
		return ERR_PTR(-EINVAL);
	mm = daptrace_va_get_mm(pid);
	if (!mm)
		return ERR_PTR(-EINVAL);
	mmput(mm);
	vt = kzalloc(sizeof(*vt), GFP_KERNEL);
	if (!vt)
		return ERR_PTR(-ENOMEM);
	vt->pid = get_pid(pid);
	return vt;
}

static void daptrace_va_target_put(void *priv)
{
	struct daptrace_va_target *vt = priv;

	put_pid(vt->pid);
	kfree(vt);
}

/* One process is one struct pid, whatever number named it. */
static bool daptrace_va_target_same(const void *a, const void *b)
{
	const struct daptrace_va_target *va = a, *vb = b;

	return va->pid == vb->pid;
}

static struct mm_struct *daptrace_va_target_mm(struct daptrace_target *t)
{
	struct daptrace_va_target *vt = t->priv;

	return daptrace_va_get_mm(vt->pid);
}

/*
 * As daptrace_va_get_mm() would find an mm, without pinning it: asked once
 * per window, also of idle targets.  A thread's mm is cleared (under its
 * task_lock, which we need not take for a yes/no) only when it exits.
 */
static bool daptrace_va_target_valid(struct daptrace_target *t)
{
	struct daptrace_va_target *vt = t->priv;
	struct task_struct *task, *th;
	bool valid = false;

	rcu_read_lock();
	task = pid_task(vt->pid, PIDTYPE_PID);
	if (task) {
		for_each_thread(task, th) {
			if (READ_ONCE(th->mm)) {
				valid = true;
				break;
			}
		}
	}
	rcu_read_unlock();
	return valid;
}

/*
 * exec() replaces the address space but keeps the pid (de_thread() hands the
 * leader's pid to the exec'ing thread), so the leader's self_exec_id, which
 * begin_new_exec() increments and clone() copies, counts the execs.  A
 * counter, unlike the mm pointer, cannot come back to an old value
 * (docs/kernel-facts.md, identity).
 */
static u64 daptrace_va_target_exec_id(struct daptrace_target *t)
{
	struct daptrace_va_target *vt = t->priv;
	struct task_struct *task;
	u64 id;

	rcu_read_lock();
	task = pid_task(vt->pid, PIDTYPE_PID);
	/* Reaped since target_valid(): an exit, not an exec. */
	id = task ? READ_ONCE(task->self_exec_id) : t->exec_id;
	/*
	 * The count moves in begin_new_exec(), before the new image is
	 * mapped (and while exec holds the mmap lock to map it): report the
	 * change once execve() is done, so the regions are built from the
	 * new image's map.  in_execve is a bit-field read without a lock:
	 * a stale value defers the report by a window, or leaves it to the
	 * worker's retry of a target left without regions.
	 */
	if (task && data_race(!!task->in_execve))
		id = t->exec_id;
	rcu_read_unlock();
	return id;
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
 * Return: the number of ranges in @out (0 if nothing is mapped), -ENOMEM,
 * -EBUSY if a writer holds or awaits mmap_lock, or -EAGAIN if the map kept
 * growing faster than we could size the buffer.
 */
static int daptrace_va_ranges(struct mm_struct *mm,
			      struct daptrace_addr_range out[DAPTRACE_OPS_MAX_RANGES])
{
	struct daptrace_addr_range *maps;
	unsigned int cap, nr, i;
	int tries, err = 0;

	BUILD_BUG_ON(DAPTRACE_OPS_MAX_RANGES != 3);
	for (tries = 0; ; tries++) {
		if (tries == DAPTRACE_VA_MAPS_TRIES)
			return -EAGAIN;
		cap = (unsigned int)READ_ONCE(mm->map_count) + DAPTRACE_VA_MAPS_SLACK;
		maps = kvmalloc_array(cap, sizeof(*maps), GFP_KERNEL);
		if (!maps)
			return -ENOMEM;
		/* Never wait for a writer: the next update tries again. */
		if (!mmap_read_trylock(mm)) {
			kvfree(maps);
			return -EBUSY;
		}
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
 * Idle targets.  A process none of whose threads ran since the previous walk
 * cannot have set an accessed bit, so its check reads "not accessed"
 * everywhere and its prepared bits are still clear: the walk is skipped.
 * Nor can it have changed its memory map: daptrace_va_update() skips it.
 * "Ran" is the threads' summed se.sum_exec_runtime, plus what exited threads
 * left in signal->sum_sched_runtime, compared with the sum taken before the
 * previous walk (so a run during that walk counts too); any change, also a
 * decrease from a thread exiting under the RCU walk, counts as running.  A
 * thread that is runnable or on a CPU counts as running whatever its sum
 * says: the sum is brought up to date only at ticks and context switches.
 * Tasks outside the thread group can use the address space too: a vfork()
 * or other CLONE_VM child, a driver's worker (vhost's, from
 * get_task_mm()).  Each holds an mm_users reference, as does each thread,
 * so more references than threads with the mm also counts as running.
 * (6.12's vhost workers are threads of their QEMU and hold a reference
 * besides: such a target is never idle, and is walked as a busy one.)
 * Not seen: a reference held only for the moment of an access between two
 * samples (process_vm_writev(), ptrace or /proc/pid/mem from another
 * process), which DAMON sees.  A pass cut short by a busy mmap_lock sets
 * the sum to DAPTRACE_VA_RAN so that the next one walks.  task->signal
 * and the thread list are valid under RCU for a task found by pid_task()
 * under it.
 */
/* A runtime sum no process reaches: "ran", so the next pass walks. */
#define DAPTRACE_VA_RAN		U64_MAX

/*
 * Whether tasks other than @th's @nr_threads threads with an mm hold it.
 * task_lock() keeps th->mm from being dropped (exit_mm() clears it under
 * that lock) and so the mm alive; a thread exiting meanwhile only makes
 * the answer "yes", i.e. one walk more.
 */
static bool daptrace_va_mm_shared(struct task_struct *th, int nr_threads)
{
	struct mm_struct *mm;
	bool shared = false;

	task_lock(th);
	mm = th->mm;
	if (mm)
		shared = atomic_read(&mm->mm_users) > nr_threads;
	task_unlock(th);
	return shared;
}

/* The summed runtime, or DAPTRACE_VA_RAN if a task may run on the mm. */
static u64 daptrace_va_runtime(struct daptrace_va_target *vt)
{
	struct task_struct *task, *th, *with_mm = NULL;
	bool running = false;
	int nr_with_mm = 0;
	u64 sum;

	rcu_read_lock();
	task = pid_task(vt->pid, PIDTYPE_PID);
	if (!task) {
		rcu_read_unlock();
		return DAPTRACE_VA_RAN;
	}
	sum = READ_ONCE(task->signal->sum_sched_runtime);
	for_each_thread(task, th) {
		sum += READ_ONCE(th->se.sum_exec_runtime);
		running |= task_is_running(th);
		if (READ_ONCE(th->mm)) {
			with_mm = th;
			nr_with_mm++;
		}
	}
	/* Only asked when the threads alone would let the walk be skipped. */
	if (!running && with_mm)
		running = daptrace_va_mm_shared(with_mm, nr_with_mm);
	rcu_read_unlock();
	return running ? DAPTRACE_VA_RAN : sum;
}

/*
 * Build the initial regions of every target still alive.  A target that has
 * exited is skipped: the worker notices it through target_valid().  Errors
 * of one target do not stop the others; the first one is returned.
 */
static int daptrace_va_init(struct daptrace_ctx *ctx)
{
	struct daptrace_addr_range ranges[DAPTRACE_OPS_MAX_RANGES];
	struct daptrace_target *t;
	struct mm_struct *mm;
	int nr, err, ret = 0;

	daptrace_for_each_target(t, ctx) {
		struct daptrace_va_target *vt = t->priv;
		u64 runtime;

		if (t->exited)
			continue;
		vt->maps_runtime = DAPTRACE_VA_RAN;
		/* Before our pin, which would read as another user of the mm. */
		runtime = daptrace_va_runtime(vt);
		mm = daptrace_va_target_mm(t);
		if (!mm)
			continue;
		nr = daptrace_va_ranges(mm, ranges);
		mmput_async(mm);
		if (nr <= 0) {
			/* Nothing mapped: the next update builds the regions. */
			if (nr < 0 && nr != -EBUSY && !ret)
				ret = nr;
			continue;
		}
		err = daptrace_init_regions(ctx, t, ranges, nr);
		if (err && !ret)
			ret = err;
		if (!err)
			vt->maps_runtime = runtime;
		vt->fresh = true;
	}
	return ret;
}

/*
 * Follow mmap/munmap/mremap/brk: fit every live target's regions to its
 * current three regions.  On error the target keeps its old regions until
 * the next update; sampling an address that is no longer mapped is harmless
 * (it reads as not accessed).  A target none of whose threads ran since its
 * map was last read cannot have changed it (see "Idle targets" above): it
 * keeps its regions, and with them its quiet windows.
 */
static void daptrace_va_update(struct daptrace_ctx *ctx)
{
	struct daptrace_addr_range ranges[DAPTRACE_OPS_MAX_RANGES];
	struct daptrace_target *t;
	struct mm_struct *mm;
	u64 runtime;
	int nr, err;

	daptrace_for_each_target(t, ctx) {
		struct daptrace_va_target *vt = t->priv;

		if (t->exited)
			continue;
		runtime = daptrace_va_runtime(vt);
		if (t->nr_regions && runtime != DAPTRACE_VA_RAN &&
		    runtime == vt->maps_runtime)
			continue;
		vt->maps_runtime = DAPTRACE_VA_RAN;
		mm = daptrace_va_target_mm(t);
		if (!mm)
			continue;
		nr = daptrace_va_ranges(mm, ranges);
		mmput_async(mm);
		if (nr < 0)
			continue;
		/*
		 * A target without regions (after an exec, or when its map
		 * could not be read before) starts from its share of
		 * min_nr_regions, as at "on".
		 */
		if (!t->nr_regions && nr)
			err = daptrace_init_regions(ctx, t, ranges, nr);
		else
			err = daptrace_set_regions(ctx, t, ranges, nr);
		if (!err)
			vt->maps_runtime = runtime;
		vt->fresh = true;
	}
}

/*
 * The page walk.
 *
 * Rules (docs/kernel-facts.md, walk; each was needed under THP split/collapse churn and
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
 *    once, locklessly, inside rcu_read_lock(), and the table and its lock are
 *    reached from that snapshot.  On 6.1 tables are only freed under the
 *    write lock, and the same code is merely cautious there.
 *  - Reading a bit takes no lock, as in GUP-fast: the pte is read from the
 *    snapshot's table, then the pmd is read again and the walk retried
 *    unless pmd_same(), so a value read from a table retracted meanwhile is
 *    never used.  A racing change of the entry itself (unmap, migration,
 *    the hardware setting the bit) only moves the read to one side of it.
 *  - Clearing a bit takes the page-table lock of the entry, the lock rmap
 *    and THP split take, and only when the lockless read saw the bit set;
 *    under the lock the pmd is re-read and the walk retried unless
 *    pmd_same() (retract takes the same pte lock before clearing the pmd,
 *    so a table still linked while we hold its lock stays linked), and the
 *    bit is cleared with the atomic test-and-clear of
 *    ptep_test_and_clear_young(), because the hardware sets
 *    accessed/dirty bits concurrently.  pte_offset_map_lock() would do the
 *    same but is not usable: 6.12 does not export __pte_offset_map_lock().
 *  - "Huge" (pmd_trans_huge, pmd_devmap) is tested before pmd_bad(), because
 *    x86's pmd_bad() is true for a leaf pmd; and nothing is ever cleared on a
 *    bad, none or non-present entry: pmd_clear_bad() is not exported on 6.1
 *    and fixing page tables is not our business.  A pud leaf (1 GiB DAX) is
 *    skipped, as are hugetlb and PFNMAP/IO VMAs.
 */

/*
 * The folio mapped at @pfn, with a reference, or NULL.  Lockless callers
 * must check afterwards that their entry still maps @pfn: only then is the
 * reference one on the folio they found (as in GUP-fast).
 */
static struct folio *daptrace_va_folio_get(unsigned long pfn)
{
	struct folio *folio;

	if (!pfn_valid(pfn))
		return NULL;
	folio = page_folio(pfn_to_page(pfn));
	if (!folio_try_get(folio))
		return NULL;
	/* Split meanwhile: the page belongs to another folio now. */
	if (unlikely(folio != page_folio(pfn_to_page(pfn)))) {
		folio_put(folio);
		return NULL;
	}
	return folio;
}

/*
 * Page reclaim and the accessed bit.  Reclaim's folio_referenced() clears
 * accessed bits too; one it clears between our prepare and our check would
 * hide an access.  With CONFIG_PAGE_IDLE_FLAG (Debian 6.12) we do what DAMON
 * does: prepare marks the folio idle, and both folio_referenced() and
 * folio_mark_accessed() clear that flag when they see a reference, so the
 * check also counts a folio that is no longer idle.  And prepare hands
 * reclaim the reference it takes away, with folio_set_young(), which
 * folio_referenced() counts.  Without the flag (Debian 6.1) both are empty
 * stubs: an access that reclaim saw between prepare and check is lost to
 * the sample (reclaim is aging that page anyway), and at most one sampled
 * page per region per sampling interval looks unreferenced to the LRU
 * (classic or MGLRU) once more than it should.  The flag is shared with
 * DAMON and /sys/kernel/mm/page_idle: running those on the same pages at the
 * same time makes each see the other's marks as accesses.
 */
static inline bool daptrace_va_has_idle(void)
{
	return IS_ENABLED(CONFIG_PAGE_IDLE_FLAG);
}

/*
 * Prepare, entry lock held so @pfn's folio stays mapped: @young tells
 * whether we just cleared its accessed bit.
 */
static void daptrace_va_mark_locked(unsigned long pfn, bool young)
{
	struct folio *folio;

	if (!daptrace_va_has_idle() || !pfn_valid(pfn))
		return;
	folio = page_folio(pfn_to_page(pfn));
	if (young)
		folio_set_young(folio);
	folio_set_idle(folio);
}

/* Is @pte's value @ptent normal memory whose folio we may look at? */
static inline bool daptrace_va_pte_normal(pte_t ptent)
{
	return pte_present(ptent) && !pte_special(ptent) && !pte_devmap(ptent);
}

/*
 * The pte for @addr in the table the lockless pmd snapshot @pmdval points
 * to; -EAGAIN (in @ret) if the pmd changed meanwhile.
 */
static pte_t daptrace_va_pte_read(pmd_t *pmd, pmd_t pmdval,
				  unsigned long addr, pte_t **ptep, int *ret)
{
	pte_t ptent;

	*ptep = pte_offset_kernel(&pmdval, addr);
	ptent = ptep_get(*ptep);
	/* Orders the pte read before the pmd re-read, as GUP-fast does. */
	smp_rmb();
	*ret = pmd_same(pmdval, READ_ONCE(*pmd)) ? 0 : -EAGAIN;
	return ptent;
}

/*
 * Check, lockless: was the page at @addr accessed since prepare?  Stores the
 * pfn of a present entry in *@pfn (untouched if none).  Returns 1, 0, or -EAGAIN if
 * the pmd changed under the read.
 */
static int daptrace_va_check_pte(pmd_t *pmd, pmd_t pmdval, unsigned long addr,
				 unsigned long *pfn)
{
	struct folio *folio;
	pte_t *pte, ptent;
	int ret, young;

	ptent = daptrace_va_pte_read(pmd, pmdval, addr, &pte, &ret);
	if (ret || !pte_present(ptent))
		return ret;
	*pfn = pte_pfn(ptent);
	if (pte_young(ptent))
		return 1;
	if (!daptrace_va_has_idle() || !daptrace_va_pte_normal(ptent))
		return 0;
	folio = daptrace_va_folio_get(*pfn);
	if (!folio)
		return 0;
	young = !folio_test_idle(folio);
	/* Still the folio the entry maps?  Else the flag means nothing. */
	if (pte_pfn(ptep_get(pte)) != *pfn || !pte_present(ptep_get(pte)))
		young = 0;
	folio_put(folio);
	return young;
}

static int daptrace_va_check_pmd(pmd_t *pmd, pmd_t pmdval, unsigned long addr,
				 unsigned long *pfn)
{
	struct folio *folio;
	unsigned long head;
	int young;

	if (!pmd_present(pmdval))
		return 0;
	head = pmd_pfn(pmdval);
	*pfn = head + ((addr & ~PMD_MASK) >> PAGE_SHIFT);
	if (pmd_young(pmdval))
		return 1;
	if (!daptrace_va_has_idle() || pmd_devmap(pmdval))
		return 0;
	folio = daptrace_va_folio_get(head);
	if (!folio)
		return 0;
	young = !folio_test_idle(folio);
	pmdval = READ_ONCE(*pmd);
	if (!pmd_present(pmdval) || pmd_pfn(pmdval) != head)
		young = 0;
	folio_put(folio);
	return young;
}

/*
 * Prepare a pte: clear its accessed bit if the lockless read @ptent saw it
 * set (under the lock, re-tested there) and mark its folio idle.  Returns 1
 * if a bit was cleared, 0 if not, -EAGAIN if the pmd changed first.
 */
static int daptrace_va_prepare_pte(struct mm_struct *mm, pmd_t *pmd,
				   pmd_t pmdval, unsigned long addr)
{
	spinlock_t *ptl;	/* the pte table's lock, guards *pte */
	struct folio *folio;
	pte_t *pte, ptent;
	int ret, cleared = 0;

	ptent = daptrace_va_pte_read(pmd, pmdval, addr, &pte, &ret);
	if (ret || !pte_present(ptent))
		return ret;
	if (!pte_young(ptent)) {
		/* Nothing to clear: just the idle mark, without the lock. */
		if (!daptrace_va_has_idle() || !daptrace_va_pte_normal(ptent))
			return 0;
		folio = daptrace_va_folio_get(pte_pfn(ptent));
		if (!folio)
			return 0;
		if (pte_pfn(ptep_get(pte)) == pte_pfn(ptent))
			folio_set_idle(folio);
		folio_put(folio);
		return 0;
	}
	/* Both from the snapshot: RCU keeps the table and its lock alive. */
	ptl = pte_lockptr(mm, &pmdval);
	spin_lock(ptl);
	if (unlikely(!pmd_same(pmdval, READ_ONCE(*pmd)))) {
		spin_unlock(ptl);
		return -EAGAIN;
	}
	ptent = ptep_get(pte);
	if (pte_present(ptent)) {
		cleared = daptrace_ptep_test_and_clear_young(pte);
		if (daptrace_va_pte_normal(ptent))
			daptrace_va_mark_locked(pte_pfn(ptent), cleared);
	}
	spin_unlock(ptl);
	return cleared;
}

static int daptrace_va_prepare_pmd(struct mm_struct *mm, pmd_t *pmd,
				   pmd_t pmdval)
{
	spinlock_t *ptl;	/* the pmd table's lock, guards *pmd */
	struct folio *folio;
	int cleared = 0;

	if (!pmd_present(pmdval))
		return 0;
	if (!pmd_young(pmdval)) {
		if (!daptrace_va_has_idle() || pmd_devmap(pmdval))
			return 0;
		folio = daptrace_va_folio_get(pmd_pfn(pmdval));
		if (!folio)
			return 0;
		if (pmd_pfn(READ_ONCE(*pmd)) == pmd_pfn(pmdval))
			folio_set_idle(folio);
		folio_put(folio);
		return 0;
	}
	ptl = pmd_lock(mm, pmd);
	/* Re-check under the lock: split and zap hold it to change the pmd. */
	pmdval = READ_ONCE(*pmd);
	if (!pmd_trans_huge(pmdval) && !pmd_devmap(pmdval)) {
		spin_unlock(ptl);
		return -EAGAIN;
	}
	if (pmd_present(pmdval)) {
		cleared = daptrace_pmdp_test_and_clear_young(pmd);
		if (!pmd_devmap(pmdval))
			daptrace_va_mark_locked(pmd_pfn(pmdval), cleared);
	}
	spin_unlock(ptl);
	return cleared;
}

/*
 * The pmd entry covering @addr in @vma, or NULL if an upper level is empty,
 * bad or a leaf, or the VMA is not sampled.  Caller: mm pinned,
 * mmap_read_lock held, @vma found under it and containing @addr.
 */
static pmd_t *daptrace_va_pmd(struct mm_struct *mm, struct vm_area_struct *vma,
			      unsigned long addr)
{
	pgd_t *pgd, pgdval;
	p4d_t *p4d, p4dval;
	pud_t *pud, pudval;

	if ((vma->vm_flags & (VM_PFNMAP | VM_IO)) || is_vm_hugetlb_page(vma))
		return NULL;
	/*
	 * Upper levels: a table seen here stays linked (see above), so the
	 * p4d/pud/pmd_offset() helpers may re-read the entries they follow.
	 */
	pgd = pgd_offset(mm, addr);
	pgdval = READ_ONCE(*pgd);
	if (pgd_none(pgdval) || pgd_bad(pgdval))
		return NULL;
	/* Folds onto the pgd unless 5-level paging is on (pgtable_l5_enabled). */
	p4d = p4d_offset(pgd, addr);
	p4dval = READ_ONCE(*p4d);
	if (p4d_none(p4dval) || p4d_bad(p4dval))
		return NULL;
	pud = pud_offset(p4d, addr);
	pudval = READ_ONCE(*pud);
	/* Leaf first: x86's pud_bad() is true for a 1 GiB leaf too. */
	if (pud_none(pudval) || pud_leaf(pudval) || pud_bad(pudval))
		return NULL;
	return pmd_offset(pud, addr);
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
 * Check (@prepare false) or prepare the page at @addr.  Check returns
 * whether it was accessed since prepare and stores the pfn of a present
 * entry in *@pfn (DAPTRACE_NO_PFN if none); prepare returns whether an
 * accessed bit was cleared.
 */
static bool daptrace_va_entry(struct mm_struct *mm, struct vm_area_struct *vma,
			      unsigned long addr, bool prepare,
			      unsigned long *pfn)
{
	pmd_t *pmd, pmdval;
	int tries, ret = 0;

	*pfn = DAPTRACE_NO_PFN;
	pmd = daptrace_va_pmd(mm, vma, addr);
	if (!pmd)
		return false;

	rcu_read_lock();
	for (tries = 0; tries < DAPTRACE_VA_MAX_TRIES; tries++) {
		*pfn = DAPTRACE_NO_PFN;
		/*
		 * One lockless read: x86-64 pmds are a single word, so this
		 * is what pmdp_get_lockless() is on 6.12 (6.1 lacks it).
		 */
		pmdval = READ_ONCE(*pmd);
		if (pmd_none(pmdval))
			ret = 0;
		else if (pmd_trans_huge(pmdval) || pmd_devmap(pmdval))
			ret = prepare ? daptrace_va_prepare_pmd(mm, pmd, pmdval) :
				daptrace_va_check_pmd(pmd, pmdval, addr, pfn);
		else if (!pmd_present(pmdval) || pmd_bad(pmdval))
			ret = 0;	/* migration entry, or garbage: hands off */
		else
			ret = prepare ?
				daptrace_va_prepare_pte(mm, pmd, pmdval, addr) :
				daptrace_va_check_pte(pmd, pmdval, addr, pfn);
		if (ret != -EAGAIN)
			break;
	}
	rcu_read_unlock();
	if (ret < 0)
		*pfn = DAPTRACE_NO_PFN;
	return ret > 0;
}

/* See "Idle targets" at daptrace_va_runtime(). */
static bool daptrace_va_ran(struct daptrace_va_target *vt)
{
	u64 sum = daptrace_va_runtime(vt);
	bool ran = sum == DAPTRACE_VA_RAN || sum != vt->runtime;

	vt->runtime = sum;
	return ran;
}

/* The VMA containing @addr: the cached *@vma if it still does, else looked up. */
static struct vm_area_struct *daptrace_va_vma(struct mm_struct *mm,
					      struct vm_area_struct **vma,
					      unsigned long addr)
{
	if (!*vma || addr < (*vma)->vm_start || addr >= (*vma)->vm_end)
		*vma = vma_lookup(mm, addr);
	return *vma;
}

/* Whether a pass cut short left regions without a prepared sample. */
static bool daptrace_va_unprepared(const struct daptrace_va_target *vt)
{
	return vt->unprep_start != vt->unprep_end;
}

static bool daptrace_va_unprepared_region(const struct daptrace_va_target *vt,
					  const struct daptrace_region *r)
{
	unsigned long a = r->ar.start;

	if (vt->unprep_start <= vt->unprep_end)
		return a >= vt->unprep_start && a < vt->unprep_end;
	return a >= vt->unprep_start || a < vt->unprep_end;
}

static void daptrace_va_set_unprepared(struct daptrace_va_target *vt,
				       unsigned long start, unsigned long end)
{
	vt->unprep_start = start;
	vt->unprep_end = end;
}

/*
 * A pass that began at @s was cut short at @r, not reached: what has no
 * prepared sample now, as one span from @p, the first region it did not
 * prepare (where the next pass begins).  A prepare-only pass leaves all
 * from @p round to @s.  A checking pass began at an earlier cut's span, if
 * any: it leaves up to its end if @r is still in it, else up to @r (whose
 * sample is still pending, as are those of the regions after it).
 */
static void daptrace_va_unprepared_from(struct daptrace_va_target *vt,
					const struct daptrace_region *s,
					const struct daptrace_region *p,
					const struct daptrace_region *r,
					bool check)
{
	unsigned long end = r->ar.start;

	if (!check)
		end = s->ar.start;
	else if (daptrace_va_unprepared_region(vt, r))
		end = vt->unprep_end;
	daptrace_va_set_unprepared(vt, p->ar.start, end);
	vt->resume = p->ar.start;
}

/* The region a pass begins at: the first that ends past @resume. */
static struct daptrace_region *daptrace_va_first(struct daptrace_target *t,
						 unsigned long resume)
{
	struct daptrace_region *r;

	daptrace_for_each_region(r, t)
		if (r->ar.end > resume)
			return r;
	return list_first_entry(&t->regions, struct daptrace_region, list);
}

/*
 * Where a pass that checks and prepares from @s, and wraps around, stops:
 * before the regions that reach into the 2 MiB block @s starts in.  Their
 * prepares at the end of the pass would clear a huge pmd that @s's prepare
 * cleared at its start, and so hide what was accessed in between (the huge
 * pmd rule, see daptrace_va_sample_target()).  They keep their pending
 * samples, checked by a later pass (@s's prepare may clear them again,
 * which leaves them at least a sampling interval).  Not those without one
 * (an earlier cut's span, if it wraps round to them: then the pass checks
 * nothing).  @s itself if it is the first region.
 */
static struct daptrace_region *daptrace_va_stop(struct daptrace_target *t,
						const struct daptrace_va_target *vt,
						struct daptrace_region *s)
{
	struct daptrace_region *first, *prev;
	unsigned long block = s->ar.start >> PMD_SHIFT;

	first = list_first_entry(&t->regions, struct daptrace_region, list);
	while (s != first) {
		prev = list_prev_entry(s, list);
		if ((prev->ar.end - 1) >> PMD_SHIFT < block ||
		    daptrace_va_unprepared_region(vt, prev))
			break;
		s = prev;
	}
	return s;
}

/* The region after @r in the circular order of a pass. */
static struct daptrace_region *daptrace_va_after(struct daptrace_target *t,
						 struct daptrace_region *r)
{
	if (list_is_last(&r->list, &t->regions))
		return list_first_entry(&t->regions, struct daptrace_region,
					list);
	return list_next_entry(r, list);
}

/*
 * One sampling pass over the regions of @t: per region, with CHECK test the
 * address picked last time and account it, with PREPARE pick the next one
 * and clear its accessed bit; then invalidate what the policy wants.
 *
 * One mm pin and one mmap_read_lock cover the whole target: the regions are
 * sorted, so their sampling addresses ascend and the VMA found for one region
 * usually serves the next ones without a maple tree lookup (one cache for
 * the checks, one for the prepares, which trail them).  The lock is
 * only ever tried: a writer holding or awaiting it (the target's own mmap or
 * munmap, or a fault stuck in a hung FUSE/NFS file under it) makes us skip
 * the rest of the target's pass and count it, rather than wait.  A pass cut
 * short leaves regions checked but not prepared again, or picked but never
 * cleared: later passes do not check those until one prepares them, and
 * check the rest, whose samples are still pending.  When a writer
 * waits or the scheduler wants the CPU, the lock is dropped for a moment
 * every DAPTRACE_VA_BATCH regions, so thousands of regions never stall the
 * target; but not for the first DAPTRACE_VA_HOLD_BATCHES batches of the
 * pass after one cut short that way, which makes the writer wait that long
 * (no resched point either: some hundred microseconds of walk): else a
 * target that maps and unmaps in a loop has every pass cut at the first
 * batch, and the regions past it are never sampled.  Past that many
 * regions (beyond the default max_nr_regions) a pass therefore begins
 * where the last one was cut (vt->resume) and wraps around, up to
 * daptrace_va_stop() if it checks and prepares: the regions take their
 * turns also when every pass is cut, across aggregations too.  The last mm
 * reference may be ours if the target exits meanwhile: mmput_async() leaves
 * the teardown to a workqueue.
 */
static void daptrace_va_sample_target(struct daptrace_ctx *ctx,
				      struct daptrace_target *t,
				      unsigned int what,
				      enum daptrace_tlb_policy tlb,
				      struct daptrace_sample_stats *st)
{
	struct daptrace_va_target *vt = t->priv;
	bool check = what & DAPTRACE_SAMPLE_CHECK;
	bool prepare = what & DAPTRACE_SAMPLE_PREPARE;
	struct vm_area_struct *vma = NULL, *pvma = NULL;
	struct daptrace_region *r, *p, *s, *stop, *after;
	unsigned long addr, pfn, next;
	struct mm_struct *mm;
	unsigned int n = 0, np = 0, hold;
	bool young, checked = false;

	/*
	 * Before the walk: a run during it must show next time.  An idle
	 * target's checks all read "not accessed" and its prepared bits are
	 * still clear.  A prepare-only pass (after aggregation replaced
	 * regions) must walk, unless the aggregation left the regions of a
	 * quiet target as they were and it has not run since.
	 */
	if (!check && t->quiet && !daptrace_va_unprepared(vt) && !vt->fresh &&
	    !daptrace_va_ran(vt)) {
		st->nr_idle++;
		return;
	}
	if (check) {
		bool ran = daptrace_va_ran(vt);

		if (!ran && !vt->fresh) {
			st->nr_idle++;
			daptrace_repeat_placement(t, 1);
			return;
		}
		/* A walk only to place changed regions: still a quiet window. */
		if (ran)
			vt->ran = true;
	}
	mm = daptrace_va_target_mm(t);
	if (!mm)
		return;	/* exited: the worker reaps it via target_valid */
	st->nr_walked++;
	if (!mmap_read_trylock(mm))
		goto busy;

	vt->nr_cleared = 0;
	hold = vt->cut ? DAPTRACE_VA_HOLD_BATCHES : 0;
	vt->cut = false;
	if (list_empty(&t->regions))
		goto unlock;
	s = list_first_entry(&t->regions, struct daptrace_region, list);
	/* Checking only: what it can check comes after the span. */
	if (check && !prepare && daptrace_va_unprepared(vt))
		s = daptrace_va_first(t, vt->unprep_end);
	else if (vt->resume)
		s = daptrace_va_first(t, vt->resume);
	stop = check && prepare ? daptrace_va_stop(t, vt, s) : s;
	p = s;
	r = s;
	do {
		if (!(++n % DAPTRACE_VA_BATCH)) {
			if (hold) {
				hold--;
			} else if (mmap_lock_is_contended(mm) || need_resched()) {
				mmap_read_unlock(mm);
				cond_resched();
				if (!mmap_read_trylock(mm))
					goto busy_flush;
				/* VMAs may have changed meanwhile */
				vma = NULL;
				pvma = NULL;
			}
		}
		if (check && !daptrace_va_unprepared_region(vt, r)) {
			addr = r->sampling_addr;
			pfn = DAPTRACE_NO_PFN;
			young = daptrace_va_vma(mm, &vma, addr) &&
				daptrace_va_entry(mm, vma, addr, false, &pfn);
			daptrace_account_access(r, young);
			/* Off: sample_pfn stays DAPTRACE_NO_PFN, nothing counted. */
			if (placement) {
				r->sample_pfn = pfn;
				r->sample_nid = daptrace_va_pfn_nid(pfn);
				daptrace_account_placement(r, r->sample_nid);
			}
			st->nr_young += young;
			checked = true;
		}
		after = daptrace_va_after(t, r);
		/*
		 * A huge pmd maps 2 MiB, which neighbouring regions may share:
		 * a region is prepared only once the checks have left every
		 * 2 MiB block it touches, lest its clear hide an access from a
		 * later region's check in this pass.  At the wrap, the checks
		 * left are below @s's block (see daptrace_va_stop()).  A
		 * region without a prepared sample is not checked, and its
		 * address may be stale: its start bounds the next check.
		 */
		next = ULONG_MAX;
		if (check && after != stop &&
		    !list_is_last(&r->list, &t->regions))
			next = daptrace_va_unprepared_region(vt, after) ?
			       after->ar.start : after->sampling_addr;
		while (prepare && np < n &&
		       (p->ar.end - 1) >> PMD_SHIFT < next >> PMD_SHIFT) {
			bool in_span = daptrace_va_unprepared_region(vt, p);

			daptrace_pick_sampling_addr(ctx, p);
			addr = p->sampling_addr;
			if (daptrace_va_vma(mm, &pvma, addr) &&
			    daptrace_va_entry(mm, pvma, addr, true, &pfn))
				vt->nr_cleared++;
			np++;
			p = daptrace_va_after(t, p);
			/* The span led the pass: past it, all is prepared. */
			if (in_span && !daptrace_va_unprepared_region(vt, p))
				daptrace_va_set_unprepared(vt, 0, 0);
		}
		r = after;
	} while (r != stop);
	/* The next pass goes on with the regions this one did not visit. */
	if (check && prepare)
		vt->resume = stop == s ? 0 : stop->ar.start;
unlock:
	mmap_read_unlock(mm);
	if (prepare)
		daptrace_va_set_unprepared(vt, 0, 0);
	/* After a prepare-only walk, the regions may have changed: see @fresh. */
	vt->fresh = !check && placement;
	goto flush;

busy_flush:
	/* Regions checked or picked but not prepared must not be checked. */
	if (prepare)
		daptrace_va_unprepared_from(vt, s, p, r, check);
	else if (checked)	/* the prepare-only pass after it begins there */
		vt->resume = r->ar.start;
	vt->cut = true;
	vt->runtime = DAPTRACE_VA_RAN;
	st->nr_busy++;
flush:
	st->nr_cleared += vt->nr_cleared;
	if (vt->nr_cleared)
		daptrace_tlb_flush_mm(mm, tlb);
	mmput_async(mm);
	return;
busy:
	st->nr_busy++;
	/*
	 * None prepared: all regions, round from where the turns are (region
	 * starts are page aligned, so none starts at @resume - 1).
	 */
	if (prepare && !check) {
		if (vt->resume)
			daptrace_va_set_unprepared(vt, vt->resume,
						   vt->resume - 1);
		else
			daptrace_va_set_unprepared(vt, 0, ULONG_MAX);
	}
	vt->runtime = DAPTRACE_VA_RAN;
	mmput_async(mm);
}

static void daptrace_va_sample(struct daptrace_ctx *ctx, unsigned int what,
			       enum daptrace_tlb_policy tlb,
			       struct daptrace_sample_stats *st)
{
	unsigned int cleared = st->nr_cleared;
	struct daptrace_target *t;

	daptrace_for_each_target(t, ctx) {
		if (!t->exited)
			daptrace_va_sample_target(ctx, t, what, tlb, st);
	}
	if (tlb == DAPTRACE_TLB_ROUND && st->nr_cleared != cleared)
		daptrace_tlb_flush_round();
}

/* A window none of whose checks walked: every check read "not accessed". */
static bool daptrace_va_window_idle(struct daptrace_target *t)
{
	struct daptrace_va_target *vt = t->priv;
	bool idle = !vt->ran;

	vt->ran = false;
	return idle;
}

const struct daptrace_ops daptrace_vaddr_ops = {
	.target_get		= daptrace_va_target_get,
	.target_put		= daptrace_va_target_put,
	.init			= daptrace_va_init,
	.update			= daptrace_va_update,
	.sample			= daptrace_va_sample,
	.target_valid		= daptrace_va_target_valid,
	.target_exec_id		= daptrace_va_target_exec_id,
	.target_same		= daptrace_va_target_same,
	.window_idle		= daptrace_va_window_idle,
};
