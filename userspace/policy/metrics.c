// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the goals and the watermarks read: meminfo (system and node), PSI
 * files, cgroup v2 files, a process's resident set, a number a user writes.
 * Every /proc and /sys path goes through pol_sysroot, so that the tests can
 * give a fake tree (PSI disabled, a cgroup without memory.pressure, ...).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"

const char *pol_sysroot = "";

static FILE *open_sys(const char *path)
{
	char buf[4096];

	if ((size_t)snprintf(buf, sizeof(buf), "%s%s", pol_sysroot, path) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return fopen(buf, "re");
}

/* The value in kB of the first line of @f that contains @key. */
static int read_kb(FILE *f, const char *key, uint64_t *kb)
{
	char line[256];

	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, key);
		unsigned long long v;

		if (p && sscanf(p + strlen(key), " %llu", &v) == 1) {
			*kb = v;
			return 0;
		}
	}
	return -ENOENT;
}

int pol_meminfo(int node, uint64_t *total, uint64_t *free_b)
{
	char path[128];
	uint64_t t, f;
	FILE *fp;
	int err;

	if (node >= 0)
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
	else
		snprintf(path, sizeof(path), "/proc/meminfo");
	fp = open_sys(path);
	if (!fp)
		return -errno;
	/* "MemTotal:" and "Node N MemTotal:" both end in the same key */
	err = read_kb(fp, "MemTotal:", &t);
	if (!err)
		err = read_kb(fp, "MemFree:", &f);
	fclose(fp);
	if (err)
		return err;
	if (!t || f > t)
		return -EINVAL;
	*total = t << 10;
	*free_b = f << 10;
	return 0;
}

int pol_psi_some_total(const char *path, uint64_t *us)
{
	char line[256];
	FILE *f = fopen(path, "re");
	int ret = -EINVAL;

	if (!f)
		return -errno;
	/* some avg10=0.00 avg60=0.00 avg300=0.00 total=12345 */
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " total="), *end;

		if (strncmp(line, "some ", 5) || !p)
			continue;
		errno = 0;
		*us = strtoull(p + 7, &end, 10);
		if (!errno && end != p + 7 && (*end == '\n' || !*end))
			ret = 0;
		break;
	}
	if (ferror(f))
		ret = -EIO;
	fclose(f);
	return ret;
}

int pol_cgroup2_mount(char *buf, size_t len)
{
	char line[4096];
	FILE *f = open_sys("/proc/self/mountinfo");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE ... */
	while (fgets(line, sizeof(line), f)) {
		char root[1024], mnt[1024], *sep = strstr(line, " - ");

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %1023s %1023s", root, mnt) != 2 || strcmp(root, "/"))
			continue;
		if (strlen(mnt) >= len || strchr(mnt, '\\')) {
			/* an escaped name (a blank in it): not worth the decoding */
			ret = -ENAMETOOLONG;
			continue;
		}
		strcpy(buf, mnt);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int pol_pid_cgroup(pid_t pid, char *buf, size_t len)
{
	char path[64], line[4096];
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = open_sys(path);
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	/* the unified hierarchy's line is "0::/path" */
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (line[3] != '/' || strlen(line + 3) >= len) {
			ret = -EINVAL;
			break;
		}
		strcpy(buf, line + 3);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* Up to @len - 1 bytes of @path, NUL-terminated. */
static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	if (ferror(f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[n] = '\0';
	return 0;
}

int pol_read_number(const char *path, double *v)
{
	char buf[128], *end;
	int err = read_small(path, buf, sizeof(buf));

	if (err)
		return err;
	errno = 0;
	*v = strtod(buf, &end);
	/* a value being rewritten reads as "" or cut: counted, not guessed */
	if (end == buf || errno || !isfinite(*v))
		return -EINVAL;
	end += strspn(end, " \t\n");
	return *end ? -EINVAL : 0;
}

int pol_read_u64(const char *path, uint64_t *v)
{
	char buf[64], *end;
	int err = read_small(path, buf, sizeof(buf));

	if (err)
		return err;
	if (buf[0] < '0' || buf[0] > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	return errno || (*end && strcmp(end, "\n")) ? -EINVAL : 0;
}

int pol_pid_rss(pid_t pid, uint64_t *bytes)
{
	char path[64];
	unsigned long long size, res;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	f = open_sys(path);
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	n = fscanf(f, "%llu %llu", &size, &res);
	fclose(f);
	if (n != 2)
		return -EINVAL;
	*bytes = (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
	return 0;
}

int pol_pid_majflt(pid_t pid, uint64_t *n)
{
	char path[64], buf[1024], *p;
	unsigned long long v;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = open_sys(path);
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* "PID (COMM) STATE PPID ... MINFLT CMINFLT MAJFLT": COMM may hold ") " */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu", &v) != 1)
		return -EINVAL;
	*n = v;
	return 0;
}
