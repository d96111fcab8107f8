/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Child processes for the C selftests: fork one that dies with its parent
 * and says through a pipe when it is ready (the one way every test starts
 * its targets, so none can be monitored before it has its memory), map and
 * touch its memory, wait for one to end, kill and reap it.
 */
#ifndef DT_CHILD_H
#define DT_CHILD_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dt_time.h"

#define DT_CHILD_UNUSED	__attribute__((unused))

/* dt_reap() - kill and wait for a child; pid (if > 0) is freed. */
static DT_CHILD_UNUSED void dt_reap(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * dt_child_ready() - in a child of dt_fork_ready(): send the @len bytes of
 * @msg that the parent waits for; a child that cannot, exits.
 */
static DT_CHILD_UNUSED void dt_child_ready(int fd, const void *msg, size_t len)
{
	if (write(fd, msg, len) != (ssize_t)len)
		_exit(1);
}

/*
 * dt_fork_ready() - fork a child that dies with its parent and runs
 * @child(@ready_fd, @arg); it must dt_child_ready() @len bytes once ready,
 * and exits 0 if @child returns.  The parent waits for those bytes (into
 * @msg) and returns the child's pid, or -errno (-ECHILD: the child ended
 * or said less first, and is reaped).  With @more, the read end stays open
 * there for what else the child sends; the caller closes it.
 */
static DT_CHILD_UNUSED pid_t dt_fork_ready(void (*child)(int ready_fd, void *arg),
					   void *arg, void *msg, size_t len,
					   int *more)
{
	int pfd[2], err;
	pid_t pid;

	if (pipe(pfd))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (pid == 0) {
		close(pfd[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		child(pfd[1], arg);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], msg, len) != (ssize_t)len) {
		close(pfd[0]);
		dt_reap(pid);
		return -ECHILD;
	}
	if (more)
		*more = pfd[0];
	else
		close(pfd[0]);
	return pid;
}

/*
 * dt_map_touched() - map @len bytes of anonymous memory with mmap @flags
 * and write one byte per @stride bytes of it (none if @stride is 0).  For
 * a child: NULL if the mapping failed.
 */
static DT_CHILD_UNUSED volatile char *dt_map_touched(size_t len, int flags,
						     size_t stride)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
	size_t off;

	if (p == MAP_FAILED)
		return NULL;
	for (off = 0; stride && off < len; off += stride)
		p[off] = 1;
	return p;
}

/*
 * dt_shared() - @len bytes of zeroed memory a parent shares with the
 * children it forks afterwards, for their reports.  NULL if the mapping
 * failed.
 */
static DT_CHILD_UNUSED void *dt_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

struct dt_spawn_args {
	size_t map_bytes, touch_stride;
};

static DT_CHILD_UNUSED void dt_spawn_child(int ready_fd, void *arg)
{
	const struct dt_spawn_args *a = arg;
	char c = 0;

	if (a->map_bytes && !dt_map_touched(a->map_bytes,
					    MAP_PRIVATE | MAP_ANONYMOUS |
					    MAP_NORESERVE, a->touch_stride))
		_exit(1);
	dt_child_ready(ready_fd, &c, 1);
	close(ready_fd);
	for (;;)
		pause();
}

/*
 * dt_spawn() - fork a child that maps @map_bytes of anonymous memory (if
 * nonzero), touches one byte per @touch_stride bytes of it (if nonzero),
 * and then sleeps until killed.  It dies with its parent.  Returns its pid
 * once the mapping exists, or -errno.
 */
static DT_CHILD_UNUSED pid_t dt_spawn(size_t map_bytes, size_t touch_stride)
{
	struct dt_spawn_args a = { map_bytes, touch_stride };
	char c;

	return dt_fork_ready(dt_spawn_child, &a, &c, 1, NULL);
}

/*
 * dt_wait_exit() - wait up to @ms for child @pid to end (polled every
 * 2 ms); its wait status, or -1 if it had not ended by then.
 */
static DT_CHILD_UNUSED int dt_wait_exit(pid_t pid, unsigned int ms)
{
	double t0 = dt_now_ms();
	int status;

	do {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		dt_sleep_ms(2);
	} while (dt_now_ms() - t0 < ms);
	return -1;
}

/* A pid that no process has now: counts down from pid_max. */
static DT_CHILD_UNUSED pid_t dt_unused_pid(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	int max = 32768;
	pid_t p;

	if (f) {
		if (fscanf(f, "%d", &max) != 1)
			max = 32768;
		fclose(f);
	}
	for (p = max - 1; p > 300; p--)
		if (kill(p, 0) && errno == ESRCH)
			return p;
	return -1;
}

#endif /* DT_CHILD_H */
