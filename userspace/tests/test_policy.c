// SPDX-License-Identifier: GPL-2.0-only
/*
 * The policy engine on the host: the scheme grammar (good and bad schemes,
 * file errors naming the line), quota prioritisation (histogram cut-off),
 * region identity, and the engine applying schemes to synthetic snapshots
 * with the syscalls replaced by a recorder.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "policy.h"
#include "policy_fixture.h"

static const struct {
	const char *spec;
	const char *err;	/* NULL: valid; else a part of the message */
} parse_cases[] = {
	{ "pageout", NULL },
	{ "cold freq=0-0 age=5s-max", NULL },
	{ "willneed size=4K-1G", NULL },
	{ "stat", NULL },
	{ "collapse", NULL },
	{ "migrate_hot 0 freq=5-100 quota=256M/1s", NULL },
	{ "migrate_cold 1 age=5s-max prio=coldest", NULL },
	{ "pageout wmarks=free,50,40,20", NULL },
	{ "pageout wmarks=node1,50,40,20", NULL },
	{ "pageout type=anon label=[heap] addr=0x1000-0x2000 reapply=10s", NULL },
	{ "  pageout\tfreq=0-10  ", NULL },
	{ "pageout idle=5s", NULL },
	{ "pageout unobserved=act", NULL },
	{ "pageout cgroup=/system.slice/app.service", NULL },
	{ "pageout cgroup=/", NULL },
	{ "pageout cgroup=app", "cgroup=app: expected a cgroup v2 path" },
	{ "pageout cgroup=/a/", "cgroup=/a/: expected" },
	{ "pageout cgroup=/a//b", "cgroup=/a//b: expected" },
	{ "pageout cgroup=/a/../b", "cgroup=/a/../b: expected" },
	{ "pageout unobserved=yes", "unobserved=yes: expected skip or act" },
	{ "pageout idle=0", "idle=0: expected a duration > 0" },
	/* in ns these wrapped: an idle time of -1 ns made everything idle */
	{ "pageout idle=18446744073709551615us", "<= 1000000000s" },
	{ "pageout quota=1M/18446744073709551615us", "up to 1000000000s" },
	{ "pageout reapply=9223372036854776us", "reapply=9223372036854776us" },
	{ "pageout age=18446744073709551615us-max", "age=18446744073709551615us-max" },
	{ "", "empty scheme" },
	{ "page_out", "unknown action 'page_out'" },
	{ "migrate_hot", "migrate_hot needs a target NODE" },
	{ "migrate_cold x", "migrate_cold needs a target NODE number, got 'x'" },
	{ "pageout quota=0/1s", "a quota of 0" },
	{ "pageout quota=64M/0", "quota=64M/0" },	/* no time: an error either way */
	{ "pageout quota=64M", "quota=64M: expected BYTES/DURATION" },
	{ "pageout freq=0-101", "freq=0-101" },
	{ "pageout freq=50-10", "freq=50-10" },
	{ "pageout age=5s", "age=5s" },
	{ "pageout age=10s-5s", "age=10s-5s" },
	{ "pageout size=1X-2M", "size=1X-2M" },
	{ "pageout prio=warm", "prio=warm" },
	{ "pageout wmarks=free,10,20,30", "wmarks=free,10,20,30" },
	{ "pageout wmarks=swap,50,40,20", "wmarks=swap" },
	{ "pageout wmarks=free,50,40", "wmarks=free,50,40" },
	{ "pageout wmarks=free,,50,,40,20,", "wmarks=free,,50,,40,20," },
	{ "pageout wmarks=free,50,40,20,", "wmarks=free,50,40,20," },
	{ "pageout size=1K-2K size=4K-8K", "size= given twice" },
	{ "pageout freq=0-0 idle=5s freq=0-10", "freq= given twice" },
	{ "pageout type=shmem", "type=shmem" },
	{ "pageout label=", "empty label" },
	{ "pageout addr=0x2000-0x1000", "addr=0x2000-0x1000" },
	{ "pageout bogus=1", "unknown key 'bogus'" },
	{ "pageout freq", "'freq': expected key=value" },
};

TEST(parse_table)
{
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		struct pol_scheme s;
		char err[POL_ERRMSG_LEN] = "";
		int ret = pol_scheme_parse(parse_cases[i].spec, &s, err, sizeof(err));

		if (!parse_cases[i].err) {
			EXPECT_EQ(0, ret) TH_LOG("'%s': %s", parse_cases[i].spec, err);
			if (!ret)
				pol_scheme_free(&s);
		} else {
			EXPECT_EQ(-EINVAL, ret) TH_LOG("'%s' accepted", parse_cases[i].spec);
			EXPECT_NE(NULL, strstr(err, parse_cases[i].err))
				TH_LOG("'%s': message '%s'", parse_cases[i].spec, err);
		}
	}
}

TEST(parse_values)
{
	struct pol_scheme s;
	char err[POL_ERRMSG_LEN];

	ASSERT_EQ(0, pol_scheme_parse("migrate_cold 1 size=8K-1G freq=0-5 age=1.5s-max "
				      "quota=64M/500ms wmarks=node1,60,50,10 type=file "
				      "label=libc addr=4096-8192", &s, err, sizeof(err)));
	EXPECT_EQ(POL_MIGRATE_COLD, s.action);
	EXPECT_EQ(1, s.node);
	EXPECT_EQ(8192, s.min_sz);
	EXPECT_EQ(1ULL << 30, s.max_sz);
	EXPECT_EQ(0, s.min_freq);
	EXPECT_EQ(50, s.max_freq);
	EXPECT_EQ(1500000, s.min_age_us);
	EXPECT_EQ(UINT64_MAX, s.max_age_us);
	EXPECT_EQ(64 * MiB, s.quota_sz);
	EXPECT_EQ(500000, s.quota_us);
	EXPECT_EQ(0, s.hottest_first);
	EXPECT_EQ(POL_WMARK_NODE_FREE, s.wmark);
	EXPECT_EQ(1, s.wmark_node);
	EXPECT_EQ(600, s.wmark_high);
	EXPECT_EQ(500, s.wmark_mid);
	EXPECT_EQ(100, s.wmark_low);
	EXPECT_EQ(0, s.active);		/* watermarked: off until checked */
	EXPECT_EQ(POL_FILTER_FILE, s.ftype);
	EXPECT_STREQ("libc", s.flabel);
	EXPECT_EQ(4096, s.faddr_start);
	EXPECT_EQ(8192, s.faddr_end);
	pol_scheme_free(&s);

	/* a leading 0 is decimal, as documented, not octal */
	ASSERT_EQ(0, pol_scheme_parse("stat addr=010-093824992235520", &s, err,
				      sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(10, s.faddr_start);
	EXPECT_EQ(93824992235520ULL, s.faddr_end);
	pol_scheme_free(&s);

	ASSERT_EQ(0, pol_scheme_parse("migrate_hot 0", &s, err, sizeof(err)));
	EXPECT_EQ(1, s.hottest_first);
	EXPECT_EQ(1, s.active);
	pol_scheme_free(&s);
}

/* Every preset parses; those that tune themselves carry a goal. */
TEST(presets_parse)
{
	static const struct {
		const char *name;
		int min_goals;
	} presets[] = {
		{ "reclaim", 0 }, { "tiering", 1 }, { "tmo", 1 },
	};

	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		const char *const *p = pol_preset(presets[i].name);

		ASSERT_NE(NULL, p) TH_LOG("no preset '%s'", presets[i].name);
		for (; *p; p++) {
			struct pol_scheme s;
			char err[POL_ERRMSG_LEN];

			ASSERT_EQ(0, pol_scheme_parse(*p, &s, err, sizeof(err))) TH_LOG("%s", err);
			EXPECT_LE(presets[i].min_goals, s.nr_goals) TH_LOG("%s", *p);
			pol_scheme_free(&s);
		}
	}
	EXPECT_EQ(NULL, pol_preset("fast"));
}

static int parse_file(const char *text, struct pol_scheme *s, int *n, char *err)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret = pol_scheme_file_parse(f, "s.txt", s, n, 4, err, POL_ERRMSG_LEN);

	fclose(f);
	return ret;
}

TEST(file_errors_name_the_line)
{
	struct pol_scheme s[4];
	char err[POL_ERRMSG_LEN];
	int n = 0;

	ASSERT_EQ(0, parse_file("# reclaim\n\npageout freq=0-0  # idle\n  stat\n", s, &n, err));
	EXPECT_EQ(2, n);
	EXPECT_EQ(POL_STAT, s[1].action);
	while (n)
		pol_scheme_free(&s[--n]);

	/* '#' inside a value is the value's; after a blank, a comment */
	ASSERT_EQ(0, parse_file("#x\npageout label=a#b\t# c#d\nstat label=#e #f\n", s, &n,
				err)) TH_LOG("%s", err);
	EXPECT_EQ(2, n);
	EXPECT_STREQ("a#b", s[0].flabel);
	EXPECT_STREQ("#e", s[1].flabel);
	while (n)
		pol_scheme_free(&s[--n]);

	EXPECT_EQ(-EINVAL, parse_file("pageout\n\nmigrate_hot\n", s, &n, err));
	EXPECT_NE(NULL, strstr(err, "s.txt:3: migrate_hot needs")) TH_LOG("%s", err);
	EXPECT_EQ(0, n);	/* nothing half-parsed is kept */

	EXPECT_EQ(-EINVAL, parse_file("stat\nstat\nstat\nstat\nstat\n", s, &n, err));
	EXPECT_NE(NULL, strstr(err, "s.txt:5: more than 4 schemes")) TH_LOG("%s", err);
	EXPECT_EQ(0, n);

	EXPECT_EQ(-EINVAL, parse_file("# nothing\n", s, &n, err));
	EXPECT_NE(NULL, strstr(err, "no scheme")) TH_LOG("%s", err);

	{
		static const char nul[] = "stat\npage\0out\n";
		char longline[POL_LINE_MAX + 8];
		FILE *f = fmemopen((void *)nul, sizeof(nul) - 1, "r");

		ASSERT_NE(NULL, f);
		EXPECT_EQ(-EINVAL, pol_scheme_file_parse(f, "s.txt", s, &n, 4, err,
							 POL_ERRMSG_LEN));
		fclose(f);
		EXPECT_NE(NULL, strstr(err, "s.txt:2: a NUL byte")) TH_LOG("%s", err);
		EXPECT_EQ(0, n);
		/* the longest line is read whole, one more character is not */
		memset(longline, ' ', sizeof(longline));
		memcpy(longline, "stat", 4);
		strcpy(longline + POL_LINE_MAX, "\n");
		ASSERT_EQ(0, parse_file(longline, s, &n, err)) TH_LOG("%s", err);
		while (n)
			pol_scheme_free(&s[--n]);
		strcpy(longline + POL_LINE_MAX, " \n");
		EXPECT_EQ(-EINVAL, parse_file(longline, s, &n, err));
		EXPECT_NE(NULL, strstr(err, "s.txt:1: line longer than 1022")) TH_LOG("%s", err);
	}
}

TEST(nodes_checked)
{
	struct pol_scheme s;
	char err[POL_ERRMSG_LEN];

	ASSERT_EQ(0, pol_scheme_parse("migrate_hot 4095", &s, err, sizeof(err)));
	EXPECT_EQ(-ENODEV, pol_scheme_check_nodes(&s, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "node 4095 does not exist")) TH_LOG("%s", err);
	pol_scheme_free(&s);
}

TEST(bytes)
{
	uint64_t v;

	EXPECT_EQ(0, pol_parse_bytes("4K", &v));
	EXPECT_EQ(4096, v);
	EXPECT_EQ(0, pol_parse_bytes("3G", &v));
	EXPECT_EQ(3ULL << 30, v);
	EXPECT_EQ(-EINVAL, pol_parse_bytes("4KB", &v));
	EXPECT_EQ(-EINVAL, pol_parse_bytes("-4K", &v));
	EXPECT_EQ(-ERANGE, pol_parse_bytes("99999999999T", &v));
}

TEST(score_order)
{
	struct pol_scheme cold, hot;
	char err[POL_ERRMSG_LEN];

	ASSERT_EQ(0, pol_scheme_parse("pageout", &cold, err, sizeof(err)));
	ASSERT_EQ(0, pol_scheme_parse("migrate_hot 0", &hot, err, sizeof(err)));
	/* colder and older scores higher for a cold action */
	EXPECT_GT(pol_score(&cold, 0, 20, 0), pol_score(&cold, 10, 20, 0));
	EXPECT_GT(pol_score(&cold, 0, 20, 60000000), pol_score(&cold, 0, 20, 1000000));
	/* and the other way for a hot one */
	EXPECT_GT(pol_score(&hot, 20, 20, 0), pol_score(&hot, 1, 20, 0));
	EXPECT_LE(pol_score(&cold, 0, 20, UINT64_MAX), POL_MAX_SCORE);
	EXPECT_LE(pol_score(&hot, 99, 20, UINT64_MAX), POL_MAX_SCORE);
}

TEST(cutoff)
{
	uint64_t hist[POL_MAX_SCORE + 1] = { 0 };

	hist[90] = 10 * MiB;
	hist[50] = 20 * MiB;
	hist[10] = 40 * MiB;
	EXPECT_EQ(0, pol_score_cutoff(hist, 70 * MiB));		/* all fit */
	EXPECT_EQ(10, pol_score_cutoff(hist, 69 * MiB));	/* 10 fits in part */
	EXPECT_EQ(10, pol_score_cutoff(hist, 30 * MiB));	/* 90 and 50 fully */
	EXPECT_EQ(50, pol_score_cutoff(hist, 29 * MiB));
	EXPECT_EQ(90, pol_score_cutoff(hist, 5 * MiB));
	EXPECT_EQ(90, pol_score_cutoff(hist, 0));
}

TEST(identity_set)
{
	struct pol_iset s = { 0 };
	uint64_t a, b;

	pol_iset_add(&s, 100, 200, 1);
	pol_iset_add(&s, 300, 400, 2);
	EXPECT_EQ(2, s.n);
	EXPECT_EQ(100, pol_iset_covered(&s, 150, 350));
	ASSERT_EQ(1, pol_iset_first_gap(&s, 50, 500, &a, &b));
	EXPECT_EQ(50, a);
	EXPECT_EQ(100, b);
	ASSERT_EQ(1, pol_iset_first_gap(&s, 100, 500, &a, &b));
	EXPECT_EQ(200, a);
	EXPECT_EQ(300, b);
	EXPECT_EQ(0, pol_iset_first_gap(&s, 120, 180, &a, &b));
	/* removing the middle of a range splits it */
	pol_iset_remove(&s, 120, 130);
	EXPECT_EQ(3, s.n);
	EXPECT_EQ(90, pol_iset_covered(&s, 100, 200));
	/* an overlapping add takes over what it covers, with its own time */
	pol_iset_add(&s, 150, 350, 3);
	EXPECT_EQ(290, pol_iset_covered(&s, 0, 1000));
	pol_iset_expire(&s, 3);
	EXPECT_EQ(200, pol_iset_covered(&s, 0, 1000));
	/* only ranges acted on since a time block */
	ASSERT_EQ(1, pol_iset_first_gap_since(&s, 0, 1000, 4, &a, &b));
	EXPECT_EQ(0, a);
	EXPECT_EQ(1000, b);
	ASSERT_EQ(1, pol_iset_first_gap_since(&s, 0, 1000, 3, &a, &b));
	EXPECT_EQ(0, a);
	EXPECT_EQ(150, b);
	pol_iset_remove(&s, 0, 1000);
	EXPECT_EQ(0, s.n);
	pol_iset_free(&s);
}

/* Many sorted ranges in one merge: as many pol_iset_add() calls would leave it. */
TEST(identity_set_add_sorted)
{
	static const struct pol_range add[] = {
		{ 0, 50, 9 }, { 120, 130, 9 }, { 140, 150, 9 }, { 150, 160, 9 },
		{ 250, 320, 8 }, { 500, 600, 9 },
	};
	struct pol_iset s = { 0 }, t = { 0 };
	int64_t ts;
	uint64_t pe;

	for (int k = 0; k < 2; k++) {
		struct pol_iset *x = k ? &t : &s;

		pol_iset_add(x, 10, 20, 1);
		pol_iset_add(x, 100, 200, 2);
		pol_iset_add(x, 300, 400, 3);
	}
	ASSERT_EQ(0, pol_iset_add_sorted(&s, add, sizeof(add) / sizeof(add[0])));
	for (size_t i = 0; i < sizeof(add) / sizeof(add[0]); i++)
		pol_iset_add(&t, add[i].start, add[i].end, add[i].t_ns);
	/* the same times everywhere */
	for (uint64_t a = 0; a < 700; a = pe) {
		int64_t tt = 0;
		uint64_t pe2;
		int in = pol_iset_piece(&s, a, 700, &pe, &ts);

		EXPECT_EQ(in, pol_iset_piece(&t, a, 700, &pe2, &tt))
			TH_LOG("at %lu", (unsigned long)a);
		if (in) {
			EXPECT_EQ(tt, ts) TH_LOG("at %lu", (unsigned long)a);
		}
		if (pe2 < pe)
			pe = pe2;
	}
	/*
	 * 0-50 (over 10-20), 100-120, 120-130, 130-140, 140-160 (two that
	 * touch, of one time), 160-200, 250-320, 320-400, 500-600
	 */
	EXPECT_EQ(9, s.n);
	EXPECT_EQ(0, s.r[0].start);
	EXPECT_EQ(50, s.r[0].end);
	EXPECT_EQ(140, s.r[4].start);
	EXPECT_EQ(160, s.r[4].end);
	EXPECT_EQ(0, pol_iset_add_sorted(&s, add, 0));
	pol_iset_free(&s);
	pol_iset_free(&t);
}

/* ---- the engine with fake maps and a recording "syscall" ------------- */

struct call {
	uint64_t start, len;
};
static struct call calls[256];
static int nr_calls;
static int fail_with;

/* The @i-th call to fake_act() was for @st..@st + @ln. */
#define EXPECT_CALL(i, st, ln)				\
	do {						\
		EXPECT_EQ(st, calls[i].start);		\
		EXPECT_EQ(ln, calls[i].len);		\
	} while (0)

static uint64_t fake_act(struct pol_engine *e, const struct pol_scheme *s,
			 struct pol_target *t, uint64_t start, uint64_t len, int *err)
{
	(void)e; (void)s; (void)t;
	if (nr_calls < 256)
		calls[nr_calls++] = (struct call){ start, len };
	*err = fail_with;
	return fail_with ? 0 : len;
}

/* heap at 0-64M, a file at 64M-128M, an unmapped hole 128M-192M, anon above */
static int fake_maps(struct maps *m)
{
	static const struct { uint64_t s, e; const char *l; } ents[] = {
		{ 0, 64 * MiB, "[heap]" },
		{ 64 * MiB, 128 * MiB, "/data/file" },
		{ 192 * MiB, 256 * MiB, "[anon]" },
	};

	if (m->e)
		return 0;
	m->e = calloc(3, sizeof(*m->e));
	for (int i = 0; i < 3; i++)
		m->e[i] = (struct maps_entry){ .start = ents[i].s, .end = ents[i].e,
					       .label = strdup(ents[i].l) };
	m->n = 3;
	return 0;
}

/*
 * What an engine test runs: one or two schemes, an engine over them with
 * fake_act() and fake_maps(), and the snapshot of regs[] it is shown.
 */
struct engine_test {
	struct pol_scheme s[2];
	int n;
	struct daptrace_snapshot snap;
	struct pol_engine e;
};

/*
 * @spec0 (and @spec1 unless NULL) parsed, an engine over them with no call
 * recorded and none failing, and a snapshot of regs[0..@nr_regions).
 */
static void engine_start(struct engine_test *t, int nr_regions, const char *spec0,
			 const char *spec1)
{
	t->n = spec1 ? 2 : 1;
	t->s[0] = parsed(spec0);
	if (spec1)
		t->s[1] = parsed(spec1);
	snap_of(&t->snap, nr_regions);
	engine_fake(&t->e, t->s, t->n, fake_act, fake_maps);
	nr_calls = 0;
	fail_with = 0;
}

/* The engine shown the test's snapshot at @now_ns. */
static void apply_at(struct engine_test *t, int64_t now_ns)
{
	pol_engine_apply(&t->e, &t->snap, now_ns);
}

/* Frees what engine_start() made. */
static void engine_test_done(struct engine_test *t)
{
	engine_done(&t->e, t->s, t->n);
}

/* One second, in the engine's nanosecond clock. */
static const int64_t sec = 1000000000LL;

/*
 * How the idle= tests start: "pageout idle=5s" on @nr_regions (1 or 2) of
 * 0-32M and 32-64M, not accessed (age 50), first shown at 1 s.
 */
static void idle_engine_start(struct engine_test *t, int nr_regions)
{
	regs[0] = REGION(0, 32 * MiB, 0, 50);
	regs[1] = REGION(32 * MiB, 64 * MiB, 0, 50);
	engine_start(t, nr_regions, "pageout idle=5s", NULL);
	apply_at(t, 1 * sec);
}

/*
 * Targets join and leave while the engine runs (process trees, cgroups):
 * a joined one's regions are acted on from the next snapshot, a removed
 * one's never again, and one added twice is one target.
 */
TEST(engine_targets_join_and_leave)
{
	struct engine_test t;
	uint64_t before;

	engine_start(&t, 2, "stat freq=0-0", NULL);
	regs[0] = REGION(0, 32 * MiB, 0, 5);
	regs[1] = REGION(32 * MiB, 64 * MiB, 0, 5);
	regs[1].pid = 43;
	apply_at(&t, 1000);
	EXPECT_EQ(32 * MiB, t.s[0].st.sz_tried);
	ASSERT_EQ(1, pol_engine_add_target(&t.e, 43));
	EXPECT_EQ(1, pol_engine_add_target(&t.e, 43));
	EXPECT_EQ(2, t.e.nr_targets);
	apply_at(&t, 2000);
	EXPECT_EQ(32 * MiB + 64 * MiB, t.s[0].st.sz_tried);
	pol_engine_remove_target(&t.e, 42);
	EXPECT_EQ(1, t.e.nr_targets);
	before = t.s[0].st.sz_tried;
	apply_at(&t, 3000);
	EXPECT_EQ(32 * MiB, t.s[0].st.sz_tried - before);
	pol_engine_remove_target(&t.e, 42);	/* not a target: nothing */
	EXPECT_EQ(1, t.e.nr_targets);
	engine_test_done(&t);
}

/*
 * freq= bounds are exact, whatever the window's sample count: 0-0 is "no
 * access at all", even when 1 in 1001 samples rounds down to 0 permille.
 */
TEST(engine_freq_bounds_are_exact)
{
	static const struct {
		const char *spec;
		uint32_t nr_accesses, nr_samples;
		int match;
	} cases[] = {
		{ "stat freq=0-0", 0, 1001, 1 },
		{ "stat freq=0-0", 1, 1001, 0 },
		{ "stat freq=0-0", 1, 4000000000U, 0 },
		{ "stat freq=0-0", 0, 0, 1 },		/* no samples: 0 */
		{ "stat freq=1-100", 0, 0, 0 },
		{ "stat freq=10-100", 99, 1000, 0 },	/* 9.9% */
		{ "stat freq=10-100", 100, 1000, 1 },
		{ "stat freq=0-10", 101, 1000, 0 },	/* 10.1% */
		{ "stat freq=0-10", 100, 1000, 1 },
		{ "stat freq=100-100", 4000000000U, 4000000000U, 1 },
		{ "stat freq=100-100", 3999999999U, 4000000000U, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct engine_test t;

		regs[0] = REGION(32 * MiB, 64 * MiB, cases[i].nr_accesses, 5);
		engine_start(&t, 1, cases[i].spec, NULL);
		t.snap.nr_samples = cases[i].nr_samples;
		apply_at(&t, 1000);
		EXPECT_EQ(cases[i].match, t.s[0].st.nr_tried > 0)
			TH_LOG("'%s' on %u of %u samples", cases[i].spec, cases[i].nr_accesses,
			       cases[i].nr_samples);
		engine_test_done(&t);
	}
}

TEST(engine_clips_to_mappings_and_filters)
{
	struct engine_test t;

	/* one idle region over the heap, the file, the hole and the anon map */
	regs[0] = REGION(32 * MiB, 224 * MiB, 0, 5);
	engine_start(&t, 1, "pageout freq=0-0", "cold freq=0-0 type=file");
	apply_at(&t, 1000);
	/* never the hole: 32-64 heap, 64-128 file, 192-224 anon; then the file */
	ASSERT_EQ(4, nr_calls);
	EXPECT_CALL(0, 32 * MiB, 32 * MiB);
	EXPECT_EQ(64 * MiB, calls[1].start);
	EXPECT_EQ(192 * MiB, calls[2].start);
	EXPECT_CALL(3, 64 * MiB, 64 * MiB);
	EXPECT_EQ(128 * MiB, t.s[0].st.sz_applied);
	EXPECT_EQ(64 * MiB, t.s[1].st.sz_applied);
	engine_test_done(&t);
}

/* What the module could not observe is not cold: no action unless asked. */
TEST(engine_leaves_unobserved_regions_alone)
{
	struct engine_test t;

	/* the heap: every check unobserved; the anon map: observed, idle */
	regs[0] = REGION(32 * MiB, 64 * MiB, 0, 5);
	regs[0].nr_unobserved = 20;
	regs[1] = REGION(192 * MiB, 224 * MiB, 0, 5);
	engine_start(&t, 2, "pageout freq=0-0", "cold freq=0-0 unobserved=act");
	apply_at(&t, 1000);
	EXPECT_EQ(32 * MiB, t.s[0].st.sz_applied);
	EXPECT_EQ(1, t.s[0].st.nr_unobserved_skip);
	EXPECT_EQ(32 * MiB, t.s[0].st.sz_unobserved_skip);
	EXPECT_EQ(64 * MiB, t.s[1].st.sz_applied);
	EXPECT_EQ(0, t.s[1].st.nr_unobserved_skip);
	/* the schemes in order: pageout the anon map; cold both */
	ASSERT_EQ(3, nr_calls);
	EXPECT_EQ(192 * MiB, calls[0].start);
	EXPECT_EQ(32 * MiB, calls[1].start);
	EXPECT_EQ(192 * MiB, calls[2].start);
	engine_test_done(&t);
}

/*
 * With unobserved=act, a region's frequency is of its observed checks: 10
 * accesses in the 10 observed of 20 is accessed every time, not half the
 * time, so freq=0-60 leaves it alone; 1 of 10 observed is 10 %, in range.
 */
TEST(engine_frequency_of_the_observed_checks)
{
	struct engine_test t;

	regs[0] = REGION(32 * MiB, 64 * MiB, 10, 5);
	regs[0].nr_unobserved = 10;
	regs[1] = REGION(192 * MiB, 224 * MiB, 1, 5);
	regs[1].nr_unobserved = 10;
	engine_start(&t, 2, "cold freq=0-60 unobserved=act", NULL);
	apply_at(&t, 1000);
	ASSERT_EQ(1, nr_calls);
	EXPECT_EQ(192 * MiB, calls[0].start);
	EXPECT_EQ(32 * MiB, t.s[0].st.sz_applied);
	engine_test_done(&t);
}

TEST(engine_identity)
{
	struct engine_test t;

	regs[0] = REGION(0, 32 * MiB, 0, 5);
	regs[1] = REGION(32 * MiB, 64 * MiB, 3, 5);
	engine_start(&t, 2, "pageout freq=0-0", NULL);
	apply_at(&t, 1000);
	ASSERT_EQ(1, nr_calls);
	/* still idle: not advised again, counted as an identity skip */
	for (int i = 0; i < 5; i++)
		apply_at(&t, 2000 + i);
	EXPECT_EQ(1, nr_calls);
	EXPECT_EQ(5 * 32 * MiB, t.s[0].st.sz_identity_skip);
	/* the regions change shape: half of the acted range is accessed */
	regs[0] = REGION(0, 16 * MiB, 2, 0);
	regs[1] = REGION(16 * MiB, 64 * MiB, 0, 0);
	apply_at(&t, 3000);
	/* only the part that was accessed and is idle again is new */
	ASSERT_EQ(2, nr_calls);
	EXPECT_CALL(1, 32 * MiB, 32 * MiB);
	regs[0].nr_accesses = 0;
	apply_at(&t, 4000);
	ASSERT_EQ(3, nr_calls);
	EXPECT_CALL(2, 0, 16 * MiB);
	/*
	 * Still idle 10 s after it was acted on: tried again (the kernel may
	 * have skipped part of it).  16-32M was acted on at 1000, 32-64M at
	 * 3000, 0-16M at 4000.
	 */
	apply_at(&t, 1000 + 10000000000LL);
	EXPECT_EQ(3, nr_calls);
	apply_at(&t, 1000 + 10000000000LL + 1);
	ASSERT_EQ(4, nr_calls);
	EXPECT_CALL(3, 16 * MiB, 16 * MiB);
	apply_at(&t, 3000 + 10000000000LL + 1);
	ASSERT_EQ(5, nr_calls);
	EXPECT_EQ(32 * MiB, calls[4].start);
	apply_at(&t, 4000 + 10000000000LL + 1);
	ASSERT_EQ(6, nr_calls);
	EXPECT_CALL(5, 0, 16 * MiB);
	engine_test_done(&t);
}

TEST(engine_idle_by_address)
{
	struct engine_test t;

	/* 0-32M idle all along; 32-48M read at t=2 s, inside a region of 32-64M */
	idle_engine_start(&t, 2);
	EXPECT_EQ(0, nr_calls);		/* not watched for 5 s yet */
	regs[1].end = 48 * MiB;
	regs[1].nr_accesses = 1;
	regs[2] = REGION(48 * MiB, 64 * MiB, 0, 50);
	snap_of(&t.snap, 3);
	apply_at(&t, 2 * sec);
	regs[1].nr_accesses = 0;
	apply_at(&t, 6 * sec);
	/* everything but the range read 4 s ago */
	ASSERT_EQ(2, nr_calls);
	EXPECT_CALL(0, 0, 32 * MiB);
	EXPECT_CALL(1, 48 * MiB, 16 * MiB);
	apply_at(&t, 7 * sec + 1);
	ASSERT_EQ(3, nr_calls);
	EXPECT_CALL(2, 32 * MiB, 16 * MiB);
	engine_test_done(&t);
}

TEST(engine_gap_keeps_what_age_covers)
{
	struct engine_test t;

	idle_engine_start(&t, 2);
	/*
	 * Five windows missed: the first region stayed idle through them
	 * (age 70 > 5), the second changed level 0.3 s ago (age 3).
	 */
	regs[0].age = 70;
	regs[1].age = 3;
	t.snap.missed_before = 5;
	apply_at(&t, 3 * sec);
	t.snap.missed_before = 0;
	regs[0].age = 105;
	regs[1].age = 38;
	apply_at(&t, 6 * sec + sec / 2);
	/* idle since 1 s: the first region only, its clock kept */
	ASSERT_EQ(1, nr_calls);
	EXPECT_CALL(0, 0, 32 * MiB);
	/* the second: 5 s after 2.7 s */
	apply_at(&t, 7 * sec + sec / 2);
	EXPECT_EQ(1, nr_calls);
	apply_at(&t, 7 * sec + 8 * sec / 10);
	ASSERT_EQ(2, nr_calls);
	EXPECT_EQ(32 * MiB, calls[1].start);
	/* another gap the first region stayed idle through: not advised again */
	regs[0].age = 200;
	regs[1].age = 2;
	t.snap.missed_before = 3;
	apply_at(&t, 8 * sec);
	EXPECT_EQ(2, nr_calls);
	/* the second changed in it: identity gone, idle clock from 7.8 s */
	t.snap.missed_before = 0;
	apply_at(&t, 12 * sec);
	EXPECT_EQ(2, nr_calls);
	apply_at(&t, 13 * sec);
	ASSERT_EQ(3, nr_calls);
	EXPECT_EQ(32 * MiB, calls[2].start);
	EXPECT_EQ(8, t.e.nr_missed);
	engine_test_done(&t);
}

/*
 * A gap with extreme kernel-reported values: age x aggr_us in ns wrapped to
 * just below 2^64, which put the region's last possible access 22 us in the
 * future; saturated, it is long ago and the region idle from the start.
 */
TEST(engine_gap_age_saturates)
{
	struct engine_test t;

	idle_engine_start(&t, 1);
	/* 4306063 x 4283900183 us x 1000: 2^64 - 22616 ns */
	regs[0].age = 4306063;
	t.snap.missed_before = 5000000;
	t.snap.aggr_us = 4283900183u;
	apply_at(&t, 3 * sec);
	EXPECT_EQ(0, nr_calls);
	snap_of(&t.snap, 1);
	regs[0].age = 4306064;
	apply_at(&t, 6 * sec + 1);
	/* idle since the engine started watching, 5 s before */
	ASSERT_EQ(1, nr_calls);
	EXPECT_CALL(0, 0, 32 * MiB);
	engine_test_done(&t);
}

TEST(engine_quota_coldest_first)
{
	struct engine_test t;

	/* warm (5/20), cold (0/20) and old-cold regions: oldest coldest first */
	regs[0] = REGION(0, 16 * MiB, 5, 1);
	regs[1] = REGION(16 * MiB, 32 * MiB, 0, 1);
	regs[2] = REGION(32 * MiB, 48 * MiB, 0, 600);
	engine_start(&t, 3, "pageout freq=0-50 quota=24M/1s", NULL);
	apply_at(&t, 1000000000LL);
	ASSERT_EQ(2, nr_calls);
	EXPECT_CALL(0, 32 * MiB, 16 * MiB);	/* old and cold: all of it */
	EXPECT_CALL(1, 16 * MiB, 8 * MiB);	/* cold: the part that fits */
	EXPECT_EQ(24 * MiB, t.s[0].st.sz_applied);
	EXPECT_EQ(24 * MiB, t.s[0].st.sz_quota_skip);
	EXPECT_EQ(1, t.s[0].st.qt_exceeds);
	/* the same window: quota spent, nothing more */
	apply_at(&t, 1500000000LL);
	EXPECT_EQ(2, nr_calls);
	/* next window: the rest fits, in address order; no range twice */
	apply_at(&t, 2000000000LL);
	ASSERT_EQ(4, nr_calls);
	EXPECT_CALL(2, 0, 16 * MiB);
	EXPECT_CALL(3, 24 * MiB, 8 * MiB);
	engine_test_done(&t);
}

/*
 * Under a quota, cold candidates rank by how long each range was idle, by
 * address, not by the age of the region they fall in: a merge with a range
 * touched lately makes a young region of memory that was never touched.
 */
TEST(engine_quota_ranks_by_idle_time)
{
	struct engine_test t;

	engine_start(&t, 2, "pageout freq=0-0 size=20M-max quota=8M/1s", NULL);
	/* both halves touched at 1 s, the first again at 6 s (too small to match) */
	regs[0] = REGION(0, 16 * MiB, 3, 1);
	regs[1] = REGION(16 * MiB, 32 * MiB, 3, 1);
	apply_at(&t, 1000000000LL);
	regs[1].nr_accesses = 0;
	apply_at(&t, 6000000000LL);
	EXPECT_EQ(0, nr_calls);
	/* merged into one young region: the half idle since 1 s goes first */
	regs[0] = REGION(0, 32 * MiB, 0, 1);
	snap_of(&t.snap, 1);
	apply_at(&t, 10000000000LL);
	ASSERT_EQ(1, nr_calls);
	EXPECT_CALL(0, 16 * MiB, 8 * MiB);
	engine_test_done(&t);
}

/* Equal candidates under a quota take turns, window after window. */
TEST(engine_quota_share_takes_turns)
{
	struct engine_test t;
	const uint64_t want[] = { 0, 16 * MiB, 0 };

	engine_start(&t, 2, "stat freq=0-0 quota=16M/1s", NULL);
	regs[0] = REGION(0, 16 * MiB, 0, 5);
	regs[1] = REGION(16 * MiB, 32 * MiB, 0, 5);
	for (int w = 0; w < 3; w++) {
		apply_at(&t, (w + 1) * 1000000000LL);
		ASSERT_EQ(w + 1, nr_calls);
		EXPECT_EQ(want[w], calls[w].start) TH_LOG("window %d", w);
		EXPECT_EQ(16 * MiB, calls[w].len);
	}
	engine_test_done(&t);
}

TEST(engine_work_budget)
{
	struct engine_test t;

	regs[0] = REGION(0, 32 * MiB, 0, 5);
	engine_start(&t, 1, "pageout freq=0-0", NULL);
	t.e.act_chunk = 8 * MiB;
	t.e.work_budget_ns = 1;		/* spent after the first chunk */
	/* apply_start_ns is set by the apply: the first chunk always goes */
	apply_at(&t, 1000);
	ASSERT_EQ(1, nr_calls);
	EXPECT_EQ(8 * MiB, calls[0].len);
	EXPECT_EQ(24 * MiB, t.s[0].st.sz_quota_skip);
	/* the next snapshot goes on where it stopped */
	apply_at(&t, 2000);
	ASSERT_EQ(2, nr_calls);
	EXPECT_EQ(8 * MiB, calls[1].start);
	engine_test_done(&t);
}

TEST(engine_watermarks)
{
	/* free memory is always in 0-100 %, never above 0 % of nothing */
	struct engine_test t;

	ASSERT_LT(0, pol_free_permille(POL_WMARK_FREE, 0));
	regs[0] = REGION(0, 16 * MiB, 0, 5);
	engine_start(&t, 1, "pageout freq=0-0 wmarks=free,100,100,0",
		     "cold freq=0-0 wmarks=free,0,0,0");
	apply_at(&t, 1000);
	EXPECT_EQ(1, nr_calls);			/* only the first scheme ran */
	EXPECT_EQ(16 * MiB, t.s[0].st.sz_applied);
	EXPECT_EQ(0, t.s[1].st.sz_tried);
	EXPECT_EQ(1, t.s[1].st.wmark_inactive);
	EXPECT_EQ(-ENOENT, pol_free_permille(POL_WMARK_NODE_FREE, 4095));
	engine_test_done(&t);
}

TEST(engine_counts_errors_and_goes_on)
{
	struct engine_test t;
	const int errs[] = { -EPERM, -ENOMEM, -EAGAIN, -EINVAL };

	regs[0] = REGION(0, 16 * MiB, 0, 1);
	engine_start(&t, 1, "pageout freq=0-0", NULL);
	for (int i = 0; i < 4; i++) {
		fail_with = errs[i];
		apply_at(&t, 1000 + i);
	}
	/* failed ranges are not remembered: each window tries again */
	EXPECT_EQ(4, nr_calls);
	EXPECT_EQ(1, t.s[0].st.errs[POL_EPERM]);
	EXPECT_EQ(1, t.s[0].st.errs[POL_ENOMEM]);
	EXPECT_EQ(1, t.s[0].st.errs[POL_EAGAIN]);
	EXPECT_EQ(1, t.s[0].st.errs[POL_EOTHER]);
	/* the target exited: counted once, then nothing more is tried */
	fail_with = -ESRCH;
	apply_at(&t, 2000);
	apply_at(&t, 3000);
	EXPECT_EQ(5, nr_calls);
	EXPECT_EQ(1, t.s[0].st.errs[POL_ESRCH]);
	engine_test_done(&t);
}

TEST(stats_output)
{
	/* what the CSV (json 0) and the JSON (json 1) statistics must hold */
	static const struct {
		int json;
		const char *want;
	} wants[] = {
		{ 0, "scheme,action,node,nr_tried,sz_tried,nr_applied,sz_applied" },
		{ 0, "\"0:pageout\",pageout,-1,0,0,0,4096," },
		{ 0, ",3,0,0,0,0," },
		{ 1, "\"sz_applied\":4096" },
		{ 1, "\"eperm\":3" },
	};
	struct engine_test t;

	engine_start(&t, 0, "pageout", NULL);
	t.s[0].st.sz_applied = 4096;
	t.s[0].st.errs[POL_EPERM] = 3;
	for (int json = 0; json <= 1; json++) {
		char *buf = stats_text(&t.e, json);

		ASSERT_NE(NULL, buf);
		for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
			if (wants[i].json != json)
				continue;
			EXPECT_NE(NULL, strstr(buf, wants[i].want)) TH_LOG("%s", buf);
		}
		free(buf);
	}
	engine_test_done(&t);
}

TEST_HARNESS_MAIN
