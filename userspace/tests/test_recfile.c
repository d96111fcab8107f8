// SPDX-License-Identifier: GPL-2.0-only
/* The record file: CSV round trip with awkward strings, bad files -> clear errors. */
#include <csv.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "common/recfile.h"
#include "session/record_rows.h"

static const char *const awkward[] = {
	"/usr/lib/libc.so.6",
	"[heap]",
	"a,b,c",
	"say \"hi\"",
	"\"",
	"line1\nline2",
	"cr\r\nlf",
	"  leading and trailing  ",
	"",
	"#snap,1,2,3",
	"\xc3\xa9t\xc3\xa9 \xe2\x9c\x93",
	",\",\n,\"\"",
};
#define NR_AWKWARD (sizeof(awkward) / sizeof(awkward[0]))

struct collected {
	int nr;
	uint64_t seqs[8];
	char *labels[8][NR_AWKWARD];
	uint32_t nr_regions[8];
	uint64_t missed[8];
};

static int collect(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct collected *c = arg;

	(void)info;
	if (c->nr >= 8)
		return 99;
	c->seqs[c->nr] = s->seq;
	c->nr_regions[c->nr] = s->nr_regions;
	c->missed[c->nr] = s->missed_before;
	for (uint32_t i = 0; i < s->nr_regions && i < NR_AWKWARD; i++)
		c->labels[c->nr][i] = strdup(s->regions[i].label);
	c->nr++;
	return 0;
}

static void collected_free(struct collected *c)
{
	for (int s = 0; s < c->nr; s++)
		for (size_t i = 0; i < NR_AWKWARD; i++)
			free(c->labels[s][i]);
}

static void write_sample(FILE *f, int with_trailer)
{
	struct rec_kv meta[] = {
		{ "kernel", "6.12.0" },
		{ "command", "sh -c 'echo \"a,b\"\nexit'" },
	};
	struct rec_target t[] = { { .pid = 42, .comm = "we,ird \"comm\"" } };
	struct rec_region regs[NR_AWKWARD];
	struct rec_snapshot s = {
		.seq = 7, .start_ns = 0, .end_ns = 100, .nr_regions = NR_AWKWARD,
		.nr_samples = 20, .regions = regs,
	};
	struct rec_kv end[] = { { "missed", "3" }, { "reason", "all targets exited" } };

	for (size_t i = 0; i < NR_AWKWARD; i++)
		regs[i] = (struct rec_region){
			.start = 4096 * i, .end = 4096 * (i + 1), .nr_accesses = (uint32_t)i,
			.age = 1, .pid = 42, .label = (char *)awkward[i],
		};
	rec_write_header(f, meta, 2, t, 1);
	rec_write_snapshot(f, &s);
	s.seq = 11;		/* gaps are fine: missed snapshots */
	s.missed_before = 3;
	s.start_ns = 100;
	s.end_ns = 200;
	s.nr_regions = 0;	/* an empty snapshot has no rows */
	rec_write_snapshot(f, &s);
	if (with_trailer)
		rec_write_trailer(f, end, 2);
}

/* A temporary file of write_sample(), rewound for reading; NULL without one. */
static FILE *sample_file(int with_trailer)
{
	FILE *f = tmpfile();

	if (f) {
		write_sample(f, with_trailer);
		rewind(f);
	}
	return f;
}

/*
 * One read of a record by rec_read() (named "t.csv" in its messages): the
 * file, what the reader found in it and its error message.
 */
struct reading {
	FILE *f;
	struct rec_info info;
	char err[512];
};

/* rec_read() of @rd->f, each snapshot to @cb(@arg); @partial: allow_partial. */
static int read_with(struct reading *rd, int partial, rec_snapshot_cb cb, void *arg)
{
	return rec_read(rd->f, "t.csv", partial, cb, arg, &rd->info, rd->err, sizeof(rd->err));
}

/* Frees what read_with() left in @rd and closes its file. */
static void reading_done(struct reading *rd)
{
	rec_info_free(&rd->info);
	fclose(rd->f);
}

/* @s as a whole record of target 42 ("t") in @f, rewound for reading. */
static void write_one_snapshot(FILE *f, const struct rec_snapshot *s)
{
	rec_write_header(f, NULL, 0, &(struct rec_target){ .pid = 42, .comm = "t" }, 1);
	rec_write_snapshot(f, s);
	rec_write_trailer(f, NULL, 0);
	rewind(f);
}

/* Frees what a read_with() into @c and @rd left, and closes the file. */
static void read_free(struct reading *rd, struct collected *c)
{
	reading_done(rd);
	collected_free(c);
}

TEST(round_trip)
{
	struct collected c = { 0 };
	struct reading rd = { .f = sample_file(1) };

	ASSERT_NE(NULL, rd.f);
	ASSERT_EQ(0, read_with(&rd, 0, collect, &c)) TH_LOG("%s", rd.err);
	ASSERT_EQ(2, c.nr);
	EXPECT_EQ(7, c.seqs[0]);
	EXPECT_EQ(11, c.seqs[1]);
	EXPECT_EQ(0, c.nr_regions[1]);
	EXPECT_EQ(3, c.missed[1]);
	for (size_t i = 0; i < NR_AWKWARD; i++) {
		EXPECT_STREQ(awkward[i], c.labels[0][i]) TH_LOG("label %zu", i);
	}
	EXPECT_TRUE(rd.info.complete);
	EXPECT_EQ(2, rd.info.nr_snapshots);
	EXPECT_STREQ("sh -c 'echo \"a,b\"\nexit'", rec_info_get(&rd.info, "command"));
	EXPECT_STREQ("6.12.0", rec_info_get(&rd.info, "kernel"));
	EXPECT_STREQ("3", rec_info_trailer(&rd.info, "missed"));
	EXPECT_STREQ("all targets exited", rec_info_trailer(&rd.info, "reason"));
	ASSERT_EQ(1, rd.info.nr_targets);
	EXPECT_EQ(42, rd.info.targets[0].pid);
	EXPECT_STREQ("we,ird \"comm\"", rd.info.targets[0].comm);
	read_free(&rd, &c);
}

TEST(partial_file_with_flag)
{
	struct collected c = { 0 };
	struct reading rd = { .f = sample_file(0) };

	ASSERT_NE(NULL, rd.f);
	EXPECT_EQ(-1, read_with(&rd, 0, collect, &c));
	EXPECT_NE(NULL, strstr(rd.err, "no #eof")) TH_LOG("%s", rd.err);
	rec_info_free(&rd.info);
	collected_free(&c);
	memset(&c, 0, sizeof(c));
	rewind(rd.f);
	EXPECT_EQ(0, read_with(&rd, 1, collect, &c));
	EXPECT_EQ(2, c.nr);
	EXPECT_FALSE(rd.info.complete);
	read_free(&rd, &c);
}

#define HDR "# daptrace-record v1\n#meta,aggr_us,100000\n#target,42,x\n" REC_COLUMNS_V1 "\n"
/* v2 as first written: without the flags column */
#define HDR2 "# daptrace-record v2\n#target,42,x\ntime_ns,seq,pid,start,end,nr_accesses," \
	"age,nr_samples,nr_present,node0,node1,node2,node3,phys_addr,label\n"
#define ROW2_1 "100,1,42,4096,8192,3,0,20,10,4,6,0,0,8192,[heap]\n"
#define SNAP1 "#snap,1,0,100,2,20,0,0\n"
/* the columns before nr_unobserved: such records stay readable */
#define HDR2A "# daptrace-record v2\n#target,42,x\ntime_ns,seq,pid,start,end,nr_accesses," \
	"age,nr_samples,nr_present,node0,node1,node2,node3,phys_addr,flags,label\n"
/* as written now: with nr_unobserved */
#define HDR3 "# daptrace-record v2\n#target,42,x\n" REC_COLUMNS "\n"
#define ROW1 "100,1,42,4096,8192,3,0,[heap]\n"
#define ROW2 "100,1,42,8192,12288,0,1,\"a,b\"\n"
#define END "#end,missed,0\n#eof\n"

static const struct {
	const char *name;
	const char *text;
	const char *expect;	/* substring of the message, with the line */
} bad_cases[] = {
	{ "empty", "", "t.csv:0: empty file" },
	{ "not a record", "hello,world\n", "t.csv:1: not a daptrace record" },
	{ "future version", "# daptrace-record v3\n", "t.csv:1: unsupported record version 'v3'" },
	{ "v2 missing column", "# daptrace-record v2\ntime_ns,seq,pid,start,end,age,label\n", "t.csv:2: the column header lacks the column 'nr_accesses'" },
	{ "v2 twice", "# daptrace-record v2\ntime_ns,seq,seq,pid,start,end,nr_accesses,age,label\n", "t.csv:2: column 'seq' appears twice" },
	{ "v2 short row", HDR2 SNAP1 ROW1, "t.csv:5: region row needs 15 fields, got 8" },
	{ "v2 nr_samples", HDR2 SNAP1 "100,1,42,4096,8192,3,0,21,10,4,6,0,0,8192,x\n", "t.csv:5: region row nr_samples 21 differs from its #snap row's 20" },
	{ "v2 present", HDR2 SNAP1 "100,1,42,4096,8192,3,0,20,21,4,6,0,0,8192,x\n", "t.csv:5: bad nr_present '21'" },
	{ "v2 node sum", HDR2 SNAP1 "100,1,42,4096,8192,3,0,20,10,5,6,0,0,8192,x\n", "t.csv:5: node samples add up to 11, more than nr_present 10" },
	{ "v2 node junk", HDR2 SNAP1 "100,1,42,4096,8192,3,0,20,10,x,6,0,0,8192,x\n", "t.csv:5: bad node0 'x'" },
	{ "v2 mixed placement", HDR2 SNAP1 ROW2_1 "100,1,42,8192,12288,3,0,20,,,,,,,x\n", "t.csv:6: placement columns empty in only some rows of snapshot seq 1" },
	{ "header cut", "# daptrace-record v1\n#meta,a,b\n", "t.csv:2: truncated: the file ends inside the header" },
	{ "bad column header", "# daptrace-record v1\ntime,seq\n", "t.csv:2: expected the column header" },
	{ "snapshot cut", HDR SNAP1 ROW1, "t.csv:6: truncated: snapshot seq 1 (line 5) has only 1 of 2 region rows" },
	{ "row cut mid-line", HDR SNAP1 ROW1 "100,1,42,81", "t.csv:7: truncated: the last line is cut short (region row needs 8 fields, got 4); use --partial" },
	{ "no trailer", HDR SNAP1 ROW1 ROW2, "t.csv:7: truncated: no #eof row" },
	{ "trailer without eof", HDR SNAP1 ROW1 ROW2 "#end,missed,0\n", "truncated: no #eof row" },
	{ "seven fields", HDR SNAP1 "100,1,42,4096,8192,3,0\n", "t.csv:6: region row needs 8 fields, got 7" },
	{ "junk number", HDR SNAP1 "100,1,42,abc,8192,3,0,x\n", "t.csv:6: bad start 'abc'" },
	{ "negative", HDR SNAP1 "100,1,42,4096,8192,-3,0,x\n", "t.csv:6: bad nr_accesses '-3'" },
	{ "overflow", HDR SNAP1 "100,1,42,4096,8192,4294967296,0,x\n", "t.csv:6: bad nr_accesses" },
	{ "empty region", HDR SNAP1 "100,1,42,8192,8192,3,0,x\n", "t.csv:6: region start 8192 is not below end 8192" },
	{ "foreign row", HDR SNAP1 "100,2,42,4096,8192,3,0,x\n", "t.csv:6: region row of seq 2" },
	{ "seq backwards", HDR "#snap,5,0,100,0,20,0,0\n#snap,4,0,100,0,20,0,0\n", "t.csv:6: snapshot seq 4 does not follow seq 5" },
	{ "seq zero", HDR "#snap,0,0,100,0,20,0,0\n", "t.csv:5: snapshot seq 0 does not follow" },
	{ "time backwards", HDR "#snap,1,200,100,0,20,0,0\n", "t.csv:5: snapshot seq 1 ends before it starts" },
	{ "short snap", HDR "#snap,1,0,100\n", "t.csv:5: #snap row needs 8 or 10 fields, got 4" },
	{ "too many regions", HDR "#snap,1,0,100,99999999,20,0,0\n", "t.csv:5: bad nr_regions" },
	{ "early snap", HDR SNAP1 ROW1 "#snap,2,0,100,0,20,0,0\n", "t.csv:7: new #snap row, but snapshot seq 1 (line 5) has only 1 of 2" },
	{ "extra row", HDR "#snap,1,0,100,1,20,0,0\n" ROW1 ROW1, "t.csv:7: region row outside a snapshot" },
	{ "row before snap", HDR ROW1, "t.csv:5: region row outside a snapshot" },
	{ "early end", HDR SNAP1 ROW1 END, "t.csv:7: #end row, but snapshot seq 1" },
	{ "data after eof", HDR END "#snap,1,0,100,0,20,0,0\n", "t.csv:7: data after the #eof row" },
	{ "data after end", HDR "#end,a,b\n" ROW1, "t.csv:6: data row after the #end trailer" },
	{ "stray quote", HDR SNAP1 "100,1,42,4096,8192,3,0,ab\"c\n", "t.csv:6: malformed CSV" },
	{ "text after quote", HDR SNAP1 "100,1,42,4096,8192,3,0,\"ab\"c\n", "t.csv:6: malformed CSV" },
	{ "unterminated quote", HDR SNAP1 "100,1,42,4096,8192,3,0,\"abc\n\n", "t.csv:7: malformed CSV at end of file" },
	{ "too many fields", HDR "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34\n", "t.csv:5: row has 34 fields" },
	{ "binary junk", "\x7f" "ELF\x02\x01\x01\0\0\0\n", "t.csv:1: not a daptrace record" },
	{ "bad target pid", "# daptrace-record v1\n#target,x,comm\n", "t.csv:2: bad target pid 'x'" },
	{ "short target", "# daptrace-record v1\n#target,7\n", "t.csv:2: #target row needs at least 3 fields, got 2" },
	{ "region of no target", HDR SNAP1 "100,1,43,4096,8192,3,0,x\n", "t.csv:6: region row of pid 43, which no #target row names" },
	{ "target too late", HDR SNAP1 "100,1,43,4096,8192,3,0,x\n#target,43,y\n", "t.csv:6: region row of pid 43" },
	{ "target inside a snapshot", HDR SNAP1 ROW1 "#target,43,y\n", "t.csv:7: #target row, but snapshot seq 1 (line 5) has only 1 of 2" },
	{ "snap with one interval", HDR "#snap,1,0,100,0,20,0,0,5000\n", "t.csv:5: #snap row needs 8 or 10 fields, got 9" },
	{ "snap intervals zero", HDR "#snap,1,0,100,0,20,0,0,0,100000\n", "t.csv:5: snapshot seq 1: bad intervals sample_us 0, aggr_us 100000" },
	{ "snap intervals reversed", HDR "#snap,1,0,100,0,20,0,0,200000,100000\n", "t.csv:5: snapshot seq 1: bad intervals" },
	{ "footprint of no target", HDR "#footprint,43,5,8192,4096\n", "t.csv:5: #footprint row of pid 43, which no #target row names" },
	{ "footprint rss > vsz", HDR "#footprint,42,5,4096,8192\n", "t.csv:5: footprint rss 8192 is more than its vsz 4096" },
	{ "footprint short", HDR "#footprint,42,5,4096\n", "t.csv:5: #footprint row needs 5 fields, got 4" },
	{ "maps of no target", HDR "#maps,43,5,4096,8192\n", "t.csv:5: #maps row of pid 43, which no #target row names" },
	{ "maps half a range", HDR "#maps,42,5,4096\n", "t.csv:5: #maps row needs a pid, a time and start,end pairs, got 4 fields" },
	{ "maps empty range", HDR "#maps,42,5,8192,8192\n", "t.csv:5: maps range 8192-8192 of pid 42 is empty" },
	{ "maps overlap", HDR "#maps,42,5,4096,12288,8192,16384\n", "t.csv:5: maps range at 8192 of pid 42 is below the end of the one before (12288)" },
	{ "maps overlap the row before", HDR "#maps,42,5,4096,12288\n#maps,42,5,8192,16384\n", "t.csv:6: maps range at 8192 of pid 42 is below" },
	{ "maps inside a snapshot", HDR SNAP1 ROW1 "#maps,42,5\n", "t.csv:7: #maps row, but snapshot seq 1" },
	{ "bad flags", HDR2A SNAP1 "100,1,42,4096,8192,3,0,20,,,,,,,x,[heap]\n", "t.csv:5: bad flags 'x'" },
	{ "unobserved over samples", HDR3 SNAP1 "100,1,42,4096,8192,3,0,20,,,,,,,0,21,,x\n", "t.csv:5: bad nr_unobserved '21'" },
	{ "huge over present", HDR3 SNAP1 "100,1,42,4096,8192,3,0,20,5,5,0,0,0,,0,0,6,x\n", "t.csv:5: bad nr_huge '6'" },
	{ "bad target ppid", HDR "#target,43,y,z\n", "t.csv:5: bad target ppid 'z'" },
	{ "bad target time", HDR "#target,43,y,1,/a,soon\n", "t.csv:5: bad target time_ns 'soon'" },
	{ "exit of no target", HDR "#exit,43,5\n", "t.csv:5: #exit row of pid 43, which no #target row names" },
	{ "exit short", HDR "#exit,42\n", "t.csv:5: #exit row needs at least 3 fields, got 2" },
	{ "exit bad time", HDR "#exit,42,x\n", "t.csv:5: bad exit time_ns 'x'" },
	{ "exit inside a snapshot", HDR SNAP1 ROW1 "#exit,42,5\n", "t.csv:7: #exit row, but snapshot seq 1" },
	{ "short meta", "# daptrace-record v1\n#meta,key\n", "t.csv:2: #meta row needs 3 fields, got 2" },
	{ "nan interval", "# daptrace-record v1\n#meta,aggr_us,nan\n", "t.csv:2: bad #meta aggr_us 'nan'" },
	{ "zero interval", "# daptrace-record v1\n#meta,sample_us,0\n", "t.csv:2: bad #meta sample_us '0'" },
	{ "regret short", HDR "#regret,0,0:pageout,resident,/a,4096,0\n", "t.csv:5: #regret row needs 7 fields and 1 to 6 groups of 4, got 7" },
	{ "regret half a window", HDR "#regret,0,0:pageout,resident,/a,4096,0,1000000,4096,0\n", "t.csv:5: #regret row needs 7 fields" },
	{ "regret bad acted", HDR "#regret,0,0:pageout,resident,/a,-1,0,1000000,0,0,0\n", "t.csv:5: bad regret acted bytes '-1'" },
	{ "regret back > checked", HDR "#regret,0,0:pageout,resident,/a,8192,0,1000000,4096,8192,0\n", "t.csv:5: #regret window 1000000 us: back 8192, checked 4096" },
	{ "regret over acted", HDR "#regret,0,0:pageout,resident,/a,8192,0,1000000,8192,0,4096\n", "t.csv:5: #regret window 1000000 us" },
	{ "regret unknown over acted", HDR "#regret,0,0:pageout,resident,/a,8192,0,1000000,0,0,18446744073709551615\n", "t.csv:5: #regret window 1000000 us" },
	{ "regret windows reversed", HDR "#regret,0,0:pageout,resident,/a,8192,0,10000000,0,0,0,1000000,0,0,0\n", "t.csv:5: #regret windows must be positive and ascending, got 1000000" },
	{ "regret window zero", HDR "#regret,0,0:pageout,resident,/a,8192,0,0,0,0,0\n", "t.csv:5: #regret windows must be positive" },
	{ "regret inside a snapshot", HDR SNAP1 ROW1 "#regret,0,0:pageout,resident,/a,8192,0,1000000,0,0,0\n", "t.csv:7: #regret row, but snapshot seq 1" },
	{ "more accesses than samples", HDR SNAP1 "100,1,42,4096,8192,21,0,x\n", "t.csv:6: nr_accesses 21 is more than the window's 20 samples" },
};

/* A snapshot's maps as read: the reads, each with its ranges. */
struct maps_read {
	uint32_t nr_maps, nr_ranges;
	struct rec_maps m[4];
	struct rec_range r[64];
};

static int collect_maps(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct maps_read *out = arg;

	(void)info;
	if (s->nr_maps > 4 || s->nr_map_ranges > 64)
		return 99;
	out->nr_maps = s->nr_maps;
	out->nr_ranges = s->nr_map_ranges;
	memcpy(out->m, s->maps, s->nr_maps * sizeof(*s->maps));
	memcpy(out->r, s->map_ranges, s->nr_map_ranges * sizeof(*s->map_ranges));
	return 0;
}

/*
 * #maps rows round trip: a read of more ranges than a row holds takes two
 * rows and reads back as one; a read without mappings is a row of its own.
 */
TEST(maps_round_trip)
{
	struct rec_range r[REC_MAPS_PER_ROW + 6];
	struct rec_maps m[2] = {
		{ .pid = 42, .time_ns = 5, .first = 0, .nr = REC_MAPS_PER_ROW + 6 },
		{ .pid = 42, .time_ns = 9, .first = REC_MAPS_PER_ROW + 6, .nr = 0 },
	};
	struct rec_snapshot s = { .seq = 1, .end_ns = 100, .nr_samples = 20, .maps = m,
				  .nr_maps = 2, .map_ranges = r,
				  .nr_map_ranges = REC_MAPS_PER_ROW + 6 };
	struct rec_target tg = { .pid = 42, .comm = "x" };
	struct reading rd = { .f = tmpfile() };
	struct maps_read got = { 0 };
	char line[1024];
	int rows = 0;

	for (uint32_t i = 0; i < REC_MAPS_PER_ROW + 6; i++)
		r[i] = (struct rec_range){ 8192 * (i + 1), 8192 * (i + 1) + 4096 };
	ASSERT_NE(NULL, rd.f);
	ASSERT_EQ(0, rec_write_header(rd.f, NULL, 0, &tg, 1));
	ASSERT_EQ(0, rec_write_snapshot(rd.f, &s));
	ASSERT_EQ(0, rec_write_trailer(rd.f, NULL, 0));
	rewind(rd.f);
	while (fgets(line, sizeof(line), rd.f))
		rows += !strncmp(line, "#maps,42,", 9);
	EXPECT_EQ(3, rows);
	rewind(rd.f);
	ASSERT_EQ(0, read_with(&rd, 0, collect_maps, &got)) TH_LOG("%s", rd.err);
	ASSERT_EQ(2, got.nr_maps);
	ASSERT_EQ(REC_MAPS_PER_ROW + 6, got.nr_ranges);
	EXPECT_EQ(5, got.m[0].time_ns);
	EXPECT_EQ(0, got.m[0].first);
	EXPECT_EQ(REC_MAPS_PER_ROW + 6, got.m[0].nr);
	EXPECT_EQ(9, got.m[1].time_ns);
	EXPECT_EQ(0, got.m[1].nr);
	for (uint32_t i = 0; i < REC_MAPS_PER_ROW + 6; i++) {
		EXPECT_EQ(r[i].start, got.r[i].start);
		EXPECT_EQ(r[i].end, got.r[i].end);
	}
	rec_info_free(&rd.info);
	fclose(rd.f);
}

TEST(bad_files)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct collected c = { 0 };
		size_t len = strlen(bad_cases[i].text);
		struct reading rd = { .f = fmemopen((void *)bad_cases[i].text, len ? len : 1,
						    "r") };

		ASSERT_NE(NULL, rd.f);
		if (!strlen(bad_cases[i].text))
			fgetc(rd.f);	/* fmemopen cannot do size 0: consume the NUL */
		EXPECT_EQ(-1, read_with(&rd, 0, collect, &c))
			TH_LOG("case '%s' was accepted", bad_cases[i].name);
		EXPECT_NE(NULL, strstr(rd.err, bad_cases[i].expect))
			TH_LOG("case '%s': got '%s', want '%s'", bad_cases[i].name, rd.err,
			       bad_cases[i].expect);
		read_free(&rd, &c);
	}
}

static int collect_placement(void *arg, const struct rec_snapshot *s,
			     const struct rec_info *info)
{
	struct rec_snapshot *out = arg;
	struct rec_region *r = out->regions;

	(void)info;
	*out = *s;
	out->regions = r;
	for (uint32_t i = 0; i < s->nr_regions && i < 2; i++) {
		r[i] = s->regions[i];
		r[i].label = NULL;
	}
	return 0;
}

/* v2 placement survives a round trip; a v1 file and unknown columns still read. */
TEST(placement_round_trip_and_versions)
{
	struct rec_region regs[2] = {
		{ .start = 4096, .end = 8192, .nr_accesses = 3, .pid = 42, .label = "a",
		  .nr_present = 10, .node_samples = { 4, 6 }, .phys_addr = 0x1234000 },
		{ .start = 8192, .end = 12288, .pid = 42, .label = "b",
		  .phys_addr = REC_PHYS_NONE },
	}, got[2];
	struct rec_snapshot s = { .seq = 1, .end_ns = 100, .nr_regions = 2,
				  .nr_samples = 20, .regions = regs, .placement = 1 };
	struct rec_snapshot out = { .regions = got };
	static const char *const texts[] = {
		HDR SNAP1 ROW1 ROW2 END,
		"# daptrace-record v2\n#target,42,x\nlabel,future,time_ns,seq,pid,start,end,"
		"nr_accesses,age\n"
		SNAP1 "x,?,100,1,42,4096,8192,3,0\ny,?,100,1,42,8192,12288,0,1\n" END,
	};
	struct reading rd = { .f = tmpfile() };

	ASSERT_NE(NULL, rd.f);
	write_one_snapshot(rd.f, &s);
	ASSERT_EQ(0, read_with(&rd, 0, collect_placement, &out)) TH_LOG("%s", rd.err);
	EXPECT_EQ(1, out.placement);
	EXPECT_EQ(10, got[0].nr_present);
	EXPECT_EQ(4, got[0].node_samples[0]);
	EXPECT_EQ(6, got[0].node_samples[1]);
	EXPECT_EQ(0x1234000, got[0].phys_addr);
	EXPECT_EQ(0, got[1].nr_present);
	EXPECT_EQ(REC_PHYS_NONE, got[1].phys_addr);
	reading_done(&rd);

	for (size_t i = 0; i < 2; i++) {
		rd.f = fmemopen((void *)texts[i], strlen(texts[i]), "r");
		ASSERT_NE(NULL, rd.f);
		memset(got, 0xff, sizeof(got));
		EXPECT_EQ(0, read_with(&rd, 0, collect_placement, &out))
			TH_LOG("text %zu: %s", i, rd.err);
		EXPECT_EQ(0, out.placement);
		EXPECT_EQ(2, out.nr_regions);
		EXPECT_EQ(8192, got[1].start);
		EXPECT_EQ(3, got[0].nr_accesses);
		EXPECT_EQ(0, got[0].nr_present);
		EXPECT_EQ(REC_PHYS_NONE, got[0].phys_addr);
		reading_done(&rd);
	}
}

struct seen {
	uint32_t sample_us[4], aggr_us[4], flags[4], nr_fp[4];
	struct rec_footprint fp[4];
	int nr, nr_targets_at[4];
};

static int see(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct seen *c = arg;

	if (c->nr >= 4)
		return 99;
	c->sample_us[c->nr] = s->sample_us;
	c->aggr_us[c->nr] = s->aggr_us;
	c->flags[c->nr] = s->nr_regions ? s->regions[s->nr_regions - 1].flags : 0;
	c->nr_fp[c->nr] = s->nr_footprints;
	if (s->nr_footprints)
		c->fp[c->nr] = s->footprints[s->nr_footprints - 1];
	c->nr_targets_at[c->nr] = info->nr_targets;
	c->nr++;
	return 0;
}

/*
 * The window's own intervals, written and read back; a #snap row without
 * them takes the #meta ones.  Region flags and footprints round trip.
 */
TEST(intervals_flags_and_footprints_round_trip)
{
	struct rec_region regs[2] = {
		{ .start = 4096, .end = 8192, .nr_accesses = 3, .pid = 42, .label = "a" },
		{ .start = 8192, .end = 12288, .pid = 42, .label = "hugetlb",
		  .flags = REC_REGION_NOT_OBSERVABLE },
	};
	struct rec_footprint fp = { .pid = 42, .time_ns = 99, .vsz = 1 << 30, .rss = 1 << 20 };
	struct rec_snapshot s = { .seq = 1, .end_ns = 100, .nr_regions = 2, .nr_samples = 20,
				  .sample_us = 5000, .aggr_us = 100000, .regions = regs,
				  .footprints = &fp, .nr_footprints = 1 };
	struct rec_kv meta[] = { { "sample_us", "1000" }, { "aggr_us", "20000" } };
	struct seen c = { 0 };
	struct reading rd = { .f = tmpfile() };

	ASSERT_NE(NULL, rd.f);
	rec_write_header(rd.f, meta, 2, &(struct rec_target){ .pid = 42, .comm = "t" }, 1);
	rec_write_snapshot(rd.f, &s);
	/* tuned: 10 ms sampling in the next window */
	s.seq = 2;
	s.start_ns = 100;
	s.end_ns = 200;
	s.sample_us = 10000;
	s.aggr_us = 200000;
	s.nr_footprints = 0;
	rec_write_snapshot(rd.f, &s);
	/* unknown: the #meta intervals */
	s.seq = 3;
	s.start_ns = 200;
	s.end_ns = 300;
	s.sample_us = s.aggr_us = 0;
	rec_write_snapshot(rd.f, &s);
	rec_write_trailer(rd.f, NULL, 0);
	rewind(rd.f);
	ASSERT_EQ(0, read_with(&rd, 0, see, &c)) TH_LOG("%s", rd.err);
	ASSERT_EQ(3, c.nr);
	EXPECT_EQ(5000, c.sample_us[0]);
	EXPECT_EQ(100000, c.aggr_us[0]);
	EXPECT_EQ(10000, c.sample_us[1]);
	EXPECT_EQ(200000, c.aggr_us[1]);
	EXPECT_EQ(1000, c.sample_us[2]);
	EXPECT_EQ(20000, c.aggr_us[2]);
	EXPECT_EQ(REC_REGION_NOT_OBSERVABLE, c.flags[0]);
	EXPECT_EQ(1, c.nr_fp[0]);
	EXPECT_EQ(0, c.nr_fp[1]);
	EXPECT_EQ(42, c.fp[0].pid);
	EXPECT_EQ(99, c.fp[0].time_ns);
	EXPECT_EQ(1 << 30, c.fp[0].vsz);
	EXPECT_EQ(1 << 20, c.fp[0].rss);
	reading_done(&rd);
}

/*
 * Process trees: a #target row between snapshots adds a target (more
 * fields after the comm are a later version's); #exit and other unknown
 * rows are skipped; a flags column left empty is 0.
 */
/*
 * A policy record's #regret rows round trip (names with commas and quotes
 * too); a record without them (every older one) reads with none.
 */
TEST(regret_round_trip)
{
	struct rec_regret r = {
		.scheme = 1, .name = "1:pageout \"x,y\"", .method = "resident",
		.cgroup = "/a,b", .acted = 1 << 20, .unknown_calls = 2, .nr_windows = 3,
		.w = { { 1000000, 1 << 20, 4096, 0 }, { 10000000, 1 << 19, 8192, 4096 },
		       { 60000000, 0, 0, 0 } },
	};
	struct collected c = { 0 };
	struct reading rd = { .f = tmpfile() };

	ASSERT_NE(NULL, rd.f);
	write_sample(rd.f, 0);
	ASSERT_EQ(0, rec_write_regret(rd.f, &r));
	ASSERT_EQ(0, rec_write_trailer(rd.f, NULL, 0));
	rewind(rd.f);
	ASSERT_EQ(0, read_with(&rd, 0, collect, &c)) TH_LOG("%s", rd.err);
	ASSERT_EQ(1, rd.info.nr_regret);
	EXPECT_EQ(1, rd.info.regret[0].scheme);
	EXPECT_STREQ(r.name, rd.info.regret[0].name);
	EXPECT_STREQ("resident", rd.info.regret[0].method);
	EXPECT_STREQ("/a,b", rd.info.regret[0].cgroup);
	EXPECT_EQ(1 << 20, rd.info.regret[0].acted);
	EXPECT_EQ(2, rd.info.regret[0].unknown_calls);
	ASSERT_EQ(3, rd.info.regret[0].nr_windows);
	EXPECT_EQ(0, memcmp(r.w, rd.info.regret[0].w, sizeof(r.w[0]) * 3));
	read_free(&rd, &c);

	rd.f = sample_file(1);
	ASSERT_NE(NULL, rd.f);
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(0, read_with(&rd, 0, collect, &c));
	EXPECT_EQ(0, rd.info.nr_regret);
	read_free(&rd, &c);
}

TEST(targets_joining_later_and_unknown_rows)
{
	static const char text[] = HDR2A
		"#snap,1,0,100,1,20,0,0\n"
		"100,1,42,4096,8192,3,0,20,,,,,,,,x\n"
		"#target,43,child,42,future\n"
		"#exit,42,150\n"
		"#something,else\n"
		"#snap,2,100,200,2,20,0,0\n"
		"200,2,42,4096,8192,3,0,20,,,,,,,1,x\n"
		"200,2,43,8192,12288,3,0,20,,,,,,,0,y\n"
		"#eof\n";
	struct seen c = { 0 };
	struct reading rd = { .f = fmemopen((void *)text, strlen(text), "r") };

	ASSERT_NE(NULL, rd.f);
	ASSERT_EQ(0, read_with(&rd, 0, see, &c)) TH_LOG("%s", rd.err);
	ASSERT_EQ(2, c.nr);
	EXPECT_EQ(1, c.nr_targets_at[0]);
	EXPECT_EQ(2, c.nr_targets_at[1]);
	EXPECT_EQ(0, c.flags[0]);
	EXPECT_EQ(0, c.flags[1]);
	ASSERT_EQ(2, rd.info.nr_targets);
	EXPECT_EQ(43, rd.info.targets[1].pid);
	EXPECT_STREQ("child", rd.info.targets[1].comm);
	reading_done(&rd);
}

TEST(huge_field)
{
	size_t n = 200 * 1024;
	char *text = malloc(n + 256);
	struct reading rd = { 0 };

	ASSERT_NE(NULL, text);
	strcpy(text, HDR SNAP1 "100,1,42,4096,8192,3,0,\"");
	memset(text + strlen(text), 'x', n);
	text[strlen(HDR SNAP1 "100,1,42,4096,8192,3,0,\"") + n] = '\0';
	rd.f = fmemopen(text, strlen(text), "r");
	ASSERT_NE(NULL, rd.f);
	EXPECT_EQ(-1, read_with(&rd, 0, NULL, NULL));
	EXPECT_NE(NULL, strstr(rd.err, "longer than 65536 bytes")) TH_LOG("%s", rd.err);
	reading_done(&rd);
	free(text);
}

TEST(missing_file)
{
	struct rec_info info;
	char err[512];

	EXPECT_EQ(-1, rec_read_path("/nonexistent/x.csv", 0, NULL, NULL, &info, err,
				    sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "/nonexistent/x.csv: No such file")) TH_LOG("%s", err);
	rec_info_free(&info);
}

TEST(callback_stops)
{
	const char *text = HDR SNAP1 ROW1 ROW2 END;
	struct collected c = { .nr = 8 };	/* full: collect() returns 99 */
	struct reading rd = { .f = fmemopen((void *)text, strlen(text), "r") };

	ASSERT_NE(NULL, rd.f);
	EXPECT_EQ(99, read_with(&rd, 0, collect, &c));
	reading_done(&rd);
}

struct unobs {
	int nr;
	uint32_t count[2], flags[2];
};

static int see_unobs(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct unobs *u = arg;

	(void)info;
	for (uint32_t i = 0; i < s->nr_regions && i < 2; i++) {
		u->count[i] = s->regions[i].nr_unobserved;
		u->flags[i] = s->regions[i].flags;
	}
	u->nr++;
	return 0;
}

/*
 * nr_unobserved round trips; a region the module could not observe at all
 * in its window is flagged not observable by the writer's caller
 * (rec_rows_fill), and the flag and the count read back.
 */
static const char *label_x(void *ctx, const struct daptrace_region *r)
{
	(void)ctx;
	(void)r;
	return "x";
}

TEST(unobserved_round_trip)
{
	struct daptrace_region dregs[2] = {
		{ .start = 4096, .end = 8192, .nr_accesses = 3, .pid = 42, .nr_unobserved = 5 },
		{ .start = 8192, .end = 12288, .pid = 42, .nr_unobserved = 20 },
	};
	struct daptrace_snapshot ds = { .seq = 1, .end_ns = 100, .nr_samples = 20,
					.nr_regions = 2, .regions = dregs };
	struct rec_rows rows = { 0 };
	struct rec_snapshot s;
	struct unobs u = { 0 };
	struct reading rd = { .f = tmpfile() };

	ASSERT_NE(NULL, rd.f);
	ASSERT_EQ(0, rec_rows_fill(&rows, &s, &ds, 0, label_x, NULL));
	write_one_snapshot(rd.f, &s);
	rec_rows_free(&rows);
	ASSERT_EQ(0, read_with(&rd, 0, see_unobs, &u)) TH_LOG("%s", rd.err);
	ASSERT_EQ(1, u.nr);
	EXPECT_EQ(5, u.count[0]);
	EXPECT_EQ(0, u.flags[0]);
	EXPECT_EQ(20, u.count[1]);
	EXPECT_EQ(REC_REGION_NOT_OBSERVABLE, u.flags[1]);
	reading_done(&rd);

	/* a window without a sampling round observed nothing */
	ds.nr_samples = 0;
	dregs[0].nr_unobserved = 0;
	dregs[1].nr_unobserved = 0;
	ASSERT_EQ(0, rec_rows_fill(&rows, &s, &ds, 0, label_x, NULL));
	EXPECT_EQ(REC_REGION_NOT_OBSERVABLE, rows.rows[0].flags);
	EXPECT_EQ(REC_REGION_NOT_OBSERVABLE, rows.rows[1].flags);
	rec_rows_free(&rows);
}

struct names {
	char comm[4][16];
	int nr;
};

static int name_of_43(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct names *n = arg;
	const struct rec_target *t = rec_info_target(info, 43);

	(void)s;
	if (n->nr < 4)
		snprintf(n->comm[n->nr++], 16, "%s", t ? t->comm : "-");
	return 0;
}

/*
 * A target's life in the record: it joins with its parent, cgroup and
 * time; execs (a new comm, the same process); exits; its pid is reused by
 * another process, which is a new target.  Each snapshot sees the names
 * as they were at its time.
 */
TEST(targets_join_exec_exit_and_reuse)
{
	struct rec_target child = { .pid = 43, .comm = "sh", .ppid = 42, .cgroup = "/a b",
				    .time_ns = 150 };
	struct rec_snapshot s = { .seq = 1, .end_ns = 100, .nr_samples = 20 };
	const struct rec_target *t;
	struct names n = { 0 };
	struct reading rd = { .f = tmpfile() };

	ASSERT_NE(NULL, rd.f);
	rec_write_header(rd.f, NULL, 0, &(struct rec_target){ .pid = 42, .comm = "make" }, 1);
	rec_write_snapshot(rd.f, &s);
	rec_write_target(rd.f, &child);
	s.seq = 2;
	rec_write_snapshot(rd.f, &s);
	child.comm = "cc1";
	rec_write_target(rd.f, &child);
	s.seq = 3;
	rec_write_snapshot(rd.f, &s);
	rec_write_exit(rd.f, 43, 350, 0);
	s.seq = 4;
	rec_write_snapshot(rd.f, &s);
	child.comm = "ld";
	child.time_ns = 450;
	rec_write_target(rd.f, &child);
	rec_write_exit(rd.f, 42, 460, 1);
	rec_write_trailer(rd.f, NULL, 0);
	rewind(rd.f);
	ASSERT_EQ(0, read_with(&rd, 0, name_of_43, &n)) TH_LOG("%s", rd.err);
	ASSERT_EQ(4, n.nr);
	EXPECT_STREQ("-", n.comm[0]);
	EXPECT_STREQ("sh", n.comm[1]);
	EXPECT_STREQ("cc1", n.comm[2]);
	EXPECT_STREQ("cc1", n.comm[3]);
	/* make, the child that exec'ed, the process that got its pid later */
	ASSERT_EQ(3, rd.info.nr_targets);
	t = &rd.info.targets[1];
	EXPECT_EQ(43, t->pid);
	EXPECT_STREQ("cc1", t->comm);
	EXPECT_EQ(42, t->ppid);
	EXPECT_STREQ("/a b", t->cgroup);
	EXPECT_EQ(150, t->time_ns);
	EXPECT_EQ(350, t->exit_ns);
	EXPECT_FALSE(t->moved);
	t = rec_info_target(&rd.info, 43);
	EXPECT_EQ(&rd.info.targets[2], t);
	EXPECT_STREQ("ld", t->comm);
	EXPECT_EQ(450, t->time_ns);
	EXPECT_EQ(REC_NO_EXIT, t->exit_ns);
	/* moved out of the cgroup, not exited */
	EXPECT_EQ(460, rd.info.targets[0].exit_ns);
	EXPECT_TRUE(rd.info.targets[0].moved);
	EXPECT_EQ(0, rd.info.targets[0].ppid);
	EXPECT_EQ(NULL, rd.info.targets[0].cgroup);
	reading_done(&rd);
}

/* Thousands of targets: each region row finds its own. */
TEST(many_targets)
{
	enum { N = 5000 };
	struct rec_region *regs = calloc(N, sizeof(*regs));
	struct rec_snapshot s = { .seq = 1, .end_ns = 100, .nr_regions = N, .nr_samples = 20 };
	struct collected c = { 0 };
	char comm[16];
	struct reading rd = { .f = tmpfile() };

	ASSERT_NE(NULL, rd.f);
	ASSERT_NE(NULL, regs);
	rec_write_header(rd.f, NULL, 0, NULL, 0);
	for (int i = 0; i < N; i++) {
		snprintf(comm, sizeof(comm), "p%d", i);
		rec_write_target(rd.f, &(struct rec_target){ .pid = 1000 + 7 * i, .comm = comm });
		regs[i] = (struct rec_region){ .start = 4096, .end = 8192, .pid = 1000 + 7 * i,
					       .label = "x" };
	}
	s.regions = regs;
	rec_write_snapshot(rd.f, &s);
	rec_write_trailer(rd.f, NULL, 0);
	rewind(rd.f);
	ASSERT_EQ(0, read_with(&rd, 0, collect, &c)) TH_LOG("%s", rd.err);
	ASSERT_EQ(N, rd.info.nr_targets);
	for (int i = 0; i < N; i += 499) {
		const struct rec_target *t = rec_info_target(&rd.info, 1000 + 7 * i);

		ASSERT_NE(NULL, t);
		snprintf(comm, sizeof(comm), "p%d", i);
		EXPECT_STREQ(comm, t->comm);
	}
	EXPECT_EQ(NULL, rec_info_target(&rd.info, 999));
	rec_info_free(&rd.info);
	collected_free(&c);
	free(regs);
	fclose(rd.f);
}

/*
 * The region rows are built without printf (recfile_write.c); here each is
 * compared with the row printf writes, at the ends of every field's range,
 * with and without placement, and with a label longer than the row buffer.
 */
static void printf_row(char *out, size_t cap, const struct rec_snapshot *s,
		       const struct rec_region *r, const char *quoted)
{
	char *p = out, *end = out + cap;

	p += snprintf(p, (size_t)(end - p), "%" PRIu64 ",%" PRIu64 ",%d,%" PRIu64 ",%" PRIu64 ",%u,",
		      s->end_ns, s->seq, (int)r->pid, r->start, r->end, r->nr_accesses);
	if (!r->age_unknown)
		p += snprintf(p, (size_t)(end - p), "%u", r->age);
	p += snprintf(p, (size_t)(end - p), ",%u,", s->nr_samples);
	if (s->placement) {
		p += snprintf(p, (size_t)(end - p), "%u,", r->nr_present);
		for (int n = 0; n < REC_NODES; n++)
			p += snprintf(p, (size_t)(end - p), "%u,", r->node_samples[n]);
		if (r->phys_addr != REC_PHYS_NONE)
			p += snprintf(p, (size_t)(end - p), "%" PRIu64, r->phys_addr);
		p += snprintf(p, (size_t)(end - p), ",");
	} else {
		p += snprintf(p, (size_t)(end - p), ",,,,,,");
	}
	p += snprintf(p, (size_t)(end - p), "%u,%u,", r->flags, r->nr_unobserved);
	if (s->placement)
		p += snprintf(p, (size_t)(end - p), "%u", r->nr_huge);
	snprintf(p, (size_t)(end - p), ",%s\n", quoted);
}

TEST(region_rows_as_printf_wrote_them)
{
	static char long_label[1000];
	struct rec_region regs[4] = {
		{ .start = 0, .end = 1, .pid = 1, .label = "[heap]" },
		{ .start = UINT64_MAX - 1, .end = UINT64_MAX, .nr_accesses = UINT32_MAX,
		  .age = UINT32_MAX, .pid = INT32_MAX, .node_samples = { UINT32_MAX, 0, 7, 10 },
		  .nr_present = UINT32_MAX, .phys_addr = UINT64_MAX - 1, .flags = UINT32_MAX,
		  .nr_unobserved = UINT32_MAX, .nr_huge = UINT32_MAX,
		  .label = "say \"hi\", twice" },
		{ .start = 10, .end = 20, .age_unknown = 1, .pid = 0, .phys_addr = REC_PHYS_NONE,
		  .label = long_label },
		{ .start = 4096, .end = 8192, .age = 9, .pid = -1, .phys_addr = 0 },
	};
	struct rec_snapshot s = { .seq = UINT64_MAX, .end_ns = UINT64_MAX, .nr_samples = UINT32_MAX,
				  .nr_regions = 4, .regions = regs };
	char want[4096], quoted[2100], *got = NULL;
	size_t cap = 0;

	memset(long_label, 'x', sizeof(long_label) - 1);
	long_label[10] = '"';
	for (int placement = 0; placement < 2; placement++) {
		FILE *f = tmpfile();
		int row = 0;

		ASSERT_NE(NULL, f);
		s.placement = placement;
		ASSERT_EQ(0, rec_write_snapshot(f, &s));
		rewind(f);
		while (getline(&got, &cap, f) > 0) {
			const struct rec_region *r;
			size_t q;

			if (got[0] == '#')
				continue;
			ASSERT_LT(row, 4);
			r = &regs[row++];
			q = csv_write(quoted, sizeof(quoted) - 1, r->label ? r->label : "",
				      r->label ? strlen(r->label) : 0);
			ASSERT_LT(q, sizeof(quoted));
			quoted[q] = '\0';
			printf_row(want, sizeof(want), &s, r, quoted);
			ASSERT_STREQ(want, got);
		}
		ASSERT_EQ(4, row);
		fclose(f);
	}
	free(got);
}

TEST_HARNESS_MAIN
