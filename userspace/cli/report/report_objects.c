// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace report objects: per data structure of the target (the side file
 * `record --objects` wrote), its size, lifetime, mean and peak access
 * frequency over the windows it lived in, and the share of those windows in
 * which it was hot; ranked by mean frequency.  Text, CSV when --output ends
 * in .csv, or one JSON document with --json.  With --plot, the heatmap with the --top structures drawn on
 * it: the heatmap's own data and tics, plus rectangles (lifetime x address
 * rows) placed with the address blocks the heatmap lists in its data.
 */
#include <csv.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/json_out.h"
#include "objects/objects.h"
#include "report.h"
#include "common/units.h"

#define CMD "report"

struct obj_stat {
	const struct obj *o;
	uint64_t windows;		/* alive and covered by regions */
	uint64_t hot;			/* of those, hot ones */
	double sum, peak;
};

struct acc {
	const struct report_opts *opts;
	struct obj_set set;
	struct obj_stat *st;
	pid_t pid;
	struct obj_region *r;
	size_t cap;
	uint64_t end_ns, windows;
};

static int by_start(const void *a, const void *b)
{
	const struct obj_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int on_snapshot(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct acc *a = arg;
	size_t n = 0;
	double hot_pct;

	(void)info;
	if (s->nr_regions > a->cap) {
		struct obj_region *r = realloc(a->r, s->nr_regions * sizeof(*r));

		if (!r)
			return fail(CMD, "out of memory");
		a->r = r;
		a->cap = s->nr_regions;
	}
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *g = &s->regions[i];

		if (g->pid != a->pid)
			continue;
		a->r[n++] = (struct obj_region){
			.start = g->start, .end = g->end, .freq = report_freq(s, g),
		};
	}
	qsort(a->r, n, sizeof(*a->r), by_start);
	/* hot: at least --threshold accesses in the window, as a frequency */
	{
		struct rec_region one = { .nr_accesses = (uint32_t)a->opts->threshold };

		hot_pct = report_freq(s, &one);
	}
	a->end_ns = s->end_ns;
	a->windows++;
	for (size_t i = 0; i < a->set.n; i++) {
		const struct obj *o = &a->set.v[i];
		struct obj_stat *st = &a->st[i];
		double f = 0;

		if (!obj_alive_in(o->alloc_ns, o->free_ns, (int64_t)s->start_ns,
				  (int64_t)s->end_ns) ||
		    !obj_window_freq(o->start, o->end, a->r, n, &f))
			continue;
		st->windows++;
		st->sum += f;
		if (f > st->peak)
			st->peak = f;
		if (f > 0 && f >= hot_pct)
			st->hot++;
	}
	return 0;
}

static double mean(const struct obj_stat *s)
{
	return s->windows ? s->sum / (double)s->windows : -1;
}

static int rank_cmp(const void *x, const void *y)
{
	const struct obj_stat *a = x, *b = y;
	double ma = mean(a), mb = mean(b);
	uint64_t sa = a->o->end - a->o->start, sb = b->o->end - b->o->start;

	if (ma != mb)
		return ma > mb ? -1 : 1;
	if (a->peak != b->peak)
		return a->peak > b->peak ? -1 : 1;
	return sa > sb ? -1 : sa < sb;
}

static double lifetime_s(const struct acc *a, const struct obj *o)
{
	int64_t end = o->free_ns >= 0 ? o->free_ns : (int64_t)a->end_ns;

	return end > o->alloc_ns ? (double)(end - o->alloc_ns) / 1e9 : 0;
}

static void csv_str(FILE *f, const char *s, const char *sep)
{
	csv_fwrite(f, s ? s : "", s ? strlen(s) : 0);
	fputs(sep, f);
}

static void print_csv(const struct acc *a, FILE *out)
{
	fputs("rank,kind,name,start,end,size,alloc_s,lifetime_s,windows,mean_freq,"
	      "peak_freq,hot_share,callsite,function,source,module\n", out);
	for (size_t i = 0; i < a->set.n; i++) {
		const struct obj_stat *s = &a->st[i];
		const struct obj *o = s->o;

		fprintf(out, "%zu,%s,", i + 1, obj_kind_name(o->kind));
		csv_str(out, o->name, ",");
		fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%" PRIu64 ",",
			o->start, o->end, o->end - o->start, (double)o->alloc_ns / 1e9,
			lifetime_s(a, o), s->windows);
		if (s->windows)
			fprintf(out, "%.2f,%.2f,%.1f,", mean(s), s->peak,
				100.0 * (double)s->hot / (double)s->windows);
		else
			fputs(",,,", out);
		fprintf(out, "%#" PRIx64 ",", o->site);
		csv_str(out, o->function, ",");
		csv_str(out, o->source, ",");
		csv_str(out, o->module, "\n");
	}
}

static void print_text(const struct acc *a, FILE *out)
{
	char sz[32];

	fprintf(out, "%-4s %-6s %-40s %10s %9s %7s %7s %7s %6s  %s\n", "rank", "kind",
		"name", "size", "life(s)", "windows", "mean%", "peak%", "hot%", "where");
	for (size_t i = 0; i < a->set.n; i++) {
		const struct obj_stat *s = &a->st[i];
		const struct obj *o = s->o;
		const char *where = o->kind == OBJ_GLOBAL ? o->module : o->source;

		fmt_bytes(o->end - o->start, sz, sizeof(sz));
		fprintf(out, "%-4zu %-6s %-40.40s %10s %9.2f %7" PRIu64, i + 1,
			obj_kind_name(o->kind), o->name ? o->name : "?", sz,
			lifetime_s(a, o), s->windows);
		if (s->windows)
			fprintf(out, " %7.2f %7.2f %6.1f", mean(s), s->peak,
				100.0 * (double)s->hot / (double)s->windows);
		else
			fprintf(out, " %7s %7s %6s", "-", "-", "-");
		fprintf(out, "  %s\n", where ? where : "");
	}
}

static void json_str(struct json_object *j, const char *key, const char *s)
{
	json_object_object_add(j, key, s ? json_object_new_string(s) : NULL);
}

/*
 * --json: {record, pid, exe, windows, linkage, tracer, globals_and_stacks_only,
 * partial, partial_reasons, note_symbols, call_sites_without_line,
 * hot_threshold, objects: [{rank, kind, name, start, end, size, alloc_s,
 * lifetime_s, windows, mean_freq_percent, peak_freq_percent,
 * hot_share_percent, callsite, function, source, module}]}; the frequencies
 * are null for a structure no window covered, absent strings null.
 */
static void print_json(const struct report_opts *opts, const struct acc *a, FILE *out)
{
	struct json_object *j = json_object_new_object();
	struct json_object *arr = json_object_new_array_ext((int)a->set.n);
	const char *link = obj_meta_get(&a->set, "linkage");
	const char *lines = obj_meta_get(&a->set, "call_sites_without_line");
	char site[32];

	json_str(j, "record", opts->input);
	json_object_object_add(j, "pid", json_object_new_int(a->pid));
	json_str(j, "exe", obj_meta_get(&a->set, "exe"));
	json_object_object_add(j, "windows", json_object_new_uint64(a->windows));
	json_str(j, "linkage", link);
	json_str(j, "tracer", obj_meta_get(&a->set, "tracer"));
	json_object_object_add(j, "globals_and_stacks_only",
			       json_object_new_boolean(link && !strcmp(link, "static")));
	json_str(j, "partial", obj_meta_get(&a->set, "partial"));
	json_str(j, "partial_reasons", obj_meta_get(&a->set, "partial_reasons"));
	json_str(j, "note_symbols", obj_meta_get(&a->set, "note_symbols"));
	json_object_object_add(j, "call_sites_without_line",
			       json_object_new_uint64(lines ? strtoull(lines, NULL, 10) : 0));
	json_object_object_add(j, "hot_threshold", json_object_new_uint64(opts->threshold));
	for (size_t i = 0; i < a->set.n; i++) {
		const struct obj_stat *s = &a->st[i];
		const struct obj *o = s->o;
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "rank", json_object_new_uint64(i + 1));
		json_str(e, "kind", obj_kind_name(o->kind));
		json_str(e, "name", o->name);
		json_object_object_add(e, "start", json_object_new_uint64(o->start));
		json_object_object_add(e, "end", json_object_new_uint64(o->end));
		json_object_object_add(e, "size", json_object_new_uint64(o->end - o->start));
		json_object_object_add(e, "alloc_s",
				       json_seconds((double)o->alloc_ns / 1e9));
		json_object_object_add(e, "lifetime_s", json_seconds(lifetime_s(a, o)));
		json_object_object_add(e, "windows", json_object_new_uint64(s->windows));
		json_object_object_add(e, "mean_freq_percent",
				       s->windows ? json_percent(mean(s)) : NULL);
		json_object_object_add(e, "peak_freq_percent",
				       s->windows ? json_percent(s->peak) : NULL);
		json_object_object_add(e, "hot_share_percent", s->windows ?
				       json_percent(100.0 * (double)s->hot /
							      (double)s->windows) : NULL);
		snprintf(site, sizeof(site), "%#" PRIx64, o->site);
		json_str(e, "callsite", o->site ? site : NULL);
		json_str(e, "function", o->function);
		json_str(e, "source", o->source);
		json_str(e, "module", o->module);
		json_object_array_add(arr, e);
	}
	json_object_object_add(j, "objects", arr);
	fprintf(out, "%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

struct hblock {
	uint64_t start, end;
	unsigned int bin0, nbins;
};

/* The heatmap's "# block N: bins A-B: 0xS-0xE ..." comments. */
static size_t parse_blocks(const char *data, struct hblock *b, size_t max)
{
	size_t n = 0;

	for (const char *p = data; p && *p && n < max; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		unsigned int b0, b1;

		if (sscanf(p, "# block %*u: bins %u-%u: 0x%" SCNx64 "-0x%" SCNx64, &b0, &b1,
			   &b[n].start, &b[n].end) == 4 && b1 >= b0 && b[n].end > b[n].start) {
			b[n].bin0 = b0;
			b[n].nbins = b1 - b0 + 1;
			n++;
		}
	}
	return n;
}

/* Row coordinate of the address boundary @a (the heatmap's arithmetic). */
static int addr_row(const struct hblock *b, size_t n, uint64_t a, int is_end, double *row)
{
	uint64_t probe = is_end ? a - 1 : a;

	for (size_t i = 0; i < n; i++) {
		uint64_t size = b[i].end - b[i].start;
		uint64_t width = (size + b[i].nbins - 1) / b[i].nbins;

		if (probe < b[i].start || probe >= b[i].end)
			continue;
		*row = b[i].bin0 - 0.5 + (double)(a - b[i].start) / (double)width;
		return 0;
	}
	return -1;
}

static void gp_text(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(plot_unsafe((unsigned char)*s) ? '?' : *s, f);
}

static int overlay(const struct report_opts *o, const struct acc *a, FILE *out, FILE *tics)
{
	char *data = NULL, *tdata = NULL;
	size_t dlen = 0, tlen = 0, nb, drawn = 0;
	FILE *d = open_memstream(&data, &dlen), *t = open_memstream(&tdata, &tlen);
	struct hblock b[256];
	int ret;

	if (!d || !t) {
		if (d)
			fclose(d);
		if (t)
			fclose(t);
		free(data);
		free(tdata);
		return fail(CMD, "out of memory");
	}
	ret = report_heatmap(o, d, t);
	fclose(d);
	fclose(t);
	if (!ret) {
		fwrite(data, 1, dlen, out);
		fwrite(tdata, 1, tlen, tics);
		nb = parse_blocks(data, b, sizeof(b) / sizeof(b[0]));
		for (size_t i = 0; i < a->set.n && drawn < o->top; i++) {
			const struct obj *ob = a->st[i].o;
			double y0, y1, x0 = (double)ob->alloc_ns / 1e9;
			double x1 = (double)(ob->free_ns >= 0 ? ob->free_ns : (int64_t)a->end_ns) / 1e9;

			if (!a->st[i].windows || addr_row(b, nb, ob->start, 0, &y0) ||
			    addr_row(b, nb, ob->end, 1, &y1))
				continue;
			fprintf(tics, "set object rect from first %.6f, first %.3f to first %.6f, "
				"first %.3f front fillstyle empty border lc rgb 'cyan' lw 1.5\n",
				x0, y0, x1, y1);
			fprintf(tics, "set label \"%zu ", i + 1);
			gp_text(tics, ob->name ? ob->name : "?");
			fprintf(tics, "\" at first %.6f, first %.3f left offset 0.5,0 front "
				"tc rgb 'cyan' font ',8'\n", x0, (y0 + y1) / 2);
			drawn++;
		}
		fprintf(tics, "set title titled(\"data access heatmap with the %zu most "
			"accessed structures\")\n", drawn);
	}
	free(data);
	free(tdata);
	return ret;
}

int report_objects(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct acc a = { .opts = o };
	struct rec_info info = { 0 };
	char err[512], *side = obj_side_path(o->input);
	FILE *notes = tics ? stdout : out;	/* with a plot, out is its data */
	const char *v;
	int ret, csv = o->output && strlen(o->output) > 4 &&
		      !strcmp(o->output + strlen(o->output) - 4, ".csv");

	(void)tics;
	if (!side)
		return fail(CMD, "out of memory");
	/* The objects are in a file next to the record, found by its name. */
	if (!strcmp(o->input, "-")) {
		free(side);
		return usage_error(CMD, "objects: needs the record's file name, not '-' "
				   "(its objects are in NAME.objects.csv)");
	}
	if (obj_read_path(side, &a.set, err, sizeof(err))) {
		obj_set_free(&a.set);
		free(side);
		return fail(CMD, "objects: %s (record with --objects)", err);
	}
	v = obj_meta_get(&a.set, "pid");
	a.pid = v ? (pid_t)atoi(v) : 0;
	if (o->pid)
		a.pid = o->pid;
	a.st = calloc(a.set.n ? a.set.n : 1, sizeof(*a.st));
	if (!a.st) {
		ret = fail(CMD, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < a.set.n; i++)
		a.st[i].o = &a.set.v[i];
	ret = report_read(o, on_snapshot, &a, &info);
	if (ret)
		goto out;
	qsort(a.st, a.set.n, sizeof(*a.st), rank_cmp);
	if (o->json) {
		/* the notes are fields of the document; partial still warns */
		v = obj_meta_get(&a.set, "partial");
		if (v && !strcmp(v, "yes"))
			warn_msg(CMD, "objects: partial: %s",
				 obj_meta_get(&a.set, "partial_reasons") ?: "see the side file");
		print_json(o, &a, out);
		goto out;
	}
	/* the notes a reader must see, as comments in either format */
	fprintf(notes, "# objects of pid %d (%s): %zu structures, %" PRIu64 " windows\n",
		(int)a.pid, obj_meta_get(&a.set, "exe") ?: "?", a.set.n, a.windows);
	fprintf(notes, "# linkage %s; tracer: %s\n", obj_meta_get(&a.set, "linkage") ?: "?",
		obj_meta_get(&a.set, "tracer") ?: "?");
	if ((v = obj_meta_get(&a.set, "linkage")) && !strcmp(v, "static"))
		fprintf(notes, "# statically linked: globals and stacks only\n");
	if ((v = obj_meta_get(&a.set, "note_symbols")))
		fprintf(notes, "# %s\n", v);
	if ((v = obj_meta_get(&a.set, "call_sites_without_line")) && strcmp(v, "0"))
		fprintf(notes, "# %s call sites without line information (no debug info)\n", v);
	v = obj_meta_get(&a.set, "partial");
	fprintf(notes, "# partial: %s%s%s\n", v ?: "?",
		obj_meta_get(&a.set, "partial_reasons") ? " - " : "",
		obj_meta_get(&a.set, "partial_reasons") ?: "");
	if (v && !strcmp(v, "yes"))
		warn_msg(CMD, "objects: partial: %s",
			 obj_meta_get(&a.set, "partial_reasons") ?: "see the side file");
	fprintf(notes, "# mean/peak: access frequency in %% of samples over the windows "
		"the structure lived in; hot: >= %" PRIu64 " accesses per window\n",
		o->threshold);
	if (tics) {
		ret = overlay(o, &a, out, tics);
		if (!ret)
			print_text(&a, stdout);	/* out is the plot's data */
		fflush(stdout);
	} else if (csv) {
		print_csv(&a, out);
	} else {
		print_text(&a, out);
	}
out:
	rec_info_free(&info);
	obj_set_free(&a.set);
	free(a.st);
	free(a.r);
	free(side);
	return ret;
}
