// SPDX-License-Identifier: GPL-2.0-only
/*
 * report savings: a record through the savings model
 * (common/savings_model.h), each target of the record an address space of
 * it, grouped by --by; report_savings_out.c prints the curve.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "report_mapped.h"
#include "common/report_group.h"
#include "report_savings.h"
#include "common/units.h"

#define CMD "report"

/* Without --thresholds: from a second up to ten minutes. */
static const uint64_t default_t_ns[] = {
	1000000000ULL, 2000000000ULL, 5000000000ULL, 10000000000ULL, 30000000000ULL,
	60000000000ULL, 120000000000ULL, 300000000000ULL, 600000000000ULL,
};

/* A target of the record (an entry of info->targets): one address space. */
struct target {
	struct sav_space *sp;		/* NULL: not met yet, or ended */
	int ended;			/* its process is gone: its space is over */
};

struct savings {
	const struct report_opts *o;
	double speed;			/* --speed, 1 if not given */
	const struct rec_snapshot *cur;	/* the window fed, as recorded */
	const struct rec_info *info;	/* the record's, as read so far */
	struct sav_model *m;
	struct target *t;		/* per info->targets index */
	size_t t_cap;
	uint64_t nr_spaces;		/* met, in all */
	struct rgroups groups;
	struct sav_stats **gst;		/* per groups.g[] index */
	size_t gst_cap;
	struct mapped_now maps;		/* the targets' maps in force */
};

/* The stats of @pid's group (--by), created on first sight. */
static struct sav_stats *group_of(struct savings *sv, pid_t pid)
{
	struct rgroup *g = rgroups_of(&sv->groups, (enum report_by)sv->o->by, sv->info, pid);
	size_t i, old = sv->gst_cap;

	if (!g)
		return NULL;
	i = (size_t)(g - sv->groups.g);
	if (report_grow((void **)&sv->gst, &sv->gst_cap, i + 1, sizeof(*sv->gst)))
		return NULL;
	memset(sv->gst + old, 0, (sv->gst_cap - old) * sizeof(*sv->gst));
	if (!sv->gst[i])
		sv->gst[i] = sav_group_new(sv->m, g->key);
	return sv->gst[i];
}

/*
 * The space of region @r: its pid's latest #target row's (the reader has
 * checked that one came first), created on first sight; none for another
 * pid than --pid's, or for a target already gone.
 */
static int space_of(void *ctx, const struct rec_region *r, struct sav_space **out)
{
	struct savings *sv = ctx;
	const struct rec_target *rt = rec_info_target(sv->info, r->pid);
	struct sav_stats *group = NULL;
	size_t ti, old = sv->t_cap;
	struct target *t;

	if (!rt || (sv->o->pid && r->pid != sv->o->pid))
		return 0;
	ti = (size_t)(rt - sv->info->targets);
	if (report_grow((void **)&sv->t, &sv->t_cap, ti + 1, sizeof(*sv->t)))
		return -ENOMEM;
	memset(sv->t + old, 0, (sv->t_cap - old) * sizeof(*sv->t));
	t = &sv->t[ti];
	if (!t->sp && !t->ended) {
		if (sv->o->by && !(group = group_of(sv, r->pid)))
			return -ENOMEM;
		t->sp = sav_space_new(sv->m, group);
		if (!t->sp)
			return -ENOMEM;
		sv->nr_spaces++;
	}
	*out = t->sp;
	return 0;
}

/*
 * --speed X: the record's time, as the target would spend it at X times its
 * speed there.  Every time the model reads goes through this (the windows'
 * bounds, the regions' ages): the same accesses, 1/X times as far apart, so
 * idle times, reuse times and the seconds the rates divide by all scale
 * alike, and a threshold T meets what the record shows idle for T x X.
 */
static uint64_t at_speed(const struct savings *sv, uint64_t ns)
{
	return sv->speed == 1 ? ns : (uint64_t)llround((double)ns / sv->speed);
}

/* The model is fed a copy at speed: the age is of the window as recorded. */
static uint64_t age_ns(void *ctx, const struct rec_snapshot *s, uint32_t age)
{
	const struct savings *sv = ctx;

	(void)s;
	return at_speed(sv, report_age_ns(sv->o, sv->cur, age));
}

/* The map in force of @r's process (the reader keeps sv->maps up to the window). */
static int map_of(void *ctx, const struct rec_region *r, const struct rec_range **ranges,
		  uint32_t *nr)
{
	const struct savings *sv = ctx;

	return mapped_ranges_now(&sv->maps, sv->info, r->pid, ranges, nr);
}

/* Whether target @ti's process is gone: it left, or its pid names another one (exec). */
static int target_gone(const struct savings *sv, size_t ti)
{
	const struct rec_target *t = &sv->info->targets[ti];

	return t->exit_ns != REC_NO_EXIT || rec_info_target(sv->info, t->pid) != t;
}

/* The record's page size for pages/s and huge pages: its #meta, else 4 KiB. */
static uint64_t page_size(const struct rec_info *info)
{
	const char *v = rec_info_get(info, "page_size");
	uint64_t ps;

	return v && !parse_u64_dec(v, &ps) && ps ? ps : 4096;
}

static int on_window(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct savings *sv = arg;
	struct rec_snapshot w = *s;
	struct sav_feed feed = { space_of, age_ns, map_of, page_size(info), sv };

	sv->info = info;
	sv->cur = s;
	w.start_ns = at_speed(sv, s->start_ns);
	w.end_ns = at_speed(sv, s->end_ns);
	/* the model and space_of() fail only for want of memory */
	if (sav_model_window(sv->m, &w, &feed))
		return fail(CMD, "out of memory");
	/*
	 * Spaces whose process is gone: what they hold was never reused.
	 * Region rows of the window in which a target left may follow its
	 * #exit row: this one's are in.
	 */
	for (size_t i = 0; i < sv->t_cap; i++) {
		if (sv->t[i].sp && target_gone(sv, i)) {
			sav_space_end(sv->m, sv->t[i].sp, 1);
			sv->t[i].sp = NULL;
			sv->t[i].ended = 1;
		}
	}
	return 0;
}

static int cmp_stats(const void *a, const void *b)
{
	const struct sav_stats *x = *(const struct sav_stats *const *)a;
	const struct sav_stats *y = *(const struct sav_stats *const *)b;
	double mx = sav_saved_mean(x, 0), my = sav_saved_mean(y, 0);

	if (mx != my)
		return mx < my ? 1 : -1;
	return strcmp(x->key, y->key);
}

static void savings_free(struct savings *sv)
{
	for (size_t i = 0; i < sv->t_cap; i++)
		sav_space_end(sv->m, sv->t[i].sp, 0);
	for (size_t i = 0; i < sv->gst_cap; i++)
		sav_group_free(sv->m, sv->gst[i]);
	sav_model_free(sv->m);
	free(sv->t);
	free(sv->gst);
	rgroups_free(&sv->groups);
	mapped_now_free(&sv->maps);
}

int report_savings(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct savings sv = { .o = o, .speed = o->sav_speed > 0 ? o->sav_speed : 1 };
	struct sav_result res = { .o = o };
	struct rec_info info;
	struct sav_stats *all;
	int ret;

	memset(&info, 0, sizeof(info));
	sv.m = o->nr_thresholds ?
	       sav_model_new(o->thresholds_ns, o->nr_thresholds, o->sav_type) :
	       sav_model_new(default_t_ns, sizeof(default_t_ns) / sizeof(default_t_ns[0]),
			     o->sav_type);
	if (!sv.m) {
		ret = fail(CMD, "out of memory");
		goto out;
	}
	ret = report_read_mapped(o, on_window, &sv, &info, &sv.maps);
	if (ret)
		goto out;
	res.all = all = sav_model_all(sv.m);
	if (!all->windows) {
		ret = report_nothing(o, "regions");
		goto out;
	}
	/* what is still reclaimed: freed if its process is gone, else its future is unknown */
	sv.info = &info;
	for (size_t i = 0; i < sv.t_cap; i++) {
		sav_space_end(sv.m, sv.t[i].sp, sv.t[i].sp && target_gone(&sv, i));
		sv.t[i].sp = NULL;
	}
	all->nr_procs = sv.nr_spaces;
	sav_model_knee(sv.m, all);
	res.t_ns = sav_model_t_ns(sv.m);
	res.nr_t = sav_model_nr_t(sv.m);
	res.page_size = page_size(&info);
	res.speed = sv.speed;
	res.calib = sav_model_calib(sv.m);
	res.groups = calloc(sv.groups.n ? sv.groups.n : 1, sizeof(*res.groups));
	if (!res.groups) {
		ret = fail(CMD, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < sv.groups.n && i < sv.gst_cap; i++) {
		if (!sv.gst[i])
			continue;
		sv.gst[i]->nr_procs = sv.groups.g[i].nr_procs;
		sav_model_knee(sv.m, sv.gst[i]);
		res.groups[res.nr_groups++] = sv.gst[i];
	}
	qsort(res.groups, res.nr_groups, sizeof(*res.groups), cmp_stats);
	if (o->plot)
		sav_print_plot(&res, out, tics);
	else if (o->json)
		sav_print_json(&res, out);
	else
		sav_print_text(&res, out);
out:
	free(res.groups);
	if (sv.m)
		savings_free(&sv);
	rec_info_free(&info);
	return ret;
}
