/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's monitoring context ("monitor"): the core context plus what the
 * worker, the snapshot ring and the sysfs interface share.
 */
#ifndef _DAPTRACE_H
#define _DAPTRACE_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/types.h>

#include "core.h"
#include "ops.h"

struct daptrace_ring;
struct kernfs_node;
struct kobject;
struct task_struct;

/*
 * Targets listed at once, live and exited: what a machine runs (every
 * process of a busy server, a container, a build), not a configuration
 * mistake.  Bounded so that the ring (see worker.c) stays bounded too.
 */
#define DAPTRACE_MAX_TARGETS	4096

/**
 * struct daptrace_counters - what a user needs to trust the data.
 * @nr_samples:		Sampling rounds since the last "on".
 * @nr_snapshots:	Snapshots published since the last "on".
 * @nr_missed:		Snapshots overwritten in the ring before any reader
 *			read them, since the last "on".
 * @worker_cpu_ns:	CPU time of the worker thread since the last "on".
 * @probe_ns:		Time the worker spent on the accuracy probes (drawing,
 *			clearing, reading, counting them) since the last
 *			"on": wall time of that work, preemption in it
 *			included, so at least its CPU time.  A part of
 *			@worker_cpu_ns, the cost the probes add.
 * @nr_regions:		Regions of all targets after the last aggregation.
 * @nr_probe_pages:	Probe pages asked for the current window, as the
 *			cost bound gives them (daptrace_probes_budget()).
 * @nr_late:		Sampling deadlines the worker could not keep (work
 *			took longer than the sampling interval).
 * @nr_busy:		Target sampling passes skipped, wholly or in part,
 *			because a writer held or awaited the target's
 *			mmap_lock.
 * @upper_entries:	Page-table entries the upper-level scan read
 *			(&daptrace_upper_stats.entries).
 * @upper_uncovered:	Large regions it left unobserved
 *			(&daptrace_upper_stats.nr_uncovered).
 * @upper_cuts:		Regions it added (&daptrace_upper_stats.nr_cuts).
 *
 * Written only by the worker (and reset under &daptrace_mon.lock while the
 * worker is stopped); read locklessly by sysfs with READ_ONCE().
 */
struct daptrace_counters {
	u64 nr_samples;
	u64 nr_snapshots;
	u64 nr_missed;
	u64 worker_cpu_ns;
	u64 probe_ns;
	u64 nr_late;
	u64 nr_busy;
	u64 upper_entries;
	u64 upper_uncovered;
	u64 upper_cuts;
	unsigned int nr_regions;
	unsigned int nr_probe_pages;
};

/**
 * struct daptrace_mon - one monitoring context and its worker.
 * @lock:	Serializes configuration and on/off.  Held by every sysfs
 *		store and by start/stop.  While @worker is set, @ctx's
 *		targets and regions belong to the worker: holders of @lock
 *		may only read the target list (it does not change while the
 *		worker runs) and the targets' exited flags (READ_ONCE).
 * @targets_lock: Protects the target list, @pending and the targets'
 *		remove flags: sysfs takes it to read them (so it need not
 *		take @lock, which is held across kthread_stop()) and to add
 *		or remove a target; the worker to apply @pending and the
 *		removals at an aggregation boundary.  Inside @lock, if both.
 * @pending:	Targets written while the worker runs, which it adds to
 *		@ctx at the next aggregation boundary (or daptrace_stop(),
 *		if it stops first).
 * @nr_pending:	Entries in @pending.
 * @ctx:	Attributes, targets and regions.
 * @tlb:	TLB flush policy.
 * @phys_addr:	Snapshots carry physical addresses (attribute phys_addr).
 * @probe_pages: Accuracy probes per window (attribute probe_pages), at most
 *		DAPTRACE_MAX_PROBE_PAGES; 0: none.  The most the cost bound
 *		gives a window.  Set while monitoring is off (the worker
 *		reads it unlocked).
 * @probe_max_cpu_bp: The cost bound (attribute probe_max_cpu_bp): the
 *		probes' share of the worker's CPU, in basis points, 1 to
 *		DAPTRACE_MAX_PROBE_MAX_CPU_BP (no bound).  Set while
 *		monitoring is off.
 * @probes:	Room for the worker's probe candidates (&daptrace_ctx.probes).
 * @tracepoint:	daptrace:daptrace_aggregated fires (attribute tracepoint).
 * @upper_scan:	The upper-level scan cuts large regions at the chunks
 *		found touched (attribute upper_scan; &daptrace_ops.upper).
 *		Set while monitoring is off (the worker reads it unlocked).
 * @ops:	Address-space operations.
 * @worker:	The worker kthread while it exists, with a task reference
 *		held so it can be reaped after exiting on its own.
 * @worker_done: Set by the worker when it leaves its loop on its own
 *		(all targets exited); "state" then reads "off".
 * @worker_ending: Set by the worker, under @targets_lock, when it found
 *		every target exited and none pending, and so ends: from then
 *		on, until "state" reads "off", a target written is refused
 *		(it would join a worker that samples no more).  Cleared by
 *		daptrace_start().
 * @worker_started: Completed by the worker when its function starts:
 *		"on" waits for it, so a kthread_stop() cannot come before the
 *		worker runs (kthread() would then skip the function, and with
 *		it the last snapshot that "off" promises).
 * @ring_lock:	Protects @ring against replacement while a reader copies
 *		from it.  The worker publishes into @ring without it: only
 *		the worker replaces the ring while it runs (to grow it, under
 *		this lock), and "on" while none runs.
 * @ring_generation: Generation of the newest ring allocated; never
 *		repeats while the module is loaded.
 * @ring:	The snapshot ring, kept after "off" so late readers can still
 *		drain it.
 * @seq:	Seq of the newest published snapshot; never reused.
 * @cnt:	Counters.
 * @kobj:	/sys/kernel/daptrace.
 * @notify_snapshot: Called by the worker after each publish; must not
 *		sleep.  Set by the interface (sysfs) before any "on", so the
 *		worker depends on no interface code (as mm/damon's callbacks).
 * @notify_state: Called when the worker stopped, by itself or by
 *		daptrace_stop().
 * @seq_kn:	The snapshot_seq node, for sysfs_notify_dirent() from the
 *		worker (which must not sleep on kernfs locks).
 * @seq_armed:	1 if snapshot_seq was read since the last notification of
 *		its pollers: see daptrace_sysfs_notify_snapshot().
 * @state_kn:	The state node, notified when the worker stops by itself.
 */
struct daptrace_mon {
	struct mutex lock;		/* see above */
	struct mutex targets_lock;	/* see above */
	struct list_head pending;
	unsigned int nr_pending;
	struct daptrace_ctx ctx;
	enum daptrace_tlb_policy tlb;
	bool phys_addr;
	unsigned int probe_pages;
	unsigned long probe_max_cpu_bp;
	struct daptrace_probe probes[DAPTRACE_MAX_PROBE_DRAWS];
	bool tracepoint;
	bool upper_scan;
	const struct daptrace_ops *ops;
	struct task_struct *worker;
	bool worker_done;
	bool worker_ending;
	struct completion worker_started;
	struct mutex ring_lock;		/* see above */
	struct daptrace_ring *ring;
	atomic64_t ring_generation;
	atomic64_t seq;
	struct daptrace_counters cnt;
	struct kobject *kobj;
	void (*notify_snapshot)(struct daptrace_mon *mon);
	void (*notify_state)(struct daptrace_mon *mon);
	struct kernfs_node *seq_kn;
	atomic_t seq_armed;
	struct kernfs_node *state_kn;
};

extern struct daptrace_mon daptrace_mon;

/* main.c: lifetime. */
int daptrace_mon_init(struct daptrace_mon *mon);
void daptrace_mon_exit(struct daptrace_mon *mon);

/* worker.c: start/stop, callers hold @mon->lock. */
int daptrace_start(struct daptrace_mon *mon);
void daptrace_stop(struct daptrace_mon *mon);
bool daptrace_running(struct daptrace_mon *mon);
unsigned int daptrace_ring_regions_for(const struct daptrace_attrs *attrs,
				       unsigned int nr_targets);

/* sysfs.c */
int daptrace_sysfs_init(struct daptrace_mon *mon);
void daptrace_sysfs_exit(struct daptrace_mon *mon);

#endif /* _DAPTRACE_H */
