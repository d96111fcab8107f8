// SPDX-License-Identifier: GPL-2.0
/*
 * TLB invalidation after accessed bits were cleared.
 *
 * A translation cached in a TLB keeps its accessed bit "set" in the CPU's
 * view: the CPU does not write the bit again until it walks the page table
 * anew, so a page we just made old reads as never accessed for as long as
 * the entry stays cached (docs/kernel-facts.md, tlb).  Only entries whose
 * bit was cleared matter: ours, and those MGLRU's aging walk cleared, for
 * it flushes nothing either (a pass that saw an aging flushes as if it had
 * cleared bits: &daptrace_walk_page.aged).  On x86 the classic LRU's
 * ptep_clear_flush_young() does not flush either, and the module sees no
 * sign of it (left open).  So a target with no clears in a pass, and no
 * aging seen, costs nothing.  Otherwise, per the policy:
 *
 * DAPTRACE_TLB_ROUND: every online CPU flushes, once per pass that cleared
 * anything.  Certainly sufficient; interrupts every CPU, also isolated ones
 * that never ran a target.
 *
 * DAPTRACE_TLB_MM (default): per target, only the CPUs that can hold its
 * translations, by joining the x86 TLB-generation protocol
 * (arch/x86/mm/tlb.c, the same in 5.10, 6.1, 6.12 and 7.3 for what follows).
 * Each mm has a generation, mm->context.tlb_gen; each CPU remembers, per
 * ASID slot, the generation it last flushed that mm's entries to
 * (cpu_tlbstate.ctxs[asid].tlb_gen).  Page-table writers bump the mm's
 * generation with inc_mm_tlb_gen() and IPI the CPUs in mm_cpumask();
 * everybody else catches up when it next loads the mm.  We do the same: bump
 * the generation after the clears, then flush on the target's mm_cpumask().
 * (Invalidating only the cleared addresses with INVLPG, waiting for the IPIs
 * since they read the address list, was tried: hot sets went unseen on 6.1
 * with -cpu max, and waiting cost the worker most of a CPU under
 * TCG; see the commit message.)  Why every CPU that may hold a stale
 * translation is covered:
 *
 *  1. CPU running the target (in mm_cpumask) when we read the mask: it gets
 *     the IPI and flushes the target's entries, user PCIDs of PTI included
 *     (see daptrace_tlb_flush_local()).  It does not update the CPU's
 *     recorded generation, so the CPU merely does one more flush than
 *     needed later.
 *  2. CPU that switched away before (no longer in mm_cpumask): with PCID its
 *     TLB still holds our entries under the old ASID, which is why flushing
 *     mm_cpumask alone is not enough.  When it switches back,
 *     switch_mm_irqs_off() -> choose_new_asid() finds the slot and flushes it
 *     because slot tlb_gen < mm tlb_gen, which our bump guarantees (without
 *     PCID, every switch flushes anyway; a recycled slot flushes too).  Its
 *     bit may also linger in mm_cpumask (6.12 and 7.3 trim it lazily): it
 *     then gets the IPI, which is merely wasted.
 *  3. Lazy CPU (it switched to a kernel thread or to idle and kept the
 *     target's page tables loaded; it stays in mm_cpumask): skipped, as the
 *     kernel's own flushes skip it (tlb_is_not_lazy()).  Leaving lazy mode
 *     for the same mm, switch_mm_irqs_off() clears is_lazy, issues a full
 *     barrier and compares the slot's tlb_gen with the mm's, flushing if
 *     behind; we bump tlb_gen (full barrier) and then read is_lazy, so
 *     either we see it not lazy and IPI it, or it sees our generation.  An
 *     idle CPU that last ran the target is thus never woken to flush.
 *     (Before 5.13 the flag is not exported: lazy CPUs get the IPI too.)
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
 *  6. Global ASIDs (7.3 on CPUs with INVLPGB): a process active on several
 *     CPUs at once may get one ASID shared by all CPUs, kept coherent by
 *     broadcast invalidation instead of generations: a CPU switching back
 *     to it reuses its entries without looking at tlb_gen (choose_new_asid()
 *     returns it with need_flush 0), so 2 and 3 do not hold.  Such a target
 *     is flushed on every online CPU, with a flush that must cover every
 *     ASID: __flush_tlb_all() or INVPCID.  Without both (6.19 on, with
 *     INVPCID off: "noinvpcid", or a hypervisor that hides it) the CR3
 *     reload drops only the loaded ASID's entries, and a CPU that switches
 *     back to the target later reuses the stale ones: the flushing
 *     policies are refused there (daptrace_tlb_init()).  TCG emulates
 *     neither INVLPGB nor global ASIDs: this case is reasoned, not tested.
 *
 * So no CPU that never ran the target, or only idles since, is interrupted.
 * Risks: this relies on arch/x86/mm/tlb.c internals that are not an API
 * (compat.h restricts the module to the series it was read on, and
 * compat_check.c checks the layouts it reads).  A stray bump is harmless by
 * design of the protocol: a CPU whose recorded generation is behind only
 * flushes more, never less.  Cost on the target: after a pass that cleared
 * bits, a switched-out CPU does one flush of the target's ASID on its next
 * switch-in (PCID retention is lost at most once per CPU per pass).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/cpumask.h>
#include <linux/mm_types.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/smp.h>
#include <asm/cpufeature.h>
#include <asm/invpcid.h>
#include <asm/special_insns.h>
#include <asm/tlbflush.h>

#include "tlb.h"

/* Set once at load, read by sysfs and the worker. */
static const char *daptrace_tlb_why;

/*
 * Does the flush of daptrace_tlb_flush_local() drop the user translations
 * of every ASID, or only of the one loaded?  Only of the loaded one when it
 * reloads CR3 with PCIDs in use: then the tlb_gen bump that precedes every
 * flush covers the other ASIDs (the CPU flushes one whose generation is
 * behind when it loads it again), but not a global ASID (see 6. above).
 */
static bool daptrace_tlb_flush_all_asids(void)
{
	return daptrace_have_flush_tlb_all() ||
	       cpu_feature_enabled(X86_FEATURE_INVPCID) ||
	       !cpu_feature_enabled(X86_FEATURE_PCID);
}

/*
 * IPI callback: drop this CPU's cached user translations.  Where the kernel
 * lets modules call __flush_tlb_all() (up to 6.18), that: INVPCID
 * all-context, or a CR4.PGE toggle, i.e. every entry of every PCID.  From
 * 6.19 on, what that would do minus the kernel's global entries, which hold
 * no user translation: INVPCID "all non-global" (every PCID, user PCIDs of
 * page-table isolation included), or, without INVPCID, a reload of CR3
 * with its own value: without PCIDs that drops every non-global entry;
 * with PCIDs those of the loaded ASID, which suffices only without
 * page-table isolation (its user PCID is flushed only by the kernel's own
 * deferred user-ASID invalidation, which modules cannot reach; see
 * daptrace_tlb_init()).  write_cr3() goes through paravirt (Xen PV).
 * Runs with interrupts off.
 */
static void daptrace_tlb_flush_local(void *unused)
{
	if (daptrace_have_flush_tlb_all())
		__flush_tlb_all();
	else if (cpu_feature_enabled(X86_FEATURE_INVPCID))
		invpcid_flush_all_nonglobals();
	else
		write_cr3(__read_cr3());
}

DAPTRACE_DECLARE_CPU_TLBSTATE_SHARED;

static bool daptrace_tlb_not_lazy(int cpu, void *unused)
{
	return !daptrace_tlb_is_lazy(cpu);
}

/**
 * daptrace_tlb_init() - find out whether this kernel and CPU let the
 * flushing policies work.
 *
 * They cannot where the CPU has PCIDs but no INVPCID and the kernel does
 * not export __flush_tlb_all() (6.19 on), so that a flush drops only the
 * loaded ASID's entries, and entries live under ASIDs that the tlb_gen
 * bump does not reach: the user PCIDs of page-table isolation (PTI; Intel
 * CPUs from before Haswell), or global ASIDs (6. above; INVLPGB with
 * INVPCID turned off).  Then only "none" is accepted, and the load says
 * why.
 */
void daptrace_tlb_init(void)
{
	daptrace_tlb_why = NULL;
	if (daptrace_tlb_flush_all_asids())
		return;
	if (cpu_feature_enabled(X86_FEATURE_PTI))
		daptrace_tlb_why = "PTI with PCIDs, no INVPCID, no __flush_tlb_all()";
	else if (daptrace_have_global_asids())
		daptrace_tlb_why = "global ASIDs with PCIDs, no INVPCID, no __flush_tlb_all()";
	if (daptrace_tlb_why)
		pr_info("tlb_flush: only \"none\" on this CPU and kernel: %s\n",
			daptrace_tlb_why);
}

/* Can @policy work here?  "none" always can. */
bool daptrace_tlb_policy_supported(enum daptrace_tlb_policy policy)
{
	return policy == DAPTRACE_TLB_NONE || !daptrace_tlb_why;
}

/* Why the flushing policies cannot work here, or NULL. */
const char *daptrace_tlb_unsupported_why(void)
{
	return daptrace_tlb_why;
}

/**
 * daptrace_tlb_flush_mm() - invalidate @mm's translations after a pass
 * that cleared accessed bits in it.
 * @mm:		Pinned by the caller.
 * @policy:	The policy in force; ROUND only bumps the generation here,
 *		daptrace_tlb_flush_round() follows once the pass is done.
 *
 * The IPIs are not waited for: the check comes a sampling interval later,
 * and only accesses between our clears and a remote CPU's flush (an IPI's
 * latency) can go unseen; later ones set the bit again.  Waiting made the
 * worker spin for as long as a busy remote CPU took to take the IPI, which
 * under emulation was most of the worker's CPU time.
 */
void daptrace_tlb_flush_mm(struct mm_struct *mm, enum daptrace_tlb_policy policy)
{
	if (policy == DAPTRACE_TLB_NONE)
		return;
	/* Full barrier: orders our clears before, the mask and is_lazy reads after. */
	daptrace_inc_mm_tlb_gen(mm);
	if (policy == DAPTRACE_TLB_ROUND)
		return;
	if (daptrace_mm_global_asid(mm))
		on_each_cpu(daptrace_tlb_flush_local, NULL, false);
	else
		on_each_cpu_cond_mask(daptrace_tlb_not_lazy,
				      daptrace_tlb_flush_local, NULL, false,
				      mm_cpumask(mm));
}

/* Policy round: every online CPU flushes, after a pass that cleared bits. */
void daptrace_tlb_flush_round(void)
{
	on_each_cpu(daptrace_tlb_flush_local, NULL, false);
}
