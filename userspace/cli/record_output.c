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
#include "recfile.h"
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

	/*
	 * Only a file of its own is renamed: a symlink (/dev/stdout is one)
	 * would be renamed itself, not its target, and a device or a FIFO
	 * is no record to keep.  Those are written through, in place.
	 */
	if (!strcmp(path, "-") || lstat(path, &st) || !S_ISREG(st.st_mode))
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

int recout_create(const char *cmd, const char *flag, const char *path, int compress,
		  int quiet, char **kept, FILE **f)
{
	char err[512];
	int ret = recout_keep_old(cmd, flag, path, quiet, kept);

	if (ret)
		return ret;
	*f = rec_create(path, compress, err, sizeof(err));
	if (*f)
		return 0;
	ret = fail(cmd, "%s %s", flag, err);
	if (*kept && rename(*kept, path))
		warn_msg(cmd, "the old record is still %s: %s", *kept, strerror(errno));
	free(*kept);
	*kept = NULL;
	return ret;
}

void recout_discard(const char *cmd, const char *path, const char *kept)
{
	struct stat st;

	if (!strcmp(path, "-"))
		return;
	/* only the file made for the record, not a symlink or /dev/null */
	if (!lstat(path, &st) && S_ISREG(st.st_mode))
		unlink(path);
	if (kept && rename(kept, path))
		warn_msg(cmd, "the old record is still %s: %s", kept, strerror(errno));
}
