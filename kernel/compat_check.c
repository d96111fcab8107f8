// SPDX-License-Identifier: GPL-2.0
/*
 * Build-time checks of compat.h's TLB shims against the kernel's own
 * definitions, which <asm/tlbflush.h> hides from modules: this file
 * undefines MODULE to see them.  It holds only static assertions and
 * generates no code, so nothing compiled with the kernel-proper view of the
 * headers ever runs in the module; a layout change in a stable update fails
 * the build here instead of being misread at run time.
 */
#undef MODULE

#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/mm_types.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <asm/tlbflush.h>

#ifdef DAPTRACE_HAVE_CPU_TLBSTATE_SHARED
DAPTRACE_DEFINE_TLB_STATE_SHARED;

static_assert(offsetof(struct tlb_state_shared, is_lazy) ==
	      offsetof(struct daptrace_tlb_state_shared, is_lazy));
static_assert(__same_type(((struct tlb_state_shared *)NULL)->is_lazy, bool));
#endif

static_assert(__same_type(((struct mm_struct *)NULL)->context.tlb_gen,
			  atomic64_t));

#ifdef CONFIG_BROADCAST_TLB_FLUSH
static_assert(__same_type(((struct mm_struct *)NULL)->context.global_asid,
			  u16));
#endif
