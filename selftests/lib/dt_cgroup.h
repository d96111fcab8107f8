/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A memory cgroup for a test's child, under cgroup2 at DT_CG_ROOT (mounted
 * there if the VM's /init has not).  The test removes it (rmdir) when done.
 */
#ifndef DT_CGROUP_H
#define DT_CGROUP_H

#include <errno.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "dt_file.h"

#define DT_CG_ROOT	"/sys/fs/cgroup"

/*
 * dt_cgroup_memory() - create the cgroup @path (below DT_CG_ROOT) with the
 * memory controller enabled for it.  NULL, or why not (for a SKIP).
 */
static __attribute__((unused)) const char *dt_cgroup_memory(const char *path)
{
	struct stat st;
	char buf[256];

	if (stat(DT_CG_ROOT "/cgroup.controllers", &st)) {
		mkdir(DT_CG_ROOT, 0755);
		if (mount("cgroup2", DT_CG_ROOT, "cgroup2", 0, NULL) && errno != EBUSY)
			return "cannot mount cgroup2";
	}
	if (dt_read_path(DT_CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) < 0)
		return "no cgroup.controllers";
	if (!strstr(buf, "memory"))
		return "no memory controller in cgroup2";
	if (dt_write_path(DT_CG_ROOT "/cgroup.subtree_control", "+memory"))
		return "cannot enable the memory controller";
	if (mkdir(path, 0755) && errno != EEXIST)
		return "cannot create the cgroup";
	return NULL;
}

#endif /* DT_CGROUP_H */
