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

/*
 * $DAPTRACE_VIZ, then next to the binary (a build tree), then installed,
 * then the source tree the binary was built from (a build directory
 * anywhere, O=...).  @path holds the last place tried.
 */
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
	if (!stat(path, &st))
		return 0;
#ifdef DAPTRACE_SRC_VIZDIR
	snprintf(path, len, "%s/%s", DAPTRACE_SRC_VIZDIR, script);
	return stat(path, &st);
#else
	return -1;
#endif
}

/* Printable ASCII for a title: control bytes and non-ASCII become '?'. */
static void printable(char *dst, size_t len, const char *src)
{
	size_t n = 0;

	for (; *src && n + 1 < len; src++)
		dst[n++] = (unsigned char)*src < 32 || (unsigned char)*src > 126 ? '?' : *src;
	dst[n] = '\0';
}

int plot_name_ok(const char *name)
{
	const char *ext = strrchr(name, '.');

	return ext && (!strcmp(ext, ".png") || !strcmp(ext, ".svg"));
}

int plot_unsafe(int c)
{
	return c == '"' || c == '\\' || c == '`' || c < 32 || c > 126;
}

#define STOP_AFTER_HEADER	1000

static int header_only(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	(void)arg;
	(void)s;
	(void)info;
	return STOP_AFTER_HEADER;
}

#define TITLE_MAX	110

/*
 * The plot title for a record, from its header (read by the record
 * reader): what was recorded (the command, or the target's name and pid),
 * and a subtitle with the record's name, the kernel and the intervals.
 * $DAPTRACE_PLOT_TITLE overrides the title.
 */
static void plot_title(const struct report_opts *o, char *title, size_t len,
		       char *sub, size_t sublen)
{
	const char *env = getenv("DAPTRACE_PLOT_TITLE"), *base, *cmd, *kernel;
	const char *sample, *aggr;
	struct rec_info info;
	char buf[512];
	int n, ret;

	printable(title, len, o->input);
	sub[0] = '\0';
	ret = report_read(o, header_only, NULL, &info);
	if (ret && ret != STOP_AFTER_HEADER)
		goto out;
	cmd = rec_info_get(&info, "command");
	kernel = rec_info_get(&info, "kernel");
	sample = rec_info_get(&info, "sample_us");
	aggr = rec_info_get(&info, "aggr_us");
	if (cmd && *cmd)
		snprintf(buf, sizeof(buf), "%s", cmd);
	else if (info.nr_targets)
		snprintf(buf, sizeof(buf), "%s (pid %d)", info.targets[0].comm,
			 (int)info.targets[0].pid);
	else
		goto out;
	printable(title, len, buf);
	if (strlen(title) > TITLE_MAX && len > TITLE_MAX)
		strcpy(title + TITLE_MAX - 3, "...");
	base = strrchr(o->input, '/') ? strrchr(o->input, '/') + 1 : o->input;
	n = snprintf(buf, sizeof(buf), "%s", base);
	if (kernel && n >= 0 && (size_t)n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - n, ", kernel %s", kernel);
	if (sample && aggr && n >= 0 && (size_t)n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, ", sampling every %g ms, "
			 "aggregated over %g ms", atof(sample) / 1000, atof(aggr) / 1000);
	printable(sub, sublen, buf);
out:
	rec_info_free(&info);
	if (env && *env)
		printable(title, len, env);
}

/*
 * gnuplot -c SCRIPT ARG1..ARG6: the file names and titles reach the script
 * as ARG1..ARG6 strings, never spliced into gnuplot code, so any byte a
 * path may hold is fine.
 */
int plot_run(const struct report_opts *o, const char *script, const char *data,
	     const char *tics, const char *out)
{
	char path[PATH_MAX + 64], *dir, ptitle[512], psub[512];
	int status;
	pid_t pid;

	if (!plot_name_ok(out))
		return usage_error("report", "--plot %s: the file name must end in "
				   ".png or .svg", out);
	plot_title(o, ptitle, sizeof(ptitle), psub, sizeof(psub));
	if (find_script(script, path, sizeof(path)))
		return fail("report", "gnuplot script %s not found (looked in $DAPTRACE_VIZ, "
			    "next to the binary, in %s"
#ifdef DAPTRACE_SRC_VIZDIR
			    " and %s"
#endif
			    "; set DAPTRACE_VIZ to the viz/ directory)", script, DAPTRACE_VIZDIR
#ifdef DAPTRACE_SRC_VIZDIR
			    , DAPTRACE_SRC_VIZDIR
#endif
			    );
	dir = strdup(path);
	if (!dir)
		return fail("report", "out of memory");
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = '\0';
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		free(dir);
		return fail("report", "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		execlp("gnuplot", "gnuplot", "-c", path, data, tics ? tics : "", out,
		       ptitle, psub, dir, (char *)NULL);
		fprintf(stderr, "%s report: cannot run gnuplot: %s\n", prog,
			strerror(errno));
		_exit(127);
	}
	free(dir);
	if (waitpid(pid, &status, 0) < 0)
		return fail("report", "waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return fail("report", "gnuplot failed rendering %s", out);
	return EXIT_OK;
}
