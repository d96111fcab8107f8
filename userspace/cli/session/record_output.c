// SPDX-License-Identifier: GPL-2.0-only
/*
 * The file a new record goes to, shared by record and policy --record so
 * that both keep an existing record and compress a .gz name alike.
 */
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cli.h"
#include "common/recfile.h"
#include "record_output.h"

int recout_gz_name(const char *path)
{
	size_t n = strlen(path);

	return n > 3 && !strcmp(path + n - 3, ".gz");
}

/*
 * Does following @path's symlinks go through /proc (/dev/stdout is a link
 * to /proc/self/fd/1, /dev/fd/N is one there)?  Such a name is an open
 * file's, not a record's: it is never renamed.  Unsure is yes.
 */
static int via_proc(const char *path)
{
	char cur[PATH_MAX], next[PATH_MAX], dir[PATH_MAX];
	struct statfs sf;
	struct stat st;

	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
		return 1;
	for (int hops = 0; hops < 40; hops++) {
		char *slash;
		ssize_t n;

		snprintf(dir, sizeof(dir), "%s", cur);
		slash = strrchr(dir, '/');
		if (!slash)
			snprintf(dir, sizeof(dir), ".");
		else
			slash[slash == dir] = '\0';	/* "/x" -> "/" */
		if (statfs(dir, &sf) || sf.f_type == PROC_SUPER_MAGIC)
			return 1;
		if (lstat(cur, &st))
			return 1;
		if (!S_ISLNK(st.st_mode))
			return 0;
		n = readlink(cur, next, sizeof(next) - 1);
		if (n <= 0)
			return 1;
		next[n] = '\0';
		if (next[0] == '/')
			snprintf(cur, sizeof(cur), "%s", next);
		else if (snprintf(cur, sizeof(cur), "%s/%s", dir, next) >= (int)sizeof(cur))
			return 1;
	}
	return 1;
}

int recout_keep_old(const char *cmd, const char *flag, const char *path, int quiet,
		     char **kept)
{
	struct stat st;
	char *old;

	/*
	 * A record is kept as FILE.old.  For a symlink to one (latest.csv ->
	 * run17.csv) the link is renamed, its target left as it is, and FILE
	 * is made a new file: written through, the target would be lost.  A
	 * device, a FIFO, a socket or a name through /proc (/dev/stdout) is
	 * no record to keep: those are written through, in place.
	 */
	if (!strcmp(path, "-") || lstat(path, &st))
		return 0;
	if (S_ISLNK(st.st_mode) && (stat(path, &st) || !S_ISREG(st.st_mode) || via_proc(path)))
		return 0;
	if (!S_ISREG(st.st_mode))
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
