/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <linux/align.h> for kernels before 5.11, which define ALIGN(),
 * ALIGN_DOWN() and IS_ALIGNED() in <linux/kernel.h>.  Searched after the
 * kernel's own include directories (Kbuild), so it is used only where the
 * kernel has no align.h.
 */
#ifndef _DAPTRACE_COMPAT_LINUX_ALIGN_H
#define _DAPTRACE_COMPAT_LINUX_ALIGN_H
#include <linux/kernel.h>
#endif
