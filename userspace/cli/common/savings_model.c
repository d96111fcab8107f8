// SPDX-License-Identifier: GPL-2.0-only
/*
 * The savings curve's model (savings_model.h): windows replayed under
 * "reclaim what is idle for at least T", once per threshold.
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
 *
 * What an access takes back.  A policy pages out page by page, and a read
 * of reclaimed memory brings back the pages it touches, not the region: a
 * cache that reads a few values at a time from a cold region gets back a
 * few pages.  So an access to a reclaimed range returns the share of the
 * region's pages the window touched, as its sampling rounds estimate it
 * (touched_share(), checked by the accuracy probes: calibrate(), which
 * also says why the refaults count the share as sampled); the rest stays
 * reclaimed (the range's kept share), and what came back is reclaimed
 * again once idle long enough again.
 * Touched pages are taken at random among the region's, those that came
 * back before as likely as the others: a scan read once a second is seen
 * by about one round a window (63 % counted) and must come back whole
 * over its next reads.  (Taking those that came back first instead, on
 * one record of each of bench/savings.sh's workloads, predicted 0.59x
 * the refaults a policy caused on phases, and moved kv's prediction by
 * 3 % at most.)
 *
 * Holes.  Where the record has the process's map (#maps rows), reclaimed
 * bytes are freed only where no mapping is left; without one, where a
 * region labelled "[unmapped]" (mostly hole) covers them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "mapped.h"
#include "policy.h"
#include "savings_model.h"
#include "units.h"

/*
 * Bytes [start, end) reclaimed at the end of the window ending at @t_ns;
 * @res of them were resident then (what the reclaim took, and what can
 * come back).
 */
struct ivl {
	uint64_t start, end, t_ns;
	double res;
	double kept;			/* the share still reclaimed: accesses took the rest back */
};

struct ivl_set {
	struct ivl *v;
	size_t n, cap;
};

/* One address space: a process, until it exec'ed or left. */
struct sav_space {
	uint64_t id;			/* creation order: a window walks spaces in it */
	struct sav_stats *group;	/* or NULL */
	struct ivl_set *sets;		/* reclaimed ranges, per threshold */
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
	struct sav_space *sp;
	enum wkind kind;
	uint32_t age;			/* windows (for missed windows only) */
	double res;			/* its resident share (1: not known) */
	double touched;			/* accessed: the share of its pages touched, to stay */
	double read;			/* accessed: the share read, as sampled (>= touched) */
	int res_known;			/* the window has placement: @res was sampled */
};

struct sav_model {
	uint64_t t_ns[SAV_MAX_THRESHOLDS];	/* ascending */
	unsigned int nr_t;
	int type;			/* enum pol_filter_type */
	uint64_t max_t_ns;		/* the longest threshold */
	uint64_t next_id;
	size_t nr_spaces;		/* live */
	struct sav_stats all;
	struct wreg *w;			/* the window's regions of counted spaces */
	size_t w_cap;
	struct wreg *pw;		/* one space's regions, idle ones cut by idle time */
	size_t pw_cap;
	struct pol_range *acc;		/* one space's accessed regions, this window */
	size_t acc_cap;
	struct ivl_set scratch;
	/* the probes and the touched shares of the windows with probes, pooled (calibrate()) */
	double cal_tp, cal_probed;	/* probe pages: accessed, and in regions read accessed */
	double cal_touched, cal_bytes;	/* bytes: touched (the model's estimate), accessed */
	double cal_huge;		/* bytes: of the accessed, in huge pages (by the samples) */
	struct sav_calib cal;		/* as of the last window */
	struct sav_stats **touched;	/* stats with regions in this window */
	size_t nr_touched, touched_cap;
};

enum sav_event { EV_RECLAIM, EV_REFAULT, EV_NEVER, EV_UNKNOWN };

/* --- thresholds --- */

int sav_parse_thresholds(const char *val, uint64_t *t_ns, unsigned int *nr)
{
	uint64_t t[SAV_MAX_THRESHOLDS], us;
	char buf[1024], *save = NULL, *tok;
	unsigned int n = 0;

	/* a trailing or doubled comma is a mistake, not an empty threshold */
	if (strlen(val) >= sizeof(buf) || !val[0] || val[0] == ',' ||
	    val[strlen(val) - 1] == ',' || strstr(val, ",,"))
		return -EINVAL;
	strcpy(buf, val);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned int i = n;

		if (n == SAV_MAX_THRESHOLDS || parse_duration_us(tok, &us) || !us ||
		    us > UINT64_MAX / 1000)
			return -EINVAL;
		/* insertion in order: a few values */
		for (; i && t[i - 1] > us * 1000; i--)
			t[i] = t[i - 1];
		if (i && t[i - 1] == us * 1000)
			return -EINVAL;
		t[i] = us * 1000;
		n++;
	}
	memcpy(t_ns, t, n * sizeof(*t));
	*nr = n;
	return 0;
}

/* --- groups --- */

static int stats_init(struct sav_stats *st, unsigned int nr_t, const char *key)
{
	memset(st, 0, sizeof(*st));
	st->knee = -1;
	st->key = strdup(key);
	st->pt = calloc(nr_t, sizeof(*st->pt));
	if (st->key && st->pt)
		return 0;
	free(st->key);
	free(st->pt);
	return -ENOMEM;
}

static void stats_free(struct sav_stats *st, unsigned int nr_t)
{
	if (!st->pt)
		return;
	for (unsigned int k = 0; k < nr_t; k++)
		free(st->pt[k].reuse.b);
	free(st->pt);
	free(st->key);
	st->pt = NULL;
}

struct sav_stats *sav_group_new(const struct sav_model *m, const char *key)
{
	struct sav_stats *st = malloc(sizeof(*st));

	if (st && stats_init(st, m->nr_t, key)) {
		free(st);
		st = NULL;
	}
	return st;
}

void sav_group_free(const struct sav_model *m, struct sav_stats *st)
{
	if (!st)
		return;
	stats_free(st, m->nr_t);
	free(st);
}

/* --- the model and its spaces --- */

struct sav_model *sav_model_new(const uint64_t *t_ns, unsigned int nr_t, int type)
{
	struct sav_model *m;

	if (!nr_t || nr_t > SAV_MAX_THRESHOLDS)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	memcpy(m->t_ns, t_ns, nr_t * sizeof(*t_ns));
	m->nr_t = nr_t;
	m->type = type;
	for (unsigned int k = 0; k < nr_t; k++)
		if (t_ns[k] > m->max_t_ns)
			m->max_t_ns = t_ns[k];
	m->cal.scale = 1;
	if (stats_init(&m->all, nr_t, "all")) {
		free(m);
		return NULL;
	}
	return m;
}

void sav_model_free(struct sav_model *m)
{
	if (!m)
		return;
	stats_free(&m->all, m->nr_t);
	free(m->w);
	free(m->pw);
	free(m->acc);
	free(m->scratch.v);
	free(m->touched);
	free(m);
}

unsigned int sav_model_nr_t(const struct sav_model *m)
{
	return m->nr_t;
}

const uint64_t *sav_model_t_ns(const struct sav_model *m)
{
	return m->t_ns;
}

struct sav_stats *sav_model_all(struct sav_model *m)
{
	return &m->all;
}

struct sav_space *sav_space_new(struct sav_model *m, struct sav_stats *group)
{
	struct sav_space *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	sp->sets = calloc(m->nr_t, sizeof(*sp->sets));
	if (!sp->sets) {
		free(sp);
		return NULL;
	}
	sp->id = m->next_id++;
	sp->group = group;
	sp->since_ns = UINT64_MAX;
	m->nr_spaces++;
	return sp;
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
		if (grow_array((void **)&r->b, &r->cap, r->n + 1, sizeof(*r->b)))
			return -ENOMEM;
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

/* --- accounting: the whole and the space's group --- */

static int account(struct sav_model *m, const struct sav_space *sp, unsigned int k,
		   enum sav_event ev, double bytes, uint64_t reuse_ns)
{
	struct sav_stats *sts[2] = { &m->all, sp->group };

	for (int i = 0; i < 2 && sts[i]; i++) {
		struct sav_point *p = &sts[i]->pt[k];

		switch (ev) {
		case EV_RECLAIM:
			p->reclaimed += bytes;
			break;
		case EV_REFAULT:
			p->refaulted += bytes;
			if (reuse_add(&p->reuse, reuse_ns, bytes))
				return -ENOMEM;
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

void sav_space_end(struct sav_model *m, struct sav_space *sp, int freed)
{
	if (!sp)
		return;
	for (unsigned int k = 0; k < m->nr_t; k++) {
		for (size_t i = 0; i < sp->sets[k].n; i++) {
			const struct ivl *v = &sp->sets[k].v[i];

			/* EV_NEVER and EV_UNKNOWN allocate nothing */
			account(m, sp, k, freed ? EV_NEVER : EV_UNKNOWN,
				(double)(v->end - v->start) * v->res * v->kept, 0);
		}
		free(sp->sets[k].v);
	}
	free(sp->sets);
	pol_iset_free(&sp->accessed);
	free(sp);
	m->nr_spaces--;
}

/* Append reclaimed range @v, merged with the last range if they touch and agree. */
static int ivl_push(struct ivl_set *s, const struct ivl *v)
{
	struct ivl *last = s->n ? &s->v[s->n - 1] : NULL;

	if (last && last->end == v->start && last->t_ns == v->t_ns && last->res == v->res &&
	    last->kept == v->kept) {
		last->end = v->end;
		return 0;
	}
	if (grow_array((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -ENOMEM;
	s->v[s->n++] = *v;
	return 0;
}

/*
 * What window @now does to reclaimed piece [start, end) of @sp: a
 * refault, freed (never reused), or it stays reclaimed (into @out).
 */
static int apply(struct sav_model *m, const struct sav_space *sp, unsigned int k,
		 const struct wreg *r, const struct ivl *piece, uint64_t now,
		 struct ivl_set *out)
{
	double size = (double)(piece->end - piece->start) * piece->res;
	struct ivl left = *piece;
	int err;

	if (!r || r->kind == W_HOLE)
		return account(m, sp, k, EV_NEVER, size * piece->kept, 0);
	if (r->kind == W_ACCESSED) {
		/* what was read refaults; what the probes did not find there is out again */
		err = account(m, sp, k, EV_REFAULT, size * piece->kept * r->read,
			      now > piece->t_ns ? now - piece->t_ns : 0);
		if (!err && r->read > r->touched)
			err = account(m, sp, k, EV_RECLAIM, size * piece->kept * (r->read - r->touched),
				      0);
		left.kept = piece->kept * (1 - r->touched);
		if (err || r->touched >= 1)
			return err;
	} else if (r->kind == W_IDLE && r->idle_ns >= m->t_ns[k] && piece->kept < 1) {
		/* what accesses took back is idle long enough again */
		err = account(m, sp, k, EV_RECLAIM, size * (1 - piece->kept), 0);
		if (err)
			return err;
		left.kept = 1;
	}
	return ivl_push(out, &left);
}

/*
 * What space @sp holds reclaimed at threshold @k at the end of a window,
 * @set, resident when it was reclaimed: the memory saved then.  Counted
 * from the reclaimed ranges, not from this window's idle regions: in a
 * policy's own record what it paged out reads not present.
 */
static void add_saved(struct sav_model *m, const struct sav_space *sp, unsigned int k,
		      const struct ivl_set *set)
{
	struct sav_stats *sts[2] = { &m->all, sp->group };
	double bytes = 0;

	for (size_t i = 0; i < set->n; i++)
		bytes += (double)(set->v[i].end - set->v[i].start) * set->v[i].res * set->v[i].kept;
	for (int i = 0; i < 2 && sts[i]; i++)
		sts[i]->pt[k].saved_now += bytes;
}

/*
 * One threshold of one space through one window: its regions @r[0..nr)
 * (sorted, disjoint) against its reclaimed ranges, walking both in address
 * order.  Reclaimed bytes outside every region were unmapped.
 */
static int sweep(struct sav_model *m, struct sav_space *sp, unsigned int k,
		 const struct wreg *r, size_t nr, uint64_t now)
{
	struct ivl_set *in = &sp->sets[k], *out = &m->scratch, tmp;
	uint64_t t = m->t_ns[k];
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
			struct ivl p = cur;

			p.end = cur.end < r[j].start ? cur.end : r[j].start;

			ret = apply(m, sp, k, NULL, &p, now, out);
			cur.start = p.end;
			if (cur.start == cur.end)
				NEXT();
		}
		while (pos < r[j].end && !ret) {
			uint64_t e;

			if (have && cur.start <= pos) {
				struct ivl p = cur;

				p.start = pos;
				p.end = cur.end < r[j].end ? cur.end : r[j].end;

				ret = apply(m, sp, k, &r[j], &p, now, out);
				pos = cur.start = p.end;
				if (cur.start == cur.end)
					NEXT();
				continue;
			}
			e = have && cur.start < r[j].end ? cur.start : r[j].end;
			if (r[j].kind == W_IDLE && r[j].idle_ns >= t) {
				struct ivl v = { pos, e, now, r[j].res, 1 };

				ret = account(m, sp, k, EV_RECLAIM, (double)(e - pos) * r[j].res, 0);
				if (!ret)
					ret = ivl_push(out, &v);
			}
			pos = e;
		}
	}
	while (have && !ret) {
		ret = apply(m, sp, k, NULL, &cur, now, out);
		NEXT();
	}
#undef NEXT
	tmp = *in;
	*in = *out;
	*out = tmp;
	if (!ret)
		add_saved(m, sp, k, in);
	return ret;
}

static int cmp_wreg(const void *a, const void *b)
{
	const struct wreg *x = a, *y = b;

	if (x->sp->id != y->sp->id)
		return x->sp->id < y->sp->id ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void touch(struct sav_model *m, struct sav_stats *st)
{
	if (!st || st->touched)
		return;
	st->touched = 1;
	m->touched[m->nr_touched++] = st;
}

/* This window's bytes of @r into its stats and the whole's. */
static void tally(struct sav_model *m, const struct wreg *r)
{
	struct sav_stats *sts[2] = { &m->all, r->sp->group };
	double bytes = (double)(r->end - r->start);

	for (int i = 0; i < 2 && sts[i]; i++) {
		struct sav_stats *st = sts[i];

		touch(m, st);
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
static void fold(struct sav_model *m, const struct rec_snapshot *s)
{
	for (size_t i = 0; i < m->nr_touched; i++) {
		struct sav_stats *st = m->touched[i];

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
		for (unsigned int k = 0; k < m->nr_t; k++) {
			st->pt[k].saved_sum += st->pt[k].saved_now;
			st->pt[k].saved_last = st->pt[k].saved_now;
			st->pt[k].saved_now = 0;
		}
		st->touched = 0;
	}
	m->nr_touched = 0;
}

/*
 * The share of region @r's memory that was resident: of its sampling
 * rounds that observed their page, those that found it present (the
 * placement counts), over @mapped, the share of its bytes that are
 * memory (a round that fell in a hole between mappings found nothing
 * there).  Memory mapped but never touched, or already swapped out, is
 * no saving.  A window without placement does not say: all of it, and
 * the bytes so counted are reported.
 */
static void region_resident(const struct rec_snapshot *s, const struct rec_region *r,
			    double mapped, struct wreg *w)
{
	uint32_t seen = s->nr_samples > r->nr_unobserved ? s->nr_samples - r->nr_unobserved : 0;
	double res = seen ? (double)r->nr_present / seen / mapped : 1;

	w->res_known = s->placement && seen;
	w->res = !w->res_known || res >= 1 ? 1 : res;
}

/*
 * The chance x that a base page is touched in a round, from the share q
 * of rounds that found an access, @huge of them having checked a huge
 * page of @per_huge base pages: a huge page's one accessed bit is set if
 * any of its pages was touched, 1 - (1 - x)^per_huge, a base page's with
 * x.  q = huge (1 - (1 - x)^per_huge) + (1 - huge) x grows with x from 0
 * to 1: bisection, to well below what one round can tell.
 */
static double base_page_rate(double q, double huge, double per_huge)
{
	double lo = 0, hi = 1;

	if (huge <= 0)
		return q;
	for (int i = 0; i < 60; i++) {
		double x = (lo + hi) / 2;

		if (-huge * expm1(per_huge * log1p(-x)) + (1 - huge) * x < q)
			lo = x;
		else
			hi = x;
	}
	return (lo + hi) / 2;
}

/*
 * The share of accessed region @r's memory its window touched (what
 * comes back of it if it was reclaimed).  Each sampling round checks one
 * random page for an access since the round before: the share of rounds
 * that found one, over @mapped as above, q, is the share of pages touched
 * in a round, and pages touched at random add up to 1 - (1 - q)^n over
 * the window's n rounds.  All of it where every round found one, or where
 * the rounds are not known (records from damo).  Reads that keep to a few
 * pages touch fewer (the estimate is high for them); a range read through
 * within one round (a scan) touches all of it though one round saw it
 * (about 63 % counted, the rest at its next reads).
 *
 * Huge pages.  A round whose page a huge entry mapped (the record's
 * nr_huge) read one accessed bit for all of its base pages: found
 * accessed, one of them at least was.  What pageout frees and an access
 * brings back is base pages (a huge page is split, or swapped in a page
 * at a time), so the share is of base pages: q is solved for the chance x
 * that one is touched in a round (base_page_rate()), and the window
 * touched 1 - (1 - x)^n of them.  One access a window in a region of
 * transparent huge pages so counts a few base pages, where read as a base
 * page's it would count 64 % of the region; a scan of one round, seen in
 * one round, counts as little there (the rest comes back at its next
 * reads, more slowly than in base pages).  A record without the count
 * (older modules, damo) reads as all base pages.
 */
static double touched_share(const struct rec_snapshot *s, const struct rec_region *r,
			    double mapped, uint64_t page_size)
{
	uint32_t seen = s->nr_samples > r->nr_unobserved ? s->nr_samples - r->nr_unobserved : 0;
	double q = seen ? (double)r->nr_accesses / seen / mapped : 1;
	double huge = seen ? (double)r->nr_huge / seen / mapped : 0;
	/* a pmd's worth: a page table holds page_size / 8 entries */
	double per_huge = (double)(page_size ? page_size : 4096) / 8;

	if (q >= 1)
		return 1;
	return -expm1(seen * log1p(-base_page_rate(q, huge < 1 ? huge : 1, per_huge)));
}

/*
 * The touched shares, checked by the accuracy probes.  A region's share
 * (touched_share()) reads its rounds' hits as pages touched at random all
 * over it; where accesses keep to a few pages (a cache reading a few
 * values from a large cold region) one hit in 20 rounds says 64 % of it
 * and a few pages were touched.  What the share is used for splits here.
 * What stays back (the reclaimed range's kept share, and with it the
 * memory saved) is the pages the window touched there: the checked share.
 * What refaults is every read of reclaimed memory, and one hit stands
 * for reads in the regions no round looked at as well (a Zipf tail reads
 * a page here and there all over the cold memory, and the sampling
 * catches some): the sampled share, as it was, whose surplus over the
 * checked one refaults and is taken as reclaimed again at once.  (That
 * is an approximation: a policy that marks what it acted on leaves such
 * pages resident until their region is read accessed and idle again.)  The module's probes give page-level
 * truth for pages drawn over the regions' memory: of those in regions
 * read accessed, the share accessed in their window (the probes'
 * precision) is the share the model estimates, over the same bytes.  So
 * all of the probes' targets' accessed regions are pooled here, whatever
 * the model counts.  Every touched share is scaled down to what the
 * probes show with 95 % confidence: by the upper bound of the precision's
 * interval over the model's share, both pooled over the windows with
 * probes so far (a running estimate: stat keeps it live).  A few probes
 * say little and scale little; many (64 a window by default, 2 where
 * their cost bound holds them back) converge on the precision itself.
 * Only down: a model that says fewer pages than the probes find is what
 * it was measured to be on bench/savings.sh's phases and reclaim records
 * (precision near 1, no bias found), and a scan read within one round
 * counts 63 % there by design.  All accessed regions alike, those every
 * round found accessed too: sparing them (they are touched all over)
 * scaled the others further and moved neither saved nor refaults closer
 * on memcached (BENCHMARKS.md, "The touched shares checked by the
 * accuracy probes", which also has what taking the checked share for the
 * refaults too did: 1.5-1.6x too few; the probes' rate in regions read
 * idle, of warmer memory than what a policy reclaims, 2x too many).
 *
 * Huge pages: a probe of a page a huge entry maps reads the PMD's one
 * bit, true for all 512 base pages if one of them was touched; the
 * precision is then above the base pages', and the scale stays at or
 * near 1.  Under THP the calibration can fail to correct, never
 * over-correct.
 */

/*
 * The upper end of the 95 % Wilson score interval of a share @hits of @n
 * (1 if @n is 0): sound for the few probes a window, where the normal
 * approximation is not.
 */
static double precision_upper(double hits, double n)
{
	const double z = 1.96;
	double p, c;

	if (n <= 0)
		return 1;
	p = hits / n;
	c = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n));
	return (p + z * z / (2 * n) + c) / (1 + z * z / n);
}

/* Region @r of window @s (@in of its bytes memory, if @known) into the pool. */
static void pool_touched(struct sav_model *m, const struct rec_snapshot *s,
			 const struct rec_region *r, int known, uint64_t in,
			 uint64_t page_size)
{
	double len = (double)(r->end - r->start);

	if (!r->nr_accesses || !rec_observable(r) || !in ||
	    (!known && !strcmp(r->label, "[unmapped]")))
		return;
	m->cal_touched += touched_share(s, r, (double)in / len, page_size) * (double)in;
	m->cal_bytes += (double)in;
	if (r->nr_present)
		m->cal_huge += (double)r->nr_huge / r->nr_present * (double)in;
}

/* Window @s's probes into the pool; its accessed regions' @w[0..n) touched shares scaled. */
static void calibrate(struct sav_model *m, const struct rec_snapshot *s, struct wreg *w,
		      size_t n)
{
	struct sav_calib *c = &m->cal;

	if (s->has_probes) {
		m->cal_tp += s->probes.tp;
		m->cal_probed += (double)s->probes.tp + s->probes.fp;
		c->probed = m->cal_probed;
		c->precision = m->cal_probed ? m->cal_tp / m->cal_probed : 0;
		c->touched = m->cal_bytes ? m->cal_touched / m->cal_bytes : 0;
		c->huge = m->cal_bytes ? m->cal_huge / m->cal_bytes : 0;
		c->upper = precision_upper(m->cal_tp, m->cal_probed);
		c->scale = c->upper < c->touched ? c->upper / c->touched : 1;
	}
	if (c->scale >= 1)
		return;
	for (size_t i = 0; i < n; i++)
		if (w[i].kind == W_ACCESSED)
			w[i].touched *= c->scale;	/* w[i].read stays */
}

const struct sav_calib *sav_model_calib(const struct sav_model *m)
{
	return &m->cal;
}

static int push_wreg(struct sav_model *m, size_t *n, const struct wreg *w)
{
	if (grow_array((void **)&m->w, &m->w_cap, *n + 1, sizeof(*m->w)))
		return -ENOMEM;
	m->w[(*n)++] = *w;
	return 0;
}

/*
 * Region @w cut by its process's map (@mr[0..nmr), ascending and apart)
 * into its memory, as @w says, and the holes between mappings (W_HOLE):
 * reclaimed bytes are freed only where no mapping is left, whatever the
 * region's label.
 */
static int push_mapped(struct sav_model *m, size_t *n, const struct wreg *w,
		       const struct rec_range *mr, uint32_t nmr)
{
	struct wreg hole = *w, mem = *w;
	uint64_t pos = w->start;
	uint32_t i = 0, hi = nmr;

	hole.kind = W_HOLE;
	/* the first range that ends above the region's start */
	while (i < hi) {
		uint32_t mid = i + (hi - i) / 2;

		if (mr[mid].end <= w->start)
			i = mid + 1;
		else
			hi = mid;
	}
	for (; pos < w->end; i++) {
		uint64_t a = i < nmr && mr[i].start < w->end ? mr[i].start : w->end;

		if (a > pos) {
			hole.start = pos;
			hole.end = a;
			if (push_wreg(m, n, &hole))
				return -ENOMEM;
			pos = a;
		}
		if (pos == w->end)
			break;
		mem.start = pos;
		mem.end = mr[i].end < w->end ? mr[i].end : w->end;
		if (push_wreg(m, n, &mem))
			return -ENOMEM;
		pos = mem.end;
	}
	return 0;
}

/*
 * What window @s's region @r says of its bytes into @w (its bounds and
 * space set), @mapped the share of them that are memory, @known whether
 * the map says so.  A region is labelled by most of its bytes (maps.c):
 * "[unmapped]", without a map, says it is all hole; with one, the memory
 * at its edge is memory like any other ("[unmapped]" is not a file: a
 * scheme of anonymous memory acts on it, pol_label_actionable()).
 */
static void region_kind(const struct sav_model *m, const struct rec_snapshot *s,
			const struct rec_region *r, int known, double mapped,
			uint64_t page_size, struct wreg *w)
{
	if (known ? mapped <= 0 : !strcmp(r->label, "[unmapped]"))
		w->kind = W_HOLE;
	else if (!pol_label_actionable(r->label, (enum pol_filter_type)m->type))
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
	if (mapped <= 0)
		mapped = 1;
	region_resident(s, r, mapped, w);
	w->touched = w->kind == W_ACCESSED ? touched_share(s, r, mapped, page_size) : 1;
	w->read = w->touched;
}

/*
 * The window's regions of counted spaces, by space and address, as what
 * they say about their bytes, into m->w.  Overlapping regions (a damaged
 * record) keep the first one's bytes.  The count, or < 0.
 */
static ssize_t window_regions(struct sav_model *m, const struct rec_snapshot *s,
			      const struct sav_feed *f)
{
	size_t n = 0, k = 0;
	int sorted = 1;

	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		const struct rec_range *mr = NULL;
		struct sav_space *sp = NULL;
		uint64_t len = r->end - r->start, in = len;
		uint32_t nmr = 0;
		struct wreg w;
		int err, known;

		if (r->start >= r->end)
			continue;
		err = f->space_of(f->ctx, r, &sp);
		if (err)
			return err;
		known = f->map_of && f->map_of(f->ctx, r, &mr, &nmr);
		if (known)
			in = mapped_in(mr, nmr, r->start, r->end);
		if (s->has_probes)
			pool_touched(m, s, r, known, in, f->page_size);
		if (!sp)
			continue;
		w = (struct wreg){ .start = r->start, .end = r->end, .sp = sp };
		region_kind(m, s, r, known, (double)in / (double)len, f->page_size, &w);
		if (n && cmp_wreg(&m->w[n - 1], &w) > 0)
			sorted = 0;
		err = in == len || !in ? push_wreg(m, &n, &w) : push_mapped(m, &n, &w, mr, nmr);
		if (err)
			return err;
	}
	if (!sorted)
		qsort(m->w, n, sizeof(*m->w), cmp_wreg);
	for (size_t i = 0; i < n; i++) {
		struct wreg w = m->w[i];

		if (k && m->w[k - 1].sp == w.sp && w.start < m->w[k - 1].end)
			w.start = m->w[k - 1].end;
		if (w.start < w.end)
			m->w[k++] = w;
	}
	return (ssize_t)k;
}

/*
 * Windows the monitor missed (missed_before) may hold accesses, as the
 * policy engine's after_gap() says: an idle region whose age covers them
 * kept its idle level through them, and its ranges' clocks stand; any
 * other counts as accessed when its level last changed (its age ago), or,
 * its age unknown, up to this window.
 */
static int after_gap(struct sav_space *sp, const struct wreg *r, size_t nr,
		     const struct rec_snapshot *s, const struct sav_feed *f)
{
	for (size_t i = 0; i < nr; i++) {
		uint64_t t, idle;

		if (r[i].kind == W_IDLE && r[i].age > s->missed_before)
			continue;
		if (r[i].kind == W_IDLE) {
			idle = f->age_ns(f->ctx, s, r[i].age) + (s->end_ns - s->start_ns);
			t = s->end_ns > idle ? s->end_ns - idle : 0;
		} else if (r[i].kind == W_AGE_UNKNOWN)
			t = s->start_ns;
		else
			continue;	/* accessed: marked now; the others say nothing */
		if (t < sp->since_ns)
			t = sp->since_ns;
		if (pol_iset_add(&sp->accessed, r[i].start, r[i].end, (int64_t)t))
			return -ENOMEM;
	}
	return 0;
}

/*
 * One space's regions @r[0..nr) of window @s into m->pw: each idle one cut
 * into pieces of one idle time, by address: since the end of the last
 * window in which a region covering the piece had an access, else since
 * the space's first window began.
 */
static ssize_t by_address(struct sav_model *m, const struct sav_space *sp,
			  const struct wreg *r, size_t nr, const struct rec_snapshot *s)
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
			if (grow_array((void **)&m->pw, &m->pw_cap, n + 1, sizeof(*m->pw)))
				return -ENOMEM;
			m->pw[n++] = w;
			a = pe;
		} while (a < r[i].end);
	}
	return (ssize_t)n;
}

/* Space @sp through window @s: its regions @r[0..nr), sorted and disjoint. */
static int space_window(struct sav_model *m, struct sav_space *sp, const struct wreg *r,
			size_t nr, const struct rec_snapshot *s, const struct sav_feed *f)
{
	size_t nacc = 0;
	ssize_t np;
	int err;

	if (sp->since_ns == UINT64_MAX)
		sp->since_ns = s->start_ns;
	if (s->missed_before && after_gap(sp, r, nr, s, f))
		return -ENOMEM;
	np = by_address(m, sp, r, nr, s);
	if (np < 0)
		return (int)np;
	for (ssize_t i = 0; i < np; i++)
		tally(m, &m->pw[i]);
	for (unsigned int k = 0; k < m->nr_t; k++) {
		err = sweep(m, sp, k, m->pw, (size_t)np, s->end_ns);
		if (err)
			return err;
	}
	for (size_t i = 0; i < nr; i++) {
		if (r[i].kind != W_ACCESSED)
			continue;
		if (grow_array((void **)&m->acc, &m->acc_cap, nacc + 1, sizeof(*m->acc)))
			return -ENOMEM;
		m->acc[nacc++] = (struct pol_range){ r[i].start, r[i].end, (int64_t)s->end_ns };
	}
	if (pol_iset_add_sorted(&sp->accessed, m->acc, nacc))
		return -ENOMEM;
	/*
	 * Older than the longest threshold: idle for more than every one,
	 * as is memory never seen accessed (since_ns is older still).
	 */
	if (s->end_ns > m->max_t_ns)
		pol_iset_expire(&sp->accessed, (int64_t)(s->end_ns - m->max_t_ns));
	return 0;
}

int sav_model_window(struct sav_model *m, const struct rec_snapshot *s,
		     const struct sav_feed *f)
{
	ssize_t n = window_regions(m, s, f);
	size_t i, j;
	int err;

	if (n < 0)
		return (int)n;
	calibrate(m, s, m->w, (size_t)n);
	/* the whole, and at most a group per space */
	if (grow_array((void **)&m->touched, &m->touched_cap, m->nr_spaces + 1,
		       sizeof(*m->touched)))
		return -ENOMEM;
	for (i = 0; i < (size_t)n; i = j) {
		for (j = i; j < (size_t)n && m->w[j].sp == m->w[i].sp; j++)
			;
		err = space_window(m, m->w[i].sp, &m->w[i], j - i, s, f);
		if (err)
			return err;
	}
	if (n)
		fold(m, s);
	return 0;
}

void sav_model_knee(const struct sav_model *m, struct sav_stats *st)
{
	double max = 0, best = 0;

	st->knee = -1;
	if (!st->windows)
		return;
	for (unsigned int k = 0; k < m->nr_t; k++)
		if (sav_refault_rate(st, k) > max)
			max = sav_refault_rate(st, k);
	for (unsigned int k = 0; k < m->nr_t; k++) {
		if (sav_refault_rate(st, k) > max * SAV_KNEE_PCT / 100)
			continue;
		if (st->knee < 0 || sav_saved_mean(st, k) > best) {
			st->knee = (int)k;
			best = sav_saved_mean(st, k);
		}
	}
}
