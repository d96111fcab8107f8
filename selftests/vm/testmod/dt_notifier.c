// SPDX-License-Identifier: GPL-2.0
/*
 * Test helper, never shipped: give a process a secondary MMU, as KVM does to
 * the QEMU that runs a guest (or VFIO, or an SVA device): an MMU notifier on
 * its mm.  Accesses through such an MMU set no accessed bit in the process's
 * page tables, so daptrace must report the process as not observable, and a
 * policy must not act on it.  The notifier here does nothing; what matters
 * is that mm_has_notifiers() is true.
 *
 *   insmod dt_notifier.ko pid=PID
 *
 * registers it; rmmod unregisters it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>

static int pid;
module_param(pid, int, 0400);
MODULE_PARM_DESC(pid, "process to give an MMU notifier");

static const struct mmu_notifier_ops dt_notifier_ops;
static struct mmu_notifier dt_notifier = { .ops = &dt_notifier_ops };
static struct mm_struct *dt_mm;

static int __init dt_notifier_init(void)
{
	struct task_struct *task;
	struct mm_struct *mm;
	struct pid *p;
	int err;

	p = find_get_pid(pid);
	task = get_pid_task(p, PIDTYPE_PID);
	put_pid(p);
	if (!task)
		return -ESRCH;
	mm = get_task_mm(task);
	put_task_struct(task);
	if (!mm)
		return -EINVAL;
	err = mmu_notifier_register(&dt_notifier, mm);
	if (!err) {
		/* Unregistering needs the mm_struct, not the address space. */
		mmgrab(mm);
		dt_mm = mm;
		pr_info("pid %d has an MMU notifier\n", pid);
	}
	mmput(mm);
	return err;
}

static void __exit dt_notifier_exit(void)
{
	mmu_notifier_unregister(&dt_notifier, dt_mm);
	mmdrop(dt_mm);
}

module_init(dt_notifier_init);
module_exit(dt_notifier_exit);
MODULE_DESCRIPTION("daptrace test helper: an MMU notifier on a process");
MODULE_LICENSE("GPL");
