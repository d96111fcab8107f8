// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace record: configure the monitor, run or attach to the targets,
 * stream every snapshot into a CSV record until the targets exit or we are
 * interrupted, then stop, drain and close the file with its trailer.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/accuracy.h"
#include "cli.h"
#include "daptrace.h"
#include "common/maps.h"
#include "objects/objects.h"
#include "objects/objects_record.h"
#include "common/recfile.h"
#include "record_footprint.h"
#include "record_labels.h"
#include "session/record_output.h"
#include "session/record_rows.h"
#include "report/report.h"
#include "session/session.h"
#include "common/units.h"
#include "session/workload.h"

/* "record", or "top": the same recorder showing the hottest regions live */
static const char *cmd_name = "record";
#define CMD		cmd_name
#define NS_PER_MS	1000000LL
/* Labels refresh at most this often (a maps read costs ~0.1 ms per 100 VMAs). */
#define MAPS_REFRESH_NS	(1000 * NS_PER_MS)
#define MAPS_RETRY_NS	(100 * NS_PER_MS)
#define PROGRESS_NS	(500 * NS_PER_MS)
/*
 * With many targets, labels and footprints cost: each window reads at
 * most this many footprints (the targets take turns), and a target's map
 * is re-read this many times less often per that many targets.
 */
#define FOOTPRINTS_PER_WINDOW	64

struct record_opts {
	struct session_opts so;		/* -p, -s, -a, -u, -r, -t, -d, command */
	const char *output;
	const char *heatmap;		/* NULL: no heatmap; "": derived name */
	const char *damo;		/* NULL: no damo record; "": derived name */
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
	struct session s;		/* monitor, targets, command, t0 */
	FILE *out;
	uint64_t nr_written;
	uint64_t nr_regions_last;
	struct daptrace_snapshot snap;
	struct rec_rows rows;
	struct rec_labels labels;	/* of the snapshot being written */
	struct maps_rows maps;		/* its #maps rows: the maps read since */
	struct footprints fp;		/* the targets' VSZ and RSS per window */
	struct pid_vec fp_pids;		/* whose footprint this window reads */
	size_t fp_next;			/* the next target's turn */
	const char *reason;
	int progress_shown;
	int write_err;
	int seen_last;			/* snapshot flagged LAST arrived */
	int header_written;		/* the file is a record: finish it */
	char *old_record;		/* FILE.old made of an existing FILE */
	int64_t shown_ns;		/* top: last table */
	struct acc_pool *acc;		/* top: the accuracy probes pooled */
	struct objrec obj;		/* --objects */
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s record [heatmap] [options] [--] command [args...]\n"
"       %s record [heatmap] [options] -p pid[,pid...] [-i]\n"
"       %s record [heatmap] [options] --cgroup PATH\n"
"\n"
"Monitor the data accesses of a command and the processes it starts (the\n"
"command is started once monitoring is on), of running processes, or of a\n"
"cgroup's processes, and write one CSV row per region per snapshot.  New\n"
"processes join as they start, and leave when they exit.  Stops when all\n"
"targets exit, after --duration, or on Ctrl-C/SIGTERM; the file is complete\n"
"in every case.  An existing record is kept as FILE.old.\n"
"'record heatmap' also renders the heatmap when done (like --heatmap); to run\n"
"a program named heatmap, put '--' before it.\n"
"\n", prog, prog, prog);
	session_target_help(f, "monitor");
	fputs(
"  -o, --output FILE       record file (default daptrace.csv, with -z\n"
"                          daptrace.csv.gz; '-' is stdout)\n"
"  -z, --compress          gzip the record (also when FILE ends in .gz); the\n"
"                          reports read it as is\n", f);
	session_attr_help(f, "aggregation interval, one snapshot each");
	session_phys_help(f);
	fputs(
"  -d, --duration DUR      stop after this long\n"
"  -q, --quiet             no progress line\n"
"      --heatmap[=FILE]    render a heatmap when done (default FILE: the record\n"
"                          name with .png)\n"
"      --damo[=FILE]       also write the record in damo's format when done\n"
"                          (zlib-compressed JSON, damo's default; plain JSON if\n"
"                          FILE ends in .json; default FILE: the record name\n"
"                          with .damon.data)\n"
"      --objects           also record the data structures (globals, heap/mmap\n"
"                          allocations via LD_PRELOAD, thread stacks) into\n"
"                          <record>.objects.csv; see docs/objects.md\n"
"      --objects-min SIZE  smallest structure recorded (default 4096; K/M/G)\n"
"  -h, --help              this help\n"
"\n"
"DUR is a number with a unit: us, ms, s or m (\"1.5ms\", \"30s\"); a bare\n"
"number is rejected, as daptrace-workload does.\n", f);
}

static void top_usage(FILE *f)
{
	fprintf(f,
"Usage: %s top [options] [--] command [args...]\n"
"       %s top [options] -p pid[,pid...] [-i]\n"
"       %s top [options] --cgroup PATH\n"
"\n"
"Monitor like 'record' and show the hottest regions of the newest window,\n"
"refreshed in place (like perf top), until the targets exit, --duration or\n"
"Ctrl-C.  The table is report hot's.  Takes record's -p, -i, --no-inherit,\n"
"--cgroup, -s, -a, -u, -r, -t and -d, and:\n"
"\n"
"  -n, --top N             regions to show (default 20)\n"
"      --refresh DUR       at most one table per DUR (default 1s)\n"
"      --stdio             plain text, one table after another (for pipes)\n",
		prog, prog, prog);
}

static int parse_opts(int argc, char **argv, struct record_opts *o, int top)
{
	static const struct option longopts[] = {
		SESSION_LONGOPTS,
		{ "output",	required_argument, NULL, 'o' },
		{ "quiet",	no_argument,	   NULL, 'q' },
		{ "compress",	no_argument,	   NULL, 'z' },
		{ "heatmap",	optional_argument, NULL, 'H' },
		{ "damo",	optional_argument, NULL, 'D' },
		{ "top",	required_argument, NULL, 'n' },
		{ "refresh",	required_argument, NULL, 'R' },
		{ "stdio",	no_argument,	   NULL, 'S' },
		{ "objects",	no_argument,	   NULL, 'O' },
		{ "objects-min", required_argument, NULL, 'M' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret;

	memset(o, 0, sizeof(*o));
	session_opts_default(&o->so);
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
	while ((c = getopt_long(argc, argv, top ? "+:" SESSION_SHORTOPTS "n:h" :
				"+:o:" SESSION_SHORTOPTS "qzh", longopts, NULL)) != -1) {
		ret = session_opt(CMD, c, optarg, &o->so);
		if (ret >= 0) {
			if (ret)
				return ret;
			continue;
		}

		/* the file flags are record's, the table's are top's */
		if (top != (c == 'n' || c == 'R' || c == 'S') &&
		    strchr("ozqHDOMnRS", c) && c) {
			const struct option *l = longopts;

			while (l->name && l->val != c)
				l++;
			return usage_error(CMD, "--%s does not apply to 'daptrace %s'",
					   l->name, CMD);
		}
		switch (c) {
		case 'n':
			if ((ret = uint_flag(CMD, "--top", optarg, 1, 100000, &o->top_n)))
				return ret;
			break;
		case 'R':
			if (parse_duration_us(optarg, &o->refresh_us))
				return bad_value(CMD, "--refresh", optarg, SESSION_DUR_HELP);
			break;
		case 'S':
			o->stdio = 1;
			break;
		case 'o':
			if (!*optarg)
				return bad_value(CMD, "--output", optarg, "empty file name");
			o->output = optarg;
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
			if (optarg && !plot_name_ok(optarg))
				return bad_value(CMD, "--heatmap", optarg,
						 "the file name must end in .png or .svg");
			break;
		case 'D':
			if (optarg && !*optarg)
				return bad_value(CMD, "--damo", optarg, "empty file name");
			o->damo = optarg ? optarg : "";
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
		default:
			return opt_help_or_error(CMD, argv, c, top ? top_usage : usage);
		}
	}
	if (top)
		o->quiet = 1;	/* the table is the progress */
	if (!o->output)
		o->output = o->compress ? "daptrace.csv.gz" : "daptrace.csv";
	if (recout_gz_name(o->output))
		o->compress = 1;
	ret = session_opts_finish(CMD, &o->so, argc, argv, "monitor");
	if (ret)
		return ret;
	if (o->objects_min && !strcmp(o->output, "-"))
		return usage_error(CMD, "--objects needs --output to be a file");
	/* the data structures of one process: the command or the first -p */
	if (o->objects_min && o->so.cgroup)
		return usage_error(CMD, "--objects traces a command or --pid, not --cgroup");
	return EXIT_OK;
}

static struct rec_tgt *tgt_of(void *ctx, pid_t pid)
{
	const struct recorder *r = ctx;
	struct follow_proc *p = follow_find(&r->s.f, pid);

	return p ? p->data : NULL;
}

/* The labels stay in the maps cache until the next re-read. */
static const char *label_of(void *ctx, const struct daptrace_region *reg)
{
	const struct recorder *r = ctx;

	return rec_label(&r->labels, &r->snap, reg);
}

/* Label the snapshot's regions (the maps of its targets read first if due). */
static void label_regions(struct recorder *r, const struct daptrace_snapshot *s,
			  int64_t now)
{
	int64_t every = MAPS_REFRESH_NS *
			(r->s.f.nr_targets > FOOTPRINTS_PER_WINDOW ?
			 r->s.f.nr_targets / FOOTPRINTS_PER_WINDOW : 1);

	rec_labels_refresh(&r->labels, s, now, every, MAPS_RETRY_NS, tgt_of, r);
}

/* The targets whose footprints this window reads: all, or the next in turn. */
static void footprint_turn(struct recorder *r)
{
	const struct follow *f = &r->s.f;
	size_t n = 0;

	r->fp_pids.n = 0;
	if (r->fp_next >= f->n)
		r->fp_next = 0;
	for (size_t k = 0; k < f->n && n < FOOTPRINTS_PER_WINDOW; k++) {
		const struct follow_proc *p = f->p[(r->fp_next + k) % f->n];

		if (p->state == FP_TARGET && !pid_vec_push(&r->fp_pids, p->pid))
			n++;
		if (n == FOOTPRINTS_PER_WINDOW)
			r->fp_next = (r->fp_next + k + 1) % f->n;
	}
}

/*
 * The maps read since the last window went into the record: each target's
 * (or one's that left while the window was made) as its #maps rows.
 * Short of memory, a target's goes with a later window.
 */
static void maps_rows(struct recorder *r, struct rec_snapshot *rs)
{
	const struct follow *f = &r->s.f;

	maps_rows_reset(&r->maps);
	for (size_t k = 0; k < f->n; k++) {
		const struct follow_proc *p = f->p[k];
		struct rec_tgt *t = p->data;

		if (t && (p->state == FP_TARGET || p->state == FP_LEFT))
			maps_rows_add(&r->maps, &t->maps, rec_rel_ns(t->maps_ns, r->s.t0),
				      &t->written);
	}
	maps_rows_put(&r->maps, rs);
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
	int64_t now = session_now_ns();

	if (!rs->nr_regions || now - r->shown_ns < (int64_t)r->o->refresh_us * 1000)
		return 0;
	r->shown_ns = now;
	if (!r->o->stdio)
		fputs("\033[H\033[J", stdout);
	if (r->acc) {
		struct acc_estimate e;
		char line[256];

		acc_pool_estimate(r->acc, &e);
		acc_format(&e, line, sizeof(line));
		printf("%s\n", line);
		acc_warn(stdout, "", &e, ACC_DEF_WARN_RECALL);
	}
	printf("daptrace top: %d target%s", r->s.f.nr_targets, r->s.f.nr_targets == 1 ? "" : "s");
	if (r->s.f.st.joined || r->s.f.st.exited)
		printf(" (%" PRIu64 " joined, %" PRIu64 " left)", r->s.f.st.joined,
		       r->s.f.st.exited + r->s.f.st.moved_out);
	printf(", %.1f s, window %" PRIu64 ", %u regions, %" PRIu64 " missed%s\n",
	       (double)rs->end_ns / 1e9, rs->seq, rs->nr_regions,
	       daptrace_reader_missed(r->s.d), r->o->stdio ? "" : "  (Ctrl-C to quit)");
	report_hot_snapshot(&ro, rs, &info, stdout);
	if (r->o->stdio)
		putchar('\n');
	fflush(stdout);
	return 0;
}

static int write_snapshot(struct recorder *r)
{
	const struct daptrace_snapshot *s = &r->snap;
	int64_t now = session_now_ns();
	struct rec_snapshot rs;
	int err;

	label_regions(r, s, now);
	err = rec_rows_fill(&r->rows, &rs, s, r->s.t0, label_of, r);
	if (err)
		return err;
	/* as the window is written: a drained backlog shares one reading */
	if (!r->o->top) {
		footprint_turn(r);
		rs.nr_footprints = footprints_read(&r->fp, r->fp_pids.v, (int)r->fp_pids.n,
						   rec_rel_ns(now, r->s.t0));
		rs.footprints = r->fp.fp;
		maps_rows(r, &rs);
	}
	if (r->o->top && rs.has_probes) {
		if (!r->acc) {
			r->acc = malloc(sizeof(*r->acc));
			if (!r->acc)
				return -ENOMEM;
			acc_pool_init(r->acc, ACC_DEF_POOL_NS, ACC_DEF_MIN_ACCESSED);
		}
		acc_pool_add(r->acc, rs.end_ns, &rs.probes);
	}
	r->nr_regions_last = s->nr_regions;
	r->nr_written++;
	if (s->flags & DAPTRACE_SNAPSHOT_LAST)
		r->seen_last = 1;
	return r->o->top ? top_show(r, &rs) : rec_write_snapshot(r->out, &rs);
}

/*
 * Read and write the snapshots published so far, at most @max of them.
 * Those the worker overwrote meanwhile are counted as missed by the reader,
 * and those left are read by the next call.
 */
static int drain(struct recorder *r, unsigned int max)
{
	unsigned int n = 0;
	int ret = 0;

	/* a #target or #exit row that could not be written */
	if (r->write_err)
		return fail(CMD, "writing %s: %s", r->o->output, strerror(-r->write_err));
	while (n++ < max && (ret = daptrace_read_next(r->s.d, &r->snap)) > 0) {
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
	double secs = (double)(session_now_ns() - r->s.t0) / 1e9;
	char cpu[64] = "";

	if (r->o->quiet || !isatty(STDERR_FILENO))
		return;
	if (final) {
		if (r->progress_shown)
			fputs("\r\033[K", stderr);
		return;
	}
	if (daptrace_get_counters(r->s.d, &c) == 0)
		snprintf(cpu, sizeof(cpu), "  worker CPU %.3f s (%.1f%%)",
			 (double)c.worker_cpu_us / 1e6,
			 secs > 0 ? (double)c.worker_cpu_us / 1e4 / secs : 0.0);
	fprintf(stderr, "\r\033[K%.1f s  snapshots %" PRIu64 "  targets %d  regions %" PRIu64
		"  missed %" PRIu64 "%s", secs, r->nr_written, r->s.f.nr_targets, c.nr_regions,
		daptrace_reader_missed(r->s.d), cpu);
	fflush(stderr);
	r->progress_shown = 1;
}

static int run_loop(struct recorder *r)
{
	int64_t last_check = 0, last_progress = 0;
	int timeout_ms = session_wait_ms(&r->o->so.attrs);
	int err;

	if (r->o->top && !r->o->stdio)
		fputs("\033[H\033[2J", stdout);	/* top: a clean screen to draw on */
	for (;;) {
		int64_t now;

		err = session_wait_or_fail(&r->s, timeout_ms, CMD);
		if (err)
			return err;
		err = drain(r, SESSION_DRAIN_BATCH);
		if (err)
			return err;
		now = session_now_ns();
		if (session_check_due(&last_check, now)) {
			r->reason = session_should_stop(&r->s, r->o->so.duration_us, now);
			if (r->reason)
				return 0;
			if (r->o->objects_min)
				objrec_poll(&r->obj, r->s.root, r->s.t0);
		}
		if (now - last_progress >= PROGRESS_NS) {
			progress(r, 0);
			last_progress = now;
		}
	}
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
	struct rec_kv kv[24];
	char *cmd = r->o->so.cmd ? join_args(r->o->so.cmd) : NULL;
	int n = 0, err;

	rec_kv_add_run(kv, &n, &r->o->so.attrs, r->s.t0);
	if (cmd)
		rec_kv_add(kv, &n, "command", "%s", cmd);
	free(cmd);
	rec_kv_add(kv, &n, "follow", "%s", follow_mode_name(&r->s.f));
	if (r->s.f.mode == FOLLOW_CGROUP)
		rec_kv_add(kv, &n, "cgroup", "%s", r->s.f.cg.path);
	/* a target's footprint holds until its next one or its #exit */
	rec_kv_add(kv, &n, "footprints", "latest");
	err = rec_write_follow_header(r->out, kv, n, &r->s.f, r->s.t0);
	rec_kv_free(kv, n);
	return err;
}

static int write_trailer(struct recorder *r)
{
	struct daptrace_counters c = { 0 };
	struct rec_kv kv[16 + SESSION_FOLLOW_KV];
	int n = 0, err;

	rec_kv_add(kv, &n, "reason", "%s", r->reason ? r->reason : "error");
	rec_kv_add(kv, &n, "duration_ns", "%" PRId64, session_now_ns() - r->s.t0);
	rec_kv_add(kv, &n, "snapshots", "%" PRIu64, r->nr_written);
	rec_kv_add(kv, &n, "missed", "%" PRIu64, daptrace_reader_missed(r->s.d));
	if (daptrace_get_counters(r->s.d, &c) == 0) {
		rec_kv_add(kv, &n, "kernel_nr_samples", "%" PRIu64, c.nr_samples);
		rec_kv_add(kv, &n, "kernel_nr_snapshots", "%" PRIu64, c.nr_snapshots);
		rec_kv_add(kv, &n, "kernel_nr_snapshots_missed", "%" PRIu64,
			 c.nr_snapshots_missed);
		rec_kv_add(kv, &n, "worker_cpu_us", "%" PRIu64, c.worker_cpu_us);
	}
	if (r->s.w.pid && r->s.w.exited) {
		if (WIFEXITED(r->s.w.status))
			rec_kv_add(kv, &n, "command_exit", "%d", WEXITSTATUS(r->s.w.status));
		else if (WIFSIGNALED(r->s.w.status))
			rec_kv_add(kv, &n, "command_exit", "signal %d", WTERMSIG(r->s.w.status));
	}
	session_follow_kv(&r->s, kv, &n);
	err = rec_write_trailer(r->out, kv, n);
	rec_kv_free(kv, n);
	return err;
}

/* A target joined (or exec'ed): its labels, and its #target row mid-stream. */
static void target_joined(void *ctx, struct follow_proc *p, int exec)
{
	struct recorder *r = ctx;
	struct rec_tgt *t = p->data;
	int err;

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return;		/* its regions are labelled "[unknown target]" */
		t->maps.pid = p->pid;
		p->data = t;
	}
	/* joined, or a new image (@exec): the labels of now */
	(void)exec;
	t->maps.gone = 0;
	rec_tgt_read(t, session_now_ns());
	if (!r->out || !r->header_written || r->write_err)
		return;
	err = rec_write_follow_target(r->out, p, r->s.t0);
	if (err)
		r->write_err = err;
}

static void target_left(void *ctx, struct follow_proc *p)
{
	struct recorder *r = ctx;
	int err;

	if (!r->out || !r->header_written || r->write_err)
		return;
	err = rec_write_exit(r->out, p->pid, rec_rel_ns(p->left_ns, r->s.t0), !p->exited);
	if (err)
		r->write_err = err;
}

static void target_forget(void *ctx, struct follow_proc *p)
{
	struct rec_tgt *t = p->data;

	(void)ctx;
	if (!t)
		return;
	rec_tgt_free(t);
	free(t);
	p->data = NULL;
}

static int setup(struct recorder *r)
{
	const struct record_opts *o = r->o;
	int err;

	r->s.cmd = CMD;
	err = session_open(&r->s, &o->so, "another recorder?");
	if (err)
		return err;

	err = o->top ? 0 : recout_create(CMD, "--output", o->output, o->compress, o->quiet,
					 &r->old_record, &r->out);
	if (err)
		return err;

	if (o->objects_min) {
		err = objrec_prepare(&r->obj, o->output, o->objects_min, !!o->so.cmd);
		if (err)
			return err;
	}
	err = session_launch(&r->s, &o->so);
	if (o->so.cmd)
		objrec_forked(&r->obj);
	if (err)
		return err;
	r->s.hooks = (struct session_hooks){
		.joined = target_joined, .left = target_left, .forget = target_forget,
		.user = r,
	};
	err = session_add_targets(&r->s, &o->so);
	if (err)
		return err;
	err = session_start(&r->s);
	if (err)
		return err;
	if (r->out && write_header(r))
		return fail(CMD, "writing %s: %s", o->output, strerror(errno));
	r->header_written = 1;
	err = session_release(&r->s);
	if (err)
		r->header_written = 0;	/* nothing ran: no record, the old one back */
	return err;
}

/* Stop, drain what the worker published last, untarget, close the file. */
static int teardown(struct recorder *r, int ret)
{
	int on = session_stop(&r->s, &ret);
	if (r->out && r->header_written && !r->write_err) {
		/* the worker's last window may be published just after "off" */
		int64_t wait_ns = 2 * (int64_t)r->o->so.attrs.aggr_us * 1000;
		unsigned int left = daptrace_reader_slots(r->s.d);
		int64_t deadline;

		if (wait_ns < 100 * NS_PER_MS)
			wait_ns = 100 * NS_PER_MS;
		if (wait_ns > 2000 * NS_PER_MS)
			wait_ns = 2000 * NS_PER_MS;
		/*
		 * Off: what is left is at most the ring's slots (the older
		 * ones count as missed) and the last window.
		 */
		left = (left > SESSION_DRAIN_BATCH ? left : SESSION_DRAIN_BATCH) + 1;
		deadline = session_now_ns() + wait_ns;
		do {
			if (drain(r, left)) {
				ret = ret ? ret : EXIT_FAIL;
				break;
			}
			if (r->seen_last || on <= 0)
				break;
		} while (session_now_ns() < deadline && daptrace_wait(r->s.d, 20) >= 0);
	}
	progress(r, 1);
	session_end(&r->s, on);
	if (r->o->objects_min && r->header_written) {
		int err = objrec_finish(&r->obj, r->s.root, r->s.t0);

		ret = ret ? ret : err;
	} else if (r->obj.log_path) {
		unlink(r->obj.log_path);	/* nothing ran: no tracer's log either */
	}
	objrec_free(&r->obj);
	if (r->out && r->header_written && !r->write_err && write_trailer(r))
		ret = fail(CMD, "writing %s: %s", r->o->output, strerror(errno));
	if (r->out && r->out != stdout) {
		if (fclose(r->out))
			ret = fail(CMD, "closing %s: %s", r->o->output, strerror(errno));
		if (!r->header_written)	/* nothing recorded: no empty file */
			recout_discard(CMD, r->o->output, r->old_record);
	}
	free(r->old_record);
	r->old_record = NULL;
	r->out = NULL;
	if (r->header_written && !ret && !r->o->top) {
		char sum[512];

		fprintf(stderr, "%s %s: %" PRIu64 " snapshots (%" PRIu64
			" missed) in %.1f s written to %s; stopped: %s\n", prog, CMD,
			r->nr_written, daptrace_reader_missed(r->s.d),
			(double)(session_now_ns() - r->s.t0) / 1e9, r->o->output, r->reason);
		if (session_follow_summary(&r->s, sum, sizeof(sum)))
			fprintf(stderr, "%s %s: %" PRIu64 " targets%s\n", prog, CMD,
				r->s.f.st.targets, sum);
	}
	pid_vec_free(&r->fp_pids);
	daptrace_snapshot_free(&r->snap);
	rec_rows_free(&r->rows);
	rec_labels_free(&r->labels);
	maps_rows_free(&r->maps);
	free(r->acc);
	footprints_free(&r->fp);
	session_close(&r->s);
	return ret;
}

/* The record's name with @ext for .csv(.gz): "app.csv.gz" -> "app.png" */
static char *derived_name(const char *output, const char *ext)
{
	size_t len = strlen(output);
	char *s = malloc(len + strlen(ext) + 1);

	if (!s)
		return NULL;
	strcpy(s, output);
	if (len > 3 && !strcmp(s + len - 3, ".gz"))
		s[len -= 3] = '\0';
	if (len > 4 && !strcmp(s + len - 4, ".csv"))
		s[len - 4] = '\0';
	strcat(s, ext);
	return s;
}

static int run(int argc, char **argv, int top)
{
	struct record_opts o;
	struct recorder r = { .o = &o };
	int ret;

	ret = parse_opts(argc, argv, &o, top);
	if (ret)
		return ret;
	if (o.heatmap && !strcmp(o.output, "-"))
		return usage_error(CMD, "--heatmap needs --output to be a file");
	if (o.damo && !strcmp(o.output, "-"))
		return usage_error(CMD, "--damo needs --output to be a file");
	session_catch_signals();

	ret = setup(&r);
	if (!ret)
		ret = run_loop(&r);
	ret = teardown(&r, ret);
	if (!ret && o.heatmap) {
		char *name = *o.heatmap ? strdup(o.heatmap) : derived_name(o.output, ".png");

		ret = name ? report_heatmap_plot(o.output, name) : EXIT_FAIL;
		free(name);
	}
	if (!ret && o.damo) {
		char *name = *o.damo ? strdup(o.damo) : derived_name(o.output, ".damon.data");

		ret = name ? report_damo_write(o.output, name) : EXIT_FAIL;
		if (!ret)
			fprintf(stderr, "%s %s: wrote %s (damo's format)\n", prog, CMD, name);
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
