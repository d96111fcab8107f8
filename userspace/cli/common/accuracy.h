/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The online accuracy estimate: the module's accuracy probes (a few pages
 * per window given page-level truth, compared with their region's verdict;
 * see the #probes row in recfile.h and sysfs-docs/ probe_pages) pooled over
 * the last windows, with Wilson's 95 % score interval.
 *
 * One window holds a few dozen probes, of which only the accessed ones
 * count for recall: too few for an estimate of its own.  So the estimate
 * at a window pools it with the windows before it, the fewest that give
 * the recall ACC_DEF_MIN_ACCESSED accessed probe pages to rest on (then
 * Wilson's 95 % interval is at most +-0.05 wide, at a recall of 0.5), but
 * none that ended more than the pool span (ACC_DEF_POOL_NS) before it:
 * recall is sum tp / sum (tp + fn), precision sum tp / sum (tp + fp), over
 * the same windows.  Unobserved probes are in neither and are reported
 * apart.  With 64 probes a window and half the memory accessed, that is
 * about 19 windows (1.9 s at the default intervals): the estimate lags a
 * change by that much.
 *
 * The module's cost bound (probe_max_cpu_bp) gives a window fewer probes
 * than probe_pages where they would cost more than 5 % of its worker's CPU
 * (down to a floor that keeps this pool's interval within +-0.04: the
 * module's precision floor assumes ACC_DEF_POOL_NS): each window's count
 * is the one it carries (the #probes row's pages), and the sums weigh
 * every probe page alike, however many its window had, so a count that
 * varies biases nothing; it only makes the pool span more windows, up to
 * the 10 s.
 */
#ifndef DAPTRACE_ACCURACY_H
#define DAPTRACE_ACCURACY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "recfile.h"

#define ACC_DEF_POOL_NS		(10ULL * 1000 * 1000 * 1000)	/* 10 s */
#define ACC_DEF_MIN_ACCESSED	600
#define ACC_MAX_POOL_WINDOWS	1024
/* Below this estimated recall the CLI warns (report, top, stat). */
#define ACC_DEF_WARN_RECALL	0.8

/* @k of @n, 0 <= lo <= est <= hi <= 1; @n == 0: no estimate. */
struct acc_interval {
	uint64_t k, n;
	double est, lo, hi;
};

struct acc_estimate {
	struct acc_interval recall;
	struct acc_interval precision;
	uint64_t pages;		/* probes pooled */
	uint64_t unobserved;	/* of which unobserved */
	uint32_t windows;	/* windows pooled */
};

struct acc_window {
	uint64_t end_ns;
	struct rec_probes c;
};

struct acc_pool {
	uint64_t pool_ns;
	uint64_t min_accessed;
	uint64_t accessed;		/* sum of tp + fn held */
	struct acc_window w[ACC_MAX_POOL_WINDOWS];
	uint32_t first, nr;
};

/* Counts summed over any number of windows (a whole record). */
struct acc_total {
	uint64_t tp, fn, fp, tn, unobserved, pages;
	uint32_t windows;
};

void acc_wilson95(uint64_t k, uint64_t n, struct acc_interval *out);
void acc_total_add(struct acc_total *t, const struct rec_probes *c);
/* 0 if no window had probes (then @e is zeroed). */
int acc_total_estimate(const struct acc_total *t, struct acc_estimate *e);
void acc_pool_init(struct acc_pool *p, uint64_t pool_ns, uint64_t min_accessed);
/* A window's probes; windows come in time order. */
void acc_pool_add(struct acc_pool *p, uint64_t end_ns, const struct rec_probes *c);
/* Pooled over the windows held; 0 if none (then @e is zeroed). */
int acc_pool_estimate(const struct acc_pool *p, struct acc_estimate *e);
/*
 * "estimated recall 0.93 [0.88-0.97], precision 0.71 [0.65-0.76], 640
 * probe pages (12 unobserved) in 10 windows", or "... recall unknown (no
 * accessed probe page) ...".
 */
int acc_format(const struct acc_estimate *e, char *buf, size_t len);
/*
 * Whether to warn: the estimate's upper bound is below @threshold (the
 * regions miss accessed memory beyond doubt); writes the warning to @out
 * after @prefix ("# ", or "") and returns 1.
 */
int acc_warn(FILE *out, const char *prefix, const struct acc_estimate *e,
	     double threshold);

#endif /* DAPTRACE_ACCURACY_H */
