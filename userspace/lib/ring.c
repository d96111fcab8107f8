// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Lossless snapshot reader for the ring in <root>/snapshots.
 *
 * The kernel keeps the last nr_slots snapshots; snapshot seq lives in slot
 * (seq % nr_slots).  We read the slot's header, its records, then its seq
 * again (seqlock style): the copy is good iff both seqs equal the one we
 * want.  A newer seq means the slot was overwritten: everything older than
 * (newest - nr_slots + 1) is gone, and we count exactly how many we skipped.
 * Sequence numbers are consecutive for the module's lifetime, so "missed"
 * is plain arithmetic on them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/daptrace.h>

#include "internal.h"

/* Bytes of the slot header in this ring (>= what this library knows). */
#define SNAP_HDR_SIZE	(d->snap_hdr_size)
/* A slot being rewritten is torn for microseconds; give it this long. */
#define TORN_RETRY_NS	(50 * 1000 * 1000LL)
#define MAX_ITERATIONS	100000

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int open_file(struct daptrace *d, const char *name, int *fd)
{
	char path[PATH_MAX + 64];
	int err = dt_path(d, name, path, sizeof(path));

	if (err)
		return err;
	if (*fd >= 0)
		close(*fd);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return dt_fail(errno, "open %s", path);
	return 0;
}

/* sysfs_notify protocol: re-read from offset 0 on the same open file. */
static int read_newest(struct daptrace *d, uint64_t *newest)
{
	char buf[32];
	ssize_t n;
	int err;

	do {
		n = pread(d->seq_fd, buf, sizeof(buf) - 1, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return dt_fail(errno, "read %s/snapshot_seq", d->root);
	buf[n] = '\0';
	/* plain read() leaves the sysfs file position where poll expects it */
	lseek(d->seq_fd, n, SEEK_SET);
	err = dt_parse_u64(buf, newest);
	if (err)
		return dt_fail(-err, "%s/snapshot_seq: unexpected content", d->root);
	return 0;
}

int daptrace_reader_init(struct daptrace *d)
{
	uint64_t newest;
	int err;

	err = open_file(d, "snapshot_seq", &d->seq_fd);
	if (!err)
		err = open_file(d, "snapshots", &d->ring_fd);
	if (!err)
		err = read_newest(d, &newest);
	if (err)
		return err;
	d->next_seq = newest + 1;
	d->missed = 0;
	d->pending_missed = 0;
	d->have_geometry = 0;
	return 0;
}

uint64_t daptrace_reader_missed(const struct daptrace *d)
{
	return d->missed;
}

uint32_t daptrace_reader_slots(const struct daptrace *d)
{
	return d->have_geometry ? d->nr_slots : 0;
}

uint64_t daptrace_reader_next_seq(const struct daptrace *d)
{
	return d->next_seq;
}

int daptrace_wait(struct daptrace *d, int timeout_ms)
{
	struct pollfd pfd;
	uint64_t newest;
	int err, r;

	if (d->seq_fd < 0)
		return dt_fail(EINVAL, "daptrace_wait: reader not initialised");
	err = read_newest(d, &newest);
	if (err)
		return err;
	if (newest >= d->next_seq)
		return 1;
	pfd.fd = d->seq_fd;
	pfd.events = POLLPRI | POLLERR;
	pfd.revents = 0;
	r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return dt_fail(errno, "poll %s/snapshot_seq", d->root);
	return r > 0;
}

static int load_geometry(struct daptrace *d)
{
	struct daptrace_ring_hdr h;
	int err;

	err = dt_pread_full(d->ring_fd, &h, sizeof(h), 0);
	if (err == -ENODATA)
		return 0;	/* no ring yet: nothing to read */
	if (err)
		return dt_fail(-err, "read ring header of %s/snapshots", d->root);
	if (h.magic != DAPTRACE_RING_MAGIC)
		return dt_fail(EPROTO, "%s/snapshots: bad magic 0x%08x", d->root,
			       h.magic);
	if (h.version != DAPTRACE_RING_VERSION)
		return dt_fail(EPROTO, "%s/snapshots: unsupported version %u",
			       d->root, h.version);
	if (h.nr_slots == 0)
		return 0;
	if (h.hdr_size < sizeof(h) || h.region_size < DAPTRACE_REGION_REC_SIZE_V1 ||
	    h.snap_hdr_size < DAPTRACE_SNAP_HDR_SIZE_V1 ||
	    h.slot_size < h.snap_hdr_size ||
	    (h.slot_size - h.snap_hdr_size) / h.region_size < h.max_regions)
		return dt_fail(EPROTO, "%s/snapshots: inconsistent geometry "
			       "(hdr %u slot %u region %u max %u)", d->root,
			       h.hdr_size, h.slot_size, h.region_size,
			       h.max_regions);
	if (d->have_geometry && d->generation == h.generation &&
	    d->slot_size == h.slot_size)
		return 1;
	free(d->slot_buf);
	d->slot_buf = malloc(h.slot_size);
	if (!d->slot_buf) {
		d->have_geometry = 0;
		return dt_fail(ENOMEM, "allocating a %u-byte slot buffer", h.slot_size);
	}
	d->generation = h.generation;
	d->hdr_size = h.hdr_size;
	d->slot_size = h.slot_size;
	d->nr_slots = h.nr_slots;
	d->region_size = h.region_size;
	d->snap_hdr_size = h.snap_hdr_size;
	d->max_regions = h.max_regions;
	d->have_geometry = 1;
	return 1;
}

static uint64_t slot_off(const struct daptrace *d, uint64_t seq)
{
	return d->hdr_size + (seq % d->nr_slots) * (uint64_t)d->slot_size;
}

static int read_slot_seq(struct daptrace *d, uint64_t seq, uint64_t *got)
{
	int err = dt_pread_full(d->ring_fd, got, sizeof(*got), slot_off(d, seq));

	if (err == -ENODATA) {
		*got = 0;	/* ring shrank under us: like a torn slot */
		return 0;
	}
	if (err)
		return dt_fail(-err, "read %s/snapshots slot of seq %llu", d->root,
			       (unsigned long long)seq);
	return 0;
}

static int grow_regions(struct daptrace_snapshot *s, uint32_t nr)
{
	struct daptrace_region *r;

	if (nr <= s->capacity)
		return 0;
	r = realloc(s->regions, (size_t)nr * sizeof(*r));
	if (!r)
		return dt_fail(ENOMEM, "allocating %u regions", nr);
	s->regions = r;
	s->capacity = nr;
	return 0;
}

/*
 * True if the ring is still the one load_geometry() read: a re-allocated ring
 * (off, max_nr_regions changed, on) has other slot offsets, and the 8 bytes at
 * the old offset of our slot's seq may be region data equal to that seq.
 * Generations never repeat, so an unchanged one means every read since
 * load_geometry() hit the same ring.
 */
static int same_generation(struct daptrace *d, int *same)
{
	uint64_t gen;
	int err = dt_pread_full(d->ring_fd, &gen, sizeof(gen),
				offsetof(struct daptrace_ring_hdr, generation));

	if (err == -ENODATA) {
		*same = 0;
		return 0;
	}
	if (err)
		return dt_fail(-err, "read %s/snapshots generation", d->root);
	*same = gen == d->generation;
	return 0;
}

/*
 * Copy snapshot @seq into @s.  Returns 1 on success, 0 if the slot did not
 * hold @seq consistently (then *got is the seq seen, 0 if torn).
 */
static int read_slot(struct daptrace *d, uint64_t seq,
		     struct daptrace_snapshot *s, uint64_t *got)
{
	struct daptrace_snap_hdr h = { 0 };
	uint64_t off = slot_off(d, seq), seq2;
	size_t body;
	int err, same = 0;

	err = dt_pread_full(d->ring_fd, d->slot_buf, SNAP_HDR_SIZE, off);
	if (err == -ENODATA) {
		*got = 0;
		return 0;
	}
	if (err)
		return dt_fail(-err, "read %s/snapshots slot of seq %llu",
			       d->root, (unsigned long long)seq);
	/* an older module's header is shorter: no probe counts (zero) */
	memcpy(&h, d->slot_buf, SNAP_HDR_SIZE < sizeof(h) ? SNAP_HDR_SIZE : sizeof(h));
	*got = h.seq;
	if (h.seq != seq)
		return 0;
	if (h.nr_regions > d->max_regions) {
		*got = 0;	/* torn header; the seq re-check decides */
		err = read_slot_seq(d, seq, &seq2);
		if (err)
			return err;
		if (seq2 != seq)
			return 0;
		return dt_fail(EPROTO, "%s/snapshots: seq %llu has %u regions, max %u",
			       d->root, (unsigned long long)seq, h.nr_regions,
			       d->max_regions);
	}
	body = (size_t)h.nr_regions * d->region_size;
	err = dt_pread_full(d->ring_fd, d->slot_buf + SNAP_HDR_SIZE, body,
			    off + SNAP_HDR_SIZE);
	if (err == -ENODATA) {
		*got = 0;
		return 0;
	}
	if (err)
		return dt_fail(-err, "read %s/snapshots records of seq %llu",
			       d->root, (unsigned long long)seq);
	err = read_slot_seq(d, seq, &seq2);
	if (err)
		return err;
	if (seq2 != seq) {
		*got = seq2;
		return 0;
	}
	err = same_generation(d, &same);
	if (err)
		return err;
	if (!same) {
		*got = 0;	/* torn across a ring re-allocation */
		return 0;
	}
	err = grow_regions(s, h.nr_regions);
	if (err)
		return err;
	for (uint32_t i = 0; i < h.nr_regions; i++) {
		struct daptrace_region_rec rec = { .phys_addr = DAPTRACE_NO_PHYS };
		struct daptrace_region *r = &s->regions[i];

		/* an older module's records are shorter: no placement */
		memcpy(&rec, d->slot_buf + SNAP_HDR_SIZE + (size_t)i * d->region_size,
		       d->region_size < sizeof(rec) ? d->region_size : sizeof(rec));
		r->start = rec.start;
		r->end = rec.end;
		r->nr_accesses = rec.nr_accesses;
		r->age = rec.age;
		r->pid = rec.pid;
		r->nr_present = rec.nr_present;
		for (int n = 0; n < DAPTRACE_NR_NODES; n++)
			r->node_samples[n] = n < DAPTRACE_REC_NODES ?
					     rec.node_samples[n] : 0;
		r->phys_addr = rec.phys_addr;
		/* "reserved" (zero) in the layout of older modules */
		r->nr_unobserved = rec.nr_unobserved;
		r->nr_huge = rec.nr_huge;
	}
	s->placement = d->region_size >= DAPTRACE_REGION_REC_SIZE_PLACEMENT;
	s->seq = h.seq;
	s->start_ns = h.start_ns;
	s->end_ns = h.end_ns;
	s->nr_samples = h.nr_samples;
	s->sample_us = h.sample_us;
	s->aggr_us = h.aggr_us;
	s->flags = h.flags;
	s->nr_regions = h.nr_regions;
	s->probes = d->snap_hdr_size >= DAPTRACE_SNAP_HDR_SIZE_PROBES;
	s->probe_pages = h.probe_pages;
	s->probe_tp = h.probe_tp;
	s->probe_fn = h.probe_fn;
	s->probe_fp = h.probe_fp;
	s->probe_tn = h.probe_tn;
	s->probe_unobserved = h.probe_unobserved;
	return 1;
}

/* Oldest seq >= @from still in the ring, 0 if none. */
static int scan_oldest(struct daptrace *d, uint64_t from, uint64_t *found)
{
	uint64_t best = 0, seq;
	int err;

	for (uint32_t i = 0; i < d->nr_slots; i++) {
		err = read_slot_seq(d, i, &seq);
		if (err)
			return err;
		if (seq >= from && (!best || seq < best))
			best = seq;
	}
	*found = best;
	return 0;
}

static void skip_to(struct daptrace *d, uint64_t seq)
{
	if (seq > d->next_seq) {
		d->pending_missed += seq - d->next_seq;
		d->missed += seq - d->next_seq;
		d->next_seq = seq;
	}
}

int daptrace_read_next(struct daptrace *d, struct daptrace_snapshot *s)
{
	uint64_t newest, oldest, got = 0;
	int64_t torn_since = 0;
	int err;

	if (d->seq_fd < 0 || d->ring_fd < 0)
		return dt_fail(EINVAL, "daptrace_read_next: reader not initialised");
	for (int it = 0; it < MAX_ITERATIONS; it++) {
		err = read_newest(d, &newest);
		if (err)
			return err;
		if (newest < d->next_seq)
			goto none;
		err = load_geometry(d);
		if (err < 0)
			return err;
		if (err == 0)
			goto none;
		oldest = newest >= d->nr_slots ? newest - d->nr_slots + 1 : 1;
		skip_to(d, oldest);

		err = read_slot(d, d->next_seq, s, &got);
		if (err < 0)
			return err;
		if (err == 1) {
			s->missed_before = d->pending_missed;
			d->pending_missed = 0;
			d->next_seq++;
			return 1;
		}
		if (got >= d->next_seq + d->nr_slots) {
			/* overwritten: seqs up to got - nr_slots are gone */
			skip_to(d, got - d->nr_slots + 1);
			continue;
		}
		/* torn, stale or a new generation: give the writer a moment */
		if (!torn_since)
			torn_since = now_ns();
		if (now_ns() - torn_since < TORN_RETRY_NS) {
			struct timespec ts = { 0, 200 * 1000 };

			nanosleep(&ts, NULL);
			continue;
		}
		/*
		 * Still not there: the ring was re-allocated (generation
		 * change) or overwritten in a way the arithmetic above cannot
		 * see.  Resume at the oldest snapshot the ring still holds; if
		 * it holds none we want, everything announced so far is lost.
		 */
		err = scan_oldest(d, d->next_seq, &got);
		if (err)
			return err;
		skip_to(d, got ? got : newest + 1);
		torn_since = 0;
	}
	return dt_fail(EAGAIN, "%s/snapshots: could not read seq %llu consistently",
		       d->root, (unsigned long long)d->next_seq);
none:
	/* skipped snapshots are reported with the next one that arrives */
	return 0;
}

void daptrace_snapshot_free(struct daptrace_snapshot *s)
{
	free(s->regions);
	s->regions = NULL;
	s->capacity = 0;
	s->nr_regions = 0;
}

int daptrace_region_observed(const struct daptrace_snapshot *s,
			     const struct daptrace_region *r)
{
	return s->nr_samples > r->nr_unobserved;
}

uint64_t daptrace_region_node_bytes(const struct daptrace_snapshot *s,
				    const struct daptrace_region *r, int nid)
{
	uint32_t n;

	if (!s->placement || !s->nr_samples || nid >= DAPTRACE_NR_NODES)
		return 0;
	n = nid < 0 ? r->nr_present : r->node_samples[nid];
	if (n > s->nr_samples)
		n = s->nr_samples;
	return (uint64_t)((unsigned __int128)(r->end - r->start) * n / s->nr_samples);
}
