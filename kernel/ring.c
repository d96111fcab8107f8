// SPDX-License-Identifier: GPL-2.0
/*
 * The snapshot ring: the last DAPTRACE_RING_SLOTS snapshots in one vmalloc'd
 * buffer that is exposed byte for byte as a binary sysfs file.
 *
 * Why a ring in a file rather than a stream: sysfs has no per-open state, a
 * read returns at most a page, and several readers (a recorder, a policy)
 * may want the same snapshots.  Fixed slots at fixed offsets let every reader
 * find snapshot @seq by itself, and the seqlock-style slot header lets it
 * detect a slot that was rewritten while it copied it out page by page.
 */
#include <linux/daptrace.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "ring.h"

#define RING_HDR_SIZE	64

/**
 * struct daptrace_ring - the ring and what the kernel tracks about readers.
 * @buf:	Ring header followed by the slots.
 * @size:	Bytes in @buf.
 * @slot_size:	Bytes per slot.
 * @max_regions: Records that fit in a slot.
 * @consumed:	Per slot, the seq of the last copy of it some reader read to
 *		its last valid byte; lets the writer count snapshots that were
 *		overwritten unread.  Racy by design (readers and the writer do
 *		not synchronize): it feeds a counter, never the data.
 */
struct daptrace_ring {
	void *buf;
	size_t size;
	u32 slot_size;
	u32 max_regions;
	u64 consumed[DAPTRACE_RING_SLOTS];
};

static_assert(sizeof(struct daptrace_ring_hdr) <= RING_HDR_SIZE);
static_assert(sizeof(struct daptrace_snap_hdr) % 8 == 0);
static_assert(sizeof(struct daptrace_snap_hdr) == DAPTRACE_SNAP_HDR_SIZE_PROBES);
static_assert(sizeof(struct daptrace_region_rec) % 8 == 0);
static_assert(sizeof(struct daptrace_region_rec) == DAPTRACE_REGION_REC_SIZE_PLACEMENT);

static struct daptrace_snap_hdr *ring_slot(struct daptrace_ring *ring,
					   unsigned int idx)
{
	return ring->buf + RING_HDR_SIZE + (size_t)idx * ring->slot_size;
}

struct daptrace_ring *daptrace_ring_alloc(unsigned int max_regions, u64 generation)
{
	struct daptrace_ring *ring;
	struct daptrace_ring_hdr *hdr;
	size_t slot_size;

	slot_size = sizeof(struct daptrace_snap_hdr) +
		    (size_t)max_regions * sizeof(struct daptrace_region_rec);
	slot_size = round_up(slot_size, 64);

	ring = kzalloc(sizeof(*ring), GFP_KERNEL);
	if (!ring)
		return NULL;
	ring->slot_size = slot_size;
	ring->max_regions = max_regions;
	ring->size = RING_HDR_SIZE + slot_size * DAPTRACE_RING_SLOTS;
	ring->buf = vzalloc(ring->size);
	if (!ring->buf) {
		kfree(ring);
		return NULL;
	}

	hdr = ring->buf;
	hdr->magic = DAPTRACE_RING_MAGIC;
	hdr->version = DAPTRACE_RING_VERSION;
	hdr->hdr_size = RING_HDR_SIZE;
	hdr->slot_size = slot_size;
	hdr->nr_slots = DAPTRACE_RING_SLOTS;
	hdr->region_size = sizeof(struct daptrace_region_rec);
	hdr->max_regions = max_regions;
	hdr->snap_hdr_size = sizeof(struct daptrace_snap_hdr);
	hdr->generation = generation;
	return ring;
}

/**
 * daptrace_ring_grow() - a larger copy of @old, for more regions per slot.
 * @old:		The ring in use; nothing writes it meanwhile (the
 *			caller is its one writer).
 * @max_regions:	Records a slot must hold now, more than @old's.
 * @generation:		The new ring's, see daptrace_ring_alloc().
 *
 * Every published snapshot moves to the same slot of the new ring, with
 * what readers have consumed of it, so that a reader that finds the new
 * generation picks up at the seq it wanted and loses nothing.
 *
 * Return: the new ring, or NULL (@old is left as it was).
 */
struct daptrace_ring *daptrace_ring_grow(struct daptrace_ring *old,
					 unsigned int max_regions,
					 u64 generation)
{
	struct daptrace_ring *ring = daptrace_ring_alloc(max_regions, generation);
	struct daptrace_snap_hdr *from, *to;
	unsigned int idx, nr;

	if (!ring)
		return NULL;
	for (idx = 0; idx < DAPTRACE_RING_SLOTS; idx++) {
		from = ring_slot(old, idx);
		to = ring_slot(ring, idx);
		nr = min(from->nr_regions, old->max_regions);
		memcpy(to, from, sizeof(*to) + (size_t)nr *
		       sizeof(struct daptrace_region_rec));
		ring->consumed[idx] = READ_ONCE(old->consumed[idx]);
	}
	return ring;
}

void daptrace_ring_free(struct daptrace_ring *ring)
{
	if (!ring)
		return;
	vfree(ring->buf);
	kfree(ring);
}

size_t daptrace_ring_size(const struct daptrace_ring *ring)
{
	return ring->size;
}

unsigned int daptrace_ring_max_regions(const struct daptrace_ring *ring)
{
	return ring->max_regions;
}

/**
 * daptrace_ring_begin() - open the slot for @seq for writing.
 * @ring:		The ring.
 * @seq:		Sequence number about to be published.
 * @overwrote_unread:	Set if the slot held a snapshot no reader finished.
 *
 * Marks the slot as being written (seq 0) before any byte of it changes, so
 * a reader that copied part of the old contents sees the change when it
 * re-reads the slot's seq.
 */
struct daptrace_snap_hdr *daptrace_ring_begin(struct daptrace_ring *ring, u64 seq,
					      bool *overwrote_unread)
{
	unsigned int idx = seq % DAPTRACE_RING_SLOTS;
	struct daptrace_snap_hdr *slot = ring_slot(ring, idx);
	u64 old = READ_ONCE(slot->seq);

	*overwrote_unread = old && READ_ONCE(ring->consumed[idx]) != old;
	WRITE_ONCE(slot->seq, 0);
	/* Pairs with the smp_rmb() in the readers: seq 0 before the body. */
	smp_wmb();
	return slot;
}

struct daptrace_region_rec *daptrace_ring_records(struct daptrace_snap_hdr *slot)
{
	return (struct daptrace_region_rec *)(slot + 1);
}

void daptrace_ring_commit(struct daptrace_snap_hdr *slot, u64 seq)
{
	/* The body before the seq that validates it. */
	smp_wmb();
	WRITE_ONCE(slot->seq, seq);
}

/* The slots [*first, *last] that bytes [off, off + count) touch, if any. */
static bool ring_slots_touched(const struct daptrace_ring *ring, loff_t off,
			       size_t count, unsigned int *first,
			       unsigned int *last)
{
	loff_t end = off + count;

	if (end <= RING_HDR_SIZE)
		return false;
	*first = off < RING_HDR_SIZE ? 0 : (off - RING_HDR_SIZE) / ring->slot_size;
	*last = min_t(loff_t, (end - 1 - RING_HDR_SIZE) / ring->slot_size,
		      DAPTRACE_RING_SLOTS - 1);
	return *first <= *last;
}

/*
 * Remember the slots whose last valid byte this read delivered, each only
 * if its seq was the same before the copy (@before) as after: a slot the
 * worker rewrote meanwhile reached the reader torn, and the snapshot now in
 * it was not read.
 */
static void ring_mark_consumed(struct daptrace_ring *ring, loff_t off,
			       size_t count, const u64 *before)
{
	loff_t end = off + count;
	unsigned int idx, first, last;

	if (!ring_slots_touched(ring, off, count, &first, &last))
		return;
	for (idx = first; idx <= last; idx++) {
		struct daptrace_snap_hdr *slot = ring_slot(ring, idx);
		loff_t base = RING_HDR_SIZE + (loff_t)idx * ring->slot_size;
		u32 nr = min(READ_ONCE(slot->nr_regions), ring->max_regions);
		loff_t used_end = base + sizeof(*slot) +
				  (loff_t)nr * sizeof(struct daptrace_region_rec);
		u64 seq = READ_ONCE(slot->seq);

		if (seq && seq == before[idx] && off < used_end && end >= used_end)
			WRITE_ONCE(ring->consumed[idx], seq);
	}
}

/**
 * daptrace_ring_read() - copy raw ring bytes for the binary sysfs file.
 * @ring:	The ring, kept alive by the caller.
 * @buf:	Destination.
 * @off:	Offset in the file.
 * @count:	Bytes wanted (sysfs passes at most a page).
 *
 * The copy races with the worker by design; readers validate slots through
 * their seq (see the uapi header), hence data_race() and the barriers.
 */
ssize_t daptrace_ring_read(struct daptrace_ring *ring, char *buf, loff_t off,
			   size_t count)
{
	u64 before[DAPTRACE_RING_SLOTS];
	unsigned int idx, first, last;

	if (off < 0)
		return -EINVAL;
	if (off >= ring->size)
		return 0;
	count = min_t(size_t, count, ring->size - off);

	if (ring_slots_touched(ring, off, count, &first, &last))
		for (idx = first; idx <= last; idx++)
			before[idx] = READ_ONCE(ring_slot(ring, idx)->seq);
	/*
	 * Order this copy after the seqs just read and the reader's previous
	 * read of a slot seq; the worker zeroes a slot's seq before it
	 * changes any byte of it (daptrace_ring_begin()).
	 */
	smp_rmb();
	/* Racing with the worker is expected: readers validate by seq. */
	data_race(memcpy(buf, ring->buf + off, count));
	/* Order this copy before the seqs read next, here and by the reader. */
	smp_rmb();
	ring_mark_consumed(ring, off, count, before);
	return count;
}

/**
 * daptrace_ring_copy_snapshot() - consistent copy of snapshot @seq.
 * @ring:	The ring, kept alive by the caller.
 * @seq:	Wanted snapshot.
 * @hdr:	Receives the slot header.
 * @recs:	Receives up to @max_recs records.
 * @max_recs:	Capacity of @recs.
 *
 * Return: records copied, -ENOENT if the slot does not hold @seq (not yet,
 * not any more, or not in this ring: a new ring starts empty), or -EAGAIN if
 * it was rewritten during the copy.
 */
int daptrace_ring_copy_snapshot(struct daptrace_ring *ring, u64 seq,
				struct daptrace_snap_hdr *hdr,
				struct daptrace_region_rec *recs,
				unsigned int max_recs)
{
	struct daptrace_snap_hdr *slot = ring_slot(ring, seq % DAPTRACE_RING_SLOTS);
	unsigned int nr;

	if (READ_ONCE(slot->seq) != seq)
		return -ENOENT;
	/* Pairs with daptrace_ring_begin(): the seq before the body. */
	smp_rmb();
	/* The worker may rewrite the slot meanwhile: validated by seq below. */
	data_race(memcpy(hdr, slot, sizeof(*hdr)));
	nr = min3(hdr->nr_regions, max_recs, ring->max_regions);
	/* Same race as above, same validation. */
	data_race(memcpy(recs, daptrace_ring_records(slot), nr * sizeof(*recs)));
	/* Pairs with daptrace_ring_begin(): the body before the seq re-read. */
	smp_rmb();
	if (READ_ONCE(slot->seq) != seq)
		return -EAGAIN;
	return nr;
}
