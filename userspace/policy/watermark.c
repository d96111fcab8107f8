// SPDX-License-Identifier: GPL-2.0-only
/*
 * Watermarks: a scheme runs only while free memory (system-wide or on one
 * node) is in its band, like DAMOS: it turns off above HIGH (no pressure)
 * or below LOW (let the kernel's own reclaim work), and turns back on only
 * once the metric falls below MID.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"

#define NODE_SYSFS "/sys/devices/system/node"

/* The value in kB of the first line of @path that contains @key. */
static int read_kb(const char *path, const char *key, uint64_t *kb)
{
	char line[256];
	FILE *f = fopen(path, "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, key);
		unsigned long long v;

		if (p && sscanf(p + strlen(key), " %llu", &v) == 1) {
			*kb = v;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

int pol_free_permille(enum pol_wmark_metric m, int node)
{
	char path[128];
	uint64_t total, free_kb;
	const char *p = "/proc/meminfo";
	int err;

	if (m == POL_WMARK_NODE_FREE) {
		snprintf(path, sizeof(path), NODE_SYSFS "/node%d/meminfo", node);
		p = path;
	}
	/* "MemTotal:" and "Node N MemTotal:" both end in the same key */
	err = read_kb(p, "MemTotal:", &total);
	if (!err)
		err = read_kb(p, "MemFree:", &free_kb);
	if (err)
		return err;
	if (!total)
		return -EINVAL;
	return (int)(free_kb * 1000 / total);
}

int pol_wmark_update(struct pol_scheme *s)
{
	int m;

	if (s->wmark == POL_WMARK_NONE)
		return s->active = 1;
	m = pol_free_permille(s->wmark, s->wmark_node);
	if (m < 0)
		return s->active = 0;	/* no metric, no action: counted as inactive */
	if ((uint32_t)m > s->wmark_high || (uint32_t)m < s->wmark_low)
		s->active = 0;
	else if (s->active || (uint32_t)m <= s->wmark_mid)
		s->active = 1;
	return s->active;
}

int pol_node_exists(int node)
{
	char path[128];

	snprintf(path, sizeof(path), NODE_SYSFS "/node%d/meminfo", node);
	return node >= 0 && access(path, R_OK) == 0;
}
