// SPDX-License-Identifier: GPL-2.0
/*
 * Targets: adding, reading back, removing, and the documented errors --
 * EEXIST twice, ESRCH no such process, EINVAL pid <= 0 / garbage / kernel
 * thread, ERANGE beyond int, ENOENT removing a non-target, ENOSPC for the
 * 4097th.  Targets join and leave while monitoring.  Pids are resolved in the writer's pid namespace; a thread id names
 * its process (shown as the leader's pid), one process is one target however
 * it is written, a number that names a live non-target removes nothing even
 * if a target from another namespace is listed under it, and an exec() in
 * a target starts its regions afresh.  Memory that a CLONE_VM child uses
 * while the target sleeps is seen as accessed.  An exit in the window that
 * "off" ends is reported like one at a boundary.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"

#define MAX_CHILDREN	(DT_MAX_TARGETS + 1)

FIXTURE(targets) {
	pid_t child[MAX_CHILDREN];
	int nr;
};

FIXTURE_SETUP(targets)
{
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset()) TH_LOG("cannot reset daptrace to defaults");
	self->nr = 0;
}

FIXTURE_TEARDOWN(targets)
{
	int i;

	dt_reset();
	for (i = 0; i < self->nr; i++)
		dt_reap(self->child[i]);
}

static pid_t spawn(struct __test_metadata *_metadata,
		   FIXTURE_DATA(targets) *self)
{
	pid_t pid;

	ASSERT_GT(MAX_CHILDREN, self->nr);
	pid = dt_spawn(0, 0);
	ASSERT_LT(0, pid) TH_LOG("fork a target: %s", strerror(-pid));
	self->child[self->nr++] = pid;
	return pid;
}

TEST_F(targets, add_read_back_status_remove)
{
	pid_t pid = spawn(_metadata, self);
	char buf[256], want[64], word[32];

	ASSERT_EQ(0, dt_add_target(pid)) TH_LOG("add live process %d", pid);
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%d", pid);
	EXPECT_STREQ(want, buf) TH_LOG("target lists the pid as written");
	ASSERT_EQ(0, dt_target_status(pid, word, sizeof(word)))
		TH_LOG("target_status lists %d", pid);
	EXPECT_STREQ("idle", word) TH_LOG("monitoring is off: idle");

	ASSERT_EQ(0, dt_remove_target(pid)) TH_LOG("remove the target");
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ("", buf) TH_LOG("target list empty after remove");
	ASSERT_LE(0, dt_read("target_status", buf, sizeof(buf)));
	EXPECT_STREQ("", buf) TH_LOG("target_status empty after remove");
	EXPECT_EQ(-ENOENT, dt_remove_target(pid)) TH_LOG("remove twice: ENOENT");
}

TEST_F(targets, several_targets_listed_in_order_added)
{
	char buf[256], want[256];
	pid_t a, b, c;
	int len = 0;

	a = spawn(_metadata, self);
	b = spawn(_metadata, self);
	c = spawn(_metadata, self);
	/* "echo $pid >": a trailing newline is fine. */
	snprintf(buf, sizeof(buf), "%d\n", b);
	ASSERT_EQ(0, dt_write("target", buf)) TH_LOG("add with newline");
	ASSERT_EQ(0, dt_add_target(a));
	snprintf(buf, sizeof(buf), "+%d", c);
	ASSERT_EQ(0, dt_write("target", buf)) TH_LOG("add with leading '+'");
	len += snprintf(want + len, sizeof(want) - len, "%d\n%d\n%d", b, a, c);
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf) TH_LOG("one pid per line, in order added");

	/* Removing the middle one keeps the order of the others. */
	ASSERT_EQ(0, dt_remove_target(a));
	snprintf(want, sizeof(want), "%d\n%d", b, c);
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);
}

TEST_F(targets, add_twice_fails_eexist)
{
	pid_t pid = spawn(_metadata, self);
	char buf[64], want[64];

	ASSERT_EQ(0, dt_add_target(pid));
	EXPECT_EQ(-EEXIST, dt_add_target(pid)) TH_LOG("same pid again");
	snprintf(buf, sizeof(buf), "%d\n", pid);
	EXPECT_EQ(-EEXIST, dt_write("target", buf)) TH_LOG("same pid, newline");
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%d", pid);
	EXPECT_STREQ(want, buf) TH_LOG("listed once");
}

TEST_F(targets, no_such_process_fails_esrch)
{
	pid_t pid = dt_unused_pid();
	char buf[64];

	ASSERT_LT(0, pid) TH_LOG("no free pid found");
	EXPECT_EQ(-ESRCH, dt_add_target(pid)) TH_LOG("pid %d has no process", pid);
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ("", buf) TH_LOG("nothing added");
}

TEST_F(targets, malformed_pids_rejected)
{
	static const struct { const char *val; int err; const char *why; } bad[] = {
		{ "0", EINVAL, "pid 0" },
		{ "-1", EINVAL, "negative" },
		{ "-2147483648", EINVAL, "INT_MIN" },
		{ "abc", EINVAL, "garbage" },
		{ "12x", EINVAL, "trailing junk" },
		{ " 1", EINVAL, "leading blank" },
		{ "1 2", EINVAL, "two pids in one write" },
		{ "1\n\n", EINVAL, "two newlines" },
		{ "\n", EINVAL, "empty line" },
		{ "0x1", EINVAL, "hexadecimal" },
		{ "2147483648", ERANGE, "INT_MAX + 1" },
		{ "99999999999999999999", ERANGE, "far beyond int" },
	};
	char buf[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-bad[i].err, dt_write("target", bad[i].val))
			TH_LOG("target \"%s\": want %s (%s)", bad[i].val,
			       strerror(bad[i].err), bad[i].why);
		EXPECT_EQ(-bad[i].err, dt_write("target_remove", bad[i].val))
			TH_LOG("target_remove \"%s\": want %s (%s)", bad[i].val,
			       strerror(bad[i].err), bad[i].why);
	}
	EXPECT_EQ(0, dt_write_len("target", "", 0)) TH_LOG("empty write: no-op");
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ("", buf) TH_LOG("nothing added");
}

TEST_F(targets, kernel_thread_fails_einval)
{
	char comm[64] = "";
	FILE *f = fopen("/proc/2/comm", "r");

	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = '\0';
	if (strcmp(comm, "kthreadd"))
		SKIP(return, "pid 2 is \"%s\", not kthreadd", comm);
	EXPECT_EQ(-EINVAL, dt_add_target(2)) TH_LOG("kthreadd has no mm");
}

TEST_F(targets, remove_non_target_fails_enoent)
{
	pid_t pid = spawn(_metadata, self);

	EXPECT_EQ(-ENOENT, dt_remove_target(pid)) TH_LOG("live but not a target");
	EXPECT_EQ(-ENOENT, dt_remove_target(1)) TH_LOG("pid 1, not a target");
}

/*
 * The limit: 4096 targets listed, the 4097th fails with ENOSPC; the text
 * views stop at a page with "# N more" and nr_targets has the count; and
 * monitoring all 4096 (idle) processes publishes whole snapshots, in a ring
 * sized for them.
 */
TEST_F_TIMEOUT(targets, target_past_the_limit_fails_enospc, 300)
{
	struct daptrace_ring_hdr rh;
	struct daptrace_snap_hdr sh;
	char buf[8192];
	unsigned int more = 0;
	int i, lines = 0, fd;
	long long seq;
	double t0;
	pid_t last;
	char *c;

	for (i = 0; i < DT_MAX_TARGETS; i++)
		ASSERT_EQ(0, dt_add_target(spawn(_metadata, self)))
			TH_LOG("target %d of %d", i + 1, DT_MAX_TARGETS);
	last = spawn(_metadata, self);
	EXPECT_EQ(-ENOSPC, dt_add_target(last)) TH_LOG("target 4097");
	EXPECT_EQ(DT_MAX_TARGETS, dt_read_ll("nr_targets"));
	ASSERT_LT(0, dt_read("target", buf, sizeof(buf)));
	for (c = buf; *c; c++)
		lines += *c == '\n';
	c = strstr(buf, "# ");
	ASSERT_NE(NULL, c) TH_LOG("no '# N more' line");
	ASSERT_EQ(1, sscanf(c, "# %u more", &more));
	EXPECT_EQ(DT_MAX_TARGETS, lines + (int)more)
		TH_LOG("%d lines then '# %u more'", lines, more);
	EXPECT_GE(4096, (int)strlen(buf)) TH_LOG("one page");
	ASSERT_LT(0, dt_read("target_status", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, " more"));

	ASSERT_EQ(0, dt_write("state", "on"));
	seq = dt_read_ll("snapshot_seq");
	t0 = dt_now_ms();
	while (dt_read_ll("snapshot_seq") < seq + 3 && dt_now_ms() - t0 < 60000)
		dt_sleep_ms(100);
	ASSERT_LE(seq + 3, dt_read_ll("snapshot_seq")) TH_LOG("3 windows");
	seq = dt_read_ll("snapshot_seq");
	fd = open(DT_SYSFS "/snapshots", O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dt_ring_hdr(fd, &rh));
	ASSERT_EQ(0, dt_slot_hdr(fd, &rh, seq, &sh));
	close(fd);
	TH_LOG("seq %lld: %u regions of 4096 targets, max_regions %u, flags %#x",
	       seq, sh.nr_regions, rh.max_regions, sh.flags);
	EXPECT_FALSE(sh.flags & DAPTRACE_SNAP_TRUNCATED);
	EXPECT_LE(DT_MAX_TARGETS, (int)sh.nr_regions) TH_LOG("a region each at least");
	ASSERT_EQ(0, dt_write("state", "off"));

	/* Room again after one is removed. */
	ASSERT_EQ(0, dt_remove_target(self->child[0]));
	EXPECT_EQ(0, dt_add_target(last)) TH_LOG("target 4096 after a removal");
}

/* The seq of the first snapshot after @from with @flag and @pid's regions. */
static long long wait_snapshot(struct __test_metadata *_metadata, long long from,
			       __u32 flag, pid_t pid, bool want_pid)
{
	long long seq = from, newest;
	double t0 = dt_now_ms();

	while (dt_now_ms() - t0 < 20000) {
		newest = dt_read_ll("snapshot_seq");
		for (; seq < newest; seq++) {
			__u32 flags;
			int has = dt_snapshot_has_pid(seq + 1, pid, &flags);

			if (has < 0)
				continue;
			if ((flags & flag) == flag && has == (int)want_pid)
				return seq + 1;
		}
		dt_sleep_ms(20);
	}
	return -1;
}

/*
 * Targets written while monitoring join at the next aggregation boundary
 * (listed as joining until then; the snapshot of that window says so), and
 * removed ones leave at the next one (that window still holds their
 * regions).  A target not joined yet is removed at once; writing it twice
 * fails with EEXIST.
 */
TEST_F_TIMEOUT(targets, targets_join_and_leave_while_on, 90)
{
	char word[32];
	pid_t a, b, c;
	long long seq;

	a = dt_spawn(8 << 20, 4096);
	ASSERT_LT(0, a);
	self->child[self->nr++] = a;
	ASSERT_EQ(0, dt_write("aggr_us", "500000"));
	ASSERT_EQ(0, dt_write("update_us", "1000000"));
	ASSERT_EQ(0, dt_add_target(a));
	ASSERT_EQ(0, dt_write("state", "on"));

	b = dt_spawn(8 << 20, 4096);
	ASSERT_LT(0, b);
	self->child[self->nr++] = b;
	seq = dt_read_ll("snapshot_seq");
	ASSERT_EQ(0, dt_add_target(b)) TH_LOG("add while on");
	ASSERT_EQ(0, dt_target_status(b, word, sizeof(word)));
	EXPECT_STREQ("joining", word) TH_LOG("before the next aggregation");
	EXPECT_EQ(-EEXIST, dt_add_target(b)) TH_LOG("twice, joining");
	EXPECT_EQ(2, dt_read_ll("nr_targets"));
	seq = wait_snapshot(_metadata, seq, DAPTRACE_SNAP_TARGET_JOINED, b, true);
	ASSERT_LT(0, seq) TH_LOG("no snapshot flagged as joined, with its regions");
	ASSERT_EQ(0, dt_target_status(b, word, sizeof(word)));
	EXPECT_STREQ("monitoring", word);

	/* Removed while on: gone at the next boundary, not before. */
	seq = dt_read_ll("snapshot_seq");
	ASSERT_EQ(0, dt_remove_target(a));
	ASSERT_EQ(0, dt_target_status(a, word, sizeof(word))) TH_LOG("still listed");
	seq = wait_snapshot(_metadata, seq, 0, a, false);
	ASSERT_LT(0, seq) TH_LOG("the removed target's regions stayed");
	EXPECT_NE(0, dt_target_status(a, word, sizeof(word))) TH_LOG("unlisted");
	ASSERT_LT(0, dt_read("state", word, sizeof(word)));
	EXPECT_STREQ("on", word) TH_LOG("b keeps it going");

	/* Joining, then removed: at once. */
	c = dt_spawn(0, 0);
	ASSERT_LT(0, c);
	self->child[self->nr++] = c;
	ASSERT_EQ(0, dt_add_target(c));
	ASSERT_EQ(0, dt_remove_target(c));
	EXPECT_NE(0, dt_target_status(c, word, sizeof(word)));
	ASSERT_EQ(0, dt_write("state", "off"));
}

/*
 * Monitoring one target in 2 s windows, which has just exited: what is
 * written next comes long before the window's boundary.
 */
static pid_t on_with_target_gone(struct __test_metadata *_metadata,
				 FIXTURE_DATA(targets) *self)
{
	pid_t pid = dt_spawn(8 << 20, 4096);

	ASSERT_LT(0, pid);
	self->child[self->nr++] = pid;
	ASSERT_EQ(0, dt_set_attrs(5000, 2000000, 2000000, 10, 1000));
	ASSERT_EQ(0, dt_add_target(pid));
	ASSERT_EQ(0, dt_write("state", "on"));
	dt_reap(pid);
	return pid;
}

/*
 * A target removed while on, whose exit then ends the worker: the removal
 * is applied as the worker ends.  Nobody writes "off" after reading it, so
 * a removal left for the next aggregation stayed listed for good.
 */
TEST_F_TIMEOUT(targets, removal_applied_when_the_last_target_exits, 60)
{
	char buf[64];
	pid_t pid;
	int i;

	/* the removal lands well before the window's boundary */
	pid = on_with_target_gone(_metadata, self);
	ASSERT_EQ(0, dt_remove_target(pid)) TH_LOG("remove while on");
	for (i = 0; i < 100; i++) {
		ASSERT_LT(0, dt_read("state", buf, sizeof(buf)));
		if (!strcmp(buf, "off"))
			break;
		dt_sleep_ms(100);
	}
	ASSERT_STREQ("off", buf) TH_LOG("the worker did not end with its last target");
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ("", buf) TH_LOG("the removed target is still listed");
	EXPECT_EQ(0, dt_read_ll("nr_targets"));
}

/*
 * A target that exits in the window that "off" ends is marked exited, and
 * that last snapshot says so: an owner that turns monitoring off as soon as
 * its command exits (daptrace record) must not hide the exit from readers
 * of target_status and of the snapshots (the exporter counts it).
 */
TEST_F_TIMEOUT(targets, exit_in_the_window_off_ends_is_reported, 60)
{
	char buf[64];
	long long seq;
	__u32 flags = 0;
	pid_t pid;

	/* "off" comes well before the window's boundary */
	pid = on_with_target_gone(_metadata, self);
	ASSERT_EQ(0, dt_write("state", "off"));
	ASSERT_EQ(0, dt_target_status(pid, buf, sizeof(buf)));
	EXPECT_STREQ("exited", buf) TH_LOG("the exit before off is not reported");
	seq = dt_read_ll("snapshot_seq");
	ASSERT_LT(0, seq) TH_LOG("no window published at off");
	ASSERT_LE(0, dt_snapshot_has_pid(seq, pid, &flags));
	EXPECT_TRUE(flags & DAPTRACE_SNAP_LAST) TH_LOG("flags %#x", flags);
	EXPECT_TRUE(flags & DAPTRACE_SNAP_TARGET_EXITED)
		TH_LOG("the last window does not say its target exited: flags %#x", flags);
}

/* A target that joins and exits before the next boundary can be removed. */
TEST_F_TIMEOUT(targets, joining_target_that_exited_is_removed, 60)
{
	char buf[64], want[32];
	pid_t a, b;

	a = spawn(_metadata, self);
	b = spawn(_metadata, self);
	ASSERT_EQ(0, dt_set_attrs(5000, 2000000, 2000000, 10, 1000));
	ASSERT_EQ(0, dt_add_target(a));
	ASSERT_EQ(0, dt_write("state", "on"));
	ASSERT_EQ(0, dt_add_target(b));
	ASSERT_EQ(0, dt_target_status(b, buf, sizeof(buf)));
	ASSERT_STREQ("joining", buf);
	dt_reap(b);
	EXPECT_EQ(0, dt_remove_target(b)) TH_LOG("joining, exited: not found");
	snprintf(want, sizeof(want), "%d", a);
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf) TH_LOG("only the live target is listed");
	ASSERT_EQ(0, dt_write("state", "off"));
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf) TH_LOG("and stays the only one");
}

/* A target that exits while monitoring is off is kept until removed. */
TEST_F(targets, exited_target_stays_listed_until_removed)
{
	pid_t pid = spawn(_metadata, self);
	char buf[64], want[64];

	ASSERT_EQ(0, dt_add_target(pid));
	dt_reap(pid);
	snprintf(want, sizeof(want), "%d", pid);
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf) TH_LOG("still listed after its exit");
	/* The number is resolved first: no such process any more. */
	EXPECT_EQ(-ESRCH, dt_add_target(pid)) TH_LOG("re-add a gone pid");
	EXPECT_EQ(0, dt_remove_target(pid)) TH_LOG("remove the exited target");
}

static void ns_init_child(int ready_fd, void *arg)
{
	/*
	 * pid 1 in the new namespace.  Its /proc is still the old
	 * namespace's, where "1" is another process: the access check
	 * through /proc/1/mem cannot be made, and the write fails.  With a
	 * /proc of its own, as a container has, it adds "1", reports,
	 * lingers.
	 */
	int err = dt_write("target", "1") == -ESRCH ? 0 : -EPROTO;

	if (!err && (unshare(CLONE_NEWNS) ||
		     mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		     mount("proc", "/proc", "proc", 0, NULL)))
		err = -errno;
	if (!err)
		err = dt_write("target", "1");
	dt_child_ready(ready_fd, &err, sizeof(err));
	for (;;)
		pause();
}

/*
 * The pid is resolved in the writer's pid namespace: pid 1 written from a
 * new namespace means that namespace's init (our child), not the system's.
 */
TEST_F(targets, pid_resolved_in_writers_namespace)
{
	int status, err = -1;
	char buf[64], word[32];
	pid_t pid;

	if (unshare(CLONE_NEWPID))
		SKIP(return, "unshare(CLONE_NEWPID): %s", strerror(errno));
	pid = dt_fork_ready(ns_init_child, NULL, &err, sizeof(err), NULL);
	ASSERT_LT(0, pid) TH_LOG("fork into the new pid namespace: %s",
				 strerror(-pid));
	self->child[self->nr++] = pid;
	ASSERT_EQ(0, err) TH_LOG("write \"1\" from a new pid namespace: %s",
				 strerror(-err));
	/* Shown as written: "1". */
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ("1", buf);
	/* The same process under its number here is the same target. */
	EXPECT_EQ(-EEXIST, dt_add_target(pid)) TH_LOG("pid %d is the ns's 1", pid);
	/* "1" here names the system's init, a live process but no target. */
	EXPECT_EQ(-ENOENT, dt_remove_target(1))
		TH_LOG("removing \"1\" here must not remove the ns's 1");
	ASSERT_EQ(0, dt_target_status(1, word, sizeof(word)));
	EXPECT_STREQ("idle", word);

	/*
	 * Had "1" meant the system's init, "on" would work after our child
	 * is gone.  It refers to the child, so every target has exited.
	 */
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	self->nr--;
	EXPECT_EQ(-ESRCH, dt_write("state", "on"))
		TH_LOG("the only target (the namespace's init) exited");
	ASSERT_LE(0, dt_read("state", buf, sizeof(buf)));
	EXPECT_STREQ("off", buf);
	/* Gone, it is removed by the number it is listed under. */
	EXPECT_EQ(0, dt_remove_target(1)) TH_LOG("the exited \"1\" by its number");
	EXPECT_EQ(-ENOENT, dt_target_status(1, word, sizeof(word)));
}

static void *linger(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/* The second thread: tell the parent our tid, then wait to be killed. */
static void *report_tid(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (write(*(int *)arg, &tid, sizeof(tid)) != sizeof(tid))
		_exit(1);
	return linger(NULL);
}

static void threaded_child(int ready_fd, void *arg)
{
	pthread_t th;

	if (pthread_create(&th, NULL, report_tid, &ready_fd))
		_exit(1);
	linger(NULL);
}

/* Child with a second thread; returns the child's pid, *tid the thread's. */
static pid_t spawn_threaded(struct __test_metadata *_metadata,
			    FIXTURE_DATA(targets) *self, pid_t *tid)
{
	pid_t pid = dt_fork_ready(threaded_child, NULL, tid, sizeof(*tid), NULL);

	ASSERT_LT(0, pid) TH_LOG("spawn a threaded child: %s", strerror(-pid));
	self->child[self->nr++] = pid;
	return pid;
}

/*
 * A thread id is resolved to its process: the target is shown as the
 * leader's pid, the process cannot be added twice through two of its ids,
 * and it can be removed through either.
 */
TEST_F(targets, thread_id_names_its_process)
{
	char buf[64], want[64], path[128];
	pid_t pid, tid = 0;

	pid = spawn_threaded(_metadata, self, &tid);
	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
	ASSERT_EQ(0, access(path, F_OK)) TH_LOG("%d is not a thread of %d", tid, pid);
	ASSERT_NE(pid, tid);

	ASSERT_EQ(0, dt_add_target(tid)) TH_LOG("add a second thread's tid");
	snprintf(want, sizeof(want), "%d", pid);
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf) TH_LOG("listed as the process (leader) pid");
	EXPECT_EQ(-EEXIST, dt_add_target(pid)) TH_LOG("same process by its pid");
	EXPECT_EQ(-EEXIST, dt_add_target(tid)) TH_LOG("same thread again");
	EXPECT_EQ(0, dt_remove_target(tid)) TH_LOG("remove through the tid");
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
}

/* Snapshot @seq's header and the ages of its records of @pid. */
static int read_snap(int fd, const struct daptrace_ring_hdr *rh, long long seq,
		     struct daptrace_snap_hdr *sh, pid_t pid,
		     unsigned int *max_age, unsigned int *nr_pid)
{
	struct daptrace_region_rec rec;
	__u32 i;

	if (dt_slot_hdr(fd, rh, seq, sh) || sh->seq != (__u64)seq)
		return -1;
	*max_age = *nr_pid = 0;
	for (i = 0; i < sh->nr_regions; i++) {
		if (dt_pread_all(fd, &rec, sizeof(rec), dt_slot_off(rh, seq) +
				 rh->snap_hdr_size + (off_t)i * rh->region_size) !=
		    sizeof(rec))
			return -1;
		if (rec.pid != pid)
			continue;
		(*nr_pid)++;
		if (rec.age > *max_age)
			*max_age = rec.age;
	}
	return 0;
}

/*
 * exec() in a target: the window it happens in is flagged
 * DAPTRACE_SNAP_TARGET_EXEC, and from the next snapshot on the target's
 * regions describe the new image from scratch (every age 0), instead of
 * carrying the old image's regions and ages over.
 */
TEST_F_TIMEOUT(targets, exec_in_target_starts_afresh, 60)
{
	unsigned int max_age = 0, nr_pid = 0, age_before = 0;
	struct daptrace_snap_hdr sh;
	struct daptrace_ring_hdr rh;
	long long seq, exec_seq = 0, n;
	int pfd[2], fd;
	char path[256], c = 0;
	double t0;
	pid_t pid;

	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		p = mmap(NULL, 32 << 20, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(1);
		memset(p, 1, 32 << 20);
		if (read(pfd[0], &c, 1) != 1)
			_exit(1);
		execlp("sleep", "sleep", "1000", (char *)NULL);
		_exit(3);
	}
	self->child[self->nr++] = pid;
	ASSERT_EQ(0, dt_add_target(pid));
	ASSERT_EQ(0, dt_set_attrs(2000, 20000, 200000, 10, 1000));
	ASSERT_EQ(0, dt_write("state", "on"));
	fd = open(dt_path("snapshots", path, sizeof(path)), O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dt_ring_hdr(fd, &rh));

	/* Let ages grow, then exec. */
	t0 = dt_now_ms();
	while (age_before < 3 && dt_now_ms() - t0 < 20000) {
		dt_sleep_ms(20);
		n = dt_read_ll("snapshot_seq");
		if (!read_snap(fd, &rh, n, &sh, pid, &max_age, &nr_pid))
			age_before = max_age;
	}
	ASSERT_LE(3, age_before) TH_LOG("ages never grew before the exec");
	seq = dt_read_ll("snapshot_seq") + 1;
	ASSERT_EQ(1, write(pfd[1], &c, 1));

	/*
	 * Follow the snapshots to the flagged one, then to the first with
	 * the new image's regions.  The worker may see the exec between the
	 * switch to the new mm and the ELF loader's mappings (begin_new_exec()
	 * counts the exec first): its update then finds nothing to monitor,
	 * and the next window's does.  Measured on 7.3 with 5-level paging.
	 */
	t0 = dt_now_ms();
	while (dt_now_ms() - t0 < 20000) {
		n = dt_read_ll("snapshot_seq");
		if (n < seq) {
			dt_sleep_ms(5);
			continue;
		}
		ASSERT_EQ(0, read_snap(fd, &rh, seq, &sh, pid, &max_age, &nr_pid))
			TH_LOG("snapshot %lld overwritten: reader too slow", seq);
		if (exec_seq) {
			EXPECT_EQ(0, max_age) TH_LOG("snapshot %lld: regions carried over "
						     "from the old image", seq);
			if (nr_pid || seq - exec_seq >= 3)
				break;
		} else if (sh.flags & DAPTRACE_SNAP_TARGET_EXEC) {
			exec_seq = seq;
		}
		seq++;
	}
	ASSERT_EQ(0, dt_write("state", "off"));
	close(fd);
	ASSERT_NE(0, exec_seq) TH_LOG("no snapshot flagged TARGET_EXEC within 20 s");
	TH_LOG("exec flagged in snapshot %lld; snapshot %lld has %u regions of the "
	       "target, oldest age %u (before the exec: %u)", exec_seq, seq, nr_pid,
	       max_age, age_before);
	EXPECT_LT(0, nr_pid) TH_LOG("the new image has regions within 3 windows");
	EXPECT_LE(10, nr_pid) TH_LOG("the new image starts from min_nr_regions");
	EXPECT_EQ(0, max_age) TH_LOG("regions carried over from the old image");
	ASSERT_EQ(0, dt_target_status(pid, path, sizeof(path)));
	EXPECT_STREQ("idle", path) TH_LOG("still the same target after exec");
	close(pfd[0]);
	close(pfd[1]);
}

/*
 * A task outside the target's thread group that shares its memory (a
 * CLONE_VM child, as vfork() makes; a driver's worker) accesses it while
 * the target itself sleeps: the target is not idle.
 */
#define SHARED_MIB	8

struct vm_child {
	volatile char *buf;
	double until_ms;
};

static int touch_shared(void *arg)
{
	struct vm_child *c = arg;
	size_t off;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (dt_now_ms() < c->until_ms)
		for (off = 0; off < (size_t)SHARED_MIB << 20; off += 4096)
			c->buf[off]++;
	return 0;
}

/* Fraction of [lo, hi) that the newest snapshot shows accessed, or -1. */
static double accessed_fraction(pid_t pid, unsigned long lo, unsigned long hi)
{
	unsigned long start, end, a, b, seen = 0;
	unsigned int nr_acc, age;
	char line[256];
	bool any = false;
	FILE *f;
	int p;

	f = fopen(DT_SYSFS "/snapshot", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%d %lx %lx %u %u", &p, &start, &end, &nr_acc,
			   &age) != 5 || p != pid)
			continue;
		any = true;
		a = start > lo ? start : lo;
		b = end < hi ? end : hi;
		if (nr_acc && b > a)
			seen += b - a;
	}
	fclose(f);
	return any ? (double)seen / (hi - lo) : -1;
}

/* The target: its memory used by a CLONE_VM child while it sleeps. */
static void clone_vm_parent(int ready_fd, void *arg)
{
	static struct vm_child c;
	size_t stack_sz = 256 << 10;
	unsigned long lo;
	char *stack;

	c.buf = mmap(NULL, (size_t)SHARED_MIB << 20, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack = mmap(NULL, stack_sz, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (c.buf == MAP_FAILED || stack == MAP_FAILED)
		_exit(1);
	memset((char *)c.buf, 1, (size_t)SHARED_MIB << 20);
	c.until_ms = dt_now_ms() + 30000;
	if (clone(touch_shared, stack + stack_sz, CLONE_VM | SIGCHLD, &c) < 0)
		_exit(1);
	lo = (unsigned long)c.buf;
	dt_child_ready(ready_fd, &lo, sizeof(lo));
	while (wait(NULL) > 0 || errno == EINTR)
		;
}

TEST_F_TIMEOUT(targets, memory_used_by_a_clone_vm_child_is_seen, 60)
{
	double best = -1, f, t0;
	unsigned long lo;
	pid_t pid;

	pid = dt_fork_ready(clone_vm_parent, NULL, &lo, sizeof(lo), NULL);
	ASSERT_LT(0, pid) TH_LOG("spawn the target: %s", strerror(-pid));
	self->child[self->nr++] = pid;
	ASSERT_EQ(0, dt_add_target(pid));
	ASSERT_EQ(0, dt_set_attrs(5000, 100000, 1000000, 10, 1000));
	ASSERT_EQ(0, dt_write("state", "on"));

	/* Past the first windows, whose walks follow the initial regions. */
	dt_sleep_ms(1000);
	t0 = dt_now_ms();
	while (dt_now_ms() - t0 < 3000 && best < 0.9) {
		f = accessed_fraction(pid, lo, lo + ((unsigned long)SHARED_MIB << 20));
		if (f > best)
			best = f;
		dt_sleep_ms(300);
	}
	ASSERT_EQ(0, dt_write("state", "off"));
	TH_LOG("%.2f of the shared buffer seen accessed at best", best);
	ASSERT_LE(0, best) TH_LOG("no snapshot with regions of the target");
	EXPECT_LE(0.9, best) TH_LOG("accesses by the CLONE_VM child went unseen");
}

TEST_HARNESS_MAIN
