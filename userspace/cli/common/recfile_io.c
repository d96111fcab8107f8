// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opening record files as stdio streams: gzip through zlib (gzdopen) behind
 * fopencookie, so the CSV reader and writer see a plain FILE *.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* fopencookie; the workload tools build without it */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "recfile.h"

static ssize_t gz_cookie_read(void *cookie, char *buf, size_t len)
{
	int n = gzread(cookie, buf, len > INT32_MAX ? INT32_MAX : (unsigned int)len);

	if (n < 0) {
		errno = EIO;
		return -1;
	}
	return n;
}

static int gz_cookie_close(void *cookie)
{
	return gzclose_r(cookie) == Z_OK ? 0 : EOF;
}

/*
 * Reading: zlib reads gzip and plain files alike (a file without the gzip magic is
 * passed through), so every record is opened through it: "x.csv.gz",
 * "x.csv", "-" (stdin) and pipes read the same way.  Sequential: a caller
 * needing two passes over a pipe spools it first (report.c).
 */
FILE *rec_open(const char *path, char *err, size_t errlen)
{
	cookie_io_functions_t io = { .read = gz_cookie_read, .close = gz_cookie_close };
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(0);
	gzFile gz;
	FILE *f;

	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	gz = gzdopen(fd, "rb");
	if (!gz) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	gzbuffer(gz, 128 * 1024);
	f = fopencookie(gz, "r", io);
	if (!f) {
		gzclose_r(gz);
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	}
	return f;
}

int rec_read_path(const char *path, int allow_partial, rec_snapshot_cb cb,
		  void *arg, struct rec_info *info, char *err, size_t errlen)
{
	FILE *f = rec_open(path, err, errlen);
	int ret;

	if (!f) {
		memset(info, 0, sizeof(*info));
		return -1;
	}
	ret = rec_read(f, strcmp(path, "-") ? path : "<stdin>", allow_partial, cb,
		       arg, info, err, errlen);
	fclose(f);
	return ret;
}

static ssize_t gz_cookie_write(void *cookie, const char *buf, size_t len)
{
	int n = gzwrite(cookie, buf, len > INT32_MAX ? INT32_MAX : (unsigned int)len);

	if (n <= 0 && len) {
		errno = EIO;
		return -1;
	}
	return n;
}

static int gz_cookie_close_w(void *cookie)
{
	return gzclose_w(cookie) == Z_OK ? 0 : EOF;
}

FILE *rec_create(const char *path, int compress, char *err, size_t errlen)
{
	cookie_io_functions_t io = { .write = gz_cookie_write, .close = gz_cookie_close_w };
	int fd;
	gzFile gz;
	FILE *f;

	if (!compress) {
		f = strcmp(path, "-") ? fopen(path, "we") : stdout;
		if (!f)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return f;
	}
	fd = strcmp(path, "-") ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666) :
	     dup(1);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	/* level 6: about 10x smaller records for a few % of one CPU */
	gz = gzdopen(fd, "wb6");
	if (!gz) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	f = fopencookie(gz, "w", io);
	if (!f) {
		gzclose_w(gz);
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	}
	return f;
}
