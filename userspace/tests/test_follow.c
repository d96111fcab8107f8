// SPDX-License-Identifier: GPL-2.0-only
/*
 * The follower (follow.c) on canned input: connector messages built byte
 * by byte, /proc and cgroup trees made of plain files, and a monitor that
 * answers as the module would (EEXIST, ESRCH, EPERM, ENOSPC...).  The
 * parts that need the real kernel (kcmp(2), the connector itself) run
 * against real processes of this test.
 */
#include <errno.h>
#include <ftw.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/cgroup.h"
#include "session/follow.h"
#include "session/follow_cn.h"
#include "common/proc_info.h"

/* ---- canned connector messages ---- */

/* One netlink message carrying a proc_event of @what at @buf + *off. */
static void put_event(char *buf, size_t *off, uint32_t idx, uint32_t what, const void *data,
		      size_t len)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)(buf + *off);
	struct cn_msg *cn = NLMSG_DATA(nh);
	struct proc_event ev;
	size_t ev_len = offsetof(struct proc_event, event_data) + len;

	memset(&ev, 0, sizeof(ev));
	ev.what = what;
	ev.timestamp_ns = 123456789;
	memcpy(&ev.event_data, data, len);
	memset(nh, 0, NLMSG_SPACE(sizeof(*cn) + ev_len));
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*cn) + ev_len);
	nh->nlmsg_type = NLMSG_DONE;
	cn->id.idx = idx;
	cn->id.val = CN_VAL_PROC;
	cn->len = (uint16_t)ev_len;
	memcpy(cn->data, &ev, ev_len);
	*off += NLMSG_ALIGN(nh->nlmsg_len);
}

TEST(connector_messages_parse)
{
	_Alignas(struct nlmsghdr) char buf[4096];
	struct fork_proc_event fork_ev = { 10, 10, 11, 11 };
	struct fork_proc_event thread_ev = { 11, 11, 12, 11 };
	struct exec_proc_event exec_ev = { 11, 11 };
	struct exit_proc_event exit_ev = { 11, 11, 0, 17, 10, 10 };
	struct { __u32 err; } ack = { 0 };
	struct id_proc_event uid_ev = { 11, 11, { 0 }, { 0 } };
	struct cn_event ev[8];
	unsigned int bad = 0;
	size_t off = 0;
	int lost = 0, n;

	put_event(buf, &off, CN_IDX_PROC, PROC_EVENT_FORK, &fork_ev, sizeof(fork_ev));
	put_event(buf, &off, CN_IDX_PROC, PROC_EVENT_FORK, &thread_ev, sizeof(thread_ev));
	put_event(buf, &off, CN_IDX_PROC, PROC_EVENT_EXEC, &exec_ev, sizeof(exec_ev));
	/* another connector's message, and an event we do not use */
	put_event(buf, &off, CN_IDX_PROC + 1, PROC_EVENT_FORK, &fork_ev, sizeof(fork_ev));
	put_event(buf, &off, CN_IDX_PROC, PROC_EVENT_UID, &uid_ev, sizeof(uid_ev));
	put_event(buf, &off, CN_IDX_PROC, PROC_EVENT_EXIT, &exit_ev, sizeof(exit_ev));
	put_event(buf, &off, CN_IDX_PROC, PROC_EVENT_NONE, &ack, sizeof(ack));
	n = cn_parse(buf, off, ev, 8, &bad, &lost);
	ASSERT_EQ(5, n);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, lost);
	EXPECT_EQ(CN_EV_FORK, ev[0].type);
	EXPECT_EQ(11, ev[0].pid);
	EXPECT_EQ(11, ev[0].tgid);
	EXPECT_EQ(10, ev[0].ptgid);
	EXPECT_EQ(123456789, ev[0].ts_ns);
	/* a thread: pid != tgid, told apart by the follower */
	EXPECT_EQ(CN_EV_FORK, ev[1].type);
	EXPECT_EQ(12, ev[1].pid);
	EXPECT_EQ(11, ev[1].tgid);
	EXPECT_EQ(CN_EV_EXEC, ev[2].type);
	EXPECT_EQ(11, ev[2].tgid);
	EXPECT_EQ(CN_EV_EXIT, ev[3].type);
	EXPECT_EQ(11, ev[3].pid);
	EXPECT_EQ(10, ev[3].ptgid);
	EXPECT_EQ(CN_EV_ACK, ev[4].type);

	/* no more than asked for */
	EXPECT_EQ(2, cn_parse(buf, off, ev, 2, &bad, &lost));

	/* cut short: the fork's payload, the netlink header */
	off = 0;
	put_event(buf, &off, CN_IDX_PROC, PROC_EVENT_FORK, &fork_ev, 4);
	EXPECT_EQ(0, cn_parse(buf, off, ev, 8, &bad, &lost));
	EXPECT_EQ(1, bad);
	EXPECT_EQ(0, cn_parse(buf, 10, ev, 8, &bad, &lost));
	/* a cn_msg claiming more than the message holds */
	off = 0;
	put_event(buf, &off, CN_IDX_PROC, PROC_EVENT_EXEC, &exec_ev, sizeof(exec_ev));
	((struct cn_msg *)NLMSG_DATA((struct nlmsghdr *)buf))->len = 1000;
	EXPECT_EQ(0, cn_parse(buf, off, ev, 8, &bad, &lost));
	EXPECT_EQ(2, bad);

	/* the kernel dropped messages */
	off = 0;
	put_event(buf, &off, CN_IDX_PROC, PROC_EVENT_EXEC, &exec_ev, sizeof(exec_ev));
	((struct nlmsghdr *)buf)->nlmsg_type = NLMSG_OVERRUN;
	EXPECT_EQ(0, cn_parse(buf, off, ev, 8, &bad, &lost));
	EXPECT_EQ(1, lost);
}

/* ---- /proc/PID/stat ---- */

TEST(stat_lines_parse)
{
	struct proc_stat st;

	/* a comm with a space and a parenthesis */
	ASSERT_EQ(0, proc_stat_parse("42 (a) b)) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 "
				     "20 0 3 0 12345 1000 100 18446744073709551615\n", &st));
	EXPECT_EQ(42, st.pid);
	EXPECT_EQ(7, st.ppid);
	EXPECT_STREQ("a) b)", st.comm);
	EXPECT_EQ('S', st.state);
	EXPECT_EQ(3, st.num_threads);
	EXPECT_EQ(12345, st.start_ticks);
	EXPECT_FALSE(proc_is_kthread(&st));
	ASSERT_EQ(0, proc_stat_parse("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 "
				     "1 0 1 0 0\n", &st));
	EXPECT_TRUE(proc_is_kthread(&st));
	EXPECT_EQ(-EINVAL, proc_stat_parse("42 no comm S 1", &st));
	EXPECT_EQ(-EINVAL, proc_stat_parse("42 (x) S", &st));
	EXPECT_EQ(-EINVAL, proc_stat_parse("", &st));
}

/* ---- a fake /proc and a fake monitor ---- */

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void put_file(const char *path, const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* A process in the fake /proc: stat, one thread, its children, its cgroup. */
static void fake_proc(const char *root, pid_t pid, pid_t ppid, const char *comm, char state,
		      unsigned long long start, const char *cgroup)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%d", root, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/task", root, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/task/%d", root, (int)pid, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/task/%d/children", root, (int)pid, (int)pid);
	if (access(path, F_OK))
		put_file(path, "");
	snprintf(path, sizeof(path), "%s/%d/stat", root, (int)pid);
	put_file(path, "%d (%s) %c %d 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0 0\n",
		 (int)pid, comm, state, (int)ppid, start);
	snprintf(path, sizeof(path), "%s/%d/cgroup", root, (int)pid);
	put_file(path, "0::%s\n", cgroup ? cgroup : "/");
}

static void fake_children(const char *root, pid_t pid, const char *list)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%d/task/%d/children", root, (int)pid, (int)pid);
	put_file(path, "%s", list);
}

static void fake_gone(const char *root, pid_t pid)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%d", root, (int)pid);
	nftw(path, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

#define MAX_ERR	64

/* The monitor as the module answers, and what the user of the follower saw. */
struct fake_mon {
	int err[MAX_ERR];		/* the answer to an add of pid i (0: take it) */
	int targets[MAX_ERR];		/* 1 while pid i is a target */
	int adds, removes;
	int joined[MAX_ERR], execs[MAX_ERR], left[MAX_ERR], forgot[MAX_ERR];
	int shared[MAX_ERR][MAX_ERR];	/* pid a and pid b share an mm */
	int room;			/* targets the module takes, 0: any */
	int busy;			/* refuse removals (EBUSY), as a module that is on */
	int lazy;			/* take removals, apply none (a stop came first) */
};

static int mon_add(void *ctx, pid_t pid)
{
	struct fake_mon *m = ctx;
	int n = 0;

	m->adds++;
	if (pid <= 0 || pid >= MAX_ERR)
		return -ESRCH;
	if (m->err[pid])
		return m->err[pid];
	if (m->targets[pid])
		return -EEXIST;
	for (int i = 0; i < MAX_ERR; i++)
		n += m->targets[i];
	if (m->room && n >= m->room)
		return -ENOSPC;
	m->targets[pid] = 1;
	return 0;
}

static int mon_remove(void *ctx, pid_t pid)
{
	struct fake_mon *m = ctx;

	m->removes++;
	if (pid <= 0 || pid >= MAX_ERR || !m->targets[pid])
		return -ENOENT;
	if (m->busy)
		return -EBUSY;
	if (m->lazy)
		return 0;
	m->targets[pid] = 0;
	return 0;
}

static int mon_same_mm(void *ctx, pid_t a, pid_t b)
{
	struct fake_mon *m = ctx;

	return m->shared[a][b] || m->shared[b][a];
}

static void mon_joined(void *ctx, struct follow_proc *p, int exec)
{
	struct fake_mon *m = ctx;

	if (exec)
		m->execs[p->pid]++;
	else
		m->joined[p->pid]++;
}

static void mon_left(void *ctx, struct follow_proc *p)
{
	struct fake_mon *m = ctx;

	m->left[p->pid] += p->exited ? 1 : 100;
}

static void mon_forget(void *ctx, struct follow_proc *p)
{
	struct fake_mon *m = ctx;

	m->forgot[p->pid]++;
}

/*
 * The targets of @m are exactly the @n pids listed, no other pid:
 * EXPECT_TARGETS(1, 40) in a TEST_F(fake, ...).
 */
static void expect_targets(struct __test_metadata *_metadata, const struct fake_mon *m,
			   const int *pids, size_t n)
{
	for (int pid = 0; pid < MAX_ERR; pid++) {
		int want = 0;

		for (size_t i = 0; i < n; i++)
			want |= pids[i] == pid;
		EXPECT_EQ(want, m->targets[pid]) TH_LOG("pid %d", pid);
	}
}

#define EXPECT_TARGETS(...)							\
	expect_targets(_metadata, &self->mon, (const int[]){ __VA_ARGS__ },	\
		       sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int))

FIXTURE(fake) {
	char root[256];
	struct fake_mon mon;
	struct follow f;
};

FIXTURE_SETUP(fake)
{
	const struct follow_ops ops = {
		.add = mon_add, .remove = mon_remove, .same_mm = mon_same_mm,
		.mon = &self->mon, .joined = mon_joined, .left = mon_left,
		.forget = mon_forget, .user = &self->mon,
	};
	const char *tmp = getenv("TMPDIR");

	snprintf(self->root, sizeof(self->root), "%s/daptrace-proc-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	ASSERT_NE(NULL, mkdtemp(self->root));
	memset(&self->mon, 0, sizeof(self->mon));
	follow_init(&self->f, FOLLOW_TREE, "test", &ops);
	self->f.proc = self->root;
	/* a pid of ours never appears in the fake tree */
	self->f.self = 99999;
	self->f.keep_left_ns = 1000;
}

FIXTURE_TEARDOWN(fake)
{
	follow_end(&self->f, 1);
	nftw(self->root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static struct cn_event ev_of(enum cn_event_type type, pid_t pid, pid_t tgid, pid_t ptgid)
{
	return (struct cn_event){ .type = type, .pid = pid, .tgid = tgid, .ptgid = ptgid,
				  .ts_ns = 1000 };
}

/*
 * A command's tree: children join by their fork events, grandchildren by
 * the scan; threads never; a child that exits leaves and is removed from
 * the monitor; the tree is done when its last process exits.
 */
TEST_F(fake, tree_joins_and_leaves)
{
	struct follow *f = &self->f;
	struct cn_event e;

	fake_proc(self->root, 10, 1, "make", 'S', 100, "/user");
	ASSERT_EQ(0, follow_add_root(f, 10));
	EXPECT_EQ(1, self->mon.targets[10]);
	EXPECT_EQ(1, self->mon.joined[10]);
	f->started = 1;

	/* a child by its fork event: at once, with when it started */
	fake_proc(self->root, 11, 10, "cc1", 'R', 200, "/user");
	e = ev_of(CN_EV_FORK, 11, 11, 10);
	follow_event(f, &e, 5000);
	EXPECT_EQ(1, self->mon.targets[11]);
	EXPECT_EQ(1, f->st.joined);
	EXPECT_EQ(1, f->st.nr_latency);
	EXPECT_EQ(4000, f->st.latency_max_ns);
	ASSERT_NE(NULL, follow_find(f, 11));
	EXPECT_STREQ("cc1", follow_find(f, 11)->comm);
	EXPECT_EQ(10, follow_find(f, 11)->ppid);
	EXPECT_STREQ("/user", follow_find(f, 11)->cgroup);

	/* a thread of it: not a process */
	e = ev_of(CN_EV_FORK, 12, 11, 11);
	follow_event(f, &e, 5000);
	EXPECT_EQ(NULL, follow_find(f, 12));
	EXPECT_EQ(0, self->mon.targets[12]);

	/* a fork outside the tree */
	fake_proc(self->root, 20, 1, "other", 'S', 300, "/");
	e = ev_of(CN_EV_FORK, 20, 20, 1);
	follow_event(f, &e, 5000);
	EXPECT_EQ(NULL, follow_find(f, 20));

	/* a grandchild whose event was lost: the scan finds it */
	fake_proc(self->root, 13, 11, "as", 'R', 400, "/user");
	fake_children(self->root, 10, "11 ");
	fake_children(self->root, 11, "13 ");
	follow_scan(f, 6000);
	EXPECT_EQ(1, self->mon.targets[13]);
	EXPECT_EQ(2, f->st.joined);

	/* exec: a new comm, said once */
	fake_proc(self->root, 13, 11, "ld", 'R', 400, "/user");
	e = ev_of(CN_EV_EXEC, 13, 13, 0);
	follow_event(f, &e, 7000);
	EXPECT_EQ(1, self->mon.execs[13]);
	EXPECT_STREQ("ld", follow_find(f, 13)->comm);
	follow_event(f, &e, 7000);
	EXPECT_EQ(1, self->mon.execs[13]);

	/* a thread's exit while the process runs: nothing */
	e = ev_of(CN_EV_EXIT, 14, 13, 11);
	follow_event(f, &e, 8000);
	EXPECT_EQ(1, self->mon.targets[13]);

	/* the process's exit: a zombie is gone, it leaves and is removed */
	fake_proc(self->root, 13, 11, "ld", 'Z', 400, "/user");
	e = ev_of(CN_EV_EXIT, 13, 13, 11);
	follow_event(f, &e, 8000);
	EXPECT_EQ(0, self->mon.targets[13]);
	EXPECT_EQ(1, self->mon.left[13]);
	EXPECT_EQ(1, f->st.exited);
	/* kept a moment for the last snapshot's lookups, then forgotten */
	ASSERT_NE(NULL, follow_find(f, 13));
	EXPECT_EQ(FP_LEFT, follow_find(f, 13)->state);
	fake_gone(self->root, 13);
	fake_children(self->root, 11, "");
	follow_scan(f, 9000 + f->keep_left_ns);
	EXPECT_EQ(NULL, follow_find(f, 13));
	EXPECT_EQ(1, self->mon.forgot[13]);

	/* an exit missed: the scan notices the process is gone */
	fake_gone(self->root, 11);
	fake_children(self->root, 10, "");
	follow_scan(f, 20000);
	EXPECT_EQ(0, self->mon.targets[11]);
	EXPECT_EQ(2, f->st.exited);
	EXPECT_EQ(1, follow_nr_live(f));

	/* the module says the root exited (a zombie whose thread runs, say) */
	follow_target_exited(f, 10, 21000);
	EXPECT_EQ(0, self->mon.targets[10]);
	EXPECT_EQ(0, follow_nr_live(f));
	EXPECT_EQ(3, self->mon.removes);
}

/*
 * vfork() before exec, clone(CLONE_VM): the child shares its parent's
 * address space and is not a target until it has its own; a leader that
 * exited while a thread runs is alive.
 */
TEST_F(fake, shared_mm_is_not_a_second_target)
{
	struct follow *f = &self->f;
	struct cn_event e;
	char path[512];

	fake_proc(self->root, 10, 1, "sh", 'S', 100, "/");
	ASSERT_EQ(0, follow_add_root(f, 10));
	f->started = 1;
	fake_proc(self->root, 11, 10, "sh", 'R', 200, "/");
	self->mon.shared[10][11] = 1;
	e = ev_of(CN_EV_FORK, 11, 11, 10);
	follow_event(f, &e, 5000);
	ASSERT_NE(NULL, follow_find(f, 11));
	EXPECT_EQ(FP_SHARED, follow_find(f, 11)->state);
	EXPECT_EQ(0, self->mon.targets[11]);
	EXPECT_EQ(1, f->st.shared_mm);
	EXPECT_EQ(0, f->st.joined);
	/* still shared at the next scan */
	fake_children(self->root, 10, "11");
	follow_scan(f, 6000);
	EXPECT_EQ(0, self->mon.targets[11]);

	/* the exec gives it its own: it joins */
	self->mon.shared[10][11] = 0;
	fake_proc(self->root, 11, 10, "grep", 'R', 200, "/");
	e = ev_of(CN_EV_EXEC, 11, 11, 0);
	follow_event(f, &e, 7000);
	EXPECT_EQ(1, self->mon.targets[11]);
	EXPECT_EQ(FP_TARGET, follow_find(f, 11)->state);
	EXPECT_STREQ("grep", follow_find(f, 11)->comm);
	EXPECT_EQ(1, f->st.joined);

	/* a zombie leader with a live thread: the exit of the leader is not the end */
	fake_proc(self->root, 11, 10, "grep", 'Z', 200, "/");
	snprintf(path, sizeof(path), "%s/11/task/15", self->root);
	ASSERT_EQ(0, mkdir(path, 0755));
	e = ev_of(CN_EV_EXIT, 11, 11, 10);
	follow_event(f, &e, 8000);
	EXPECT_EQ(1, self->mon.targets[11]);
	/* the last thread's exit is */
	rmdir(path);
	e = ev_of(CN_EV_EXIT, 15, 11, 10);
	follow_event(f, &e, 9000);
	EXPECT_EQ(0, self->mon.targets[11]);
	EXPECT_EQ(1, f->st.exited);
}

/*
 * What the monitor refuses: gone before added (ESRCH) is counted and
 * forgotten; not permitted (EPERM/EACCES) is counted once, not retried,
 * and its children are still followed; no room (ENOSPC) waits for a
 * target to leave; already a target (EEXIST) is one.
 */
TEST_F(fake, refusals_are_counted_and_the_others_go_on)
{
	struct follow *f = &self->f;
	struct cn_event e;

	fake_proc(self->root, 10, 1, "init.sh", 'S', 100, "/");
	ASSERT_EQ(0, follow_add_root(f, 10));
	f->started = 1;

	fake_proc(self->root, 11, 10, "gone", 'R', 200, "/");
	self->mon.err[11] = -ESRCH;
	e = ev_of(CN_EV_FORK, 11, 11, 10);
	follow_event(f, &e, 5000);
	EXPECT_EQ(1, f->st.gone);
	EXPECT_EQ(NULL, follow_find(f, 11));

	fake_proc(self->root, 12, 10, "sudo", 'R', 300, "/");
	self->mon.err[12] = -EPERM;
	e = ev_of(CN_EV_FORK, 12, 12, 10);
	follow_event(f, &e, 5000);
	EXPECT_EQ(1, f->st.denied);
	EXPECT_EQ(FP_REFUSED, follow_find(f, 12)->state);
	EXPECT_EQ(EPERM, follow_find(f, 12)->err);
	/* its exec is not retried, its scan neither */
	e = ev_of(CN_EV_EXEC, 12, 12, 0);
	follow_event(f, &e, 5000);
	fake_children(self->root, 10, "12");
	follow_scan(f, 6000);
	EXPECT_EQ(1, f->st.denied);
	/* its child is followed */
	self->mon.err[13] = -EACCES;
	fake_proc(self->root, 13, 12, "apt", 'R', 400, "/");
	fake_proc(self->root, 14, 12, "dpkg", 'R', 400, "/");
	e = ev_of(CN_EV_FORK, 13, 13, 12);
	follow_event(f, &e, 7000);
	e = ev_of(CN_EV_FORK, 14, 14, 12);
	follow_event(f, &e, 7000);
	EXPECT_EQ(2, f->st.denied);
	EXPECT_EQ(1, self->mon.targets[14]);

	/* already a target under another id */
	self->mon.targets[15] = 1;
	fake_proc(self->root, 15, 10, "dup", 'R', 500, "/");
	e = ev_of(CN_EV_FORK, 15, 15, 10);
	follow_event(f, &e, 7000);
	EXPECT_EQ(FP_TARGET, follow_find(f, 15)->state);

	/* no room: waits, and joins when a target leaves */
	self->mon.room = 3;	/* 10, 14, 15 */
	fake_proc(self->root, 16, 10, "late", 'R', 600, "/");
	e = ev_of(CN_EV_FORK, 16, 16, 10);
	follow_event(f, &e, 8000);
	EXPECT_EQ(FP_WAITING, follow_find(f, 16)->state);
	EXPECT_EQ(1, f->st.no_room);
	fake_children(self->root, 10, "12 15 16");
	follow_scan(f, 9000);
	EXPECT_EQ(FP_WAITING, follow_find(f, 16)->state);
	EXPECT_EQ(1, f->st.no_room);
	fake_gone(self->root, 15);
	fake_children(self->root, 10, "12 16");
	follow_scan(f, 10000);
	EXPECT_EQ(FP_TARGET, follow_find(f, 16)->state);
	EXPECT_EQ(1, self->mon.targets[16]);

	/* kernel threads and zombies are never candidates */
	fake_proc(self->root, 17, 10, "zombie", 'Z', 700, "/");
	e = ev_of(CN_EV_FORK, 17, 17, 10);
	follow_event(f, &e, 11000);
	EXPECT_EQ(NULL, follow_find(f, 17));
}

/*
 * A module that takes no change while monitoring is on refuses to remove
 * a target that exited: it is kept, and removed at the end (not left as a
 * stale target).
 */
TEST_F(fake, unremoved_targets_are_removed_at_the_end)
{
	struct follow *f = &self->f;

	fake_proc(self->root, 10, 1, "cmd", 'S', 100, "/");
	ASSERT_EQ(0, follow_add_root(f, 10));
	self->mon.busy = 1;
	fake_gone(self->root, 10);
	follow_scan(f, 1000);
	EXPECT_EQ(1, f->st.exited);
	EXPECT_EQ(1, self->mon.targets[10]);
	/* long after: still known, for the end */
	follow_scan(f, 1000 + 100 * f->keep_left_ns);
	ASSERT_NE(NULL, follow_find(f, 10));
	self->mon.busy = 0;
	follow_end(f, 1);
	EXPECT_EQ(0, self->mon.targets[10]);
	EXPECT_EQ(0, f->nr_targets);
}

/*
 * The module takes a removal while on and applies it at its next
 * aggregation boundary; monitoring stopped first: the removal is asked
 * again at the end, and nothing is left behind.
 */
TEST_F(fake, removals_asked_again_at_the_end)
{
	struct follow *f = &self->f;

	fake_proc(self->root, 10, 1, "cmd", 'S', 100, "/");
	ASSERT_EQ(0, follow_add_root(f, 10));
	f->started = 1;
	self->mon.lazy = 1;
	fake_gone(self->root, 10);
	follow_scan(f, 1000);
	EXPECT_EQ(1, f->st.exited);
	EXPECT_EQ(1, self->mon.targets[10]);
	self->mon.lazy = 0;
	follow_end(f, 1);
	EXPECT_EQ(0, self->mon.targets[10]);
}

/*
 * Lost messages (an overrun, as ENOBUFS on the socket) are noticed and
 * make the follower scan at once, not at the next update interval: the
 * connector here is a datagram socket pair fed canned messages.
 */
TEST_F(fake, lost_events_trigger_a_scan)
{
	_Alignas(struct nlmsghdr) char buf[1024];
	struct follow *f = &self->f;
	struct exec_proc_event exec_ev = { 11, 11 };
	struct fork_proc_event fork_ev = { 10, 10, 12, 12 };
	size_t off = 0;
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv));
	fake_proc(self->root, 10, 1, "sh", 'S', 100, "/");
	ASSERT_EQ(0, follow_add_root(f, 10));
	f->started = 1;
	f->cn_fd = sv[0];
	follow_scan(f, 1000);
	ASSERT_EQ(1, f->st.scans);
	/* not due: no scan; a fork event: the child joins */
	fake_proc(self->root, 12, 10, "a", 'R', 200, "/");
	put_event(buf, &off, CN_IDX_PROC, PROC_EVENT_FORK, &fork_ev, sizeof(fork_ev));
	ASSERT_EQ((ssize_t)off, send(sv[1], buf, off, 0));
	follow_tick(f, 1000 + f->scan_every_ns / 2);
	EXPECT_EQ(1, f->st.scans);
	EXPECT_EQ(1, self->mon.targets[12]);
	/* a child whose fork was lost, then an overrun: scanned at once */
	fake_proc(self->root, 11, 10, "b", 'R', 300, "/");
	fake_children(self->root, 10, "11 12");
	off = 0;
	put_event(buf, &off, CN_IDX_PROC, PROC_EVENT_EXEC, &exec_ev, sizeof(exec_ev));
	((struct nlmsghdr *)buf)->nlmsg_type = NLMSG_OVERRUN;
	ASSERT_EQ((ssize_t)off, send(sv[1], buf, off, 0));
	follow_tick(f, 1000 + f->scan_every_ns / 2 + 1);
	EXPECT_EQ(1, f->st.lost);
	EXPECT_EQ(2, f->st.scans);
	EXPECT_EQ(1, self->mon.targets[11]);
	/* follow_end closes the connector: unsubscribing a socket pair fails quietly */
	close(sv[1]);
}

/* A pid reused by another process: the old one left, the new one is new. */
TEST_F(fake, reused_pid_is_another_process)
{
	struct follow *f = &self->f;

	f->mode = FOLLOW_MACHINE;
	fake_proc(self->root, 30, 1, "old", 'S', 100, "/");
	follow_scan(f, 1000);
	ASSERT_EQ(1, self->mon.targets[30]);
	f->started = 1;
	fake_proc(self->root, 30, 1, "new", 'S', 900, "/");
	follow_scan(f, 2000);
	/* removed (the old one), forgotten, then the new one added */
	EXPECT_EQ(1, self->mon.left[30]);
	EXPECT_EQ(1, self->mon.forgot[30]);
	EXPECT_EQ(2, self->mon.joined[30]);
	EXPECT_EQ(1, self->mon.targets[30]);
	EXPECT_STREQ("new", follow_find(f, 30)->comm);
}

/* The whole machine: every user process, no kernel thread, not ourselves. */
TEST_F(fake, machine_takes_every_user_process)
{
	struct follow *f = &self->f;
	char path[512];

	f->mode = FOLLOW_MACHINE;
	fake_proc(self->root, 1, 0, "init", 'S', 1, "/init.scope");
	fake_proc(self->root, 2, 0, "kthreadd", 'S', 1, "/");
	snprintf(path, sizeof(path), "%s/2/stat", self->root);
	put_file(path, "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0\n");
	fake_proc(self->root, 40, 1, "sshd", 'S', 50, "/system.slice/ssh.service");
	fake_proc(self->root, 41, 40, "bash", 'S', 60, "/user.slice");
	f->self = 41;
	follow_scan(f, 1000);
	EXPECT_EQ(2, f->nr_targets);
	/* not kthreadd (2), not ourselves (41) */
	EXPECT_TARGETS(1, 40);
	EXPECT_STREQ("/system.slice/ssh.service", follow_find(f, 40)->cgroup);
}

/*
 * A cgroup: its processes and those of the cgroups below it; one moved in
 * joins at the next scan, one moved out leaves (not "exited").
 */
TEST_F(fake, cgroup_membership_is_followed)
{
	struct follow *f = &self->f;
	char cg[512], sub[600], procs[700];

	snprintf(cg, sizeof(cg), "%s/cg", self->root);
	snprintf(sub, sizeof(sub), "%s/cg/sub", self->root);
	ASSERT_EQ(0, mkdir(cg, 0755));
	ASSERT_EQ(0, mkdir(sub, 0755));
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	put_file(procs, "50\n");
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", sub);
	put_file(procs, "51\n52\n");
	fake_proc(self->root, 50, 1, "svc", 'S', 10, "/svc");
	fake_proc(self->root, 51, 50, "worker", 'S', 11, "/svc/sub");
	fake_proc(self->root, 52, 50, "worker", 'S', 12, "/svc/sub");
	fake_proc(self->root, 53, 1, "outside", 'S', 13, "/other");
	f->mode = FOLLOW_CGROUP;
	f->cg.dir = strdup(cg);
	f->cg.path = strdup("/svc");
	follow_scan(f, 1000);
	EXPECT_EQ(3, f->nr_targets);
	f->started = 1;

	/* a fork inside joins by its event; one outside does not */
	fake_proc(self->root, 54, 51, "child", 'S', 14, "/svc/sub");
	follow_event(f, &(struct cn_event){ .type = CN_EV_FORK, .pid = 54, .tgid = 54,
					    .ptgid = 51, .ts_ns = 900 }, 1100);
	EXPECT_EQ(1, self->mon.targets[54]);
	follow_event(f, &(struct cn_event){ .type = CN_EV_FORK, .pid = 53, .tgid = 53,
					    .ptgid = 1, .ts_ns = 900 }, 1100);
	EXPECT_EQ(0, self->mon.targets[53]);

	/* 53 moved in, 52 moved out */
	put_file(procs, "51\n53\n54\n");
	fake_proc(self->root, 53, 1, "outside", 'S', 13, "/svc/sub");
	fake_proc(self->root, 52, 50, "worker", 'S', 12, "/other");
	follow_scan(f, 2000);
	EXPECT_TARGETS(50, 51, 53, 54);
	EXPECT_EQ(100, self->mon.left[52]);
	EXPECT_EQ(1, f->st.moved_out);
	EXPECT_EQ(0, f->st.exited);
}

/*
 * With the connector, a scan does not read the stat of a member the cgroup
 * lists (its exit would come as an event): a member whose stat is gone
 * stays until the tenth scan, which reads them all, as a scan after lost
 * events or without the connector does at once.
 */
TEST_F(fake, listed_members_are_read_every_tenth_scan)
{
	struct follow *f = &self->f;
	char cg[512], procs[600], stat[600];
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv));
	snprintf(cg, sizeof(cg), "%s/cg", self->root);
	ASSERT_EQ(0, mkdir(cg, 0755));
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	put_file(procs, "60\n61\n");
	fake_proc(self->root, 60, 1, "a", 'S', 10, "/svc");
	fake_proc(self->root, 61, 1, "b", 'S', 11, "/svc");
	f->mode = FOLLOW_CGROUP;
	f->cg.dir = strdup(cg);
	f->cg.path = strdup("/svc");
	f->cn_fd = sv[0];
	follow_scan(f, 1000);
	EXPECT_TARGETS(60, 61);
	f->started = 1;
	snprintf(stat, sizeof(stat), "%s/61/stat", self->root);
	ASSERT_EQ(0, unlink(stat));
	for (int scan = 2; scan < 10; scan++) {
		follow_scan(f, 1000 * scan);
		ASSERT_EQ(1, self->mon.targets[61]) TH_LOG("scan %d", scan);
	}
	follow_scan(f, 10000);
	EXPECT_TARGETS(60);
	EXPECT_EQ(1, f->st.exited);

	/* without the connector every scan reads them */
	fake_proc(self->root, 62, 1, "c", 'S', 12, "/svc");
	put_file(procs, "60\n62\n");
	follow_scan(f, 11000);
	EXPECT_TARGETS(60, 62);
	snprintf(stat, sizeof(stat), "%s/62/stat", self->root);
	ASSERT_EQ(0, unlink(stat));
	f->cn_fd = -1;
	follow_scan(f, 12000);
	EXPECT_TARGETS(60);
	close(sv[0]);
	close(sv[1]);
}

/* ---- cgroup trees ---- */

TEST(cgroup_scanner_walks_a_tree)
{
	/* every pid of the tree, sorted and each once */
	static const pid_t want[] = { 1, 2, 10, 20, 21 };
	char root[256], path[512];
	const char *tmp = getenv("TMPDIR");
	struct pid_vec v = { 0 };
	unsigned int nr = 0;

	snprintf(root, sizeof(root), "%s/daptrace-cg-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ASSERT_NE(NULL, mkdtemp(root));
	snprintf(path, sizeof(path), "%s/cgroup.procs", root);
	put_file(path, "1\n2\n");
	snprintf(path, sizeof(path), "%s/a", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/a/cgroup.procs", root);
	put_file(path, "10\n");
	snprintf(path, sizeof(path), "%s/a/b", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/a/b/cgroup.procs", root);
	put_file(path, "20\n21");		/* no newline after the last */
	/* a threaded cgroup (no readable cgroup.procs): skipped */
	snprintf(path, sizeof(path), "%s/t", root);
	mkdir(path, 0755);
	ASSERT_EQ(0, cgroup_procs(root, &v, &nr));
	EXPECT_EQ(3, nr);
	pid_vec_sort_unique(&v);
	ASSERT_EQ(sizeof(want) / sizeof(want[0]), v.n);
	for (size_t i = 0; i < v.n; i++) {
		EXPECT_EQ(want[i], v.v[i]) TH_LOG("pid %zu", i);
	}
	pid_vec_free(&v);
	snprintf(path, sizeof(path), "%s/nonexistent", root);
	EXPECT_EQ(-ENOENT, cgroup_procs(path, &v, NULL));
	nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS);

	EXPECT_TRUE(cgroup_within("/a", "/a"));
	EXPECT_TRUE(cgroup_within("/a", "/a/b"));
	EXPECT_FALSE(cgroup_within("/a", "/ab"));
	EXPECT_FALSE(cgroup_within("/a/b", "/a"));
	EXPECT_TRUE(cgroup_within("/", "/anything"));
	EXPECT_FALSE(cgroup_within("/a", NULL));
}

/* Bad --cgroup paths get a message that says what is wrong. */
TEST(cgroup_paths_are_checked)
{
	char dir[] = "/tmp/daptrace-notcg-XXXXXX", file[64], minfo[64], err[1024];
	struct cgroup_ref c;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(minfo, sizeof(minfo), "%s/mountinfo", dir);
	/* a cgroup v2 mount elsewhere, and this directory, which is no cgroup */
	put_file(minfo, "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	EXPECT_EQ(-ENOTDIR, cgroup_resolve(dir, minfo, &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "is not a cgroup v2 directory")) TH_LOG("%s", err);
	snprintf(file, sizeof(file), "%s/f", dir);
	put_file(file, "x");
	EXPECT_EQ(-ENOTDIR, cgroup_resolve(file, minfo, &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "is not a directory")) TH_LOG("%s", err);
	EXPECT_EQ(-ENOENT, cgroup_resolve("no/such/cgroup", minfo, &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "no such cgroup: no/such/cgroup")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "/sys/fs/cgroup/no/such/cgroup")) TH_LOG("%s", err);
	/* no cgroup v2 mounted at all */
	put_file(minfo, "30 1 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
	EXPECT_EQ(-ENOENT, cgroup_resolve("/x.slice", minfo, &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "no cgroup v2 filesystem is mounted")) TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, cgroup_resolve("", minfo, &c, err, sizeof(err)));
	unlink(file);
	unlink(minfo);
	rmdir(dir);
}

/* This machine's own cgroup v2 mount, where there is one. */
TEST(cgroup_resolves_on_this_machine)
{
	char *root, *mnt = cgroup2_mount(MOUNTINFO, NULL, &root), err[1024];
	struct cgroup_ref c;

	if (!mnt)
		SKIP(return, "no cgroup v2 filesystem mounted here");
	ASSERT_EQ(0, cgroup_resolve(mnt, MOUNTINFO, &c, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ(root, c.path);
	cgroup_ref_free(&c);
	/* the same by its cgroup path, relative to the mount */
	ASSERT_EQ(0, cgroup_resolve("/", MOUNTINFO, &c, err, sizeof(err))) TH_LOG("%s", err);
	cgroup_ref_free(&c);
	free(mnt);
	free(root);
}

/* ---- the kernel's answers on real processes ---- */

static int idle_child(void *arg)
{
	(void)arg;
	pause();
	return 0;
}

static void *idle_thread(void *arg)
{
	*(volatile pid_t *)arg = gettid();
	pause();
	return NULL;
}

/* kcmp(KCMP_VM): a fork has its own mm; a clone(CLONE_VM) and a thread share ours. */
TEST(kcmp_tells_shared_address_spaces)
{
	size_t stack_sz = 64 * 1024;
	char *stack = mmap(NULL, stack_sz, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	volatile pid_t tid = 0;
	pthread_t th;
	pid_t forked, vm;
	int r;

	ASSERT_NE(MAP_FAILED, stack);
	forked = fork();
	if (!forked) {
		pause();
		_exit(0);
	}
	ASSERT_GT(forked, 0);
	vm = clone(idle_child, stack + stack_sz, CLONE_VM | SIGCHLD, NULL);
	ASSERT_GT(vm, 0);
	ASSERT_EQ(0, pthread_create(&th, NULL, idle_thread, (void *)&tid));
	while (!tid)
		usleep(1000);
	r = proc_same_mm(getpid(), forked);
	if (r == -ENOSYS || r == -EPERM) {
		kill(forked, SIGKILL);
		kill(vm, SIGKILL);
		waitpid(forked, NULL, 0);
		waitpid(vm, NULL, 0);
		SKIP(return, "kcmp(2) is not available here (%s)", strerror(-r));
	}
	EXPECT_EQ(0, r);
	EXPECT_EQ(1, proc_same_mm(getpid(), vm));
	EXPECT_EQ(1, proc_same_mm(vm, getpid()));
	EXPECT_EQ(1, proc_same_mm(getpid(), tid));
	kill(forked, SIGKILL);
	waitpid(forked, NULL, 0);
	EXPECT_EQ(-ESRCH, proc_same_mm(getpid(), forked));
	kill(vm, SIGKILL);
	waitpid(vm, NULL, 0);
	pthread_cancel(th);
	pthread_join(th, NULL);
	munmap(stack, stack_sz);
}

/* Our own process in the real /proc: alive, its children listed, its cgroup. */
TEST(real_proc_reads)
{
	struct pid_vec v = { 0 };
	struct proc_stat st;
	pid_t child = fork();
	int err;

	if (!child) {
		pause();
		_exit(0);
	}
	ASSERT_GT(child, 0);
	ASSERT_EQ(0, proc_stat_read(PROC_ROOT, child, &st));
	EXPECT_EQ(getpid(), st.ppid);
	EXPECT_TRUE(proc_alive(PROC_ROOT, child, st.start_ticks));
	EXPECT_FALSE(proc_alive(PROC_ROOT, child, st.start_ticks + 1));
	err = proc_children(PROC_ROOT, getpid(), &v);
	if (err != -ENOTSUP) {
		EXPECT_EQ(0, err);
		pid_vec_sort_unique(&v);
		EXPECT_TRUE(pid_vec_contains(&v, child));
	}
	kill(child, SIGKILL);
	/* a zombie until reaped: not alive */
	usleep(100000);
	EXPECT_FALSE(proc_alive(PROC_ROOT, child, 0));
	waitpid(child, NULL, 0);
	EXPECT_FALSE(proc_alive(PROC_ROOT, child, 0));
	pid_vec_free(&v);
}

/* The real connector: our own child's fork and exit arrive. */
TEST(connector_reports_our_child)
{
	struct cn_event ev[32];
	int fd = cn_open(), seen_fork = 0, seen_exit = 0;
	unsigned int bad = 0;
	pid_t child;

	if (fd == -EPERM || fd == -EPROTONOSUPPORT || fd == -EACCES)
		SKIP(return, "no process events connector here (%s)", strerror(-fd));
	ASSERT_GE(fd, 0);
	child = fork();
	if (!child)
		_exit(0);
	ASSERT_GT(child, 0);
	waitpid(child, NULL, 0);
	for (int i = 0; i < 100 && !(seen_fork && seen_exit); i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n, lost = 0;

		if (poll(&p, 1, 20) <= 0)
			continue;
		while ((n = cn_recv(fd, ev, 32, &bad, &lost)) >= 0)
			for (int k = 0; k < n; k++) {
				seen_fork |= ev[k].type == CN_EV_FORK && ev[k].tgid == child &&
					     ev[k].ptgid == getpid();
				seen_exit |= ev[k].type == CN_EV_EXIT && ev[k].tgid == child;
			}
	}
	cn_close(fd);
	if (!seen_fork)
		SKIP(return, "the kernel sends no process events here (a pid namespace?)");
	EXPECT_TRUE(seen_exit);
	EXPECT_EQ(0, bad);
}

TEST_HARNESS_MAIN
