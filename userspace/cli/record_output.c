// SPDX-License-Identifier: GPL-2.0-only
/*
 * The file a new record goes to, shared by record and policy --record so
 * that both keep an existing record and compress a .gz name alike.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "record_output.h"

int recout_gz_name(const char *path)
{
	size_t n = strlen(path);

	return n > 3 && !strcmp(path + n - 3, ".gz");
}

int recout_keep_old(const char *cmd, const char *flag, const char *path, int quiet,
		     char **kept)
{
	struct stat st;
	char *old;

	if (!strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	if (asprintf(&old, "%s.old", path) < 0)
		return fail(cmd, "out of memory");
	if (rename(path, old)) {
		int ret = fail(cmd, "%s %s: keeping the old record as %s: %s", flag, path,
			       old, strerror(errno));

		free(old);
		return ret;
	}
	if (!quiet)
		warn_msg(cmd, "the old %s is now %s", path, old);
	*kept = old;
	return 0;
}

void recout_discard(const char *cmd, const char *path, const char *kept)
{
	if (!strcmp(path, "-"))
		return;
	unlink(path);
	if (kept && rename(kept, path))
		warn_msg(cmd, "the old record is still %s: %s", kept, strerror(errno));
}
