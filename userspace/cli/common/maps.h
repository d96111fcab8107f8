/* SPDX-License-Identifier: GPL-2.0-only */
/* Region labels from /proc/PID/maps: "[heap]", "[stack]", a path, "[anon]". */
#ifndef DAPTRACE_MAPS_H
#define DAPTRACE_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct maps_entry {
	uint64_t start, end;
	char *label;
	/* of @label (0 if unset): different hashes, different labels */
	uint32_t hash;
	/*
	 * @label is an earlier entry's (maps_refresh() shares equal labels,
	 * so that maps_label() compares pointers): not freed with this one.
	 */
	int borrowed;
};

struct maps {
	pid_t pid;
	const char *proc;	/* NULL: /proc; a fake tree in tests */
	struct maps_entry *e;
	size_t n;
	int gone;	/* process exited: labels are from the last good read */
	unsigned int nr_reads;	/* maps_refresh() calls that opened the file */
};

/* Re-read <proc>/<pid>/maps; keeps the previous table if it cannot. */
int maps_refresh(struct maps *m);
/*
 * Label of [start, end): the mapping (by label: a file's pieces count as
 * one) with most of its bytes, or "[unmapped]" if the holes between
 * mappings hold more than that.
 */
const char *maps_label(const struct maps *m, uint64_t start, uint64_t end);
void maps_free(struct maps *m);
/* Parse one maps line; returns 0 and a malloc'd label, or -EINVAL. */
int maps_parse_line(const char *line, struct maps_entry *e);

#endif
