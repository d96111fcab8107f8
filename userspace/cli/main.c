// SPDX-License-Identifier: GPL-2.0-only
/* daptrace: entry point and subcommand dispatch (usage generated from the table). */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *prog = "daptrace";

static const struct subcommand subcommands[] = {
	{ "record", cmd_record, "monitor a command or processes and write a CSV record" },
	{ "report", cmd_report, "heatmap, working set size, hot regions or raw rows of a record" },
	{ "status", cmd_status, "show the kernel monitor's state, attributes, targets and counters" },
	{ "top", cmd_top, "live view of the hottest regions while monitoring (like perf top)" },
	{ "policy", cmd_policy, "apply DAMOS-style schemes (reclaim, tiering) to the targets" },
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

static void vmsg(const char *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s%s%s: ", prog, cmd ? " " : "", cmd ? cmd : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Run '%s %s --help' for usage.\n", prog, cmd ? cmd : "");
	return EXIT_USAGE;
}

int fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(cmd, fmt, ap);
	va_end(ap);
	return EXIT_FAIL;
}

void warn_msg(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(cmd, fmt, ap);
	va_end(ap);
}

int opt_error(const char *cmd, char **argv, int c)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	char name[64];

	/* getopt leaves optopt set for short options, 0 for unknown long ones */
	if (!strncmp(arg, "--", 2))
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
	else if (optopt > 0 && optopt < 256)
		snprintf(name, sizeof(name), "-%c", optopt);
	else
		snprintf(name, sizeof(name), "%s", arg);
	if (c == ':')
		return usage_error(cmd, "option '%s' needs a value", name);
	return usage_error(cmd, "unknown option '%s'", name);
}

int bad_value(const char *cmd, const char *flag, const char *val, const char *what)
{
	return usage_error(cmd, "%s: invalid value '%s' (%s)", flag, val, what);
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
