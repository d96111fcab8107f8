// SPDX-License-Identifier: GPL-2.0-only
/*
 * The reports on crafted records: the bugs a user met (an empty last
 * window, SIGFPE on huge or overlapping regions, a record cut inside a
 * quoted label, stdin read twice, gzip, integer division in wss.gp, quoting
 * in gnuplot paths) and the newer surface: --json, filters, flags that do
 * not apply to the mode, the daptrace-<sub> names.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "kselftest_harness.h"
#include "read_text.h"
#include "run_cmd.h"
#include "run_json.h"

#define HDR "# daptrace-record v1\n#meta,command,sleep 1\n#meta,kernel,6.1\n" \
	    "#meta,sample_us,5000\n#meta,aggr_us,100000\n#target,7,\"sleep\"\n" \
	    "time_ns,seq,pid,start,end,nr_accesses,age,label\n"

/* Two windows with a heap and a library, then the empty window of an exit. */
static const char last_empty[] = HDR
	"#snap,1,0,100000000,2,20,0,0\n"
	"100000000,1,7,4096,8192,10,1,\"[heap]\"\n"
	"100000000,1,7,1048576,2097152,0,3,\"/usr/lib/libc.so.6\"\n"
	"#snap,2,100000000,200000000,2,20,0,0\n"
	"200000000,2,7,4096,8192,20,2,\"[heap]\"\n"
	"200000000,2,7,1048576,2097152,5,4,\"/usr/lib/libc.so.6\"\n"
	"#snap,3,200000000,300000000,0,20,0,0\n"
	"#end,reason,all targets exited\n#eof\n";

/* A region [0, 2^64 - 1): widths overflowed, the heatmap died of SIGFPE. */
static const char huge_region[] = HDR
	"#snap,1,0,100,1,20,0,0\n"
	"100,1,7,0,18446744073709551615,5,1,\"[heap]\"\n#eof\n";

static const char overlapping[] = HDR
	"#snap,1,0,100,4,20,0,0\n"
	"100,1,7,0,8192,5,1,\"a\"\n"
	"100,1,7,4096,12288,5,1,\"b\"\n"
	"100,1,7,4096,5000,5,1,\"c\"\n"
	"100,1,7,18446744073709547520,18446744073709551615,5,1,\"top\"\n#eof\n";

/* Cut by a killed recorder inside the quoted label of snapshot 2. */
static const char cut_in_label[] = HDR
	"#snap,1,0,100,1,20,0,0\n"
	"100,1,7,4096,8192,10,1,\"[heap]\"\n"
	"#snap,2,100,200,1,20,0,0\n"
	"200,2,7,4096,8192,10,1,\"/usr/lib/li";

struct tmp {
	char dir[64];
	char path[128];
};

static void write_file(const char *path, const char *s, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fwrite(s, 1, len, f);
	fclose(f);
}

static const char *tmp_record(struct tmp *t, const char *name, const char *s)
{
	if (!t->dir[0]) {
		strcpy(t->dir, "/tmp/daptrace-report-XXXXXX");
		if (!mkdtemp(t->dir))
			return NULL;
	}
	snprintf(t->path, sizeof(t->path), "%s/%s", t->dir, name);
	write_file(t->path, s, strlen(s));
	return t->path;
}

static void tmp_clean(struct tmp *t)
{
	char cmd[128];

	if (t->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
		if (system(cmd))
			return;
	}
}

/*
 * Run @exe with @argv (argv[0] included: it selects the subcommand for
 * daptrace-<sub> links) and stdin from @in (NULL: /dev/null).
 */
static int run_full(const char *exe, char *const *argv, const char *in, char *out,
		    size_t len)
{
	return run_exe(exe, argv, in ? in : "/dev/null", out, len);
}

static char out[1 << 20];

/*
 * One run of `daptrace report WORDS... RECORD`: the exit code it must have,
 * the pieces its output must hold and one it must not.
 */
struct report_run {
	const char *words[6];
	int rc;
	const char *has[4];
	const char *lacks;
};

/* Each of @n runs on @rec in order, its exit code and its output checked. */
static void expect_runs(struct __test_metadata *_metadata, const char *rec,
			const struct report_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *argv[9] = { "report" }, what[160] = "report";
		size_t k = 1;

		for (size_t w = 0; w < 6 && runs[i].words[w]; w++) {
			argv[k++] = (char *)runs[i].words[w];
			snprintf(what + strlen(what), sizeof(what) - strlen(what), " %s",
				 runs[i].words[w]);
		}
		argv[k++] = (char *)rec;
		argv[k] = NULL;
		EXPECT_EQ(runs[i].rc, run_daptrace(argv, out, sizeof(out)))
			TH_LOG("%s: %s", what, out);
		for (size_t h = 0; h < 4 && runs[i].has[h]; h++)
			EXPECT_NE(NULL, strstr(out, runs[i].has[h])) TH_LOG("%s: %s", what, out);
		if (runs[i].lacks)
			EXPECT_EQ(NULL, strstr(out, runs[i].lacks)) TH_LOG("%s: %s", what, out);
	}
}

#define EXPECT_RUNS(rec, runs) expect_runs(_metadata, rec, runs, sizeof(runs) / sizeof(runs[0]))

/*
 * The runs on the record @text, written as @name in a directory of its own:
 * the whole of a test that is one table of runs.
 */
static void expect_runs_on(struct __test_metadata *_metadata, const char *name,
			   const char *text, const struct report_run *runs, size_t n)
{
	struct tmp t = { 0 };
	const char *rec;

	SKIP_UNLESS_DAPTRACE_BIN();
	rec = tmp_record(&t, name, text);
	expect_runs(_metadata, rec, runs, n);
	tmp_clean(&t);
}

#define EXPECT_RUNS_ON(name, text, runs) \
	expect_runs_on(_metadata, name, text, runs, sizeof(runs) / sizeof(runs[0]))

TEST(hot_skips_the_empty_last_window)
{
	static const struct report_run runs[] = {
		{ .words = { "hot" }, .rc = 0,
		  .has = { "snapshot seq 2 ", "[heap]", "libc.so.6" } },
		/* --at near the empty window still gets the nearest one with regions */
		{ .words = { "hot", "--at", "0.3" }, .rc = 0, .has = { "snapshot seq 2 " } },
		{ .words = { "hot", "--at", "0.1" }, .rc = 0, .has = { "snapshot seq 1 " } },
	};

	EXPECT_RUNS_ON("r.csv", last_empty, runs);
}

TEST(heatmap_survives_huge_and_overlapping_regions)
{
	struct tmp t = { 0 };
	const char *recs[][2] = {
		{ "huge.csv", huge_region }, { "overlap.csv", overlapping },
	};

	SKIP_UNLESS_DAPTRACE_BIN();
	for (size_t i = 0; i < 2; i++) {
		const char *rec = tmp_record(&t, recs[i][0], recs[i][1]);

		EXPECT_EQ(0, run_daptrace(A("report", "heatmap", (char *)rec), out,
					  sizeof(out))) TH_LOG("%s: %.300s", recs[i][0], out);
		EXPECT_EQ(0, run_daptrace(A("report", "heatmap", "--addr-bins", "100000",
					    "--max-blocks", "1", (char *)rec), out,
					  sizeof(out))) TH_LOG("%s: %.300s", recs[i][0], out);
		EXPECT_EQ(0, run_daptrace(A("report", "heatmap", "--json", (char *)rec),
					  out, sizeof(out))) TH_LOG("%s", recs[i][0]);
	}
	tmp_clean(&t);
}

static char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return f ? buf : NULL;
}

static int nr_files(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

/*
 * -o must not destroy what it reads: the input as output is refused (also
 * as stdin), and a record that fails leaves an existing -o file as it was,
 * with no temporary file left behind.
 */
TEST(output_never_destroys_the_input)
{
	struct tmp t = { 0 }, o = { 0 };
	const char *rec = tmp_record(&t, "r.csv", last_empty);
	const char *old = tmp_record(&o, "old.csv", "keep\n");
	char bad[160], sh[512];

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_NE(NULL, rec);
	ASSERT_NE(NULL, old);
	EXPECT_EQ(2, run_daptrace(A("report", "wss", "-o", (char *)rec, (char *)rec), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--output: invalid value")) TH_LOG("%s", out);
	EXPECT_STREQ(last_empty, slurp(rec));
	snprintf(sh, sizeof(sh), "'%s' report hot -o '%s' - < '%s' 2>/dev/null",
		 daptrace_bin(), rec, rec);
	EXPECT_EQ(2, WEXITSTATUS(system(sh)));
	EXPECT_STREQ(last_empty, slurp(rec));

	snprintf(bad, sizeof(bad), "%s/bad.csv", t.dir);
	write_file(bad, cut_in_label, 20);
	EXPECT_EQ(1, run_daptrace(A("report", "wss", "-o", (char *)old, bad), out,
				  sizeof(out)));
	EXPECT_STREQ("keep\n", slurp(old));
	EXPECT_EQ(1, nr_files(o.dir));
	EXPECT_EQ(0, run_daptrace(A("report", "wss", "-o", (char *)old, (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(slurp(old), "working set size")) TH_LOG("%s", slurp(old));
	EXPECT_EQ(1, nr_files(o.dir));
	tmp_clean(&t);
	tmp_clean(&o);
}

/*
 * -o writes the existing file, as fopen("w") would: the same inode (its
 * hard links, owner and mode kept), a symlink's target, created if the link
 * dangles; a record that fails leaves it byte for byte.  The report is
 * built in an unnamed file of TMPDIR: nothing is left there nor next to
 * the output.
 */
TEST(output_is_the_same_file)
{
	struct tmp t = { 0 }, o = { 0 }, d = { 0 };
	const char *rec = tmp_record(&t, "r.csv", last_empty);
	const char *file = tmp_record(&o, "out.csv", "keep\n");
	char bad[160], hard[160], lnk[160], target[160], ro[160];
	struct stat before, after;

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_NE(NULL, rec);
	ASSERT_NE(NULL, file);
	strcpy(d.dir, "/tmp/daptrace-report-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(d.dir));
	setenv("TMPDIR", d.dir, 1);
	snprintf(bad, sizeof(bad), "%s/bad.csv", t.dir);
	write_file(bad, cut_in_label, 20);
	snprintf(hard, sizeof(hard), "%s/hard.csv", o.dir);
	ASSERT_EQ(0, link(file, hard));
	ASSERT_EQ(0, stat(file, &before));

	EXPECT_EQ(1, run_daptrace(A("report", "wss", "-o", (char *)file, bad), out,
				  sizeof(out)));
	EXPECT_STREQ("keep\n", slurp(file));
	EXPECT_EQ(0, run_daptrace(A("report", "wss", "-o", (char *)file, (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	ASSERT_EQ(0, stat(file, &after));
	EXPECT_EQ(before.st_ino, after.st_ino);
	EXPECT_EQ(2, after.st_nlink);
	EXPECT_NE(NULL, strstr(slurp(hard), "working set size")) TH_LOG("%s", slurp(hard));

	snprintf(lnk, sizeof(lnk), "%s/link.csv", o.dir);
	snprintf(target, sizeof(target), "%s/target.csv", o.dir);
	ASSERT_EQ(0, symlink("target.csv", lnk));
	EXPECT_EQ(0, run_daptrace(A("report", "wss", "-o", lnk, (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	ASSERT_EQ(0, lstat(lnk, &after));
	EXPECT_TRUE(S_ISLNK(after.st_mode));
	EXPECT_NE(NULL, slurp(target));
	EXPECT_NE(NULL, strstr(slurp(target), "working set size"));
	EXPECT_EQ(4, nr_files(o.dir));
	EXPECT_EQ(0, nr_files(d.dir));

	/* a writable file in a directory that is not (moot for root) */
	snprintf(ro, sizeof(ro), "%s/ro", o.dir);
	ASSERT_EQ(0, mkdir(ro, 0755));
	snprintf(ro, sizeof(ro), "%s/ro/out.csv", o.dir);
	write_file(ro, "keep\n", 5);
	*strrchr(ro, '/') = '\0';
	ASSERT_EQ(0, chmod(ro, 0555));
	strcat(ro, "/out.csv");
	EXPECT_EQ(0, run_daptrace(A("report", "wss", "-o", ro, (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(slurp(ro), "working set size"));
	*strrchr(ro, '/') = '\0';
	chmod(ro, 0755);
	tmp_clean(&t);
	tmp_clean(&o);
	tmp_clean(&d);
}

/*
 * A TMPDIR that is gone is no reason to fail (/tmp is used), and an output
 * that cannot be written in full (ENOSPC) is an error naming --output.
 */
TEST(output_stale_tmpdir_and_full_device)
{
	struct tmp t = { 0 }, o = { 0 };
	const char *rec = tmp_record(&t, "r.csv", last_empty);
	char file[160], gone[160];

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_NE(NULL, rec);
	strcpy(o.dir, "/tmp/daptrace-report-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(o.dir));
	snprintf(file, sizeof(file), "%s/out.txt", o.dir);
	snprintf(gone, sizeof(gone), "%s/gone", o.dir);
	setenv("TMPDIR", gone, 1);
	EXPECT_EQ(0, run_daptrace(A("report", "wss", "-o", file, (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(slurp(file), "working set size"));
	unsetenv("TMPDIR");
	if (!access("/dev/full", W_OK)) {
		EXPECT_EQ(1, run_daptrace(A("report", "wss", "-o", "/dev/full", (char *)rec),
					  out, sizeof(out)));
		EXPECT_NE(NULL, strstr(out, "--output /dev/full")) TH_LOG("%s", out);
	}
	tmp_clean(&t);
	tmp_clean(&o);
}

TEST(partial_record_cut_inside_a_quoted_label)
{
	static const struct report_run runs[] = {
		{ .words = { "raw" }, .rc = 1 },
		{ .words = { "raw", "--partial" }, .rc = 0,
		  .has = { "snapshot seq 1 ", "incomplete record" }, .lacks = "snapshot seq 2 " },
	};

	EXPECT_RUNS_ON("cut.csv", cut_in_label, runs);
}

TEST(stdin_dash_and_gzip)
{
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "r.csv", last_empty);
	char plain[128], gz[160];
	gzFile g;

	SKIP_UNLESS_DAPTRACE_BIN();
	snprintf(plain, sizeof(plain), "%s", rec);
	/* two passes over a pipe: read once, spooled */
	EXPECT_EQ(0, run_full(daptrace_bin(), A("daptrace", "report", "heatmap", "-"),
			      plain, out, sizeof(out))) TH_LOG("%.300s", out);
	EXPECT_NE(NULL, strstr(out, "# block 0")) TH_LOG("%.300s", out);
	EXPECT_EQ(0, run_full(daptrace_bin(), A("daptrace", "report", "heatmap",
						"/dev/stdin"), plain, out, sizeof(out)))
		TH_LOG("%.300s", out);
	EXPECT_NE(NULL, strstr(out, "# block 0")) TH_LOG("%.300s", out);
	snprintf(gz, sizeof(gz), "%s.gz", plain);
	g = gzopen(gz, "wb");
	ASSERT_NE(NULL, g);
	ASSERT_EQ((int)strlen(last_empty), gzwrite(g, last_empty, strlen(last_empty)));
	gzclose(g);
	EXPECT_EQ(0, run_daptrace(A("report", "hot", gz), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "libc.so.6")) TH_LOG("%s", out);
	/* compressed on stdin too */
	EXPECT_EQ(0, run_full(daptrace_bin(), A("daptrace", "report", "wss", "-"), gz,
			      out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# snapshots 3")) TH_LOG("%s", out);
	/* an endless non-record is refused at its first bytes, not spooled */
	EXPECT_EQ(1, run_full(daptrace_bin(), A("daptrace", "report", "wss", "-"),
			      "/dev/zero", out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "-:1: not a daptrace record")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_daptrace(A("report", "wss", "/dev/zero"), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "/dev/zero:1: not a daptrace record")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_daptrace(A("report", "wss", t.dir), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "Is a directory")) TH_LOG("%s", out);
	tmp_clean(&t);
}

static struct json_object *parse_json(const char *s)
{
	return json_tokener_parse(s);
}

TEST(json_for_every_mode)
{
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "r.csv", last_empty);
	static const char *const modes[] = { "heatmap", "wss", "regions", "hot", "raw" };
	struct json_object *j, *v;

	SKIP_UNLESS_DAPTRACE_BIN();
	for (size_t i = 0; i < 5; i++) {
		ASSERT_EQ(0, run_full(daptrace_bin(), A("daptrace", "report", (char *)modes[i],
							"--json", (char *)rec), NULL, out,
				      sizeof(out))) TH_LOG("%s: %s", modes[i], out);
		j = parse_json(out);
		EXPECT_NE(NULL, j) TH_LOG("%s: not JSON: %.400s", modes[i], out);
		json_object_put(j);
	}
	j = run_daptrace_json(A("report", "hot", "--json", (char *)rec), out, sizeof(out));
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	v = JSON_FIELD(j, "regions");
	ASSERT_EQ(2, json_object_array_length(v));
	v = json_object_array_get_idx(v, 0);
	EXPECT_STREQ("[heap]", json_object_get_string(json_object_object_get(v, "label")));
	EXPECT_EQ(100, (int)json_object_get_double(json_object_object_get(v, "freq_percent")));
	json_object_put(j);
	j = run_daptrace_json(A("report", "wss", "--json", (char *)rec), out, sizeof(out));
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	v = JSON_FIELD(j, "wss_bytes");
	/* WSS 4096, 1052672, 0: the median is the heap alone */
	EXPECT_EQ(4096, json_object_get_int64(json_object_object_get(v, "p50")));
	EXPECT_EQ(1052672, json_object_get_int64(json_object_object_get(v, "p100")));
	json_object_put(j);
	j = run_daptrace_json(A("report", "raw", "--json", (char *)rec), out, sizeof(out));
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	EXPECT_EQ(3, json_object_array_length(JSON_FIELD(j, "snapshots")));
	EXPECT_TRUE(json_object_get_boolean(json_object_object_get(j, "complete")));
	json_object_put(j);
	tmp_clean(&t);
}

TEST(time_address_and_label_filters)
{
	static const struct report_run runs[] = {
		{ .words = { "wss", "--since", "0.15" }, .rc = 0, .has = { "# snapshots 2," } },
		{ .words = { "wss", "--until", "0.1" }, .rc = 0, .has = { "# snapshots 1," } },
		{ .words = { "hot", "--label", "libc" }, .rc = 0,
		  .has = { "libc.so.6" }, .lacks = "[heap]" },
		{ .words = { "hot", "--addr", "0x0-0x2000" }, .rc = 0,
		  .has = { "[heap]" }, .lacks = "libc.so.6" },
		/* decimal with leading zeros, not octal: [4096, 8192), the heap */
		{ .words = { "hot", "--addr", "04096-08192" }, .rc = 0,
		  .has = { "[heap]" }, .lacks = "libc.so.6" },
	};

	EXPECT_RUNS_ON("r.csv", last_empty, runs);
}

TEST(heatmap_blocks_named_and_holes_apart_from_idle)
{
	/* one block from the heap to the end of libc, the hole between drawn NaN */
	static const struct report_run runs[] = {
		{ .words = { "heatmap", "--max-blocks", "1", "--addr-bins", "256" }, .rc = 0,
		  .has = { "# block 0: bins 0-", "[heap]", " NaN\n", " 0.000\n" } },
	};

	EXPECT_RUNS_ON("r.csv", last_empty, runs);
}

/* gnuplot renders; the p50 of 2.6 MiB is labelled 2.6, not 2 (integer division). */
TEST(wss_plot_and_quoted_paths)
{
	struct tmp t = { 0 };
	char rec[256], svg[256], buf[4096] = "";
	size_t n;
	char *svgtext;

	SKIP_UNLESS_DAPTRACE_BIN();
	if (system("gnuplot --version >/dev/null 2>&1"))
		SKIP(return, "gnuplot not installed");
	/* 2.6 MiB = 2726298 bytes accessed in every window; unquoted meta keys */
	snprintf(buf, sizeof(buf), "# daptrace-record v1\n#meta,command,\"it's \"\"quoted\"\"\"\n"
		 "#target,7,sleep\ntime_ns,seq,pid,start,end,nr_accesses,age,label\n");
	for (int s = 1; s <= 3; s++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 "#snap,%d,%d,%d,1,20,0,0\n%d,%d,7,4096,2730394,5,1,[heap]\n",
			 s, (s - 1) * 1000, s * 1000, s * 1000, s);
	strcat(buf, "#eof\n");
	snprintf(rec, sizeof(rec), "%s", tmp_record(&t, "it's a \"record\".csv", buf));
	snprintf(svg, sizeof(svg), "%s/wss 'q' \"x\".svg", t.dir);
	ASSERT_EQ(0, run_daptrace(A("report", "wss", "--plot", svg, rec), out, sizeof(out)))
		TH_LOG("%s", out);
	svgtext = read_text(svg, 1 << 20, &n);
	ASSERT_NE(NULL, svgtext);
	EXPECT_GT(n, 1000);
	EXPECT_NE(NULL, strstr(svgtext, "p50 2.6 MiB")) TH_LOG("no 'p50 2.6 MiB' in the SVG");
	/* the title comes from the header through the record reader */
	EXPECT_NE(NULL, strstr(svgtext, "it&apos;s &quot;quoted&quot;") ?:
		  strstr(svgtext, "it's &quot;quoted&quot;") ?: strstr(svgtext, "it's \"quoted\""))
		TH_LOG("no title in the SVG");
	free(svgtext);
	tmp_clean(&t);
}

TEST(mode_flags_and_subcommand_names)
{
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "r.csv", last_empty);
	char link[160];

	static const struct report_run runs[] = {
		{ .words = { "wss", "--top", "5", "--by-label" }, .rc = 2,
		  .has = { "--top does not apply to 'report wss'" } },
		{ .words = { "hot", "--by-label=1" }, .rc = 0, .has = { "labels of" } },
		{ .words = { "hot", "--by-label=0" }, .rc = 0, .has = { "hottest regions" } },
	};

	SKIP_UNLESS_DAPTRACE_BIN();
	EXPECT_RUNS(rec, runs);
	EXPECT_EQ(0, run_daptrace(A("help", "record"), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "Usage: daptrace record")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_daptrace(A("help", "report"), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "Usage: daptrace report")) TH_LOG("%s", out);
	/* daptrace-report is daptrace report */
	snprintf(link, sizeof(link), "%s/daptrace-report", t.dir);
	ASSERT_EQ(0, symlink(daptrace_bin()[0] == '/' ? daptrace_bin() :
			     realpath(daptrace_bin(), NULL), link));
	EXPECT_EQ(0, run_full(link, A("daptrace-report", "hot", (char *)rec), NULL, out,
			      sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "libc.so.6")) TH_LOG("%s", out);
	snprintf(link, sizeof(link), "%s/daptrace-bogus", t.dir);
	ASSERT_EQ(0, symlink(daptrace_bin()[0] == '/' ? daptrace_bin() :
			     realpath(daptrace_bin(), NULL), link));
	EXPECT_EQ(2, run_full(link, A("daptrace-bogus"), NULL, out, sizeof(out)));
	tmp_clean(&t);
}

/* A moving hot spot in 64 MiB, a heap, a binary (named @bin): 50 windows. */
static char *synthetic_record_named(const char *bin)
{
	size_t cap = 1 << 20, n = 0;
	char *s = malloc(cap);

	n += snprintf(s + n, cap - n, "%s", HDR);
	for (long long w = 1; w <= 50; w++) {
		long long t = w * 100000000;

		n += snprintf(s + n, cap - n, "#snap,%lld,%lld,%lld,10,20,0,0\n", w,
			      t - 100000000, t);
		n += snprintf(s + n, cap - n, "%lld,%lld,7,4194304,5242880,5,1,%s\n"
			      "%lld,%lld,7,33554432,37748736,%lld,1,[heap]\n", t, w, bin, t, w,
			      w % 20);
		for (int k = 0; k < 8; k++)
			n += snprintf(s + n, cap - n, "%lld,%lld,7,%llu,%llu,%d,1,\n", t, w,
				      0x7f0000000000ULL + k * 0x800000ULL,
				      0x7f0000800000ULL + k * 0x800000ULL,
				      k == (w / 7) % 8 ? 20 : 0);
	}
	snprintf(s + n, cap - n, "#eof\n");
	return s;
}

static char *synthetic_record(void)
{
	return synthetic_record_named("/usr/bin/syn");
}

/* Longest line of @s, in characters (escape sequences not counted). */
static size_t longest_line(const char *s, size_t *nlines)
{
	size_t best = 0, cur = 0;

	*nlines = 0;
	for (; *s; s++) {
		if (*s == '\033') {
			while (*s && *s != 'm')
				s++;
			continue;
		}
		if (*s == '\n') {
			best = cur > best ? cur : best;
			cur = 0;
			(*nlines)++;
		} else {
			cur++;
		}
	}
	return best;
}

/*
 * Hand-written as the kernel's not-observable flag will come: a hugetlb
 * mapping (flags 1) next to a heap.  Its counts mean nothing: never in the
 * working set, never idle, counted apart.  Footprints ride along.
 */
static const char unobservable[] = "# daptrace-record v2\n#meta,sample_us,5000\n"
	"#meta,aggr_us,100000\n#target,7,t\n"
	"time_ns,seq,pid,start,end,nr_accesses,age,nr_samples,flags,label\n"
	"#footprint,7,100000000,1073741824,8388608\n"
	"#snap,1,0,100000000,3,20,0,0\n"
	"100000000,1,7,4096,8192,20,0,20,0,[heap]\n"
	"100000000,1,7,1048576,3145728,0,5,20,1,/dev/hugepages/x\n"
	"100000000,1,7,3145728,4194304,0,5,20,,/usr/lib/libc.so.6\n"
	"#footprint,7,200000000,1073741824,9437184\n"
	"#snap,2,100000000,200000000,3,20,0,0\n"
	"200000000,2,7,4096,8192,20,1,20,0,[heap]\n"
	"200000000,2,7,1048576,3145728,0,6,20,1,/dev/hugepages/x\n"
	"200000000,2,7,3145728,4194304,0,6,20,0,/usr/lib/libc.so.6\n#eof\n";

/* The line after the first one starting with @prefix, or NULL. */
static const char *line_after(const char *s, const char *prefix)
{
	for (; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
		const char *p = s + strspn(s, " ");

		if (!strncmp(p, prefix, strlen(prefix)))
			return strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL;
	}
	return NULL;
}

/* Whole numbers and decimals standing alone in @line (up to its end). */
static int numbers_in(const char *line)
{
	int n = 0;

	for (const char *p = line; *p && *p != '\n'; p++)
		if (isdigit((unsigned char)*p) && (p == line || p[-1] == ' ')) {
			n++;
			while (isdigit((unsigned char)p[1]) || p[1] == '.')
				p++;
		}
	return n;
}

/*
 * Check the picture at @w x @h: exactly the terminal's height but the
 * prompt's line, never wider than its width but the last column, the title
 * on one line, time labelled along the axis, names as long as the margin
 * allows (issue 30, defect 3).
 */
static void check_terminal(struct __test_metadata *_metadata, const char *rec,
			   unsigned int w, unsigned int h)
{
	static const char name[] = "a-rather-long-library-name.so.1";
	char cols[16], rows[16];
	unsigned int margin = w < 100 ? 24 : w / 4 > 40 ? 40 : w / 4;
	const char *axis, *row, *bar;
	size_t lines, longest;

	snprintf(cols, sizeof(cols), "%u", w);
	snprintf(rows, sizeof(rows), "%u", h);
	setenv("COLUMNS", cols, 1);
	setenv("LINES", rows, 1);
	ASSERT_EQ(0, run_daptrace(A("report", "heatmap", "--terminal", (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	longest = longest_line(out, &lines);
	EXPECT_EQ(h - 1, lines) TH_LOG("%ux%u: %zu lines:\n%s", w, h, lines, out);
	EXPECT_EQ(w - 1, longest) TH_LOG("%ux%u:\n%s", w, h, out);
	EXPECT_EQ(0, strncmp(out, "daptrace heatmap of syn.csv, pid 7, 0.00-5.00 s",
			     strlen("daptrace heatmap of syn.csv, pid 7, 0.00-5.00 s")))
		TH_LOG("%ux%u: title %.100s", w, h, out);
	axis = line_after(out, "+");
	ASSERT_NE(NULL, axis) TH_LOG("%ux%u: no time axis:\n%s", w, h, out);
	EXPECT_NE(NULL, strstr(axis, "time (s)"));
	EXPECT_GE(numbers_in(strstr(axis, "time (s)") + 8), 3) TH_LOG("%ux%u: %.200s", w, h, axis);
	/* the name whole from 160 columns on, else as much as the margin holds */
	row = strstr(out, "a-rather-l");
	ASSERT_NE(NULL, row) TH_LOG("%ux%u:\n%s", w, h, out);
	bar = strchr(row, '|');
	ASSERT_NE(NULL, bar);
	if (w >= 160)
		EXPECT_EQ(0, strncmp(row, name, strlen(name))) TH_LOG("%ux%u: %.60s", w, h, row);
	if (strncmp(row, name, strlen(name)))
		EXPECT_EQ(margin - 1, (size_t)(bar - row)) TH_LOG("%ux%u: %.60s", w, h, row);
	EXPECT_NE(NULL, strstr(out, "[heap] 4.00 MiB|") ?: strstr(out, "4.00 MiB|"))
		TH_LOG("%ux%u", w, h);
	EXPECT_NE(NULL, strstr(out, "gap elided")) TH_LOG("%ux%u", w, h);
	EXPECT_NE(NULL, strchr(out, '@')) TH_LOG("%ux%u: no hot cell", w, h);
}

TEST(terminal_heatmap_fits_every_size)
{
	struct tmp t = { 0 };
	char *syn = synthetic_record_named("/usr/lib/a-rather-long-library-name.so.1");
	const char *rec = tmp_record(&t, "syn.csv", syn);
	size_t lines;

	SKIP_UNLESS_DAPTRACE_BIN();
	free(syn);
	/* every width at the smallest and the largest height, and the reverse */
	for (unsigned int w = 80; w <= 200; w++) {
		check_terminal(_metadata, rec, w, 24);
		check_terminal(_metadata, rec, w, 60);
	}
	for (unsigned int h = 24; h <= 60; h++) {
		check_terminal(_metadata, rec, 80, h);
		check_terminal(_metadata, rec, 200, h);
	}
	/* a pipe is ASCII; colour asked for: escape sequences take no columns */
	EXPECT_EQ(NULL, strchr(out, '\033')) TH_LOG("colour in a pipe");
	ASSERT_EQ(0, run_daptrace(A("report", "heatmap", "--terminal=color", (char *)rec),
				  out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "\033[48;5;229m")) TH_LOG("no hottest colour");
	EXPECT_NE(NULL, strstr(out, "\033[48;5;16m")) TH_LOG("no idle colour");
	EXPECT_EQ(199, longest_line(out, &lines));
	EXPECT_EQ(59, lines);
	unsetenv("COLUMNS");
	unsetenv("LINES");
	EXPECT_EQ(2, run_daptrace(A("report", "heatmap", "--terminal=sixel", (char *)rec),
				  out, sizeof(out)));
	EXPECT_EQ(2, run_daptrace(A("report", "wss", "--terminal", (char *)rec), out,
				  sizeof(out)));
	tmp_clean(&t);
}

/* Memory that cannot be observed: green, or 'x' in ASCII, and in the legend. */
TEST(terminal_heatmap_not_observable)
{
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "u.csv", unobservable);

	SKIP_UNLESS_DAPTRACE_BIN();
	setenv("COLUMNS", "100", 1);
	setenv("LINES", "30", 1);
	ASSERT_EQ(0, run_daptrace(A("report", "heatmap", "--terminal", (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "|xxxx")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "x: not observable")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_daptrace(A("report", "heatmap", "--terminal=color", (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\033[48;5;29m")) TH_LOG("%s", out);
	unsetenv("COLUMNS");
	unsetenv("LINES");
	tmp_clean(&t);
}

TEST(hist_by_access_frequency_and_age)
{
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "r.csv", last_empty);
	struct json_object *j, *v;

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, run_daptrace(A("report", "hist", (char *)rec), out, sizeof(out)))
		TH_LOG("%s", out);
	/*
	 * libc idle in window 1: 1 MiB x 0.1 s of 2 x 1.0039 MiB x 0.1 s, an
	 * average of 341 KiB over the 0.3 s monitored (the last window empty)
	 */
	EXPECT_NE(NULL, strstr(out, "\n0%             341 KiB       49.81%")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n20-30%")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n40-50%")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n90-100%")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "\n10-20%")) TH_LOG("%s", out);
	/*
	 * ages 1, 2 (heap) and 3, 4 (libc) windows of 0.1 s: buckets [0.1, 0.2),
	 * [0.2, 0.4) and [0.4, 0.8) s, the ages before the record's first window
	 * counted at its length
	 */
	EXPECT_NE(NULL, strstr(out, "\n0.4-0.8 s      341 KiB       49.81%\n"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n0.1-0.2 s      1.33 KiB       0.19%\n"))
		TH_LOG("%s", out);
	j = run_daptrace_json(A("report", "hist", "--json", (char *)rec), out, sizeof(out));
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	ASSERT_TRUE(json_object_object_get_ex(j, "access_frequency", &v));
	EXPECT_EQ(4, json_object_array_length(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "age", &v));
	EXPECT_EQ(3, json_object_array_length(v));
	json_object_put(j);
	EXPECT_EQ(2, run_daptrace(A("report", "hist", "--top", "3", (char *)rec), out,
				  sizeof(out)));
	tmp_clean(&t);
}

/*
 * A region read accessed in 10 of its 10 observed checks (the other 10 of
 * the window's 20 unobserved) is accessed in 100 % of what was seen of it,
 * not 50 %; one with all 20 unobserved reads 0, shown as unobservable.
 */
static const char half_unobserved[] = "# daptrace-record v2\n#target,7,a\n"
	"time_ns,seq,pid,start,end,nr_accesses,age,label,nr_unobserved\n"
	"#snap,1,0,100,2,20,0,0\n"
	"100,1,7,4096,8192,10,1,[heap],10\n"
	"100,1,7,1048576,1052672,0,1,[stack],20\n#eof\n";

TEST(hist_frequency_of_the_observed_checks)
{
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "r.csv", half_unobserved);

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, run_daptrace(A("report", "hist", (char *)rec), out, sizeof(out)))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n90-100%")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "\n40-50%")) TH_LOG("%s", out);
	tmp_clean(&t);
}

/* Two targets: a heatmap each, never one address axis for both. */
static const char two_targets[] = "# daptrace-record v1\n#target,7,a\n#target,8,b\n"
	"time_ns,seq,pid,start,end,nr_accesses,age,label\n"
	"#snap,1,0,100,3,20,0,0\n"
	"100,1,7,4096,8192,10,1,[heap]\n"
	"100,1,8,1048576,2097152,5,1,/usr/lib/libc.so.6\n"
	"100,1,8,140737488289792,140737488355328,20,1,[stack]\n"
	"#snap,2,100,200,2,20,0,0\n"
	"200,2,7,4096,8192,10,1,[heap]\n"
	"200,2,8,1048576,2097152,5,1,/usr/lib/libc.so.6\n#eof\n";

TEST(heatmap_per_target)
{
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "two.csv", two_targets);
	char o[160], o7[160], o8[160];
	struct json_object *j;
	struct stat st;

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, run_daptrace(A("report", "heatmap", (char *)rec), out, sizeof(out)))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "two.csv, pid 7\n")) TH_LOG("%.500s", out);
	EXPECT_NE(NULL, strstr(out, "two.csv, pid 8\n")) TH_LOG("%.500s", out);
	/* pid 7's picture has the heap only, pid 8's libc and the stack */
	EXPECT_LT(strstr(out, "[heap]"), strstr(out, "pid 8\n"));
	EXPECT_GT(strstr(out, "[stack]"), strstr(out, "pid 8\n"));
	j = run_daptrace_json(A("report", "heatmap", "--json", (char *)rec), out, sizeof(out));
	ASSERT_NE(NULL, j) TH_LOG("%.300s", out);
	EXPECT_EQ(2, json_object_array_length(j));
	json_object_put(j);
	snprintf(o, sizeof(o), "%s/heat.dat", t.dir);
	snprintf(o7, sizeof(o7), "%s/heat-7.dat", t.dir);
	snprintf(o8, sizeof(o8), "%s/heat-8.dat", t.dir);
	ASSERT_EQ(0, run_daptrace(A("report", "heatmap", "-o", o, (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(0, stat(o7, &st));
	EXPECT_EQ(0, stat(o8, &st));
	EXPECT_NE(0, stat(o, &st));
	/* -p: that one only */
	ASSERT_EQ(0, run_daptrace(A("report", "heatmap", "-p", "8", (char *)rec), out,
				  sizeof(out)));
	EXPECT_EQ(NULL, strstr(out, "pid 7\n")) TH_LOG("%.300s", out);
	tmp_clean(&t);
}

/*
 * Labels are the target's to choose (it names the files it maps): gnuplot
 * runs what is between backquotes in a double-quoted string of the tics
 * file, so none may reach it.
 */
TEST(plot_labels_run_no_command)
{
	struct tmp t = { 0 };
	char rec[256], png[256];
	struct stat st;

	SKIP_UNLESS_DAPTRACE_BIN();
	if (system("gnuplot --version >/dev/null 2>&1"))
		SKIP(return, "gnuplot not installed");
	snprintf(rec, sizeof(rec), "%s", tmp_record(&t, "r.csv", HDR
		 "#snap,1,0,100000000,2,20,0,0\n"
		 "100000000,1,7,4096,8192,3,0,`touch pwned`\n"
		 "100000000,1,7,1048576,2097152,3,0,\"a\"\"`touch pwned`\"\n#eof\n"));
	snprintf(png, sizeof(png), "%s/h.png", t.dir);
	ASSERT_EQ(0, chdir(t.dir));
	ASSERT_EQ(0, run_daptrace(A("report", "heatmap", "--plot", png, rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(0, stat(png, &st));
	EXPECT_NE(0, stat("pwned", &st)) TH_LOG("a label ran a command");
	tmp_clean(&t);
}

/* --plot of several targets: the pictures only, nothing on stdout. */
TEST(heatmap_per_target_plot_leaves_stdout_alone)
{
	static const char two[] = "# daptrace-record v1\n#target,7,a\n#target,8,b\n"
		"time_ns,seq,pid,start,end,nr_accesses,age,label\n"
		"#snap,1,0,100000000,2,20,0,0\n"
		"100000000,1,7,4096,8192,10,1,[heap]\n"
		"100000000,1,8,1048576,2097152,5,1,/usr/lib/libc.so.6\n"
		"#snap,2,100000000,200000000,2,20,0,0\n"
		"200000000,2,7,4096,8192,10,1,[heap]\n"
		"200000000,2,8,1048576,2097152,5,1,/usr/lib/libc.so.6\n#eof\n";
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "two.csv", two);
	char sh[1024], png[160], so[160], *text;
	struct stat st;

	SKIP_UNLESS_DAPTRACE_BIN();
	if (system("gnuplot --version >/dev/null 2>&1"))
		SKIP(return, "gnuplot not installed");
	snprintf(png, sizeof(png), "%s/h.png", t.dir);
	snprintf(so, sizeof(so), "%s/stdout", t.dir);
	snprintf(sh, sizeof(sh), "'%s' report heatmap --plot '%s' '%s' > '%s' 2>/dev/null",
		 daptrace_bin(), png, rec, so);
	ASSERT_EQ(0, WEXITSTATUS(system(sh)));
	snprintf(png, sizeof(png), "%s/h-8.png", t.dir);
	EXPECT_EQ(0, stat(png, &st));
	text = slurp(so);
	ASSERT_NE(NULL, text);
	EXPECT_STREQ("", text);
	tmp_clean(&t);
}

/* On a terminal (a pty from script(1)), --terminal picks colour by itself. */
TEST(terminal_heatmap_colour_on_a_tty)
{
	struct tmp t = { 0 };
	char *syn = synthetic_record(), cmd[512];
	const char *rec = tmp_record(&t, "syn.csv", syn);

	SKIP_UNLESS_DAPTRACE_BIN();
	free(syn);
	if (system("script --version >/dev/null 2>&1"))
		SKIP(return, "script(1) not installed");
	snprintf(cmd, sizeof(cmd), "COLUMNS=90 TERM=xterm-256color %s report heatmap "
		 "--terminal %s", daptrace_bin(), rec);
	unsetenv("NO_COLOR");
	ASSERT_EQ(0, run_full("/usr/bin/script", A("script", "-qec", cmd, "/dev/null"), NULL,
			      out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\033[48;5;")) TH_LOG("no colour on a tty: %.300s", out);
	snprintf(cmd, sizeof(cmd), "COLUMNS=90 TERM=dumb %s report heatmap --terminal %s",
		 daptrace_bin(), rec);
	ASSERT_EQ(0, run_full("/usr/bin/script", A("script", "-qec", cmd, "/dev/null"), NULL,
			      out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "\033[48;5;")) TH_LOG("colour on a dumb terminal");
	tmp_clean(&t);
}

/* A --pid or --at the record does not have is an error, not an idle report. */
TEST(pid_and_time_outside_the_record)
{
	static const char *const modes[] = { "heatmap", "wss", "regions", "hot", "raw",
					     "hist", "objects", "nodes", "pheatmap", "access" };
	/* as recorded: the first window opens after the start, here 0.4 ms */
	static const char late[] = HDR
		"#snap,1,412345,100412345,1,20,0,0\n"
		"100412345,1,7,4096,8192,10,1,\"[heap]\"\n"
		"#snap,2,100412345,200412345,1,20,0,0\n"
		"200412345,2,7,4096,8192,20,2,\"[heap]\"\n"
		"#end,reason,all targets exited\n#eof\n";
	static const struct report_run on_rec[] = {
		{ .words = { "wss", "-p", "7" }, .rc = 0 },
		{ .words = { "hot", "--at", "0" }, .rc = 0, .has = { "snapshot seq 1 " } },
		{ .words = { "hot", "--at", "0.45" }, .rc = 1,
		  .has = { "--at 0.45: more than one window (0.100 s) away from ",
		    "span 0.000 to 0.300 s" } },
		{ .words = { "hot", "--at", "1", "--since", "0.15" }, .rc = 1,
		  .has = { "span 0.100 to 0.300 s" } },
		{ .words = { "hot", "--at", "0.05", "--since", "0.25" }, .rc = 1,
		  .has = { "span 0.200 to 0.300 s" } },
	};
	static const struct report_run on_late[] = {
		{ .words = { "hot", "--at", "0" }, .rc = 0, .has = { "snapshot seq 1 " } },
		/* the recorder stopped up to a window after the last one closed */
		{ .words = { "hot", "--at", "0.25" }, .rc = 0, .has = { "snapshot seq 2 " } },
	};
	struct tmp t = { 0 }, l = { 0 };
	const char *rec = tmp_record(&t, "r.csv", last_empty);
	const char *lrec = tmp_record(&l, "late.csv", late);

	SKIP_UNLESS_DAPTRACE_BIN();
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		EXPECT_EQ(1, run_daptrace(A("report", (char *)modes[i], "-p", "99", (char *)rec),
					  out, sizeof(out))) TH_LOG("%s: %s", modes[i], out);
		EXPECT_NE(NULL, strstr(out, "--pid 99: not a target of ")) TH_LOG("%s", out);
	}
	EXPECT_RUNS(rec, on_rec);
	ASSERT_NE(NULL, lrec);
	EXPECT_RUNS(lrec, on_late);
	tmp_clean(&t);
	tmp_clean(&l);
}

/*
 * Windows whose sampling interval changed while recording (the kernel
 * tunes it), without a sample count: each window's frequency is over its
 * own samples (20 of 100 ms / 5 ms, 20 of 200 ms / 10 ms, 10 of 200 ms /
 * 20 ms: all 100 %), and ages are in time across windows of different
 * lengths.
 */
static const char tuned[] = "# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,100000\n"
	"#target,7,t\ntime_ns,seq,pid,start,end,nr_accesses,age,label\n"
	"#snap,1,0,100000000,1,0,0,0,5000,100000\n"
	"100000000,1,7,4096,8192,20,0,[heap]\n"
	"#snap,2,100000000,300000000,1,0,0,0,10000,200000\n"
	"300000000,2,7,4096,8192,20,1,[heap]\n"
	"#snap,3,300000000,500000000,1,0,0,0,20000,200000\n"
	"500000000,3,7,4096,8192,10,2,[heap]\n#eof\n";

TEST(intervals_of_each_window)
{
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "tuned.csv", tuned);
	struct json_object *j, *snaps, *r;

	SKIP_UNLESS_DAPTRACE_BIN();
	j = run_daptrace_json(A("report", "raw", "--json", (char *)rec), out, sizeof(out));
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	ASSERT_TRUE(json_object_object_get_ex(j, "snapshots", &snaps));
	ASSERT_EQ(3, json_object_array_length(snaps));
	for (int i = 0; i < 3; i++) {
		r = json_object_array_get_idx(json_object_object_get(
			json_object_array_get_idx(snaps, i), "regions"), 0);
		EXPECT_EQ(100, json_object_get_double(json_object_object_get(r, "freq_percent")))
			TH_LOG("window %d", i + 1);
	}
	/* age 2 at the third window: its 0.2 s and the second's 0.2 s */
	EXPECT_EQ(0.4, json_object_get_double(json_object_object_get(r, "age_s")));
	EXPECT_EQ(20000, json_object_get_int(json_object_object_get(
		json_object_array_get_idx(snaps, 2), "sample_us")));
	json_object_put(j);
	/* the heatmap agrees: every column 100 % */
	ASSERT_EQ(0, run_daptrace(A("report", "heatmap", "--addr-bins", "1", (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, " 50.000\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, " 100.000\n")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_daptrace(A("report", "hot", (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, " 100.00   0.40 s    [heap]")) TH_LOG("%s", out);
	tmp_clean(&t);
}

TEST(not_observable_memory_and_footprints)
{
	/* the second snapshot of `report wss --json` */
	static const struct {
		const char *key;
		int64_t want;
	} series1[] = {
		{ "not_observable_bytes", 2097152 },
		{ "rss_bytes", 9437184 },
		{ "vsz_bytes", 1073741824 },
	};
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "u.csv", unobservable);
	struct json_object *j, *v;

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, run_daptrace(A("report", "wss", (char *)rec), out, sizeof(out)))
		TH_LOG("%s", out);
	/* the heap alone is the working set; 2 MiB not observable; rss, vsz */
	EXPECT_NE(NULL, strstr(out, "\n0.100000 4096 2097152 8388608 1073741824\n"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# not observable (never in the working set): max 2.00 MiB"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# footprint: rss max 9.00 MiB, vsz max 1.00 GiB"))
		TH_LOG("%s", out);
	j = run_daptrace_json(A("report", "wss", "--json", (char *)rec), out, sizeof(out));
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	v = json_object_array_get_idx(json_object_object_get(j, "series"), 1);
	for (size_t i = 0; i < sizeof(series1) / sizeof(series1[0]); i++) {
		EXPECT_EQ(series1[i].want,
			  json_object_get_int64(json_object_object_get(v, series1[i].key)))
			TH_LOG("%s", series1[i].key);
	}
	json_object_put(j);
	/* hot: shown, never ranked by a count that means nothing */
	ASSERT_EQ(0, run_daptrace(A("report", "hot", (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, " n/o      0.60 s    /dev/hugepages/x")) TH_LOG("%s", out);
	EXPECT_LT(strstr(out, "libc.so.6"), strstr(out, "/dev/hugepages/x")) TH_LOG("%s", out);
	/* hist: left out of the idle memory, said so */
	ASSERT_EQ(0, run_daptrace(A("report", "hist", (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "# not observable (left out): 2.00 MiB on average"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n0%             1.00 MiB      99.61%\n")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_daptrace(A("report", "raw", (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "2.00 MiB not observable /dev/hugepages/x")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "footprint 7 at 0.200000 s: vsz 1.00 GiB rss 9.00 MiB"))
		TH_LOG("%s", out);
	tmp_clean(&t);
}

/*
 * report wss counts the bytes of the accessed regions that lie inside the
 * target's mappings (the record's #maps rows), never the holes between
 * them, whatever a region's label says:
 *   A [0x10000, 0x14000)  16 KiB "[heap]", accessed, half over a hole: its
 *                         mapping [0x10000, 0x12000) holds 8 KiB of it
 *   B [0x1f000, 0x30000)  68 KiB "[unmapped]", accessed, holding the small
 *                         mapping [0x20000, 0x21000): 4 KiB
 *   C [0x40000, 0x50000)  64 KiB mapped, not accessed
 * Window 1: 8192 + 4096 = 12288 (counted whole: 16384 + 69632 = 86016).
 * Window 2: no #maps row, the map of window 1 holds: 12288.
 * Window 3: a new map without B's mapping: 8192.
 */
#define MAPS_HDR "# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,100000\n" \
	"#target,7,cc1\ntime_ns,seq,pid,start,end,nr_accesses,age,nr_samples,flags,label\n"
#define MAPS_WINDOW(t, seq) \
	"#snap," #seq "," #t "00000000," #t "99999999,3,20,0,0\n" \
	#t "99999999," #seq ",7,65536,81920,10,1,20,0,\"[heap]\"\n" \
	#t "99999999," #seq ",7,126976,196608,3,1,20,0,\"[unmapped]\"\n" \
	#t "99999999," #seq ",7,262144,327680,0,5,20,0,\"[anon]\"\n"
#define MAPS_V1	"#maps,7,50000000,65536,73728,131072,135168,262144,327680\n"
#define MAPS_V2	"#maps,7,250000000,65536,73728,262144,327680\n"

static const char wss_maps[] = MAPS_HDR MAPS_V1 MAPS_WINDOW(0, 1) MAPS_WINDOW(1, 2)
	MAPS_V2 MAPS_WINDOW(2, 3) "#eof\n";
/* the same windows recorded before the maps were: mapping unknown */
static const char wss_no_maps[] = MAPS_HDR MAPS_WINDOW(0, 1) MAPS_WINDOW(1, 2)
	MAPS_WINDOW(2, 3) "#eof\n";

/* A number a JSON report must hold at @path (json_at()); -1: absent. */
struct json_want {
	const char *path;
	int64_t want;
};

/* Run daptrace @argv for a JSON report and check the @n numbers of @w in it. */
static void expect_json(struct __test_metadata *_metadata, char *const *argv,
			const struct json_want *w, size_t n)
{
	struct json_object *j = run_daptrace_json(argv, out, sizeof(out));

	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	for (size_t i = 0; i < n; i++) {
		struct json_object *v = json_at(j, w[i].path);

		EXPECT_EQ(w[i].want, v ? json_object_get_int64(v) : -1) TH_LOG("%s", w[i].path);
	}
	json_object_put(j);
}

#define EXPECT_JSON(argv, w) expect_json(_metadata, argv, w, sizeof(w) / sizeof(w[0]))

/*
 * The record with maps, and the same windows recorded before there were
 * maps: their regions count whole, and the report says so.
 */
TEST(wss_counts_only_mapped_bytes)
{
	static const struct json_want maps[] = {
		{ "series.0.wss_bytes", 12288 },
		{ "series.1.wss_bytes", 12288 },
		{ "series.2.wss_bytes", 8192 },
		{ "wss_bytes.p100", 12288 },
		{ "mapping_unknown_snapshots", 0 },
		{ "mapping_unknown_max_bytes", 0 },
		{ "series.0.mapping_unknown_bytes", -1 },
	}, by_pid[] = {
		{ "groups.0.wss_max_bytes", 12288 },
		{ "groups.0.wss_last_bytes", 8192 },
		/* A 8192 + B 4096 + C 65536: the mapped memory, as monitored */
		{ "groups.0.monitored_max_bytes", 77824 },
		{ "groups.0.mapping_unknown_max_bytes", 0 },
	}, since[] = {
		/* the map read before --since still holds after it */
		{ "series.0.wss_bytes", 12288 },
		{ "mapping_unknown_snapshots", 0 },
	}, whole[] = {
		{ "series.0.wss_bytes", 86016 },
		{ "series.0.mapping_unknown_bytes", 86016 },
		{ "series.2.mapping_unknown_bytes", 86016 },
		{ "mapping_unknown_snapshots", 3 },
		{ "mapping_unknown_max_bytes", 86016 },
	}, whole_by_comm[] = {
		{ "groups.0.mapping_unknown_max_bytes", 86016 },
	};
	static const struct report_run text[] = {
		{ { "wss" }, 0, { "\n0.100000 12288 0 NaN NaN\n", "\n0.300000 8192 0 NaN NaN\n" },
		  "mapping unknown" },
	}, text_whole[] = {
		{ { "wss" }, 0, { "# mapping unknown (no maps of the target in the record): in 3 "
				  "of 3 snapshots accessed regions counted whole, holes between "
				  "mappings included: max 84.0 KiB\n" }, NULL },
		{ { "wss", "--by", "pid" }, 0, { "# mapping unknown" }, NULL },
	};
	struct tmp t = { 0 };
	char *rec = (char *)tmp_record(&t, "maps.csv", wss_maps);

	SKIP_UNLESS_DAPTRACE_BIN();
	EXPECT_JSON(A("report", "wss", "--json", rec), maps);
	EXPECT_JSON(A("report", "wss", "--json", "--by", "pid", rec), by_pid);
	EXPECT_JSON(A("report", "wss", "--json", "--since", "0.15", rec), since);
	EXPECT_RUNS(rec, text);
	rec = (char *)tmp_record(&t, "old.csv", wss_no_maps);
	EXPECT_JSON(A("report", "wss", "--json", rec), whole);
	EXPECT_JSON(A("report", "wss", "--json", "--by", "comm", rec), whole_by_comm);
	EXPECT_RUNS(rec, text_whole);
	tmp_clean(&t);
}

/*
 * report hist weighs each region by its bytes inside the mappings, the
 * windows of wss_counts_only_mapped_bytes: A (50 %) 8 KiB, B (15 %) 4 KiB
 * in two windows of three (2731 bytes), C (0 %) 64 KiB, on average.  By
 * the label without maps: A 16 KiB whole, B ("[unmapped]") left out, C
 * 64 KiB; 80 KiB counted so, and said.
 */
TEST(hist_counts_only_mapped_bytes)
{
	static const struct json_want maps[] = {
		{ "access_frequency.0.avg_bytes", 65536 },
		{ "access_frequency.1.avg_bytes", 2731 },
		{ "access_frequency.2.avg_bytes", 8192 },
		{ "mapping_unknown_avg_bytes", 0 },
	}, label[] = {
		{ "access_frequency.0.avg_bytes", 65536 },
		{ "access_frequency.1.avg_bytes", 16384 },
		{ "access_frequency.2.avg_bytes", -1 },
		{ "mapping_unknown_avg_bytes", 81920 },
	};
	static const struct report_run text[] = {
		{ { "hist" }, 0, { "\n40-50%         8.00 KiB " }, "mapping unknown" },
	}, text_label[] = {
		{ { "hist" }, 0, { "# mapping unknown (no maps of the target in the record): "
				   "80.0 KiB on average counted by the region's label, holes "
				   "between mappings included\n", "\n40-50%         16.0 KiB " },
		  NULL },
	};
	struct tmp t = { 0 };
	char *rec = (char *)tmp_record(&t, "maps.csv", wss_maps);

	SKIP_UNLESS_DAPTRACE_BIN();
	EXPECT_JSON(A("report", "hist", "--json", rec), maps);
	EXPECT_RUNS(rec, text);
	rec = (char *)tmp_record(&t, "old.csv", wss_no_maps);
	EXPECT_JSON(A("report", "hist", "--json", rec), label);
	EXPECT_RUNS(rec, text_label);
	tmp_clean(&t);
}

/*
 * report access counts the bytes of the regions inside the mappings, the
 * windows of wss_counts_only_mapped_bytes: at 0.2 s (window 2, the first
 * map) A 8 KiB (of 16), B 4 KiB (of 68, "[unmapped]"), C 64 KiB: 77824
 * observed, all matched, three regions.  By the label without maps: A and C
 * whole, B left out: 81920 in two regions, and said so.
 */
TEST(access_counts_only_mapped_bytes)
{
	static const struct json_want maps[] = {
		{ "matched_regions", 3 },
		{ "observed_bytes", 77824 },
		{ "matched_bytes", 77824 },
		{ "mapping_unknown_bytes", 0 },
		{ "idle_known_bytes", 77824 },
		{ "cold_tail.0.bytes", 65536 },
	}, label[] = {
		{ "matched_regions", 2 },
		{ "observed_bytes", 81920 },
		{ "matched_bytes", 81920 },
		{ "mapping_unknown_bytes", 81920 },
	};
	static const struct report_run text[] = {
		{ { "access", "--at", "0.2" }, 0, { "# matched 3 of 3 regions: 76.0 KiB of 76.0 KiB "
						    "observed" }, "mapping unknown" },
	}, text_label[] = {
		{ { "access", "--at", "0.2" }, 0, { "# mapping unknown (no maps of the target in "
						    "the record): 80.0 KiB observed counted by "
						    "the region's label, holes between mappings "
						    "included\n" }, NULL },
	};
	struct tmp t = { 0 };
	char *rec = (char *)tmp_record(&t, "maps.csv", wss_maps);

	SKIP_UNLESS_DAPTRACE_BIN();
	EXPECT_JSON(A("report", "access", "--json", "--at", "0.2", rec), maps);
	EXPECT_RUNS(rec, text);
	rec = (char *)tmp_record(&t, "old.csv", wss_no_maps);
	EXPECT_JSON(A("report", "access", "--json", "--at", "0.2", rec), label);
	EXPECT_RUNS(rec, text_label);
	tmp_clean(&t);
}

/*
 * Issue 30, defect 4: --addr zooms in on the range, as damo clips to it,
 * rather than drawing the whole block around it; the other reports count
 * only the part of a region inside the range.
 */
TEST(addr_zooms_in)
{
	static const struct report_run runs[] = {
		{ .words = { "heatmap", "--addr", "0x100000-0x110000" }, .rc = 0,
		  .has = { ": 0x100000-0x110000 (64.0 KiB) /usr/lib/libc.so.6\n" } },
		{ .words = { "hot", "--addr", "0x100000-0x110000" }, .rc = 0,
		  .has = { "0x100000           0x110000           64.0 KiB" } },
		{ .words = { "wss", "--addr", "0x100000-0x110000" }, .rc = 0,
		  .has = { "\n0.200000 65536 " } },
	};

	EXPECT_RUNS_ON("r.csv", last_empty, runs);
}

/*
 * Issue 30, defect 9: heatmap --json with many rows took 40 times the
 * memory of the same grid as text (a json-c tree of millions of numbers).
 * Written as it goes, it stays within a small multiple of the grid.
 */
/*
 * The peak resident size in KiB of `daptrace report heatmap @json
 * --addr-bins 10000 @rec` (@json "--json" or ""), as /usr/bin/time reports
 * it; -1 where that could not be read.
 */
static long heatmap_peak_kib(const char *rec, const char *json)
{
	char cmd[512];
	long kib;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "/usr/bin/time -f %%M '%s' report heatmap %s "
		 "--addr-bins 10000 '%s' 2>&1 >/dev/null | tail -n 1", daptrace_bin(), json, rec);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &kib) != 1)
		kib = -1;
	pclose(f);
	return kib;
}

TEST(heatmap_json_memory)
{
	struct tmp t = { 0 };
	char *syn = synthetic_record();
	const char *rec = tmp_record(&t, "syn.csv", syn);
	long kb_json, kb_text;

	SKIP_UNLESS_DAPTRACE_BIN();
	free(syn);
	if (access("/usr/bin/time", X_OK))
		SKIP(return, "/usr/bin/time not installed");
	kb_json = heatmap_peak_kib(rec, "--json");
	ASSERT_LT(0, kb_json);
	kb_text = heatmap_peak_kib(rec, "");
	ASSERT_LT(0, kb_text);
	/* the grid: 50 columns x 10000 rows of doubles, 4 MB; text needs ~4 MB more */
	EXPECT_LT(kb_json, 2 * kb_text) TH_LOG("json %ld KiB, text %ld KiB", kb_json, kb_text);
	tmp_clean(&t);
}

/*
 * Process trees: a child joins as a #target row between snapshots (and
 * exits with an #exit row): every report sees it, --pid finds it, the
 * heatmap draws it.  A region of a pid no #target row names is an error
 * naming its line, never drawn and counted (issue 30, defect 7).
 */
TEST(targets_joining_later)
{
	static const char tree[] = HDR
		"#snap,1,0,100000000,1,20,0,0\n"
		"100000000,1,7,4096,8192,10,1,[heap]\n"
		"#target,9,child,7\n"
		"#snap,2,100000000,200000000,2,20,0,0\n"
		"200000000,2,7,4096,8192,10,1,[heap]\n"
		"200000000,2,9,1048576,2097152,20,0,[heap]\n"
		"#exit,9,250000000\n"
		"#snap,3,200000000,300000000,1,20,0,0\n"
		"300000000,3,7,4096,8192,10,1,[heap]\n#eof\n";
	static const char stray[] = HDR
		"#snap,1,0,100000000,2,20,0,0\n"
		"100000000,1,7,4096,8192,10,1,[heap]\n"
		"100000000,1,9,1048576,2097152,20,0,[heap]\n#eof\n";
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "tree.csv", tree);
	char dat[160];

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, run_daptrace(A("report", "wss", "-p", "9", (char *)rec), out, sizeof(out)))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n0.200000 1048576 ")) TH_LOG("%s", out);
	snprintf(dat, sizeof(dat), "%s/h.dat", t.dir);
	ASSERT_EQ(0, run_daptrace(A("report", "heatmap", "-o", dat, (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	snprintf(dat, sizeof(dat), "%s/h-9.dat", t.dir);
	EXPECT_EQ(0, access(dat, R_OK)) TH_LOG("no heatmap of the child");
	rec = tmp_record(&t, "stray.csv", stray);
	EXPECT_EQ(1, run_daptrace(A("report", "wss", (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "stray.csv:10: region row of pid 9, which no #target row "
			       "names")) TH_LOG("%s", out);
	tmp_clean(&t);
}

/*
 * A build's tree: make (7) starts two shells (8, 9) in their own cgroups;
 * 8 execs cc1 at 0.2 s, 9 exits at 0.3 s.  wss, hot and access by
 * process, command name and cgroup; a footprint holds until the next one
 * (#meta footprints=latest).
 */
static const char tree_rec[] = "# daptrace-record v1\n#meta,aggr_us,100000\n"
	"#meta,footprints,latest\n#target,7,make,1,/build,0\n"
	"time_ns,seq,pid,start,end,nr_accesses,age,label\n"
	"#footprint,7,100000000,8192,4096\n"
	"#snap,1,0,100000000,2,20,0,0\n"
	"100000000,1,7,4096,8192,10,1,[heap]\n"
	"100000000,1,7,1048576,2097152,0,1,[anon]\n"
	"#target,8,sh,7,/build/a,150000000\n"
	"#target,9,sh,7,/build/b,150000000\n"
	"#snap,2,100000000,200000000,3,20,0,0\n"
	"200000000,2,7,4096,8192,10,1,[heap]\n"
	"200000000,2,8,1048576,3145728,5,0,[heap]\n"
	"200000000,2,9,1048576,2097152,0,0,[heap]\n"
	"#target,8,cc1,7,/build/a,150000000\n"
	"#snap,3,200000000,300000000,3,20,0,0\n"
	"300000000,3,7,4096,8192,0,0,[heap]\n"
	"300000000,3,8,1048576,3145728,5,0,[heap]\n"
	"300000000,3,9,1048576,2097152,5,0,[heap]\n"
	"#exit,9,350000000,exit\n"
	"#snap,4,300000000,400000000,2,20,0,0\n"
	"400000000,4,7,4096,8192,10,1,[heap]\n"
	"400000000,4,8,1048576,3145728,5,1,[heap]\n"
	"#eof\n";

static struct json_object *group_at(struct json_object *j, size_t i)
{
	struct json_object *arr;

	if (!json_object_object_get_ex(j, "groups", &arr) || i >= json_object_array_length(arr))
		return NULL;
	return json_object_array_get_idx(arr, i);
}

static uint64_t field_u64(struct json_object *o, const char *k)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, k, &v) ? json_object_get_uint64(v) : ~0ULL;
}

static const char *field_str(struct json_object *o, const char *k)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "";
}

TEST(groups_by_process_comm_and_cgroup)
{
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "tree.csv", tree_rec);
	struct json_object *j, *g;
	/* bad input */
	static const struct report_run bad_by[] = {
		{ .words = { "wss", "--by", "user" }, .rc = 2,
		  .has = { "--by: invalid value 'user' (expected pid, comm or cgroup)" } },
		{ .words = { "heatmap", "--by", "pid" }, .rc = 2,
		  .has = { "--by does not apply to 'report heatmap'" } },
		{ .words = { "hot", "--by", "pid", "--at", "1" }, .rc = 2 },
		{ .words = { "hot", "--by", "pid", "--by-label" }, .rc = 2 },
		{ .words = { "wss", "--by", "pid", "--plot", "x.png" }, .rc = 2 },
	};

	SKIP_UNLESS_DAPTRACE_BIN();
	/* by command name, as the names were at each time: cc1 from 0.2 s on */
	j = run_daptrace_json(A("report", "wss", "--by", "comm", "--json", (char *)rec),
			      out, sizeof(out));
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	EXPECT_STREQ("comm", field_str(j, "by"));
	g = group_at(j, 0);
	EXPECT_STREQ("cc1", field_str(g, "group"));
	EXPECT_EQ(1, field_u64(g, "processes"));
	EXPECT_EQ(2, field_u64(g, "snapshots"));
	EXPECT_EQ(2097152, field_u64(g, "wss_mean_bytes"));
	g = group_at(j, 1);
	EXPECT_STREQ("sh", field_str(g, "group"));
	EXPECT_EQ(2, field_u64(g, "processes"));
	EXPECT_EQ(1572864, field_u64(g, "wss_mean_bytes"));
	EXPECT_EQ(2097152, field_u64(g, "wss_max_bytes"));
	EXPECT_EQ(1048576, field_u64(g, "wss_last_bytes"));
	g = group_at(j, 2);
	EXPECT_STREQ("make", field_str(g, "group"));
	EXPECT_EQ(4, field_u64(g, "snapshots"));
	EXPECT_EQ(3072, field_u64(g, "wss_mean_bytes"));
	EXPECT_EQ(1052672, field_u64(g, "monitored_max_bytes"));
	/* its footprint of 0.1 s holds for the whole record */
	EXPECT_EQ(4096, field_u64(g, "rss_max_bytes"));
	EXPECT_EQ(NULL, group_at(j, 3));
	json_object_put(j);

	/* per-cgroup totals */
	ASSERT_EQ(0, run_daptrace(A("report", "wss", "--by", "cgroup", (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# working set size of ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n/build/a ")) TH_LOG("%s", out);
	EXPECT_LT(strstr(out, "\n/build/a "), strstr(out, "\n/build/b ")) TH_LOG("%s", out);
	EXPECT_LT(strstr(out, "\n/build/b "), strstr(out, "\n/build ")) TH_LOG("%s", out);
	/* by pid, one of them */
	ASSERT_EQ(0, run_daptrace(A("report", "wss", "--by", "pid", "-p", "9", (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n9 ")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "\n8 ")) TH_LOG("%s", out);

	/* the series carries make's footprint through the windows without one */
	ASSERT_EQ(0, run_daptrace(A("report", "wss", (char *)rec), out, sizeof(out)))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n0.200000 2101248 0 4096 8192\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n0.400000 2101248 0 4096 8192\n")) TH_LOG("%s", out);

	/* hot ranks the groups over the record by access frequency */
	j = run_daptrace_json(A("report", "hot", "--by", "comm", "--json", (char *)rec),
			      out, sizeof(out));
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	EXPECT_STREQ("cc1", field_str(group_at(j, 0), "group"));
	EXPECT_STREQ("sh", field_str(group_at(j, 1), "group"));
	EXPECT_STREQ("make", field_str(group_at(j, 2), "group"));
	EXPECT_EQ(2, field_u64(group_at(j, 1), "processes"));
	json_object_put(j);
	ASSERT_EQ(0, run_daptrace(A("report", "hot", "--by", "comm", (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n25.00 ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n18.75 ")) TH_LOG("%s", out);

	/* access: the last snapshot's bytes per cgroup */
	j = run_daptrace_json(A("report", "access", "--by", "cgroup", "--json", (char *)rec),
			      out, sizeof(out));
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	g = group_at(j, 0);
	EXPECT_STREQ("/build/a", field_str(g, "group"));
	EXPECT_EQ(2097152, field_u64(g, "matched_bytes"));
	EXPECT_STREQ("/build", field_str(group_at(j, 1), "group"));
	EXPECT_EQ(4096, field_u64(group_at(j, 1), "matched_bytes"));
	json_object_put(j);
	ASSERT_EQ(0, run_daptrace(A("report", "access", "--by", "comm", "--freq", "0-0",
				    (char *)rec), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# matched bytes by comm\n")) TH_LOG("%s", out);

	/* records from before: no cgroup, the group is "?" */
	rec = tmp_record(&t, "old.csv", last_empty);
	ASSERT_EQ(0, run_daptrace(A("report", "wss", "--by", "cgroup", (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n? ")) TH_LOG("%s", out);

	/*
	 * A region of 2^64 - 1 bytes: sums saturate (the fuzzer found a
	 * double of 2^64 cast to an integer: undefined, 0 B here).
	 */
	rec = tmp_record(&t, "huge.csv", huge_region);
	ASSERT_EQ(0, run_daptrace(A("report", "wss", "--by", "pid", (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "16.0 EiB    16.0 EiB    16.0 EiB    16.0 EiB"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "all: wss mean 16.0 EiB")) TH_LOG("%s", out);

	EXPECT_RUNS(rec, bad_by);
	tmp_clean(&t);
}

/*
 * report access (damo report access): a region a (1 MiB, idle, age 10
 * windows of 1 s: idle 11 s), b (64 KiB, idle 3 s), c (2 MiB, accessed),
 * hugetlb (not observable) and a hole.
 */
static const char pattern_rec[] = "# daptrace-record v2\n#meta,sample_us,50000\n"
	"#meta,aggr_us,1000000\n#target,7,t\n"
	"time_ns,seq,pid,start,end,nr_accesses,age,nr_samples,flags,label\n"
	"#snap,1,0,1000000000,1,20,0,0\n1000000000,1,7,1048576,2097152,0,8,20,0,a\n"
	"#snap,2,1000000000,2000000000,1,20,0,0\n2000000000,2,7,1048576,2097152,0,9,20,0,a\n"
	"#snap,3,2000000000,3000000000,5,20,0,0\n"
	"3000000000,3,7,1048576,2097152,0,10,20,0,a\n"
	"3000000000,3,7,2097152,2162688,0,2,20,0,b\n"
	"3000000000,3,7,3145728,5242880,10,5,20,0,c\n"
	"3000000000,3,7,6291456,7340032,0,7,20,1,hugetlb\n"
	"3000000000,3,7,8388608,9437184,0,10,20,0,[unmapped]\n#eof\n";

TEST(access_pattern_queries)
{
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "a.csv", pattern_rec);
	struct json_object *j, *v;

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, run_daptrace(A("report", "access", "--sort=-temperature", (char *)rec),
				  out, sizeof(out))) TH_LOG("%s", out);
	/* the hole and the unobservable memory never match; hottest first */
	EXPECT_NE(NULL, strstr(out, "# matched 3 of 5 regions: 3.06 MiB of 3.06 MiB observed "
			       "(100.0 %); not observable: 1.00 MiB")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "2.00 MiB    50.00    5.00 s    0 s       500005000    c\n"
			       "7        0x200000           0x210000           64.0 KiB    0.00     "
			       "2.00 s    3.00 s    -200000000   b\n")) TH_LOG("%s", out);
	/* by bytes: 65 % accessed (idle 0), then b, then a (idle 11 s) */
	EXPECT_NE(NULL, strstr(out, "#   p50   0 s       500005000\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "#   p75   11.0 s    500005000\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "#   2.00 s    1.06 MiB     34.7 %\n"
			       "#   5.00 s    1.00 MiB     32.7 %\n")) TH_LOG("%s", out);
	/* what a reclaim scheme would take: >= 1 MiB, idle, for >= 5 s */
	j = run_daptrace_json(A("report", "access", "--json", "--size", "1M-", "--freq",
				"0-0", "--age", "5s-", (char *)rec),
			      out, sizeof(out));
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	EXPECT_EQ(1, json_object_get_int(json_object_object_get(j, "matched_regions")));
	EXPECT_EQ(1048576, json_object_get_int64(json_object_object_get(j, "matched_bytes")));
	v = json_object_array_get_idx(json_object_object_get(j, "regions"), 0);
	EXPECT_STREQ("a", json_object_get_string(json_object_object_get(v, "label")));
	EXPECT_EQ(11, json_object_get_double(json_object_object_get(v, "idle_s")));
	json_object_put(j);
	ASSERT_EQ(0, run_daptrace(A("report", "access", "--sort", "size", "--top", "1",
				    "--age", "-3s", (char *)rec), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "64.0 KiB")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# ... 0 more") ?: strstr(out, " b\n")) TH_LOG("%s", out);
	/* bad ranges name their flag; the pattern flags are access's own */
	EXPECT_EQ(2, run_daptrace(A("report", "access", "--freq", "50-10", (char *)rec), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--freq: invalid value '50-10'")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_daptrace(A("report", "access", "--sort", "colour", (char *)rec), out,
				  sizeof(out)));
	EXPECT_EQ(2, run_daptrace(A("report", "access", "--age", "10-", (char *)rec), out,
				  sizeof(out)));
	EXPECT_EQ(2, run_daptrace(A("report", "hot", "--size", "1M-", (char *)rec), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--size does not apply to 'report hot'")) TH_LOG("%s", out);
	tmp_clean(&t);
}

/* A number with 10 or more decimals (json-c's default "%.17g"), or NULL. */
static const char *long_fraction(const char *s)
{
	for (; (s = strchr(s, '.')); s++)
		if (strspn(s + 1, "0123456789") >= 10)
			return s;
	return NULL;
}

/*
 * Issue 30, defects 7 and 8: flags that cannot apply are errors; times take
 * units as record's do; ages and JSON numbers say what they are; an empty
 * report says why.
 */
TEST(units_messages_and_json_numbers)
{
	struct tmp t = { 0 };
	const char *rec = tmp_record(&t, "r.csv", last_empty);
	struct json_object *j, *v;
	const char *p99, *p100;

	static const struct report_run runs[] = {
		{ .words = { "hot", "--by-label", "--at", "5" }, .rc = 2,
		  .has = { "--at picks one snapshot, --by-label ranks" } },
		/* --since/--until/--at: seconds, or a unit */
		{ .words = { "wss", "--since", "150ms" }, .rc = 0, .has = { "# snapshots 2," } },
		{ .words = { "hot", "--at", "0.1s" }, .rc = 0, .has = { "snapshot seq 1 " } },
		{ .words = { "wss", "--until", "1h" }, .rc = 2,
		  .has = { "--until: invalid value '1h'" } },
		/* the age has its unit */
		{ .words = { "hot" }, .rc = 0, .has = { " 0.20 s    [heap]" } },
		/* nothing to show: why */
		{ .words = { "wss", "--since", "1000" }, .rc = 1,
		  .has = { "no snapshot ends within --since 1000 s: the record's 3 "
		    "snapshots end from 0.100 to 0.300 s" } },
		{ .words = { "heatmap", "--label", "nomatch" }, .rc = 1,
		  .has = { "no region matches --label 'nomatch' (of 4 regions in 3 snapshots)" },
		  .lacks = "pid" },
	};

	SKIP_UNLESS_DAPTRACE_BIN();
	EXPECT_RUNS(rec, runs);
	/* JSON: p99 before p100, numbers at their precision, metadata numbers */
	ASSERT_EQ(0, run_daptrace(A("report", "wss", "--json", (char *)rec), out, sizeof(out)));
	p99 = strstr(out, "\"p99\"");
	p100 = strstr(out, "\"p100\"");
	ASSERT_NE(NULL, p99);
	ASSERT_NE(NULL, p100);
	EXPECT_LT(p99, p100) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"time_s\":0.1,") ?: strstr(out, "\"time_s\": 0.1,"))
		TH_LOG("%s", out);
	ASSERT_EQ(0, run_daptrace(A("report", "raw", "--json", (char *)rec), out, sizeof(out)));
	EXPECT_EQ(NULL, long_fraction(out)) TH_LOG("%s", out);
	j = json_tokener_parse(out);
	ASSERT_NE(NULL, j);
	v = json_object_object_get(json_object_object_get(j, "meta"), "aggr_us");
	EXPECT_TRUE(json_object_is_type(v, json_type_int)) TH_LOG("%s", out);
	EXPECT_EQ(100000, json_object_get_int(v));
	EXPECT_TRUE(json_object_is_type(json_object_object_get(json_object_object_get(j, "meta"),
				       "kernel"), json_type_string));
	json_object_put(j);
	tmp_clean(&t);
}

TEST_HARNESS_MAIN
