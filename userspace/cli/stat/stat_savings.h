/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * daptrace stat --savings: the savings curve (common/savings_model.h)
 * live, for the whole machine and per cgroup: every window stat reads goes
 * through the model as it comes, so each report says what reclaiming the
 * memory idle for at least each threshold would save now and would have
 * saved on average since stat started, and the refaults it would have
 * cost.  The same model as `daptrace report savings` on a record.
 *
 * Each target is an address space of the model from the first window
 * with its regions; one that exec'ed starts a new one, and one that left
 * ends when the follower forgets it (after the last windows that can hold
 * its regions): what it held reclaimed was never reused.  A target counts
 * in the cgroup it was in when it was first seen (folded to --depth).
 *
 * What stat cannot say that a record can: stat reads no /proc/PID/maps,
 * so there are no labels (no [unmapped] holes, which the resident share
 * weighs out anyway, and no --type: the kernel's special mappings, a few
 * pages a process, count as reclaimable), and after windows the reader
 * missed a region's age is taken at the aggregation interval of the
 * window that follows them.
 */
#ifndef DAPTRACE_STAT_SAVINGS_H
#define DAPTRACE_STAT_SAVINGS_H

#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "common/savings_model.h"
#include "session/record_rows.h"
#include "session/session.h"

/* stat's default thresholds: a fast reclaimer's, a minute, DAMON_RECLAIM's min_age */
#define STAT_SAV_DEFAULT	"10s,1m,2m"

struct stat_savings {
	struct sav_model *m;
	struct session *s;		/* its follower, its t0 */
	unsigned int depth;		/* cgroups folded to it */
	struct sav_stats **g;		/* per cgroup, by key as first seen */
	size_t nr_g, g_cap;
	struct rec_rows rows;		/* the window as record rows */
	uint64_t page_size;
};

/*
 * Thresholds @t_ns[0..nr_t) over the targets of @s, cgroups folded to
 * @depth; 0 or -ENOMEM.  Then set @s's hooks (stat_savings_hooks()).
 */
int stat_savings_init(struct stat_savings *sv, const uint64_t *t_ns, unsigned int nr_t,
		      struct session *s, unsigned int depth);
struct session_hooks stat_savings_hooks(struct stat_savings *sv);
/* One window read from the monitor; 0 or -ENOMEM. */
int stat_savings_window(struct stat_savings *sv, const struct daptrace_snapshot *snap);
/* The curve so far: a table (the whole and @top cgroups), or a JSON object. */
void stat_savings_text(struct stat_savings *sv, unsigned int top, FILE *out);
struct json_object *stat_savings_json(struct stat_savings *sv);
/* After session_end(), whose follower ends the spaces still open. */
void stat_savings_free(struct stat_savings *sv);

#endif
