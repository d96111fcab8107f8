// SPDX-License-Identifier: GPL-2.0-only
/*
 * report heatmap: time x address x access frequency for one target.
 *
 * A process's address space is mostly unmapped: heap near the binary, the
 * mmap area and the stack are terabytes apart, and the monitored regions
 * also cover unmapped space (the gap between the binary and its randomized
 * heap, holes between mappings).  Pass 1 finds what was mapped: every
 * address takes the verdict of the smallest region that ever covered it,
 * "[unmapped]" label or not (coarse early regions straddle gaps; the finer
 * ones that follow tell them apart).  The largest gaps between the mapped
 * blocks are elided (at most --max-blocks blocks remain) and the blocks are
 * stacked on the y axis, each with at least a few rows so a small stack
 * stays visible.  Pass 2 bins every snapshot into that grid.  Rows wholly
 * in unmapped holes inside a block are written as NaN (drawn grey), so idle
 * mapped memory (0, black) and holes look different.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "units.h"

struct ival {
	uint64_t start, end;
};

/* Pass 1's map: the finest verdict so far on each address range. */
struct piece {
	uint64_t start, end;
	unsigned int size_log;		/* log2 of the covering region's size */
	int unmapped;
};

struct block {
	uint64_t start, end;
	uint64_t width;			/* bytes per bin */
	unsigned int bin0, nbins;
	char *label;
	uint64_t label_score;		/* size of the region it came from */
	char *label_any;		/* fallback: a mapping inside the block */
	uint64_t label_any_start;
	double node_bytes[REC_NODES];	/* resident bytes x windows per node */
};

struct heatmap {
	const struct report_opts *o;
	pid_t pid;
	struct piece *pc;		/* pass 1: the map, sorted, disjoint */
	size_t npc;
	struct piece *tmp;
	size_t tmp_cap;
	struct ival *iv;		/* mapped ranges, sorted, disjoint */
	size_t niv;
	uint64_t tmin, tmax, nsnap;
	/* pass 2 */
	struct block *b;
	unsigned int nb, tbins, abins;
	double *grid;
	double *cnt;			/* per column: snapshot time in it, in windows */
	double *row;			/* one snapshot's rows */
	char *mapped;			/* per row: overlaps mapped memory */
	int all_mapped;			/* no labels: everything counts as mapped */
	int oom;
};

static pid_t pick_pid(struct heatmap *h, const struct rec_snapshot *s,
		      const struct rec_info *info)
{
	if (!h->pid) {
		if (info->nr_targets)
			h->pid = info->targets[0].pid;
		else if (s->nr_regions)
			h->pid = s->regions[0].pid;
	}
	return h->pid;
}

static int cmp_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static unsigned int ilog2_u64(uint64_t v)
{
	return v ? 63 - (unsigned int)__builtin_clzll(v) : 0;
}

/* Is verdict a finer than b?  Equal sizes: "mapped" wins. */
static int finer(const struct piece *a, const struct piece *b)
{
	if (a->size_log != b->size_log)
		return a->size_log < b->size_log;
	return !a->unmapped && b->unmapped;
}

static void emit_piece(struct piece *out, size_t *n, uint64_t start, uint64_t end,
		       const struct piece *v)
{
	struct piece *last = *n ? &out[*n - 1] : NULL;

	if (last && last->end == start && last->size_log == v->size_log &&
	    last->unmapped == v->unmapped) {
		last->end = end;
		return;
	}
	out[(*n)++] = (struct piece){ start, end, v->size_log, v->unmapped };
}

/*
 * Paint one snapshot's regions (sorted, disjoint) over the map: each address
 * keeps the finer of its old verdict and the new one.
 */
static int paint(struct heatmap *h, const struct piece *s, size_t ns)
{
	const struct piece *p = h->pc;
	size_t np = h->npc, i = 0, j = 0, n = 0;
	struct piece *out = malloc((2 * (np + ns) + 1) * sizeof(*out));
	uint64_t pos = 0;

	if (!out)
		return -1;
	for (;;) {
		int in_p, in_s;
		uint64_t next = UINT64_MAX;
		const struct piece *v;

		while (i < np && p[i].end <= pos)
			i++;
		while (j < ns && s[j].end <= pos)
			j++;
		if (i >= np && j >= ns)
			break;
		in_p = i < np && p[i].start <= pos;
		in_s = j < ns && s[j].start <= pos;
		if (!in_p && !in_s) {
			pos = i < np ? p[i].start : UINT64_MAX;
			if (j < ns && s[j].start < pos)
				pos = s[j].start;
			continue;
		}
		if (i < np)
			next = in_p ? p[i].end : p[i].start;
		if (j < ns && (in_s ? s[j].end : s[j].start) < next)
			next = in_s ? s[j].end : s[j].start;
		if (in_p && in_s)
			v = finer(&s[j], &p[i]) ? &s[j] : &p[i];
		else
			v = in_p ? &p[i] : &s[j];
		emit_piece(out, &n, pos, next, v);
		pos = next;
	}
	free(h->pc);
	h->pc = out;
	h->npc = n;
	return 0;
}

static int pass1(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct heatmap *h = arg;
	size_t n = 0, m = 0;

	pick_pid(h, s, info);
	if (!h->nsnap++ || s->start_ns < h->tmin)
		h->tmin = s->start_ns;
	if (s->end_ns > h->tmax)
		h->tmax = s->end_ns;
	if (s->nr_regions > h->tmp_cap) {
		struct piece *t = realloc(h->tmp, s->nr_regions * sizeof(*t));

		if (!t)
			return fail("report", "out of memory");
		h->tmp = t;
		h->tmp_cap = s->nr_regions;
	}
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];

		if (r->pid != h->pid || r->end <= r->start)
			continue;
		h->tmp[n++] = (struct piece){
			r->start, r->end, ilog2_u64(r->end - r->start),
			!strcmp(r->label, "[unmapped]"),
		};
	}
	if (!n)
		return 0;
	qsort(h->tmp, n, sizeof(*h->tmp), cmp_piece);
	/* regions of one target do not overlap; if they did, clip */
	for (size_t i = 1; i < n; i++) {
		if (h->tmp[i].start < h->tmp[m].end)
			h->tmp[i].start = h->tmp[m].end;
		if (h->tmp[i].start < h->tmp[i].end)
			h->tmp[++m] = h->tmp[i];
	}
	return paint(h, h->tmp, m + 1) ? fail("report", "out of memory") : 0;
}

/* The mapped ranges of the map, touching ones coalesced. */
static int mapped_ranges(struct heatmap *h, int all)
{
	free(h->iv);
	h->iv = malloc((h->npc + 1) * sizeof(*h->iv));
	if (!h->iv)
		return -1;
	h->niv = 0;
	for (size_t i = 0; i < h->npc; i++) {
		const struct piece *p = &h->pc[i];

		if (p->unmapped && !all)
			continue;
		if (h->niv && h->iv[h->niv - 1].end == p->start)
			h->iv[h->niv - 1].end = p->end;
		else
			h->iv[h->niv++] = (struct ival){ p->start, p->end };
	}
	return 0;
}

static int cmp_gap_desc(const void *a, const void *b, void *arg)
{
	const struct ival *iv = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t gx = iv[x + 1].start - iv[x].end, gy = iv[y + 1].start - iv[y].end;

	return gx > gy ? -1 : gx < gy;
}

/*
 * Elide the max_blocks-1 largest gaps, if they are at least an eighth of
 * the mapped total; blocks across the others are joined.
 */
static int make_blocks(struct heatmap *h)
{
	size_t ngaps = h->niv - 1, keep = h->o->max_blocks - 1, *idx;
	uint64_t total = 0;
	char *elide;
	unsigned int nb = 0;

	idx = calloc(ngaps + 1, sizeof(*idx));
	elide = calloc(ngaps + 1, 1);
	h->b = calloc(h->niv, sizeof(*h->b));
	if (!idx || !elide || !h->b) {
		free(idx);
		free(elide);
		return -1;
	}
	for (size_t i = 0; i < ngaps; i++)
		idx[i] = i;
	qsort_r(idx, ngaps, sizeof(*idx), cmp_gap_desc, h->iv);
	for (size_t i = 0; i < h->niv; i++)
		total += h->iv[i].end - h->iv[i].start;
	/*
	 * Small holes (between libraries, pieces of the heap) stay: a block
	 * per hole would waste more rows than the black rows they cost.
	 */
	for (size_t i = 0; i < ngaps && i < keep; i++)
		if (h->iv[idx[i] + 1].start - h->iv[idx[i]].end >= total / 8)
			elide[idx[i]] = 1;
	h->b[0].start = h->iv[0].start;
	for (size_t i = 0; i < h->niv; i++) {
		h->b[nb].end = h->iv[i].end;
		if (i < ngaps && elide[i])
			h->b[++nb].start = h->iv[i + 1].start;
	}
	h->nb = nb + 1;
	free(idx);
	free(elide);
	return 0;
}

/* Rows per block: proportional to size, but each at least a quarter share. */
static void assign_bins(struct heatmap *h)
{
	unsigned int nb = h->nb, abins = h->o->addr_bins < nb ? nb : h->o->addr_bins;
	unsigned int min = abins / (4 * nb) ? abins / (4 * nb) : 1, left, bin = 0;
	long double total = 0;

	for (unsigned int i = 0; i < nb; i++)
		total += h->b[i].end - h->b[i].start;
	left = abins - min * nb;
	for (unsigned int i = 0; i < nb; i++) {
		struct block *b = &h->b[i];
		unsigned int extra = (unsigned int)((b->end - b->start) / total * left);
		uint64_t size = b->end - b->start;

		if (i == nb - 1)
			extra = abins - bin - min;	/* rounding leftovers */
		b->nbins = min + extra;
		if (b->nbins > size)
			b->nbins = (unsigned int)size;
		/* rounded up without size + n - 1: a block may end at 2^64 - 1 */
		b->width = size / b->nbins + !!(size % b->nbins);
		b->nbins = (unsigned int)(size / b->width + !!(size % b->width));
		b->bin0 = bin;
		bin += b->nbins;
	}
	h->abins = bin;
}

/* The first block ending above @addr (h->nb if none). */
static unsigned int find_block(const struct heatmap *h, uint64_t addr)
{
	unsigned int lo = 0, hi = h->nb;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (h->b[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A block is labelled with the mapping at its start: the label of the
 * smallest region that covered that address (coarse regions are labelled by
 * the first mapping they overlap, which may lie far above).
 */
static void consider_label(struct block *b, const struct rec_region *r)
{
	uint64_t size = r->end - r->start;

	if (!r->label[0] || !strcmp(r->label, "[unmapped]"))
		return;
	if (r->end > b->start && r->start < b->end &&
	    (!b->label_any || r->start < b->label_any_start)) {
		char *l = strdup(r->label);

		if (l) {
			free(b->label_any);
			b->label_any = l;
			b->label_any_start = r->start;
		}
	}
	if (r->start > b->start || r->end <= b->start)
		return;
	if (b->label && size >= b->label_score)
		return;
	free(b->label);
	b->label = strdup(r->label);
	b->label_score = size;
}

/* Which rows overlap memory pass 1 found mapped. */
static int mark_mapped(struct heatmap *h)
{
	h->mapped = calloc(h->abins ? h->abins : 1, 1);
	if (!h->mapped)
		return -1;
	for (size_t i = 0; i < h->npc; i++) {
		const struct piece *p = &h->pc[i];

		if (p->unmapped && !h->all_mapped)
			continue;
		for (unsigned int bi = find_block(h, p->start);
		     bi < h->nb && h->b[bi].start < p->end; bi++) {
			const struct block *b = &h->b[bi];
			uint64_t start = p->start > b->start ? p->start : b->start;
			uint64_t end = p->end < b->end ? p->end : b->end;

			if (start >= end)
				continue;
			for (uint64_t j = (start - b->start) / b->width;
			     j < b->nbins && j * b->width < end - b->start; j++)
				h->mapped[b->bin0 + j] = 1;
		}
	}
	return 0;
}

static const char *block_label(const struct block *b)
{
	return b->label ? b->label : b->label_any ? b->label_any : "[anon]";
}

static int pass2(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct heatmap *h = arg;
	uint64_t span = h->tmax > h->tmin ? h->tmax - h->tmin : 1;
	uint64_t t0 = s->start_ns > h->tmin ? s->start_ns - h->tmin : 0;
	uint64_t t1 = s->end_ns > h->tmin ? s->end_ns - h->tmin : 0;
	double *row = h->row, col_ns = (double)span / h->tbins;
	unsigned int tb0, tb1;

	(void)info;
	memset(row, 0, h->abins * sizeof(*row));
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		unsigned int bi;
		double f;

		if (r->pid != h->pid)
			continue;
		bi = find_block(h, r->start);
		f = report_freq(s, r);
		/* a region may span elided gaps: draw its part in each block */
		for (; bi < h->nb && h->b[bi].start < r->end; bi++) {
			struct block *b = &h->b[bi];
			uint64_t start = r->start > b->start ? r->start : b->start;
			uint64_t end = r->end < b->end ? r->end : b->end;

			consider_label(b, r);
			for (int n = 0; s->placement && s->nr_samples && n < REC_NODES; n++)
				b->node_bytes[n] += (double)(end - start) *
						    r->node_samples[n] / s->nr_samples;
			if (f <= 0)
				continue;
			for (uint64_t j = (start - b->start) / b->width;
			     j < b->nbins && j * b->width < end - b->start; j++) {
				uint64_t lo = b->start + j * b->width;
				uint64_t hi = b->end - lo > b->width ? lo + b->width : b->end;
				uint64_t olo = start > lo ? start : lo;

				row[b->bin0 + j] += f * (double)((end < hi ? end : hi) - olo) /
						    (double)(hi - lo);
			}
		}
	}
	/*
	 * The window goes into every column it overlaps, weighted by the
	 * overlap: columns are time averages, and a long window (a slow
	 * guest) leaves no empty column behind.
	 */
	tb0 = (unsigned int)((long double)t0 * h->tbins / span);
	tb1 = (unsigned int)((long double)t1 * h->tbins / span);
	if (tb0 >= h->tbins)
		tb0 = h->tbins - 1;
	if (tb1 >= h->tbins)
		tb1 = h->tbins - 1;
	for (unsigned int tb = tb0; tb <= tb1; tb++) {
		double lo = tb * col_ns, hi = lo + col_ns, w;
		double *g = h->grid + (size_t)tb * h->abins;

		if ((double)t0 > lo)
			lo = (double)t0;
		if ((double)t1 < hi)
			hi = (double)t1;
		w = t1 > t0 ? (hi - lo) / col_ns : 1;
		if (w <= 0)
			continue;
		h->cnt[tb] += w;
		for (unsigned int a = 0; a < h->abins; a++)
			g[a] += w * row[a];
	}
	return 0;
}

/*
 * gnuplot double-quoted strings: nothing plot_unsafe(); paths by basename.
 * A label with bytes outside printable ASCII is left out (the SVG must stay
 * valid XML, and such a label is more likely garbage than a path).
 */
static void tic_label(char *buf, size_t len, const char *label)
{
	const char *base = label;
	size_t n = 0;

	if (label[0] == '/' && strrchr(label, '/')[1])
		base = strrchr(label, '/') + 1;
	for (const char *p = base; *p; p++)
		if ((unsigned char)*p < 32 || (unsigned char)*p > 126) {
			buf[0] = '\0';
			return;
		}
	for (; *base && n + 1 < len && n < 32; base++)
		buf[n++] = plot_unsafe((unsigned char)*base) ? '?' : *base;
	buf[n] = '\0';
}

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
 * step, about one label per 25 rows, none crowding the next block's label.
 */
static void offset_tics(const struct block *b, FILE *tics)
{
	uint64_t size = b->end - b->start, step = 1;
	char buf[32];

	if (b->nbins < 40 || b->width > UINT64_MAX / 64)
		return;
	while (step < b->width * 25)
		step <<= 1;
	/* off >= step: stop where off would wrap at the top of the space */
	for (uint64_t off = step; off >= step && step / 2 <= size &&
	     off <= size - step / 2; off += step) {
		double y = b->bin0 - 0.5 + (double)off / (double)b->width;

		if (y > b->bin0 + b->nbins - 10)
			break;
		fmt_pow2(off, buf, sizeof(buf));
		fprintf(tics, "set ytics add (\"+%s\" %.2f)\n", buf, y);
	}
}

static void write_json(struct heatmap *h, FILE *out)
{
	struct json_object *j = json_object_new_object(), *blocks = json_object_new_array();
	struct json_object *times = json_object_new_array(), *grid = json_object_new_array();
	double col_s = (double)(h->tmax - h->tmin) / 1e9 / h->tbins;

	json_object_object_add(j, "record", json_object_new_string(h->o->input));
	json_object_object_add(j, "pid", json_object_new_int(h->pid));
	for (unsigned int i = 0; i < h->nb; i++) {
		const struct block *b = &h->b[i];
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "start", json_object_new_uint64(b->start));
		json_object_object_add(e, "end", json_object_new_uint64(b->end));
		json_object_object_add(e, "bytes", json_object_new_uint64(b->end - b->start));
		json_object_object_add(e, "label", json_object_new_string(block_label(b)));
		json_object_object_add(e, "first_row", json_object_new_uint64(b->bin0));
		json_object_object_add(e, "rows", json_object_new_uint64(b->nbins));
		json_object_object_add(e, "bytes_per_row", json_object_new_uint64(b->width));
		json_object_array_add(blocks, e);
	}
	json_object_object_add(j, "blocks", blocks);
	/* grid[column][row]: access frequency %, null where unmapped or no data */
	for (unsigned int t = 0; t < h->tbins; t++) {
		struct json_object *col = json_object_new_array_ext((int)h->abins);

		json_object_array_add(times, json_object_new_double(
				      (double)h->tmin / 1e9 + (t + 0.5) * col_s));
		for (unsigned int a = 0; a < h->abins; a++)
			json_object_array_add(col, h->cnt[t] <= 0 || !h->mapped[a] ? NULL :
				json_object_new_double(h->grid[(size_t)t * h->abins + a] /
						       h->cnt[t]));
		json_object_array_add(grid, col);
	}
	json_object_object_add(j, "time_s", times);
	json_object_object_add(j, "freq_percent", grid);
	fprintf(out, "%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

/*
 * --terminal: the grid with the highest addresses on top, like the picture.
 * Colour: xterm-256 backgrounds along a magma-like ramp, grey for NaN;
 * ASCII: a density ramp, blank for NaN.  Each block's top row names its
 * mapping and size, its bottom row its start; a rule marks elided gaps.
 */
static const unsigned char term_colours[] = { 16, 53, 90, 127, 161, 203, 209, 215, 222, 229 };
static const char term_ascii[] = ".-:=+*#%@@";
#define TERM_NAN_COLOUR	240

static int term_level(double v)
{
	int l = (int)(v / 10.0);

	return l < 0 ? 0 : l > 9 ? 9 : l;
}

static void term_row_label(const struct heatmap *h, unsigned int row, char *buf, size_t len)
{
	char sz[32], name[TERM_MARGIN];

	buf[0] = '\0';
	for (unsigned int i = 0; i < h->nb; i++) {
		const struct block *b = &h->b[i];

		if (row == b->bin0 + b->nbins - 1) {
			tic_label(name, sizeof(name), block_label(b));
			snprintf(buf, len, "%.*s (%s)", (int)(len - 14), name,
				 fmt_bytes(b->end - b->start, sz, sizeof(sz)));
		} else if (row == b->bin0) {
			snprintf(buf, len, "0x%" PRIx64, b->start);
		}
	}
}

static void write_terminal(struct heatmap *h, FILE *out)
{
	int colour = h->o->terminal == 1;
	char label[TERM_MARGIN], sz[32];

	fprintf(out, "daptrace heatmap of %s, pid %d: time across (%.2f-%.2f s), "
		"address up\n", h->o->input, (int)h->pid, (double)h->tmin / 1e9,
		(double)h->tmax / 1e9);
	for (unsigned int r = h->abins; r-- > 0;) {
		int last = -2;

		term_row_label(h, r, label, sizeof(label));
		fprintf(out, "%*s|", TERM_MARGIN - 1, label);
		for (unsigned int t = 0; t < h->tbins; t++) {
			int nan = h->cnt[t] <= 0 || !h->mapped[r];
			int l = nan ? -1 : term_level(h->grid[(size_t)t * h->abins + r] / h->cnt[t]);

			if (!colour) {
				fputc(nan ? ' ' : term_ascii[l], out);
				continue;
			}
			if (l != last)
				fprintf(out, "\033[48;5;%um", nan ? TERM_NAN_COLOUR : term_colours[l]);
			fputc(' ', out);
			last = l;
		}
		fputs(colour ? "\033[0m\n" : "\n", out);
		for (unsigned int i = 1; i < h->nb; i++)
			if (r == h->b[i].bin0)
				fprintf(out, "%*s~ %s gap elided ~\n", TERM_MARGIN - 1, "",
					fmt_bytes(h->b[i].start - h->b[i - 1].end, sz, sizeof(sz)));
	}
	fprintf(out, "%*s+%.*s\n", TERM_MARGIN - 1, "", (int)h->tbins,
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------"
		"--------------------------------------------------------------------------------");
	snprintf(label, sizeof(label), "%.2fs", (double)h->tmin / 1e9);
	snprintf(sz, sizeof(sz), "%.2fs", (double)h->tmax / 1e9);
	fprintf(out, "%*s %-12s%*s\n", TERM_MARGIN - 1, "", label,
		h->tbins > 12 ? (int)h->tbins - 12 : 1, sz);
	fprintf(out, "access frequency 0%% ");
	for (int l = 0; l < 10; l++) {
		if (colour)
			fprintf(out, "\033[48;5;%um ", term_colours[l]);
		else
			fputc(term_ascii[l], out);
	}
	if (colour)
		fprintf(out, "\033[0m 100%%\n\033[48;5;%um  \033[0m unmapped or no data\n",
			TERM_NAN_COLOUR);
	else
		fprintf(out, " 100%%\nblank: unmapped or no data\n");
}

/*
 * The node holding most of a block's resident bytes over the record, -1
 * without placement; @pct gets its share.
 */
static int block_node(const struct block *b, double *pct)
{
	double tot = 0;
	int best = -1;

	for (int n = 0; n < REC_NODES; n++) {
		tot += b->node_bytes[n];
		if (b->node_bytes[n] > 0 && (best < 0 || b->node_bytes[n] > b->node_bytes[best]))
			best = n;
	}
	*pct = best < 0 ? 0 : 100.0 * b->node_bytes[best] / tot;
	return best;
}

static void write_output(struct heatmap *h, FILE *out, FILE *tics)
{
	double span_s = (double)(h->tmax - h->tmin) / 1e9, col_s;
	char sz[32], lbl[40];

	col_s = span_s / h->tbins;
	fprintf(out, "# daptrace heatmap of %s, pid %d\n", h->o->input, (int)h->pid);
	fprintf(out, "# columns: time_s address_bin access_frequency_percent\n");
	fprintf(out, "# address bins stack the blocks below; unmapped gaps between "
		"blocks are elided\n");
	for (unsigned int i = 0; i < h->nb; i++) {
		const struct block *b = &h->b[i];

		fprintf(out, "# block %u: bins %u-%u: 0x%" PRIx64 "-0x%" PRIx64 " (%s) %s\n",
			i, b->bin0, b->bin0 + b->nbins - 1, b->start, b->end,
			fmt_bytes(b->end - b->start, sz, sizeof(sz)), block_label(b));
		if (b->node_bytes[0] + b->node_bytes[1] + b->node_bytes[2] +
		    b->node_bytes[3] > 0) {
			fprintf(out, "# block %u resident by node:", i);
			for (int n = 0; n < REC_NODES; n++)
				if (b->node_bytes[n] > 0)
					fprintf(out, " node%d %.1f%%", n, 100.0 *
						b->node_bytes[n] / (b->node_bytes[0] +
						b->node_bytes[1] + b->node_bytes[2] +
						b->node_bytes[3]));
			fputc('\n', out);
		}
		if (i + 1 < h->nb)
			fprintf(out, "# gap elided: %s\n",
				fmt_bytes(h->b[i + 1].start - b->end, sz, sizeof(sz)));
	}
	for (unsigned int t = 0; t < h->tbins; t++) {
		double x = (double)h->tmin / 1e9 + (t + 0.5) * col_s;

		for (unsigned int a = 0; a < h->abins; a++) {
			if (h->cnt[t] <= 0 || !h->mapped[a])
				fprintf(out, "%.6f %u NaN\n", x, a);
			else
				fprintf(out, "%.6f %u %.3f\n", x, a,
					h->grid[(size_t)t * h->abins + a] / h->cnt[t]);
		}
		fputc('\n', out);
	}
	if (!tics)
		return;
	fprintf(tics, "set xrange [%.6f:%.6f]\n", (double)h->tmin / 1e9,
		(double)h->tmax / 1e9);
	fprintf(tics, "set yrange [-0.5:%u.5]\nset ytics (", h->abins - 1);
	for (unsigned int i = 0; i < h->nb; i++) {
		double pct;
		int nd = block_node(&h->b[i], &pct);
		char nl[24] = "";

		tic_label(lbl, sizeof(lbl), block_label(&h->b[i]));
		/* annotate the block with its main NUMA node ("%%": a format) */
		if (nd >= 0)
			snprintf(nl, sizeof(nl), " [N%d %.0f%%%%]", nd, pct);
		fprintf(tics, "%s\"0x%" PRIx64 " %s (%s)%s\" %.1f", i ? ", " : "",
			h->b[i].start, lbl, fmt_bytes(h->b[i].end - h->b[i].start, sz,
						      sizeof(sz)), nl, h->b[i].bin0 - 0.5);
	}
	fprintf(tics, ")\n");
	for (unsigned int i = 0; i < h->nb; i++)
		offset_tics(&h->b[i], tics);
	for (unsigned int i = 1; i < h->nb; i++) {
		double y = h->b[i].bin0 - 0.5;

		fprintf(tics, "set arrow from graph 0, first %.1f to graph 1, first %.1f "
			"nohead front lc rgb 'white' lw 1.5 dt 2\n", y, y);
		fprintf(tics, "set label \"%s gap elided\" at graph 0.01, first %.1f "
			"front left offset 0,0.7 tc rgb 'white' font ',8' boxed\n",
			fmt_bytes(h->b[i].start - h->b[i - 1].end, sz, sizeof(sz)), y);
	}
}

static void heatmap_free(struct heatmap *h)
{
	for (unsigned int i = 0; h->b && i < h->nb; i++) {
		free(h->b[i].label);
		free(h->b[i].label_any);
	}
	free(h->mapped);
	free(h->b);
	free(h->pc);
	free(h->iv);
	free(h->tmp);
	free(h->grid);
	free(h->cnt);
	free(h->row);
}

int report_heatmap(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct heatmap h = { .o = o, .pid = o->pid };
	struct rec_info info;
	int ret;

	ret = report_read(o, pass1, &h, &info);
	rec_info_free(&info);
	if (ret)
		goto out;
	if (!h.npc) {
		char what[64];

		snprintf(what, sizeof(what), o->pid ? "regions to draw" :
			 "regions of pid %d (the first target) to draw", (int)h.pid);
		ret = report_nothing(o, what);
		goto out;
	}
	/* nothing known to be mapped (no labels): draw everything monitored */
	if (mapped_ranges(&h, 0)) {
		ret = fail("report", "out of memory");
		goto out;
	}
	h.all_mapped = !h.niv;
	if (h.all_mapped && mapped_ranges(&h, 1)) {
		ret = fail("report", "out of memory");
		goto out;
	}
	if (make_blocks(&h)) {
		ret = fail("report", "out of memory");
		goto out;
	}
	assign_bins(&h);
	if (mark_mapped(&h)) {
		ret = fail("report", "out of memory");
		goto out;
	}
	/* the terminal picture fills its width: windows span several columns */
	h.tbins = h.nsnap < o->time_bins && !o->terminal ? (unsigned int)h.nsnap :
		  o->time_bins;
	h.grid = calloc((size_t)h.tbins * h.abins, sizeof(*h.grid));
	h.cnt = calloc(h.tbins, sizeof(*h.cnt));
	h.row = calloc(h.abins, sizeof(*h.row));
	if (!h.grid || !h.cnt || !h.row) {
		ret = fail("report", "out of memory");
		goto out;
	}
	ret = report_read(o, pass2, &h, &info);
	rec_info_free(&info);
	if (!ret && o->json)
		write_json(&h, out);
	else if (!ret && o->terminal)
		write_terminal(&h, out);
	else if (!ret)
		write_output(&h, out, tics);
out:
	heatmap_free(&h);
	return ret;
}
