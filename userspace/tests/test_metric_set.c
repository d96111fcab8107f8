// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exposition writer (cli/exporter/metric_set.c): both formats byte for byte,
 * the family rules and what is dropped (and counted), label escaping and
 * UTF-8, and the Accept header negotiation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "exporter/metric_set.h"

static char *render(const struct metric_set *m, int om)
{
	size_t len;

	return mset_render(m, om, &len);
}

/* x_ratio and x_inf, gauges without a unit: the same in both formats */
#define UNITLESS_GAUGES							\
	"# HELP x_ratio R.\n"						\
	"# TYPE x_ratio gauge\n"					\
	"x_ratio 0.1\n"							\
	"# HELP x_inf I.\n"						\
	"# TYPE x_inf gauge\n"						\
	"x_inf +Inf\n"

TEST(writer_both_formats)
{
	struct metric_set m;
	struct labels l;
	char *text, *om;

	mset_init(&m);
	labels_init(&l);
	labels_add(&l, "target", "42");
	labels_add(&l, "comm", "a\"b\\c");
	ASSERT_EQ(0, mset_one(&m, "x_bytes", METRIC_GAUGE, "bytes", "Size \\ of\nit \"q\".",
			      &l, 4096));
	ASSERT_EQ(0, mset_one(&m, "x_seconds_total", METRIC_COUNTER, "seconds", "CPU.", NULL,
			      1.5));
	labels_init(&l);
	labels_add(&l, "version", "1.0");
	ASSERT_EQ(0, mset_one(&m, "x_build_info", METRIC_INFO, "", "Build.", &l, 1));
	ASSERT_EQ(0, mset_one(&m, "x_ratio", METRIC_GAUGE, "", "R.", NULL, 0.1));
	ASSERT_EQ(0, mset_one(&m, "x_inf", METRIC_GAUGE, "", "I.", NULL, INFINITY));
	text = render(&m, 0);
	om = render(&m, 1);
	ASSERT_NE(NULL, text);
	ASSERT_NE(NULL, om);
	EXPECT_STREQ("# HELP x_bytes Size \\\\ of\\nit \"q\".\n"
		     "# TYPE x_bytes gauge\n"
		     "x_bytes{target=\"42\",comm=\"a\\\"b\\\\c\"} 4096\n"
		     "# HELP x_seconds_total CPU.\n"
		     "# TYPE x_seconds_total counter\n"
		     "x_seconds_total 1.5\n"
		     "# HELP x_build_info Build.\n"
		     "# TYPE x_build_info gauge\n"
		     "x_build_info{version=\"1.0\"} 1\n"
		     UNITLESS_GAUGES, text);
	/* OpenMetrics: families without _total/_info, UNIT, quote escaped, EOF */
	EXPECT_STREQ("# HELP x_bytes Size \\\\ of\\nit \\\"q\\\".\n"
		     "# TYPE x_bytes gauge\n"
		     "# UNIT x_bytes bytes\n"
		     "x_bytes{target=\"42\",comm=\"a\\\"b\\\\c\"} 4096\n"
		     "# HELP x_seconds CPU.\n"
		     "# TYPE x_seconds counter\n"
		     "# UNIT x_seconds seconds\n"
		     "x_seconds_total 1.5\n"
		     "# HELP x_build Build.\n"
		     "# TYPE x_build info\n"
		     "x_build_info{version=\"1.0\"} 1\n"
		     UNITLESS_GAUGES
		     "# EOF\n", om);
	free(text);
	free(om);
	mset_free(&m);
}

TEST(family_rules_and_drops)
{
	struct metric_set m;
	struct labels l;
	char *text;

	mset_init(&m);
	EXPECT_EQ(-1, mset_family(&m, "x_count", METRIC_COUNTER, "", "no _total"));
	EXPECT_EQ(-1, mset_family(&m, "x_about", METRIC_INFO, "", "no _info"));
	EXPECT_EQ(-1, mset_family(&m, "9x", METRIC_GAUGE, "", "bad name"));
	EXPECT_EQ(-1, mset_family(&m, "x-y", METRIC_GAUGE, "", "bad name"));
	ASSERT_EQ(0, mset_family(&m, "x", METRIC_GAUGE, "", "h"));
	EXPECT_EQ(0, mset_family(&m, "x", METRIC_GAUGE, "", "h"));
	EXPECT_EQ(-1, mset_family(&m, "x", METRIC_COUNTER, "", "h"));	/* type clash */
	labels_init(&l);
	labels_add(&l, "k", "v");
	EXPECT_EQ(0, mset_add(&m, 0, &l, 1));
	EXPECT_EQ(-1, mset_add(&m, 0, &l, 2));	/* the same series twice */
	EXPECT_EQ(-1, mset_add(&m, -1, &l, 2));	/* no family */
	labels_init(&l);
	labels_add(&l, "__name__", "v");		/* reserved label name */
	EXPECT_EQ(-1, mset_add(&m, 0, &l, 3));
	labels_init(&l);
	labels_add(&l, "0k", "v");
	EXPECT_EQ(-1, mset_add(&m, 0, &l, 3));
	EXPECT_EQ(4, m.dropped);
	/* a family without samples is not written at all */
	ASSERT_LE(0, mset_family(&m, "empty", METRIC_GAUGE, "", "h"));
	text = render(&m, 0);
	EXPECT_STREQ("# HELP x h\n# TYPE x gauge\nx{k=\"v\"} 1\n", text);
	free(text);
	mset_free(&m);
}

TEST(label_values_escaped_and_valid_utf8)
{
	struct labels l;

	labels_init(&l);
	/* quote and backslash escaped; newline, tab, DEL become '?' */
	labels_add(&l, "a", "q\"b\\n\nt\tz\x7f");
	EXPECT_STREQ("a=\"q\\\"b\\\\n?t?z?\"", l.buf);
	labels_init(&l);
	/* valid UTF-8 kept; a name cut in a sequence, and stray bytes, become '?' */
	labels_add(&l, "b", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xc3 \xff \xed\xa0\x80 \xf0\x9f\x98\x80");
	EXPECT_STREQ("b=\"\xc3\xa9t\xc3\xa9 \xe2\x82\xac ? ? ??? \xf0\x9f\x98\x80\"", l.buf);
	EXPECT_EQ(0, l.bad);
	labels_init(&l);
	labels_add(&l, "c", "");
	labels_addf(&l, "d", "%d", 7);
	EXPECT_STREQ("c=\"\",d=\"7\"", l.buf);
}

TEST(accept_negotiation)
{
	static const struct {
		const char *accept;
		int om;
	} cases[] = {
		{ NULL, 0 },
		{ "", 0 },
		{ "*/*", 0 },
		{ "text/plain", 0 },
		/* what Prometheus 2.42 sends */
		{ "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
		  "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", 1 },
		{ "application/openmetrics-text", 1 },
		{ "application/openmetrics-text; version=1.0.0; q=0.2, text/plain;q=0.5", 0 },
		{ "application/openmetrics-text;version=0.0.1", 0 },	/* a draft we don't write */
		{ "application/openmetrics-text;q=0", 0 },
		{ "application/openmetrics-text;q=bogus", 0 },
		{ "Application/OpenMetrics-Text ;version=1.0.0", 1 },
		{ "text/plain;version=0.0.4;q=0.9,application/openmetrics-text;q=0.8", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_EQ(cases[i].om, mset_accept_openmetrics(cases[i].accept))
			TH_LOG("Accept: %s", cases[i].accept ? cases[i].accept : "(none)");
	}
}

TEST_HARNESS_MAIN
