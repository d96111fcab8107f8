// SPDX-License-Identifier: GPL-2.0-only
/*
 * Quota goals: the goal= grammar, which way an action moves each metric,
 * and the checks made before anything is started.
 *
 *   goal=METRIC[@SOURCE]:TARGET
 *
 *   psi[@targets|@CGROUP]:DUR|P%   memory "some" stall per quota window
 *                                  (DAMOS's some_mem_psi_us), system-wide,
 *                                  of the targets' cgroup, or of a cgroup
 *   free[@nodeN]:P%                MemFree in percent of MemTotal
 *   used[@nodeN]:P%                MemTotal - MemFree, likewise
 *   memcg@targets|@CGROUP:BYTES    a cgroup's memory.current
 *   rss:BYTES                      the targets' resident set
 *   user@FILE:NUMBER               a number the user writes to FILE
 *   refault:N                      the targets' major faults (pages read
 *                                  back in) per quota window
 *
 * A goal says where a metric should be, not which way to push it: the
 * action decides that (pageout raises free memory and pressure, lowers RSS;
 * a migration to node N fills N and empties the others).  A metric the
 * action does not move is refused, so that a goal never steers blind.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "common/units.h"

static const struct {
	const char *name;
	const char *unit;
	int level;
} metrics[POL_NR_GOAL_METRICS] = {
	[POL_GOAL_PSI] = { "psi", "us", 0 },
	[POL_GOAL_FREE] = { "free", "percent", 1 },
	[POL_GOAL_USED] = { "used", "percent", 1 },
	[POL_GOAL_MEMCG] = { "memcg", "bytes", 1 },
	[POL_GOAL_RSS] = { "rss", "bytes", 1 },
	[POL_GOAL_USER] = { "user", "number", 0 },
	[POL_GOAL_REFAULT] = { "refault", "faults", 0 },
};

const char *pol_goal_metric_name(enum pol_goal_metric m)
{
	return m < POL_NR_GOAL_METRICS ? metrics[m].name : "?";
}

const char *pol_goal_unit(enum pol_goal_metric m)
{
	return m < POL_NR_GOAL_METRICS ? metrics[m].unit : "?";
}

static int gerr(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int gerr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A strict decimal number with an optional fraction (no sign, no exponent). */
static int parse_decimal(const char *s, double *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	if (s[strspn(s, "0123456789.")])
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	return errno || *end || !isfinite(*v) ? -EINVAL : 0;
}

/* "P%" with 0 < P < @max (or <= @max when @incl). */
static int parse_percent(const char *s, double max, int incl, double *v)
{
	char buf[32];
	size_t n = strlen(s);

	if (n < 2 || n >= sizeof(buf) || s[n - 1] != '%')
		return -EINVAL;
	memcpy(buf, s, n - 1);
	buf[n - 1] = '\0';
	if (parse_decimal(buf, v) || *v <= 0 || (incl ? *v > max : *v >= max))
		return -EINVAL;
	return 0;
}

/*
 * Which way acting moves the metric: +1 raises it, -1 lowers it, 0 not at
 * all (with why in @why).
 */
static int direction(const struct pol_scheme *s, const struct pol_goal *g, const char **why)
{
	int mig = s->action == POL_MIGRATE_HOT || s->action == POL_MIGRATE_COLD;
	int reclaim = s->action == POL_PAGEOUT || s->action == POL_COLD;

	*why = NULL;
	if (s->action == POL_STAT || g->metric == POL_GOAL_USER)
		return 1;	/* stat only watches; a user value is defined that way */
	if (mig) {
		if (g->metric != POL_GOAL_FREE && g->metric != POL_GOAL_USED) {
			*why = "a migration does not move it (free@nodeN or used@nodeN do)";
			return 0;
		}
		if (g->src != POL_SRC_NODE) {
			*why = "a migration does not change the system's free memory: "
			       "name a node, e.g. @node0";
			return 0;
		}
		/* moving to node N fills N and empties the node the pages were on */
		if (g->metric == POL_GOAL_USED)
			return g->node == s->node ? 1 : -1;
		return g->node == s->node ? -1 : 1;
	}
	if (!reclaim && (g->metric == POL_GOAL_PSI || g->metric == POL_GOAL_REFAULT)) {
		*why = "only pageout and cold raise memory pressure and refaults";
		return 0;
	}
	switch (g->metric) {
	case POL_GOAL_PSI:
	case POL_GOAL_REFAULT:
	case POL_GOAL_FREE:
		return reclaim ? 1 : -1;
	default:
		/* used, memcg, rss: reclaim lowers them, willneed/collapse raise them */
		return reclaim ? -1 : 1;
	}
}

static int parse_source(const char *src, struct pol_goal *g, char *err, size_t errlen)
{
	long node;
	char *end;

	switch (g->metric) {
	case POL_GOAL_PSI:
	case POL_GOAL_MEMCG:
		if (!src) {
			if (g->metric == POL_GOAL_MEMCG)
				return gerr(err, errlen, "memcg needs @targets or @CGROUP");
			g->src = POL_SRC_SYSTEM;
		} else if (!strcmp(src, "targets")) {
			g->src = POL_SRC_TARGETS;
		} else {
			g->src = POL_SRC_CGROUP;
		}
		break;
	case POL_GOAL_FREE:
	case POL_GOAL_USED:
		if (!src) {
			g->src = POL_SRC_SYSTEM;
			break;
		}
		errno = 0;
		node = strncmp(src, "node", 4) || src[4] < '0' || src[4] > '9' ? -1 :
		       strtol(src + 4, &end, 10);
		if (node < 0 || node > 4095 || errno || *end)
			return gerr(err, errlen, "%s@%s: expected @nodeN (N 0-4095) or no @",
				    metrics[g->metric].name, src);
		g->src = POL_SRC_NODE;
		g->node = (int)node;
		break;
	case POL_GOAL_RSS:
	case POL_GOAL_REFAULT:
		if (src)
			return gerr(err, errlen, "%s takes no @SOURCE: it is the targets' own",
				    metrics[g->metric].name);
		g->src = POL_SRC_TARGETS;
		break;
	case POL_GOAL_USER:
		if (!src)
			return gerr(err, errlen, "user needs @FILE, the file you write the value to");
		g->src = POL_SRC_FILE;
		break;
	default:
		return -EINVAL;
	}
	if (src) {
		g->arg = strdup(src);
		if (!g->arg)
			return gerr(err, errlen, "out of memory");
	}
	return 0;
}

static int parse_target(const char *t, const struct pol_scheme *s, struct pol_goal *g,
			char *err, size_t errlen)
{
	uint64_t x;
	double v;

	switch (g->metric) {
	case POL_GOAL_PSI:
		/* a share of the window, or the stall time in each window */
		if (strchr(t, '%')) {
			if (parse_percent(t, 100, 1, &v))
				return gerr(err, errlen, "psi target '%s': expected a percent "
					    "of the quota window above 0 and up to 100%%", t);
			g->target = v / 100 * (double)s->quota_us;
		} else {
			if (parse_duration_us(t, &x) || !x || x > s->quota_us)
				return gerr(err, errlen, "psi target '%s': expected the stall "
					    "time per quota window, above 0 and at most the "
					    "window, or a percent, e.g. 2ms or 0.1%%", t);
			g->target = (double)x;
		}
		if (g->target < 1)
			return gerr(err, errlen, "psi target '%s': less than 1 us per quota "
				    "window", t);
		break;
	case POL_GOAL_FREE:
	case POL_GOAL_USED:
		if (parse_percent(t, 100, 0, &g->target))
			return gerr(err, errlen, "%s target '%s': expected a percent above 0 "
				    "and below 100, e.g. 95%%", metrics[g->metric].name, t);
		break;
	case POL_GOAL_MEMCG:
	case POL_GOAL_RSS:
		if (pol_parse_bytes(t, &x) || !x)
			return gerr(err, errlen, "%s target '%s': expected bytes above 0 "
				    "(K/M/G/T), e.g. 512M", metrics[g->metric].name, t);
		g->target = (double)x;
		break;
	case POL_GOAL_USER:
	case POL_GOAL_REFAULT:
		if (parse_decimal(t, &v) || v <= 0)
			return gerr(err, errlen, "%s target '%s': expected a number above 0",
				    metrics[g->metric].name, t);
		g->target = v;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int pol_goal_parse(const char *val, const struct pol_scheme *s, struct pol_goal *g,
		   char *err, size_t errlen)
{
	char buf[1024], *colon, *at, *src = NULL;
	const char *why;
	int m, ret;

	memset(g, 0, sizeof(*g));
	g->node = -1;
	if (strlen(val) >= sizeof(buf))
		return gerr(err, errlen, "longer than %zu characters", sizeof(buf) - 1);
	strcpy(buf, val);
	colon = strrchr(buf, ':');
	if (!colon || colon == buf || !colon[1])
		return gerr(err, errlen, "expected METRIC[@SOURCE]:TARGET, e.g. psi:0.1%% or "
			    "free@node0:10%%");
	*colon = '\0';
	at = strchr(buf, '@');
	if (at) {
		*at = '\0';
		src = at + 1;
		if (!*src)
			return gerr(err, errlen, "empty @SOURCE");
	}
	for (m = 0; m < POL_NR_GOAL_METRICS; m++)
		if (!strcmp(buf, metrics[m].name))
			break;
	if (m == POL_NR_GOAL_METRICS)
		return gerr(err, errlen, "unknown metric '%s' (psi, free, used, memcg, rss, user, "
			    "refault)", buf);
	g->metric = m;
	g->level = metrics[m].level;
	ret = parse_source(src, g, err, errlen);
	if (!ret)
		ret = parse_target(colon + 1, s, g, err, errlen);
	if (!ret) {
		g->direction = direction(s, g, &why);
		if (!g->direction)
			ret = gerr(err, errlen, "%s does not suit %s: %s", metrics[m].name,
				   pol_action_name(s->action), why);
	}
	if (!ret) {
		g->spec = strdup(val);
		if (!g->spec)
			ret = gerr(err, errlen, "out of memory");
	}
	if (ret)
		pol_goal_free(g);
	return ret;
}

void pol_goal_free(struct pol_goal *g)
{
	free(g->spec);
	free(g->arg);
	free(g->path);
	g->spec = g->arg = g->path = NULL;
}

/* ---- resolving a goal to the file it reads, before anything starts ---- */

/* The deepest cgroup holding every one of @pids (our own if none). */
static int common_cgroup(const pid_t *pids, int nr, char *cg, size_t len, char *err,
			 size_t errlen)
{
	pid_t self = getpid();

	if (!nr) {
		pids = &self;
		nr = 1;
	}
	for (int i = 0; i < nr; i++) {
		char p[1024];
		size_t k = 0;
		int e = pol_pid_cgroup(pids[i], p, sizeof(p));

		if (e == -ESRCH)
			return gerr(err, errlen, "no such process: %d", (int)pids[i]);
		if (e == -ENOENT)
			return gerr(err, errlen, "process %d is in no cgroup v2 hierarchy "
				    "(no 0:: line in /proc/%d/cgroup)", (int)pids[i], (int)pids[i]);
		if (e)
			return gerr(err, errlen, "/proc/%d/cgroup: %s", (int)pids[i], strerror(-e));
		if (!i) {
			snprintf(cg, len, "%s", p);
			continue;
		}
		/* keep the common leading path components: "/a/b", "/ab" -> "/" */
		while (cg[k] && cg[k] == p[k])
			k++;
		if (!((cg[k] == '/' || !cg[k]) && (p[k] == '/' || !p[k]))) {
			while (k > 0 && cg[k - 1] != '/')
				k--;
			k = k ? k - 1 : 0;
		}
		cg[k > 0 ? k : 1] = '\0';
	}
	return 0;
}

/* @g->path = the file @name of cgroup @cg ("/a/b", or a path under the mount). */
static int cgroup_file(struct pol_goal *g, const char *cg, const char *name, char *err,
		       size_t errlen)
{
	char mnt[1024], dir[3072];
	size_t ml;
	int e = pol_cgroup2_mount(mnt, sizeof(mnt));

	if (e == -ENOENT)
		return gerr(err, errlen, "no cgroup v2 hierarchy is mounted "
			    "(mount -t cgroup2 none /sys/fs/cgroup)");
	if (e)
		return gerr(err, errlen, "finding the cgroup v2 mount: %s", strerror(-e));
	ml = strlen(mnt);
	/* "/sys/fs/cgroup/app" is a directory, "/app" or "app" a cgroup under the mount */
	if (!strncmp(cg, mnt, ml) && (cg[ml] == '/' || !cg[ml]))
		snprintf(dir, sizeof(dir), "%s%s", pol_sysroot, cg);
	else
		snprintf(dir, sizeof(dir), "%s%s%s%s", pol_sysroot, mnt, *cg == '/' ? "" : "/",
			 cg);
	if (access(dir, F_OK))
		return gerr(err, errlen, "%s: no such cgroup (%s)", dir + strlen(pol_sysroot),
			    strerror(errno));
	free(g->path);
	if (asprintf(&g->path, "%s/%s", dir, name) < 0) {
		g->path = NULL;
		return gerr(err, errlen, "out of memory");
	}
	if (access(g->path, R_OK)) {
		int en = errno;

		if (en != ENOENT)
			return gerr(err, errlen, "%s: %s", g->path, strerror(en));
		if (!strcmp(name, "memory.pressure"))
			return gerr(err, errlen, "%s does not exist: PSI is off (psi=0 on the "
				    "kernel command line, or 0 in the cgroup's cgroup.pressure)",
				    g->path + strlen(pol_sysroot));
		return gerr(err, errlen, "%s does not exist: the root cgroup has none, and a "
			    "child has it only with +memory in its parent's "
			    "cgroup.subtree_control", g->path + strlen(pol_sysroot));
	}
	return 0;
}

/* @scheme_cg: the scheme's cgroup= (its @targets), or NULL */
static int resolve(struct pol_goal *g, const char *scheme_cg, const pid_t *pids, int nr,
		   char *err, size_t errlen)
{
	char cg[1024];
	uint64_t total, free_b;
	int e;

	switch (g->metric) {
	case POL_GOAL_PSI:
	case POL_GOAL_MEMCG:
		if (g->src == POL_SRC_SYSTEM)
			break;
		if (g->src == POL_SRC_CGROUP) {
			snprintf(cg, sizeof(cg), "%s", g->arg);
		} else if (scheme_cg) {
			snprintf(cg, sizeof(cg), "%s", scheme_cg);
		} else if ((e = common_cgroup(pids, nr, cg, sizeof(cg), err, errlen))) {
			return e;
		}
		if (g->metric == POL_GOAL_PSI && g->src == POL_SRC_TARGETS && !strcmp(cg, "/")) {
			/* the root cgroup's pressure is the system's */
			g->src = POL_SRC_SYSTEM;
			break;
		}
		if (g->metric == POL_GOAL_MEMCG && g->src == POL_SRC_TARGETS && !strcmp(cg, "/"))
			return gerr(err, errlen, "the targets are in the root cgroup, which has "
				    "no memory.current (rss is the targets' own usage)");
		return cgroup_file(g, cg, g->metric == POL_GOAL_PSI ? "memory.pressure" :
				   "memory.current", err, errlen);
	case POL_GOAL_FREE:
	case POL_GOAL_USED:
		e = pol_meminfo(g->src == POL_SRC_NODE ? g->node : -1, &total, &free_b);
		if (e && g->src == POL_SRC_NODE)
			return gerr(err, errlen, "node %d does not exist (or has no memory)",
				    g->node);
		if (e)
			return gerr(err, errlen, "/proc/meminfo: %s", strerror(-e));
		g->total_bytes = total;
		return 0;
	case POL_GOAL_USER:
		free(g->path);
		g->path = strdup(g->arg);
		return g->path ? 0 : gerr(err, errlen, "out of memory");
	default:
		return 0;
	}
	/* psi of the whole system */
	free(g->path);
	if (asprintf(&g->path, "%s/proc/pressure/memory", pol_sysroot) < 0) {
		g->path = NULL;
		return gerr(err, errlen, "out of memory");
	}
	if (access(g->path, R_OK)) {
		if (errno == ENOENT)
			return gerr(err, errlen, "/proc/pressure/memory does not exist: PSI is "
				    "off (psi=0 on the kernel command line, or a kernel without "
				    "CONFIG_PSI)");
		return gerr(err, errlen, "/proc/pressure/memory: %s", strerror(errno));
	}
	return 0;
}

/* Read the resolved file once: a file that exists but cannot be used fails now. */
static int probe(struct pol_goal *g, char *err, size_t errlen)
{
	uint64_t u;
	double v;
	int e = 0;

	switch (g->metric) {
	case POL_GOAL_PSI:
		e = pol_psi_some_total(g->path, &u);
		break;
	case POL_GOAL_MEMCG:
		e = pol_read_u64(g->path, &u);
		break;
	case POL_GOAL_USER:
		e = pol_read_number(g->path, &v);
		if (e == -EINVAL)
			return gerr(err, errlen, "%s does not hold a number (write one, e.g. "
				    "echo 0.5 > %s)", g->path, g->path);
		break;
	default:
		break;
	}
	if (e == -EINVAL)
		return gerr(err, errlen, "%s: unexpected contents", g->path);
	if (e)
		return gerr(err, errlen, "%s: %s", g->path, strerror(-e));
	return 0;
}

int pol_scheme_check_goals(struct pol_scheme *s, const pid_t *pids, int nr, char *err,
			   size_t errlen)
{
	for (int i = 0; i < s->nr_goals; i++) {
		struct pol_goal *g = &s->goals[i];
		char msg[POL_ERRMSG_LEN];

		if (resolve(g, s->cgroup, pids, nr, msg, sizeof(msg)) || probe(g, msg, sizeof(msg))) {
			snprintf(err, errlen, "%s (%s): goal=%s: %s",
				 s->origin[0] ? s->origin : "scheme", s->name, g->spec, msg);
			return -EINVAL;
		}
	}
	return 0;
}

const char *pol_goal_fmt(const struct pol_goal *g, double v, char *buf, size_t len)
{
	switch (g->metric) {
	case POL_GOAL_PSI:
		if (v < 1000)
			snprintf(buf, len, "%.0f us", v);
		else if (v < 1e6)
			snprintf(buf, len, "%.1f ms", v / 1e3);
		else
			snprintf(buf, len, "%.2f s", v / 1e6);
		return buf;
	case POL_GOAL_FREE:
	case POL_GOAL_USED:
		snprintf(buf, len, "%.1f%%", v);
		return buf;
	case POL_GOAL_MEMCG:
	case POL_GOAL_RSS:
		return fmt_bytes(v > 0 ? (uint64_t)v : 0, buf, len);
	default:
		snprintf(buf, len, "%g", v);
		return buf;
	}
}
