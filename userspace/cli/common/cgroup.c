// SPDX-License-Identifier: GPL-2.0-only
/* cgroup v2 directories and their processes (see cgroup.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "cgroup.h"

/* Deeper cgroup trees are not walked further (systemd's are < 10 deep). */
#define MAX_DEPTH	64

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/* @dir is @mnt or below it */
static size_t under(const char *dir, const char *mnt)
{
	size_t n = strlen(mnt);

	if (n == 1 && mnt[0] == '/')
		return 1;
	if (strncmp(dir, mnt, n) || (dir[n] && dir[n] != '/'))
		return 0;
	return n;
}

char *cgroup2_mount(const char *mountinfo, const char *dir, char **root)
{
	char *line = NULL, *best = NULL, *best_root = NULL;
	size_t cap = 0, best_len = 0;
	FILE *f = fopen(mountinfo, "re");

	*root = NULL;
	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		char mroot[PATH_MAX], mnt[PATH_MAX], fstype[64];
		const char *sep = strstr(line, " - ");
		size_t len;

		/* id parent major:minor root mount-point options ... - fstype ... */
		if (!sep || sscanf(line, "%*s %*s %*s %4095s %4095s", mroot, mnt) != 2 ||
		    sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		unescape(mroot);
		unescape(mnt);
		len = dir ? under(dir, mnt) : 1;
		if (!len || (best && len <= best_len))
			continue;
		free(best);
		free(best_root);
		best = strdup(mnt);
		best_root = strdup(mroot);
		best_len = len;
		if (!best || !best_root)
			break;
	}
	free(line);
	fclose(f);
	if (!best || !best_root) {
		free(best);
		free(best_root);
		return NULL;
	}
	*root = best_root;
	return best;
}

static int is_cgroup2(const char *dir, char *err, size_t errlen, const char *arg)
{
	struct statfs fs;

	if (statfs(dir, &fs)) {
		snprintf(err, errlen, "%s: %s", arg, strerror(errno));
		return -errno;
	}
	if (fs.f_type == CGROUP2_SUPER_MAGIC)
		return 0;
	snprintf(err, errlen, "%s is not a cgroup v2 directory (%s); daptrace follows "
		 "the unified hierarchy (mount -t cgroup2 none /sys/fs/cgroup)", arg,
		 fs.f_type == CGROUP_SUPER_MAGIC ? "a cgroup v1 hierarchy" :
		 "not a cgroup filesystem");
	return -ENOTDIR;
}

/* The cgroup path of @dir (real, on a cgroup v2 mount). */
static char *cgroup_path_of(const char *mountinfo, const char *dir)
{
	char *root, *mnt = cgroup2_mount(mountinfo, dir, &root), *p = NULL;
	const char *rest;

	if (!mnt)
		return NULL;
	rest = dir + under(dir, mnt);
	if (!strcmp(mnt, "/"))
		rest = dir;
	if (asprintf(&p, "%s%s", strcmp(root, "/") ? root : "", rest) < 0)
		p = NULL;
	else if (!*p) {
		free(p);
		p = strdup("/");
	}
	free(mnt);
	free(root);
	return p;
}

/* 0 if @dir is a cgroup v2 directory, else -errno with what it is in @err. */
static int check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (stat(dir, &st)) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory (expected a cgroup v2 directory)",
			 dir);
		return -ENOTDIR;
	}
	return is_cgroup2(dir, err, errlen, dir);
}

int cgroup_resolve(const char *arg, const char *mountinfo, struct cgroup_ref *c,
		   char *err, size_t errlen)
{
	char *mnt = NULL, *root = NULL, *cand = NULL, first[1024] = "";
	const char *dir = NULL;
	struct stat st;
	int ret = -ENOENT, here;

	memset(c, 0, sizeof(*c));
	if (!*arg) {
		snprintf(err, errlen, "empty cgroup path");
		return -EINVAL;
	}
	/* a directory, as named */
	here = !stat(arg, &st);
	if (here) {
		ret = check_dir(arg, first, sizeof(first));
		if (!ret)
			dir = arg;
	}
	/* else a cgroup path below the cgroup v2 mount ("/" is its root) */
	if (!dir) {
		mnt = cgroup2_mount(mountinfo, NULL, &root);
		if (mnt && asprintf(&cand, "%s/%s", mnt, arg + (*arg == '/')) < 0)
			cand = NULL;
		if (cand && !stat(cand, &st) && !check_dir(cand, err, errlen))
			dir = cand;
	}
	if (!dir) {
		if (here)
			snprintf(err, errlen, "%s", first);
		else if (!mnt)
			snprintf(err, errlen, "%s: no such directory, and no cgroup v2 "
				 "filesystem is mounted (mount -t cgroup2 none /sys/fs/cgroup)",
				 arg);
		else
			snprintf(err, errlen, "no such cgroup: %s (neither a directory nor %s)",
				 arg, cand ? cand : mnt);
		ret = here ? ret : -ENOENT;
		goto out;
	}
	ret = 0;
	c->dir = realpath(dir, NULL);
	c->path = c->dir ? cgroup_path_of(mountinfo, c->dir) : NULL;
	if (!c->dir || !c->path) {
		snprintf(err, errlen, "%s: cannot find it among the cgroup v2 mounts of %s",
			 dir, mountinfo);
		cgroup_ref_free(c);
		ret = -ENOENT;
	}
out:
	free(mnt);
	free(root);
	free(cand);
	return ret;
}

void cgroup_ref_free(struct cgroup_ref *c)
{
	free(c->dir);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

static int push_pid(const char *s, struct pid_vec *out)
{
	long v = strtol(s, NULL, 10);

	return v > 0 && v <= INT32_MAX ? pid_vec_push(out, (pid_t)v) : 0;
}

static int read_procs(int dfd, struct pid_vec *out)
{
	char buf[4096];
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC), err = 0;
	size_t have = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	/* a pid per line; a line may straddle two reads */
	for (;;) {
		char *line = buf, *nl;

		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while (!err && (nl = strchr(line, '\n'))) {
			err = push_pid(line, out);
			line = nl + 1;
		}
		have = strlen(line);
		memmove(buf, line, have);
	}
	if (n < 0)
		err = -errno;
	else if (!err && have) {
		buf[have] = '\0';
		err = push_pid(buf, out);	/* the last line without its newline */
	}
	close(fd);
	return err;
}

static int walk(int dfd, int depth, struct pid_vec *out, unsigned int *nr)
{
	struct dirent *e;
	int err, dup;
	DIR *d;

	err = read_procs(dfd, out);
	/*
	 * Below the top, a cgroup removed meanwhile or a threaded one (its
	 * processes are its domain's) is skipped; out of memory is not.
	 */
	if (err == -ENOMEM || (err && !depth && err != -EOPNOTSUPP))
		return err;
	if (!err && nr)
		(*nr)++;
	err = 0;
	if (depth >= MAX_DEPTH)
		return 0;
	dup = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	d = dup >= 0 ? fdopendir(dup) : NULL;
	if (!d) {
		if (dup >= 0)
			close(dup);
		return 0;
	}
	while (!err && (e = readdir(d))) {
		int sub;

		if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue;	/* a file, or a cgroup removed meanwhile */
		err = walk(sub, depth + 1, out, nr);
		close(sub);
	}
	closedir(d);
	return err == -ENOMEM ? err : 0;
}

int cgroup_procs(const char *dir, struct pid_vec *out, unsigned int *nr_cgroups)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (nr_cgroups)
		*nr_cgroups = 0;
	if (dfd < 0)
		return -errno;
	err = walk(dfd, 0, out, nr_cgroups);
	close(dfd);
	return err;
}

int cgroup_within(const char *root, const char *p)
{
	size_t n = strlen(root);

	if (!p)
		return 0;
	if (n == 1 && root[0] == '/')
		return p[0] == '/';
	return !strncmp(p, root, n) && (p[n] == '\0' || p[n] == '/');
}
