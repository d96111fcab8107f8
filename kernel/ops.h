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

/**
 * enum daptrace_tlb_policy - what to do about cached translations after
 * clearing accessed bits.
 * @DAPTRACE_TLB_NONE:	Nothing (DAMON's behaviour).  A translation still
 *			cached in a TLB never sets the bit again, so a small
 *			hot set can read as cold.
 * @DAPTRACE_TLB_ROUND:	Flush every CPU's TLB once per sampling round.
 * @DAPTRACE_TLB_MM:	Bump each target mm's TLB generation and flush only
 *			the CPUs in the targets' mm_cpumask (see vaddr.c).
 */
enum daptrace_tlb_policy {
	DAPTRACE_TLB_NONE,
	DAPTRACE_TLB_ROUND,
	DAPTRACE_TLB_MM,
	NR_DAPTRACE_TLB_POLICIES,
};

/**
 * struct daptrace_ops - callbacks for one kind of address space.
 * @target_get:		Resolve @pid_nr in the caller's pid namespace and
 *			take what the target needs (sysfs write context).
 *			Returns the &daptrace_target.priv value or ERR_PTR:
 *			-ESRCH no such process, -EINVAL kernel thread or no mm.
 * @target_put:		Release what @target_get took.
 * @init:		Build the initial regions of every target.
 * @update:		Re-read the targets' memory maps and adjust regions.
 * @prepare_access_checks: For every region pick a sampling address and clear
 *			its accessed bit.
 * @check_accesses:	For every region test whether the sampled page was
 *			accessed since prepare; account it.  Returns the
 *			number of regions found accessed.
 * @target_valid:	False once the target process has exited.
 * @target_exec_id:	Identity of the target's current address space; it
 *			changes when the target exec()s.
 * @tlb_flush:		Apply @policy after a prepare round.
 */
struct daptrace_ops {
	void *(*target_get)(int pid_nr);
	void (*target_put)(void *priv);
	int (*init)(struct daptrace_ctx *ctx);
	void (*update)(struct daptrace_ctx *ctx);
	void (*prepare_access_checks)(struct daptrace_ctx *ctx);
	unsigned int (*check_accesses)(struct daptrace_ctx *ctx);
	bool (*target_valid)(struct daptrace_target *t);
	u64 (*target_exec_id)(struct daptrace_target *t);
	void (*tlb_flush)(struct daptrace_ctx *ctx, enum daptrace_tlb_policy policy);
};

extern const struct daptrace_ops daptrace_vaddr_ops;

#endif /* _DAPTRACE_OPS_H */
