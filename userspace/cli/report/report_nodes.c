// SPDX-License-Identifier: GPL-2.0-only
/*
 * report nodes: bytes of hot, warm and cold memory per NUMA node over time.
 *
 * A region's bytes on node n in a window are size * node_samples[n] /
 * nr_samples (the module's one-page-per-round estimate, see the snapshots
 * ABI doc).  The region's class comes from its access frequency in that
 * window: hot if it is at least --hot-pct percent, cold if no access was
 * seen, warm otherwise; memory that cannot be observed is none of these
 * (its counts mean nothing) and has a class of its own.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "common/json_out.h"
#include "report.h"
#include "common/units.h"

enum { HOT, WARM, COLD, UNOBS, NR_CLASSES };
static const char *const class_names[NR_CLASSES] = { "hot", "warm", "cold",
						     "not_observable" };

struct node_point {
	double t;
	uint64_t missed;
	uint64_t bytes[REC_NODES][NR_CLASSES];
};

struct node_series {
	const struct report_opts *o;
	struct node_point *p;
	size_t n, cap;
	size_t nr_without;		/* snapshots without placement */
	int nr_nodes;			/* 1 + highest node with samples */
};

static int add_point(void *arg, const struct rec_snapshot *s,
		     const struct rec_info *info)
{
	struct node_series *ser = arg;
	struct node_point *pt;

	(void)info;
	if (!s->placement || !s->nr_samples) {
		ser->nr_without++;
		return 0;
	}
	if (ser->n == ser->cap) {
		size_t cap = ser->cap ? ser->cap * 2 : 1024;

		pt = realloc(ser->p, cap * sizeof(*pt));
		if (!pt)
			return fail("report", "out of memory");
		ser->p = pt;
		ser->cap = cap;
	}
	pt = &ser->p[ser->n++];
	memset(pt, 0, sizeof(*pt));
	pt->t = (double)s->end_ns / 1e9;
	pt->missed = s->missed_before;
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		double freq = report_freq(s, r);
		int c = !rec_observable(r) ? UNOBS : !r->nr_accesses ? COLD :
			freq >= ser->o->hot_pct ? HOT : WARM;

		if (ser->o->pid && r->pid != ser->o->pid)
			continue;
		for (int nd = 0; nd < REC_NODES; nd++) {
			uint32_t k = r->node_samples[nd];

			if (!k)
				continue;
			pt->bytes[nd][c] += (uint64_t)((unsigned __int128)(r->end - r->start) *
						       k / s->nr_samples);
			if (nd + 1 > ser->nr_nodes)
				ser->nr_nodes = nd + 1;
		}
	}
	return 0;
}

/* --json: {record, snapshots, without_placement, hot_pct, series: [{time_s,
 * missed_before, nodes: [{hot, warm, cold, not_observable} bytes per node]}]} */
static int print_json(const struct report_opts *o, const struct node_series *ser,
		      FILE *out)
{
	struct json_object *j = json_object_new_object();
	struct json_object *pts = json_object_new_array_ext((int)ser->n);

	json_object_object_add(j, "record", json_object_new_string(o->input));
	json_object_object_add(j, "snapshots", json_object_new_uint64(ser->n));
	json_object_object_add(j, "without_placement",
			       json_object_new_uint64(ser->nr_without));
	json_object_object_add(j, "hot_pct", json_object_new_uint64(o->hot_pct));
	for (size_t i = 0; i < ser->n; i++) {
		struct json_object *e = json_object_new_object();
		struct json_object *nodes = json_object_new_array_ext(ser->nr_nodes);

		json_object_object_add(e, "time_s", json_seconds(ser->p[i].t));
		json_object_object_add(e, "missed_before",
				       json_object_new_uint64(ser->p[i].missed));
		for (int nd = 0; nd < ser->nr_nodes; nd++) {
			struct json_object *b = json_object_new_object();

			for (int c = 0; c < NR_CLASSES; c++)
				json_object_object_add(b, class_names[c],
						       json_object_new_uint64(ser->p[i].bytes[nd][c]));
			json_object_array_add(nodes, b);
		}
		json_object_object_add(e, "nodes", nodes);
		json_object_array_add(pts, e);
	}
	json_object_object_add(j, "series", pts);
	json_out(out, j, 1);
	return 0;
}

int report_nodes(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct node_series ser = { .o = o };
	uint64_t sum[REC_NODES][NR_CLASSES] = { { 0 } };
	struct rec_info info;
	char b[NR_CLASSES + 1][32];
	int ret;

	ret = report_read(o, add_point, &ser, &info);
	if (ret)
		goto out;
	if (!ser.n) {
		ret = fail("report", "%s: no placement data in %zu snapshots (recorded "
			   "with a module or daptrace without NUMA placement)",
			   o->input, ser.nr_without);
		goto out;
	}
	if (!ser.nr_nodes)
		ser.nr_nodes = 1;
	for (size_t i = 0; i < ser.n; i++)
		for (int nd = 0; nd < REC_NODES; nd++)
			for (int c = 0; c < NR_CLASSES; c++)
				sum[nd][c] += ser.p[i].bytes[nd][c];
	if (o->json) {
		ret = print_json(o, &ser, out);
		goto out;
	}

	fprintf(out, "# bytes per NUMA node of %s (%s; hot: >= %u%% of the window's "
		"samples accessed, cold: none)\n", o->input,
		o->pid ? "one pid" : "all targets", o->hot_pct);
	fprintf(out, "# snapshots %zu, without placement %zu\n", ser.n, ser.nr_without);
	for (int nd = 0; nd < ser.nr_nodes; nd++) {
		uint64_t tot = 0;

		for (int c = 0; c < NR_CLASSES; c++) {
			fmt_bytes(sum[nd][c] / ser.n, b[c], sizeof(b[c]));
			tot += sum[nd][c];
		}
		fmt_bytes(tot / ser.n, b[NR_CLASSES], sizeof(b[NR_CLASSES]));
		fprintf(out, "# node %d mean: total %s, hot %s, warm %s, cold %s, not "
			"observable %s\n", nd, b[NR_CLASSES], b[HOT], b[WARM], b[COLD], b[UNOBS]);
		if (o->plot || o->output)
			printf("%s: node %d mean: total %s, hot %s, warm %s, cold %s, not "
			       "observable %s\n", o->input, nd, b[NR_CLASSES], b[HOT], b[WARM],
			       b[COLD], b[UNOBS]);
	}
	/*
	 * hot, warm, cold per node as before, the unobservable bytes of each
	 * node after them all: scripts reading the columns by position keep
	 * working
	 */
	fprintf(out, "# columns: time_s");
	for (int nd = 0; nd < ser.nr_nodes; nd++)
		for (int c = 0; c < UNOBS; c++)
			fprintf(out, " node%d_%s", nd, class_names[c]);
	for (int nd = 0; nd < ser.nr_nodes; nd++)
		fprintf(out, " node%d_%s", nd, class_names[UNOBS]);
	fprintf(out, "\n");
	for (size_t i = 0; i < ser.n; i++) {
		fprintf(out, "%.6f", ser.p[i].t);
		for (int nd = 0; nd < ser.nr_nodes; nd++)
			for (int c = 0; c < UNOBS; c++)
				fprintf(out, " %" PRIu64, ser.p[i].bytes[nd][c]);
		for (int nd = 0; nd < ser.nr_nodes; nd++)
			fprintf(out, " %" PRIu64, ser.p[i].bytes[nd][UNOBS]);
		fprintf(out, "\n");
	}
	if (tics)
		fprintf(tics, "nnodes=%d\nhot_pct=%u\n", ser.nr_nodes, o->hot_pct);
out:
	rec_info_free(&info);
	free(ser.p);
	return ret;
}
