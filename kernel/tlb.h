/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TLB invalidation after accessed bits were cleared (tlb.c).
 */
#ifndef _DAPTRACE_TLB_H
#define _DAPTRACE_TLB_H

#include <linux/types.h>

#include "ops.h"

struct mm_struct;

void daptrace_tlb_init(void);
bool daptrace_tlb_policy_supported(enum daptrace_tlb_policy policy);
const char *daptrace_tlb_unsupported_why(void);
void daptrace_tlb_flush_mm(struct mm_struct *mm, enum daptrace_tlb_policy policy);
void daptrace_tlb_flush_round(void);

#endif /* _DAPTRACE_TLB_H */
