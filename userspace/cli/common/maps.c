// SPDX-License-Identifier: GPL-2.0-only
/* Labels for regions, from the target's /proc/PID/maps. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"

/* FNV-1a */
static uint32_t label_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

int maps_parse_line(const char *line, struct maps_entry *e)
{
	uint64_t start, end;
	const char *path;
	int off = 0;
	size_t len;

	/* start-end perms offset dev inode [path] */
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*x %*x:%*x %*u%n",
		   &start, &end, &off) != 2 || !off || start >= end)
		return -EINVAL;
	path = line + off;
	path += strspn(path, " \t");
	len = strcspn(path, "\n");
	e->start = start;
	e->end = end;
	e->label = len ? strndup(path, len) : strdup("[anon]");
	if (!e->label)
		return -ENOMEM;
	e->hash = label_hash(e->label);
	e->borrowed = 0;
	return 0;
}

static void free_entries(struct maps_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!e[i].borrowed)
			free(e[i].label);
	free(e);
}

/*
 * Equal labels of @e share the first one's string.  A library's four
 * mappings, and every "[anon]", are one label: maps_label() runs for every
 * region of every window and tells labels apart by pointer then, where it
 * compared strings (most of its time with thousands of targets).  Without
 * memory for the table the labels stay apart, which is only slower.
 */
static void share_labels(struct maps_entry *e, size_t n)
{
	size_t size = 16, *first;

	while (size < 2 * n)
		size *= 2;
	first = malloc(size * sizeof(*first));
	if (!first)
		return;
	for (size_t k = 0; k < size; k++)
		first[k] = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t k = e[i].hash & (size - 1);

		/* open addressing: at most n of the 2n slots are taken */
		while (first[k] != SIZE_MAX && strcmp(e[first[k]].label, e[i].label))
			k = (k + 1) & (size - 1);
		if (first[k] == SIZE_MAX) {
			first[k] = i;
		} else {
			free(e[i].label);
			e[i].label = e[first[k]].label;
			e[i].borrowed = 1;
		}
	}
	free(first);
}

int maps_refresh(struct maps *m)
{
	struct maps_entry *e = NULL, *ne;
	size_t n = 0, cap = 0, lcap = 0;
	char path[PATH_MAX], *line = NULL;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%d/maps", m->proc ? m->proc : "/proc", (int)m->pid);
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT || errno == ESRCH)
			m->gone = 1;
		return -errno;
	}
	m->nr_reads++;
	while (getline(&line, &lcap, f) > 0) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			ne = realloc(e, cap * sizeof(*e));
			if (!ne) {
				err = -ENOMEM;
				break;
			}
			e = ne;
		}
		if (maps_parse_line(line, &e[n]) == 0)
			n++;
	}
	free(line);
	fclose(f);
	/* an exited process has an empty maps file: keep the old labels */
	if (err || n == 0) {
		free_entries(e, n);
		if (!err)
			m->gone = 1;
		return err;
	}
	share_labels(e, n);
	free_entries(m->e, m->n);
	m->e = e;
	m->n = n;
	return 0;
}

const char *maps_label(const struct maps *m, uint64_t start, uint64_t end)
{
	/* bytes of [start, end) per label: the mapping's pieces share one */
	struct label_bytes {
		const char *label;
		uint32_t hash;
		uint64_t bytes;
	} seen[16];
	size_t lo = 0, hi = m->n, nseen = 0, best = 0;
	uint64_t mapped = 0;

	/* first entry whose end is above start */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->e[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < m->n && m->e[i].start < end; i++) {
		uint64_t a = m->e[i].start > start ? m->e[i].start : start;
		uint64_t b = m->e[i].end < end ? m->e[i].end : end;
		size_t k;

		/*
		 * The pointer first (share_labels()), then the hash: a region
		 * over a library's mappings compares every one with each label
		 * seen, and paths share long prefixes.
		 */
		for (k = 0; k < nseen && seen[k].label != m->e[i].label &&
			    (seen[k].hash != m->e[i].hash ||
			     strcmp(seen[k].label, m->e[i].label)); k++)
			;
		if (k == nseen) {
			if (nseen == sizeof(seen) / sizeof(seen[0]))
				k = nseen - 1;	/* many small ones: share the last slot */
			else
				seen[nseen++] = (struct label_bytes){ m->e[i].label,
								      m->e[i].hash, 0 };
		}
		seen[k].bytes += b - a;
		mapped += b - a;
		if (seen[k].bytes > seen[best].bytes)
			best = k;
	}
	/* mostly a hole: say so rather than name the mapping at its edge */
	if (!nseen || end - start - mapped > seen[best].bytes)
		return "[unmapped]";
	return seen[best].label;
}

void maps_free(struct maps *m)
{
	free_entries(m->e, m->n);
	m->e = NULL;
	m->n = 0;
}
