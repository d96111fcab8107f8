/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libdaptrace - control daptrace and read its snapshots from userspace.
 *
 * The library wraps /sys/kernel/daptrace/ (override the root with the
 * environment variable DAPTRACE_SYSFS, e.g. for tests on a fake tree):
 * attributes, targets, on/off, counters, and a lossless reader for the
 * snapshot ring (include/uapi/linux/daptrace.h).
 *
 * Errors: every function returning int returns >= 0 on success and -errno
 * on failure, and also sets errno.  daptrace_last_error() then returns a
 * message for the calling thread that names what failed, e.g.
 *   "write /sys/kernel/daptrace/aggr_us = 50: Invalid argument"
 *
 * Example: a proactive-reclaim / tiering loop that demotes cold memory.
 *
 *	struct daptrace *d;
 *	struct daptrace_attrs a;
 *	struct daptrace_snapshot s = { 0 };
 *
 *	if (daptrace_open(&d) < 0)
 *		errx(1, "%s", daptrace_last_error());
 *	daptrace_attrs_default(&a);
 *	a.aggr_us = 200000;			// 200 ms windows
 *	if (daptrace_set_attrs(d, &a) < 0 || daptrace_add_target(d, pid) < 0 ||
 *	    daptrace_reader_init(d) < 0 || daptrace_start(d) < 0)
 *		errx(1, "%s", daptrace_last_error());
 *	for (;;) {
 *		if (daptrace_wait(d, 1000) < 0)
 *			break;
 *		while (daptrace_read_next(d, &s) > 0) {
 *			for (unsigned int i = 0; i < s.nr_regions; i++) {
 *				const struct daptrace_region *r = &s.regions[i];
 *				// idle for >= 50 windows (10 s): a candidate
 *				// for process_madvise(MADV_PAGEOUT) or demotion
 *				if (r->nr_accesses == 0 && r->age >= 50)
 *					reclaim(r->pid, r->start, r->end);
 *			}
 *		}
 *	}
 *	daptrace_stop(d);
 *	daptrace_snapshot_free(&s);
 *	daptrace_close(d);
 *
 * A handle is not thread-safe; use one handle per thread.
 */
#ifndef DAPTRACE_LIB_H
#define DAPTRACE_LIB_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DAPTRACE_SYSFS_DEFAULT	"/sys/kernel/daptrace"
/*
 * The module's limit on targets, live and exited (an exited target counts
 * until it is removed with daptrace_remove_target()).  Modules before the
 * limit was raised took 64 and refused more with ENOSPC.
 */
#define DAPTRACE_MAX_TARGETS	4096

/* Values of the tlb_flush attribute. */
enum daptrace_tlb_flush {
	DAPTRACE_TLB_NONE,	/* never flush: cheapest, hot pages may read cold */
	DAPTRACE_TLB_ROUND,	/* flush all CPUs once per sampling round */
	DAPTRACE_TLB_MM,	/* flush only where the target's mm may be cached */
	DAPTRACE_TLB_NR,
};

/**
 * struct daptrace_attrs - monitoring attributes (sysfs files of the same name).
 * @sample_us:	 sampling interval, µs
 * @aggr_us:	 aggregation interval (one snapshot each), µs
 * @update_us:	 memory-map update interval, µs
 * @min_nr_regions: lower bound on regions per target
 * @max_nr_regions: upper bound on regions per target
 * @tlb_flush:	 TLB flush policy when clearing accessed bits
 */
struct daptrace_attrs {
	uint64_t sample_us;
	uint64_t aggr_us;
	uint64_t update_us;
	uint64_t min_nr_regions;
	uint64_t max_nr_regions;
	enum daptrace_tlb_flush tlb_flush;
};

/**
 * struct daptrace_counters - the read-only counters, all since the last "on".
 */
struct daptrace_counters {
	uint64_t nr_regions;		/* current regions, all targets */
	uint64_t nr_samples;		/* sampling rounds */
	uint64_t nr_snapshots;		/* snapshots published */
	uint64_t nr_snapshots_missed;	/* overwritten before anyone read them */
	uint64_t worker_cpu_us;		/* worker thread CPU time */
	uint64_t snapshot_seq;		/* seq of the newest snapshot, 0 if none */
};

enum daptrace_target_state {
	DAPTRACE_TARGET_IDLE,
	DAPTRACE_TARGET_MONITORING,
	DAPTRACE_TARGET_EXITED,
	DAPTRACE_TARGET_JOINING,	/* written while on: joins at the next window */
	/*
	 * It exec()ed an image the access check at the write may no longer
	 * admit (setuid, file capabilities, an LSM transition, unreadable):
	 * its watch ended, like an exit, and none of its new image's regions
	 * are published.  Remove it; adding it again checks anew.
	 */
	DAPTRACE_TARGET_REVOKED,
};

struct daptrace_target {
	pid_t pid;
	enum daptrace_target_state state;
};

/* Nodes with per-node sample counts in struct daptrace_region. */
#define DAPTRACE_NR_NODES	4
/* daptrace_region.phys_addr when no present page was sampled. */
#define DAPTRACE_PHYS_NONE	UINT64_MAX

/**
 * struct daptrace_region - one monitored region of one target.
 *
 * Placement (valid iff the snapshot's @placement is set; otherwise zero, and
 * @phys_addr DAPTRACE_PHYS_NONE): of the window's sampling rounds,
 * @nr_present found the sampled page present, @node_samples[n] of them on
 * node n (nodes >= DAPTRACE_NR_NODES count only in @nr_present), @nr_huge
 * of them mapped by a huge entry (a transparent huge page or a hugetlb
 * page), whose one accessed bit stands for all its base pages: an access
 * counted there was to at least one of them; @phys_addr is the last present
 * page sampled.  daptrace_region_node_bytes()
 * turns the counts into bytes.
 */
struct daptrace_region {
	uint64_t start;		/* first byte (virtual address) */
	uint64_t end;		/* one past the last byte */
	uint32_t nr_accesses;	/* sampling rounds in the window that saw an access */
	uint32_t age;		/* windows the access level stayed similar */
	pid_t pid;		/* target the region belongs to */
	uint32_t nr_present;
	uint32_t node_samples[DAPTRACE_NR_NODES];
	uint64_t phys_addr;
	/*
	 * Sampling rounds of the window whose page could not be observed
	 * (secondary MMU, PFN/IO mapping, shared hugetlb); nr_accesses counts
	 * among the others.  Equal to the snapshot's nr_samples: the region
	 * is not observable at all, which is not "not accessed".  0 from
	 * modules that predate it.
	 */
	uint32_t nr_unobserved;
	uint32_t nr_huge;	/* placement, above; 0 from modules that predate it */
};

/* Flags in daptrace_snapshot.flags (same values as the kernel's). */
#define DAPTRACE_SNAPSHOT_TARGET_EXITED	0x1U	/* a target exited in the window */
#define DAPTRACE_SNAPSHOT_LAST		0x2U	/* the last before the worker stopped */
#define DAPTRACE_SNAPSHOT_TRUNCATED	0x4U	/* more regions than the slot holds */
#define DAPTRACE_SNAPSHOT_TARGET_EXEC	0x8U	/* a target exec()ed in the window */
#define DAPTRACE_SNAPSHOT_TARGET_JOINED	0x10U	/* targets joined at its start */
#define DAPTRACE_SNAPSHOT_TARGET_REVOKED 0x20U	/* a target's watch ended at an exec */

/**
 * struct daptrace_snapshot - one aggregation window, all targets.
 * @seq:	 sequence number, consecutive from 1 for the module's lifetime
 * @start_ns:	 window start, CLOCK_MONOTONIC ns
 * @end_ns:	 window end, CLOCK_MONOTONIC ns
 * @nr_samples:	 sampling rounds in the window (nr_accesses <= nr_samples)
 * @sample_us:	 attributes in force for this window
 * @aggr_us:
 * @flags:	 DAPTRACE_SNAPSHOT_*
 * @missed_before: snapshots lost between the previously read one and this
 * @nr_regions:	 entries in @regions
 * @regions:	 owned by the snapshot; reused by the next daptrace_read_next()
 * @capacity:	 allocated entries (internal)
 * @placement:	 1 if the module reports placement (regions' node counts)
 * @probes:	 1 if the module reports accuracy probes (the fields below;
 *		 all 0 from an older module)
 * @probe_pages: probes of the window (0: probing off): pages given
 *		 page-level truth, compared with their region's verdict
 * @probe_tp:	 accessed, and their region read accessed
 * @probe_fn:	 accessed, their region read not accessed
 * @probe_fp:	 not accessed, their region read accessed
 * @probe_tn:	 neither
 * @probe_unobserved: truth or region verdict not observable, in none of
 *		 the four (the CLI leaves them out of its estimate)
 *
 * Zero-initialise before the first daptrace_read_next(), release with
 * daptrace_snapshot_free().
 */
struct daptrace_snapshot {
	uint64_t seq;
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t nr_samples;
	uint32_t sample_us;
	uint32_t aggr_us;
	uint32_t flags;
	uint64_t missed_before;
	uint32_t nr_regions;
	struct daptrace_region *regions;
	uint32_t capacity;
	uint32_t placement;
	uint32_t probes;
	uint32_t probe_pages;
	uint32_t probe_tp;
	uint32_t probe_fn;
	uint32_t probe_fp;
	uint32_t probe_tn;
	uint32_t probe_unobserved;
};

/*
 * Whether any check of @s's window observed @r: false if every sampling
 * round's check of it could not be made (@r->nr_unobserved reaches
 * @s->nr_samples) or the window had no rounds at all.  Such a region's
 * nr_accesses of 0 means nothing, not "idle": count its bytes as not
 * observable, in neither the working set nor the idle memory.  (A module
 * older than nr_unobserved leaves it 0: observed, as it then reported.)
 */
int daptrace_region_observed(const struct daptrace_snapshot *s,
			     const struct daptrace_region *r);

/*
 * Estimated bytes of @r resident on node @nid in @s's window:
 * size * node_samples[nid] / nr_samples; 0 without placement or for
 * @nid outside [0, DAPTRACE_NR_NODES).  @nid < 0 gives resident bytes on
 * any node (size * nr_present / nr_samples).  The tiering policy can rank
 * regions by node from the snapshot without asking the kernel again.
 */
uint64_t daptrace_region_node_bytes(const struct daptrace_snapshot *s,
				    const struct daptrace_region *r, int nid);

struct daptrace;

/* Message naming the last failure of this thread ("" if none). */
const char *daptrace_last_error(void);

/* Open the interface at $DAPTRACE_SYSFS or DAPTRACE_SYSFS_DEFAULT. */
int daptrace_open(struct daptrace **dp);
/* Open the interface rooted at @root (a directory). */
int daptrace_open_root(struct daptrace **dp, const char *root);
void daptrace_close(struct daptrace *d);
const char *daptrace_root(const struct daptrace *d);
/*
 * The kernel series the module was built for ("6.12", its kernel_series
 * file) into @buf, and in @verified whether daptrace is verified on that
 * series (kernel_series_verified): 1, or 0 for a module built on request
 * with DAPTRACE_UNVERIFIED=1.  -ENOENT from a module without these files.
 */
int daptrace_kernel_series(struct daptrace *d, char *buf, size_t len,
			   int *verified);

/* Attributes. */
void daptrace_attrs_default(struct daptrace_attrs *a);
/*
 * Check @a against the kernel's rules; on failure returns -EINVAL and, if
 * @why is not NULL, stores a static string naming the broken rule.
 */
int daptrace_attrs_validate(const struct daptrace_attrs *a, const char **why);
const char *daptrace_tlb_flush_name(enum daptrace_tlb_flush t);
int daptrace_tlb_flush_parse(const char *s, enum daptrace_tlb_flush *t);
int daptrace_get_attrs(struct daptrace *d, struct daptrace_attrs *a);
/*
 * Write only the attributes that differ from the current ones, in an order
 * that keeps every intermediate state valid (the kernel validates each write
 * against the current values of the others).  Fails with -EBUSY while on.
 */
int daptrace_set_attrs(struct daptrace *d, const struct daptrace_attrs *a);

/* One step of an attribute write plan: write @value to attribute @attr. */
enum daptrace_attr_id {
	DAPTRACE_ATTR_SAMPLE,
	DAPTRACE_ATTR_AGGR,
	DAPTRACE_ATTR_UPDATE,
	DAPTRACE_ATTR_MIN_REGIONS,
	DAPTRACE_ATTR_MAX_REGIONS,
	DAPTRACE_ATTR_NR_NUMERIC,
};
struct daptrace_attr_step {
	enum daptrace_attr_id attr;
	uint64_t value;
};
const char *daptrace_attr_file(enum daptrace_attr_id id);
/*
 * Compute the writes that take @cur to @want with every intermediate state
 * valid.  Returns the number of steps (<= @max) or -EINVAL.  (Exposed for
 * tests and for callers that drive their own writes.)
 */
int daptrace_attrs_plan(const struct daptrace_attrs *cur,
			const struct daptrace_attrs *want,
			struct daptrace_attr_step *steps, int max);

/**
 * struct daptrace_intervals_goal - the module's interval auto-tuning
 * (intervals_goal_* files; DAMON's intervals_goal): every @aggrs windows
 * the sampling interval is tuned so that the checks see @access_bp basis
 * points of the accesses they could, within [@min_sample_us,
 * @max_sample_us]; the aggregation interval keeps its ratio to it.
 * @aggrs 0 is off.
 */
struct daptrace_intervals_goal {
	uint64_t access_bp;
	uint64_t aggrs;
	uint64_t min_sample_us;
	uint64_t max_sample_us;
};

/* DAMON_STAT's: 4 % over 3 windows, 5 ms to 10 s. */
void daptrace_intervals_goal_default(struct daptrace_intervals_goal *g);
/* Check @g as the kernel does; -EINVAL with a static reason in @why. */
int daptrace_intervals_goal_validate(const struct daptrace_intervals_goal *g,
				     const char **why);
int daptrace_get_intervals_goal(struct daptrace *d,
				struct daptrace_intervals_goal *g);
/*
 * Write @g (while off).  With @g->aggrs > 0 the sampling interval must lie
 * within its bounds already (daptrace_set_attrs() first), else -EINVAL.
 */
int daptrace_set_intervals_goal(struct daptrace *d,
				const struct daptrace_intervals_goal *g);

/* Targets. */
int daptrace_add_target(struct daptrace *d, pid_t pid);
int daptrace_remove_target(struct daptrace *d, pid_t pid);
/*
 * Fills up to @max entries from target_status; returns the number of
 * targets listed there.  A module lists at most one page of targets (then
 * a line "# N more", skipped here): with many targets, the list is the
 * first few, and daptrace_nr_targets() says how many there are.
 */
int daptrace_get_targets(struct daptrace *d, struct daptrace_target *t, int max);
/*
 * The number of targets, live and exited (the module's nr_targets file;
 * with a module that has none, the targets listed in target_status).
 */
int daptrace_nr_targets(struct daptrace *d);
const char *daptrace_target_state_name(enum daptrace_target_state s);

/* State. */
int daptrace_start(struct daptrace *d);
/*
 * Physical addresses in snapshots (daptrace_region.phys_addr) are opt-in:
 * set before daptrace_start(), while monitoring is off.
 */
int daptrace_set_phys_addr(struct daptrace *d, int on);
int daptrace_stop(struct daptrace *d);
/* Returns 1 if on, 0 if off. */
int daptrace_is_on(struct daptrace *d);
int daptrace_get_counters(struct daptrace *d, struct daptrace_counters *c);
/*
 * One counter file by name (e.g. "nr_samples_late", "nr_samples_busy"): a
 * counter that struct daptrace_counters does not carry, or one added by a
 * later module, without changing the struct.  -EINVAL for a name with '/'.
 */
int daptrace_read_counter(struct daptrace *d, const char *name, uint64_t *v);

/*
 * Snapshot reader.  daptrace_reader_init() positions the reader after the
 * newest published snapshot, so call it before daptrace_start() to read
 * every snapshot of the run.  daptrace_wait() returns 1 when a snapshot the
 * reader has not read yet is (or may be) available, 0 on timeout (-1 waits
 * forever).  daptrace_read_next() returns 1 with the next snapshot in @s,
 * 0 when the reader has caught up.  Snapshots the kernel overwrote before
 * they were read are skipped; their exact number is in s->missed_before and
 * accumulates in daptrace_reader_missed().
 */
int daptrace_reader_init(struct daptrace *d);
int daptrace_wait(struct daptrace *d, int timeout_ms);
int daptrace_read_next(struct daptrace *d, struct daptrace_snapshot *s);
uint64_t daptrace_reader_missed(const struct daptrace *d);
uint64_t daptrace_reader_next_seq(const struct daptrace *d);
/*
 * Snapshots the kernel's ring holds, once the reader has read one (0
 * before): a reader that drains at least every slots / 2 windows misses
 * none, without waking for each one.
 */
uint32_t daptrace_reader_slots(const struct daptrace *d);
void daptrace_snapshot_free(struct daptrace_snapshot *s);

/*
 * For online policies with their own event loop.
 *
 * daptrace_poll_fd(): after daptrace_reader_init(), the descriptor that
 * becomes ready (POLLPRI | POLLERR for poll(2), EPOLLPRI for epoll) when a
 * snapshot is published.  After each wake-up drain it with
 * daptrace_read_next() until it returns 0: that re-reads the file and so
 * re-arms the notification.  Owned by the handle: don't close it.
 */
int daptrace_poll_fd(const struct daptrace *d);

#ifdef __cplusplus
}
#endif

#endif /* DAPTRACE_LIB_H */
