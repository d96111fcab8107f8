// SPDX-License-Identifier: GPL-2.0-only
/*
 * report wss / regions: one value per snapshot over time.
 * WSS of a snapshot = bytes of the regions with nr_accesses >= --threshold
 * (all targets, or --pid) that lie inside the target's mappings: a coarse
 * region straddles the holes between mappings, which are no memory
 * (report_mapped.h).  Where the record has no map of a target (older
 * records, imports) its regions count whole, and those bytes are said
 * (mapping_unknown).  Memory that cannot be observed is never in it and
 * is counted apart.  Next to it the targets' footprints, RSS and VSZ,
 * when the record has them.  Percentiles use the nearest-rank method, or
 * with --percentile-method damo damo's floor index (its _damo_dist.py:
 * sorted[int(p / 100.0 * n)], the last one for p100); they differ when
 * n * p / 100 is whole.  --skip N leaves out the first N snapshots as
 * damo's --exclude_samples does (20 by default in damo, 0 here).  The
 * distribution table lists every tenth one (damo report wss style).
 * With the module's accuracy probes in the record (#probes rows), the
 * estimated recall of accessed memory over the record (all targets, also
 * with --pid) heads the report, with a warning below ACC_DEF_WARN_RECALL,
 * and JSON gives it, and each point the estimate pooled over the windows
 * before it (accuracy.h).
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/accuracy.h"
#include "cli.h"
#include "common/json_out.h"
#include "report.h"
#include "report_fp.h"
#include "report_mapped.h"
#include "common/report_group.h"
#include "common/units.h"

/* Per group (--by), in rgroup.v[] (over the record) and u[] (bytes now): */
enum { G_WSS_SUM, G_WSS_MAX, G_OBS_MAX, G_UNOBS_MAX, G_RSS_MAX, G_UNKNOWN_MAX };
enum {
	G_SNAPSHOTS, G_WSS_LAST, G_TOUCHED, G_HAS_RSS, G_WSS_NOW, G_OBS_NOW, G_UNOBS_NOW,
	G_RSS_NOW, G_UNKNOWN_NOW,
};

struct series {
	const struct report_opts *o;
	int wss;			/* 1: wss, 0: region count */
	double *t;
	uint64_t *v, *missed;
	uint64_t *unobs;		/* bytes not observable */
	uint64_t *unknown;		/* in the wss, counted whole: no map known */
	double *rss, *vsz;		/* NaN: no footprint in that window */
	struct acc_total acc;		/* the probes of the windows reported */
	struct acc_pool *pool;		/* the last second's, for each point */
	struct acc_estimate *est;	/* each point's, if has_acc */
	int has_acc;
	size_t n, cap;
	uint64_t seen;			/* snapshots read, --skip ones too */
	int has_unobs, has_fp;
	size_t nr_unknown;		/* snapshots with unknown > 0 */
	struct fp_now fp;		/* the footprints in force */
	struct mapped_now maps;		/* the targets' maps in force */
	/* --by */
	struct rgroups groups;
	size_t *touched;		/* groups with regions in this snapshot */
	size_t nr_touched, touched_cap;
};

/* A snapshot's bytes (of a group, or of all targets or --pid). */
struct sized {
	uint64_t wss, obs, unobs, unknown;
};

/*
 * Add @r to @z: its bytes inside its target's mappings are in the working
 * set if it was accessed enough, and monitored if it can be observed.  A
 * region of a target whose map the record lacks counts whole, and is
 * noted as such (monitored: unless labelled "[unmapped]", as before maps).
 */
static void size_region(const struct series *ser, const struct rec_info *info,
			const struct rec_region *r, struct sized *z)
{
	uint64_t whole = r->end - r->start, mem;
	int known = mapped_memory(&ser->maps, info, r, &mem);

	if (!rec_observable(r)) {
		z->unobs = u64_add_sat(z->unobs, whole);
		return;
	}
	z->obs = u64_add_sat(z->obs, mem);
	if (r->nr_accesses < ser->o->threshold)
		return;
	z->wss = u64_add_sat(z->wss, known ? mem : whole);
	if (!known)
		z->unknown = u64_add_sat(z->unknown, whole);
}

/* --by: this snapshot's numbers of one group, kept and folded in at its end. */
static struct rgroup *touch(struct series *ser, const struct rec_info *info, pid_t pid)
{
	struct rgroup *g = rgroups_of(&ser->groups, (enum report_by)ser->o->by, info, pid);

	if (!g || g->u[G_TOUCHED])
		return g;
	if (report_grow((void **)&ser->touched, &ser->touched_cap, ser->nr_touched + 1,
			sizeof(*ser->touched)))
		return NULL;
	ser->touched[ser->nr_touched++] = (size_t)(g - ser->groups.g);
	g->u[G_TOUCHED] = 1;
	return g;
}

static int add_groups(struct series *ser, const struct rec_snapshot *s,
		      const struct rec_info *info)
{
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		struct sized z = { 0 };
		struct rgroup *g;

		if (ser->o->pid && r->pid != ser->o->pid)
			continue;
		g = touch(ser, info, r->pid);
		if (!g)
			return fail("report", "out of memory");
		size_region(ser, info, r, &z);
		g->u[G_WSS_NOW] = u64_add_sat(g->u[G_WSS_NOW], z.wss);
		g->u[G_OBS_NOW] = u64_add_sat(g->u[G_OBS_NOW], z.obs);
		g->u[G_UNOBS_NOW] = u64_add_sat(g->u[G_UNOBS_NOW], z.unobs);
		g->u[G_UNKNOWN_NOW] = u64_add_sat(g->u[G_UNKNOWN_NOW], z.unknown);
	}
	/* the footprints of the group's live targets, now */
	for (size_t i = 0; i < ser->fp.nr; i++) {
		struct rgroup *g;

		if (ser->o->pid && ser->fp.fp[i].pid != ser->o->pid)
			continue;
		g = touch(ser, info, ser->fp.fp[i].pid);
		if (!g)
			return fail("report", "out of memory");
		g->u[G_RSS_NOW] = u64_add_sat(g->u[G_RSS_NOW], ser->fp.fp[i].rss);
		g->u[G_HAS_RSS] = 1;
	}
	for (size_t k = 0; k < ser->nr_touched; k++) {
		struct rgroup *g = &ser->groups.g[ser->touched[k]];
		double wss = (double)g->u[G_WSS_NOW];

		g->u[G_SNAPSHOTS]++;
		g->v[G_WSS_SUM] += wss;
		g->u[G_WSS_LAST] = g->u[G_WSS_NOW];
		if (wss > g->v[G_WSS_MAX])
			g->v[G_WSS_MAX] = wss;
		if ((double)g->u[G_OBS_NOW] > g->v[G_OBS_MAX])
			g->v[G_OBS_MAX] = (double)g->u[G_OBS_NOW];
		if ((double)g->u[G_UNOBS_NOW] > g->v[G_UNOBS_MAX])
			g->v[G_UNOBS_MAX] = (double)g->u[G_UNOBS_NOW];
		if ((double)g->u[G_RSS_NOW] > g->v[G_RSS_MAX])
			g->v[G_RSS_MAX] = (double)g->u[G_RSS_NOW];
		if ((double)g->u[G_UNKNOWN_NOW] > g->v[G_UNKNOWN_MAX])
			g->v[G_UNKNOWN_MAX] = (double)g->u[G_UNKNOWN_NOW];
		g->u[G_WSS_NOW] = g->u[G_OBS_NOW] = g->u[G_UNOBS_NOW] = g->u[G_RSS_NOW] = 0;
		g->u[G_UNKNOWN_NOW] = 0;
		g->u[G_TOUCHED] = 0;
	}
	ser->nr_touched = 0;
	return 0;
}

static int grow(void **p, size_t cap, size_t size)
{
	void *n = realloc(*p, cap * size);

	if (n)
		*p = n;
	return !n;
}

static int add_point(void *arg, const struct rec_snapshot *s,
		     const struct rec_info *info)
{
	struct series *ser = arg;
	struct sized z = { 0 };
	uint64_t v = 0;
	double rss = 0, vsz = 0;
	int fp = 0;

	if (ser->wss && fp_now_update(&ser->fp, s, info))
		return EXIT_FAIL;
	if (ser->seen++ < ser->o->skip)
		return 0;
	if (ser->o->by && add_groups(ser, s, info))
		return EXIT_FAIL;

	if (ser->n == ser->cap) {
		size_t cap = ser->cap ? ser->cap * 2 : 1024;

		if (grow((void **)&ser->t, cap, sizeof(*ser->t)) |
		    grow((void **)&ser->v, cap, sizeof(*ser->v)) |
		    grow((void **)&ser->missed, cap, sizeof(*ser->missed)) |
		    grow((void **)&ser->unobs, cap, sizeof(*ser->unobs)) |
		    grow((void **)&ser->unknown, cap, sizeof(*ser->unknown)) |
		    grow((void **)&ser->rss, cap, sizeof(*ser->rss)) |
		    grow((void **)&ser->est, cap, sizeof(*ser->est)) |
		    grow((void **)&ser->vsz, cap, sizeof(*ser->vsz)))
			return fail("report", "out of memory");
		ser->cap = cap;
	}
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];

		if (ser->o->pid && r->pid != ser->o->pid)
			continue;
		if (ser->wss)
			size_region(ser, info, r, &z);
		else
			v++;
	}
	if (ser->wss)
		v = z.wss;
	for (size_t i = 0; i < ser->fp.nr; i++) {
		const struct fp_last *f = &ser->fp.fp[i];

		if (ser->o->pid && f->pid != ser->o->pid)
			continue;
		rss += (double)f->rss;
		vsz += (double)f->vsz;
		fp = 1;
	}
	memset(&ser->est[ser->n], 0, sizeof(ser->est[ser->n]));
	if (s->has_probes) {
		if (!ser->pool) {
			ser->pool = malloc(sizeof(*ser->pool));
			if (!ser->pool)
				return fail("report", "out of memory");
			acc_pool_init(ser->pool, ACC_DEF_POOL_NS, ACC_DEF_MIN_ACCESSED);
		}
		acc_total_add(&ser->acc, &s->probes);
		acc_pool_add(ser->pool, s->end_ns, &s->probes);
		acc_pool_estimate(ser->pool, &ser->est[ser->n]);
		ser->has_acc = 1;
	}
	ser->t[ser->n] = (double)s->end_ns / 1e9;
	ser->v[ser->n] = v;
	ser->missed[ser->n] = s->missed_before;
	ser->unobs[ser->n] = z.unobs;
	ser->unknown[ser->n] = z.unknown;
	ser->nr_unknown += z.unknown > 0;
	ser->rss[ser->n] = fp ? rss : NAN;
	ser->vsz[ser->n] = fp ? vsz : NAN;
	ser->has_unobs |= z.unobs > 0;
	ser->has_fp |= fp;
	ser->n++;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t percentile(const struct report_opts *o, const uint64_t *sorted, size_t n,
			   unsigned int p)
{
	return report_percentile(o->pct_damo, sorted, n, p);
}

/* What the percentiles are, for the header. */
static void print_method(const struct report_opts *o, const struct series *ser, FILE *out)
{
	fprintf(out, "# percentiles: %s", o->pct_damo ? "damo's (floor index)" : "nearest rank");
	if (o->skip)
		fprintf(out, "; the first %" PRIu64 " snapshots left out (--skip)",
			ser->seen < o->skip ? ser->seen : (uint64_t)o->skip);
	fputc('\n', out);
}

/* The footprints' and the unobservable memory's headline, if the record has them. */
static void print_footprint(const struct series *ser, FILE *out)
{
	double max_rss = 0, max_vsz = 0, max_unobs = 0;
	char a[32], b[32], c[32];

	for (size_t i = 0; i < ser->n; i++) {
		if (ser->rss[i] > max_rss)
			max_rss = ser->rss[i];
		if (ser->vsz[i] > max_vsz)
			max_vsz = ser->vsz[i];
		if ((double)ser->unobs[i] > max_unobs)
			max_unobs = (double)ser->unobs[i];
	}
	if (ser->has_fp)
		fprintf(out, "# footprint: rss max %s, vsz max %s (last: rss %s)\n",
			fmt_bytes(u64_of(max_rss), a, sizeof(a)),
			fmt_bytes(u64_of(max_vsz), b, sizeof(b)),
			fmt_bytes(isnan(ser->rss[ser->n - 1]) ? 0 :
				  u64_of(ser->rss[ser->n - 1]), c, sizeof(c)));
	if (ser->has_unobs)
		fprintf(out, "# not observable (never in the working set): max %s\n",
			fmt_bytes(u64_of(max_unobs), a, sizeof(a)));
}

static uint64_t max_of(const uint64_t *v, size_t n)
{
	uint64_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

/* The working set bytes counted whole for want of the targets' maps, if any. */
static void print_unknown(const struct series *ser, FILE *out)
{
	char b[32];

	if (!ser->nr_unknown)
		return;
	fprintf(out, "# mapping unknown (no maps of the target in the record): in %zu of %zu "
		"snapshots accessed regions counted whole, holes between mappings included: "
		"max %s\n", ser->nr_unknown, ser->n,
		fmt_bytes(max_of(ser->unknown, ser->n), b, sizeof(b)));
}

/* The record's accuracy estimate, and a warning if it is low. */
static void print_accuracy(const struct series *ser, FILE *out)
{
	struct acc_estimate e;
	char line[256];

	if (!ser->has_acc) {
		fprintf(out, "# estimated recall: not in the record (no accuracy probes)\n");
		return;
	}
	acc_total_estimate(&ser->acc, &e);
	acc_format(&e, line, sizeof(line));
	fprintf(out, "# %s\n", line);
	acc_warn(out, "# ", &e, ACC_DEF_WARN_RECALL);
}

static int print_json(const struct report_opts *o, const struct series *ser,
		      const uint64_t *sorted, uint64_t missed, int wss, FILE *out)
{
	struct json_object *j = json_object_new_object(), *dist, *pts;

	json_object_object_add(j, "record", json_object_new_string(o->input));
	json_object_object_add(j, "snapshots", json_object_new_uint64(ser->n));
	json_object_object_add(j, "missed", json_object_new_uint64(missed));
	if (wss)
		json_object_object_add(j, "threshold", json_object_new_uint64(o->threshold));
	json_object_object_add(j, "percentile_method",
			       json_object_new_string(o->pct_damo ? "damo" : "nearest"));
	json_object_object_add(j, "skipped_snapshots",
			       json_object_new_uint64(ser->seen - ser->n));
	dist = json_object_new_object();
	/* in order: p0 ... p90, p99, p100 */
	for (unsigned int p = 0; p <= 100; p += p == 90 ? 9 : p == 99 ? 1 : 10) {
		char key[8];

		snprintf(key, sizeof(key), "p%u", p);
		json_object_object_add(dist, key, json_object_new_uint64(p ?
				       percentile(o, sorted, ser->n, p) : sorted[0]));
	}
	json_object_object_add(j, wss ? "wss_bytes" : "nr_regions", dist);
	if (wss) {
		json_object_object_add(j, "mapping_unknown_snapshots",
				       json_object_new_uint64(ser->nr_unknown));
		json_object_object_add(j, "mapping_unknown_max_bytes",
				       json_object_new_uint64(max_of(ser->unknown, ser->n)));
	}
	if (ser->has_acc) {
		struct acc_estimate e;

		acc_total_estimate(&ser->acc, &e);
		json_object_object_add(j, "accuracy", json_accuracy(&e));
	}
	pts = json_object_new_array_ext((int)ser->n);
	for (size_t i = 0; i < ser->n; i++) {
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "time_s", json_seconds(ser->t[i]));
		json_object_object_add(e, wss ? "wss_bytes" : "nr_regions",
				       json_object_new_uint64(ser->v[i]));
		if (!wss)
			json_object_object_add(e, "missed_before",
					       json_object_new_uint64(ser->missed[i]));
		if (wss && ser->has_unobs)
			json_object_object_add(e, "not_observable_bytes",
					       json_object_new_uint64(ser->unobs[i]));
		if (wss && ser->nr_unknown)
			json_object_object_add(e, "mapping_unknown_bytes",
					       json_object_new_uint64(ser->unknown[i]));
		if (wss && ser->has_fp) {
			json_object_object_add(e, "rss_bytes", json_bytes(ser->rss[i]));
			json_object_object_add(e, "vsz_bytes", json_bytes(ser->vsz[i]));
		}
		if (ser->has_acc && ser->est[i].windows)
			json_object_object_add(e, "accuracy", json_accuracy(&ser->est[i]));
		json_object_array_add(pts, e);
	}
	json_object_object_add(j, "series", pts);
	json_out(out, j, 1);
	return 0;
}

static int cmp_group(const void *a, const void *b)
{
	const struct rgroup *x = a, *y = b;
	double mx = x->u[G_SNAPSHOTS] ? x->v[G_WSS_SUM] / (double)x->u[G_SNAPSHOTS] : 0;
	double my = y->u[G_SNAPSHOTS] ? y->v[G_WSS_SUM] / (double)y->u[G_SNAPSHOTS] : 0;

	if (mx != my)
		return mx < my ? 1 : -1;
	return strcmp(x->key, y->key);
}

/*
 * --by: one row per group, the busiest first: its working set over the
 * snapshots it had regions in (mean, max, last), the most memory it had
 * monitored, not observable, and resident (its live targets' footprints).
 */
static int print_groups(const struct report_opts *o, struct series *ser, uint64_t missed,
			FILE *out)
{
	struct rgroups *gs = &ser->groups;
	const char *by = report_by_name((enum report_by)o->by);
	struct json_object *j = NULL, *arr = NULL;
	double all = 0, unknown = 0;
	char b[6][32];

	/* no groups, no array: qsort(NULL, 0) is undefined */
	if (gs->n)
		qsort(gs->g, gs->n, sizeof(*gs->g), cmp_group);
	for (size_t i = 0; i < ser->n; i++)
		all += (double)ser->v[i];
	all = ser->n ? all / (double)ser->n : 0;
	for (size_t i = 0; i < gs->n; i++)
		if (gs->g[i].v[G_UNKNOWN_MAX] > unknown)
			unknown = gs->g[i].v[G_UNKNOWN_MAX];
	if (o->json) {
		j = json_object_new_object();
		arr = json_object_new_array();
		json_object_object_add(j, "record", json_object_new_string(o->input));
		json_object_object_add(j, "by", json_object_new_string(by));
		json_object_object_add(j, "threshold", json_object_new_uint64(o->threshold));
		json_object_object_add(j, "snapshots", json_object_new_uint64(ser->n));
		json_object_object_add(j, "missed", json_object_new_uint64(missed));
		json_object_object_add(j, "wss_mean_bytes", json_bytes(all));
		json_object_object_add(j, "groups", arr);
	} else {
		fprintf(out, "# working set size of %s by %s (regions with nr_accesses >= %"
			PRIu64 "%s)\n", o->input, by, o->threshold, o->pid ? ", one pid" : "");
		fprintf(out, "# snapshots %zu, missed %" PRIu64 "; all: wss mean %s\n", ser->n,
			missed, fmt_bytes(u64_of(all), b[0], sizeof(b[0])));
		if (unknown > 0)
			fprintf(out, "# mapping unknown (no maps of the target in the record): "
				"accessed regions counted whole, holes between mappings included: "
				"max %s in a group\n", fmt_bytes(u64_of(unknown), b[0], sizeof(b[0])));
		fprintf(out, "%-24s %6s %9s %11s %11s %11s %11s %11s %11s\n", by, "procs",
			"snapshots", "wss_mean", "wss_max", "wss_last", "monitored", "not_obs",
			"rss_max");
	}
	for (size_t i = 0; i < gs->n; i++) {
		const struct rgroup *g = &gs->g[i];
		double mean = g->u[G_SNAPSHOTS] ? g->v[G_WSS_SUM] / (double)g->u[G_SNAPSHOTS] : 0;
		struct json_object *e;

		if (!o->json) {
			fprintf(out, "%-24s %6" PRIu64 " %9" PRIu64 " %11s %11s %11s %11s %11s "
				"%11s\n", g->key, g->nr_procs, g->u[G_SNAPSHOTS],
				fmt_bytes(u64_of(mean), b[0], 32),
				fmt_bytes(u64_of(g->v[G_WSS_MAX]), b[1], 32),
				fmt_bytes(g->u[G_WSS_LAST], b[2], 32),
				fmt_bytes(u64_of(g->v[G_OBS_MAX]), b[3], 32),
				fmt_bytes(u64_of(g->v[G_UNOBS_MAX]), b[4], 32),
				g->u[G_HAS_RSS] ? fmt_bytes(u64_of(g->v[G_RSS_MAX]), b[5], 32) : "-");
			continue;
		}
		e = json_object_new_object();
		json_object_object_add(e, "group", json_object_new_string(g->key));
		json_object_object_add(e, "processes", json_object_new_uint64(g->nr_procs));
		json_object_object_add(e, "snapshots", json_object_new_uint64(g->u[G_SNAPSHOTS]));
		json_object_object_add(e, "wss_mean_bytes", json_bytes(mean));
		json_object_object_add(e, "wss_max_bytes", json_bytes(g->v[G_WSS_MAX]));
		json_object_object_add(e, "wss_last_bytes", json_object_new_uint64(g->u[G_WSS_LAST]));
		json_object_object_add(e, "monitored_max_bytes", json_bytes(g->v[G_OBS_MAX]));
		json_object_object_add(e, "not_observable_max_bytes", json_bytes(g->v[G_UNOBS_MAX]));
		json_object_object_add(e, "mapping_unknown_max_bytes",
				       json_bytes(g->v[G_UNKNOWN_MAX]));
		json_object_object_add(e, "rss_max_bytes", g->u[G_HAS_RSS] ?
				       json_bytes(g->v[G_RSS_MAX]) : NULL);
		json_object_array_add(arr, e);
	}
	if (j)
		json_out(out, j, 1);
	return 0;
}

static int run(const struct report_opts *o, FILE *out, FILE *tics, int wss)
{
	struct series ser = { .o = o, .wss = wss };
	struct rec_info info;
	uint64_t *sorted = NULL, missed = 0;
	char b[4][32];
	int ret;

	ret = report_read_mapped(o, add_point, &ser, &info, wss ? &ser.maps : NULL);
	if (ret)
		goto out;
	if (!ser.n) {
		ret = report_nothing(o, "snapshots");
		goto out;
	}
	sorted = malloc(ser.n * sizeof(*sorted));
	if (!sorted) {
		ret = fail("report", "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ser.n; i++) {
		sorted[i] = ser.v[i];
		missed += ser.missed[i];
	}
	qsort(sorted, ser.n, sizeof(*sorted), cmp_u64);
	if (o->by) {
		ret = print_groups(o, &ser, missed, out);
		goto out;
	}
	if (o->json) {
		ret = print_json(o, &ser, sorted, missed, wss, out);
		goto out;
	}
	if (wss) {
		fprintf(out, "# working set size of %s (regions with nr_accesses >= %"
			PRIu64 "%s)\n", o->input, o->threshold,
			o->pid ? ", one pid" : ", all targets");
		fprintf(out, "# snapshots %zu, missed %" PRIu64 "\n", ser.n, missed);
		print_accuracy(&ser, out);
		print_method(o, &ser, out);
		fprintf(out, "# p50 %s  p90 %s  p99 %s  max %s\n",
			fmt_bytes(percentile(o, sorted, ser.n, 50), b[0], sizeof(b[0])),
			fmt_bytes(percentile(o, sorted, ser.n, 90), b[1], sizeof(b[1])),
			fmt_bytes(percentile(o, sorted, ser.n, 99), b[2], sizeof(b[2])),
			fmt_bytes(sorted[ser.n - 1], b[3], sizeof(b[3])));
		fprintf(out, "# p50_bytes %" PRIu64 " p90_bytes %" PRIu64
			" p99_bytes %" PRIu64 "\n", percentile(o, sorted, ser.n, 50),
			percentile(o, sorted, ser.n, 90), percentile(o, sorted, ser.n, 99));
		fprintf(out, "# distribution: percentile wss\n");
		for (unsigned int p = 0; p <= 100; p += 10)
			fprintf(out, "#   %3u%% %s\n", p, fmt_bytes(p ? percentile(o, sorted,
				ser.n, p) : sorted[0], b[3], sizeof(b[3])));
		fmt_bytes(sorted[ser.n - 1], b[3], sizeof(b[3]));
		print_footprint(&ser, out);
		print_unknown(&ser, out);
		fprintf(out, "# columns: time_s wss_bytes not_observable_bytes rss_bytes "
			"vsz_bytes (NaN: no footprint)\n");
	} else {
		fprintf(out, "# regions per snapshot in %s; snapshots %zu, missed %"
			PRIu64 "\n", o->input, ser.n, missed);
		print_method(o, &ser, out);
		fprintf(out, "# min %" PRIu64 " p50 %" PRIu64 " max %" PRIu64 "\n",
			sorted[0], percentile(o, sorted, ser.n, 50), sorted[ser.n - 1]);
		fprintf(out, "# columns: time_s nr_regions missed_before\n");
	}
	for (size_t i = 0; i < ser.n; i++) {
		if (wss && isnan(ser.rss[i]))
			fprintf(out, "%.6f %" PRIu64 " %" PRIu64 " NaN NaN\n", ser.t[i],
				ser.v[i], ser.unobs[i]);
		else if (wss)
			fprintf(out, "%.6f %" PRIu64 " %" PRIu64 " %.0f %.0f\n", ser.t[i],
				ser.v[i], ser.unobs[i], ser.rss[i], ser.vsz[i]);
		else
			fprintf(out, "%.6f %" PRIu64 " %" PRIu64 "\n", ser.t[i],
				ser.v[i], ser.missed[i]);
	}
	if (tics && wss)
		fprintf(tics, "p50=%" PRIu64 "; p90=%" PRIu64 "; p99=%" PRIu64 "\n"
			"has_fp=%d; has_unobs=%d\n", percentile(o, sorted, ser.n, 50),
			percentile(o, sorted, ser.n, 90), percentile(o, sorted, ser.n, 99),
			ser.has_fp, ser.has_unobs);
	/* the data went to a file: still tell the user the headline */
	if ((o->plot || o->output) && wss) {
		printf("%s: %zu snapshots, wss p50 %s p90 %s p99 %s max %s\n",
		       o->input, ser.n, b[0], b[1], b[2], b[3]);
		print_unknown(&ser, stdout);
	}
	else if (o->plot || o->output)
		printf("%s: %zu snapshots, regions min %" PRIu64 " p50 %" PRIu64
		       " max %" PRIu64 "\n", o->input, ser.n, sorted[0],
		       percentile(o, sorted, ser.n, 50), sorted[ser.n - 1]);
out:
	rec_info_free(&info);
	free(sorted);
	free(ser.t);
	free(ser.v);
	free(ser.missed);
	free(ser.unobs);
	free(ser.unknown);
	free(ser.rss);
	free(ser.vsz);
	free(ser.est);
	free(ser.pool);
	fp_now_free(&ser.fp);
	mapped_now_free(&ser.maps);
	free(ser.touched);
	rgroups_free(&ser.groups);
	return ret;
}

int report_wss(const struct report_opts *o, FILE *out, FILE *tics)
{
	return run(o, out, tics, 1);
}

int report_regions(const struct report_opts *o, FILE *out, FILE *tics)
{
	return run(o, out, tics, 0);
}
