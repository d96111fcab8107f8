// SPDX-License-Identifier: GPL-2.0-only
/* Footprints in force and percentiles, for report wss and footprints (report_fp.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "report_fp.h"

static struct fp_last *fp_find(struct fp_now *now, pid_t pid)
{
	size_t lo = 0, hi = now->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (now->fp[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < now->nr && now->fp[lo].pid == pid)
		return &now->fp[lo];
	if (report_grow((void **)&now->fp, &now->cap, now->nr + 1, sizeof(*now->fp)))
		return NULL;
	memmove(&now->fp[lo + 1], &now->fp[lo], (now->nr - lo) * sizeof(*now->fp));
	now->nr++;
	now->fp[lo] = (struct fp_last){ .pid = pid };
	return &now->fp[lo];
}

/*
 * The window's own rows, and in a footprints=latest record every live
 * target's last one.  Targets that left are dropped.
 */
int fp_now_update(struct fp_now *now, const struct rec_snapshot *s,
		  const struct rec_info *info)
{
	const char *fps = rec_info_get(info, "footprints");
	int latest = fps && !strcmp(fps, "latest");
	size_t k = 0;

	if (!latest)
		now->nr = 0;
	for (uint32_t i = 0; i < s->nr_footprints; i++) {
		const struct rec_footprint *f = &s->footprints[i];
		struct fp_last *l = fp_find(now, f->pid);

		if (!l)
			return fail("report", "out of memory");
		l->rss = f->rss;
		l->vsz = f->vsz;
	}
	for (size_t i = 0; i < now->nr; i++) {
		const struct rec_target *t = rec_info_target(info, now->fp[i].pid);

		if (!latest || (t && t->exit_ns == REC_NO_EXIT))
			now->fp[k++] = now->fp[i];
	}
	now->nr = k;
	return 0;
}

void fp_now_free(struct fp_now *now)
{
	free(now->fp);
	memset(now, 0, sizeof(*now));
}

uint64_t report_percentile(int damo, const uint64_t *sorted, size_t n, unsigned int p)
{
	size_t rank = (n * p + 99) / 100;	/* nearest rank, 1-based */

	if (damo) {
		/* damo's float arithmetic, so p29 of 100 is its 28th index too */
		size_t idx = (size_t)((double)p / 100.0 * (double)n);

		return sorted[idx < n ? idx : n - 1];
	}
	return sorted[rank ? rank - 1 : 0];
}
