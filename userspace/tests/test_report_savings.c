// SPDX-License-Identifier: GPL-2.0-only
/*
 * report savings (issue 39, part 1) on records small enough to work out
 * by hand: what reclaiming everything idle for at least T saves, the
 * refaults it causes and how soon, memory freed unused apart from memory
 * whose future the record does not know, what is never idle enough (not
 * observable, unknown age), memory no scheme can act on (the kernel's
 * special mappings, the other --type), holes by the record's map, ranges
 * that split and merge, --by
 * pid, the knee, JSON, the plot, and the flags it refuses.
 */
#include <json-c/json.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "run_cmd.h"

static char out[1 << 18];

#define HDR "# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,1000000\n" \
	    "#meta,page_size,4096\n"
#define COLS "time_ns,seq,pid,start,end,nr_accesses,age,nr_samples,flags,label\n"

/*
 * The main record: pid 7, eight windows of 1 s (window w ends at w s);
 * idle time is by address: since the end of the last window in which the
 * byte was in an accessed region, else since the record began (ages do
 * not count: c's claims more).
 *   a  0x10000  4 KiB  idle in windows 1-5: idle 1..5 s, then accessed
 *                      from window 6 on
 *   b  0x20000  8 KiB  idle in windows 1-4, then unmapped (gone)
 *   c  0x30000 16 KiB  idle to the record's end (1..8 s, though its age
 *                      says since before the record): future unknown
 *   d  0x40000  4 KiB  not observable (flags 1), "idle" as long as c
 *   e  0x50000  4 KiB  idle, age unknown (an empty field)
 *   a 64 KiB [unmapped] hole, idle: no memory at all
 *
 * --thresholds 1s,5s,6s:
 * T = 1 s: a, b and c reclaimed in window 1 (28 KiB = 28672); a refaults
 *   in window 6, 5 s later; b is unmapped in window 5: never reused
 *   (8192); c still reclaimed at the end: unknown (16384, 57.143 % of
 *   28672).  Saved per window: a 4096 in w1-5, b 8192 in w1-4, c 16384
 *   in w1-8: (20480 + 32768 + 131072) / 8 = 23040; last window 16384.
 * T = 5 s: a and c reclaimed in window 5 (their idle reaches 5 s), a
 *   refaults in window 6, 1 s later.  Reclaimed 20480, refaulted 4096,
 *   unknown 16384.  Saved (4096 + 4 x 16384) / 8 = 8704.
 * T = 6 s: a never reaches 6 s: no refault; c alone, reclaimed in window
 *   6: saved 3 x 16384 / 8 = 6144.
 * Refaults per s of the 8 s: 4096 / 8 = 512 B/s = 0.125 pages/s at 1 s
 * and 5 s, 0 at 6 s: within 10 % of the most only 6 s, the knee.
 * Left out each window: d 4096 not observable, e 4096 of unknown age;
 * observed: a 4096 + b (8192 x 4 / 8) + c 16384 + e 4096 = 28672.
 */
static void write_main(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fputs(HDR "#target,7,app\n" COLS, f);
	for (int w = 1; w <= 8; w++) {
		unsigned long long t = w * 1000000000ULL;

		fprintf(f, "#snap,%d,%llu,%llu,%d,200,0,0\n", w, t - 1000000000ULL, t,
			w <= 4 ? 6 : 5);
		if (w <= 5)
			fprintf(f, "%llu,%d,7,65536,69632,0,%d,200,0,a\n", t, w, w - 1);
		else
			fprintf(f, "%llu,%d,7,65536,69632,200,%d,200,0,a\n", t, w, w - 6);
		if (w <= 4)
			fprintf(f, "%llu,%d,7,131072,139264,0,%d,200,0,b\n", t, w, w - 1);
		fprintf(f, "%llu,%d,7,196608,212992,0,%d,200,0,c\n", t, w, w + 8);
		fprintf(f, "%llu,%d,7,262144,266240,0,%d,200,1,/dev/hugepages/d\n", t, w, w + 8);
		fprintf(f, "%llu,%d,7,327680,331776,0,,200,0,e\n", t, w);
		fprintf(f, "%llu,%d,7,393216,458752,0,%d,200,0,[unmapped]\n", t, w, w - 1);
	}
	fputs("#eof\n", f);
	fclose(f);
}

/*
 * Two processes, four windows of 1 s, --thresholds 1s,3s.
 * pid 7: f, 16 KiB at 0x80000, idle in windows 1-2 (1 s, 2 s); in window
 *   3 split: its first page accessed, the other three idle for 3 s; in
 *   window 4 merged again (age 0), the first page idle 1 s, the others
 *   4 s: by address, a merge does not make them younger.
 *   T = 1 s: 16384 reclaimed in window 1; the first page refaults in
 *   window 3 (2 s later) and is reclaimed again in window 4: reclaimed
 *   20480, refaulted 4096, unknown 16384.  Saved 16384, 16384, 12288,
 *   16384: mean 15360.
 *   T = 3 s: the three idle pages reclaimed in window 3 (12288), unknown
 *   at the end; saved 12288 in windows 3 and 4: mean 6144.
 * pid 8 (b): g, 4 KiB accessed, and h, 8 KiB idle 1 s, 2 s; exits after
 *   window 2.  T = 1 s: h reclaimed (8192), never reused: its process
 *   left.  Saved 8192 in both its windows.
 * All: T = 1 s reclaimed 28672 = refaulted 4096 + never 8192 + unknown
 *   16384; 4096 B over 4 s = 1024 B/s; the knee is 3 s (no refaults).
 */
static const char two_procs[] = HDR "#target,7,a\n#target,8,b\n" COLS
	"#snap,1,0,1000000000,3,200,0,0\n"
	"1000000000,1,7,524288,540672,0,0,200,0,f\n"
	"1000000000,1,8,589824,593920,200,0,200,0,g\n"
	"1000000000,1,8,655360,663552,0,0,200,0,h\n"
	"#snap,2,1000000000,2000000000,3,200,0,0\n"
	"2000000000,2,7,524288,540672,0,1,200,0,f\n"
	"2000000000,2,8,589824,593920,200,1,200,0,g\n"
	"2000000000,2,8,655360,663552,0,1,200,0,h\n"
	"#exit,8,2500000000\n"
	"#snap,3,2000000000,3000000000,2,200,0,0\n"
	"3000000000,3,7,524288,528384,200,0,200,0,f\n"
	"3000000000,3,7,528384,540672,0,2,200,0,f\n"
	"#snap,4,3000000000,4000000000,1,200,0,0\n"
	"4000000000,4,7,524288,540672,0,0,200,0,f\n"
	"#eof\n";

/*
 * Mappings of each kind, pid 7, four windows of 1 s: [heap] 8 KiB, a
 * file's 4 KiB, [vdso] 8 KiB and [vvar] 16 KiB idle throughout; [anon]
 * 4 KiB idle in windows 1-2, accessed in 3-4.  At T = 1 s everything idle
 * the scheme can act on is reclaimed in window 1, [anon] refaults in
 * window 3; the special mappings never are (the policy engine skips them:
 * no pageout can reach them).
 *   any:  reclaimed 8192 + 4096 + 4096 = 16384, refaulted 4096; saved
 *         (16384 x 2 + 12288 x 2) / 4 = 14336; out of reach 24576
 *   anon: reclaimed 12288, refaulted 4096; saved (12288 x 2 + 8192 x 2)
 *         / 4 = 10240; out of reach 24576 + 4096 = 28672
 *   file: reclaimed and saved 4096, no refault; out of reach 36864
 */
static const char kinds[] = HDR "#target,7,app\n" COLS
#define KINDS_WINDOW(w, start, acc) \
	"#snap," #w "," #start "," #w "000000000,5,200,0,0\n" \
	#w "000000000," #w ",7,65536,73728,0,0,200,0,[heap]\n" \
	#w "000000000," #w ",7,131072,135168,0,0,200,0,/usr/bin/app\n" \
	#w "000000000," #w ",7,196608,204800,0,0,200,0,[vdso]\n" \
	#w "000000000," #w ",7,262144,278528,0,0,200,0,[vvar]\n" \
	#w "000000000," #w ",7,327680,331776," #acc ",0,200,0,[anon]\n"
	KINDS_WINDOW(1, 0, 0) KINDS_WINDOW(2, 1000000000, 0)
	KINDS_WINDOW(3, 2000000000, 200) KINDS_WINDOW(4, 3000000000, 200)
	"#eof\n";
#undef KINDS_WINDOW

static struct json_object *savings_json(struct __test_metadata *_metadata, const char *rec,
					const char *thresholds, const char *by)
{
	struct json_object *j;
	int ret;

	if (by)
		ret = run_daptrace(A("report", "savings", "--json", "--thresholds",
				     (char *)thresholds, "--by", (char *)by, (char *)rec),
				   out, sizeof(out));
	else
		ret = run_daptrace(A("report", "savings", "--json", "--thresholds",
				     (char *)thresholds, (char *)rec), out, sizeof(out));
	EXPECT_EQ(0, ret) TH_LOG("%s", out);
	j = json_tokener_parse(out);
	EXPECT_NE(NULL, j) TH_LOG("not JSON: %.500s", out);
	return j;
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* threshold @k of the curve of @st ("all" or a group) */
static struct json_object *point(struct json_object *st, size_t k)
{
	struct json_object *c = get(st, "curve");

	return c && k < json_object_array_length(c) ? json_object_array_get_idx(c, k) : NULL;
}

static double num(struct json_object *o, const char *k)
{
	return json_object_get_double(get(o, k));
}

/* One number the curve must have: field @field of threshold @k. */
struct want {
	size_t k;
	const char *field;
	double v;
};

static void expect_curve(struct __test_metadata *_metadata, struct json_object *st,
			 const struct want *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(w[i].v, num(point(st, w[i].k), w[i].field))
			TH_LOG("curve[%zu].%s", w[i].k, w[i].field);
	}
}

#define EXPECT_CURVE(st, ...) do { \
	static const struct want w_[] = { __VA_ARGS__ }; \
	expect_curve(_metadata, (st), w_, sizeof(w_) / sizeof(w_[0])); \
} while (0)

/* A new record file @name in @dir, its path in @path; NULL if it cannot be made. */
static FILE *new_record(const char *dir, const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	return fopen(path, "w");
}

FIXTURE(rec)
{
	char dir[64];
	char main_rec[128], two[128];
	struct json_object *j;		/* main_rec --thresholds 6s,1s,5s --json */
	struct json_object *all;	/* its "all" */
};

FIXTURE_SETUP(rec)
{
	FILE *f;

	SKIP_UNLESS_DAPTRACE_BIN();
	strcpy(self->dir, "/tmp/daptrace-savings-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->main_rec, sizeof(self->main_rec), "%s/main.csv", self->dir);
	snprintf(self->two, sizeof(self->two), "%s/two.csv", self->dir);
	write_main(self->main_rec);
	f = fopen(self->two, "w");
	ASSERT_NE(NULL, f);
	fputs(two_procs, f);
	fclose(f);
	/* out of order: they come back sorted */
	self->j = savings_json(_metadata, self->main_rec, "6s,1s,5s", NULL);
	ASSERT_NE(NULL, self->j);
	self->all = get(self->j, "all");
}

FIXTURE_TEARDOWN(rec)
{
	char cmd[128];

	if (self->j)
		json_object_put(self->j);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
}

/* A region idle for 5 s and then touched refaults for T <= 5 s, not for 6 s. */
TEST_F(rec, refaults_and_time_to_reuse)
{
	struct json_object *all = self->all;

	/* thresholds come back in order */
	EXPECT_CURVE(all,
		{ 0, "threshold_s", 1 },
		{ 1, "threshold_s", 5 },
		{ 2, "threshold_s", 6 },
		{ 0, "refaulted_bytes", 4096 },
		{ 0, "reuse_p50_s", 5 },
		{ 0, "reuse_p90_s", 5 },
		{ 0, "refault_bytes_per_s", 512 },
		{ 0, "refault_pages_per_s", 0.125 },
		{ 1, "refaulted_bytes", 4096 },
		{ 1, "reuse_p50_s", 1 },
		{ 1, "reclaimed_bytes", 20480 },
		{ 2, "refaulted_bytes", 0 },
		{ 2, "refault_pages_per_s", 0 });
	/* nothing refaulted: no reuse time, not 0 */
	EXPECT_EQ(NULL, get(point(all, 2), "reuse_p50_s"));
	EXPECT_TRUE(json_object_object_get_ex(point(all, 2), "reuse_p50_s", NULL));
	EXPECT_EQ(8, num(all, "seconds"));
	EXPECT_EQ(8, num(all, "windows"));
}

/* b, unmapped unused: saved, no refault, never reused. */
TEST_F(rec, memory_never_touched_again)
{
	struct json_object *all = self->all;

	EXPECT_CURVE(all,
		{ 0, "saved_mean_bytes", 23040 },
		{ 0, "reclaimed_bytes", 28672 },
		{ 0, "never_reused_bytes", 8192 },
		/* a alone refaults */
		{ 0, "refaulted_bytes", 4096 },
		{ 1, "saved_mean_bytes", 8704 },
		{ 1, "never_reused_bytes", 0 });
}

/* c is still reclaimed when the record ends: unknown, never "never reused". */
TEST_F(rec, unknown_future_reported_apart)
{
	struct json_object *all = self->all;

	for (size_t k = 0; k < 3; k++) {
		struct json_object *p = point(all, k);

		EXPECT_EQ(16384, num(p, "unknown_future_bytes")) TH_LOG("threshold %zu", k);
		/* the three outcomes add up to what was reclaimed */
		EXPECT_EQ(num(p, "reclaimed_bytes"), num(p, "refaulted_bytes") +
			  num(p, "never_reused_bytes") + num(p, "unknown_future_bytes"));
		EXPECT_EQ(16384, num(p, "saved_last_bytes"));
	}
	EXPECT_EQ(57.143, num(point(all, 0), "unknown_future_percent"));
	EXPECT_EQ(100, num(point(all, 2), "unknown_future_percent"));
}

/* d (not observable) and e (age unknown) are never idle enough; the hole is no memory. */
TEST_F(rec, unobservable_and_unknown_age_excluded)
{
	struct json_object *all = self->all;

	EXPECT_EQ(4096, num(all, "not_observable_mean_bytes"));
	EXPECT_EQ(4096, num(all, "age_unknown_idle_mean_bytes"));
	EXPECT_EQ(28672, num(all, "observed_mean_bytes"));
	/* with d, e or the hole counted these would be larger */
	EXPECT_EQ(6144, num(point(all, 2), "saved_mean_bytes"));
	EXPECT_EQ(16384, num(point(all, 2), "reclaimed_bytes"));
	ASSERT_EQ(0, run_daptrace(A("report", "savings", "--thresholds", "1s,5s,6s",
				    self->main_rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "not observable 4.00 KiB, idle of unknown age 4.00 KiB"))
		TH_LOG("%s", out);
}

/*
 * Only resident memory is saved: the placement columns say which share of
 * each region's samples found the page present.  Pid 7, four windows of
 * 1 s, 200 samples each, 64 KiB regions, --thresholds 1s:
 *   p  [anon]  a quarter present; idle in windows 1-2, accessed in 3-4:
 *              16384 reclaimed in window 1, refaulted in window 3
 *   q  [heap]  all present in window 1, half in 2-4: 65536 reclaimed in
 *              window 1, held to the end (what it held when reclaimed)
 *   r  [anon]  mapped, never present: reclaims nothing
 *   u  [anon]  half its samples unobserved, the others all present: 65536
 * Reclaimed 147456, refaulted 16384, unknown 131072; saved 147456 in
 * windows 1-2, 131072 in 3-4: mean 139264, last 131072.  Resident, of the
 * 262144 observed: 147456 in window 1, 114688 in 2-4: mean 122880.
 * Without the placement columns the same record counts every byte.
 */
TEST_F(rec, only_resident_memory_is_saved)
{
	static const char cols[] = "time_ns,seq,pid,start,end,nr_accesses,age,nr_samples,"
				   "nr_present,node0,node1,node2,node3,phys_addr,flags,"
				   "nr_unobserved,label\n";
	struct json_object *j, *all;
	char path[160];
	FILE *f;

	f = new_record(self->dir, "resident.csv", path, sizeof(path));
	ASSERT_NE(NULL, f);
	fprintf(f, HDR "#target,7,app\n%s", cols);
	for (int w = 1; w <= 4; w++) {
		unsigned long long t = w * 1000000000ULL;
		int q = w == 1 ? 200 : 100;

		fprintf(f, "#snap,%d,%llu,%llu,4,200,0,0\n", w, t - 1000000000ULL, t);
		fprintf(f, "%llu,%d,7,65536,131072,%d,0,200,50,50,0,0,0,,0,0,[anon]\n", t, w,
			w <= 2 ? 0 : 200);
		fprintf(f, "%llu,%d,7,262144,327680,0,%d,200,%d,%d,0,0,0,,0,0,[heap]\n", t, w,
			w - 1, q, q);
		fprintf(f, "%llu,%d,7,524288,589824,0,%d,200,0,0,0,0,0,,0,0,[anon]\n", t, w, w - 1);
		fprintf(f, "%llu,%d,7,655360,720896,0,%d,200,100,100,0,0,0,,0,100,[anon]\n", t, w,
			w - 1);
	}
	fputs("#eof\n", f);
	fclose(f);
	j = savings_json(_metadata, path, "1s", NULL);
	ASSERT_NE(NULL, j);
	all = get(j, "all");
	EXPECT_EQ(262144, num(all, "observed_mean_bytes"));
	EXPECT_EQ(122880, num(all, "resident_mean_bytes"));
	EXPECT_EQ(0, num(all, "residency_unknown_mean_bytes"));
	EXPECT_CURVE(all,
		{ 0, "reclaimed_bytes", 147456 },
		{ 0, "refaulted_bytes", 16384 },
		{ 0, "unknown_future_bytes", 131072 },
		{ 0, "saved_mean_bytes", 139264 },
		{ 0, "saved_last_bytes", 131072 });
	json_object_put(j);
	ASSERT_EQ(0, run_daptrace(A("report", "savings", "--thresholds", "1s", path), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "(of 256 KiB observed, 120 KiB of it resident)"))
		TH_LOG("%s", out);
	/* the main record has no placement columns: every byte, and it says so */
	EXPECT_EQ(28672, num(self->all, "residency_unknown_mean_bytes"));
	ASSERT_EQ(0, run_daptrace(A("report", "savings", "--thresholds", "1s",
				    self->main_rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "; 28.0 KiB of it of unrecorded residency, counted whole)"))
		TH_LOG("%s", out);
}

/* The kernel's special mappings are never reclaimed; --type keeps one kind. */
TEST_F(rec, out_of_the_schemes_reach)
{
	static const struct {
		const char *type;
		double reclaimed, refaulted, saved, out_of_reach, observed;
	} want[] = {
		{ NULL, 16384, 4096, 14336, 24576, 16384 },
		{ "anon", 12288, 4096, 10240, 28672, 12288 },
		{ "file", 4096, 0, 4096, 36864, 4096 },
	};
	char rec[160];
	FILE *f;

	f = new_record(self->dir, "kinds.csv", rec, sizeof(rec));
	ASSERT_NE(NULL, f);
	fputs(kinds, f);
	fclose(f);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct json_object *j, *all;
		const char *type, *name = want[i].type ? want[i].type : "any";
		int ret;

		if (want[i].type)
			ret = run_daptrace(A("report", "savings", "--json", "--thresholds", "1s",
					     "--type", (char *)want[i].type, rec), out, sizeof(out));
		else
			ret = run_daptrace(A("report", "savings", "--json", "--thresholds", "1s",
					     rec), out, sizeof(out));
		ASSERT_EQ(0, ret) TH_LOG("%s", out);
		j = json_tokener_parse(out);
		ASSERT_NE(NULL, j) TH_LOG("not JSON: %.500s", out);
		all = get(j, "all");
		type = json_object_get_string(get(j, "type"));
		EXPECT_STREQ(name, type ? type : "(none)");
		EXPECT_EQ(want[i].reclaimed, num(point(all, 0), "reclaimed_bytes"))
			TH_LOG("--type %s", name);
		EXPECT_EQ(want[i].refaulted, num(point(all, 0), "refaulted_bytes"))
			TH_LOG("--type %s", name);
		EXPECT_EQ(want[i].saved, num(point(all, 0), "saved_mean_bytes"))
			TH_LOG("--type %s", name);
		EXPECT_EQ(want[i].out_of_reach, num(all, "out_of_reach_mean_bytes"))
			TH_LOG("--type %s", name);
		EXPECT_EQ(want[i].observed, num(all, "observed_mean_bytes"))
			TH_LOG("--type %s", name);
		json_object_put(j);
	}
	ASSERT_EQ(0, run_daptrace(A("report", "savings", "--type", "anon", "--thresholds", "1s",
				    rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "reclaiming the anonymous memory idle")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "out of the scheme's reach 28.0 KiB")) TH_LOG("%s", out);
}

/* The table marks the knee: the most saved with refaults/s within 10 % of the most. */
TEST_F(rec, text_table_marks_the_knee)
{
	const char *knee, *line;

	ASSERT_EQ(0, run_daptrace(A("report", "savings", "--thresholds", "1s,5s,6s",
				    self->main_rec), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# knee: 6.00 s\n")) TH_LOG("%s", out);
	knee = strstr(out, "<- knee");
	ASSERT_NE(NULL, knee) TH_LOG("%s", out);
	for (line = knee; line > out && line[-1] != '\n'; line--)
		;
	EXPECT_EQ(0, strncmp(line, "6.00 s ", 7)) TH_LOG("knee on: %.80s", line);
	EXPECT_EQ(knee, strrchr(out, '<')) TH_LOG("more than one knee: %s", out);
	/* the row of 1 s: its reuse time and the unknown share */
	EXPECT_NE(NULL, strstr(out, "\n1.00 s ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "    5.00 s    5.00 s ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "     57.1\n")) TH_LOG("%s", out);
}

/*
 * --by pid, with a range that splits and merges (only its accessed page
 * refaults) and a process that exits (its reclaimed memory was never reused).
 */
TEST_F(rec, by_pid_and_byte_ranges)
{
	struct json_object *j, *all, *g, *groups;

	j = savings_json(_metadata, self->two, "1s,3s", "pid");
	ASSERT_NE(NULL, j);
	all = get(j, "all");
	EXPECT_CURVE(all,
		{ 0, "reclaimed_bytes", 28672 },
		{ 0, "refaulted_bytes", 4096 },
		{ 0, "never_reused_bytes", 8192 },
		{ 0, "unknown_future_bytes", 16384 },
		{ 0, "refault_bytes_per_s", 1024 });
	EXPECT_EQ(3, num(all, "knee_threshold_s"));
	EXPECT_TRUE(json_object_get_boolean(get(point(all, 1), "knee")));
	EXPECT_STREQ("pid", json_object_get_string(get(j, "by")));
	groups = get(j, "groups");
	ASSERT_NE(NULL, groups);
	ASSERT_EQ(2, json_object_array_length(groups));
	g = json_object_array_get_idx(groups, 0);
	EXPECT_STREQ("7", json_object_get_string(get(g, "group")));
	EXPECT_EQ(1, num(g, "processes"));
	EXPECT_CURVE(g,
		{ 0, "reclaimed_bytes", 20480 },
		{ 0, "refaulted_bytes", 4096 },
		{ 0, "reuse_p50_s", 2 },
		{ 0, "unknown_future_bytes", 16384 },
		{ 0, "never_reused_bytes", 0 },
		{ 0, "saved_mean_bytes", 15360 },
		{ 1, "reclaimed_bytes", 12288 },
		{ 1, "saved_mean_bytes", 6144 },
		{ 1, "saved_last_bytes", 12288 });
	g = json_object_array_get_idx(groups, 1);
	EXPECT_STREQ("8", json_object_get_string(get(g, "group")));
	EXPECT_EQ(2, num(g, "windows"));
	EXPECT_EQ(2, num(g, "seconds"));
	EXPECT_CURVE(g,
		{ 0, "saved_mean_bytes", 8192 },
		{ 0, "never_reused_bytes", 8192 },
		{ 0, "unknown_future_bytes", 0 },
		{ 0, "refaulted_bytes", 0 });
	json_object_put(j);
	/* as text: a table per process after the record's */
	ASSERT_EQ(0, run_daptrace(A("report", "savings", "--by", "pid", "--thresholds", "1s,3s",
				    self->two), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n# pid 7\n")) TH_LOG("%s", out);
	EXPECT_LT(strstr(out, "\n# pid 7\n"), strstr(out, "\n# pid 8\n")) TH_LOG("%s", out);
	/* -p keeps one process */
	j = NULL;
	ASSERT_EQ(0, run_daptrace(A("report", "savings", "--json", "-p", "8", "--thresholds",
				    "1s,3s", self->two), out, sizeof(out))) TH_LOG("%s", out);
	j = json_tokener_parse(out);
	ASSERT_NE(NULL, j);
	EXPECT_EQ(8192, num(point(get(j, "all"), 0), "reclaimed_bytes"));
	json_object_put(j);
}

/* Every field of the JSON, with its type: null only where documented. */
TEST_F(rec, json_fields)
{
	static const char *const top[] = { "record", "page_size", "knee_percent", "all" };
	static const char *const st[] = {
		"processes", "windows", "seconds", "observed_mean_bytes",
		"not_observable_mean_bytes", "age_unknown_idle_mean_bytes", "knee_threshold_s",
		"curve",
	};
	static const char *const pt[] = {
		"threshold_s", "saved_mean_bytes", "saved_last_bytes", "reclaimed_bytes",
		"refaulted_bytes", "refault_bytes_per_s", "refault_pages_per_s", "reuse_p50_s",
		"reuse_p90_s", "never_reused_bytes", "unknown_future_bytes",
		"unknown_future_percent", "knee",
	};
	struct json_object *all, *j = self->j;

	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
		EXPECT_NE(NULL, get(j, top[i])) TH_LOG("no %s", top[i]);
	}
	/* groups only with --by */
	EXPECT_FALSE(json_object_object_get_ex(j, "groups", NULL));
	EXPECT_EQ(4096, num(j, "page_size"));
	EXPECT_EQ(10, num(j, "knee_percent"));
	all = get(j, "all");
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		EXPECT_NE(NULL, get(all, st[i])) TH_LOG("no all.%s", st[i]);
	}
	ASSERT_EQ(3, json_object_array_length(get(all, "curve")));
	for (size_t i = 0; i < sizeof(pt) / sizeof(pt[0]); i++) {
		EXPECT_NE(NULL, get(point(all, 0), pt[i])) TH_LOG("no curve[0].%s", pt[i]);
	}
	EXPECT_TRUE(json_object_is_type(get(point(all, 0), "knee"), json_type_boolean));
}

/* --plot draws memory saved against refaults/s, with the knee. */
TEST_F(rec, plot_file_produced)
{
	char svg[160], png[160], *text;
	struct stat st;
	FILE *f;

	if (system("gnuplot --version >/dev/null 2>&1"))
		SKIP(return, "gnuplot not installed");
	snprintf(svg, sizeof(svg), "%s/savings.svg", self->dir);
	snprintf(png, sizeof(png), "%s/savings.png", self->dir);
	ASSERT_EQ(0, run_daptrace(A("report", "savings", "--thresholds", "1s,5s,6s", "--plot",
				    svg, self->main_rec), out, sizeof(out))) TH_LOG("%s", out);
	/* the headline, as the data went to the picture */
	EXPECT_NE(NULL, strstr(out, "knee at 6.00 s: 6.00 KiB saved on average")) TH_LOG("%s", out);
	ASSERT_EQ(0, stat(svg, &st));
	text = calloc(1, st.st_size + 1);
	ASSERT_NE(NULL, text);
	f = fopen(svg, "r");
	ASSERT_NE(NULL, f);
	EXPECT_EQ((size_t)st.st_size, fread(text, 1, st.st_size, f));
	fclose(f);
	EXPECT_NE(NULL, strstr(text, "knee")) TH_LOG("no knee in the SVG");
	EXPECT_NE(NULL, strstr(text, "refaults")) TH_LOG("no refaults axis in the SVG");
	free(text);
	ASSERT_EQ(0, run_daptrace(A("report", "savings", "--plot", png, self->main_rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	ASSERT_EQ(0, stat(png, &st));
	EXPECT_GT(st.st_size, 1000);
}

/*
 * A warm set: x, read in one window of ten (nr_accesses 1, then 0 for nine
 * windows of 100 ms), its age never reset (the count moves by less than
 * the merge threshold), so age + window says idle 2 s by window 20 and 4 s
 * by the end.  By address it is never idle 1 s (0.9 s before each read):
 * reclaiming idle >= 1 s or 2 s never takes it, and it never refaults.
 * y, never accessed, is idle since the record began: reclaimed in window
 * 10 (1 s) or 20 (2 s), saved in the 31 or 21 windows from then of 40.
 */
TEST_F(rec, warm_set_read_every_second_is_not_idle)
{
	struct json_object *j, *all;
	char path[160];
	FILE *f;

	f = new_record(self->dir, "warm.csv", path, sizeof(path));
	ASSERT_NE(NULL, f);
	fputs("# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,100000\n"
	      "#meta,page_size,4096\n#target,7,app\n" COLS, f);
	for (int w = 1; w <= 40; w++) {
		unsigned long long t = w * 100000000ULL;

		fprintf(f, "#snap,%d,%llu,%llu,2,20,0,0\n", w, t - 100000000ULL, t);
		fprintf(f, "%llu,%d,7,65536,69632,%d,%d,20,0,x\n", t, w, w % 10 == 1, w - 1);
		fprintf(f, "%llu,%d,7,131072,135168,0,%d,20,0,y\n", t, w, w - 1);
	}
	fputs("#eof\n", f);
	fclose(f);
	j = savings_json(_metadata, path, "1s,2s", NULL);
	ASSERT_NE(NULL, j);
	all = get(j, "all");
	EXPECT_CURVE(all,
		{ 0, "refaulted_bytes", 0 },
		{ 0, "reclaimed_bytes", 4096 },
		{ 0, "saved_mean_bytes", 3174 },	/* 4096 x 31 / 40, whole bytes */
		{ 0, "saved_last_bytes", 4096 },
		{ 1, "refaulted_bytes", 0 },
		{ 1, "refault_bytes_per_s", 0 },
		{ 1, "reclaimed_bytes", 4096 },
		{ 1, "saved_mean_bytes", 2150 },	/* 4096 x 21 / 40 */
		{ 1, "saved_last_bytes", 4096 });
	json_object_put(j);
}

/*
 * A few pages read at random from reclaimed memory: p, 40 KiB, two
 * sampling rounds a window, idle in windows 1-2, then in window 3 one of
 * its two rounds found an access: a share of 1/2 of its pages touched in
 * a round, 1 - (1 - 1/2)^2 = 3/4 of them in the window.  --thresholds 1s:
 * reclaimed in window 1 (40960); in window 3, 30720 come back and 10240
 * stay reclaimed; in window 4, idle 1 s again, the 30720 are reclaimed
 * again; in window 5 both rounds found an access: all 40960 come back;
 * reclaimed again in window 6, held to the end (window 7): unknown.
 * Reclaimed 40960 + 30720 + 40960 = 112640 = refaulted 30720 + 40960 +
 * unknown 40960.  Held 40960, 40960, 10240, 40960, 0, 40960, 40960: mean
 * 30720.  Refaults 71680 B in 7 s: 10240 B/s.  (Returned whole at each
 * access, window 3 would refault all 40960.)
 */
TEST_F(rec, a_few_pages_read_come_back_alone)
{
	struct json_object *j, *all;
	char path[160];
	FILE *f;

	f = new_record(self->dir, "few.csv", path, sizeof(path));
	ASSERT_NE(NULL, f);
	fputs(HDR "#target,7,app\n" COLS, f);
	for (int w = 1; w <= 7; w++) {
		unsigned long long t = w * 1000000000ULL;
		int acc = w == 3 ? 1 : w == 5 ? 2 : 0;

		fprintf(f, "#snap,%d,%llu,%llu,1,2,0,0\n", w, t - 1000000000ULL, t);
		fprintf(f, "%llu,%d,7,65536,106496,%d,0,2,0,[anon]\n", t, w, acc);
	}
	fputs("#eof\n", f);
	fclose(f);
	j = savings_json(_metadata, path, "1s", NULL);
	ASSERT_NE(NULL, j);
	all = get(j, "all");
	EXPECT_CURVE(all,
		{ 0, "reclaimed_bytes", 112640 },
		{ 0, "refaulted_bytes", 71680 },
		{ 0, "unknown_future_bytes", 40960 },
		{ 0, "never_reused_bytes", 0 },
		{ 0, "saved_mean_bytes", 30720 },
		{ 0, "saved_last_bytes", 40960 },
		{ 0, "refault_bytes_per_s", 10240 });
	json_object_put(j);
}

/*
 * pid 7, a 4 MiB [anon] region, all present, five windows of 1 s of 20
 * rounds, idle but in window 3, where one round found an access, its
 * nr_huge @huge ("": a record of an older module) and window 3's #probes
 * counts @probes (NULL: none); --thresholds 1s: reclaimed in window 1.
 * Checks that what was reclaimed is the 4 MiB and what came back, and
 * gives that (< 0 if the report failed), and the report in *@j.
 */
static double one_hit_back(struct __test_metadata *_metadata, const char *dir,
			   const char *huge, const char *probes, struct json_object **j)
{
	struct json_object *p;
	char path[160];
	double back;
	FILE *f;

	*j = NULL;
	f = new_record(dir, "one-hit.csv", path, sizeof(path));
	if (!f)
		return -1;
	fputs(HDR "#target,7,app\ntime_ns,seq,pid,start,end,nr_accesses,age,nr_samples,"
	      "nr_present,node0,node1,node2,node3,phys_addr,flags,nr_unobserved,nr_huge,"
	      "label\n", f);
	for (int w = 1; w <= 5; w++) {
		unsigned long long t = w * 1000000000ULL;

		if (w == 3 && probes)
			fprintf(f, "#probes,3,%s\n", probes);
		fprintf(f, "#snap,%d,%llu,%llu,1,20,0,0\n", w, t - 1000000000ULL, t);
		fprintf(f, "%llu,%d,7,2097152,6291456,%d,0,20,20,20,0,0,0,,0,0,%s,[anon]\n",
			t, w, w == 3, huge);
	}
	fputs("#eof\n", f);
	fclose(f);
	*j = savings_json(_metadata, path, "1s", NULL);
	if (!*j)
		return -1;
	p = point(get(*j, "all"), 0);
	back = num(p, "refaulted_bytes");
	EXPECT_EQ(4194304 + back, num(p, "reclaimed_bytes"));
	return back;
}

/*
 * A huge page's accessed bit stands for all its base pages.  The record
 * of one_hit_back().  Read as base pages (nr_huge empty: a record of an
 * older module) a share of 1/20 touched a round, 1 - (19/20)^20 = 64.2 %
 * in the window: 2690705 B come back.  Every round on a huge page
 * (nr_huge 20) of 512 base pages: 1 - (1 - x)^512 = 1/20, x = 1.0018e-4
 * a round, and 1 - (1 - x)^20 = 0.2 % of the base pages in the window:
 * 8395 B, two pages, come back.
 */
TEST_F(rec, one_access_to_huge_pages_brings_back_a_few_base_pages)
{
	static const struct {
		const char *huge;
		double lo, hi;
	} want[] = { { "", 2690704, 2690706 }, { "20", 8390, 8400 } };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct json_object *j;
		double back = one_hit_back(_metadata, self->dir, want[i].huge, NULL, &j);

		EXPECT_LE(want[i].lo, back) TH_LOG("nr_huge '%s'", want[i].huge);
		EXPECT_GE(want[i].hi, back) TH_LOG("nr_huge '%s'", want[i].huge);
		json_object_put(j);
	}
}

/*
 * The touched share checked by the accuracy probes.  The record of
 * one_hit_back() in base pages, and window 3's probes: of those in regions
 * read accessed, tp accessed and fp not.  The sampling says 64.2 % of the
 * region was read in window 3: that much refaults (2690705 B) whatever the
 * probes say, a hit standing for reads where no round looked too.  What
 * stays back until the region is idle again is what the probes allow: 10
 * of 100 accessed, whose 95 % Wilson interval ends at 17.437 %, scale
 * 0.17437 / 0.64151 = 0.2718; held reclaimed at the end of windows 1-5:
 * 4 MiB but for window 3's (1 - 0.17437) x 4 MiB, saved mean 4048034 B
 * (3656163 B as sampled).  90 of 100: the probes find more than the
 * sampling says, which stands.  None of 3: so few say at most 56.2 %,
 * scale 0.875: saved mean 3723279 B.  Without probes the model stands and
 * says so (calibration null).  In huge pages (nr_huge 20) the model says
 * 0.2 % of the base pages (8395 B back, saved mean 4192625 B), and a probe
 * there reads the huge page's bit: 10 of 100 is no reason to scale, and
 * the huge share is said.
 */
TEST_F(rec, accuracy_probes_scale_down_the_touched_share)
{
	static const struct {
		const char *probes, *huge;
		double back, saved_mean, probed, scale, touched;
	} want[] = {
		{ "100,10,0,90,0,0", "", 2690705, 4048034, 100, 0.2718, 0.64151 },
		{ "100,90,0,10,0,0", "", 2690705, 3656163, 100, 1, 0.64151 },
		{ "3,0,0,3,0,0", "", 2690705, 3723279, 3, 0.8753, 0.64151 },
		{ NULL, "", 2690705, 3656163, 0, 0, 0 },
		{ "100,10,0,90,0,0", "20", 8395, 4192625, 100, 1, 0.002 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct json_object *j, *c;
		double back = one_hit_back(_metadata, self->dir, want[i].huge, want[i].probes, &j);

		EXPECT_GT(2, fabs(want[i].back - back)) TH_LOG("probes %s", want[i].probes);
		ASSERT_NE(NULL, j);
		EXPECT_GT(2, fabs(want[i].saved_mean -
				  num(point(get(j, "all"), 0), "saved_mean_bytes")))
			TH_LOG("probes %s", want[i].probes);
		ASSERT_TRUE(json_object_object_get_ex(j, "calibration", &c));
		if (!want[i].probes) {
			EXPECT_EQ(NULL, c);
		} else {
			ASSERT_NE(NULL, c);
			EXPECT_EQ(want[i].probed, num(c, "probe_pages"));
			EXPECT_GT(0.0001, fabs(num(c, "scale") - want[i].scale));
			EXPECT_GT(0.0001, fabs(num(c, "model_touched") - want[i].touched));
			EXPECT_EQ(want[i].huge[0] ? 1 : 0, num(c, "huge_share"));
		}
		json_object_put(j);
	}
}

/*
 * A region is labelled by most of its bytes: one mostly over a hole says
 * "[unmapped]" though memory lies at its edge.  The map (#maps) says
 * which bytes are memory.  pid 7 maps 64 KiB at 0x10000, idle: reclaimed
 * in window 1 (--thresholds 1s).  Window 3's region spans 256 KiB from 0,
 * labelled "[unmapped]": the 64 KiB are still mapped and stay reclaimed
 * (they were counted freed, never reused, and 64 KiB observed no more).
 * Before window 4 the map is empty: now they are freed.  Saved 65536 in
 * windows 1-3, 0 in 4: mean 49152; observed the same.
 */
TEST_F(rec, memory_in_a_region_mostly_hole_stays_reclaimed)
{
	struct json_object *j, *all;
	char path[160];
	FILE *f;

	f = new_record(self->dir, "hole.csv", path, sizeof(path));
	ASSERT_NE(NULL, f);
	fputs(HDR "#target,7,app\n" COLS "#maps,7,0,65536,131072,524288,528384,1048576,1052672\n", f);
	for (int w = 1; w <= 4; w++) {
		unsigned long long t = w * 1000000000ULL;

		if (w == 4)
			fprintf(f, "#maps,7,%llu\n", t - 500000000ULL);
		fprintf(f, "#snap,%d,%llu,%llu,1,200,0,0\n", w, t - 1000000000ULL, t);
		if (w <= 2)
			fprintf(f, "%llu,%d,7,65536,131072,0,%d,200,0,[anon]\n", t, w, w - 1);
		else
			fprintf(f, "%llu,%d,7,0,262144,0,%d,200,0,[unmapped]\n", t, w, w - 1);
	}
	fputs("#eof\n", f);
	fclose(f);
	j = savings_json(_metadata, path, "1s", NULL);
	ASSERT_NE(NULL, j);
	all = get(j, "all");
	EXPECT_EQ(49152, num(all, "observed_mean_bytes"));
	EXPECT_CURVE(all,
		{ 0, "reclaimed_bytes", 65536 },
		{ 0, "refaulted_bytes", 0 },
		{ 0, "never_reused_bytes", 65536 },
		{ 0, "unknown_future_bytes", 0 },
		{ 0, "saved_mean_bytes", 49152 },
		{ 0, "saved_last_bytes", 0 });
	json_object_put(j);
}

/*
 * Missed windows (the record says missed_before 1 at window 5, the 4th
 * missing): z, idle in windows 1-3, shows age 0 in window 5, so its count
 * moved in the missed window, which may have been an access: it counts as
 * accessed when that age began (end of window 4), idle 1 s in window 5, as
 * the policy engine restarts its clock.  v's age covers the gap: still
 * idle since the record began.  20 KiB each, --thresholds 2s: both
 * reclaimed in window 2, neither refaults (what the missed window held is
 * not known to be an access), so both are held reclaimed, saved, in
 * windows 2, 3, 5 and 6, over 5 windows: 32768.
 */
TEST_F(rec, missed_windows_restart_the_idle_clock)
{
	struct json_object *j;
	char path[160];
	FILE *f;

	f = new_record(self->dir, "gap.csv", path, sizeof(path));
	ASSERT_NE(NULL, f);
	fputs(HDR "#target,7,app\n" COLS, f);
	for (int w = 1; w <= 6; w++) {
		unsigned long long t = w * 1000000000ULL;

		if (w == 4)
			continue;
		fprintf(f, "#snap,%d,%llu,%llu,2,200,0,%d\n", w, t - 1000000000ULL, t, w == 5);
		fprintf(f, "%llu,%d,7,65536,86016,0,%d,200,0,z\n", t, w, w < 4 ? w - 1 : w - 5);
		fprintf(f, "%llu,%d,7,131072,151552,0,%d,200,0,v\n", t, w, w - 1);
	}
	fputs("#eof\n", f);
	fclose(f);
	j = savings_json(_metadata, path, "2s", NULL);
	ASSERT_NE(NULL, j);
	EXPECT_EQ(5, num(get(j, "all"), "windows"));
	EXPECT_CURVE(get(j, "all"),
		{ 0, "saved_mean_bytes", 32768 },
		{ 0, "reclaimed_bytes", 40960 },
		{ 0, "refaulted_bytes", 0 });
	json_object_put(j);
}

/*
 * --speed 0.5: the target twice as slow, its accesses twice as far apart.
 * Thresholds 2s,10s,12s then meet what the record shows idle for 1, 5 and
 * 6 s: the same memory as the main curve (saved per window 23040, 8704,
 * 6144; reclaimed at 2 s 28672), over 16 s instead of 8 (refaults 256 B/s),
 * a refaulting 10 s after it was reclaimed at 2 s (5 s in the record) and
 * 2 s after at 10 s.  At speed 1 the same thresholds keep a from ever
 * being reclaimed before it refaults but at 2 s.
 */
TEST_F(rec, speed_scales_the_records_time)
{
	struct json_object *j, *all;

	ASSERT_EQ(0, run_daptrace(A("report", "savings", "--json", "--speed", "0.5",
				    "--thresholds", "2s,10s,12s", self->main_rec),
				  out, sizeof(out))) TH_LOG("%s", out);
	j = json_tokener_parse(out);
	ASSERT_NE(NULL, j) TH_LOG("not JSON: %.500s", out);
	EXPECT_EQ(0.5, num(j, "speed"));
	all = get(j, "all");
	EXPECT_CURVE(all,
		{ 0, "threshold_s", 2 },
		{ 0, "saved_mean_bytes", 23040 },
		{ 0, "reclaimed_bytes", 28672 },
		{ 0, "refaulted_bytes", 4096 },
		{ 0, "refault_bytes_per_s", 256 },
		{ 0, "reuse_p50_s", 10 },
		{ 1, "threshold_s", 10 },
		{ 1, "saved_mean_bytes", 8704 },
		{ 1, "reuse_p50_s", 2 },
		{ 2, "threshold_s", 12 },
		{ 2, "saved_mean_bytes", 6144 },
		{ 2, "refaulted_bytes", 0 });
	EXPECT_EQ(16, num(all, "seconds"));
	json_object_put(j);
	/* at the record's own speed 10 s is never reached by a */
	j = savings_json(_metadata, self->main_rec, "2s,10s,12s", NULL);
	ASSERT_NE(NULL, j);
	EXPECT_EQ(1, num(j, "speed"));
	EXPECT_CURVE(get(j, "all"),
		{ 1, "refaulted_bytes", 0 },
		{ 1, "saved_mean_bytes", 0 });
	json_object_put(j);
	/* the text says so */
	ASSERT_EQ(0, run_daptrace(A("report", "savings", "--speed", "0.5", self->main_rec),
				  out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# for the target at 0.5 times its speed in the record"))
		TH_LOG("%s", out);
	ASSERT_EQ(0, run_daptrace(A("report", "savings", self->main_rec), out, sizeof(out)));
	EXPECT_EQ(NULL, strstr(out, "times its speed")) TH_LOG("%s", out);
}

/* Bad flags and thresholds: exit 2, saying what is wrong. */
TEST_F(rec, bad_flags_and_thresholds)
{
	static const char *const bad[] = {
		"0s", "5", "1s,1s", "1s,", ",1s", "1s,,2s", "-1s", "1h", "abc", "",
		"1s,2s,3s,4s,5s,6s,7s,8s,9s,10s,11s,12s,13s,14s,15s,16s,17s,18s,19s,20s,"
		"21s,22s,23s,24s,25s,26s,27s,28s,29s,30s,31s,32s,33s",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(2, run_daptrace(A("report", "savings", "--thresholds", (char *)bad[i],
					    self->main_rec), out, sizeof(out)))
			TH_LOG("--thresholds '%s': %s", bad[i], out);
		EXPECT_NE(NULL, strstr(out, "--thresholds")) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "e.g. 1s,2s,5s")) TH_LOG("%s", out);
	}
	/* 32 are fine */
	EXPECT_EQ(0, run_daptrace(A("report", "savings", "--thresholds",
				    "1s,2s,3s,4s,5s,6s,7s,8s,9s,10s,11s,12s,13s,14s,15s,16s,17s,"
				    "18s,19s,20s,21s,22s,23s,24s,25s,26s,27s,28s,29s,30s,31s,32s",
				    self->main_rec), out, sizeof(out))) TH_LOG("%s", out);
	/* other modes' flags, and --thresholds elsewhere */
	EXPECT_EQ(2, run_daptrace(A("report", "savings", "--threshold", "3", self->main_rec),
				  out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--threshold does not apply to 'report savings'"))
		TH_LOG("%s", out);
	EXPECT_EQ(2, run_daptrace(A("report", "savings", "--top", "3", self->main_rec), out,
				  sizeof(out)));
	EXPECT_EQ(2, run_daptrace(A("report", "wss", "--thresholds", "1s", self->main_rec), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--thresholds does not apply to 'report wss' "
			       "(only to savings)"))
		TH_LOG("%s", out);
	EXPECT_EQ(2, run_daptrace(A("report", "savings", "--type", "shm", self->main_rec), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--type: invalid value 'shm' (expected anon or file"))
		TH_LOG("%s", out);
	static const char *const bad_speed[] = { "0", "0.009", "-1", "abc", "", "1x", "nan", "inf", "101" };

	for (size_t i = 0; i < sizeof(bad_speed) / sizeof(bad_speed[0]); i++) {
		EXPECT_EQ(2, run_daptrace(A("report", "savings", "--speed", (char *)bad_speed[i],
					    self->main_rec), out, sizeof(out)))
			TH_LOG("--speed '%s': %s", bad_speed[i], out);
		EXPECT_NE(NULL, strstr(out, "--speed: invalid value")) TH_LOG("%s", out);
	}
	EXPECT_EQ(2, run_daptrace(A("report", "wss", "--speed", "0.5", self->main_rec), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--speed does not apply to 'report wss'")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_daptrace(A("report", "wss", "--type", "anon", self->main_rec), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--type does not apply to 'report wss'")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_daptrace(A("report", "savings", "--by", "pid", "--plot", "x.svg",
				    self->main_rec), out, sizeof(out)));
	EXPECT_EQ(2, run_daptrace(A("report", "savings", "--by", "uid", self->main_rec), out,
				  sizeof(out)));
	EXPECT_EQ(2, run_daptrace(A("report", "savings", "--plot", "x.jpg", self->main_rec), out,
				  sizeof(out)));
}

TEST_HARNESS_MAIN
