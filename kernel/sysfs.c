// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/daptrace: configuration, state, counters and snapshots.
 *
 * Store handlers parse, take the monitor lock, refuse with -EBUSY while the
 * worker runs (the worker owns the context then; see struct daptrace_mon),
 * validate the whole resulting configuration and only then commit it, so a
 * rejected write changes nothing.  Every file is root-only, every write
 * needs CAP_SYS_ADMIN, and so does reading the snapshots (see
 * may_read_snapshots()).  The documentation is in sysfs-docs/.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/sched/mm.h>
#include <linux/daptrace.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/magic.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "daptrace.h"
#include "ring.h"
#include "tlb.h"

static struct daptrace_mon *kobj_mon(struct kobject *kobj)
{
	return &daptrace_mon;
}

/* Command words for "state" and "tlb_flush", indexed by their enums. */
enum daptrace_state { DAPTRACE_STATE_OFF, DAPTRACE_STATE_ON, NR_DAPTRACE_STATES };

static const char * const state_words[NR_DAPTRACE_STATES] = {
	[DAPTRACE_STATE_OFF] = "off",
	[DAPTRACE_STATE_ON] = "on",
};

static const char * const tlb_words[NR_DAPTRACE_TLB_POLICIES] = {
	[DAPTRACE_TLB_NONE] = "none",
	[DAPTRACE_TLB_ROUND] = "round",
	[DAPTRACE_TLB_MM] = "mm",
};

static int parse_word(const char *buf, const char * const *words, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (sysfs_streq(buf, words[i]))
			return i;
	return -EINVAL;
}

/*
 * Reads take no lock that daptrace_stop() holds: @mon->lock is held across
 * kthread_stop(), and a "cat" must never wait for a worker that is slow to
 * stop.  Single words are read with READ_ONCE() (stores write them with
 * WRITE_ONCE() under @mon->lock); the target list has its own lock.
 */
static bool running_lockless(struct daptrace_mon *mon)
{
	/* Acquire: pairs with the worker's release of worker_done. */
	return READ_ONCE(mon->worker) && !smp_load_acquire(&mon->worker_done);
}

/* --- state ----------------------------------------------------------- */

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n", state_words[running_lockless(kobj_mon(kobj))]);
}

static ssize_t state_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t count)
{
	struct daptrace_mon *mon = kobj_mon(kobj);
	int word, err = 0;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	word = parse_word(buf, state_words, NR_DAPTRACE_STATES);
	if (word < 0)
		return word;

	mutex_lock(&mon->lock);
	if (word == DAPTRACE_STATE_ON)
		err = daptrace_start(mon);
	else
		daptrace_stop(mon);
	mutex_unlock(&mon->lock);
	return err ?: count;
}

/* --- targets --------------------------------------------------------- */

/*
 * Targets can be added and removed while monitoring: the worker owns the
 * target list then, so a new target waits in @mon->pending and a removed one
 * is flagged (&daptrace_target.remove), and the worker applies both at its
 * next aggregation boundary.  Every look at the list, the pending targets
 * and the flags is under @mon->targets_lock.
 */

/*
 * By the number listed in target; with @gone, only a target that exited.
 * Pending ones too (@pending says which): a process may join and exit
 * before the worker's next aggregation.
 */
static struct daptrace_target *__find_target(struct daptrace_mon *mon,
					     int pid_nr, bool gone, bool *pending)
{
	struct daptrace_target *t;

	*pending = false;
	daptrace_for_each_target(t, &mon->ctx)
		if (t->pid_nr == pid_nr && !t->remove &&
		    (!gone || READ_ONCE(t->exited) || !mon->ops->target_valid(t)))
			return t;
	list_for_each_entry(t, &mon->pending, list)
		if (t->pid_nr == pid_nr && (!gone || !mon->ops->target_valid(t))) {
			*pending = true;
			return t;
		}
	return NULL;
}

/* By identity: the same process written as different numbers is found. */
static struct daptrace_target *__find_target_priv(struct daptrace_mon *mon,
						  void *priv, bool *pending)
{
	struct daptrace_target *t;

	*pending = false;
	daptrace_for_each_target(t, &mon->ctx)
		if (!t->remove && mon->ops->target_same(t->priv, priv))
			return t;
	*pending = true;
	list_for_each_entry(t, &mon->pending, list)
		if (mon->ops->target_same(t->priv, priv))
			return t;
	return NULL;
}

/*
 * A thread id names its process: monitoring is per address space, so a
 * target is a thread group, reported by its leader's pid.  Resolved in the
 * writer's pid namespace, once: the thread group's struct pid is what the
 * ops take, so no later lookup by number can meet a recycled one.  Returns
 * a reference to it and its number in @tgid, or NULL if there is no such
 * process.  Identity is then the struct pid (docs/kernel-facts.md,
 * identity).
 */
static struct pid *resolve_tgid(int pid_nr, int *tgid)
{
	struct task_struct *task;
	struct pid *pid = NULL;

	/* pid_task() and the task's signal struct are valid under RCU. */
	rcu_read_lock();
	task = pid_task(find_vpid(pid_nr), PIDTYPE_PID);
	if (task)
		pid = get_task_pid(task, PIDTYPE_TGID);
	rcu_read_unlock();
	if (!pid)
		return NULL;
	*tgid = pid_vnr(pid);
	if (*tgid <= 0) {	/* reaped meanwhile */
		put_pid(pid);
		return NULL;
	}
	return pid;
}

/*
 * Is @f procfs's own mem file (/proc/<pid>/mem or /proc/<pid>/task/<tid>/mem)?
 * The path is looked up in the writer's mount namespace, which a writer
 * with CAP_SYS_ADMIN shapes at will (unshare -m): a symlink or a bind mount
 * at that path can lead to another file.  procfs's environ, auxv and
 * pagemap hold the same mm after a PTRACE_MODE_READ check only, which
 * Yama does not restrict and LSMs treat apart from attach, so the mm alone
 * proves nothing.  mem's dentry is the one whatever led to it (a bind
 * mount or a symlink resolves to the dentry of the file itself), and in
 * procfs only mem is a regular file called "mem", with mode 0600 that no
 * chmod can change (proc_setattr() refuses ATTR_MODE).  Its name cannot
 * change either (procfs pid entries are never renamed), so d_name is read
 * without d_lock.  A mem file of another process that shares the target's
 * mm (CLONE_VM) would pass with the right mm: its check covers that mm.
 */
static bool is_proc_mem_file(struct file *f)
{
	const struct dentry *d = f->f_path.dentry;

	return d->d_sb->s_magic == PROC_SUPER_MAGIC &&
	       file_inode(f)->i_mode == (S_IFREG | 0600) &&
	       d->d_name.len == 3 && !memcmp(d->d_name.name, "mem", 3);
}

/*
 * May the writer watch the process @pid, @tgid in the writer's pid
 * namespace?  CAP_SYS_ADMIN alone bypasses the ptrace rules that LSMs
 * (SELinux, AppArmor) and Yama enforce, and the access pattern, the layout
 * and (with phys_addr) the physical addresses of a process are what those
 * rules guard from whoever adds the target (readers are another matter:
 * every CAP_SYS_ADMIN reader sees every target, see may_read_snapshots()).
 * ptrace_may_access() and mm_access() are not exported, so
 * the writer's context opens the mem file of one of the process's threads
 * for it, which applies exactly them (mem_open(), PTRACE_MODE_ATTACH, with
 * the LSM hooks and Yama's scope).  A thread that has the mm: a leader
 * that called pthread_exit() is a zombie without one, and opening its mem
 * file checks nothing at all (mm_access() finds no mm and returns none), as
 * daptrace_va_get_mm() picks the thread too.  The file is looked up in the
 * writer's own /proc and must be procfs's mem (is_proc_mem_file(), else
 * -EACCES); to be sure its numbers named the same process there as in the
 * writer's pid namespace, the mm the open pinned (mem_open() keeps it as
 * the file's private data) must be the target's; if not (a /proc of
 * another pid namespace), -ESRCH.  Returns 0 or the open's error (-EACCES
 * when the check refuses; -ENOENT without /proc).
 */
static int may_watch(int tgid, struct pid *pid)
{
	char path[sizeof("/proc//task//mem") + 2 * 11];
	struct task_struct *task, *th, *holder = NULL;
	struct mm_struct *mm = NULL;
	struct file *f;
	int tid = 0, err;

	/* The thread list and a thread's mm word are read under RCU. */
	rcu_read_lock();
	task = pid_task(pid, PIDTYPE_PID);
	if (task) {
		for_each_thread(task, th) {
			if (READ_ONCE(th->mm)) {
				holder = th;
				get_task_struct(holder);
				break;
			}
		}
	}
	rcu_read_unlock();
	if (holder) {
		tid = task_pid_vnr(holder);
		mm = get_task_mm(holder);
		put_task_struct(holder);
	}
	if (!mm || tid <= 0) {
		err = -ESRCH;	/* exited meanwhile */
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/mem", tgid, tid);
	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f)) {
		err = PTR_ERR(f);
		goto out;
	}
	if (!is_proc_mem_file(f))
		err = -EACCES;
	else if (f->private_data != mm)
		err = -ESRCH;
	else
		err = 0;
	filp_close(f, NULL);
out:
	if (mm)
		mmput(mm);
	return err;
}

static int parse_pid(const char *buf, int *pid_nr)
{
	int err = kstrtoint(buf, 10, pid_nr);

	if (err)
		return err;
	return *pid_nr > 0 ? 0 : -EINVAL;
}

/* Room for one more line and the "# N more" trailer in a sysfs page. */
#define TARGET_LINE_RESERVE	(32 + 32)

/*
 * One line of a target list: "pid" or "pid what"; a target that no longer
 * fits in the page is counted in @more instead (see target_more()).
 */
static void target_line(char *buf, int *len, unsigned int *more, int pid_nr,
			const char *what)
{
	if (*len > PAGE_SIZE - TARGET_LINE_RESERVE)
		(*more)++;
	else if (what)
		*len += sysfs_emit_at(buf, *len, "%d %s\n", pid_nr, what);
	else
		*len += sysfs_emit_at(buf, *len, "%d\n", pid_nr);
}

static int target_more(char *buf, int len, unsigned int more)
{
	if (!more)
		return len;
	return len + sysfs_emit_at(buf, len, "# %u more\n", more);
}

static ssize_t target_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct daptrace_mon *mon = kobj_mon(kobj);
	struct daptrace_target *t;
	unsigned int more = 0;
	int len = 0;

	mutex_lock(&mon->targets_lock);
	daptrace_for_each_target(t, &mon->ctx)
		target_line(buf, &len, &more, t->pid_nr, NULL);
	list_for_each_entry(t, &mon->pending, list)
		target_line(buf, &len, &more, t->pid_nr, NULL);
	len = target_more(buf, len, more);
	mutex_unlock(&mon->targets_lock);
	return len;
}

static ssize_t target_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	struct daptrace_mon *mon = kobj_mon(kobj);
	struct daptrace_target *t;
	void *priv;
	struct pid *pid;
	bool pending;
	int pid_nr, tgid, err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = parse_pid(buf, &pid_nr);
	if (err)
		return err;
	/* Resolved here, in the writer's context and pid namespace. */
	pid = resolve_tgid(pid_nr, &tgid);
	if (!pid)
		return -ESRCH;
	priv = mon->ops->target_get(pid);
	err = IS_ERR(priv) ? PTR_ERR(priv) : may_watch(tgid, pid);
	put_pid(pid);
	if (err) {
		if (!IS_ERR(priv))
			mon->ops->target_put(priv);
		return err;
	}
	t = daptrace_target_new(tgid, priv);
	if (!t) {
		mon->ops->target_put(priv);
		return -ENOMEM;
	}

	mutex_lock(&mon->lock);
	mutex_lock(&mon->targets_lock);
	if (__find_target_priv(mon, priv, &pending)) {
		err = -EEXIST;
	} else if (mon->ctx.nr_targets + mon->nr_pending >= DAPTRACE_MAX_TARGETS) {
		err = -ENOSPC;
	} else if (daptrace_running(mon)) {
		/* Under targets_lock: see worker_ends(). */
		if (mon->worker_ending) {
			err = -EAGAIN;
		} else {
			list_add_tail(&t->list, &mon->pending);
			mon->nr_pending++;
		}
	} else {
		daptrace_add_target(&mon->ctx, t);
	}
	mutex_unlock(&mon->targets_lock);
	mutex_unlock(&mon->lock);
	if (err) {
		mon->ops->target_put(priv);
		kfree(t);
		return err;
	}
	return count;
}

/*
 * Remove @t: at once if it is pending or the worker is stopped, else at the
 * worker's next aggregation.  Caller holds @mon->lock and targets_lock.
 */
static void __remove_target(struct daptrace_mon *mon, struct daptrace_target *t,
			    bool pending)
{
	if (pending) {
		list_del(&t->list);
		mon->nr_pending--;
		mon->ops->target_put(t->priv);
		kfree(t);
	} else if (daptrace_running(mon)) {
		t->remove = true;
	} else {
		mon->ops->target_put(t->priv);
		daptrace_destroy_target(&mon->ctx, t);
	}
}

static ssize_t target_remove_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	struct daptrace_mon *mon = kobj_mon(kobj);
	struct daptrace_target *t;
	void *priv = NULL;
	struct pid *pid;
	bool pending = false;
	int pid_nr, tgid = 0, err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = parse_pid(buf, &pid_nr);
	if (err)
		return err;
	pid = resolve_tgid(pid_nr, &tgid);
	if (pid) {
		priv = mon->ops->target_get(pid);
		put_pid(pid);
		if (IS_ERR(priv))
			priv = NULL;
	}

	/*
	 * A gone target by the number it is listed under, even if that
	 * number now names another process; else the live process that the
	 * number names in the writer's namespace, by identity (any of its
	 * tids); else, if it names none, a target listed under the number.
	 * A number that names a live process which is not a target removes
	 * nothing: it is not another namespace's number for some target.
	 */
	mutex_lock(&mon->lock);
	mutex_lock(&mon->targets_lock);
	t = __find_target(mon, pid_nr, true, &pending);
	if (!t && priv)
		t = __find_target_priv(mon, priv, &pending);
	else if (!t && tgid <= 0)
		t = __find_target(mon, pid_nr, false, &pending);
	if (t)
		__remove_target(mon, t, pending);
	else
		err = -ENOENT;
	mutex_unlock(&mon->targets_lock);
	mutex_unlock(&mon->lock);
	if (priv)
		mon->ops->target_put(priv);
	return err ?: count;
}

static ssize_t target_status_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	struct daptrace_mon *mon = kobj_mon(kobj);
	struct daptrace_target *t;
	unsigned int more = 0;
	const char *what;
	bool on;
	int len = 0;

	mutex_lock(&mon->targets_lock);
	on = running_lockless(mon);
	daptrace_for_each_target(t, &mon->ctx) {
		if (READ_ONCE(t->exited)) {
			smp_rmb();	/* pairs with smp_wmb() in worker_revoke() */
			what = READ_ONCE(t->revoked) ? "revoked" : "exited";
		} else {
			what = on ? "monitoring" : "idle";
		}
		target_line(buf, &len, &more, t->pid_nr, what);
	}
	list_for_each_entry(t, &mon->pending, list)
		target_line(buf, &len, &more, t->pid_nr, "joining");
	len = target_more(buf, len, more);
	mutex_unlock(&mon->targets_lock);
	return len;
}

static ssize_t nr_targets_show(struct kobject *kobj, struct kobj_attribute *attr,
			       char *buf)
{
	struct daptrace_mon *mon = kobj_mon(kobj);
	unsigned int nr;

	mutex_lock(&mon->targets_lock);
	nr = mon->ctx.nr_targets + mon->nr_pending;
	mutex_unlock(&mon->targets_lock);
	return sysfs_emit(buf, "%u\n", nr);
}

/* --- attributes ------------------------------------------------------ */

/*
 * A setting: a value that changes only while monitoring is off (the worker
 * reads it unlocked), located by @offset (in struct daptrace_attrs for the
 * numbers, in struct daptrace_mon for the rest).  Every setting is written
 * through setting_store(): @parse reads the input, @apply validates it
 * against the whole configuration and writes it.
 */
struct daptrace_setting_attr;

struct daptrace_setting_ops {
	ssize_t (*show)(struct daptrace_mon *mon, const struct daptrace_setting_attr *a,
			char *buf);
	int (*parse)(const char *buf, unsigned long *val);
	int (*apply)(struct daptrace_mon *mon, const struct daptrace_setting_attr *a,
		     unsigned long val);
};

struct daptrace_setting_attr {
	struct kobj_attribute kattr;
	const struct daptrace_setting_ops *ops;
	size_t offset;
};

static const struct daptrace_setting_attr *to_setting(struct kobj_attribute *kattr)
{
	return container_of(kattr, struct daptrace_setting_attr, kattr);
}

static ssize_t setting_show(struct kobject *kobj, struct kobj_attribute *kattr,
			    char *buf)
{
	const struct daptrace_setting_attr *a = to_setting(kattr);

	return a->ops->show(kobj_mon(kobj), a, buf);
}

/*
 * The one store path of the settings: a writer without CAP_SYS_ADMIN gets
 * -EPERM, input that ops->parse refuses its error, and with @mon->lock
 * held a running monitor -EBUSY; otherwise ops->apply validates the value
 * and writes it (WRITE_ONCE: readers and the worker read it unlocked), or
 * refuses it and changes nothing.
 */
static ssize_t setting_store(struct kobject *kobj, struct kobj_attribute *kattr,
			     const char *buf, size_t count)
{
	const struct daptrace_setting_attr *a = to_setting(kattr);
	struct daptrace_mon *mon = kobj_mon(kobj);
	unsigned long val;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = a->ops->parse(buf, &val);
	if (err)
		return err;

	mutex_lock(&mon->lock);
	err = daptrace_running(mon) ? -EBUSY : a->ops->apply(mon, a, val);
	mutex_unlock(&mon->lock);
	return err ?: count;
}

/* The numbers: the fields of struct daptrace_attrs. */
static unsigned long *attrs_field(struct daptrace_attrs *attrs,
				  const struct daptrace_setting_attr *a)
{
	return (unsigned long *)((char *)attrs + a->offset);
}

static ssize_t ulong_show(struct daptrace_mon *mon, const struct daptrace_setting_attr *a,
			  char *buf)
{
	return sysfs_emit(buf, "%lu\n", READ_ONCE(*attrs_field(&mon->ctx.attrs, a)));
}

static int ulong_parse(const char *buf, unsigned long *val)
{
	return kstrtoul(buf, 10, val);
}

/* Valid only as part of the whole set: aggr_us >= sample_us, and so on. */
static int ulong_apply(struct daptrace_mon *mon, const struct daptrace_setting_attr *a,
		       unsigned long val)
{
	struct daptrace_attrs attrs = mon->ctx.attrs;
	int err;

	*attrs_field(&attrs, a) = val;
	err = daptrace_attrs_validate(&attrs);
	if (!err)
		WRITE_ONCE(*attrs_field(&mon->ctx.attrs, a), val);
	return err;
}

static const struct daptrace_setting_ops ulong_ops = {
	.show = ulong_show,
	.parse = ulong_parse,
	.apply = ulong_apply,
};

/* A setting in @_type (struct daptrace_attrs or daptrace_mon), file @file. */
#define DAPTRACE_SETTING_ATTR(_var, file, _ops, _type, _field)		\
	static struct daptrace_setting_attr _var = {			\
		.kattr = __ATTR(file, 0600, setting_show, setting_store), \
		.ops = &(_ops),						\
		.offset = offsetof(_type, _field),			\
	}

#define DAPTRACE_ULONG_ATTR(_var, file, _field)				\
	DAPTRACE_SETTING_ATTR(_var, file, ulong_ops, struct daptrace_attrs, _field)

DAPTRACE_ULONG_ATTR(sample_us_attr, sample_us, sample_us);
DAPTRACE_ULONG_ATTR(aggr_us_attr, aggr_us, aggr_us);
DAPTRACE_ULONG_ATTR(update_us_attr, update_us, update_us);
DAPTRACE_ULONG_ATTR(min_nr_regions_attr, min_nr_regions, min_nr_regions);
DAPTRACE_ULONG_ATTR(max_nr_regions_attr, max_nr_regions, max_nr_regions);
/* The intervals goal (DAMON's intervals_goal): see daptrace_tune_intervals(). */
DAPTRACE_ULONG_ATTR(goal_access_bp_attr, intervals_goal_access_bp, goal_access_bp);
DAPTRACE_ULONG_ATTR(goal_aggrs_attr, intervals_goal_aggrs, goal_aggrs);
DAPTRACE_ULONG_ATTR(goal_min_sample_us_attr, intervals_goal_min_sample_us,
		    goal_min_sample_us);
DAPTRACE_ULONG_ATTR(goal_max_sample_us_attr, intervals_goal_max_sample_us,
		    goal_max_sample_us);
/* The recall goal: see daptrace_tune_recall(). */
DAPTRACE_ULONG_ATTR(recall_goal_bp_attr, recall_goal_bp, recall_goal_bp);
DAPTRACE_ULONG_ATTR(recall_max_cpu_bp_attr, recall_max_cpu_bp, recall_max_cpu_bp);

/* The TLB flush policy: a word of tlb_words. */
static ssize_t tlb_flush_show(struct daptrace_mon *mon,
			      const struct daptrace_setting_attr *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", tlb_words[READ_ONCE(mon->tlb)]);
}

static int tlb_flush_parse(const char *buf, unsigned long *val)
{
	int word = parse_word(buf, tlb_words, NR_DAPTRACE_TLB_POLICIES);

	if (word < 0)
		return word;
	/* Refused whatever the state: it could never work here. */
	if (!daptrace_tlb_policy_supported(word))
		return -EOPNOTSUPP;
	*val = word;
	return 0;
}

static int tlb_flush_apply(struct daptrace_mon *mon,
			   const struct daptrace_setting_attr *a, unsigned long val)
{
	WRITE_ONCE(mon->tlb, val);
	return 0;
}

static const struct daptrace_setting_ops tlb_flush_ops = {
	.show = tlb_flush_show,
	.parse = tlb_flush_parse,
	.apply = tlb_flush_apply,
};

DAPTRACE_SETTING_ATTR(tlb_flush_attr, tlb_flush, tlb_flush_ops, struct daptrace_mon, tlb);

/* On/off switches: the bool fields of struct daptrace_mon. */
static bool *mon_bool(struct daptrace_mon *mon, const struct daptrace_setting_attr *a)
{
	return (bool *)((char *)mon + a->offset);
}

static ssize_t bool_show(struct daptrace_mon *mon, const struct daptrace_setting_attr *a,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", state_words[READ_ONCE(*mon_bool(mon, a))]);
}

static int bool_parse(const char *buf, unsigned long *val)
{
	int word = parse_word(buf, state_words, NR_DAPTRACE_STATES);

	if (word < 0)
		return word;
	*val = word == DAPTRACE_STATE_ON;
	return 0;
}

static int bool_apply(struct daptrace_mon *mon,
		      const struct daptrace_setting_attr *a, unsigned long val)
{
	WRITE_ONCE(*mon_bool(mon, a), val);
	return 0;
}

static const struct daptrace_setting_ops bool_ops = {
	.show = bool_show,
	.parse = bool_parse,
	.apply = bool_apply,
};

/*
 * Physical addresses in snapshots, and the tracepoint, are opt-in: a
 * physical address helps rowhammer, and the tracepoint's readers need not
 * hold CAP_SYS_ADMIN (tracefs permissions, CAP_PERFMON), while it shows
 * the targets' layout.
 */
DAPTRACE_SETTING_ATTR(phys_addr_attr, phys_addr, bool_ops, struct daptrace_mon, phys_addr);
DAPTRACE_SETTING_ATTR(tracepoint_attr, tracepoint, bool_ops, struct daptrace_mon, tracepoint);
/* The upper-level scan (vaddr.c, upper.c): on by default. */
DAPTRACE_SETTING_ATTR(upper_scan_attr, upper_scan, bool_ops, struct daptrace_mon, upper_scan);

/*
 * Accuracy probes per window, 0..DAPTRACE_MAX_PROBE_PAGES (0: none).  Set
 * while monitoring is off (-EBUSY while on), like tlb_flush.
 */
static ssize_t probe_pages_show(struct daptrace_mon *mon,
				const struct daptrace_setting_attr *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(mon->probe_pages));
}

/* As the other numbers: -ERANGE past ULONG_MAX, -EINVAL past the cap. */
static int probe_pages_parse(const char *buf, unsigned long *val)
{
	int err = kstrtoul(buf, 10, val);

	if (err)
		return err;
	return *val > DAPTRACE_MAX_PROBE_PAGES ? -EINVAL : 0;
}

static int probe_pages_apply(struct daptrace_mon *mon,
			     const struct daptrace_setting_attr *a, unsigned long val)
{
	WRITE_ONCE(mon->probe_pages, val);
	return 0;
}

static const struct daptrace_setting_ops probe_pages_ops = {
	.show = probe_pages_show,
	.parse = probe_pages_parse,
	.apply = probe_pages_apply,
};

DAPTRACE_SETTING_ATTR(probe_pages_attr, probe_pages, probe_pages_ops, struct daptrace_mon,
		      probe_pages);

/*
 * The probes' cost bound (daptrace_probes_budget()), in basis points of
 * the worker's CPU, 1..DAPTRACE_MAX_PROBE_MAX_CPU_BP (no bound); 0 is
 * refused: no probes at all is probe_pages 0.  Set while monitoring is
 * off, like probe_pages.
 */
static ssize_t probe_max_cpu_bp_show(struct daptrace_mon *mon,
				     const struct daptrace_setting_attr *a, char *buf)
{
	return sysfs_emit(buf, "%lu\n", READ_ONCE(mon->probe_max_cpu_bp));
}

/* As the other numbers: -ERANGE past ULONG_MAX, -EINVAL outside the range. */
static int probe_max_cpu_bp_parse(const char *buf, unsigned long *val)
{
	int err = kstrtoul(buf, 10, val);

	if (err)
		return err;
	return !*val || *val > DAPTRACE_MAX_PROBE_MAX_CPU_BP ? -EINVAL : 0;
}

static int probe_max_cpu_bp_apply(struct daptrace_mon *mon,
				  const struct daptrace_setting_attr *a,
				  unsigned long val)
{
	WRITE_ONCE(mon->probe_max_cpu_bp, val);
	return 0;
}

static const struct daptrace_setting_ops probe_max_cpu_bp_ops = {
	.show = probe_max_cpu_bp_show,
	.parse = probe_max_cpu_bp_parse,
	.apply = probe_max_cpu_bp_apply,
};

DAPTRACE_SETTING_ATTR(probe_max_cpu_bp_attr, probe_max_cpu_bp, probe_max_cpu_bp_ops,
		      struct daptrace_mon, probe_max_cpu_bp);

/* --- counters (lockless: written only by the worker) ------------------ */

static ssize_t nr_regions_show(struct kobject *kobj, struct kobj_attribute *attr,
			       char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(kobj_mon(kobj)->cnt.nr_regions));
}

static ssize_t nr_probe_pages_show(struct kobject *kobj, struct kobj_attribute *attr,
				   char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(kobj_mon(kobj)->cnt.nr_probe_pages));
}

/*
 * A 64-bit counter of struct daptrace_counters, located by its offset, shown
 * divided by @unit (times are kept in ns and shown in us).
 */
struct daptrace_counter_attr {
	struct kobj_attribute kattr;
	size_t offset;
	u32 unit;
};

static ssize_t counter_show(struct kobject *kobj, struct kobj_attribute *kattr,
			    char *buf)
{
	const struct daptrace_counter_attr *a =
		container_of(kattr, struct daptrace_counter_attr, kattr);
	u64 *cnt = (u64 *)((char *)&kobj_mon(kobj)->cnt + a->offset);

	return sysfs_emit(buf, "%llu\n", div_u64(READ_ONCE(*cnt), a->unit));
}

#define DAPTRACE_COUNTER_ATTR(_var, file, _field, _unit)		\
	static struct daptrace_counter_attr _var = {			\
		.kattr = __ATTR(file, 0400, counter_show, NULL),	\
		.offset = offsetof(struct daptrace_counters, _field),	\
		.unit = _unit,						\
	}

DAPTRACE_COUNTER_ATTR(nr_samples_attr, nr_samples, nr_samples, 1);
DAPTRACE_COUNTER_ATTR(nr_samples_late_attr, nr_samples_late, nr_late, 1);
DAPTRACE_COUNTER_ATTR(nr_samples_busy_attr, nr_samples_busy, nr_busy, 1);
DAPTRACE_COUNTER_ATTR(nr_snapshots_attr, nr_snapshots, nr_snapshots, 1);
DAPTRACE_COUNTER_ATTR(nr_snapshots_missed_attr, nr_snapshots_missed, nr_missed, 1);
DAPTRACE_COUNTER_ATTR(worker_cpu_us_attr, worker_cpu_us, worker_cpu_ns, NSEC_PER_USEC);
DAPTRACE_COUNTER_ATTR(probe_us_attr, probe_us, probe_ns, NSEC_PER_USEC);
DAPTRACE_COUNTER_ATTR(upper_entries_attr, upper_entries, upper_entries, 1);
DAPTRACE_COUNTER_ATTR(upper_uncovered_attr, upper_uncovered, upper_uncovered, 1);
DAPTRACE_COUNTER_ATTR(upper_cuts_attr, upper_cuts, upper_cuts, 1);

/* --- the kernel series built for (Kbuild; compat.h) -------------------- */

static ssize_t kernel_series_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d.%d\n", DAPTRACE_SERIES_MAJOR,
			  DAPTRACE_SERIES_MINOR);
}

static ssize_t kernel_series_verified_show(struct kobject *kobj,
					   struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  DAPTRACE_SERIES_VERIFIED ? "verified" : "unverified");
}

static ssize_t snapshot_seq_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	struct daptrace_mon *mon = kobj_mon(kobj);

	/*
	 * Arms the next publish's notification.  Fully ordered, the flag before
	 * the seq: pairs with the xchg in daptrace_sysfs_notify_snapshot().
	 */
	atomic_xchg(&mon->seq_armed, 1);
	return sysfs_emit(buf, "%lld\n", atomic64_read_acquire(&mon->seq));
}

/* --- snapshots ------------------------------------------------------- */

/* Records the text view copies: more than ever fit in one page. */
#define SNAPSHOT_TEXT_RECS	128
/*
 * Longest region line ("-2147483648 0x<16> 0x<16> 4294967295 4294967295
 * 4294967295\n", 80 bytes) plus the "more regions" trailer: a line is only
 * emitted while this much room is left, so no line is ever cut short by the
 * end of the page.
 */
#define SNAPSHOT_TEXT_RESERVE	(80 + 48)

/*
 * Address layout and access pattern of other processes: like DAMON, reading
 * them needs CAP_SYS_ADMIN.  For the binary ring it is checked in the
 * credentials of whoever opened the file (a root process that dropped the
 * capability cannot read; one that opened the file before dropping it can),
 * for the text view in the reader's (see snapshot_show()).  There is no per-target ptrace-style
 * check: ptrace_may_access() is not exported to modules (and DAMON has none
 * either); the capability is the whole policy (docs/kernel-facts.md,
 * permissions).
 */
static bool may_read_snapshots(struct file *file)
{
	return file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN);
}

/* Format the newest snapshot into @buf (PAGE_SIZE bytes); returns the length. */
static int snapshot_format(struct daptrace_mon *mon, char *buf)
{
	struct daptrace_region_rec *recs;
	struct daptrace_snap_hdr hdr;
	int i, nr = -EAGAIN, tries, len;
	u64 seq;

	recs = kmalloc_array(SNAPSHOT_TEXT_RECS, sizeof(*recs), GFP_KERNEL);
	if (!recs)
		return -ENOMEM;

	mutex_lock(&mon->ring_lock);
	/* The newest slot is only rewritten DAPTRACE_RING_SLOTS publishes later. */
	for (tries = 0; tries < 3 && nr == -EAGAIN; tries++) {
		seq = atomic64_read_acquire(&mon->seq);
		if (!seq || !mon->ring) {
			nr = -ENOENT;	/* nothing published: "none" */
			break;
		}
		nr = daptrace_ring_copy_snapshot(mon->ring, seq, &hdr, recs,
						 SNAPSHOT_TEXT_RECS);
		/* Lapped since the seq was read: a newer one is there. */
		if (nr == -ENOENT && atomic64_read(&mon->seq) != seq)
			nr = -EAGAIN;
	}
	mutex_unlock(&mon->ring_lock);

	if (nr < 0) {
		kfree(recs);
		return nr == -EAGAIN ? -EAGAIN : scnprintf(buf, PAGE_SIZE, "none\n");
	}
	len = scnprintf(buf, PAGE_SIZE, "seq %llu\nstart_ns %llu\nend_ns %llu\n",
			hdr.seq, hdr.start_ns, hdr.end_ns);
	len += scnprintf(buf + len, PAGE_SIZE - len,
			 "sample_us %u\naggr_us %u\n", hdr.sample_us, hdr.aggr_us);
	len += scnprintf(buf + len, PAGE_SIZE - len,
			 "nr_samples %u\nnr_regions %u\nflags %#x\n",
			 hdr.nr_samples, hdr.nr_regions, hdr.flags);
	len += scnprintf(buf + len, PAGE_SIZE - len,
			 "# pid start end nr_accesses age nr_unobserved\n");
	for (i = 0; i < nr && len <= PAGE_SIZE - SNAPSHOT_TEXT_RESERVE; i++)
		len += scnprintf(buf + len, PAGE_SIZE - len,
				 "%d %#llx %#llx %u %u %u\n", recs[i].pid,
				 recs[i].start, recs[i].end, recs[i].nr_accesses,
				 recs[i].age, recs[i].nr_unobserved);
	if (hdr.nr_regions > i)
		len += scnprintf(buf + len, PAGE_SIZE - len,
				 "# %u more regions: read 'snapshots'\n",
				 hdr.nr_regions - i);
	kfree(recs);
	return len;
}

/*
 * The text view is a plain attribute so that reads in small chunks see one
 * snapshot (sysfs formats it once per open, into the open file's buffer).
 * Its show() gets no file, so here the reader's credentials count; it runs
 * in the read(2) of the process reading.
 */
static ssize_t snapshot_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	return snapshot_format(kobj_mon(kobj), buf);
}

static ssize_t snapshots_read(struct file *file, struct kobject *kobj,
			      daptrace_bin_attr_const struct bin_attribute *attr,
			      char *buf, loff_t off, size_t count)
{
	struct daptrace_mon *mon = kobj_mon(kobj);
	ssize_t ret = 0;

	if (!may_read_snapshots(file))
		return -EPERM;
	mutex_lock(&mon->ring_lock);
	if (mon->ring)
		ret = daptrace_ring_read(mon->ring, buf, off, count);
	mutex_unlock(&mon->ring_lock);
	return ret;
}

static struct kobj_attribute state_attr = __ATTR(state, 0600, state_show, state_store);
static struct kobj_attribute target_attr = __ATTR(target, 0600, target_show, target_store);
static struct kobj_attribute target_remove_attr =
	__ATTR(target_remove, 0200, NULL, target_remove_store);
static struct kobj_attribute target_status_attr =
	__ATTR(target_status, 0400, target_status_show, NULL);
static struct kobj_attribute nr_targets_attr =
	__ATTR(nr_targets, 0400, nr_targets_show, NULL);
static struct kobj_attribute nr_regions_attr = __ATTR(nr_regions, 0400, nr_regions_show, NULL);
static struct kobj_attribute nr_probe_pages_attr =
	__ATTR(nr_probe_pages, 0400, nr_probe_pages_show, NULL);
static struct kobj_attribute snapshot_seq_attr =
	__ATTR(snapshot_seq, 0400, snapshot_seq_show, NULL);
static struct kobj_attribute snapshot_attr = __ATTR(snapshot, 0400, snapshot_show, NULL);
static struct kobj_attribute kernel_series_attr =
	__ATTR(kernel_series, 0400, kernel_series_show, NULL);
static struct kobj_attribute kernel_series_verified_attr =
	__ATTR(kernel_series_verified, 0400, kernel_series_verified_show, NULL);

/* size 0: the ring's size changes with max_nr_regions; reads clamp themselves. */
static struct bin_attribute snapshots_attr = __BIN_ATTR(snapshots, 0400, snapshots_read, NULL, 0);

static struct attribute *daptrace_attrs[] = {
	&state_attr.attr,
	&target_attr.attr,
	&target_remove_attr.attr,
	&target_status_attr.attr,
	&nr_targets_attr.attr,
	&sample_us_attr.kattr.attr,
	&aggr_us_attr.kattr.attr,
	&update_us_attr.kattr.attr,
	&min_nr_regions_attr.kattr.attr,
	&max_nr_regions_attr.kattr.attr,
	&goal_access_bp_attr.kattr.attr,
	&goal_aggrs_attr.kattr.attr,
	&goal_min_sample_us_attr.kattr.attr,
	&goal_max_sample_us_attr.kattr.attr,
	&recall_goal_bp_attr.kattr.attr,
	&recall_max_cpu_bp_attr.kattr.attr,
	&tlb_flush_attr.kattr.attr,
	&phys_addr_attr.kattr.attr,
	&tracepoint_attr.kattr.attr,
	&probe_pages_attr.kattr.attr,
	&probe_max_cpu_bp_attr.kattr.attr,
	&upper_scan_attr.kattr.attr,
	&nr_regions_attr.attr,
	&nr_probe_pages_attr.attr,
	&nr_samples_attr.kattr.attr,
	&nr_samples_late_attr.kattr.attr,
	&nr_samples_busy_attr.kattr.attr,
	&nr_snapshots_attr.kattr.attr,
	&nr_snapshots_missed_attr.kattr.attr,
	&worker_cpu_us_attr.kattr.attr,
	&probe_us_attr.kattr.attr,
	&upper_entries_attr.kattr.attr,
	&upper_uncovered_attr.kattr.attr,
	&upper_cuts_attr.kattr.attr,
	&snapshot_seq_attr.attr,
	&snapshot_attr.attr,
	&kernel_series_attr.attr,
	&kernel_series_verified_attr.attr,
	NULL,
};

static daptrace_bin_attr_const struct bin_attribute *daptrace_bin_attrs[] = {
	&snapshots_attr,
	NULL,
};

static const struct attribute_group daptrace_group = {
	.attrs = daptrace_attrs,
	.bin_attrs = daptrace_bin_attrs,
};

static void daptrace_sysfs_wake_seq_pollers(struct daptrace_mon *mon)
{
	if (mon->seq_kn)
		sysfs_notify_dirent(mon->seq_kn);
}

/*
 * Called by the worker after each publish; kernfs_notify() does not sleep,
 * but it queues kernfs's fsnotify work unless that is pending, and so wakes
 * a kworker per window also while no one waits.  Hence only a publish that
 * follows a read of snapshot_seq notifies.  No poller misses a wake-up for
 * it: a poller reads the file before it polls (the read arms sysfs poll),
 * and a notification wakes every poller of the file.  Why the read and the
 * publish cannot pass each other: kernfs records the event count of the
 * reader's open file before show() runs (kernfs_seq_show()), show() sets
 * the flag and then reads the seq, and the worker stored the seq before
 * this test; both xchgs are full barriers.  So at least one of these holds:
 * the worker sees the flag, and its notification (the event count's
 * increment) comes after the reader's record of the count, so poll()
 * returns; or the reader saw the new seq.  (A reader may see the seq and
 * be notified of it too: one spurious wake-up.  inotify watchers of the
 * file are told only of publishes that follow a read.)
 */
static void daptrace_sysfs_notify_snapshot(struct daptrace_mon *mon)
{
	/* Pairs with the xchg in snapshot_seq_show(). */
	if (atomic_xchg(&mon->seq_armed, 0))
		daptrace_sysfs_wake_seq_pollers(mon);
}

static void daptrace_sysfs_notify_state(struct daptrace_mon *mon)
{
	if (mon->state_kn)
		sysfs_notify_dirent(mon->state_kn);
}

int daptrace_sysfs_init(struct daptrace_mon *mon)
{
	int err;

	mon->kobj = kobject_create_and_add("daptrace", kernel_kobj);
	if (!mon->kobj)
		return -ENOMEM;
	err = sysfs_create_group(mon->kobj, &daptrace_group);
	if (err)
		goto err_kobj;
	/* References dropped in daptrace_mon_exit(), after the worker. */
	mon->seq_kn = sysfs_get_dirent(mon->kobj->sd, "snapshot_seq");
	mon->state_kn = sysfs_get_dirent(mon->kobj->sd, "state");
	if (!mon->seq_kn || !mon->state_kn) {
		err = -ENOENT;
		goto err_kobj;
	}
	mon->notify_snapshot = daptrace_sysfs_notify_snapshot;
	mon->notify_state = daptrace_sysfs_notify_state;
	return 0;

err_kobj:
	kobject_del(mon->kobj);
	kobject_put(mon->kobj);
	mon->kobj = NULL;
	return err;
}

/*
 * Removes the files and waits for running callbacks to return.  The removal
 * must be kobject_del(): kobject_put() alone removes the files only when the
 * last reference goes, and with CONFIG_DEBUG_KOBJECT_RELEASE that is delayed
 * by seconds, past the point where this module's code is freed
 * (docs/kernel-facts.md, kobject).
 */
void daptrace_sysfs_exit(struct daptrace_mon *mon)
{
	kobject_del(mon->kobj);
	kobject_put(mon->kobj);
	mon->kobj = NULL;
	/*
	 * Wake pollers of the removed files (else they sleep on until their
	 * timeout, forever without one); their next read fails with -ENODEV.
	 */
	daptrace_sysfs_wake_seq_pollers(mon);
	daptrace_sysfs_notify_state(mon);
}
