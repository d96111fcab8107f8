/* SPDX-License-Identifier: GPL-2.0-only */
/* Run the daptrace binary ($DAPTRACE_BIN) and capture its exit code and output. */
#ifndef DAPTRACE_RUN_CMD_H
#define DAPTRACE_RUN_CMD_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A NULL-terminated argument list literal. */
#define A(...) ((char *const[]){ __VA_ARGS__, NULL })

static inline const char *daptrace_bin(void)
{
	const char *b = getenv("DAPTRACE_BIN");

	return b && *b && access(b, X_OK) == 0 ? b : NULL;
}

/* In a TEST or FIXTURE_SETUP (kselftest_harness.h): skip without the binary. */
#define SKIP_UNLESS_DAPTRACE_BIN()						\
	do {									\
		if (!daptrace_bin())						\
			SKIP(return, "DAPTRACE_BIN not set to the daptrace binary"); \
	} while (0)

/*
 * The same, and skip unless @dir, what the test reads besides the binary,
 * is readable; @fmt says what is missing, with one %s for @dir.
 */
#define SKIP_UNLESS_DAPTRACE_BIN_AND_DIR(dir, fmt)				\
	do {									\
		SKIP_UNLESS_DAPTRACE_BIN();					\
		if (access(dir, R_OK))						\
			SKIP(return, fmt, dir);					\
	} while (0)

/*
 * Run @exe with @argv (argv[0] included) and stdin from the file @in (NULL:
 * this process's stdin); stdout and stderr both go to @out.  Returns the
 * exit code, or 128 + signal.
 */
static inline int run_exe(const char *exe, char *const *argv, const char *in, char *out,
			  size_t len)
{
	int fds[2], status;
	size_t got = 0;
	ssize_t r;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		if (in) {
			int fd = open(in, O_RDONLY);

			dup2(fd, 0);
		}
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execv(exe, argv);
		_exit(126);
	}
	close(fds[1]);
	while (got + 1 < len && (r = read(fds[0], out + got, len - 1 - got)) > 0)
		got += r;
	out[got] = '\0';
	/* drain the rest so the child never blocks on a full pipe */
	while (read(fds[0], &(char){ 0 }, 1) > 0)
		;
	close(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Stop our child @pid and wait until it is stopped: whatever the caller
 * does until SIGCONT happens between two of the child's instructions, at
 * a point the scheduler cannot move.  0, or -1.
 */
static inline int stop_child(pid_t pid)
{
	int status;

	if (kill(pid, SIGSTOP) || waitpid(pid, &status, WUNTRACED) != pid)
		return -1;
	return WIFSTOPPED(status) ? 0 : -1;
}

/*
 * Run daptrace with @argv (NULL-terminated, without argv[0]); stdout and
 * stderr both go to @out.  Returns the exit code, or 128 + signal.
 */
static inline int run_daptrace(char *const *argv, char *out, size_t len)
{
	char *args[64];
	int n = 0;

	args[n++] = "daptrace";
	while (argv[n - 1] && n < 63) {
		args[n] = argv[n - 1];
		n++;
	}
	args[n] = NULL;
	return run_exe(daptrace_bin(), args, NULL, out, len);
}

#endif
