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

/*
 * One CSV field of a header line ("..." with "" for a quote, or bare) into
 * @buf, made safe for a gnuplot title: printable ASCII, no ' or \.
 */
static const char *csv_field(const char *p, char *buf, size_t len)
{
	size_t n = 0;
	int quoted = *p == '"';

	for (p += quoted; *p && *p != '\n'; p++) {
		if (quoted && *p == '"') {
			if (p[1] != '"')
				break;
			p++;
		} else if (!quoted && *p == ',') {
			break;
		}
		if (n + 1 < len)
			buf[n++] = (*p == '\'' || *p == '\\' || (unsigned char)*p < 32 ||
				    (unsigned char)*p > 126) ? '?' : *p;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * The plot title for a record, from its header: what was recorded (the
 * command, or the target's name and pid), and a subtitle with the record's
 * name, the kernel and the intervals; the record's path and no subtitle if
 * it is not a record.  $DAPTRACE_PLOT_TITLE overrides the title.
 */
#define META_CMD	"#meta,\"command\","
#define META_KERNEL	"#meta,\"kernel\","
#define META_SAMPLE	"#meta,\"sample_us\","
#define META_AGGR	"#meta,\"aggr_us\","
#define TITLE_MAX	110

static void plot_title(const char *path, char *title, size_t len, char *sub, size_t sublen)
{
	const char *env = getenv("DAPTRACE_PLOT_TITLE"), *base;
	char line[1024], cmd[256] = "", comm[64] = "", kernel[128] = "", pid[16] = "";
	char sample[32] = "", aggr[32] = "";
	FILE *f;
	int n;

	snprintf(title, len, "%s", path);
	sub[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		goto out;
	for (int i = 0; i < 200 && fgets(line, sizeof(line), f) && line[0] == '#'; i++) {
		if (!strncmp(line, META_CMD, strlen(META_CMD)))
			csv_field(line + strlen(META_CMD), cmd, sizeof(cmd));
		else if (!strncmp(line, META_KERNEL, strlen(META_KERNEL)))
			csv_field(line + strlen(META_KERNEL), kernel, sizeof(kernel));
		else if (!strncmp(line, META_SAMPLE, strlen(META_SAMPLE)))
			csv_field(line + strlen(META_SAMPLE), sample, sizeof(sample));
		else if (!strncmp(line, META_AGGR, strlen(META_AGGR)))
			csv_field(line + strlen(META_AGGR), aggr, sizeof(aggr));
		else if (!strncmp(line, "#target,", 8) && !comm[0]) {
			const char *c = strchr(line + 8, ',');

			csv_field(line + 8, pid, sizeof(pid));
			if (c)
				csv_field(c + 1, comm, sizeof(comm));
		}
	}
	fclose(f);
	if (!cmd[0] && !comm[0])
		goto out;
	if (cmd[0])
		snprintf(title, len, "%s", cmd);
	else
		snprintf(title, len, "%s (pid %s)", comm, pid);
	if (strlen(title) > TITLE_MAX && len > TITLE_MAX)
		strcpy(title + TITLE_MAX - 3, "...");
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	n = snprintf(sub, sublen, "%s", base);
	if (kernel[0] && n >= 0 && (size_t)n < sublen)
		n += snprintf(sub + n, sublen - n, ", kernel %s", kernel);
	if (sample[0] && aggr[0] && n >= 0 && (size_t)n < sublen)
		snprintf(sub + n, sublen - n, ", sampling every %g ms, aggregated over %g ms",
			 atof(sample) / 1000, atof(aggr) / 1000);
out:
	if (env && *env)
		csv_field(env, title, len);
	if (!gp_safe(title) || !gp_safe(sub)) {
		snprintf(title, len, "%s", path);
		sub[0] = '\0';
	}
}

int plot_run(const char *script, const char *data, const char *tics,
	     const char *out, const char *title)
{
	char path[PATH_MAX + 64], *expr = NULL, *dir, ptitle[512], psub[512];
	const char *ext = strrchr(out, '.');
	int status, r;
	pid_t pid;

	if (!ext || (strcmp(ext, ".png") && strcmp(ext, ".svg")))
		return usage_error("report", "--plot %s: the file name must end in "
				   ".png or .svg", out);
	plot_title(title, ptitle, sizeof(ptitle), psub, sizeof(psub));
	title = ptitle;
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
		     "plottitle='%s'; plotsub='%s'; vizdir='%s'", data, tics ? tics : "",
		     out, title, psub, dir);
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
