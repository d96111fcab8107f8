// SPDX-License-Identifier: GPL-2.0-only
/* daptrace report: option parsing, mode dispatch, plotting through viz/. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"
#include "units.h"

#define CMD "report"

struct report_mode {
	const char *name;
	int (*fn)(const struct report_opts *o, FILE *out, FILE *tics);
	const char *script;		/* viz/ script for --plot, NULL: none */
	const char *description;
};

static const struct report_mode modes[] = {
	{ "heatmap", report_heatmap, "heatmap.gp",
	  "time x address x access frequency, big unmapped gaps elided" },
	{ "wss", report_wss, "wss.gp",
	  "working set size over time with p50/p90/p99" },
	{ "regions", report_regions, "regions.gp",
	  "number of regions (and missed snapshots) over time" },
	{ "hot", report_hot, NULL,
	  "hottest regions of one snapshot, or per label over the record" },
	{ "raw", report_raw, NULL, "every snapshot and region, human readable" },
	{ "nodes", report_nodes, "nodes.gp",
	  "bytes of hot, warm and cold memory per NUMA node over time" },
	{ "pheatmap", report_pheatmap, "pheatmap.gp",
	  "time x physical address x access frequency (root records)" },
};

#define NR_MODES (sizeof(modes) / sizeof(modes[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s report <mode> [options] [RECORD]\n\nModes:\n", prog);
	for (size_t i = 0; i < NR_MODES; i++)
		fprintf(f, "  %-8s %s\n", modes[i].name, modes[i].description);
	fprintf(f,
"\n"
"RECORD defaults to daptrace.csv.  Data goes to stdout (gnuplot-ready, '#'\n"
"comments) unless --output is given.\n"
"\n"
"  -o, --output FILE     write the data here instead of stdout\n"
"      --plot OUT        render OUT (.png or .svg) with gnuplot (heatmap, wss,\n"
"                        regions)\n"
"  -p, --pid PID         only this target (heatmap default: the first one)\n"
"      --partial         accept a record without its trailer (killed recorder)\n"
"  heatmap:\n"
"      --time-bins N     columns (default 200; 1..100000)\n"
"      --addr-bins N     rows (default 200; 1..100000)\n"
"      --max-blocks N    keep at most N address blocks: elide up to N-1 of the\n"
"                        largest unmapped gaps, those >= 1/8 of the mapped total\n"
"                        (default 8; 1..64)\n"
"  wss:\n"
"      --threshold N     a region is in the working set if nr_accesses >= N\n"
"                        (default 1)\n"
"  hot:\n"
"      --top N           regions to show (default 10)\n"
"      --at SEC          the snapshot at this time (default: the last one)\n"
"      --by-label        rank labels by access over the whole record instead\n"
"  nodes:\n"
"      --hot-pct N       hot: accessed in >= N%% of the window's samples\n"
"                        (default 50; 1..100); cold: no access seen\n"
"  pheatmap:\n"
"      --time-bins N, --addr-bins N   as for heatmap\n");
}

static int parse_uint(const char *flag, const char *val, unsigned int lo,
		      unsigned int hi, unsigned int *out)
{
	uint64_t v;
	char what[64];

	snprintf(what, sizeof(what), "expected a whole number from %u to %u", lo, hi);
	if (parse_u64_dec(val, &v) || v < lo || v > hi)
		return bad_value(CMD, flag, val, what);
	*out = (unsigned int)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct report_opts *o,
		      const struct report_mode **mode)
{
	enum { OPT_PLOT = 256, OPT_PARTIAL, OPT_TIME_BINS, OPT_ADDR_BINS,
	       OPT_MAX_BLOCKS, OPT_THRESHOLD, OPT_TOP, OPT_AT, OPT_BY_LABEL,
	       OPT_HOT_PCT };
	static const struct option longopts[] = {
		{ "output",	required_argument, NULL, 'o' },
		{ "plot",	required_argument, NULL, OPT_PLOT },
		{ "pid",	required_argument, NULL, 'p' },
		{ "partial",	no_argument,	   NULL, OPT_PARTIAL },
		{ "time-bins",	required_argument, NULL, OPT_TIME_BINS },
		{ "addr-bins",	required_argument, NULL, OPT_ADDR_BINS },
		{ "max-blocks",	required_argument, NULL, OPT_MAX_BLOCKS },
		{ "threshold",	required_argument, NULL, OPT_THRESHOLD },
		{ "top",	required_argument, NULL, OPT_TOP },
		{ "at",		required_argument, NULL, OPT_AT },
		{ "by-label",	no_argument,	   NULL, OPT_BY_LABEL },
		{ "hot-pct",	required_argument, NULL, OPT_HOT_PCT },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int pid;
	char *end;
	int c, err;

	memset(o, 0, sizeof(*o));
	o->input = "daptrace.csv";
	o->time_bins = 200;
	o->addr_bins = 200;
	o->max_blocks = 8;
	o->threshold = 1;
	o->top = 10;
	o->at_s = -1;
	o->hot_pct = 50;
	opterr = 0;
	optind = 1;
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		exit(EXIT_OK);
	}
	if (argc < 2 || argv[1][0] == '-')
		return usage_error(CMD, "missing mode (heatmap, wss, regions, hot, raw, nodes or pheatmap)");
	for (size_t i = 0; i < NR_MODES; i++)
		if (!strcmp(argv[1], modes[i].name))
			*mode = &modes[i];
	if (!*mode)
		return usage_error(CMD, "unknown mode '%s' (heatmap, wss, regions, hot, "
				   "raw, nodes or pheatmap)", argv[1]);
	o->mode = argv[1];
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, ":o:p:h", longopts, NULL)) != -1) {
		err = 0;
		switch (c) {
		case 'o':
			if (!*optarg)
				return bad_value(CMD, "--output", optarg, "empty file name");
			o->output = optarg;
			break;
		case OPT_PLOT:
			if (!(*mode)->script)
				return usage_error(CMD, "--plot: mode '%s' has no plot "
						   "(heatmap, wss, regions, nodes and pheatmap do)", o->mode);
			end = strrchr(optarg, '.');
			if (!end || (strcmp(end, ".png") && strcmp(end, ".svg")))
				return bad_value(CMD, "--plot", optarg,
						 "the file name must end in .png or .svg");
			if (strpbrk(optarg, "'\\\n"))
				return bad_value(CMD, "--plot", optarg, "quotes, backslashes "
						 "and newlines are not supported");
			o->plot = optarg;
			break;
		case 'p':
			err = parse_uint("--pid", optarg, 1, 0x7fffffff, &pid);
			o->pid = (pid_t)pid;
			break;
		case OPT_PARTIAL:
			o->partial = 1;
			break;
		case OPT_TIME_BINS:
			err = parse_uint("--time-bins", optarg, 1, 100000, &o->time_bins);
			break;
		case OPT_ADDR_BINS:
			err = parse_uint("--addr-bins", optarg, 1, 100000, &o->addr_bins);
			break;
		case OPT_MAX_BLOCKS:
			err = parse_uint("--max-blocks", optarg, 1, 64, &o->max_blocks);
			break;
		case OPT_THRESHOLD:
			if (parse_u64_dec(optarg, &o->threshold) || o->threshold > UINT32_MAX)
				return bad_value(CMD, "--threshold", optarg,
						 "expected a whole number of accesses");
			break;
		case OPT_TOP:
			err = parse_uint("--top", optarg, 1, 1000000, &o->top);
			break;
		case OPT_AT:
			errno = 0;
			o->at_s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->at_s >= 0) ||
			    o->at_s > 1e12)
				return bad_value(CMD, "--at", optarg,
						 "expected seconds since the start, e.g. 12.5");
			break;
		case OPT_BY_LABEL:
			o->by_label = 1;
			break;
		case OPT_HOT_PCT:
			err = parse_uint("--hot-pct", optarg, 1, 100, &o->hot_pct);
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			return opt_error(CMD, argv, c);
		}
		if (err)
			return err;
	}
	if (optind < argc)
		o->input = argv[optind++];
	if (optind < argc)
		return usage_error(CMD, "unexpected argument '%s' (one record at a time)",
				   argv[optind]);
	return EXIT_OK;
}

int report_read(const struct report_opts *o, rec_snapshot_cb cb, void *arg,
		struct rec_info *info)
{
	char err[512];
	int ret = rec_read_path(o->input, o->partial, cb, arg, info, err, sizeof(err));

	if (ret == -1) {
		fail(CMD, "%s", err);
		return EXIT_FAIL;
	}
	if (ret)
		return ret;	/* the callback's exit code */
	if (!info->complete)
		warn_msg(CMD, "%s: incomplete record (no trailer); reporting what "
			 "is there", o->input);
	return EXIT_OK;
}

double report_freq(const struct rec_snapshot *s, const struct rec_region *r,
		   const struct rec_info *info)
{
	double max = s->nr_samples;

	if (!max) {
		/* older windows without a sample count: use the attributes */
		const char *a = rec_info_get(info, "aggr_us");
		const char *sm = rec_info_get(info, "sample_us");

		if (a && sm && atof(sm) > 0)
			max = atof(a) / atof(sm);
	}
	if (max <= 0)
		return 0;
	return r->nr_accesses >= max ? 100.0 : 100.0 * r->nr_accesses / max;
}

static int make_temp(char *path, size_t len, const char *what, FILE **f)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, len, "%s/daptrace-%s-XXXXXX",
		 dir && *dir && !strpbrk(dir, "'\\\n") ? dir : "/tmp", what);
	fd = mkstemp(path);
	if (fd < 0)
		return fail(CMD, "creating a temporary file %s: %s", path, strerror(errno));
	*f = fdopen(fd, "w");
	if (!*f) {
		close(fd);
		unlink(path);
		return fail(CMD, "fdopen: %s", strerror(errno));
	}
	return 0;
}

static int run_mode(const struct report_opts *o, const struct report_mode *m)
{
	char data[4096] = "", tics[4096] = "";
	FILE *out = stdout, *tf = NULL;
	int ret;

	if (o->output) {
		out = fopen(o->output, "w");
		if (!out)
			return fail(CMD, "--output %s: %s", o->output, strerror(errno));
		snprintf(data, sizeof(data), "%s", o->output);
	} else if (o->plot) {
		ret = make_temp(data, sizeof(data), "data", &out);
		if (ret)
			return ret;
	}
	if (o->plot) {
		ret = make_temp(tics, sizeof(tics), "tics", &tf);
		if (ret)
			goto out;
	}
	ret = m->fn(o, out, tf);
	if (out != stdout && fclose(out) && !ret)
		ret = fail(CMD, "writing %s: %s", data, strerror(errno));
	out = stdout;
	if (tf && fclose(tf) && !ret)
		ret = fail(CMD, "writing %s: %s", tics, strerror(errno));
	tf = NULL;
	if (!ret && o->plot) {
		if (strpbrk(data, "'\\\n"))
			ret = usage_error(CMD, "--output %s: file names with quotes or "
					  "backslashes cannot be plotted", data);
		else
			ret = plot_run(m->script, data, tics, o->plot, o->input);
		if (!ret)
			fprintf(stderr, "%s %s: wrote %s\n", prog, CMD, o->plot);
	}
out:
	if (out != stdout)
		fclose(out);
	if (tf)
		fclose(tf);
	if (tics[0])
		unlink(tics);
	if (o->plot && !o->output && data[0])
		unlink(data);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	const struct report_mode *m = NULL;
	struct report_opts o;
	int ret;

	ret = parse_opts(argc, argv, &o, &m);
	if (ret)
		return ret;
	return run_mode(&o, m);
}

int report_heatmap_plot(const char *record, const char *out)
{
	struct report_opts o;
	const struct report_mode *m = &modes[0];
	char *argv[] = { "report", "heatmap", NULL };

	if (parse_opts(2, argv, &o, &m))
		return EXIT_FAIL;
	o.input = record;
	o.plot = out;
	return run_mode(&o, m);
}
