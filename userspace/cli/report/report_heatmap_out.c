// SPDX-License-Identifier: GPL-2.0-only
/*
 * report heatmap: the grid as gnuplot data with the tics file that
 * viz/heatmap.gp loads, and as JSON.
 *
 * The picture's left margin holds each block's start address (a tic) with
 * its mapping and size on the line above, sized to the longest of them so
 * nothing is cut; an elided gap is a white band of its own rows with its
 * size written in it, so no marker lies over data; memory that cannot be
 * observed is a hatched green, with a key entry, as is grey (unmapped or no
 * data).  The JSON is written as it goes: a grid of --addr-bins 10000 is
 * tens of megabytes of numbers, not a tree of millions of objects.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "common/json_out.h"
#include "report_heatmap.h"
#include "common/units.h"

/* Block names in a picture: a basename is rarely longer. */
#define PLOT_LABEL_MAX	40

/* "64 MiB": @v in the largest binary unit that divides it. */
static void fmt_pow2(uint64_t v, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned int u = 0;

	while (u + 1 < sizeof(unit) / sizeof(unit[0]) && v >= 1024 && !(v % 1024)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " %s", v, unit[u]);
}

/*
 * Offsets within a tall block ("+64 MiB", "+128 MiB", ...), a power-of-two
 * step, about one label per 25 rows, none crowding the block's own labels
 * at its start nor the next block's.
 */
static void offset_tics(const struct heatmap *h, const struct block *b, FILE *tics)
{
	uint64_t size = b->end - b->start, step = 1;
	/* rows that two lines of text take: about a twelfth of 200 */
	unsigned int clear = h->abins / 12 > 10 ? h->abins / 12 : 10;
	char buf[32];

	if (b->nbins < 3 * clear || b->width > UINT64_MAX / 64)
		return;
	while (step < b->width * clear)
		step <<= 1;
	/* off >= step: stop where off would wrap at the top of the space */
	for (uint64_t off = step; off >= step && step / 2 <= size &&
	     off <= size - step / 2; off += step) {
		double y = b->bin0 - 0.5 + (double)off / (double)b->width;

		if (y > b->bin0 + b->nbins - clear)
			break;
		fmt_pow2(off, buf, sizeof(buf));
		fprintf(tics, "set ytics add (\"+%s\" %.2f)\n", buf, y);
	}
}

/*
 * "xz 12.0 MiB", with "  N1:97%" (its main NUMA node) if @nodes: a block's
 * name line (its start address is a tic).
 */
static size_t block_name(const struct block *b, int nodes, char *buf, size_t len)
{
	char name[PLOT_LABEL_MAX + 1], sz[32], nl[24] = "";
	double pct;
	int nd = heatmap_block_node(b, &pct);

	heatmap_short_label(name, sizeof(name), heatmap_block_label(b), PLOT_LABEL_MAX);
	if (nodes && nd >= 0)
		snprintf(nl, sizeof(nl), "  N%d:%.0f%%", nd, pct);
	snprintf(buf, len, "%s%s%s%s", name, *name ? " " : "",
		 fmt_bytes(b->end - b->start, sz, sizeof(sz)), nl);
	return strlen(buf);
}

/* Do the blocks' pages lie on more than one node (else N0:100% everywhere says nothing)? */
static int several_nodes(const struct heatmap *h)
{
	int seen = -1;

	for (unsigned int i = 0; i < h->nb; i++)
		for (int n = 0; n < REC_NODES; n++)
			if (h->b[i].node_bytes[n] > 0) {
				if (seen >= 0 && seen != n)
					return 1;
				seen = n;
			}
	return 0;
}

static int unobs_at(const struct heatmap *h, unsigned int t, unsigned int a)
{
	return heatmap_unobs(h, t, a) >= HEATMAP_UNOBS_SHARE;
}

/* Does a run of not observable cells start at (@t, @a)?  *@end: its last column. */
static int unobs_run(const struct heatmap *h, unsigned int t, unsigned int a,
		     unsigned int *end)
{
	if (!unobs_at(h, t, a) || (t && unobs_at(h, t - 1, a)))
		return 0;
	for (*end = t; *end + 1 < h->tbins && unobs_at(h, *end + 1, a); (*end)++)
		;
	return 1;
}

/*
 * Cells mostly not observable, as hatched rectangles: runs along a row,
 * the same run on the rows above grown into one rectangle.
 */
static void unobs_objects(const struct heatmap *h, FILE *tics)
{
	double col_s = (double)(h->tmax - h->tmin) / 1e9 / h->tbins;
	double x0 = (double)h->tmin / 1e9;
	unsigned int n = 0, t1, e, a1;

	for (unsigned int a = 0; a < h->abins; a++) {
		for (unsigned int t = 0; t < h->tbins; t++) {
			if (!unobs_run(h, t, a, &t1))
				continue;
			/* drawn with the rows below */
			if (a && unobs_run(h, t, a - 1, &e) && e == t1) {
				t = t1;
				continue;
			}
			for (a1 = a; a1 + 1 < h->abins && unobs_run(h, t, a1 + 1, &e) &&
			     e == t1; a1++)
				;
			fprintf(tics, "set object rectangle from first %.6f, first %.1f to first "
				"%.6f, first %.1f front fillcolor rgb unobs_colour fillstyle "
				"pattern 2 border lc rgb unobs_colour\n", x0 + t * col_s,
				a - 0.5, x0 + (t1 + 1) * col_s, a1 + 0.5);
			t = t1;
			n++;
		}
	}
	fprintf(tics, "has_unobs = %d\n", n > 0);
}

static void write_tics(const struct heatmap *h, FILE *tics)
{
	size_t width = 14, l;
	int nodes = several_nodes(h);
	char name[PLOT_LABEL_MAX + 48], sz[32];

	fprintf(tics, "set xrange [%.6f:%.6f]\n", (double)h->tmin / 1e9,
		(double)h->tmax / 1e9);
	fprintf(tics, "set yrange [-0.5:%u.5]\nset ytics (", h->abins - 1);
	for (unsigned int i = 0; i < h->nb; i++)
		fprintf(tics, "%s\"0x%" PRIx64 "\" %.1f", i ? ", " : "", h->b[i].start,
			h->b[i].bin0 - 0.5);
	fprintf(tics, ")\n");
	for (unsigned int i = 0; i < h->nb; i++) {
		offset_tics(h, &h->b[i], tics);
		l = block_name(&h->b[i], nodes, name, sizeof(name));
		width = l > width ? l : width;
		/* on the line above the block's start address */
		fprintf(tics, "set label \"%s\" at graph 0, first %.1f right offset "
			"character -1.2, character 1 front\n", name, h->b[i].bin0 - 0.5);
	}
	/*
	 * the labels and, left of them, the axis title; the unit is a wide
	 * character, the labels' digits and letters are narrower
	 */
	fprintf(tics, "lmargin_chars = %zu\n", width * 17 / 20 + 5);
	for (unsigned int i = 1; i < h->nb; i++) {
		double lo = h->b[i - 1].bin0 + h->b[i - 1].nbins - 0.5, hi = h->b[i].bin0 - 0.5;

		fprintf(tics, "set object rectangle from graph 0, first %.1f to graph 1, first "
			"%.1f front fillcolor rgb 'white' fillstyle solid noborder\n", lo, hi);
		fprintf(tics, "set label \"%s gap elided\" at graph 0.5, first %.2f center front "
			"tc rgb '#505050' font ',8'\n", fmt_bytes(h->b[i].start - h->b[i - 1].end,
			sz, sizeof(sz)), (lo + hi) / 2);
	}
	if (h->unobs)
		unobs_objects(h, tics);
	if (nodes)
		fprintf(tics, "has_nodes = 1\n");
}

void heatmap_write_data(const struct heatmap *h, FILE *out, FILE *tics)
{
	double span_s = (double)(h->tmax - h->tmin) / 1e9, col_s;
	char sz[32];

	col_s = span_s / h->tbins;
	fprintf(out, "# daptrace heatmap of %s, pid %d\n", h->o->input, (int)h->pid);
	if (h->acc.windows) {
		struct acc_estimate e;
		char line[256];

		/* all targets' probes: the heatmap's pid is one of them */
		acc_total_estimate(&h->acc, &e);
		acc_format(&e, line, sizeof(line));
		fprintf(out, "# %s (all targets)\n", line);
		acc_warn(out, "# ", &e, ACC_DEF_WARN_RECALL);
	}
	fprintf(out, "# columns: time_s address_bin access_frequency_percent%s\n",
		h->unobs ? " not_observable_percent" : "");
	fprintf(out, "# address bins stack the blocks below; the bins between two blocks "
		"stand for the unmapped gap elided there (NaN)\n");
	if (h->unobs)
		fprintf(out, "# a bin at least %.0f%% not observable is NaN\n",
			HEATMAP_UNOBS_SHARE * 100);
	for (unsigned int i = 0; i < h->nb; i++) {
		const struct block *b = &h->b[i];
		double tot = 0;

		fprintf(out, "# block %u: bins %u-%u: 0x%" PRIx64 "-0x%" PRIx64 " (%s) %s\n",
			i, b->bin0, b->bin0 + b->nbins - 1, b->start, b->end,
			fmt_bytes(b->end - b->start, sz, sizeof(sz)), heatmap_block_label(b));
		for (int n = 0; n < REC_NODES; n++)
			tot += b->node_bytes[n];
		if (tot > 0) {
			fprintf(out, "# block %u resident by node:", i);
			for (int n = 0; n < REC_NODES; n++)
				if (b->node_bytes[n] > 0)
					fprintf(out, " node%d %.1f%%", n,
						100.0 * b->node_bytes[n] / tot);
			fputc('\n', out);
		}
		if (i + 1 < h->nb)
			fprintf(out, "# gap elided: %s (bins %u-%u)\n",
				fmt_bytes(h->b[i + 1].start - b->end, sz, sizeof(sz)),
				b->bin0 + b->nbins, h->b[i + 1].bin0 - 1);
	}
	for (unsigned int t = 0; t < h->tbins; t++) {
		double x = (double)h->tmin / 1e9 + (t + 0.5) * col_s;

		for (unsigned int a = 0; a < h->abins; a++) {
			double v = heatmap_cell(h, t, a);

			if (isnan(v))
				fprintf(out, "%.6f %u NaN", x, a);
			else
				fprintf(out, "%.6f %u %.3f", x, a, v);
			if (h->unobs)
				fprintf(out, " %.1f", 100 * heatmap_unobs(h, t, a));
			fputc('\n', out);
		}
		fputc('\n', out);
	}
	if (tics)
		write_tics(h, tics);
}

/*
 * {record, pid, blocks, gaps, time_s, freq_percent[column][row] (null:
 * unmapped, no data or not observable), not_observable_percent (if any)}.
 */
void heatmap_write_json(const struct heatmap *h, FILE *out)
{
	struct json_object *rec = json_object_new_string(h->o->input);
	struct json_object *blocks = json_object_new_array(), *gaps = json_object_new_array();
	double col_s = (double)(h->tmax - h->tmin) / 1e9 / h->tbins;

	for (unsigned int i = 0; i < h->nb; i++) {
		const struct block *b = &h->b[i];
		struct json_object *e = json_object_new_object();
		double pct;
		int nd = heatmap_block_node(b, &pct);

		json_object_object_add(e, "start", json_object_new_uint64(b->start));
		json_object_object_add(e, "end", json_object_new_uint64(b->end));
		json_object_object_add(e, "bytes", json_object_new_uint64(b->end - b->start));
		json_object_object_add(e, "label", json_object_new_string(heatmap_block_label(b)));
		json_object_object_add(e, "first_row", json_object_new_uint64(b->bin0));
		json_object_object_add(e, "rows", json_object_new_uint64(b->nbins));
		json_object_object_add(e, "bytes_per_row", json_object_new_uint64(b->width));
		if (nd >= 0) {
			json_object_object_add(e, "main_node", json_object_new_int(nd));
			json_object_object_add(e, "main_node_share_percent",
					       json_object_new_int((int)lround(pct)));
		}
		json_object_array_add(blocks, e);
		if (i + 1 < h->nb) {
			e = json_object_new_object();
			json_object_object_add(e, "first_row",
					       json_object_new_uint64(b->bin0 + b->nbins));
			json_object_object_add(e, "rows", json_object_new_uint64(h->gap_rows));
			json_object_object_add(e, "bytes",
					       json_object_new_uint64(h->b[i + 1].start - b->end));
			json_object_array_add(gaps, e);
		}
	}
	fprintf(out, "{\"record\":%s,\"pid\":%d,\"blocks\":%s,\"gaps\":%s,\"time_s\":[",
		json_object_to_json_string_ext(rec, JSON_C_TO_STRING_NOSLASHESCAPE),
		(int)h->pid, json_object_to_json_string_ext(blocks, JSON_C_TO_STRING_PLAIN |
							     JSON_C_TO_STRING_NOSLASHESCAPE),
		json_object_to_json_string_ext(gaps, JSON_C_TO_STRING_PLAIN));
	json_object_put(rec);
	json_object_put(blocks);
	json_object_put(gaps);
	for (unsigned int t = 0; t < h->tbins; t++)
		fprintf(out, "%s%.6f", t ? "," : "", (double)h->tmin / 1e9 + (t + 0.5) * col_s);
	fputs("],\"freq_percent\":[", out);
	for (unsigned int t = 0; t < h->tbins; t++) {
		fputs(t ? ",[" : "[", out);
		for (unsigned int a = 0; a < h->abins; a++) {
			if (a)
				fputc(',', out);
			json_out_num(out, heatmap_cell(h, t, a), 3);
		}
		fputc(']', out);
	}
	fputc(']', out);
	if (h->unobs) {
		fputs(",\"not_observable_percent\":[", out);
		for (unsigned int t = 0; t < h->tbins; t++) {
			fputs(t ? ",[" : "[", out);
			for (unsigned int a = 0; a < h->abins; a++) {
				if (a)
					fputc(',', out);
				json_out_num(out, h->cnt[t] > 0 ? 100 * heatmap_unobs(h, t, a) : NAN, 3);
			}
			fputc(']', out);
		}
		fputc(']', out);
	}
	fputs("}\n", out);
}
