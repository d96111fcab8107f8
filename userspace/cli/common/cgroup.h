/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroup v2 for --cgroup: find the directory a user names, list every
 * process in it and in the cgroups below it (cgroup.procs), and tell
 * whether a process's cgroup (proc_cgroup()) lies within it.
 */
#ifndef DAPTRACE_CGROUP_H
#define DAPTRACE_CGROUP_H

#include <stddef.h>

#include "proc_info.h"

#define MOUNTINFO	"/proc/self/mountinfo"

struct cgroup_ref {
	char *dir;	/* the directory in the filesystem */
	char *path;	/* the cgroup as /proc/PID/cgroup names it: "/a/b", "/" */
};

/*
 * Resolve --cgroup @arg: a cgroup v2 directory, or a cgroup path below the
 * cgroup v2 mount of @mountinfo ("/system.slice/x.service" or without the
 * leading '/').  Returns 0, or -errno with a message in @err: no such
 * cgroup (naming where it looked), not a directory, not cgroup v2 (a v1
 * hierarchy or another filesystem), no cgroup v2 mounted.
 */
int cgroup_resolve(const char *arg, const char *mountinfo, struct cgroup_ref *c,
		   char *err, size_t errlen);
void cgroup_ref_free(struct cgroup_ref *c);
/*
 * The mount point of the cgroup v2 filesystem in @mountinfo whose mount
 * point is the longest prefix of @dir (any one if @dir is NULL), and the
 * cgroup path of its root in *@root (both malloc'd); NULL if none.
 */
char *cgroup2_mount(const char *mountinfo, const char *dir, char **root);
/*
 * Append every process of directory @dir and of the cgroups below it;
 * *@nr_cgroups (if not NULL) counts the cgroups read.  A cgroup removed
 * while it is walked is skipped, so is a threaded one's cgroup.procs.
 * 0, or -errno if @dir itself cannot be read (-ENOENT: it is gone).
 */
int cgroup_procs(const char *dir, struct pid_vec *out, unsigned int *nr_cgroups);
/* 1 if cgroup path @p is @root or below it. */
int cgroup_within(const char *root, const char *p);

#endif
