// SPDX-License-Identifier: LGPL-2.1-or-later
/* Targets, on/off and counters. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const target_states[] = {
	[DAPTRACE_TARGET_IDLE]		= "idle",
	[DAPTRACE_TARGET_MONITORING]	= "monitoring",
	[DAPTRACE_TARGET_EXITED]	= "exited",
};

const char *daptrace_target_state_name(enum daptrace_target_state s)
{
	return (unsigned int)s <= DAPTRACE_TARGET_EXITED ? target_states[s] : "?";
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

/* Parse target_status: "<pid> <idle|monitoring|exited>" per line. */
int daptrace_get_targets(struct daptrace *d, struct daptrace_target *t, int max)
{
	char buf[DAPTRACE_MAX_TARGETS * 32 + 64], *line, *save = NULL;
	int n = 0, err;

	err = dt_read_str(d, "target_status", buf, sizeof(buf));
	if (err < 0)
		return err;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char word[16];
		int pid, s;

		if (sscanf(line, "%d %15s", &pid, word) != 2 || pid <= 0)
			return dt_fail(EPROTO, "%s/target_status: bad line '%s'",
				       d->root, line);
		for (s = 0; s <= DAPTRACE_TARGET_EXITED; s++)
			if (!strcmp(word, target_states[s]))
				break;
		if (s > DAPTRACE_TARGET_EXITED)
			return dt_fail(EPROTO, "%s/target_status: unknown state '%s'",
				       d->root, word);
		if (n < max) {
			t[n].pid = pid;
			t[n].state = s;
		}
		n++;
	}
	return n;
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
