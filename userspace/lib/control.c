// SPDX-License-Identifier: LGPL-2.1-or-later
/* Targets, on/off and counters. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static const char *const target_states[] = {
	[DAPTRACE_TARGET_IDLE]		= "idle",
	[DAPTRACE_TARGET_MONITORING]	= "monitoring",
	[DAPTRACE_TARGET_EXITED]	= "exited",
	[DAPTRACE_TARGET_JOINING]	= "joining",
	[DAPTRACE_TARGET_REVOKED]	= "revoked",
};
#define LAST_TARGET_STATE	DAPTRACE_TARGET_REVOKED

const char *daptrace_target_state_name(enum daptrace_target_state s)
{
	return (unsigned int)s <= LAST_TARGET_STATE ? target_states[s] : "?";
}

int daptrace_add_target(struct daptrace *d, pid_t pid)
{
	if (pid <= 0)
		return dt_fail(EINVAL, "add target: bad pid %d", (int)pid);
	return dt_write_u64(d, "target", (uint64_t)pid);
}

int daptrace_remove_target(struct daptrace *d, pid_t pid)
{
	if (pid <= 0)
		return dt_fail(EINVAL, "remove target: bad pid %d", (int)pid);
	return dt_write_u64(d, "target_remove", (uint64_t)pid);
}

/*
 * Parse target_status: "<pid> <idle|monitoring|exited|joining|revoked>" per line;
 * a page holds only so many, then "# N more".
 */
int daptrace_get_targets(struct daptrace *d, struct daptrace_target *t, int max)
{
	/* a sysfs file is at most one page; room for a larger page too */
	size_t len = 64 * 1024;
	char *buf = malloc(len), *line, *save = NULL;
	int n = 0, err;

	if (!buf)
		return dt_fail(ENOMEM, "reading %s/target_status", d->root);
	err = dt_read_str(d, "target_status", buf, len);
	if (err < 0) {
		free(buf);
		return err;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char word[16];
		int pid, s;

		if (line[0] == '#')
			continue;
		if (sscanf(line, "%d %15s", &pid, word) != 2 || pid <= 0) {
			err = dt_fail(EPROTO, "%s/target_status: bad line '%.64s'",
				      d->root, line);
			break;
		}
		for (s = 0; s <= LAST_TARGET_STATE; s++)
			if (!strcmp(word, target_states[s]))
				break;
		if (s > LAST_TARGET_STATE) {
			err = dt_fail(EPROTO, "%s/target_status: unknown state '%s'",
				      d->root, word);
			break;
		}
		if (n < max) {
			t[n].pid = pid;
			t[n].state = s;
		}
		n++;
	}
	free(buf);
	return err < 0 ? err : n;
}

int daptrace_nr_targets(struct daptrace *d)
{
	char path[PATH_MAX + 64];
	uint64_t v;
	int err;

	err = dt_path(d, "nr_targets", path, sizeof(path));
	if (err)
		return err;
	if (access(path, F_OK))
		return daptrace_get_targets(d, NULL, 0);
	err = dt_read_u64(d, "nr_targets", &v);
	if (err)
		return err;
	if (v > INT_MAX)
		return dt_fail(EPROTO, "%s/nr_targets: %llu targets", d->root,
			       (unsigned long long)v);
	return (int)v;
}

int daptrace_kernel_series(struct daptrace *d, char *buf, size_t len,
			   int *verified)
{
	char v[32];
	int err;

	err = dt_read_str(d, "kernel_series", buf, len);
	if (err < 0)
		return err;
	buf[strcspn(buf, "\n")] = '\0';
	err = dt_read_str(d, "kernel_series_verified", v, sizeof(v));
	if (err < 0)
		return err;
	v[strcspn(v, "\n")] = '\0';
	if (!strcmp(v, "verified"))
		*verified = 1;
	else if (!strcmp(v, "unverified"))
		*verified = 0;
	else
		return dt_fail(EPROTO, "%s/kernel_series_verified: unexpected content '%s'",
			       d->root, v);
	return 0;
}

int daptrace_set_phys_addr(struct daptrace *d, int on)
{
	return dt_write_str(d, "phys_addr", on ? "on" : "off");
}

int daptrace_start(struct daptrace *d)
{
	return dt_write_str(d, "state", "on");
}

int daptrace_stop(struct daptrace *d)
{
	return dt_write_str(d, "state", "off");
}

int daptrace_is_on(struct daptrace *d)
{
	char buf[16];
	int err;

	err = dt_read_str(d, "state", buf, sizeof(buf));
	if (err < 0)
		return err;
	buf[strcspn(buf, "\n")] = '\0';
	if (!strcmp(buf, "on"))
		return 1;
	if (!strcmp(buf, "off"))
		return 0;
	return dt_fail(EPROTO, "%s/state: unexpected content '%s'", d->root, buf);
}

int daptrace_get_counters(struct daptrace *d, struct daptrace_counters *c)
{
	static const struct {
		const char *file;
		size_t off;
	} fields[] = {
		{ "nr_regions", offsetof(struct daptrace_counters, nr_regions) },
		{ "nr_samples", offsetof(struct daptrace_counters, nr_samples) },
		{ "nr_snapshots", offsetof(struct daptrace_counters, nr_snapshots) },
		{ "nr_snapshots_missed",
		  offsetof(struct daptrace_counters, nr_snapshots_missed) },
		{ "worker_cpu_us", offsetof(struct daptrace_counters, worker_cpu_us) },
		{ "snapshot_seq", offsetof(struct daptrace_counters, snapshot_seq) },
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		int err = dt_read_u64(d, fields[i].file,
				      (uint64_t *)((char *)c + fields[i].off));
		if (err)
			return err;
	}
	return 0;
}

int daptrace_read_counter(struct daptrace *d, const char *name, uint64_t *v)
{
	if (!name || !*name || strchr(name, '/') || name[0] == '.')
		return dt_fail(EINVAL, "counter name '%s'", name ? name : "(null)");
	return dt_read_u64(d, name, v);
}
