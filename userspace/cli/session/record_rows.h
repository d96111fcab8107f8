/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What `daptrace record` and `daptrace policy --record` write alike: the
 * monitor's run as header keys and its snapshots as record rows.
 */
#ifndef DAPTRACE_RECORD_ROWS_H
#define DAPTRACE_RECORD_ROWS_H

#include <stdint.h>

#include "daptrace.h"
#include "follow.h"
#include "common/recfile.h"

void rec_kv_add(struct rec_kv *kv, int *n, const char *k, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void rec_kv_free(struct rec_kv *kv, int n);
/* Version, host, start time, t0 (@t0_ns) and the attributes: 11 keys at most. */
void rec_kv_add_run(struct rec_kv *kv, int *n, const struct daptrace_attrs *a, int64_t t0_ns);

struct rec_rows {
	struct rec_region *rows;
	uint32_t cap;
};

/*
 * @s as a record snapshot, times relative to @t0_ns, each region labelled
 * by @label (which must stay valid until written).  Returns 0 or -ENOMEM.
 */
int rec_rows_fill(struct rec_rows *b, struct rec_snapshot *rs,
		  const struct daptrace_snapshot *s, int64_t t0_ns,
		  const char *(*label)(void *ctx, const struct daptrace_region *reg), void *ctx);
void rec_rows_free(struct rec_rows *b);

/* ns from @t0_ns to @t (CLOCK_MONOTONIC), 0 if before. */
uint64_t rec_rel_ns(int64_t t, int64_t t0_ns);
/* The header with the follower's targets as its #target rows. */
int rec_write_follow_header(FILE *f, const struct rec_kv *meta, int nr_meta,
			    const struct follow *fl, int64_t t0_ns);
/* The #target row of a process that joined or exec'ed. */
int rec_write_follow_target(FILE *f, const struct follow_proc *p, int64_t t0_ns);

#endif
