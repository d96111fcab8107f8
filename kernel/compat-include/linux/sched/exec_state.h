/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <linux/sched/exec_state.h> for kernels before 7.x, where a process's
 * dumpability lives in its mm (<linux/sched/coredump.h>) and there is no
 * per-task exec state.  Searched after the kernel's own include
 * directories (Kbuild), so it is used only where the kernel has none.
 */
#ifndef _DAPTRACE_COMPAT_LINUX_SCHED_EXEC_STATE_H
#define _DAPTRACE_COMPAT_LINUX_SCHED_EXEC_STATE_H
#include <linux/sched/coredump.h>
#endif
