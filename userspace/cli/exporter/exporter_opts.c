// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace exporter's options: the command line and --config FILE, whose
 * lines are the long options ("NAME [VALUE]"), read first so that the
 * command line wins.  Every bad value names its flag (and FILE:LINE).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exporter.h"
#include "session/session.h"
#include "common/opts_file.h"
#include "common/units.h"

#define CMD		"exporter"
#define DEFAULT_LISTEN	"127.0.0.1:9798"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s exporter [options] --attach\n"
"       %s exporter [options] -p pid[,pid...]\n"
"       %s exporter [options] [--] command [args...]\n"
"\n"
"Serve the monitor's snapshots as Prometheus metrics (OpenMetrics when the\n"
"scraper asks for it) on http://ADDRESS:PORT/metrics, and/or write them to\n"
"DIR/daptrace.prom for node_exporter's textfile collector.  Every snapshot\n"
"is read; a scrape only copies the newest render.  Runs until Ctrl-C,\n"
"SIGTERM or --duration; a target that exits is counted, and the exporter\n"
"keeps serving.  See docs/exporter.md for the metrics.\n"
"\n"
"      --attach            read the monitor someone else runs (record, policy,\n"
"                          sysfs); never changes it\n",
		prog, prog, prog);
	session_target_help(f, "monitor");
	session_attr_help(f, "aggregation interval, one snapshot each");
	fprintf(f,
"  -d, --duration DUR      stop after this long\n"
"  -l, --listen ADDR:PORT  where to serve (default " DEFAULT_LISTEN "; another\n"
"                          address only when given; PORT 0 picks a free one)\n"
"      --no-http           no HTTP server (with --textfile)\n"
"      --textfile DIR      also write DIR/daptrace.prom atomically\n"
"      --textfile-interval DUR  how often (default 5s)\n"
"  -n, --top N             targets with series of their own, by size; the\n"
"                          rest are summed as target=\"other\" (default 10)\n"
"      --idle-buckets LIST durations for daptrace_idle_bytes (default\n"
"                          1s,10s,1m,10m,60m)\n"
"      --idle-percentiles LIST  percentiles for daptrace_idle_time_seconds\n"
"                          (default 10,25,50,75,90,99)\n"
"      --policy-stats FILE also export this 'daptrace policy --stats-json' file\n"
"  -c, --config FILE       options from FILE, one per line: 'NAME [VALUE]' with\n"
"                          NAME a long option ('#' comments); the command line\n"
"                          wins over it\n"
"  -h, --help              this help\n"
"\n"
"DUR is a number with a unit: us, ms, s or m (\"1.5ms\", \"30s\").\n");
}

enum {
	OPT_ATTACH = 256, OPT_NO_HTTP, OPT_TEXTFILE, OPT_TEXTFILE_INTERVAL,
	OPT_IDLE_BUCKETS, OPT_IDLE_PCT, OPT_POLICY_STATS,
};

static const struct option longopts[] = {
	SESSION_LONGOPTS,
	{ "attach",		no_argument,	   NULL, OPT_ATTACH },
	{ "listen",		required_argument, NULL, 'l' },
	{ "no-http",		no_argument,	   NULL, OPT_NO_HTTP },
	{ "textfile",		required_argument, NULL, OPT_TEXTFILE },
	{ "textfile-interval",	required_argument, NULL, OPT_TEXTFILE_INTERVAL },
	{ "top",		required_argument, NULL, 'n' },
	{ "idle-buckets",	required_argument, NULL, OPT_IDLE_BUCKETS },
	{ "idle-percentiles",	required_argument, NULL, OPT_IDLE_PCT },
	{ "policy-stats",	required_argument, NULL, OPT_POLICY_STATS },
	{ "config",		required_argument, NULL, 'c' },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define SHORTOPTS "+:" SESSION_SHORTOPTS "l:n:c:h"

/* A duration > 0, in µs. */
static int one_duration(const char *s, uint64_t *v)
{
	return parse_duration_us(s, v) || !*v ? -1 : 0;
}

/* A whole percent, 0-100. */
static int one_percent(const char *s, uint64_t *v)
{
	return parse_u64_dec(s, v) || *v > 100 ? -1 : 0;
}

/*
 * "A,B,C" into @out: at most @max strictly increasing values, each read by
 * @one, nothing empty.  The count, or -1.
 */
static int parse_increasing(const char *arg, uint64_t *out, int max,
			    int (*one)(const char *, uint64_t *))
{
	char buf[512], *save = NULL, *tok;
	size_t len = strlen(arg);
	int n = 0;

	if (!len || len >= sizeof(buf) || *arg == ',' || arg[len - 1] == ',' ||
	    strstr(arg, ",,"))
		return -1;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max || one(tok, &out[n]) || (n && out[n] <= out[n - 1]))
			return -1;
		n++;
	}
	return n;
}

static int parse_buckets(const char *arg, struct exp_config *c)
{
	int n = parse_increasing(arg, c->idle_us, EXP_MAX_BUCKETS, one_duration);

	if (n < 0)
		return -1;
	c->nr_idle = n;
	return 0;
}

static int parse_pcts(const char *arg, struct exp_config *c)
{
	uint64_t v[EXP_MAX_PERCENTILES];
	int n = parse_increasing(arg, v, EXP_MAX_PERCENTILES, one_percent);

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		c->pct[i] = (unsigned int)v[i];
	c->nr_pct = n;
	return 0;
}

/* One option, from the command line or a config line; 0 or an exit code. */
static int apply_opt(struct exp_opts *o, int c, const char *arg)
{
	int ret;

	ret = session_opt(CMD, c, arg, &o->so);
	if (ret >= 0) {
		if ((c < 256 && strchr("saurt", c)) || c == SESSION_OPT_AUTO ||
		    c == SESSION_OPT_NO_AUTO)
			o->attrs_given = 1;
		return ret;
	}
	switch (c) {
	case OPT_ATTACH:
		o->attach = 1;
		return 0;
	case 'l':
		if (!*arg)
			return bad_value(CMD, "--listen", arg, "empty address");
		o->listen = arg;
		return 0;
	case OPT_NO_HTTP:
		o->no_http = 1;
		return 0;
	case OPT_TEXTFILE:
		o->textfile = arg;
		return 0;
	case OPT_TEXTFILE_INTERVAL:
		if (parse_duration_us(arg, &o->textfile_us) || o->textfile_us < 100000)
			return bad_value(CMD, "--textfile-interval", arg,
					 "expected a duration of at least 100ms, e.g. 5s");
		return 0;
	case 'n':
		return uint_flag(CMD, "--top", arg, 1, 10000, &o->cfg.top_n);
	case OPT_IDLE_BUCKETS:
		if (parse_buckets(arg, &o->cfg))
			return bad_value(CMD, "--idle-buckets", arg,
					 "expected up to 16 increasing durations, e.g. 1s,10s,1m");
		return 0;
	case OPT_IDLE_PCT:
		if (parse_pcts(arg, &o->cfg))
			return bad_value(CMD, "--idle-percentiles", arg,
					 "expected up to 16 increasing whole numbers 0-100, "
					 "e.g. 50,90,99");
		return 0;
	case OPT_POLICY_STATS:
		if (!*arg)
			return bad_value(CMD, "--policy-stats", arg, "empty file name");
		o->policy_stats = arg;
		return 0;
	}
	return -1;
}

/* A config value: the options point at it until exp_opts_free(). */
static char *keep_value(struct exp_opts *o, const char *v)
{
	char **n = realloc(o->values, (o->nr_values + 1) * sizeof(*n));

	if (!n)
		return NULL;
	o->values = n;
	o->values[o->nr_values] = strdup(v);
	return o->values[o->nr_values] ? o->values[o->nr_values++] : NULL;
}

void exp_opts_free(struct exp_opts *o)
{
	for (size_t i = 0; i < o->nr_values; i++)
		free(o->values[i]);
	free(o->values);
	o->values = NULL;
	o->nr_values = 0;
}

/* One option of --config FILE (common/opts_file.h): kept, then applied. */
static int apply_file_opt(void *ctx, const struct option *opt, char *value,
			  const char *path, unsigned int lineno)
{
	struct exp_opts *o = ctx;
	char *v = keep_value(o, value);
	int ret;

	if (!v)
		return fail(CMD, "out of memory");
	ret = apply_opt(o, opt->val, v);
	if (ret)
		fprintf(stderr, "%s %s: (in %s:%u)\n", prog, CMD, path, lineno);
	return ret;
}

static int read_config(struct exp_opts *o, const char *path)
{
	return opts_file_read(CMD, path, longopts, apply_file_opt, o);
}

int exp_parse_opts(int argc, char **argv, struct exp_opts *o)
{
	const char *config = NULL;
	int c, ret;

	memset(o, 0, sizeof(*o));
	session_opts_default(&o->so);
	o->listen = DEFAULT_LISTEN;
	o->textfile_us = 5000000;
	o->cfg.top_n = 10;
	parse_buckets("1s,10s,1m,10m,60m", &o->cfg);
	parse_pcts("10,25,50,75,90,99", &o->cfg);
	opterr = 0;
	/* --config first, so that the command line wins over the file */
	optind = 1;
	while ((c = getopt_long(argc, argv, SHORTOPTS, longopts, NULL)) != -1) {
		if (c == 'c')
			config = optarg;
		else if (c == 'h' || c == ':' || c == '?')
			return opt_help_or_error(CMD, argv, c, usage);
	}
	if (config) {
		ret = read_config(o, config);
		if (ret)
			return ret;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, SHORTOPTS, longopts, NULL)) != -1) {
		if (c == 'c')
			continue;
		ret = apply_opt(o, c, optarg);
		if (ret > 0)
			return ret;
		if (ret < 0)
			return opt_error(CMD, argv, c);
	}
	if (o->no_http && !o->textfile)
		return usage_error(CMD, "--no-http needs --textfile: nothing would be exported");
	if (o->attach) {
		if (o->so.nr_pids || o->so.cgroup || o->so.inherit || optind < argc)
			return usage_error(CMD, "--attach reads the running monitor: give no "
					   "--pid, no --cgroup and no command");
		if (o->attrs_given)
			return usage_error(CMD, "--attach never changes the monitor: the "
					   "attributes are its owner's (no -s, -a, -u, -r, -t, "
					   "--auto-intervals)");
		return 0;
	}
	return session_opts_finish(CMD, &o->so, argc, argv, "monitor (or --attach)");
}
