// SPDX-License-Identifier: LGPL-2.1-or-later
/* The handle and one-value-per-file access to the sysfs directory. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int daptrace_open_root(struct daptrace **dp, const char *root)
{
	struct daptrace *d;
	struct stat st;

	*dp = NULL;
	if (strlen(root) >= sizeof(d->root))
		return dt_fail(ENAMETOOLONG, "sysfs root %s", root);
	if (stat(root, &st) < 0) {
		int err = errno;

		if (err == ENOENT && !strcmp(root, DAPTRACE_SYSFS_DEFAULT)) {
			char why[768];

			dt_module_why("", NULL, why, sizeof(why));
			return dt_fail(err, "%s: %s", root, why);
		}
		if (err == ENOENT)
			return dt_fail(err, "%s (is daptrace.ko loaded?)", root);
		return dt_fail(err, "%s", root);
	}
	if (!S_ISDIR(st.st_mode))
		return dt_fail(ENOTDIR, "sysfs root %s", root);
	d = calloc(1, sizeof(*d));
	if (!d)
		return dt_fail(ENOMEM, "allocating handle");
	strcpy(d->root, root);
	d->seq_fd = -1;
	d->ring_fd = -1;
	*dp = d;
	return 0;
}

int daptrace_open(struct daptrace **dp)
{
	const char *root = getenv("DAPTRACE_SYSFS");

	return daptrace_open_root(dp, root && *root ? root :
				  DAPTRACE_SYSFS_DEFAULT);
}

void daptrace_close(struct daptrace *d)
{
	if (!d)
		return;
	if (d->seq_fd >= 0)
		close(d->seq_fd);
	if (d->ring_fd >= 0)
		close(d->ring_fd);
	free(d->slot_buf);
	free(d);
}

const char *daptrace_root(const struct daptrace *d)
{
	return d->root;
}

int dt_path(const struct daptrace *d, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", d->root, name);

	if (n < 0 || (size_t)n >= len)
		return dt_fail(ENAMETOOLONG, "%s/%s", d->root, name);
	return 0;
}

int dt_read_str(const struct daptrace *d, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX + 64];
	size_t got = 0;
	ssize_t n;
	int fd, err;

	err = dt_path(d, name, path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dt_fail(errno, "open %s", path);
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			close(fd);
			return dt_fail(err, "read %s", path);
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return (int)got;
}

/* Strict decimal: optional surrounding whitespace, no sign, no overflow. */
int dt_parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*v = x;
	return 0;
}

int dt_read_u64(const struct daptrace *d, const char *name, uint64_t *v)
{
	char buf[64];
	int err;

	err = dt_read_str(d, name, buf, sizeof(buf));
	if (err < 0)
		return err;
	err = dt_parse_u64(buf, v);
	if (err) {
		buf[strcspn(buf, "\n")] = '\0';
		return dt_fail(-err, "%s/%s: unexpected content '%s'",
			       d->root, name, buf);
	}
	return 0;
}

/* One write() with a trailing newline, like `echo val > file`. */
int dt_write_str(const struct daptrace *d, const char *name, const char *val)
{
	char path[PATH_MAX + 64], buf[128];
	ssize_t n;
	int fd, err, len;

	err = dt_path(d, name, path, sizeof(path));
	if (err)
		return err;
	len = snprintf(buf, sizeof(buf), "%s\n", val);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return dt_fail(EINVAL, "write %s: value too long", path);
	/* O_TRUNC only matters for fake trees made of regular files */
	fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC);
	if (fd < 0)
		return dt_fail(errno, "open %s for writing", path);
	do {
		n = write(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		err = errno;
		close(fd);
		return dt_fail(err, "write %s = %s", path, val);
	}
	if (close(fd) < 0)
		return dt_fail(errno, "write %s = %s (close)", path, val);
	if (n != len)
		return dt_fail(EIO, "write %s = %s: short write", path, val);
	return 0;
}

int dt_write_u64(const struct daptrace *d, const char *name, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return dt_write_str(d, name, buf);
}

int dt_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA;	/* file shorter than the header says */
		got += n;
	}
	return 0;
}
