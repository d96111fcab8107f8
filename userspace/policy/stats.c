// SPDX-License-Identifier: GPL-2.0-only
/* The schemes' stats for machines: CSV (libcsv) and JSON (json-c). */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <csv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"

#define STAT_FIELDS(X)						\
	X(nr_tried) X(sz_tried) X(nr_applied) X(sz_applied)	\
	X(nr_quota_skip) X(sz_quota_skip)			\
	X(nr_identity_skip) X(sz_identity_skip)			\
	X(nr_unobserved_skip) X(sz_unobserved_skip)		\
	X(qt_exceeds) X(wmark_inactive)

/*
 * Quota and goals: the effective quota (empty without a quota), the tuner's
 * counters, and POL_MAX_GOALS groups of goal columns (empty when unused).
 */
static void csv_goal_header(FILE *f)
{
	fputs(",quota_bytes,tune_windows,tune_at_max,tune_paused", f);
	for (int k = 1; k <= POL_MAX_GOALS; k++)
		fprintf(f, ",goal%d,goal%d_unit,goal%d_target,goal%d_current,goal%d_errors",
			k, k, k, k, k);
}

static void csv_goal_row(FILE *f, const struct pol_scheme *s)
{
	if (s->quota_sz)
		fprintf(f, ",%" PRIu64, s->quota_eff);
	else
		fputc(',', f);
	fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, s->tune.windows, s->tune.at_max,
		s->tune.paused);
	for (int k = 0; k < POL_MAX_GOALS; k++) {
		const struct pol_goal *g = &s->goals[k];

		if (k >= s->nr_goals) {
			fputs(",,,,,", f);
			continue;
		}
		fputc(',', f);
		csv_fwrite(f, g->spec, strlen(g->spec));
		fprintf(f, ",%s,%.17g,", pol_goal_unit(g->metric), g->target);
		if (g->nr_reads)
			fprintf(f, "%.17g", g->current);
		fprintf(f, ",%" PRIu64, g->nr_errors);
	}
}

void pol_regret_sum(const struct pol_engine *e, int si, struct pol_regret *sum)
{
	memset(sum, 0, sizeof(*sum));
	sum->scheme = si;
	for (int i = 0; i < e->nr_regret; i++) {
		const struct pol_regret *r = &e->regret[i];

		if (r->scheme != si)
			continue;
		sum->acted += r->acted;
		sum->unknown_calls += r->unknown_calls;
		for (int w = 0; w < POL_REGRET_WINDOWS; w++) {
			sum->checked[w] += r->checked[w];
			sum->back[w] += r->back[w];
			sum->unknown[w] += r->unknown[w];
		}
	}
}

/* The regret of every cgroup summed (the JSON has them apart). */
static void csv_regret_row(FILE *f, const struct pol_engine *e, int si)
{
	struct pol_regret sum;

	pol_regret_sum(e, si, &sum);
	fprintf(f, ",%" PRIu64, sum.acted);
	for (int w = 0; w < POL_REGRET_WINDOWS; w++)
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, sum.checked[w], sum.back[w],
			sum.unknown[w]);
}

int pol_stats_write_csv(FILE *f, const struct pol_engine *e)
{
	fputs("scheme,action,node", f);
#define X(n) fputs("," #n, f);
	STAT_FIELDS(X)
#undef X
	for (int k = 0; k < POL_NR_ERRS; k++)
		fprintf(f, ",err_%s", pol_err_name(k));
	csv_goal_header(f);
	fputs(",regret_acted", f);
	for (int w = 0; w < POL_REGRET_WINDOWS; w++)
		fprintf(f, ",regret_checked_%s,regret_back_%s,regret_unknown_%s",
			pol_regret_win_name(w), pol_regret_win_name(w), pol_regret_win_name(w));
	fputc('\n', f);
	for (int i = 0; i < e->nr_schemes; i++) {
		const struct pol_scheme *s = &e->s[i];

		csv_fwrite(f, s->name, strlen(s->name));
		fprintf(f, ",%s,%d", pol_action_name(s->action), s->node);
#define X(n) fprintf(f, ",%" PRIu64, (uint64_t)s->st.n);
		STAT_FIELDS(X)
#undef X
		for (int k = 0; k < POL_NR_ERRS; k++)
			fprintf(f, ",%" PRIu64, s->st.errs[k]);
		csv_goal_row(f, s);
		csv_regret_row(f, e, i);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

static struct json_object *json_goals(const struct pol_scheme *s)
{
	struct json_object *arr = json_object_new_array();

	for (int k = 0; k < s->nr_goals; k++) {
		const struct pol_goal *g = &s->goals[k];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "goal", json_object_new_string(g->spec));
		json_object_object_add(o, "metric",
				       json_object_new_string(pol_goal_metric_name(g->metric)));
		json_object_object_add(o, "source", g->path ? json_object_new_string(g->path) :
				       NULL);
		json_object_object_add(o, "unit", json_object_new_string(pol_goal_unit(g->metric)));
		json_object_object_add(o, "target", json_object_new_double(g->target));
		json_object_object_add(o, "current", g->nr_reads ?
				       json_object_new_double(g->current) : NULL);
		json_object_object_add(o, "reads", json_object_new_uint64(g->nr_reads));
		json_object_object_add(o, "errors", json_object_new_uint64(g->nr_errors));
		json_object_object_add(o, "last_error", g->nr_errors ?
				       json_object_new_string(strerror(g->last_err)) : NULL);
		json_object_array_add(arr, o);
	}
	return arr;
}

static void json_quota(struct json_object *o, const struct pol_scheme *s)
{
	struct json_object *t = json_object_new_object();

	json_object_object_add(o, "quota_bytes", s->quota_sz ?
			       json_object_new_uint64(s->quota_eff) : NULL);
	json_object_object_add(o, "quota_max_bytes", s->quota_sz ?
			       json_object_new_uint64(s->quota_sz) : NULL);
	json_object_object_add(o, "quota_interval_us", s->quota_sz ?
			       json_object_new_uint64(s->quota_us) : NULL);
	json_object_object_add(t, "windows", json_object_new_uint64(s->tune.windows));
	json_object_object_add(t, "at_max", json_object_new_uint64(s->tune.at_max));
	json_object_object_add(t, "paused", json_object_new_uint64(s->tune.paused));
	json_object_object_add(o, "tune", t);
	json_object_object_add(o, "goals", json_goals(s));
}

/*
 * "regret_method" and "regret": [{cgroup, acted_bytes, unknown_calls,
 * windows: [{window, window_us, checked_bytes, back_bytes, unknown_bytes,
 * pending_bytes}]}], one element per cgroup the scheme acted in.
 */
static void json_regret(struct json_object *o, const struct pol_engine *e, int si)
{
	struct json_object *arr = json_object_new_array();

	json_object_object_add(o, "regret_method", json_object_new_string(
		pol_regret_how_name(pol_regret_how_of(e->s[si].action))));
	for (int i = 0; i < e->nr_regret; i++) {
		const struct pol_regret *r = &e->regret[i];
		struct json_object *c, *ws;

		if (r->scheme != si)
			continue;
		c = json_object_new_object();
		ws = json_object_new_array();
		json_object_object_add(c, "cgroup", json_object_new_string(r->cgroup));
		json_object_object_add(c, "acted_bytes", json_object_new_uint64(r->acted));
		json_object_object_add(c, "unknown_calls", json_object_new_uint64(r->unknown_calls));
		for (int w = 0; w < POL_REGRET_WINDOWS; w++) {
			struct json_object *x = json_object_new_object();

			json_object_object_add(x, "window",
					       json_object_new_string(pol_regret_win_name(w)));
			json_object_object_add(x, "window_us",
					       json_object_new_uint64(pol_regret_win_us[w]));
			json_object_object_add(x, "checked_bytes",
					       json_object_new_uint64(r->checked[w]));
			json_object_object_add(x, "back_bytes", json_object_new_uint64(r->back[w]));
			json_object_object_add(x, "unknown_bytes",
					       json_object_new_uint64(r->unknown[w]));
			json_object_object_add(x, "pending_bytes", json_object_new_uint64(
				r->acted - r->checked[w] - r->unknown[w]));
			json_object_array_add(ws, x);
		}
		json_object_object_add(c, "windows", ws);
		json_object_array_add(arr, c);
	}
	json_object_object_add(o, "regret", arr);
}

int pol_stats_write_json(FILE *f, const struct pol_engine *e, double elapsed_s)
{
	struct json_object *root = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	int ret = 0;

	if (!root || !arr) {
		json_object_put(root);
		json_object_put(arr);
		return -ENOMEM;
	}
	json_object_object_add(root, "elapsed_s", json_object_new_double(elapsed_s));
	json_object_object_add(root, "snapshots", json_object_new_uint64(e->nr_snapshots));
	json_object_object_add(root, "snapshots_missed", json_object_new_uint64(e->nr_missed));
	for (int i = 0; i < e->nr_schemes; i++) {
		const struct pol_scheme *s = &e->s[i];
		struct json_object *o = json_object_new_object();
		struct json_object *errs = json_object_new_object();

		json_object_object_add(o, "scheme", json_object_new_string(s->name));
		json_object_object_add(o, "action", json_object_new_string(pol_action_name(s->action)));
		json_object_object_add(o, "node", json_object_new_int(s->node));
#define X(n) json_object_object_add(o, #n, json_object_new_uint64(s->st.n));
		STAT_FIELDS(X)
#undef X
		for (int k = 0; k < POL_NR_ERRS; k++)
			json_object_object_add(errs, pol_err_name(k),
					       json_object_new_uint64(s->st.errs[k]));
		json_object_object_add(o, "errors", errs);
		json_quota(o, s);
		json_regret(o, e, i);
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "schemes", arr);
	if (fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY)) < 0)
		ret = -EIO;
	json_object_put(root);
	return ret;
}

int pol_stats_save(const char *path, const struct pol_engine *e, double elapsed_s,
		   int json)
{
	size_t len = strlen(path) + 8;
	char *tmp = malloc(len);
	FILE *f;
	int ret;

	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, len, "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f) {
		ret = -errno;
		free(tmp);
		return ret;
	}
	ret = json ? pol_stats_write_json(f, e, elapsed_s) : pol_stats_write_csv(f, e);
	if (fclose(f) && !ret)
		ret = -errno;
	/* readers see the old or the new file, never half of one */
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret;
}
