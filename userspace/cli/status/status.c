// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace status: the module's kernel series, state, attributes, targets
 * and counters of the monitor.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "daptrace.h"
#include "common/units.h"

#define CMD "status"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s status [-h]\n"
"\n"
"Show the kernel series the module was built for and whether daptrace is\n"
"verified on it, whether monitoring is on, the attributes, the targets with\n"
"their state, and the counters since the last 'on'.\n", prog);
}

int cmd_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct daptrace_target t[DAPTRACE_MAX_TARGETS];
	struct daptrace_counters c;
	struct daptrace_attrs a;
	struct daptrace *d;
	char b1[32], b2[32], b3[32], series[32];
	int on, n, total, c_opt, verified, err;

	opterr = 0;
	optind = 1;
	while ((c_opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c_opt == 'h') {
			usage(stdout);
			return EXIT_OK;
		}
		return opt_error(CMD, argv, c_opt);
	}
	if (optind < argc)
		return usage_error(CMD, "unexpected argument '%s'", argv[optind]);

	if (daptrace_open(&d) < 0)
		return fail(CMD, "cannot open the kernel interface: %s",
			    daptrace_last_error());
	on = daptrace_is_on(d);
	if (on < 0 || daptrace_get_attrs(d, &a) < 0 ||
	    daptrace_get_counters(d, &c) < 0 ||
	    (n = daptrace_get_targets(d, t, DAPTRACE_MAX_TARGETS)) < 0 ||
	    (total = daptrace_nr_targets(d)) < 0) {
		fail(CMD, "%s", daptrace_last_error());
		daptrace_close(d);
		return EXIT_FAIL;
	}
	printf("interface:  %s\n", daptrace_root(d));
	err = daptrace_kernel_series(d, series, sizeof(series), &verified);
	if (err == -ENOENT)
		printf("kernel:     series not reported (a module older than kernel_series)\n");
	else if (err < 0)
		printf("kernel:     series unknown: %s\n", daptrace_last_error());
	else if (verified)
		printf("kernel:     %s, verified\n", series);
	else
		printf("kernel:     %s, unverified: built with DAPTRACE_UNVERIFIED=1, the page walk\n"
		       "            and TLB handling not reviewed for this series (README,\n"
		       "            \"Supported kernels\")\n", series);
	printf("state:      %s\n", on ? "on" : "off");
	printf("attributes: sample %s, aggregation %s, update %s\n",
	       fmt_us(a.sample_us, b1, sizeof(b1)), fmt_us(a.aggr_us, b2, sizeof(b2)),
	       fmt_us(a.update_us, b3, sizeof(b3)));
	printf("            regions %" PRIu64 "-%" PRIu64 ", tlb_flush %s\n",
	       a.min_nr_regions, a.max_nr_regions, daptrace_tlb_flush_name(a.tlb_flush));
	printf("targets:    %d\n", total > n ? total : n);
	for (int i = 0; i < n && i < DAPTRACE_MAX_TARGETS; i++)
		printf("  %-8d %s\n", (int)t[i].pid, daptrace_target_state_name(t[i].state));
	/* the module lists a page of them */
	if (total > n)
		printf("  ... %d more\n", total - n);
	printf("counters (since the last 'on'):\n");
	printf("  regions             %" PRIu64 "\n", c.nr_regions);
	printf("  samples             %" PRIu64 "\n", c.nr_samples);
	printf("  snapshots           %" PRIu64 " (newest seq %" PRIu64 ")\n",
	       c.nr_snapshots, c.snapshot_seq);
	printf("  snapshots missed    %" PRIu64 "\n", c.nr_snapshots_missed);
	printf("  worker CPU          %.3f s\n", (double)c.worker_cpu_us / 1e6);
	daptrace_close(d);
	return EXIT_OK;
}
