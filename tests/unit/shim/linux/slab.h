/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host shim of <linux/slab.h> on top of libc, with allocation-failure
 * injection: while shim_alloc_budget is >= 0 each allocation consumes one
 * unit of it, and an allocation finding it at 0 fails.  shim_nr_live counts
 * blocks not yet freed, so tests can check for leaks test by test.
 */
#ifndef _SHIM_LINUX_SLAB_H
#define _SHIM_LINUX_SLAB_H

#include <stddef.h>
#include <stdint.h>

typedef unsigned int gfp_t;
#define GFP_KERNEL	0U

extern long shim_alloc_budget;
extern long shim_nr_live;

void *shim_alloc(size_t size, int zero);
void shim_free(const void *p);

static inline void *kmalloc(size_t size, gfp_t flags)
{
	(void)flags;
	return shim_alloc(size, 0);
}

static inline void *kzalloc(size_t size, gfp_t flags)
{
	(void)flags;
	return shim_alloc(size, 1);
}

static inline void *kmalloc_array(size_t n, size_t size, gfp_t flags)
{
	(void)flags;
	if (size && n > SIZE_MAX / size)
		return NULL;
	return shim_alloc(n * size, 0);
}

static inline void kfree(const void *p)
{
	shim_free(p);
}

#endif
