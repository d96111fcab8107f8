/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A settings file of long options (--config FILE of policy and exporter,
 * the service's systemd/policy.conf): one per line as "NAME [VALUE]".
 */
#ifndef DAPTRACE_OPTS_FILE_H
#define DAPTRACE_OPTS_FILE_H

#include <getopt.h>

/*
 * What a command does with one option of the file, @value "" when it takes
 * none; nonzero (an exit code) stops the reading.
 */
typedef int (*opts_file_apply_fn)(void *ctx, const struct option *opt, char *value,
				  const char *path, unsigned int lineno);

/*
 * opts_file_read() - read @path: NAME is a long option of @longopts (a
 * leading "--" allowed; not "config" or "help"), the rest of the line,
 * spaces and all, is its value; '#' starts a comment line.  Each option is
 * checked (known; a value if and only if it takes one) and handed to
 * @apply in the file's order.  Returns 0, the first nonzero @apply
 * returned, or the usage error (EXIT_USAGE, "@cmd: PATH:LINE: ...").
 */
int opts_file_read(const char *cmd, const char *path, const struct option *longopts,
		   opts_file_apply_fn apply, void *ctx);

#endif /* DAPTRACE_OPTS_FILE_H */
