// SPDX-License-Identifier: GPL-2.0
/*
 * daptrace: data access pattern monitoring for unmodified kernels.
 *
 * Module lifetime: init steps in order, unwound in reverse through goto
 * labels; the monitor (one context and its worker) lives here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernfs.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/smp.h>

#include "daptrace.h"
#include "ring.h"
#include "tlb.h"

/* The tracepoints' definitions live in this object. */
#define CREATE_TRACE_POINTS
#include "daptrace_trace.h"

struct daptrace_mon daptrace_mon;

#ifdef DAPTRACE_DEBUG
/* Lets the harness prove that a kernel warning turns a test run red. */
static bool inject_warn;
module_param(inject_warn, bool, 0400);
MODULE_PARM_DESC(inject_warn, "debug builds: WARN_ON at module init");
#endif

/*
 * Uniform in [0, @ceil): Lemire's multiply-shift on a PRNG seeded from
 * get_random_u64() (sampling needs no cryptographic quality, and the worker
 * draws one value per region per sampling interval), rejecting the few low
 * products that would make some results one 2^32th likelier than others
 * (the multiply-shift alone is not bias-free).  get_random_u32_below() does
 * the same but is missing on 6.1 (docs/kernel-facts.md, exports).  Only one
 * thread draws at a time (see &daptrace_ctx).
 */
static struct rnd_state daptrace_rnd;

static u32 daptrace_rand(void *arg, u32 ceil)
{
	u64 m = (u64)prandom_u32_state(arg) * ceil;

	if ((u32)m < ceil) {
		u32 thresh = -ceil % ceil;

		while ((u32)m < thresh)
			m = (u64)prandom_u32_state(arg) * ceil;
	}
	return m >> 32;
}

int daptrace_mon_init(struct daptrace_mon *mon)
{
	mutex_init(&mon->lock);
	mutex_init(&mon->targets_lock);
	mutex_init(&mon->ring_lock);
	INIT_LIST_HEAD(&mon->pending);
	atomic64_set(&mon->ring_generation, 0);
	prandom_seed_state(&daptrace_rnd, get_random_u64());
	daptrace_ctx_init(&mon->ctx, PAGE_SIZE, daptrace_rand, &daptrace_rnd);
	daptrace_attrs_default(&mon->ctx.attrs);
	daptrace_tlb_init();
	mon->probe_pages = DAPTRACE_DEF_PROBE_PAGES;
	mon->probe_max_cpu_bp = DAPTRACE_DEF_PROBE_MAX_CPU_BP;
	mon->upper_scan = true;
	mon->tlb = daptrace_tlb_policy_supported(DAPTRACE_TLB_MM) ?
		   DAPTRACE_TLB_MM : DAPTRACE_TLB_NONE;
	mon->ops = &daptrace_vaddr_ops;
	atomic64_set(&mon->seq, 0);
	atomic_set(&mon->seq_armed, 0);
	return 0;
}

/* Stops the worker and frees everything; sysfs must already be gone. */
void daptrace_mon_exit(struct daptrace_mon *mon)
{
	struct daptrace_target *t, *next;

	mutex_lock(&mon->lock);
	daptrace_stop(mon);
	/*
	 * TLB-flush IPIs are sent without waiting (tlb.c), so one of ours
	 * may still be queued on some CPU.  kick_all_cpus_sync() returns once
	 * every CPU has run its own (synchronous) call; the handler that ran
	 * it had already taken the CPU's whole queue, ours included, and runs
	 * queued asynchronous calls only after the synchronous ones, so ours
	 * may still be running then.  But it runs with interrupts off, which
	 * is an RCU read-side critical section, and the module loader frees
	 * our code only after synchronize_rcu() (free_module()): that waits
	 * for the handler to return (docs/kernel-facts.md, ipi).
	 */
	kick_all_cpus_sync();
	/* daptrace_stop() added what was pending. */
	mutex_lock(&mon->targets_lock);
	daptrace_for_each_target_safe(t, next, &mon->ctx) {
		mon->ops->target_put(t->priv);
		daptrace_destroy_target(&mon->ctx, t);
	}
	mutex_unlock(&mon->targets_lock);
	mutex_unlock(&mon->lock);

	/* The worker notified through these until daptrace_stop() returned. */
	kernfs_put(mon->seq_kn);
	kernfs_put(mon->state_kn);
	mon->seq_kn = NULL;
	mon->state_kn = NULL;

	daptrace_ring_free(mon->ring);
	mon->ring = NULL;
	mutex_destroy(&mon->ring_lock);
	mutex_destroy(&mon->targets_lock);
	mutex_destroy(&mon->lock);
}

/*
 * A series outside Kbuild's verified list builds only on request
 * (DAPTRACE_UNVERIFIED=1); say so once per load, in the log an admin reads
 * (sysfs has it too: kernel_series, kernel_series_verified).
 */
static void __init daptrace_warn_unverified(void)
{
	if (DAPTRACE_SERIES_VERIFIED)
		return;
	pr_warn("kernel series %d.%d is unverified (built with DAPTRACE_UNVERIFIED=1): the page walk, the accessed-bit clears and the TLB flushes were not reviewed against this series' sources, so access counts may be wrong or a flush missed; check the results against a known workload before relying on them\n",
		DAPTRACE_SERIES_MAJOR, DAPTRACE_SERIES_MINOR);
}

static int __init daptrace_init(void)
{
	int err;

#ifdef DAPTRACE_DEBUG
	WARN_ON(inject_warn);
#endif
	daptrace_warn_unverified();
	err = daptrace_mon_init(&daptrace_mon);
	if (err)
		return err;
	err = daptrace_sysfs_init(&daptrace_mon);
	if (err)
		goto err_mon;
	return 0;

err_mon:
	daptrace_mon_exit(&daptrace_mon);
	return err;
}

static void __exit daptrace_exit(void)
{
	/* No sysfs callers after this, so nobody can restart the worker. */
	daptrace_sysfs_exit(&daptrace_mon);
	daptrace_mon_exit(&daptrace_mon);
}

module_init(daptrace_init);
module_exit(daptrace_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("daptrace developers");
MODULE_DESCRIPTION("Data access pattern monitoring with bounded overhead");
