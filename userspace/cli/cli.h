/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared pieces of the daptrace command-line tool. */
#ifndef DAPTRACE_CLI_H
#define DAPTRACE_CLI_H

#include <stdio.h>

/* Exit codes. */
#define EXIT_OK		0
#define EXIT_FAIL	1	/* runtime error */
#define EXIT_USAGE	2	/* bad command line */

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *description;
};

extern const char *prog;	/* "daptrace" */

/* Print "daptrace <cmd>: <msg>" to stderr; return EXIT_USAGE / EXIT_FAIL. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void warn_msg(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Message for getopt_long's ':' (missing value) or '?' (unknown option). */
int opt_error(const char *cmd, char **argv, int c);
/*
 * An option no case of the command took: -h/--help prints @usage to stdout
 * and exits EXIT_OK; anything else is opt_error()'s message.
 */
int opt_help_or_error(const char *cmd, char **argv, int c, void (*usage)(FILE *f));
/* Message for a flag whose value is wrong: names the flag and the value. */
int bad_value(const char *cmd, const char *flag, const char *val, const char *what);
/*
 * A flag's whole number from @lo to @hi into *@out, or bad_value()'s
 * message ("expected a whole number from LO to HI") and EXIT_USAGE.
 */
int uint_flag(const char *cmd, const char *flag, const char *val, unsigned int lo,
	      unsigned int hi, unsigned int *out);

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_exporter(int argc, char **argv);

/* report.c: render the heatmap of @record into @out (png/svg). */
int report_heatmap_plot(const char *record, const char *out);

#endif
