/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences, in one place.  Force-included by Kbuild into
 * every object, so no other file compares versions.  Prefer testing for a
 * feature over comparing numbers; where a number is the only signal, say why.
 *
 * Supported: Debian bookworm 6.1 and bookworm-backports 6.12 (x86-64).
 */
#ifndef _DAPTRACE_COMPAT_H
#define _DAPTRACE_COMPAT_H

#ifdef __KERNEL__
#include <linux/version.h>

/*
 * Where the walk was verified.  The page walk, the accessed-bit clears and
 * the TLB-generation protocol in vaddr.c were each checked against the x86-64
 * sources of these two series; anything else needs a new look first.
 */
#ifndef CONFIG_X86_64
#error "daptrace: the page walk and TLB handling are verified on x86-64 only"
#endif
#if LINUX_VERSION_MAJOR != 6 || \
	(LINUX_VERSION_PATCHLEVEL != 1 && LINUX_VERSION_PATCHLEVEL != 12)
#error "daptrace: the page walk is verified on the 6.1 and 6.12 series only"
#endif

/*
 * vaddr.c: what it uses was checked in both kernels' headers and means the
 * same in both:
 *  - VMA_ITERATOR()/for_each_vma() and vma_lookup().  vma_find() is avoided:
 *    its end bound is inclusive on 6.1 and exclusive on 6.12.
 *  - pud_leaf()/pmd_leaf(): x86 defines both on both (6.1 via pud_large()).
 *  - ptep_get(), pte_offset_kernel(), pte_lockptr(mm, &pmdval), pmd_lock().
 *    pmdp_get_lockless() exists only on 6.12 (as a function, so it cannot be
 *    detected); on x86-64 it is READ_ONCE() of the pmd word, used instead.
 *  - folio_set_young(), folio_set_idle(), folio_test_idle(): empty stubs
 *    without CONFIG_PAGE_IDLE_FLAG (Debian 6.1), page flags with it (Debian
 *    6.12); callers test IS_ENABLED(CONFIG_PAGE_IDLE_FLAG) first.
 *  - folio_try_get() (inline), folio_put(), mmput_async(), prandom_u32_state().
 *
 * The x86 helpers below are the kernel's own, which modules cannot call
 * (defined in arch/x86/mm/pgtable.c without an export, or in the
 * "#ifndef MODULE" part of <asm/tlbflush.h> on both series): each shim
 * repeats the upstream body and keeps its name with a daptrace_ prefix.
 * Macros, so that this file, force-included everywhere, pulls in no header.
 */

/* ptep_test_and_clear_young() / pmdp_test_and_clear_young() on x86. */
#define daptrace_ptep_test_and_clear_young(ptep) \
	test_and_clear_bit(_PAGE_BIT_ACCESSED, (unsigned long *)&(ptep)->pte)
#define daptrace_pmdp_test_and_clear_young(pmdp) \
	test_and_clear_bit(_PAGE_BIT_ACCESSED, (unsigned long *)pmdp)

/*
 * inc_mm_tlb_gen(): a returning atomic, i.e. a full barrier, as the
 * TLB-generation protocol requires of callers (see vaddr.c).
 */
#define daptrace_inc_mm_tlb_gen(mm) \
	atomic64_inc_return(&(mm)->context.tlb_gen)

/*
 * cpu_tlbstate_shared.is_lazy, as the kernel's tlb_is_not_lazy() reads it:
 * the per-CPU variable is exported (EXPORT_PER_CPU_SYMBOL in
 * arch/x86/mm/tlb.c) but declared in the "#ifndef MODULE" part of
 * <asm/tlbflush.h>; struct tlb_state_shared holds only is_lazy on both
 * series.  Same name on purpose: should the header ever declare it for
 * modules, the build fails here instead of reading a stale layout.  Expanded
 * at file scope by its one user.
 */
#define DAPTRACE_DECLARE_CPU_TLBSTATE_SHARED				\
	struct tlb_state_shared {					\
		bool is_lazy;						\
	};								\
	DECLARE_PER_CPU_SHARED_ALIGNED(struct tlb_state_shared,	\
				       cpu_tlbstate_shared)
#define daptrace_tlb_is_lazy(cpu) per_cpu(cpu_tlbstate_shared.is_lazy, (cpu))

#endif /* __KERNEL__ */
#endif /* _DAPTRACE_COMPAT_H */
