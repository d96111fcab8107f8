// SPDX-License-Identifier: GPL-2.0-only
/* One snapshot of a record (report_pick.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/report_group.h"
#include "report_pick.h"

static void drop(struct pick *p)
{
	for (uint32_t i = 0; i < p->nr; i++) {
		free(p->regions[i].r.label);
		free(p->regions[i].group);
	}
	free(p->regions);
	p->regions = NULL;
	p->nr = 0;
}

/*
 * A snapshot without regions (of --pid) is only kept if all are empty:
 * the window closed as a command exited may have lost its targets' regions.
 */
int pick_offer(struct pick *p, const struct rec_snapshot *s, const struct rec_info *info)
{
	const struct report_opts *o = p->o;
	double t = (double)s->end_ns / 1e9;
	double dist = o->at_s < 0 ? -t : (t > o->at_s ? t - o->at_s : o->at_s - t);
	uint32_t n = 0, want = 0;

	if (!p->seen++)
		p->first_ns = s->start_ns;
	p->last_ns = s->end_ns;
	if (s->end_ns > s->start_ns && s->end_ns - s->start_ns > p->window_ns)
		p->window_ns = s->end_ns - s->start_ns;
	for (uint32_t i = 0; i < s->nr_regions; i++)
		want += !o->pid || s->regions[i].pid == o->pid;
	if (p->have && !want && p->nr)
		return 0;	/* never trade regions for an empty window */
	if (p->have && dist > p->best_dist && (!want || p->nr))
		return 0;	/* ties: the later one */
	drop(p);
	p->regions = calloc(s->nr_regions ? s->nr_regions : 1, sizeof(*p->regions));
	if (!p->regions)
		return fail("report", "out of memory");
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		struct picked_region *pr = &p->regions[n];

		if (o->pid && r->pid != o->pid)
			continue;
		pr->r = *r;
		pr->r.label = strdup(r->label);
		pr->group = NULL;
		if (o->by) {
			char buf[16];

			pr->group = strdup(report_group_key((enum report_by)o->by, info, r->pid,
							    buf, sizeof(buf)));
		}
		if (!pr->r.label || (o->by && !pr->group)) {
			p->nr = n + 1;
			return fail("report", "out of memory");
		}
		pr->freq = rec_observable(r) ? report_freq(s, r) : -1;
		pr->age_ns = report_age_ns(o, s, r->age);
		pr->window_ns = s->end_ns - s->start_ns;
		if (p->maps)
			pr->mem_known = mapped_memory(p->maps, info, r, &pr->mem);
		n++;
	}
	p->nr = n;
	p->seq = s->seq;
	p->end_ns = s->end_ns;
	p->best_dist = dist;
	p->have = 1;
	return 0;
}

int pick_done(struct pick *p)
{
	const struct report_opts *o = p->o;

	if (!p->have)
		return report_nothing(o, "snapshots");
	/*
	 * Not the nearest snapshot, far from the time asked for.  The first
	 * window opens a little after the record's start and the last one
	 * may close before its end: within one window of them is in it.
	 */
	if (o->at_s >= 0 && (o->at_s * 1e9 + (double)p->window_ns < (double)p->first_ns ||
			     o->at_s * 1e9 > (double)p->last_ns + (double)p->window_ns))
		return fail("report", "--at %g: more than one window (%.3f s) away from the "
			    "snapshots of %s, which span %.3f to %.3f s", o->at_s,
			    (double)p->window_ns / 1e9, o->input, (double)p->first_ns / 1e9,
			    (double)p->last_ns / 1e9);
	return p->nr ? 0 : report_nothing(o, "regions");
}

void pick_free(struct pick *p)
{
	drop(p);
}
