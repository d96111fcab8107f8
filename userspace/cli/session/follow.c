// SPDX-License-Identifier: GPL-2.0-only
/*
 * The follower (see follow.h): a sorted table of followed processes, fed
 * by process events and by scans, and kept in step with the monitor's
 * targets.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "follow.h"

#define NS_PER_MS		1000000LL
/* How long the connector check waits for its own child's fork event. */
#define CN_CHECK_MS		500
#define MAX_EVENTS		32

/* Each kind of trouble is said once; the summary gives the counts. */
enum {
	WARN_DENIED	= 1 << 0,
	WARN_ROOM	= 1 << 1,
	WARN_REFUSED	= 1 << 2,
	WARN_CHILDREN	= 1 << 3,
	WARN_CGROUP	= 1 << 4,
};

void follow_init(struct follow *f, enum follow_mode mode, const char *cmd,
		 const struct follow_ops *ops)
{
	memset(f, 0, sizeof(*f));
	f->mode = mode;
	f->cmd = cmd;
	f->proc = PROC_ROOT;
	f->ops = *ops;
	f->cn_fd = -1;
	f->self = getpid();
	f->scan_every_ns = 1000 * NS_PER_MS;
	f->keep_left_ns = 2000 * NS_PER_MS;
}

int follow_set_cgroup(struct follow *f, const char *arg, char *err, size_t errlen)
{
	if (!f->cg.path)
		return cgroup_resolve(arg, MOUNTINFO, &f->cg, err, errlen);
	if (f->nr_more == FOLLOW_MAX_CGROUPS - 1) {
		snprintf(err, errlen, "%s: more than %d cgroups", arg, FOLLOW_MAX_CGROUPS);
		return -E2BIG;
	}
	if (cgroup_resolve(arg, MOUNTINFO, &f->more[f->nr_more], err, errlen))
		return -EINVAL;
	f->nr_more++;
	return 0;
}

/* Is cgroup path @cg one of those followed (or below one)? */
static int in_followed(const struct follow *f, const char *cg)
{
	if (cgroup_within(f->cg.path, cg))
		return 1;
	for (int i = 0; i < f->nr_more; i++)
		if (cgroup_within(f->more[i].path, cg))
			return 1;
	return 0;
}

const char *follow_mode_name(const struct follow *f)
{
	switch (f->mode) {
	case FOLLOW_TREE:
		return "tree";
	case FOLLOW_CGROUP:
		return "cgroup";
	case FOLLOW_MACHINE:
		return "machine";
	default:
		return "pids";
	}
}

/* Index of @pid in the sorted table, or where it would go (*found = 0). */
static size_t slot(const struct follow *f, pid_t pid, int *found)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->p[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < f->n && f->p[lo]->pid == pid;
	return lo;
}

struct follow_proc *follow_find(const struct follow *f, pid_t pid)
{
	int found;
	size_t i = slot(f, pid, &found);

	return found ? f->p[i] : NULL;
}

static int live(const struct follow_proc *p)
{
	return p && p->state != FP_LEFT;
}

size_t follow_nr_live(const struct follow *f)
{
	size_t n = 0;

	for (size_t i = 0; i < f->n; i++)
		n += live(f->p[i]);
	return n;
}

static struct follow_proc *insert(struct follow *f, pid_t pid)
{
	struct follow_proc *p;
	int found;
	size_t i = slot(f, pid, &found);

	if (found)
		return f->p[i];
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct follow_proc **n = realloc(f->p, cap * sizeof(*n));

		if (!n)
			return NULL;
		f->p = n;
		f->cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	memmove(&f->p[i + 1], &f->p[i], (f->n - i) * sizeof(*f->p));
	f->p[i] = p;
	f->n++;
	return p;
}

static void forget(struct follow *f, struct follow_proc *p)
{
	int found;
	size_t i = slot(f, p->pid, &found);

	if (f->ops.forget)
		f->ops.forget(f->ops.user, p);
	if (found && f->p[i] == p) {
		memmove(&f->p[i], &f->p[i + 1], (f->n - i - 1) * sizeof(*f->p));
		f->n--;
	}
	free(p->cgroup);
	free(p);
}

static int64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void say_once(struct follow *f, int what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say_once(struct follow *f, int what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (f->warned & what)
		return;
	f->warned |= what;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	warn_msg(f->cmd, "%s", msg);
}

static void became_target(struct follow *f, struct follow_proc *p, int64_t now)
{
	p->state = FP_TARGET;
	p->join_ns = now;
	f->nr_targets++;
	f->st.targets++;
	if (f->started) {
		f->st.joined++;
		if (p->seen_ns && now >= p->seen_ns) {
			int64_t lat = now - p->seen_ns;

			f->st.nr_latency++;
			f->st.latency_sum_ns += lat;
			if (lat > f->st.latency_max_ns)
				f->st.latency_max_ns = lat;
		}
	}
	if (f->ops.joined)
		f->ops.joined(f->ops.user, p, 0);
}

/*
 * Ask the monitor to take @p.  Returns 0 if it is a target now, else the
 * -errno; a process that is gone is forgotten (@p is freed).
 */
static int try_add(struct follow *f, struct follow_proc *p, int64_t now)
{
	int again = p->state == FP_REFUSED, err = f->ops.add(f->ops.mon, p->pid);

	/* EEXIST: the same process under another id, already a target */
	if (!err || err == -EEXIST) {
		became_target(f, p, now);
		return 0;
	}
	p->err = -err;
	switch (err) {
	case -ESRCH:
		f->st.gone++;
		forget(f, p);
		return err;
	case -ENOSPC:
		if (p->state != FP_WAITING)
			f->st.no_room++;
		p->state = FP_WAITING;
		say_once(f, WARN_ROOM, "the monitor has no room for more targets (%s): "
			 "process %d (%s) and others wait until targets leave", strerror(-err),
			 (int)p->pid, p->comm);
		return err;
	case -EPERM:
	case -EACCES:
		f->st.denied += !again;
		say_once(f, WARN_DENIED, "not permitted to monitor process %d (%s): %s; "
			 "such processes are counted and left out", (int)p->pid, p->comm,
			 strerror(-err));
		break;
	case -EINVAL:
		/* no address space: a kernel thread, a zombie, an exiting one */
		f->st.invalid += !again;
		break;
	default:
		f->st.refused += !again;
		say_once(f, WARN_REFUSED, "adding process %d (%s): %s; such processes are "
			 "counted and left out%s", (int)p->pid, p->comm, strerror(-err),
			 err == -EBUSY ? " (this daptrace.ko takes no targets while "
			 "monitoring: an older module?)" : "");
		break;
	}
	p->state = FP_REFUSED;
	return err;
}

static int same_mm(struct follow *f, pid_t a, pid_t b)
{
	return f->ops.same_mm ? f->ops.same_mm(f->ops.mon, a, b) : proc_same_mm(a, b);
}

/*
 * A process that shared a target's address space but may not any more
 * (it exec'ed, or the other one exited): is it a process of its own now?
 */
static int shares_parent_mm(struct follow *f, const struct follow_proc *p)
{
	struct follow_proc *parent = follow_find(f, p->ppid);

	if (!live(parent) || (parent->state != FP_TARGET && parent->state != FP_SHARED))
		return 0;
	return same_mm(f, p->pid, parent->pid) == 1;
}

/* Does @st belong to what we follow? */
static int wanted(struct follow *f, const struct proc_stat *st, char **cgroup)
{
	*cgroup = proc_cgroup(f->proc, st->pid);
	switch (f->mode) {
	case FOLLOW_TREE:
		return live(follow_find(f, st->ppid));
	case FOLLOW_CGROUP:
		return in_followed(f, *cgroup);
	case FOLLOW_MACHINE:
		return 1;
	default:
		return 0;
	}
}

/*
 * A process that may belong to the set: found by a scan or an event
 * (@seen_ns: when it began, 0 to take its start time).
 */
static void consider(struct follow *f, pid_t pid, int64_t seen_ns, int64_t now)
{
	struct follow_proc *p = follow_find(f, pid);
	struct proc_stat st;
	char *cgroup = NULL;

	if (pid == f->self)
		return;
	if (proc_stat_read(f->proc, pid, &st))
		return;		/* gone already: never a member */
	if (p && p->start_ticks == st.start_ticks && live(p))
		return;		/* known */
	if (p)
		forget(f, p);	/* one that left, or its pid reused */
	/* kernel threads and zombies have no address space to monitor */
	if (proc_is_kthread(&st) || st.state == 'Z' || st.state == 'X' ||
	    !wanted(f, &st, &cgroup)) {
		free(cgroup);
		return;
	}
	p = insert(f, pid);
	if (!p) {
		free(cgroup);
		return;
	}
	p->ppid = st.ppid;
	p->start_ticks = st.start_ticks;
	memcpy(p->comm, st.comm, sizeof(p->comm));
	p->cgroup = cgroup;
	p->gen = f->gen;
	if (seen_ns) {
		p->seen_ns = seen_ns;
	} else {
		/* its start on the boot clock, moved to the monotonic one */
		int64_t age = boottime_ns() - proc_ticks_to_ns(st.start_ticks);

		p->seen_ns = age >= 0 && age < now ? now - age : 0;
	}
	if (shares_parent_mm(f, p)) {
		p->state = FP_SHARED;
		f->st.shared_mm++;
		return;
	}
	try_add(f, p, now);
}

int follow_add_root(struct follow *f, pid_t pid)
{
	struct follow_proc *p;
	struct proc_stat st;
	int err;

	p = follow_find(f, pid);
	if (live(p))
		return 0;
	if (p)
		forget(f, p);
	p = insert(f, pid);
	if (!p)
		return -ENOMEM;
	p->root = 1;
	/* a process of another pid namespace may be missing from our /proc */
	if (!proc_stat_read(f->proc, pid, &st)) {
		p->ppid = st.ppid;
		p->start_ticks = st.start_ticks;
		memcpy(p->comm, st.comm, sizeof(p->comm));
	}
	p->cgroup = proc_cgroup(f->proc, pid);
	err = f->ops.add(f->ops.mon, pid);
	if (err && err != -EEXIST) {
		forget(f, p);
		return err;
	}
	became_target(f, p, 0);
	return 0;
}

static void leave(struct follow *f, struct follow_proc *p, int exited, int64_t now)
{
	enum follow_state was = p->state;
	int err;

	if (!live(p))
		return;
	p->state = FP_LEFT;
	p->exited = exited;
	p->left_ns = now;
	if (was != FP_TARGET)
		return;
	f->nr_targets--;
	if (exited)
		f->st.exited++;
	else
		f->st.moved_out++;
	/* an exited target stays listed (and counts) until removed */
	err = f->ops.remove(f->ops.mon, p->pid);
	p->unremoved = err && err != -ENOENT;
	/*
	 * The module applies a removal at its next aggregation boundary: if
	 * monitoring stops first, the target may still be listed.  Asked
	 * again at the end (ENOENT then, if it went).
	 */
	if (!err && f->started)
		pid_vec_push(&f->removed, p->pid);
	if (f->ops.left)
		f->ops.left(f->ops.user, p);
}

void follow_target_exited(struct follow *f, pid_t pid, int64_t now_ns)
{
	struct follow_proc *p = follow_find(f, pid);

	if (p && p->state == FP_TARGET)
		leave(f, p, 1, now_ns);
}

/* A target exec'ed: a new comm; one that was not a target may be now. */
static void exec_event(struct follow *f, struct follow_proc *p, int64_t ts, int64_t now)
{
	struct proc_stat st;

	if (proc_stat_read(f->proc, p->pid, &st))
		return;
	switch (p->state) {
	case FP_TARGET:
		if (strcmp(p->comm, st.comm)) {
			memcpy(p->comm, st.comm, sizeof(p->comm));
			if (f->ops.joined)
				f->ops.joined(f->ops.user, p, 1);
		}
		return;
	case FP_REFUSED:
		/* the same credentials in a new image: still not ours */
		if (p->err == EPERM || p->err == EACCES)
			return;
		/* fall through */
	case FP_SHARED:
		/* its own address space now (a vfork child), or one at last */
		memcpy(p->comm, st.comm, sizeof(p->comm));
		p->seen_ns = ts;
		if (p->state == FP_SHARED && shares_parent_mm(f, p))
			return;
		try_add(f, p, now);
		return;
	default:
		return;
	}
}

void follow_event(struct follow *f, const struct cn_event *ev, int64_t now)
{
	struct follow_proc *p;

	f->st.events++;
	switch (ev->type) {
	case CN_EV_FORK:
		/* a thread is part of its process: never a target of its own */
		if (ev->pid != ev->tgid || f->mode == FOLLOW_PIDS)
			return;
		if (f->mode == FOLLOW_TREE && !live(follow_find(f, ev->ptgid)))
			return;
		consider(f, ev->tgid, ev->ts_ns, now);
		return;
	case CN_EV_EXEC:
		p = follow_find(f, ev->tgid);
		if (live(p))
			exec_event(f, p, ev->ts_ns, now);
		else if (f->mode != FOLLOW_PIDS)
			consider(f, ev->tgid, ev->ts_ns, now);	/* its fork was missed */
		return;
	case CN_EV_EXIT:
		p = follow_find(f, ev->tgid);
		if (!live(p))
			return;
		if (ev->pid == ev->tgid)
			p->leader_exited = 1;
		/* a thread's end ends the process only when it was the last */
		if ((ev->pid == ev->tgid || p->leader_exited) &&
		    !proc_alive(f->proc, p->pid, p->start_ticks))
			leave(f, p, 1, now);
		return;
	default:
		return;
	}
}

int follow_fd(const struct follow *f)
{
	return f->cn_fd;
}

/*
 * Inside a container (another pid namespace) the kernel takes the
 * subscription and sends nothing: fork a child and wait for its event.
 */
static int connector_works(int fd)
{
	struct cn_event ev[MAX_EVENTS];
	int64_t deadline;
	unsigned int bad = 0;
	pid_t child = fork();
	struct timespec ts;

	if (child < 0)
		return 0;
	if (!child)
		_exit(0);
	waitpid(child, NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / NS_PER_MS + CN_CHECK_MS;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t now_ms;
		int n, lost = 0;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / NS_PER_MS;
		if (now_ms >= deadline || poll(&pfd, 1, (int)(deadline - now_ms)) <= 0)
			return 0;
		while ((n = cn_recv(fd, ev, MAX_EVENTS, &bad, &lost)) >= 0)
			for (int i = 0; i < n; i++)
				if (ev[i].type == CN_EV_FORK && ev[i].tgid == child)
					return 1;
	}
}

int follow_listen(struct follow *f)
{
	const char *scan = f->mode == FOLLOW_CGROUP ? "cgroup.procs" : "/proc";
	int fd;

	if (f->mode == FOLLOW_PIDS)
		return -EINVAL;
	fd = cn_open();
	if (fd < 0) {
		warn_msg(f->cmd, "cannot listen to process events (%s%s): new processes "
			 "join when a scan of %s finds them, within --update", strerror(-fd),
			 fd == -EPERM ? ": it needs CAP_NET_ADMIN" : "", scan);
		return fd;
	}
	if (!connector_works(fd)) {
		cn_close(fd);
		warn_msg(f->cmd, "the kernel sends no process events here (another pid "
			 "namespace, or no CONFIG_PROC_EVENTS): new processes join when a "
			 "scan of %s finds them, within --update", scan);
		return -ENOTSUP;
	}
	f->cn_fd = fd;
	return 0;
}

/* TREE: the children of every member (the whole of /proc without children files). */
static int tree_candidates(struct follow *f, struct pid_vec *c)
{
	if (!f->no_children) {
		for (size_t i = 0; i < f->n; i++) {
			int err;

			if (!live(f->p[i]))
				continue;
			err = proc_children(f->proc, f->p[i]->pid, c);
			if (err == -ENOTSUP) {
				f->no_children = 1;
				say_once(f, WARN_CHILDREN, "the kernel has no /proc/PID/task/TID/"
					 "children (CONFIG_PROC_CHILDREN): scanning all of /proc");
				break;
			}
		}
		if (!f->no_children)
			return 0;
		c->n = 0;
	}
	return proc_list(f->proc, c);
}

static int candidates(struct follow *f, struct pid_vec *c)
{
	int err;

	switch (f->mode) {
	case FOLLOW_TREE:
		return tree_candidates(f, c);
	case FOLLOW_CGROUP:
		err = cgroup_procs(f->cg.dir, c, NULL);
		if (err == -ENOENT)
			say_once(f, WARN_CGROUP, "the cgroup %s is gone", f->cg.dir);
		err = err == -ENOENT ? 0 : err;
		for (int i = 0; i < f->nr_more && !err; i++) {
			err = cgroup_procs(f->more[i].dir, c, NULL);
			if (err == -ENOENT)
				say_once(f, WARN_CGROUP, "the cgroup %s is gone", f->more[i].dir);
			err = err == -ENOENT ? 0 : err;
		}
		return err;
	case FOLLOW_MACHINE:
		return proc_list(f->proc, c);
	default:
		return 0;
	}
}

/* one scan in this many reads every member's stat (follow_scan()) */
#define FULL_CHECK_EVERY	10

void follow_scan(struct follow *f, int64_t now)
{
	struct pid_vec c = { 0 };
	int err, full;

	f->gen++;
	f->st.scans++;
	err = candidates(f, &c);
	pid_vec_sort_unique(&c);
	/*
	 * Whether a member's stat is read to see that it runs.  With the
	 * connector an exit comes as an event (follow_event()): reading 4096
	 * stat files a second was a sixth of `daptrace record`'s time with
	 * 4096 targets.  So only a scan without the connector (as with -p
	 * alone: no listing, no events), one after lost events and every
	 * FULL_CHECK_EVERY-th read them all (a pid reused between two scans,
	 * an event that never came); the others read those of members their
	 * listing (a cgroup's, the machine's, a tree's children) does not
	 * name: gone, or moved out.
	 */
	full = f->cn_fd < 0 || f->rescan || err || f->gen % FULL_CHECK_EVERY == 0;
	for (size_t i = 0; i < f->n; i++) {
		struct follow_proc *p = f->p[i];

		if (!live(p) || (!full && pid_vec_contains(&c, p->pid)))
			continue;
		if (!proc_alive(f->proc, p->pid, p->start_ticks))
			leave(f, p, 1, now);
		else if (f->mode == FOLLOW_CGROUP && !err && !pid_vec_contains(&c, p->pid))
			leave(f, p, 0, now);	/* moved out of the cgroup */
	}
	/*
	 * After the exits: a pid listed again may be a new process.  A tree
	 * grows level by level: a new member's children are found by the
	 * next scan (or by their events).
	 */
	for (size_t i = 0; i < c.n; i++) {
		struct follow_proc *p = follow_find(f, c.v[i]);

		if (live(p))
			p->gen = f->gen;
		else
			consider(f, c.v[i], 0, now);
	}
	/* a shared address space of its own by now; room for the waiting */
	for (size_t i = 0; i < f->n; i++) {
		struct follow_proc *p = f->p[i];

		if ((p->state == FP_SHARED && !shares_parent_mm(f, p)) ||
		    p->state == FP_WAITING) {
			if (try_add(f, p, now) == -ESRCH)
				i--;	/* forgotten: the next moved here */
		}
	}
	for (size_t i = 0; i < f->n; i++) {
		struct follow_proc *p = f->p[i];

		if (p->state == FP_LEFT && !p->unremoved && now - p->left_ns >= f->keep_left_ns) {
			forget(f, p);
			i--;
		}
	}
	pid_vec_free(&c);
	f->next_scan_ns = now + f->scan_every_ns;
	f->rescan = 0;
}

void follow_tick(struct follow *f, int64_t now)
{
	struct cn_event ev[MAX_EVENTS];
	unsigned int bad = 0;
	int n, lost = 0;

	while (f->cn_fd >= 0 && (n = cn_recv(f->cn_fd, ev, MAX_EVENTS, &bad, &lost)) >= 0)
		for (int i = 0; i < n; i++)
			follow_event(f, &ev[i], now);
	f->st.bad_events += bad;
	if (lost) {
		f->st.lost++;
		f->rescan = 1;
	}
	if (f->rescan || now >= f->next_scan_ns)
		follow_scan(f, now);
}

void follow_end(struct follow *f, int remove_targets)
{
	pid_vec_sort_unique(&f->removed);
	for (size_t i = 0; remove_targets && i < f->removed.n; i++)
		if (!follow_find(f, f->removed.v[i]) ||
		    follow_find(f, f->removed.v[i])->state == FP_LEFT)
			f->ops.remove(f->ops.mon, f->removed.v[i]);
	pid_vec_free(&f->removed);
	while (f->n) {
		struct follow_proc *p = f->p[f->n - 1];

		if ((p->state == FP_TARGET || p->unremoved) && remove_targets)
			f->ops.remove(f->ops.mon, p->pid);
		f->nr_targets -= p->state == FP_TARGET;
		forget(f, p);
	}
	free(f->p);
	f->p = NULL;
	f->cap = 0;
	cn_close(f->cn_fd);
	f->cn_fd = -1;
	cgroup_ref_free(&f->cg);
	for (int i = 0; i < f->nr_more; i++)
		cgroup_ref_free(&f->more[i]);
	f->nr_more = 0;
}
