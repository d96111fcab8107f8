// SPDX-License-Identifier: GPL-2.0-only
/*
 * damo interop, second pass (issue 37): records of our own in damo's
 * formats (json_compressed with several targets and kernel-pointer ids,
 * plain JSON, a perf script, unknown ages, no intervals) through every
 * report, checked against damo's documented semantics (its
 * _damo_records.py, damo_wss.py, _damo_dist.py):
 * - target ids are u64 (kernel pointers); two targets never merge;
 * - `report damo` leaves out what damo would count as idle memory that
 *   is not there ([unmapped]), and a round trip keeps every number;
 * - a perf script missing a line is an error naming the line;
 * - damo's percentile (floor index) and its first-20-snapshots skip on
 *   request, unknown ages stay unknown, a record without intervals is
 *   refused where damo refuses it and warned about elsewhere;
 * - report footprints prints what damo report footprints prints, pids,
 *   comms, labels and target ids survive a round trip, and report adjust
 *   merges windows as damo adjust does (damo_adjust.py).
 */
#include <json-c/json.h>
#include <string.h>
#include <zlib.h>

#include "kselftest_harness.h"
#include "run_json.h"

static char out[1 << 20];

/* @text as @dir/@name, zlib-compressed (damo's json_compressed) if @z */
static const char *fixture(const char *dir, const char *name, const char *text, int z)
{
	static char path[4][256];
	static int next;
	char *p = path[next++ % 4];
	uLongf zlen = compressBound(strlen(text));
	unsigned char *buf = malloc(zlen);
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f || !buf) {
		free(buf);
		if (f)
			fclose(f);
		return NULL;
	}
	if (z && compress2(buf, &zlen, (const unsigned char *)text, strlen(text), 9) == Z_OK)
		fwrite(buf, 1, zlen, f);
	else if (!z)
		fputs(text, f);
	free(buf);
	return fclose(f) ? NULL : p;
}

/* A report's --json output, parsed; NULL (and the output logged) if it failed. */
static struct json_object *report_json(struct __test_metadata *_metadata, char *const *argv)
{
	int rc = run_daptrace(argv, out, sizeof(out));
	struct json_object *j;

	if (rc) {
		TH_LOG("exit %d: %.600s", rc, out);
		return NULL;
	}
	/* warnings come first on the shared pipe: the document starts at '{' */
	j = json_tokener_parse(strchr(out, '{') ? strchr(out, '{') : out);
	if (!j)
		TH_LOG("not JSON: %.600s", out);
	return j;
}

/*
 * Report @view of @rec both ways: the --json document is returned (the test
 * fails here without one) and the text report is left in out[].
 */
static struct json_object *report_both(struct __test_metadata *_metadata, const char *view,
				       const char *rec)
{
	struct json_object *j = report_json(_metadata, A("report", (char *)view, "--json",
							 (char *)rec));

	ASSERT_NE(NULL, j) TH_LOG("report %s --json %s", view, rec);
	EXPECT_EQ(0, run_daptrace(A("report", (char *)view, (char *)rec), out, sizeof(out)))
		TH_LOG("report %s %s: %s", view, rec, out);
	return j;
}

static void rm_rf(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", dir);
}

/*
 * Each test's records go to a directory of its own, removed after the test
 * whatever its outcome.
 */
FIXTURE(damo) {
	char dir[64];
};

FIXTURE_SETUP(damo)
{
	SKIP_UNLESS_DAPTRACE_BIN();
	strcpy(self->dir, "/tmp/daptrace-damo37-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(damo)
{
	if (self->dir[0])
		rm_rf(self->dir);
}

#define REGION(s, e, acc, age) \
	"{\"start\": " s ", \"end\": " e ", \"nr_accesses\": {\"samples\": " acc \
	", \"percent\": null}, \"age\": {\"usec\": null, \"aggr_intervals\": " age "}}"
#define SNAP(t0, t1, regions) \
	"{\"start_time\": " t0 ", \"end_time\": " t1 ", \"regions\": [" regions "]}"
#define INTERVALS \
	"\"intervals\": {\"sample_us\": 5000, \"aggr_us\": 100000, \"ops_update_us\": 1000000}"

/*
 * Two targets whose ids (kernel pointers, as DAMON's tracepoint and damo
 * write them) differ only above 2^63, three windows each; the second
 * target's last region ends at 2^64 - 1.
 */
static const char two_pointers[] =
	"[{\"target_id\": 18446623435582458880, " INTERVALS ", \"snapshots\": ["
	SNAP("1000000000", "1100000000", REGION("4096", "8192", "20", "0")) ", "
	SNAP("1100000000", "1200000000", REGION("4096", "8192", "10", "1")) ", "
	SNAP("1200000000", "1300000000", REGION("4096", "8192", "0", "2")) "]}, "
	"{\"target_id\": 18446623435582462976, " INTERVALS ", \"snapshots\": ["
	SNAP("1000000000", "1100000000", REGION("65536", "73728", "5", "0")) ", "
	SNAP("1100000000", "1200000000", REGION("65536", "73728", "5", "1")) ", "
	SNAP("1200000000", "1300000000",
	     REGION("18446744073709547520", "18446744073709551615", "1", "0")) "]}]";

TEST_F(damo, kernel_pointer_target_ids_stay_apart)
{
	struct json_object *j;
	const char *rec;

	for (int z = 0; z < 2; z++) {
		rec = fixture(self->dir, z ? "two.damon.data" : "two.json", two_pointers, z);
		ASSERT_NE(NULL, rec);
		j = report_json(_metadata, A("report", "raw", "--json", (char *)rec));
		ASSERT_NE(NULL, j);
		/* three windows of both targets, not six of one */
		EXPECT_EQ(2, json_object_array_length(json_at(j, "targets")));
		EXPECT_STREQ("target_id 18446623435582458880",
			     json_object_get_string(json_at(j, "targets.0.comm")));
		EXPECT_STREQ("target_id 18446623435582462976",
			     json_object_get_string(json_at(j, "targets.1.comm")));
		EXPECT_EQ(3, json_object_array_length(json_at(j, "snapshots")));
		EXPECT_EQ(2, json_object_array_length(json_at(j, "snapshots.2.regions")));
		/* the top of the address space, exactly */
		EXPECT_EQ(18446744073709551615ULL,
			  json_object_get_uint64(json_at(j, "snapshots.2.regions.1.end")));
		json_object_put(j);
		/* damo's wss (collapsed targets): both targets' bytes per window */
		j = report_json(_metadata, A("report", "wss", "--json", (char *)rec));
		ASSERT_NE(NULL, j);
		EXPECT_EQ(3, json_object_array_length(json_at(j, "series")));
		EXPECT_EQ(4096 + 8192, json_object_get_int64(json_at(j, "series.0.wss_bytes")));
		EXPECT_EQ(4096 + 8192, json_object_get_int64(json_at(j, "series.1.wss_bytes")));
		EXPECT_EQ(4095, json_object_get_int64(json_at(j, "series.2.wss_bytes")));
		json_object_put(j);
	}
}

/*
 * A daptrace record whose middle region is a hole between mappings
 * ("[unmapped]", idle as a hole is): 1 MiB heap, 285 MiB gap, 1 MiB stack.
 */
static const char with_gap[] =
	"# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,100000\n"
	"#meta,update_us,1000000\n#meta,monotonic_start_ns,5000000000\n#target,7,app\n"
	"time_ns,seq,pid,start,end,nr_accesses,age,nr_samples,flags,label\n"
	"#snap,1,0,100000000,3,20,0,0,5000,100000\n"
	"100000000,1,7,4096,1052672,20,0,20,0,[heap]\n"
	"100000000,1,7,1052672,300000256,0,0,20,0,[unmapped]\n"
	"100000000,1,7,300000256,301048832,0,0,20,0,[stack]\n"
	"#snap,2,100000000,200000000,3,20,0,0,5000,100000\n"
	"200000000,2,7,4096,1052672,10,1,20,0,[heap]\n"
	"200000000,2,7,1052672,300000256,0,1,20,0,[unmapped]\n"
	"200000000,2,7,300000256,301048832,0,1,20,0,[stack]\n#eof\n";

/* The members @keys of report @mode --json on @rec, as one string. */
static void numbers(struct __test_metadata *_metadata, const char *mode, const char *rec,
		    const char *const *keys, char *buf, size_t len)
{
	struct json_object *j = report_json(_metadata, A("report", (char *)mode, "--json",
							 (char *)rec));
	size_t n = 0;

	buf[0] = '\0';
	for (; j && *keys; keys++)
		n += snprintf(buf + n, n < len ? len - n : 0, "%s=%s ", *keys,
			      json_object_to_json_string(json_at(j, *keys)));
	json_object_put(j);
}

TEST_F(damo, damo_export_leaves_holes_out)
{
	static const char *const hist[] = { "access_frequency", "age", NULL };
	static const char *const access[] = {
		"matched_bytes", "observed_bytes", "recency_s_percentiles",
		"temperature_percentiles", "cold_tail", NULL,
	};
	static const char *const wss[] = { "wss_bytes", NULL };
	static const struct {
		const char *mode;
		const char *const *keys;
	} reports[] = { { "hist", hist }, { "access", access }, { "wss", wss } };
	char damo[300], a[4096], b[4096];
	struct json_object *j;
	const char *rec;

	rec = fixture(self->dir, "gap.csv", with_gap, 0);
	ASSERT_NE(NULL, rec);
	snprintf(damo, sizeof(damo), "%s/gap.json", self->dir);
	ASSERT_EQ(0, run_daptrace(A("report", "damo", "-o", damo, (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "2 [unmapped] regions")) TH_LOG("%s", out);
	/* damo sees the heap and the stack only: 2 MiB, not 287 MiB */
	j = json_object_from_file(damo);
	ASSERT_NE(NULL, j);
	EXPECT_EQ(2, json_object_array_length(json_at(j, "0.snapshots.1.regions")));
	EXPECT_STREQ("2097152", json_object_get_string(json_at(j, "0.snapshots.1.total_bytes")));
	json_object_put(j);
	/* and the round trip gives daptrace's own numbers back */
	for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++) {
		numbers(_metadata, reports[i].mode, rec, reports[i].keys, a, sizeof(a));
		numbers(_metadata, reports[i].mode, damo, reports[i].keys, b, sizeof(b));
		EXPECT_STREQ(a, b) TH_LOG("report %s", reports[i].mode);
	}
	/* the base time too: exported again, the same CLOCK_MONOTONIC times */
	snprintf(a, sizeof(a), "%s/again.json", self->dir);
	ASSERT_EQ(0, run_daptrace(A("report", "damo", "-o", a, damo), out, sizeof(out)));
	j = json_object_from_file(a);
	ASSERT_NE(NULL, j);
	EXPECT_STREQ("5100000000", json_object_get_string(json_at(j, "0.snapshots.1.start_time")));
	EXPECT_STREQ("5200000000", json_object_get_string(json_at(j, "0.snapshots.1.end_time")));
	json_object_put(j);
}

#define PL(t, id, nr, range, acc) \
	"  kdamond.0  99 [000]  " t ": damon:damon_aggregated: target_id=" id \
	" nr_regions=" nr " " range ": " acc " 0\n"

/* Two windows of two targets, traced at the same microsecond. */
static const char *const two_targets[] = {
	PL("10.100000", "1", "2", "4096-8192", "3"),
	PL("10.100000", "1", "2", "8192-12288", "0"),
	PL("10.100000", "2", "1", "65536-69632", "1"),
	PL("10.200000", "1", "2", "4096-8192", "2"),
	PL("10.200000", "1", "2", "8192-12288", "0"),
	PL("10.200000", "2", "1", "65536-69632", "1"),
	NULL,
};

/* Two windows of one target, at the same microsecond. */
static const char *const one_target[] = {
	PL("10.100000", "1", "2", "4096-8192", "3"),
	PL("10.100000", "1", "2", "8192-12288", "0"),
	PL("10.100000", "1", "2", "4096-8192", "2"),
	PL("10.100000", "1", "2", "8192-12288", "0"),
	NULL,
};

static const char *perf_without(const char *dir, const char *const *lines, size_t drop)
{
	static char text[4096];
	size_t n = 0;

	for (size_t i = 0; lines[i]; i++)
		if (i != drop)
			n += snprintf(text + n, sizeof(text) - n, "%s", lines[i]);
	return fixture(dir, "perf.txt", text, 0);
}

TEST_F(damo, perf_script_missing_a_line)
{
	static const struct {
		const char *const *lines;
		size_t drop;
		const char *msg;
	} cut[] = {
		/* target 1's first window short: target 2's region comes */
		{ two_targets, 1, "line 2: another target's region, but the window opened at "
		  "line 1 (target_id=1 nr_regions=2) has only 1 regions, the last at line 1: "
		  "a line is missing" },
		{ two_targets, 4, "line 5: another target's region, but the window opened at "
		  "line 4" },
		/* the next window's first region is below the last one's end */
		{ one_target, 1, "line 2: a region below the previous one's end, but the "
		  "window opened at line 1" },
		{ one_target, 0, "line 2: a region below the previous one's end" },
	};
	char cmd[600];
	struct json_object *j;
	const char *rec;

	for (int k = 0; k < 2; k++) {
		rec = perf_without(self->dir, k ? one_target : two_targets, SIZE_MAX);
		j = report_json(_metadata, A("report", "raw", "--json", (char *)rec));
		ASSERT_NE(NULL, j);
		EXPECT_EQ(2, json_object_array_length(json_at(j, "snapshots")));
		json_object_put(j);
	}
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		rec = perf_without(self->dir, cut[i].lines, cut[i].drop);
		EXPECT_EQ(1, run_daptrace(A("report", "wss", (char *)rec), out, sizeof(out)));
		EXPECT_NE(NULL, strstr(out, cut[i].msg)) TH_LOG("want '%s': %s", cut[i].msg, out);
	}
	/* damo's own trace without its third line: the next window's time */
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s/perf.data.script.gz' | sed 3d > '%s/cut.txt'",
		 getenv("DAPTRACE_TESTDATA") ? getenv("DAPTRACE_TESTDATA") : "tests/data", self->dir);
	ASSERT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "%s/cut.txt", self->dir);
	EXPECT_EQ(1, run_daptrace(A("report", "hot", cmd), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "line 8: a region traced later, but the window opened at "
			       "line 1 (target_id=18446623435582458880 nr_regions=8) has only 7 "
			       "regions, the last at line 7: a line is missing")) TH_LOG("%s", out);
}

/* damo's "<percentile> <value> |***|" lines of @name: value by percentile */
static int damo_dist(const char *name, unsigned long long *v)
{
	char path[512], line[256];
	const char *dir = getenv("DAPTRACE_TESTDATA");
	unsigned long long val;
	unsigned int p;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "tests/data", name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %llu", &p, &val) == 2 && p <= 100) {
			v[p] = val;
			n++;
		}
	fclose(f);
	return n;
}

/*
 * damo's `report wss` and `report nr_regions` on damon.data leave out the
 * first 20 snapshots and take sorted[int(p / 100.0 * n)]: with --skip 20
 * and --percentile-method damo daptrace's numbers are damo's; by default
 * (nearest rank, nothing skipped) they are not.
 */
TEST(wss_and_regions_percentiles_as_damo)
{
	static const struct {
		const char *mode, *expects, *key;
	} r[] = {
		{ "wss", "damo-report-wss", "wss_bytes" },
		{ "regions", "damo-report-nr_regions", "nr_regions" },
	};
	char rec[512], key[64];
	const char *dir = getenv("DAPTRACE_TESTDATA");
	unsigned long long want[101];
	struct json_object *j;

	SKIP_UNLESS_DAPTRACE_BIN();
	snprintf(rec, sizeof(rec), "%s/damon.data.json_compressed", dir && *dir ? dir : "tests/data");
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		ASSERT_EQ(100, damo_dist(r[i].expects, want)) TH_LOG("%s", r[i].expects);
		j = report_json(_metadata, A("report", (char *)r[i].mode, "--json", "--skip", "20",
					     "--percentile-method", "damo", rec));
		ASSERT_NE(NULL, j);
		EXPECT_EQ(523, json_object_get_int(json_at(j, "snapshots")));
		EXPECT_EQ(20, json_object_get_int(json_at(j, "skipped_snapshots")));
		for (unsigned int p = 10; p <= 100; p += p == 90 ? 9 : p == 99 ? 1 : 10) {
			snprintf(key, sizeof(key), "%s.p%u", r[i].key, p);
			EXPECT_EQ(want[p], json_object_get_uint64(json_at(j, key)))
				TH_LOG("%s", key);
		}
		json_object_put(j);
	}
	/* nearest rank on the same 523: p99 is the 518th, damo's the 517th */
	j = report_json(_metadata, A("report", "wss", "--json", "--skip", "20", rec));
	ASSERT_NE(NULL, j);
	EXPECT_NE(want[99], json_object_get_uint64(json_at(j, "wss_bytes.p99")));
	EXPECT_STREQ("nearest", json_object_get_string(json_at(j, "percentile_method")));
	json_object_put(j);
	EXPECT_EQ(2, run_daptrace(A("report", "wss", "--percentile-method", "mean", rec), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "expected nearest or damo")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_daptrace(A("report", "hot", "--skip", "2", rec), out, sizeof(out)));
}

/*
 * A record without intervals (damo's "intervals": null): every report says
 * on stderr that its frequencies rest on an assumed sampling interval, and
 * the damo export keeps the intervals unknown rather than writing the
 * assumed ones as the record's.
 */
TEST_F(damo, record_without_intervals_is_said_so)
{
	static const char *const modes[] = {
		"wss", "regions", "hot", "raw", "hist", "access", "heatmap", NULL,
	};
	char damo[300];
	char *text = strdup(two_pointers), *iv;
	struct json_object *j;
	const char *rec;

	ASSERT_NE(NULL, text);
	/* both records' intervals: null, padded to the same length */
	while ((iv = strstr(text, "{\"sample_us\": 5000, \"aggr_us\": 100000, "
				  "\"ops_update_us\": 1000000}")))
		memcpy(iv, "null                                                                ",
		       strlen("{\"sample_us\": 5000, \"aggr_us\": 100000, \"ops_update_us\": 1000000}"));
	rec = fixture(self->dir, "noiv.damon.data", text, 1);
	free(text);
	ASSERT_NE(NULL, rec);
	for (const char *const *m = modes; *m; m++) {
		EXPECT_EQ(0, run_daptrace(A("report", (char *)*m, (char *)rec), out, sizeof(out)))
			TH_LOG("%s: %.300s", *m, out);
		EXPECT_NE(NULL, strstr(out, "noiv.damon.data: the file has no sampling interval: "
				       "DAMON's default, 5000 us; access frequencies and ages "
				       "rest on it")) TH_LOG("report %s: %.300s", *m, out);
	}
	snprintf(damo, sizeof(damo), "%s/back.json", self->dir);
	ASSERT_EQ(0, run_daptrace(A("report", "damo", "-o", damo, (char *)rec), out, sizeof(out)));
	j = json_object_from_file(damo);
	ASSERT_NE(NULL, j);
	EXPECT_TRUE(json_object_object_get_ex(json_at(j, "0"), "intervals", NULL));
	EXPECT_EQ(NULL, json_at(j, "0.intervals"));
	EXPECT_EQ(NULL, json_at(j, "0.snapshots.0.sample_interval_us"));
	json_object_put(j);
}

/*
 * Ages a source does not know: a perf script of a kernel before 5.16 (no
 * age field), damo's null and its -1, and a daptrace record's empty age
 * field.  Every report says "unknown" (null in JSON), none counts them as
 * 0 windows nor as idle for a time; the damo export writes null back.
 */
#define PN(t, range, acc) \
	"  kdamond.0  99 [000]  " t ": damon:damon_aggregated: target_id=1 nr_regions=2 " \
	range ": " acc "\n"

static const char perf_no_age[] =
	PN("10.100000", "4096-8192", "3") PN("10.100000", "8192-16384", "0")
	PN("10.200000", "4096-8192", "2") PN("10.200000", "8192-16384", "0");

static const char damo_null_age[] =
	"[{\"target_id\": 1, " INTERVALS ", \"snapshots\": ["
	SNAP("1000000000", "1100000000", REGION("4096", "8192", "3", "null") ", "
	     REGION("8192", "16384", "0", "-1")) ", "
	SNAP("1100000000", "1200000000", REGION("4096", "8192", "2", "null") ", "
	     REGION("8192", "16384", "0", "-1")) "]}]";

static const char csv_empty_age[] =
	"# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,100000\n#target,7,app\n"
	"time_ns,seq,pid,start,end,nr_accesses,age,nr_samples,label\n"
	"#snap,1,0,100000000,2,20,0,0\n"
	"100000000,1,7,4096,8192,3,,20,a\n100000000,1,7,8192,16384,0,,20,b\n"
	"#snap,2,100000000,200000000,2,20,0,0\n"
	"200000000,2,7,4096,8192,2,,20,a\n200000000,2,7,8192,16384,0,,20,b\n#eof\n";

TEST_F(damo, unknown_ages_stay_unknown)
{
	static const struct {
		const char *name, *text;
	} src[] = {
		{ "noage.perf.txt", perf_no_age }, { "nullage.json", damo_null_age },
		{ "emptyage.csv", csv_empty_age },
	};
	char damo[300];
	struct json_object *j, *v;
	const char *rec;

	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		rec = fixture(self->dir, src[i].name, src[i].text, 0);
		ASSERT_NE(NULL, rec);
		j = report_both(_metadata, "raw", rec);
		for (int k = 0; k < 2; k++) {
			char key[64];

			snprintf(key, sizeof(key), "snapshots.1.regions.%d", k);
			v = json_at(j, key);
			ASSERT_NE(NULL, v) TH_LOG("%s: %s", src[i].name, key);
			EXPECT_TRUE(json_object_object_get_ex(v, "age_windows", NULL));
			EXPECT_EQ(NULL, json_at(v, "age_windows")) TH_LOG("%s", src[i].name);
			EXPECT_EQ(NULL, json_at(v, "age_s")) TH_LOG("%s", src[i].name);
		}
		json_object_put(j);
		EXPECT_NE(NULL, strstr(out, "age unknown")) TH_LOG("%s", out);
		EXPECT_EQ(NULL, strstr(out, "windows (")) TH_LOG("%s", out);
		/* hist: no age bucket, all 12 KiB "unknown" */
		j = report_both(_metadata, "hist", rec);
		EXPECT_EQ(0, json_object_array_length(json_at(j, "age"))) TH_LOG("%s", src[i].name);
		EXPECT_EQ(100, json_object_get_double(json_at(j, "age_unknown_share_percent")));
		EXPECT_EQ(12288, json_object_get_double(json_at(j, "age_unknown_avg_bytes")));
		json_object_put(j);
		EXPECT_NE(NULL, strstr(out, "\nunknown        12.0 KiB     100.00%")) TH_LOG("%s", out);
		EXPECT_EQ(NULL, strstr(out, "\n0 s ")) TH_LOG("%s", out);
		/* hot: the age column says so */
		j = report_both(_metadata, "hot", rec);
		EXPECT_NE(NULL, json_at(j, "regions.1"));
		EXPECT_EQ(NULL, json_at(j, "regions.0.age_s"));
		EXPECT_EQ(NULL, json_at(j, "regions.1.age_windows"));
		json_object_put(j);
		EXPECT_NE(NULL, strstr(out, "# age unknown (the source has none) for 12.0 KiB"))
			TH_LOG("%s", out);
		/*
		 * access: the idle 8 KiB has no idle time (not "0.1 s"), the
		 * accessed 4 KiB has (0 s); no temperature is known
		 */
		j = report_json(_metadata, A("report", "access", "--json", "--sort", "size",
					     (char *)rec));
		ASSERT_NE(NULL, j);
		EXPECT_EQ(12288, json_object_get_int64(json_at(j, "age_unknown_bytes")));
		EXPECT_EQ(12288, json_object_get_int64(json_at(j, "age_unknown_matched_bytes")));
		EXPECT_EQ(4096, json_object_get_int64(json_at(j, "idle_known_bytes")));
		EXPECT_EQ(0, json_object_get_double(json_at(j, "regions.0.idle_s")));
		EXPECT_NE(NULL, json_at(j, "regions.0.idle_s"));
		EXPECT_EQ(NULL, json_at(j, "regions.1.idle_s"));
		EXPECT_EQ(NULL, json_at(j, "regions.1.temperature"));
		EXPECT_EQ(NULL, json_at(j, "temperature_percentiles.p50"));
		EXPECT_EQ(0, json_object_get_double(json_at(j, "recency_s_percentiles.p100")));
		/* no bytes idle for 0.1 s: the one that might be is not known */
		EXPECT_EQ(0, json_object_get_int64(json_at(j, "cold_tail.0.bytes")));
		json_object_put(j);
		/* an age range matches no unknown age */
		j = report_json(_metadata, A("report", "access", "--json", "--age", "0s-10s",
					     (char *)rec));
		ASSERT_NE(NULL, j);
		EXPECT_EQ(0, json_object_get_int64(json_at(j, "matched_regions")));
		json_object_put(j);
		/* damo gets null back, and reads as daptrace did */
		snprintf(damo, sizeof(damo), "%s/%s.back.json", self->dir, src[i].name);
		ASSERT_EQ(0, run_daptrace(A("report", "damo", "-o", damo, (char *)rec), out,
					  sizeof(out))) TH_LOG("%s", out);
		j = json_object_from_file(damo);
		ASSERT_NE(NULL, j);
		v = json_at(j, "0.snapshots.1.regions.1.age");
		ASSERT_NE(NULL, v);
		EXPECT_TRUE(json_object_object_get_ex(v, "aggr_intervals", NULL));
		EXPECT_EQ(NULL, json_at(v, "aggr_intervals"));
		EXPECT_EQ(NULL, json_at(v, "usec"));
		json_object_put(j);
		j = report_json(_metadata, A("report", "raw", "--json", damo));
		ASSERT_NE(NULL, j);
		EXPECT_EQ(NULL, json_at(j, "snapshots.0.regions.0.age_s"));
		EXPECT_NE(NULL, json_at(j, "snapshots.0.regions.0.nr_accesses"));
		json_object_put(j);
	}
}

/* Known ages read as before: 0 is 0, and an age field that is no number is an error. */
TEST_F(damo, known_ages_and_bad_ages)
{
	char text[] = "# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,100000\n"
		"#target,7,app\ntime_ns,seq,pid,start,end,nr_accesses,age,nr_samples,label\n"
		"#snap,1,0,100000000,1,20,0,0\n100000000,1,7,4096,8192,0,0,20,a\n"
		"#snap,2,100000000,200000000,1,20,0,0\n200000000,2,7,4096,8192,0,1,20,a\n#eof\n";
	struct json_object *j;
	const char *rec;
	char *p;

	rec = fixture(self->dir, "known.csv", text, 0);
	ASSERT_NE(NULL, rec);
	j = report_json(_metadata, A("report", "raw", "--json", (char *)rec));
	ASSERT_NE(NULL, j);
	EXPECT_NE(NULL, json_at(j, "snapshots.0.regions.0.age_windows"));
	EXPECT_EQ(0, json_object_get_int(json_at(j, "snapshots.0.regions.0.age_windows")));
	EXPECT_EQ(1, json_object_get_int(json_at(j, "snapshots.1.regions.0.age_windows")));
	json_object_put(j);
	j = report_json(_metadata, A("report", "access", "--json", (char *)rec));
	ASSERT_NE(NULL, j);
	EXPECT_EQ(0, json_object_get_int64(json_at(j, "age_unknown_bytes")));
	EXPECT_NE(NULL, json_at(j, "temperature_percentiles.p50"));
	EXPECT_EQ(0.2, json_object_get_double(json_at(j, "recency_s_percentiles.p50")));
	json_object_put(j);
	p = strstr(text, ",1,20,a\n#eof");
	ASSERT_NE(NULL, p);
	p[1] = 'x';			/* the last age */
	rec = fixture(self->dir, "bad.csv", text, 0);
	EXPECT_EQ(1, run_daptrace(A("report", "raw", (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "bad.csv:9: bad age 'x'")) TH_LOG("%s", out);
}

/*
 * report footprints in damo's shape: two targets' footprints over four
 * windows (a fifth has none); the expected text is what damo's own
 * _damo_dist.fmt_dists() and format_sz() print for the same values.
 */
#define MIB "1048576"
#define FP(pid, t, vsz, rss) "#footprint," pid "," t "," vsz "," rss "\n"
#define W(seq, t0, t1) "#snap," seq "," t0 "," t1 ",1,20,0,0\n" t1 "," seq ",7,4096,8192,1,0,20,x\n"

static const char with_footprints[] =
	"# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,100000\n#target,7,a\n"
	"#target,8,b\ntime_ns,seq,pid,start,end,nr_accesses,age,nr_samples,label\n"
	FP("7", "100000000", "10485760", "1048576") FP("8", "100000000", "20971520", "2097152")
	W("1", "0", "100000000")
	FP("7", "200000000", "10485760", "4194304") FP("8", "200000000", "20971520", "4194304")
	W("2", "100000000", "200000000")
	FP("7", "300000000", "12582912", "2097152")
	W("3", "200000000", "300000000")
	FP("7", "400000000", "16777216", "6291456") FP("8", "400000000", "20971520", "1048576")
	W("4", "300000000", "400000000")
	W("5", "400000000", "500000000") "#eof\n";

static const char damo_footprints[] =
	"# <percentile> <vsz>\n# avr:\t27.000 MiB\n"
	"  0      12.000 MiB |*******************                                        |\n"
	" 25      30.000 MiB |*************************************************          |\n"
	" 50      30.000 MiB |*************************************************          |\n"
	" 75      36.000 MiB |********************************************************** |\n"
	"100      36.000 MiB |********************************************************** |\n"
	"# <percentile> <rss>\n# avr:\t5.000 MiB\n"
	"  0       2.000 MiB |**************                                             |\n"
	" 25       3.000 MiB |**********************                                     |\n"
	" 50       7.000 MiB |***************************************************        |\n"
	" 75       8.000 MiB |***********************************************************|\n"
	"100       8.000 MiB |***********************************************************|\n";

static const char damo_rss_by_time_raw[] =
	"# <percentile> <rss>\n# avr:\t5242880\n"
	"  0         3145728 |**********************                                     |\n"
	" 25         8388608 |***********************************************************|\n"
	" 50         2097152 |**************                                             |\n"
	" 75         7340032 |***************************************************        |\n"
	"100         7340032 |***************************************************        |\n";

TEST_F(damo, footprints_as_damo_reports_them)
{
	struct json_object *j;
	const char *rec;

	rec = fixture(self->dir, "fp.csv", with_footprints, 0);
	ASSERT_NE(NULL, rec);
	EXPECT_EQ(0, run_daptrace(A("report", "footprints", "--percentile-method", "damo",
				    (char *)rec), out, sizeof(out)));
	EXPECT_STREQ(damo_footprints, out);
	EXPECT_EQ(0, run_daptrace(A("report", "footprints", "--percentile-method", "damo",
				    "--metric", "rss", "--sortby", "time", "--raw-number",
				    (char *)rec), out, sizeof(out)));
	EXPECT_STREQ(damo_rss_by_time_raw, out);
	EXPECT_EQ(0, run_daptrace(A("report", "footprints", "--metric", "rss",
				    "--all-footprints", (char *)rec), out, sizeof(out)));
	EXPECT_STREQ("# <percentile> <rss>\n# avr:\t5.000 MiB\n0 2.000 MiB\n1 3.000 MiB\n"
		     "2 7.000 MiB\n3 8.000 MiB\n", out);
	/* nearest rank by default: p25 of 4 is the 1st, p50 the 2nd */
	j = report_json(_metadata, A("report", "footprints", "--json", (char *)rec));
	ASSERT_NE(NULL, j);
	EXPECT_EQ(4, json_object_get_int(json_at(j, "windows")));
	EXPECT_EQ(1, json_object_get_int(json_at(j, "windows_without_footprint")));
	EXPECT_EQ(5242880, json_object_get_int64(json_at(j, "metrics.rss.avg_bytes")));
	EXPECT_EQ(2097152, json_object_get_int64(json_at(j, "metrics.rss.percentiles.p25")));
	EXPECT_EQ(3145728, json_object_get_int64(json_at(j, "metrics.rss.percentiles.p50")));
	EXPECT_EQ(37748736, json_object_get_int64(json_at(j, "metrics.vsz.percentiles.p100")));
	json_object_put(j);
	/* one target: its own */
	j = report_json(_metadata, A("report", "footprints", "--json", "-p", "8", (char *)rec));
	ASSERT_NE(NULL, j);
	EXPECT_EQ(3, json_object_get_int(json_at(j, "windows")));
	EXPECT_EQ(4194304, json_object_get_int64(json_at(j, "metrics.rss.percentiles.p100")));
	json_object_put(j);
	/* bad flags, and records without footprints, say so */
	EXPECT_EQ(2, run_daptrace(A("report", "footprints", "--metric", "sys_used", (char *)rec),
				  out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--metric: invalid value 'sys_used'")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_daptrace(A("report", "wss", "--sortby", "time", (char *)rec), out,
				  sizeof(out)));
	rec = fixture(self->dir, "two.json", two_pointers, 0);
	EXPECT_EQ(1, run_daptrace(A("report", "footprints", (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "no footprints in its 3 windows")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, ".mem_footprint")) TH_LOG("%s", out);
}

/*
 * daptrace -> damo -> daptrace keeps pids, comms and labels (in keys damo
 * ignores: its from_kvpairs() reads the ones it knows), damo -> daptrace
 * -> damo keeps damo's target ids, and what damo's format has no place for
 * is said on stderr.
 */
static const char labelled[] =
	"# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,100000\n"
	"#target,4242,\"my \"\"app\"\"\"\n#target,77,other,1,/sys/fs/cgroup/x,0\n"
	"time_ns,seq,pid,start,end,nr_accesses,age,nr_samples,nr_present,node0,node1,"
	"node2,node3,phys_addr,label\n"
	"#footprint,4242,100000000,16384,8192\n"
	"#snap,1,0,100000000,3,20,0,0\n"
	"100000000,1,4242,4096,8192,3,2,20,20,20,0,0,0,4096,/usr/lib/libc.so.6\n"
	"100000000,1,4242,8192,16384,0,5,20,20,20,0,0,0,8192,\"[heap] \"\"q\"\"\"\n"
	"100000000,1,77,65536,69632,1,1,20,20,20,0,0,0,12288,[stack]\n"
	"#snap,2,100000000,200000000,2,20,0,3\n"
	"200000000,2,4242,4096,8192,0,3,20,20,20,0,0,0,4096,/usr/lib/libc.so.6\n"
	"200000000,2,77,65536,69632,1,2,20,20,20,0,0,0,12288,[stack]\n#eof\n";

TEST_F(damo, round_trip_keeps_pids_comms_labels_and_target_ids)
{
	char damo[300], again[300];
	struct json_object *j;
	const char *rec;

	rec = fixture(self->dir, "lab.csv", labelled, 0);
	ASSERT_NE(NULL, rec);
	snprintf(damo, sizeof(damo), "%s/lab.damon.data", self->dir);
	ASSERT_EQ(0, run_daptrace(A("report", "damo", "-o", damo, (char *)rec), out, sizeof(out)))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "lab.csv: damo's format has no place for the placement of "
			       "2 windows, 1 footprint rows, the count of 3 missed windows, the "
			       "targets' parents, cgroups and join and exit times: left out"))
		TH_LOG("%s", out);
	j = report_json(_metadata, A("report", "raw", "--json", damo));
	ASSERT_NE(NULL, j);
	EXPECT_EQ(4242, json_object_get_int(json_at(j, "targets.0.pid")));
	EXPECT_STREQ("my \"app\"", json_object_get_string(json_at(j, "targets.0.comm")));
	EXPECT_EQ(77, json_object_get_int(json_at(j, "targets.1.pid")));
	EXPECT_STREQ("other", json_object_get_string(json_at(j, "targets.1.comm")));
	EXPECT_EQ(4242, json_object_get_int(json_at(j, "snapshots.0.regions.0.pid")));
	EXPECT_STREQ("/usr/lib/libc.so.6",
		     json_object_get_string(json_at(j, "snapshots.0.regions.0.label")));
	EXPECT_STREQ("[heap] \"q\"",
		     json_object_get_string(json_at(j, "snapshots.0.regions.1.label")));
	EXPECT_STREQ("[stack]", json_object_get_string(json_at(j, "snapshots.1.regions.1.label")));
	EXPECT_EQ(3, json_object_get_int(json_at(j, "snapshots.1.regions.0.age_windows")));
	json_object_put(j);
	/* --label and --by comm work on it as on the record */
	j = report_json(_metadata, A("report", "hot", "--json", "--label", "heap", damo));
	ASSERT_NE(NULL, j);
	EXPECT_EQ(1, json_object_array_length(json_at(j, "regions")));
	EXPECT_EQ(8192, json_object_get_int(json_at(j, "regions.0.start")));
	json_object_put(j);
	j = report_json(_metadata, A("report", "hot", "--json", "--by", "comm", damo));
	ASSERT_NE(NULL, j);
	EXPECT_STREQ("other", json_object_get_string(json_at(j, "groups.0.group")));
	json_object_put(j);
	/* damo's kernel-pointer ids survive damo -> daptrace -> damo */
	rec = fixture(self->dir, "two.damon.data", two_pointers, 1);
	ASSERT_NE(NULL, rec);
	snprintf(again, sizeof(again), "%s/again.json", self->dir);
	ASSERT_EQ(0, run_daptrace(A("report", "damo", "-o", again, (char *)rec), out,
				  sizeof(out))) TH_LOG("%s", out);
	j = json_object_from_file(again);
	ASSERT_NE(NULL, j);
	EXPECT_EQ(18446623435582458880ULL, json_object_get_uint64(json_at(j, "0.target_id")));
	EXPECT_EQ(18446623435582462976ULL, json_object_get_uint64(json_at(j, "1.target_id")));
	EXPECT_EQ(2, json_object_get_int(json_at(j, "1.daptrace_pid")));
	json_object_put(j);
	/* a key of ours that is wrong is an error naming it */
	rec = fixture(self->dir, "bad.json", "[{\"target_id\": 1, \"daptrace_pid\": -4, \"snapshots\": "
		      "[" SNAP("1", "2", REGION("4096", "8192", "0", "0")) "]}]", 0);
	EXPECT_EQ(1, run_daptrace(A("report", "raw", (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "bad.json: records[0]: daptrace_pid is not a pid"))
		TH_LOG("%s", out);
	rec = fixture(self->dir, "bad.json", "[{\"target_id\": 1, \"snapshots\": [" SNAP("1", "2",
		      "{\"start\": 4096, \"end\": 8192, \"nr_accesses\": {\"samples\": 0}, "
		      "\"age\": null, \"daptrace_label\": 5}") "]}]", 0);
	EXPECT_EQ(1, run_daptrace(A("report", "raw", (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "records[0].snapshots[0].regions[0]: daptrace_label is "
			       "not a string")) TH_LOG("%s", out);
}

/*
 * Ten windows of 100 ms (20 samples each) of one target: A (8 KiB)
 * accessed 2k times in window k <= 5, then split in two, A1 accessed once
 * and A2 idle; B only in windows 1 to 3 (always accessed); C idle since
 * long before the record (age 10 + k); D of unknown age, 5 accesses.
 */
static char *fine_record(void)
{
	static char buf[8192];
	size_t n = 0;

	n += snprintf(buf + n, sizeof(buf) - n, "# daptrace-record v2\n#meta,sample_us,5000\n"
		      "#meta,aggr_us,100000\n#target,7,app\n"
		      "time_ns,seq,pid,start,end,nr_accesses,age,nr_samples,label\n");
	for (int k = 1; k <= 10; k++) {
		unsigned long long t1 = k * 100000000ULL;

		if (k == 2 || k == 4)
			n += snprintf(buf + n, sizeof(buf) - n, "#footprint,7,%llu,%d,%d\n", t1,
				      1000000 * k, 100000 * k);
		n += snprintf(buf + n, sizeof(buf) - n, "#snap,%d,%llu,%llu,%d,20,0,0\n", k,
			      t1 - 100000000, t1, (k <= 5 ? 1 : 2) + (k <= 3) + 2);
		if (k <= 5)
			n += snprintf(buf + n, sizeof(buf) - n, "%llu,%d,7,4096,12288,%d,%d,20,A\n",
				      t1, k, 2 * k, k);
		else
			n += snprintf(buf + n, sizeof(buf) - n, "%llu,%d,7,4096,8192,1,%d,20,A1\n"
				      "%llu,%d,7,8192,12288,0,%d,20,A2\n", t1, k, k - 6, t1, k,
				      k - 1);
		if (k <= 3)
			n += snprintf(buf + n, sizeof(buf) - n, "%llu,%d,7,65536,69632,20,%d,20,B\n",
				      t1, k, k - 1);
		n += snprintf(buf + n, sizeof(buf) - n, "%llu,%d,7,1048576,1052672,0,%d,20,C\n"
			      "%llu,%d,7,2097152,2101248,5,,20,D\n", t1, k, 10 + k, t1, k);
	}
	snprintf(buf + n, sizeof(buf) - n, "#end,reason,done\n#eof\n");
	return buf;
}

/*
 * report adjust --aggr 500ms: two windows of 100 samples; counts added
 * (A: 2+4+6+8+10), B's 60 over its 3 windows scaled to the 5 (100 %),
 * ages counted in the new windows (C began 1 s before the start: 3 then 4
 * windows of 0.5 s, 1.5 and 2 s as before; A2's 0.9 s rounds down to one
 * window), D's unknown; every report reads the result.
 */
TEST_F(damo, adjust_merges_windows)
{
	static const struct {
		const char *key;
		long long v;
	} want[] = {
		{ "snapshots.0.nr_samples", 100 }, { "snapshots.0.end_ns", 500000000 },
		{ "snapshots.0.regions.0.nr_accesses", 30 },
		{ "snapshots.0.regions.0.age_windows", 1 },
		{ "snapshots.0.regions.1.nr_accesses", 100 },
		{ "snapshots.0.regions.1.age_windows", 0 },
		{ "snapshots.0.regions.2.age_windows", 3 },
		{ "snapshots.0.regions.3.nr_accesses", 25 },
		{ "snapshots.1.regions.0.start", 4096 }, { "snapshots.1.regions.0.end", 8192 },
		{ "snapshots.1.regions.0.nr_accesses", 5 },
		{ "snapshots.1.regions.1.start", 8192 }, { "snapshots.1.regions.1.nr_accesses", 0 },
		{ "snapshots.1.regions.1.age_windows", 1 },
		{ "snapshots.1.regions.2.age_windows", 4 },
		{ "snapshots.0.footprints.0.vsz", 4000000 },
	};
	static const char *const modes[] = {
		"raw", "hist", "wss", "regions", "hot", "access", "heatmap", "footprints", NULL,
	};
	char coarse[300];
	struct json_object *j;
	const char *rec;
	FILE *f;

	rec = fixture(self->dir, "fine.csv", fine_record(), 0);
	ASSERT_NE(NULL, rec);
	snprintf(coarse, sizeof(coarse), "%s/coarse.csv", self->dir);
	ASSERT_EQ(0, run_daptrace(A("report", "adjust", "--aggr", "500ms", "-o", coarse,
				    (char *)rec), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_STREQ("", out);
	j = report_json(_metadata, A("report", "raw", "--json", coarse));
	ASSERT_NE(NULL, j);
	EXPECT_EQ(2, json_object_array_length(json_at(j, "snapshots")));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		EXPECT_NE(NULL, json_at(j, want[i].key)) TH_LOG("%s", want[i].key);
		EXPECT_EQ(want[i].v, json_object_get_int64(json_at(j, want[i].key)))
			TH_LOG("%s", want[i].key);
	}
	EXPECT_EQ(4, json_object_array_length(json_at(j, "snapshots.1.regions")));
	EXPECT_EQ(1.5, json_object_get_double(json_at(j, "snapshots.0.regions.2.age_s")));
	EXPECT_EQ(2.0, json_object_get_double(json_at(j, "snapshots.1.regions.2.age_s")));
	EXPECT_EQ(NULL, json_at(j, "snapshots.1.regions.3.age_windows"));
	EXPECT_STREQ("A2", json_object_get_string(json_at(j, "snapshots.1.regions.1.label")));
	json_object_put(j);
	/* the same memory over the same time: hist's unknown-age bytes too */
	j = report_json(_metadata, A("report", "hist", "--json", coarse));
	ASSERT_NE(NULL, j);
	EXPECT_EQ(1.0, json_object_get_double(json_at(j, "seconds")));
	EXPECT_EQ(4096, json_object_get_double(json_at(j, "age_unknown_avg_bytes")));
	json_object_put(j);
	for (const char *const *m = modes; *m; m++) {
		EXPECT_EQ(0, run_daptrace(A("report", (char *)*m, coarse), out, sizeof(out)))
			TH_LOG("report %s: %.300s", *m, out);
	}
	/* windows left that span less: a last, shorter one, said */
	EXPECT_EQ(0, run_daptrace(A("report", "adjust", "--aggr", "300ms", "-o", coarse,
				    (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "the last 1 windows span 0.10 s, less than --aggr"))
		TH_LOG("%s", out);
	j = report_json(_metadata, A("report", "raw", "--json", coarse));
	ASSERT_NE(NULL, j);
	EXPECT_EQ(4, json_object_array_length(json_at(j, "snapshots")));
	EXPECT_EQ(60, json_object_get_int(json_at(j, "snapshots.0.nr_samples")));
	EXPECT_EQ(20, json_object_get_int(json_at(j, "snapshots.3.nr_samples")));
	json_object_put(j);
	/* usage and record errors change nothing */
	EXPECT_EQ(2, run_daptrace(A("report", "adjust", (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "report adjust needs --aggr")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_daptrace(A("report", "adjust", "--aggr", "500", (char *)rec), out,
				  sizeof(out)));
	EXPECT_EQ(2, run_daptrace(A("report", "hot", "--aggr", "1s", (char *)rec), out,
				  sizeof(out)));
	EXPECT_EQ(1, run_daptrace(A("report", "adjust", "--aggr", "1s", "--skip", "10", "-o",
				    coarse, (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--skip 10 leaves none of its 10 windows")) TH_LOG("%s", out);
	rec = fixture(self->dir, "bad.csv", "# daptrace-record v2\n#target,7,a\n"
		      "time_ns,seq,pid,start,end,nr_accesses,age,label\n"
		      "#snap,1,0,100,1,20,0,0\n100,1,7,4096,8192,1,zz,x\n#eof\n", 0);
	EXPECT_EQ(1, run_daptrace(A("report", "adjust", "--aggr", "1s", "-o", coarse,
				    (char *)rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "bad.csv:5: bad age 'zz'")) TH_LOG("%s", out);
	f = fopen(coarse, "r");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(1, fread(out, 1, 20, f) > 0 && !strncmp(out, "# daptrace-record v2", 20));
	fclose(f);
}

TEST_HARNESS_MAIN
