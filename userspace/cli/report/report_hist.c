// SPDX-License-Identifier: GPL-2.0-only
/*
 * report hist: how the memory was used over the record, as two histograms
 * (damo report access / age style): bytes x seconds by access frequency
 * (ten 10 % buckets, 0 % apart), and by age (how long a region kept its
 * access level, in power-of-two multiples of the first window's length:
 * ages are in time, as windows may change length while recording).  The
 * "share" columns are of the total bytes x seconds.  A region's bytes are
 * those inside its target's mappings (the record's #maps rows,
 * report_mapped.h): the holes between mappings are not memory.  Where the
 * record has no map of a target (older records, imports), its regions go
 * by their label, "[unmapped]" ones left out and the others counted whole,
 * and the report says how much it counted so.  Memory that cannot be
 * observed is left out.
 * Memory of unknown age (imported from a source without ages) is in no age
 * bucket but a row "unknown" of its own, never in "0 s".
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/json_out.h"
#include "report.h"
#include "report_mapped.h"
#include "common/report_group.h"
#include "common/units.h"

#define FREQ_BUCKETS	11	/* 0 %, then (0,10], (10,20] ... (90,100] */
#define AGE_BUCKETS	33	/* 0, [1, 2), [2, 4) ... windows of base_ns */

struct hist {
	const struct report_opts *o;
	double freq[FREQ_BUCKETS];	/* bytes x seconds */
	double age[AGE_BUCKETS];
	double total;
	double seconds;			/* monitored time: the sum of the windows */
	uint64_t base_ns;		/* the first window's aggregation interval */
	double unobservable;		/* bytes x seconds not observable */
	double age_unknown;		/* bytes x seconds of unknown age */
	double mapping_unknown;		/* bytes x seconds counted by their label */
	struct mapped_now maps;		/* the targets' maps in force */
};

/*
 * 0: the level changed in the last window; else 1 + log2 of the age in
 * windows of base_ns, rounded to whole windows (real windows are a little
 * longer or shorter than the interval; a constant interval gives the
 * kernel's own count).
 */
static unsigned int age_bucket(const struct hist *h, uint32_t age, uint64_t age_ns)
{
	uint64_t w;

	if (!age)
		return 0;
	w = h->base_ns ? (age_ns + h->base_ns / 2) / h->base_ns : age;
	if (!w)
		w = 1;
	w = 64 - (uint64_t)__builtin_clzll(w);
	return w >= AGE_BUCKETS ? AGE_BUCKETS - 1 : (unsigned int)w;
}

static int add(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct hist *h = arg;
	double secs = (double)(s->end_ns - s->start_ns) / 1e9;

	if (!h->base_ns)
		h->base_ns = (uint64_t)h->o->in->win[0].aggr_us * 1000;
	h->seconds += secs;
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		unsigned int fb;
		uint64_t mem;
		double f, w;
		int known;

		if (h->o->pid && r->pid != h->o->pid)
			continue;
		/* holes between mappings are monitored, but are not memory */
		known = mapped_memory(&h->maps, info, r, &mem);
		w = (double)mem * secs;
		if (!known)
			h->mapping_unknown += w;
		if (!w)
			continue;
		if (!rec_observable(r)) {
			h->unobservable += w;
			continue;
		}
		f = report_freq(s, r);
		fb = f <= 0 ? 0 : f >= 100 ? 10 : 1 + (unsigned int)((f - 1e-9) / 10);
		h->freq[fb] += w;
		if (r->age_unknown)
			h->age_unknown += w;
		else
			h->age[age_bucket(h, r->age, report_age_ns(h->o, s, r->age))] += w;
		h->total += w;
	}
	return 0;
}

/* The lower bound of age bucket @b in seconds. */
static double age_lo_s(const struct hist *h, unsigned int b)
{
	return b ? (double)(1ull << (b - 1)) * (double)h->base_ns / 1e9 : 0;
}

static void bucket_name(const struct hist *h, char *buf, size_t len, int freq,
			unsigned int b)
{
	if (freq)
		snprintf(buf, len, b ? "%u-%u%%" : "0%%", (b - 1) * 10, b * 10);
	else if (!b)
		snprintf(buf, len, "0 s");
	else if (b == AGE_BUCKETS - 1)
		snprintf(buf, len, ">= %.3g s", age_lo_s(h, b));
	else
		snprintf(buf, len, "%.3g-%.3g s", age_lo_s(h, b), age_lo_s(h, b + 1));
}

static void print_one(const struct hist *h, FILE *out, int freq, struct json_object *arr)
{
	const double *v = freq ? h->freq : h->age;
	unsigned int n = freq ? FREQ_BUCKETS : AGE_BUCKETS;
	char name[32], avg[32];

	if (!arr)
		fprintf(out, "%-14s %-12s %7s\n", freq ? "access_freq" : "age", "avg_bytes",
			"share");
	for (unsigned int b = 0; b < n; b++) {
		double share = h->total > 0 ? v[b] / h->total * 100 : 0;
		/* bytes x seconds over the monitored seconds: the average bytes */
		double bytes = h->seconds > 0 ? v[b] / h->seconds : 0;

		if (!v[b])
			continue;
		bucket_name(h, name, sizeof(name), freq, b);
		if (arr) {
			struct json_object *e = json_object_new_object();

			json_object_object_add(e, "bucket", json_object_new_string(name));
			json_object_object_add(e, "avg_bytes", json_bytes(bytes));
			json_object_object_add(e, "share_percent", json_percent(share));
			if (!freq)
				json_object_object_add(e, "min_age_s", json_seconds(age_lo_s(h, b)));
			json_object_array_add(arr, e);
			continue;
		}
		fprintf(out, "%-14s %-12s %6.2f%%\n", name,
			fmt_bytes(u64_of(bytes), avg, sizeof(avg)), share);
	}
	if (!freq && !arr && h->age_unknown > 0)
		fprintf(out, "%-14s %-12s %6.2f%%\n", "unknown",
			fmt_bytes(u64_of(h->age_unknown / h->seconds), avg, sizeof(avg)),
			h->age_unknown / h->total * 100);
}

int report_hist(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct hist h = { .o = o };
	struct rec_info info;
	double unobs, unknown;
	char sz[32];
	int ret;

	(void)tics;
	ret = report_read_mapped(o, add, &h, &info, &h.maps);
	if (ret)
		goto out;
	if (h.total <= 0 && h.unobservable <= 0) {
		ret = report_nothing(o, "regions");
		goto out;
	}
	unobs = h.seconds > 0 ? h.unobservable / h.seconds : 0;
	unknown = h.seconds > 0 ? h.mapping_unknown / h.seconds : 0;
	if (o->json) {
		struct json_object *j = json_object_new_object();
		struct json_object *f = json_object_new_array(), *a = json_object_new_array();

		json_object_object_add(j, "record", json_object_new_string(o->input));
		json_object_object_add(j, "seconds", json_seconds(h.seconds));
		json_object_object_add(j, "not_observable_avg_bytes", json_bytes(unobs));
		print_one(&h, out, 1, f);
		print_one(&h, out, 0, a);
		json_object_object_add(j, "access_frequency", f);
		json_object_object_add(j, "age", a);
		json_object_object_add(j, "age_unknown_avg_bytes",
				       json_bytes(h.seconds > 0 ? h.age_unknown / h.seconds : 0));
		json_object_object_add(j, "age_unknown_share_percent",
				       json_percent(h.total > 0 ? h.age_unknown / h.total * 100 : 0));
		json_object_object_add(j, "mapping_unknown_avg_bytes", json_bytes(unknown));
		json_out(out, j, 1);
		goto out;
	}
	fprintf(out, "# memory of %s by access frequency and by age, over %.1f s of "
		"windows%s\n", o->input, h.seconds, o->pid ? " (one pid)" : "");
	if (h.unobservable > 0)
		fprintf(out, "# not observable (left out): %s on average\n",
			fmt_bytes(unobs >= 0x1p64 ? UINT64_MAX : (uint64_t)unobs, sz, sizeof(sz)));
	if (h.mapping_unknown > 0)
		fprintf(out, "# mapping unknown (no maps of the target in the record): %s on "
			"average counted by the region's label, holes between mappings "
			"included\n", fmt_bytes(u64_of(unknown), sz, sizeof(sz)));
	print_one(&h, out, 1, NULL);
	fputc('\n', out);
	print_one(&h, out, 0, NULL);
out:
	mapped_now_free(&h.maps);
	rec_info_free(&info);
	return ret;
}
