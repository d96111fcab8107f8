/* SPDX-License-Identifier: GPL-2.0 */
/* Shim of <linux/string.h> for the host unit tests. */
#ifndef _SHIM_LINUX_STRING_H
#define _SHIM_LINUX_STRING_H
#include <string.h>
#endif
