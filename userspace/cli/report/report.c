// SPDX-License-Identifier: GPL-2.0-only
/* daptrace report: option parsing, mode dispatch, plotting through viz/. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "common/grow.h"
#include "import/import.h"
#include "objects/objects.h"
#include "policy.h"
#include "report.h"
#include "report_mapped.h"
#include "common/report_group.h"
#include "common/units.h"

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
	{ "hist", report_hist, NULL,
	  "histograms of the memory by access frequency and by age" },
	{ "objects", report_objects, "heatmap.gp",
	  "data structures (record --objects) ranked by access; .csv output: CSV;\n"
	  "             --plot: the heatmap with the structures drawn on it" },
	{ "nodes", report_nodes, "nodes.gp",
	  "bytes of hot, warm and cold memory per NUMA node over time" },
	{ "pheatmap", report_pheatmap, "pheatmap.gp",
	  "time x physical address x access frequency (root records)" },
	{ "access", report_access, NULL,
	  "regions of one snapshot by access pattern (size, frequency, age),\n"
	  "             sorted, with recency and temperature percentiles and the\n"
	  "             cold tail (damo report access)" },
	{ "damo", report_damo, NULL,
	  "the record in damo's format: -o FILE zlib-compressed JSON (damo's\n"
	  "             default; plain if FILE ends in .json), stdout plain JSON" },
	{ "footprints", report_footprints, NULL,
	  "the distribution of the targets' VSZ and RSS over the windows\n"
	  "             (damo report footprints)" },
	{ "adjust", report_adjust, NULL,
	  "the record with its windows merged into windows of --aggr, a\n"
	  "             record every mode reads (damo adjust)" },
	{ "savings", report_savings, "savings.gp",
	  "per idle-time threshold: the memory reclaiming what is idle that\n"
	  "             long would save, and the refaults it would cause" },
	{ "regret", report_regret, NULL,
	  "a policy record's regret: per scheme and cgroup, what it took\n"
	  "             away and how much came back within 1 s, 10 s, 60 s" },
};

#define NR_MODES (sizeof(modes) / sizeof(modes[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s report <mode> [options] [RECORD]\n\nModes:\n", prog);
	for (size_t i = 0; i < NR_MODES; i++)
		fprintf(f, "  %-10s %s\n", modes[i].name, modes[i].description);
	fprintf(f,
"\n"
"RECORD defaults to daptrace.csv; '-' is stdin, gzip-compressed records are\n"
"read as they are.  Data goes to stdout (gnuplot-ready, '#' comments) unless\n"
"--output is given.  Flags of one mode are rejected by the others.\n"
"\n"
"  -o, --output FILE     write the data here instead of stdout\n"
"      --json            the report as one JSON document instead (nodes:\n"
"                        series[].nodes[n].{hot,warm,cold} bytes)\n"
"      --plot OUT        render OUT (.png or .svg) with gnuplot (heatmap, wss,\n"
"                        regions, objects, nodes, pheatmap, savings)\n"
"  -p, --pid PID         only this target of the record (heatmap default: one\n"
"                        per target, to NAME-PID.EXT with --plot/--output)\n"
"      --partial         accept a record without its trailer (killed recorder)\n"
"      --since T         only snapshots ending at or after T since the start:\n"
"                        seconds (12.5) or with a unit (300ms, 2m)\n"
"      --until T         only snapshots ending at or before T\n"
"      --addr START-END  only regions overlapping these addresses\n"
"      --label TEXT      only regions whose label contains TEXT\n"
"  heatmap:\n"
"      --time-bins N     columns (default 200; 1..100000)\n"
"      --addr-bins N     rows (default 200; 1..100000)\n"
"      --terminal[=auto|color|ascii]\n"
"                        draw it in the terminal (256 colours, or ASCII in a\n"
"                        pipe), as large as the terminal ($COLUMNS x $LINES)\n"
"      --max-blocks N    keep at most N address blocks: elide up to N-1 of the\n"
"                        largest unmapped gaps, those >= 1/8 of the mapped total\n"
"                        (default 8; 1..64)\n"
"  wss:\n"
"      --threshold N     a region is in the working set if nr_accesses >= N\n"
"                        (default 1)\n"
"      --skip N          leave out the first N snapshots (default 0; damo's\n"
"                        report wss and nr_regions leave out 20 by default,\n"
"                        --skip 20 compares with them; also for regions)\n"
"      --percentile-method nearest|damo\n"
"                        nearest rank (default: p50 of 4 values is the 2nd)\n"
"                        or damo's floor index (the 3rd); also for regions\n"
"      --by pid|comm|cgroup  a table of the working set per process, command\n"
"                        name or cgroup instead of the series\n"
"  hot:\n"
"      --top N           regions to show (default 10)\n"
"      --at T            the snapshot at this time, within the record (default:\n"
"                        the last one); snapshots without regions are skipped\n"
"      --by-label[=1|0]  rank labels by access over the whole record instead\n"
"      --by pid|comm|cgroup  rank processes, command names or cgroups so\n"
"  hist:\n"
"      the average bytes (and share of bytes x time) per access frequency\n"
"      bucket (0%%, then tens of %%) and per age bucket (how long a region\n"
"      kept its access level, in power-of-two multiples of the first\n"
"      window); [unmapped] holes and unobservable memory left out\n"
"  access:\n"
"      --at T            the snapshot (default: the last one with regions)\n"
"      --size MIN-MAX    regions of this size (bytes, K, M, G; MIN- or -MAX)\n"
"      --freq MIN-MAX    accessed in this %% of the observed samples (0-0: idle)\n"
"      --age MIN-MAX     at their access level this long (durations: 10s-)\n"
"      --sort KEYS       address (default), size, freq, age, temperature;\n"
"                        comma separated, '-' before one: descending\n"
"      --top N           list at most N regions (default: all)\n"
"      --by pid|comm|cgroup  and a table of the matched bytes per process,\n"
"                        command name or cgroup\n"
"      --temperature-weights S,F,A\n"
"                        temperature = size x S + freq %% x F + age in us x A,\n"
"                        negative if not accessed (default 0,100,100, damo's)\n"
"  nodes:\n"
"      --hot-pct N       hot: accessed in >= N%% of the observed samples\n"
"                        (default 50; 1..100); cold: no access seen\n"
"  pheatmap:\n"
"      --time-bins N, --addr-bins N   as for heatmap\n"
"  footprints:\n"
"      --metric vsz|rss|all  which footprint (default all: vsz, then rss)\n"
"      --sortby size|time    percentiles of the values sorted by size (default)\n"
"                        or in time order (the value at that share of the run)\n"
"      --all-footprints  every window's value instead of the percentiles\n"
"      --raw-number      sizes in bytes, not damo's \"1.500 MiB\"\n"
"      --percentile-method nearest|damo   as for wss\n"
"  adjust:\n"
"      --aggr DUR        merge consecutive windows until they span DUR (needed)\n"
"      --skip N          leave out the first N windows (damo adjust: 20)\n"
"  savings:\n"
"      for each idle time T: the memory a policy reclaiming what is idle for\n"
"      at least T saves (mean and last window), the refaults the record shows\n"
"      it would cause (bytes/s, pages/s, time to reuse p50/p90), what it\n"
"      freed unused, what was still reclaimed at the end (future unknown);\n"
"      the knee: the most saved while refaults/s stay within 10%% of the most\n"
"      --thresholds LIST idle times, comma separated (default\n"
"                        1s,2s,5s,10s,30s,1m,2m,5m,10m; at most 32)\n"
"      --type anon|file  only the memory a scheme with this type= would act on\n"
"                        (anonymous: swapped; file-backed: dropped and read back)\n"
"      --by pid|comm|cgroup  and the curve per process, command name or cgroup\n"
"      --speed X         for a target that will run at X times the speed it had\n"
"                        in the record (0.7: 30%% slower, e.g. stalled by its\n"
"                        refaults): its accesses come 1/X times as far apart,\n"
"                        so what is idle for T is what the record shows idle\n"
"                        for T x X (default 1)\n"
"      --plot OUT        memory saved against refaults/s, the knee marked\n");
}

/* "heatmap, wss, ... or access": the modes, from the table */
static const char *mode_list(void)
{
	static char buf[256];
	size_t n = 0;

	for (size_t i = 0; i < NR_MODES && n < sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? i + 1 == NR_MODES ?
			      " or " : ", " : "", modes[i].name);
	return buf;
}

/* Modes as bits, for the flags that only apply to some of them. */
#define M_HEATMAP	(1u << 0)
#define M_WSS		(1u << 1)
#define M_REGIONS	(1u << 2)
#define M_HOT		(1u << 3)
#define M_RAW		(1u << 4)
#define M_HIST		(1u << 5)
#define M_OBJECTS	(1u << 6)
#define M_NODES		(1u << 7)
#define M_PHEATMAP	(1u << 8)
#define M_ACCESS	(1u << 9)
#define M_DAMO		(1u << 10)
#define M_FOOTPRINTS	(1u << 11)
#define M_ADJUST	(1u << 12)
#define M_SAVINGS	(1u << 13)

enum { OPT_PLOT = 256, OPT_PARTIAL, OPT_TIME_BINS, OPT_ADDR_BINS,
       OPT_MAX_BLOCKS, OPT_THRESHOLD, OPT_TOP, OPT_AT, OPT_BY_LABEL, OPT_JSON,
       OPT_SINCE, OPT_UNTIL, OPT_ADDR, OPT_LABEL, OPT_HOT_PCT, OPT_SIZE, OPT_FREQ,
       OPT_AGE, OPT_SORT, OPT_TEMP_W, OPT_BY, OPT_TERMINAL, OPT_SKIP, OPT_PCT_METHOD,
       OPT_METRIC, OPT_SORTBY, OPT_ALL_FP, OPT_RAW_NUMBER, OPT_AGGR, OPT_THRESHOLDS,
       OPT_TYPE, OPT_SPEED, OPT_LAST = OPT_SPEED };

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
	{ "by-label",	optional_argument, NULL, OPT_BY_LABEL },
	{ "json",	no_argument,	   NULL, OPT_JSON },
	{ "since",	required_argument, NULL, OPT_SINCE },
	{ "until",	required_argument, NULL, OPT_UNTIL },
	{ "addr",	required_argument, NULL, OPT_ADDR },
	{ "label",	required_argument, NULL, OPT_LABEL },
	{ "hot-pct",	required_argument, NULL, OPT_HOT_PCT },
	{ "size",	required_argument, NULL, OPT_SIZE },
	{ "freq",	required_argument, NULL, OPT_FREQ },
	{ "age",	required_argument, NULL, OPT_AGE },
	{ "sort",	required_argument, NULL, OPT_SORT },
	{ "temperature-weights", required_argument, NULL, OPT_TEMP_W },
	{ "by",		required_argument, NULL, OPT_BY },
	{ "terminal",	optional_argument, NULL, OPT_TERMINAL },
	{ "skip",	required_argument, NULL, OPT_SKIP },
	{ "percentile-method", required_argument, NULL, OPT_PCT_METHOD },
	{ "metric",	required_argument, NULL, OPT_METRIC },
	{ "sortby",	required_argument, NULL, OPT_SORTBY },
	{ "all-footprints", no_argument,  NULL, OPT_ALL_FP },
	{ "raw-number",	no_argument,	   NULL, OPT_RAW_NUMBER },
	{ "aggr",	required_argument, NULL, OPT_AGGR },
	{ "thresholds",	required_argument, NULL, OPT_THRESHOLDS },
	{ "type",	required_argument, NULL, OPT_TYPE },
	{ "speed",	required_argument, NULL, OPT_SPEED },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Which modes a mode-specific flag applies to (others: all modes). */
static const struct {
	int opt;
	unsigned int modes;
	const char *which;
} flag_modes[] = {
	{ OPT_PLOT, M_HEATMAP | M_WSS | M_REGIONS | M_OBJECTS | M_NODES | M_PHEATMAP |
	  M_SAVINGS, "heatmap, wss, regions, objects, nodes, pheatmap and savings" },
	{ OPT_JSON, ~(M_DAMO | M_ADJUST), "the modes other than damo and adjust, which "
	  "write records" },
	{ OPT_TIME_BINS, M_HEATMAP | M_OBJECTS | M_PHEATMAP, "heatmap, objects and pheatmap" },
	{ OPT_ADDR_BINS, M_HEATMAP | M_OBJECTS | M_PHEATMAP, "heatmap, objects and pheatmap" },
	{ OPT_HOT_PCT, M_NODES, "nodes" },
	{ OPT_MAX_BLOCKS, M_HEATMAP | M_OBJECTS, "heatmap and objects" },
	{ OPT_TERMINAL, M_HEATMAP, "heatmap" },
	{ OPT_THRESHOLD, M_WSS | M_OBJECTS, "wss and objects" },
	{ OPT_SKIP, M_WSS | M_REGIONS | M_ADJUST, "wss, regions and adjust" },
	{ OPT_AGGR, M_ADJUST, "adjust" },
	{ OPT_PCT_METHOD, M_WSS | M_REGIONS | M_FOOTPRINTS, "wss, regions and footprints" },
	{ OPT_METRIC, M_FOOTPRINTS, "footprints" },
	{ OPT_SORTBY, M_FOOTPRINTS, "footprints" },
	{ OPT_ALL_FP, M_FOOTPRINTS, "footprints" },
	{ OPT_RAW_NUMBER, M_FOOTPRINTS, "footprints" },
	{ OPT_TOP, M_HOT | M_OBJECTS | M_ACCESS, "hot, objects and access" },
	{ OPT_AT, M_HOT | M_ACCESS, "hot and access" },
	{ OPT_SIZE, M_ACCESS, "access" },
	{ OPT_FREQ, M_ACCESS, "access" },
	{ OPT_AGE, M_ACCESS, "access" },
	{ OPT_SORT, M_ACCESS, "access" },
	{ OPT_TEMP_W, M_ACCESS, "access" },
	{ OPT_BY_LABEL, M_HOT, "hot" },
	{ OPT_BY, M_WSS | M_HOT | M_ACCESS | M_SAVINGS, "wss, hot, access and savings" },
	{ OPT_THRESHOLDS, M_SAVINGS, "savings" },
	{ OPT_TYPE, M_SAVINGS, "savings" },
	{ OPT_SPEED, M_SAVINGS, "savings" },
};

static const char *opt_name(int opt)
{
	for (const struct option *l = longopts; l->name; l++)
		if (l->val == opt)
			return l->name;
	return "?";
}

static int check_flag_modes(const char *given, unsigned int mode_bit,
			    const char *mode)
{
	for (size_t i = 0; i < sizeof(flag_modes) / sizeof(flag_modes[0]); i++)
		if (given[flag_modes[i].opt - OPT_PLOT] && !(flag_modes[i].modes & mode_bit))
			return usage_error(CMD, "--%s does not apply to 'report %s' "
					   "(only to %s)", opt_name(flag_modes[i].opt),
					   mode, flag_modes[i].which);
	return 0;
}

/* Seconds since the start: "12.5" (seconds), or with a unit as record's durations take it. */
static int parse_seconds(const char *flag, const char *val, double *out)
{
	uint64_t us;
	char *end;

	if (!parse_duration_us(val, &us)) {
		*out = (double)us / 1e6;
		return 0;
	}
	errno = 0;
	*out = strtod(val, &end);
	if (errno || end == val || *end || !isdigit((unsigned char)val[0]) ||
	    !(*out >= 0) || *out > 1e12)
		return bad_value(CMD, flag, val, "expected a time since the start: seconds "
				 "(12.5) or a number with a unit, us, ms, s or m (12.5s, "
				 "300ms, 2m)");
	return 0;
}

/* "START-END" addresses, hex (0x) or decimal, START < END. */
static int parse_addr_range(const char *val, uint64_t *lo, uint64_t *hi)
{
	const char *dash = strchr(val, '-');
	char start[32];

	if (!dash || dash - val >= (ptrdiff_t)sizeof(start))
		goto bad;
	memcpy(start, val, dash - val);
	start[dash - val] = '\0';
	if (parse_u64_addr(start, lo) || parse_u64_addr(dash + 1, hi) || *lo >= *hi)
		goto bad;
	return 0;
bad:
	return bad_value(CMD, "--addr", val, "expected START-END with START < END, "
			 "e.g. 0x7f0000000000-0x7f0010000000");
}

/*
 * "MIN-MAX", "MIN-" or "-MAX" for report access: @one parses a side,
 * an empty side keeps the default.
 */
static int parse_span(const char *val, int (*one)(const char *, void *), void *lo, void *hi)
{
	const char *dash = strchr(val, '-');
	char buf[64];

	if (!dash || dash - val >= (ptrdiff_t)sizeof(buf) || (dash == val && !dash[1]))
		return -1;
	memcpy(buf, val, dash - val);
	buf[dash - val] = '\0';
	if (*buf && one(buf, lo))
		return -1;
	return dash[1] && one(dash + 1, hi) ? -1 : 0;
}

static int one_size(const char *s, void *v)
{
	return obj_parse_size(s, v);
}

static int one_percent(const char *s, void *v)
{
	char *end;
	double *d = v;

	errno = 0;
	*d = strtod(s, &end);
	if (*end == '%')
		end++;
	return errno || end == s || *end || !(*d >= 0 && *d <= 100) || !isdigit((unsigned char)*s);
}

static int one_duration(const char *s, void *v)
{
	uint64_t us;

	if (parse_duration_us(s, &us))
		return -1;
	*(uint64_t *)v = us * 1000;
	return 0;
}

static int parse_sort(const char *val, struct report_opts *o)
{
	static const char *const keys[NR_SORT_KEYS] = {
		[SORT_ADDRESS] = "address", [SORT_SIZE] = "size", [SORT_FREQ] = "freq",
		[SORT_AGE] = "age", [SORT_TEMPERATURE] = "temperature",
	};
	char buf[128], *save = NULL, *k;

	if (strlen(val) >= sizeof(buf))
		goto bad;
	strcpy(buf, val);
	o->nr_sort = 0;
	for (k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		int desc = *k == '-', i;

		k += *k == '-' || *k == '+';
		for (i = 0; i < NR_SORT_KEYS && strcmp(k, keys[i]); i++)
			;
		if (i == NR_SORT_KEYS || o->nr_sort == NR_SORT_KEYS)
			goto bad;
		o->sort[o->nr_sort] = (enum access_sort)i;
		o->sort_desc[o->nr_sort++] = desc;
	}
	if (o->nr_sort)
		return 0;
bad:
	return bad_value(CMD, "--sort", val, "expected keys from address, size, freq, age "
			 "and temperature, comma separated, '-' before one for descending "
			 "(e.g. -temperature,size)");
}

static int parse_weights(const char *val, double *w)
{
	char *end;
	const char *p = val;

	for (int i = 0; i < 3; i++) {
		errno = 0;
		w[i] = strtod(p, &end);
		if (errno || end == p || !isfinite(w[i]) || *end != (i < 2 ? ',' : '\0'))
			return bad_value(CMD, "--temperature-weights", val, "expected three "
					 "numbers, for size, frequency and age, e.g. 0,100,100");
		p = end + 1;
	}
	return 0;
}

/* savings: "1s,2s,5s,1m": distinct durations above 0, kept ascending. */
static int parse_thresholds(const char *val, struct report_opts *o)
{
	if (sav_parse_thresholds(val, o->thresholds_ns, &o->nr_thresholds))
		return bad_value(CMD, "--thresholds", val, SAV_THRESHOLDS_EXPECTED);
	return 0;
}

/*
 * savings --speed: a factor from SAV_MIN_SPEED to SAV_MAX_SPEED (the record's
 * times divided by it stay far within 64 bits of ns).
 */
static int parse_speed(const char *val, struct report_opts *o)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (errno || end == val || *end || !isfinite(v) || v < SAV_MIN_SPEED ||
	    v > SAV_MAX_SPEED)
		return bad_value(CMD, "--speed", val, "expected a number from 0.01 to 100: "
				 "the target's speed against the record's (e.g. 0.7)");
	o->sav_speed = v;
	return 0;
}

static int parse_bool(const char *flag, const char *val, int *out)
{
	if (!val || !strcmp(val, "1") || !strcmp(val, "yes") || !strcmp(val, "true"))
		*out = 1;
	else if (!strcmp(val, "0") || !strcmp(val, "no") || !strcmp(val, "false"))
		*out = 0;
	else
		return bad_value(CMD, flag, val, "expected nothing, 1/yes/true or "
				 "0/no/false");
	return 0;
}

/*
 * --terminal: colour if stdout is a terminal that is not "dumb" and
 * NO_COLOR is unset (auto), else ASCII; the picture fills the terminal:
 * $COLUMNS x $LINES, else the tty's size, else 80 x 24 (--time-bins and
 * --addr-bins override its columns and rows).
 */
static void terminal_size(struct report_opts *o, int set_cols, int set_rows)
{
	const char *term = getenv("TERM"), *cols = getenv("COLUMNS");
	const char *lines = getenv("LINES");
	struct winsize ws = { 0 };
	int tty = isatty(STDOUT_FILENO) && !o->output;
	unsigned int w = 80, h = 24;

	if (tty && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col) {
		w = ws.ws_col;
		h = ws.ws_row ? ws.ws_row : h;
	}
	if (cols && atoi(cols) > 0)
		w = (unsigned int)atoi(cols);
	if (lines && atoi(lines) > 0)
		h = (unsigned int)atoi(lines);
	if (o->terminal < 0)
		o->terminal = tty && !getenv("NO_COLOR") && term && strcmp(term, "dumb") ? 1 : 2;
	o->term_width = w < 40 ? 40 : w > 1000 ? 1000 : w;
	o->term_rows = !set_rows ? 0 : h < 10 ? 10 : h > 1000 ? 1000 : h;
	o->term_fit_cols = set_cols;
}

static int parse_opts(int argc, char **argv, struct report_opts *o,
		      const struct report_mode **mode)
{
	char given[OPT_LAST - OPT_PLOT + 1] = { 0 };
	unsigned int pid, mode_bit = 0;
	int c, err;

	memset(o, 0, sizeof(*o));
	o->input = "daptrace.csv";
	o->time_bins = 200;
	o->addr_bins = 200;
	o->max_blocks = 8;
	o->threshold = 1;
	o->top = 10;
	o->at_s = -1;
	o->since_s = 0;
	o->until_s = -1;
	o->hot_pct = 50;
	o->pattern = (struct access_pattern){
		.size_max = UINT64_MAX, .freq_max = 100, .age_max_ns = UINT64_MAX,
	};
	o->nr_sort = 1;
	o->temp_w[1] = o->temp_w[2] = 100;
	o->fp_metrics = 3;
	opterr = 0;
	optind = 1;
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		exit(EXIT_OK);
	}
	if (argc < 2 || argv[1][0] == '-')
		return usage_error(CMD, "missing mode (%s)", mode_list());
	for (size_t i = 0; i < NR_MODES; i++)
		if (!strcmp(argv[1], modes[i].name)) {
			*mode = &modes[i];
			mode_bit = 1u << i;
		}
	if (!*mode)
		return usage_error(CMD, "unknown mode '%s' (%s)", argv[1], mode_list());
	o->mode = argv[1];
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, ":o:p:h", longopts, NULL)) != -1) {
		err = 0;
		if (c >= OPT_PLOT && c <= OPT_LAST)
			given[c - OPT_PLOT] = 1;
		switch (c) {
		case 'o':
			if (!*optarg)
				return bad_value(CMD, "--output", optarg, "empty file name");
			o->output = optarg;
			break;
		case OPT_PLOT:
			if (!plot_name_ok(optarg))
				return bad_value(CMD, "--plot", optarg,
						 "the file name must end in .png or .svg");
			o->plot = optarg;
			break;
		case 'p':
			err = uint_flag(CMD, "--pid", optarg, 1, 0x7fffffff, &pid);
			o->pid = (pid_t)pid;
			break;
		case OPT_PARTIAL:
			o->partial = 1;
			break;
		case OPT_TIME_BINS:
			err = uint_flag(CMD, "--time-bins", optarg, 1, 100000, &o->time_bins);
			break;
		case OPT_ADDR_BINS:
			err = uint_flag(CMD, "--addr-bins", optarg, 1, 100000, &o->addr_bins);
			break;
		case OPT_MAX_BLOCKS:
			err = uint_flag(CMD, "--max-blocks", optarg, 1, 64, &o->max_blocks);
			break;
		case OPT_THRESHOLD:
			if (parse_u64_dec(optarg, &o->threshold) || o->threshold > UINT32_MAX)
				return bad_value(CMD, "--threshold", optarg,
						 "expected a whole number of accesses");
			break;
		case OPT_TOP:
			err = uint_flag(CMD, "--top", optarg, 1, 1000000, &o->top);
			break;
		case OPT_SKIP:
			err = uint_flag(CMD, "--skip", optarg, 0, 1000000000, &o->skip);
			break;
		case OPT_PCT_METHOD:
			if (strcmp(optarg, "nearest") && strcmp(optarg, "damo"))
				return bad_value(CMD, "--percentile-method", optarg,
						 "expected nearest or damo");
			o->pct_damo = !strcmp(optarg, "damo");
			break;
		case OPT_METRIC:
			if (!strcmp(optarg, "vsz") || !strcmp(optarg, "rss"))
				o->fp_metrics = !strcmp(optarg, "vsz") ? 1 : 2;
			else if (!strcmp(optarg, "all"))
				o->fp_metrics = 3;
			else
				return bad_value(CMD, "--metric", optarg, "expected vsz, rss or all "
						 "(damo's sys_used is not in a daptrace record)");
			break;
		case OPT_SORTBY:
			if (strcmp(optarg, "size") && strcmp(optarg, "time"))
				return bad_value(CMD, "--sortby", optarg, "expected size or time");
			o->fp_by_time = !strcmp(optarg, "time");
			break;
		case OPT_ALL_FP:
			o->fp_all = 1;
			break;
		case OPT_AGGR:
			if (parse_duration_us(optarg, &o->adjust_aggr_us) || !o->adjust_aggr_us ||
			    o->adjust_aggr_us > UINT32_MAX)
				return bad_value(CMD, "--aggr", optarg, "expected a duration with a "
						 "unit, us, ms, s or m, above 0 and below 71 minutes "
						 "(e.g. 1s)");
			break;
		case OPT_RAW_NUMBER:
			o->raw_number = 1;
			break;
		case OPT_THRESHOLDS:
			err = parse_thresholds(optarg, o);
			break;
		case OPT_SPEED:
			err = parse_speed(optarg, o);
			break;
		case OPT_TYPE:
			if (!strcmp(optarg, "anon"))
				o->sav_type = POL_FILTER_ANON;
			else if (!strcmp(optarg, "file"))
				o->sav_type = POL_FILTER_FILE;
			else
				return bad_value(CMD, "--type", optarg, "expected anon or file, as "
						 "a scheme's type=");
			break;
		case OPT_AT:
			err = parse_seconds("--at", optarg, &o->at_s);
			break;
		case OPT_BY_LABEL:
			err = parse_bool("--by-label", optarg, &o->by_label);
			break;
		case OPT_BY: {
			enum report_by by;

			if (report_by_parse(optarg, &by))
				return bad_value(CMD, "--by", optarg, "expected pid, comm or cgroup");
			o->by = by;
			break;
		}
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_SINCE:
			err = parse_seconds("--since", optarg, &o->since_s);
			break;
		case OPT_UNTIL:
			err = parse_seconds("--until", optarg, &o->until_s);
			break;
		case OPT_ADDR:
			err = parse_addr_range(optarg, &o->addr_lo, &o->addr_hi);
			break;
		case OPT_LABEL:
			o->label = optarg;
			break;
		case OPT_TERMINAL:
			if (!optarg || !strcmp(optarg, "auto"))
				o->terminal = -1;
			else if (!strcmp(optarg, "color") || !strcmp(optarg, "colour"))
				o->terminal = 1;
			else if (!strcmp(optarg, "ascii"))
				o->terminal = 2;
			else
				return bad_value(CMD, "--terminal", optarg,
						 "expected auto, color or ascii");
			break;
		case OPT_HOT_PCT:
			err = uint_flag(CMD, "--hot-pct", optarg, 1, 100, &o->hot_pct);
			break;
		case OPT_SIZE:
			if (parse_span(optarg, one_size, &o->pattern.size_min,
				       &o->pattern.size_max) ||
			    o->pattern.size_min > o->pattern.size_max)
				return bad_value(CMD, "--size", optarg, "expected MIN-MAX, MIN- or "
						 "-MAX in bytes, K, M or G (e.g. 1M-)");
			break;
		case OPT_FREQ:
			if (parse_span(optarg, one_percent, &o->pattern.freq_min,
				       &o->pattern.freq_max) ||
			    o->pattern.freq_min > o->pattern.freq_max)
				return bad_value(CMD, "--freq", optarg, "expected MIN-MAX percent of "
						 "the window's samples, 0 to 100 (e.g. 0-0, 50-)");
			break;
		case OPT_AGE:
			if (parse_span(optarg, one_duration, &o->pattern.age_min_ns,
				       &o->pattern.age_max_ns) ||
			    o->pattern.age_min_ns > o->pattern.age_max_ns)
				return bad_value(CMD, "--age", optarg, "expected MIN-MAX, MIN- or "
						 "-MAX as durations with a unit (e.g. 10s-)");
			break;
		case OPT_SORT:
			err = parse_sort(optarg, o);
			break;
		case OPT_TEMP_W:
			err = parse_weights(optarg, o->temp_w);
			break;
		default:
			return opt_help_or_error(CMD, argv, c, usage);
		}
		if (err)
			return err;
	}
	err = check_flag_modes(given, mode_bit, o->mode);
	if (err)
		return err;
	if (mode_bit == M_ADJUST && !o->adjust_aggr_us)
		return usage_error(CMD, "report adjust needs --aggr, the merged windows' length");
	if (o->json + !!o->plot + !!o->terminal > 1)
		return usage_error(CMD, "--json, --plot and --terminal: choose one");
	/* --by-label ranks over the whole record: no one snapshot to pick */
	if (o->by_label && given[OPT_AT - OPT_PLOT])
		return usage_error(CMD, "--at picks one snapshot, --by-label ranks over the "
				   "whole record (use --since/--until for a part): choose one");
	if (o->by && mode_bit == M_HOT && given[OPT_AT - OPT_PLOT])
		return usage_error(CMD, "--at picks one snapshot, hot --by ranks over the "
				   "whole record (use --since/--until for a part): choose one");
	if (o->by && o->by_label)
		return usage_error(CMD, "--by and --by-label: choose one");
	if (o->by && o->plot)
		return usage_error(CMD, "--by makes a table, which --plot does not draw");
	if (o->terminal)
		terminal_size(o, !given[OPT_TIME_BINS - OPT_PLOT],
			      !given[OPT_ADDR_BINS - OPT_PLOT]);
	/* access lists every region that matches unless told */
	if (mode_bit == M_ACCESS && !given[OPT_TOP - OPT_PLOT])
		o->top = UINT_MAX;
	if (o->until_s >= 0 && o->until_s < o->since_s)
		return usage_error(CMD, "--until %g is before --since %g", o->until_s,
				   o->since_s);
	if (optind < argc)
		o->input = argv[optind++];
	if (optind < argc)
		return usage_error(CMD, "unexpected argument '%s' (one record at a time)",
				   argv[optind]);
	return EXIT_OK;
}

/* TMPDIR if it is a directory, else /tmp (a stale TMPDIR is no reason to fail) */
static const char *temp_dir(void)
{
	const char *dir = getenv("TMPDIR");
	struct stat st;

	return dir && *dir && !stat(dir, &st) && S_ISDIR(st.st_mode) ? dir : "/tmp";
}

/* An unlinked temporary file in temp_dir(), or NULL with errno set. */
static FILE *spool_file(void)
{
	char path[PATH_MAX];
	int fd, err;
	FILE *f;

	snprintf(path, sizeof(path), "%s/daptrace-spool-XXXXXX", temp_dir());
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	f = fdopen(fd, "w+");
	if (!f) {
		err = errno;
		close(fd);
		errno = err;
	}
	return f;
}

/*
 * The first bytes of @f (up to @len, read into @buf): what the record is.
 * Returns the bytes read.
 */
static size_t sniff(FILE *f, unsigned char *buf, size_t len, enum rec_format *fmt)
{
	size_t n = fread(buf, 1, len, f);

	*fmt = rec_sniff(buf, n);
	return n;
}

/* Another tool's record (@fmt) from @in into an unlinked daptrace record. */
static int import_input(const struct report_opts *o, FILE *in, enum rec_format fmt,
			char *err, size_t errlen)
{
	FILE *tmp = spool_file();

	if (!tmp) {
		snprintf(err, errlen, "%s: a temporary file to convert it in %s: %s",
			 o->input, temp_dir(), strerror(errno));
		return -1;
	}
	if (rec_import(in, fmt, strcmp(o->input, "-") ? o->input : "<stdin>", tmp, err,
		       errlen) || fflush(tmp)) {
		if (!err[0])
			snprintf(err, errlen, "%s: converting it: %s", o->input, strerror(errno));
		fclose(tmp);
		return -1;
	}
	o->in->spool = tmp;
	return 0;
}

/*
 * A daptrace record in a regular file is read where it is, a pass per
 * read.  A pipe, stdin or a device is read once, into an unlinked
 * temporary file.  A record of damo or a perf script (import.h) is
 * converted into one.  Anything else is refused at its first bytes, before
 * it fills the disk.
 */
static int spool_input(const struct report_opts *o, char *err, size_t errlen)
{
	unsigned char buf[65536];
	enum rec_format fmt;
	struct stat st;
	size_t n, got = 0;
	FILE *in, *tmp;
	int ret;

	o->in->spooled = 1;
	if (strcmp(o->input, "-") && !stat(o->input, &st) && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", o->input, strerror(EISDIR));
		return -1;
	}
	in = rec_open(o->input, err, errlen);
	if (!in)
		return -1;
	n = sniff(in, buf, sizeof(buf), &fmt);
	if (fmt == REC_FMT_UNKNOWN) {
		snprintf(err, errlen, "%s:1: not a daptrace record (first row must be '%s'), "
			 "nor one of damo or a perf script of damon_aggregated", o->input,
			 REC_MAGIC);
		fclose(in);
		return -1;
	}
	if (strcmp(o->input, "-") && !stat(o->input, &st) && S_ISREG(st.st_mode)) {
		fclose(in);
		if (fmt == REC_FMT_DAPTRACE)
			return 0;
		in = rec_open(o->input, err, errlen);
		if (!in)
			return -1;
		ret = import_input(o, in, fmt, err, errlen);
		fclose(in);
		return ret;
	}
	tmp = spool_file();
	if (!tmp) {
		snprintf(err, errlen, "%s: a temporary file to hold it in %s: %s",
			 o->input, temp_dir(), strerror(errno));
		fclose(in);
		return -1;
	}
	do {
		got += n;
		if (fwrite(buf, 1, n, tmp) != n)
			break;
	} while ((n = fread(buf, 1, sizeof(buf), in)) > 0);
	if (ferror(in) || ferror(tmp) || fflush(tmp)) {
		snprintf(err, errlen, "%s: spooling to a temporary file: %s", o->input,
			 strerror(errno));
		fclose(in);
		fclose(tmp);
		return -1;
	}
	fclose(in);
	if (fmt == REC_FMT_DAPTRACE) {
		o->in->spool = tmp;
		return 0;
	}
	rewind(tmp);
	ret = import_input(o, tmp, fmt, err, errlen);
	fclose(tmp);
	return ret;
}

struct filter {
	const struct report_opts *o;
	rec_snapshot_cb cb;
	void *arg;
	struct rec_region *regions;
	uint32_t cap;
	struct mapped_now *maps;	/* NULL, or kept up to every snapshot */
};

/* --addr keeps the part of a region inside the range (damo clips too). */
static int region_wanted(const struct report_opts *o, struct rec_region *r)
{
	if (o->addr_hi) {
		if (r->end <= o->addr_lo || r->start >= o->addr_hi)
			return 0;
		if (r->start < o->addr_lo)
			r->start = o->addr_lo;
		if (r->end > o->addr_hi)
			r->end = o->addr_hi;
	}
	return !o->label || strstr(r->label, o->label);
}

static int note_window(struct report_input *in, const struct rec_snapshot *s)
{
	if (!in->nr_read++)
		in->first_ns = s->end_ns;
	if (s->end_ns < in->first_ns)
		in->first_ns = s->end_ns;
	if (s->end_ns > in->last_ns)
		in->last_ns = s->end_ns;
	if (in->nr_win == in->win_cap) {
		size_t cap = in->win_cap ? in->win_cap * 2 : 1024;
		struct report_window *w = realloc(in->win, cap * sizeof(*w));

		if (!w)
			return fail(CMD, "out of memory");
		in->win = w;
		in->win_cap = cap;
	}
	in->win[in->nr_win++] = (struct report_window){
		.seq = s->seq, .end_ns = s->end_ns,
		.aggr_us = s->aggr_us ? s->aggr_us :
			   (uint32_t)((s->end_ns - s->start_ns) / 1000),
	};
	return 0;
}

/* --since/--until drop snapshots, --addr/--label drop (or clip) regions. */
static int filtered(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct filter *f = arg;
	const struct report_opts *o = f->o;
	struct report_input *in = o->in;
	double t = (double)s->end_ns / 1e9;
	struct rec_snapshot copy = *s;

	if (note_window(in, s) || (f->maps && mapped_now_update(f->maps, s, info)))
		return EXIT_FAIL;
	/*
	 * An imported record without intervals (damo's "intervals": null, a
	 * trace without tune events): access frequencies and ages rest on
	 * an assumed sampling interval.  damo refuses such a record for
	 * report access; every report here says so instead, on stderr,
	 * before its first line.
	 */
	if (!in->warned_assumed && rec_info_get(info, "sample_us_assumed")) {
		in->warned_assumed = 1;
		warn_msg(CMD, "%s: %s; access frequencies and ages rest on it", o->input,
			 rec_info_get(info, "sample_us_assumed"));
	}
	if (t < o->since_s || (o->until_s >= 0 && t > o->until_s))
		return 0;
	in->nr_kept++;
	in->regions_read += s->nr_regions;
	if (!o->addr_hi && !o->label) {
		in->regions_kept += s->nr_regions;
		return f->cb(f->arg, s, info);
	}
	if (s->nr_regions > f->cap) {
		struct rec_region *r = realloc(f->regions, s->nr_regions * sizeof(*r));

		if (!r)
			return fail(CMD, "out of memory");
		f->regions = r;
		f->cap = s->nr_regions;
	}
	copy.regions = f->regions;
	copy.nr_regions = 0;
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		copy.regions[copy.nr_regions] = s->regions[i];
		copy.nr_regions += region_wanted(o, &copy.regions[copy.nr_regions]);
	}
	in->regions_kept += copy.nr_regions;
	return f->cb(f->arg, &copy, info);
}

static int read_filtered(const struct report_opts *o, rec_snapshot_cb cb, void *arg,
			 struct rec_info *info, struct mapped_now *maps)
{
	struct filter flt = { .o = o, .cb = cb, .arg = arg, .maps = maps };
	struct report_input *in = o->in;
	char err[512];
	int ret;

	memset(info, 0, sizeof(*info));
	in->nr_read = in->nr_kept = in->regions_read = in->regions_kept = 0;
	in->first_ns = in->last_ns = 0;
	in->nr_win = 0;
	if (!in->spooled && spool_input(o, err, sizeof(err))) {
		fail(CMD, "%s", err);
		return EXIT_FAIL;
	}
	if (in->spool) {
		rewind(in->spool);
		ret = rec_read(in->spool, strcmp(o->input, "-") ? o->input : "<stdin>",
			       o->partial, filtered, &flt, info, err, sizeof(err));
	} else {
		ret = rec_read_path(o->input, o->partial, filtered, &flt, info, err,
				    sizeof(err));
	}
	free(flt.regions);
	if (ret == -1) {
		fail(CMD, "%s", err);
		return EXIT_FAIL;
	}
	if (ret)
		return ret;	/* the callback's exit code */
	if (!info->complete && !in->warned++)
		warn_msg(CMD, "%s: incomplete record (no trailer); reporting what "
			 "is there", o->input);
	return EXIT_OK;
}

int report_read(const struct report_opts *o, rec_snapshot_cb cb, void *arg,
		struct rec_info *info)
{
	return read_filtered(o, cb, arg, info, NULL);
}

int report_read_mapped(const struct report_opts *o, rec_snapshot_cb cb, void *arg,
		       struct rec_info *info, struct mapped_now *maps)
{
	return read_filtered(o, cb, arg, info, maps);
}

int report_grow(void **p, size_t *cap, size_t need, size_t size)
{
	return grow_array(p, cap, need, size);
}

void report_input_free(struct report_input *in)
{
	if (in->spool)
		fclose(in->spool);
	free(in->win);
	memset(in, 0, sizeof(*in));
}

double report_freq(const struct rec_snapshot *s, const struct rec_region *r)
{
	double max = s->nr_samples;

	/* a window without a sample count (older records): its intervals */
	if (!max && s->sample_us)
		max = (double)s->aggr_us / s->sample_us;
	/*
	 * nr_accesses counts among the observed checks only: a check the
	 * module could not observe (nr_unobserved) is neither an access nor a
	 * miss, and dividing by every sample read such a region as colder
	 * than what was seen of it.  Wholly unobserved: 0, as before (the
	 * callers show it as unobservable).
	 */
	if (r->nr_unobserved < max)
		max -= r->nr_unobserved;
	else if (r->nr_unobserved)
		return 0;
	if (max <= 0)
		return 0;
	return r->nr_accesses >= max ? 100.0 : 100.0 * r->nr_accesses / max;
}

/* The last window read with a seq at or below @seq, or NULL. */
static const struct report_window *window_at(const struct report_input *in, uint64_t seq)
{
	size_t lo = 0, hi = in->nr_win;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (in->win[mid].seq <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &in->win[lo - 1] : NULL;
}

uint64_t report_age_ns(const struct report_opts *o, const struct rec_snapshot *s,
		       uint32_t age)
{
	const struct report_input *in = o->in;
	const struct report_window *w, *first;
	int64_t want = (int64_t)s->seq - age;	/* the window before the age began */
	uint64_t then;

	if (!age)
		return 0;
	if (!in || !in->nr_win)		/* one snapshot alone (daptrace top) */
		return (uint64_t)age * s->aggr_us * 1000;
	first = &in->win[0];
	w = want >= (int64_t)first->seq ? window_at(in, (uint64_t)want) : NULL;
	if (!w)		/* older than the record: at the first window's length */
		return (s->end_ns > first->end_ns ? s->end_ns - first->end_ns : 0) +
		       (uint64_t)((int64_t)first->seq - want) * first->aggr_us * 1000;
	/* windows missed after w: at its length */
	then = w->end_ns + ((uint64_t)want - w->seq) * w->aggr_us * 1000;
	return s->end_ns > then ? s->end_ns - then : 0;
}

int report_nothing(const struct report_opts *o, const char *what)
{
	const struct report_input *in = o->in;
	char range[128] = "";

	if (!in->nr_read)
		return fail(CMD, "%s: no snapshots in the record", o->input);
	if (!in->nr_kept) {
		if (o->until_s >= 0)
			snprintf(range, sizeof(range), "--since %g s --until %g s",
				 o->since_s, o->until_s);
		else
			snprintf(range, sizeof(range), "--since %g s", o->since_s);
		return fail(CMD, "%s: no snapshot ends within %s: the record's %" PRIu64
			    " snapshots end from %.3f to %.3f s", o->input, range,
			    in->nr_read, (double)in->first_ns / 1e9,
			    (double)in->last_ns / 1e9);
	}
	if ((o->addr_hi || o->label) && !in->regions_kept) {
		char a[80] = "";

		if (o->addr_hi)
			snprintf(a, sizeof(a), "--addr 0x%" PRIx64 "-0x%" PRIx64 "%s",
				 o->addr_lo, o->addr_hi, o->label ? " and " : "");
		return fail(CMD, "%s: no region matches %s%s%s%s (of %" PRIu64 " regions in "
			    "%" PRIu64 " snapshots)", o->input, a, o->label ? "--label '" : "",
			    o->label ? o->label : "", o->label ? "'" : "", in->regions_read,
			    in->nr_kept);
	}
	if (o->pid)
		return fail(CMD, "%s: no %s of pid %d in %" PRIu64 " snapshots", o->input,
			    what, (int)o->pid, in->nr_kept);
	return fail(CMD, "%s: no %s in %" PRIu64 " snapshots", o->input, what, in->nr_kept);
}

static int make_temp(char *path, size_t len, const char *what, FILE **f)
{
	int fd;

	snprintf(path, len, "%s/daptrace-%s-XXXXXX", temp_dir(), what);
	fd = mkstemp(path);
	if (fd < 0)
		return fail(CMD, "creating a temporary file %s: %s", path, strerror(errno));
	*f = fdopen(fd, "w+");	/* read back for --output */
	if (!*f) {
		close(fd);
		unlink(path);
		return fail(CMD, "fdopen: %s", strerror(errno));
	}
	return 0;
}

/* Is @path the record being read (a regular file)?  Writing it destroys it. */
static int is_input(const struct report_opts *o, const char *path)
{
	struct stat a, b;

	if (stat(path, &a) || !S_ISREG(a.st_mode))
		return 0;
	if (strcmp(o->input, "-") ? stat(o->input, &b) : fstat(STDIN_FILENO, &b))
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * --output is built in an anonymous temporary file (already unlinked:
 * nothing is left behind if the report is killed) and copied into the
 * output only once complete, so a record that cannot be read leaves an
 * existing file as it was.  The output itself is opened as fopen("w")
 * does: through a symlink, the same file truncated (its inode, owner,
 * links and attributes kept), or created.
 */
static int anon_temp(FILE **f)
{
	const char *dir = temp_dir();
	char path[4096];
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* a file system without O_TMPFILE: named for an instant */
		snprintf(path, sizeof(path), "%s/daptrace-report-XXXXXX", dir);
		fd = mkstemp(path);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0)
		return fail(CMD, "creating a temporary file in %s: %s", dir, strerror(errno));
	*f = fdopen(fd, "w+");
	if (!*f) {
		close(fd);
		return fail(CMD, "fdopen: %s", strerror(errno));
	}
	return 0;
}

/* The complete report in @from (open for reading too) into --output @path. */
static int copy_out(FILE *from, const char *path)
{
	char buf[65536];
	FILE *to;
	size_t n;
	int err = 0;

	if (fseek(from, 0, SEEK_SET))
		return fail(CMD, "reading the report back: %s", strerror(errno));
	to = fopen(path, "w");
	if (!to)
		return fail(CMD, "--output %s: %s", path, strerror(errno));
	/* truncated first: a write that fails (ENOSPC) leaves it cut, and says so */
	errno = 0;
	while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
		if (fwrite(buf, 1, n, to) != n)
			break;
	if (ferror(from) || ferror(to))
		err = errno ? errno : EIO;
	if (fclose(to) && !err)
		err = errno ? errno : EIO;
	return err ? fail(CMD, "--output %s: writing it: %s (it is incomplete)", path,
			  strerror(err)) : 0;
}

static int run_mode(const struct report_opts *o, const struct report_mode *m)
{
	char data[4096] = "", tics[4096] = "";
	FILE *out = stdout, *tf = NULL;
	int ret = 0;

	if (o->output && is_input(o, o->output))
		return bad_value(CMD, "--output", o->output, "that is the record being read");
	if (o->plot && is_input(o, o->plot))
		return bad_value(CMD, "--plot", o->plot, "that is the record being read");
	/* gnuplot reads the data by name; --output is a copy of it */
	if (o->plot)
		ret = make_temp(data, sizeof(data), "data", &out);
	else if (o->output)
		ret = anon_temp(&out);
	if (ret)
		return ret;
	if (o->plot) {
		ret = make_temp(tics, sizeof(tics), "tics", &tf);
		if (ret)
			goto out;
	}
	ret = m->fn(o, out, tf);
	if (out != stdout && fflush(out) && !ret)
		ret = fail(CMD, "writing %s: %s", data[0] ? data : "the report", strerror(errno));
	if (tf && fclose(tf) && !ret)
		ret = fail(CMD, "writing %s: %s", tics, strerror(errno));
	tf = NULL;
	if (!ret && o->plot) {
		ret = plot_run(o, m->script, data, tics, o->plot);
		if (!ret)
			fprintf(stderr, "%s %s: wrote %s\n", prog, CMD, o->plot);
	}
	if (!ret && o->output)
		ret = copy_out(out, o->output);
out:
	if (out != stdout)
		fclose(out);
	if (tf)
		fclose(tf);
	if (tics[0])
		unlink(tics);
	if (data[0])
		unlink(data);
	return ret;
}

/* "x.png" -> "x-<pid>.png" (the extension kept if there is one) */
static char *per_target_name(const char *name, pid_t pid)
{
	const char *dot = strrchr(name, '.'), *slash = strrchr(name, '/');
	char *s;

	if (!dot || (slash && dot < slash))
		dot = name + strlen(name);
	if (asprintf(&s, "%.*s-%d%s", (int)(dot - name), name, (int)pid, dot) < 0)
		return NULL;
	return s;
}

/*
 * A record of several targets: one heatmap per target (their address
 * spaces have nothing in common), to <name>-<pid>.<ext> for --plot and
 * --output, one after another on stdout (a JSON array with --json).  A
 * target without regions is skipped with a warning.
 */
static int heatmap_per_target(struct report_opts *o, const struct report_mode *m,
			      const struct rec_info *info)
{
	/* with --plot the data goes to a temporary file, not stdout */
	int to_stdout = !o->output && !o->plot, drawn = 0, ret = 0;

	if (o->json && to_stdout)
		printf("[\n");
	for (int i = 0; i < info->nr_targets && !ret; i++) {
		struct report_opts t = *o;
		char *plot = NULL, *output = NULL;

		t.pid = info->targets[i].pid;
		if (o->plot)
			t.plot = plot = per_target_name(o->plot, t.pid);
		if (o->output)
			t.output = output = per_target_name(o->output, t.pid);
		if ((o->plot && !plot) || (o->output && !output)) {
			ret = fail(CMD, "out of memory");
		} else {
			if (drawn && to_stdout)
				fputs(o->json ? ",\n" : "\n\n", stdout);
			fflush(stdout);
			if (!run_mode(&t, m))
				drawn++;
			else
				warn_msg(CMD, "no heatmap of pid %d", (int)t.pid);
		}
		free(plot);
		free(output);
	}
	if (o->json && to_stdout)
		printf("]\n");
	if (!ret && !drawn)
		ret = fail(CMD, "%s: no target had regions to draw", o->input);
	return ret;
}

static int nothing(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	(void)arg;
	(void)s;
	(void)info;
	return 0;
}

/*
 * The record's targets: all of it is read, as a process that joined later
 * has its #target row between snapshots.  A pid that is not one would be
 * reported as idle memory.
 */
static int read_targets(const struct report_opts *o, struct rec_info *info)
{
	int ret = report_read(o, nothing, NULL, info), found = 0;

	if (ret || !o->pid)
		return ret;
	for (int i = 0; i < info->nr_targets; i++)
		found |= info->targets[i].pid == o->pid;
	return found ? 0 : fail(CMD, "--pid %d: not a target of %s", (int)o->pid, o->input);
}

static int run(struct report_opts *o, const struct report_mode *m)
{
	struct report_input in = { 0 };
	struct rec_info info = { 0 };
	int ret = 0;

	o->in = &in;
	if (o->pid || m->fn == report_heatmap)
		ret = read_targets(o, &info);
	if (!ret && m->fn == report_heatmap && !o->pid && info.nr_targets > 1)
		ret = heatmap_per_target(o, m, &info);
	else if (!ret)
		ret = run_mode(o, m);
	rec_info_free(&info);
	report_input_free(&in);
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
	return run(&o, m);
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
	return run(&o, m);
}

int report_damo_write(const char *record, const char *out)
{
	struct report_opts o;
	const struct report_mode *m = NULL;
	char *argv[] = { "report", "damo", NULL };

	if (parse_opts(2, argv, &o, &m))
		return EXIT_FAIL;
	o.input = record;
	o.output = out;
	return run(&o, m);
}
