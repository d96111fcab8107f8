// SPDX-License-Identifier: GPL-2.0-only
/*
 * report footprints: the distribution of the targets' memory footprints,
 * as damo report footprints prints it (its damo_report_footprint.py and
 * _damo_dist.py): per metric, the VSZ and the RSS summed over the live
 * targets of each window (the record's #footprint rows, report_fp.h), the
 * average, and the value at percentiles 0, 25, 50, 75 and 100 of the
 * windows sorted by size (--sortby size, damo's default) or in time order
 * (--sortby time: the value at that share of the run), with a bar of
 * damo's 59 columns; --all-footprints lists every window's value instead.
 * Sizes are written as damo's format_sz writes them ("1.500 MiB"), or as
 * bytes with --raw-number.  damo's third metric, sys_used (the machine's
 * used memory), is not in a daptrace record.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/json_out.h"
#include "report.h"
#include "report_fp.h"
#include "common/report_group.h"

#define NR_COLS_BAR	59	/* damo's --nr_cols_bar default */

static const unsigned int percentiles[] = { 0, 25, 50, 75, 100 };	/* damo's --range 0 101 25 */
#define NR_PCT	(sizeof(percentiles) / sizeof(percentiles[0]))

static const char *const metric_names[] = { "vsz", "rss" };

struct footprints {
	const struct report_opts *o;
	struct fp_now now;
	uint64_t *v[2];			/* per window with a footprint: vsz, rss */
	size_t n, cap;
	uint64_t windows;		/* read, with a footprint or not */
};

static int add(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct footprints *f = arg;
	uint64_t vsz = 0, rss = 0;
	int any = 0;

	f->windows++;
	if (fp_now_update(&f->now, s, info))
		return EXIT_FAIL;
	for (size_t i = 0; i < f->now.nr; i++) {
		if (f->o->pid && f->now.fp[i].pid != f->o->pid)
			continue;
		vsz += f->now.fp[i].vsz;
		rss += f->now.fp[i].rss;
		any = 1;
	}
	if (!any)
		return 0;	/* a window without a footprint: none to count */
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 1024;
		uint64_t *a = realloc(f->v[0], cap * sizeof(*a)), *b;

		if (a)
			f->v[0] = a;
		b = realloc(f->v[1], cap * sizeof(*b));
		if (b)
			f->v[1] = b;
		if (!a || !b)
			return fail("report", "out of memory");
		f->cap = cap;
	}
	f->v[0][f->n] = vsz;
	f->v[1][f->n] = rss;
	f->n++;
	return 0;
}

/* damo's format_sz(): "%.3f <unit>" above each power of 1024, else "%d B" */
static const char *damo_sz(const struct report_opts *o, double b, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };

	if (o->raw_number) {
		snprintf(buf, len, "%" PRIu64, u64_of(b));
		return buf;
	}
	for (int u = 5; u >= 0; u--) {
		double unit = (double)(1ull << (10 * (u + 1)));

		if (b > unit) {
			snprintf(buf, len, "%.3f %s", b / unit, units[u]);
			return buf;
		}
	}
	snprintf(buf, len, "%" PRIu64 " B", u64_of(b));
	return buf;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One metric's values in the order asked for, their average. */
static double order(const struct report_opts *o, const uint64_t *v, size_t n, uint64_t *out)
{
	double sum = 0;

	memcpy(out, v, n * sizeof(*v));
	if (!o->fp_by_time)
		qsort(out, n, sizeof(*out), cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += (double)out[i];
	return sum / (double)n;
}

static void print_metric(const struct report_opts *o, const char *name, const uint64_t *v,
			 size_t n, double avg, FILE *out)
{
	uint64_t max = 0, val;
	char b[48];

	fprintf(out, "# <percentile> <%s>\n# avr:\t%s\n", name, damo_sz(o, avg, b, sizeof(b)));
	if (o->fp_all) {
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%zu %s\n", i, damo_sz(o, (double)v[i], b, sizeof(b)));
		return;
	}
	for (size_t k = 0; k < NR_PCT; k++) {
		val = report_percentile(o->pct_damo, v, n, percentiles[k]);
		max = val > max ? val : max;
	}
	for (size_t k = 0; k < NR_PCT; k++) {
		unsigned int cols;

		val = report_percentile(o->pct_damo, v, n, percentiles[k]);
		cols = max ? (unsigned int)((double)val / ((double)max / NR_COLS_BAR)) : 0;
		cols = cols > NR_COLS_BAR ? NR_COLS_BAR : cols;
		fprintf(out, "%3u %15s |%.*s%*s|\n", percentiles[k],
			damo_sz(o, (double)val, b, sizeof(b)), (int)cols,
			"***********************************************************",
			(int)(NR_COLS_BAR - cols), "");
	}
}

static struct json_object *metric_json(const struct report_opts *o, const uint64_t *v,
				       size_t n, double avg)
{
	struct json_object *m = json_object_new_object(), *p = json_object_new_object();
	char key[8];

	json_object_object_add(m, "avg_bytes", json_bytes(avg));
	for (size_t k = 0; k < NR_PCT; k++) {
		snprintf(key, sizeof(key), "p%u", percentiles[k]);
		json_object_object_add(p, key, json_object_new_uint64(
				       report_percentile(o->pct_damo, v, n, percentiles[k])));
	}
	json_object_object_add(m, "percentiles", p);
	if (o->fp_all) {
		struct json_object *a = json_object_new_array();

		for (size_t i = 0; i < n; i++)
			json_object_array_add(a, json_object_new_uint64(v[i]));
		json_object_object_add(m, "values", a);
	}
	return m;
}

int report_footprints(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct footprints f = { .o = o };
	struct json_object *j = NULL, *ms = NULL;
	struct rec_info info;
	uint64_t *sorted = NULL;
	int ret;

	(void)tics;
	ret = report_read(o, add, &f, &info);
	if (ret)
		goto out;
	if (!f.n) {
		if (f.windows && !o->pid)
			ret = fail("report", "%s: no footprints in its %" PRIu64 " windows (a "
				   "record of daptrace before footprints, or imported: damo keeps "
				   "them in a file of its own, <record>.mem_footprint)", o->input,
				   f.windows);
		else
			ret = report_nothing(o, "footprints");
		goto out;
	}
	sorted = malloc(f.n * sizeof(*sorted));
	if (!sorted) {
		ret = fail("report", "out of memory");
		goto out;
	}
	if (o->json) {
		j = json_object_new_object();
		ms = json_object_new_object();
		json_object_object_add(j, "record", json_object_new_string(o->input));
		json_object_object_add(j, "windows", json_object_new_uint64(f.n));
		json_object_object_add(j, "windows_without_footprint",
				       json_object_new_uint64(f.windows - f.n));
		json_object_object_add(j, "sortby", json_object_new_string(
				       o->fp_by_time ? "time" : "size"));
		json_object_object_add(j, "percentile_method", json_object_new_string(
				       o->pct_damo ? "damo" : "nearest"));
		json_object_object_add(j, "metrics", ms);
	}
	for (int m = 0; m < 2; m++) {
		double avg;

		if (!(o->fp_metrics & (1 << m)))
			continue;
		avg = order(o, f.v[m], f.n, sorted);
		if (j)
			json_object_object_add(ms, metric_names[m], metric_json(o, sorted, f.n, avg));
		else
			print_metric(o, metric_names[m], sorted, f.n, avg, out);
	}
	if (j)
		json_out(out, j, 1);
out:
	free(sorted);
	free(f.v[0]);
	free(f.v[1]);
	fp_now_free(&f.now);
	rec_info_free(&info);
	return ret;
}
