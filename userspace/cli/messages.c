// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CLI's messages: "daptrace <command>: ..." errors, warnings and usage
 * errors, with the exit codes of cli.h.  Apart from main.c so that tests
 * link the commands' code with them.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/units.h"

const char *prog = "daptrace";

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

int opt_help_or_error(const char *cmd, char **argv, int c, void (*usage)(FILE *f))
{
	if (c == 'h') {
		usage(stdout);
		exit(EXIT_OK);
	}
	return opt_error(cmd, argv, c);
}

int bad_value(const char *cmd, const char *flag, const char *val, const char *what)
{
	return usage_error(cmd, "%s: invalid value '%s' (%s)", flag, val, what);
}

int uint_flag(const char *cmd, const char *flag, const char *val, unsigned int lo,
	      unsigned int hi, unsigned int *out)
{
	uint64_t v;
	char what[64];

	snprintf(what, sizeof(what), "expected a whole number from %u to %u", lo, hi);
	if (parse_u64_dec(val, &v) || v < lo || v > hi)
		return bad_value(cmd, flag, val, what);
	*out = (unsigned int)v;
	return 0;
}
