// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace exporter: the targets' mapped ranges, from /proc/PID/maps
 * (exporter.h), for a working set of the bytes inside the mappings.  The
 * labels of a read are not kept: its ranges are all the model asks for.
 * A pid that another process got keeps the last one's map until its next
 * read, as its name does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/mapped.h"
#include "common/maps.h"
#include "exporter.h"

static int cmp_map(const void *a, const void *b)
{
	pid_t x = ((const struct exp_map *)a)->pid, y = ((const struct exp_map *)b)->pid;

	return x < y ? -1 : x > y;
}

/* Read @e's map now; a read that fails or finds none keeps the last one. */
static void read_map(const struct exp_maps *mp, struct exp_map *e, int64_t now_ns)
{
	struct maps m = { .pid = e->pid, .proc = mp->proc };
	struct rec_range *r;

	e->read_ns = now_ns;
	e->tried = 1;
	if (maps_refresh(&m) || !m.n)
		goto out;
	r = malloc(m.n * sizeof(*r));
	if (!r)
		goto out;
	free(e->r);
	e->r = r;
	e->n = mapped_ranges(&m, r);
	e->known = 1;
out:
	maps_free(&m);
}

int exp_maps_update(struct exp_maps *mp, const struct daptrace_snapshot *s, int64_t now_ns,
		    int64_t every_ns)
{
	struct exp_map *next;
	pid_t *pids;
	size_t n, i = 0;

	pids = malloc((s->nr_regions ? s->nr_regions : 1) * sizeof(*pids));
	next = calloc(s->nr_regions ? s->nr_regions : 1, sizeof(*next));
	if (!pids || !next) {
		free(pids);
		free(next);
		return -ENOMEM;
	}
	n = exp_snapshot_pids(s, pids);
	/* both ascending: the targets that stay keep their maps, the others go */
	for (size_t k = 0; k < n; k++) {
		for (; i < mp->n && mp->m[i].pid < pids[k]; i++)
			free(mp->m[i].r);
		if (i < mp->n && mp->m[i].pid == pids[k])
			next[k] = mp->m[i++];
		else
			next[k] = (struct exp_map){ .pid = pids[k] };
		if (!next[k].tried || now_ns - next[k].read_ns >= every_ns)
			read_map(mp, &next[k], now_ns);
	}
	for (; i < mp->n; i++)
		free(mp->m[i].r);
	free(mp->m);
	free(pids);
	mp->m = next;
	mp->n = n;
	return 0;
}

int exp_maps_of(const struct exp_maps *mp, pid_t pid, const struct rec_range **r, size_t *n)
{
	struct exp_map key = { .pid = pid };
	const struct exp_map *e = mp->n ? bsearch(&key, mp->m, mp->n, sizeof(*mp->m), cmp_map)
					: NULL;

	if (!e || !e->known)
		return 0;
	*r = e->r;
	*n = e->n;
	return 1;
}

void exp_maps_free(struct exp_maps *mp)
{
	for (size_t i = 0; i < mp->n; i++)
		free(mp->m[i].r);
	free(mp->m);
	memset(mp, 0, sizeof(*mp));
}
