/* SPDX-License-Identifier: GPL-2.0 */
/*
 * daptrace operations: everything that touches a real address space, behind a
 * table of callbacks so other sources (physical memory, fault sampling) can be
 * added without touching the core or the worker.
 *
 * All callbacks run on the worker thread, which owns the context's targets and
 * regions while monitoring is on; they may sleep unless stated otherwise.
 */
#ifndef _DAPTRACE_OPS_H
#define _DAPTRACE_OPS_H

#include "core.h"

struct pid;

/**
 * enum daptrace_tlb_policy - what to do about cached translations after
 * clearing accessed bits.
 * @DAPTRACE_TLB_NONE:	Nothing (DAMON's behaviour).  A translation still
 *			cached in a TLB never sets the bit again, so a small
 *			hot set can read as cold.
 * @DAPTRACE_TLB_ROUND:	Flush every CPU's TLB after a round that cleared
 *			any bit.
 * @DAPTRACE_TLB_MM:	Per target that had bits cleared: bump its mm's TLB
 *			generation and flush only the CPUs in its
 *			mm_cpumask (see vaddr.c).
 */
enum daptrace_tlb_policy {
	DAPTRACE_TLB_NONE,
	DAPTRACE_TLB_ROUND,
	DAPTRACE_TLB_MM,
	NR_DAPTRACE_TLB_POLICIES,
};

/*
 * Address ranges an ops' memory map of a target has at most.  Merges never
 * cross them, so a target keeps one region per range whatever
 * max_nr_regions says.
 */
#define DAPTRACE_OPS_MAX_RANGES	3

/* What one sampling pass does; see &daptrace_ops.sample. */
#define DAPTRACE_SAMPLE_CHECK	0x1
#define DAPTRACE_SAMPLE_PREPARE	0x2

/**
 * struct daptrace_sample_stats - what one sampling pass did, all targets.
 * @nr_young:	Regions found accessed.
 * @nr_cleared:	Accessed bits cleared.
 * @nr_aged:	Checks that found MGLRU aged their page's memory since
 *		prepare, clearing accessed bits without a TLB flush: their
 *		target is flushed as if the pass had cleared bits there.
 * @nr_busy:	Targets skipped (wholly or in part) because a writer held or
 *		awaited their mmap_lock; their regions keep their samples
 *		for the next pass.
 * @nr_idle:	Targets whose walk was skipped because none of their threads
 *		ran since the previous pass.
 * @nr_walked:	Targets walked (wholly or in part).
 * @probe_flush_ns: Time spent on flushes made for the probes alone (see
 *		&daptrace_ops.probe_prepare): the pass cleared nothing in
 *		their target, so its flush had nothing else to serve.
 */
struct daptrace_sample_stats {
	unsigned int nr_young;
	unsigned int nr_cleared;
	unsigned int nr_aged;
	unsigned int nr_busy;
	unsigned int nr_idle;
	unsigned int nr_walked;
	u64 probe_flush_ns;
};

/**
 * struct daptrace_upper_stats - what one upper-level scan did, all targets
 * (&daptrace_ops.upper).
 * @entries:	Page-table entries read (pgd, p4d, pud, pmd).
 * @nr_cleared:	Accessed bits of non-leaf entries cleared.
 * @nr_uncovered: Large regions the scan should have observed and did not,
 *		wholly or in part: its budget ran out, the target's
 *		mmap_lock was busy, tlb_flush is "none", or part of the
 *		region is not the scan's to read (hugetlb, PFN or I/O
 *		mappings, a secondary MMU).  Such a region is not cut where
 *		it was not observed; nothing is read as untouched.
 * @nr_cuts:	Regions added by cuts at touched chunks.
 */
struct daptrace_upper_stats {
	u64 entries;
	unsigned int nr_cleared;
	unsigned int nr_uncovered;
	unsigned int nr_cuts;
};

/**
 * struct daptrace_ops - callbacks for one kind of address space.
 * @target_get:		Take what the target, the thread group @pid, needs
 *			(sysfs write context; the caller keeps its reference).
 *			Returns the &daptrace_target.priv value or ERR_PTR:
 *			-ESRCH no such process, -EINVAL kernel thread or no mm.
 * @target_put:		Release what @target_get took.
 * @init:		Build the initial regions of every target.
 * @update:		Re-read the targets' memory maps and adjust regions.
 * @sample:		One pass over every region: with DAPTRACE_SAMPLE_CHECK
 *			test whether the page sampled last was accessed and
 *			account it; with DAPTRACE_SAMPLE_PREPARE pick the
 *			next sampling address and clear its accessed bit;
 *			both in one walk.  Then apply @tlb to what was
 *			cleared, and make the flush @probe_prepare left to
 *			it where it cleared nothing, and add to @stats.
 *			Never blocks on a target's mmap_lock.
 * @target_valid:	False once the target process has exited.
 * @target_exec_id:	Identity of the target's current address space; it
 *			changes when the target exec()s.
 * @target_allowed:	May the target still be watched?  False once it
 *			exec()ed an image that the writer's access check may
 *			no longer admit (vaddr: see
 *			daptrace_va_target_allowed()); sticky for the
 *			caller, which ends the watch ("revoked").
 * @target_same:	Do two target_get() results name the same process?
 * @window_idle:	At the end of an aggregation window: did every check
 *			of the window find that none of the target's threads
 *			had run (so it skipped the walk)?  Starts the next
 *			window's record.  With @sample, the prepare pass that
 *			follows an aggregation may skip a target marked
 *			&daptrace_target.quiet whose threads have not run
 *			since.
 * @probe_map:		At the start of a window, after
 *			daptrace_probes_pick(): mark the candidates where
 *			nothing is mapped DAPTRACE_PROBE_UNMAPPED.  Only
 *			looks (at mappings, not pages); a target it cannot
 *			look at keeps its candidates.
 * @probe_prepare:	At the start of a window, after
 *			daptrace_probes_select() and before the prepare pass:
 *			clear the accessed bits of &daptrace_ctx.probes and
 *			have them flushed by the policy given (never "none"):
 *			with @shared, the @sample pass with PREPARE that must
 *			follow at once, under that same policy, makes the
 *			flush (after its own clears); else it flushes itself.
 *			Mark the probes it cannot clear unobserved.  Until
 *			@probe_check, every clear @sample makes hands what it
 *			erased to the probes it covers.
 * @probe_check:	At the end of the window, after its last check: read
 *			the probes' truth (and stop handing clears to them).
 *			Never clears.
 * @upper:		At an aggregation boundary, after the aggregation and
 *			the map update, before the probes are picked and the
 *			prepare pass: the upper-level scan (vaddr: upper.c).
 *			Every other boundary it arms (clears the non-leaf
 *			accessed bits of the large regions and has them
 *			flushed by @tlb; nothing with "none"), at the next
 *			after a window the target ran in it collects (a quiet
 *			target stays armed), cuts the regions at the chunks
 *			found touched
 *			(daptrace_split_touched()) and hands reclaim back the
 *			bits it took.  With @stop (monitoring ends), it only
 *			hands back what an arm took.  Adds to @stats.
 * @upper_leave:	A target leaves while monitoring (target_remove),
 *			before @target_put: hand back what its arm took, as
 *			@upper with @stop does for all.
 */
struct daptrace_ops {
	void *(*target_get)(struct pid *pid);
	void (*target_put)(void *priv);
	int (*init)(struct daptrace_ctx *ctx);
	void (*update)(struct daptrace_ctx *ctx);
	void (*sample)(struct daptrace_ctx *ctx, unsigned int what,
		       enum daptrace_tlb_policy tlb,
		       struct daptrace_sample_stats *stats);
	bool (*target_valid)(struct daptrace_target *t);
	u64 (*target_exec_id)(struct daptrace_target *t);
	bool (*target_allowed)(struct daptrace_target *t);
	bool (*target_same)(const void *a, const void *b);
	bool (*window_idle)(struct daptrace_target *t);
	void (*probe_map)(struct daptrace_ctx *ctx);
	void (*probe_prepare)(struct daptrace_ctx *ctx,
			      enum daptrace_tlb_policy tlb, bool shared);
	void (*probe_check)(struct daptrace_ctx *ctx);
	void (*upper)(struct daptrace_ctx *ctx, enum daptrace_tlb_policy tlb,
		      bool stop, struct daptrace_upper_stats *stats);
	void (*upper_leave)(struct daptrace_ctx *ctx, struct daptrace_target *t,
			    enum daptrace_tlb_policy tlb);
};

extern const struct daptrace_ops daptrace_vaddr_ops;

#endif /* _DAPTRACE_OPS_H */
