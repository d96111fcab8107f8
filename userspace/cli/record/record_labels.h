/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The region labels of a record ("[heap]", a file, "[unmapped]") from each
 * target's /proc/<pid>/maps, and when to read those again: periodically,
 * and early when a region lies where the map has no mapping (a mapping
 * newer than the read).  Each read also goes into the record as #maps
 * rows (maps_rows.h), so that reports can leave out the holes exactly.
 */
#ifndef DAPTRACE_RECORD_LABELS_H
#define DAPTRACE_RECORD_LABELS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/maps.h"
#include "common/maps_rows.h"
#include "daptrace.h"

#define REC_MAX_HOLES	16

/* A region that was "[unmapped]" under a fresh read of the map. */
struct rec_hole {
	uint64_t start, end;
};

/**
 * struct rec_tgt - what the recorder keeps per target (follow_proc.data).
 * @maps:	the labels
 * @maps_ns:	when @maps was read (CLOCK_MONOTONIC ns)
 * @fresh:	@maps was read since the last snapshot labelled the target
 * @holes:	the regions labelled "[unmapped]" by the first snapshot after
 *		the read: re-reading would not change them (at most
 *		REC_MAX_HOLES, adjacent ones merged)
 * @written:	what the record has of @maps (maps_rows.h)
 */
struct rec_tgt {
	struct maps maps;
	int64_t maps_ns;
	int fresh;
	struct maps_written written;
	struct rec_hole holes[REC_MAX_HOLES];
	unsigned int nr_holes;
};

/* The labels of a snapshot's regions, by index; valid until the next refresh. */
struct rec_labels {
	const char **v;
	uint32_t n, cap;
	/* where rec_label() looks when v could not be allocated */
	struct rec_tgt *(*find)(void *ctx, pid_t pid);
	void *ctx;
};

/* Read @t's map now (@now): a new target, or one that exec'ed. */
void rec_tgt_read(struct rec_tgt *t, int64_t now);

/*
 * Label the regions of @s into @l, each once, from the maps of their
 * targets brought up to date first (a read frees the labels of the
 * previous one).  A map older than @every is read again; one that has no
 * mapping for most of a region is read again at once (at most every
 * @retry), unless that region lies in a hole that the last read already
 * showed.  @find gives the target of a pid, NULL if unknown.
 */
void rec_labels_refresh(struct rec_labels *l, const struct daptrace_snapshot *s,
			int64_t now, int64_t every, int64_t retry,
			struct rec_tgt *(*find)(void *ctx, pid_t pid), void *ctx);
/* The label of region @reg of @s, which the last refresh labelled into @l. */
const char *rec_label(const struct rec_labels *l, const struct daptrace_snapshot *s,
		      const struct daptrace_region *reg);
void rec_labels_free(struct rec_labels *l);

void rec_tgt_free(struct rec_tgt *t);

#endif
