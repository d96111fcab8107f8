// SPDX-License-Identifier: GPL-2.0-only
/*
 * Records that move between daptrace, damo and perf (issue 30):
 * - damo's own test files (tests/data/README) read region for region as
 *   damo itself reads them (its expected `report access --raw_form`);
 * - daptrace -> damo JSON (compressed and plain) -> daptrace keeps every
 *   window, region, access count, age and sampling interval;
 * - perf script of daptrace's tracepoint with two targets and interval
 *   tuning: one window per aggregation, counts over the tuned intervals;
 * - what is not such a record, or is cut, is an error saying where.
 */
#include <json-c/json.h>
#include <string.h>
#include <zlib.h>

#include "kselftest_harness.h"
#include "run_cmd.h"

static char out[1 << 22];

static const char *data_dir(void)
{
	const char *d = getenv("DAPTRACE_TESTDATA");

	return d && *d ? d : "tests/data";
}

/*
 * The JSON document in a report's output: damo's damon.data has no
 * intervals, so a warning line on stderr comes first.
 */
static const char *doc(const char *s)
{
	const char *p = strstr(s, "\n{");

	return s[0] == '{' || !p ? s : p + 1;
}

struct region {
	unsigned long long start, end;
	unsigned int acc;
};

/* damo's raw form lines: "563ebaa00000-563ebadf3000 (   3.949 MiB)     0    -1" */
static size_t damo_expected(const char *path, struct region *r, size_t max)
{
	gzFile f = gzopen(path, "r");
	char line[256];
	size_t n = 0;

	if (!f)
		return 0;
	while (n < max && gzgets(f, line, sizeof(line)))
		if (sscanf(line, "%llx-%llx (%*[^)]) %u", &r[n].start, &r[n].end,
			   &r[n].acc) == 3)
			n++;
	gzclose(f);
	return n;
}

/* The regions of `report raw --json`, in order. */
static size_t ours(const char *json, struct region *r, size_t max)
{
	struct json_object *j = json_tokener_parse(doc(json)), *snaps;
	size_t n = 0;

	if (!j)
		return 0;
	if (json_object_object_get_ex(j, "snapshots", &snaps))
		for (size_t s = 0; s < json_object_array_length(snaps); s++) {
			struct json_object *regs = json_object_object_get(
				json_object_array_get_idx(snaps, s), "regions");

			for (size_t i = 0; i < json_object_array_length(regs) && n < max; i++) {
				struct json_object *e = json_object_array_get_idx(regs, i);

				r[n].start = json_object_get_uint64(json_object_object_get(e, "start"));
				r[n].end = json_object_get_uint64(json_object_object_get(e, "end"));
				r[n].acc = json_object_get_int(json_object_object_get(e, "nr_accesses"));
				n++;
			}
		}
	json_object_put(j);
	return n;
}

#define NEED() SKIP_UNLESS_DAPTRACE_BIN_AND_DIR(data_dir(), "no test data in %s (DAPTRACE_TESTDATA)")

static struct region want[20000], got[20000];

static void same_as_damo(struct __test_metadata *_metadata, const char *rec,
			 const char *expected, size_t nr)
{
	char r[256], e[256];
	size_t nw, ng, diff = 0;

	snprintf(r, sizeof(r), "%s/%s", data_dir(), rec);
	snprintf(e, sizeof(e), "%s/%s", data_dir(), expected);
	ASSERT_EQ(0, run_daptrace(A("report", "raw", "--json", r), out, sizeof(out)))
		TH_LOG("%.300s", out);
	nw = damo_expected(e, want, 20000);
	ng = ours(out, got, 20000);
	EXPECT_EQ(nr, nw) TH_LOG("%s", e);
	ASSERT_EQ(nw, ng) TH_LOG("%s: %zu regions, damo %zu", rec, ng, nw);
	for (size_t i = 0; i < nw; i++)
		diff += memcmp(&want[i], &got[i], sizeof(want[i])) != 0;
	EXPECT_EQ(0, diff) TH_LOG("%s: %zu regions differ from damo's", rec, diff);
}

TEST(damo_records_read_as_damo_reads_them)
{
	char r[256];
	struct json_object *j, *s;

	NEED();
	/* damo's json_compressed (zlib) and a perf script of damon_aggregated */
	same_as_damo(_metadata, "damon.data.json_compressed", "damo-report-raw.gz", 9773);
	same_as_damo(_metadata, "perf.data.script.gz", "damo-report-raw_perf_script.gz", 10260);
	/* a newer record: its intervals and ages in windows of 3 s */
	snprintf(r, sizeof(r), "%s/damon.data.snapshot.anon", data_dir());
	ASSERT_EQ(0, run_daptrace(A("report", "raw", "--json", r), out, sizeof(out)))
		TH_LOG("%.300s", out);
	j = json_tokener_parse(doc(out));
	ASSERT_NE(NULL, j);
	s = json_object_array_get_idx(json_object_object_get(j, "snapshots"), 0);
	EXPECT_EQ(150000, json_object_get_int(json_object_object_get(s, "sample_us")));
	EXPECT_EQ(3000000, json_object_get_int(json_object_object_get(s, "aggr_us")));
	EXPECT_EQ(20, json_object_get_int(json_object_object_get(s, "nr_samples")));
	EXPECT_EQ(105, json_object_array_length(json_object_object_get(s, "regions")));
	EXPECT_STREQ("damo json_compressed", json_object_get_string(json_object_object_get(
		json_object_object_get(j, "meta"), "source")));
	json_object_put(j);
	/* the reports work on it: 543 windows */
	snprintf(r, sizeof(r), "%s/damon.data.json_compressed", data_dir());
	ASSERT_EQ(0, run_daptrace(A("report", "wss", r), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "# snapshots 543, missed 0")) TH_LOG("%.300s", out);
}

/* Two targets, an interval change, a not-observable region, ages. */
static const char rec2[] = "# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,100000\n"
	"#meta,update_us,1000000\n#meta,monotonic_start_ns,1000000000\n"
	"#target,7,a\n#target,8,b\n"
	"time_ns,seq,pid,start,end,nr_accesses,age,nr_samples,flags,label\n"
	"#snap,1,0,100000000,3,20,0,0,5000,100000\n"
	"100000000,1,7,4096,8192,20,0,20,0,[heap]\n"
	"100000000,1,7,1048576,2097152,3,5,20,1,hugetlb\n"
	"100000000,1,8,65536,131072,7,2,20,0,x\n"
	"#snap,2,100000000,300000000,2,20,0,0,10000,200000\n"
	"300000000,2,7,4096,8192,10,1,20,0,[heap]\n"
	"300000000,2,8,65536,131072,0,3,20,0,x\n#eof\n";

static char *write_tmp(const char *dir, const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	fputs(text, f);
	fclose(f);
	return path;
}

TEST(round_trip_through_damo_json)
{
	char dir[] = "/tmp/daptrace-import-XXXXXX", rec[256], damo[256], plain[256];
	char first[2] = "", cmd[1024];
	struct json_object *j, *recs, *r0, *s1;
	FILE *f;

	NEED();
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(rec, sizeof(rec), "%s", write_tmp(dir, "r.csv", rec2));
	snprintf(damo, sizeof(damo), "%s/r.damon.data", dir);
	snprintf(plain, sizeof(plain), "%s/r.json", dir);
	ASSERT_EQ(0, run_daptrace(A("report", "damo", "-o", damo, rec), out, sizeof(out)))
		TH_LOG("%s", out);
	/* the unobservable region is left out, and said so */
	EXPECT_NE(NULL, strstr(out, "1 regions that cannot be observed left out")) TH_LOG("%s", out);
	f = fopen(damo, "r");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(1, fread(first, 1, 1, f));
	fclose(f);
	EXPECT_EQ(0x78, (unsigned char)first[0]) TH_LOG("not zlib");
	ASSERT_EQ(0, run_daptrace(A("report", "damo", "-o", plain, rec), out, sizeof(out)));
	/* damo's layout: a record per target, its intervals, raw numbers */
	f = fopen(plain, "r");
	ASSERT_NE(NULL, f);
	out[fread(out, 1, sizeof(out) - 1, f)] = '\0';
	fclose(f);
	j = json_tokener_parse(doc(out));
	ASSERT_NE(NULL, j) TH_LOG("%.500s", out);
	ASSERT_EQ(2, json_object_array_length(j));
	r0 = json_object_array_get_idx(j, 0);
	EXPECT_EQ(7, json_object_get_int(json_object_object_get(r0, "target_id")));
	EXPECT_STREQ("100000", json_object_get_string(json_object_object_get(
		json_object_object_get(r0, "intervals"), "aggr_us")));
	recs = json_object_object_get(r0, "snapshots");
	ASSERT_EQ(2, json_object_array_length(recs));
	s1 = json_object_array_get_idx(recs, 1);
	/* CLOCK_MONOTONIC, as DAMON's: the record's start + the window's */
	EXPECT_STREQ("1100000000", json_object_get_string(json_object_object_get(s1, "start_time")));
	EXPECT_STREQ("10000", json_object_get_string(json_object_object_get(s1,
		"sample_interval_us")));
	EXPECT_EQ(10, json_object_get_int(json_object_object_get(json_object_object_get(
		json_object_array_get_idx(json_object_object_get(s1, "regions"), 0),
		"nr_accesses"), "samples")));
	json_object_put(j);
	/* and back: the same windows, regions, counts, ages and intervals */
	for (int k = 0; k < 2; k++) {
		struct json_object *s, *g;

		ASSERT_EQ(0, run_daptrace(A("report", "raw", "--json", k ? plain : damo), out,
					  sizeof(out))) TH_LOG("%s", out);
		j = json_tokener_parse(doc(out));
		ASSERT_NE(NULL, j);
		s = json_object_object_get(j, "snapshots");
		ASSERT_EQ(2, json_object_array_length(s));
		g = json_object_array_get_idx(s, 1);
		EXPECT_EQ(100000000, json_object_get_int64(json_object_object_get(g, "start_ns")));
		EXPECT_EQ(300000000, json_object_get_int64(json_object_object_get(g, "end_ns")));
		EXPECT_EQ(10000, json_object_get_int(json_object_object_get(g, "sample_us")));
		EXPECT_EQ(20, json_object_get_int(json_object_object_get(g, "nr_samples")));
		g = json_object_object_get(g, "regions");
		ASSERT_EQ(2, json_object_array_length(g));
		EXPECT_EQ(10, json_object_get_int(json_object_object_get(
			json_object_array_get_idx(g, 0), "nr_accesses")));
		EXPECT_EQ(50, json_object_get_double(json_object_object_get(
			json_object_array_get_idx(g, 0), "freq_percent")));
		EXPECT_EQ(3, json_object_get_int(json_object_object_get(
			json_object_array_get_idx(g, 1), "age_windows")));
		/* two targets, their pids kept (daptrace_pid, which damo ignores) */
		EXPECT_EQ(8, json_object_get_int(json_object_object_get(
			json_object_array_get_idx(g, 1), "pid")));
		EXPECT_EQ(2, json_object_array_length(json_object_object_get(j, "targets")));
		json_object_put(j);
	}
	/* from a pipe too */
	snprintf(cmd, sizeof(cmd), "'%s' report wss - < '%s'", daptrace_bin(), damo);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	out[fread(out, 1, sizeof(out) - 1, f)] = '\0';
	EXPECT_EQ(0, pclose(f));
	EXPECT_NE(NULL, strstr(out, "# snapshots 2, missed 0")) TH_LOG("%s", out);
	snprintf(rec, sizeof(rec), "rm -rf '%s'", dir);
	EXPECT_EQ(0, system(rec));
}

/*
 * daptrace's tracepoint as perf script prints it: two targets per window,
 * a tune event halving the sampling rate, a cut last window.
 */
static const char perf[] =
	"# a comment perf may print\n"
	"  kthread  99 [000]  10.100000: daptrace:daptrace_aggregated: target_id=0 nr_regions=1 4096-8192: 20 0\n"
	"  kthread  99 [000]  10.100001: daptrace:daptrace_aggregated: target_id=1 nr_regions=2 65536-131072: 5 1\n"
	"  kthread  99 [000]  10.100002: daptrace:daptrace_aggregated: target_id=1 nr_regions=2 131072-262144: 0 4\n"
	"  kthread  99 [000]  10.100003: sched:sched_switch: prev_comm=x\n"
	"  kthread  99 [000]  10.150000: damon:damon_monitor_intervals_tune: sample_us=10000\n"
	"  kthread  99 [000]  10.300000: daptrace:daptrace_aggregated: target_id=0 nr_regions=1 4096-8192: 20 1\n"
	"  kthread  99 [000]  10.300001: daptrace:daptrace_aggregated: target_id=1 nr_regions=1 65536-262144: 0 5\n"
	"  kthread  99 [000]  10.500000: daptrace:daptrace_aggregated: target_id=0 nr_regions=3 4096-8192: 1 0\n";

TEST(perf_script_of_the_tracepoint)
{
	char dir[] = "/tmp/daptrace-import-XXXXXX", *rec;
	struct json_object *j, *s, *g;

	NEED();
	ASSERT_NE(NULL, mkdtemp(dir));
	rec = write_tmp(dir, "perf.txt", perf);
	ASSERT_EQ(0, run_daptrace(A("report", "raw", "--json", rec), out, sizeof(out)))
		TH_LOG("%s", out);
	j = json_tokener_parse(doc(out));
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	s = json_object_object_get(j, "snapshots");
	/* two windows (the cut third dropped), both targets in each */
	ASSERT_EQ(2, json_object_array_length(s));
	g = json_object_array_get_idx(s, 0);
	EXPECT_EQ(3, json_object_array_length(json_object_object_get(g, "regions")));
	/* the first window at DAMON's default 5 ms; the second tuned to 10 ms */
	EXPECT_EQ(5000, json_object_get_int(json_object_object_get(g, "sample_us")));
	g = json_object_array_get_idx(s, 1);
	EXPECT_EQ(10000, json_object_get_int(json_object_object_get(g, "sample_us")));
	EXPECT_EQ(200000000, json_object_get_int64(json_object_object_get(g, "start_ns")));
	EXPECT_EQ(100, json_object_get_double(json_object_object_get(json_object_array_get_idx(
		json_object_object_get(g, "regions"), 0), "freq_percent")));
	/* the other event and the cut window, counted */
	EXPECT_EQ(2, json_object_get_int(json_object_object_get(json_object_object_get(j, "end"),
								 "skipped")));
	EXPECT_STREQ("target_id 1", json_object_get_string(json_object_object_get(
		json_object_array_get_idx(json_object_object_get(j, "targets"), 1), "comm")));
	json_object_put(j);
	snprintf(out, sizeof(out), "rm -rf '%s'", dir);
	EXPECT_EQ(0, system(out));
}

TEST(bad_foreign_records)
{
	static const struct {
		const char *name, *text, *msg;
	} bad[] = {
		{ "a.json", "{\"not\": \"a list\"}", "a.json: not a damo record" },
		{ "b.json", "[{\"target_id\": 1}]", "b.json: records[0]: no list of snapshots" },
		{ "c.json", "[{\"target_id\": 1, \"snapshots\": [{\"end_time\": 5, \"regions\": "
		  "[{\"start\": 8, \"end\": 4, \"nr_accesses\": {\"samples\": 1}, \"age\": "
		  "{\"usec\": null, \"aggr_intervals\": 1}}]}]}]",
		  "c.json: records[0].snapshots[0].regions[0]: start is not below end" },
		{ "d.json", "[{\"target_id\": 1, \"snapshots\": [", "d.json: the JSON ends too early" },
		{ "e.txt", "x 1 [0] 5.0: damon:damon_aggregated: target_id=0 nr_regions=x 1-2: 0\n",
		  "e.txt: line 1: not a damon_aggregated line" },
		{ "f.txt", "hello\n", "f.txt:1: not a daptrace record" },
	};
	char dir[] = "/tmp/daptrace-import-XXXXXX", *rec;
	unsigned char zbad[] = { 0x78, 0x9c, 0xff, 0xff, 0xff };
	FILE *f;

	NEED();
	ASSERT_NE(NULL, mkdtemp(dir));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rec = write_tmp(dir, bad[i].name, bad[i].text);
		EXPECT_EQ(1, run_daptrace(A("report", "wss", rec), out, sizeof(out)));
		EXPECT_NE(NULL, strstr(out, bad[i].msg)) TH_LOG("want '%s': %s", bad[i].msg, out);
	}
	rec = write_tmp(dir, "z.data", "");
	f = fopen(rec, "w");
	ASSERT_NE(NULL, f);
	fwrite(zbad, 1, sizeof(zbad), f);
	fclose(f);
	EXPECT_EQ(1, run_daptrace(A("report", "wss", rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "not zlib data")) TH_LOG("%s", out);
	/* damo's own file cut in half */
	snprintf(out, sizeof(out), "head -c 30000 '%s/damon.data.json_compressed' > '%s'",
		 data_dir(), rec);
	ASSERT_EQ(0, system(out));
	EXPECT_EQ(1, run_daptrace(A("report", "wss", rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "the zlib data ends too early")) TH_LOG("%s", out);
	snprintf(out, sizeof(out), "rm -rf '%s'", dir);
	EXPECT_EQ(0, system(out));
}

TEST_HARNESS_MAIN
