/* SPDX-License-Identifier: GPL-2.0 */
/*
 * daptrace core: the region model, aggregation, adaptive merge/split, attribute
 * validation and snapshot assembly.
 *
 * This file and core.c must stay free of page-table code, kthreads, kernel
 * version checks and <linux/mm.h>: they are compiled unchanged into the host
 * unit-test binary (tests/unit/) against a small shim of <linux/list.h>,
 * <linux/slab.h>, <linux/types.h>, <linux/minmax.h> and <linux/errno.h>.
 * Granularity and randomness are members of the context so tests can run with
 * byte granularity and a fixed seed.
 *
 * Locking: the core does no locking of its own.  A context's targets and
 * regions are owned by exactly one thread at a time: the worker while
 * monitoring is on, otherwise the sysfs interface under its config mutex.
 */
#ifndef _DAPTRACE_CORE_H
#define _DAPTRACE_CORE_H

#include <linux/list.h>
#include <linux/types.h>

struct daptrace_region_rec;

/* Defaults equal DAMON's so results are comparable. */
#define DAPTRACE_DEF_SAMPLE_US		5000UL
#define DAPTRACE_DEF_AGGR_US		100000UL
#define DAPTRACE_DEF_UPDATE_US		1000000UL
#define DAPTRACE_DEF_MIN_NR_REGIONS	10UL
#define DAPTRACE_DEF_MAX_NR_REGIONS	1000UL
/* The intervals goal: off; when turned on, DAMON_STAT's 4 %, 5 ms .. 10 s. */
#define DAPTRACE_DEF_GOAL_ACCESS_BP	400UL
#define DAPTRACE_DEF_GOAL_AGGRS		0UL
#define DAPTRACE_DEF_GOAL_MIN_SAMPLE_US	5000UL
#define DAPTRACE_DEF_GOAL_MAX_SAMPLE_US	10000000UL
#define DAPTRACE_MAX_GOAL_AGGRS		1000UL
/*
 * The recall goal (daptrace_tune_recall()): off; the worker's CPU bound,
 * 5 % of one CPU; accessed probe pages per decision.
 */
#define DAPTRACE_DEF_RECALL_GOAL_BP	0UL
#define DAPTRACE_DEF_RECALL_MAX_CPU_BP	500UL
#define DAPTRACE_RECALL_PROBES		400U
/* An earlier decision, if the evidence is clear, needs at least these. */
#define DAPTRACE_RECALL_MIN_PROBES	100U
#define DAPTRACE_RECALL_MIN_WINDOWS	5U
/* Its hysteresis: the budget is given back only above goal + this. */
#define DAPTRACE_RECALL_HYST_BP		500U
/*
 * Below this many samples per window the merge threshold (a tenth of the
 * highest count) is floored at 1 and counts have too few levels to tell
 * hot from mixed regions: the recall goal adds samples before regions.
 */
#define DAPTRACE_RECALL_MIN_SAMPLES	10UL
/*
 * Decisions a sample count found short is not returned to, doubled each
 * time a return finds it short again (daptrace_tune_recall()).
 */
#define DAPTRACE_RECALL_SHORT_WAIT	4U
#define DAPTRACE_RECALL_MAX_SHORT_WAIT	256U

/* Upper caps: keep the worker sane and the snapshot ring bounded. */
#define DAPTRACE_MIN_SAMPLE_US		100UL		/* 0.1 ms */
#define DAPTRACE_MAX_SAMPLE_US		10000000UL	/* 10 s */
#define DAPTRACE_MAX_AGGR_US		100000000UL	/* 100 s */
#define DAPTRACE_MAX_UPDATE_US		3600000000UL	/* 1 h */
#define DAPTRACE_MIN_NR_REGIONS		3UL		/* heap, mmap, stack */
#define DAPTRACE_MAX_NR_REGIONS		20000UL
/* nr_accesses fits comfortably; also bounds the merge threshold loop. */
#define DAPTRACE_MAX_SAMPLES_PER_AGGR	100000UL

/*
 * Placement: per-node sample counts for nodes below DAPTRACE_NR_NODE_SLOTS
 * (the width of the snapshot record); samples on higher nodes still count in
 * nr_present.  DAPTRACE_NO_PFN marks "no present page sampled".
 */
#define DAPTRACE_NR_NODE_SLOTS		4
#define DAPTRACE_NO_PFN			(~0UL)

/*
 * The accuracy probes (daptrace_probes_pick()): pages per window given
 * page-level truth, to estimate what the regions miss.  Bounded so that
 * their cost is: at most this many extra clears and checks per window.
 */
#define DAPTRACE_DEF_PROBE_PAGES	64U
#define DAPTRACE_MAX_PROBE_PAGES	256U

/*
 * The probes' cost bound (daptrace_probes_budget()): their share of the
 * worker's CPU, in basis points (10000: no bound, probe_pages every
 * window); the fewest probe pages a window gets however dear they are; the
 * weight of a window in the cost averages (1/4: the last ~4 windows).
 */
#define DAPTRACE_DEF_PROBE_MAX_CPU_BP	500UL
#define DAPTRACE_MAX_PROBE_MAX_CPU_BP	10000UL
#define DAPTRACE_PROBE_MIN_PAGES	2U
#define DAPTRACE_PROBE_COST_WINDOWS	4U
/*
 * The probe pages asked for, in the cost bound's average, are multiplied
 * by this: a few a window, unscaled, an average of 4 stopped at 13 of 16
 * (daptrace_probe_avg()) and a probe page read 23 % dearer than it was.
 */
#define DAPTRACE_PROBE_SLOTS_SCALE	64U

/*
 * The probes' precision floor (daptrace_probes_precision()): the estimate
 * pooled over DAPTRACE_PROBE_POOL_US, at most
 * DAPTRACE_PROBE_POOL_MAX_WINDOWS windows (the CLI's pool: ACC_DEF_POOL_NS,
 * ACC_MAX_POOL_WINDOWS) is to have a 95 % interval of at most +-0.04:
 * z^2 / 0.04^2 with z = 1.96 (2401, taken as 2400: 600 accessed probe
 * pages at a recall of 0.5, the CLI's ACC_DEF_MIN_ACCESSED); the weight
 * of a window in the averages of tp and fn (1/64) and in those of the
 * accessed and asked pages (1/16); the fewest pages of tp and of fn in
 * their averages for the floor to act on them.
 */
#define DAPTRACE_PROBE_POOL_US		10000000UL
#define DAPTRACE_PROBE_POOL_MAX_WINDOWS	1024U
#define DAPTRACE_PROBE_PRECISION_K	2400U
#define DAPTRACE_PROBE_FLOOR_WINDOWS	64U
#define DAPTRACE_PROBE_SHARE_WINDOWS	16U
#define DAPTRACE_PROBE_FLOOR_MIN	4U
/* Windows the floor stays off once out of reach (daptrace_probes_precision()). */
#define DAPTRACE_PROBE_FLOOR_HOLD	64U

/*
 * Draws per probe page: a probe is drawn from the bytes the regions cover
 * and redrawn, up to this many draws in all, while it lands where nothing
 * is mapped (daptrace_probes_select()).  Regions span the gaps between
 * mappings (up to all but the two largest), often many times the mapped
 * memory, and a probe in a gap only ever says "not accessed": without the
 * redraws most probes would be spent there, and the estimate would rest on
 * a few accessed pages.  Only candidates' VMAs are looked up, never their
 * pages: the extra clears and checks stay at one per probe.
 */
#define DAPTRACE_PROBE_DRAWS		8U
#define DAPTRACE_MAX_PROBE_DRAWS	(DAPTRACE_MAX_PROBE_PAGES * DAPTRACE_PROBE_DRAWS)

/*
 * A target none of whose threads ran in this many windows in a row is not
 * probed (daptrace_probed()): a second at the default 100 ms windows.
 */
#define DAPTRACE_PROBE_QUIET_WINDOWS	10U

/**
 * struct daptrace_addr_range - a half-open virtual address range [start, end).
 * @start:	First byte.
 * @end:	One past the last byte.
 */
struct daptrace_addr_range {
	unsigned long start;
	unsigned long end;
};

/**
 * struct daptrace_region - a monitored address range of one target.
 * @ar:			The range; both ends are multiples of the context's
 *			min_region_sz.
 * @sampling_addr:	Address whose accessed bit was cleared by the last
 *			prepare step and is tested by the next check.
 * @nr_accesses:	Sampling rounds in the current aggregation window that
 *			saw the sampled page accessed (0 .. aggr/sample).
 * @last_nr_accesses:	@nr_accesses of the previous window, so that @age can
 *			tell a steady region from a changing one.
 * @age:		Aggregation windows this region has kept a similar
 *			access level (reset on a significant change, size-
 *			weighted on merge).
 * @idle:		Aggregation windows since the region last saw any
 *			access (0: in the window just ended, or memory new to
 *			the monitor, as for @age); the smaller one on merge.
 *			Unlike @age, reset by a single access.
 * @list:		Entry in &daptrace_target.regions, sorted by address.
 * @sample_pfn:		Set by the check step: pfn of the page mapped at
 *			@sampling_addr if present, else DAPTRACE_NO_PFN.
 *			Kept across windows: an idle target's skipped checks
 *			repeat it (daptrace_repeat_placement()).
 * @sample_nid:		NUMA node of @sample_pfn, -1 if unknown.
 * @sample_huge:	@sample_pfn is mapped by a huge entry (PMD or PUD
 *			leaf): one accessed bit covers all of that page.
 * @nr_present:		Checks in this window that found a present page.
 * @nr_huge:		Of those, how many found it mapped by a huge entry.
 * @node_samples:	Of those, how many were on node 0, 1, ...
 * @last_pfn:		pfn of the last present page sampled in this window,
 *			DAPTRACE_NO_PFN if none.
 * @sample_state:	What the operations' prepare step recorded of the page
 *			at @sampling_addr for the check (vaddr: its folio's
 *			LRU state); opaque to the core.
 * @nr_unobserved:	Checks in this window whose page could not be
 *			observed (daptrace_account_unobserved()): they count
 *			neither as an access nor as none, and @nr_accesses
 *			counts among the other checks.
 *
 * The region's access frequency is inferred from one page per sampling round:
 * pages of a region are assumed to be accessed alike, and split/merge keeps
 * that assumption cheap to maintain.
 */
struct daptrace_region {
	struct daptrace_addr_range ar;
	unsigned long sampling_addr;
	unsigned int nr_accesses;
	unsigned int last_nr_accesses;
	unsigned int age;
	unsigned int idle;
	struct list_head list;
	unsigned long sample_pfn;
	int sample_nid;
	bool sample_huge;
	unsigned int nr_present;
	unsigned int nr_huge;
	unsigned int node_samples[DAPTRACE_NR_NODE_SLOTS];
	unsigned long last_pfn;
	unsigned long sample_state;
	unsigned int nr_unobserved;
};

/**
 * struct daptrace_target - one monitored process.
 * @pid_nr:	The pid as the user wrote it (in the writer's namespace); used
 *		only for reporting.
 * @priv:	Owned by the operations (vaddr: the struct pid reference).
 *		Also the target's identity: equal values, same target.
 * @exited:	Set by the worker when the target is gone; its regions are
 *		freed after the window is published and it takes no further
 *		part in monitoring.
 * @revoked:	Set with @exited when the worker ended the watch because
 *		the target exec()ed an image the writer's access check may
 *		no longer admit (&daptrace_ops.target_allowed); its regions
 *		are dropped before the window is published.  Sticky until
 *		the target is removed.
 * @exec_id:	The operations' identity of the address space the regions
 *		describe (vaddr: the leader's exec count); a change means
 *		the target exec()ed and its regions start afresh.
 * @execed:	Set by the worker for the window in which @exec_id changed.
 * @quiet:	None of the target's threads ran in the window just ended
 *		(&daptrace_ops.window_idle), so nothing was learnt: its
 *		regions are neither merged (unless max_nr_regions demands
 *		it) nor split, the samples prepared for them stay valid, and
 *		the prepare pass after the aggregation may skip it; nor does
 *		the upper-level scan collect it.  Set by
 *		the worker for that aggregation and pass only, and cleared
 *		by whatever changes the regions meanwhile (a merge that
 *		max_nr_regions forces, a map update), so that the prepare
 *		pass walks them.
 * @idle_windows: Windows in a row, up to the one just ended, in which none
 *		of its threads ran (as @quiet says of the last one; unlike
 *		@quiet, kept when its regions change), saturating.  Set by
 *		the worker at each aggregation boundary.
 * @woke:	The target ran in the window just ended after at least one
 *		window in which it did not (@idle_windows was not 0): set by
 *		the worker at each aggregation boundary, read by
 *		daptrace_split_regions(), which gives such a target at once
 *		the resolution it would have alone.
 * @merged_idle: Set by daptrace_merge_regions() when it merged the regions
 *		of a quiet target because the budget was crowded (which
 *		clears @quiet: the merged regions must be prepared afresh);
 *		the split of the same aggregation leaves such a target alone,
 *		as it leaves a quiet one (it did not run: a cut would learn
 *		nothing), and clears the flag.
 * @remove:	Written to target_remove while monitoring: the worker drops
 *		the target at the next aggregation boundary.  Under the
 *		monitor's targets_lock.
 * @unobservable: Set by the operations when no check of the target can be
 *		observed (vaddr: its mm has a secondary MMU): windows in which
 *		its checks are skipped count as unobserved, not as idle
 *		(daptrace_repeat_idle()).
 * @nr_regions:	Number of entries in @regions.
 * @regions:	Regions sorted by address, never overlapping.
 * @list:	Entry in &daptrace_ctx.targets.
 */
struct daptrace_target {
	int pid_nr;
	void *priv;
	bool exited;
	bool revoked;
	bool execed;
	u64 exec_id;
	bool quiet;
	unsigned int idle_windows;
	bool woke;
	bool merged_idle;
	bool remove;
	bool unobservable;
	unsigned int nr_regions;
	struct list_head regions;
	struct list_head list;
};

/**
 * struct daptrace_attrs - monitoring attributes.
 * @sample_us:		Sampling interval: one access check per region.
 * @aggr_us:		Aggregation interval: publish, merge, split.
 * @update_us:		Interval at which the target's memory map is re-read.
 * @min_nr_regions:	Lower bound of the number of regions (all targets).
 * @max_nr_regions:	Upper bound of the number of regions (all targets).
 * @goal_access_bp:	Intervals goal (DAMON's intervals_goal): the share of
 *			observed accesses wanted, in basis points of the most
 *			possible: sum of size * nr_accesses over sum of size
 *			* samples of the observed checks.
 * @goal_aggrs:		Aggregation windows it is measured over, and how often
 *			the sampling interval is tuned to it; 0: no tuning.
 * @goal_min_sample_us:	Lowest sampling interval the tuning may set.
 * @goal_max_sample_us:	Highest.
 * @recall_goal_bp:	Recall goal, in basis points: the share of the
 *			accessed memory the regions should read as accessed,
 *			as the accuracy probes estimate it; the samples per
 *			window (a shorter sample_us, aggr_us kept) and the
 *			region budget (max_nr_regions) are tuned to it
 *			(daptrace_tune_recall()).  0: off.
 * @recall_max_cpu_bp:	The bound on that tuning: the worker's CPU time,
 *			in basis points of one CPU.
 */
struct daptrace_attrs {
	unsigned long sample_us;
	unsigned long aggr_us;
	unsigned long update_us;
	unsigned long min_nr_regions;
	unsigned long max_nr_regions;
	unsigned long goal_access_bp;
	unsigned long goal_aggrs;
	unsigned long goal_min_sample_us;
	unsigned long goal_max_sample_us;
	unsigned long recall_goal_bp;
	unsigned long recall_max_cpu_bp;
};

/**
 * struct daptrace_recall_tuner - the recall goal's measure since its last
 * decision.
 * @tp:		Accessed probe pages whose region read accessed.
 * @fn:		Accessed probe pages whose region read not accessed.
 * @cpu_ns:	Worker CPU time of the windows measured.
 * @wall_ns:	Their length.
 * @windows:	Windows measured.
 * @floor:	max_nr_regions when the tuning started: it never goes below.
 *		0: not started.
 * @samples_floor: Samples per window (aggr_us / sample_us) when the tuning
 *		started: it never sets fewer.
 * @sample_us:	sample_us when the tuning started, restored exactly when
 *		the samples per window come back to @samples_floor at the
 *		aggregation interval of @aggr_us.
 * @aggr_us:	aggr_us when the tuning started.
 * @samples_short: The most samples per window at which the recall was
 *		last found below the goal: not returned to until
 *		@short_wait decisions found it comfortably above.  0: none.
 * @short_age:	Those decisions so far.
 * @short_wait:	How many it takes; doubles each time a return to fewer
 *		samples is found short at the next decision.
 * @probed:	Samples per window the last decision gave back to (0: it
 *		gave none back), to judge that give-back by the next one.
 */
struct daptrace_recall_tuner {
	u64 tp;
	u64 fn;
	u64 cpu_ns;
	u64 wall_ns;
	unsigned int windows;
	unsigned long floor;
	unsigned long samples_floor;
	unsigned long sample_us;
	unsigned long aggr_us;
	unsigned long samples_short;
	unsigned int short_age;
	unsigned int short_wait;
	unsigned long probed;
};

/**
 * struct daptrace_tuner - the intervals goal's measure, window by window.
 * @events:	Sum of pages * nr_accesses of the windows measured.
 * @max_events:	Sum of pages * observed checks: the most @events could be.
 * @windows:	Windows measured since the last tuning.
 * @aggr_samples: Samples per window when the tuning started (DAMON's
 *		aggr_samples): every tuning keeps it, so windows keep their
 *		resolution however far the intervals travel; only the recall
 *		goal changes it (daptrace_tune_recall()).  0: not started.
 * @update_us:	The update interval when the tuning started: the tuned one
 *		is this or the aggregation interval, whichever is longer.
 *
 * Zeroed when monitoring starts (the attributes cannot change while it
 * runs); the last two are remembered at the first window measured.
 */
struct daptrace_tuner {
	u64 events;
	u64 max_events;
	unsigned int windows;
	unsigned long aggr_samples;
	unsigned long update_us;
};

/**
 * enum daptrace_probe_seen - what a probe page's truth is.
 * @DAPTRACE_PROBE_OLD:		Not accessed in the window (so far).
 * @DAPTRACE_PROBE_YOUNG:	Accessed in the window.
 * @DAPTRACE_PROBE_UNOBSERVED:	Its truth could not be read (a busy
 *				mmap_lock, an unobservable mapping, the
 *				target exited or exec()ed): counted apart,
 *				never as "not accessed".
 * @DAPTRACE_PROBE_UNMAPPED:	A candidate drawn where nothing was mapped
 *				at the window's start: redrawn, never
 *				counted (daptrace_probes_select()).
 */
enum daptrace_probe_seen {
	DAPTRACE_PROBE_OLD,
	DAPTRACE_PROBE_YOUNG,
	DAPTRACE_PROBE_UNOBSERVED,
	DAPTRACE_PROBE_UNMAPPED,
};

/**
 * struct daptrace_probe - one page given page-level truth for a window.
 * @t:		Its target.
 * @r:		The region it lies in, whose verdict it is compared with.
 *		Regions change only at aggregation boundaries and map
 *		updates, and a probe lives from the start of a window (after
 *		both) to its end (before both), so the pointer stays valid.
 * @addr:	The page's address.
 * @state:	What the operations' clear recorded for its check.
 * @seen:	enum daptrace_probe_seen.
 * @draw:	Index of the draw that gave it (daptrace_probes_pick()):
 *		draw % slots is the probe it is a candidate for, draw / slots
 *		its turn.
 */
struct daptrace_probe {
	struct daptrace_target *t;
	struct daptrace_region *r;
	unsigned long addr;
	unsigned long state;
	unsigned int seen;
	unsigned int draw;
};

/**
 * struct daptrace_probe_counts - a window's probes against its regions.
 * @nr:		Probes picked.
 * @tp:		Accessed, and its region read accessed.
 * @fn:		Accessed, but its region read not accessed.
 * @fp:		Not accessed, but its region read accessed.
 * @tn:		Neither.
 * @unobserved:	Probes whose truth or whose region's verdict could not be
 *		observed (a region none of whose checks of the window was
 *		observed has no verdict).
 *
 * nr = tp + fn + fp + tn + unobserved.  Recall of accessed memory is
 * estimated as tp / (tp + fn), precision as tp / (tp + fp).
 */
struct daptrace_probe_counts {
	unsigned int nr;
	unsigned int tp;
	unsigned int fn;
	unsigned int fp;
	unsigned int tn;
	unsigned int unobserved;
};

/**
 * struct daptrace_probe_budget - the probes' cost bound, window by window
 * (daptrace_probes_budget()).
 * @probe_ns:	Average time of the probe work per window.
 * @slots:	Average probe pages asked for per window.
 * @other_ns:	Average worker CPU time per window not spent on the probes.
 * @windows:	Windows measured (saturates); 0: none yet.
 * @nr:		Probe pages asked for the window that starts; 0: not
 *		started.
 * @tp:		Average accessed probe pages in accessed regions per window.
 * @fn:		Average accessed probe pages in regions read not accessed.
 * @accessed:	Average accessed probe pages per window (tp + fn, faster).
 * @asked:	Average probe pages asked for per window.
 * @need:	The precision floor (daptrace_probes_precision()); 0: none.
 * @hold:	Windows left in which the floor stays 0, having been found out
 *		of reach.
 *
 * The averages are exponential, each window weighing
 * 1/DAPTRACE_PROBE_COST_WINDOWS, and kept multiplied by that number
 * (an average of x reads DAPTRACE_PROBE_COST_WINDOWS * x) so that they
 * stay integers without losing the small ones; @slots is multiplied by
 * 64 besides (daptrace_probes_budget()).  @tp and @fn are kept the same way
 * with DAPTRACE_PROBE_FLOOR_WINDOWS, @accessed and @asked with
 * DAPTRACE_PROBE_SHARE_WINDOWS, and all four multiplied by 64 besides
 * (daptrace_probes_precision()): the floor compares @tp and @fn with a
 * least count, the rest uses ratios.
 * Zeroed when monitoring starts.
 */
struct daptrace_probe_budget {
	u64 probe_ns;
	u64 slots;
	u64 other_ns;
	unsigned int windows;
	unsigned int nr;
	u64 tp;
	u64 fn;
	u64 accessed;
	u64 asked;
	unsigned int need;
	unsigned int hold;
};

/**
 * struct daptrace_ctx - a monitoring context: attributes plus targets.
 * @attrs:		Attributes in force.
 * @min_region_sz:	Granularity of region boundaries and splits: PAGE_SIZE
 *			in the kernel, 1 in unit tests.  A power of two.
 * @rand:		Returns a uniformly distributed value in [0, @ceil);
 *			@ceil is never 0.
 * @rand_arg:		Passed to @rand.
 * @nr_targets:		Number of entries in @targets.
 * @targets:		List of &struct daptrace_target.
 * @last_nr_regions:	Region count the previous split started from (as in
 *			DAMON), used to decide whether a region is split in two
 *			or three pieces.
 * @split_from:		Index in @targets of the target the next split starts
 *			from: the first the previous one refused for the room
 *			the targets before it took, so that each gets its turn
 *			(daptrace_split_regions()).  An index, not a pointer:
 *			targets come and go between windows.
 * @age_unit_us:	The aggregation interval the regions' &daptrace_region.age
 *			and &daptrace_region.idle count windows of (0: none
 *			yet); daptrace_aggregate() converts them when the
 *			interval changed.
 * @nr_passes:		Sampling passes since "on": operations that spread
 *			work over passes take turns by it.
 * @tuner:		The intervals goal's measure (daptrace_tune_intervals()).
 * @recall:		The recall goal's (daptrace_tune_recall()).
 * @probes:	The current window's probe pages, sorted by target (in
 *		context order) and address; NULL if the caller gave none,
 *		else room for DAPTRACE_MAX_PROBE_DRAWS.
 * @nr_probes:	Entries of @probes in use: 0 between a window's end and
 *		the next one's start.
 * @probe_slots: Probe pages asked for by the last daptrace_probes_pick().
 * @budget:	The probes' cost bound (daptrace_probes_budget()).
 */
struct daptrace_ctx {
	struct daptrace_attrs attrs;
	unsigned long min_region_sz;
	u32 (*rand)(void *arg, u32 ceil);
	void *rand_arg;
	unsigned int nr_targets;
	struct list_head targets;
	unsigned int last_nr_regions;
	unsigned int split_from;
	unsigned long age_unit_us;
	unsigned long nr_passes;
	struct daptrace_tuner tuner;
	struct daptrace_recall_tuner recall;
	struct daptrace_probe *probes;
	unsigned int nr_probes;
	unsigned int probe_slots;
	struct daptrace_probe_budget budget;
};

#define daptrace_for_each_target(t, ctx) \
	list_for_each_entry(t, &(ctx)->targets, list)
#define daptrace_for_each_target_safe(t, next, ctx) \
	list_for_each_entry_safe(t, next, &(ctx)->targets, list)
#define daptrace_for_each_region(r, t) \
	list_for_each_entry(r, &(t)->regions, list)
#define daptrace_for_each_region_safe(r, next, t) \
	list_for_each_entry_safe(r, next, &(t)->regions, list)

static inline unsigned long daptrace_sz_region(const struct daptrace_region *r)
{
	return r->ar.end - r->ar.start;
}

/* Context and attributes. */
void daptrace_ctx_init(struct daptrace_ctx *ctx, unsigned long min_region_sz,
		       u32 (*rand)(void *arg, u32 ceil), void *rand_arg);
void daptrace_attrs_default(struct daptrace_attrs *attrs);
int daptrace_attrs_validate(const struct daptrace_attrs *attrs);
unsigned int daptrace_max_nr_accesses(const struct daptrace_attrs *attrs);

/* Targets and regions. */
struct daptrace_target *daptrace_target_new(int pid_nr, void *priv);
void daptrace_add_target(struct daptrace_ctx *ctx, struct daptrace_target *t);
void daptrace_destroy_target(struct daptrace_ctx *ctx, struct daptrace_target *t);
void daptrace_free_target_regions(struct daptrace_target *t);
struct daptrace_region *daptrace_region_new(unsigned long start, unsigned long end);
void daptrace_add_region(struct daptrace_target *t, struct daptrace_region *r);
void daptrace_insert_region_after(struct daptrace_target *t,
				  struct daptrace_region *prev,
				  struct daptrace_region *r);
void daptrace_destroy_region(struct daptrace_target *t, struct daptrace_region *r);
unsigned int daptrace_nr_live_targets(const struct daptrace_ctx *ctx);
unsigned int daptrace_nr_regions(const struct daptrace_ctx *ctx);
unsigned int daptrace_nr_budgeted(const struct daptrace_ctx *ctx);
unsigned long daptrace_total_sz(const struct daptrace_ctx *ctx);

/**
 * struct daptrace_layout - an address space's mappings, as the "three
 * regions" need them (daptrace_layout_add()).
 * @start:	First mapped byte.
 * @end:	One past the last mapped byte so far.
 * @nr_clusters: Runs of touching mappings seen so far.
 * @gap1:	The largest gap between two clusters.
 * @gap2:	The second largest.
 * @invalid:	A mapping came out of order, or was empty.
 */
struct daptrace_layout {
	unsigned long start;
	unsigned long end;
	unsigned int nr_clusters;
	struct daptrace_addr_range gap1;
	struct daptrace_addr_range gap2;
	bool invalid;
};

/*
 * Address-space layout helpers, pure functions of the mappings so the vaddr
 * operations stay thin and the arithmetic is unit-tested.
 */
void daptrace_layout_init(struct daptrace_layout *l);
void daptrace_layout_add(struct daptrace_layout *l, unsigned long start,
			 unsigned long end);
int daptrace_layout_ranges(const struct daptrace_layout *l,
			   struct daptrace_addr_range out[3]);
int daptrace_evenly_split_region(struct daptrace_ctx *ctx,
				 struct daptrace_target *t,
				 struct daptrace_region *r,
				 unsigned int nr_pieces);
int daptrace_init_regions(struct daptrace_ctx *ctx, struct daptrace_target *t,
			  const struct daptrace_addr_range *ranges,
			  unsigned int nr_ranges);
int daptrace_set_regions(struct daptrace_ctx *ctx, struct daptrace_target *t,
			 const struct daptrace_addr_range *ranges,
			 unsigned int nr_ranges);
bool daptrace_regions_fit(const struct daptrace_ctx *ctx,
			  const struct daptrace_target *t,
			  const struct daptrace_addr_range *ranges,
			  unsigned int nr_ranges);

/* Sampling bookkeeping. */
void daptrace_pick_sampling_addr(struct daptrace_ctx *ctx,
				 struct daptrace_region *r);
void daptrace_account_access(struct daptrace_region *r, bool accessed);
void daptrace_account_unobserved(struct daptrace_region *r);
void daptrace_account_placement(struct daptrace_region *r, int nid);
void daptrace_repeat_placement(struct daptrace_target *t, unsigned int n);
void daptrace_repeat_idle(struct daptrace_target *t, unsigned int n);
void daptrace_repeat_unobserved(struct daptrace_target *t, unsigned int n);
void daptrace_reset_placement(struct daptrace_region *r);

/*
 * Touched runs kept apart per region by daptrace_split_touched(): more are
 * joined to the last one.
 */
#define DAPTRACE_MAX_TOUCHED_RUNS	32

/* Aggregation: called once per aggregation window, after publishing. */
void daptrace_update_age(struct daptrace_ctx *ctx, unsigned int threshold);
void daptrace_merge_regions(struct daptrace_ctx *ctx, unsigned int threshold,
			    unsigned long sz_limit);
void daptrace_reset_aggregated(struct daptrace_ctx *ctx);
void daptrace_split_regions(struct daptrace_ctx *ctx);
void daptrace_aggregate(struct daptrace_ctx *ctx, unsigned int nr_samples);
unsigned int daptrace_split_touched(struct daptrace_ctx *ctx,
				    struct daptrace_target *t,
				    struct daptrace_region *r,
				    const struct daptrace_addr_range *runs,
				    unsigned int nr, unsigned long room);

/* The intervals goal: at the end of each window, before its counts reset. */
bool daptrace_tune_intervals(struct daptrace_ctx *ctx, unsigned int nr_samples,
			     unsigned long *sample_us, unsigned long *aggr_us,
			     unsigned long *update_us);

/*
 * Accuracy probes: pick candidates at a window's start, keep those in
 * mapped memory, account at its end.
 */
bool daptrace_probes_wanted(const struct daptrace_ctx *ctx);
unsigned int daptrace_probes_pick(struct daptrace_ctx *ctx, unsigned int n);
unsigned int daptrace_probes_select(struct daptrace_ctx *ctx);
void daptrace_probes_account(const struct daptrace_ctx *ctx,
			     unsigned int nr_samples,
			     struct daptrace_probe_counts *c);
/*
 * How many probe pages the window that starts gets, from the cost of the
 * last windows: before daptrace_probes_pick().
 */
unsigned int daptrace_probes_budget(struct daptrace_ctx *ctx, unsigned int max,
				    unsigned long max_cpu_bp, u64 probe_ns,
				    u64 cpu_ns);
/* At a window's end, with its probe counts: the floor the next budget keeps. */
unsigned int daptrace_probes_precision(struct daptrace_ctx *ctx,
				       const struct daptrace_probe_counts *c,
				       unsigned int max, unsigned long aggr_us);

/*
 * The recall goal: at the end of each window, with its probe counts, after
 * the intervals goal and before the window's counts reset.
 */
bool daptrace_tune_recall(struct daptrace_ctx *ctx,
			  const struct daptrace_probe_counts *c,
			  u64 cpu_ns, u64 wall_ns,
			  unsigned long *max_nr_regions, unsigned long *sample_us);

/* Snapshot assembly: fill up to @max records; returns the number written. */
unsigned int daptrace_snapshot_fill(const struct daptrace_ctx *ctx,
				    struct daptrace_region_rec *recs,
				    unsigned int max, bool phys_addr);

#endif /* _DAPTRACE_CORE_H */
