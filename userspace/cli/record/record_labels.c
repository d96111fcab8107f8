// SPDX-License-Identifier: GPL-2.0-only
/* Region labels and when to re-read the maps (record_labels.h). */
#include <stdlib.h>
#include <string.h>

#include "record_labels.h"

void rec_tgt_read(struct rec_tgt *t, int64_t now)
{
	/* a failed read (or an exited process's empty map) keeps the last one */
	maps_refresh(&t->maps);
	t->maps_ns = now;
	t->fresh = 1;
	t->nr_holes = 0;
}

static void read_if_older(struct rec_tgt *t, int64_t now, int64_t age)
{
	if (!t->maps.gone && now - t->maps_ns >= age)
		rec_tgt_read(t, now);
}

static int is_hole(const struct rec_tgt *t, const struct daptrace_region *reg)
{
	for (unsigned int i = 0; i < t->nr_holes; i++)
		if (reg->start >= t->holes[i].start && reg->end <= t->holes[i].end)
			return 1;
	return 0;
}

static void add_hole(struct rec_tgt *t, const struct daptrace_region *reg)
{
	struct rec_hole *last = t->nr_holes ? &t->holes[t->nr_holes - 1] : NULL;

	/* a target's regions come in address order: a split hole stays one */
	if (last && last->end == reg->start)
		last->end = reg->end;
	else if (t->nr_holes < REC_MAX_HOLES)
		t->holes[t->nr_holes++] = (struct rec_hole){ reg->start, reg->end };
}

#define UNKNOWN_TARGET	"[unknown target]"

/*
 * A region that the map calls mostly unmapped may be a mapping made since
 * the map was read: read it again (rate-limited by @retry).  But most are
 * plain holes: the one between a binary and its heap (up to 1 GiB with
 * brk randomisation) makes the first of the three initial regions of
 * nearly every process "[unmapped]".  Reading the map again for those,
 * every window and for every target, was most of the recorder's time with
 * many targets.  So what the first snapshot after a read still finds
 * unmapped is noted as a hole of that map, and a region within a noted
 * hole leads to no read; a region elsewhere (a new one: the worker's
 * regions follow the address space at its update interval) still does.
 */
void rec_labels_refresh(struct rec_labels *l, const struct daptrace_snapshot *s,
			int64_t now, int64_t every, int64_t retry,
			struct rec_tgt *(*find)(void *ctx, pid_t pid), void *ctx)
{
	struct rec_tgt *t = NULL;
	uint32_t first = 0;
	int started = 0;
	pid_t pid = 0;

	l->n = 0;
	if (s->nr_regions > l->cap) {
		const char **v = realloc(l->v, s->nr_regions * sizeof(*v));

		if (v) {
			l->v = v;
			l->cap = s->nr_regions;
		}
	}
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct daptrace_region *reg = &s->regions[i];
		const char *label;

		/* a snapshot lists each target's regions together */
		if (!started || reg->pid != pid) {
			if (t)
				t->fresh = 0;
			started = 1;
			pid = reg->pid;
			first = i;
			t = find(ctx, pid);
			if (t)
				read_if_older(t, now, every);
		}
		label = t ? maps_label(&t->maps, reg->start, reg->end) : UNKNOWN_TARGET;
		if (i < l->cap)
			l->v[i] = label;
		if (!t || strcmp(label, "[unmapped]"))
			continue;
		if (t->fresh) {
			add_hole(t, reg);
		} else if (!is_hole(t, reg) && !t->maps.gone && now - t->maps_ns >= retry) {
			rec_tgt_read(t, now);
			/*
			 * The target's regions again under the new map, to note
			 * its holes (once: it is fresh now).  Unsigned: the
			 * loop's i++ makes it @first, and @pid stays.
			 */
			i = first - 1;
		}
	}
	if (t)
		t->fresh = 0;
	/* out of memory: rec_label() asks the maps, as the labels are still there */
	l->n = s->nr_regions <= l->cap ? s->nr_regions : 0;
	l->find = find;
	l->ctx = ctx;
}

const char *rec_label(const struct rec_labels *l, const struct daptrace_snapshot *s,
		      const struct daptrace_region *reg)
{
	size_t i = (size_t)(reg - s->regions);
	struct rec_tgt *t;

	if (i < l->n)
		return l->v[i];
	t = l->find ? l->find(l->ctx, reg->pid) : NULL;
	return t ? maps_label(&t->maps, reg->start, reg->end) : UNKNOWN_TARGET;
}

void rec_labels_free(struct rec_labels *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void rec_tgt_free(struct rec_tgt *t)
{
	maps_free(&t->maps);
}
