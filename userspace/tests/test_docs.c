// SPDX-License-Identifier: GPL-2.0-only
/*
 * The manual pages say what the tool does (issue 30, defect 6: record(1)
 * named the wrong default TLB flush policy and lacked --objects, policy(1)
 * lacked the collapse action, daptrace(1) and --help listed five of the
 * report modes): every flag a --help prints is in its man page, every
 * report mode in report(1), daptrace(1) and daptrace --help, every policy
 * action in policy(1), record(1)'s default flush policy is --help's.
 */
#include <ctype.h>
#include <string.h>

#include "kselftest_harness.h"
#include "run_cmd.h"

static char help[65536], page[262144];

static const char *man_dir(void)
{
	const char *d = getenv("DAPTRACE_DOCS");

	return d && *d ? d : "../docs/man";
}

static int load_page(const char *name)
{
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", man_dir(), name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(page, 1, sizeof(page) - 1, f);
	page[n] = '\0';
	fclose(f);
	return 0;
}

/* "--tlb-flush" as roff writes it: "\-\-tlb\-flush" */
static int page_has_flag(const char *flag)
{
	char roff[128];
	size_t n = 0;

	for (; *flag && n + 3 < sizeof(roff); flag++) {
		if (*flag == '-')
			roff[n++] = '\\';
		roff[n++] = *flag;
	}
	roff[n] = '\0';
	return strstr(page, roff) != NULL;
}

/* Every "--long-flag" of @help (but --help) must be in the loaded page. */
static int missing_flags(const char *text, char *missing, size_t len)
{
	int n = 0;

	missing[0] = '\0';
	for (const char *p = text; (p = strstr(p, "--")); p += 2) {
		char flag[64];
		size_t l = 2;

		if (p > text && !isspace((unsigned char)p[-1]) && p[-1] != ',' &&
		    p[-1] != '[' && p[-1] != '(')
			continue;
		memcpy(flag, "--", 2);
		while (l + 1 < sizeof(flag) && (isalnum((unsigned char)p[l]) || p[l] == '-'))
			flag[l] = p[l], l++;
		flag[l] = '\0';
		if (l < 4 || !strcmp(flag, "--help") || page_has_flag(flag))
			continue;
		if (!strstr(missing, flag)) {
			snprintf(missing + strlen(missing), len - strlen(missing), " %s", flag);
			n++;
		}
	}
	return n;
}

#define NEED() SKIP_UNLESS_DAPTRACE_BIN_AND_DIR(man_dir(), "no man pages at %s (DAPTRACE_DOCS)")

TEST(every_flag_of_every_command_is_in_its_page)
{
	static const char *const cmds[][2] = {
		{ "record", "daptrace-record.1" }, { "report", "daptrace-report.1" },
		{ "policy", "daptrace-policy.1" }, { "top", "daptrace-top.1" },
		{ "status", "daptrace-status.1" }, { "stat", "daptrace-stat.1" },
		{ "exporter", "daptrace-exporter.1" },
	};
	char missing[1024];

	NEED();
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		ASSERT_EQ(0, run_daptrace(A((char *)cmds[i][0], "--help"), help, sizeof(help)));
		ASSERT_EQ(0, load_page(cmds[i][1])) TH_LOG("%s", cmds[i][1]);
		EXPECT_EQ(0, missing_flags(help, missing, sizeof(missing)))
			TH_LOG("%s lacks%s", cmds[i][1], missing);
	}
}

TEST(every_report_mode_is_listed)
{
	static const char *const pages[] = { "daptrace-report.1", "daptrace.1" };
	char modes[32][32], top[65536];
	int n = 0;
	const char *p;

	NEED();
	ASSERT_EQ(0, run_daptrace(A("report", "--help"), help, sizeof(help)));
	p = strstr(help, "Modes:\n");
	ASSERT_NE(NULL, p);
	/* "  heatmap  time x address ..." until the blank line */
	for (p += 7; *p == ' ' && n < 32; p = strchr(p, '\n') + 1) {
		if (p[1] == ' ' && p[2] != ' ' && sscanf(p, " %31s", modes[n]) == 1)
			n++;
		if (!strchr(p, '\n'))
			break;
	}
	EXPECT_GE(n, 11) TH_LOG("modes in report --help: %d", n);
	ASSERT_EQ(0, run_daptrace(A("--help"), top, sizeof(top)));
	for (int i = 0; i < n; i++) {
		EXPECT_NE(NULL, strstr(top, modes[i])) TH_LOG("daptrace --help lacks %s", modes[i]);
		for (size_t k = 0; k < sizeof(pages) / sizeof(pages[0]); k++) {
			char b[1100], br[1100];

			/* in bold, as a mode is named in a man page: ".B wss", ".BR wss ," */
			ASSERT_EQ(0, load_page(pages[k]));
			snprintf(b, sizeof(b), ".B %s\n", modes[i]);
			snprintf(br, sizeof(br), ".BR %s ", modes[i]);
			EXPECT_TRUE(strstr(page, b) || strstr(page, br))
				TH_LOG("%s lacks the mode %s", pages[k], modes[i]);
		}
	}
}

TEST(record_page_has_the_default_flush_policy)
{
	char def[16] = "", want[64];
	const char *p;

	NEED();
	ASSERT_EQ(0, run_daptrace(A("record", "--help"), help, sizeof(help)));
	p = strstr(help, "--tlb-flush");
	ASSERT_NE(NULL, p);
	p = strstr(p, "(default ");
	ASSERT_NE(NULL, p);
	ASSERT_EQ(1, sscanf(p, "(default %15[a-z])", def));
	ASSERT_EQ(0, load_page("daptrace-record.1"));
	snprintf(want, sizeof(want), ".B %s\n(the default)", def);
	EXPECT_NE(NULL, strstr(page, want)) TH_LOG("record(1) does not call %s the default", def);
}

TEST(every_policy_action_is_in_the_page)
{
	char actions[256], *save, *a;
	const char *p;

	NEED();
	ASSERT_EQ(0, run_daptrace(A("policy", "--help"), help, sizeof(help)));
	p = strstr(help, "ACTION   ");
	ASSERT_NE(NULL, p);
	ASSERT_EQ(1, sscanf(p + 9, "%255[^\n]", actions));
	ASSERT_EQ(0, load_page("daptrace-policy.1"));
	for (a = strtok_r(actions, ", ", &save); a; a = strtok_r(NULL, ", ", &save)) {
		char b[64], bi[64], br[64];

		if (!strcmp(a, "NODE"))
			continue;
		/* in bold: ".B pageout", ".BI migrate_cold", ".BR willneed ," */
		snprintf(b, sizeof(b), ".B %s\n", a);
		snprintf(bi, sizeof(bi), ".BI %s ", a);
		snprintf(br, sizeof(br), ".BR %s ", a);
		EXPECT_TRUE(strstr(page, b) || strstr(page, bi) || strstr(page, br))
			TH_LOG("policy(1) lacks the action %s", a);
	}
}

TEST_HARNESS_MAIN
