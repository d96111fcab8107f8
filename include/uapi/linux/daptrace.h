/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * daptrace snapshot ring: the binary layout of /sys/kernel/daptrace/snapshots.
 *
 * The file is one ring header followed by @nr_slots fixed-size slots.  Each
 * aggregation interval the worker publishes one snapshot (all targets) into
 * slot (seq % nr_slots) at byte offset hdr_size + (seq % nr_slots) * slot_size.
 *
 * Publishing protocol (seqlock style, no per-reader state in the kernel):
 *   writer: slot.seq = 0; wmb; write body and header fields; wmb; slot.seq = seq
 *   reader: read slot header, read the body, read slot.seq again; the copy is
 *           valid iff both reads of slot.seq equal the seq the reader wanted.
 * A slot whose seq is newer than wanted was overwritten: the reader missed
 * (newest_seq - nr_slots + 1 - wanted) snapshots and should skip ahead.
 * The newest published seq is in /sys/kernel/daptrace/snapshot_seq, which is
 * pollable (sysfs_notify) and wakes readers after every publish.
 *
 * The file is empty until monitoring is first turned on.
 * Sequence numbers start at 1 and never repeat while the module is loaded,
 * also across off/on cycles.  @generation changes whenever the ring is
 * re-allocated (each "on"), and then the slot geometry may change too.
 *
 * All fields are native-endian.  A reader must check @magic and @version and
 * use @hdr_size, @slot_size, @snap_hdr_size and @region_size from the header
 * rather than sizeof(): later versions may append fields to any of the three
 * structs.  Appending fields does not change @version (old readers that honour
 * the sizes keep working); a reader finds the new fields by the size, e.g. the
 * placement fields of daptrace_region_rec exist iff @region_size >=
 * DAPTRACE_REGION_REC_SIZE_PLACEMENT.  @version changes only when an existing
 * field changes meaning, and readers must then refuse the file.
 */
#ifndef _UAPI_DAPTRACE_H
#define _UAPI_DAPTRACE_H

#include <linux/types.h>

#define DAPTRACE_RING_MAGIC	0x54504144U	/* "DAPT" little-endian */
#define DAPTRACE_RING_VERSION	1U

/** struct daptrace_ring_hdr - at offset 0 of the snapshots file. */
struct daptrace_ring_hdr {
	__u32 magic;		/* DAPTRACE_RING_MAGIC */
	__u32 version;		/* DAPTRACE_RING_VERSION */
	__u32 hdr_size;		/* bytes before slot 0 */
	__u32 slot_size;	/* bytes per slot, multiple of 8 */
	__u32 nr_slots;		/* slots in the ring */
	__u32 region_size;	/* bytes per struct daptrace_region_rec */
	__u32 max_regions;	/* records that fit in one slot */
	__u32 snap_hdr_size;	/* bytes of daptrace_snap_hdr; records follow */
	__u64 generation;	/* bumped each time the ring is (re)allocated */
};

/* Flags in daptrace_snap_hdr.flags. */
#define DAPTRACE_SNAP_TARGET_EXITED	0x1U	/* a target exited in this window */
#define DAPTRACE_SNAP_LAST		0x2U	/* last snapshot before the worker stopped */
#define DAPTRACE_SNAP_TRUNCATED		0x4U	/* more regions than max_regions */

/** struct daptrace_snap_hdr - at the start of each slot. */
struct daptrace_snap_hdr {
	__u64 seq;		/* 0 while being written, else >= 1 */
	__u64 start_ns;		/* CLOCK_MONOTONIC, start of the window */
	__u64 end_ns;		/* CLOCK_MONOTONIC, end of the window */
	__u32 nr_regions;	/* records that follow this header */
	__u32 nr_samples;	/* sampling rounds in this window */
	__u32 sample_us;	/* attributes in force for this window */
	__u32 aggr_us;
	__u32 flags;		/* DAPTRACE_SNAP_* */
	__u32 reserved;
};

/* Per-node sample counts in daptrace_region_rec cover nodes 0..3. */
#define DAPTRACE_REC_NODES		4
/* phys_addr when no present page was sampled in the window. */
#define DAPTRACE_NO_PHYS		(~(__u64)0)
/* region_size of the first layout (v1 without placement). */
#define DAPTRACE_REGION_REC_SIZE_V1	32U
#define DAPTRACE_REGION_REC_SIZE_PLACEMENT	64U

/**
 * struct daptrace_region_rec - one region of one target.
 *
 * Placement (appended; present iff region_size >= 64): each sampling round
 * that found the sampled page present counts in @nr_present and, for nodes
 * below DAPTRACE_REC_NODES, in @node_samples[node]; a page on a higher node
 * counts only in @nr_present.  Bytes of the region on node n are estimated as
 * (end - start) * node_samples[n] / nr_samples (the window's sampling rounds
 * in the slot header); the rest is not present or on higher nodes.
 * @phys_addr is the physical address of the last present page sampled in the
 * window (the file is root-only), DAPTRACE_NO_PHYS if none.
 */
struct daptrace_region_rec {
	__u64 start;		/* first byte, virtual address */
	__u64 end;		/* one past the last byte */
	__u32 nr_accesses;	/* sampling rounds that saw an access */
	__u32 age;		/* aggregations at a similar access level */
	__s32 pid;		/* target pid, in the namespace it was written in */
	__u32 reserved;
	/* placement, appended in ring version 1 */
	__u64 phys_addr;	/* last present sampled page, or DAPTRACE_NO_PHYS */
	__u32 nr_present;	/* rounds that found the sampled page present */
	__u32 reserved2;
	__u32 node_samples[DAPTRACE_REC_NODES];	/* of those, per node */
};

#endif /* _UAPI_DAPTRACE_H */
