// SPDX-License-Identifier: GPL-2.0-only
/* Unit parsing for command-line values: durations, ranges, pid lists. */
#include <errno.h>
#include <stdint.h>

#include "kselftest_harness.h"
#include "common/units.h"

static const struct {
	const char *in;
	int err;
	uint64_t us;
} duration_cases[] = {
	{ "5000", -EINVAL, 0 },		/* bare number: a unit is required */
	{ "30", -EINVAL, 0 },
	{ "0", -EINVAL, 0 },
	{ "0us", 0, 0 },
	{ "2m", 0, 120000000 },
	{ "1.5m", 0, 90000000 },
	{ "5us", 0, 5 },
	{ "5ms", 0, 5000 },
	{ "1s", 0, 1000000 },
	{ "1.5ms", 0, 1500 },
	{ "0.25s", 0, 250000 },
	{ "100.000ms", 0, 100000 },
	{ "3600s", 0, 3600000000ULL },
	/* at most DURATION_MAX_US: callers compute ns in int64_t */
	{ "1000000000000000us", 0, 1000000000000000ULL },
	{ "1000000000s", 0, 1000000000000000ULL },
	{ "1000000000000001us", -ERANGE, 0 },
	{ "16666667m", -ERANGE, 0 },
	{ "999999999.999999s", 0, 999999999999999ULL },
	{ "999999999.9999999s", -EINVAL, 0 },
	{ "18446744073709551615us", -ERANGE, 0 },	/* wrapped to -1 ns */
	{ "9223372036854776us", -ERANGE, 0 },		/* INT64_MAX / 1000 + 1 */
	/* frac * unit overflowed uint64 before the check */
	{ "0.500000000000m", 0, 30000000 },
	{ "0.000000000001m", -EINVAL, 0 },		/* 60 ps */
	{ "0.123456789012m", -EINVAL, 0 },
	{ "0.999999999999s", -EINVAL, 0 },
	{ "1.000001s", 0, 1000001 },
	{ "18446744073709551616", -ERANGE, 0 },		/* overflow in digits */
	{ "18446744073709551615s", -ERANGE, 0 },	/* overflow by unit */
	{ "99999999999999999999999", -ERANGE, 0 },
	{ "1.5us", -EINVAL, 0 },	/* fraction of a µs */
	{ "0.0000001s", -EINVAL, 0 },
	{ "-5ms", -EINVAL, 0 },		/* negative */
	{ "+5ms", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
	{ "ms", -EINVAL, 0 },
	{ "5 ms", -EINVAL, 0 },
	{ " 5ms", -EINVAL, 0 },
	{ "5msx", -EINVAL, 0 },
	{ "5m", 0, 300000000 },		/* minutes */
	{ "5h", -EINVAL, 0 },
	{ "5.ms", -EINVAL, 0 },
	{ ".5ms", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ "1e3", -EINVAL, 0 },
	{ "5MS", -EINVAL, 0 },
};

TEST(durations)
{
	for (size_t i = 0; i < sizeof(duration_cases) / sizeof(duration_cases[0]); i++) {
		uint64_t us = 12345;
		int err = parse_duration_us(duration_cases[i].in, &us);

		EXPECT_EQ(duration_cases[i].err, err) TH_LOG("input '%s'", duration_cases[i].in);
		if (!err && !duration_cases[i].err) {
			EXPECT_EQ(duration_cases[i].us, us) TH_LOG("input '%s'", duration_cases[i].in);
		}
		if (err) {
			EXPECT_EQ(12345, us) TH_LOG("'%s' changed the output", duration_cases[i].in);
		}
	}
}

TEST(decimal)
{
	uint64_t v;

	EXPECT_EQ(0, parse_u64_dec("0", &v));
	EXPECT_EQ(0, parse_u64_dec("007", &v));
	EXPECT_EQ(7, v);
	EXPECT_EQ(-EINVAL, parse_u64_dec("", &v));
	EXPECT_EQ(-EINVAL, parse_u64_dec("-1", &v));
	EXPECT_EQ(-EINVAL, parse_u64_dec("1 ", &v));
	EXPECT_EQ(-EINVAL, parse_u64_dec(NULL, &v));
	EXPECT_EQ(-ERANGE, parse_u64_dec("18446744073709551616", &v));
}

/* Addresses: hex after 0x only; a leading 0 is decimal, never octal. */
TEST(addresses)
{
	uint64_t v;

	EXPECT_EQ(0, parse_u64_addr("010", &v));
	EXPECT_EQ(10, v);
	EXPECT_EQ(0, parse_u64_addr("093824992235520", &v));
	EXPECT_EQ(93824992235520ULL, v);
	EXPECT_EQ(0, parse_u64_addr("0x7fFF0000", &v));
	EXPECT_EQ(0x7fff0000ULL, v);
	EXPECT_EQ(0, parse_u64_addr("0X10", &v));
	EXPECT_EQ(16, v);
	EXPECT_EQ(0, parse_u64_addr("0xffffffffffffffff", &v));
	EXPECT_EQ(UINT64_MAX, v);
	EXPECT_EQ(0, parse_u64_addr("0", &v));
	EXPECT_EQ(0, v);
	EXPECT_EQ(-ERANGE, parse_u64_addr("0x10000000000000000", &v));
	EXPECT_EQ(-EINVAL, parse_u64_addr("0x", &v));
	EXPECT_EQ(-EINVAL, parse_u64_addr("0xg", &v));
	EXPECT_EQ(-EINVAL, parse_u64_addr("ff", &v));
	EXPECT_EQ(-EINVAL, parse_u64_addr("-1", &v));
	EXPECT_EQ(-EINVAL, parse_u64_addr("", &v));
}

TEST(ranges)
{
	uint64_t lo, hi;

	ASSERT_EQ(0, parse_range("10-1000", &lo, &hi));
	EXPECT_EQ(10, lo);
	EXPECT_EQ(1000, hi);
	EXPECT_EQ(-EINVAL, parse_range("10", &lo, &hi));
	EXPECT_EQ(-EINVAL, parse_range("-10", &lo, &hi));
	EXPECT_EQ(-EINVAL, parse_range("10-", &lo, &hi));
	EXPECT_EQ(-EINVAL, parse_range("10--20", &lo, &hi));
	EXPECT_EQ(-EINVAL, parse_range("a-b", &lo, &hi));
	EXPECT_EQ(-ERANGE, parse_range("1-99999999999999999999", &lo, &hi));
}

TEST(pid_lists)
{
	pid_t p[4];

	ASSERT_EQ(1, parse_pid_list("42", p, 4));
	EXPECT_EQ(42, p[0]);
	ASSERT_EQ(3, parse_pid_list("1,2,3", p, 4));
	EXPECT_EQ(3, p[2]);
	EXPECT_EQ(-E2BIG, parse_pid_list("1,2,3,4,5", p, 4));
	EXPECT_EQ(-EEXIST, parse_pid_list("1,2,1", p, 4));
	EXPECT_EQ(-ERANGE, parse_pid_list("0", p, 4));
	EXPECT_EQ(-ERANGE, parse_pid_list("2147483648", p, 4));
	EXPECT_EQ(-EINVAL, parse_pid_list("", p, 4));
	EXPECT_EQ(-EINVAL, parse_pid_list("1,", p, 4));
	EXPECT_EQ(-EINVAL, parse_pid_list(",1", p, 4));
	EXPECT_EQ(-EINVAL, parse_pid_list("1,,2", p, 4));
	EXPECT_EQ(-EINVAL, parse_pid_list("-1", p, 4));
	EXPECT_EQ(-EINVAL, parse_pid_list("12abc", p, 4));
}

TEST(formats)
{
	char b[32];

	EXPECT_STREQ("512 B", fmt_bytes(512, b, sizeof(b)));
	EXPECT_STREQ("1.50 KiB", fmt_bytes(1536, b, sizeof(b)));
	EXPECT_STREQ("128 TiB", fmt_bytes(128ULL << 40, b, sizeof(b)));
	EXPECT_STREQ("5 ms", fmt_us(5000, b, sizeof(b)));
	EXPECT_STREQ("1500 us", fmt_us(1500, b, sizeof(b)));
	EXPECT_STREQ("1 s", fmt_us(1000000, b, sizeof(b)));
}

TEST_HARNESS_MAIN
