/* SPDX-License-Identifier: GPL-2.0 */
/* Host shim of <linux/limits.h>: the uapi header plus the kernel's U32_MAX. */
#ifndef _SHIM_LINUX_LIMITS_H
#define _SHIM_LINUX_LIMITS_H

/* The uapi one first: glibc's <limits.h> needs it and re-enters here. */
#include_next <linux/limits.h>
#include <limits.h>
#include <stdint.h>

#define U8_MAX		UINT8_MAX
#define U16_MAX		UINT16_MAX
#define U32_MAX		UINT32_MAX
#define U64_MAX		UINT64_MAX

#endif
