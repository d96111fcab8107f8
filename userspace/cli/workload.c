// SPDX-License-Identifier: GPL-2.0-only
/*
 * Start the workload so that no access escapes the monitor: the child blocks
 * on a pipe until the parent has added its pid as a target and turned
 * monitoring on, and only then execs the command.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

int workload_prepare(struct workload *w, char **argv)
{
	int fds[2];
	char c = 0;

	memset(w, 0, sizeof(*w));
	w->go_fd = -1;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	w->pid = fork();
	if (w->pid < 0) {
		int err = errno;

		close(fds[0]);
		close(fds[1]);
		w->pid = 0;
		return -err;
	}
	if (w->pid == 0) {
		/* child: the default signal dispositions of a fresh command */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		close(fds[1]);
		while (read(fds[0], &c, 1) < 0 && errno == EINTR)
			;
		if (c != 'g')
			_exit(127);	/* parent gave up: never run the command */
		close(fds[0]);
		execvp(argv[0], argv);
		fprintf(stderr, "daptrace record: cannot run '%s': %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	w->go_fd = fds[1];
	return 0;
}

int workload_release(struct workload *w)
{
	ssize_t n;

	if (w->go_fd < 0)
		return -EINVAL;
	do {
		n = write(w->go_fd, "g", 1);
	} while (n < 0 && errno == EINTR);
	close(w->go_fd);
	w->go_fd = -1;
	return n == 1 ? 0 : -EPIPE;
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
