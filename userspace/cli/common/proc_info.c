// SPDX-License-Identifier: GPL-2.0-only
/* Processes as /proc shows them, for the follower (see proc_info.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include "proc_info.h"

/* include/linux/sched.h: I am a kernel thread */
#define PF_KTHREAD	0x00200000UL

int pid_vec_push(struct pid_vec *v, pid_t pid)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		pid_t *n = realloc(v->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		v->v = n;
		v->cap = cap;
	}
	v->v[v->n++] = pid;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

void pid_vec_sort_unique(struct pid_vec *v)
{
	size_t n = 0;

	if (!v->n)
		return;
	qsort(v->v, v->n, sizeof(*v->v), cmp_pid);
	for (size_t i = 0; i < v->n; i++)
		if (!n || v->v[n - 1] != v->v[i])
			v->v[n++] = v->v[i];
	v->n = n;
}

int pid_vec_contains(const struct pid_vec *v, pid_t pid)
{
	return v->n && bsearch(&pid, v->v, v->n, sizeof(*v->v), cmp_pid);
}

void pid_vec_free(struct pid_vec *v)
{
	free(v->v);
	memset(v, 0, sizeof(*v));
}

/* A whole small file into @buf (NUL-terminated); length or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (!n)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

int proc_stat_parse(const char *line, struct proc_stat *st)
{
	const char *open = strchr(line, '('), *close = strrchr(line, ')');
	unsigned long long start;
	long long pid;
	int ppid;
	size_t len;

	memset(st, 0, sizeof(*st));
	if (!open || !close || close < open || sscanf(line, "%lld", &pid) != 1 ||
	    pid <= 0 || pid > INT32_MAX)
		return -EINVAL;
	len = (size_t)(close - open - 1);
	if (len >= sizeof(st->comm))
		len = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, len);
	st->comm[len] = '\0';
	/* fields 3..22: state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime cutime cstime priority nice
	 * num_threads itrealvalue starttime */
	if (sscanf(close + 1, " %c %d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d "
		   "%*d %*d %ld %*d %llu", &st->state, &ppid, &st->flags, &st->num_threads,
		   &start) != 5 || ppid < 0)
		return -EINVAL;
	st->pid = (pid_t)pid;
	st->ppid = ppid;
	st->start_ticks = start;
	return 0;
}

int proc_stat_read(const char *proc, pid_t pid, struct proc_stat *st)
{
	char path[256], buf[1024];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/stat", proc, (int)pid);
	n = read_small(path, buf, sizeof(buf));
	if (n == -ESRCH || n == -ENOENT)
		return -ENOENT;
	if (n < 0)
		return (int)n;
	return proc_stat_parse(buf, st);
}

int proc_is_kthread(const struct proc_stat *st)
{
	return !!(st->flags & PF_KTHREAD);
}

/* Entries of <proc>/<pid>/task: the live threads and a zombie leader. */
static int nr_tasks(const char *proc, pid_t pid)
{
	char path[256];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/task", proc, (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += isdigit((unsigned char)e->d_name[0]) != 0;
	closedir(d);
	return n;
}

int proc_alive(const char *proc, pid_t pid, uint64_t start_ticks)
{
	struct proc_stat st;

	if (proc_stat_read(proc, pid, &st))
		return 0;
	if (start_ticks && st.start_ticks != start_ticks)
		return 0;
	if (st.state != 'Z' && st.state != 'X')
		return 1;
	/* the leader exited: alive while another thread runs */
	return nr_tasks(proc, pid) > 1;
}

/* Append the pids of a whitespace-separated list. */
static int push_list(const char *s, struct pid_vec *out)
{
	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s) {
			s++;
			continue;
		}
		if (v > 0 && v <= INT32_MAX && pid_vec_push(out, (pid_t)v))
			return -ENOMEM;
		s = end;
	}
	return 0;
}

int proc_children(const char *proc, pid_t pid, struct pid_vec *out)
{
	char dir[256], path[600], buf[8192];
	struct dirent *e;
	int err = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%d/task", proc, (int)pid);
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	while (!err && (e = readdir(d))) {
		ssize_t n;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "%s/%s/children", dir, e->d_name);
		n = read_small(path, buf, sizeof(buf));
		if (n >= 0) {
			/*
			 * A full buffer: the rest are found by their events or
			 * at a later scan, once some have exited.
			 */
			err = push_list(buf, out);
			continue;
		}
		/* no file for a thread that still exists: no CONFIG_PROC_CHILDREN */
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (n == -ENOENT && !access(path, F_OK))
			err = -ENOTSUP;
	}
	closedir(d);
	return err;
}

int proc_list(const char *proc, struct pid_vec *out)
{
	struct dirent *e;
	DIR *d = opendir(proc);

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		long v;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		v = strtol(e->d_name, &end, 10);
		if (*end || v <= 0 || v > INT32_MAX)
			continue;
		if (pid_vec_push(out, (pid_t)v)) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	return 0;
}

char *proc_cgroup(const char *proc, pid_t pid)
{
	char path[256], buf[4096];
	const char *line;

	snprintf(path, sizeof(path), "%s/%d/cgroup", proc, (int)pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return NULL;
	/* the unified hierarchy is "0::<path>"; v1 hierarchies have ids > 0 */
	for (line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, "0::", 3))
			return strndup(line + 3, strcspn(line + 3, "\n"));
	return NULL;
}

int proc_same_mm(pid_t a, pid_t b)
{
	long r = syscall(SYS_kcmp, a, b, KCMP_VM, 0, 0);

	if (r < 0)
		return -errno;
	return r == 0;
}

int64_t proc_ticks_to_ns(uint64_t ticks)
{
	static long hz;

	if (!hz)
		hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		hz = 100;
	return (int64_t)(ticks * (1000000000ULL / (uint64_t)hz));
}
