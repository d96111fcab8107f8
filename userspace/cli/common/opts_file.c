// SPDX-License-Identifier: GPL-2.0-only
/* A settings file of long options, "NAME [VALUE]" per line (opts_file.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts_file.h"

/* The option @name of @longopts that a file may set, or NULL. */
static const struct option *file_option(const struct option *longopts, const char *name)
{
	const struct option *opt;

	for (opt = longopts; opt->name && strcmp(opt->name, name); opt++)
		;
	if (!opt->name || !strcmp(name, "config") || !strcmp(name, "help"))
		return NULL;
	return opt;
}

int opts_file_read(const char *cmd, const char *path, const struct option *longopts,
		   opts_file_apply_fn apply, void *ctx)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned int lineno = 0;
	FILE *f;
	int ret = 0;

	f = fopen(path, "re");
	if (!f)
		return usage_error(cmd, "--config %s: %s", path, strerror(errno));
	while (!ret && getline(&line, &cap, f) > 0) {
		const struct option *opt;
		char *name, *value, *end;

		lineno++;
		name = line + strspn(line, " \t");
		name[strcspn(name, "\r\n")] = '\0';
		if (!*name || *name == '#')
			continue;
		value = name + strcspn(name, " \t");
		if (*value)
			*value++ = '\0';
		value += strspn(value, " \t");
		for (end = value + strlen(value); end > value && strchr(" \t", end[-1]); end--)
			end[-1] = '\0';
		if (!strncmp(name, "--", 2))
			name += 2;
		opt = file_option(longopts, name);
		if (!opt)
			ret = usage_error(cmd, "%s:%u: unknown option '%s'", path, lineno, name);
		else if (opt->has_arg == required_argument && !*value)
			ret = usage_error(cmd, "%s:%u: option '%s' needs a value", path, lineno,
					  name);
		else if (opt->has_arg == no_argument && *value)
			ret = usage_error(cmd, "%s:%u: option '%s' takes no value", path, lineno,
					  name);
		else
			ret = apply(ctx, opt, value, path, lineno);
	}
	free(line);
	fclose(f);
	return ret;
}
