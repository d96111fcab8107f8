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
 *   reader: read the ring header (geometry, generation G); read the slot
 *           header, the body, then slot.seq again, then the ring header's
 *           generation again.  The copy is valid iff both reads of slot.seq
 *           equal the seq the reader wanted and the generation is still G.
 * The generation check matters when the ring is re-allocated (off,
 * max_nr_regions changed, on) during a copy: slot offsets move, and the 8
 * bytes at the old offset of the slot's seq may be region data that happen to
 * equal the wanted seq.  Generations never repeat while the module is loaded,
 * so an unchanged one means every read of the copy hit the same ring.
 *
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

/**
 * struct daptrace_ring_hdr - at offset 0 of the snapshots file.
 * @magic:		%DAPTRACE_RING_MAGIC.
 * @version:		%DAPTRACE_RING_VERSION.
 * @hdr_size:		Bytes before slot 0.
 * @slot_size:		Bytes per slot, a multiple of 8.
 * @nr_slots:		Slots in the ring.
 * @region_size:	Bytes per &struct daptrace_region_rec.
 * @max_regions:	Records that fit in one slot.
 * @snap_hdr_size:	Bytes of &struct daptrace_snap_hdr; records follow.
 * @generation:		New each time the ring is (re)allocated, never
 *			repeated while the module is loaded; part of a
 *			reader's validation (see above).
 */
struct daptrace_ring_hdr {
	__u32 magic;
	__u32 version;
	__u32 hdr_size;
	__u32 slot_size;
	__u32 nr_slots;
	__u32 region_size;
	__u32 max_regions;
	__u32 snap_hdr_size;
	__u64 generation;
};

/*
 * Flags in &daptrace_snap_hdr.flags:
 * %DAPTRACE_SNAP_TARGET_EXITED: a target exited in this window; the snapshot
 *	still carries the regions measured for it in the window (later ones
 *	carry none).
 * %DAPTRACE_SNAP_LAST: the last snapshot before the worker stopped: a
 *	partial window after "off", or the window in which the last target
 *	exited (then with %DAPTRACE_SNAP_TARGET_EXITED and its regions).
 * %DAPTRACE_SNAP_TRUNCATED: more regions than max_regions; the rest is not in
 *	the slot.
 * %DAPTRACE_SNAP_TARGET_EXEC: a target exec()ed in this window.  Its regions
 *	in this snapshot mix the old and the new image; from the next
 *	snapshot on they describe the new image only, started afresh (age 0).
 * %DAPTRACE_SNAP_TARGET_REVOKED: a target exec()ed an image that the
 *	writer's access check may no longer admit (see target_status,
 *	"revoked"): its watch ended, and this snapshot carries no regions of
 *	it (nor does any later one).  With %DAPTRACE_SNAP_LAST if it was the
 *	last live target.
 * %DAPTRACE_SNAP_TARGET_JOINED: targets written while monitoring joined at
 *	the start of this window (their regions appear once their memory
 *	map was read, in this window or, if it was busy, a later one); the
 *	snapshot of a window at whose end targets were removed still holds
 *	their regions.
 */
#define DAPTRACE_SNAP_TARGET_EXITED	0x1U
#define DAPTRACE_SNAP_LAST		0x2U
#define DAPTRACE_SNAP_TRUNCATED		0x4U
#define DAPTRACE_SNAP_TARGET_EXEC	0x8U
#define DAPTRACE_SNAP_TARGET_JOINED	0x10U
#define DAPTRACE_SNAP_TARGET_REVOKED	0x20U

/**
 * struct daptrace_snap_hdr - at the start of each slot.
 * @seq:	0 while the slot is being written, else >= 1.
 * @start_ns:	CLOCK_MONOTONIC, start of the window.
 * @end_ns:	CLOCK_MONOTONIC, end of the window.
 * @nr_regions:	Records that follow this header.
 * @nr_samples:	Sampling rounds in this window.
 * @sample_us:	Sampling interval in force for this window.
 * @aggr_us:	Aggregation interval in force for this window.
 * @flags:	DAPTRACE_SNAP_* flags.
 * @last_pass_us: Microseconds from the start of the window's last checking
 *		pass to @end_ns.  A pass checks the targets one after another,
 *		so a target's accesses in that time before @end_ns may count
 *		in the next window instead (the window's end is blurred by
 *		that much, per target).  Zero in files of modules that
 *		predate it (it was reserved).
 *
 * Accuracy probes (appended; present iff snap_hdr_size >=
 * %DAPTRACE_SNAP_HDR_SIZE_PROBES): each window, @probe_pages pages drawn
 * uniformly from the bytes the live targets' regions cover get page-level
 * truth (accessed bit cleared, with a TLB flush, at the window's start and
 * read at its end) and are compared with what their region reported
 * (accessed iff its nr_accesses > 0).  See sysfs-docs/, probe_pages.
 * @probe_pages:	Probes picked for this window (0: probing off).
 * @probe_tp:		Accessed, and their region read accessed.
 * @probe_fn:		Accessed, but their region read not accessed.
 * @probe_fp:		Not accessed, but their region read accessed.
 * @probe_tn:		Neither.
 * @probe_unobserved:	Probes whose truth could not be read, or whose
 *			region has no verdict (no observed check): never
 *			counted in the four above.
 * probe_pages = tp + fn + fp + tn + unobserved.  Estimated recall of
 * accessed memory: tp / (tp + fn); precision: tp / (tp + fp).  Counts of
 * one window are few: readers pool consecutive windows for an estimate
 * and its confidence interval (the CLI uses Wilson's score interval).
 */
struct daptrace_snap_hdr {
	__u64 seq;
	__u64 start_ns;
	__u64 end_ns;
	__u32 nr_regions;
	__u32 nr_samples;
	__u32 sample_us;
	__u32 aggr_us;
	__u32 flags;
	__u32 last_pass_us;
	/* accuracy probes, appended in ring version 1 */
	__u32 probe_pages;
	__u32 probe_tp;
	__u32 probe_fn;
	__u32 probe_fp;
	__u32 probe_tn;
	__u32 probe_unobserved;
};

/* snap_hdr_size of the first layout, and of the one with probe counts. */
#define DAPTRACE_SNAP_HDR_SIZE_V1	48U
#define DAPTRACE_SNAP_HDR_SIZE_PROBES	72U

/* Per-node sample counts in daptrace_region_rec cover nodes 0..3. */
#define DAPTRACE_REC_NODES		4
/* phys_addr when no present page was sampled in the window. */
#define DAPTRACE_NO_PHYS		(~(__u64)0)
/* region_size of the first layout (v1 without placement). */
#define DAPTRACE_REGION_REC_SIZE_V1	32U
#define DAPTRACE_REGION_REC_SIZE_PLACEMENT	64U

/**
 * struct daptrace_region_rec - one region of one target.
 * @start:		First byte, virtual address.
 * @end:		One past the last byte.
 * @nr_accesses:	Sampling rounds of the window that saw an access.
 * @age:		Aggregation windows at a similar access level.
 * @pid:		Target pid, in the pid namespace it was written in.
 * @nr_unobserved:	Sampling rounds of the window whose page the module
 *			could not observe: accesses through a secondary MMU
 *			(the target's mm has MMU notifiers: KVM, VFIO, SVA),
 *			PFN and I/O mappings, hugetlb page tables that may be
 *			shared between processes, a page that migration or
 *			compaction moved since its sample began (the kernel
 *			may or may not have kept its accessed bit), a page
 *			table changing under every retry.  @nr_accesses
 *			counts among the other rounds; a region with
 *			@nr_unobserved equal
 *			to the window's nr_samples is not observable at all,
 *			which is not the same as not accessed.  Zero in
 *			files of modules that predate it (it was reserved).
 * @phys_addr:		Physical address of the last present page sampled in
 *			the window (the file is root-only), %DAPTRACE_NO_PHYS
 *			if none.
 * @nr_present:		Sampling rounds that found the sampled page present.
 * @nr_huge:		Of those, the rounds whose page a huge entry mapped
 *			(a transparent huge page or a hugetlb page: PMD or
 *			PUD leaf), whose one accessed bit covers all of it: an
 *			access there is an access to any of its base pages.
 *			Zero in files of modules that predate it (it was
 *			reserved).
 * @node_samples:	Of those present, per node below %DAPTRACE_REC_NODES.
 *
 * Placement (appended; present iff region_size >= 64): each sampling round
 * that found the sampled page present counts in @nr_present and, for nodes
 * below DAPTRACE_REC_NODES, in @node_samples[node]; a page on a higher node
 * counts only in @nr_present.  Bytes of the region on node n are estimated as
 * (end - start) * node_samples[n] / nr_samples (the window's sampling rounds
 * in the slot header); the rest is not present or on higher nodes.
 */
struct daptrace_region_rec {
	__u64 start;
	__u64 end;
	__u32 nr_accesses;
	__u32 age;
	__s32 pid;
	__u32 nr_unobserved;
	/* placement, appended in ring version 1 */
	__u64 phys_addr;
	__u32 nr_present;
	__u32 nr_huge;
	__u32 node_samples[DAPTRACE_REC_NODES];
};

#endif /* _UAPI_DAPTRACE_H */
