// SPDX-License-Identifier: GPL-2.0-only
/*
 * report hot: the hottest regions of one snapshot (report_pick.c: the last
 * one, or --at T), or with --by-label the labels ranked by access over the
 * whole record (byte-seconds weighted access frequency).
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/json_out.h"
#include "report.h"
#include "common/report_group.h"
#include "report_pick.h"
#include "common/units.h"

/* Per label (--by-label) or group (--by), in rgroup.v[] / u[]: */
enum { L_WEIGHTED, L_BYTE_S, L_UNOBS };	/* freq x bytes x s, bytes x s (observable), n/o */
enum { L_MAX_BYTES };

struct hot {
	const struct report_opts *o;
	struct pick pick;		/* snapshot mode */
	struct rgroups labels;		/* label or group mode */
	uint64_t span_ns;		/* the windows read, end to end */
};

static int by_label(struct hot *h, const struct rec_snapshot *s,
		    const struct rec_info *info)
{
	double secs = (double)(s->end_ns - s->start_ns) / 1e9;

	h->span_ns += s->end_ns - s->start_ns;
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		uint64_t bytes = r->end - r->start;
		struct rgroup *l;

		if (h->o->pid && r->pid != h->o->pid)
			continue;
		l = h->o->by ? rgroups_of(&h->labels, (enum report_by)h->o->by, info, r->pid) :
			       rgroups_get(&h->labels, r->label);
		if (!l)
			return fail("report", "out of memory");
		if (!rec_observable(r)) {
			l->v[L_UNOBS] += (double)bytes * secs;
		} else {
			l->v[L_WEIGHTED] += report_freq(s, r) * (double)bytes * secs;
			l->v[L_BYTE_S] += (double)bytes * secs;
		}
		if (bytes > l->u[L_MAX_BYTES])
			l->u[L_MAX_BYTES] = bytes;
	}
	return 0;
}

static int on_snapshot(void *arg, const struct rec_snapshot *s,
		       const struct rec_info *info)
{
	struct hot *h = arg;

	return h->o->by_label || h->o->by ? by_label(h, s, info) : pick_offer(&h->pick, s, info);
}

static int cmp_region(const void *a, const void *b)
{
	const struct picked_region *x = a, *y = b;

	if (x->freq != y->freq)
		return x->freq < y->freq ? 1 : -1;
	/* an unknown age last: it is no age of 0 */
	if (x->r.age_unknown != y->r.age_unknown)
		return x->r.age_unknown ? 1 : -1;
	if (x->age_ns != y->age_ns)
		return x->age_ns < y->age_ns ? 1 : -1;
	return x->r.start < y->r.start ? -1 : x->r.start > y->r.start;
}

static double mean_freq(const struct rgroup *l)
{
	return l->v[L_BYTE_S] > 0 ? l->v[L_WEIGHTED] / l->v[L_BYTE_S] : -1;
}

static int cmp_label(const void *a, const void *b)
{
	const struct rgroup *x = a, *y = b;
	double fx = mean_freq(x), fy = mean_freq(y);

	if (fx != fy)
		return fx < fy ? 1 : -1;
	return strcmp(x->key, y->key);
}

/* "12.34", or "n/o" for memory that cannot be observed (@f < 0) */
static const char *fmt_freq(double f, char *buf, size_t len)
{
	if (f < 0)
		snprintf(buf, len, "n/o");
	else
		snprintf(buf, len, "%.2f", f);
	return buf;
}

static void print_labels(const struct report_opts *o, struct hot *h, FILE *out)
{
	const char *what = o->by ? report_by_name((enum report_by)o->by) : "label";
	struct json_object *j = NULL, *arr = NULL;
	char sz[32], fs[16], mb[32];

	if (o->json) {
		j = json_object_new_object();
		arr = json_object_new_array();
		json_object_object_add(j, "record", json_object_new_string(o->input));
		if (o->by)
			json_object_object_add(j, "by", json_object_new_string(what));
		json_object_object_add(j, o->by ? "groups" : "labels", arr);
	} else if (o->by) {
		fprintf(out, "# %s of %s by access frequency over the record (weighted by "
			"bytes x time)\n", what, o->input);
		fprintf(out, "%-10s %-14s %-12s %6s %s\n", "freq_%", "mean_bytes", "max_region",
			"procs", what);
	} else {
		fprintf(out, "# labels of %s by access frequency over the record "
			"(weighted by bytes x time)\n", o->input);
		fprintf(out, "%-10s %-12s %s\n", "freq_%", "max_region", "label");
	}
	for (size_t i = 0; i < h->labels.n && i < o->top; i++) {
		const struct rgroup *l = &h->labels.g[i];
		double f = mean_freq(l), span = (double)h->span_ns / 1e9;
		struct json_object *e;

		if (!o->json && o->by) {
			/* bytes x s over the record's span: its mean observable size */
			fprintf(out, "%-10s %-14s %-12s %6" PRIu64 " %s%s\n",
				fmt_freq(f, fs, sizeof(fs)),
				fmt_bytes(span > 0 ? u64_of(l->v[L_BYTE_S] / span) : 0, mb,
					  sizeof(mb)),
				fmt_bytes(l->u[L_MAX_BYTES], sz, sizeof(sz)), l->nr_procs, l->key,
				l->v[L_UNOBS] > 0 ? " (partly not observable)" : "");
			continue;
		}
		if (!o->json) {
			fprintf(out, "%-10s %-12s %s%s\n", fmt_freq(f, fs, sizeof(fs)),
				fmt_bytes(l->u[L_MAX_BYTES], sz, sizeof(sz)), l->key,
				l->v[L_UNOBS] > 0 && f >= 0 ? " (partly not observable)" : "");
			continue;
		}
		e = json_object_new_object();
		json_object_object_add(e, o->by ? "group" : "label", json_object_new_string(l->key));
		if (o->by) {
			json_object_object_add(e, "processes", json_object_new_uint64(l->nr_procs));
			json_object_object_add(e, "mean_bytes", json_bytes(span > 0 ?
					       l->v[L_BYTE_S] / span : 0));
		}
		/* null: none of it could be observed */
		json_object_object_add(e, "freq_percent", f < 0 ? NULL : json_percent(f));
		json_object_object_add(e, "not_observable_share_percent",
				       json_percent(100 * l->v[L_UNOBS] /
						    (l->v[L_UNOBS] + l->v[L_BYTE_S])));
		json_object_object_add(e, "max_region_bytes",
				       json_object_new_uint64(l->u[L_MAX_BYTES]));
		json_object_array_add(arr, e);
	}
	if (j)
		json_out(out, j, 1);
}

static void print_regions(const struct report_opts *o, const struct pick *h, FILE *out)
{
	struct json_object *j = NULL, *arr = NULL;
	char sz[32], age[32], fs[16];

	if (o->json) {
		j = json_object_new_object();
		arr = json_object_new_array();
		json_object_object_add(j, "record", json_object_new_string(o->input));
		json_object_object_add(j, "seq", json_object_new_uint64(h->seq));
		json_object_object_add(j, "time_s", json_seconds((double)h->end_ns / 1e9));
		json_object_object_add(j, "regions", arr);
	} else {
		uint64_t unknown = 0;
		int unobs = 0;

		for (uint32_t i = 0; i < h->nr; i++) {
			unobs |= i < o->top && h->regions[i].freq < 0;
			if (h->regions[i].r.age_unknown)
				unknown += h->regions[i].r.end - h->regions[i].r.start;
		}
		fprintf(out, "# hottest regions of snapshot seq %" PRIu64 " at %.3f s in %s%s\n",
			h->seq, (double)h->end_ns / 1e9, o->input,
			unobs ? " (n/o: memory that cannot be observed)" : "");
		if (unknown)
			fprintf(out, "# age unknown (the source has none) for %s\n",
				fmt_bytes(unknown, sz, sizeof(sz)));
		fprintf(out, "%-8s %-18s %-18s %-11s %-8s %-9s %s\n", "pid", "start", "end",
			"size", "freq_%", "age", "label");
	}
	for (uint32_t i = 0; i < h->nr && i < o->top; i++) {
		const struct picked_region *r = &h->regions[i];
		struct json_object *e;

		if (!o->json) {
			fprintf(out, "%-8d 0x%-16" PRIx64 " 0x%-16" PRIx64 " %-11s %-8s "
				"%-9s %s\n", (int)r->r.pid, r->r.start, r->r.end,
				fmt_bytes(r->r.end - r->r.start, sz, sizeof(sz)),
				fmt_freq(r->freq, fs, sizeof(fs)),
				r->r.age_unknown ? "unknown" : fmt_secs(r->age_ns, age, sizeof(age)),
				r->r.label);
			continue;
		}
		e = json_object_new_object();
		json_object_object_add(e, "pid", json_object_new_int(r->r.pid));
		json_object_object_add(e, "start", json_object_new_uint64(r->r.start));
		json_object_object_add(e, "end", json_object_new_uint64(r->r.end));
		json_object_object_add(e, "nr_accesses", json_object_new_uint64(r->r.nr_accesses));
		json_object_object_add(e, "freq_percent", r->freq < 0 ? NULL :
				       json_percent(r->freq));
		json_object_object_add(e, "observable", json_object_new_boolean(r->freq >= 0));
		/* null: not known */
		json_object_object_add(e, "age_windows", r->r.age_unknown ? NULL :
				       json_object_new_uint64(r->r.age));
		json_object_object_add(e, "age_s", r->r.age_unknown ? NULL :
				       json_seconds((double)r->age_ns / 1e9));
		json_object_object_add(e, "label", json_object_new_string(r->r.label));
		json_object_array_add(arr, e);
	}
	if (j)
		json_out(out, j, 1);
}

int report_hot(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct hot h = { .o = o, .pick = { .o = o } };
	struct rec_info info;
	int ret;

	(void)tics;
	ret = report_read(o, on_snapshot, &h, &info);
	if (ret)
		goto out;
	if (o->by_label || o->by) {
		if (!h.labels.n) {
			ret = report_nothing(o, "regions");
			goto out;
		}
		qsort(h.labels.g, h.labels.n, sizeof(*h.labels.g), cmp_label);
		print_labels(o, &h, out);
		goto out;
	}
	ret = pick_done(&h.pick);
	if (ret)
		goto out;
	qsort(h.pick.regions, h.pick.nr, sizeof(*h.pick.regions), cmp_region);
	print_regions(o, &h.pick, out);
out:
	pick_free(&h.pick);
	rgroups_free(&h.labels);
	rec_info_free(&info);
	return ret;
}

int report_hot_snapshot(const struct report_opts *o, const struct rec_snapshot *s,
			const struct rec_info *info, FILE *out)
{
	struct pick p = { .o = o };
	int ret = pick_offer(&p, s, info);

	if (!ret) {
		if (p.nr)
			qsort(p.regions, p.nr, sizeof(*p.regions), cmp_region);
		print_regions(o, &p, out);
	}
	pick_free(&p);
	return ret;
}
