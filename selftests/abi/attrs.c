// SPDX-License-Identifier: GPL-2.0
/*
 * The configuration attributes: defaults after load, valid writes read back,
 * and every class of invalid write is rejected with its documented errno
 * and leaves the value unchanged.  Numbers are parsed with kstrtoul(): an
 * optional '+', no leading blank, one optional trailing newline (so `echo`
 * works).  Each write is validated against the whole configuration.
 */
#include "kselftest_harness.h"
#include "daptrace_sysfs.h"

/* One write of a sequence: expected error (0: accepted) and why. */
struct step {
	const char *file;
	const char *val;
	int err;
	const char *why;
};

/* Read @file into @buf, failing the test if it is unreadable. */
#define READ_OR_FAIL(file, buf) do { \
	ASSERT_LE(0, dt_read(file, buf, sizeof(buf))) \
		TH_LOG("read %s: %s", file, strerror(errno)); \
} while (0)

/*
 * Run @steps: accepted writes must read back as the number written,
 * rejected ones must fail with the exact errno and change nothing.
 */
static void run_steps(struct __test_metadata *_metadata, const struct step *s)
{
	char before[64], after[64];
	long long want;

	for (; s->file; s++) {
		READ_OR_FAIL(s->file, before);
		ASSERT_EQ(-s->err, dt_write(s->file, s->val)) {
			TH_LOG("write %s = \"%s\": want %s (%s)", s->file, s->val,
			       s->err ? strerror(s->err) : "success", s->why);
		}
		READ_OR_FAIL(s->file, after);
		if (s->err) {
			EXPECT_STREQ(before, after) {
				TH_LOG("rejected write %s = \"%s\" changed the "
				       "value (%s)", s->file, s->val, s->why);
			}
		} else {
			want = strtoll(s->val, NULL, 10);
			EXPECT_EQ(want, strtoll(after, NULL, 10)) {
				TH_LOG("%s reads \"%s\" after writing \"%s\" (%s)",
				       s->file, after, s->val, s->why);
			}
		}
	}
}

FIXTURE(attrs) {
	int unused;
};

FIXTURE_SETUP(attrs)
{
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset()) TH_LOG("cannot reset daptrace to defaults");
}

FIXTURE_TEARDOWN(attrs)
{
	dt_reset();
}

/*
 * A freshly loaded module has the documented defaults.  With DAPTRACE_KO the
 * module is reloaded first so earlier tests cannot have changed anything.
 */
TEST_F(attrs, defaults_after_load)
{
	const char *ko = dt_module_path();
	static const struct { const char *file, *val; } defs[] = {
		{ "sample_us", "5000" }, { "aggr_us", "100000" },
		{ "update_us", "1000000" }, { "min_nr_regions", "10" },
		{ "max_nr_regions", "1000" }, { "tlb_flush", "mm" },
		{ "phys_addr", "off" }, { "tracepoint", "off" },
		{ "probe_pages", "64" }, { "probe_max_cpu_bp", "500" },
		{ "recall_goal_bp", "0" }, { "recall_max_cpu_bp", "500" },
		{ "intervals_goal_access_bp", "400" },
		{ "intervals_goal_aggrs", "0" },
		{ "intervals_goal_min_sample_us", "5000" },
		{ "intervals_goal_max_sample_us", "10000000" },
		{ "state", "off" }, { "target", "" }, { "target_status", "" },
		{ "nr_targets", "0" },
		{ "nr_regions", "0" }, { "nr_samples", "0" },
		{ "nr_samples_late", "0" }, { "nr_samples_busy", "0" },
		{ "nr_snapshots", "0" },
		{ "nr_snapshots_missed", "0" }, { "worker_cpu_us", "0" },
		{ "probe_us", "0" }, { "nr_probe_pages", "0" },
		{ "upper_scan", "on" },
		{ "upper_entries", "0" }, { "upper_uncovered", "0" },
		{ "upper_cuts", "0" },
		{ "snapshot_seq", "0" }, { "snapshot", "none" },
	};
	char buf[256], path[256];
	size_t i;
	int fd;

	if (!ko)
		SKIP(return, "DAPTRACE_KO unset: cannot reload for fresh defaults");
	ASSERT_EQ(0, dt_module_unload()) TH_LOG("rmmod daptrace");
	ASSERT_FALSE(dt_loaded()) TH_LOG("%s still there after rmmod", DT_SYSFS);
	ASSERT_EQ(0, dt_module_load(ko)) TH_LOG("insmod %s", ko);

	for (i = 0; i < ARRAY_SIZE(defs); i++) {
		READ_OR_FAIL(defs[i].file, buf);
		EXPECT_STREQ(defs[i].val, buf) {
			TH_LOG("%s after load: \"%s\", documented default \"%s\"",
			       defs[i].file, buf, defs[i].val);
		}
	}
	/* The snapshot ring is empty until the first "on". */
	fd = open(dt_path("snapshots", path, sizeof(path)), O_RDONLY);
	ASSERT_LE(0, fd) TH_LOG("open snapshots: %s", strerror(errno));
	EXPECT_EQ(0, read(fd, buf, sizeof(buf))) {
		TH_LOG("snapshots should be empty before the first \"on\"");
	}
	close(fd);
}

FIXTURE(num) {
	int unused;
};

FIXTURE_VARIANT(num) {
	const char *file;
	unsigned long def;
	const char *valid;		/* a valid value other than the default */
	const struct step *range;	/* caps and cross-field rules */
	bool zero_ok;			/* 0 is a valid value (it means off) */
};

static const struct step sample_range[] = {
	{ "sample_us", "99", EINVAL, "below the 100 us cap" },
	{ "sample_us", "100", 0, "the 100 us cap itself" },
	{ "sample_us", "100001", EINVAL, "above aggr_us (100000)" },
	{ "sample_us", "100000", 0, "equal to aggr_us" },
	{ "sample_us", "10000001", EINVAL, "above the 10 s cap" },
	{ "update_us", "3600000000", 0, "open the range above" },
	{ "aggr_us", "100000000", 0, "open the range above" },
	{ "sample_us", "10000000", 0, "the 10 s cap itself" },
	{ "sample_us", "999", EINVAL, "aggr_us/sample_us > 100000" },
	{ "sample_us", "1000", 0, "aggr_us/sample_us == 100000" },
	{ NULL }
};

static const struct step aggr_range[] = {
	{ "aggr_us", "4999", EINVAL, "below sample_us (5000)" },
	{ "aggr_us", "5000", 0, "equal to sample_us" },
	{ "aggr_us", "1000001", EINVAL, "above update_us (1000000)" },
	{ "aggr_us", "1000000", 0, "equal to update_us" },
	{ "update_us", "3600000000", 0, "open the range above" },
	{ "aggr_us", "100000001", EINVAL, "above the 100 s cap" },
	{ "aggr_us", "100000000", 0, "the 100 s cap itself" },
	{ "aggr_us", "100000", 0, "back to the default" },
	{ "sample_us", "100", 0, "shortest sampling interval" },
	{ "aggr_us", "10000100", EINVAL, "aggr_us/sample_us > 100000" },
	{ "aggr_us", "10000000", 0, "aggr_us/sample_us == 100000" },
	{ NULL }
};

static const struct step update_range[] = {
	{ "update_us", "99999", EINVAL, "below aggr_us (100000)" },
	{ "update_us", "100000", 0, "equal to aggr_us" },
	{ "update_us", "3600000001", EINVAL, "above the 1 h cap" },
	{ "update_us", "3600000000", 0, "the 1 h cap itself" },
	{ NULL }
};

static const struct step min_range[] = {
	{ "min_nr_regions", "2", EINVAL, "below 3" },
	{ "min_nr_regions", "3", 0, "the lower cap itself" },
	{ "min_nr_regions", "1001", EINVAL, "above max_nr_regions (1000)" },
	{ "min_nr_regions", "1000", 0, "equal to max_nr_regions" },
	{ "max_nr_regions", "20000", 0, "open the range above" },
	{ "min_nr_regions", "20000", 0, "equal to the max cap" },
	{ "min_nr_regions", "20001", EINVAL, "above max_nr_regions" },
	{ NULL }
};

static const struct step max_range[] = {
	{ "max_nr_regions", "9", EINVAL, "below min_nr_regions (10)" },
	{ "max_nr_regions", "10", 0, "equal to min_nr_regions" },
	{ "max_nr_regions", "20001", EINVAL, "above the 20000 cap" },
	{ "max_nr_regions", "20000", 0, "the cap itself" },
	{ "min_nr_regions", "3", 0, "lowest minimum" },
	{ "max_nr_regions", "3", 0, "max == min == 3" },
	{ "max_nr_regions", "2", EINVAL, "below min_nr_regions (3)" },
	{ NULL }
};

static const struct step goal_bp_range[] = {
	{ "intervals_goal_access_bp", "10001", EINVAL, "above 10000 bp" },
	{ "intervals_goal_access_bp", "10000", 0, "all of them" },
	{ "intervals_goal_access_bp", "1", 0, "the least" },
	{ NULL }
};

static const struct step goal_aggrs_range[] = {
	{ "intervals_goal_aggrs", "1001", EINVAL, "above the 1000 cap" },
	{ "intervals_goal_aggrs", "1000", 0, "the cap itself" },
	{ "sample_us", "4999", EINVAL, "on: below intervals_goal_min_sample_us" },
	{ "intervals_goal_aggrs", "0", 0, "off" },
	{ "sample_us", "4999", 0, "off: the bounds do not apply" },
	{ "intervals_goal_aggrs", "3", EINVAL, "on with sample_us out of bounds" },
	{ NULL }
};

static const struct step goal_min_range[] = {
	{ "intervals_goal_min_sample_us", "99", EINVAL, "below the 100 us cap" },
	{ "intervals_goal_min_sample_us", "100", 0, "the cap itself" },
	{ "intervals_goal_min_sample_us", "10000001", EINVAL,
	  "above intervals_goal_max_sample_us" },
	{ "intervals_goal_aggrs", "3", 0, "on" },
	{ "intervals_goal_min_sample_us", "5001", EINVAL, "on: above sample_us" },
	{ "intervals_goal_min_sample_us", "5000", 0, "on: sample_us itself" },
	{ NULL }
};

static const struct step goal_max_range[] = {
	{ "intervals_goal_max_sample_us", "10000001", EINVAL, "above the 10 s cap" },
	{ "intervals_goal_max_sample_us", "4999", EINVAL,
	  "below intervals_goal_min_sample_us" },
	{ "intervals_goal_aggrs", "3", 0, "on" },
	{ "intervals_goal_min_sample_us", "100", 0, "lower the minimum" },
	{ "intervals_goal_max_sample_us", "4999", EINVAL, "on: below sample_us" },
	{ "intervals_goal_max_sample_us", "5000", 0, "on: sample_us itself" },
	{ NULL }
};

static const struct step probe_range[] = {
	{ "probe_pages", "257", EINVAL, "above the 256 cap" },
	{ "probe_pages", "256", 0, "the cap itself" },
	{ "probe_pages", "0", 0, "off" },
	{ NULL }
};

static const struct step probe_cpu_range[] = {
	{ "probe_max_cpu_bp", "10001", EINVAL, "above 10000 bp" },
	{ "probe_max_cpu_bp", "10000", 0, "no bound" },
	{ "probe_max_cpu_bp", "1", 0, "the least" },
	{ NULL }
};

static const struct step recall_goal_range[] = {
	{ "recall_goal_bp", "10001", EINVAL, "above 10000 bp" },
	{ "recall_goal_bp", "10000", 0, "all of it" },
	{ "recall_goal_bp", "0", 0, "off" },
	{ NULL }
};

static const struct step recall_cpu_range[] = {
	{ "recall_max_cpu_bp", "10001", EINVAL, "above one CPU" },
	{ "recall_max_cpu_bp", "10000", 0, "one CPU" },
	{ "recall_max_cpu_bp", "1", 0, "the least" },
	{ NULL }
};

FIXTURE_VARIANT_ADD(num, recall_goal_bp) {
	.file = "recall_goal_bp", .def = 0, .valid = "9000", .range = recall_goal_range,
	.zero_ok = true,
};

FIXTURE_VARIANT_ADD(num, recall_max_cpu_bp) {
	.file = "recall_max_cpu_bp", .def = 500, .valid = "1000", .range = recall_cpu_range,
};

FIXTURE_VARIANT_ADD(num, probe_pages) {
	.file = "probe_pages", .def = 64, .valid = "128", .range = probe_range,
	.zero_ok = true,
};

FIXTURE_VARIANT_ADD(num, probe_max_cpu_bp) {
	.file = "probe_max_cpu_bp", .def = 500, .valid = "1000", .range = probe_cpu_range,
};

FIXTURE_VARIANT_ADD(num, intervals_goal_access_bp) {
	.file = "intervals_goal_access_bp", .def = 400, .valid = "1000",
	.range = goal_bp_range,
};

FIXTURE_VARIANT_ADD(num, intervals_goal_aggrs) {
	.file = "intervals_goal_aggrs", .def = 0, .valid = "3",
	.range = goal_aggrs_range, .zero_ok = true,
};

FIXTURE_VARIANT_ADD(num, intervals_goal_min_sample_us) {
	.file = "intervals_goal_min_sample_us", .def = 5000, .valid = "1000",
	.range = goal_min_range,
};

FIXTURE_VARIANT_ADD(num, intervals_goal_max_sample_us) {
	.file = "intervals_goal_max_sample_us", .def = 10000000, .valid = "20000",
	.range = goal_max_range,
};

FIXTURE_VARIANT_ADD(num, sample_us) {
	.file = "sample_us", .def = 5000, .valid = "2000", .range = sample_range,
};

FIXTURE_VARIANT_ADD(num, aggr_us) {
	.file = "aggr_us", .def = 100000, .valid = "200000", .range = aggr_range,
};

FIXTURE_VARIANT_ADD(num, update_us) {
	.file = "update_us", .def = 1000000, .valid = "2000000",
	.range = update_range,
};

FIXTURE_VARIANT_ADD(num, min_nr_regions) {
	.file = "min_nr_regions", .def = 10, .valid = "20", .range = min_range,
};

FIXTURE_VARIANT_ADD(num, max_nr_regions) {
	.file = "max_nr_regions", .def = 1000, .valid = "500", .range = max_range,
};

FIXTURE_SETUP(num)
{
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset()) TH_LOG("cannot reset daptrace to defaults");
	ASSERT_EQ((long long)variant->def, dt_read_ll(variant->file))
		TH_LOG("%s not at its default after reset", variant->file);
}

FIXTURE_TEARDOWN(num)
{
	dt_reset();
}

TEST_F(num, valid_write_reads_back)
{
	const struct step s[] = {
		{ variant->file, variant->valid, 0, "a valid value" },
		{ NULL }
	};

	run_steps(_metadata, s);
}

/*
 * kstrtoul(): one trailing newline (echo), a leading '+' and leading zeros
 * are fine; the number is always decimal.
 */
TEST_F(num, accepted_spellings)
{
	char nl[32], plus[32], zeros[32];
	const struct step s[] = {
		{ variant->file, nl, 0, "trailing newline, as echo writes" },
		{ variant->file, plus, 0, "leading '+'" },
		{ variant->file, zeros, 0, "leading zeros, still decimal" },
		{ NULL }
	};

	snprintf(nl, sizeof(nl), "%s\n", variant->valid);
	snprintf(plus, sizeof(plus), "+%lu", variant->def);
	snprintf(zeros, sizeof(zeros), "000%s", variant->valid);
	run_steps(_metadata, s);
}

TEST_F(num, malformed_writes_rejected_unchanged)
{
	char junk[32], lead[32], trail[32], twonl[32], neg[32], hex[32];
	const struct step s[] = {
		{ variant->file, "abc", EINVAL, "garbage" },
		{ variant->file, junk, EINVAL, "trailing junk" },
		{ variant->file, lead, EINVAL, "leading blank" },
		{ variant->file, trail, EINVAL, "trailing blank" },
		{ variant->file, twonl, EINVAL, "two trailing newlines" },
		{ variant->file, "\n", EINVAL, "an empty line" },
		{ variant->file, neg, EINVAL, "negative" },
		{ variant->file, "-0", EINVAL, "minus sign" },
		{ variant->file, hex, EINVAL, "hexadecimal (base 10 only)" },
		{ variant->file, "0", variant->zero_ok ? 0 : EINVAL, "zero" },
		{ variant->file, "18446744073709551616", ERANGE,
		  "2^64 overflows unsigned long" },
		{ variant->file, "99999999999999999999999999", ERANGE,
		  "far beyond 64 bits" },
		{ variant->file, "18446744073709551615", EINVAL,
		  "ULONG_MAX parses but is above every cap" },
		{ NULL }
	};

	snprintf(junk, sizeof(junk), "%sx", variant->valid);
	snprintf(lead, sizeof(lead), " %s", variant->valid);
	snprintf(trail, sizeof(trail), "%s ", variant->valid);
	snprintf(twonl, sizeof(twonl), "%s\n\n", variant->valid);
	snprintf(neg, sizeof(neg), "-%s", variant->valid);
	snprintf(hex, sizeof(hex), "0x%lx", strtoul(variant->valid, NULL, 10));
	run_steps(_metadata, s);
}

/* A zero-length write is a no-op that returns 0. */
TEST_F(num, empty_write_is_noop)
{
	long long before = dt_read_ll(variant->file);

	EXPECT_EQ(0, dt_write_len(variant->file, "", 0))
		TH_LOG("write of 0 bytes should return 0");
	EXPECT_EQ(before, dt_read_ll(variant->file))
		TH_LOG("empty write changed %s", variant->file);
}

/*
 * sysfs hands at most one page of a write to the store; a valid number
 * padded beyond a page is cut and rejected, never partially applied.
 */
TEST_F(num, huge_write_rejected_unchanged)
{
	long long before = dt_read_ll(variant->file);
	size_t len = 3 * 4096;
	char *buf = malloc(len);
	ssize_t ret;

	ASSERT_NE(NULL, buf);
	memset(buf, '\n', len);
	memcpy(buf, variant->valid, strlen(variant->valid));
	ret = dt_write_len(variant->file, buf, len);
	EXPECT_EQ(-EINVAL, ret) TH_LOG("%zu-byte write: want EINVAL", len);
	memset(buf, '1', len);
	ret = dt_write_len(variant->file, buf, len);
	EXPECT_EQ(-ERANGE, ret) TH_LOG("%zu digits: want ERANGE", len);
	EXPECT_EQ(before, dt_read_ll(variant->file))
		TH_LOG("huge write changed %s", variant->file);
	free(buf);
}

TEST_F(num, caps_and_cross_field_rules)
{
	run_steps(_metadata, variant->range);
}

/*
 * Word-valued files: one of their words, case-sensitive, optional newline.
 * tlb_flush has three; phys_addr, tracepoint and upper_scan are switches.
 */
FIXTURE(words) {
	int unused;
};

FIXTURE_SETUP(words)
{
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset()) TH_LOG("cannot reset daptrace to defaults");
}

FIXTURE_TEARDOWN(words)
{
	dt_reset();
}

FIXTURE_VARIANT(words) {
	const char *file;
	const char * const *ok;
	size_t nr_ok;
};

static const char * const tlb_words[] = {
	"none", "round", "mm", "none\n", "mm\n", "round\n",
};
static const char * const switch_words[] = { "on", "off", "on\n", "off\n" };

FIXTURE_VARIANT_ADD(words, tlb_flush) {
	.file = "tlb_flush", .ok = tlb_words, .nr_ok = ARRAY_SIZE(tlb_words),
};

FIXTURE_VARIANT_ADD(words, phys_addr) {
	.file = "phys_addr", .ok = switch_words, .nr_ok = ARRAY_SIZE(switch_words),
};

FIXTURE_VARIANT_ADD(words, tracepoint) {
	.file = "tracepoint", .ok = switch_words, .nr_ok = ARRAY_SIZE(switch_words),
};

FIXTURE_VARIANT_ADD(words, upper_scan) {
	.file = "upper_scan", .ok = switch_words, .nr_ok = ARRAY_SIZE(switch_words),
};

TEST_F(words, accepted_and_refused)
{
	static const struct { const char *val, *why; } bad[] = {
		{ "ROUND", "case-sensitive" }, { "ON", "case-sensitive" },
		{ "bogus", "unknown word" },
		{ " none", "leading blank" }, { "on ", "trailing blank" },
		{ "off\n\n", "two newlines" }, { "\n", "empty line" },
		{ "nonee", "prefix match" }, { "o", "prefix" }, { "1", "a number" },
	};
	const char *f = variant->file;
	char buf[32], want[32], before[32];
	size_t i;

	for (i = 0; i < variant->nr_ok; i++) {
		ASSERT_EQ(0, dt_write(f, variant->ok[i]))
			TH_LOG("%s \"%s\" should be accepted", f, variant->ok[i]);
		READ_OR_FAIL(f, buf);
		snprintf(want, sizeof(want), "%s", variant->ok[i]);
		want[strcspn(want, "\n")] = '\0';
		EXPECT_STREQ(want, buf);
	}
	READ_OR_FAIL(f, before);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, dt_write(f, bad[i].val))
			TH_LOG("%s \"%s\": want EINVAL (%s)", f, bad[i].val,
			       bad[i].why);
		READ_OR_FAIL(f, buf);
		EXPECT_STREQ(before, buf)
			TH_LOG("rejected \"%s\" changed %s", bad[i].val, f);
	}
	EXPECT_EQ(0, dt_write_len(f, "", 0)) TH_LOG("an empty write is a no-op");
}

/* Read-only files refuse writes at open(2), for root too (mode 0400). */
TEST_F(attrs, read_only_files_refuse_open_for_write)
{
	static const char * const ro[] = {
		"target_status", "nr_targets", "nr_regions", "nr_samples",
		"nr_samples_late",
		"nr_samples_busy",
		"nr_snapshots", "nr_snapshots_missed", "worker_cpu_us",
		"probe_us", "nr_probe_pages", "upper_entries", "upper_uncovered",
		"upper_cuts", "snapshot_seq", "snapshot", "snapshots",
		"kernel_series",
		"kernel_series_verified",
	};
	char path[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ro); i++) {
		int fd = open(dt_path(ro[i], path, sizeof(path)), O_WRONLY);

		EXPECT_EQ(-1, fd) TH_LOG("%s opened for writing", ro[i]);
		if (fd >= 0) {
			close(fd);
			continue;
		}
		EXPECT_EQ(EACCES, errno) TH_LOG("%s: %s", ro[i], strerror(errno));
	}
}

TEST_HARNESS_MAIN
