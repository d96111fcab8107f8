// SPDX-License-Identifier: GPL-2.0
/*
 * daptrace operations for the virtual address space of processes.
 *
 * Everything here touches a live address space: the targets' memory maps
 * (initial regions and updates) and the sampling passes, which check and
 * prepare one page per region per sampling round through the page walk of
 * walk.c.  Only exported symbols and header inlines are used
 * (docs/kernel-facts.md, exports).
 *
 * The accessed bit and the TLB flushes are x86-64 specific: so is the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/mmu_notifier.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/exec_state.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <uapi/linux/auxvec.h>

#include "ops.h"
#include "tlb.h"
#include "upper.h"
#include "walk.h"

/* Regions between looks at a waiting mmap_lock writer or a pending resched. */
#define DAPTRACE_VA_BATCH		64
/* Idle targets asked per pass whether they ran: see daptrace_va_sample(). */
#define DAPTRACE_VA_IDLE_POLLS		64
/*
 * The pass after one cut short walks without looking for at most this many
 * batches and this long: see daptrace_va_sample_target().
 */
#define DAPTRACE_VA_HOLD_BATCHES	16
#define DAPTRACE_VA_HOLD_NS		(250 * NSEC_PER_USEC)

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
 * @idle:	The last check that asked found that it had not run: it is
 *		asked again only in its turn (daptrace_va_sample()).
 * @skipped:	Checks of the current window skipped without asking (@idle,
 *		not its turn), each accounted as "not accessed".  If the next
 *		ask finds that it ran, it may have run in any of them: they
 *		become unobserved.  Every window's last pass asks, so they
 *		never reach into a published window.
 * @maps_runtime: Its threads' summed runtime when its memory map was last
 *		read into the regions; DAPTRACE_VA_RAN to read it again.
 * @block_shift: log2 of the largest page that one accessed bit covers in
 *		its memory: PMD_SHIFT (THP, 2 MiB hugetlb), or a larger
 *		hugetlb page's shift (see daptrace_va_stop()).
 * @allowed_exec_id: The leader's exec count (self_exec_id) of the image
 *		the watch was admitted for: read before the writer's access
 *		check, then moved on by each exec that
 *		daptrace_va_target_allowed() lets through.
 * @probe_first: The target's probes of the current window are
 * @probe_nr:	&daptrace_ctx.probes[@probe_first, + @probe_nr), sorted by
 *		address (daptrace_va_probe_prepare()); @probe_nr is 0 outside
 *		a window's probing.
 * @probe_flush: The TLB policy by which the probes' clears in it are still
 *		to be flushed (DAPTRACE_TLB_NONE: none owed).  The probes'
 *		prepare leaves its flush to the prepare pass that follows it
 *		at once under the same policy (daptrace_va_sample()): where
 *		that pass clears bits, one flush serves both.
 * @upper_armed: The upper-level scan armed the target at an aggregation
 *		boundary: the next one it reaches after a window the target
 *		ran in collects (daptrace_va_upper()); a target removed or
 *		monitoring ending meanwhile hands back what the arm took.
 * @upper_exec_id: &daptrace_target.exec_id when it armed: after an exec the
 *		tables it cleared went with the old image.
 * @upper_owed:	What that arm owes reclaim (upper.c, "Reclaim").
 * @upper_nr_owed: Entries of @upper_owed.
 *
 * Touched only by the worker, and by the sysfs writer before the target
 * is listed or after the worker stopped (monitor lock).
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
	bool idle;
	unsigned int skipped;
	u64 maps_runtime;
	unsigned int block_shift;
	u64 allowed_exec_id;
	unsigned int probe_first;
	unsigned int probe_nr;
	enum daptrace_tlb_policy probe_flush;
	bool upper_armed;
	u64 upper_exec_id;
	struct daptrace_addr_range upper_owed[DAPTRACE_UPPER_MAX_OWED];
	unsigned int upper_nr_owed;
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
	vt->block_shift = PMD_SHIFT;
	/*
	 * The image the writer's access check (after us) is about: an exec
	 * between the two is seen as one after it and judged by the rule of
	 * daptrace_va_target_allowed(), never let through unjudged.
	 */
	rcu_read_lock();
	task = pid_task(pid, PIDTYPE_PID);
	vt->allowed_exec_id = task ? READ_ONCE(task->self_exec_id) : 0;
	rcu_read_unlock();
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

/* AT_SECURE in @mm's auxiliary vector: the exec that made it was a secure one. */
static bool daptrace_va_secureexec(struct mm_struct *mm)
{
	unsigned int i;

	/*
	 * Written by the exec that built @mm (create_elf_tables()), which
	 * is over, and by prctl(PR_SET_MM_AUXV), which needs
	 * CAP_SYS_RESOURCE in the process: word by word, a racing prctl
	 * can only make us see its old or its new vector.
	 */
	for (i = 0; i + 1 < ARRAY_SIZE(mm->saved_auxv); i += 2) {
		unsigned long type = READ_ONCE(mm->saved_auxv[i]);

		if (type == AT_NULL)
			break;
		if (type == AT_SECURE)
			return READ_ONCE(mm->saved_auxv[i + 1]) != 0;
	}
	return false;
}

/*
 * Who may watch whom, after an exec.  The writer's access check (opening
 * /proc/<pid>/mem in its context, see the sysfs target file) admitted
 * the image the target ran then.  An exec can make the target one that the
 * check would refuse to most writers: a setuid or file-capability binary,
 * a transition to another LSM domain, an image its user may not read.  A
 * real /proc/<pid>/mem descriptor stops working then (its mm is gone); the
 * worker cannot repeat the check (it runs in no writer's context), so it
 * applies the verdict the kernel itself reached on that exec:
 *
 *  - dumpability: begin_new_exec() leaves the new image dumpable by its
 *    owner (SUID_DUMP_USER, TASK_DUMPABLE_OWNER on 7.x) only if the exec
 *    changed no ids and the file was readable by the caller
 *    (would_dump()), and commit_creds() takes it away when ids change or
 *    capabilities grow; anything else makes ptrace need CAP_SYS_PTRACE
 *    (__ptrace_may_access()), and perf stops counting such a task;
 *  - AT_SECURE: set by commoncap for a setuid/setgid or file-capability
 *    exec also where suid_dumpable keeps the image dumpable, and by LSMs
 *    on a domain transition (SELinux without noatsecure, Smack).
 *
 * An image that fails either ends the watch ("revoked"): the writer may
 * remove the target and write it again, and then the full check decides.
 * Returns true while the target may be watched on; called by the worker
 * (and at "on" and join, under the monitor's locks), never concurrently.
 */
static bool daptrace_va_target_allowed(struct daptrace_target *t)
{
	struct daptrace_va_target *vt = t->priv;
	struct task_struct *task, *th;
	struct mm_struct *mm = NULL;
	bool allowed = true;
	int dumpable = 0;
	u64 id;

	rcu_read_lock();
	task = pid_task(vt->pid, PIDTYPE_PID);
	id = task ? READ_ONCE(task->self_exec_id) : vt->allowed_exec_id;
	if (id == vt->allowed_exec_id) {
		rcu_read_unlock();
		return true;
	}
	/*
	 * The count moves early in begin_new_exec(); the dumpability and the
	 * auxiliary vector are final once in_execve is clear again.  Read in
	 * that order: x86 (the only architecture, compat.h) keeps exec's
	 * stores in order, and smp_rmb() our loads.  An exec still running
	 * is judged at a later call; its window is published as any exec's.
	 */
	smp_rmb();
	/* A bit-field read without a lock: a stale 1 only defers the judgment. */
	if (data_race(!!task->in_execve)) {
		rcu_read_unlock();
		return true;
	}
	/* in_execve before what the exec wrote before clearing it: see above. */
	smp_rmb();
	/* After the exec, the exec'ing thread leads; any thread with the mm. */
	for_each_thread(task, th) {
		mm = get_task_mm(th);
		if (mm) {
			dumpable = daptrace_task_exec_state_get_dumpable(th, mm);
			break;
		}
	}
	rcu_read_unlock();
	if (!mm)
		return true;	/* exited: target_valid() says so */
	allowed = dumpable == TASK_DUMPABLE_OWNER && !daptrace_va_secureexec(mm);
	mmput(mm);
	/*
	 * Another exec after the count was read is judged again: the count
	 * recorded is the one read first.
	 */
	if (allowed)
		vt->allowed_exec_id = id;
	return allowed;
}

/*
 * Memory maps: the "three regions".
 */

/*
 * Compute the ranges to monitor in @mm, the way DAMON does: a process's
 * mappings form three clusters (text/data/heap, the mmap area, the stack)
 * separated by two huge unmapped gaps, which daptrace_layout_ranges() cuts
 * out.  Every VMA counts, also those whose samples cannot be observed (PFN
 * and I/O mappings): they belong to the layout.
 *
 * The VMAs stream through daptrace_layout_add(), so nothing is allocated
 * whatever the map's size, and the walk yields the lock, as the sampling
 * passes do, every DAPTRACE_VA_BATCH mappings that a writer waits or the
 * scheduler wants the CPU, then goes on from where it was: the result may
 * then mix the map before and after the writer's change, which the next
 * update corrects.  The lock is only ever tried.  Also finds the largest
 * page size of the target's hugetlb mappings (@block_shift): see
 * daptrace_va_stop().
 *
 * Return: the number of ranges in @out (0 if nothing is mapped), or -EBUSY
 * if a writer held or awaited mmap_lock.
 */
static int daptrace_va_ranges(struct mm_struct *mm,
			      struct daptrace_addr_range out[DAPTRACE_OPS_MAX_RANGES],
			      unsigned int *block_shift)
{
	struct daptrace_layout layout;
	struct vm_area_struct *vma;
	unsigned long addr = 0;
	unsigned int n = 0;
	bool more;

	BUILD_BUG_ON(DAPTRACE_OPS_MAX_RANGES != 3);
	daptrace_layout_init(&layout);
	*block_shift = PMD_SHIFT;
	/* Never wait for a writer: the next update tries again. */
	if (!mmap_read_trylock(mm))
		return -EBUSY;
	do {
		VMA_ITERATOR(vmi, mm, addr);

		more = false;
		for_each_vma(vmi, vma) {
			/* A VMA that grew down across @addr while we yielded. */
			daptrace_layout_add(&layout, max(vma->vm_start, addr),
					    vma->vm_end);
			addr = vma->vm_end;
			if (is_vm_hugetlb_page(vma))
				*block_shift = max(*block_shift,
						   huge_page_shift(hstate_vma(vma)));
			if (!(++n % DAPTRACE_VA_BATCH) &&
			    (mmap_lock_is_contended(mm) || need_resched())) {
				more = true;
				break;
			}
		}
		if (more) {
			mmap_read_unlock(mm);
			cond_resched();
			if (!mmap_read_trylock(mm))
				return -EBUSY;
		}
	} while (more);
	mmap_read_unlock(mm);
	return daptrace_layout_ranges(&layout, out);
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
		/* A new run: every target is asked at its first check. */
		vt->idle = false;
		vt->skipped = 0;
		vt->maps_runtime = DAPTRACE_VA_RAN;
		/* The last run's observation was handed back when it stopped. */
		vt->upper_armed = false;
		vt->upper_nr_owed = 0;
		/* Before our pin, which would read as another user of the mm. */
		runtime = daptrace_va_runtime(vt);
		mm = daptrace_va_target_mm(t);
		if (!mm)
			continue;
		nr = daptrace_va_ranges(mm, ranges, &vt->block_shift);
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
		nr = daptrace_va_ranges(mm, ranges, &vt->block_shift);
		mmput_async(mm);
		if (nr < 0)
			continue;
		/* The same map: its regions, samples and quiet windows stay. */
		if (daptrace_regions_fit(ctx, t, ranges, nr)) {
			vt->maps_runtime = runtime;
			continue;
		}
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
	unsigned long block = s->ar.start >> vt->block_shift;

	first = list_first_entry(&t->regions, struct daptrace_region, list);
	while (s != first) {
		prev = list_prev_entry(s, list);
		if ((prev->ar.end - 1) >> vt->block_shift < block ||
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
 * Regions from @r up to @stop (circular, @stop excluded) whose pending check
 * a checking pass did not make (the mmap lock was busy, or a later pass
 * takes it: daptrace_va_stop()): unobserved, not "not accessed".  The
 * check made later covers the intervals in between, as one.
 */
static void daptrace_va_unobserved_from(struct daptrace_target *t,
					struct daptrace_region *r,
					struct daptrace_region *stop)
{
	while (r != stop) {
		daptrace_account_unobserved(r);
		r = daptrace_va_after(t, r);
	}
}

/*
 * A target whose mm has MMU notifiers shares it with a secondary MMU (KVM's
 * guest memory, VFIO, SVA devices): accesses through it set no accessed bit
 * in the process's page tables, and the module cannot ask it (its
 * clear_young/test_young are not exported).  Every check of such a target
 * is unobserved, and the walk is skipped; what was prepared before is
 * forgotten, so that, should the notifiers go, a pass prepares before it
 * checks.  Cached in @t->unobservable for the windows in which the target
 * does not run (daptrace_repeat_idle()).  Returns true if so.
 */
static bool daptrace_va_unobservable(struct daptrace_target *t,
				     struct daptrace_va_target *vt,
				     struct mm_struct *mm, bool check)
{
	struct daptrace_region *r;

	t->unobservable = mm_has_notifiers(mm);
	if (!t->unobservable)
		return false;
	if (check)
		daptrace_for_each_region(r, t)
			daptrace_account_unobserved(r);
	daptrace_va_set_unprepared(vt, 0, ULONG_MAX);
	vt->resume = 0;
	return true;
}

/*
 * Accuracy probes: page-level truth for a few pages per window
 * (daptrace_probes_pick(), worker.c), read through the same accessed bits
 * that the regions' samples use.  A probe's bit is cleared at the start of
 * the window and read at its end; it must neither lose what it should see
 * nor make a region's check lose what that should see, although both clear
 * and read the same bits, and one bit may serve both: the same page, or
 * one huge pmd (or hugetlb pud) mapping both addresses.  Two rules do it:
 *
 *  1. Every clear the module makes during the window hands what it
 *     erased to the probes the entry covers (daptrace_va_probe_hit()): a
 *     region's prepare that finds the bit set clears it (and so would hide
 *     the access from the probe's check at the end of the window) and
 *     marks every probe in the block the entry maps as accessed.  The bit
 *     was set, so the block was accessed since the last clear, and the
 *     last clear was the probe's own or a later one, all within the
 *     window.  A prepare that finds the bit clear changes nothing.  Region
 *     checks and probe checks only read.
 *
 *  2. A probe's clear must not erase an access that a region's pending
 *     check will read.  The probes are cleared at the start of the window:
 *     after the aggregation's check-only pass read every observed sample,
 *     and before the prepare pass that picks and clears the new samples
 *     (worker.c).  At that moment no region holds a sample still to be
 *     checked, except those of a quiet target (&daptrace_target.quiet),
 *     which the prepare pass may skip, keeping their samples for the next
 *     check.  So on a quiet target a probe whose entry also holds a
 *     region's pending sample is not cleared: it inherits that sample's
 *     clear, made earlier while the target did not run (it would have been
 *     walked otherwise), so nothing the window did is lost, and the probe
 *     reads the same bit as the region.  Which regions share the entry is
 *     known only from the walk (a THP block may hold many small regions):
 *     a read-only walk finds the entry's size first, then the regions
 *     overlapping that block are looked at, at most
 *     DAPTRACE_VA_PROBE_SCAN of them; a probe with more is unobserved.
 *     (A collapse between the two walks can make the entry larger than
 *     found: then a region's sample a little further may lose an access
 *     of that instant.)
 *
 * The TLB: a probe's truth must not be blind where the regions are (with
 * tlb_flush=none, it is what the probes are meant to measure), so after
 * the probe clears (whether or not they found a bit set: see
 * daptrace_va_probe_prepare_target()) the target's TLB entries are flushed
 * by the policy given (the worker passes mm or round whatever tlb_flush
 * says, see worker.c).  When that is the policy of the prepare pass that
 * follows at once (@shared), the flush that pass makes after its own
 * clears in the target serves the probes too: one flush a window fewer.
 * The probes' clears then wait for it until the pass is done with that
 * target, the passes over the targets before it included (under round,
 * the whole pass), as the regions' first clears do; where the pass clears
 * nothing in the target, the probes' flush follows its turn there
 * (daptrace_va_sample()).  Otherwise (tlb_flush=none) the probes flush
 * before the pass, so its clears follow without a flush, and translations
 * cached again in between stay as blind as before: the one flush per
 * window changes little of what is measured.
 * A bit one of rule 1's prepares cleared without a flush can hide later
 * accesses to the probe, but the probe is then already marked accessed.
 */
#define DAPTRACE_VA_PROBE_SCAN	16

/* The first of @vt's probes at or above @addr (binary search). */
static unsigned int daptrace_va_probe_from(const struct daptrace_ctx *ctx,
					   const struct daptrace_va_target *vt,
					   unsigned long addr)
{
	unsigned int lo = vt->probe_first, hi = vt->probe_first + vt->probe_nr;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (ctx->probes[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Rule 1: a clear of the entry at @addr, of size 1 << @shift, found it set. */
static void daptrace_va_probe_hit(struct daptrace_ctx *ctx,
				  const struct daptrace_va_target *vt,
				  unsigned long addr, unsigned int shift)
{
	unsigned long block = addr & ~((1UL << shift) - 1);
	unsigned int i, end = vt->probe_first + vt->probe_nr;

	if (!vt->probe_nr)
		return;
	for (i = daptrace_va_probe_from(ctx, vt, block);
	     i < end && ctx->probes[i].addr - block < (1UL << shift); i++)
		if (ctx->probes[i].seen == DAPTRACE_PROBE_OLD)
			ctx->probes[i].seen = DAPTRACE_PROBE_YOUNG;
}

/*
 * Rule 2: does a region of quiet @t hold a sample, still to be checked, in
 * the block of 1 << @shift bytes around probe @p?  -1 if more regions than
 * DAPTRACE_VA_PROBE_SCAN overlap the block.
 */
static int daptrace_va_probe_shared(struct daptrace_target *t,
				    const struct daptrace_va_target *vt,
				    const struct daptrace_probe *p,
				    unsigned int shift)
{
	unsigned long block = p->addr & ~((1UL << shift) - 1);
	unsigned long last = block + (1UL << shift) - 1;
	struct daptrace_region *r = p->r;
	unsigned int n = 0;

	/* The first region overlapping the block. */
	while (!list_is_first(&r->list, &t->regions) &&
	       list_prev_entry(r, list)->ar.end > block) {
		r = list_prev_entry(r, list);
		if (++n > DAPTRACE_VA_PROBE_SCAN)
			return -1;
	}
	for (n = 0; &r->list != &t->regions && r->ar.start <= last;
	     r = list_next_entry(r, list)) {
		if (++n > DAPTRACE_VA_PROBE_SCAN)
			return -1;
		if (!daptrace_va_unprepared_region(vt, r) &&
		    r->sampling_addr - block <= last - block)
			return 1;
	}
	return 0;
}

/*
 * Mark the probe candidates that lie in no VMA (daptrace_probes_select()):
 * one lookup each, cached across the sorted candidates of a target.  A
 * target whose mm is gone or whose mmap_lock is busy keeps its candidates;
 * the prepare that follows finds the same and makes them unobserved.
 */
static void daptrace_va_probe_map(struct daptrace_ctx *ctx)
{
	struct daptrace_target *t = NULL;
	struct vm_area_struct *vma = NULL;
	struct mm_struct *mm = NULL;
	unsigned int i;

	for (i = 0; i < ctx->nr_probes; i++) {
		struct daptrace_probe *p = &ctx->probes[i];

		if (p->t != t) {
			if (mm) {
				mmap_read_unlock(mm);
				mmput_async(mm);
			}
			t = p->t;
			vma = NULL;
			mm = daptrace_va_target_mm(t);
			if (mm && !mmap_read_trylock(mm)) {
				mmput_async(mm);
				mm = NULL;
			}
		}
		if (mm && !daptrace_va_vma(mm, &vma, p->addr))
			p->seen = DAPTRACE_PROBE_UNMAPPED;
	}
	if (mm) {
		mmap_read_unlock(mm);
		mmput_async(mm);
	}
}

/*
 * Clear the bits of @t's probes [@first, @first + @nr); see above.  A
 * flush follows (or, with @shared, is left owed in
 * &daptrace_va_target.probe_flush) whenever a probe was walked, not only
 * when a bit was found set: a bit found clear may have been cleared
 * without a flush (by our own prepares under tlb_flush=none, or by MGLRU's
 * aging walk, which does not flush either) while a translation with it set
 * is still cached, and then the probe would be as blind as the regions it
 * is meant to judge.  (The first VM run of accuracy_estimate's tlb_none
 * case had exactly that: hot THPs whose pmd bit the regions' prepares had
 * cleared, probes reading them as not accessed, and an estimate of 0.99
 * against a truth of 0.65.)
 */
static void daptrace_va_probe_prepare_target(struct daptrace_ctx *ctx,
					     struct daptrace_target *t,
					     unsigned int first, unsigned int nr,
					     enum daptrace_tlb_policy tlb, bool shared,
					     unsigned int *nr_walked)
{
	struct daptrace_va_target *vt = t->priv;
	struct vm_area_struct *vma = NULL;
	struct daptrace_walk_page pg;
	struct mm_struct *mm;
	unsigned int i, shift, walked = 0;

	vt->probe_first = first;
	vt->probe_nr = nr;
	mm = daptrace_va_target_mm(t);
	if (!mm || t->unobservable || !mmap_read_trylock(mm)) {
		for (i = first; i < first + nr; i++)
			ctx->probes[i].seen = DAPTRACE_PROBE_UNOBSERVED;
		if (mm)
			mmput_async(mm);
		return;
	}
	for (i = first; i < first + nr; i++) {
		struct daptrace_probe *p = &ctx->probes[i];

		if (!daptrace_va_vma(mm, &vma, p->addr))
			continue;	/* unmapped: a fault maps it young */
		if (t->quiet) {
			int shared;

			if (daptrace_walk_check(mm, vma, p->addr, 0, false, &pg) ==
			    DAPTRACE_WALK_UNOBSERVED) {
				p->seen = DAPTRACE_PROBE_UNOBSERVED;
				continue;
			}
			shared = daptrace_va_probe_shared(t, vt, p, pg.shift);
			if (shared) {
				if (shared < 0)
					p->seen = DAPTRACE_PROBE_UNOBSERVED;
				continue;
			}
		}
		if (!daptrace_walk_observable(vma, p->addr)) {
			p->seen = DAPTRACE_PROBE_UNOBSERVED;
			continue;
		}
		daptrace_walk_prepare(mm, vma, p->addr, &p->state, &shift);
		walked++;
	}
	mmap_read_unlock(mm);
	if (walked && shared)
		vt->probe_flush = tlb;
	else if (walked)
		daptrace_tlb_flush_mm(mm, tlb);
	*nr_walked += walked;
	mmput_async(mm);
}

/*
 * At the start of a window, after daptrace_probes_pick() and before the
 * prepare pass: clear the probes' bits, and flush by @tlb (mm or round),
 * or with @shared leave the flush to that pass (see above).
 */
static void daptrace_va_probe_prepare(struct daptrace_ctx *ctx,
				      enum daptrace_tlb_policy tlb, bool shared)
{
	struct daptrace_target *t;
	unsigned int i = 0, first, walked = 0;

	daptrace_for_each_target(t, ctx) {
		struct daptrace_va_target *vt = t->priv;

		vt->probe_nr = 0;
		if (t->exited || i >= ctx->nr_probes || ctx->probes[i].t != t)
			continue;
		for (first = i; i < ctx->nr_probes && ctx->probes[i].t == t; i++)
			;
		daptrace_va_probe_prepare_target(ctx, t, first, i - first, tlb,
						 shared, &walked);
	}
	if (tlb == DAPTRACE_TLB_ROUND && walked && !shared)
		daptrace_tlb_flush_round();
}

/*
 * At the end of a window, after its last checks: read the probes' bits.
 * Only reads, so no region's sample is disturbed.  A probe of a target
 * that exited, exec()ed (its addresses name another image now) or whose
 * mmap_lock is busy is unobserved.
 */
static void daptrace_va_probe_check(struct daptrace_ctx *ctx)
{
	struct daptrace_target *t;

	daptrace_for_each_target(t, ctx) {
		struct daptrace_va_target *vt = t->priv;
		struct vm_area_struct *vma = NULL;
		struct daptrace_walk_page pg;
		struct mm_struct *mm;
		unsigned int i, end = vt->probe_first + vt->probe_nr;
		bool ok;

		if (!vt->probe_nr)
			continue;
		vt->probe_nr = 0;
		mm = t->exited ? NULL : daptrace_va_target_mm(t);
		ok = mm && !t->unobservable &&
		     daptrace_va_target_exec_id(t) == t->exec_id &&
		     mmap_read_trylock(mm);
		for (i = vt->probe_first; i < end; i++) {
			struct daptrace_probe *p = &ctx->probes[i];

			if (p->seen == DAPTRACE_PROBE_UNOBSERVED)
				continue;
			if (!ok) {
				p->seen = DAPTRACE_PROBE_UNOBSERVED;
				continue;
			}
			if (p->seen == DAPTRACE_PROBE_YOUNG ||
			    !daptrace_va_vma(mm, &vma, p->addr))
				continue;
			switch (daptrace_walk_check(mm, vma, p->addr, p->state,
						    false, &pg)) {
			case DAPTRACE_WALK_YOUNG:
				p->seen = DAPTRACE_PROBE_YOUNG;
				break;
			case DAPTRACE_WALK_UNOBSERVED:
				p->seen = DAPTRACE_PROBE_UNOBSERVED;
				break;
			default:
				break;
			}
		}
		if (ok)
			mmap_read_unlock(mm);
		if (mm)
			mmput_async(mm);
	}
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
 * check the rest, whose samples are still pending.  A check not made, for
 * any of these reasons, counts as unobserved (daptrace_account_unobserved()),
 * never as "not accessed": the sample still pending covers its interval,
 * and the intervals goal leaves it out of its measure.  When a writer
 * waits or the scheduler wants the CPU, the lock is dropped for a moment
 * every DAPTRACE_VA_BATCH regions, so thousands of regions never stall the
 * target; but not for the first DAPTRACE_VA_HOLD_BATCHES batches, nor the
 * first DAPTRACE_VA_HOLD_NS, of the pass after one cut short that way,
 * which makes the writer (and on 6.1 every page fault of the target, queued
 * behind it) wait that long at most, and defers a resched as long: else a
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
				      struct daptrace_sample_stats *st,
				      bool poll)
{
	struct daptrace_va_target *vt = t->priv;
	bool check = what & DAPTRACE_SAMPLE_CHECK;
	bool prepare = what & DAPTRACE_SAMPLE_PREPARE;
	struct vm_area_struct *vma = NULL, *pvma = NULL;
	struct daptrace_region *r, *p, *s, *stop, *after;
	struct daptrace_walk_page pg;
	enum daptrace_walk_seen seen;
	unsigned long addr, next;
	struct mm_struct *mm;
	unsigned int n = 0, np = 0, hold, shift, aged = 0;
	u64 hold_until = 0;
	bool young, checked = false;

	/*
	 * Before the walk: a run during it must show next time.  An idle
	 * target's checks all read "not accessed" and its prepared bits are
	 * still clear.  A prepare-only pass (after aggregation replaced
	 * regions) must walk, unless the aggregation left the regions of a
	 * quiet target as they were and it has not run since.
	 */
	if (!check && t->quiet && !daptrace_va_unprepared(vt) && !vt->fresh) {
		if (!daptrace_va_ran(vt)) {
			st->nr_idle++;
			return;
		}
		/*
		 * It ran since the window's last check asked (the prepare
		 * below clears only what that check saw, or what was never
		 * set): the next check asks, not only in its turn.
		 */
		vt->idle = false;
	}
	if (check) {
		bool ran;

		/* Not its turn to be asked: still idle (see daptrace_va_sample()). */
		if (vt->idle && !poll && !vt->fresh) {
			st->nr_idle++;
			daptrace_repeat_idle(t, 1);
			vt->skipped++;
			return;
		}
		ran = daptrace_va_ran(vt);
		/* It may have run in any check skipped since the last ask. */
		if (ran && vt->skipped && !t->unobservable)
			daptrace_repeat_unobserved(t, vt->skipped);
		vt->skipped = 0;
		vt->idle = !ran;
		if (!ran && !vt->fresh) {
			st->nr_idle++;
			daptrace_repeat_idle(t, 1);
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
	if (daptrace_va_unobservable(t, vt, mm, check)) {
		mmput_async(mm);
		return;
	}
	if (!mmap_read_trylock(mm))
		goto busy;

	vt->nr_cleared = 0;
	hold = vt->cut ? DAPTRACE_VA_HOLD_BATCHES : 0;
	if (hold)
		hold_until = ktime_get_ns() + DAPTRACE_VA_HOLD_NS;
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
			if (hold && ktime_get_ns() < hold_until) {
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
			pg.pfn = DAPTRACE_NO_PFN;
			pg.nid = -1;
			seen = DAPTRACE_WALK_OLD;
			if (daptrace_va_vma(mm, &vma, addr)) {
				seen = daptrace_walk_check(mm, vma, addr,
							   r->sample_state,
							   placement, &pg);
				aged += pg.aged;
			}
			if (seen == DAPTRACE_WALK_UNOBSERVED) {
				daptrace_account_unobserved(r);
			} else {
				young = seen == DAPTRACE_WALK_YOUNG;
				daptrace_account_access(r, young);
				st->nr_young += young;
				/* Off: sample_pfn stays DAPTRACE_NO_PFN. */
				if (placement) {
					r->sample_pfn = pg.pfn;
					r->sample_nid = pg.nid;
					r->sample_huge = pg.pfn != DAPTRACE_NO_PFN &&
							 pg.shift > PAGE_SHIFT;
					daptrace_account_placement(r, pg.nid);
				}
			}
			checked = true;
		} else if (check) {
			/* No prepared sample: nothing to check. */
			daptrace_account_unobserved(r);
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
		       (p->ar.end - 1) >> vt->block_shift < next >> vt->block_shift) {
			bool in_span = daptrace_va_unprepared_region(vt, p);

			daptrace_pick_sampling_addr(ctx, p);
			addr = p->sampling_addr;
			p->sample_state = 0;
			if (daptrace_va_vma(mm, &pvma, addr) &&
			    daptrace_walk_prepare(mm, pvma, addr, &p->sample_state,
						  &shift)) {
				vt->nr_cleared++;
				daptrace_va_probe_hit(ctx, vt, addr, shift);
			}
			np++;
			p = daptrace_va_after(t, p);
			/* The span led the pass: past it, all is prepared. */
			if (in_span && !daptrace_va_unprepared_region(vt, p))
				daptrace_va_set_unprepared(vt, 0, 0);
		}
		r = after;
	} while (r != stop);
	/* The next pass goes on with the regions this one did not visit. */
	if (check && prepare) {
		vt->resume = stop == s ? 0 : stop->ar.start;
		daptrace_va_unobserved_from(t, stop, s);
	}
unlock:
	mmap_read_unlock(mm);
	if (prepare)
		daptrace_va_set_unprepared(vt, 0, 0);
	/* After a prepare-only walk, the regions may have changed: see @fresh. */
	vt->fresh = !check && placement;
	goto flush;

busy_flush:
	/* From @r on, this pass checked nothing. */
	if (check)
		daptrace_va_unobserved_from(t, r, stop);
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
	st->nr_aged += aged;
	/* MGLRU aged, clearing bits as we do, with no flush: see walk.h. */
	if (vt->nr_cleared || aged) {
		daptrace_tlb_flush_mm(mm, tlb);
		/* the probes' flush, if owed by this policy, is this one */
		if (vt->probe_flush == tlb)
			vt->probe_flush = DAPTRACE_TLB_NONE;
	}
	mmput_async(mm);
	return;
busy:
	st->nr_busy++;
	/* No check was made: none of them saw "not accessed". */
	if (check)
		daptrace_for_each_region(r, t)
			daptrace_account_unobserved(r);
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

/*
 * Make the flush the probes' prepare left owed in @t, if any (the target's
 * pass cleared nothing, so it made none: see &daptrace_va_target.
 * probe_flush), and count its time in @st: it is the probes' alone.
 * Return: true if it was by round, whose flush of every CPU the caller then
 * owes.
 */
static bool daptrace_va_probe_flush(struct daptrace_target *t,
				    struct daptrace_sample_stats *st)
{
	struct daptrace_va_target *vt = t->priv;
	enum daptrace_tlb_policy tlb = vt->probe_flush;
	struct mm_struct *mm;
	u64 t0;

	if (tlb == DAPTRACE_TLB_NONE)
		return false;
	vt->probe_flush = DAPTRACE_TLB_NONE;
	mm = daptrace_va_target_mm(t);
	if (!mm)
		return false;	/* exited: nothing left to flush for */
	t0 = ktime_get_ns();
	daptrace_tlb_flush_mm(mm, tlb);
	st->probe_flush_ns += ktime_get_ns() - t0;
	mmput_async(mm);
	return tlb == DAPTRACE_TLB_ROUND;
}

/*
 * With many targets, most of them idle (a whole machine, a build's waiting
 * processes), asking each whether it ran would cost every sampling pass as
 * much as the targets are many.  So a target found idle is asked again
 * only every @stride passes, its turn coming round with the pass count,
 * and in the last pass of every window (the checking one before the
 * aggregation): DAPTRACE_VA_IDLE_POLLS targets per pass whatever their
 * number, plus all of them once per window; with that many targets or
 * fewer every one is asked every pass.  Meanwhile its checks read "not
 * accessed", as an idle target's do, until an ask finds that it ran: then
 * those skipped since the last ask are unobserved instead (it may have
 * woken in any of them, &daptrace_va_target.skipped), and the one check
 * made then shows what it accessed since it woke (its prepared bits were
 * not cleared in between).  So a waking target is measured from the first
 * ask after it woke: at most @stride - 1 passes, and never later than the
 * end of the window it woke in (at 4096 targets, 64 passes: more than
 * three default windows), and nothing it did before is read as cold.
 */
static void daptrace_va_sample(struct daptrace_ctx *ctx, unsigned int what,
			       enum daptrace_tlb_policy tlb,
			       struct daptrace_sample_stats *st)
{
	unsigned int cleared = st->nr_cleared, aged = st->nr_aged, i = 0;
	unsigned int stride = DIV_ROUND_UP(ctx->nr_targets, DAPTRACE_VA_IDLE_POLLS);
	/* Checking only: the window's last pass, which asks every target. */
	bool all = stride <= 1 || !(what & DAPTRACE_SAMPLE_PREPARE);
	struct daptrace_target *t;
	bool round = false;

	daptrace_for_each_target(t, ctx) {
		if (!t->exited)
			daptrace_va_sample_target(ctx, t, what, tlb, st,
						  all ||
						  (i + ctx->nr_passes) % stride == 0);
		/* the probes' flush, owed and not made by the pass: now */
		round |= daptrace_va_probe_flush(t, st);
		i++;
	}
	if ((tlb == DAPTRACE_TLB_ROUND &&
	     (st->nr_cleared != cleared || st->nr_aged != aged)) || round)
		daptrace_tlb_flush_round();
}

/*
 * The upper-level scan (upper.c): regions at least this large are observed
 * through the accessed bits of their non-leaf entries.  Smaller ones are
 * left to their samples: a 2 MiB chunk is at least 1/16 of such a region,
 * which a window's samples find.  The budget bounds the page-table entries
 * read per aggregation boundary, all targets together (about 128 GiB of
 * populated 2 MiB chunks, or the pud entries of 64 TiB of sparse span).
 */
#define DAPTRACE_VA_UPPER_MIN_SZ	(16 * PMD_SIZE)
#define DAPTRACE_VA_UPPER_BUDGET	65536UL

static bool daptrace_va_upper_region(const struct daptrace_region *r)
{
	return daptrace_sz_region(r) >= DAPTRACE_VA_UPPER_MIN_SZ;
}

static unsigned int daptrace_va_upper_regions(struct daptrace_target *t)
{
	struct daptrace_region *r;
	unsigned int n = 0;

	daptrace_for_each_region(r, t)
		n += daptrace_va_upper_region(r);
	return n;
}

/*
 * Arm (@arm) or collect region @r, over the observable VMAs in it; a part
 * that is not observable leaves the region uncovered.  Under mmap_read_lock.
 */
static void daptrace_va_upper_walk(struct mm_struct *mm,
				   const struct daptrace_region *r, bool arm,
				   struct daptrace_upper_walk *w)
{
	VMA_ITERATOR(vmi, mm, r->ar.start);
	struct vm_area_struct *vma;
	unsigned long s, e;

	for_each_vma(vmi, vma) {
		if (vma->vm_start >= r->ar.end)
			break;
		if (!daptrace_upper_observable(vma)) {
			w->uncovered = true;
			continue;
		}
		s = max(vma->vm_start, r->ar.start);
		e = min(vma->vm_end, r->ar.end);
		if (arm)
			daptrace_upper_arm(mm, s, e, w);
		else
			daptrace_upper_collect(mm, s, e, w);
	}
}

/*
 * Collect: cut each large region at the runs found touched, within the
 * room max_nr_regions leaves (*@nr regions so far of the targets that
 * count against it, daptrace_nr_budgeted()).
 */
static void daptrace_va_upper_collect(struct daptrace_ctx *ctx,
				      struct daptrace_target *t,
				      struct mm_struct *mm, unsigned int *nr,
				      struct daptrace_upper_walk *w,
				      struct daptrace_upper_stats *st)
{
	struct daptrace_addr_range runs[DAPTRACE_MAX_TOUCHED_RUNS];
	unsigned long max_nr = ctx->attrs.max_nr_regions;
	struct daptrace_region *r, *next;
	unsigned int added;

	daptrace_for_each_region_safe(r, next, t) {
		if (!daptrace_va_upper_region(r))
			continue;
		w->runs = runs;
		w->nr_runs = 0;
		w->uncovered = false;
		daptrace_va_upper_walk(mm, r, false, w);
		st->nr_uncovered += w->uncovered;
		/* the pieces go between @r and @next */
		added = daptrace_split_touched(ctx, t, r, runs, w->nr_runs,
					       *nr < max_nr ? max_nr - *nr : 0);
		*nr += added;
		st->nr_cuts += added;
		/* Cut: its new regions must be prepared (&daptrace_target.quiet). */
		if (added)
			t->quiet = false;
	}
}

/*
 * The scan of one target: arm it, or collect and hand back what its arm
 * took.  A target the scan cannot walk now (busy mmap_lock, a secondary
 * MMU), or need not (quiet since its arm), keeps its state: a collect put
 * off observes a longer span (more reads touched, nothing less), and what
 * an arm owes stays owed.
 */
static void daptrace_va_upper_target(struct daptrace_ctx *ctx,
				     struct daptrace_target *t,
				     enum daptrace_tlb_policy tlb, bool stop,
				     unsigned long *budget, unsigned int *nr,
				     struct daptrace_upper_stats *st)
{
	struct daptrace_va_target *vt = t->priv;
	struct daptrace_upper_walk w = { .budget = *budget };
	bool arm = !vt->upper_armed;
	struct daptrace_region *r;
	struct mm_struct *mm;

	if (arm && (stop || tlb == DAPTRACE_TLB_NONE)) {
		/* "none": upper-level bits would lie (upper.c, "The TLB") */
		if (!stop)
			st->nr_uncovered += daptrace_va_upper_regions(t);
		return;
	}
	/* It did not run since the arm: collected later (upper.c, "Sleep"). */
	if (!arm && !stop && t->quiet)
		return;
	mm = daptrace_va_target_mm(t);
	if (!mm) {
		/* exited: its tables, and what they owe, are gone */
		vt->upper_armed = false;
		vt->upper_nr_owed = 0;
		return;
	}
	if (mm_has_notifiers(mm) || !mmap_read_trylock(mm)) {
		if (!stop)
			st->nr_uncovered += daptrace_va_upper_regions(t);
		mmput_async(mm);
		return;
	}
	if (arm) {
		w.owed = vt->upper_owed;
		daptrace_for_each_region(r, t) {
			if (!daptrace_va_upper_region(r))
				continue;
			w.uncovered = false;
			daptrace_va_upper_walk(mm, r, true, &w);
			st->nr_uncovered += w.uncovered;
		}
		vt->upper_nr_owed = w.nr_owed;
		vt->upper_exec_id = t->exec_id;
		vt->upper_armed = true;
	} else {
		/* After an exec, the new image's tables owe nothing. */
		if (t->exec_id == vt->upper_exec_id) {
			if (!stop)
				daptrace_va_upper_collect(ctx, t, mm, nr, &w, st);
			daptrace_upper_hand_back(mm, vt->upper_owed,
						 vt->upper_nr_owed, &w);
		}
		vt->upper_nr_owed = 0;
		vt->upper_armed = false;
	}
	mmap_read_unlock(mm);
	/* The arm's clears mean nothing until the TLB forgets them (upper.c). */
	if (w.nr_cleared)
		daptrace_tlb_flush_mm(mm, tlb);
	mmput_async(mm);
	st->entries += w.entries;
	st->nr_cleared += w.nr_cleared;
	*budget = w.budget;
}

/*
 * The upper-level scan of every target (&daptrace_ops.upper).  Targets
 * take turns in the budget by the boundary they are armed at: each arms,
 * collects and rests in a cycle of its own, and the budget is shared in
 * list order.
 */
static void daptrace_va_upper(struct daptrace_ctx *ctx,
			      enum daptrace_tlb_policy tlb, bool stop,
			      struct daptrace_upper_stats *st)
{
	unsigned long budget = DAPTRACE_VA_UPPER_BUDGET;
	/* the room is of the regions that count: daptrace_merge_regions() */
	unsigned int nr = daptrace_nr_budgeted(ctx);
	unsigned int cleared = st->nr_cleared;
	struct daptrace_target *t;

	daptrace_for_each_target(t, ctx)
		if (!t->exited)
			daptrace_va_upper_target(ctx, t, tlb, stop, &budget, &nr, st);
	if (tlb == DAPTRACE_TLB_ROUND && st->nr_cleared != cleared)
		daptrace_tlb_flush_round();
}

/*
 * A target removed while monitoring: hand back what its arm owes reclaim
 * now (a sleeping target stays armed: upper.c, "Sleep"), as the scan does
 * for every target when monitoring ends.
 */
static void daptrace_va_upper_leave(struct daptrace_ctx *ctx,
				    struct daptrace_target *t,
				    enum daptrace_tlb_policy tlb)
{
	struct daptrace_upper_stats st = {};
	unsigned long budget = DAPTRACE_VA_UPPER_BUDGET;
	unsigned int nr = 0;

	daptrace_va_upper_target(ctx, t, tlb, true, &budget, &nr, &st);
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
	.target_allowed		= daptrace_va_target_allowed,
	.target_same		= daptrace_va_target_same,
	.window_idle		= daptrace_va_window_idle,
	.probe_map		= daptrace_va_probe_map,
	.probe_prepare		= daptrace_va_probe_prepare,
	.probe_check		= daptrace_va_probe_check,
	.upper			= daptrace_va_upper,
	.upper_leave		= daptrace_va_upper_leave,
};
