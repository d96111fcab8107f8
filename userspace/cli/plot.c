// SPDX-License-Identifier: GPL-2.0-only
/* Render report data with the gnuplot scripts in viz/. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"

#ifndef DAPTRACE_VIZDIR
#define DAPTRACE_VIZDIR "/usr/local/share/daptrace/viz"
#endif

/* $DAPTRACE_VIZ, then next to the binary (build tree), then installed. */
static int find_script(const char *script, char *path, size_t len)
{
	const char *env = getenv("DAPTRACE_VIZ");
	static const char *const rel[] = { "../viz", "../../viz", "../../../viz",
					   "../share/daptrace/viz" };
	char exe[PATH_MAX], *slash;
	ssize_t n;
	struct stat st;

	if (env && *env) {
		snprintf(path, len, "%s/%s", env, script);
		return stat(path, &st);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			snprintf(path, len, "%s/%s/%s", exe, rel[i], script);
			if (!stat(path, &st))
				return 0;
		}
	}
	snprintf(path, len, "%s/%s", DAPTRACE_VIZDIR, script);
	return stat(path, &st);
}

/* gnuplot string literals in single quotes cannot hold these */
static int gp_safe(const char *s)
{
	return !strpbrk(s, "'\n\\");
}

int plot_run(const char *script, const char *data, const char *tics,
	     const char *out, const char *title)
{
	char path[PATH_MAX + 64], *expr = NULL, *dir;
	const char *ext = strrchr(out, '.');
	int status, r;
	pid_t pid;

	if (!ext || (strcmp(ext, ".png") && strcmp(ext, ".svg")))
		return usage_error("report", "--plot %s: the file name must end in "
				   ".png or .svg", out);
	if (!gp_safe(out) || !gp_safe(title))
		return usage_error("report", "--plot %s: file names with quotes, "
				   "backslashes or newlines are not supported", out);
	if (find_script(script, path, sizeof(path)))
		return fail("report", "gnuplot script %s not found (set DAPTRACE_VIZ "
			    "to the viz/ directory)", script);
	dir = strdup(path);
	if (!dir)
		return fail("report", "out of memory");
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = '\0';
	if (!gp_safe(dir)) {
		r = fail("report", "viz directory %s: quotes or backslashes in the "
			 "path are not supported", dir);
		free(dir);
		return r;
	}
	r = asprintf(&expr, "datafile='%s'; ticsfile='%s'; outfile='%s'; "
		     "plottitle='%s'; vizdir='%s'", data, tics ? tics : "", out,
		     title, dir);
	free(dir);
	if (r < 0)
		return fail("report", "out of memory");
	pid = fork();
	if (pid < 0) {
		free(expr);
		return fail("report", "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		execlp("gnuplot", "gnuplot", "-e", expr, path, (char *)NULL);
		fprintf(stderr, "%s report: cannot run gnuplot: %s\n", prog,
			strerror(errno));
		_exit(127);
	}
	free(expr);
	if (waitpid(pid, &status, 0) < 0)
		return fail("report", "waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return fail("report", "gnuplot failed rendering %s", out);
	return EXIT_OK;
}
