// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every picture `daptrace report --plot` draws, rendered as PNG and SVG
 * from a record with everything a picture must show: far-apart blocks with
 * long names, a moving hot spot, memory that cannot be observed, two NUMA
 * nodes, physical addresses, footprints, data structures.  Design checks
 * that would have caught issue 30's defects:
 * - gnuplot exits 0 and prints nothing (a script error, a warning);
 * - the PNG has the terminal's size, and its outer frame is background:
 *   nothing (a label, the axis title) runs off the canvas;
 * - in the SVG every text lies on the canvas and no two texts overlap
 *   (widths estimated from the font size: a bound, not a measure);
 * - what the picture must explain is there: the key entries, the gap
 *   bands, the colours of "unmapped" and "not observable".
 */
#include <ctype.h>
#include <inttypes.h>
#include <png.h>
#include <string.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "run_cmd.h"

#define W	1200
#define H	700

static char out[1 << 16];

/*
 * A record to draw: see the top comment.  Without @rich, as daptrace wrote
 * them before this commit: no flags column, footprints nor intervals.
 */
static void write_rich_record(const char *path, int rich)
{
	static const struct {
		uint64_t start, end;
		const char *label;
		int unobs, pieces;
	} map[] = {
		{ 0x555555554000, 0x555555654000,
		  "/usr/lib/x86_64-linux-gnu/a-rather-long-library-name.so.1", 0, 1 },
		{ 0x555556000000, 0x555556200000, "[heap]", 0, 2 },
		{ 0x7f0000000000, 0x7f0004000000, "[anon]", 0, 8 },
		{ 0x7f0004000000, 0x7f0005000000, "/dev/hugepages/guest-ram", 1, 1 },
		{ 0x7ffc002d1000, 0x7ffc002f2000, "[stack]", 0, 1 },
	};
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fprintf(f, "# daptrace-record v2\n#meta,command,./app --an argument\n"
		"#meta,kernel,6.12.0\n#meta,sample_us,5000\n#meta,aggr_us,100000\n"
		"#target,4242,app\ntime_ns,seq,pid,start,end,nr_accesses,age,nr_samples,"
		"nr_present,node0,node1,node2,node3,phys_addr,%slabel\n",
		rich ? "flags," : "");
	for (int w = 1; w <= 60; w++) {
		uint64_t t = (uint64_t)w * 100000000;
		int n = 0;

		for (size_t m = 0; m < sizeof(map) / sizeof(map[0]); m++)
			n += map[m].pieces;
		if (rich)
			fprintf(f, "#footprint,4242,%" PRIu64 ",%llu,%d\n", t, 3ULL << 30,
				(100 + w) << 20);
		fprintf(f, "#snap,%d,%" PRIu64 ",%" PRIu64 ",%d,20,0,0%s\n", w,
			t - 100000000, t, n, rich ? ",5000,100000" : "");
		for (size_t m = 0; m < sizeof(map) / sizeof(map[0]); m++) {
			uint64_t step = (map[m].end - map[m].start) / map[m].pieces;

			for (int k = 0; k < map[m].pieces; k++) {
				int acc = map[m].unobs ? 0 : map[m].pieces == 8 ?
					  (k == (w / 8) % 8 ? 20 : w % 3) : (w * 7 + k) % 21;
				int n0 = map[m].pieces == 8 ? 20 - k : 20;

				fprintf(f, "%" PRIu64 ",%d,4242,%" PRIu64 ",%" PRIu64 ",%d,%d,20,"
					"20,%d,%d,0,0,%" PRIu64 ",", t, w,
					map[m].start + k * step, map[m].start + (k + 1) * step,
					acc, w % 5, n0, 20 - n0,
					(uint64_t)0x100000000 + (m * 8 + k) * 0x1000000 + (uint64_t)w * 0x1000);
				if (rich)
					fprintf(f, "%d,", map[m].unobs);
				fprintf(f, "\"%s\"\n", map[m].label);
			}
		}
	}
	fputs("#end,reason,test\n#eof\n", f);
	fclose(f);
}

static void write_objects(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fputs("# daptrace-objects v1\n#meta,pid,4242\n#meta,partial,no\n"
	      "#meta,linkage,dynamic\n#meta,tracer,yes\n"
	      "kind,name,start,end,size,alloc_ns,free_ns,tid,callsite,function,source,module\n", f);
	fprintf(f, "heap,table@a.c:1,%llu,%llu,%llu,0,,4242,0x1,table,a.c:1,\n",
		0x7f0000000000ULL, 0x7f0001000000ULL, 0x1000000ULL);
	fprintf(f, "heap,index@a.c:2,%llu,%llu,%llu,1000000000,4000000000,4242,0x2,index,"
		"a.c:2,\n", 0x7f0002000000ULL, 0x7f0003000000ULL, 0x1000000ULL);
	fputs("#eof\n", f);
	fclose(f);
}

struct png {
	unsigned int w, h;
	unsigned char *rgb;
};

static int png_load(const char *path, struct png *p)
{
	png_image img;

	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_file(&img, path))
		return -1;
	img.format = PNG_FORMAT_RGB;
	p->w = img.width;
	p->h = img.height;
	p->rgb = malloc(PNG_IMAGE_SIZE(img));
	if (!p->rgb || !png_image_finish_read(&img, NULL, p->rgb, 0, NULL)) {
		png_image_free(&img);
		free(p->rgb);
		return -1;
	}
	return 0;
}

static const unsigned char *px(const struct png *p, unsigned int x, unsigned int y)
{
	return p->rgb + 3 * ((size_t)y * p->w + x);
}

/* Pixels off the white background in the outer @m pixels of the picture. */
static unsigned int frame_ink(const struct png *p, unsigned int m)
{
	unsigned int n = 0;

	for (unsigned int y = 0; y < p->h; y++)
		for (unsigned int x = 0; x < p->w; x++) {
			const unsigned char *c = px(p, x, y);

			if (x >= m && y >= m && x < p->w - m && y < p->h - m)
				continue;
			n += c[0] < 200 || c[1] < 200 || c[2] < 200;
		}
	return n;
}

static unsigned int count_colour(const struct png *p, unsigned int rgb)
{
	unsigned int n = 0;

	for (size_t i = 0; i < (size_t)p->w * p->h; i++)
		n += p->rgb[3 * i] == (rgb >> 16) && p->rgb[3 * i + 1] == ((rgb >> 8) & 0xff) &&
		     p->rgb[3 * i + 2] == (rgb & 0xff);
	return n;
}

struct box {
	double x0, y0, x1, y1;
	char text[160];
};

/* Characters of @s with &amp; and the like counted once. */
static size_t text_len(const char *s, const char *end)
{
	size_t n = 0;

	for (; s < end; s++, n++)
		if (*s == '&')
			s = strchr(s, ';') ? strchr(s, ';') : end - 1;
	return n;
}

/*
 * The texts of a gnuplot SVG: <g transform="translate(X,Y) [rotate(R)]"
 * ... font-size="F" ... text-anchor="A"> <text>T</text>.  @em is the
 * assumed character width in font sizes.
 */
static size_t svg_texts(const char *svg, struct box *b, size_t max, double em)
{
	size_t n = 0;

	for (const char *p = svg; n < max && (p = strstr(p, "<g transform=\"translate(")); p++) {
		double x, y, f = 11, w, r = 0;
		const char *fs, *an, *t, *te, *gend = strchr(p, '>');

		if (sscanf(p, "<g transform=\"translate(%lf,%lf) rotate(%lf)", &x, &y, &r) < 2 ||
		    !gend)
			continue;
		fs = strstr(p, "font-size=\"");
		an = strstr(p, "text-anchor=\"");
		t = strstr(gend, "<text");
		if (!t || (t = strchr(t, '>')) == NULL || !(te = strstr(t, "</text>")))
			continue;
		if (fs && fs < gend)
			f = atof(fs + 11);
		w = em * f * (double)text_len(t + 1, te);
		b[n].x0 = x;
		if (an && an < gend && !strncmp(an + 13, "end", 3))
			b[n].x0 = x - w;
		else if (an && an < gend && !strncmp(an + 13, "middle", 6))
			b[n].x0 = x - w / 2;
		b[n].x1 = b[n].x0 + w;
		b[n].y0 = y - 0.75 * f;
		b[n].y1 = y + 0.2 * f;
		if (r != 0) {	/* a quarter turn (axis titles, centred): vertical */
			b[n].x0 = x - 0.75 * f;
			b[n].x1 = x + 0.2 * f;
			b[n].y0 = y - w / 2;
			b[n].y1 = y + w / 2;
		}
		snprintf(b[n].text, sizeof(b[n].text), "%.*s", (int)(te - t - 1), t + 1);
		n++;
	}
	return n;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, n + 1);
	if (s && fread(s, 1, n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

FIXTURE(plot) {
	char dir[64], rec[128], plain[128];
};

FIXTURE_SETUP(plot)
{
	SKIP_UNLESS_DAPTRACE_BIN();
	if (system("gnuplot --version >/dev/null 2>&1"))
		SKIP(return, "gnuplot not installed");
	strcpy(self->dir, "/tmp/daptrace-plot-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->rec, sizeof(self->rec), "%s/rich.csv", self->dir);
	snprintf(self->plain, sizeof(self->plain), "%s/plain.csv", self->dir);
	write_rich_record(self->rec, 1);
	write_rich_record(self->plain, 0);
	snprintf(out, sizeof(out), "%s/rich.objects.csv", self->dir);
	write_objects(out);
}

FIXTURE_TEARDOWN(plot)
{
	char cmd[128];

	/* DAPTRACE_KEEP_TMP=1: leave the pictures to look at */
	if (self->dir[0] && !getenv("DAPTRACE_KEEP_TMP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
		if (system(cmd))
			return;
	}
}

/*
 * Render @mode of @rec to @pic; on stderr (where gnuplot's messages go)
 * nothing but "wrote" (a mode's summary goes to stdout).
 */
static void render(struct __test_metadata *_metadata, const char *mode, const char *rec,
		   const char *pic)
{
	char cmd[1024], err[512], want[256];
	char *text;

	snprintf(err, sizeof(err), "%s.err", pic);
	snprintf(cmd, sizeof(cmd), "'%s' report %s --plot '%s' '%s' > /dev/null 2> '%s'",
		 daptrace_bin(), mode, pic, rec, err);
	ASSERT_EQ(0, WEXITSTATUS(system(cmd))) TH_LOG("%s: %s", mode, slurp(err));
	snprintf(want, sizeof(want), "daptrace report: wrote %s\n", pic);
	text = slurp(err);
	EXPECT_STREQ(want, text ? text : "") TH_LOG("%s %s: gnuplot said something", mode, pic);
	free(text);
}

static void check_png(struct __test_metadata *_metadata, const char *pic, struct png *p)
{
	ASSERT_EQ(0, png_load(pic, p)) TH_LOG("%s: not a PNG", pic);
	EXPECT_EQ(W, p->w);
	EXPECT_EQ(H, p->h);
	/* a label or an axis title cut at the edge leaves ink in the frame */
	EXPECT_EQ(0, frame_ink(p, 3)) TH_LOG("%s: something runs off the canvas", pic);
}

static void check_svg(struct __test_metadata *_metadata, const char *pic, char **text)
{
	static struct box b[1024];
	size_t n, m;

	*text = slurp(pic);
	ASSERT_NE(NULL, *text);
	EXPECT_NE(NULL, strstr(*text, "viewBox=\"0 0 1200 700\"")) TH_LOG("%s", pic);
	/* generous widths (0.62 em): every text on the canvas */
	n = svg_texts(*text, b, 1024, 0.62);
	EXPECT_GT(n, 10) TH_LOG("%s: only %zu texts", pic, n);
	for (size_t i = 0; i < n; i++) {
		EXPECT_TRUE(b[i].x0 >= 0 && b[i].x1 <= W && b[i].y0 >= 0 && b[i].y1 <= H)
			TH_LOG("%s: '%s' at %.0f-%.0f x %.0f-%.0f is off the canvas", pic,
			       b[i].text, b[i].x0, b[i].x1, b[i].y0, b[i].y1);
	}
	/* tight widths (0.48 em): no text over another */
	m = svg_texts(*text, b, 1024, 0.48);
	for (size_t i = 0; i < m; i++) {
		for (size_t j = i + 1; j < m; j++) {
			EXPECT_FALSE(b[i].x0 < b[j].x1 && b[j].x0 < b[i].x1 &&
				     b[i].y0 < b[j].y1 && b[j].y0 < b[i].y1)
				TH_LOG("%s: '%s' and '%s' overlap", pic, b[i].text, b[j].text);
		}
	}
}

/* Render @mode of @rec to @dir/@name (.png) and check it as check_png() does. */
static void render_and_check_png(struct __test_metadata *_metadata, const char *dir,
				 const char *name, const char *mode, const char *rec,
				 struct png *p)
{
	char pic[192];

	snprintf(pic, sizeof(pic), "%s/%s.png", dir, name);
	render(_metadata, mode, rec, pic);
	check_png(_metadata, pic, p);
}

/* Render @mode of @rec to @dir/@name (.svg) and check it as check_svg() does. */
static void render_and_check_svg(struct __test_metadata *_metadata, const char *dir,
				 const char *name, const char *mode, const char *rec,
				 char **text)
{
	char pic[192];

	snprintf(pic, sizeof(pic), "%s/%s.svg", dir, name);
	render(_metadata, mode, rec, pic);
	check_svg(_metadata, pic, text);
}

static const char *const modes[] = { "heatmap", "wss", "regions", "nodes", "pheatmap",
				     "objects", "savings" };

TEST_F(plot, every_mode_renders_png_and_svg)
{
	char *svg;
	struct png p;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		render_and_check_png(_metadata, self->dir, modes[i], modes[i], self->rec, &p);
		free(p.rgb);
		render_and_check_svg(_metadata, self->dir, modes[i], modes[i], self->rec, &svg);
		free(svg);
	}
}

/*
 * Issue 30, defect 2: the heatmap's labels are whole, its axis title is
 * drawn, the gaps are bands of their own (never a box over the data), grey
 * and the unobservable colour are explained.
 */
TEST_F(plot, heatmap_explains_itself)
{
	char *svg;
	struct png p;

	/* a record as older versions wrote it: no unobservable memory to explain */
	render_and_check_png(_metadata, self->dir, "plain", "heatmap", self->plain, &p);
	free(p.rgb);
	render_and_check_svg(_metadata, self->dir, "plain", "heatmap", self->plain, &svg);
	EXPECT_NE(NULL, strstr(svg, ">virtual address (unmapped gaps elided)</text>"));
	EXPECT_EQ(NULL, strstr(svg, "not observable")) TH_LOG("a key entry for nothing");
	free(svg);

	render_and_check_svg(_metadata, self->dir, "h", "heatmap", self->rec, &svg);
	ASSERT_NE(NULL, svg);
	EXPECT_NE(NULL, strstr(svg, ">0x7ffc002d1000</text>")) TH_LOG("start address");
	EXPECT_NE(NULL, strstr(svg, ">[stack] 132 KiB  N0:100%</text>")) TH_LOG("name, size, node");
	EXPECT_NE(NULL, strstr(svg, ">a-rather-long-library-name.so.1 12.7 MiB  N0:100%</text>"))
		TH_LOG("a long name whole");
	EXPECT_NE(NULL, strstr(svg, ">virtual address (unmapped gaps elided)</text>"));
	EXPECT_NE(NULL, strstr(svg, ">unmapped or no data</text>"));
	EXPECT_NE(NULL, strstr(svg, ">not observable (hugetlb, PFNMAP/IO, KVM)</text>"));
	EXPECT_NE(NULL, strstr(svg, ">[anon] 80.0 MiB  N0:86%</text>"))
		TH_LOG("the anon block's main node share");
	EXPECT_NE(NULL, strstr(svg, "gap elided</text>"));
	free(svg);

	render_and_check_png(_metadata, self->dir, "h", "heatmap", self->rec, &p);
	EXPECT_GT(count_colour(&p, 0xb0b0b0), 100) TH_LOG("no grey");
	EXPECT_GT(count_colour(&p, 0x1b9e77), 100) TH_LOG("no unobservable hatching");
	free(p.rgb);
}

/* Issue 30, defect 1: nodes and pheatmap in colours, on their data. */
TEST_F(plot, nodes_and_pheatmap)
{
	char *svg;
	struct png p;

	render_and_check_png(_metadata, self->dir, "n", "nodes", self->rec, &p);
	/* hot, warm, cold each its colour (filled, so many pixels of each) */
	EXPECT_GT(count_colour(&p, 0xd73027) + count_colour(&p, 0xdc4b40), 500) TH_LOG("hot");
	free(p.rgb);
	render_and_check_svg(_metadata, self->dir, "n", "nodes", self->rec, &svg);
	EXPECT_NE(NULL, strstr(svg, "rgb(215,  48,  39)")) TH_LOG("hot red");
	EXPECT_NE(NULL, strstr(svg, "rgb(253, 174,  97)")) TH_LOG("warm orange");
	EXPECT_NE(NULL, strstr(svg, "rgb( 69, 117, 180)")) TH_LOG("cold blue");
	EXPECT_NE(NULL, strstr(svg, ">node 1 (MiB)</text>"));
	free(svg);

	render_and_check_svg(_metadata, self->dir, "p", "pheatmap", self->rec, &svg);
	/* tics as memory below the address, not raw hex; the grey explained */
	EXPECT_NE(NULL, strstr(svg, " GiB</text>"));
	EXPECT_EQ(NULL, strstr(svg, ">0x1")) TH_LOG("raw hex tics");
	EXPECT_NE(NULL, strstr(svg, ">no sampled page found there</text>"));
	free(svg);
}

/*
 * Issue 30, defect 8: a binary built outside the source tree (O=...)
 * finds the gnuplot scripts without DAPTRACE_VIZ.
 */
TEST_F(plot, scripts_found_from_any_build_directory)
{
	char bin[192], pic[192], cmd[1024];

	snprintf(bin, sizeof(bin), "%s/daptrace", self->dir);
	snprintf(pic, sizeof(pic), "%s/w.png", self->dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && env -u DAPTRACE_VIZ '%s' report wss "
		 "--plot '%s' '%s' > /dev/null 2>&1", daptrace_bin(), bin, bin, pic, self->plain);
	EXPECT_EQ(0, WEXITSTATUS(system(cmd)));
	EXPECT_EQ(0, access(pic, R_OK));
}

TEST_HARNESS_MAIN
