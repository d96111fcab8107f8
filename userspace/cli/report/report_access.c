// SPDX-License-Identifier: GPL-2.0-only
/*
 * report access: one snapshot's regions queried by access pattern, as damo
 * report access does: regions whose size, access frequency and age fall in
 * the given ranges (--size, --freq, --age), sorted (--sort), then the
 * distribution of the matched bytes: recency (how long each byte has been
 * idle) and temperature percentiles, and the cold tail, the bytes idle for
 * at least each of a series of times: what sizing a reclaim scheme needs
 * ("regions of at least 1 MiB, idle for 10 s or more: how many bytes?").
 *
 * Definitions follow damo's, so its users read the same numbers:
 * - idle time (recency) of a region: 0 if accessed in the window, else its
 *   age plus the window (it was not accessed in this window either);
 * - temperature: size x W_size + frequency % x W_freq + age in us x W_age,
 *   negated for a region not accessed in the window (weights 0, 100, 100
 *   by default, --temperature-weights).
 * Memory that cannot be observed never matches: it is counted apart; holes
 * between mappings are not memory and left out: the bytes counted of a
 * region are those inside its target's mappings (the record's #maps rows,
 * report_mapped.h), while its size (--size, the listing, the temperature)
 * is the region's.  Without the map of a target its regions go by their
 * label ("[unmapped]" ones left out, the others counted whole), said so.
 * A region of unknown age (imported from a source without ages) matches no
 * --age range but the whole one; its idle time (unless it was accessed in
 * the window) and its temperature (unless the age weighs 0) are unknown,
 * so it is left out of those distributions, and the bytes are said.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "common/json_out.h"
#include "report.h"
#include "report_mapped.h"
#include "common/report_group.h"
#include "report_pick.h"
#include "common/units.h"

static const unsigned int percentiles[] = { 0, 1, 25, 50, 75, 99, 100 };
#define NR_PCT	(sizeof(percentiles) / sizeof(percentiles[0]))

struct match {
	const struct picked_region *p;
	uint64_t idle_ns;
	double temp;
	int idle_known, temp_known;
};

/* Memory of the snapshot (observed: but the holes and what is not observable) */
struct totals {
	uint64_t matched, observed, unobs;
	uint64_t age_unknown, matched_age_unknown;	/* observed, matched of unknown age */
	uint64_t mapping_unknown;			/* observed, counted by the label */
};

/* The matched bytes' distributions, of those whose value is known. */
struct dist {
	double rec[NR_PCT], temp[NR_PCT];	/* idle s, temperature by percentile */
	size_t n_idle, n_temp;			/* matches of known idle time, temperature */
	uint64_t idle_bytes;			/* their bytes (of known idle time) */
	double steps[32];			/* cold tail: idle for at least steps[k] s */
	uint64_t tail[32];			/* bytes idle that long */
	size_t nr_steps;
};

static uint64_t bytes_of(const struct match *m)
{
	return m->p->r.end - m->p->r.start;
}

/* Its memory: the region's bytes inside its target's mappings. */
static uint64_t mem_of(const struct match *m)
{
	return m->p->mem;
}

static double temperature(const struct report_opts *o, const struct picked_region *p)
{
	double t = (double)(p->r.end - p->r.start) * o->temp_w[0] + p->freq * o->temp_w[1] +
		   (double)p->age_ns / 1e3 * o->temp_w[2];

	return p->r.nr_accesses ? t : -t;
}

static int matches(const struct report_opts *o, const struct match *m)
{
	const struct access_pattern *ap = &o->pattern;
	uint64_t size = bytes_of(m);

	/* an unknown age is in no range but the whole one */
	if (m->p->r.age_unknown && (ap->age_min_ns || ap->age_max_ns != UINT64_MAX))
		return 0;
	return size >= ap->size_min && size <= ap->size_max &&
	       m->p->freq >= ap->freq_min && m->p->freq <= ap->freq_max &&
	       (m->p->r.age_unknown ||
		(m->p->age_ns >= ap->age_min_ns && m->p->age_ns <= ap->age_max_ns));
}

static int cmp_key(const struct match *x, const struct match *y, enum access_sort key)
{
	double a, b;

	switch (key) {
	case SORT_SIZE:
		a = (double)bytes_of(x), b = (double)bytes_of(y);
		break;
	case SORT_FREQ:
		a = x->p->freq, b = y->p->freq;
		break;
	case SORT_AGE:
		a = (double)x->p->age_ns, b = (double)y->p->age_ns;
		break;
	case SORT_TEMPERATURE:
		a = x->temp, b = y->temp;
		break;
	default:
		a = (double)x->p->r.start, b = (double)y->p->r.start;
		if (a == b)
			a = x->p->r.pid, b = y->p->r.pid;
		break;
	}
	return a < b ? -1 : a > b;
}

static int cmp_match(const void *pa, const void *pb, void *arg)
{
	const struct report_opts *o = arg;
	const struct match *x = pa, *y = pb;

	for (int i = 0; i < o->nr_sort; i++) {
		int c;

		/* unknown ages and temperatures last, either way */
		if (o->sort[i] == SORT_AGE && x->p->r.age_unknown != y->p->r.age_unknown)
			return x->p->r.age_unknown ? 1 : -1;
		if (o->sort[i] == SORT_TEMPERATURE && x->temp_known != y->temp_known)
			return x->temp_known ? -1 : 1;
		c = cmp_key(x, y, o->sort[i]);

		if (c)
			return o->sort_desc[i] ? -c : c;
	}
	return cmp_key(x, y, SORT_ADDRESS);
}

static int by_idle(const void *pa, const void *pb)
{
	const struct match *x = pa, *y = pb;

	if (x->idle_known != y->idle_known)
		return x->idle_known ? -1 : 1;
	return x->idle_ns < y->idle_ns ? -1 : x->idle_ns > y->idle_ns;
}

static int by_temperature(const void *pa, const void *pb)
{
	const struct match *x = pa, *y = pb;

	if (x->temp_known != y->temp_known)
		return x->temp_known ? -1 : 1;
	return x->temp < y->temp ? -1 : x->temp > y->temp;
}

/*
 * The idle time (or temperature) at each percentile of the first @n
 * matches' bytes (those whose value is known: the sort puts them first),
 * least first, as damo counts them: the value of the region in which the
 * bytes reach the percentile.
 */
static void byte_percentiles(const struct match *m, size_t n, int idle, double *out)
{
	uint64_t total = 0, sum = 0;
	size_t i = 0;

	for (size_t k = 0; k < n; k++)
		total += mem_of(&m[k]);
	for (unsigned int k = 0; k < NR_PCT; k++) {
		while (i + 1 < n && (double)(sum + mem_of(&m[i])) * 100 <
		       (double)percentiles[k] * (double)total)
			sum += mem_of(&m[i++]);
		out[k] = n ? (idle ? (double)m[i].idle_ns / 1e9 : m[i].temp) : 0;
	}
}

/* 1, 2, 5 x 10^k seconds from the shortest window up to the longest idle time */
static size_t tail_steps(double from_s, double to_s, double *steps, size_t max)
{
	double p = pow(10, floor(log10(from_s > 0 ? from_s : 1e-3)));
	size_t n = 0;

	for (int m = 0; n < max; m = (m + 1) % 3) {
		double v = p * (m == 0 ? 1 : m == 1 ? 2 : 5);

		if (m == 2)
			p *= 10;
		if (v < from_s * 0.999)
			continue;
		steps[n++] = v;
		if (v >= to_s)
			break;
	}
	return n;
}

/* Percentiles and the cold tail of the @n matches (reorders @m). */
static void distributions(struct match *m, size_t n, struct dist *d)
{
	double max_idle = 0;

	memset(d, 0, sizeof(*d));
	if (!n)
		return;
	qsort(m, n, sizeof(*m), by_temperature);
	while (d->n_temp < n && m[d->n_temp].temp_known)
		d->n_temp++;
	byte_percentiles(m, d->n_temp, 0, d->temp);
	qsort(m, n, sizeof(*m), by_idle);
	while (d->n_idle < n && m[d->n_idle].idle_known) {
		d->idle_bytes += mem_of(&m[d->n_idle]);
		max_idle = (double)m[d->n_idle].idle_ns / 1e9;
		d->n_idle++;
	}
	byte_percentiles(m, d->n_idle, 1, d->rec);
	if (!d->n_idle)
		return;
	d->nr_steps = tail_steps((double)m[0].p->window_ns / 1e9, max_idle, d->steps, 32);
	for (size_t k = 0; k < d->nr_steps; k++)
		for (size_t i = 0; i < d->n_idle; i++)
			d->tail[k] += (double)m[i].idle_ns / 1e9 >= d->steps[k] * 0.999 ?
				      mem_of(&m[i]) : 0;
}

/* --by, in rgroup.u[]: */
enum { A_MATCHED, A_OBSERVED, A_UNOBS, A_REGIONS, A_LAST_PID };

static int cmp_group(const void *a, const void *b)
{
	const struct rgroup *x = a, *y = b;

	if (x->u[A_MATCHED] != y->u[A_MATCHED])
		return x->u[A_MATCHED] < y->u[A_MATCHED] ? 1 : -1;
	return strcmp(x->key, y->key);
}

/*
 * --by: the snapshot's bytes per process, command name or cgroup: how
 * many match the pattern, of how many observed, and those not observable.
 */
static int tally_groups(const struct pick *p, const struct match *m, size_t n,
			struct rgroups *gs)
{
	for (uint32_t i = 0; i < p->nr; i++) {
		const struct picked_region *pr = &p->regions[i];
		struct rgroup *g = rgroups_get(gs, pr->group ? pr->group : "?");

		if (!g)
			return fail("report", "out of memory");
		if (!g->nr_procs || g->u[A_LAST_PID] != (uint64_t)pr->r.pid) {
			/* a target's regions come together in a snapshot */
			g->nr_procs++;
			g->u[A_LAST_PID] = (uint64_t)pr->r.pid;
		}
		if (pr->freq < 0)
			g->u[A_UNOBS] = u64_add_sat(g->u[A_UNOBS], pr->mem);
		else
			g->u[A_OBSERVED] = u64_add_sat(g->u[A_OBSERVED], pr->mem);
	}
	for (size_t i = 0; i < n; i++) {
		struct rgroup *g = rgroups_get(gs, m[i].p->group ? m[i].p->group : "?");

		if (!g)
			return fail("report", "out of memory");
		g->u[A_MATCHED] = u64_add_sat(g->u[A_MATCHED], mem_of(&m[i]));
		g->u[A_REGIONS]++;
	}
	/* no groups, no array: qsort(NULL, 0) is undefined */
	if (gs->n)
		qsort(gs->g, gs->n, sizeof(*gs->g), cmp_group);
	return 0;
}

static void print_groups_text(const struct report_opts *o, const struct rgroups *gs,
			      FILE *out)
{
	const char *by = report_by_name((enum report_by)o->by);
	char a[32], b[32], c[32];

	fprintf(out, "# matched bytes by %s\n", by);
	fprintf(out, "%-24s %6s %8s %11s %11s %8s %11s\n", by, "procs", "regions", "matched",
		"observed", "share_%", "not_obs");
	for (size_t i = 0; i < gs->n; i++) {
		const struct rgroup *g = &gs->g[i];

		fprintf(out, "%-24s %6" PRIu64 " %8" PRIu64 " %11s %11s %8.1f %11s\n", g->key,
			g->nr_procs, g->u[A_REGIONS], fmt_bytes(g->u[A_MATCHED], a, sizeof(a)),
			fmt_bytes(g->u[A_OBSERVED], b, sizeof(b)),
			g->u[A_OBSERVED] ? 100.0 * (double)g->u[A_MATCHED] /
					   (double)g->u[A_OBSERVED] : 0,
			fmt_bytes(g->u[A_UNOBS], c, sizeof(c)));
	}
}

static struct json_object *groups_json(const struct rgroups *gs)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < gs->n; i++) {
		const struct rgroup *g = &gs->g[i];
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "group", json_object_new_string(g->key));
		json_object_object_add(e, "processes", json_object_new_uint64(g->nr_procs));
		json_object_object_add(e, "matched_regions", json_object_new_uint64(g->u[A_REGIONS]));
		json_object_object_add(e, "matched_bytes", json_object_new_uint64(g->u[A_MATCHED]));
		json_object_object_add(e, "observed_bytes", json_object_new_uint64(g->u[A_OBSERVED]));
		json_object_object_add(e, "not_observable_bytes",
				       json_object_new_uint64(g->u[A_UNOBS]));
		json_object_array_add(arr, e);
	}
	return arr;
}

static void print_pattern(const struct report_opts *o, FILE *out)
{
	const struct access_pattern *ap = &o->pattern;
	char a[32], b[32];

	fprintf(out, "# pattern: size %s-", fmt_bytes(ap->size_min, a, sizeof(a)));
	fprintf(out, "%s, frequency %g-%g %%, age %s-", ap->size_max == UINT64_MAX ? "max" :
		fmt_bytes(ap->size_max, b, sizeof(b)), ap->freq_min, ap->freq_max,
		fmt_secs(ap->age_min_ns, a, sizeof(a)));
	fprintf(out, "%s\n", ap->age_max_ns == UINT64_MAX ? "max" :
		fmt_secs(ap->age_max_ns, b, sizeof(b)));
}

/* "12 s", or "unknown" when @known is not set */
static const char *secs_or_unknown(int known, uint64_t ns, char *buf, size_t len)
{
	return known ? fmt_secs(ns, buf, len) : "unknown";
}

static void print_text(const struct report_opts *o, const struct pick *p, struct match *m,
		       size_t n, const struct totals *t, const struct rgroups *gs, FILE *out)
{
	char sz[32], age[32], idle[32], temp[32];
	struct dist d;

	fprintf(out, "# access pattern of snapshot seq %" PRIu64 " at %.3f s in %s%s\n",
		p->seq, (double)p->end_ns / 1e9, o->input, o->pid ? " (one pid)" : "");
	print_pattern(o, out);
	fprintf(out, "# matched %zu of %u regions: %s", n, p->nr,
		fmt_bytes(t->matched, sz, sizeof(sz)));
	fprintf(out, " of %s observed (%.1f %%)", fmt_bytes(t->observed, sz, sizeof(sz)),
		t->observed ? 100.0 * (double)t->matched / (double)t->observed : 0);
	fprintf(out, "; not observable: %s\n", fmt_bytes(t->unobs, sz, sizeof(sz)));
	if (t->age_unknown)
		fprintf(out, "# age unknown (the source has none): %s observed, %s matched\n",
			fmt_bytes(t->age_unknown, sz, sizeof(sz)),
			fmt_bytes(t->matched_age_unknown, age, sizeof(age)));
	if (t->mapping_unknown)
		fprintf(out, "# mapping unknown (no maps of the target in the record): %s "
			"observed counted by the region's label, holes between mappings "
			"included\n", fmt_bytes(t->mapping_unknown, sz, sizeof(sz)));
	fprintf(out, "%-8s %-18s %-18s %-11s %-8s %-9s %-9s %-12s %s\n", "pid", "start", "end",
		"size", "freq_%", "age", "idle", "temperature", "label");
	for (size_t i = 0; i < n && i < o->top; i++) {
		snprintf(temp, sizeof(temp), m[i].temp_known ? "%.0f" : "unknown", m[i].temp);
		fprintf(out, "%-8d 0x%-16" PRIx64 " 0x%-16" PRIx64 " %-11s %-8.2f %-9s %-9s "
			"%-12s %s\n", (int)m[i].p->r.pid, m[i].p->r.start, m[i].p->r.end,
			fmt_bytes(bytes_of(&m[i]), sz, sizeof(sz)), m[i].p->freq,
			secs_or_unknown(!m[i].p->r.age_unknown, m[i].p->age_ns, age, sizeof(age)),
			secs_or_unknown(m[i].idle_known, m[i].idle_ns, idle, sizeof(idle)),
			temp, m[i].p->r.label);
	}
	if (n > o->top)
		fprintf(out, "# ... %zu more (--top)\n", n - o->top);
	if (o->by)
		print_groups_text(o, gs, out);
	if (!n)
		return;
	distributions(m, n, &d);
	fprintf(out, "# the matched bytes by percentile: idle time (recency) and temperature\n");
	if (d.n_idle < n || d.n_temp < n)
		fprintf(out, "#   (left out, as unknown: the idle time of %zu regions, the "
			"temperature of %zu)\n", n - d.n_idle, n - d.n_temp);
	for (unsigned int k = 0; k < NR_PCT; k++) {
		snprintf(temp, sizeof(temp), d.n_temp ? "%.0f" : "unknown", d.temp[k]);
		fprintf(out, "#   p%-4u %-9s %s\n", percentiles[k],
			secs_or_unknown(d.n_idle, (uint64_t)(d.rec[k] * 1e9), idle, sizeof(idle)),
			temp);
	}
	fprintf(out, "# cold tail: matched bytes idle for at least\n");
	for (size_t k = 0; k < d.nr_steps; k++)
		fprintf(out, "#   %-9s %-11s %5.1f %%\n",
			fmt_secs((uint64_t)(d.steps[k] * 1e9), idle, sizeof(idle)),
			fmt_bytes(d.tail[k], sz, sizeof(sz)),
			100.0 * (double)d.tail[k] / (double)d.idle_bytes);
	if (d.n_idle < n)
		fprintf(out, "#   (of the %s of known idle time)\n",
			fmt_bytes(d.idle_bytes, sz, sizeof(sz)));
}

static void print_json(const struct report_opts *o, const struct pick *p, struct match *m,
		       size_t n, const struct totals *t, const struct rgroups *gs, FILE *out)
{
	const struct access_pattern *ap = &o->pattern;
	struct json_object *j = json_object_new_object(), *arr = json_object_new_array();
	struct json_object *pat = json_object_new_object(), *pr, *pt, *tail;
	struct dist d;
	char key[8];

	json_object_object_add(j, "record", json_object_new_string(o->input));
	json_object_object_add(j, "seq", json_object_new_uint64(p->seq));
	json_object_object_add(j, "time_s", json_seconds((double)p->end_ns / 1e9));
	json_object_object_add(pat, "size_min", json_object_new_uint64(ap->size_min));
	json_object_object_add(pat, "size_max", ap->size_max == UINT64_MAX ? NULL :
			       json_object_new_uint64(ap->size_max));
	json_object_object_add(pat, "freq_min_percent", json_percent(ap->freq_min));
	json_object_object_add(pat, "freq_max_percent", json_percent(ap->freq_max));
	json_object_object_add(pat, "age_min_s", json_seconds((double)ap->age_min_ns / 1e9));
	json_object_object_add(pat, "age_max_s", ap->age_max_ns == UINT64_MAX ? NULL :
			       json_seconds((double)ap->age_max_ns / 1e9));
	json_object_object_add(j, "pattern", pat);
	json_object_object_add(j, "regions_in_snapshot", json_object_new_uint64(p->nr));
	json_object_object_add(j, "matched_regions", json_object_new_uint64(n));
	json_object_object_add(j, "matched_bytes", json_object_new_uint64(t->matched));
	json_object_object_add(j, "observed_bytes", json_object_new_uint64(t->observed));
	json_object_object_add(j, "not_observable_bytes", json_object_new_uint64(t->unobs));
	json_object_object_add(j, "age_unknown_bytes", json_object_new_uint64(t->age_unknown));
	json_object_object_add(j, "age_unknown_matched_bytes",
			       json_object_new_uint64(t->matched_age_unknown));
	json_object_object_add(j, "mapping_unknown_bytes",
			       json_object_new_uint64(t->mapping_unknown));
	for (size_t i = 0; i < n && i < o->top; i++) {
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "pid", json_object_new_int(m[i].p->r.pid));
		json_object_object_add(e, "start", json_object_new_uint64(m[i].p->r.start));
		json_object_object_add(e, "end", json_object_new_uint64(m[i].p->r.end));
		json_object_object_add(e, "freq_percent", json_percent(m[i].p->freq));
		/* null: not known */
		json_object_object_add(e, "age_s", m[i].p->r.age_unknown ? NULL :
				       json_seconds((double)m[i].p->age_ns / 1e9));
		json_object_object_add(e, "idle_s", m[i].idle_known ?
				       json_seconds((double)m[i].idle_ns / 1e9) : NULL);
		json_object_object_add(e, "temperature", m[i].temp_known ?
				       json_num(m[i].temp, 0) : NULL);
		json_object_object_add(e, "label", json_object_new_string(m[i].p->r.label));
		json_object_array_add(arr, e);
	}
	json_object_object_add(j, "regions", arr);
	if (o->by) {
		json_object_object_add(j, "by", json_object_new_string(
				       report_by_name((enum report_by)o->by)));
		json_object_object_add(j, "groups", groups_json(gs));
	}
	if (n) {
		distributions(m, n, &d);
		pr = json_object_new_object();
		pt = json_object_new_object();
		for (unsigned int k = 0; k < NR_PCT; k++) {
			snprintf(key, sizeof(key), "p%u", percentiles[k]);
			json_object_object_add(pr, key, d.n_idle ? json_seconds(d.rec[k]) : NULL);
			json_object_object_add(pt, key, d.n_temp ? json_num(d.temp[k], 0) : NULL);
		}
		json_object_object_add(j, "recency_s_percentiles", pr);
		json_object_object_add(j, "temperature_percentiles", pt);
		json_object_object_add(j, "idle_known_bytes", json_object_new_uint64(d.idle_bytes));
		tail = json_object_new_array();
		for (size_t k = 0; k < d.nr_steps; k++) {
			struct json_object *e = json_object_new_object();

			json_object_object_add(e, "idle_s_at_least", json_seconds(d.steps[k]));
			json_object_object_add(e, "bytes", json_object_new_uint64(d.tail[k]));
			json_object_array_add(tail, e);
		}
		json_object_object_add(j, "cold_tail", tail);
	}
	json_out(out, j, 1);
}

static int on_snapshot(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	return pick_offer(arg, s, info);
}

int report_access(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct mapped_now maps = { 0 };
	struct pick p = { .o = o, .maps = &maps };
	struct rgroups gs = { 0 };
	struct totals t = { 0 };
	struct rec_info info;
	struct match *m = NULL;
	size_t n = 0;
	int ret;

	(void)tics;
	ret = report_read_mapped(o, on_snapshot, &p, &info, &maps);
	if (!ret)
		ret = pick_done(&p);
	if (ret)
		goto out;
	m = calloc(p.nr, sizeof(*m));
	if (!m) {
		ret = fail("report", "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < p.nr; i++) {
		const struct picked_region *pr = &p.regions[i];
		struct match *x = &m[n];

		/* all of it in holes between mappings: no memory */
		if (!pr->mem)
			continue;
		if (pr->freq < 0) {
			t.unobs += pr->mem;
			continue;
		}
		t.observed += pr->mem;
		if (!pr->mem_known)
			t.mapping_unknown += pr->mem;
		x->p = pr;
		x->idle_ns = pr->r.nr_accesses ? 0 : pr->age_ns + pr->window_ns;
		x->idle_known = pr->r.nr_accesses || !pr->r.age_unknown;
		x->temp = temperature(o, pr);
		x->temp_known = !pr->r.age_unknown || !o->temp_w[2];
		if (pr->r.age_unknown)
			t.age_unknown += mem_of(x);
		if (!matches(o, x))
			continue;
		t.matched += mem_of(x);
		if (pr->r.age_unknown)
			t.matched_age_unknown += mem_of(x);
		n++;
	}
	qsort_r(m, n, sizeof(*m), cmp_match, (void *)o);
	if (o->by) {
		ret = tally_groups(&p, m, n, &gs);
		if (ret)
			goto out;
	}
	if (o->json)
		print_json(o, &p, m, n, &t, &gs, out);
	else
		print_text(o, &p, m, n, &t, &gs, out);
out:
	rgroups_free(&gs);
	free(m);
	pick_free(&p);
	mapped_now_free(&maps);
	rec_info_free(&info);
	return ret;
}
