// SPDX-License-Identifier: GPL-2.0-only
/* The maps in force and the bytes of a region inside them (report_mapped.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/grow.h"
#include "common/mapped.h"
#include "report_mapped.h"

/* @pid's entry in @info->targets now, -1 if none. */
static long tindex_of(const struct rec_info *info, pid_t pid)
{
	const struct rec_target *t = rec_info_target(info, pid);

	return t ? (long)(t - info->targets) : -1;
}

/* @m, a read of window @s, in force for its target from now on. */
static int take(struct mapped_now *now, const struct rec_snapshot *s,
		const struct rec_maps *m, const struct rec_info *info)
{
	long ti = tindex_of(info, m->pid);
	size_t old = now->cap;
	struct mapped_target *t;
	struct rec_range *r = NULL;

	if (ti < 0)
		return 0;	/* the reader names every pid: not reached */
	if (grow_array((void **)&now->t, &now->cap, (size_t)ti + 1, sizeof(*now->t)))
		return -1;
	memset(&now->t[old], 0, (now->cap - old) * sizeof(*now->t));
	t = &now->t[ti];
	if (m->nr) {
		r = malloc(m->nr * sizeof(*r));
		if (!r)
			return -1;
		memcpy(r, &s->map_ranges[m->first], m->nr * sizeof(*r));
	}
	if (!t->known) {
		if (grow_array((void **)&now->held, &now->held_cap, now->nr_held + 1,
			       sizeof(*now->held))) {
			free(r);
			return -1;
		}
		now->held[now->nr_held++] = (size_t)ti;
	}
	free(t->r);
	*t = (struct mapped_target){ .r = r, .nr = m->nr, .known = 1 };
	return 0;
}

/* The window's reads replace the ones before; a target's that left before it began goes. */
int mapped_now_update(struct mapped_now *now, const struct rec_snapshot *s,
		      const struct rec_info *info)
{
	size_t k = 0;

	for (uint32_t i = 0; i < s->nr_maps; i++)
		if (take(now, s, &s->maps[i], info))
			return fail("report", "out of memory");
	for (size_t i = 0; i < now->nr_held; i++) {
		size_t ti = now->held[i];

		if (info->targets[ti].exit_ns < s->start_ns) {
			free(now->t[ti].r);
			now->t[ti] = (struct mapped_target){ 0 };
			continue;
		}
		now->held[k++] = ti;
	}
	now->nr_held = k;
	return 0;
}

int mapped_ranges_now(const struct mapped_now *now, const struct rec_info *info, pid_t pid,
		      const struct rec_range **r, uint32_t *nr)
{
	long ti = tindex_of(info, pid);

	if (ti < 0 || (size_t)ti >= now->cap || !now->t[ti].known)
		return 0;
	*r = now->t[ti].r;
	*nr = now->t[ti].nr;
	return 1;
}

int mapped_bytes(const struct mapped_now *now, const struct rec_info *info,
		 const struct rec_region *r, uint64_t *bytes)
{
	const struct rec_range *mr;
	uint32_t nr;

	if (!mapped_ranges_now(now, info, r->pid, &mr, &nr))
		return 0;
	*bytes = mapped_in(mr, nr, r->start, r->end);
	return 1;
}

int mapped_memory(const struct mapped_now *now, const struct rec_info *info,
		  const struct rec_region *r, uint64_t *bytes)
{
	if (mapped_bytes(now, info, r, bytes))
		return 1;
	*bytes = strcmp(r->label, "[unmapped]") ? r->end - r->start : 0;
	return 0;
}

void mapped_now_free(struct mapped_now *now)
{
	for (size_t i = 0; i < now->nr_held; i++)
		free(now->t[now->held[i]].r);
	free(now->t);
	free(now->held);
	memset(now, 0, sizeof(*now));
}
