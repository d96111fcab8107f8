/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host shim of <linux/sort.h>: the C library's qsort(), which takes the
 * same comparison; a swap function is not supported (only NULL is used).
 */
#ifndef _SHIM_LINUX_SORT_H
#define _SHIM_LINUX_SORT_H

#include <stddef.h>
#include <stdlib.h>

static inline void sort(void *base, size_t num, size_t size,
			int (*cmp)(const void *, const void *),
			void (*swap)(void *, void *, int))
{
	(void)swap;
	qsort(base, num, size, cmp);
}

#endif
