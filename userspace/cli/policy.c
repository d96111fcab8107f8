// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace policy: run DAMOS-style schemes (userspace/policy/) on the
 * snapshots of a command or of running processes, until they exit, a
 * duration passes or we are interrupted; show progress and the stats.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "daptrace.h"
#include "policy.h"
#include "policy_record.h"
#include "units.h"
#include "workload.h"

#define CMD		"policy"
#define NS_PER_MS	1000000LL
#define CHECK_NS	(250 * NS_PER_MS)

struct policy_opts {
	struct daptrace_attrs attrs;
	struct pol_scheme schemes[POL_MAX_SCHEMES];
	int nr_schemes;
	pid_t pids[DAPTRACE_MAX_TARGETS];
	int nr_pids;
	char **cmd;
	uint64_t duration_us;
	uint64_t progress_us;		/* 0: none */
	const char *stats_csv;
	const char *stats_json;
	const char *record;
	int quiet;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

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
"                          tiering: hot to node 0, idle >= 5 s to node 1\n"
"  -p, --pid PIDS          act on these processes (comma separated)\n"
"  -s, --sample DUR        sampling interval (default 5ms)\n"
"  -a, --aggr DUR          aggregation interval: schemes apply each (default 100ms)\n"
"  -u, --update DUR        memory map update interval (default 1s)\n"
"  -r, --regions MIN-MAX   region count bounds (default 10-1000)\n"
"  -t, --tlb-flush POLICY  none, round or mm (default round)\n"
"  -d, --duration DUR      stop after this long\n"
"      --progress DUR      print progress this often (default 1s on a terminal)\n"
"      --stats-csv FILE    stats as CSV, rewritten at each progress and at the end\n"
"      --stats-json FILE   stats as JSON, likewise\n"
"  -o, --record FILE       also write every snapshot the policy acted on as a\n"
"                          record (the format of 'daptrace record')\n"
"  -q, --quiet             no progress, no stats table\n"
"  -h, --help              this help\n"
"\n"
"SCHEME: ACTION [NODE] [key=value ...]\n"
"  ACTION   pageout, cold, willneed, collapse, stat, migrate_hot NODE, migrate_cold NODE\n"
"  size=MIN-MAX     region size in bytes (K/M/G; MAX may be max)\n"
"  freq=MIN-MAX     accesses, percent of the window's samples (0-0: idle)\n"
"  age=MIN-MAX      how long the access level held (e.g. 5s-max)\n"
"  idle=DUR         not seen accessed for DUR, by address across windows\n"
"  quota=BYTES/DUR  at most BYTES per DUR, coldest first (hottest for\n"
"                   migrate_hot, willneed, collapse; prio=coldest|hottest)\n"
"  wmarks=METRIC,HIGH,MID,LOW  active only while free memory (METRIC free or\n"
"                   nodeN) is below HIGH and above LOW percent, from MID on\n"
"  type=anon|file   label=TEXT (a mapping label contains TEXT)   addr=START-END\n"
"  reapply=DUR      act on an acted-on, still idle range again after DUR\n"
"Example: -S 'pageout freq=0-0 idle=5s quota=64M/1s'\n", prog, prog);
}

static int add_scheme(struct policy_opts *o, const char *flag, const char *spec)
{
	char err[POL_ERRMSG_LEN];

	if (o->nr_schemes >= POL_MAX_SCHEMES)
		return usage_error(CMD, "%s: more than %d schemes", flag, POL_MAX_SCHEMES);
	if (pol_scheme_parse(spec, &o->schemes[o->nr_schemes], err, sizeof(err)))
		return usage_error(CMD, "%s '%s': %s", flag, spec, err);
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

static int parse_opts(int argc, char **argv, struct policy_opts *o)
{
	static const struct option longopts[] = {
		{ "scheme",	 required_argument, NULL, 'S' },
		{ "scheme-file", required_argument, NULL, 'f' },
		{ "preset",	 required_argument, NULL, 'P' },
		{ "pid",	 required_argument, NULL, 'p' },
		{ "sample",	 required_argument, NULL, 's' },
		{ "aggr",	 required_argument, NULL, 'a' },
		{ "update",	 required_argument, NULL, 'u' },
		{ "regions",	 required_argument, NULL, 'r' },
		{ "tlb-flush",	 required_argument, NULL, 't' },
		{ "duration",	 required_argument, NULL, 'd' },
		{ "progress",	 required_argument, NULL, 'G' },
		{ "stats-csv",	 required_argument, NULL, 'C' },
		{ "stats-json",	 required_argument, NULL, 'J' },
		{ "record",	 required_argument, NULL, 'o' },
		{ "quiet",	 no_argument,	    NULL, 'q' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const dur_help =
		"expected a duration such as 5ms, 100us or 1s; a bare number is us";
	const char *const *preset;
	char err[POL_ERRMSG_LEN];
	const char *why;
	int c, n, ret, progress_set = 0;

	o->progress_us = isatty(STDERR_FILENO) ? 1000000 : 0;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:S:f:P:p:s:a:u:r:t:d:o:qh", longopts, NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'S':
			ret = add_scheme(o, "--scheme", optarg);
			break;
		case 'f':
			ret = add_file(o, optarg);
			break;
		case 'P':
			preset = pol_preset(optarg);
			if (!preset)
				return bad_value(CMD, "--preset", optarg, "expected reclaim or tiering");
			for (; *preset && !ret; preset++)
				ret = add_scheme(o, "--preset", *preset);
			break;
		case 'p':
			n = parse_pid_list(optarg, o->pids, DAPTRACE_MAX_TARGETS);
			if (n < 0)
				return bad_value(CMD, "--pid", optarg,
						 "expected pid[,pid...] with pids > 0, at most 64, no repeats");
			o->nr_pids = n;
			break;
		case 's':
			if (parse_duration_us(optarg, &o->attrs.sample_us))
				return bad_value(CMD, "--sample", optarg, dur_help);
			break;
		case 'a':
			if (parse_duration_us(optarg, &o->attrs.aggr_us))
				return bad_value(CMD, "--aggr", optarg, dur_help);
			break;
		case 'u':
			if (parse_duration_us(optarg, &o->attrs.update_us))
				return bad_value(CMD, "--update", optarg, dur_help);
			break;
		case 'r':
			if (parse_range(optarg, &o->attrs.min_nr_regions, &o->attrs.max_nr_regions))
				return bad_value(CMD, "--regions", optarg, "expected MIN-MAX, e.g. 10-1000");
			break;
		case 't':
			if (daptrace_tlb_flush_parse(optarg, &o->attrs.tlb_flush))
				return bad_value(CMD, "--tlb-flush", optarg, "expected none, round or mm");
			break;
		case 'd':
			if (parse_duration_us(optarg, &o->duration_us) || !o->duration_us)
				return bad_value(CMD, "--duration", optarg, dur_help);
			break;
		case 'G':
			if (parse_duration_us(optarg, &o->progress_us) || o->progress_us < 10000)
				return bad_value(CMD, "--progress", optarg, "expected a duration >= 10ms");
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
			o->record = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			return opt_error(CMD, argv, c);
		}
		if (ret)
			return ret;
	}
	if (o->quiet && !progress_set)
		o->progress_us = 0;
	if (optind < argc)
		o->cmd = argv + optind;
	if (!o->nr_schemes)
		return usage_error(CMD, "no scheme: give --scheme, --scheme-file or --preset");
	if (!o->cmd && !o->nr_pids)
		return usage_error(CMD, "nothing to act on: give a command after '--' or --pid");
	if (o->cmd && o->nr_pids)
		return usage_error(CMD, "give either --pid or a command, not both");
	for (int i = 0; i < o->nr_schemes; i++)
		if (pol_scheme_check_nodes(&o->schemes[i], err, sizeof(err)))
			return usage_error(CMD, "%s", err);
	if (daptrace_attrs_validate(&o->attrs, &why))
		return usage_error(CMD, "invalid attributes: %s", why);
	return EXIT_OK;
}

struct policy_run {
	const struct policy_opts *o;
	struct daptrace *d;
	struct workload w;
	struct pol_engine e;
	struct daptrace_snapshot snap;
	pid_t pids[DAPTRACE_MAX_TARGETS];
	int nr_targets;
	int64_t t0;
	const char *reason;
	int targets_added;
	FILE *rec;
};

static double elapsed(const struct policy_run *r)
{
	return (double)(now_ns() - r->t0) / 1e9;
}

static uint64_t errs_of(const struct pol_scheme *s)
{
	uint64_t n = 0;

	for (int k = 0; k < POL_NR_ERRS; k++)
		n += s->st.errs[k];
	return n;
}

static void save_stats(struct policy_run *r)
{
	const struct policy_opts *o = r->o;
	int err;

	if (o->stats_csv && (err = pol_stats_save(o->stats_csv, &r->e, elapsed(r), 0)))
		warn_msg(CMD, "--stats-csv %s: %s", o->stats_csv, strerror(-err));
	if (o->stats_json && (err = pol_stats_save(o->stats_json, &r->e, elapsed(r), 1)))
		warn_msg(CMD, "--stats-json %s: %s", o->stats_json, strerror(-err));
}

static void progress(struct policy_run *r)
{
	char a[32];

	fprintf(stderr, "%s%.1f s  snapshots %" PRIu64 "  missed %" PRIu64,
		isatty(STDERR_FILENO) ? "\r\033[K" : "", elapsed(r), r->e.nr_snapshots,
		r->e.nr_missed);
	for (int i = 0; i < r->e.nr_schemes; i++) {
		const struct pol_scheme *s = &r->e.s[i];

		fprintf(stderr, "  | %s %s applied%s, %" PRIu64 " err", s->name,
			fmt_bytes(s->st.sz_applied, a, sizeof(a)), s->active ? "" : " (off)",
			errs_of(s));
	}
	fputs(isatty(STDERR_FILENO) ? "" : "\n", stderr);
	fflush(stderr);
}

static void print_stats(struct policy_run *r)
{
	char b[6][32];

	if (isatty(STDERR_FILENO) && r->o->progress_us)
		fputs("\r\033[K", stderr);
	printf("%s %s: %.1f s, %" PRIu64 " snapshots (%" PRIu64 " missed); stopped: %s\n",
	       prog, CMD, elapsed(r), r->e.nr_snapshots, r->e.nr_missed,
	       r->reason ? r->reason : "error");
	printf("%-20s %10s %10s %10s %10s %9s %9s %7s\n", "scheme", "tried", "applied",
	       "quota-skip", "ident-skip", "qt-exceed", "wmark-off", "errors");
	for (int i = 0; i < r->e.nr_schemes; i++) {
		const struct pol_scheme *s = &r->e.s[i];

		printf("%-20s %10s %10s %10s %10s %9" PRIu64 " %9" PRIu64 " %7" PRIu64 "\n",
		       s->name, fmt_bytes(s->st.sz_tried, b[0], 32),
		       fmt_bytes(s->st.sz_applied, b[1], 32),
		       fmt_bytes(s->st.sz_quota_skip, b[2], 32),
		       fmt_bytes(s->st.sz_identity_skip, b[3], 32),
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
	}
	fflush(stdout);
}

static const char *should_stop(struct policy_run *r, int64_t now)
{
	struct daptrace_target t[DAPTRACE_MAX_TARGETS];
	int n, on, exited = 0;

	if (stop_signal)
		return stop_signal == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)";
	if (r->o->duration_us && now - r->t0 >= (int64_t)r->o->duration_us * 1000)
		return "duration reached";
	if (r->w.pid && workload_poll(&r->w))
		return "command exited";
	/* state before targets: see record.c */
	on = daptrace_is_on(r->d);
	n = daptrace_get_targets(r->d, t, DAPTRACE_MAX_TARGETS);
	for (int i = 0; i < n && i < DAPTRACE_MAX_TARGETS; i++)
		for (int j = 0; j < r->nr_targets; j++)
			if (t[i].pid == r->pids[j] && t[i].state == DAPTRACE_TARGET_EXITED)
				exited++;
	if (n > 0 && exited == r->nr_targets)
		return "all targets exited";
	if (on == 0)
		return "monitoring turned off (by the kernel or another process)";
	return NULL;
}

static int setup(struct policy_run *r)
{
	const struct policy_opts *o = r->o;
	struct daptrace_target t[DAPTRACE_MAX_TARGETS];
	int on, n, err;

	if (daptrace_open(&r->d) < 0)
		return fail(CMD, "cannot open the kernel interface: %s", daptrace_last_error());
	on = daptrace_is_on(r->d);
	if (on < 0)
		return fail(CMD, "%s", daptrace_last_error());
	if (on)
		return fail(CMD, "monitoring is already on (a recorder or another policy?)");
	n = daptrace_get_targets(r->d, t, DAPTRACE_MAX_TARGETS);
	for (int i = 0; i < n && i < DAPTRACE_MAX_TARGETS; i++) {
		warn_msg(CMD, "removing stale target %d", (int)t[i].pid);
		daptrace_remove_target(r->d, t[i].pid);
	}
	if (daptrace_set_attrs(r->d, &o->attrs) < 0)
		return fail(CMD, "setting attributes: %s", daptrace_last_error());
	if (o->cmd) {
		err = workload_prepare(&r->w, o->cmd);
		if (err)
			return fail(CMD, "cannot start '%s': %s", o->cmd[0], strerror(-err));
		r->pids[0] = r->w.pid;
		r->nr_targets = 1;
	} else {
		memcpy(r->pids, o->pids, sizeof(pid_t) * (size_t)o->nr_pids);
		r->nr_targets = o->nr_pids;
	}
	for (int i = 0; i < r->nr_targets; i++) {
		if (daptrace_add_target(r->d, r->pids[i]) < 0)
			return fail(CMD, "adding target %d: %s", (int)r->pids[i],
				    daptrace_last_error());
		r->targets_added = i + 1;
	}
	pol_engine_init(&r->e, (struct pol_scheme *)o->schemes, o->nr_schemes, r->pids,
			r->nr_targets);
	/* a quarter of the kernel's ring (16 windows): the reader keeps up */
	r->e.work_budget_ns = (int64_t)o->attrs.aggr_us * 4000;
	for (int i = 0; i < r->nr_targets; i++)
		if (r->e.t[i].pidfd < 0)
			warn_msg(CMD, "pidfd_open(%d): %s; its madvise actions will be counted "
				 "as errors", (int)r->pids[i], strerror(-r->e.t[i].pidfd));
	if (daptrace_reader_init(r->d) < 0)
		return fail(CMD, "%s", daptrace_last_error());
	r->t0 = now_ns();
	if (o->record) {
		r->rec = fopen(o->record, "we");
		if (!r->rec)
			return fail(CMD, "--record %s: %s", o->record, strerror(errno));
		if (policy_rec_header(r->rec, &o->attrs, &r->e, r->t0))
			return fail(CMD, "writing %s: %s", o->record, strerror(errno));
	}
	if (daptrace_start(r->d) < 0)
		return fail(CMD, "turning monitoring on: %s", daptrace_last_error());
	if (r->w.pid && workload_release(&r->w))
		warn_msg(CMD, "the command exited before it could start");
	return 0;
}

static int run_loop(struct policy_run *r)
{
	int64_t last_check = 0, last_progress = r->t0;
	int timeout_ms = (int)(r->o->attrs.aggr_us / 1000);
	int ret;

	timeout_ms = timeout_ms < 10 ? 10 : timeout_ms > 250 ? 250 : timeout_ms;
	for (;;) {
		int64_t now;

		ret = daptrace_wait(r->d, timeout_ms);
		if (ret < 0 && ret != -EINTR)
			return fail(CMD, "waiting for snapshots: %s", daptrace_last_error());
		while ((ret = daptrace_read_next(r->d, &r->snap)) > 0) {
			pol_engine_apply(&r->e, &r->snap, now_ns());
			if (r->rec && policy_rec_snapshot(r->rec, &r->snap, &r->e, r->t0))
				return fail(CMD, "writing %s: %s", r->o->record, strerror(errno));
		}
		if (ret < 0)
			return fail(CMD, "reading snapshots: %s", daptrace_last_error());
		now = now_ns();
		if (stop_signal || now - last_check >= CHECK_NS) {
			r->reason = should_stop(r, now);
			if (r->reason)
				return 0;
			last_check = now;
		}
		if (r->o->progress_us && now - last_progress >= (int64_t)r->o->progress_us * 1000) {
			progress(r);
			save_stats(r);
			last_progress = now;
		}
	}
}

static int teardown(struct policy_run *r, int ret)
{
	if (r->d && daptrace_is_on(r->d) > 0 && daptrace_stop(r->d) < 0) {
		warn_msg(CMD, "turning monitoring off: %s", daptrace_last_error());
		ret = ret ? ret : EXIT_FAIL;
	}
	for (int i = 0; r->d && i < r->targets_added; i++)
		daptrace_remove_target(r->d, r->pids[i]);
	if (r->w.pid)
		workload_finish(&r->w, stop_signal ? stop_signal : SIGTERM);
	if (r->rec) {
		if (policy_rec_trailer(r->rec, r->reason, now_ns() - r->t0, &r->e) ||
		    fclose(r->rec)) {
			warn_msg(CMD, "writing %s: %s", r->o->record, strerror(errno));
			ret = ret ? ret : EXIT_FAIL;
		}
		r->rec = NULL;
	}
	if (r->e.s) {
		save_stats(r);
		if (!r->o->quiet)
			print_stats(r);
	}
	pol_engine_free(&r->e);
	daptrace_snapshot_free(&r->snap);
	daptrace_close(r->d);
	return ret;
}

int cmd_policy(int argc, char **argv)
{
	static struct policy_opts o;
	struct policy_run r = { .o = &o };
	struct sigaction sa = { .sa_handler = on_signal };
	int ret;

	memset(&o, 0, sizeof(o));
	daptrace_attrs_default(&o.attrs);
	ret = parse_opts(argc, argv, &o);
	if (!ret) {
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
		ret = setup(&r);
		if (!ret)
			ret = run_loop(&r);
		ret = teardown(&r, ret);
		/* the command's own failure is the run's: a policy must not break it */
		if (!ret && r.reason && !strcmp(r.reason, "command exited") &&
		    (!WIFEXITED(r.w.status) ||
						       WEXITSTATUS(r.w.status))) {
			warn_msg(CMD, "the command failed (wait status 0x%x)", r.w.status);
			ret = EXIT_FAIL;
		}
	}
	for (int i = 0; i < o.nr_schemes; i++)
		pol_scheme_free(&o.schemes[i]);
	return ret;
}
