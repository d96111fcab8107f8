/* SPDX-License-Identifier: GPL-2.0-only */
/* daptrace policy --record: the snapshots the policy acted on, as a record. */
#ifndef DAPTRACE_POLICY_RECORD_H
#define DAPTRACE_POLICY_RECORD_H

#include <stdio.h>

#include "common/maps_rows.h"
#include "session/follow.h"
#include "policy.h"
#include "session/record_rows.h"
#include "session/session.h"

/* What the record keeps from window to window: its rows, reused. */
struct policy_rec {
	struct rec_rows rows;
	struct maps_rows maps;
};

/* The header, with the follower's targets as its #target rows. */
int policy_rec_header(FILE *f, const struct daptrace_attrs *a, const struct pol_engine *e,
		      const struct follow *fl, int64_t t0_ns);
/* A target that joined (or exec'ed), one that left: #target, #exit rows. */
int policy_rec_target(FILE *f, const struct follow_proc *p, int64_t t0_ns);
int policy_rec_exit(FILE *f, const struct follow_proc *p, int64_t t0_ns);
/*
 * A window: the engine's maps reads since the last one as #maps rows (noted
 * in its targets as written), then the regions labelled from those maps:
 * call after pol_engine_apply().
 */
int policy_rec_snapshot(FILE *f, struct policy_rec *r, const struct daptrace_snapshot *s,
			struct pol_engine *e, int64_t t0_ns);
/*
 * After the tuner set @s's quota: one row per goal,
 * "#goal,TIME_NS,SCHEME,GOAL,TARGET,CURRENT,QUOTA_BYTES" (CURRENT empty when
 * the metric could not be read).  A reader takes it for a comment.
 */
int policy_rec_tune(FILE *f, const struct pol_scheme *s, int64_t time_ns);
int policy_rec_trailer(FILE *f, const char *reason, int64_t duration_ns,
		       const struct pol_engine *e, const struct session *s);
void policy_rec_free(struct policy_rec *r);

#endif
