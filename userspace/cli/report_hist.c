// SPDX-License-Identifier: GPL-2.0-only
/*
 * report hist: how the memory was used over the record, as two histograms
 * (damo report access / age style): bytes x seconds by access frequency
 * (ten 10 % buckets, 0 % apart), and by age (the windows a region kept its
 * access level, in power-of-two buckets of the aggregation interval).  The
 * "share" columns are of the total bytes x seconds; "[unmapped]" regions
 * (holes between mappings) are left out.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "units.h"

#define FREQ_BUCKETS	11	/* 0 %, then (0,10], (10,20] ... (90,100] */
#define AGE_BUCKETS	33	/* 0, 1, 2-3, 4-7 ... 2^31 and more */

struct hist {
	const struct report_opts *o;
	double freq[FREQ_BUCKETS];	/* bytes x seconds */
	double age[AGE_BUCKETS];
	double total;
	double seconds;			/* monitored time: the sum of the windows */
};

static unsigned int age_bucket(uint32_t age)
{
	return age ? 1 + (unsigned int)(31 - __builtin_clz(age)) : 0;
}

static int add(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct hist *h = arg;
	double secs = (double)(s->end_ns - s->start_ns) / 1e9;

	h->seconds += secs;
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		double f, w;
		unsigned int fb;

		/* holes between mappings are monitored, but are not memory */
		if ((h->o->pid && r->pid != h->o->pid) || !strcmp(r->label, "[unmapped]"))
			continue;
		f = report_freq(s, r, info);
		w = (double)(r->end - r->start) * secs;
		fb = f <= 0 ? 0 : f >= 100 ? 10 : 1 + (unsigned int)((f - 1e-9) / 10);
		h->freq[fb] += w;
		h->age[age_bucket(r->age)] += w;
		h->total += w;
	}
	return 0;
}

static void bucket_name(char *buf, size_t len, int freq, unsigned int b)
{
	if (freq)
		snprintf(buf, len, b ? "%u-%u%%" : "0%%", (b - 1) * 10, b * 10);
	else if (b < 2)
		snprintf(buf, len, "%u", b);
	else
		snprintf(buf, len, "%u-%u", 1u << (b - 1), b < 32 ? (1u << b) - 1 : UINT32_MAX);
}

static void print_one(const struct hist *h, FILE *out, int freq, double aggr_s,
		      struct json_object *arr)
{
	const double *v = freq ? h->freq : h->age;
	unsigned int n = freq ? FREQ_BUCKETS : AGE_BUCKETS;
	char name[32], avg[32];

	if (!arr)
		fprintf(out, "%-14s %-12s %7s%s\n", freq ? "access_freq" : "age_windows",
			"avg_bytes", "share", freq ? "" : "  age");
	for (unsigned int b = 0; b < n; b++) {
		double share = h->total > 0 ? v[b] / h->total * 100 : 0;
		/* bytes x seconds over the monitored seconds: the average bytes */
		double bytes = h->seconds > 0 ? v[b] / h->seconds : 0;
		double lo_s = (b < 2 ? b : (double)(1u << (b - 1))) * aggr_s;

		if (!v[b])
			continue;
		bucket_name(name, sizeof(name), freq, b);
		if (arr) {
			struct json_object *e = json_object_new_object();

			json_object_object_add(e, "bucket", json_object_new_string(name));
			json_object_object_add(e, "avg_bytes", json_object_new_double(bytes));
			json_object_object_add(e, "share_percent", json_object_new_double(share));
			if (!freq)
				json_object_object_add(e, "min_age_s", json_object_new_double(lo_s));
			json_object_array_add(arr, e);
			continue;
		}
		fprintf(out, "%-14s %-12s %6.2f%%", name,
			fmt_bytes(bytes >= 0x1p64 ? UINT64_MAX : (uint64_t)bytes, avg,
				  sizeof(avg)), share);
		if (!freq && aggr_s > 0)
			fprintf(out, "  >= %.3g s", lo_s);
		fputc('\n', out);
	}
}

int report_hist(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct hist h = { .o = o };
	struct rec_info info;
	const char *aggr;
	double aggr_s;
	int ret;

	(void)tics;
	ret = report_read(o, add, &h, &info);
	if (ret)
		goto out;
	if (h.total <= 0) {
		ret = fail("report", "%s: no regions%s", o->input, o->pid ? " of that pid" : "");
		goto out;
	}
	aggr = rec_info_get(&info, "aggr_us");
	aggr_s = aggr ? atof(aggr) / 1e6 : 0;
	if (o->json) {
		struct json_object *j = json_object_new_object();
		struct json_object *f = json_object_new_array(), *a = json_object_new_array();

		json_object_object_add(j, "record", json_object_new_string(o->input));
		json_object_object_add(j, "seconds", json_object_new_double(h.seconds));
		print_one(&h, out, 1, aggr_s, f);
		print_one(&h, out, 0, aggr_s, a);
		json_object_object_add(j, "access_frequency", f);
		json_object_object_add(j, "age", a);
		fprintf(out, "%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
								      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(j);
		goto out;
	}
	fprintf(out, "# memory of %s by access frequency and by age, over %.1f s of "
		"windows%s\n", o->input, h.seconds, o->pid ? " (one pid)" : "");
	print_one(&h, out, 1, aggr_s, NULL);
	fputc('\n', out);
	print_one(&h, out, 0, aggr_s, NULL);
out:
	rec_info_free(&info);
	return ret;
}
