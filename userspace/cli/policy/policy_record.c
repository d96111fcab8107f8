// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace policy --record FILE: the snapshots the policy acted on, as a
 * record file (the same format as `daptrace record`).  The policy is the
 * monitor's only reader, so recording from it loses nothing that the
 * policy did not also miss, and the trailer says how many that was.
 */
#include <csv.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/recfile.h"
#include "policy_record.h"

int policy_rec_header(FILE *f, const struct daptrace_attrs *a, const struct pol_engine *e,
		      const struct follow *fl, int64_t t0_ns)
{
	struct rec_kv kv[16 + POL_MAX_SCHEMES * (1 + POL_MAX_GOALS)];
	char key[POL_MAX_SCHEMES][24], gkey[POL_MAX_SCHEMES][POL_MAX_GOALS][32];
	int n = 0, err;

	rec_kv_add_run(kv, &n, a, t0_ns);
	for (int i = 0; i < e->nr_schemes; i++) {
		snprintf(key[i], sizeof(key[i]), "scheme%d", i);
		rec_kv_add(kv, &n, key[i], "%s", e->s[i].name);
		/* with goals, what they were: the #goal rows name them so */
		for (int k = 0; k < e->s[i].nr_goals; k++) {
			snprintf(gkey[i][k], sizeof(gkey[i][k]), "scheme%d_goal%d", i, k + 1);
			rec_kv_add(kv, &n, gkey[i][k], "%s", e->s[i].goals[k].spec);
		}
	}
	err = rec_write_follow_header(f, kv, n, fl, t0_ns);
	rec_kv_free(kv, n);
	return err;
}

int policy_rec_target(FILE *f, const struct follow_proc *p, int64_t t0_ns)
{
	return rec_write_follow_target(f, p, t0_ns);
}

int policy_rec_exit(FILE *f, const struct follow_proc *p, int64_t t0_ns)
{
	return rec_write_exit(f, p->pid, rec_rel_ns(p->left_ns, t0_ns), !p->exited);
}

/* The engine re-reads a target's maps when it needs to: its labels are current. */
static const char *label_of(void *ctx, const struct daptrace_region *reg)
{
	const struct pol_engine *e = ctx;

	for (int t = 0; t < e->nr_targets; t++)
		if (e->t[t].pid == reg->pid)
			return maps_label(&e->t[t].maps, reg->start, reg->end);
	return "[unknown target]";
}

/*
 * The maps the engine read since the last window, as the recorder writes
 * them (maps_rows.h).  Short of memory, a target's go with a later window.
 */
static void maps_rows(struct policy_rec *r, struct rec_snapshot *rs, struct pol_engine *e,
		      int64_t t0_ns)
{
	maps_rows_reset(&r->maps);
	for (int i = 0; i < e->nr_targets; i++) {
		struct pol_target *t = &e->t[i];

		maps_rows_add(&r->maps, &t->maps, rec_rel_ns(t->maps_ns, t0_ns), &t->rec_maps);
	}
	maps_rows_put(&r->maps, rs);
}

int policy_rec_snapshot(FILE *f, struct policy_rec *r, const struct daptrace_snapshot *s,
			struct pol_engine *e, int64_t t0_ns)
{
	struct rec_snapshot rs;
	int err = rec_rows_fill(&r->rows, &rs, s, t0_ns, label_of, (void *)e);

	if (err)
		return err;
	maps_rows(r, &rs, e, t0_ns);
	return rec_write_snapshot(f, &rs);
}

int policy_rec_tune(FILE *f, const struct pol_scheme *s, int64_t time_ns)
{
	for (int k = 0; k < s->nr_goals; k++) {
		const struct pol_goal *g = &s->goals[k];

		fprintf(f, "#goal,%" PRId64 ",", time_ns);
		csv_fwrite(f, s->name, strlen(s->name));
		fputc(',', f);
		csv_fwrite(f, g->spec, strlen(g->spec));
		fprintf(f, ",%.17g,", g->target);
		if (g->nr_reads && !g->misses)
			fprintf(f, "%.17g", g->current);
		fprintf(f, ",%" PRIu64 "\n", s->quota_eff);
	}
	return ferror(f) ? -1 : 0;
}

_Static_assert(POL_REGRET_WINDOWS <= REC_REGRET_WINDOWS, "a #regret row holds the windows");

/* The regret counters as they stand at the end (recfile.h, #regret). */
static int write_regret(FILE *f, const struct pol_engine *e)
{
	for (int i = 0; i < e->nr_regret; i++) {
		const struct pol_regret *g = &e->regret[i];
		const struct pol_scheme *s = &e->s[g->scheme];
		struct rec_regret r = {
			.scheme = (uint32_t)g->scheme,
			.name = (char *)s->name,
			.method = (char *)pol_regret_how_name(pol_regret_how_of(s->action)),
			.cgroup = g->cgroup,
			.acted = g->acted,
			.unknown_calls = g->unknown_calls,
			.nr_windows = POL_REGRET_WINDOWS,
		};
		int err;

		for (int w = 0; w < POL_REGRET_WINDOWS; w++) {
			r.w[w].us = pol_regret_win_us[w];
			r.w[w].checked = g->checked[w];
			r.w[w].back = g->back[w];
			r.w[w].unknown = g->unknown[w];
		}
		err = rec_write_regret(f, &r);
		if (err)
			return err;
	}
	return 0;
}

int policy_rec_trailer(FILE *f, const char *reason, int64_t duration_ns,
		       const struct pol_engine *e, const struct session *s)
{
	struct rec_kv kv[4 + SESSION_FOLLOW_KV];
	int n = 0, err;

	err = write_regret(f, e);
	if (err)
		return err;

	rec_kv_add(kv, &n, "reason", "%s", reason ? reason : "error");
	rec_kv_add(kv, &n, "duration_ns", "%" PRId64, duration_ns);
	rec_kv_add(kv, &n, "snapshots", "%" PRIu64, e->nr_snapshots);
	rec_kv_add(kv, &n, "missed", "%" PRIu64, e->nr_missed);
	session_follow_kv(s, kv, &n);
	err = rec_write_trailer(f, kv, n);
	rec_kv_free(kv, n);
	return err;
}

void policy_rec_free(struct policy_rec *r)
{
	rec_rows_free(&r->rows);
	maps_rows_free(&r->maps);
}
