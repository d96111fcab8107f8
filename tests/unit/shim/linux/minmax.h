/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host shim of <linux/minmax.h>.  min()/max() keep the kernel's type check
 * (distinct pointer types warn, and the tests build with -Werror) so that a
 * mixed-type min() that would not build in the kernel fails here too.
 */
#ifndef _SHIM_LINUX_MINMAX_H
#define _SHIM_LINUX_MINMAX_H

#define __shim_cmp(x, y, op) ({				\
	__typeof__(x) __x = (x);			\
	__typeof__(y) __y = (y);			\
	(void)(&__x == &__y);				\
	__x op __y ? __x : __y; })

#define min(x, y)	__shim_cmp(x, y, <)
#define max(x, y)	__shim_cmp(x, y, >)
#define min_t(t, x, y)	__shim_cmp((t)(x), (t)(y), <)
#define max_t(t, x, y)	__shim_cmp((t)(x), (t)(y), >)
#define clamp_t(t, v, lo, hi)	min_t(t, max_t(t, v, lo), hi)

#endif
