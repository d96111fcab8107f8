// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace exporter: one snapshot folded into series groups.
 *
 * Per target: bytes, working set (the bytes of the regions with
 * nr_accesses >= 1 inside the target's mappings, as `report wss` counts
 * them; a target whose mappings are not known has its accessed regions
 * counted whole, and those bytes are said apart), bytes idle for at least
 * each --idle-buckets duration, and DAMON_STAT's idle-time percentiles.
 * Label cardinality is bounded: the --top targets by size (all their
 * regions' bytes; ties by pid) get series of their own, the rest are
 * summed into "other".
 *
 * Idle time follows mm/damon/stat.c: a region not accessed in the window
 * has been idle for (age + 1) windows; one accessed has been accessed at
 * its level for (age + 1) windows, which DAMON_STAT writes as a negative
 * idle time so that the hottest memory sorts first.  A percentile P is the
 * idle time of the region at which the regions sorted that way first cover
 * P % of the bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mapped.h"
#include "exporter.h"

/* Per-target totals. */
struct exp_tacc {
	pid_t pid;
	int group;
	uint32_t nr_regions;
	uint64_t bytes, wss_bytes, wss_unknown_bytes, unobservable_bytes;
	uint64_t idle_bytes[EXP_MAX_BUCKETS];
	/* the target's mapped ranges, if known (valid while the view is made) */
	const struct rec_range *mr;
	size_t nr_mr;
	int mapped;
};

/* A region in percentile order: group, then idle time. */
struct exp_rkey {
	int group;
	int64_t idle_us;
	uint64_t bytes;
};

static int grow(void **p, size_t *cap, size_t want, size_t size)
{
	void *n;

	if (want <= *cap)
		return 0;
	n = realloc(*p, want * size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = want;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* Biggest first; a tie goes to the lower pid, so the order is stable. */
static int cmp_size(const void *a, const void *b)
{
	const struct exp_tacc *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_rkey(const void *a, const void *b)
{
	const struct exp_rkey *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->idle_us < y->idle_us ? -1 : x->idle_us > y->idle_us;
}

/* DAMON_STAT's idle time of a region, in µs (negative: accessed). */
static int64_t idle_us(const struct daptrace_region *r, uint32_t aggr_us)
{
	int64_t t = ((int64_t)r->age + 1) * aggr_us;

	return r->nr_accesses ? -t : t;
}

size_t exp_snapshot_pids(const struct daptrace_snapshot *s, pid_t *pids)
{
	size_t n = 0;

	for (uint32_t i = 0; i < s->nr_regions; i++)
		pids[i] = s->regions[i].pid;
	qsort(pids, s->nr_regions, sizeof(*pids), cmp_pid);
	for (uint32_t i = 0; i < s->nr_regions; i++)
		if (!n || pids[n - 1] != pids[i])
			pids[n++] = pids[i];
	return n;
}

/*
 * Add @r to @t: its bytes inside the target's mappings are in the working
 * set if it was accessed; without a map of the target, all of them, said
 * apart.  Idle bytes are the region's, holes included.
 */
static void add_region(struct exp_tacc *t, const struct exp_config *c,
		       const struct daptrace_snapshot *s, const struct daptrace_region *r)
{
	uint64_t size = r->end > r->start ? r->end - r->start : 0;

	t->nr_regions++;
	t->bytes += size;
	if (!daptrace_region_observed(s, r)) {
		t->unobservable_bytes += size;
		return;
	}
	if (r->nr_accesses) {
		if (t->mapped) {
			t->wss_bytes += mapped_in(t->mr, t->nr_mr, r->start, r->end);
		} else {
			t->wss_bytes += size;
			t->wss_unknown_bytes += size;
		}
		return;
	}
	for (int b = 0; b < c->nr_idle; b++)
		if ((uint64_t)idle_us(r, s->aggr_us) >= c->idle_us[b])
			t->idle_bytes[b] += size;
}

/* The targets of @s, sorted by pid, with their maps (@mapped) and totals. */
static int collect(struct exp_view *v, const struct exp_config *c,
		   const struct daptrace_snapshot *s, exp_mapped_fn mapped, void *ctx,
		   size_t *nr)
{
	pid_t *pids;
	size_t n, last = 0;

	if (grow((void **)&v->t, &v->t_cap, s->nr_regions ? s->nr_regions : 1, sizeof(*v->t)))
		return -ENOMEM;
	pids = malloc((s->nr_regions ? s->nr_regions : 1) * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	n = exp_snapshot_pids(s, pids);
	for (size_t i = 0; i < n; i++) {
		struct exp_tacc *t = &v->t[i];

		memset(t, 0, sizeof(*t));
		t->pid = pids[i];
		t->mapped = mapped && mapped(ctx, t->pid, &t->mr, &t->nr_mr);
	}
	free(pids);
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct daptrace_region *r = &s->regions[i];

		/* a snapshot lists a target's regions together: try the last one */
		if (v->t[last].pid != r->pid) {
			struct exp_tacc key = { .pid = r->pid };
			struct exp_tacc *t = bsearch(&key, v->t, n, sizeof(*v->t), cmp_pid);

			last = (size_t)(t - v->t);
		}
		add_region(&v->t[last], c, s, r);
	}
	*nr = n;
	return 0;
}

static void add_to(struct exp_group *g, const struct exp_tacc *t, const struct exp_config *c)
{
	g->nr_targets++;
	g->nr_regions += t->nr_regions;
	g->bytes += t->bytes;
	g->wss_bytes += t->wss_bytes;
	g->wss_unknown_bytes += t->wss_unknown_bytes;
	g->unobservable_bytes += t->unobservable_bytes;
	for (int b = 0; b < c->nr_idle; b++)
		g->idle_bytes[b] += t->idle_bytes[b];
}

/* The percentiles of each group, DAMON_STAT's way (see the top). */
static int percentiles(struct exp_view *v, const struct exp_config *c,
		       const struct daptrace_snapshot *s, size_t nr_t)
{
	size_t n = 0, i = 0;

	if (!c->nr_pct || !s->nr_regions)
		return 0;
	if (grow((void **)&v->r, &v->r_cap, s->nr_regions, sizeof(*v->r)))
		return -ENOMEM;
	for (uint32_t k = 0; k < s->nr_regions; k++) {
		const struct daptrace_region *r = &s->regions[k];
		struct exp_tacc key = { .pid = r->pid }, *t;

		if (!daptrace_region_observed(s, r))
			continue;
		t = bsearch(&key, v->t, nr_t, sizeof(*v->t), cmp_pid);
		v->r[n++] = (struct exp_rkey){
			.group = t->group,
			.idle_us = idle_us(r, s->aggr_us),
			.bytes = r->end > r->start ? r->end - r->start : 0,
		};
	}
	qsort(v->r, n, sizeof(*v->r), cmp_rkey);
	while (i < n) {
		struct exp_group *g = &v->g[v->r[i].group];
		unsigned __int128 total = 0, acc = 0;
		size_t end = i;
		int next = 0;

		while (end < n && v->r[end].group == v->r[i].group)
			total += v->r[end++].bytes;
		for (; i < end; i++) {
			acc += v->r[i].bytes;
			while (next < c->nr_pct && total &&
			       c->pct[next] <= (unsigned int)(acc * 100 / total))
				g->idle_pct_us[next++] = v->r[i].idle_us;
		}
		/* zero-sized regions only: the last one's time */
		while (next < c->nr_pct)
			g->idle_pct_us[next++] = v->r[end - 1].idle_us;
	}
	return 0;
}

int exp_view_update(struct exp_view *v, const struct exp_config *c,
		    const struct daptrace_snapshot *s, exp_comm_fn comm, exp_mapped_fn mapped,
		    void *ctx)
{
	size_t nr_t, top;

	/* until it is complete, the view shows nothing rather than a mix */
	v->valid = 0;
	v->nr_groups = 0;
	if (collect(v, c, s, mapped, ctx, &nr_t))
		return -ENOMEM;
	top = nr_t < c->top_n ? nr_t : c->top_n;
	if (grow((void **)&v->g, &v->g_cap, top + 1, sizeof(*v->g)))
		return -ENOMEM;
	/* rank by size, give the top their groups, then back to pid order */
	qsort(v->t, nr_t, sizeof(*v->t), cmp_size);
	memset(v->g, 0, (top + 1) * sizeof(*v->g));
	for (size_t i = 0; i < nr_t; i++) {
		struct exp_group *g = &v->g[i < top ? i : top];
		const char *name;

		v->t[i].group = (int)(i < top ? i : top);
		if (i < top) {
			g->pid = v->t[i].pid;
			name = comm ? comm(ctx, g->pid) : NULL;
			snprintf(g->comm, sizeof(g->comm), "%s", name ? name : "");
		}
		add_to(g, &v->t[i], c);
	}
	qsort(v->t, nr_t, sizeof(*v->t), cmp_pid);
	if (percentiles(v, c, s, nr_t))
		return -ENOMEM;
	v->nr_groups = (int)top + 1;
	v->nr_targets = (int)nr_t;
	v->valid = 1;
	v->seq = s->seq;
	v->start_ns = s->start_ns;
	v->end_ns = s->end_ns;
	v->sample_us = s->sample_us;
	v->aggr_us = s->aggr_us;
	v->nr_samples = s->nr_samples;
	v->flags = s->flags;
	return 0;
}

void exp_view_free(struct exp_view *v)
{
	free(v->t);
	free(v->r);
	free(v->g);
	memset(v, 0, sizeof(*v));
}
