// SPDX-License-Identifier: GPL-2.0
/*
 * The worker: one kthread per monitoring context that runs the loop
 *
 *	sleep to the next sampling deadline -> one pass: check the page
 *	sampled last and prepare (pick + clear) the next one, per region
 *	every aggregation interval the pass only checks; then publish,
 *	merge/age, split, and prepare the new regions in a second pass
 *	every update interval: re-read the memory maps
 *
 * Deadlines are absolute (start + k * interval) and slept to with an hrtimer,
 * so the time spent working is not added to the intervals: DAMON sleeps a
 * relative interval after its work, and its windows stretch under load.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/daptrace.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "daptrace.h"
#include "daptrace_trace.h"
#include "ring.h"
#include "tlb.h"

/* Per-run timing state, private to the worker thread. */
struct worker_clock {
	ktime_t sample_ns;
	ktime_t aggr_ns;
	ktime_t update_ns;
	ktime_t next_sample;
	ktime_t next_aggr;
	ktime_t next_update;
	ktime_t window_start;
	ktime_t pass_start;
	unsigned int window_samples;
	u32 window_flags;
	struct daptrace_probe_counts probes;
	u64 cpu_start;
	u64 window_cpu;
	u64 budget_cpu;
	u64 budget_probe_ns;
	u64 slack_ns;
};

/*
 * The intervals in force, in the clock, from the attributes; a little
 * slack lets the timer batch, 1/64 of a sampling interval keeps windows
 * within 2%.
 */
static void worker_clock_set(struct worker_clock *clk,
			     const struct daptrace_attrs *attrs)
{
	clk->sample_ns = attrs->sample_us * NSEC_PER_USEC;
	clk->aggr_ns = attrs->aggr_us * NSEC_PER_USEC;
	clk->update_ns = attrs->update_us * NSEC_PER_USEC;
	clk->slack_ns = min_t(u64, clk->sample_ns / 64, 50 * NSEC_PER_USEC);
}

/*
 * The intervals goal (daptrace_tune_intervals()), at the end of a window
 * whose counts are still in the regions: new intervals take effect with
 * the next window (the snapshot just published says which it had), and the
 * attribute files show them.
 */
static void worker_tune_intervals(struct daptrace_mon *mon,
				  struct worker_clock *clk,
				  unsigned int nr_samples)
{
	struct daptrace_attrs *attrs = &mon->ctx.attrs;
	unsigned long sample_us, aggr_us, update_us;

	if (!daptrace_tune_intervals(&mon->ctx, nr_samples, &sample_us, &aggr_us,
				     &update_us))
		return;
	/* Read by sysfs without the worker's consent. */
	WRITE_ONCE(attrs->sample_us, sample_us);
	WRITE_ONCE(attrs->aggr_us, aggr_us);
	WRITE_ONCE(attrs->update_us, update_us);
	worker_clock_set(clk, attrs);
}

static void worker_fit_ring(struct daptrace_mon *mon);

/*
 * The recall goal (daptrace_tune_recall()), at the end of a window, with
 * its probe counts and the worker's CPU time in it, after the intervals
 * goal: a new region budget takes effect at this aggregation's merge and
 * split (the ring grows if its slots cannot hold it), a new sampling
 * interval with the next window, whose aggregation interval stays; the
 * attribute files show both.
 */
static void worker_tune_recall(struct daptrace_mon *mon, struct worker_clock *clk,
			       const struct daptrace_probe_counts *probes,
			       u64 wall_ns)
{
	struct daptrace_attrs *attrs = &mon->ctx.attrs;
	u64 cpu = current->se.sum_exec_runtime;
	unsigned long max_nr_regions, sample_us;
	bool changed;

	changed = daptrace_tune_recall(&mon->ctx, probes, cpu - clk->window_cpu,
				       wall_ns, &max_nr_regions, &sample_us);
	clk->window_cpu = cpu;
	if (!changed)
		return;
	/* Read by sysfs without the worker's consent. */
	WRITE_ONCE(attrs->max_nr_regions, max_nr_regions);
	WRITE_ONCE(attrs->sample_us, sample_us);
	worker_clock_set(clk, attrs);
	worker_fit_ring(mon);
}

/* Advance @deadline past @now by whole intervals; returns intervals skipped. */
static u64 advance_deadline(ktime_t *deadline, ktime_t interval, ktime_t now)
{
	u64 skipped = 0;

	*deadline = ktime_add(*deadline, interval);
	if (*deadline <= now) {
		skipped = div64_u64(now - *deadline, interval) + 1;
		*deadline = ktime_add(*deadline, skipped * interval);
	}
	return skipped;
}

/*
 * Sleep until @deadline or kthread_stop().  The state is set before testing
 * the stop flag so a kthread_stop() between the test and the sleep still
 * wakes us (kthread_stop sets the flag, then wakes the task).
 */
static void worker_sleep_until(ktime_t deadline, u64 slack_ns)
{
	set_current_state(TASK_INTERRUPTIBLE);
	if (kthread_should_stop()) {
		__set_current_state(TASK_RUNNING);
		return;
	}
	schedule_hrtimeout_range(&deadline, slack_ns, HRTIMER_MODE_ABS);
	__set_current_state(TASK_RUNNING);
}

/* daptrace:daptrace_aggregated for every region being published. */
static void worker_trace_aggregated(struct daptrace_ctx *ctx)
{
	struct daptrace_target *t;
	struct daptrace_region *r;
	unsigned int ti = 0;

	/* A static branch: the walk costs nothing while the event is off. */
	if (!trace_daptrace_aggregated_enabled())
		return;
	daptrace_for_each_target(t, ctx) {
		daptrace_for_each_region(r, t)
			trace_daptrace_aggregated(ti, r, t->nr_regions);
		ti++;
	}
}

static void worker_publish(struct daptrace_mon *mon, struct worker_clock *clk,
			   ktime_t now, u32 flags)
{
	struct daptrace_ctx *ctx = &mon->ctx;
	struct daptrace_snap_hdr *slot;
	unsigned int nr, max = daptrace_ring_max_regions(mon->ring);
	u64 seq = atomic64_read(&mon->seq) + 1;
	bool unread;

	if (mon->tracepoint)
		worker_trace_aggregated(ctx);
	slot = daptrace_ring_begin(mon->ring, seq, &unread);
	nr = daptrace_snapshot_fill(ctx, daptrace_ring_records(slot), max,
				    mon->phys_addr);
	slot->start_ns = ktime_to_ns(clk->window_start);
	slot->end_ns = ktime_to_ns(now);
	slot->nr_regions = nr;
	slot->nr_samples = clk->window_samples;
	slot->sample_us = ctx->attrs.sample_us;
	slot->aggr_us = ctx->attrs.aggr_us;
	slot->flags = flags | clk->window_flags;
	if (nr < daptrace_nr_regions(ctx))
		slot->flags |= DAPTRACE_SNAP_TRUNCATED;
	slot->last_pass_us = 0;
	if (clk->pass_start && ktime_after(now, clk->pass_start))
		slot->last_pass_us = min_t(u64, U32_MAX,
					   ktime_us_delta(now, clk->pass_start));
	slot->probe_pages = clk->probes.nr;
	slot->probe_tp = clk->probes.tp;
	slot->probe_fn = clk->probes.fn;
	slot->probe_fp = clk->probes.fp;
	slot->probe_tn = clk->probes.tn;
	slot->probe_unobserved = clk->probes.unobserved;
	daptrace_ring_commit(slot, seq);

	/*
	 * Readers poll snapshot_seq: publish the seq only after the slot.
	 * Release, paired with the readers' acquire.
	 */
	atomic64_set_release(&mon->seq, seq);
	WRITE_ONCE(mon->cnt.nr_snapshots, mon->cnt.nr_snapshots + 1);
	if (unread)
		WRITE_ONCE(mon->cnt.nr_missed, mon->cnt.nr_missed + 1);
	if (mon->notify_snapshot)
		mon->notify_snapshot(mon);

	clk->window_start = now;
	clk->pass_start = 0;
	clk->window_samples = 0;
	clk->window_flags = 0;
	memset(&clk->probes, 0, sizeof(clk->probes));
}

/* Add the probe work that began at @t0 to the counter (probe_us). */
static void worker_probe_time(struct daptrace_mon *mon, u64 t0)
{
	WRITE_ONCE(mon->cnt.probe_ns, mon->cnt.probe_ns + ktime_get_ns() - t0);
}

/*
 * How many probe pages the window that starts gets: the cost bound
 * (daptrace_probes_budget()), from what the probes and the worker cost
 * since the last call, a window ago: the probe time is probe_us's own
 * count (so the bound holds for the share probe_us / worker_cpu_us
 * reports), the CPU time worker_cpu_us's.  The latter is the scheduler's
 * count as of the worker's last sleep or tick, so it lags the probe time
 * by part of a pass, alike in every window: the differences telescope.
 * Published in nr_probe_pages.
 */
static unsigned int worker_probe_budget(struct daptrace_mon *mon,
					struct worker_clock *clk)
{
	u64 cpu = current->se.sum_exec_runtime, probe_ns = mon->cnt.probe_ns;
	unsigned int n;

	n = daptrace_probes_budget(&mon->ctx, mon->probe_pages,
				   mon->probe_max_cpu_bp,
				   probe_ns - clk->budget_probe_ns,
				   cpu - clk->budget_cpu);
	clk->budget_probe_ns = probe_ns;
	clk->budget_cpu = cpu;
	/* Read by sysfs without the worker's consent. */
	WRITE_ONCE(mon->cnt.nr_probe_pages, n);
	return n;
}

/*
 * The accuracy probes of the window that starts (daptrace_probes_pick() and
 * daptrace_probes_select(), and the vaddr operations for how their clears
 * and the regions' share bits), as many as the cost bound gives.  Between
 * the aggregation and the prepare pass: see daptrace_ops.probe_prepare.
 * Their truth must not be TLB-blind, so they are flushed by the policy in
 * force if it flushes, else by mm (or round); where neither is supported
 * no probe is picked (the snapshots say probe_pages 0) rather than publish
 * a blind truth.  Under the policy in force, the prepare pass that must
 * follow at once makes their flush with its own.
 */
static void worker_probe_start(struct daptrace_mon *mon, struct worker_clock *clk)
{
	enum daptrace_tlb_policy tlb = mon->tlb;
	unsigned int n;
	u64 t0;

	if (tlb == DAPTRACE_TLB_NONE)
		tlb = daptrace_tlb_policy_supported(DAPTRACE_TLB_MM) ?
		      DAPTRACE_TLB_MM : DAPTRACE_TLB_ROUND;
	if (!daptrace_tlb_policy_supported(tlb) || !mon->probe_pages)
		return;
	/*
	 * Every target long quiet: no probe, and no time counted; the bound
	 * takes up from here when one runs again (its CPU since now).
	 */
	if (!daptrace_probes_wanted(&mon->ctx)) {
		mon->ctx.nr_probes = 0;
		/* none asked for: nothing for daptrace_probes_precision() */
		mon->ctx.probe_slots = 0;
		clk->budget_probe_ns = mon->cnt.probe_ns;
		clk->budget_cpu = current->se.sum_exec_runtime;
		return;
	}
	/* The law's own few divisions count as the probes' time. */
	t0 = ktime_get_ns();
	n = worker_probe_budget(mon, clk);
	if (daptrace_probes_pick(&mon->ctx, n)) {
		mon->ops->probe_map(&mon->ctx);
		if (daptrace_probes_select(&mon->ctx))
			mon->ops->probe_prepare(&mon->ctx, tlb, tlb == mon->tlb);
	}
	worker_probe_time(mon, t0);
}

/*
 * At the end of a window, after its last checks and while the regions hold
 * its counts (before a revoked target loses them): read the probes' truth
 * and count it against the regions' verdicts for the snapshot.
 */
static void worker_probe_end(struct daptrace_mon *mon, struct worker_clock *clk)
{
	struct daptrace_ctx *ctx = &mon->ctx;
	u64 t0;

	if (!ctx->nr_probes)
		return;
	t0 = ktime_get_ns();
	mon->ops->probe_check(ctx);
	daptrace_probes_account(ctx, clk->window_samples, &clk->probes);
	ctx->nr_probes = 0;
	worker_probe_time(mon, t0);
}

/*
 * End the watch of @t, which exec()ed an image the writer's access check
 * may no longer admit: like an exit, but its regions go before the window
 * is published, so nothing measured in that window (part of it in the new
 * image) reaches a reader.  Read by sysfs target_status without the
 * worker's consent: revoked before exited, so a reader that sees exited
 * also sees why.
 */
static void worker_revoke(struct daptrace_target *t)
{
	pr_info("target %d exec()ed a privileged image: no longer watched\n",
		t->pid_nr);
	daptrace_free_target_regions(t);
	WRITE_ONCE(t->revoked, true);
	smp_wmb();	/* pairs with smp_rmb() in target_status_show() */
	WRITE_ONCE(t->exited, true);
}

/*
 * Mark targets whose process is gone as exited, and those whose watch an
 * exec ended as revoked, and flag the window; returns the number still
 * alive.  Exited targets' regions stay until worker_free_exited(), so the
 * window in which a target exits is published with what was measured for
 * it; revoked ones' do not (worker_revoke()).
 */
static unsigned int worker_find_exited(struct daptrace_mon *mon,
				       struct worker_clock *clk)
{
	struct daptrace_target *t;
	unsigned int alive = 0;

	daptrace_for_each_target(t, &mon->ctx) {
		u64 exec_id;

		if (t->exited)
			continue;
		if (mon->ops->target_valid(t)) {
			if (!mon->ops->target_allowed(t)) {
				worker_revoke(t);
				clk->window_flags |= DAPTRACE_SNAP_TARGET_REVOKED;
				continue;
			}
			alive++;
			exec_id = mon->ops->target_exec_id(t);
			if (exec_id != t->exec_id) {
				t->exec_id = exec_id;
				t->execed = true;
				clk->window_flags |= DAPTRACE_SNAP_TARGET_EXEC;
			}
			continue;
		}
		pr_info("target %d exited\n", t->pid_nr);
		/* Read by sysfs target_status without the worker's consent. */
		WRITE_ONCE(t->exited, true);
		clk->window_flags |= DAPTRACE_SNAP_TARGET_EXITED;
	}
	return alive;
}

/*
 * After the publish: exited targets take no further part, and exec()ed ones
 * start afresh.  Returns true if regions must be built for the latter.
 */
static bool worker_free_exited(struct daptrace_mon *mon)
{
	struct daptrace_target *t;
	bool execed = false;

	daptrace_for_each_target(t, &mon->ctx) {
		if (t->exited || t->execed)
			daptrace_free_target_regions(t);
		execed |= t->execed && !t->exited;
		t->execed = false;
	}
	return execed;
}

/**
 * daptrace_ring_regions_for() - records a snapshot of @nr_targets can hold.
 * @attrs:	The attributes in force.
 * @nr_targets:	Targets.
 *
 * A published window holds what the merge left, at most max_nr_regions or
 * one region per range and target if that is more; plus what a map update
 * after the merge adds, per target a region for each old gap now inside a
 * range and one for each new gap through an old region, 2 * (ranges - 1);
 * plus the share of min_nr_regions that an exec()ed or new target's
 * regions are built with.
 */
unsigned int daptrace_ring_regions_for(const struct daptrace_attrs *attrs,
				       unsigned int nr_targets)
{
	return attrs->max_nr_regions + attrs->min_nr_regions +
	       (3 * DAPTRACE_OPS_MAX_RANGES - 2) * nr_targets;
}

/*
 * Grow the ring if its slots cannot hold the targets there are now (they
 * joined while monitoring), with room for as many again, so that a forking
 * workload does not make it grow every window.  The published snapshots
 * move along (daptrace_ring_grow()).  Without memory the ring stays, and a
 * snapshot that does not fit says so (DAPTRACE_SNAP_TRUNCATED).
 */
static void worker_fit_ring(struct daptrace_mon *mon)
{
	const struct daptrace_attrs *attrs = &mon->ctx.attrs;
	unsigned int nr = mon->ctx.nr_targets;
	struct daptrace_ring *ring, *old;

	if (daptrace_ring_regions_for(attrs, nr) <=
	    daptrace_ring_max_regions(mon->ring))
		return;
	nr = min_t(unsigned int, 2 * nr, DAPTRACE_MAX_TARGETS);
	ring = daptrace_ring_grow(mon->ring, daptrace_ring_regions_for(attrs, nr),
				  atomic64_inc_return(&mon->ring_generation));
	if (!ring) {
		pr_warn_ratelimited("no memory to grow the snapshot ring for %u targets\n",
				    mon->ctx.nr_targets);
		return;
	}
	mutex_lock(&mon->ring_lock);
	old = mon->ring;
	mon->ring = ring;
	mutex_unlock(&mon->ring_lock);
	daptrace_ring_free(old);
}

/*
 * The changes written to target and target_remove while monitoring:
 * removed targets go, pending ones join (at the tail, as listed; their
 * regions are built by the map update that follows).  Caller holds
 * @mon->targets_lock.  Returns true if targets joined.
 */
static bool __worker_apply_targets(struct daptrace_mon *mon)
{
	struct daptrace_target *t, *next;
	bool joined = !list_empty(&mon->pending);

	daptrace_for_each_target_safe(t, next, &mon->ctx) {
		if (!t->remove)
			continue;
		if (mon->upper_scan && !t->exited)
			mon->ops->upper_leave(&mon->ctx, t, mon->tlb);
		mon->ops->target_put(t->priv);
		daptrace_destroy_target(&mon->ctx, t);
	}
	list_for_each_entry_safe(t, next, &mon->pending, list) {
		bool valid = mon->ops->target_valid(t);

		list_del(&t->list);
		mon->nr_pending--;
		/*
		 * Read by sysfs target_status under targets_lock: no race.
		 * An exec since the write is judged before it joins.
		 */
		t->revoked = valid && !mon->ops->target_allowed(t);
		valid &= !t->revoked;
		t->exited = !valid;
		t->exec_id = valid ? mon->ops->target_exec_id(t) : 0;
		daptrace_add_target(&mon->ctx, t);
	}
	return joined;
}

/*
 * No target alive: does the worker end?  Not if targets were written
 * meanwhile (they join at this boundary).  Decided under targets_lock
 * together with @worker_ending, which target_store() tests under the same
 * lock: a write either comes before, and keeps the worker going, or after,
 * and is refused; none is accepted to join a worker that has ended.
 */
static bool worker_ends(struct daptrace_mon *mon)
{
	bool end;

	mutex_lock(&mon->targets_lock);
	end = list_empty(&mon->pending);
	mon->worker_ending = end;
	mutex_unlock(&mon->targets_lock);
	return end;
}

/* At an aggregation boundary, after the publish: see above. */
static void worker_apply_targets(struct daptrace_mon *mon,
				 struct worker_clock *clk)
{
	bool joined;

	mutex_lock(&mon->targets_lock);
	joined = __worker_apply_targets(mon);
	mutex_unlock(&mon->targets_lock);
	if (!joined)
		return;
	clk->window_flags |= DAPTRACE_SNAP_TARGET_JOINED;
	worker_fit_ring(mon);
}

static void worker_update_counters(struct daptrace_mon *mon,
				   struct worker_clock *clk)
{
	WRITE_ONCE(mon->cnt.nr_regions, daptrace_nr_regions(&mon->ctx));
	WRITE_ONCE(mon->cnt.worker_cpu_ns,
		   current->se.sum_exec_runtime - clk->cpu_start);
}

/*
 * One sampling pass of the operations over every target.  Returns true if
 * every target was idle: none of their threads ran since the previous pass.
 */
static bool worker_sample(struct daptrace_mon *mon, unsigned int what)
{
	struct daptrace_sample_stats st = {};

	mon->ops->sample(&mon->ctx, what, mon->tlb, &st);
	mon->ctx.nr_passes++;
	if (st.probe_flush_ns)
		WRITE_ONCE(mon->cnt.probe_ns, mon->cnt.probe_ns + st.probe_flush_ns);
	if (st.nr_busy)
		WRITE_ONCE(mon->cnt.nr_busy, mon->cnt.nr_busy + st.nr_busy);
	return st.nr_idle && !st.nr_walked;
}

/*
 * The upper-level scan (&daptrace_ops.upper), at an aggregation boundary
 * after the regions are final for the next window (aggregated, maps
 * updated) and before the probes are picked among them; with @stop, when
 * monitoring ends, only to hand back what its last arm took.
 */
static void worker_upper(struct daptrace_mon *mon, bool stop)
{
	struct daptrace_upper_stats st = {};

	if (!mon->upper_scan)
		return;
	mon->ops->upper(&mon->ctx, mon->tlb, stop, &st);
	WRITE_ONCE(mon->cnt.upper_entries, mon->cnt.upper_entries + st.entries);
	WRITE_ONCE(mon->cnt.upper_uncovered,
		   mon->cnt.upper_uncovered + st.nr_uncovered);
	WRITE_ONCE(mon->cnt.upper_cuts, mon->cnt.upper_cuts + st.nr_cuts);
}

/*
 * With @from_window, mark the targets that did not run in the window just
 * ended as quiet (&daptrace_target.quiet) for the aggregation, the map update
 * and the prepare pass after it, and count their quiet windows in a row
 * (&daptrace_target.idle_windows), and mark those that ran after quiet
 * windows as woken (&daptrace_target.woke); otherwise unmark all quiet.
 */
static void worker_mark_quiet(struct daptrace_mon *mon, bool from_window)
{
	struct daptrace_target *t;

	daptrace_for_each_target(t, &mon->ctx) {
		t->quiet = from_window && !t->exited && mon->ops->window_idle(t);
		if (!from_window)
			continue;
		t->woke = !t->quiet && !t->exited && t->idle_windows;
		if (!t->quiet)
			t->idle_windows = 0;
		else if (t->idle_windows < UINT_MAX)
			t->idle_windows++;
	}
}

/*
 * A live target without regions (its map could not be read: the mmap lock
 * was busy, e.g. right after an exec) is retried every aggregation rather
 * than every update interval.
 */
static bool worker_regionless(struct daptrace_mon *mon)
{
	struct daptrace_target *t;

	daptrace_for_each_target(t, &mon->ctx)
		if (!t->exited && !t->nr_regions)
			return true;
	return false;
}

/* Intervals slept through while every target was idle: see sample(). */
static void worker_repeat_idle(struct daptrace_ctx *ctx, unsigned int n)
{
	struct daptrace_target *t;

	daptrace_for_each_target(t, ctx)
		if (!t->exited)
			daptrace_repeat_idle(t, n);
}

static int daptrace_worker_fn(void *data)
{
	struct daptrace_mon *mon = data;
	struct daptrace_ctx *ctx = &mon->ctx;
	const struct daptrace_ops *ops = mon->ops;
	struct worker_clock clk = {};
	bool idle = false;
	ktime_t now;
	int err;

	complete(&mon->worker_started);
	clk.cpu_start = current->se.sum_exec_runtime;
	clk.window_cpu = clk.cpu_start;
	worker_clock_set(&clk, &ctx->attrs);
	memset(&ctx->tuner, 0, sizeof(ctx->tuner));
	/* ops->init() below makes the regions: ages from scratch */
	ctx->age_unit_us = 0;
	memset(&ctx->recall, 0, sizeof(ctx->recall));
	memset(&ctx->budget, 0, sizeof(ctx->budget));
	ctx->probes = mon->probes;
	ctx->nr_probes = 0;
	ctx->probe_slots = 0;

	clk.window_start = ktime_get();
	err = ops->init(ctx);
	if (err)
		pr_warn("initial regions: error %d\n", err);
	/* Targets written meanwhile join at the first aggregation. */
	if (!worker_find_exited(mon, &clk) && worker_ends(mon)) {
		worker_publish(mon, &clk, ktime_get(), DAPTRACE_SNAP_LAST);
		goto out;
	}
	worker_free_exited(mon);

	now = ktime_get();
	clk.window_start = now;
	clk.next_sample = ktime_add(now, clk.sample_ns);
	clk.next_aggr = ktime_add(now, clk.aggr_ns);
	clk.next_update = ktime_add(now, clk.update_ns);
	worker_probe_start(mon, &clk);
	worker_sample(mon, DAPTRACE_SAMPLE_PREPARE);
	worker_update_counters(mon, &clk);

	while (!kthread_should_stop()) {
		unsigned int span = 1;
		bool aggr, execed, was_idle = idle;
		u64 late;

		/*
		 * While every target is idle, waking up every sampling
		 * interval only to find them idle again is all the worker
		 * would spend: sleep to the next aggregation instead.  If they
		 * are still idle then, no access happened in any of the
		 * intervals slept through, and each counts as a sample that
		 * saw none; if one ran, the one check covers the span and
		 * counts once (the window records the samples it really has).
		 */
		worker_sleep_until(idle ? clk.next_aggr : clk.next_sample,
				   clk.slack_ns);
		if (kthread_should_stop())
			break;

		/*
		 * Aggregation replaces regions, so their next samples are
		 * prepared after it; otherwise check and prepare are fused.
		 */
		now = ktime_get();
		clk.pass_start = now;
		aggr = now >= clk.next_aggr;
		if (was_idle && now >= clk.next_sample)
			span += div64_u64(now - clk.next_sample, clk.sample_ns);
		idle = worker_sample(mon, DAPTRACE_SAMPLE_CHECK |
				     (aggr ? 0 : DAPTRACE_SAMPLE_PREPARE));
		if (!idle)
			span = 1;
		else if (span > 1)
			worker_repeat_idle(ctx, span - 1);
		clk.window_samples += span;
		WRITE_ONCE(mon->cnt.nr_samples, mon->cnt.nr_samples + span);

		if (aggr) {
			unsigned int alive, nr_samples = clk.window_samples;
			struct daptrace_probe_counts probes;
			ktime_t window_start = clk.window_start;

			worker_probe_end(mon, &clk);
			probes = clk.probes;
			daptrace_probes_precision(ctx, &probes, mon->probe_pages,
						  ctx->attrs.aggr_us);
			now = ktime_get();
			alive = worker_find_exited(mon, &clk);
			/* Targets written meanwhile keep the worker going. */
			if (!alive && !worker_ends(mon))
				alive = 1;
			/* With the regions measured, also of exited targets. */
			worker_publish(mon, &clk, now, alive ? 0 : DAPTRACE_SNAP_LAST);
			if (alive) {
				worker_tune_intervals(mon, &clk, nr_samples);
				worker_tune_recall(mon, &clk, &probes,
						   ktime_to_ns(ktime_sub(now, window_start)));
			}
			execed = worker_free_exited(mon);
			if (!alive) {
				worker_update_counters(mon, &clk);
				goto out;
			}
			worker_apply_targets(mon, &clk);
			worker_mark_quiet(mon, true);
			daptrace_aggregate(ctx, nr_samples);
			advance_deadline(&clk.next_aggr, clk.aggr_ns, now);
			/*
			 * The new image's maps: regions from scratch.  A target
			 * whose regions the update changes is no longer quiet.
			 */
			if (now >= clk.next_update) {
				ops->update(ctx);
				advance_deadline(&clk.next_update, clk.update_ns, now);
			} else if (execed || worker_regionless(mon)) {
				ops->update(ctx);
			}
			worker_upper(mon, false);
			worker_update_counters(mon, &clk);
			worker_probe_start(mon, &clk);
			worker_sample(mon, DAPTRACE_SAMPLE_PREPARE);
			worker_mark_quiet(mon, false);
		}

		late = advance_deadline(&clk.next_sample, clk.sample_ns, ktime_get());
		/* Deadlines slept through on purpose are not late. */
		if (late && !was_idle)
			WRITE_ONCE(mon->cnt.nr_late, mon->cnt.nr_late + late);
	}

	/*
	 * The partial window, so a recorder that keeps up loses nothing; and
	 * with the targets that exited in it marked, as at a boundary: an
	 * owner that turns monitoring off as soon as its command exits must
	 * not hide that exit from target_status and the snapshot's flags.
	 */
	worker_probe_end(mon, &clk);
	worker_find_exited(mon, &clk);
	worker_publish(mon, &clk, ktime_get(), DAPTRACE_SNAP_LAST);
	/* Reclaim gets back what the last arm took (targets that exited: nothing). */
	worker_upper(mon, true);
	worker_update_counters(mon, &clk);
	return 0;
out:
	/*
	 * All targets are gone.  Exit on our own; the task reference taken in
	 * daptrace_start() keeps the task_struct for the kthread_stop() that
	 * reaps us on the next "off", "on" or module unload.  Release, paired
	 * with the acquire in daptrace_running(): whoever reads "off" also
	 * sees every target marked exited above (the CLI tells "all targets
	 * exited" from "turned off" by that).  Removals written while we ran
	 * are applied here, under targets_lock with the release: a writer who
	 * reads "off" removes at once, and "off" may never be written (the
	 * reader saw it already), so no flagged target may outlive us.
	 */
	mutex_lock(&mon->targets_lock);
	__worker_apply_targets(mon);
	/* Pairs with the acquire in daptrace_running(), as said above. */
	smp_store_release(&mon->worker_done, true);
	mutex_unlock(&mon->targets_lock);
	if (mon->notify_state)
		mon->notify_state(mon);
	return 0;
}

bool daptrace_running(struct daptrace_mon *mon)
{
	lockdep_assert_held(&mon->lock);
	/* Acquire: pairs with the release in daptrace_worker_fn(). */
	return mon->worker && !smp_load_acquire(&mon->worker_done);
}

/* Put in the ring allocated for this start; worker stopped. */
static void daptrace_install_ring(struct daptrace_mon *mon,
				  struct daptrace_ring *ring)
{
	struct daptrace_ring *old;

	mutex_lock(&mon->ring_lock);
	old = mon->ring;
	mon->ring = ring;
	mutex_unlock(&mon->ring_lock);
	daptrace_ring_free(old);
}

/**
 * daptrace_start() - turn monitoring on.
 * @mon:	The monitor; caller holds @mon->lock.
 *
 * Return: 0 (also if already on), -EINVAL without targets, -ESRCH if every
 * target has exited, -ENOMEM, or the kthread creation error.
 */
int daptrace_start(struct daptrace_mon *mon)
{
	struct daptrace_ring *ring;
	struct daptrace_target *t;
	struct task_struct *task;
	unsigned int alive = 0;
	int err;

	lockdep_assert_held(&mon->lock);
	if (daptrace_running(mon))
		return 0;
	daptrace_stop(mon);	/* reap a worker that ended by itself */

	if (!mon->ctx.nr_targets)
		return -EINVAL;
	err = daptrace_attrs_validate(&mon->ctx.attrs);
	if (err)
		return err;
	daptrace_for_each_target(t, &mon->ctx) {
		bool valid = mon->ops->target_valid(t);

		daptrace_free_target_regions(t);
		/*
		 * A revoked target stays so until removed, and an exec while
		 * monitoring was off is judged now (worker stopped: the
		 * monitor lock serializes target_allowed()).
		 */
		if (valid && !t->revoked && !mon->ops->target_allowed(t))
			WRITE_ONCE(t->revoked, true);
		valid &= !t->revoked;
		/* A target found gone stays "exited", also if we fail below. */
		WRITE_ONCE(t->exited, !valid);
		t->execed = false;
		t->exec_id = valid ? mon->ops->target_exec_id(t) : 0;
		alive += valid;
	}
	if (!alive)
		return -ESRCH;

	/*
	 * Everything that can fail comes first: a failed start leaves the
	 * previous run's snapshots and counters readable.  The ring is sized
	 * for the targets there are; it grows when more join.
	 */
	ring = daptrace_ring_alloc(daptrace_ring_regions_for(&mon->ctx.attrs,
							     mon->ctx.nr_targets),
				   atomic64_inc_return(&mon->ring_generation));
	if (!ring)
		return -ENOMEM;
	init_completion(&mon->worker_started);
	task = kthread_create(daptrace_worker_fn, mon, "daptrace");
	if (IS_ERR(task)) {
		daptrace_ring_free(ring);
		return PTR_ERR(task);
	}
	daptrace_install_ring(mon, ring);
	memset(&mon->cnt, 0, sizeof(mon->cnt));
	mon->ctx.last_nr_regions = 0;
	mon->ctx.split_from = 0;
	mon->ctx.nr_passes = 0;
	/* No worker runs: target_store() reads it under @mon->lock too. */
	mon->worker_ending = false;
	/*
	 * A normal (CFS) thread, like DAMON's kdamond: at RT priority a round
	 * that takes longer than the sampling interval would starve the target
	 * on its CPU.  Sleeping to absolute deadlines keeps the mean window
	 * length exact; late checks are counted in nr_samples_late.
	 */
	get_task_struct(task);
	WRITE_ONCE(mon->worker_done, false);
	/* Read by the lockless sysfs readers. */
	WRITE_ONCE(mon->worker, task);
	wake_up_process(task);
	/* Until it runs, a kthread_stop() would skip the worker's function. */
	wait_for_completion(&mon->worker_started);
	return 0;
}

/**
 * daptrace_stop() - turn monitoring off and wait for the worker to finish.
 * @mon:	The monitor; caller holds @mon->lock.
 *
 * Also reaps a worker that already ended on its own.  Targets and the ring
 * are kept: status and the last snapshots stay readable.
 */
void daptrace_stop(struct daptrace_mon *mon)
{
	lockdep_assert_held(&mon->lock);
	if (!mon->worker)
		return;
	kthread_stop(mon->worker);
	/* What was written after the worker's last aggregation. */
	mutex_lock(&mon->targets_lock);
	__worker_apply_targets(mon);
	mutex_unlock(&mon->targets_lock);
	put_task_struct(mon->worker);
	WRITE_ONCE(mon->worker, NULL);
	WRITE_ONCE(mon->worker_done, false);
	if (mon->notify_state)
		mon->notify_state(mon);
}
