// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace record: configure the monitor, run or attach to the targets,
 * stream every snapshot into a CSV record until the targets exit or we are
 * interrupted, then stop, drain and close the file with its trailer.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "daptrace.h"
#include "maps.h"
#include "objects.h"
#include "objects_record.h"
#include "recfile.h"
#include "report.h"
#include "units.h"
#include "workload.h"

/* "record", or "top": the same recorder showing the hottest regions live */
static const char *cmd_name = "record";
#define CMD		cmd_name
#define NS_PER_MS	1000000LL
/* Labels refresh at most this often (a maps read costs ~0.1 ms per 100 VMAs). */
#define MAPS_REFRESH_NS	(1000 * NS_PER_MS)
#define MAPS_RETRY_NS	(100 * NS_PER_MS)
#define CHECK_NS	(250 * NS_PER_MS)
#define PROGRESS_NS	(500 * NS_PER_MS)

struct record_opts {
	struct daptrace_attrs attrs;
	pid_t pids[DAPTRACE_MAX_TARGETS];
	int nr_pids;
	char **cmd;
	const char *output;
	const char *heatmap;		/* NULL: no heatmap; "": derived name */
	uint64_t duration_us;		/* 0: until the targets exit */
	int quiet;
	int compress;			/* gzip the record */
	int top;			/* daptrace top: no file, a live table */
	int stdio;			/* top: plain text blocks, for pipes */
	unsigned int top_n;		/* top: regions shown */
	uint64_t refresh_us;		/* top: at most one table per this */
	uint64_t objects_min;		/* --objects: smallest structure; 0: off */
};

struct recorder {
	const struct record_opts *o;
	struct daptrace *d;
	struct workload w;
	FILE *out;
	pid_t pids[DAPTRACE_MAX_TARGETS];
	char *comms[DAPTRACE_MAX_TARGETS];
	struct maps maps[DAPTRACE_MAX_TARGETS];
	int64_t maps_ns[DAPTRACE_MAX_TARGETS];
	int nr_targets;
	int64_t t0;			/* CLOCK_MONOTONIC ns at "on" */
	uint64_t first_seq;		/* snapshot_seq before "on" */
	uint64_t nr_written;
	uint64_t nr_regions_last;
	struct daptrace_snapshot snap;
	struct rec_region *rows;
	uint32_t rows_cap;
	const char *reason;
	int progress_shown;
	int write_err;
	int seen_last;			/* snapshot flagged LAST arrived */
	int header_written;		/* the file is a record: finish it */
	int64_t shown_ns;		/* top: last table */
	struct objrec obj;		/* --objects */
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
"Usage: %s record [heatmap] [options] [--] command [args...]\n"
"       %s record [heatmap] [options] -p pid[,pid...]\n"
"\n"
"Monitor the data accesses of a command (started once monitoring is on) or\n"
"of running processes, and write one CSV row per region per snapshot.\n"
"Stops when all targets exit, after --duration, or on Ctrl-C/SIGTERM; the\n"
"file is complete in every case.  An existing record is kept as FILE.old.\n"
"'record heatmap' also renders the heatmap when done (like --heatmap); to run\n"
"a program named heatmap, put '--' before it.\n"
"\n"
"  -p, --pid PIDS          monitor these processes (comma separated, max %d)\n"
"  -o, --output FILE       record file (default daptrace.csv, with -z\n"
"                          daptrace.csv.gz; '-' is stdout)\n"
"  -z, --compress          gzip the record (also when FILE ends in .gz); the\n"
"                          reports read it as is\n"
"  -s, --sample DUR        sampling interval (default 5ms)\n"
"  -a, --aggr DUR          aggregation interval, one snapshot each (default 100ms)\n"
"  -u, --update DUR        memory map update interval (default 1s)\n"
"  -r, --regions MIN-MAX   region count bounds (default 10-1000)\n"
"  -t, --tlb-flush POLICY  none, round or mm (default round)\n"
"  -d, --duration DUR      stop after this long\n"
"  -q, --quiet             no progress line\n"
"      --heatmap[=FILE]    render a heatmap when done (default FILE: the record\n"
"                          name with .png)\n"
"      --objects           also record the data structures (globals, heap/mmap\n"
"                          allocations via LD_PRELOAD, thread stacks) into\n"
"                          <record>.objects.csv; see docs/objects.md\n"
"      --objects-min SIZE  smallest structure recorded (default 4096; K/M/G)\n"
"  -h, --help              this help\n"
"\n"
"DUR is a number with a unit: us, ms, s or m (\"1.5ms\", \"30s\"); a bare\n"
"number is rejected, as daptrace-workload does.\n", prog, prog, DAPTRACE_MAX_TARGETS);
}

static void top_usage(FILE *f)
{
	fprintf(f,
"Usage: %s top [options] [--] command [args...]\n"
"       %s top [options] -p pid[,pid...]\n"
"\n"
"Monitor like 'record' and show the hottest regions of the newest window,\n"
"refreshed in place (like perf top), until the targets exit, --duration or\n"
"Ctrl-C.  The table is report hot's.  Takes record's -p, -s, -a, -u, -r, -t\n"
"and -d, and:\n"
"\n"
"  -n, --top N             regions to show (default 20)\n"
"      --refresh DUR       at most one table per DUR (default 1s)\n"
"      --stdio             plain text, one table after another (for pipes)\n",
		prog, prog);
}

static int parse_opts(int argc, char **argv, struct record_opts *o, int top)
{
	static const struct option longopts[] = {
		{ "pid",	required_argument, NULL, 'p' },
		{ "output",	required_argument, NULL, 'o' },
		{ "sample",	required_argument, NULL, 's' },
		{ "aggr",	required_argument, NULL, 'a' },
		{ "update",	required_argument, NULL, 'u' },
		{ "regions",	required_argument, NULL, 'r' },
		{ "tlb-flush",	required_argument, NULL, 't' },
		{ "duration",	required_argument, NULL, 'd' },
		{ "quiet",	no_argument,	   NULL, 'q' },
		{ "compress",	no_argument,	   NULL, 'z' },
		{ "heatmap",	optional_argument, NULL, 'H' },
		{ "top",	required_argument, NULL, 'n' },
		{ "refresh",	required_argument, NULL, 'R' },
		{ "stdio",	no_argument,	   NULL, 'S' },
		{ "objects",	no_argument,	   NULL, 'O' },
		{ "objects-min", required_argument, NULL, 'M' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const dur_help =
		"expected a duration with a unit: us, ms, s or m, e.g. 5ms or 30s";
	const char *why;
	int c, n;

	memset(o, 0, sizeof(*o));
	daptrace_attrs_default(&o->attrs);
	o->output = NULL;
	o->top = top;
	o->top_n = 20;
	o->refresh_us = 1000000;
	o->stdio = top && !isatty(STDOUT_FILENO);
	opterr = 0;
	optind = 1;
	/* git/perf style: "record heatmap ..." is "record --heatmap ..." */
	if (!top && argc >= 2 && !strcmp(argv[1], "heatmap")) {
		o->heatmap = "";
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	/* '+': the command's own options are not ours */
	while ((c = getopt_long(argc, argv, top ? "+:p:s:a:u:r:t:d:n:h" :
				"+:p:o:s:a:u:r:t:d:qzh", longopts, NULL)) != -1) {
		uint64_t v;

		/* the file flags are record's, the table's are top's */
		if (top != (c == 'n' || c == 'R' || c == 'S') &&
		    strchr("ozqHOMnRS", c) && c) {
			const struct option *l = longopts;

			while (l->name && l->val != c)
				l++;
			return usage_error(CMD, "--%s does not apply to 'daptrace %s'",
					   l->name, CMD);
		}
		switch (c) {
		case 'n':
			if (parse_u64_dec(optarg, &v) || !v || v > 100000)
				return bad_value(CMD, "--top", optarg,
						 "expected a whole number from 1 to 100000");
			o->top_n = (unsigned int)v;
			break;
		case 'R':
			if (parse_duration_us(optarg, &o->refresh_us))
				return bad_value(CMD, "--refresh", optarg, dur_help);
			break;
		case 'S':
			o->stdio = 1;
			break;
		case 'p':
			n = parse_pid_list(optarg, o->pids, DAPTRACE_MAX_TARGETS);
			if (n == -E2BIG)
				return bad_value(CMD, "--pid", optarg, "more than 64 targets");
			if (n == -EEXIST)
				return bad_value(CMD, "--pid", optarg, "a pid is listed twice");
			if (n < 0)
				return bad_value(CMD, "--pid", optarg,
						 "expected pid[,pid...] with pids > 0");
			o->nr_pids = n;
			break;
		case 'o':
			if (!*optarg)
				return bad_value(CMD, "--output", optarg, "empty file name");
			o->output = optarg;
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
		case 'd':
			if (parse_duration_us(optarg, &o->duration_us) || !o->duration_us)
				return bad_value(CMD, "--duration", optarg, dur_help);
			break;
		case 'r':
			if (parse_range(optarg, &o->attrs.min_nr_regions,
					&o->attrs.max_nr_regions))
				return bad_value(CMD, "--regions", optarg,
						 "expected MIN-MAX, e.g. 10-1000");
			break;
		case 't':
			if (daptrace_tlb_flush_parse(optarg, &o->attrs.tlb_flush))
				return bad_value(CMD, "--tlb-flush", optarg,
						 "expected none, round or mm");
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'z':
			o->compress = 1;
			break;
		case 'H':
			o->heatmap = optarg ? optarg : "";
			if (optarg && !*optarg)
				return bad_value(CMD, "--heatmap", optarg, "empty file name");
			break;
		case 'O':
			if (!o->objects_min)
				o->objects_min = 4096;
			break;
		case 'M':
			if (obj_parse_size(optarg, &o->objects_min) || !o->objects_min)
				return bad_value(CMD, "--objects-min", optarg,
						 "expected a size > 0 such as 4096, 64K or 1M");
			break;
		case 'h':
			if (top)
				top_usage(stdout);
			else
				usage(stdout);
			exit(EXIT_OK);
		default:
			return opt_error(CMD, argv, c);
		}
	}
	if (top)
		o->quiet = 1;	/* the table is the progress */
	if (!o->output)
		o->output = o->compress ? "daptrace.csv.gz" : "daptrace.csv";
	n = (int)strlen(o->output);
	if (n > 3 && !strcmp(o->output + n - 3, ".gz"))
		o->compress = 1;
	if (optind < argc)
		o->cmd = argv + optind;
	if (!o->cmd && !o->nr_pids)
		return usage_error(CMD, "nothing to monitor: give a command after "
				   "'--' or --pid");
	if (o->cmd && o->nr_pids)
		return usage_error(CMD, "give either --pid or a command, not both");
	if (o->objects_min && !strcmp(o->output, "-"))
		return usage_error(CMD, "--objects needs --output to be a file");
	if (daptrace_attrs_validate(&o->attrs, &why)) {
		char s[32], a[32], u[32];

		return usage_error(CMD, "invalid attributes: %s (--sample %s, --aggr %s, "
				   "--update %s, --regions %" PRIu64 "-%" PRIu64 ")", why,
				   fmt_us(o->attrs.sample_us, s, sizeof(s)),
				   fmt_us(o->attrs.aggr_us, a, sizeof(a)),
				   fmt_us(o->attrs.update_us, u, sizeof(u)),
				   o->attrs.min_nr_regions, o->attrs.max_nr_regions);
	}
	return EXIT_OK;
}

static char *read_comm(pid_t pid)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return strdup(buf);
}

static int find_target(const struct recorder *r, pid_t pid)
{
	for (int i = 0; i < r->nr_targets; i++)
		if (r->pids[i] == pid)
			return i;
	return -1;
}

static void refresh_maps(struct recorder *r, int i, int64_t now, int64_t min_age)
{
	if (r->maps[i].gone || now - r->maps_ns[i] < min_age)
		return;
	maps_refresh(&r->maps[i]);
	r->maps_ns[i] = now;
}

static const char *label_of(struct recorder *r, const struct daptrace_region *reg)
{
	int i = find_target(r, reg->pid);

	if (i < 0)
		return "[unknown target]";
	return maps_label(&r->maps[i], reg->start, reg->end);
}

/*
 * A region outside every known mapping means a new mapping since the last
 * read: re-read that target's map (rate-limited).  Done for the whole
 * snapshot before any label is taken, because a re-read frees the labels
 * of the previous read.
 */
static void refresh_maps_for(struct recorder *r, const struct daptrace_snapshot *s,
			     int64_t now)
{
	for (int i = 0; i < r->nr_targets; i++)
		refresh_maps(r, i, now, MAPS_REFRESH_NS);
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct daptrace_region *reg = &s->regions[i];
		int t = find_target(r, reg->pid);

		if (t >= 0 && !strcmp(maps_label(&r->maps[t], reg->start, reg->end),
				      "[unmapped]"))
			refresh_maps(r, t, now, MAPS_RETRY_NS);
	}
}

static uint64_t rel_ns(const struct recorder *r, uint64_t t)
{
	return t > (uint64_t)r->t0 ? t - (uint64_t)r->t0 : 0;
}

/*
 * daptrace top: the table of report hot (the same model: report_hot.c) for
 * the newest window with regions, at most once per --refresh; a cleared
 * screen on a terminal, blocks separated by a blank line with --stdio.
 */
static int top_show(struct recorder *r, const struct rec_snapshot *rs)
{
	struct report_opts ro = { .input = "live", .top = r->o->top_n, .at_s = -1 };
	struct rec_info info = { 0 };
	int64_t now = now_ns();

	if (!rs->nr_regions || now - r->shown_ns < (int64_t)r->o->refresh_us * 1000)
		return 0;
	r->shown_ns = now;
	if (!r->o->stdio)
		fputs("\033[H\033[J", stdout);
	printf("daptrace top: %d target%s, %.1f s, window %" PRIu64 ", %u regions, "
	       "%" PRIu64 " missed%s\n", r->nr_targets, r->nr_targets == 1 ? "" : "s",
	       (double)rs->end_ns / 1e9, rs->seq, rs->nr_regions,
	       daptrace_reader_missed(r->d), r->o->stdio ? "" : "  (Ctrl-C to quit)");
	report_hot_snapshot(&ro, rs, &info, stdout);
	if (r->o->stdio)
		putchar('\n');
	fflush(stdout);
	return 0;
}

static int write_snapshot(struct recorder *r)
{
	const struct daptrace_snapshot *s = &r->snap;
	struct rec_snapshot rs = {
		.seq = s->seq,
		.start_ns = rel_ns(r, s->start_ns),
		.end_ns = rel_ns(r, s->end_ns),
		.nr_regions = s->nr_regions,
		.nr_samples = s->nr_samples,
		.flags = s->flags,
		.missed_before = s->missed_before,
		.placement = (int)s->placement,
	};
	int64_t now = now_ns();

	if (rs.end_ns < rs.start_ns)
		rs.end_ns = rs.start_ns;
	if (s->nr_regions > r->rows_cap) {
		struct rec_region *n = realloc(r->rows, s->nr_regions * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->rows = n;
		r->rows_cap = s->nr_regions;
	}
	refresh_maps_for(r, s, now);
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct daptrace_region *reg = &s->regions[i];

		r->rows[i] = (struct rec_region){
			.start = reg->start, .end = reg->end,
			.nr_accesses = reg->nr_accesses, .age = reg->age,
			.pid = reg->pid,
			/* the writer only reads labels; they stay in the maps cache */
			.label = (char *)label_of(r, reg),
			.nr_present = reg->nr_present,
			.phys_addr = reg->phys_addr,
		};
		for (int n = 0; n < REC_NODES && n < DAPTRACE_NR_NODES; n++)
			r->rows[i].node_samples[n] = reg->node_samples[n];
	}
	rs.regions = r->rows;
	r->nr_regions_last = s->nr_regions;
	r->nr_written++;
	if (s->flags & DAPTRACE_SNAPSHOT_LAST)
		r->seen_last = 1;
	return r->o->top ? top_show(r, &rs) : rec_write_snapshot(r->out, &rs);
}

/* Read and write every snapshot published so far. */
static int drain(struct recorder *r)
{
	int ret;

	while ((ret = daptrace_read_next(r->d, &r->snap)) > 0) {
		int err = write_snapshot(r);

		if (err) {
			r->write_err = err;
			return fail(CMD, "writing %s: %s", r->o->output, strerror(-err));
		}
	}
	if (ret < 0)
		return fail(CMD, "reading snapshots: %s", daptrace_last_error());
	return 0;
}

static void progress(struct recorder *r, int final)
{
	struct daptrace_counters c = { 0 };
	double secs = (double)(now_ns() - r->t0) / 1e9;
	char cpu[64] = "";

	if (r->o->quiet || !isatty(STDERR_FILENO))
		return;
	if (final) {
		if (r->progress_shown)
			fputs("\r\033[K", stderr);
		return;
	}
	if (daptrace_get_counters(r->d, &c) == 0)
		snprintf(cpu, sizeof(cpu), "  worker CPU %.3f s (%.1f%%)",
			 (double)c.worker_cpu_us / 1e6,
			 secs > 0 ? (double)c.worker_cpu_us / 1e4 / secs : 0.0);
	fprintf(stderr, "\r\033[K%.1f s  snapshots %" PRIu64 "  regions %" PRIu64
		"  missed %" PRIu64 "%s", secs, r->nr_written, c.nr_regions,
		daptrace_reader_missed(r->d), cpu);
	fflush(stderr);
	r->progress_shown = 1;
}

/* Why to stop now, or NULL to go on. */
static const char *should_stop(struct recorder *r, int64_t now)
{
	struct daptrace_target t[DAPTRACE_MAX_TARGETS];
	int n, on, exited = 0;

	if (stop_signal)
		return stop_signal == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)";
	if (r->o->duration_us &&
	    now - r->t0 >= (int64_t)r->o->duration_us * 1000)
		return "duration reached";
	/*
	 * Our own command and our targets first: when the last target exits
	 * the kernel turns monitoring off by itself, and that is not "turned
	 * off by someone else".
	 */
	if (r->w.pid && workload_poll(&r->w))
		return "command exited";
	/*
	 * The state before the targets: the kernel marks a target exited
	 * before it turns itself off, so "off" read first and the targets
	 * read next show every exit that caused it.  The other order loses
	 * the race when the last target exits in between.
	 */
	on = daptrace_is_on(r->d);
	n = daptrace_get_targets(r->d, t, DAPTRACE_MAX_TARGETS);
	if (n > DAPTRACE_MAX_TARGETS)
		n = DAPTRACE_MAX_TARGETS;
	for (int i = 0; i < n; i++)
		if (find_target(r, t[i].pid) >= 0 && t[i].state == DAPTRACE_TARGET_EXITED)
			exited++;
	if (n > 0 && exited == r->nr_targets) {
		/*
		 * Our command's mm is gone (the kernel saw it exit) a moment
		 * before the process can be reaped: wait for it, briefly.
		 */
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		for (int i = 0; r->w.pid && i < 100 && !workload_poll(&r->w); i++)
			nanosleep(&ts, NULL);
		return r->w.pid && workload_poll(&r->w) ? "command exited" :
							  "all targets exited";
	}
	if (on == 0)
		return "monitoring turned off (by the kernel or another process)";
	return NULL;
}

static int run_loop(struct recorder *r)
{
	int64_t last_check = 0, last_progress = 0;
	int timeout_ms = (int)(r->o->attrs.aggr_us / 1000);

	if (r->o->top && !r->o->stdio)
		fputs("\033[H\033[2J", stdout);	/* top: a clean screen to draw on */
	int err;

	if (timeout_ms < 10)
		timeout_ms = 10;
	if (timeout_ms > 250)
		timeout_ms = 250;
	for (;;) {
		int64_t now;

		err = daptrace_wait(r->d, timeout_ms);
		if (err < 0 && err != -EINTR)
			return fail(CMD, "waiting for snapshots: %s", daptrace_last_error());
		err = drain(r);
		if (err)
			return err;
		now = now_ns();
		if (stop_signal || now - last_check >= CHECK_NS) {
			r->reason = should_stop(r, now);
			if (r->reason)
				return 0;
			last_check = now;
			if (r->o->objects_min)
				objrec_poll(&r->obj, r->pids[0], r->t0);
		}
		if (now - last_progress >= PROGRESS_NS) {
			progress(r, 0);
			last_progress = now;
		}
	}
}

static void meta_add(struct rec_kv *kv, int *n, const char *k, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void meta_add(struct rec_kv *kv, int *n, const char *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kv[*n].key = (char *)k;
	if (vasprintf(&kv[*n].value, fmt, ap) < 0)
		kv[*n].value = NULL;
	va_end(ap);
	if (kv[*n].value)
		(*n)++;
}

static void meta_free(struct rec_kv *kv, int n)
{
	for (int i = 0; i < n; i++)
		free(kv[i].value);
}

static char *join_args(char **argv)
{
	size_t len = 1;
	char *s;

	for (char **a = argv; *a; a++)
		len += strlen(*a) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (char **a = argv; *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

static int write_header(struct recorder *r)
{
	const struct daptrace_attrs *a = &r->o->attrs;
	struct rec_target t[DAPTRACE_MAX_TARGETS];
	struct rec_kv kv[16];
	struct utsname u;
	char when[64];
	time_t now = time(NULL);
	char *cmd = r->o->cmd ? join_args(r->o->cmd) : NULL;
	int n = 0, err;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	meta_add(kv, &n, "daptrace_version", "%s", DAPTRACE_VERSION);
	if (uname(&u) == 0) {
		meta_add(kv, &n, "kernel", "%s", u.release);
		meta_add(kv, &n, "hostname", "%s", u.nodename);
	}
	meta_add(kv, &n, "start_time", "%s", when);
	/* t=0 of the record on the snapshots' clock, to line up other traces */
	meta_add(kv, &n, "monotonic_start_ns", "%" PRId64, r->t0);
	meta_add(kv, &n, "sample_us", "%" PRIu64, a->sample_us);
	meta_add(kv, &n, "aggr_us", "%" PRIu64, a->aggr_us);
	meta_add(kv, &n, "update_us", "%" PRIu64, a->update_us);
	meta_add(kv, &n, "min_nr_regions", "%" PRIu64, a->min_nr_regions);
	meta_add(kv, &n, "max_nr_regions", "%" PRIu64, a->max_nr_regions);
	meta_add(kv, &n, "tlb_flush", "%s", daptrace_tlb_flush_name(a->tlb_flush));
	meta_add(kv, &n, "page_size", "%ld", sysconf(_SC_PAGESIZE));
	if (cmd)
		meta_add(kv, &n, "command", "%s", cmd);
	free(cmd);
	for (int i = 0; i < r->nr_targets; i++) {
		t[i].pid = r->pids[i];
		t[i].comm = r->comms[i];
	}
	err = rec_write_header(r->out, kv, n, t, r->nr_targets);
	meta_free(kv, n);
	return err;
}

static int write_trailer(struct recorder *r)
{
	struct daptrace_counters c = { 0 };
	struct rec_kv kv[16];
	int n = 0, err;

	meta_add(kv, &n, "reason", "%s", r->reason ? r->reason : "error");
	meta_add(kv, &n, "duration_ns", "%" PRId64, now_ns() - r->t0);
	meta_add(kv, &n, "snapshots", "%" PRIu64, r->nr_written);
	meta_add(kv, &n, "missed", "%" PRIu64, daptrace_reader_missed(r->d));
	if (daptrace_get_counters(r->d, &c) == 0) {
		meta_add(kv, &n, "kernel_nr_samples", "%" PRIu64, c.nr_samples);
		meta_add(kv, &n, "kernel_nr_snapshots", "%" PRIu64, c.nr_snapshots);
		meta_add(kv, &n, "kernel_nr_snapshots_missed", "%" PRIu64,
			 c.nr_snapshots_missed);
		meta_add(kv, &n, "worker_cpu_us", "%" PRIu64, c.worker_cpu_us);
	}
	if (r->w.pid && r->w.exited) {
		if (WIFEXITED(r->w.status))
			meta_add(kv, &n, "command_exit", "%d", WEXITSTATUS(r->w.status));
		else if (WIFSIGNALED(r->w.status))
			meta_add(kv, &n, "command_exit", "signal %d", WTERMSIG(r->w.status));
	}
	err = rec_write_trailer(r->out, kv, n);
	meta_free(kv, n);
	return err;
}

static int add_targets(struct recorder *r)
{
	for (int i = 0; i < r->nr_targets; i++) {
		if (daptrace_add_target(r->d, r->pids[i]) < 0) {
			if (errno == ESRCH)
				return fail(CMD, "no such process: %d", (int)r->pids[i]);
			return fail(CMD, "adding target %d: %s", (int)r->pids[i],
				    daptrace_last_error());
		}
		r->maps[i].pid = r->pids[i];
		maps_refresh(&r->maps[i]);
		r->maps_ns[i] = now_ns();
	}
	return 0;
}

/* Targets left behind by an earlier run would be monitored too. */
static int clear_stale_targets(struct recorder *r)
{
	struct daptrace_target t[DAPTRACE_MAX_TARGETS];
	int n = daptrace_get_targets(r->d, t, DAPTRACE_MAX_TARGETS);

	if (n < 0)
		return fail(CMD, "%s", daptrace_last_error());
	for (int i = 0; i < n && i < DAPTRACE_MAX_TARGETS; i++) {
		warn_msg(CMD, "removing stale target %d (%s)", (int)t[i].pid,
			 daptrace_target_state_name(t[i].state));
		if (daptrace_remove_target(r->d, t[i].pid) < 0 && errno != ENOENT)
			return fail(CMD, "%s", daptrace_last_error());
	}
	return 0;
}

/* Like perf.data.old: an existing record is renamed, never overwritten. */
static int keep_old_record(const char *path, int quiet)
{
	struct stat st;
	char *old;
	int ret = 0;

	if (!strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	if (asprintf(&old, "%s.old", path) < 0)
		return fail(CMD, "out of memory");
	if (rename(path, old))
		ret = fail(CMD, "--output %s: keeping the old record as %s: %s", path,
			   old, strerror(errno));
	else if (!quiet)
		warn_msg(CMD, "the old %s is now %s", path, old);
	free(old);
	return ret;
}

static int setup(struct recorder *r)
{
	const struct record_opts *o = r->o;
	char errbuf[512];
	int on, err;

	if (daptrace_open(&r->d) < 0)
		return fail(CMD, "cannot open the kernel interface: %s",
			    daptrace_last_error());
	on = daptrace_is_on(r->d);
	if (on < 0)
		return fail(CMD, "%s", daptrace_last_error());
	if (on)
		return fail(CMD, "monitoring is already on (another recorder?); "
			    "turn it off with: echo off > %s/state", daptrace_root(r->d));
	err = clear_stale_targets(r);
	if (err)
		return err;
	if (daptrace_set_attrs(r->d, &o->attrs) < 0)
		return fail(CMD, "setting attributes: %s", daptrace_last_error());

	err = o->top ? 0 : keep_old_record(o->output, o->quiet);
	if (err)
		return err;
	r->out = o->top ? NULL : rec_create(o->output, o->compress, errbuf, sizeof(errbuf));
	if (!r->out && !o->top)
		return fail(CMD, "--output %s", errbuf);

	if (o->objects_min) {
		err = objrec_prepare(&r->obj, o->output, o->objects_min, !!o->cmd);
		if (err)
			return err;
	}
	if (o->cmd) {
		err = workload_prepare(&r->w, o->cmd);
		objrec_forked(&r->obj);
		if (err)
			return fail(CMD, "cannot start '%s': %s", o->cmd[0], strerror(-err));
		r->pids[0] = r->w.pid;
		r->comms[0] = strdup(o->cmd[0]);
		r->nr_targets = 1;
	} else {
		for (int i = 0; i < o->nr_pids; i++) {
			r->pids[i] = o->pids[i];
			r->comms[i] = read_comm(o->pids[i]);
		}
		r->nr_targets = o->nr_pids;
	}
	err = add_targets(r);
	if (err)
		return err;
	/* position the reader first so the run's first snapshot is not missed */
	if (daptrace_reader_init(r->d) < 0)
		return fail(CMD, "%s", daptrace_last_error());
	r->first_seq = daptrace_reader_next_seq(r->d);
	r->t0 = now_ns();
	if (daptrace_start(r->d) < 0)
		return fail(CMD, "turning monitoring on: %s", daptrace_last_error());
	if (r->out && write_header(r))
		return fail(CMD, "writing %s: %s", o->output, strerror(errno));
	r->header_written = 1;
	if (r->w.pid && workload_release(&r->w))
		warn_msg(CMD, "the command exited before it could start");
	return 0;
}

/* Stop, drain what the worker published last, untarget, close the file. */
static int teardown(struct recorder *r, int ret)
{
	int on = r->d ? daptrace_is_on(r->d) : 0;

	if (on > 0 && daptrace_stop(r->d) < 0) {
		warn_msg(CMD, "turning monitoring off: %s", daptrace_last_error());
		ret = ret ? ret : EXIT_FAIL;
	}
	if (r->out && r->header_written && !r->write_err) {
		/* the worker's last window may be published just after "off" */
		int64_t wait_ns = 2 * (int64_t)r->o->attrs.aggr_us * 1000;
		int64_t deadline;

		if (wait_ns < 100 * NS_PER_MS)
			wait_ns = 100 * NS_PER_MS;
		if (wait_ns > 2000 * NS_PER_MS)
			wait_ns = 2000 * NS_PER_MS;
		deadline = now_ns() + wait_ns;
		do {
			if (drain(r)) {
				ret = ret ? ret : EXIT_FAIL;
				break;
			}
			if (r->seen_last || on <= 0)
				break;
		} while (now_ns() < deadline && daptrace_wait(r->d, 20) >= 0);
	}
	progress(r, 1);
	for (int i = 0; r->d && on >= 0 && i < r->nr_targets; i++)
		daptrace_remove_target(r->d, r->pids[i]);
	if (r->w.pid)
		workload_finish(&r->w, stop_signal ? stop_signal : SIGTERM);
	if (r->o->objects_min && r->header_written) {
		int err = objrec_finish(&r->obj, r->pids[0], r->t0);

		ret = ret ? ret : err;
	}
	objrec_free(&r->obj);
	if (r->out && r->header_written && !r->write_err && write_trailer(r))
		ret = fail(CMD, "writing %s: %s", r->o->output, strerror(errno));
	if (r->out && r->out != stdout) {
		if (fclose(r->out))
			ret = fail(CMD, "closing %s: %s", r->o->output, strerror(errno));
		if (!r->header_written)
			unlink(r->o->output);	/* nothing recorded: no empty file */
	}
	r->out = NULL;
	if (r->header_written && !ret && !r->o->top)
		fprintf(stderr, "%s %s: %" PRIu64 " snapshots (%" PRIu64
			" missed) in %.1f s written to %s; stopped: %s\n", prog, CMD,
			r->nr_written, daptrace_reader_missed(r->d),
			(double)(now_ns() - r->t0) / 1e9, r->o->output, r->reason);
	for (int i = 0; i < r->nr_targets; i++) {
		maps_free(&r->maps[i]);
		free(r->comms[i]);
	}
	daptrace_snapshot_free(&r->snap);
	free(r->rows);
	daptrace_close(r->d);
	return ret;
}

static char *heatmap_name(const char *output)
{
	size_t len = strlen(output);
	char *s = malloc(len + 5);

	if (!s)
		return NULL;
	strcpy(s, output);
	if (len > 3 && !strcmp(s + len - 3, ".gz"))
		s[len -= 3] = '\0';
	if (len > 4 && !strcmp(s + len - 4, ".csv"))
		s[len - 4] = '\0';
	strcat(s, ".png");
	return s;
}

static int run(int argc, char **argv, int top)
{
	struct record_opts o;
	struct recorder r = { .o = &o };
	struct sigaction sa = { .sa_handler = on_signal };
	int ret;

	ret = parse_opts(argc, argv, &o, top);
	if (ret)
		return ret;
	if (o.heatmap && !strcmp(o.output, "-"))
		return usage_error(CMD, "--heatmap needs --output to be a file");
	/* no SA_RESTART: a signal must wake the poll() */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	ret = setup(&r);
	if (!ret)
		ret = run_loop(&r);
	ret = teardown(&r, ret);
	if (!ret && o.heatmap) {
		char *name = *o.heatmap ? strdup(o.heatmap) : heatmap_name(o.output);

		ret = name ? report_heatmap_plot(o.output, name) : EXIT_FAIL;
		free(name);
	}
	return ret;
}

int cmd_record(int argc, char **argv)
{
	return run(argc, argv, 0);
}

int cmd_top(int argc, char **argv)
{
	cmd_name = "top";
	return run(argc, argv, 1);
}
