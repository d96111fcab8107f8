/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host shim of <linux/types.h> for the daptrace unit tests: the system's uapi
 * header (__u32, __u64, __s32, used by <linux/daptrace.h>) plus the kernel's
 * short types and bool.
 */
#ifndef _SHIM_LINUX_TYPES_H
#define _SHIM_LINUX_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#endif
