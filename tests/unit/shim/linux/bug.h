/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host shim of <linux/bug.h>: a kernel warning is a bug the unit tests must
 * not hide, so it aborts the test (the harness reports the signal).
 */
#ifndef _SHIM_LINUX_BUG_H
#define _SHIM_LINUX_BUG_H

#include <stdio.h>
#include <stdlib.h>

#define WARN_ON_ONCE(cond) ({						\
	int __warned = !!(cond);					\
	if (__warned) {							\
		fprintf(stderr, "WARN_ON_ONCE(%s) at %s:%d\n", #cond,	\
			__FILE__, __LINE__);				\
		abort();						\
	}								\
	__warned;							\
})

/* As the kernel's: a true condition fails the build. */
#define BUILD_BUG_ON(cond)	_Static_assert(!(cond), "BUILD_BUG_ON(" #cond ")")

#endif
