// SPDX-License-Identifier: GPL-2.0-only
/* daptrace stat's numbers of one snapshot (stat_model.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/report_group.h"
#include "stat_model.h"

struct item {
	int64_t idle_ms;
	uint64_t bytes;
	uint64_t bandwidth;
	size_t group;
};

void stat_percentiles(const struct stat_idle *v, size_t n, int64_t *out)
{
	uint64_t total = 0, acc = 0;
	int next = 0;

	for (size_t i = 0; i < n; i++)
		total += v[i].bytes;
	for (int p = 0; p < STAT_PERCENTILES; p++)
		out[p] = 0;
	if (!total)
		return;
	/* mm/damon/stat.c: each region sets the percentiles its bytes reach */
	for (size_t i = 0; i < n && next < STAT_PERCENTILES; i++) {
		acc += v[i].bytes;
		while (next < STAT_PERCENTILES &&
		       (unsigned __int128)next * total <= (unsigned __int128)acc * 100)
			out[next++] = v[i].idle_ms;
	}
}

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->idle_ms < y->idle_ms ? -1 : x->idle_ms > y->idle_ms;
}

static int cmp_idle(const void *a, const void *b)
{
	const struct stat_idle *x = a, *y = b;

	return x->idle_ms < y->idle_ms ? -1 : x->idle_ms > y->idle_ms;
}

static int cmp_sum(const void *a, const void *b)
{
	const struct stat_sum *x = a, *y = b;

	if (x->resident != y->resident)
		return x->resident < y->resident ? 1 : -1;
	return strcmp(x->key, y->key);
}

const char *stat_cgroup_fold(const char *path, unsigned int depth, char *buf, size_t len)
{
	const char *p = path;
	size_t n;

	if (!depth || !path || path[0] != '/')
		return path ? path : "?";
	for (unsigned int d = 0; d < depth && *p; d++) {
		p = strchr(p + 1, '/');
		if (!p)
			return path;
	}
	n = (size_t)(p - path);
	if (n >= len)
		n = len - 1;
	memcpy(buf, path, n);
	buf[n] = '\0';
	return buf;
}

/* One sum from its items (sorted by idle time). */
static void fill(struct stat_sum *sum, struct stat_idle *v, size_t n)
{
	stat_percentiles(v, n, sum->idle_ms);
}

int stat_model_compute(struct stat_model *m, const struct daptrace_snapshot *s,
		       stat_cgroup_fn cgroup_of, void *ctx, unsigned int depth)
{
	struct item *items = calloc(s->nr_regions ? s->nr_regions : 1, sizeof(*items));
	struct stat_idle *v = calloc(s->nr_regions ? s->nr_regions : 1, sizeof(*v));
	uint64_t aggr_us = s->aggr_us ? s->aggr_us : 1;
	struct rgroups gs = { 0 };
	size_t n = 0, group = 0;
	pid_t pid = 0;
	int err = -ENOMEM;

	memset(m, 0, sizeof(*m));
	m->resident_weighted = s->placement && s->nr_samples;
	if (!items || !v)
		goto out;
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct daptrace_region *r = &s->regions[i];
		uint64_t bytes = m->resident_weighted ? daptrace_region_node_bytes(s, r, -1) :
				 r->end - r->start;
		unsigned __int128 bw;
		int new_pid = !i || r->pid != pid;

		/* a snapshot lists each target's regions together */
		if (new_pid && cgroup_of) {
			char buf[4096];
			const char *cg = cgroup_of(ctx, r->pid);
			struct rgroup *g = rgroups_get(&gs, stat_cgroup_fold(cg, depth, buf,
										 sizeof(buf)));

			if (!g)
				goto out;
			group = (size_t)(g - gs.g);
			g->nr_procs++;
		}
		if (new_pid)
			m->all.nr_procs++;
		pid = r->pid;
		if (!daptrace_region_observed(s, r)) {
			m->all.unobserved = u64_add_sat(m->all.unobserved, r->end - r->start);
			if (cgroup_of)
				gs.g[group].u[0] = u64_add_sat(gs.g[group].u[0], r->end - r->start);
			continue;
		}
		bw = (unsigned __int128)bytes * r->nr_accesses * 1000000 / aggr_us;
		items[n] = (struct item){
			.idle_ms = (r->nr_accesses ? -1 : 1) * (int64_t)(((uint64_t)r->age + 1) *
								 aggr_us / 1000),
			.bytes = bytes, .group = group,
			/* DAMON_STAT's estimated_memory_bandwidth */
			.bandwidth = bw > UINT64_MAX ? UINT64_MAX : (uint64_t)bw,
		};
		m->all.resident = u64_add_sat(m->all.resident, bytes);
		if (r->nr_accesses)
			m->all.wss = u64_add_sat(m->all.wss, bytes);
		m->all.bandwidth = u64_add_sat(m->all.bandwidth, items[n].bandwidth);
		n++;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (struct stat_idle){ items[i].idle_ms, items[i].bytes };
	qsort(v, n, sizeof(*v), cmp_idle);
	fill(&m->all, v, n);
	if (cgroup_of && gs.n) {
		m->cg = calloc(gs.n, sizeof(*m->cg));
		if (!m->cg)
			goto out;
		m->nr_cg = gs.n;
		for (size_t g = 0; g < gs.n; g++) {
			m->cg[g].key = gs.g[g].key;
			gs.g[g].key = NULL;
			m->cg[g].nr_procs = gs.g[g].nr_procs;
			m->cg[g].unobserved = gs.g[g].u[0];
		}
		qsort(items, n, sizeof(*items), cmp_item);
		for (size_t i = 0; i < n;) {
			struct stat_sum *sum = &m->cg[items[i].group];
			size_t k = 0;

			for (; i < n && &m->cg[items[i].group] == sum; i++, k++) {
				v[k] = (struct stat_idle){ items[i].idle_ms, items[i].bytes };
				sum->resident = u64_add_sat(sum->resident, items[i].bytes);
				if (items[i].idle_ms < 0)
					sum->wss = u64_add_sat(sum->wss, items[i].bytes);
				sum->bandwidth = u64_add_sat(sum->bandwidth, items[i].bandwidth);
			}
			fill(sum, v, k);
		}
		qsort(m->cg, m->nr_cg, sizeof(*m->cg), cmp_sum);
	}
	err = 0;
out:
	rgroups_free(&gs);
	free(items);
	free(v);
	if (err)
		stat_model_free(m);
	return err;
}

void stat_model_free(struct stat_model *m)
{
	for (size_t i = 0; i < m->nr_cg; i++)
		free(m->cg[i].key);
	free(m->cg);
	m->cg = NULL;
	m->nr_cg = 0;
}
