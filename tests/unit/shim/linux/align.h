/* SPDX-License-Identifier: GPL-2.0 */
/* Host shim of <linux/align.h>; @a must be a power of two. */
#ifndef _SHIM_LINUX_ALIGN_H
#define _SHIM_LINUX_ALIGN_H

#define ALIGN(x, a)		(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define ALIGN_DOWN(x, a)	((x) & ~((__typeof__(x))(a) - 1))

#endif
