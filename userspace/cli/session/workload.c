// SPDX-License-Identifier: GPL-2.0-only
/*
 * Start the workload so that no access escapes the monitor: the child blocks
 * on a pipe until the parent has added its pid as a target and turned
 * monitoring on, and only then execs the command.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

/* 0 if @path is an executable regular file (what exec needs), else -errno. */
static int is_executable(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EACCES;
	return access(path, X_OK) ? -errno : 0;
}

/*
 * What execvp() would do with @file: found in $PATH (or as a path) and
 * executable, or -errno.  Only a first check, so that a command that
 * cannot run fails before anything is done; exec may still fail.
 */
int workload_check(const char *file)
{
	const char *path = getenv("PATH"), *p;
	char buf[PATH_MAX];
	int err = -ENOENT;

	if (!*file)
		return -ENOENT;
	if (strchr(file, '/'))
		return is_executable(file);
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p++) {
		const char *end = strchrnul(p, ':');
		int ret;

		/* an empty entry is the current directory */
		if (snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(end - p), p,
			     end > p ? "/" : "", file) < (int)sizeof(buf)) {
			ret = is_executable(buf);
			if (!ret)
				return 0;
			if (ret != -ENOENT && ret != -ENOTDIR)
				err = ret;	/* execvp reports EACCES over ENOENT */
		}
		if (!*end)
			return err;
		p = end;
	}
}

int workload_prepare(struct workload *w, char **argv)
{
	int fds[2], errfds[2];
	char c = 0;

	memset(w, 0, sizeof(*w));
	w->go_fd = -1;
	w->err_fd = -1;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	/* closed by a successful exec: EOF; else the child sends errno */
	if (pipe2(errfds, O_CLOEXEC) < 0) {
		int err = errno;

		close(fds[0]);
		close(fds[1]);
		return -err;
	}
	w->pid = fork();
	if (w->pid < 0) {
		int err = errno;

		close(fds[0]);
		close(fds[1]);
		close(errfds[0]);
		close(errfds[1]);
		w->pid = 0;
		return -err;
	}
	if (w->pid == 0) {
		int err;

		/* child: the default signal dispositions of a fresh command */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		close(fds[1]);
		close(errfds[0]);
		while (read(fds[0], &c, 1) < 0 && errno == EINTR)
			;
		if (c != 'g')
			_exit(127);	/* parent gave up: never run the command */
		close(fds[0]);
		execvp(argv[0], argv);
		err = errno;
		while (write(errfds[1], &err, sizeof(err)) < 0 && errno == EINTR)
			;
		_exit(127);
	}
	close(fds[0]);
	close(errfds[1]);
	w->go_fd = fds[1];
	w->err_fd = errfds[0];
	return 0;
}

int workload_release(struct workload *w)
{
	ssize_t n;
	int err = 0;

	if (w->go_fd < 0)
		return -EINVAL;
	do {
		n = write(w->go_fd, "g", 1);
	} while (n < 0 && errno == EINTR);
	close(w->go_fd);
	w->go_fd = -1;
	if (n != 1)
		return -EPIPE;
	/* wait for the exec: its result is known at once */
	do {
		n = read(w->err_fd, &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close(w->err_fd);
	w->err_fd = -1;
	if (n == sizeof(err) && err > 0) {
		w->exec_err = err;
		return -err;
	}
	return 0;
}

int workload_poll(struct workload *w)
{
	pid_t r;

	if (!w->pid || w->exited)
		return w->exited;
	r = waitpid(w->pid, &w->status, WNOHANG);
	if (r == w->pid)
		w->exited = 1;
	return w->exited;
}

void workload_finish(struct workload *w, int sig)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	if (!w->pid)
		return;
	if (w->err_fd >= 0) {
		close(w->err_fd);
		w->err_fd = -1;
	}
	if (w->go_fd >= 0) {
		close(w->go_fd);	/* read() returns 0: child exits 127 */
		w->go_fd = -1;
	} else if (sig && !workload_poll(w)) {
		kill(w->pid, sig);
	}
	for (int i = 0; i < 300 && !workload_poll(w); i++)
		nanosleep(&ts, NULL);
	if (!w->exited) {
		kill(w->pid, SIGKILL);
		if (waitpid(w->pid, &w->status, 0) == w->pid)
			w->exited = 1;
	}
}
