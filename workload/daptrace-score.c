// SPDX-License-Identifier: GPL-2.0
/*
 * daptrace-score: score a daptrace record against a workload's ground truth.
 *
 *	daptrace-score --truth truth.txt --record rec.csv [thresholds]
 *
 * Per aggregation window (one snapshot), inside the workload's mapping:
 *   predicted hot = bytes of regions with nr_accesses >= --hot-frac of the
 *                   window's samples
 *   precision     = |predicted hot AND truly hot| / |predicted hot|
 *   recall        = |predicted hot AND truly hot| / |truly hot|
 *   wss error     = (bytes with nr_accesses > 0 - (hot + warm)) / (hot + warm)
 *   hot seen      = |truly hot bytes in regions with nr_accesses > 0| / |hot|
 *                   (the "hot set reads as never accessed" blind spot)
 * Warm memory is touched once per warm period, so a check sees a warm page
 * with a probability that grows with the time the check covers (since the
 * check before it).  The truth calls warm memory "not hot" in a window only
 * where the window's real check spacing makes that the answer of a correct
 * sampler with 95 % confidence (nominally: 20 checks of 5 ms, a 20 ms
 * period, p = 0.25, 1.4 % of reading hot).  Where a busy host spread the
 * checks wider (the guest was not scheduled; the module counts such checks
 * late), warm memory read as hot is neither right nor wrong: it is left out
 * of that window's precision, and the windows are counted
 * (warm_undecided_windows).
 * Windows during warm-up (--settle after the start) and windows that begin
 * less than --settle after a phase change are not scored for accuracy; the
 * time from a phase change to the first window with recall >= 0.9 is the
 * detection latency; from the first phase's start, counting the windows
 * that settle too, detect_first_s.  --randomize replaces every nr_accesses with a random
 * count, to show that the thresholds reject a monitor that guesses.
 *
 * The accuracy estimate (the module's probes, #probes rows): at every window
 * the estimated recall of accessed memory, pooled over the windows that
 * ended within --accuracy-pool before it (accuracy.h), is compared with the
 * true recall over the same windows: the share of the truly accessed bytes
 * of the mapping (hot; warm too if its period is at most the window) that
 * lie in regions read as accessed at all (nr_accesses > 0), leaving out
 * regions none of whose checks was observed (no verdict: the probes count
 * those as unobserved too).  Both over the pooled windows that have such a
 * truth (a window across a phase change, with warm memory of a longer
 * period or whose hot set was not swept has none): the estimate is then the
 * CLI's pool less those windows, compared where they hold at least half of
 * its accessed probe pages (else counted, accuracy_windows_partial_truth),
 * and only where the pool is whole: it holds the accessed probe pages the
 * estimate is made to rest on (accuracy.h), or the record has run the whole
 * pool span.  The
 * pools before (the record's first seconds) rest on a few dozen pages, as
 * far from the truth as chance takes them, whatever the estimator does:
 * how many there are depends on how much of the regions' span is unmapped
 * (the probes are drawn from all of it), which ASLR changes from run to
 * run (7.3: 4 to 18 accessed probe pages a window).  --bias-estimate adds a
 * constant to every estimate: a control that must fail.
 *
 * Prints "key value" lines; exits 1 if a --min-* / --max-* bound is broken.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/accuracy.h"
#include "common/recfile.h"
#include "wl_args.h"

#define MAX_PHASES	4096
#define MAX_RANGES	256
#define MAX_THREADS	64	/* sweeping the hot set, in a truth's progress lines */

struct range {
	uint64_t start, end;
};

struct phase {
	uint64_t start_ns;
	struct range hot[MAX_RANGES];
	unsigned int nr_hot;
	struct range warm[MAX_RANGES];
	unsigned int nr_warm;
};

/*
 * A "sweeps" line: @count full sweeps of phase @phase's hot set by @ns, by
 * the workload's thread @thread (0 if the line names none: one thread).
 * Each thread that sweeps the hot set counts its own sweeps.
 */
struct sweep {
	uint64_t ns, count;
	unsigned int phase, thread;
};

struct truth {
	struct sweep *sweeps;		/* in file order */
	unsigned int nr_sweeps, cap_sweeps;
	unsigned int nr_threads;	/* highest sweep thread + 1 */
	pid_t pid;
	struct range map;
	uint64_t warm_period_ns;	/* 0: not said (an older truth file) */
	struct phase *phases;
	unsigned int nr_phases;
	uint64_t end_ns;
};

struct window_score {
	double precision, recall, wss_err;
	double hot_seen;		/* hot bytes in regions read as accessed at all */
	double span;			/* mean check span / the sampling interval */
	uint64_t hot_bytes, pred_bytes;
};

/* The truth of one window for the accuracy estimate (see the top). */
struct acc_truth {
	uint64_t seen, accessed;
	bool valid;
};

struct scorer {
	struct truth truth;
	/* the accuracy estimate against the truth, window by window */
	struct acc_pool *pool;
	struct acc_truth *pool_truth;	/* parallel to pool->w */
	double bias;
	double acc_bound;
	unsigned int acc_windows, acc_ok, acc_probes_windows, acc_no_truth;
	unsigned int acc_filling;	/* windows whose pool was not yet whole */
	unsigned int acc_part_truth;	/* whole pools mostly of windows without a truth */
	uint64_t acc_first_end_ns;	/* the first window with probes */
	bool acc_started;
	struct acc_total acc_all;	/* probes of every window with a truth */
	uint64_t acc_all_seen, acc_all_accessed;
	FILE *dump;
	double acc_err_sum, acc_est_sum, acc_truth_sum;
	double *acc_err;
	uint64_t rec_start_ns;		/* CLOCK_MONOTONIC of the record's t=0 */
	double hot_frac;
	uint64_t settle_ns;
	bool randomize;
	unsigned int seed;
	/* results */
	struct window_score *w;
	unsigned int nr_w, cap_w;
	unsigned int nr_windows, nr_samples_total;
	uint64_t missed;
	unsigned int min_regions, max_regions;	/* bounds to check, 0: none */
	unsigned int regions_lo, regions_hi;	/* seen, over all windows */
	unsigned int regions_out;		/* windows outside the bounds */
	unsigned int warm_undecided;		/* windows: see the top of the file */
	double sum_interval_err;	/* sum of |actual - nominal| / nominal */
	double sum_interval_ns;		/* sum of actual window lengths */
	unsigned int nr_intervals;
	uint64_t nominal_aggr_ns;
	/* detection latency of phase changes */
	int cur_phase;			/* phase of the previous scored window */
	int last_detected;		/* newest phase seen with recall >= 0.9 */
	double lat_sum;
	unsigned int lat_n, lat_undetected;
	double lat_max;
	/* phase 0's first window with recall >= 0.9, settling or not; 0: none */
	uint64_t first_detect_ns;
};

static int parse_truth(const char *path, struct truth *t)
{
	char line[256], kind[16];
	unsigned int idx, th;
	uint64_t a, b;
	FILE *f = fopen(path, "r");
	unsigned long ln = 0;

	if (!f) {
		fprintf(stderr, "daptrace-score: --truth %s: %s\n", path, strerror(errno));
		return -1;
	}
	memset(t, 0, sizeof(*t));
	t->phases = calloc(MAX_PHASES, sizeof(*t->phases));
	if (!t->phases)
		goto bad;
	while (fgets(line, sizeof(line), f)) {
		struct phase *p;

		ln++;
		if (line[0] == '#' || sscanf(line, "%15s", kind) != 1)
			continue;
		if (!strcmp(kind, "pid") && sscanf(line, "pid %d", &t->pid) == 1)
			continue;
		if (!strcmp(kind, "pattern"))
			continue;
		if (!strcmp(kind, "map") &&
		    sscanf(line, "map %" SCNx64 " %" SCNx64, &a, &b) == 2) {
			t->map = (struct range){ a, b };
			continue;
		}
		if (!strcmp(kind, "phase") &&
		    sscanf(line, "phase %u %" SCNu64, &idx, &a) == 2 &&
		    idx == t->nr_phases && idx < MAX_PHASES) {
			t->phases[t->nr_phases++].start_ns = a;
			continue;
		}
		if (!strcmp(kind, "warm_period_ns") &&
		    sscanf(line, "warm_period_ns %" SCNu64, &a) == 1 && a) {
			t->warm_period_ns = a;
			continue;
		}
		th = 0;
		if (!strcmp(kind, "sweeps") && t->nr_phases &&
		    sscanf(line, "sweeps %" SCNu64 " %" SCNu64 " %u", &a, &b, &th) >= 2) {
			if (th >= MAX_THREADS)
				goto malformed;
			if (th >= t->nr_threads)
				t->nr_threads = th + 1;
			if (t->nr_sweeps == t->cap_sweeps) {
				unsigned int cap = t->cap_sweeps ? 2 * t->cap_sweeps : 1024;
				struct sweep *n = realloc(t->sweeps, cap * sizeof(*n));

				if (!n)
					goto bad;
				t->sweeps = n;
				t->cap_sweeps = cap;
			}
			t->sweeps[t->nr_sweeps++] = (struct sweep){ a, b, t->nr_phases - 1, th };
			continue;
		}
		if (!strcmp(kind, "end") && sscanf(line, "end %" SCNu64, &a) == 1) {
			t->end_ns = a;
			continue;
		}
		if ((!strcmp(kind, "hot") || !strcmp(kind, "warm")) &&
		    sscanf(line, "%*s %u %" SCNx64 " %" SCNx64, &idx, &a, &b) == 3 &&
		    idx + 1 == t->nr_phases && b > a) {
			p = &t->phases[idx];
			if (kind[0] == 'h' && p->nr_hot < MAX_RANGES)
				p->hot[p->nr_hot++] = (struct range){ a, b };
			else if (kind[0] == 'w' && p->nr_warm < MAX_RANGES)
				p->warm[p->nr_warm++] = (struct range){ a, b };
			continue;
		}
malformed:
		fprintf(stderr, "daptrace-score: %s:%lu: malformed truth line\n", path, ln);
		goto bad;
	}
	fclose(f);
	if (!t->nr_phases || !t->map.end) {
		fprintf(stderr, "daptrace-score: %s: no map or no phase\n", path);
		return -1;
	}
	if (!t->end_ns)
		t->end_ns = UINT64_MAX;	/* workload still running or killed */
	return 0;
bad:
	fclose(f);
	return -1;
}

static uint64_t overlap(uint64_t s1, uint64_t e1, uint64_t s2, uint64_t e2)
{
	uint64_t s = s1 > s2 ? s1 : s2, e = e1 < e2 ? e1 : e2;

	return e > s ? e - s : 0;
}

static uint64_t overlap_set(uint64_t s, uint64_t e, const struct range *r,
			    unsigned int nr)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < nr; i++)
		sum += overlap(s, e, r[i].start, r[i].end);
	return sum;
}

static uint64_t set_bytes(const struct range *r, unsigned int nr)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < nr; i++)
		sum += r[i].end - r[i].start;
	return sum;
}

/* Index of the phase in force at @t, or -1 before the first. */
static int phase_at(const struct truth *t, uint64_t ns)
{
	int i;

	for (i = t->nr_phases - 1; i >= 0; i--)
		if (t->phases[i].start_ns <= ns)
			return i;
	return -1;
}

static void check_regions(struct scorer *sc, unsigned int nr)
{
	if (!sc->regions_lo || nr < sc->regions_lo)
		sc->regions_lo = nr;
	if (nr > sc->regions_hi)
		sc->regions_hi = nr;
	if ((sc->min_regions && nr < sc->min_regions) ||
	    (sc->max_regions && nr > sc->max_regions))
		sc->regions_out++;
}

/* P(X >= k) for X ~ Binomial(n, p). */
static double binomial_tail(unsigned int n, unsigned int k, double p)
{
	double sum = 0;
	unsigned int i;

	if (k == 0 || p >= 1)
		return 1;
	if (p <= 0)
		return 0;
	for (i = k; i <= n; i++)
		sum += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) +
			   i * log(p) + (n - i) * log1p(-p));
	return sum;
}

/*
 * Can warm memory be called "not hot" in a window of @nr_samples checks
 * over @window_ns?  Only if a correct sampler, each check seeing a warm page
 * with probability (check spacing / warm period), reads it hot (>= hot_frac
 * of the checks) in under 5 % of windows.  Without a warm period in the
 * truth, as before: yes.
 */
static bool warm_is_not_hot(const struct scorer *sc, uint64_t window_ns,
			    uint32_t nr_samples)
{
	double p;
	unsigned int k;

	if (!sc->truth.warm_period_ns || !nr_samples)
		return true;
	p = (double)window_ns / nr_samples / sc->truth.warm_period_ns;
	k = (unsigned int)ceil(sc->hot_frac * nr_samples);
	return binomial_tail(nr_samples, k, p < 1 ? p : 1) < 0.05;
}

/*
 * Did the workload touch every hot page of phase @pi after the window
 * [@ws, @we] had cleared the bits it reads?  The window starts when the
 * one before it was published, and its first samples are prepared (their
 * bits cleared) only after the aggregation that follows: milliseconds
 * later, more on a loaded host, where the workload may run in bursts and
 * a sweep of a THP-backed hot set takes less than that.  Hot pages touched
 * only before the clears read not accessed, rightly, and a truth that
 * counted them accessed made the estimate look 0.03-0.04 too high (CI,
 * 5.10 and 7.3 under load: a partial sweep after the clears leaves whole
 * regions untouched, which the probes do not count and this truth did).
 * So: two full sweeps between two progress lines in the second half of
 * the window, by one thread (each counts its own); the second sweep lies
 * wholly inside it, after the clears.  A truth without progress lines (an
 * older workload) is taken at its word.
 */
static bool hot_all_touched(const struct truth *t, unsigned int pi, uint64_t ws,
			    uint64_t we)
{
	uint64_t from = ws + (we - ws) / 2;

	if (!t->nr_sweeps)
		return true;
	for (unsigned int th = 0; th < t->nr_threads; th++) {
		const struct sweep *a = NULL, *b = NULL;

		for (unsigned int i = 0; i < t->nr_sweeps; i++) {
			const struct sweep *sw = &t->sweeps[i];

			/* threads write their lines in about time order */
			if (sw->thread != th || sw->phase != pi || sw->ns < from ||
			    sw->ns > we)
				continue;
			if (!a)
				a = sw;
			b = sw;
		}
		if (a && b->count >= a->count + 2)
			return true;
	}
	return false;
}

/*
 * This window's truth for the estimate: bytes of the mapping accessed in it
 * (hot, and warm if every warm page is touched within the window), and of
 * those the bytes in regions read as accessed at all.  No truth if the
 * workload did not sweep its hot set within the window (not scheduled).
 */
static struct acc_truth window_truth(const struct scorer *sc,
				     const struct rec_snapshot *s)
{
	const struct truth *t = &sc->truth;
	uint64_t ws = sc->rec_start_ns + s->start_ns, we = sc->rec_start_ns + s->end_ns;
	struct acc_truth r = { 0 };
	const struct phase *p;
	bool warm;
	int pi = phase_at(t, ws);

	if (pi < 0 || phase_at(t, we) != pi || we > t->end_ns || !s->nr_samples)
		return r;
	p = &t->phases[pi];
	if (!hot_all_touched(t, (unsigned int)pi, ws, we))
		return r;
	warm = p->nr_warm && t->warm_period_ns && t->warm_period_ns <= we - ws;
	if (p->nr_warm && !warm)
		return r;	/* which warm pages the window touched is unknown */
	r.accessed = set_bytes(p->hot, p->nr_hot) +
		     (warm ? set_bytes(p->warm, p->nr_warm) : 0);
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *rg = &s->regions[i];

		uint64_t b;

		if (rg->pid != t->pid)
			continue;
		b = overlap_set(rg->start, rg->end, p->hot, p->nr_hot);
		if (warm)
			b += overlap_set(rg->start, rg->end, p->warm, p->nr_warm);
		if (!rg->nr_accesses && rg->nr_unobserved >= s->nr_samples)
			r.accessed -= b;	/* no verdict */
		else if (rg->nr_accesses)
			r.seen += b;
	}
	r.valid = r.accessed > 0;
	return r;
}

/*
 * Pool the window's probes and truth; compare estimate and truth.  Both
 * over the pool's windows that have a truth: a window without one (its
 * hot set not swept, or a phase change in it: a moving hot set changes
 * every few seconds, so nearly every pool of 10 s holds one) would leave
 * the whole pool uncompared.  The estimate over those windows is the
 * CLI's, pooled the CLI's way, less the windows whose truth is unknown;
 * where they hold less than half of the pool's accessed probe pages the
 * pool is not compared (counted: accuracy_windows_partial_truth).
 */
static int score_accuracy(struct scorer *sc, const struct rec_snapshot *s)
{
	struct acc_pool *pl = sc->pool;
	uint64_t seen = 0, accessed = 0;
	struct acc_total known = { 0 };
	struct acc_estimate e, ek;
	double est, truth, err;
	uint32_t i;

	struct acc_truth wt = window_truth(sc, s);

	sc->acc_probes_windows++;
	if (!sc->acc_started) {
		sc->acc_started = true;
		sc->acc_first_end_ns = s->end_ns;
	}
	acc_pool_add(pl, s->end_ns, &s->probes);
	/* the truth ring mirrors the pool's: same slots, same windows */
	sc->pool_truth[(pl->first + pl->nr - 1) % ACC_MAX_POOL_WINDOWS] = wt;
	sc->acc_no_truth += !wt.valid;
	if (wt.valid) {
		acc_total_add(&sc->acc_all, &s->probes);
		sc->acc_all_seen += wt.seen;
		sc->acc_all_accessed += wt.accessed;
	}
	for (i = 0; i < pl->nr; i++) {
		uint32_t k = (pl->first + i) % ACC_MAX_POOL_WINDOWS;
		const struct acc_truth *t = &sc->pool_truth[k];

		if (!t->valid)
			continue;
		acc_total_add(&known, &pl->w[k].c);
		seen += t->seen;
		accessed += t->accessed;
	}
	if (!acc_pool_estimate(pl, &e) || !e.recall.n)
		return 0;
	if (e.recall.n < pl->min_accessed &&
	    s->end_ns < sc->acc_first_end_ns + pl->pool_ns) {
		sc->acc_filling++;
		return 0;
	}
	if (!accessed || !acc_total_estimate(&known, &ek) ||
	    2 * ek.recall.n < e.recall.n) {
		sc->acc_part_truth++;
		return 0;
	}
	e = ek;
	est = e.recall.est + sc->bias;
	est = est < 0 ? 0 : est > 1 ? 1 : est;
	truth = (double)seen / accessed;
	err = fabs(est - truth);
	if (!(sc->acc_windows % 256)) {
		double *n = realloc(sc->acc_err, (sc->acc_windows + 256) * sizeof(*n));

		if (!n)
			return -1;
		sc->acc_err = n;
	}
	sc->acc_err[sc->acc_windows++] = err;
	if (sc->dump)
		fprintf(sc->dump, "%" PRIu64 " %.4f %.4f %" PRIu64 " %" PRIu64 " %u %u %u %u %u\n",
			s->seq, est, truth, e.recall.n, e.pages, s->probes.tp, s->probes.fn,
			s->probes.fp, s->probes.tn, s->probes.unobserved);
	sc->acc_ok += err <= sc->acc_bound;
	sc->acc_err_sum += err;
	sc->acc_est_sum += est;
	sc->acc_truth_sum += truth;
	return 0;
}

/* Hot bytes of phase @p in regions read hot (>= hot_frac) in snapshot @s. */
static uint64_t hot_found(const struct scorer *sc, const struct rec_snapshot *s,
			  const struct phase *p)
{
	uint64_t found = 0;
	uint32_t i;

	for (i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];

		if (r->pid == sc->truth.pid && r->nr_accesses >= sc->hot_frac * s->nr_samples)
			found += overlap_set(r->start, r->end, p->hot, p->nr_hot);
	}
	return found;
}

static int score_snapshot(void *arg, const struct rec_snapshot *s,
			  const struct rec_info *info)
{
	struct scorer *sc = arg;
	const struct truth *t = &sc->truth;
	uint64_t ws = sc->rec_start_ns + s->start_ns, we = sc->rec_start_ns + s->end_ns;
	uint64_t pred = 0, pred_hot = 0, accessed = 0, seen_hot = 0, hot, warm;
	const struct phase *p;
	struct window_score w;
	int pi = phase_at(t, ws);
	bool warm_decided;
	uint32_t i;

	sc->missed += s->missed_before;
	sc->nr_windows++;
	if (s->has_probes && score_accuracy(sc, s))
		return -ENOMEM;
	/*
	 * Region bounds hold for every full window but the very first (before
	 * the first split); a window in which a target exited loses its
	 * regions, and the last one (flag 0x2) may be cut short.
	 */
	if (sc->nr_windows > 1 && !(s->flags & (0x1 | 0x2)))
		check_regions(sc, s->nr_regions);
	sc->nr_samples_total += s->nr_samples;
	if (sc->nominal_aggr_ns && !(s->flags & 0x2 /* last, partial */)) {
		sc->sum_interval_err += fabs((double)(we - ws) - sc->nominal_aggr_ns) /
					sc->nominal_aggr_ns;
		sc->sum_interval_ns += we - ws;
		sc->nr_intervals++;
	}
	/* Only whole windows inside one settled phase of the workload. */
	if (pi < 0 || phase_at(t, we) != pi || we > t->end_ns || !s->nr_samples)
		return 0;
	/* How long the first phase's hot set takes to be found (from its start). */
	if (pi == 0 && !sc->first_detect_ns && !sc->randomize && t->phases[0].nr_hot &&
	    hot_found(sc, s, &t->phases[0]) * 10 >=
	    set_bytes(t->phases[0].hot, t->phases[0].nr_hot) * 9)
		sc->first_detect_ns = we > t->phases[0].start_ns ? we - t->phases[0].start_ns : 1;
	if (ws < t->phases[0].start_ns + sc->settle_ns)
		return 0;
	p = &t->phases[pi];
	warm_decided = !p->nr_warm || warm_is_not_hot(sc, we - ws, s->nr_samples);

	for (i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		uint64_t in = overlap(r->start, r->end, t->map.start, t->map.end);
		uint32_t nr = r->nr_accesses;

		if (r->pid != t->pid || !in)
			continue;
		if (sc->randomize)
			nr = rand_r(&sc->seed) % (s->nr_samples + 1);
		if (nr >= sc->hot_frac * s->nr_samples) {
			pred += in;
			pred_hot += overlap_set(r->start, r->end, p->hot, p->nr_hot);
			if (!warm_decided)
				pred -= overlap_set(r->start, r->end, p->warm, p->nr_warm);
		}
		if (nr > 0) {
			accessed += in;
			seen_hot += overlap_set(r->start, r->end, p->hot, p->nr_hot);
		}
	}
	hot = set_bytes(p->hot, p->nr_hot);
	warm = set_bytes(p->warm, p->nr_warm);

	/* Detection latency: first window after a change with recall >= 0.9. */
	if (pi != sc->cur_phase) {
		if (sc->cur_phase > 0 && sc->last_detected != sc->cur_phase)
			sc->lat_undetected++;
		sc->cur_phase = pi;
	}
	if (pi > 0 && sc->last_detected != pi && hot &&
	    (double)pred_hot / hot >= 0.9) {
		double lat = (we - p->start_ns) / 1e9;

		sc->lat_sum += lat;
		sc->lat_n++;
		if (lat > sc->lat_max)
			sc->lat_max = lat;
		sc->last_detected = pi;
	}
	if (pi > 0 && ws < p->start_ns + sc->settle_ns)
		return 0;
	sc->warm_undecided += !warm_decided;

	w.precision = pred ? (double)pred_hot / pred : (hot ? 0 : 1);
	w.recall = hot ? (double)pred_hot / hot : 1;
	w.hot_seen = hot ? (double)seen_hot / hot : 1;
	w.wss_err = hot + warm ? ((double)accessed - (hot + warm)) / (hot + warm) : 0;
	w.hot_bytes = hot;
	w.pred_bytes = pred;
	/*
	 * How far apart the window's checks were, against the sampling
	 * interval: each check sees the accesses since the one before, so a
	 * guest that was not scheduled (a busy host) spreads them wider and
	 * a warm page is more likely to be seen per check.
	 */
	w.span = s->sample_us ? (double)(we - ws) / s->nr_samples /
				(s->sample_us * 1000.0) : NAN;
	if (sc->nr_w == sc->cap_w) {
		unsigned int cap = sc->cap_w ? 2 * sc->cap_w : 256;
		struct window_score *n = realloc(sc->w, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		sc->w = n;
		sc->cap_w = cap;
	}
	sc->w[sc->nr_w++] = w;
	return 0;
}

static int ignore_snapshot(void *arg, const struct rec_snapshot *s,
			   const struct rec_info *info)
{
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median and the fraction of windows with value >= @min (or |v| <= @min). */
static void stats(const struct scorer *sc, size_t off, bool absolute, double bound,
		  double *median, double *mean, double *frac_ok)
{
	double *v = calloc(sc->nr_w ? sc->nr_w : 1, sizeof(*v)), sum = 0;
	unsigned int i, ok = 0;

	for (i = 0; i < sc->nr_w; i++) {
		double x = *(const double *)((const char *)&sc->w[i] + off);

		v[i] = absolute ? fabs(x) : x;
		sum += x;
		ok += absolute ? v[i] <= bound : v[i] >= bound;
	}
	qsort(v, sc->nr_w, sizeof(*v), cmp_double);
	*median = sc->nr_w ? v[sc->nr_w / 2] : NAN;
	*mean = sc->nr_w ? sum / sc->nr_w : NAN;
	*frac_ok = sc->nr_w ? (double)ok / sc->nr_w : 0;
	free(v);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: daptrace-score --truth FILE --record FILE [options]\n"
"  --hot-frac F         hot if nr_accesses >= F * samples (default 0.5)\n"
"  --settle DUR_MS      ignore windows this long after start/phase change (default 1000)\n"
"  --min-precision F    fail if the median window precision is below F\n"
"  --min-recall F       fail if the median window recall is below F\n"
"  --max-wss-err F      fail if |median WSS error| exceeds F\n"
"  --min-hot-seen F     fail if the median share of hot bytes read as accessed at\n"
"                       all is below F\n"
"  --max-detect-first S fail unless the first phase's hot set is found (recall\n"
"                       >= 0.9 in a window, settling or not) within S seconds of\n"
"                       its start (detect_first_s)\n"
"  --min-detect-first S fail if it is found within S seconds (a control run)\n"
"  --min-windows N      fail if fewer windows were scored (default 5)\n"
"  --aggr-us N          nominal aggregation interval, to report interval error\n"
"  --regions MIN-MAX    fail if any window but the first has a region count\n"
"                       outside [MIN, MAX]\n"
"  --max-interval-err F fail if the mean |actual - nominal| / nominal window length\n"
"                       exceeds F (needs --aggr-us)\n"
"  --max-interval-drift F fail if the mean window length is off nominal by more\n"
"                       than F (needs --aggr-us)\n"
"  --max-missed N       fail if the record lost more than N snapshots\n"
"  --randomize[=SEED]   replace every count by a random one (control run)\n"
"  --accuracy-pool DUR_MS  the estimate pools windows of at most this span\n"
"                       (default 10000)\n"
"  --accuracy-min-probes N  and only as many as give it N accessed probe pages\n"
"                       (default 600; as the CLI, accuracy.h)\n"
"  --max-recall-est-err F   an estimate within F of the truth is right (default 0.05)\n"
"  --min-recall-est-ok F    fail unless that share of windows is right\n"
"  --min-accuracy-windows N fail if fewer windows were compared (default 5 with\n"
"                       --min-recall-est-ok)\n"
"  --bias-estimate F    add F to every estimate (control run)\n"
"  --dump-accuracy FILE each compared window's estimate, truth and counts\n");
}

/* --regions MIN-MAX */
static int parse_regions(const char *arg, const struct wl_arg *a)
{
	struct scorer *sc = a->dst;

	if (sscanf(arg, "%u-%u", &sc->min_regions, &sc->max_regions) != 2 ||
	    sc->min_regions > sc->max_regions)
		return -1;
	return 0;
}

/* --randomize[=SEED] (seed 1 without) */
static int parse_randomize(const char *arg, const struct wl_arg *a)
{
	struct scorer *sc = a->dst;
	char *end;

	sc->randomize = true;
	if (!arg) {
		sc->seed = 1;
		return 0;
	}
	errno = 0;
	sc->seed = strtoul(arg, &end, 10);
	return errno || *end ? -1 : 0;
}

/* --dump-accuracy FILE: each window's estimate and truth, for plots. */
static int parse_dump(const char *arg, const struct wl_arg *a)
{
	struct scorer *sc = a->dst;

	sc->dump = fopen(arg, "w");
	if (!sc->dump) {
		fprintf(stderr, "daptrace-score: --dump-accuracy %s: %s\n",
			arg, strerror(errno));
		return -1;
	}
	fprintf(sc->dump, "# seq est truth accessed_probes_pooled probes_pooled "
		"tp fn fp tn unobserved (this window)\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *truth_path = NULL, *rec_path = NULL, *v;
	double min_p = -1, min_r = -1, max_wss = -1, max_ierr = -1, max_drift = -1;
	double min_seen = -1, max_first = -1, min_first = -1;
	double med, mean, frac;
	long long max_missed = -1;
	double drift = NAN;
	unsigned int min_windows = 5;
	struct scorer sc = { .hot_frac = 0.5, .settle_ns = 1000000000ULL,
			     .acc_bound = 0.05 };
	uint64_t pool_ns, pool_ms = ACC_DEF_POOL_NS / 1000000ULL;
	unsigned long long min_accessed = ACC_DEF_MIN_ACCESSED;
	double min_est_ok = -1;
	unsigned int min_acc_windows = 5;
	struct rec_info info = { 0 };
	uint64_t settle_ms = 1000, aggr_us = 0, missed = 0;
	int missed_given = 0, first;
	const struct wl_arg args[] = {
		WL_OPT("truth", 0, wl_str, &truth_path),
		WL_OPT("record", 0, wl_str, &rec_path),
		WL_OPT("hot-frac", 0, wl_double, &sc.hot_frac),
		WL_OPT("settle", 0, wl_u64, &settle_ms),
		WL_OPT("min-precision", 0, wl_double, &min_p),
		WL_OPT("min-recall", 0, wl_double, &min_r),
		WL_OPT("max-wss-err", 0, wl_double, &max_wss),
		WL_OPT("min-windows", 0, wl_uint, &min_windows),
		WL_OPT("aggr-us", 0, wl_u64, &aggr_us),
		WL_OPT("regions", 0, parse_regions, &sc),
		WL_OPT("max-interval-err", 0, wl_double, &max_ierr),
		WL_OPT("max-interval-drift", 0, wl_double, &max_drift),
		WL_OPT("max-missed", 0, wl_u64, &missed, .given = &missed_given),
		WL_OPT("min-hot-seen", 0, wl_double, &min_seen),
		WL_OPT("max-detect-first", 0, wl_double, &max_first),
		WL_OPT("min-detect-first", 0, wl_double, &min_first),
		WL_OPT("randomize", 0, parse_randomize, &sc, .flags = WL_OPT_ARG),
		WL_OPT("accuracy-pool", 0, wl_u64, &pool_ms),
		WL_OPT("accuracy-min-probes", 0, wl_u64, &min_accessed),
		WL_OPT("max-recall-est-err", 0, wl_double, &sc.acc_bound),
		WL_OPT("min-recall-est-ok", 0, wl_double, &min_est_ok),
		WL_OPT("min-accuracy-windows", 0, wl_uint, &min_acc_windows),
		WL_OPT("bias-estimate", 0, wl_double, &sc.bias),
		WL_OPT("dump-accuracy", 0, parse_dump, &sc),
		{ }
	};
	char err[512];
	int fail = 0;

	first = wl_parse_args("daptrace-score", argc, argv, args, usage);
	if (first < 0)
		return 2;
	sc.settle_ns = settle_ms * 1000000ULL;
	sc.nominal_aggr_ns = aggr_us * 1000ULL;
	pool_ns = pool_ms * 1000000ULL;
	if (missed_given)
		max_missed = (long long)missed;
	if (!truth_path || !rec_path || first != argc) {
		usage(stderr);
		return 2;
	}
	if (parse_truth(truth_path, &sc.truth))
		return 2;
	sc.pool = malloc(sizeof(*sc.pool));
	sc.pool_truth = calloc(ACC_MAX_POOL_WINDOWS, sizeof(*sc.pool_truth));
	if (!sc.pool || !sc.pool_truth || !pool_ns) {
		fprintf(stderr, "daptrace-score: %s\n",
			pool_ns ? "out of memory" : "--accuracy-pool: must be > 0");
		return 2;
	}
	acc_pool_init(sc.pool, pool_ns, min_accessed);

	/* Line the record's relative times up with the truth's clock. */
	if (rec_read_path(rec_path, 1, ignore_snapshot, NULL, &info, err, sizeof(err))) {
		fprintf(stderr, "daptrace-score: %s\n", err);
		return 2;
	}
	v = rec_info_get(&info, "monotonic_start_ns");
	if (!v) {
		fprintf(stderr, "daptrace-score: %s: no monotonic_start_ns metadata\n", rec_path);
		return 2;
	}
	sc.rec_start_ns = strtoull(v, NULL, 10);
	rec_info_free(&info);
	memset(&info, 0, sizeof(info));
	if (rec_read_path(rec_path, 1, score_snapshot, &sc, &info, err, sizeof(err))) {
		fprintf(stderr, "daptrace-score: %s\n", err);
		return 2;
	}
	if (!info.complete)
		printf("# record is truncated (no #eof); scored what is there\n");
	if (sc.cur_phase > 0 && sc.last_detected != sc.cur_phase)
		sc.lat_undetected++;
	rec_info_free(&info);

	printf("windows %u\nscored_windows %u\nmissed %" PRIu64 "\n",
	       sc.nr_windows, sc.nr_w, sc.missed);
	if (sc.nr_intervals) {
		/* Jitter: how far single windows stray; drift: their mean. */
		drift = (sc.sum_interval_ns / sc.nr_intervals - sc.nominal_aggr_ns) /
			sc.nominal_aggr_ns;
		printf("aggr_interval_err_mean %.4f\n", sc.sum_interval_err / sc.nr_intervals);
		printf("aggr_interval_drift %+.4f\n", drift);
	}
	if (max_drift >= 0 && !(sc.nr_intervals && fabs(drift) <= max_drift))
		fail = printf("# FAIL: mean window length off nominal by more than %.3f\n",
			      max_drift);
	if (max_ierr >= 0 && !(sc.nr_intervals &&
			       sc.sum_interval_err / sc.nr_intervals <= max_ierr))
		fail = printf("# FAIL: mean aggregation interval error above %.3f (or not measured)\n",
			      max_ierr);
	if (max_missed >= 0 && sc.missed > (uint64_t)max_missed)
		fail = printf("# FAIL: %" PRIu64 " snapshots missed (> %lld)\n", sc.missed, max_missed);
	stats(&sc, offsetof(struct window_score, precision), false, 0.9, &med, &mean, &frac);
	printf("precision_median %.3f\nprecision_mean %.3f\nprecision_windows_ge_0.9 %.3f\n",
	       med, mean, frac);
	if (min_p >= 0 && !(med >= min_p))
		fail = printf("# FAIL: median precision %.3f < %.3f\n", med, min_p);
	stats(&sc, offsetof(struct window_score, recall), false, 0.9, &med, &mean, &frac);
	printf("recall_median %.3f\nrecall_mean %.3f\nrecall_windows_ge_0.9 %.3f\n",
	       med, mean, frac);
	if (min_r >= 0 && !(med >= min_r))
		fail = printf("# FAIL: median recall %.3f < %.3f\n", med, min_r);
	stats(&sc, offsetof(struct window_score, wss_err), true, 0.1, &med, &mean, &frac);
	printf("wss_abs_err_median %.3f\nwss_err_mean %+.3f\nwss_windows_within_0.1 %.3f\n",
	       med, mean, frac);
	if (max_wss >= 0 && !(med <= max_wss))
		fail = printf("# FAIL: median |WSS error| %.3f > %.3f\n", med, max_wss);
	stats(&sc, offsetof(struct window_score, hot_seen), false, 0.9, &med, &mean, &frac);
	printf("hot_seen_median %.3f\nhot_seen_mean %.3f\n", med, mean);
	if (min_seen >= 0 && !(med >= min_seen))
		fail = printf("# FAIL: median hot bytes seen accessed %.3f < %.3f\n", med, min_seen);
	printf("warm_undecided_windows %u\n", sc.warm_undecided);
	stats(&sc, offsetof(struct window_score, span), false, 1.25, &med, &mean, &frac);
	printf("check_span_median %.3f\ncheck_span_mean %.3f\ncheck_span_windows_ge_1.25 %.3f\n",
	       med, mean, frac);
	if (sc.first_detect_ns)
		printf("detect_first_s %.3f\n", sc.first_detect_ns / 1e9);
	else
		printf("detect_first_s none\n");
	if (max_first >= 0 && !(sc.first_detect_ns && sc.first_detect_ns <= max_first * 1e9))
		fail = printf("# FAIL: the hot set was not found within %.1f s\n", max_first);
	if (min_first >= 0 && sc.first_detect_ns && sc.first_detect_ns <= min_first * 1e9)
		fail = printf("# FAIL: the hot set was found within %.1f s\n", min_first);
	if (sc.lat_n || sc.lat_undetected)
		printf("detect_latency_mean_s %.3f\ndetect_latency_max_s %.3f\nphases_undetected %u\n",
		       sc.lat_n ? sc.lat_sum / sc.lat_n : NAN, sc.lat_max, sc.lat_undetected);
	printf("accuracy_probe_windows %u\naccuracy_windows_without_truth %u\n"
	       "accuracy_windows_pool_filling %u\naccuracy_windows_partial_truth %u\n"
	       "accuracy_windows %u\n",
	       sc.acc_probes_windows, sc.acc_no_truth, sc.acc_filling,
	       sc.acc_part_truth, sc.acc_windows);
	if (sc.acc_all.windows) {
		struct acc_estimate all;

		acc_total_estimate(&sc.acc_all, &all);
		printf("accuracy_probes tp %" PRIu64 " fn %" PRIu64 " fp %" PRIu64 " tn %" PRIu64
		       " unobserved %" PRIu64 " pages %" PRIu64 "\n", sc.acc_all.tp,
		       sc.acc_all.fn, sc.acc_all.fp, sc.acc_all.tn, sc.acc_all.unobserved,
		       sc.acc_all.pages);
		printf("recall_est_all %.4f\nrecall_truth_all %.4f\n",
		       all.recall.n ? all.recall.est : NAN,
		       (double)sc.acc_all_seen / sc.acc_all_accessed);
	}
	if (sc.dump)
		fclose(sc.dump);
	if (sc.acc_windows) {
		qsort(sc.acc_err, sc.acc_windows, sizeof(*sc.acc_err), cmp_double);
		printf("recall_est_mean %.3f\nrecall_truth_mean %.3f\n"
		       "recall_est_err_median %.3f\nrecall_est_err_p90 %.3f\n"
		       "recall_est_err_mean %.3f\nrecall_est_windows_within_%.2f %.3f\n",
		       sc.acc_est_sum / sc.acc_windows, sc.acc_truth_sum / sc.acc_windows,
		       sc.acc_err[sc.acc_windows / 2],
		       sc.acc_err[(unsigned int)(0.9 * (sc.acc_windows - 1))],
		       sc.acc_err_sum / sc.acc_windows, sc.acc_bound,
		       (double)sc.acc_ok / sc.acc_windows);
	}
	if (min_est_ok >= 0 && sc.acc_windows < min_acc_windows)
		fail = printf("# FAIL: only %u windows with an estimate and a truth (< %u)\n",
			      sc.acc_windows, min_acc_windows);
	else if (min_est_ok >= 0 && (double)sc.acc_ok / sc.acc_windows < min_est_ok)
		fail = printf("# FAIL: estimated recall within %.3f of the truth in %.3f "
			      "of windows (< %.3f)\n", sc.acc_bound,
			      (double)sc.acc_ok / sc.acc_windows, min_est_ok);
	printf("regions_min %u\nregions_max %u\n", sc.regions_lo, sc.regions_hi);
	if (sc.regions_out)
		fail = printf("# FAIL: %u windows with a region count outside %u-%u\n",
			      sc.regions_out, sc.min_regions, sc.max_regions);
	if (sc.nr_w < min_windows)
		fail = printf("# FAIL: only %u windows scored (< %u)\n", sc.nr_w, min_windows);
	free(sc.w);
	free(sc.acc_err);
	free(sc.pool);
	free(sc.pool_truth);
	free(sc.truth.phases);
	free(sc.truth.sweeps);
	return fail ? 1 : 0;
}
