/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences, in one place.  Force-included by Kbuild into
 * every object, so no other file compares versions.  Each difference is a
 * shim that takes the name of the upstream helper it stands in for, chosen
 * by a feature probe of the kernel being built for (Kbuild's
 * DAPTRACE_HAVE_* flags: a declaration in its headers, an export in its
 * Module.symvers) or by its configuration; the code reads as if written for
 * the newest kernel.
 *
 * Macros only, so that this file, included before any kernel header,
 * pulls in none.
 *
 * Verified, built and booted in CI (docs/kernel-facts.md says what was
 * checked in each): the series of Kbuild's daptrace-verified-series, as
 * Debian ships them, x86-64.
 */
#ifndef _DAPTRACE_COMPAT_H
#define _DAPTRACE_COMPAT_H

#ifdef __KERNEL__
/*
 * Where the walk was verified: x86-64 only, and the series Kbuild lists in
 * daptrace-verified-series.  Kbuild refuses any other series unless asked
 * with DAPTRACE_UNVERIFIED=1, and tells this file which series it built for
 * and whether that one is verified (reported in sysfs, warned about at
 * load).  What changes between series is the meaning of page-table and TLB
 * internals, which no probe can see (docs/kernel-facts.md, series).
 */
#ifndef CONFIG_X86_64
#error "daptrace: the page walk and TLB handling are verified on x86-64 only"
#endif
#if !defined(DAPTRACE_SERIES_MAJOR) || !defined(DAPTRACE_SERIES_MINOR) || \
	!defined(DAPTRACE_SERIES_VERIFIED)
#error "daptrace: build through its Kbuild, which names the kernel series"
#endif

/*
 * Memory maps.  VMA_ITERATOR()/for_each_vma() (the maple tree, 6.1) over
 * the VMA list that came before; vma_lookup() (5.14) as find_vma() plus
 * the containment test it adds.  Callers hold mmap_read_lock, as for the
 * originals.  vma_find() is avoided everywhere: its end bound is inclusive
 * on 6.1 and exclusive from 6.2 on.
 */
#ifndef DAPTRACE_HAVE_VMA_ITERATOR
struct vma_iterator {
	struct mm_struct *mm;
	unsigned long addr;
	struct vm_area_struct *vma;
};

#define VMA_ITERATOR(name, __mm, __addr) \
	struct vma_iterator name = { .mm = (__mm), .addr = (__addr) }
#define vma_next(__vmi) ({						\
	struct vma_iterator *__it = (__vmi);				\
	__it->vma = __it->vma ? __it->vma->vm_next :			\
		    find_vma(__it->mm, __it->addr);			\
	__it->vma;							\
})
#define for_each_vma(__vmi, __vma) \
	for (; ((__vma) = vma_next(&(__vmi))) != NULL; )
#endif

#ifndef DAPTRACE_HAVE_VMA_LOOKUP
#define vma_lookup(__mm, __addr) ({					\
	unsigned long __a = (__addr);					\
	struct vm_area_struct *__v = find_vma((__mm), __a);		\
	__v && __a >= __v->vm_start ? __v : NULL;			\
})
#endif

/*
 * Folios (5.16): before them, a compound page is represented by its head
 * page, and these are the page-level originals of what vaddr.c uses.  The
 * opaque struct folio is never defined there: only pointers to it are
 * passed around.  The idle and young helpers are empty stubs unless the
 * kernel tracks idle pages (see daptrace_va_has_idle()).
 */
#ifndef DAPTRACE_HAVE_FOLIO
#define page_folio(__p)		((struct folio *)compound_head(__p))
#define folio_try_get(__f)	get_page_unless_zero((struct page *)(__f))
#define folio_put(__f)		put_page((struct page *)(__f))
#define folio_test_idle(__f)	page_is_idle((struct page *)(__f))
#define folio_set_idle(__f)	set_page_idle((struct page *)(__f))
#define folio_set_young(__f)	set_page_young((struct page *)(__f))
#define folio_test_young(__f)	page_is_young((struct page *)(__f))
#define folio_test_lru(__f)	PageLRU((struct page *)(__f))
#define folio_test_active(__f)	PageActive((struct page *)(__f))
#define folio_test_referenced(__f) PageReferenced((struct page *)(__f))
#define folio_nid(__f)		page_to_nid((struct page *)(__f))
#endif

/*
 * MGLRU (6.1, CONFIG_LRU_GEN): a folio's generation, the generation a
 * sequence number falls in, and the newest sequence number (max_seq) of a
 * folio's lruvec; without MGLRU no folio has a generation.
 *
 * daptrace_folio_lruvec(): the lruvec an LRU folio is on, what
 * folio_lruvec() returns, but without its fallback to root_mem_cgroup (not
 * exported) and without its write of lruvec->pgdat: NULL for an uncharged
 * folio, on no memcg's lists.  The caller holds rcu_read_lock(): a memcg
 * and its per-node lruvecs are freed only after a grace period
 * (css_free_rwork_fn() is queued with queue_rcu_work()), and from 7.x on
 * folio_memcg() reads objcg->memcg, which reparenting swaps, under RCU.
 * struct mem_cgroup's nodeinfo[], struct mem_cgroup_per_node's lruvec and
 * struct lruvec's lrugen.max_seq are named alike in 6.1 (struct
 * lru_gen_struct), 6.12 and 7.3 (struct lru_gen_folio).
 *
 * daptrace_lru_gen_max_seq(): max_seq as inc_max_seq() publishes it, after
 * the folios it moved (smp_store_release()).
 */
#ifdef CONFIG_LRU_GEN
#ifdef CONFIG_MEMCG
#define daptrace_folio_lruvec(__f) ({					\
	struct folio *__fl = (__f);					\
	struct mem_cgroup *__mc;					\
	mem_cgroup_disabled() ? &folio_pgdat(__fl)->__lruvec :		\
	(__mc = folio_memcg(__fl)) ?					\
	&__mc->nodeinfo[folio_nid(__fl)]->lruvec : NULL;		\
})
#else
#define daptrace_folio_lruvec(__f)	(&folio_pgdat(__f)->__lruvec)
#endif
#define daptrace_lru_gen_max_seq(__lruvec)				\
	/* pairs with inc_max_seq()'s smp_store_release() */		\
	smp_load_acquire(&(__lruvec)->lrugen.max_seq)
#else
#define folio_lru_gen(__f)		((void)(__f), -1)
#define lru_gen_from_seq(__seq)		((void)(__seq), 0)
#define daptrace_folio_lruvec(__f)	((void)(__f), (struct lruvec *)NULL)
#define daptrace_lru_gen_max_seq(__lruvec) ((void)(__lruvec), 0UL)
#endif

/* task_is_running() (5.14) reads what ->state was then called; 0 is TASK_RUNNING. */
#ifndef DAPTRACE_HAVE_TASK_IS_RUNNING
#define task_is_running(task)	(READ_ONCE((task)->state) == 0)
#endif

/*
 * ZONE_DEVICE entries: pte_devmap()/pmd_devmap() mark pages that are not
 * ordinary folios, until 6.17 removed the devmap bit (DAX maps ordinary
 * folios since; PFN maps are pte_special()/pmd_special() and live in
 * VM_PFNMAP VMAs, which the walk skips).  Without the bit nothing is devmap.
 */
#ifndef CONFIG_ARCH_HAS_PTE_DEVMAP
#define pte_devmap(__pte)	((void)(__pte), false)
#define pmd_devmap(__pmd)	((void)(__pmd), false)
#endif

/*
 * Dumpability, which decides who may ptrace a process (and whether it dumps
 * core): a flag of its mm, get_dumpable() and SUID_DUMP_USER, until 7.x
 * moved it to the task's exec state (task_exec_state_get_dumpable(),
 * TASK_DUMPABLE_OWNER, same value).  That reader is not exported: its
 * body, the exec state under RCU (the caller holds rcu_read_lock()), with
 * the upstream's task and the older kernels' mm both passed in.  Expanded
 * only after <linux/sched/exec_state.h>.
 */
#ifdef DAPTRACE_HAVE_TASK_EXEC_STATE
#define daptrace_task_exec_state_get_dumpable(__task, __mm) \
	((void)(__mm), READ_ONCE(rcu_dereference((__task)->exec_state)->dumpable))
#else
#define TASK_DUMPABLE_OWNER	SUID_DUMP_USER
#define daptrace_task_exec_state_get_dumpable(__task, __mm) \
	((void)(__task), get_dumpable(__mm))
#endif

/*
 * Binary sysfs attributes: on 7.3 the callbacks take a const struct
 * bin_attribute and a group lists const ones (the change began in 6.13,
 * after 6.12).
 */
#ifdef DAPTRACE_HAVE_CONST_BIN_ATTR
#define daptrace_bin_attr_const	const
#else
#define daptrace_bin_attr_const
#endif

/*
 * x86's ptep_test_and_clear_young(), pmdp_test_and_clear_young() and
 * pudp_test_and_clear_young(), which arch/x86/mm/pgtable.c defines without
 * an export (all series): their bodies, the atomic clear of the accessed bit the hardware sets
 * concurrently.
 */
#define daptrace_ptep_test_and_clear_young(__ptep) \
	test_and_clear_bit(_PAGE_BIT_ACCESSED, (unsigned long *)&(__ptep)->pte)
#define daptrace_pmdp_test_and_clear_young(__pmdp) \
	test_and_clear_bit(_PAGE_BIT_ACCESSED, (unsigned long *)(__pmdp))
#define daptrace_pudp_test_and_clear_young(__pudp) \
	test_and_clear_bit(_PAGE_BIT_ACCESSED, (unsigned long *)(__pudp))

/*
 * May a non-leaf pmd's accessed bit be clear (upper.c)?  From 6.1 on x86
 * selects CONFIG_ARCH_HAS_NONLEAF_PMD_YOUNG, pmd_bad() ignores the bit
 * (MGLRU clears it), and arch_has_hw_nonleaf_pmd_young() says whether the
 * CPU sets it (not under Xen PV).  Before, pmd_bad() compares every flag:
 * a table pmd without its accessed bit is "bad", and the kernel's walkers
 * clear bad pmds.
 */
#ifdef CONFIG_ARCH_HAS_NONLEAF_PMD_YOUNG
#define daptrace_nonleaf_pmd_young()	arch_has_hw_nonleaf_pmd_young()
#else
#define daptrace_nonleaf_pmd_young()	false
#endif

/*
 * TLB (tlb.c; docs/kernel-facts.md, tlb).  The kernel's own helpers below
 * sit in the "#ifndef MODULE" part of <asm/tlbflush.h> (or are defined in
 * arch/x86/mm/tlb.c without an export): each shim repeats the upstream body
 * under the upstream name with a daptrace_ prefix, and compat_check.c checks
 * at build time, against the kernel's own definitions, that what they read
 * is laid out as they assume.  Expanded only in tlb.c, after its headers.
 *
 * __flush_tlb_all(): exported to every module until 6.18; from 6.19 on to
 * KVM only (EXPORT_SYMBOL_FOR_KVM), and tlb.c flushes with the
 * instructions instead.  1 if usable.
 */
#ifdef DAPTRACE_HAVE_FLUSH_TLB_ALL
#define daptrace_have_flush_tlb_all()	1
#else
#define daptrace_have_flush_tlb_all()	0
#endif

/*
 * inc_mm_tlb_gen(): a returning atomic, i.e. a full barrier, as the
 * TLB-generation protocol requires of callers (see tlb.c).
 */
#define daptrace_inc_mm_tlb_gen(__mm) \
	atomic64_inc_return(&(__mm)->context.tlb_gen)

/*
 * The lazy-TLB flag, as the kernel's static tlb_is_not_lazy() reads it:
 * cpu_tlbstate_shared.is_lazy, exported since 5.13 (EXPORT_PER_CPU_SYMBOL);
 * struct tlb_state_shared holds only is_lazy in 6.1, 6.12 and 7.3.  Before
 * 5.13 the flag lives in cpu_tlbstate, which is not exported: then no CPU
 * counts as lazy, and lazy CPUs get the flush too (an IPI more, never one
 * less).  DAPTRACE_DECLARE_CPU_TLBSTATE_SHARED is expanded at file scope
 * by the one user.
 */
#ifdef DAPTRACE_HAVE_CPU_TLBSTATE_SHARED
#define DAPTRACE_DEFINE_TLB_STATE_SHARED				\
	struct daptrace_tlb_state_shared {				\
		bool is_lazy;						\
	}
#define DAPTRACE_DECLARE_CPU_TLBSTATE_SHARED				\
	DAPTRACE_DEFINE_TLB_STATE_SHARED;				\
	DECLARE_PER_CPU_SHARED_ALIGNED(struct daptrace_tlb_state_shared, \
				       cpu_tlbstate_shared)
#define daptrace_tlb_is_lazy(__cpu) \
	per_cpu(cpu_tlbstate_shared.is_lazy, (__cpu))
#else
#define DAPTRACE_DECLARE_CPU_TLBSTATE_SHARED \
	static_assert(true, "no exported lazy-TLB state before 5.13")
#define daptrace_tlb_is_lazy(__cpu)	((void)(__cpu), false)
#endif

/*
 * mm_global_asid() (6.15, CONFIG_BROADCAST_TLB_FLUSH): the ASID a process
 * shares on every CPU that has INVLPGB, or 0; its body, without the
 * sanity check.  Always 0 before.
 */
#ifdef CONFIG_BROADCAST_TLB_FLUSH
#define daptrace_mm_global_asid(__mm)					\
	(cpu_feature_enabled(X86_FEATURE_INVLPGB) ?			\
	 /* pairs with mm_assign_global_asid()'s release */		\
	 smp_load_acquire(&(__mm)->context.global_asid) : (u16)0)
/* May processes get global ASIDs here (the kernel's and the CPU's say)? */
#define daptrace_have_global_asids()	cpu_feature_enabled(X86_FEATURE_INVLPGB)
#else
#define daptrace_mm_global_asid(__mm)	((void)(__mm), (u16)0)
#define daptrace_have_global_asids()	false
#endif

#endif /* __KERNEL__ */
#endif /* _DAPTRACE_COMPAT_H */
