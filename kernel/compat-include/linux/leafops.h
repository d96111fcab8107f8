/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <linux/leafops.h> for kernels before the softleaf helpers (6.19): what
 * walk.c uses of them, over the swap-entry helpers they replaced.
 * Searched after the kernel's own include directories (Kbuild), so it is
 * used only where the kernel has no leafops.h.  Each name only where the
 * kernel does not spell it already (6.12's stable series defines some
 * transitional ones in <linux/swapops.h>).
 */
#ifndef _DAPTRACE_COMPAT_LINUX_LEAFOPS_H
#define _DAPTRACE_COMPAT_LINUX_LEAFOPS_H
#include <linux/swap.h>
#include <linux/swapops.h>

/* Callers pass a pte that is not present: a none pte gives no migration entry. */
#ifndef softleaf_from_pte
#define softleaf_from_pte(__pte)	pte_to_swp_entry(__pte)
#endif
#ifndef softleaf_is_migration
#define softleaf_is_migration(__e)	is_migration_entry(__e)
#endif
#ifndef pmd_is_migration_entry
#define pmd_is_migration_entry(__pmd)	is_pmd_migration_entry(__pmd)
#endif
#endif
