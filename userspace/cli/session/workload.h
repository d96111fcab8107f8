/* SPDX-License-Identifier: GPL-2.0-only */
/* The command `daptrace record -- cmd` runs: forked, held until monitored. */
#ifndef DAPTRACE_WORKLOAD_H
#define DAPTRACE_WORKLOAD_H

#include <sys/types.h>

struct workload {
	pid_t pid;		/* 0 if none */
	int go_fd;		/* write end of the hold pipe, -1 once released */
	int err_fd;		/* read end of the exec result pipe, -1 once read */
	int exec_err;		/* errno of a failed exec, 0 if none */
	int exited;		/* reaped */
	int status;		/* wait status once exited */
};

/* Would execvp(@file) find an executable?  0 or -errno (ENOENT, EACCES). */
int workload_check(const char *file);
/* Fork a child that waits for workload_release() and then execs @argv. */
int workload_prepare(struct workload *w, char **argv);
/*
 * Let the child exec and wait for the result.  Returns 0, -EPIPE if the
 * child was gone, or the exec's -errno (also in @w->exec_err).
 */
int workload_release(struct workload *w);
/* Reap without blocking; returns 1 if it has exited (now or before). */
int workload_poll(struct workload *w);
/*
 * Abort/finish: an unreleased child exits without exec'ing; a running one
 * gets @sig (if non-zero) and, if still alive after a grace period, SIGKILL.
 */
void workload_finish(struct workload *w, int sig);

#endif
