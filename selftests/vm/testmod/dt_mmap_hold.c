// SPDX-License-Identifier: GPL-2.0
/*
 * Test helper, never shipped: hold a process's mmap lock for writing for a
 * while, as a page fault stuck in a hung FUSE or NFS mapping does to its
 * writers and, behind them, to every new reader.  The selftests use it to
 * show that daptrace's worker, "echo off" and rmmod do not wait for the lock.
 *
 *   insmod dt_mmap_hold.ko pid=PID ms=MS
 *
 * returns once the lock is held; a kernel thread holds it for MS
 * milliseconds, or until rmmod, which ends the hold at once.  While it is
 * held, /sys/module/dt_mmap_hold/parameters/held reads Y: a test that reads
 * Y after an operation knows the operation did not wait for the lock.  An
 * rwsem is released by the task that took it, hence the thread.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>

static int pid;
module_param(pid, int, 0400);
MODULE_PARM_DESC(pid, "process whose mmap lock to hold");

static unsigned int ms = 5000;
module_param(ms, uint, 0400);
MODULE_PARM_DESC(ms, "how long to hold it, in milliseconds");

static bool held;
module_param(held, bool, 0444);
MODULE_PARM_DESC(held, "Y while the lock is held");

static struct mm_struct *hold_mm;
static struct task_struct *holder;
static DECLARE_COMPLETION(hold_started);

static int dt_mmap_hold_fn(void *unused)
{
	unsigned long until = jiffies + msecs_to_jiffies(ms);

	mmap_write_lock(hold_mm);
	WRITE_ONCE(held, true);
	complete(&hold_started);
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop() || time_after_eq(jiffies, until))
			break;
		schedule_timeout(until - jiffies);
	}
	__set_current_state(TASK_RUNNING);
	WRITE_ONCE(held, false);
	mmap_write_unlock(hold_mm);
	pr_info("released pid %d's mmap lock\n", pid);
	/* kthread_stop() in the exit path collects the thread. */
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int __init dt_mmap_hold_init(void)
{
	struct task_struct *task;
	struct pid *p;

	p = find_get_pid(pid);
	task = get_pid_task(p, PIDTYPE_PID);
	put_pid(p);
	if (!task)
		return -ESRCH;
	hold_mm = get_task_mm(task);
	put_task_struct(task);
	if (!hold_mm)
		return -EINVAL;
	holder = kthread_run(dt_mmap_hold_fn, NULL, "dt_mmap_hold");
	if (IS_ERR(holder)) {
		mmput(hold_mm);
		return PTR_ERR(holder);
	}
	wait_for_completion(&hold_started);
	pr_info("holding pid %d's mmap lock for %u ms\n", pid, ms);
	return 0;
}

static void __exit dt_mmap_hold_exit(void)
{
	kthread_stop(holder);
	mmput(hold_mm);
}

module_init(dt_mmap_hold_init);
module_exit(dt_mmap_hold_exit);
MODULE_DESCRIPTION("daptrace test helper: hold a process's mmap lock");
MODULE_LICENSE("GPL");
