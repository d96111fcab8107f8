// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace policy: run DAMOS-style schemes (userspace/policy/) on the
 * snapshots of a command or of running processes, until they exit, a
 * duration passes or we are interrupted; show progress and the stats.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cgroup.h"
#include "common/opts_file.h"
#include "cli.h"
#include "daptrace.h"
#include "policy.h"
#include "policy_record.h"
#include "session/record_output.h"
#include "session/session.h"
#include "common/units.h"
#include "session/workload.h"

#define CMD		"policy"

struct policy_opts {
	struct session_opts so;		/* -p, -s, -a, -u, -r, -t, -d, command */
	struct pol_scheme schemes[POL_MAX_SCHEMES];
	int nr_schemes;
	uint64_t progress_us;		/* 0: none */
	const char *stats_csv;
	const char *stats_json;
	const char *record;
	int quiet;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s policy [options] (-S SCHEME | -f FILE | -P PRESET)... [--] command [args...]\n"
"       %s policy [options] (-S SCHEME | -f FILE | -P PRESET)... -p pid[,pid...]\n"
"\n"
"Monitor the targets and apply DAMOS-style schemes to every snapshot from\n"
"userspace: process_madvise(2) and move_pages(2) on the targets.  Runs until\n"
"the targets exit, --duration passes, or Ctrl-C/SIGTERM; then prints the\n"
"stats of every scheme.\n"
"\n"
"  -S, --scheme SCHEME     a scheme (repeatable), see below\n"
"  -f, --scheme-file FILE  schemes, one per line ('#' comments)\n"
"  -P, --preset NAME       reclaim: page out memory idle >= 10 s, 128M/s, while\n"
"                          free memory is 20-50%% (like DAMON_RECLAIM);\n"
"                          tmo: page out the coldest memory as fast as the\n"
"                          targets' memory pressure stays at 0.1%% and their\n"
"                          refaults at 100/s (Senpai's idea);\n"
"                          tiering: hot to node 0 until it is 95%% full, idle\n"
"                          to node 1 while node 0 has less than 7%% free\n",
		prog, prog);
	session_target_help(f, "act on");
	fputs(
"      --cgroup PATH       repeatable: one process for several cgroups; every\n"
"                          scheme acts per cgroup (cgroup=PATH added), with its\n"
"                          goals' @targets, rss and refault that cgroup's own\n", f);
	session_attr_help(f, "aggregation interval: schemes apply each");
	session_phys_help(f);
	fputs(
"  -d, --duration DUR      stop after this long\n"
"      --progress DUR      print progress this often (default 1s on a terminal)\n"
"      --stats-csv FILE    stats as CSV, rewritten at each progress and at the end\n"
"      --stats-json FILE   stats as JSON, likewise\n"
"  -o, --record FILE       also write every snapshot the policy acted on as a\n"
"                          record (the format of 'daptrace record'; .gz:\n"
"                          compressed; an existing FILE is kept as FILE.old)\n"
"  -q, --quiet             no progress, no stats table\n"
"      --config FILE       first: the options of FILE, one per line, 'NAME\n"
"                          [VALUE]' (a long option, the rest of the line its\n"
"                          value; '#' comments), then the command line's\n"
"  -h, --help              this help\n"
"\n"
"SCHEME: ACTION [NODE] [key=value ...]\n"
"  ACTION   pageout, cold, willneed, collapse, stat, migrate_hot NODE, migrate_cold NODE\n"
"  size=MIN-MAX     region size in bytes (K/M/G; MAX may be max)\n"
"  freq=MIN-MAX     accesses, percent of the observed samples (0-0: idle)\n"
"  age=MIN-MAX      how long the access level held (e.g. 5s-max)\n"
"  idle=DUR         not seen accessed for DUR, by address across windows\n"
"  quota=BYTES/DUR  at most BYTES per DUR, coldest first (hottest for\n"
"                   migrate_hot, willneed, collapse; prio=coldest|hottest)\n"
"  wmarks=METRIC,HIGH,MID,LOW  active only while free memory (METRIC free or\n"
"                   nodeN) is below HIGH and above LOW percent, from MID on\n"
"  type=anon|file   label=TEXT (a mapping label contains TEXT)   addr=START-END\n"
"  cgroup=PATH      only processes of this cgroup v2 (/a/b) or below it\n"
"  reapply=DUR      act on an acted-on, still idle range again after DUR\n"
"                   (default 2s for hot actions, 10s for cold ones; 0s: never)\n"
"  unobserved=skip|act  a region the module could not observe (a secondary\n"
"                   MMU's, a PFN mapping's) has no known access level: no\n"
"                   action by default (skip)\n"
"  goal=METRIC[@SOURCE]:TARGET  tune the quota (needs quota=MAX/DUR, tuned\n"
"                   every DUR) so that METRIC reaches TARGET; repeatable:\n"
"                   psi[@targets|@CGROUP]:DUR|P%  memory stall per window\n"
"                   free[@nodeN]:P%  used[@nodeN]:P%  rss:BYTES\n"
"                   memcg@targets|@CGROUP:BYTES  user@FILE:NUMBER\n"
"                   refault:N (the targets' major faults per window)\n"
"Example: -S 'pageout freq=0-0 idle=5s quota=64M/1s'\n", f);
}

/* @origin names the scheme in the checks made after parsing (goals). */
static int add_scheme(struct policy_opts *o, const char *flag, const char *spec,
		      const char *origin)
{
	char err[POL_ERRMSG_LEN];
	struct pol_scheme *s = &o->schemes[o->nr_schemes];

	if (o->nr_schemes >= POL_MAX_SCHEMES)
		return usage_error(CMD, "%s: more than %d schemes", flag, POL_MAX_SCHEMES);
	if (pol_scheme_parse(spec, s, err, sizeof(err)))
		return usage_error(CMD, "%s '%s': %s", flag, spec, err);
	snprintf(s->origin, sizeof(s->origin), "%s", origin);
	o->nr_schemes++;
	return 0;
}

static int add_file(struct policy_opts *o, const char *path)
{
	char err[POL_ERRMSG_LEN];
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	int ret;

	if (!f)
		return usage_error(CMD, "--scheme-file %s: %s", path, strerror(errno));
	ret = pol_scheme_file_parse(f, path, o->schemes, &o->nr_schemes, POL_MAX_SCHEMES,
				    err, sizeof(err));
	if (f != stdin)
		fclose(f);
	return ret ? usage_error(CMD, "--scheme-file %s", err) : 0;
}

/*
 * A file written at run time (the stats through FILE.tmp and a rename):
 * bad input is refused before anything is done, not warned every tick.
 */
static int check_output(const char *flag, const char *path)
{
	char *copy = strdup(path);
	struct stat st;
	int err = 0;

	if (!*path)
		return bad_value(CMD, flag, path, "empty file name");
	if (!copy)
		return fail(CMD, "out of memory");
	if (access(dirname(copy), W_OK | X_OK))
		err = errno;
	else if (!stat(path, &st) && S_ISDIR(st.st_mode))
		err = EISDIR;
	free(copy);
	return err ? usage_error(CMD, "%s %s: %s", flag, path, strerror(err)) : 0;
}

static const struct option longopts[] = {
	{ "scheme",	 required_argument, NULL, 'S' },
	{ "scheme-file", required_argument, NULL, 'f' },
	{ "preset",	 required_argument, NULL, 'P' },
	SESSION_LONGOPTS,
	{ "progress",	 required_argument, NULL, 'G' },
	{ "stats-csv",	 required_argument, NULL, 'C' },
	{ "stats-json",	 required_argument, NULL, 'J' },
	{ "record",	 required_argument, NULL, 'o' },
	{ "quiet",	 no_argument,	    NULL, 'q' },
	{ "config",	 required_argument, NULL, 'K' },
	{ "help",	 no_argument,	    NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * --cgroup A [--cgroup B ...]: every scheme without a cgroup= of its own
 * becomes one scheme per cgroup, acting only on that cgroup's processes,
 * with its goals' @targets (and rss, refault) that cgroup's: one process,
 * one goal per cgroup.  The copies replace the originals, cgroup by cgroup.
 */
static int split_per_cgroup(struct policy_opts *o)
{
	static struct pol_scheme out[POL_MAX_SCHEMES];
	int n = 0, nr_cg = 1 + o->so.nr_more_cgroups, ret = 0;
	char msg[4096];

	for (int c = 0; c < nr_cg && !ret; c++) {
		const char *arg = c ? o->so.more_cgroups[c - 1] : o->so.cgroup;
		struct cgroup_ref ref;

		if (cgroup_resolve(arg, MOUNTINFO, &ref, msg, sizeof(msg)))
			return usage_error(CMD, "--cgroup %s", msg);
		for (int i = 0; i < o->nr_schemes && !ret; i++) {
			const struct pol_scheme *src = &o->schemes[i];
			struct pol_scheme *d = &out[n];

			if (src->cgroup && c)
				continue;	/* one of its own: kept once */
			if (n == POL_MAX_SCHEMES) {
				ret = usage_error(CMD, "%d schemes for %d cgroups: more than %d",
						  o->nr_schemes, nr_cg, POL_MAX_SCHEMES);
				break;
			}
			if (pol_scheme_dup(d, src)) {
				ret = fail(CMD, "out of memory");
				break;
			}
			n++;
			if (src->cgroup)
				continue;
			d->cgroup = strdup(ref.path);
			if (!d->cgroup) {
				ret = fail(CMD, "out of memory");
				break;
			}
			/* "pageout@/app" in the stats (cut to the field), the origin in full */
			snprintf(d->name, sizeof(d->name), "%s@%s", src->name, ref.path);
			snprintf(d->origin, sizeof(d->origin), "%s, --cgroup %s", src->origin,
				 ref.path);
		}
		cgroup_ref_free(&ref);
	}
	for (int i = 0; i < o->nr_schemes; i++)
		pol_scheme_free(&o->schemes[i]);
	memcpy(o->schemes, out, sizeof(out[0]) * n);
	o->nr_schemes = ret ? 0 : n;
	if (ret)
		for (int i = 0; i < n; i++)
			pol_scheme_free(&o->schemes[i]);
	return ret;
}

static int parse_opts(int argc, char **argv, struct policy_opts *o)
{
	const char *const *preset;
	char err[POL_ERRMSG_LEN], origin[sizeof(o->schemes[0].origin)];
	int c, ret, progress_set = 0;

	o->progress_us = isatty(STDERR_FILENO) ? 1000000 : 0;
	o->so.several_cgroups = 1;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:S:f:P:" SESSION_SHORTOPTS "o:qh", longopts, NULL)) != -1) {
		ret = session_opt(CMD, c, optarg, &o->so);
		if (ret >= 0) {
			if (ret)
				return ret;
			continue;
		}
		ret = 0;
		switch (c) {
		case 'S':
			snprintf(origin, sizeof(origin), "--scheme '%s'", optarg);
			ret = add_scheme(o, "--scheme", optarg, origin);
			break;
		case 'f':
			ret = add_file(o, optarg);
			break;
		case 'P':
			preset = pol_preset(optarg);
			if (!preset)
				return bad_value(CMD, "--preset", optarg,
						 "expected reclaim, tiering or tmo");
			snprintf(origin, sizeof(origin), "--preset %s", optarg);
			for (; *preset && !ret; preset++)
				ret = add_scheme(o, "--preset", *preset, origin);
			break;
		case 'G':
			if (parse_duration_us(optarg, &o->progress_us) || o->progress_us < 10000)
				return bad_value(CMD, "--progress", optarg, "expected a duration from 10ms to "
						 DURATION_MAX_STR);
			progress_set = 1;
			break;
		case 'C':
			o->stats_csv = optarg;
			break;
		case 'J':
			o->stats_json = optarg;
			break;
		case 'o':
			if (!*optarg)
				return bad_value(CMD, "--record", optarg, "empty file name");
			/* stdout has the stats table */
			if (!strcmp(optarg, "-"))
				return bad_value(CMD, "--record", optarg, "expected a file");
			o->record = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'K':
			return usage_error(CMD, "--config comes first, before the other options");
		default:
			return opt_help_or_error(CMD, argv, c, usage);
		}
		if (ret)
			return ret;
	}
	if (o->quiet && !progress_set)
		o->progress_us = 0;
	if (!o->nr_schemes)
		return usage_error(CMD, "no scheme: give --scheme, --scheme-file or --preset");
	if ((o->stats_csv && (ret = check_output("--stats-csv", o->stats_csv))) ||
	    (o->stats_json && (ret = check_output("--stats-json", o->stats_json))) ||
	    (o->record && (ret = check_output("--record", o->record))))
		return ret;
	for (int i = 0; i < o->nr_schemes; i++)
		if (pol_scheme_check_nodes(&o->schemes[i], err, sizeof(err)))
			return usage_error(CMD, "%s", err);
	ret = session_opts_finish(CMD, &o->so, argc, argv, "act on");
	if (ret)
		return ret;
	if (o->so.cgroup && (ret = split_per_cgroup(o)))
		return ret;
	/*
	 * Goals read files (PSI, cgroups, meminfo): each is found and read once
	 * now, so that PSI turned off or a cgroup without the file is refused
	 * before anything starts.  A command is launched into our own cgroup.
	 */
	for (int i = 0; i < o->nr_schemes; i++)
		if (pol_scheme_check_goals(&o->schemes[i], o->so.pids, o->so.nr_pids, err,
					   sizeof(err)))
			return usage_error(CMD, "%s", err);
	return 0;
}

struct policy_run {
	const struct policy_opts *o;
	struct session s;		/* monitor, targets, command, t0 */
	struct pol_engine e;
	struct daptrace_snapshot snap;
	const char *reason;
	FILE *rec;
	struct policy_rec rec_state;	/* what the record keeps between windows */
	char *old_record;		/* FILE.old made of an existing FILE */
};

static double elapsed(const struct policy_run *r)
{
	return (double)(session_now_ns() - r->s.t0) / 1e9;
}

static uint64_t errs_of(const struct pol_scheme *s)
{
	uint64_t n = 0;

	for (int k = 0; k < POL_NR_ERRS; k++)
		n += s->st.errs[k];
	return n;
}

/* Returns EXIT_FAIL if a file could not be saved (warned). */
static int save_stats(struct policy_run *r)
{
	const struct policy_opts *o = r->o;
	int err, ret = 0;

	if (o->stats_csv && (err = pol_stats_save(o->stats_csv, &r->e, elapsed(r), 0))) {
		warn_msg(CMD, "--stats-csv %s: %s", o->stats_csv, strerror(-err));
		ret = EXIT_FAIL;
	}
	if (o->stats_json && (err = pol_stats_save(o->stats_json, &r->e, elapsed(r), 1))) {
		warn_msg(CMD, "--stats-json %s: %s", o->stats_json, strerror(-err));
		ret = EXIT_FAIL;
	}
	return ret;
}

/* ", quota 8.0 MiB/1s, psi 0.9 ms/1.0 ms": the tuner's state, if it has goals. */
static void progress_goals(const struct pol_scheme *s)
{
	char a[32], b[32], c[32];

	if (!s->nr_goals)
		return;
	fprintf(stderr, ", quota %s/%s", fmt_bytes(s->quota_eff, a, sizeof(a)),
		fmt_us(s->quota_us, b, sizeof(b)));
	for (int k = 0; k < s->nr_goals; k++) {
		const struct pol_goal *g = &s->goals[k];

		fprintf(stderr, ", %s %s/%s%s", pol_goal_metric_name(g->metric),
			g->nr_reads ? pol_goal_fmt(g, g->current, a, sizeof(a)) : "-",
			pol_goal_fmt(g, g->target, c, sizeof(c)), g->misses ? " (unreadable)" : "");
	}
}

/* "12.5%" of @back in @checked, or "-" before any window closed. */
static const char *pct(uint64_t back, uint64_t checked, char *buf, size_t len)
{
	if (!checked)
		return "-";
	snprintf(buf, len, "%.1f%%", 100.0 * (double)back / (double)checked);
	return buf;
}

/* ", back 1s/10s/60s 2.0%/5.1%/-": of what it took away, what came back. */
static void progress_regret(const struct pol_engine *e, int si)
{
	char a[3][16];
	struct pol_regret r;

	if (pol_regret_how_of(e->s[si].action) == POL_REGRET_NONE)
		return;
	pol_regret_sum(e, si, &r);
	fprintf(stderr, ", back 1s/10s/60s %s/%s/%s", pct(r.back[0], r.checked[0], a[0], 16),
		pct(r.back[1], r.checked[1], a[1], 16), pct(r.back[2], r.checked[2], a[2], 16));
}

static void progress(struct policy_run *r)
{
	char a[32];

	fprintf(stderr, "%s%.1f s  snapshots %" PRIu64 "  missed %" PRIu64,
		isatty(STDERR_FILENO) ? "\r\033[K" : "", elapsed(r), r->e.nr_snapshots,
		r->e.nr_missed);
	for (int i = 0; i < r->e.nr_schemes; i++) {
		const struct pol_scheme *s = &r->e.s[i];

		fprintf(stderr, "  | %s %s applied%s", s->name,
			fmt_bytes(s->st.sz_applied, a, sizeof(a)), s->active ? "" : " (off)");
		progress_goals(s);
		progress_regret(&r->e, i);
		fprintf(stderr, ", %" PRIu64 " err", errs_of(s));
	}
	fputs(isatty(STDERR_FILENO) ? "" : "\n", stderr);
	fflush(stderr);
}

/* Under a scheme's row: its quota's tuning and each goal, errors included. */
static void print_goals(const struct pol_scheme *s)
{
	char a[32], b[32], c[32];

	if (!s->nr_goals)
		return;
	printf("%-20s quota %s of %s per %s; %" PRIu64 " windows tuned, %" PRIu64
	       " at the largest quota, %" PRIu64 " paused\n", "",
	       fmt_bytes(s->quota_eff, a, sizeof(a)), fmt_bytes(s->quota_sz, b, sizeof(b)),
	       fmt_us(s->quota_us, c, sizeof(c)), s->tune.windows, s->tune.at_max,
	       s->tune.paused);
	for (int k = 0; k < s->nr_goals; k++) {
		const struct pol_goal *g = &s->goals[k];

		printf("%-20s goal %s (%s): target %s, last %s", "", g->spec,
		       g->path ? g->path : pol_goal_metric_name(g->metric),
		       pol_goal_fmt(g, g->target, a, sizeof(a)),
		       g->nr_reads ? pol_goal_fmt(g, g->current, b, sizeof(b)) : "never read");
		if (g->nr_errors)
			printf("; %" PRIu64 " reads failed (last: %s)", g->nr_errors,
			       strerror(g->last_err));
		putchar('\n');
	}
}

/*
 * Under a scheme's row: per cgroup, what it took away and, per window, how
 * much of what was checked came back; unknown and pending when any.
 */
static void print_regret(const struct pol_engine *e, int si)
{
	char a[32], b[32], c[16];

	if (pol_regret_how_of(e->s[si].action) == POL_REGRET_NONE)
		return;
	for (int i = 0; i < e->nr_regret; i++) {
		const struct pol_regret *r = &e->regret[i];

		if (r->scheme != si)
			continue;
		printf("%-20s regret %s: took %s (%s);", "", *r->cgroup ? r->cgroup : "(cgroup unknown)",
		       fmt_bytes(r->acted, a, sizeof(a)),
		       pol_regret_how_name(pol_regret_how_of(e->s[si].action)));
		for (int w = 0; w < POL_REGRET_WINDOWS; w++) {
			uint64_t pending = r->acted - r->checked[w] - r->unknown[w];

			printf(" %s: %s of %s back", pol_regret_win_name(w),
			       fmt_bytes(r->back[w], a, sizeof(a)),
			       fmt_bytes(r->checked[w], b, sizeof(b)));
			if (r->checked[w])
				printf(" (%s)", pct(r->back[w], r->checked[w], c, sizeof(c)));
			if (r->unknown[w])
				printf(", %s unknown", fmt_bytes(r->unknown[w], a, sizeof(a)));
			if (pending)
				printf(", %s pending", fmt_bytes(pending, a, sizeof(a)));
			putchar(w + 1 < POL_REGRET_WINDOWS ? ';' : '\n');
		}
		if (r->unknown_calls)
			printf("%-20s   %" PRIu64 " calls whose effect could not be read\n", "",
			       r->unknown_calls);
	}
}

static void print_stats(struct policy_run *r)
{
	char b[6][32];

	if (isatty(STDERR_FILENO) && r->o->progress_us)
		fputs("\r\033[K", stderr);
	printf("%s %s: %.1f s, %" PRIu64 " snapshots (%" PRIu64 " missed); stopped: %s\n",
	       prog, CMD, elapsed(r), r->e.nr_snapshots, r->e.nr_missed,
	       r->reason ? r->reason : "error");
	if (session_follow_summary(&r->s, b[0], sizeof(b)))
		printf("targets: %" PRIu64 "%s\n", r->s.f.st.targets, b[0]);
	printf("%-20s %10s %10s %10s %10s %10s %9s %9s %7s\n", "scheme", "tried", "applied",
	       "quota-skip", "ident-skip", "unobs-skip", "qt-exceed", "wmark-off", "errors");
	for (int i = 0; i < r->e.nr_schemes; i++) {
		const struct pol_scheme *s = &r->e.s[i];

		printf("%-20s %10s %10s %10s %10s %10s %9" PRIu64 " %9" PRIu64 " %7" PRIu64 "\n",
		       s->name, fmt_bytes(s->st.sz_tried, b[0], 32),
		       fmt_bytes(s->st.sz_applied, b[1], 32),
		       fmt_bytes(s->st.sz_quota_skip, b[2], 32),
		       fmt_bytes(s->st.sz_identity_skip, b[3], 32),
		       fmt_bytes(s->st.sz_unobserved_skip, b[4], 32),
		       s->st.qt_exceeds, s->st.wmark_inactive, errs_of(s));
		if (errs_of(s)) {
			printf("%-20s errors:", "");
			for (int k = 0; k < POL_NR_ERRS; k++)
				if (s->st.errs[k])
					printf(" %s %" PRIu64, pol_err_name(k), s->st.errs[k]);
			if (s->st.errs[POL_EOTHER])
				printf(" (last other: %s)", strerror(s->st.other_errno));
			putchar('\n');
		}
		print_goals(s);
		print_regret(&r->e, i);
	}
	fflush(stdout);
}

/* A target joined (a child of the command, a process of the cgroup). */
static void target_joined(void *ctx, struct follow_proc *p, int exec)
{
	struct policy_run *r = ctx;
	int i;

	if (exec) {
		if (r->rec)
			policy_rec_target(r->rec, p, r->s.t0);
		return;
	}
	i = pol_engine_add_target(&r->e, p->pid);
	if (i < 0) {
		warn_msg(CMD, "out of memory: process %d is not acted on", (int)p->pid);
		return;
	}
	if (r->e.t[i].pidfd < 0)
		warn_msg(CMD, "pidfd_open(%d): %s; its madvise actions will be counted "
			 "as errors", (int)p->pid, strerror(-r->e.t[i].pidfd));
	if (r->rec)
		policy_rec_target(r->rec, p, r->s.t0);
}

static void target_left(void *ctx, struct follow_proc *p)
{
	struct policy_run *r = ctx;

	pol_engine_remove_target(&r->e, p->pid);
	if (r->rec)
		policy_rec_exit(r->rec, p, r->s.t0);
}

static void record_tune(struct pol_engine *e, const struct pol_scheme *s, int64_t now_ns)
{
	struct policy_run *r = e->on_tune_ctx;

	/* a failed write shows in the snapshot written next, which checks ferror */
	if (r->rec)
		policy_rec_tune(r->rec, s, now_ns - r->s.t0);
}

static int setup(struct policy_run *r)
{
	const struct policy_opts *o = r->o;
	int err;

	r->s.cmd = CMD;
	pol_engine_init(&r->e, (struct pol_scheme *)o->schemes, o->nr_schemes, NULL, 0);
	/* a quarter of the kernel's ring (16 windows): the reader keeps up */
	r->e.work_budget_ns = (int64_t)o->so.attrs.aggr_us * 4000;
	r->s.hooks = (struct session_hooks){
		.joined = target_joined, .left = target_left, .user = r,
	};
	err = session_open(&r->s, &o->so, "a recorder or another policy?");
	if (!err)
		err = session_launch(&r->s, &o->so);
	if (!err)
		err = session_add_targets(&r->s, &o->so);
	if (err)
		return err;
	err = session_start(&r->s);
	if (err)
		return err;
	if (o->record) {
		err = recout_create(CMD, "--record", o->record, recout_gz_name(o->record),
				    o->quiet, &r->old_record, &r->rec);
		if (err)
			return err;
		if (policy_rec_header(r->rec, &o->so.attrs, &r->e, &r->s.f, r->s.t0))
			err = fail(CMD, "writing %s: %s", o->record, strerror(errno));
		/* the tuner's steps go to the record as #goal rows */
		r->e.on_tune = record_tune;
		r->e.on_tune_ctx = r;
	}
	if (!err)
		err = session_release(&r->s);
	if (err && r->rec) {
		/* nothing ran, or no header: no record, the old one back */
		fclose(r->rec);
		r->rec = NULL;
		recout_discard(CMD, o->record, r->old_record);
	}
	return err;
}

static int run_loop(struct policy_run *r)
{
	int64_t last_check = 0;
	int64_t next_progress = r->s.t0 + (int64_t)r->o->progress_us * 1000;
	int timeout_ms = session_wait_ms(&r->o->so.attrs);
	int ret;

	for (;;) {
		unsigned int n = 0;
		int64_t now;

		ret = session_wait_or_fail(&r->s, timeout_ms, CMD);
		if (ret)
			return ret;
		/* a batch at most: the rest waits for the next turn (session.h) */
		while (n++ < SESSION_DRAIN_BATCH &&
		       (ret = daptrace_read_next(r->s.d, &r->snap)) > 0) {
			pol_engine_apply(&r->e, &r->snap, session_now_ns());
			if (r->rec && policy_rec_snapshot(r->rec, &r->rec_state, &r->snap, &r->e,
							  r->s.t0))
				return fail(CMD, "writing %s: %s", r->o->record, strerror(errno));
		}
		if (ret < 0)
			return fail(CMD, "reading snapshots: %s", daptrace_last_error());
		now = session_now_ns();
		if (session_check_due(&last_check, now)) {
			r->reason = session_should_stop(&r->s, r->o->so.duration_us, now);
			if (r->reason)
				return 0;
		}
		if (r->o->progress_us &&
		    session_due_every(&next_progress, now, (int64_t)r->o->progress_us * 1000)) {
			progress(r);
			save_stats(r);
		}
	}
}

static int teardown(struct policy_run *r, int ret)
{
	session_end(&r->s, session_stop(&r->s, &ret));
	if (r->rec) {
		if (policy_rec_trailer(r->rec, r->reason, session_now_ns() - r->s.t0, &r->e,
				       &r->s) ||
		    fclose(r->rec)) {
			warn_msg(CMD, "writing %s: %s", r->o->record, strerror(errno));
			ret = ret ? ret : EXIT_FAIL;
		}
		r->rec = NULL;
	}
	policy_rec_free(&r->rec_state);
	free(r->old_record);
	r->old_record = NULL;
	if (r->e.s) {
		/* the last save is the result: its failure is the run's */
		if (save_stats(r))
			ret = ret ? ret : EXIT_FAIL;
		if (!r->o->quiet)
			print_stats(r);
	}
	pol_engine_free(&r->e);
	daptrace_snapshot_free(&r->snap);
	session_close(&r->s);
	return ret;
}

/* The argv --config FILE makes: the file's options, then the command line's. */
struct config_argv {
	char **av;	/* argv[0], the file's, room for the command line's */
	int n, room;
	char **keep;	/* the strings of av that are ours */
	int nr_keep;
};

/* One option of the file (common/opts_file.h): "--NAME" [VALUE] onto av. */
static int config_arg(void *ctx, const struct option *opt, char *value,
		      const char *path, unsigned int lineno)
{
	struct config_argv *c = ctx;
	char **nav = realloc(c->av, ((size_t)c->room + c->n + 2) * sizeof(*nav));
	char **nk = realloc(c->keep, ((size_t)c->nr_keep + 2) * sizeof(*nk));

	(void)path;
	(void)lineno;
	if (nav)
		c->av = nav;
	if (nk)
		c->keep = nk;
	if (!nav || !nk || asprintf(&c->keep[c->nr_keep], "--%s", opt->name) < 0)
		return fail(CMD, "out of memory");
	c->av[c->n++] = c->keep[c->nr_keep++];
	if (opt->has_arg == required_argument) {
		c->keep[c->nr_keep] = strdup(value);
		if (!c->keep[c->nr_keep])
			return fail(CMD, "out of memory");
		c->av[c->n++] = c->keep[c->nr_keep++];
	}
	return 0;
}

/*
 * daptrace policy --config FILE [options]: the options of FILE (as
 * common/opts_file.h reads them), then those of the command line.  The
 * service's settings file (systemd/policy.conf) is one.  *@argv_out is a
 * new argv (its own strings in *@keep, freed by the caller); 0 or an exit
 * code.
 */
static int read_config(const char *path, int argc, char **argv, int *argc_out,
		       char ***argv_out, char ***keep, int *nr_keep)
{
	struct config_argv c = { .n = 1, .room = argc };
	int ret = 0;

	c.av = malloc((size_t)argc * sizeof(*c.av));
	if (!c.av)
		return fail(CMD, "out of memory");
	c.av[0] = argv[0];
	ret = opts_file_read(CMD, path, longopts, config_arg, &c);
	if (!ret) {
		/* the command line after the file's: it wins where an option holds one value */
		for (int i = 3; i < argc; i++)
			c.av[c.n++] = argv[i];
		c.av[c.n] = NULL;
		*argc_out = c.n;
		*argv_out = c.av;
	} else {
		free(c.av);
	}
	*keep = c.keep;
	*nr_keep = c.nr_keep;
	return ret;
}

int cmd_policy(int argc, char **argv)
{
	char **cfg_argv = NULL, **keep = NULL;
	int nr_keep = 0;
	static struct policy_opts o;
	struct policy_run r = { .o = &o };
	int ret = 0;

	memset(&o, 0, sizeof(o));
	session_opts_default(&o.so);
	if (argc >= 2 && !strcmp(argv[1], "--config")) {
		if (argc < 3)
			return usage_error(CMD, "--config needs a FILE");
		ret = read_config(argv[2], argc, argv, &argc, &cfg_argv, &keep, &nr_keep);
		if (!ret)
			argv = cfg_argv;
	}
	if (!ret)
		ret = parse_opts(argc, argv, &o);
	if (!ret) {
		session_catch_signals();
		ret = setup(&r);
		if (!ret)
			ret = run_loop(&r);
		ret = teardown(&r, ret);
		/* the command's own failure is the run's: a policy must not break it */
		if (!ret && r.reason && !strcmp(r.reason, "command exited") &&
		    (!WIFEXITED(r.s.w.status) || WEXITSTATUS(r.s.w.status))) {
			warn_msg(CMD, "the command failed (wait status 0x%x)", r.s.w.status);
			ret = EXIT_FAIL;
		}
	}
	for (int i = 0; i < o.nr_schemes; i++)
		pol_scheme_free(&o.schemes[i]);
	for (int i = 0; i < nr_keep; i++)
		free(keep[i]);
	free(keep);
	free(cfg_argv);
	return ret;
}
