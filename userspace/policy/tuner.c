// SPDX-License-Identifier: GPL-2.0-only
/*
 * The quota tuner: at the end of every quota window, each goal of a scheme
 * reads its metric and proposes a quota for the next window; the scheme
 * takes the smallest proposal, so that no goal is pushed past its target
 * by another (DAMOS, in its terms, follows the highest score).
 *
 * Two laws, because the metrics answer the action in two ways.
 *
 * Rate metrics (psi, refault, user) measure what the action does *per window*:
 * pressure comes from the refaults of what was paged out lately.  Their law
 * is DAMOS's feedback loop with a lower gain.  With s the score (current /
 * target, < 1: short of the goal) averaged over the last 5 windows and b the
 * quota the last window really used,
 *
 *	q' = clamp(b * clamp(1 + K (1 - s), 1/2, 2), q_min, q_max),  K = 1/16
 *
 * (DAMOS, damon_feed_loop_next_input(): q' = q (2 - s), K = 1, one window.)
 * Why linear in s and averaged: pressure is spiky, 0 in most windows and
 * ten times the target in some.  A law in log s (q' = q s^-K) weighs a
 * window at 0 as heavily as a spike, and settles where the *mean* pressure
 * is many times the target (10x in simulation); a law linear in s settles
 * where the mean of s is 1, and the average of 5 windows keeps one spike
 * from halving the quota.  Stability: near the goal ln q' = ln q - K
 * (s - 1), an integrator; for a plant whose metric grows like q^e and
 * answers about a window late, the average adds some two windows of lag,
 * and the loop is stable for K e below about 0.4: K = 1/16 holds for e up
 * to 6, and pressure answers paging about in proportion (e ~ 1).  DAMOS's
 * K = 1 on one window rings there (test_policy_goals shows both on the
 * same plant).  Spiky pressure makes the quota a random walk around its
 * level; K = 1/16 keeps that walk within a few times (1/8 let it wander
 * 20-fold in simulation).  The price is speed: at most x1.0625 per window.
 * So the quota doubles each window at the start (from q_min = q_max / 1024
 * it reaches q_max in 10 windows) until the metric reaches half the target
 * (half, because with a window of delay the doubling goes on one window
 * past what it sees; pressure or refaults read before the scheme took
 * anything away are not its own and do not end it), and again after 20
 * windows without any of the metric at all: no stall in 20 s is no noise
 * to be careful of (a start can end the ramp on one spike, while the
 * monitor has not yet told warm memory from cold, and leave the quota to
 * climb x1.06 a window).  The average then starts afresh.  A ramp that
 * ends past the target (not just past half of it) doubled too often while
 * the pressure was on its way: the quota goes back x1/4 at once.
 * In the test VM a ramp that paged out all 128 MiB of never-read memory in
 * 10 s went on into memory read each second, and the x1/2 steps of the
 * law took 6 windows of 8-150 ms of stall to come down.
 *
 * Windup: the quota is a ceiling, and when the scheme found less to do the
 * law would keep raising a ceiling that changes nothing, to then release a
 * burst when candidates appear.  So the law starts from b = min(q,
 * max(used, q_min)): it never goes above twice what was really used
 * (conditional integration), and q stays inside [q_min, q_max] (q_min is
 * q_max / 1024, at least a page).  A goal that cannot be reached leaves the
 * quota at a bound, counted (tune.at_max), ready to move at once when the
 * metric comes back.  At q_min with the metric still twice the target, the
 * scheme pauses (quota 0) until it comes down.
 *
 * Level metrics (free, used, memcg, rss) are a stock that the action moves
 * byte for byte: paging out 10 MiB lowers RSS by 10 MiB.  An integrating
 * law on an integrating plant overshoots, so these use the gap itself: with
 * gap the bytes still to move towards the target (<= 0: reached),
 *
 *	q' = clamp(gap / 2 + I, 0, q_max),  I' = clamp(I + gap / 16, 0, q_max)
 *
 * a PI law whose closed loop on x' = x - q (z^2 - 1.5 z + 0.5625) has a
 * double pole at 0.75: no overshoot, no ringing, and the integral takes out
 * the offset a steady regrowth (refaults) would leave.  I only grows while
 * the window used its quota (conditional integration, as above).  Past the
 * target the proposal is 0: the scheme pauses.
 *
 * A metric that cannot be read is counted (nr_errors, last_err) and holds
 * its goal's proposal for POL_TUNE_MISS_HOLD windows; after that the
 * proposal halves each window, so a goal that went blind winds the action
 * down rather than acting on a stale value.
 */
#include <errno.h>
#include <math.h>
#include <unistd.h>

#include "policy.h"

#define POL_TUNE_K		0.0625
#define POL_TUNE_MISS_HOLD	3
/* Windows without any of the metric (psi: no stall at all) that restart the ramp. */
#define POL_TUNE_QUIET		20

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

uint64_t pol_tune_floor(const struct pol_scheme *s)
{
	uint64_t f = s->quota_sz / 1024;

	return f > page_size() ? f : page_size();
}

uint64_t pol_tune_rate(struct pol_rate_tuner *t, uint64_t q, uint64_t used, double score,
		       uint64_t qmin, uint64_t qmax)
{
	uint64_t u = used > qmin ? used : qmin;
	double b = (double)(q < u ? q : u), f, n, mean = 0;
	int ended = 0;

	if (score < 0)
		return q;
	t->v[t->pos] = score;
	t->pos = (t->pos + 1) % POL_TUNE_AVG;
	if (t->n < POL_TUNE_AVG)
		t->n++;
	for (int i = 0; i < t->n; i++)
		mean += t->v[i] / t->n;
	t->quiet = score > 0 ? 0 : t->quiet + 1;
	if (t->ramp && score >= 0.5) {
		/* the ramp is over: average from here, not over its windows at 0 */
		ended = 1;
		t->ramp = 0;
		t->n = 1;
		t->pos = 0;
		t->v[t->pos++] = mean = score;
	} else if (t->quiet >= POL_TUNE_QUIET) {
		t->ramp = 1;
	}
	f = t->ramp ? 2 : 1 + POL_TUNE_K * (1 - mean);
	f = f > 2 ? 2 : f < 0.5 ? 0.5 : f;
	/* the ramp ran past the goal: undo the doublings the delay hid */
	if (ended && score >= 1)
		f = 0.25;
	t->mean = mean;
	n = b * f;
	if (n < (double)qmin)
		return qmin;
	return n > (double)qmax ? qmax : (uint64_t)n;
}

uint64_t pol_tune_level(double gap, uint64_t qmax)
{
	if (gap <= 0)
		return 0;
	return gap >= (double)qmax ? qmax : (uint64_t)gap;
}

/* The metric now, normalised to a window of the scheme's quota_us. */
/* The scheme @g belongs to (its cgroup= picks the targets of rss and refault). */
static const struct pol_scheme *scheme_of(const struct pol_engine *e, const struct pol_goal *g)
{
	for (int i = 0; i < e->nr_schemes; i++)
		if (g >= e->s[i].goals && g < e->s[i].goals + POL_MAX_GOALS)
			return &e->s[i];
	return NULL;
}

/* A target whose rss and faults count for the goals of @s. */
static int counts_for(struct pol_engine *e, const struct pol_scheme *s, struct pol_target *t)
{
	return !t->gone && (!s || pol_scheme_has_target(e, s, t));
}

int pol_goal_read(struct pol_engine *e, struct pol_goal *g, double *v)
{
	const struct pol_scheme *s = scheme_of(e, g);
	uint64_t u, total, free_b;
	int err = 0;

	switch (g->metric) {
	case POL_GOAL_PSI:
		err = pol_psi_some_total(g->path, &u);
		if (err)
			return err;
		if (!g->have_total || u < g->last_total) {
			/* the first window (or a counter that went back): a baseline */
			g->last_total = u;
			g->have_total = 1;
			return -EAGAIN;
		}
		*v = (double)(u - g->last_total);
		g->last_total = u;
		return 0;
	case POL_GOAL_FREE:
	case POL_GOAL_USED:
		err = pol_meminfo(g->src == POL_SRC_NODE ? g->node : -1, &total, &free_b);
		if (err)
			return err;
		g->total_bytes = total;
		u = g->metric == POL_GOAL_FREE ? free_b : total - free_b;
		*v = (double)u * 100 / (double)total;
		return 0;
	case POL_GOAL_MEMCG:
		err = pol_read_u64(g->path, &u);
		*v = (double)u;
		return err;
	case POL_GOAL_RSS: {
		double sum = 0;
		int alive = 0;

		for (int i = 0; i < e->nr_targets; i++) {
			if (!counts_for(e, s, &e->t[i]) || pol_pid_rss(e->t[i].pid, &u))
				continue;
			sum += (double)u;
			alive++;
		}
		*v = sum;
		return alive ? 0 : -ESRCH;
	}
	case POL_GOAL_USER:
		return pol_read_number(g->path, v);
	case POL_GOAL_REFAULT: {
		uint64_t sum = 0;
		int alive = 0;

		for (int i = 0; i < e->nr_targets; i++) {
			if (!counts_for(e, s, &e->t[i]) || pol_pid_majflt(e->t[i].pid, &u))
				continue;
			sum += u;
			alive++;
		}
		if (!alive)
			return -ESRCH;
		if (!g->have_total || sum < g->last_total || alive != g->alive) {
			/* the first window, or a target gone: a new baseline */
			g->last_total = sum;
			g->have_total = 1;
			g->alive = alive;
			return -EAGAIN;
		}
		*v = (double)(sum - g->last_total);
		g->last_total = sum;
		return 0;
	}
	default:
		return -EINVAL;
	}
}

/* Bytes still to move for a level goal (> 0: acting more gets closer). */
static double level_gap(const struct pol_goal *g)
{
	double d = g->direction > 0 ? g->target - g->current : g->current - g->target;

	if (g->metric == POL_GOAL_FREE || g->metric == POL_GOAL_USED)
		d = d / 100 * (double)g->total_bytes;
	return d;
}

/* How far along a rate goal is: 1 at the target, < 1 short of it. */
static double rate_score(const struct pol_goal *g)
{
	if (g->direction > 0)
		return g->current / g->target;
	return g->current > 0 ? g->target / g->current : 1e9;
}

/* One goal's proposal for the next window; updates its state. */
static uint64_t propose(struct pol_engine *e, struct pol_scheme *s, struct pol_goal *g,
			double window_scale, uint64_t used)
{
	uint64_t qmin = pol_tune_floor(s), qmax = s->quota_sz;
	double v, gap, score;
	int err = e->goal_read(e, g, &v);

	/*
	 * The first window ramps up from the floor, whether its read gave a
	 * value or only took the baseline of a counter (psi and refault are
	 * differences: their first read is always -EAGAIN, and a ramp set
	 * only on a value never started, leaving the quota to climb x1.06 a
	 * window until a quiet spell restarted it).
	 */
	if (!g->level && !g->q && (!err || err == -EAGAIN))
		g->rt.ramp = 1;
	if (err == -EAGAIN)
		return g->level ? g->q : (g->q = g->q ? g->q : qmin);
	if (err) {
		g->nr_errors++;
		g->last_err = -err;
		if (++g->misses > POL_TUNE_MISS_HOLD) {
			g->q /= 2;
			g->integral /= 2;
			if (!g->level && g->q < qmin)
				return 0;	/* blind and at the floor: stop */
		}
		return g->q;
	}
	g->misses = 0;
	g->nr_reads++;
	g->current = g->metric == POL_GOAL_PSI || g->metric == POL_GOAL_REFAULT ?
		     v * window_scale : v;
	if (g->level) {
		gap = level_gap(g);
		/* integrate only while the action took what it was given */
		if (gap < 0 || used >= s->quota_eff)
			g->integral += gap / 16;
		g->integral = g->integral < 0 ? 0 : g->integral > (double)qmax ? (double)qmax :
			      g->integral;
		return g->q = pol_tune_level(gap / 2 + g->integral, qmax);
	}
	score = rate_score(g);
	/*
	 * Pressure and refaults cannot be the scheme's doing before it took
	 * anything away: what was never paged out cannot fault back in.  Such
	 * a metric (the workload's own start, another cgroup's reclaim) does
	 * not end the ramp; the ramp's quota stays at twice what was used
	 * meanwhile, and the first window after the scheme acted reads the
	 * metric as usual.
	 */
	if (g->rt.ramp && (g->metric == POL_GOAL_PSI || g->metric == POL_GOAL_REFAULT) &&
	    !s->st.sz_applied)
		score = 0;
	g->q = pol_tune_rate(&g->rt, g->q ? g->q : qmin, used, score, qmin, qmax);
	/* far past the goal even at the floor: pause until it comes down */
	return g->q <= qmin && g->rt.mean >= 2 ? 0 : g->q;
}

void pol_tune_window(struct pol_engine *e, struct pol_scheme *s, int64_t now_ns)
{
	uint64_t q = s->quota_sz, used = s->quota_used, psz = page_size();
	double scale = 1;

	/* pressure per window of quota_us, whatever the window really lasted */
	if (s->quota_reset_ns && now_ns > s->quota_reset_ns)
		scale = (double)s->quota_us * 1000 / (double)(now_ns - s->quota_reset_ns);
	for (int i = 0; i < s->nr_goals; i++) {
		uint64_t p = propose(e, s, &s->goals[i], scale, used);

		q = p < q ? p : q;
	}
	s->quota_eff = q & ~(psz - 1);
	if (!s->quota_reset_ns)
		return;		/* the first window only takes the baselines */
	s->tune.windows++;
	if (!s->quota_eff)
		s->tune.paused++;
	else if (s->quota_eff >= (s->quota_sz & ~(psz - 1)))
		s->tune.at_max++;
	if (e->on_tune)
		e->on_tune(e, s, now_ns);
}
