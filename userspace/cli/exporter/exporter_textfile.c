// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace exporter --textfile DIR: the metrics in DIR/daptrace.prom for
 * node_exporter's textfile collector, which reads every *.prom file of its
 * directory at each scrape.  Written to a temporary name that does not end
 * in .prom, then renamed: the collector sees the old file or the new one,
 * never half of one.  A directory that cannot be written is an error at
 * start; a write that fails later is counted and warned about once, and
 * the exporter goes on (the next write may work again).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "exporter.h"

#define CMD "exporter"

static char *join(const char *dir, const char *name)
{
	char *s;

	return asprintf(&s, "%s/%s", dir, name) < 0 ? NULL : s;
}

/* Write all of @len bytes of @buf to a new @path; 0 or -errno. */
static int write_new(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int err = 0;

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		buf += n;
		len -= (size_t)n;
	}
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int exp_textfile_open(struct exp_textfile *t, const char *dir)
{
	struct stat st;
	int err;

	memset(t, 0, sizeof(*t));
	if (!*dir)
		return bad_value(CMD, "--textfile", dir, "empty directory name");
	if (stat(dir, &st))
		return usage_error(CMD, "--textfile %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return usage_error(CMD, "--textfile %s: not a directory", dir);
	t->dir = dir;
	t->path = join(dir, "daptrace.prom");
	t->tmp = join(dir, ".daptrace.prom.tmp");
	if (!t->path || !t->tmp)
		return fail(CMD, "out of memory");
	/* try it for real: permissions, a read-only mount, quotas */
	err = write_new(t->tmp, "", 0);
	if (err)
		return usage_error(CMD, "--textfile %s: cannot write %s there: %s", dir,
				   ".daptrace.prom.tmp", strerror(-err));
	unlink(t->tmp);
	return 0;
}

void exp_textfile_write(struct exp_textfile *t, const char *text, size_t len,
			struct exp_counts *n)
{
	int err = write_new(t->tmp, text, len);

	if (!err && rename(t->tmp, t->path))
		err = -errno;
	if (err) {
		unlink(t->tmp);
		n->textfile_errors++;
		if (!t->failing)
			warn_msg(CMD, "--textfile: writing %s: %s (counted; still trying)",
				 t->path, strerror(-err));
		t->failing = 1;
		return;
	}
	if (t->failing)
		warn_msg(CMD, "--textfile: writing %s works again", t->path);
	t->failing = 0;
	n->textfile_writes++;
}

void exp_textfile_close(struct exp_textfile *t)
{
	if (t->path)
		unlink(t->path);
	free(t->path);
	free(t->tmp);
	memset(t, 0, sizeof(*t));
}
