// SPDX-License-Identifier: GPL-2.0-only
/*
 * report adjust: the record re-aggregated to coarser windows, as damo
 * adjust --aggregate_interval does (its _damo_records.adjust_records()):
 * consecutive windows are merged until the merged one spans --aggr, and
 * the merged window is written as a daptrace record that every report
 * reads.  In a merged window:
 *
 * - a target's regions are split at the union of its windows' region
 *   boundaries; a piece's nr_accesses is the sum of the counts of the
 *   regions that covered it, over a sample count that is the sum of the
 *   windows' (damo adds each window's count the same way, keeping the
 *   first window's boundaries and the largest count of the regions over
 *   them where we split instead).  A piece not covered in every window (a
 *   mapping that came or went) has its sum scaled to the whole merged
 *   window: its frequency is the one of the windows it was in.
 * - a piece's age is where its last region's age began, counted in the
 *   merged windows that lie wholly after it (rounded down: never older
 *   than it was); an unknown age stays unknown.  damo keeps the first
 *   window's age, of a window no longer there.
 * - label, placement (summed, scaled as the counts) and the footprints
 *   (each target's last) come from the windows merged; flags are OR'ed,
 *   a piece is not observable if it was not in any of its windows;
 *   missed_before is the windows missed before and within it.
 *
 * Unlike damo, nothing is skipped unless asked (--skip), and windows left
 * at the end that span less than --aggr make a last, shorter window
 * rather than being dropped (said on stderr).  --pid, --since, --until,
 * --addr and --label choose what goes in.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "common/units.h"

struct fine_win {
	uint64_t start_ns, end_ns, missed;
	uint32_t samples, flags, sample_us;
	int placement;
};

struct fine_region {
	struct rec_region r;		/* label owned */
	uint32_t win;			/* index in the group */
	int64_t age_begin_ns;		/* when its level began (may be before 0) */
};

struct piece {
	uint64_t acc, unobs, present, huge, node[REC_NODES];
	uint64_t covered;		/* samples of the windows covering it */
	uint32_t last_win;		/* + 1, 0: none yet */
	uint32_t nr_win, nr_unobservable;
	const struct fine_region *last;	/* the last window's region over it */
};

struct adjust {
	const struct report_opts *o;
	FILE *out;
	int header;			/* written */
	int nr_targets;			/* #target rows written */
	char *exited;			/* per #target row: its #exit written */
	size_t exited_cap;
	uint64_t seen, seq;
	/* the group being merged */
	struct fine_win *w;
	size_t nr_w, w_cap;
	struct fine_region *r;
	size_t nr_r, r_cap;
	struct rec_footprint *fp;	/* each target's last in the group */
	size_t nr_fp, fp_cap;
	/* merged windows written (and the one being written): starts, for ages */
	uint64_t *c_start, c_first_len;
	size_t nr_c, c_cap;
	/* the output window's buffers */
	uint64_t *points;
	struct piece *pieces;
	struct rec_region *out_r;
	size_t points_cap, out_cap;
};

/* Sampling rounds of a window: its count, else its intervals' ratio. */
static uint32_t samples_of(const struct rec_snapshot *s)
{
	if (s->nr_samples)
		return s->nr_samples;
	return s->sample_us ? (uint32_t)((s->aggr_us + s->sample_us / 2) / s->sample_us) : 0;
}

static int cmp_region(const void *a, const void *b)
{
	const struct fine_region *x = a, *y = b;

	if (x->r.pid != y->r.pid)
		return x->r.pid < y->r.pid ? -1 : 1;
	if (x->win != y->win)
		return x->win < y->win ? -1 : 1;
	return x->r.start < y->r.start ? -1 : x->r.start > y->r.start;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The first of the @n points at or above @v. */
static size_t point_at(const uint64_t *p, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The age of a level that began at @begin_ns, in merged windows: those
 * that started at or after it (the one being written is the last of
 * a->c_start), and before the first one, whole windows of its length.
 */
static uint32_t merged_age(const struct adjust *a, int64_t begin_ns)
{
	uint64_t n;

	if (begin_ns >= 0)
		n = a->nr_c - point_at(a->c_start, a->nr_c, (uint64_t)begin_ns);
	else
		n = a->nr_c;
	if (begin_ns < (int64_t)a->c_start[0] && a->c_first_len)
		n += ((uint64_t)((int64_t)a->c_start[0] - begin_ns)) / a->c_first_len;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static uint64_t scaled(uint64_t v, uint64_t covered, uint64_t total)
{
	return covered >= total || !covered ? v :
	       (uint64_t)llround((double)v * (double)total / (double)covered);
}

/* One target's pieces (regions @r[0..n) of the group) into a->out_r from @k. */
static int split(struct adjust *a, const struct fine_region *r, size_t n, uint64_t total,
		 int placement, size_t *k)
{
	size_t np = 0;

	if (report_grow((void **)&a->points, &a->points_cap, 2 * n, sizeof(*a->points)))
		return -1;
	for (size_t i = 0; i < n; i++) {
		a->points[np++] = r[i].r.start;
		a->points[np++] = r[i].r.end;
	}
	qsort(a->points, np, sizeof(*a->points), cmp_u64);
	for (size_t i = 1, u = 1; i <= np; i++) {
		if (i == np) {
			np = u;
			break;
		}
		if (a->points[i] != a->points[u - 1])
			a->points[u++] = a->points[i];
	}
	free(a->pieces);
	a->pieces = calloc(np, sizeof(*a->pieces));
	if (!a->pieces)
		return -1;
	/* in window order: the last window's region over a piece wins */
	for (size_t i = 0; i < n; i++) {
		size_t p = point_at(a->points, np, r[i].r.start);
		size_t e = point_at(a->points, np, r[i].r.end);

		for (; p < e; p++) {
			struct piece *c = &a->pieces[p];

			if (c->last_win == r[i].win + 1)
				continue;	/* overlapping regions of one window */
			c->last_win = r[i].win + 1;
			c->nr_win++;
			c->covered += a->w[r[i].win].samples;
			c->acc += r[i].r.nr_accesses;
			c->unobs += r[i].r.nr_unobserved;
			c->nr_unobservable += !rec_observable(&r[i].r);
			c->present += r[i].r.nr_present;
			c->huge += r[i].r.nr_huge;
			for (int d = 0; d < REC_NODES; d++)
				c->node[d] += r[i].r.node_samples[d];
			c->last = &r[i];
		}
	}
	if (report_grow((void **)&a->out_r, &a->out_cap, *k + np, sizeof(*a->out_r)))
		return -1;
	for (size_t p = 0; p + 1 < np; p++) {
		const struct piece *c = &a->pieces[p];
		struct rec_region *o = &a->out_r[*k];

		if (!c->nr_win)
			continue;	/* a hole between the regions */
		*o = c->last->r;
		o->start = a->points[p];
		o->end = a->points[p + 1];
		o->nr_accesses = (uint32_t)scaled(c->acc, c->covered, total);
		o->nr_unobserved = (uint32_t)scaled(c->unobs, c->covered, total);
		o->flags &= ~REC_REGION_NOT_OBSERVABLE;
		if (c->nr_unobservable == c->nr_win)
			o->flags |= REC_REGION_NOT_OBSERVABLE;
		o->age = o->age_unknown ? 0 : merged_age(a, c->last->age_begin_ns);
		if (placement) {
			o->nr_present = (uint32_t)scaled(c->present, c->covered, total);
			o->nr_huge = (uint32_t)scaled(c->huge, c->covered, total);
			for (int d = 0; d < REC_NODES; d++)
				o->node_samples[d] = (uint32_t)scaled(c->node[d], c->covered, total);
		}
		(*k)++;
	}
	return 0;
}

static void drop_group(struct adjust *a)
{
	for (size_t i = 0; i < a->nr_r; i++)
		free(a->r[i].r.label);
	a->nr_r = 0;
	a->nr_w = 0;
	a->nr_fp = 0;
}

/* The group as one window. */
static int flush(struct adjust *a)
{
	struct rec_snapshot s = { 0 };
	uint64_t total = 0, sample_us = 0;
	int placement = 1;
	size_t k = 0;

	if (!a->nr_w)
		return 0;
	s.start_ns = a->w[0].start_ns;
	s.end_ns = a->w[a->nr_w - 1].end_ns;
	for (uint32_t i = 0; i < a->nr_w; i++) {
		total += a->w[i].samples;
		s.flags |= a->w[i].flags;
		s.missed_before += a->w[i].missed;
		placement &= a->w[i].placement;
		if (!sample_us)
			sample_us = a->w[i].sample_us;
	}
	if (total > UINT32_MAX)
		return fail("report", "%s: a window of %" PRIu64 " samples: --aggr is too long "
			    "for a window's count", a->o->input, total);
	if (report_grow((void **)&a->c_start, &a->c_cap, a->nr_c + 1, sizeof(*a->c_start)))
		return fail("report", "out of memory");
	if (!a->nr_c)
		a->c_first_len = s.end_ns - s.start_ns;
	a->c_start[a->nr_c++] = s.start_ns;
	/* (a window of no regions has no array: qsort(NULL, 0) is undefined) */
	if (a->nr_r)
		qsort(a->r, a->nr_r, sizeof(*a->r), cmp_region);
	for (size_t i = 0, j; i < a->nr_r; i = j) {
		for (j = i; j < a->nr_r && a->r[j].r.pid == a->r[i].r.pid; j++)
			;
		if (split(a, &a->r[i], j - i, total, placement, &k))
			return fail("report", "out of memory");
	}
	s.seq = ++a->seq;
	s.nr_regions = (uint32_t)k;
	s.nr_samples = (uint32_t)total;
	s.regions = a->out_r;
	s.placement = placement;
	s.footprints = a->fp;
	s.nr_footprints = (uint32_t)a->nr_fp;
	s.aggr_us = (s.end_ns - s.start_ns) / 1000 > UINT32_MAX ? UINT32_MAX :
		    (uint32_t)((s.end_ns - s.start_ns) / 1000);
	s.sample_us = (uint32_t)sample_us;
	if (!s.sample_us || s.sample_us > s.aggr_us)
		s.sample_us = s.aggr_us = 0;	/* the #meta ones */
	if (rec_write_snapshot(a->out, &s))
		return fail("report", "writing the adjusted record failed");
	drop_group(a);
	return 0;
}

/*
 * #target rows of the targets that joined, #exit rows of those that left,
 * since the last call: written before the merged window that follows.
 */
static int targets_since(struct adjust *a, const struct rec_info *info)
{
	if (report_grow((void **)&a->exited, &a->exited_cap, info->nr_targets + 1, 1))
		return -1;
	for (; a->nr_targets < info->nr_targets; a->nr_targets++) {
		a->exited[a->nr_targets] = 0;
		if (rec_write_target(a->out, &info->targets[a->nr_targets]))
			return -1;
	}
	for (int i = 0; i < info->nr_targets; i++) {
		const struct rec_target *t = &info->targets[i];

		if (t->exit_ns == REC_NO_EXIT || a->exited[i])
			continue;
		if (rec_write_exit(a->out, t->pid, t->exit_ns, t->moved))
			return -1;
		a->exited[i] = 1;
	}
	return 0;
}

static int header(struct adjust *a, const struct rec_info *info)
{
	struct rec_kv *meta = calloc(info->nr_meta + 2, sizeof(*meta));
	char aggr[32];
	int n = 0, ret;

	if (!meta)
		return fail("report", "out of memory");
	for (int i = 0; i < info->nr_meta; i++)
		if (strcmp(info->meta[i].key, "aggr_us") && strcmp(info->meta[i].key, "adjusted_from"))
			meta[n++] = info->meta[i];
	snprintf(aggr, sizeof(aggr), "%" PRIu64, a->o->adjust_aggr_us);
	meta[n++] = (struct rec_kv){ .key = "aggr_us", .value = aggr };
	meta[n++] = (struct rec_kv){ .key = "adjusted_from", .value = (char *)a->o->input };
	ret = rec_write_header(a->out, meta, n, info->targets, info->nr_targets);
	a->nr_targets = info->nr_targets;
	free(meta);
	if (report_grow((void **)&a->exited, &a->exited_cap, info->nr_targets + 1, 1))
		ret = -1;
	else
		memset(a->exited, 0, info->nr_targets);
	a->header = 1;
	return ret ? fail("report", "writing the adjusted record failed") : 0;
}

static int add(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct adjust *a = arg;
	const struct report_opts *o = a->o;

	if (a->seen++ < o->skip)
		return 0;
	if (!a->header && header(a, info))
		return EXIT_FAIL;
	if (targets_since(a, info))
		return fail("report", "writing the adjusted record failed");
	if (!samples_of(s))
		return fail("report", "%s:%lu: window seq %" PRIu64 " has no sample count nor "
			    "intervals: its accesses cannot be added to others'", o->input,
			    s->line, s->seq);
	if (report_grow((void **)&a->w, &a->w_cap, a->nr_w + 1, sizeof(*a->w)) ||
	    report_grow((void **)&a->r, &a->r_cap, a->nr_r + s->nr_regions, sizeof(*a->r)))
		return fail("report", "out of memory");
	a->w[a->nr_w] = (struct fine_win){
		.start_ns = s->start_ns, .end_ns = s->end_ns, .missed = s->missed_before,
		.samples = samples_of(s), .flags = s->flags, .sample_us = s->sample_us,
		.placement = s->placement,
	};
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		struct fine_region *f;

		if (o->pid && r->pid != o->pid)
			continue;
		f = &a->r[a->nr_r];
		f->r = *r;
		f->r.label = strdup(r->label);
		if (!f->r.label)
			return fail("report", "out of memory");
		f->win = (uint32_t)a->nr_w;
		f->age_begin_ns = (int64_t)s->end_ns -
				  (int64_t)(r->age_unknown ? 0 : report_age_ns(o, s, r->age));
		a->nr_r++;
	}
	for (uint32_t i = 0; i < s->nr_footprints; i++) {
		size_t k = 0;

		while (k < a->nr_fp && a->fp[k].pid != s->footprints[i].pid)
			k++;
		if (k == a->nr_fp &&
		    report_grow((void **)&a->fp, &a->fp_cap, ++a->nr_fp, sizeof(*a->fp)))
			return fail("report", "out of memory");
		a->fp[k] = s->footprints[i];
	}
	a->nr_w++;
	/* as damo: a merged window once the windows span --aggr */
	if (s->end_ns - a->w[0].start_ns >= o->adjust_aggr_us * 1000 && flush(a))
		return EXIT_FAIL;
	return 0;
}

int report_adjust(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct adjust a = { .o = o, .out = out };
	struct rec_info info;
	struct rec_kv *end = NULL;
	char snaps[32];
	int ret, n = 0;

	(void)tics;
	ret = report_read(o, add, &a, &info);
	if (ret)
		goto out;
	if (!a.nr_w && !a.seq) {
		if (a.seen)
			ret = fail("report", "%s: --skip %u leaves none of its %" PRIu64 " windows",
				   o->input, o->skip, a.seen);
		else
			ret = report_nothing(o, "snapshots");
		goto out;
	}
	if (a.nr_w && a.w[a.nr_w - 1].end_ns - a.w[0].start_ns < o->adjust_aggr_us * 1000) {
		char b[32];

		warn_msg("report", "%s: the last %zu windows span %s, less than --aggr: a last, "
			 "shorter window (damo adjust would drop them)", o->input, a.nr_w,
			 fmt_secs(a.w[a.nr_w - 1].end_ns - a.w[0].start_ns, b, sizeof(b)));
	}
	if (flush(&a) || targets_since(&a, &info)) {
		ret = EXIT_FAIL;
		goto out;
	}
	end = calloc(info.nr_trailer + 1, sizeof(*end));
	if (!end) {
		ret = fail("report", "out of memory");
		goto out;
	}
	for (int i = 0; i < info.nr_trailer; i++)
		if (strcmp(info.trailer[i].key, "snapshots"))
			end[n++] = info.trailer[i];
	snprintf(snaps, sizeof(snaps), "%" PRIu64, a.seq);
	end[n++] = (struct rec_kv){ .key = "snapshots", .value = snaps };
	if (rec_write_trailer(out, end, n))
		ret = fail("report", "writing the adjusted record failed");
out:
	drop_group(&a);
	free(end);
	free(a.w);
	free(a.r);
	free(a.fp);
	free(a.c_start);
	free(a.exited);
	free(a.points);
	free(a.pieces);
	free(a.out_r);
	rec_info_free(&info);
	return ret;
}
