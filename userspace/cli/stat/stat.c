// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace stat: the whole machine's memory at a glance, cheaply enough to
 * leave on.  Every user process is a target (or every process of a
 * cgroup), under one region budget, so the monitor's cost is set by the
 * budget and the intervals, not by the number of processes; idle ones
 * cost nothing.  Every --interval (or once after --duration) it prints,
 * for the whole and per cgroup, the resident and working-set memory, the
 * estimated access bandwidth and DAMON_STAT's idle-time percentiles
 * (stat_model.h), as text or JSON lines; with --savings, the savings curve
 * so far (stat_savings.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/accuracy.h"
#include "cli.h"
#include "common/json_out.h"
#include "session/session.h"
#include "stat_model.h"
#include "stat_savings.h"
#include "common/units.h"

#define CMD		"stat"
#define MAX_PCT		16

/*
 * Longer intervals than record's (5 ms / 100 ms / 1 s): an always-on view
 * needs idle times in seconds, not a 100 ms picture, and 4 times fewer
 * checks per second for the same region budget (BENCHMARKS.md, stat).
 */
#define STAT_SAMPLE_US	20000
#define STAT_AGGR_US	1000000
#define STAT_UPDATE_US	5000000

struct stat_opts {
	struct session_opts so;
	uint64_t interval_us;		/* 0: once, at the end */
	int interval_set;
	int json;
	unsigned int depth;		/* fold cgroups to this depth, 0: as they are */
	unsigned int top;		/* cgroup rows shown (text) */
	unsigned int pct[MAX_PCT];	/* percentiles shown (text) */
	int nr_pct;
	int savings;			/* --savings: the curve too */
	uint64_t sav_t_ns[SAV_MAX_THRESHOLDS];
	unsigned int nr_sav_t;
};

struct stat_run {
	const struct stat_opts *o;
	struct session s;
	struct daptrace_snapshot snap;
	uint64_t shown_seq;		/* the last snapshot reported */
	uint64_t cpu_us;		/* worker CPU at the last report */
	int64_t cpu_ns;			/* when it was read */
	const char *reason;
	struct acc_pool acc;		/* the accuracy probes, pooled */
	int has_acc;
	struct stat_savings sav;	/* --savings */
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s stat [options]\n"
"\n"
"Monitor every user process of the machine (or of a cgroup) under one\n"
"region budget and print, for the whole and per cgroup, the resident memory,\n"
"the working set (memory accessed in the last window), the estimated access\n"
"bandwidth and the idle-time percentiles of DAMON_STAT\n"
"(memory_idle_ms_percentiles: a negative idle time is memory accessed for\n"
"that long).  Bytes are resident bytes, as the samples find them.  Prints\n"
"every --interval until Ctrl-C, or once at the end of --duration.\n"
"\n"
"      --cgroup PATH       the processes of this cgroup v2 (and below) only\n"
"      --interval DUR      print every DUR (default 10s; with --duration: once,\n"
"                          at the end, unless given)\n"
"  -d, --duration DUR      stop after this long\n"
"      --json              one JSON object per report, a line each, with all\n"
"                          101 percentiles\n"
"      --depth N           per-cgroup rows at this depth of the cgroup tree\n"
"                          (default: each process's own cgroup)\n"
"  -n, --top N             cgroup rows shown (default 20; JSON: all)\n"
"      --percentiles LIST  shown in text (default 1,25,50,75,99)\n"
"      --savings           also the savings curve: for each idle-time threshold,\n"
"                          the resident memory idle that long, as reclaiming it\n"
"                          would save now and on average since the start, and the\n"
"                          refaults it would have cost (as `daptrace report\n"
"                          savings` on a record), for the whole and per cgroup\n"
"      --thresholds LIST   the curve's idle times, comma separated, each with a\n"
"                          unit (default " STAT_SAV_DEFAULT "); implies --savings\n", prog);
	session_attr_help(f, "aggregation interval: idle times in its steps");
	fputs(
"  -h, --help              this help\n"
"stat's own defaults: --sample 20ms --aggr 1s --update 5s.\n", f);
}

static int parse_pct(const char *arg, struct stat_opts *o)
{
	char buf[256], *save = NULL, *tok;
	int prev = -1;

	if (strlen(arg) >= sizeof(buf))
		goto bad;
	strcpy(buf, arg);
	o->nr_pct = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (parse_u64_dec(tok, &v) || v > 100 || (int)v <= prev || o->nr_pct == MAX_PCT)
			goto bad;
		o->pct[o->nr_pct++] = (unsigned int)v;
		prev = (int)v;
	}
	if (o->nr_pct)
		return 0;
bad:
	return bad_value(CMD, "--percentiles", arg, "expected increasing whole numbers from "
			 "0 to 100, comma separated, at most 16");
}

enum { OPT_INTERVAL = 0x200, OPT_JSON, OPT_DEPTH, OPT_PCT, OPT_SAVINGS, OPT_THRESHOLDS };

static int parse_opts(int argc, char **argv, struct stat_opts *o)
{
	static const struct option longopts[] = {
		SESSION_LONGOPTS,
		{ "interval",	 required_argument, NULL, OPT_INTERVAL },
		{ "json",	 no_argument,	    NULL, OPT_JSON },
		{ "depth",	 required_argument, NULL, OPT_DEPTH },
		{ "top",	 required_argument, NULL, 'n' },
		{ "percentiles", required_argument, NULL, OPT_PCT },
		{ "savings",	 no_argument,	    NULL, OPT_SAVINGS },
		{ "thresholds",	 required_argument, NULL, OPT_THRESHOLDS },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct daptrace_attrs *a = &o->so.attrs;
	int c, ret;

	memset(o, 0, sizeof(*o));
	session_opts_default(&o->so);
	a->sample_us = STAT_SAMPLE_US;
	a->aggr_us = STAT_AGGR_US;
	a->update_us = STAT_UPDATE_US;
	/* the machine's intervals tune themselves, as DAMON_STAT's do */
	daptrace_intervals_goal_default(&o->so.goal);
	o->interval_us = 10000000;
	o->top = 20;
	o->nr_pct = 5;
	memcpy(o->pct, (unsigned int[]){ 1, 25, 50, 75, 99 }, 5 * sizeof(unsigned int));
	if (sav_parse_thresholds(STAT_SAV_DEFAULT, o->sav_t_ns, &o->nr_sav_t))
		return fail(CMD, "the default thresholds do not parse");
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":" SESSION_SHORTOPTS "n:h", longopts, NULL)) != -1) {
		/* the targets are the machine's, or a cgroup's */
		if (c == 'p' || c == 'i' || c == SESSION_OPT_NO_INHERIT ||
		    c == SESSION_OPT_PHYS_ADDR) {
			const struct option *l = longopts;

			while (l->name && l->val != c)
				l++;
			return usage_error(CMD, "--%s does not apply to 'daptrace stat' (it "
					   "follows every process, or --cgroup's, and "
					   "records nothing)", l->name);
		}
		ret = session_opt(CMD, c, optarg, &o->so);
		if (ret >= 0) {
			if (ret)
				return ret;
			continue;
		}
		switch (c) {
		case OPT_INTERVAL:
			if (parse_duration_us(optarg, &o->interval_us) || o->interval_us < 100000)
				return bad_value(CMD, "--interval", optarg, "expected a duration "
						 "with a unit of at least 100ms, e.g. 10s");
			o->interval_set = 1;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_DEPTH:
			if ((ret = uint_flag(CMD, "--depth", optarg, 1, 64, &o->depth)))
				return ret;
			break;
		case 'n':
			if ((ret = uint_flag(CMD, "--top", optarg, 0, 100000, &o->top)))
				return ret;
			break;
		case OPT_PCT:
			ret = parse_pct(optarg, o);
			if (ret)
				return ret;
			break;
		case OPT_THRESHOLDS:
			if (sav_parse_thresholds(optarg, o->sav_t_ns, &o->nr_sav_t))
				return bad_value(CMD, "--thresholds", optarg,
						 SAV_THRESHOLDS_EXPECTED);
			o->savings = 1;	/* the thresholds are the curve's */
			break;
		case OPT_SAVINGS:
			o->savings = 1;
			break;
		default:
			return opt_help_or_error(CMD, argv, c, usage);
		}
	}
	if (optind < argc)
		return usage_error(CMD, "unexpected argument '%s' (stat runs no command)",
				   argv[optind]);
	if (o->so.duration_us && !o->interval_set)
		o->interval_us = 0;
	o->so.machine = !o->so.cgroup;
	return session_opts_finish(CMD, &o->so, argc, argv, "monitor");
}

/* A target's cgroup as it is now (processes move), else as it joined. */
static const char *cgroup_of(void *ctx, pid_t pid)
{
	struct stat_run *r = ctx;
	struct follow_proc *p = follow_find(&r->s.f, pid);
	char *now;

	if (!p)
		return NULL;
	now = proc_cgroup(r->s.f.proc, pid);
	if (now) {
		free(p->cgroup);
		p->cgroup = now;
	}
	return p->cgroup;
}

static void print_row(const struct stat_opts *o, const char *name, const struct stat_sum *s)
{
	char a[32], b[32], c[32], d[32];

	printf("%-32s %6" PRIu64 " %11s %11s %11s %11s", name, s->nr_procs,
	       fmt_bytes(s->resident, a, sizeof(a)), fmt_bytes(s->wss, b, sizeof(b)),
	       fmt_bytes(s->bandwidth, c, sizeof(c)), fmt_bytes(s->unobserved, d, sizeof(d)));
	for (int i = 0; i < o->nr_pct; i++)
		printf(" %9" PRId64, s->idle_ms[o->pct[i]]);
	putchar('\n');
}

static struct json_object *sum_json(const struct stat_sum *s)
{
	struct json_object *j = json_object_new_object(), *p = json_object_new_array();

	if (s->key)
		json_object_object_add(j, "cgroup", json_object_new_string(s->key));
	json_object_object_add(j, "processes", json_object_new_uint64(s->nr_procs));
	json_object_object_add(j, "resident_bytes", json_object_new_uint64(s->resident));
	json_object_object_add(j, "wss_bytes", json_object_new_uint64(s->wss));
	json_object_object_add(j, "estimated_memory_bandwidth",
			       json_object_new_uint64(s->bandwidth));
	json_object_object_add(j, "not_observable_bytes", json_object_new_uint64(s->unobserved));
	for (int i = 0; i < STAT_PERCENTILES; i++)
		json_object_array_add(p, json_object_new_int64(s->idle_ms[i]));
	json_object_object_add(j, "memory_idle_ms_percentiles", p);
	return j;
}

/* The worker's CPU share since the last report, in percent (< 0: unknown). */
static double worker_cpu(struct stat_run *r, int64_t now)
{
	struct daptrace_counters c;
	double pct = -1;

	if (daptrace_get_counters(r->s.d, &c))
		return -1;
	if (r->cpu_ns && now > r->cpu_ns && c.worker_cpu_us >= r->cpu_us)
		pct = (double)(c.worker_cpu_us - r->cpu_us) * 1e5 / (double)(now - r->cpu_ns);
	r->cpu_us = c.worker_cpu_us;
	r->cpu_ns = now;
	return pct;
}

static int report(struct stat_run *r, int64_t now)
{
	const struct stat_opts *o = r->o;
	const struct follow_stats *st = &r->s.f.st;
	const struct daptrace_snapshot *s = &r->snap;
	double cpu = worker_cpu(r, now);
	struct stat_model m;
	struct acc_estimate acc;
	char when[32];
	time_t t = time(NULL);

	if (!s->seq || s->seq == r->shown_seq)
		return 0;	/* no new window: nothing new to say */
	r->shown_seq = s->seq;
	if (stat_model_compute(&m, s, cgroup_of, r, o->depth))
		return fail(CMD, "out of memory");
	acc_pool_estimate(&r->acc, &acc);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	if (o->json) {
		struct json_object *j = sum_json(&m.all), *cg = json_object_new_array();

		json_object_object_add(j, "time", json_object_new_string(when));
		json_object_object_add(j, "seconds", json_seconds((double)(now - r->s.t0) / 1e9));
		json_object_object_add(j, "seq", json_object_new_uint64(s->seq));
		/* CLOCK_MONOTONIC, to line the window up with other clocks */
		json_object_object_add(j, "window_end_ns", json_object_new_uint64(s->end_ns));
		json_object_object_add(j, "aggr_interval_us", json_object_new_uint64(s->aggr_us));
		json_object_object_add(j, "sample_interval_us",
				       json_object_new_uint64(s->sample_us));
		json_object_object_add(j, "nr_regions", json_object_new_uint64(s->nr_regions));
		json_object_object_add(j, "resident_weighted",
				       json_object_new_boolean(m.resident_weighted));
		json_object_object_add(j, "targets", json_object_new_int(r->s.f.nr_targets));
		json_object_object_add(j, "joined", json_object_new_uint64(st->joined));
		json_object_object_add(j, "exited", json_object_new_uint64(st->exited));
		json_object_object_add(j, "not_added", json_object_new_uint64(
				       st->gone + st->denied + st->invalid + st->no_room +
				       st->refused));
		json_object_object_add(j, "missed", json_object_new_uint64(
				       daptrace_reader_missed(r->s.d)));
		json_object_object_add(j, "worker_cpu_percent", cpu < 0 ? NULL :
				       json_percent(cpu));
		json_object_object_add(j, "accuracy", r->has_acc ? json_accuracy(&acc) : NULL);
		for (size_t i = 0; i < m.nr_cg; i++)
			json_object_array_add(cg, sum_json(&m.cg[i]));
		json_object_object_add(j, "cgroups", cg);
		if (o->savings)
			json_object_object_add(j, "savings", stat_savings_json(&r->sav));
		json_out(stdout, j, 0);
	} else {
		printf("# %s  %.0f s  %d targets (%" PRIu64 " joined, %" PRIu64 " exited)  "
		       "window %.3g s, %u regions  missed %" PRIu64, when,
		       (double)(now - r->s.t0) / 1e9, r->s.f.nr_targets, st->joined,
		       st->exited, (double)s->aggr_us / 1e6, s->nr_regions,
		       daptrace_reader_missed(r->s.d));
		if (cpu >= 0)
			printf("  worker CPU %.2f %%", cpu);
		if (st->no_room)
			printf("  %" PRIu64 " over the target limit", st->no_room);
		putchar('\n');
		if (r->has_acc) {
			char line[256];

			acc_format(&acc, line, sizeof(line));
			printf("# %s\n", line);
			acc_warn(stdout, "# ", &acc, ACC_DEF_WARN_RECALL);
		}
		printf("%-32s %6s %11s %11s %11s %11s", "cgroup", "procs",
		       m.resident_weighted ? "resident" : "virtual", "wss", "bandwidth/s",
		       "not_obs");
		for (int i = 0; i < o->nr_pct; i++) {
			char h[16];

			snprintf(h, sizeof(h), "idle_p%u", o->pct[i]);
			printf(" %9s", h);
		}
		putchar('\n');
		print_row(o, "all", &m.all);
		for (size_t i = 0; i < m.nr_cg && i < o->top; i++)
			print_row(o, m.cg[i].key, &m.cg[i]);
		if (m.nr_cg > o->top)
			printf("# ... %zu more cgroups (--top)\n", m.nr_cg - o->top);
		if (o->savings)
			stat_savings_text(&r->sav, o->top, stdout);
		putchar('\n');
	}
	fflush(stdout);
	stat_model_free(&m);
	return ferror(stdout) ? fail(CMD, "writing the report: %s", strerror(errno)) : 0;
}

/*
 * Read the snapshots published so far, at most SESSION_DRAIN_BATCH of them
 * (the rest are read by the next call; those the worker overwrote are
 * counted as missed by the reader).  The newest read is what a report
 * shows; each one's accuracy probes are pooled, and each one goes through
 * the savings curve.
 */
static int drain(struct stat_run *r)
{
	unsigned int n = 0;
	int ret = 0;

	while (n++ < SESSION_DRAIN_BATCH && (ret = daptrace_read_next(r->s.d, &r->snap)) > 0) {
		const struct daptrace_snapshot *s = &r->snap;
		const struct rec_probes c = {
			.pages = s->probe_pages, .tp = s->probe_tp, .fn = s->probe_fn,
			.fp = s->probe_fp, .tn = s->probe_tn, .unobserved = s->probe_unobserved,
		};

		if (r->o->savings && stat_savings_window(&r->sav, s))
			return fail(CMD, "out of memory");
		if (!s->probes || !s->probe_pages)
			continue;
		if (!r->has_acc)
			acc_pool_init(&r->acc, ACC_DEF_POOL_NS, ACC_DEF_MIN_ACCESSED);
		r->has_acc = 1;
		acc_pool_add(&r->acc, s->end_ns, &c);
	}
	return ret < 0 ? fail(CMD, "reading snapshots: %s", daptrace_last_error()) : 0;
}

static int run_loop(struct stat_run *r)
{
	const struct stat_opts *o = r->o;
	int64_t last_check = 0, next_report = r->s.t0 + (int64_t)o->interval_us * 1000;
	int err;

	worker_cpu(r, r->s.t0);
	for (;;) {
		int64_t now;

		err = session_wait_or_fail(&r->s, 250, CMD);
		if (err)
			return err;
		err = drain(r);
		if (err)
			return err;
		now = session_now_ns();
		if (o->interval_us &&
		    session_due_every(&next_report, now, (int64_t)o->interval_us * 1000)) {
			err = report(r, now);
			if (err)
				return err;
		}
		if (session_check_due(&last_check, now)) {
			r->reason = session_should_stop(&r->s, o->so.duration_us, now);
			if (r->reason)
				return 0;
		}
	}
}

int cmd_stat(int argc, char **argv)
{
	static struct stat_opts o;
	struct stat_run r = { .o = &o };
	int ret, on;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret;
	session_catch_signals();
	r.s.cmd = CMD;
	ret = session_open(&r.s, &o.so, "another daptrace?");
	if (!ret && o.savings) {
		if (stat_savings_init(&r.sav, o.sav_t_ns, o.nr_sav_t, &r.s, o.depth))
			ret = fail(CMD, "out of memory");
		r.s.hooks = stat_savings_hooks(&r.sav);
	}
	if (!ret)
		ret = session_add_targets(&r.s, &o.so);
	if (!ret)
		ret = session_start(&r.s);
	if (!ret)
		ret = run_loop(&r);
	/*
	 * The last window, at the end of a --duration (or a Ctrl-C): a batch
	 * more, as many as the kernel's ring holds.
	 */
	if (!ret && !drain(&r) && (!o.interval_us || r.snap.seq != r.shown_seq))
		ret = report(&r, session_now_ns());
	on = session_stop(&r.s, &ret);
	session_end(&r.s, on);
	if (o.savings)
		stat_savings_free(&r.sav);
	if (r.reason && !o.json)
		fprintf(stderr, "%s %s: stopped: %s\n", prog, CMD, r.reason);
	daptrace_snapshot_free(&r.snap);
	session_close(&r.s);
	return ret;
}
