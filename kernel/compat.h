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
 * vaddr.c: no shim needed.  What it uses was checked in both kernels'
 * headers and means the same in both:
 *  - VMA_ITERATOR()/for_each_vma() and vma_lookup().  vma_find() is avoided:
 *    its end bound is inclusive on 6.1 and exclusive on 6.12.
 *  - pud_leaf()/pmd_leaf(): x86 defines both on both (6.1 via pud_large()).
 *  - ptep_get(), pte_offset_kernel(), pte_lockptr(mm, &pmdval), pmd_lock().
 *    pmdp_get_lockless() exists only on 6.12 (as a function, so it cannot be
 *    detected); on x86-64 it is READ_ONCE() of the pmd word, used instead.
 *  - folio_set_young(): an empty stub without CONFIG_PAGE_IDLE_FLAG (Debian
 *    6.1), a page flag with it (Debian 6.12).
 * Not a version difference but an x86 rule: inc_mm_tlb_gen() and
 * cpu_tlbstate_shared are inside "#ifndef MODULE" in <asm/tlbflush.h> on
 * both; see the TLB flush comment in vaddr.c.
 */

#endif /* __KERNEL__ */
#endif /* _DAPTRACE_COMPAT_H */
