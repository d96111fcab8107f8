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
#include <linux/fs.h>
#include <linux/daptrace.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
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

/* By the number listed in target; with @gone, only a target that exited. */
static struct daptrace_target *find_target(struct daptrace_mon *mon, int pid_nr,
					   bool gone)
{
	struct daptrace_target *t;

	daptrace_for_each_target(t, &mon->ctx)
		if (t->pid_nr == pid_nr &&
		    (!gone || t->exited || !mon->ops->target_valid(t)))
			return t;
	return NULL;
}

/* By identity: the same process written as different numbers is found. */
static struct daptrace_target *find_target_priv(struct daptrace_mon *mon,
						void *priv)
{
	struct daptrace_target *t;

	daptrace_for_each_target(t, &mon->ctx)
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

static int parse_pid(const char *buf, int *pid_nr)
{
	int err = kstrtoint(buf, 10, pid_nr);

	if (err)
		return err;
	return *pid_nr > 0 ? 0 : -EINVAL;
}

static ssize_t target_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct daptrace_mon *mon = kobj_mon(kobj);
	struct daptrace_target *t;
	int len = 0;

	mutex_lock(&mon->targets_lock);
	daptrace_for_each_target(t, &mon->ctx)
		len += sysfs_emit_at(buf, len, "%d\n", t->pid_nr);
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
	put_pid(pid);
	if (IS_ERR(priv))
		return PTR_ERR(priv);

	mutex_lock(&mon->lock);
	if (daptrace_running(mon))
		err = -EBUSY;
	else if (find_target_priv(mon, priv))
		err = -EEXIST;
	else if (mon->ctx.nr_targets >= DAPTRACE_MAX_TARGETS)
		err = -ENOSPC;
	if (err)
		goto out_put;
	t = daptrace_target_new(tgid, priv);
	if (!t) {
		err = -ENOMEM;
		goto out_put;
	}
	mutex_lock(&mon->targets_lock);
	daptrace_add_target(&mon->ctx, t);
	mutex_unlock(&mon->targets_lock);
	mutex_unlock(&mon->lock);
	return count;

out_put:
	mutex_unlock(&mon->lock);
	mon->ops->target_put(priv);
	return err;
}

static ssize_t target_remove_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	struct daptrace_mon *mon = kobj_mon(kobj);
	struct daptrace_target *t;
	void *priv = NULL;
	struct pid *pid;
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
	t = find_target(mon, pid_nr, true);
	if (!t && priv)
		t = find_target_priv(mon, priv);
	else if (!t && tgid <= 0)
		t = find_target(mon, pid_nr, false);
	if (daptrace_running(mon)) {
		err = -EBUSY;
	} else if (!t) {
		err = -ENOENT;
	} else {
		mon->ops->target_put(t->priv);
		mutex_lock(&mon->targets_lock);
		daptrace_destroy_target(&mon->ctx, t);
		mutex_unlock(&mon->targets_lock);
	}
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
	const char *what;
	bool on;
	int len = 0;

	mutex_lock(&mon->targets_lock);
	on = running_lockless(mon);
	/* The list is stable under the lock; only "exited" moves under us. */
	daptrace_for_each_target(t, &mon->ctx) {
		if (READ_ONCE(t->exited))
			what = "exited";
		else
			what = on ? "monitoring" : "idle";
		len += sysfs_emit_at(buf, len, "%d %s\n", t->pid_nr, what);
	}
	mutex_unlock(&mon->targets_lock);
	return len;
}

/* --- attributes ------------------------------------------------------ */

/* A numeric attribute of struct daptrace_attrs, located by its offset. */
struct daptrace_ulong_attr {
	struct kobj_attribute kattr;
	size_t offset;
};

static unsigned long *attrs_field(struct daptrace_attrs *attrs,
				  struct kobj_attribute *kattr)
{
	struct daptrace_ulong_attr *a =
		container_of(kattr, struct daptrace_ulong_attr, kattr);

	return (unsigned long *)((char *)attrs + a->offset);
}

static ssize_t ulong_attr_show(struct kobject *kobj,
			       struct kobj_attribute *kattr, char *buf)
{
	struct daptrace_mon *mon = kobj_mon(kobj);

	return sysfs_emit(buf, "%lu\n", READ_ONCE(*attrs_field(&mon->ctx.attrs, kattr)));
}

static ssize_t ulong_attr_store(struct kobject *kobj,
				struct kobj_attribute *kattr,
				const char *buf, size_t count)
{
	struct daptrace_mon *mon = kobj_mon(kobj);
	struct daptrace_attrs attrs;
	unsigned long val;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = kstrtoul(buf, 10, &val);
	if (err)
		return err;

	mutex_lock(&mon->lock);
	if (daptrace_running(mon)) {
		err = -EBUSY;
	} else {
		attrs = mon->ctx.attrs;
		*attrs_field(&attrs, kattr) = val;
		err = daptrace_attrs_validate(&attrs);
		if (!err)
			WRITE_ONCE(*attrs_field(&mon->ctx.attrs, kattr), val);
	}
	mutex_unlock(&mon->lock);
	return err ?: count;
}

static struct daptrace_ulong_attr sample_us_attr = {
	.kattr = __ATTR(sample_us, 0600, ulong_attr_show, ulong_attr_store),
	.offset = offsetof(struct daptrace_attrs, sample_us),
};

static struct daptrace_ulong_attr aggr_us_attr = {
	.kattr = __ATTR(aggr_us, 0600, ulong_attr_show, ulong_attr_store),
	.offset = offsetof(struct daptrace_attrs, aggr_us),
};

static struct daptrace_ulong_attr update_us_attr = {
	.kattr = __ATTR(update_us, 0600, ulong_attr_show, ulong_attr_store),
	.offset = offsetof(struct daptrace_attrs, update_us),
};

static struct daptrace_ulong_attr min_nr_regions_attr = {
	.kattr = __ATTR(min_nr_regions, 0600, ulong_attr_show, ulong_attr_store),
	.offset = offsetof(struct daptrace_attrs, min_nr_regions),
};

static struct daptrace_ulong_attr max_nr_regions_attr = {
	.kattr = __ATTR(max_nr_regions, 0600, ulong_attr_show, ulong_attr_store),
	.offset = offsetof(struct daptrace_attrs, max_nr_regions),
};

static ssize_t tlb_flush_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%s\n", tlb_words[READ_ONCE(kobj_mon(kobj)->tlb)]);
}

static ssize_t tlb_flush_store(struct kobject *kobj, struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	struct daptrace_mon *mon = kobj_mon(kobj);
	int word, err = 0;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	word = parse_word(buf, tlb_words, NR_DAPTRACE_TLB_POLICIES);
	if (word < 0)
		return word;

	/* Refused whatever the state: it could never work here. */
	if (!daptrace_tlb_policy_supported(word))
		return -EOPNOTSUPP;

	mutex_lock(&mon->lock);
	if (daptrace_running(mon))
		err = -EBUSY;
	else
		WRITE_ONCE(mon->tlb, word);
	mutex_unlock(&mon->lock);
	return err ?: count;
}

/* --- counters (lockless: written only by the worker) ------------------ */

static ssize_t nr_regions_show(struct kobject *kobj, struct kobj_attribute *attr,
			       char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(kobj_mon(kobj)->cnt.nr_regions));
}

static ssize_t nr_samples_show(struct kobject *kobj, struct kobj_attribute *attr,
			       char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(kobj_mon(kobj)->cnt.nr_samples));
}

static ssize_t nr_samples_late_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(kobj_mon(kobj)->cnt.nr_late));
}

static ssize_t nr_samples_busy_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(kobj_mon(kobj)->cnt.nr_busy));
}

static ssize_t nr_snapshots_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(kobj_mon(kobj)->cnt.nr_snapshots));
}

static ssize_t nr_snapshots_missed_show(struct kobject *kobj,
					struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(kobj_mon(kobj)->cnt.nr_missed));
}

static ssize_t worker_cpu_us_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	u64 ns = READ_ONCE(kobj_mon(kobj)->cnt.worker_cpu_ns);

	return sysfs_emit(buf, "%llu\n", div_u64(ns, NSEC_PER_USEC));
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
static struct kobj_attribute tlb_flush_attr =
	__ATTR(tlb_flush, 0600, tlb_flush_show, tlb_flush_store);
static struct kobj_attribute nr_regions_attr = __ATTR(nr_regions, 0400, nr_regions_show, NULL);
static struct kobj_attribute nr_samples_attr = __ATTR(nr_samples, 0400, nr_samples_show, NULL);
static struct kobj_attribute nr_samples_late_attr =
	__ATTR(nr_samples_late, 0400, nr_samples_late_show, NULL);
static struct kobj_attribute nr_samples_busy_attr =
	__ATTR(nr_samples_busy, 0400, nr_samples_busy_show, NULL);
static struct kobj_attribute nr_snapshots_attr =
	__ATTR(nr_snapshots, 0400, nr_snapshots_show, NULL);
static struct kobj_attribute nr_snapshots_missed_attr =
	__ATTR(nr_snapshots_missed, 0400, nr_snapshots_missed_show, NULL);
static struct kobj_attribute worker_cpu_us_attr =
	__ATTR(worker_cpu_us, 0400, worker_cpu_us_show, NULL);
static struct kobj_attribute snapshot_seq_attr =
	__ATTR(snapshot_seq, 0400, snapshot_seq_show, NULL);
static struct kobj_attribute snapshot_attr = __ATTR(snapshot, 0400, snapshot_show, NULL);

/* size 0: the ring's size changes with max_nr_regions; reads clamp themselves. */
static struct bin_attribute snapshots_attr = __BIN_ATTR(snapshots, 0400, snapshots_read, NULL, 0);

static struct attribute *daptrace_attrs[] = {
	&state_attr.attr,
	&target_attr.attr,
	&target_remove_attr.attr,
	&target_status_attr.attr,
	&sample_us_attr.kattr.attr,
	&aggr_us_attr.kattr.attr,
	&update_us_attr.kattr.attr,
	&min_nr_regions_attr.kattr.attr,
	&max_nr_regions_attr.kattr.attr,
	&tlb_flush_attr.attr,
	&nr_regions_attr.attr,
	&nr_samples_attr.attr,
	&nr_samples_late_attr.attr,
	&nr_samples_busy_attr.attr,
	&nr_snapshots_attr.attr,
	&nr_snapshots_missed_attr.attr,
	&worker_cpu_us_attr.attr,
	&snapshot_seq_attr.attr,
	&snapshot_attr.attr,
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
