/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files outside daptrace's sysfs directory that tests set and put back
 * (cgroup controls, /proc/sys, /sys/kernel/mm): one write of a string,
 * one read of a short value, one key of a "key value" file.
 */
#ifndef DT_FILE_H
#define DT_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* dt_write_path() - write @val to @path in one write(2); 0 or -errno. */
static __attribute__((unused)) int dt_write_path(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

/*
 * dt_read_path() - one read(2) of @path into @buf, NUL-terminated and as
 * read (a trailing newline kept, so it can be written back); its length,
 * -ENODATA if empty, or -errno.
 */
static __attribute__((unused)) int dt_read_path(const char *path, char *buf,
						size_t len)
{
	int fd = open(path, O_RDONLY), err;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	return n ? (int)n : -ENODATA;
}

/*
 * dt_read_key() - the value of @key in a flat-keyed file of "key value"
 * lines (/proc/vmstat, a cgroup's memory.events), or -1.
 */
static __attribute__((unused)) long long dt_read_key(const char *path,
						     const char *key)
{
	char k[64];
	long long v;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", k, &v) == 2)
		if (!strcmp(k, key)) {
			fclose(f);
			return v;
		}
	fclose(f);
	return -1;
}

#endif /* DT_FILE_H */
