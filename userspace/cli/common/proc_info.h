/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the follower (follow.c) reads about processes from /proc: a
 * process's stat line (parent, state, start time, kernel-thread flag),
 * its children, its cgroup, whether it is still alive, and whether two
 * processes share one address space (kcmp(2)).  The /proc root is a
 * parameter so that host tests can run on a fake tree.
 */
#ifndef DAPTRACE_PROC_INFO_H
#define DAPTRACE_PROC_INFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_ROOT	"/proc"
/* /proc/PID/stat's comm: TASK_COMM_LEN, longer for some kernel threads */
#define PROC_COMM_LEN	64

struct proc_stat {
	pid_t pid, ppid;
	char state;			/* R, S, D, Z, X, ... */
	char comm[PROC_COMM_LEN];
	unsigned long flags;		/* PF_* */
	long num_threads;
	uint64_t start_ticks;		/* since boot, in clock ticks */
};

/* A growable list of pids. */
struct pid_vec {
	pid_t *v;
	size_t n, cap;
};

int pid_vec_push(struct pid_vec *v, pid_t pid);
/* Sort and drop duplicates. */
void pid_vec_sort_unique(struct pid_vec *v);
int pid_vec_contains(const struct pid_vec *v, pid_t pid);	/* sorted @v */
void pid_vec_free(struct pid_vec *v);

/*
 * Parse a /proc/PID/stat line.  The comm is between the first '(' and the
 * last ')' (a comm may hold ')' and spaces).  0 or -EINVAL.
 */
int proc_stat_parse(const char *line, struct proc_stat *st);
/* Read <proc>/<pid>/stat: 0, -ENOENT if there is no such process, -EINVAL. */
int proc_stat_read(const char *proc, pid_t pid, struct proc_stat *st);
int proc_is_kthread(const struct proc_stat *st);
/*
 * 1 while process @pid (started at @start_ticks, 0: any) runs, 0 once it is
 * gone: no such pid, a pid reused by a process started later, or a zombie
 * without a live thread (a zombie thread-group leader whose other threads
 * run is alive: its address space is in use).
 */
int proc_alive(const char *proc, pid_t pid, uint64_t start_ticks);
/*
 * Append the children of every thread of @pid (<proc>/<pid>/task/<tid>/
 * children, CONFIG_PROC_CHILDREN).  0, -ENOENT if @pid is gone, -ENOTSUP
 * if the kernel has no children files.
 */
int proc_children(const char *proc, pid_t pid, struct pid_vec *out);
/* Append every process of <proc> (its numeric entries). */
int proc_list(const char *proc, struct pid_vec *out);
/*
 * The cgroup v2 path of @pid ("/system.slice/x.service", the "0::" line
 * of <proc>/<pid>/cgroup), malloc'd; NULL if it is gone or has none (a
 * cgroup v1-only system).
 */
char *proc_cgroup(const char *proc, pid_t pid);
/*
 * Whether @a and @b share one address space (one mm: threads, vfork()
 * before exec, clone(CLONE_VM)): 1, 0, or -errno (ESRCH: one is gone;
 * ENOSYS: a kernel without kcmp).
 */
int proc_same_mm(pid_t a, pid_t b);
/* Clock ticks since boot to ns (the clock of a process's start time). */
int64_t proc_ticks_to_ns(uint64_t ticks);

#endif
