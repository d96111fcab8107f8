// SPDX-License-Identifier: GPL-2.0-only
/*
 * report hot: the hottest regions of one snapshot (default the last one,
 * or --at SEC), or with --by-label the labels ranked by access over the
 * whole record (byte-seconds weighted access frequency).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "units.h"

struct hot_region {
	struct rec_region r;
	double freq;
};

struct label_stat {
	char *label;
	double weighted;		/* sum of freq x bytes x seconds */
	double byte_s;			/* sum of bytes x seconds */
	uint64_t max_bytes;
};

struct hot {
	const struct report_opts *o;
	/* snapshot mode: the chosen snapshot, copied */
	struct hot_region *regions;
	uint32_t nr;
	uint64_t seq, end_ns;
	double best_dist;
	int have;
	/* label mode */
	struct label_stat *labels;
	size_t nl, lcap;
};

static void drop_regions(struct hot *h)
{
	for (uint32_t i = 0; i < h->nr; i++)
		free(h->regions[i].r.label);
	free(h->regions);
	h->regions = NULL;
	h->nr = 0;
}

static int keep_snapshot(struct hot *h, const struct rec_snapshot *s,
			 const struct rec_info *info)
{
	double t = (double)s->end_ns / 1e9;
	double dist = h->o->at_s < 0 ? -t : (t > h->o->at_s ? t - h->o->at_s :
					     h->o->at_s - t);
	uint32_t n = 0;

	if (h->have && dist > h->best_dist)	/* ties: the later one */
		return 0;
	drop_regions(h);
	h->regions = calloc(s->nr_regions ? s->nr_regions : 1, sizeof(*h->regions));
	if (!h->regions)
		return fail("report", "out of memory");
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];

		if (h->o->pid && r->pid != h->o->pid)
			continue;
		h->regions[n].r = *r;
		h->regions[n].r.label = strdup(r->label);
		h->regions[n].freq = report_freq(s, r, info);
		n++;
		if (!h->regions[n - 1].r.label) {
			h->nr = n - 1;
			return fail("report", "out of memory");
		}
	}
	h->nr = n;
	h->seq = s->seq;
	h->end_ns = s->end_ns;
	h->best_dist = dist;
	h->have = 1;
	return 0;
}

static struct label_stat *label_find(struct hot *h, const char *label)
{
	struct label_stat *l;

	for (size_t i = 0; i < h->nl; i++)
		if (!strcmp(h->labels[i].label, label))
			return &h->labels[i];
	if (h->nl == h->lcap) {
		size_t cap = h->lcap ? h->lcap * 2 : 64;

		l = realloc(h->labels, cap * sizeof(*l));
		if (!l)
			return NULL;
		h->labels = l;
		h->lcap = cap;
	}
	l = &h->labels[h->nl];
	memset(l, 0, sizeof(*l));
	l->label = strdup(label);
	if (!l->label)
		return NULL;
	h->nl++;
	return l;
}

static int by_label(struct hot *h, const struct rec_snapshot *s,
		    const struct rec_info *info)
{
	double secs = (double)(s->end_ns - s->start_ns) / 1e9;

	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		uint64_t bytes = r->end - r->start;
		struct label_stat *l;

		if (h->o->pid && r->pid != h->o->pid)
			continue;
		l = label_find(h, r->label);
		if (!l)
			return fail("report", "out of memory");
		l->weighted += report_freq(s, r, info) * (double)bytes * secs;
		l->byte_s += (double)bytes * secs;
		if (bytes > l->max_bytes)
			l->max_bytes = bytes;
	}
	return 0;
}

static int on_snapshot(void *arg, const struct rec_snapshot *s,
		       const struct rec_info *info)
{
	struct hot *h = arg;

	return h->o->by_label ? by_label(h, s, info) : keep_snapshot(h, s, info);
}

static int cmp_region(const void *a, const void *b)
{
	const struct hot_region *x = a, *y = b;

	if (x->freq != y->freq)
		return x->freq < y->freq ? 1 : -1;
	if (x->r.age != y->r.age)
		return x->r.age < y->r.age ? 1 : -1;
	return x->r.start < y->r.start ? -1 : x->r.start > y->r.start;
}

static int cmp_label(const void *a, const void *b)
{
	const struct label_stat *x = a, *y = b;
	double fx = x->byte_s > 0 ? x->weighted / x->byte_s : 0;
	double fy = y->byte_s > 0 ? y->weighted / y->byte_s : 0;

	if (fx != fy)
		return fx < fy ? 1 : -1;
	return strcmp(x->label, y->label);
}

int report_hot(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct hot h = { .o = o };
	struct rec_info info;
	char sz[32];
	int ret;

	(void)tics;
	ret = report_read(o, on_snapshot, &h, &info);
	if (ret)
		goto out;
	if (o->by_label) {
		qsort(h.labels, h.nl, sizeof(*h.labels), cmp_label);
		fprintf(out, "# labels of %s by access frequency over the record "
			"(weighted by bytes x time)\n", o->input);
		fprintf(out, "%-10s %-12s %s\n", "freq_%", "max_region", "label");
		for (size_t i = 0; i < h.nl && i < o->top; i++)
			fprintf(out, "%-10.2f %-12s %s\n", h.labels[i].byte_s > 0 ?
				h.labels[i].weighted / h.labels[i].byte_s : 0,
				fmt_bytes(h.labels[i].max_bytes, sz, sizeof(sz)),
				h.labels[i].label);
		goto out;
	}
	if (!h.have) {
		ret = fail("report", "%s: no snapshots", o->input);
		goto out;
	}
	qsort(h.regions, h.nr, sizeof(*h.regions), cmp_region);
	fprintf(out, "# hottest regions of snapshot seq %" PRIu64 " at %.3f s in %s\n",
		h.seq, (double)h.end_ns / 1e9, o->input);
	fprintf(out, "%-8s %-18s %-18s %-11s %-8s %-6s %s\n", "pid", "start", "end",
		"size", "freq_%", "age", "label");
	for (uint32_t i = 0; i < h.nr && i < o->top; i++) {
		const struct hot_region *r = &h.regions[i];

		fprintf(out, "%-8d 0x%-16" PRIx64 " 0x%-16" PRIx64 " %-11s %-8.2f %-6u %s\n",
			(int)r->r.pid, r->r.start, r->r.end,
			fmt_bytes(r->r.end - r->r.start, sz, sizeof(sz)), r->freq,
			r->r.age, r->r.label);
	}
out:
	drop_regions(&h);
	for (size_t i = 0; i < h.nl; i++)
		free(h.labels[i].label);
	free(h.labels);
	rec_info_free(&info);
	return ret;
}
