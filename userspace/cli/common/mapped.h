/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The memory of a region: the bytes of it inside its target's mappings.
 * Regions are address ranges the monitor chose, and coarse ones straddle
 * the holes between mappings, which are no memory.  The address ranges
 * the mappings cover (a maps read's, adjacent mappings joined; a record's
 * #maps rows, recfile.h) say how much of a region is memory: the
 * recorder and policy --record write them, the reports and the exporter
 * count with them.
 */
#ifndef DAPTRACE_MAPPED_H
#define DAPTRACE_MAPPED_H

#include <stddef.h>
#include <stdint.h>

#include "maps.h"
#include "recfile.h"

/*
 * The ranges @m's mappings cover into @out (room for m->n of them),
 * ascending and apart: the pieces of a mapping and adjacent mappings
 * joined.  Returns how many.
 */
size_t mapped_ranges(const struct maps *m, struct rec_range *out);
/* The bytes of [@start, @end) inside the @n ranges @r (ascending and apart). */
uint64_t mapped_in(const struct rec_range *r, size_t n, uint64_t start, uint64_t end);

#endif
