// SPDX-License-Identifier: GPL-2.0-only
/*
 * report pheatmap: which physical pages are used over time (Mptrace's view).
 *
 * Each region of each window contributes one point: the physical page its
 * last present sample found (phys_addr), coloured with the region's access
 * frequency.  Points are binned into --time-bins x --addr-bins cells over
 * the physical range seen; a cell shows the highest frequency of its points,
 * NaN (grey) if none fell there.  A region that cannot be observed has no
 * frequency: its points only mark their cells, drawn apart.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "cli.h"
#include "common/json_out.h"
#include "report.h"
#include "common/units.h"

struct ppoint {
	uint64_t t_ns, phys;
	float freq;			/* < 0: not observable */
};

struct pheat {
	const struct report_opts *o;
	struct ppoint *p;
	size_t n, cap;
	size_t nr_snaps, nr_without, nr_unobs;
};

static int add_points(void *arg, const struct rec_snapshot *s,
		      const struct rec_info *info)
{
	struct pheat *h = arg;

	(void)info;
	h->nr_snaps++;
	if (!s->placement) {
		h->nr_without++;
		return 0;
	}
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];

		if (r->phys_addr == REC_PHYS_NONE || (h->o->pid && r->pid != h->o->pid))
			continue;
		if (h->n == h->cap) {
			size_t cap = h->cap ? h->cap * 2 : 4096;
			struct ppoint *np = realloc(h->p, cap * sizeof(*np));

			if (!np)
				return fail("report", "out of memory");
			h->p = np;
			h->cap = cap;
		}
		h->p[h->n++] = (struct ppoint){
			.t_ns = s->end_ns, .phys = r->phys_addr,
			.freq = rec_observable(r) ? (float)report_freq(s, r) : -1,
		};
		h->nr_unobs += !rec_observable(r);
	}
	return 0;
}

/* the same grid as the text output: cells[time][bin], null where no point fell */
static void write_json(const struct pheat *h, const float *cell, const unsigned char *uo,
		       uint64_t tmin, uint64_t tmax, uint64_t pmin, uint64_t pmax, FILE *out)
{
	unsigned int tb = h->o->time_bins, ab = h->o->addr_bins;
	struct json_object *rec = json_object_new_string(h->o->input);

	/* streamed: a grid of many bins is not built as a tree first */
	fprintf(out, "{\"record\":%s,\"points\":%zu,\"snapshots\":%zu,"
		"\"without_placement\":%zu,\"phys_min\":%" PRIu64 ",\"phys_max\":%" PRIu64
		",\"time_s\":[", json_object_to_json_string_ext(rec,
		JSON_C_TO_STRING_NOSLASHESCAPE), h->n, h->nr_snaps, h->nr_without, pmin, pmax);
	json_object_put(rec);
	for (unsigned int x = 0; x < tb; x++) {
		if (x)
			fputc(',', out);
		json_out_num(out, (tmin + (tmax - tmin) * (x + 0.5) / tb) / 1e9, 6);
	}
	fputs("],\"cells\":[", out);
	for (unsigned int x = 0; x < tb; x++) {
		fputs(x ? ",[" : "[", out);
		for (unsigned int y = 0; y < ab; y++) {
			if (y)
				fputc(',', out);
			json_out_num(out, cell[(size_t)x * ab + y], 3);
		}
		fputc(']', out);
	}
	fputc(']', out);
	/* cells[x][y] 1 where only memory that cannot be observed fell */
	if (h->nr_unobs) {
		fputs(",\"not_observable\":[", out);
		for (unsigned int x = 0; x < tb; x++) {
			fputs(x ? ",[" : "[", out);
			for (unsigned int y = 0; y < ab; y++)
				fprintf(out, "%s%d", y ? "," : "", uo[(size_t)x * ab + y]);
			fputc(']', out);
		}
		fputc(']', out);
	}
	fputs("}\n", out);
}

/*
 * The cells span [tmin, tmax] exactly; physical addresses read as the
 * amount of memory below them ("4.00 GiB"), at round steps.
 */
static void write_tics(FILE *tics, uint64_t tmin, uint64_t tmax, uint64_t pmin,
		       uint64_t pmax, unsigned int ab)
{
	/* the bins cover [pmin, pmax + 1 page) */
	double lo = (double)pmin, span = (double)(pmax - pmin) + 4096, step = 4096;
	char buf[32];
	int n = 0;

	fprintf(tics, "set xrange [%.6f:%.6f]\n", (double)tmin / 1e9, (double)tmax / 1e9);
	fprintf(tics, "set yrange [-0.5:%u.5]\nset ytics (", ab - 1);
	while (span / step > 8)
		step *= 2;
	for (double a = ceil(lo / step) * step; a <= lo + span; a += step) {
		double y = (a - lo) / span * ab - 0.5;

		fmt_bytes((uint64_t)a, buf, sizeof(buf));
		fprintf(tics, "%s\"%s\" %.2f", n++ ? ", " : "", buf, y);
	}
	fprintf(tics, ")\n");
}

int report_pheatmap(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct pheat h = { .o = o };
	uint64_t tmin = UINT64_MAX, tmax = 0, pmin = UINT64_MAX, pmax = 0;
	unsigned int tb = o->time_bins, ab = o->addr_bins;
	struct rec_info info;
	unsigned char *uo = NULL;
	float *cell = NULL;
	int ret;

	ret = report_read(o, add_points, &h, &info);
	if (ret)
		goto out;
	if (!h.n) {
		ret = fail("report", "%s: no physical addresses in %zu snapshots "
			   "(%zu without placement; none had a present page sampled)",
			   o->input, h.nr_snaps, h.nr_without);
		goto out;
	}
	for (size_t i = 0; i < h.n; i++) {
		tmin = h.p[i].t_ns < tmin ? h.p[i].t_ns : tmin;
		tmax = h.p[i].t_ns > tmax ? h.p[i].t_ns : tmax;
		pmin = h.p[i].phys < pmin ? h.p[i].phys : pmin;
		pmax = h.p[i].phys > pmax ? h.p[i].phys : pmax;
	}
	cell = malloc((size_t)tb * ab * sizeof(*cell));
	uo = calloc((size_t)tb * ab, 1);
	if (!cell || !uo) {
		ret = fail("report", "out of memory");
		goto out;
	}
	for (size_t i = 0; i < (size_t)tb * ab; i++)
		cell[i] = NAN;
	for (size_t i = 0; i < h.n; i++) {
		unsigned int x = tmax > tmin ?
			(unsigned int)((double)(h.p[i].t_ns - tmin) / (tmax - tmin) * tb) : 0;
		/* bins over [pmin, pmax + a page), as write_tics() labels them */
		unsigned int y = (unsigned int)((double)(h.p[i].phys - pmin) /
						((double)(pmax - pmin) + 4096) * ab);
		float *c;

		x = x >= tb ? tb - 1 : x;
		y = y >= ab ? ab - 1 : y;
		c = &cell[(size_t)x * ab + y];
		if (h.p[i].freq < 0)
			uo[(size_t)x * ab + y] = 1;
		else if (isnan(*c) || h.p[i].freq > *c)
			*c = h.p[i].freq;
	}
	/* a cell with a frequency is drawn with it */
	for (size_t i = 0; i < (size_t)tb * ab; i++)
		uo[i] &= isnan(cell[i]);
	if (o->json) {
		write_json(&h, cell, uo, tmin, tmax, pmin, pmax, out);
		goto out;
	}
	fprintf(out, "# daptrace physical heatmap of %s (%s): %zu points from %zu "
		"snapshots, %zu without placement\n", o->input,
		o->pid ? "one pid" : "all targets", h.n, h.nr_snaps, h.nr_without);
	fprintf(out, "# physical range 0x%" PRIx64 "-0x%" PRIx64 " in %u bins\n",
		pmin, pmax, ab);
	fprintf(out, "# columns: time_s phys_bin access_frequency_percent%s\n",
		h.nr_unobs ? " not_observable (1: only memory that cannot be observed)" : "");
	for (unsigned int x = 0; x < tb; x++) {
		double t = (tmin + (tmax - tmin) * (x + 0.5) / tb) / 1e9;

		for (unsigned int y = 0; y < ab; y++) {
			float v = cell[(size_t)x * ab + y];

			if (isnan(v))
				fprintf(out, "%.6f %u NaN", t, y);
			else
				fprintf(out, "%.6f %u %.3f", t, y, v);
			if (h.nr_unobs)
				fprintf(out, " %d", uo[(size_t)x * ab + y]);
			fputc('\n', out);
		}
		fprintf(out, "\n");
	}
	if (tics) {
		write_tics(tics, tmin, tmax, pmin, pmax, ab);
		if (h.nr_unobs)
			fprintf(tics, "has_unobs = 1; cell_w = %.9f\n",
				(double)(tmax - tmin) / 1e9 / tb);
	}
	if (o->plot || o->output)
		printf("%s: %zu physical points, 0x%" PRIx64 "-0x%" PRIx64 "\n",
		       o->input, h.n, pmin, pmax);
out:
	rec_info_free(&info);
	free(cell);
	free(uo);
	free(h.p);
	return ret;
}
