/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The snapshot ring behind /sys/kernel/daptrace/snapshots.  Layout and reader
 * protocol: include/uapi/linux/daptrace.h.
 */
#ifndef _DAPTRACE_RING_H
#define _DAPTRACE_RING_H

#include <linux/types.h>

struct daptrace_snap_hdr;
struct daptrace_region_rec;

/* Enough slack for a reader at 10 ms aggregation to stall for 160 ms. */
#define DAPTRACE_RING_SLOTS	16

struct daptrace_ring;

struct daptrace_ring *daptrace_ring_alloc(unsigned int max_regions, u64 generation);
struct daptrace_ring *daptrace_ring_grow(struct daptrace_ring *old,
					 unsigned int max_regions,
					 u64 generation);
void daptrace_ring_free(struct daptrace_ring *ring);
size_t daptrace_ring_size(const struct daptrace_ring *ring);
unsigned int daptrace_ring_max_regions(const struct daptrace_ring *ring);

/* Writer side: only the worker, one slot at a time. */
struct daptrace_snap_hdr *daptrace_ring_begin(struct daptrace_ring *ring, u64 seq,
					      bool *overwrote_unread);
struct daptrace_region_rec *daptrace_ring_records(struct daptrace_snap_hdr *slot);
void daptrace_ring_commit(struct daptrace_snap_hdr *slot, u64 seq);

/* Reader side: caller keeps @ring alive (daptrace_mon.ring_lock). */
ssize_t daptrace_ring_read(struct daptrace_ring *ring, char *buf, loff_t off,
			   size_t count);
int daptrace_ring_copy_snapshot(struct daptrace_ring *ring, u64 seq,
				struct daptrace_snap_hdr *hdr,
				struct daptrace_region_rec *recs,
				unsigned int max_recs);

#endif /* _DAPTRACE_RING_H */
