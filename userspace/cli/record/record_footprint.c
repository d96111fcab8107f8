// SPDX-License-Identifier: GPL-2.0-only
/* The targets' footprints from /proc/<pid>/statm (record_footprint.h). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "record_footprint.h"

/* statm: size resident shared text lib data dt, in pages */
static int read_statm(pid_t pid, uint64_t *vsz, uint64_t *rss)
{
	static long page;
	unsigned long long size, resident;
	char path[64];
	FILE *f;
	int n;

	if (!page)
		page = sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fscanf(f, "%llu %llu", &size, &resident);
	fclose(f);
	/* an exited process (a zombie) has an empty map: no footprint */
	if (n != 2 || !size || resident > size)
		return -1;
	*vsz = size * (uint64_t)page;
	*rss = resident * (uint64_t)page;
	return 0;
}

uint32_t footprints_read(struct footprints *f, const pid_t *pids, int nr_pids,
			 uint64_t time_ns)
{
	uint32_t n = 0;

	if (nr_pids > f->cap) {
		struct rec_footprint *fp = realloc(f->fp, nr_pids * sizeof(*fp));

		if (!fp)
			return 0;
		f->fp = fp;
		f->cap = nr_pids;
	}
	for (int i = 0; i < nr_pids; i++) {
		struct rec_footprint *fp = &f->fp[n];

		if (read_statm(pids[i], &fp->vsz, &fp->rss))
			continue;
		fp->pid = pids[i];
		fp->time_ns = time_ns;
		n++;
	}
	return n;
}

void footprints_free(struct footprints *f)
{
	free(f->fp);
	f->fp = NULL;
	f->cap = 0;
}
