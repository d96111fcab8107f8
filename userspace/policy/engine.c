// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine: every snapshot, for every active scheme, find the regions
 * that match its access pattern, cut them to the mapped bytes its filters
 * allow and that it has not acted on yet (region identity), prioritise them
 * under the quota, and act.  Everything it does or could not do is counted
 * in the scheme's stats; an error of one call never stops the run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"

/* Maps are re-read at most this often (filters and clipping need them). */
#define MAPS_REFRESH_NS	(500LL * 1000 * 1000)

static uint64_t act_syscall(struct pol_engine *e, const struct pol_scheme *s,
			    struct pol_target *t, uint64_t start, uint64_t len, int *err)
{
	(void)e;
	switch (s->action) {
	case POL_MIGRATE_HOT:
	case POL_MIGRATE_COLD:
		return pol_act_migrate(t->pid, s->node, start, len, err);
	case POL_STAT:
		*err = 0;
		return len;
	default:
		if (t->pidfd < 0) {
			*err = t->pidfd;
			return 0;
		}
		return pol_act_madvise(t->pidfd, s->action, start, len, err);
	}
}

int pol_engine_init(struct pol_engine *e, struct pol_scheme *s, int nr_schemes,
		    const pid_t *pids, int nr_pids)
{
	memset(e, 0, sizeof(*e));
	e->s = s;
	e->nr_schemes = nr_schemes;
	e->act = act_syscall;
	e->maps_refresh = maps_refresh;
	e->goal_read = pol_goal_read;
	e->probe = pol_probe;
	e->cgroup_of = pol_pid_cgroup;
	e->page_size = sysconf(_SC_PAGESIZE);
	e->act_chunk = POL_ACT_CHUNK;
	for (int i = 0; i < nr_pids; i++)
		if (pol_engine_add_target(e, pids[i]) < 0)
			return -ENOMEM;
	for (int i = 0; i < nr_schemes; i++) {
		/* "<i>:" and any name fit; the real ones ("migrate_cold:N") are short */
		char name[sizeof("-2147483648:") + sizeof(s[i].name)];

		if (s[i].idle_us > e->max_idle_us)
			e->max_idle_us = s[i].idle_us;
		/* cold schemes rank by how long each byte was idle (collect()) */
		if (!s[i].hottest_first && s[i].quota_sz && e->track_us < POL_IDLE_SCORE_US)
			e->track_us = POL_IDLE_SCORE_US;
		if (e->track_us < e->max_idle_us)
			e->track_us = e->max_idle_us;
		snprintf(name, sizeof(name), "%d:%s", i, s[i].name);
		memcpy(s[i].name, name, sizeof(s[i].name) - 1);
		s[i].name[sizeof(s[i].name) - 1] = '\0';
		/* with goals, start from the floor: the tuner raises it as they allow */
		s[i].quota_eff = s[i].nr_goals ? pol_tune_floor(&s[i]) : s[i].quota_sz;
	}
	return 0;
}

static int target_index(struct pol_engine *e, pid_t pid)
{
	/* a snapshot lists a target's regions together */
	if (e->last_target < e->nr_targets && e->t[e->last_target].pid == pid)
		return e->last_target;
	for (int i = 0; i < e->nr_targets; i++)
		if (e->t[i].pid == pid)
			return e->last_target = i;
	return -1;
}

void *pol_grow(void *p, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t cap2 = *cap ? *cap : first;

	if (need <= *cap)
		return p;
	while (cap2 < need)
		cap2 *= 2;
	p = realloc(p, cap2 * size);
	if (p)
		*cap = cap2;
	return p;
}

int pol_engine_add_target(struct pol_engine *e, pid_t pid)
{
	struct pol_target *t;
	int i = target_index(e, pid);

	if (i >= 0)
		return i;
	t = pol_grow(e->t, &e->cap_targets, e->nr_targets + 1, sizeof(*t), 16);
	if (!t)
		return -ENOMEM;
	e->t = t;
	t = &e->t[e->nr_targets];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->maps.pid = pid;
	t->pagemap = -1;
	t->cg = -1;		/* read when first needed (regret.c) */
	t->acted = calloc(e->nr_schemes ? e->nr_schemes : 1, sizeof(*t->acted));
	if (!t->acted)
		return -ENOMEM;
	/* a pidfd keeps naming this process even if the pid is reused */
	t->pidfd = pol_pidfd_open(pid);
	return e->nr_targets++;
}

static void target_free(struct pol_engine *e, struct pol_target *t)
{
	for (int i = 0; t->acted && i < e->nr_schemes; i++)
		pol_iset_free(&t->acted[i]);
	free(t->acted);
	t->acted = NULL;
	pol_iset_free(&t->accessed);
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->pagemap >= 0)
		close(t->pagemap);
	maps_free(&t->maps);
}

void pol_engine_remove_target(struct pol_engine *e, pid_t pid)
{
	int i = target_index(e, pid);

	if (i < 0)
		return;
	pol_regret_target_gone(e, pid);
	target_free(e, &e->t[i]);
	e->t[i] = e->t[--e->nr_targets];
}

void pol_engine_free(struct pol_engine *e)
{
	for (int i = 0; i < e->nr_targets; i++)
		target_free(e, &e->t[i]);
	free(e->t);
	e->t = NULL;
	e->nr_targets = e->cap_targets = 0;
	free(e->cand);
	e->cand = NULL;
	pol_regret_free(e);
}

static int add_cand(struct pol_engine *e, uint64_t start, uint64_t end, int t,
		    unsigned int score)
{
	struct pol_cand *c = pol_grow(e->cand, &e->cap_cand, e->nr_cand + 1, sizeof(*c), 256);

	if (!c)
		return -ENOMEM;
	e->cand = c;
	e->cand[e->nr_cand++] = (struct pol_cand){ start, end, t, score };
	return 0;
}

static int matches(const struct pol_scheme *s, const struct daptrace_region *r,
		   uint32_t nr_samples, uint64_t age_us)
{
	uint64_t sz = r->end - r->start;
	/*
	 * nr_accesses / nr_samples against the permille bounds, multiplied out:
	 * rounding the quotient down made 1 access in 1001 samples "0", so
	 * freq=0-0 (never accessed) matched it.  Without samples it counts as 0.
	 */
	uint64_t acc = nr_samples ? (uint64_t)r->nr_accesses * 1000 : 0;
	uint64_t n = nr_samples ? nr_samples : 1;

	return sz >= s->min_sz && sz <= s->max_sz && acc >= (uint64_t)s->min_freq * n &&
	       acc <= (uint64_t)s->max_freq * n && age_us >= s->min_age_us &&
	       age_us <= s->max_age_us;
}

int pol_label_actionable(const char *label, enum pol_filter_type type)
{
	/* the kernel's special mappings can't be advised or migrated */
	if (!strcmp(label, "[vvar]") || !strcmp(label, "[vdso]") ||
	    !strcmp(label, "[vsyscall]"))
		return 0;
	if (type == POL_FILTER_ANON && label[0] != '[')
		return 0;
	if (type == POL_FILTER_FILE && label[0] == '[')
		return 0;
	return 1;
}

static int label_allowed(const struct pol_scheme *s, const char *label)
{
	return pol_label_actionable(label, s->ftype) && (!s->flabel || strstr(label, s->flabel));
}

/* Scheme @s's identity in target @ti, and when @ti's ranges were last accessed. */
static struct pol_iset *acted_of(struct pol_engine *e, const struct pol_scheme *s, int ti)
{
	return &e->t[ti].acted[s - e->s];
}

static struct pol_iset *accessed_of(struct pol_engine *e, int ti)
{
	return &e->t[ti].accessed;
}

/* Candidates in [a, b) the scheme has not acted on yet. */
static void add_unacted(struct pol_engine *e, struct pol_scheme *s, uint64_t a, uint64_t b,
			int ti, unsigned int score)
{
	uint64_t ps, pe;

	while (a < b && pol_iset_first_gap(acted_of(e, s, ti), a, b, &ps, &pe)) {
		if (add_cand(e, ps, pe, ti, score))
			break;
		a = pe;
	}
}

/*
 * The same, each piece scored with how long it was idle by address when
 * that is longer than the region's age.  A region's age restarts whenever
 * its access count moves, and a merge with a neighbour that was touched
 * drags a never-touched range along; under a small quota (a tuned one
 * starts at 1/1024th) that put memory read every second ahead of memory
 * never read, and the pressure of its refaults held the quota down.
 */
static void add_by_idle(struct pol_engine *e, struct pol_scheme *s, uint64_t a, uint64_t b,
			int ti, const struct daptrace_region *r, uint32_t nr_samples,
			uint64_t age_us, int64_t now)
{
	/* not seen accessed while watched: idle at least since then */
	int64_t horizon = now - (int64_t)e->track_us * 1000;
	int64_t since = e->t0_ns > horizon ? e->t0_ns : horizon;

	while (a < b) {
		uint64_t pe, idle_us;
		int64_t t;

		if (!pol_iset_piece(accessed_of(e, ti), a, b, &pe, &t))
			t = since;
		idle_us = now > t ? (uint64_t)(now - t) / 1000 : 0;
		add_unacted(e, s, a, pe, ti, pol_score(s, r->nr_accesses, nr_samples,
						       idle_us > age_us ? idle_us : age_us));
		a = pe;
	}
}

/* Scored by the region, or for cold schemes under a quota by idle time. */
static void add_scored(struct pol_engine *e, struct pol_scheme *s, uint64_t a, uint64_t b,
		       int ti, const struct daptrace_region *r, uint32_t nr_samples,
		       uint64_t age_us, int64_t now)
{
	if (!s->hottest_first && s->quota_sz && e->track_us)
		add_by_idle(e, s, a, b, ti, r, nr_samples, age_us, now);
	else
		add_unacted(e, s, a, b, ti, pol_score(s, r->nr_accesses, nr_samples, age_us));
}

/*
 * The candidates of one matching region: its mapped pieces the filters
 * allow, idle long enough if the scheme asks so, minus what identity says
 * was already done.
 */
static void collect(struct pol_engine *e, struct pol_scheme *s,
		    const struct daptrace_region *r, int ti, uint32_t nr_samples,
		    uint64_t age_us, int64_t now)
{
	const struct maps *m = &e->t[ti].maps;
	uint64_t rs = r->start, re = r->end;
	int64_t since = now - (int64_t)s->idle_us * 1000;

	if (s->faddr_end) {
		rs = rs > s->faddr_start ? rs : s->faddr_start;
		re = re < s->faddr_end ? re : s->faddr_end;
	}
	for (size_t i = 0; i < m->n && rs < re; i++) {
		uint64_t a, b, ps, pe;

		if (m->e[i].end <= rs || m->e[i].start >= re)
			continue;
		if (!label_allowed(s, m->e[i].label))
			continue;
		a = m->e[i].start > rs ? m->e[i].start : rs;
		b = m->e[i].end < re ? m->e[i].end : re;
		s->st.nr_tried++;
		s->st.sz_tried += b - a;
		/*
		 * Accesses the module could not see (a secondary MMU, a PFN
		 * mapping) read as none: the region is not known to be cold,
		 * its access level is not known at all.
		 */
		if (r->nr_unobserved && !s->act_unobserved) {
			s->st.nr_unobserved_skip++;
			s->st.sz_unobserved_skip += b - a;
			continue;
		}
		if (s->action == POL_STAT) {
			add_cand(e, a, b, ti, pol_score(s, r->nr_accesses, nr_samples, age_us));
			continue;
		}
		if (pol_iset_covered(acted_of(e, s, ti), a, b)) {
			s->st.nr_identity_skip++;
			s->st.sz_identity_skip += pol_iset_covered(acted_of(e, s, ti), a, b);
		}
		if (!s->idle_us) {
			add_scored(e, s, a, b, ti, r, nr_samples, age_us, now);
			continue;
		}
		/* nothing has been watched that long yet */
		if (since < e->t0_ns)
			continue;
		while (a < b && pol_iset_first_gap_since(accessed_of(e, ti), a, b, since, &ps, &pe)) {
			add_scored(e, s, ps, pe, ti, r, nr_samples, age_us, now);
			a = pe;
		}
	}
}

/* Another scheme acted on [start, end) of @ti: the others' identity there is stale. */
static void forget_elsewhere(struct pol_engine *e, const struct pol_scheme *s, int ti,
			     uint64_t start, uint64_t end)
{
	for (int i = 0; i < e->nr_schemes; i++)
		if (&e->s[i] != s)
			pol_iset_remove(acted_of(e, &e->s[i], ti), start, end);
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* This snapshot's work budget is spent (one piece always goes: progress). */
static int over_time(const struct pol_engine *e)
{
	return e->work_budget_ns && e->pieces_done &&
	       mono_ns() - e->apply_start_ns > e->work_budget_ns;
}

/*
 * Act in chunks and stop when this snapshot's work budget is spent: a
 * long action (paging 8 MiB out into zram took seconds under TCG on a
 * loaded host) must not keep the reader away from the ring until
 * snapshots are lost.
 * *@tried is how much of the range was attempted.
 */
static uint64_t act_chunked(struct pol_engine *e, const struct pol_scheme *s,
			    struct pol_target *t, uint64_t start, uint64_t len,
			    uint64_t *tried, int *err)
{
	uint64_t done = 0, off = 0, chunk = e->act_chunk;

	/* migrating copies every page (and under TCG flushes for each): smaller pieces */
	if (s->action == POL_MIGRATE_HOT || s->action == POL_MIGRATE_COLD)
		chunk /= 8;
	*err = 0;
	while (off < len) {
		uint64_t n = len - off > chunk ? chunk : len - off;

		int follow;

		if (over_time(e))
			break;
		follow = pol_regret_before(e, s, t, start + off, n);
		done += e->act(e, s, t, start + off, n, err);
		if (follow)
			pol_regret_after(e, s, t, e->now_ns + (mono_ns() - e->apply_start_ns));
		e->pieces_done++;
		off += n;
		if (*err)
			break;
	}
	*tried = off;
	return done;
}

/* The first candidate at or after where the last share stopped (0: wrap). */
static size_t share_start(const struct pol_engine *e, const struct pol_scheme *s)
{
	for (size_t i = 0; i < e->nr_cand; i++)
		if (e->cand[i].target > s->share_t ||
		    (e->cand[i].target == s->share_t && e->cand[i].end > s->share_addr))
			return i;
	return 0;
}

static void apply_scheme(struct pol_engine *e, struct pol_scheme *s,
			 const struct daptrace_snapshot *snap, int64_t now)
{
	uint64_t hist[POL_MAX_SCORE + 1] = { 0 }, budget = UINT64_MAX;
	uint64_t psz = (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned int cutoff = 0;
	int exceeded = 0;
	size_t first;

	/* accessed again: acting on it again is a new decision (also while off) */
	for (uint32_t i = 0; i < snap->nr_regions && !s->hottest_first; i++) {
		int ti;

		if (!snap->regions[i].nr_accesses)
			continue;
		ti = target_index(e, snap->regions[i].pid);
		if (ti >= 0)
			pol_iset_remove(acted_of(e, s, ti), snap->regions[i].start,
					snap->regions[i].end);
	}
	if (!pol_wmark_update(s)) {
		s->st.wmark_inactive++;
		return;
	}
	if (s->quota_sz) {
		if (!s->quota_reset_ns || now - s->quota_reset_ns >= (int64_t)s->quota_us * 1000) {
			/* the window that ends sets the next one's quota */
			if (s->nr_goals)
				pol_tune_window(e, s, now);
			s->quota_reset_ns = now;
			s->quota_used = 0;
		}
		budget = s->quota_eff > s->quota_used ? s->quota_eff - s->quota_used : 0;
	}
	for (int ti = 0; s->reapply_us && ti < e->nr_targets; ti++)
		pol_iset_expire(acted_of(e, s, ti), now - (int64_t)s->reapply_us * 1000);

	e->nr_cand = 0;
	for (uint32_t i = 0; i < snap->nr_regions; i++) {
		const struct daptrace_region *r = &snap->regions[i];
		uint64_t age_us = (uint64_t)r->age * snap->aggr_us;
		int ti = target_index(e, r->pid);
		/*
		 * nr_accesses counts among the observed checks: the frequency
		 * of a region that had some unobserved (acted on only with
		 * unobserved=act) is of those, or it reads colder than what was
		 * seen of it.  None observed: no samples, frequency 0.
		 */
		uint32_t observed = snap->nr_samples > r->nr_unobserved ?
				    snap->nr_samples - r->nr_unobserved : 0;

		if (ti < 0 || e->t[ti].gone || !matches(s, r, observed, age_us) ||
		    !pol_scheme_has_target(e, s, &e->t[ti]))
			continue;
		collect(e, s, r, ti, observed, age_us, now);
	}
	if (s->quota_sz) {
		for (size_t i = 0; i < e->nr_cand; i++)
			hist[e->cand[i].score] += e->cand[i].end - e->cand[i].start;
		cutoff = pol_score_cutoff(hist, budget);
	}
	/*
	 * Two passes: everything above the cut-off fits, then the cut-off
	 * score's regions share what is left.  Address order within the first;
	 * the second starts where the last window's share stopped, so that
	 * equal candidates take turns: starting from the lowest address each
	 * window spent a small quota on the same few ranges, and where the
	 * monitor had missed that those were in use (it samples), on the same
	 * mistakes.
	 */
	first = share_start(e, s);
	for (size_t k = 0; k < 2 * e->nr_cand; k++) {
		size_t i = k < e->nr_cand ? k : (first + k - e->nr_cand) % e->nr_cand;
		struct pol_cand *c = &e->cand[i];
		struct pol_target *t = &e->t[c->target];
		uint64_t len = c->end - c->start, done, tried;
		int err;

		if (t->gone || (s->quota_sz && (k < e->nr_cand) != (c->score > cutoff)))
			continue;
		if (!s->quota_sz && k >= e->nr_cand)
			break;
		if (s->quota_sz && (c->score < cutoff || budget < psz)) {
			s->st.nr_quota_skip++;
			s->st.sz_quota_skip += len;
			exceeded = 1;
			continue;
		}
		if (len > budget) {
			/* the rest of this piece waits for the next window */
			s->st.nr_quota_skip++;
			s->st.sz_quota_skip += len - (budget & ~(psz - 1));
			len = budget & ~(psz - 1);
			exceeded = 1;
		}
		if (over_time(e)) {
			s->st.nr_quota_skip++;
			s->st.sz_quota_skip += len;
			exceeded = 1;
			continue;
		}
		done = act_chunked(e, s, t, c->start, len, &tried, &err);
		if (s->quota_sz) {
			/* charged what was tried, as DAMOS does: a failing range costs too */
			budget -= tried;
			s->quota_used += tried;
		}
		if (tried < len && !err) {
			/* out of time for this snapshot: the rest waits */
			s->st.nr_quota_skip++;
			s->st.sz_quota_skip += len - tried;
			exceeded = 1;
		}
		if (done) {
			s->st.nr_applied++;
			s->st.sz_applied += done;
		}
		if (err) {
			s->st.errs[pol_err_class(err)]++;
			if (pol_err_class(err) == POL_EOTHER)
				s->st.other_errno = -err;
			if (err == -ESRCH)
				t->gone = 1;
			continue;
		}
		if (s->action != POL_STAT && tried) {
			pol_iset_add(acted_of(e, s, c->target), c->start, c->start + tried, now);
			forget_elsewhere(e, s, c->target, c->start, c->start + tried);
		}
		if (k >= e->nr_cand && tried) {
			s->share_t = c->target;
			s->share_addr = c->start + tried;
		}
	}
	if (exceeded)
		s->st.qt_exceeds++;
}

/*
 * How long ago a region's level last changed, in ns.  Both factors are the
 * kernel's 32-bit counts, so the product in µs fits 64 bits but not once in
 * ns: saturated, as a wrapped one could put that change in the future.
 */
static int64_t age_ns_of(const struct daptrace_region *r, uint64_t aggr_us)
{
	uint64_t us = (uint64_t)r->age * aggr_us;

	return us > INT64_MAX / 1000 ? INT64_MAX : (int64_t)us * 1000;
}

/*
 * Windows we never saw may hold accesses.  A region without accesses now
 * whose age covers the missed windows and this one kept its (idle) level
 * through them all: its idle clock and identity stand.  Any other may have
 * been accessed up to when its level last changed, so it counts as accessed
 * then and acted-on ranges in it are new decisions again.  Age tolerates
 * counts within the aggregation's age threshold, as DAMON's does: a region
 * touched in one or two samples per window can keep aging, which is the
 * monitor's resolution anyway.
 */
static void after_gap(struct pol_engine *e, const struct daptrace_snapshot *snap,
		      int64_t now_ns)
{
	for (uint32_t i = 0; i < snap->nr_regions; i++) {
		const struct daptrace_region *r = &snap->regions[i];
		int ti;

		if (!r->nr_accesses && r->age > snap->missed_before)
			continue;
		ti = target_index(e, r->pid);
		if (ti < 0)
			continue;
		/* (accessed now: pol_engine_apply() marks it as usual) */
		if (e->track_us && !r->nr_accesses)
			pol_iset_add(accessed_of(e, ti), r->start, r->end,
				     now_ns - age_ns_of(r, snap->aggr_us));
		for (int k = 0; k < e->nr_schemes; k++)
			if (!e->s[k].hottest_first)
				pol_iset_remove(acted_of(e, &e->s[k], ti), r->start, r->end);
	}
}

void pol_engine_apply(struct pol_engine *e, const struct daptrace_snapshot *snap,
		      int64_t now_ns)
{
	e->nr_snapshots++;
	e->nr_missed += snap->missed_before;
	if (!e->t0_ns)
		e->t0_ns = now_ns;
	if (snap->missed_before)
		after_gap(e, snap, now_ns);
	if (e->track_us) {
		/* older than every idle= condition and the score's cap: forget it */
		for (int ti = 0; ti < e->nr_targets; ti++)
			pol_iset_expire(accessed_of(e, ti), now_ns - (int64_t)e->track_us * 1000);
		for (uint32_t i = 0; i < snap->nr_regions; i++) {
			int ti;

			if (!snap->regions[i].nr_accesses)
				continue;
			ti = target_index(e, snap->regions[i].pid);
			if (ti >= 0)
				pol_iset_add(accessed_of(e, ti), snap->regions[i].start,
					     snap->regions[i].end, now_ns);
		}
	}
	for (int i = 0; i < e->nr_targets; i++) {
		struct pol_target *t = &e->t[i];

		if (t->gone || (t->maps_ns && now_ns - t->maps_ns < MAPS_REFRESH_NS))
			continue;
		e->maps_refresh(&t->maps);
		t->maps_ns = now_ns;
		if (t->maps.gone)
			t->gone = 1;
	}
	e->apply_start_ns = mono_ns();
	e->now_ns = now_ns;
	e->pieces_done = 0;
	pol_regret_tick(e, now_ns);
	for (int i = 0; i < e->nr_schemes; i++)
		apply_scheme(e, &e->s[i], snap, now_ns);
}
