// SPDX-License-Identifier: GPL-2.0-only
/* A window's #maps rows, each maps read once (maps_rows.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "mapped.h"
#include "maps_rows.h"

/* FNV-1a over the ranges' bytes; never 0 ("none written") */
static uint64_t ranges_hash(const struct rec_range *r, uint32_t n)
{
	const unsigned char *p = (const unsigned char *)r;
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < n * sizeof(*r); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h ? h : 1;
}

void maps_rows_reset(struct maps_rows *rows)
{
	rows->n = rows->nr = 0;
}

int maps_rows_add(struct maps_rows *rows, const struct maps *m, uint64_t time_ns,
		  struct maps_written *w)
{
	struct rec_maps *v;
	uint64_t h;

	/*
	 * Not read since, or never read well: a read that fails keeps the
	 * last table, and an exited process's empty map is never one.
	 */
	if (m->nr_reads == w->reads || !m->n)
		return 0;
	/* at most one range per mapping */
	if (grow_array((void **)&rows->v, &rows->cap, rows->n + 1, sizeof(*rows->v)) ||
	    grow_array((void **)&rows->r, &rows->rcap, rows->nr + m->n, sizeof(*rows->r)))
		return -ENOMEM;
	v = &rows->v[rows->n];
	*v = (struct rec_maps){ .pid = m->pid, .time_ns = time_ns, .first = rows->nr };
	v->nr = (uint32_t)mapped_ranges(m, &rows->r[rows->nr]);
	w->reads = m->nr_reads;
	h = ranges_hash(&rows->r[v->first], v->nr);
	/* the record has these (an exited process's empty map keeps the last) */
	if (h == w->hash)
		return 0;
	w->hash = h;
	rows->n++;
	rows->nr += v->nr;
	return 0;
}

void maps_rows_put(const struct maps_rows *rows, struct rec_snapshot *s)
{
	s->maps = rows->v;
	s->nr_maps = rows->n;
	s->map_ranges = rows->r;
	s->nr_map_ranges = rows->nr;
}

void maps_rows_free(struct maps_rows *rows)
{
	free(rows->v);
	free(rows->r);
	memset(rows, 0, sizeof(*rows));
}
