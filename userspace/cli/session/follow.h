/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The follower: which processes are targets while monitoring runs, shared
 * by record, top, policy and stat.
 *
 * It keeps the set of followed processes (sorted by pid) for one of four
 * modes: the given pids only; those and their descendants (a process tree:
 * `record -- make`, `-p PID --inherit`); every process of a cgroup v2
 * subtree; every user process of the machine.  New processes join as soon
 * as the kernel's process events connector (follow_cn.h) reports their
 * fork or exec; a periodic scan of /proc (or of the cgroup's cgroup.procs)
 * at the update interval is the safety net for lost events, processes
 * moved into a cgroup, and kernels or namespaces where the connector is
 * silent.  A process that shares its address space with a target (vfork()
 * before exec, clone(CLONE_VM); kcmp(2) tells) is followed but not added:
 * a thread is never a second target.  Exited processes leave, and are
 * removed from the module (exited targets count against its limit).
 *
 * The follower calls the monitor and its user through struct follow_ops,
 * so host tests drive it with canned /proc trees and connector messages.
 */
#ifndef DAPTRACE_FOLLOW_H
#define DAPTRACE_FOLLOW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/cgroup.h"
#include "follow_cn.h"
#include "common/proc_info.h"

enum follow_mode {
	FOLLOW_PIDS,		/* the given processes only */
	FOLLOW_TREE,		/* and their descendants */
	FOLLOW_CGROUP,		/* every process of a cgroup and those below it */
	FOLLOW_MACHINE,		/* every user process */
};

enum follow_state {
	FP_NEW,			/* found, not yet given to the monitor */
	FP_TARGET,		/* a target of the monitor */
	FP_SHARED,		/* shares its address space with a target */
	FP_REFUSED,		/* the monitor refused it (see @err) */
	FP_WAITING,		/* no room in the monitor: added when a target leaves */
	FP_LEFT,		/* exited or moved out: kept a moment for lookups */
};

/**
 * struct follow_proc - one followed process.
 * @pid, @ppid, @comm:	from /proc/PID/stat, @comm refreshed at exec
 * @start_ticks:	its start time: a reused pid is another process
 * @cgroup:		its cgroup v2 path (NULL if unknown)
 * @err:		FP_REFUSED: the monitor's errno
 * @exited:		FP_LEFT: it exited (else it moved out of the cgroup)
 * @root:		given by the user (-p, the command)
 * @unremoved:		left, but the monitor refused to remove it (a module
 *			that takes no change while on): removed at the end
 * @leader_exited:	its main thread exited: another thread's exit may end it
 * @seen_ns:		when it began (fork or exec event, or its start
 *			time), CLOCK_MONOTONIC; 0 if unknown
 * @join_ns, @left_ns:	when it became a target, when it left
 * @gen:		the last scan that listed it
 * @data:		the user's (see follow_ops.forget)
 */
struct follow_proc {
	pid_t pid, ppid;
	uint64_t start_ticks;
	char comm[PROC_COMM_LEN];
	char *cgroup;
	enum follow_state state;
	int err;
	int exited;
	int root;
	int unremoved;
	int leader_exited;
	int64_t seen_ns, join_ns, left_ns;
	unsigned int gen;
	void *data;
};

/*
 * The monitor (@mon their context):
 * @add, @remove:	0 or -errno (add: EEXIST, ESRCH, EPERM, EACCES, EINVAL,
 *			ENOSPC as the module's target file)
 * @same_mm:		1 if two processes share an mm; NULL: kcmp(2)
 * The follower's user (@user their context), each optional:
 * @joined:		@p became a target (@exec: a target exec'ed and has a
 *			new comm)
 * @left:		the target @p left (p->exited says why)
 * @forget:		@p is freed: release p->data
 */
struct follow_ops {
	int (*add)(void *mon, pid_t pid);
	int (*remove)(void *mon, pid_t pid);
	int (*same_mm)(void *mon, pid_t a, pid_t b);
	void *mon;
	void (*joined)(void *user, struct follow_proc *p, int exec);
	void (*left)(void *user, struct follow_proc *p);
	void (*forget)(void *user, struct follow_proc *p);
	void *user;
};

/* What happened to processes, for the record's trailer and the summaries. */
struct follow_stats {
	uint64_t targets;		/* processes that became targets, in all */
	uint64_t joined;		/* of those, after monitoring started */
	uint64_t exited;		/* targets that exited */
	uint64_t moved_out;		/* targets that left the cgroup */
	uint64_t gone;			/* exited before they could be added (ESRCH) */
	uint64_t denied;		/* the caller may not trace them (EPERM, EACCES) */
	uint64_t invalid;		/* no address space (EINVAL): kernel thread, zombie */
	uint64_t no_room;		/* the module's target limit (ENOSPC) */
	uint64_t refused;		/* other errors */
	uint64_t shared_mm;		/* share a target's address space: not added */
	uint64_t events;		/* connector events read */
	uint64_t lost;			/* times connector messages were lost */
	uint64_t bad_events;		/* malformed connector messages */
	uint64_t scans;
	uint64_t nr_latency;		/* joins with a known start */
	int64_t latency_sum_ns, latency_max_ns;	/* start to target */
};

#define FOLLOW_MAX_CGROUPS	64

struct follow {
	enum follow_mode mode;
	const char *cmd;		/* for messages */
	const char *proc;		/* PROC_ROOT, or a fake tree in tests */
	struct follow_ops ops;
	struct cgroup_ref cg;		/* FOLLOW_CGROUP */
	/* FOLLOW_CGROUP: more cgroups followed alike (follow_set_cgroup() again) */
	struct cgroup_ref more[FOLLOW_MAX_CGROUPS - 1];
	int nr_more;
	struct follow_proc **p;		/* sorted by pid */
	size_t n, cap;
	int cn_fd;			/* the connector, -1 if none */
	int no_children;		/* the kernel has no children files */
	int started;			/* monitoring is on: joins are counted */
	int rescan;			/* events were lost: scan at once */
	int64_t scan_every_ns, next_scan_ns;
	int64_t keep_left_ns;		/* FP_LEFT entries stay this long */
	unsigned int gen;
	pid_t self;
	int nr_targets;			/* FP_TARGET entries */
	struct pid_vec removed;		/* removed while monitoring ran (see leave()) */
	int warned;			/* FOLLOW_WARN_* said once */
	struct follow_stats st;
};

/* Set up @f (nothing is read yet); @ops is copied. */
void follow_init(struct follow *f, enum follow_mode mode, const char *cmd,
		 const struct follow_ops *ops);
/*
 * FOLLOW_CGROUP: a cgroup to follow; called again, one more (up to
 * FOLLOW_MAX_CGROUPS, each with the cgroups below it).  0 or -errno with a
 * message in @err.
 */
int follow_set_cgroup(struct follow *f, const char *arg, char *err, size_t errlen);
/*
 * Make the user's process @pid a target (before the scan finds its
 * descendants).  0 or the monitor's -errno; nothing is kept on failure.
 */
int follow_add_root(struct follow *f, pid_t pid);
/*
 * Listen to process events; when the connector is unavailable or silent
 * (checked with a child of our own), say so once and rely on scans.
 * Returns 0 if listening.
 */
int follow_listen(struct follow *f);
/* The descriptor to poll for events (POLLIN), -1 if none. */
int follow_fd(const struct follow *f);
/* Scan now: find new members, notice exits and moves, retry waiting ones. */
void follow_scan(struct follow *f, int64_t now_ns);
/* Read pending events; scan if one is due (scan_every_ns) or events were lost. */
void follow_tick(struct follow *f, int64_t now_ns);
/* Handle one connector event (exposed for tests). */
void follow_event(struct follow *f, const struct cn_event *ev, int64_t now_ns);
/* The monitor says target @pid exited (target_status). */
void follow_target_exited(struct follow *f, pid_t pid, int64_t now_ns);
/* The entry of @pid (a process that left is kept a moment), or NULL. */
struct follow_proc *follow_find(const struct follow *f, pid_t pid);
/* Followed processes still running (targets or not). */
size_t follow_nr_live(const struct follow *f);
/*
 * Free everything and stop listening; remove every target from the monitor
 * first if @remove_targets.
 */
void follow_end(struct follow *f, int remove_targets);
/* "tree", "cgroup /a/b", "machine", "pids": for headers and messages */
const char *follow_mode_name(const struct follow *f);

#endif
