// SPDX-License-Identifier: GPL-2.0-only
/*
 * Command-line errors of every subcommand: bad flags and values exit with 2
 * and a message naming the flag; runtime failures exit with 1.
 */
#include <string.h>

#include "kselftest_harness.h"
#include "run_cmd.h"

static const struct {
	char *const *argv;
	int code;
	const char *msg;
} cases[] = {
	/* top level */
	{ A("bogus"), 2, "unknown command 'bogus'" },
	{ A("--help"), 0, "Commands:" },
	{ A("--version"), 0, "daptrace " },
	/* record */
	{ A("record"), 2, "nothing to monitor" },
	{ A("record", "--help"), 0, "--tlb-flush POLICY" },
	{ A("record", "--bogus", "-p", "1"), 2, "unknown option '--bogus'" },
	{ A("record", "-x", "-p", "1"), 2, "unknown option '-x'" },
	{ A("record", "-p"), 2, "option '-p' needs a value" },
	{ A("record", "-p", "1", "--sample"), 2, "option '--sample' needs a value" },
	{ A("record", "-p", "0"), 2, "--pid: invalid value '0'" },
	{ A("record", "-p", "abc"), 2, "--pid: invalid value 'abc'" },
	{ A("record", "-p", "1,1"), 2, "a pid is listed twice" },
	{ A("record", "-p", "1", "--", "true"), 2, "either --pid, --cgroup or a command" },
	{ A("record", "-p", "1", "--sample", "5xs"), 2, "--sample: invalid value '5xs'" },
	{ A("record", "-p", "1", "--sample", "-5ms"), 2, "--sample: invalid value '-5ms'" },
	{ A("record", "-p", "1", "--aggr", "99999999999999999999s"), 2, "--aggr: invalid value" },
	{ A("record", "-p", "1", "--update", "1.5us"), 2, "--update: invalid value '1.5us'" },
	{ A("record", "-p", "1", "--duration", "0"), 2, "--duration: invalid value '0'" },
	{ A("record", "-p", "1", "--duration", "30"), 2,
	  "--duration: invalid value '30' (expected a duration with a unit" },
	{ A("record", "-p", "1", "--sample", "5000"), 2, "--sample: invalid value '5000'" },
	{ A("record", "-p", "1", "-d", "18446744073709551615us"), 2, "at most 1000000000s" },
	{ A("top", "-p", "1", "--refresh", "9223372036854776us"), 2, "--refresh: invalid value" },
	{ A("record", "heatmap", "-o", "-", "-p", "1"), 2, "--heatmap needs --output" },
	{ A("record", "-p", "1", "--regions", "10"), 2, "--regions: invalid value '10'" },
	{ A("record", "-p", "1", "--regions", "2-10"), 2, "min regions must be >= 3" },
	{ A("record", "-p", "1", "--regions", "100-10"), 2, "max regions must be >= min regions" },
	{ A("record", "-p", "1", "--auto-intervals=0"), 2,
	  "--auto-intervals: invalid value '0' (access share must be > 0" },
	{ A("record", "-p", "1", "--auto-intervals=4%,0"), 2, "expected SHARE[,WINDOWS[,MIN-MAX]]" },
	{ A("record", "-p", "1", "--auto-intervals=101%"), 2, "expected SHARE[,WINDOWS[,MIN-MAX]]" },
	{ A("record", "-p", "1", "--auto-intervals=4%,3,10ms-5ms"), 2,
	  "minimum sample interval must be <= the maximum" },
	{ A("record", "-p", "1", "--auto-intervals=4%,3,5ms"), 2, "expected SHARE" },
	{ A("record", "-p", "1", "--auto-intervals=4%,3,10ms-1s", "-s", "5ms"), 2,
	  "--sample 5 ms lies outside --auto-intervals' 10 ms-1 s" },
	{ A("policy", "-S", "pageout", "-p", "1", "--auto-intervals=x"), 2,
	  "--auto-intervals: invalid value 'x'" },
	{ A("policy", "-S", "pageout unobserved=maybe", "-p", "1"), 2,
	  "unobserved=maybe: expected skip or act" },
	{ A("record", "-p", "1", "--aggr", "1ms"), 2,
	  "aggregation interval must be >= sample interval (--sample 5 ms, --aggr 1 ms" },
	{ A("record", "-p", "1", "--sample", "50us"), 2, "sample interval must be >= 100 us" },
	{ A("record", "-p", "1", "--tlb-flush", "sometimes"), 2, "--tlb-flush: invalid value 'sometimes'" },
	{ A("record", "-p", "1", "-o", ""), 2, "--output: invalid value ''" },
	{ A("record", "-p", "1", "--heatmap="), 2, "--heatmap: invalid value ''" },
	{ A("record", "-p", "1,2", "-p", "2"), 2, "--pid: invalid value '2' (a pid is listed twice)" },
	{ A("record", "-p", "1", "--heatmap=h.bmp"), 2, "--heatmap: invalid value 'h.bmp' (the file name must end in .png or .svg)" },
	{ A("record", "-p", "1", "-o", "-", "--heatmap"), 2, "--heatmap needs --output" },
	/* which processes */
	{ A("record", "-i", "--", "true"), 2, "--inherit goes with --pid" },
	{ A("record", "--no-inherit", "-p", "1"), 2, "--no-inherit goes with a command" },
	{ A("record", "--cgroup", ""), 2, "--cgroup: invalid value ''" },
	{ A("record", "--cgroup", "/tmp", "-p", "1"), 2, "either --pid, --cgroup or a command" },
	{ A("record", "--cgroup", "/tmp"), 2, "--cgroup /tmp is not a cgroup v2 directory" },
	{ A("top", "--cgroup", "/proc/self/status"), 2, "is not a directory" },
	{ A("record", "--objects", "--cgroup", "/x"), 2, "--objects traces a command or --pid" },
	/* report */
	{ A("report"), 2, "missing mode" },
	{ A("report", "--help"), 0, "Modes:" },
	{ A("report", "bogus"), 2, "unknown mode 'bogus'" },
	{ A("report", "--plot", "x.png"), 2, "missing mode" },
	{ A("report", "heatmap", "--bogus"), 2, "unknown option '--bogus'" },
	{ A("report", "objects", "-"), 2, "objects: needs the record's file name, not '-'" },
	{ A("report", "heatmap", "--time-bins", "0"), 2, "--time-bins: invalid value '0'" },
	{ A("report", "heatmap", "--addr-bins", "x"), 2, "--addr-bins: invalid value 'x'" },
	{ A("report", "heatmap", "--max-blocks", "65"), 2, "--max-blocks: invalid value '65'" },
	{ A("report", "heatmap", "--plot", "out.gif"), 2, "--plot: invalid value 'out.gif'" },
	{ A("report", "heatmap", "--plot"), 2, "option '--plot' needs a value" },
	{ A("report", "heatmap", "a.csv", "b.csv"), 2, "unexpected argument 'b.csv'" },
	{ A("report", "wss", "--threshold", "-1"), 2, "--threshold: invalid value '-1'" },
	{ A("report", "hot", "--top", "0"), 2, "--top: invalid value '0'" },
	{ A("report", "hot", "--at", "soon"), 2, "--at: invalid value 'soon'" },
	{ A("report", "hot", "--at", "-1"), 2, "--at: invalid value '-1'" },
	{ A("report", "raw", "--plot", "x.png"), 2, "--plot does not apply to 'report raw'" },
	{ A("report", "wss", "-p", "x"), 2, "--pid: invalid value 'x'" },
	{ A("report", "wss", "--top", "5", "--by-label"), 2,
	  "--top does not apply to 'report wss' (only to hot, objects and access)" },
	{ A("report", "heatmap", "--threshold", "2"), 2, "--threshold does not apply" },
	{ A("report", "wss", "--addr-bins", "2"), 2, "--addr-bins does not apply" },
	{ A("report", "hot", "--by-label=maybe"), 2, "--by-label: invalid value 'maybe'" },
	{ A("report", "heatmap", "--json", "--plot", "x.png"), 2, "--json, --plot and --terminal: choose one" },
	{ A("report", "heatmap", "--json", "--terminal"), 2, "choose one" },
	{ A("report", "wss", "--since", "5", "--until", "1"), 2, "--until 1 is before --since 5" },
	{ A("report", "wss", "--since", "x"), 2, "--since: invalid value 'x'" },
	{ A("report", "hot", "--addr", "5-1"), 2, "--addr: invalid value" },
	{ A("help", "record"), 0, "Usage: daptrace record" },
	{ A("help", "bogus"), 2, "unknown command 'bogus'" },
	{ A("report", "wss", "/nonexistent/r.csv"), 1, "/nonexistent/r.csv: No such file" },
	/* top */
	{ A("top", "--help"), 0, "Usage: daptrace top" },
	{ A("top", "-o", "x.csv", "-p", "1"), 2, "unknown option '-o'" },
	{ A("top", "--output", "x.csv", "-p", "1"), 2, "--output does not apply to 'daptrace top'" },
	{ A("top", "-n", "0", "-p", "1"), 2, "--top: invalid value '0'" },
	{ A("top", "--refresh", "1", "-p", "1"), 2, "--refresh: invalid value '1'" },
	{ A("record", "--stdio", "-p", "1"), 2, "--stdio does not apply to 'daptrace record'" },
	/* status */
	{ A("status", "extra"), 2, "unexpected argument 'extra'" },
	{ A("status", "--bogus"), 2, "unknown option '--bogus'" },
	{ A("status", "-h"), 0, "Usage:" },
};

TEST(argument_errors)
{
	char out[8192];

	SKIP_UNLESS_DAPTRACE_BIN();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code = run_daptrace(cases[i].argv, out, sizeof(out));

		EXPECT_EQ(cases[i].code, code) TH_LOG("case %zu (%s %s): %s", i,
						      cases[i].argv[0], cases[i].argv[1] ?
						      cases[i].argv[1] : "", out);
		EXPECT_NE(NULL, strstr(out, cases[i].msg))
			TH_LOG("case %zu: want '%s' in: %s", i, cases[i].msg, out);
	}
}

TEST(runtime_errors_exit_1)
{
	char out[8192];

	SKIP_UNLESS_DAPTRACE_BIN();
	setenv("DAPTRACE_SYSFS", "/nonexistent/daptrace", 1);
	EXPECT_EQ(1, run_daptrace(A("status"), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "/nonexistent/daptrace (is daptrace.ko loaded?)")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_daptrace(A("record", "-q", "-p", "1"), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "cannot open the kernel interface")) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
