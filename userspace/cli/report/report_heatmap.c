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
 * stays visible, a band of empty rows between two for the elided gap (in a
 * picture; the terminal draws a line of its own).  Pass 2 bins every
 * snapshot into that grid.  Rows wholly in unmapped holes inside a block
 * are written as NaN (drawn grey), so idle mapped memory (0, black) and
 * holes look different; memory that cannot be observed is kept apart and
 * drawn in a colour of its own.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report_heatmap.h"
#include "common/units.h"

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
	if (s->has_probes)
		acc_total_add(&h->acc, &s->probes);
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
		h->has_unobs |= !rec_observable(r);
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
 * Elide the @max_blocks - 1 largest gaps, if they are at least an eighth of
 * the mapped total; blocks across the others are joined.
 */
static int make_blocks(struct heatmap *h, unsigned int max_blocks)
{
	size_t ngaps = h->niv - 1, keep = max_blocks - 1, *idx;
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

/*
 * @abins rows for the blocks: proportional to size, but each at least a
 * quarter share and @min rows (room for its labels); the bands between
 * blocks come on top.
 */
static void assign_bins(struct heatmap *h, unsigned int abins, unsigned int min)
{
	unsigned int nb = h->nb, left, bin = 0;
	long double total = 0;

	if (abins < nb)
		abins = nb;
	if (min < abins / (4 * nb))
		min = abins / (4 * nb);
	if (min * nb > abins)
		min = abins / nb;
	if (!min)
		min = 1;
	for (unsigned int i = 0; i < nb; i++)
		total += h->b[i].end - h->b[i].start;
	left = abins - min * nb;
	for (unsigned int i = 0; i < nb; i++) {
		struct block *b = &h->b[i];
		unsigned int extra = (unsigned int)((b->end - b->start) / total * left);
		uint64_t size = b->end - b->start;

		if (i == nb - 1)
			extra = abins - (bin - i * h->gap_rows) - min;	/* rounding leftovers */
		b->nbins = min + extra;
		if (b->nbins > size)
			b->nbins = (unsigned int)size;
		/* rounded up without size + n - 1: a block may end at 2^64 - 1 */
		b->width = size / b->nbins + !!(size % b->nbins);
		b->nbins = (unsigned int)(size / b->width + !!(size % b->width));
		b->bin0 = bin;
		bin += b->nbins + (i + 1 < nb ? h->gap_rows : 0);
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

const char *heatmap_block_label(const struct block *b)
{
	return b->label ? b->label : b->label_any ? b->label_any : "[anon]";
}

static int pass2(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct heatmap *h = arg;
	uint64_t span = h->tmax > h->tmin ? h->tmax - h->tmin : 1;
	uint64_t t0 = s->start_ns > h->tmin ? s->start_ns - h->tmin : 0;
	uint64_t t1 = s->end_ns > h->tmin ? s->end_ns - h->tmin : 0;
	double *row = h->row, *urow = h->urow, col_ns = (double)span / h->tbins;
	unsigned int tb0, tb1;

	(void)info;
	memset(row, 0, h->abins * sizeof(*row));
	if (urow)
		memset(urow, 0, h->abins * sizeof(*urow));
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		int observable = rec_observable(r);
		unsigned int bi;
		double f;

		if (r->pid != h->pid)
			continue;
		bi = find_block(h, r->start);
		f = observable ? report_freq(s, r) : 0;
		/* a region may span elided gaps: draw its part in each block */
		for (; bi < h->nb && h->b[bi].start < r->end; bi++) {
			struct block *b = &h->b[bi];
			uint64_t start = r->start > b->start ? r->start : b->start;
			uint64_t end = r->end < b->end ? r->end : b->end;
			double *dst = observable ? row : urow;
			double w = observable ? f : 1;

			consider_label(b, r);
			for (int n = 0; s->placement && s->nr_samples && n < REC_NODES; n++)
				b->node_bytes[n] += (double)(end - start) *
						    r->node_samples[n] / s->nr_samples;
			if (w <= 0 || !dst)
				continue;
			for (uint64_t j = (start - b->start) / b->width;
			     j < b->nbins && j * b->width < end - b->start; j++) {
				uint64_t lo = b->start + j * b->width;
				uint64_t hi = b->end - lo > b->width ? lo + b->width : b->end;
				uint64_t olo = start > lo ? start : lo;

				dst[b->bin0 + j] += w * (double)((end < hi ? end : hi) - olo) /
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
		if (urow)
			for (unsigned int a = 0; a < h->abins; a++)
				h->unobs[(size_t)tb * h->abins + a] += w * urow[a];
	}
	return 0;
}

double heatmap_unobs(const struct heatmap *h, unsigned int t, unsigned int a)
{
	if (!h->unobs || h->cnt[t] <= 0)
		return 0;
	return h->unobs[(size_t)t * h->abins + a] / h->cnt[t];
}

double heatmap_cell(const struct heatmap *h, unsigned int t, unsigned int a)
{
	double u = heatmap_unobs(h, t, a);

	if (h->cnt[t] <= 0 || !h->mapped[a] || u >= HEATMAP_UNOBS_SHARE)
		return NAN;
	/* over the observable part of the cell */
	return h->grid[(size_t)t * h->abins + a] / h->cnt[t] / (1 - u);
}

int heatmap_block_node(const struct block *b, double *pct)
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

void heatmap_short_label(char *buf, size_t len, const char *label, size_t max)
{
	const char *base = label;
	size_t n = 0, l;

	if (label[0] == '/' && strrchr(label, '/')[1])
		base = strrchr(label, '/') + 1;
	for (const char *p = base; *p; p++)
		if ((unsigned char)*p < 32 || (unsigned char)*p > 126) {
			buf[0] = '\0';
			return;
		}
	if (max + 1 > len)
		max = len - 1;
	l = strlen(base);
	for (; *base && n < max; base++)
		buf[n++] = plot_unsafe((unsigned char)*base) ? '?' : *base;
	buf[n] = '\0';
	if (l > max && max > 3)
		memcpy(buf + max - 3, "...", 3);
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
	free(h->unobs);
	free(h->cnt);
	free(h->row);
	free(h->urow);
}

/* Lines the terminal picture needs besides its rows: see report_heatmap_term.c. */
#define TERM_FIXED_LINES	5

int report_heatmap(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct heatmap h = { .o = o, .pid = o->pid };
	unsigned int max_blocks = o->max_blocks, abins = o->addr_bins, min_rows;
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
	/* a terminal fits each block's two label rows and its gap line */
	if (o->terminal && o->term_rows && max_blocks > (o->term_rows - TERM_FIXED_LINES) / 3)
		max_blocks = (o->term_rows - TERM_FIXED_LINES) / 3 ? : 1;
	if (make_blocks(&h, max_blocks)) {
		ret = fail("report", "out of memory");
		goto out;
	}
	if (o->terminal) {
		h.gap_rows = 0;
		heatmap_term_fit(&h, &abins, &h.tbins);
		/* name, size and start address on rows of their own if they fit */
		min_rows = abins >= 3 * h.nb ? 3 : 2;
	} else {
		/* a band to write the gap's size in, rows for a block's labels */
		h.gap_rows = abins / 40 ? abins / 40 : 1;
		min_rows = abins / 20 ? abins / 20 : 1;
		h.tbins = h.nsnap < o->time_bins ? (unsigned int)h.nsnap : o->time_bins;
	}
	assign_bins(&h, abins, min_rows);
	if (mark_mapped(&h)) {
		ret = fail("report", "out of memory");
		goto out;
	}
	h.grid = calloc((size_t)h.tbins * h.abins, sizeof(*h.grid));
	h.cnt = calloc(h.tbins, sizeof(*h.cnt));
	h.row = calloc(h.abins, sizeof(*h.row));
	if (h.has_unobs) {
		h.unobs = calloc((size_t)h.tbins * h.abins, sizeof(*h.unobs));
		h.urow = calloc(h.abins, sizeof(*h.urow));
	}
	if (!h.grid || !h.cnt || !h.row || (h.has_unobs && (!h.unobs || !h.urow))) {
		ret = fail("report", "out of memory");
		goto out;
	}
	ret = report_read(o, pass2, &h, &info);
	rec_info_free(&info);
	if (!ret && o->json)
		heatmap_write_json(&h, out);
	else if (!ret && o->terminal)
		heatmap_write_terminal(&h, out);
	else if (!ret)
		heatmap_write_data(&h, out, tics);
out:
	heatmap_free(&h);
	return ret;
}
