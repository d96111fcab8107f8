// SPDX-License-Identifier: GPL-2.0-only
/*
 * report heatmap --terminal: the grid with the highest addresses on top,
 * like the picture, in exactly the terminal's size ($COLUMNS x $LINES, or
 * the tty's): a title line, the rows, a line per elided gap, a time axis
 * with its labels, a legend, and one line left for the prompt.  Nothing is
 * wider than the terminal minus its last column (writing that one wraps
 * some terminals).
 *
 * Colour: xterm-256 backgrounds along a magma-like ramp, grey where
 * unmapped or no data, green where not observable; ASCII: a density ramp,
 * blank and 'x'.  Each block's top row names its mapping (its size under
 * the name if it has room), its bottom row gives its start address.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "report_heatmap.h"
#include "common/units.h"

static const unsigned char term_colours[] = { 16, 53, 90, 127, 161, 203, 209, 215, 222, 229 };
static const char term_ascii[] = ".-:=+*#%@@";
#define TERM_NAN_COLOUR		240
#define TERM_UNOBS_COLOUR	29
#define TERM_UNOBS_CHAR		'x'
/* title, time axis, its labels, the prompt's line; + legend and gap lines */
#define TERM_LINES_BESIDES	4

/* Columns left of the picture for the labels, its '|' included. */
static unsigned int term_margin(unsigned int width)
{
	unsigned int m = width / 4;

	return width < 100 ? 24 : m > 40 ? 40 : m;
}

/* The legend, one part per line or all in one; returns its line count. */
static int legend(const struct heatmap *h, FILE *out, unsigned int width)
{
	int colour = h->o->terminal == 1;
	/* the visible length of the parts and their separators */
	size_t ramp = 25, nan = colour ? 22 : 26, unobs = h->unobs ? 2 + 17 : 0;
	int one_line = ramp + 2 + nan + unobs <= width - 1;

	if (!out)
		return one_line ? 1 : h->unobs ? 3 : 2;
	fputs("0% ", out);
	for (int l = 0; l < 10; l++) {
		if (colour)
			fprintf(out, "\033[48;5;%um ", term_colours[l]);
		else
			fputc(term_ascii[l], out);
	}
	fputs(colour ? "\033[0m 100% access" : " 100% access", out);
	fputs(one_line ? "  " : "\n", out);
	if (colour)
		fprintf(out, "\033[48;5;%um  \033[0m unmapped or no data", TERM_NAN_COLOUR);
	else
		fputs("blank: unmapped or no data", out);
	if (h->unobs) {
		fputs(one_line ? "  " : "\n", out);
		if (colour)
			fprintf(out, "\033[48;5;%um  \033[0m not observable", TERM_UNOBS_COLOUR);
		else
			fprintf(out, "%c: not observable", TERM_UNOBS_CHAR);
	}
	fputc('\n', out);
	return one_line ? 1 : h->unobs ? 3 : 2;
}

void heatmap_term_fit(const struct heatmap *h, unsigned int *rows, unsigned int *cols)
{
	const struct report_opts *o = h->o;
	unsigned int w = o->term_width, lines;

	*cols = o->term_fit_cols && w > term_margin(w) + 2 ? w - term_margin(w) - 1 :
		o->time_bins;
	if (!o->term_rows)
		return;		/* --addr-bins: as many rows as asked */
	lines = TERM_LINES_BESIDES + legend(h, NULL, w) + h->nb - 1;
	*rows = o->term_rows > lines + 2 * h->nb ? o->term_rows - lines : 2 * h->nb;
}

/* @buf right-aligned in @width columns (cut on the left if longer). */
static void put_label(FILE *out, const char *buf, unsigned int width)
{
	size_t l = strlen(buf);

	if (l > width)
		buf += l - width;
	fprintf(out, "%*s", (int)width, buf);
}

static void row_label(const struct heatmap *h, unsigned int row, char *buf, size_t len,
		      unsigned int width)
{
	char name[96], sz[32];

	buf[0] = '\0';
	for (unsigned int i = 0; i < h->nb; i++) {
		const struct block *b = &h->b[i];
		unsigned int top = b->bin0 + b->nbins - 1;

		if (row < b->bin0 || row > top)
			continue;
		fmt_bytes(b->end - b->start, sz, sizeof(sz));
		if (row == top && b->nbins >= 3) {
			heatmap_short_label(name, sizeof(name), heatmap_block_label(b), width);
			snprintf(buf, len, "%s", name);
		} else if (row == top) {
			/* two rows: name and size on the top one */
			heatmap_short_label(name, sizeof(name), heatmap_block_label(b),
					    width - 1 - strlen(sz));
			snprintf(buf, len, "%s %s", name, sz);
		} else if (row == top - 1 && b->nbins >= 3) {
			snprintf(buf, len, "%s", sz);
		} else if (row == b->bin0) {
			snprintf(buf, len, "0x%" PRIx64, b->start);
		}
	}
}

/* A round step (1, 2 or 5 x 10^k s) giving ticks at least @min_cols apart. */
static double time_step(double span_s, unsigned int cols, unsigned int min_cols)
{
	double want = span_s * min_cols / (cols ? cols : 1), p;

	if (want <= 0)
		return 1;
	p = pow(10, floor(log10(want)));
	return want <= p ? p : want <= 2 * p ? 2 * p : want <= 5 * p ? 5 * p : 10 * p;
}

static void time_axis(const struct heatmap *h, FILE *out, unsigned int margin)
{
	double t0 = (double)h->tmin / 1e9, span = (double)(h->tmax - h->tmin) / 1e9;
	double step = time_step(span, h->tbins, 12), first = ceil(t0 / step) * step;
	char axis[1024], labels[1024], num[32];
	unsigned int n = h->tbins < sizeof(axis) - 1 ? h->tbins : sizeof(axis) - 1;

	memset(axis, '-', n);
	memset(labels, ' ', n);
	axis[n] = labels[n] = '\0';
	for (double t = first; span > 0 && t <= t0 + span + 1e-9; t += step) {
		unsigned int c = (unsigned int)lround((t - t0) / span * (n - 1));
		size_t l;

		if (c >= n)
			continue;
		axis[c] = '+';
		snprintf(num, sizeof(num), "%g", t);
		l = strlen(num);
		/* left-aligned at the tick, if it fits after the previous one */
		if (c + l + 1 <= n && (c < 2 || labels[c - 1] == ' ') && labels[c] == ' ')
			memcpy(labels + c, num, l);
	}
	fprintf(out, "%*s+%s\n", (int)margin - 1, "", axis);
	fprintf(out, "%*s %s\n", (int)margin - 1, "time (s)", labels);
}

void heatmap_write_terminal(const struct heatmap *h, FILE *out)
{
	int colour = h->o->terminal == 1;
	unsigned int width = h->o->term_width, margin = term_margin(width);
	const char *base = strrchr(h->o->input, '/') ? strrchr(h->o->input, '/') + 1 :
			   h->o->input;
	char title[1024], label[160], sz[32];

	if (!h->o->term_fit_cols && h->tbins + margin + 1 > width)
		width = h->tbins + margin + 1;
	/* the explanation only if it fits, the rest cut with "..." if need be */
	snprintf(title, sizeof(title), "daptrace heatmap of %s, pid %d, %.2f-%.2f s", base,
		 (int)h->pid, (double)h->tmin / 1e9, (double)h->tmax / 1e9);
	if (strlen(title) + 25 <= width - 1)
		strcat(title, ": time across, address up");
	if (strlen(title) > width - 1)
		strcpy(title + width - 4, "...");
	fprintf(out, "%s\n", title);
	for (unsigned int r = h->abins; r-- > 0;) {
		int last = -3;

		row_label(h, r, label, sizeof(label), margin - 1);
		put_label(out, label, margin - 1);
		fputc('|', out);
		for (unsigned int t = 0; t < h->tbins; t++) {
			double v = heatmap_cell(h, t, r);
			int unobs = h->mapped[r] && heatmap_unobs(h, t, r) >= HEATMAP_UNOBS_SHARE;
			int l = unobs ? -2 : isnan(v) ? -1 : (int)(v / 10.0);

			if (l > 9)
				l = 9;
			if (!colour) {
				fputc(l == -2 ? TERM_UNOBS_CHAR : l == -1 ? ' ' : term_ascii[l], out);
				continue;
			}
			if (l != last)
				fprintf(out, "\033[48;5;%um", l == -2 ? TERM_UNOBS_COLOUR :
					l == -1 ? TERM_NAN_COLOUR : term_colours[l]);
			fputc(' ', out);
			last = l;
		}
		fputs(colour ? "\033[0m\n" : "\n", out);
		for (unsigned int i = 1; i < h->nb; i++)
			if (r == h->b[i].bin0) {
				snprintf(title, sizeof(title), "~ %s gap elided ~",
					 fmt_bytes(h->b[i].start - h->b[i - 1].end, sz, sizeof(sz)));
				fprintf(out, "%*s%.*s\n", (int)margin, "",
					(int)(width - 1 - margin), title);
			}
	}
	time_axis(h, out, margin);
	legend(h, out, width);
}
