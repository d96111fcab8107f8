// SPDX-License-Identifier: GPL-2.0-only
/* daptrace stat --savings: the savings curve, live (stat_savings.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/json_out.h"
#include "common/report_group.h"
#include "common/savings_json.h"
#include "common/units.h"
#include "stat_model.h"
#include "stat_savings.h"

/* A target's part: its space and the cgroup it counts in (follow_proc.data). */
struct stat_space {
	struct sav_space *sp;
	struct sav_stats *group;
};

int stat_savings_init(struct stat_savings *sv, const uint64_t *t_ns, unsigned int nr_t,
		      struct session *s, unsigned int depth)
{
	long ps = sysconf(_SC_PAGESIZE);

	memset(sv, 0, sizeof(*sv));
	sv->s = s;
	sv->depth = depth;
	sv->page_size = ps > 0 ? (uint64_t)ps : 4096;
	/* stat reads no maps: no labels, so no type to tell anon from file by */
	sv->m = sav_model_new(t_ns, nr_t, 0);
	return sv->m ? 0 : -ENOMEM;
}

/* The stats of cgroup @key, created on first sight. */
static struct sav_stats *group_of(struct stat_savings *sv, const char *key)
{
	for (size_t i = 0; i < sv->nr_g; i++)
		if (!strcmp(sv->g[i]->key, key))
			return sv->g[i];
	if (grow_array((void **)&sv->g, &sv->g_cap, sv->nr_g + 1, sizeof(*sv->g)))
		return NULL;
	sv->g[sv->nr_g] = sav_group_new(sv->m, key);
	return sv->g[sv->nr_g] ? sv->g[sv->nr_g++] : NULL;
}

/* @p's space is over: it exec'ed or is gone, and what it held was never reused. */
static void space_end(struct stat_savings *sv, struct follow_proc *p)
{
	struct stat_space *ss = p->data;

	if (!ss)
		return;
	sav_space_end(sv->m, ss->sp, 1);
	ss->group->nr_procs--;
	sav_model_all(sv->m)->nr_procs--;
	free(ss);
	p->data = NULL;
}

static void on_joined(void *user, struct follow_proc *p, int exec)
{
	if (exec)
		space_end(user, p);
}

static void on_forget(void *user, struct follow_proc *p)
{
	space_end(user, p);
}

struct session_hooks stat_savings_hooks(struct stat_savings *sv)
{
	/* a target that left keeps its space until forgotten: its last windows may follow */
	return (struct session_hooks){ .joined = on_joined, .forget = on_forget, .user = sv };
}

/* Region @r's space: its target's, created with the first window that has it. */
static int space_of(void *ctx, const struct rec_region *r, struct sav_space **out)
{
	struct stat_savings *sv = ctx;
	struct follow_proc *p = follow_find(&sv->s->f, r->pid);
	struct stat_space *ss;
	char buf[4096];

	if (!p)
		return 0;	/* forgotten: its space has ended */
	ss = p->data;
	if (!ss) {
		if (p->state != FP_TARGET)
			return 0;
		ss = calloc(1, sizeof(*ss));
		if (!ss)
			return -ENOMEM;
		ss->group = group_of(sv, stat_cgroup_fold(p->cgroup, sv->depth, buf, sizeof(buf)));
		ss->sp = ss->group ? sav_space_new(sv->m, ss->group) : NULL;
		if (!ss->sp) {
			free(ss);
			return -ENOMEM;
		}
		ss->group->nr_procs++;
		sav_model_all(sv->m)->nr_procs++;
		p->data = ss;
	}
	*out = ss->sp;
	return 0;
}

/*
 * After missed windows: a region's age at the interval of the window read
 * (stat keeps no window history, as a record's reader does).
 */
static uint64_t age_ns(void *ctx, const struct rec_snapshot *s, uint32_t age)
{
	(void)ctx;
	return (uint64_t)age * s->aggr_us * 1000;
}

static const char *no_label(void *ctx, const struct daptrace_region *reg)
{
	(void)ctx;
	(void)reg;
	return "";
}

int stat_savings_window(struct stat_savings *sv, const struct daptrace_snapshot *snap)
{
	struct sav_feed feed = { space_of, age_ns, NULL, sv->page_size, sv };
	struct rec_snapshot rs;

	if (rec_rows_fill(&sv->rows, &rs, snap, sv->s->t0, no_label, NULL))
		return -ENOMEM;
	return sav_model_window(sv->m, &rs, &feed);
}

/* Most saved now at the first threshold first. */
static int cmp_now(const void *a, const void *b)
{
	const struct sav_stats *x = *(const struct sav_stats *const *)a;
	const struct sav_stats *y = *(const struct sav_stats *const *)b;
	double hx = sav_held(&x->pt[0]), hy = sav_held(&y->pt[0]);

	if (hx != hy)
		return hx < hy ? 1 : -1;
	return strcmp(x->key, y->key);
}

/*
 * The cgroups to show, sorted, their knees found; their count.  @live:
 * only those with processes now; else also those whose processes are all
 * gone, with what they would have saved (a service that restarts in the
 * same cgroup goes on with its curve).
 */
static size_t shown(struct stat_savings *sv, struct sav_stats **v, int live)
{
	size_t n = 0;

	sav_model_knee(sv->m, sav_model_all(sv->m));
	for (size_t i = 0; i < sv->nr_g; i++) {
		if (live && !sv->g[i]->nr_procs)
			continue;
		sav_model_knee(sv->m, sv->g[i]);
		v[n++] = sv->g[i];
	}
	qsort(v, n, sizeof(*v), cmp_now);
	return n;
}

static void rows_text(struct stat_savings *sv, const struct sav_stats *st, FILE *out)
{
	const uint64_t *t = sav_model_t_ns(sv->m);
	char b[7][32];

	for (unsigned int k = 0; k < sav_model_nr_t(sv->m); k++) {
		const struct sav_point *p = &st->pt[k];
		double rate = sav_refault_rate(st, k), p50 = sav_reuse_pct(&p->reuse, 50);

		fprintf(out, "%-32s %9s %11s %11s %11s %11s %9.2f %9s%s\n", st->key,
			fmt_secs(t[k], b[0], 32), fmt_bytes(u64_of(sav_held(p)), b[1], 32),
			fmt_bytes(u64_of(sav_saved_mean(st, k)), b[2], 32),
			fmt_bytes(u64_of(p->reclaimed), b[3], 32),
			fmt_bytes(u64_of(p->refaulted), b[4], 32), rate / (double)sv->page_size,
			p50 < 0 ? "-" : fmt_secs(u64_of(p50), b[5], 32),
			(int)k == st->knee ? "  <- knee" : "");
	}
}

void stat_savings_text(struct stat_savings *sv, unsigned int top, FILE *out)
{
	struct sav_stats **v = calloc(sv->nr_g + 1, sizeof(*v));
	struct sav_stats *all = sav_model_all(sv->m);
	char line[320];
	size_t n;

	if (!v)
		return;
	n = shown(sv, v, 1);
	fprintf(out, "# savings over %.0f s: the resident memory idle for at least each "
		"threshold, held reclaimed now and on average; refaults: of it, accessed "
		"again (pages/s)\n", sav_seconds(all));
	sav_calib_text(sav_model_calib(sv->m), line, sizeof(line));
	fprintf(out, "# %s\n", line);
	fprintf(out, "%-32s %9s %11s %11s %11s %11s %9s %9s\n", "cgroup", "threshold",
		"saved_now", "saved_mean", "reclaimed", "refaulted", "pages/s", "reuse_p50");
	rows_text(sv, all, out);
	for (size_t i = 0; i < n && i < top; i++)
		rows_text(sv, v[i], out);
	if (n > top)
		fprintf(out, "# ... %zu more cgroups (--top)\n", n - top);
	free(v);
}

struct json_object *stat_savings_json(struct stat_savings *sv)
{
	struct json_object *j = json_object_new_object(), *cg = json_object_new_array();
	struct sav_stats **v = calloc(sv->nr_g + 1, sizeof(*v));
	const uint64_t *t = sav_model_t_ns(sv->m);
	unsigned int nr_t = sav_model_nr_t(sv->m);
	size_t n;

	if (!v)
		return j;
	n = shown(sv, v, 0);
	json_object_object_add(j, "page_size", json_object_new_uint64(sv->page_size));
	json_object_object_add(j, "knee_percent", json_object_new_int(SAV_KNEE_PCT));
	json_object_object_add(j, "all", sav_stats_json(sav_model_all(sv->m), t, nr_t,
							sv->page_size, 1));
	json_object_object_add(j, "calibration", sav_calib_json(sav_model_calib(sv->m)));
	for (size_t i = 0; i < n; i++) {
		struct json_object *g = sav_stats_json(v[i], t, nr_t, sv->page_size, 1);

		json_object_object_add(g, "cgroup", json_object_new_string(v[i]->key));
		json_object_array_add(cg, g);
	}
	json_object_object_add(j, "cgroups", cg);
	free(v);
	return j;
}

/* After session_end(): the follower has forgotten every target, ending its space. */
void stat_savings_free(struct stat_savings *sv)
{
	for (size_t i = 0; i < sv->nr_g; i++)
		sav_group_free(sv->m, sv->g[i]);
	free(sv->g);
	sav_model_free(sv->m);
	rec_rows_free(&sv->rows);
	memset(sv, 0, sizeof(*sv));
}
