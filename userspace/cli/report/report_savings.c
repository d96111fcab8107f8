// SPDX-License-Identifier: GPL-2.0-only
/*
 * report savings: the record replayed under "reclaim what is idle for at
 * least T", once per threshold (report_savings.h says what is counted).
 *
 * Cost.  Each address space keeps, per threshold, its reclaimed bytes as
 * a sorted list of disjoint ranges (with the time each was reclaimed).
 * A window is one merge of that list with the window's regions of the
 * space, also sorted: O(regions + ranges) per threshold, never all pairs
 * of windows.  Ranges reclaimed in the same window that touch are merged,
 * so a list stays about as long as the space's region list.
 *
 * Idle time is kept by address, not taken from the regions' ages: each
 * space remembers when each of its ranges was last in an accessed region
 * (the policy engine's struct pol_iset, identity.c, the same structure
 * its idle= condition reads), forgetting what is older than the longest
 * threshold.  A window's idle region is cut into pieces of one idle time
 * each (a search of that set per piece); its accessed regions go into it
 * in one merge.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "common/report_group.h"
#include "report_savings.h"
#include "common/units.h"
#include "policy.h"

#define CMD "report"

/* Without --thresholds: from a second up to ten minutes. */
static const uint64_t default_t_ns[] = {
	1000000000ULL, 2000000000ULL, 5000000000ULL, 10000000000ULL, 30000000000ULL,
	60000000000ULL, 120000000000ULL, 300000000000ULL, 600000000000ULL,
};

/*
 * Bytes [start, end) reclaimed at the end of the window ending at @t_ns;
 * @res of them were resident then (what the reclaim took, and what can
 * come back).
 */
struct ivl {
	uint64_t start, end, t_ns;
	double res;
};

struct ivl_set {
	struct ivl *v;
	size_t n, cap;
};

/* A target of the record (an entry of info->targets): one address space. */
struct space {
	pid_t pid;
	size_t target;			/* index in info->targets */
	struct sav_stats *group;	/* --by, else NULL */
	struct ivl_set *sets;		/* reclaimed ranges, per threshold */
	uint64_t seen_seq;		/* the last window with its regions */
	int done;			/* its reclaimed bytes are accounted for */
	struct pol_iset accessed;	/* when each range was last accessed: window ends */
	uint64_t since_ns;		/* start of its first window: idle since then if never */
};

/* What a window says about a byte range of a space. */
enum wkind {
	W_ACCESSED,			/* nr_accesses > 0: reclaimed bytes refault */
	W_IDLE,				/* idle for idle_ns (by address): reclaimed if >= T */
	W_UNOBS,			/* not observable: no change */
	W_OUT_OF_REACH,			/* a mapping the scheme cannot act on: no change */
	W_AGE_UNKNOWN,			/* idle, for how long unknown: no change */
	W_HOLE,				/* [unmapped]: reclaimed bytes were freed */
};

struct wreg {
	uint64_t start, end, idle_ns;
	size_t space;
	enum wkind kind;
	uint32_t age;			/* windows (for missed windows only) */
	double res;			/* its resident share (1: not known) */
	int res_known;			/* the record has placement: @res was sampled */
};

struct savings {
	const struct report_opts *o;
	const uint64_t *t_ns;
	unsigned int nr_t;
	struct space *sp;
	size_t nr_sp, sp_cap;
	size_t *sp_of_target;		/* info->targets index -> space + 1 */
	size_t nr_sot;
	struct wreg *w;
	size_t w_cap;
	struct wreg *pw;		/* one space's regions, idle ones cut by idle time */
	size_t pw_cap;
	struct pol_range *acc;		/* one space's accessed regions, this window */
	size_t acc_cap;
	uint64_t max_t_ns;		/* the longest threshold */
	struct ivl_set scratch;
	struct sav_stats all;
	struct rgroups groups;
	struct sav_stats **gst;		/* per groups.g[] index */
	size_t gst_cap;
	struct sav_stats **touched;	/* stats with regions in this window */
	size_t nr_touched, touched_cap;
};

static int stats_init(struct sav_stats *st, unsigned int nr_t, const char *key)
{
	memset(st, 0, sizeof(*st));
	st->key = key;
	st->knee = -1;
	st->pt = calloc(nr_t, sizeof(*st->pt));
	return st->pt ? 0 : -1;
}

static void stats_free(struct sav_stats *st, unsigned int nr_t)
{
	if (!st->pt)
		return;
	for (unsigned int k = 0; k < nr_t; k++)
		free(st->pt[k].reuse.b);
	free(st->pt);
}

/* The stats of @pid's group (--by), created on first sight. */
static struct sav_stats *group_of(struct savings *sv, const struct rec_info *info, pid_t pid)
{
	struct rgroup *g = rgroups_of(&sv->groups, (enum report_by)sv->o->by, info, pid);
	size_t i, old = sv->gst_cap;

	if (!g)
		return NULL;
	i = (size_t)(g - sv->groups.g);
	if (report_grow((void **)&sv->gst, &sv->gst_cap, i + 1, sizeof(*sv->gst)))
		return NULL;
	memset(sv->gst + old, 0, (sv->gst_cap - old) * sizeof(*sv->gst));
	if (!sv->gst[i]) {
		sv->gst[i] = malloc(sizeof(*sv->gst[i]));
		if (!sv->gst[i] || stats_init(sv->gst[i], sv->nr_t, g->key)) {
			free(sv->gst[i]);
			sv->gst[i] = NULL;
			return NULL;
		}
	}
	return sv->gst[i];
}

/* The space of @pid now (its latest #target row), created on first sight; -1: no memory. */
static ssize_t space_of(struct savings *sv, const struct rec_info *info, pid_t pid)
{
	const struct rec_target *t = rec_info_target(info, pid);
	size_t ti, old = sv->nr_sot;
	struct space *sp;

	/* region rows need a #target row first: the reader has checked */
	if (!t)
		return -1;
	ti = (size_t)(t - info->targets);
	if (report_grow((void **)&sv->sp_of_target, &sv->nr_sot, ti + 1, sizeof(size_t)))
		return -1;
	memset(sv->sp_of_target + old, 0, (sv->nr_sot - old) * sizeof(size_t));
	if (sv->sp_of_target[ti])
		return (ssize_t)sv->sp_of_target[ti] - 1;
	if (report_grow((void **)&sv->sp, &sv->sp_cap, sv->nr_sp + 1, sizeof(*sv->sp)))
		return -1;
	sp = &sv->sp[sv->nr_sp];
	memset(sp, 0, sizeof(*sp));
	sp->pid = pid;
	sp->target = ti;
	sp->since_ns = UINT64_MAX;
	sp->sets = calloc(sv->nr_t, sizeof(*sp->sets));
	if (!sp->sets)
		return -1;
	if (sv->o->by) {
		sp->group = group_of(sv, info, pid);
		if (!sp->group)
			return -1;
	}
	sv->sp_of_target[ti] = ++sv->nr_sp;
	return (ssize_t)sv->nr_sp - 1;
}

/* --- time-to-reuse histogram --- */

static uint32_t reuse_bucket(uint64_t ns)
{
	unsigned int msb;

	if (ns < 32)
		return (uint32_t)ns;
	msb = 63 - (unsigned int)__builtin_clzll(ns);
	/* the octave, then the 5 bits below its top bit */
	return (msb - 5) * 32 + (uint32_t)(ns >> (msb - 5));
}

static int reuse_add(struct sav_reuse *r, uint64_t ns, double bytes)
{
	uint32_t idx = reuse_bucket(ns);
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->b[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == r->n || r->b[lo].idx != idx) {
		if (report_grow((void **)&r->b, &r->cap, r->n + 1, sizeof(*r->b)))
			return -1;
		memmove(r->b + lo + 1, r->b + lo, (r->n - lo) * sizeof(*r->b));
		r->b[lo] = (struct sav_bucket){ .idx = idx };
		r->n++;
	}
	r->b[lo].bytes += bytes;
	r->b[lo].ns_bytes += (double)ns * bytes;
	r->bytes += bytes;
	return 0;
}

double sav_reuse_pct(const struct sav_reuse *r, double p)
{
	double want = r->bytes * p / 100, sum = 0;

	if (!(r->bytes > 0))
		return -1;
	for (size_t i = 0; i < r->n; i++) {
		sum += r->b[i].bytes;
		/* the bucket in which the bytes reach the percentile */
		if (sum >= want || i + 1 == r->n)
			return r->b[i].ns_bytes / r->b[i].bytes;
	}
	return -1;
}

/* --- accounting: the whole record and the space's group --- */

enum sav_event { EV_RECLAIM, EV_REFAULT, EV_NEVER, EV_UNKNOWN };

static int account(struct savings *sv, const struct space *sp, unsigned int k,
		   enum sav_event ev, double bytes, uint64_t reuse_ns)
{
	struct sav_stats *sts[2] = { &sv->all, sp->group };

	for (int i = 0; i < 2 && sts[i]; i++) {
		struct sav_point *p = &sts[i]->pt[k];

		switch (ev) {
		case EV_RECLAIM:
			p->reclaimed += bytes;
			break;
		case EV_REFAULT:
			p->refaulted += bytes;
			if (reuse_add(&p->reuse, reuse_ns, bytes))
				return fail(CMD, "out of memory");
			break;
		case EV_NEVER:
			p->never_reused += bytes;
			break;
		case EV_UNKNOWN:
			p->unknown += bytes;
			break;
		}
	}
	return 0;
}

/*
 * Append [start, end) reclaimed at @t_ns, @res of it resident, merged with
 * the last range if they touch and agree.
 */
static int ivl_push(struct ivl_set *s, uint64_t start, uint64_t end, uint64_t t_ns, double res)
{
	struct ivl *last = s->n ? &s->v[s->n - 1] : NULL;

	if (last && last->end == start && last->t_ns == t_ns && last->res == res) {
		last->end = end;
		return 0;
	}
	if (report_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -1;
	s->v[s->n++] = (struct ivl){ start, end, t_ns, res };
	return 0;
}

/*
 * What window @now does to reclaimed piece [start, end) of @sp: a
 * refault, freed (never reused), or it stays reclaimed (into @out).
 */
static int apply(struct savings *sv, const struct space *sp, unsigned int k,
		 const struct wreg *r, const struct ivl *piece, uint64_t now,
		 struct ivl_set *out)
{
	double bytes = (double)(piece->end - piece->start) * piece->res;

	if (!r || r->kind == W_HOLE)
		return account(sv, sp, k, EV_NEVER, bytes, 0);
	if (r->kind == W_ACCESSED)
		return account(sv, sp, k, EV_REFAULT, bytes,
			       now > piece->t_ns ? now - piece->t_ns : 0);
	return ivl_push(out, piece->start, piece->end, piece->t_ns, piece->res) ?
	       fail(CMD, "out of memory") : 0;
}

/*
 * What space @sp holds reclaimed at threshold @k at the end of a window,
 * @set, resident when it was reclaimed: the memory saved then.  Counted
 * from the reclaimed ranges, not from this window's idle regions: in a
 * policy's own record what it paged out reads not present.
 */
static void add_saved(struct savings *sv, const struct space *sp, unsigned int k,
		      const struct ivl_set *set)
{
	struct sav_stats *sts[2] = { &sv->all, sp->group };
	double bytes = 0;

	for (size_t i = 0; i < set->n; i++)
		bytes += (double)(set->v[i].end - set->v[i].start) * set->v[i].res;
	for (int i = 0; i < 2 && sts[i]; i++)
		sts[i]->pt[k].saved_now += bytes;
}

/*
 * One threshold of one space through one window: its regions @r[0..nr)
 * (sorted, disjoint) against its reclaimed ranges, walking both in address
 * order.  Reclaimed bytes outside every region were unmapped.
 */
static int sweep(struct savings *sv, struct space *sp, unsigned int k,
		 const struct wreg *r, size_t nr, uint64_t now)
{
	struct ivl_set *in = &sp->sets[k], *out = &sv->scratch, tmp;
	uint64_t t = sv->t_ns[k];
	size_t i = 0;
	struct ivl cur = { 0 };
	int have = in->n > 0, ret = 0;

	out->n = 0;
	if (have)
		cur = in->v[0];
#define NEXT() do { have = ++i < in->n; if (have) cur = in->v[i]; } while (0)
	for (size_t j = 0; j < nr && !ret; j++) {
		uint64_t pos = r[j].start;

		/* reclaimed bytes before this region: unmapped since */
		while (have && cur.start < r[j].start && !ret) {
			struct ivl p = { cur.start, cur.end < r[j].start ? cur.end : r[j].start,
					 cur.t_ns, cur.res };

			ret = apply(sv, sp, k, NULL, &p, now, out);
			cur.start = p.end;
			if (cur.start == cur.end)
				NEXT();
		}
		while (pos < r[j].end && !ret) {
			uint64_t e;

			if (have && cur.start <= pos) {
				struct ivl p = { pos, cur.end < r[j].end ? cur.end : r[j].end,
						 cur.t_ns, cur.res };

				ret = apply(sv, sp, k, &r[j], &p, now, out);
				pos = cur.start = p.end;
				if (cur.start == cur.end)
					NEXT();
				continue;
			}
			e = have && cur.start < r[j].end ? cur.start : r[j].end;
			if (r[j].kind == W_IDLE && r[j].idle_ns >= t) {
				ret = account(sv, sp, k, EV_RECLAIM, (double)(e - pos) * r[j].res, 0);
				if (!ret && ivl_push(out, pos, e, now, r[j].res))
					ret = fail(CMD, "out of memory");
			}
			pos = e;
		}
	}
	while (have && !ret) {
		ret = apply(sv, sp, k, NULL, &cur, now, out);
		NEXT();
	}
#undef NEXT
	tmp = *in;
	*in = *out;
	*out = tmp;
	if (!ret)
		add_saved(sv, sp, k, in);
	return ret;
}

/* Whether space @sp's process is gone: it left, or its pid names another one (exec). */
static int space_gone(const struct space *sp, const struct rec_info *info)
{
	const struct rec_target *t = &info->targets[sp->target];

	return t->exit_ns != REC_NO_EXIT || rec_info_target(info, sp->pid) != t;
}

/* Everything @sp still has reclaimed, as @ev; the space is then done. */
static int settle(struct savings *sv, struct space *sp, enum sav_event ev)
{
	for (unsigned int k = 0; k < sv->nr_t; k++) {
		for (size_t i = 0; i < sp->sets[k].n; i++) {
			const struct ivl *v = &sp->sets[k].v[i];

			if (account(sv, sp, k, ev, (double)(v->end - v->start) * v->res, 0))
				return EXIT_FAIL;
		}
		sp->sets[k].n = 0;
	}
	sp->done = 1;
	return 0;
}

static int cmp_wreg(const void *a, const void *b)
{
	const struct wreg *x = a, *y = b;

	if (x->space != y->space)
		return x->space < y->space ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void touch(struct savings *sv, struct sav_stats *st)
{
	if (!st || st->touched)
		return;
	st->touched = 1;
	sv->touched[sv->nr_touched++] = st;
}

/* This window's bytes of @r into its stats and the record's. */
static void tally(struct savings *sv, const struct wreg *r)
{
	struct sav_stats *sts[2] = { &sv->all, sv->sp[r->space].group };
	double bytes = (double)(r->end - r->start);

	for (int i = 0; i < 2 && sts[i]; i++) {
		struct sav_stats *st = sts[i];

		touch(sv, st);
		if (r->kind == W_HOLE)
			continue;
		if (r->kind == W_UNOBS) {
			st->unobs_now += bytes;
			continue;
		}
		if (r->kind == W_OUT_OF_REACH) {
			st->unreachable_now += bytes;
			continue;
		}
		st->observed_now += bytes;
		if (r->res_known)
			st->resident_now += bytes * r->res;
		else
			st->res_unknown_now += bytes;
		if (r->kind == W_AGE_UNKNOWN)
			st->age_unknown_now += bytes;
	}
}

/* The window's numbers folded into each group it had regions of. */
static void fold(struct savings *sv, const struct rec_snapshot *s)
{
	for (size_t i = 0; i < sv->nr_touched; i++) {
		struct sav_stats *st = sv->touched[i];

		if (!st->windows++)
			st->first_ns = s->start_ns;
		st->last_ns = s->end_ns;
		st->observed_sum += st->observed_now;
		st->unobs_sum += st->unobs_now;
		st->age_unknown_sum += st->age_unknown_now;
		st->unreachable_sum += st->unreachable_now;
		st->resident_sum += st->resident_now;
		st->res_unknown_sum += st->res_unknown_now;
		st->observed_now = st->unobs_now = st->age_unknown_now = 0;
		st->unreachable_now = st->resident_now = st->res_unknown_now = 0;
		for (unsigned int k = 0; k < sv->nr_t; k++) {
			st->pt[k].saved_sum += st->pt[k].saved_now;
			st->pt[k].saved_last = st->pt[k].saved_now;
			st->pt[k].saved_now = 0;
		}
		st->touched = 0;
	}
	sv->nr_touched = 0;
}

/*
 * The share of region @r that was resident: of its sampling rounds that
 * observed their page, those that found it present (the placement
 * columns).  Memory mapped but never touched, or already swapped out, is
 * no saving.  A record without placement does not say: all of it, and
 * the bytes so counted are reported.
 */
static void region_resident(const struct rec_snapshot *s, const struct rec_region *r,
			    struct wreg *w)
{
	uint32_t seen = s->nr_samples > r->nr_unobserved ? s->nr_samples - r->nr_unobserved : 0;

	w->res_known = s->placement && seen;
	w->res = !w->res_known ? 1 : r->nr_present >= seen ? 1 : (double)r->nr_present / seen;
}

/*
 * The window's regions of the wanted targets, by space and address, as
 * what they say about their bytes.  Overlapping regions (a damaged
 * record) keep the first one's bytes.
 */
static ssize_t window_regions(struct savings *sv, const struct rec_snapshot *s,
			      const struct rec_info *info)
{
	size_t n = 0, m = 0;
	int sorted = 1;

	if (report_grow((void **)&sv->w, &sv->w_cap, s->nr_regions, sizeof(*sv->w)))
		return -1;
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		struct wreg *w = &sv->w[n];
		ssize_t sp;

		if ((sv->o->pid && r->pid != sv->o->pid) || r->start >= r->end ||
		    !rec_info_target(info, r->pid))
			continue;
		sp = space_of(sv, info, r->pid);
		if (sp < 0)
			return -1;
		*w = (struct wreg){ .start = r->start, .end = r->end, .space = (size_t)sp };
		if (!strcmp(r->label, "[unmapped]"))
			w->kind = W_HOLE;
		else if (!pol_label_actionable(r->label, (enum pol_filter_type)sv->o->sav_type))
			w->kind = W_OUT_OF_REACH;
		else if (!rec_observable(r))
			w->kind = W_UNOBS;
		else if (r->nr_accesses)
			w->kind = W_ACCESSED;
		else if (r->age_unknown)
			w->kind = W_AGE_UNKNOWN;
		else
			w->kind = W_IDLE;
		w->age = r->age;
		region_resident(s, r, w);
		if (n && cmp_wreg(&sv->w[n - 1], w) > 0)
			sorted = 0;
		n++;
	}
	if (!sorted)
		qsort(sv->w, n, sizeof(*sv->w), cmp_wreg);
	for (size_t i = 0; i < n; i++) {
		struct wreg w = sv->w[i];

		if (m && sv->w[m - 1].space == w.space && w.start < sv->w[m - 1].end)
			w.start = sv->w[m - 1].end;
		if (w.start < w.end)
			sv->w[m++] = w;
	}
	return (ssize_t)m;
}

/*
 * Windows the record lacks (missed_before) may hold accesses, as the policy
 * engine's after_gap() says: an idle region whose age covers them kept its
 * idle level through them, and its ranges' clocks stand; any other counts
 * as accessed when its level last changed (its age ago, as report access
 * counts it), or, its age unknown, up to this window.
 */
static int after_gap(struct savings *sv, struct space *sp, const struct wreg *r, size_t nr,
		     const struct rec_snapshot *s)
{
	for (size_t i = 0; i < nr; i++) {
		uint64_t t, idle;

		if (r[i].kind == W_IDLE && r[i].age > s->missed_before)
			continue;
		if (r[i].kind == W_IDLE) {
			idle = report_age_ns(sv->o, s, r[i].age) + (s->end_ns - s->start_ns);
			t = s->end_ns > idle ? s->end_ns - idle : 0;
		} else if (r[i].kind == W_AGE_UNKNOWN)
			t = s->start_ns;
		else
			continue;	/* accessed: marked now; the others say nothing */
		if (t < sp->since_ns)
			t = sp->since_ns;
		if (pol_iset_add(&sp->accessed, r[i].start, r[i].end, (int64_t)t))
			return -1;
	}
	return 0;
}

/*
 * One space's regions @r[0..nr) of window @s into sv->pw: each idle one cut
 * into pieces of one idle time, by address: since the end of the last
 * window in which a region covering the piece had an access, else since
 * the space's first window began.
 */
static ssize_t by_address(struct savings *sv, const struct space *sp, const struct wreg *r,
			  size_t nr, const struct rec_snapshot *s)
{
	size_t n = 0;

	for (size_t i = 0; i < nr; i++) {
		uint64_t a = r[i].start;

		do {
			struct wreg w = r[i];
			uint64_t pe = r[i].end;
			int64_t t;

			if (w.kind == W_IDLE) {
				if (!pol_iset_piece(&sp->accessed, a, r[i].end, &pe, &t))
					t = (int64_t)sp->since_ns;
				w.idle_ns = s->end_ns > (uint64_t)t ? s->end_ns - (uint64_t)t : 0;
			}
			w.start = a;
			w.end = pe;
			if (report_grow((void **)&sv->pw, &sv->pw_cap, n + 1, sizeof(*sv->pw)))
				return -1;
			sv->pw[n++] = w;
			a = pe;
		} while (a < r[i].end);
	}
	return (ssize_t)n;
}

/* Space @sp through window @s: its regions @r[0..nr), sorted and disjoint. */
static int space_window(struct savings *sv, struct space *sp, const struct wreg *r, size_t nr,
			const struct rec_snapshot *s)
{
	size_t nacc = 0;
	ssize_t np;

	if (sp->since_ns == UINT64_MAX)
		sp->since_ns = s->start_ns;
	if (s->missed_before && after_gap(sv, sp, r, nr, s))
		return fail(CMD, "out of memory");
	np = by_address(sv, sp, r, nr, s);
	if (np < 0)
		return fail(CMD, "out of memory");
	for (ssize_t i = 0; i < np; i++)
		tally(sv, &sv->pw[i]);
	for (unsigned int k = 0; k < sv->nr_t; k++)
		if (sweep(sv, sp, k, sv->pw, (size_t)np, s->end_ns))
			return EXIT_FAIL;
	for (size_t i = 0; i < nr; i++) {
		if (r[i].kind != W_ACCESSED)
			continue;
		if (report_grow((void **)&sv->acc, &sv->acc_cap, nacc + 1, sizeof(*sv->acc)))
			return fail(CMD, "out of memory");
		sv->acc[nacc++] = (struct pol_range){ r[i].start, r[i].end, (int64_t)s->end_ns };
	}
	if (pol_iset_add_sorted(&sp->accessed, sv->acc, nacc))
		return fail(CMD, "out of memory");
	/*
	 * Older than the longest threshold: idle for more than every one,
	 * as is memory never seen accessed (since_ns is older still).
	 */
	if (s->end_ns > sv->max_t_ns)
		pol_iset_expire(&sp->accessed, (int64_t)(s->end_ns - sv->max_t_ns));
	return 0;
}

static int on_window(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct savings *sv = arg;
	ssize_t n = window_regions(sv, s, info);
	size_t i, j;

	if (n < 0)
		return fail(CMD, "out of memory");
	if (report_grow((void **)&sv->touched, &sv->touched_cap, sv->nr_sp + 1,
			sizeof(*sv->touched)))
		return fail(CMD, "out of memory");
	for (i = 0; i < (size_t)n; i = j) {
		struct space *sp = &sv->sp[sv->w[i].space];

		for (j = i; j < (size_t)n && sv->w[j].space == sv->w[i].space; j++)
			;
		sp->seen_seq = s->seq + 1;
		if (space_window(sv, sp, &sv->w[i], j - i, s))
			return EXIT_FAIL;
	}
	/* spaces without regions now whose process is gone: never reused */
	for (i = 0; i < sv->nr_sp; i++) {
		struct space *sp = &sv->sp[i];

		if (!sp->done && sp->seen_seq != s->seq + 1 && space_gone(sp, info) &&
		    settle(sv, sp, EV_NEVER))
			return EXIT_FAIL;
	}
	if (n)
		fold(sv, s);
	return 0;
}

/*
 * The knee: the largest average saving among the thresholds whose
 * refaults/s stay within SAV_KNEE_PCT % of the most any threshold causes
 * (the shortest threshold if none refaults).  Past it, each second of
 * threshold saves little more but costs refaults, or the reverse.
 */
static void find_knee(const struct savings *sv, struct sav_stats *st)
{
	double max = 0, best = 0;

	st->knee = -1;
	if (!st->windows)
		return;
	for (unsigned int k = 0; k < sv->nr_t; k++)
		if (sav_refault_rate(st, k) > max)
			max = sav_refault_rate(st, k);
	for (unsigned int k = 0; k < sv->nr_t; k++) {
		if (sav_refault_rate(st, k) > max * SAV_KNEE_PCT / 100)
			continue;
		if (st->knee < 0 || sav_saved_mean(st, k) > best) {
			st->knee = (int)k;
			best = sav_saved_mean(st, k);
		}
	}
}

static int cmp_stats(const void *a, const void *b)
{
	const struct sav_stats *x = *(const struct sav_stats *const *)a;
	const struct sav_stats *y = *(const struct sav_stats *const *)b;
	double mx = sav_saved_mean(x, 0), my = sav_saved_mean(y, 0);

	if (mx != my)
		return mx < my ? 1 : -1;
	return strcmp(x->key, y->key);
}

/* The record's page size for pages/s: its #meta, else 4 KiB. */
static uint64_t page_size(const struct rec_info *info)
{
	const char *v = rec_info_get(info, "page_size");
	uint64_t ps;

	return v && !parse_u64_dec(v, &ps) && ps ? ps : 4096;
}

static void savings_free(struct savings *sv)
{
	for (size_t i = 0; i < sv->nr_sp; i++) {
		for (unsigned int k = 0; k < sv->nr_t; k++)
			free(sv->sp[i].sets[k].v);
		free(sv->sp[i].sets);
		pol_iset_free(&sv->sp[i].accessed);
	}
	for (size_t i = 0; i < sv->gst_cap; i++) {
		if (!sv->gst[i])
			continue;
		stats_free(sv->gst[i], sv->nr_t);
		free(sv->gst[i]);
	}
	stats_free(&sv->all, sv->nr_t);
	free(sv->gst);
	free(sv->sp);
	free(sv->sp_of_target);
	free(sv->w);
	free(sv->pw);
	free(sv->acc);
	free(sv->scratch.v);
	free(sv->touched);
	rgroups_free(&sv->groups);
}

int report_savings(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct savings sv = { .o = o };
	struct sav_result res = { .o = o };
	struct rec_info info;
	int ret;

	sv.t_ns = o->nr_thresholds ? o->thresholds_ns : default_t_ns;
	sv.nr_t = o->nr_thresholds ? o->nr_thresholds :
		  (unsigned int)(sizeof(default_t_ns) / sizeof(default_t_ns[0]));
	for (unsigned int k = 0; k < sv.nr_t; k++)
		if (sv.t_ns[k] > sv.max_t_ns)
			sv.max_t_ns = sv.t_ns[k];
	if (stats_init(&sv.all, sv.nr_t, "all")) {
		memset(&info, 0, sizeof(info));
		ret = fail(CMD, "out of memory");
		goto out;
	}
	ret = report_read(o, on_window, &sv, &info);
	if (ret)
		goto out;
	if (!sv.all.windows) {
		ret = report_nothing(o, "regions");
		goto out;
	}
	/* what is still reclaimed: freed if its process is gone, else its future is unknown */
	for (size_t i = 0; i < sv.nr_sp; i++)
		if (!sv.sp[i].done &&
		    settle(&sv, &sv.sp[i], space_gone(&sv.sp[i], &info) ? EV_NEVER : EV_UNKNOWN)) {
			ret = EXIT_FAIL;
			goto out;
		}
	sv.all.nr_procs = sv.nr_sp;
	find_knee(&sv, &sv.all);
	res.t_ns = sv.t_ns;
	res.nr_t = sv.nr_t;
	res.page_size = page_size(&info);
	res.all = sv.all;
	res.groups = calloc(sv.groups.n ? sv.groups.n : 1, sizeof(*res.groups));
	if (!res.groups) {
		ret = fail(CMD, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < sv.groups.n && i < sv.gst_cap; i++) {
		if (!sv.gst[i])
			continue;
		sv.gst[i]->nr_procs = sv.groups.g[i].nr_procs;
		find_knee(&sv, sv.gst[i]);
		res.groups[res.nr_groups++] = sv.gst[i];
	}
	qsort(res.groups, res.nr_groups, sizeof(*res.groups), cmp_stats);
	if (o->plot)
		sav_print_plot(&res, out, tics);
	else if (o->json)
		sav_print_json(&res, out);
	else
		sav_print_text(&res, out);
out:
	free(res.groups);
	savings_free(&sv);
	rec_info_free(&info);
	return ret;
}
