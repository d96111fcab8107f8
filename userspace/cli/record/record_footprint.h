/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The targets' memory footprints (VSZ, RSS) next to each snapshot, read
 * from /proc/<pid>/statm as damo record does: the record's #footprint rows.
 */
#ifndef DAPTRACE_RECORD_FOOTPRINT_H
#define DAPTRACE_RECORD_FOOTPRINT_H

#include <stdint.h>
#include <sys/types.h>

#include "common/recfile.h"

struct footprints {
	struct rec_footprint *fp;
	int cap;
};

/*
 * Read the footprints of @pids at @time_ns (since the recording started)
 * into @f; a target that is gone is left out.  Returns how many were read,
 * 0 if none (or out of memory: the record then simply has none).
 */
uint32_t footprints_read(struct footprints *f, const pid_t *pids, int nr_pids,
			 uint64_t time_ns);
void footprints_free(struct footprints *f);

#endif
