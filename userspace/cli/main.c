// SPDX-License-Identifier: GPL-2.0-only
/* daptrace: entry point and subcommand dispatch (usage generated from the table). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct subcommand subcommands[] = {
	{ "record", cmd_record, "monitor a command or processes and write a CSV record" },
	{ "report", cmd_report, "views of a record (daptrace's, damo's or a perf script):\n"
	  "           heatmap, wss, regions, hot, raw, hist, objects, nodes,\n"
	  "           pheatmap, access (damo report access), footprints (damo report\n"
	  "           footprints), adjust (damo adjust), savings (memory saved\n"
	  "           against refaults per idle time), regret (a policy's: what\n"
	  "           came back of what it took) or damo (its format)" },
	{ "status", cmd_status, "show the kernel monitor's state, attributes, targets and counters" },
	{ "top", cmd_top, "live view of the hottest regions while monitoring (like perf top)" },
	{ "policy", cmd_policy, "apply DAMOS-style schemes (reclaim, tiering) to the targets" },
	{ "stat", cmd_stat, "the machine's (or a cgroup's) working set and idle-time\n"
	  "           percentiles, always on (like DAMON_STAT)" },
	{ "exporter", cmd_exporter, "serve the snapshots as Prometheus/OpenMetrics metrics" },
};

#define NR_SUBCOMMANDS (sizeof(subcommands) / sizeof(subcommands[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s <command> [<args>]\n\nCommands:\n", prog);
	for (size_t i = 0; i < NR_SUBCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].description);
	fprintf(f, "\nRun '%s <command> --help' or '%s help <command>' for the options\n"
		"of a command; 'daptrace-<command>' is 'daptrace <command>'.\n"
		"The kernel interface is at $DAPTRACE_SYSFS or /sys/kernel/daptrace.\n",
		prog, prog);
}

static const struct subcommand *find_subcommand(const char *name)
{
	for (size_t i = 0; i < NR_SUBCOMMANDS; i++)
		if (!strcmp(name, subcommands[i].name))
			return &subcommands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const char *base = argv[0] ? strrchr(argv[0], '/') : NULL;
	const struct subcommand *sub;

	/* git/perf style: "daptrace-record ..." (a link to us) is "daptrace record ..." */
	base = base ? base + 1 : argv[0];
	if (base && !strncmp(base, "daptrace-", 9)) {
		sub = find_subcommand(base + 9);
		if (!sub) {
			fprintf(stderr, "%s: unknown command '%s' (from the name %s)\n",
				prog, base + 9, base);
			return EXIT_USAGE;
		}
		argv[0] = (char *)sub->name;
		return sub->fn(argc, argv);
	}
	/* "daptrace help record" is "daptrace record --help" */
	if (argc == 3 && !strcmp(argv[1], "help")) {
		static char help[] = "--help";
		char *args[] = { argv[2], help, NULL };

		sub = find_subcommand(argv[2]);
		if (!sub) {
			fprintf(stderr, "%s: unknown command '%s'\n\n", prog, argv[2]);
			usage(stderr);
			return EXIT_USAGE;
		}
		return sub->fn(2, args);
	}
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("%s %s\n", prog, DAPTRACE_VERSION);
		return EXIT_OK;
	}
	sub = find_subcommand(argv[1]);
	if (sub)
		return sub->fn(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command '%s'\n\n", prog, argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
