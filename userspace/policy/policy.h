/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The userspace policy engine: DAMOS-style schemes applied to daptrace
 * snapshots, acting on the targets with process_madvise(2) and move_pages(2).
 *
 * A scheme is data (struct pol_scheme): an access pattern, an action, a
 * quota, watermarks and filters, plus its stats.  Parsing (scheme_parse.c)
 * fills it, the engine (engine.c) applies it to each snapshot, the actions
 * (actions.c) are the only code that touches a target.
 */
#ifndef DAPTRACE_POLICY_H
#define DAPTRACE_POLICY_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "daptrace.h"

enum pol_action {
	POL_PAGEOUT,		/* process_madvise(MADV_PAGEOUT) */
	POL_COLD,		/* process_madvise(MADV_COLD) */
	POL_WILLNEED,		/* process_madvise(MADV_WILLNEED) */
	POL_COLLAPSE,		/* process_madvise(MADV_COLLAPSE), 6.1+ */
	POL_MIGRATE_HOT,	/* move_pages() to a node, hottest first */
	POL_MIGRATE_COLD,	/* move_pages() to a node, coldest first */
	POL_STAT,		/* only count */
	POL_NR_ACTIONS,
};

/* Watermark metric: free memory in permille of the total. */
enum pol_wmark_metric {
	POL_WMARK_NONE,
	POL_WMARK_FREE,		/* system: /proc/meminfo MemFree/MemTotal */
	POL_WMARK_NODE_FREE,	/* one node: /sys/devices/system/node/nodeN/meminfo */
};

enum pol_filter_type {
	POL_FILTER_ANY,
	POL_FILTER_ANON,	/* anonymous (heap, stack, [anon]) */
	POL_FILTER_FILE,	/* file-backed */
};

/* Errors the actions count instead of stopping on (index into errs[]). */
enum pol_err {
	POL_EPERM, POL_ENOMEM, POL_EAGAIN, POL_ESRCH, POL_EOTHER, POL_NR_ERRS,
};

/**
 * struct pol_stats - what a scheme did, since the start.
 * @nr_tried/@sz_tried:	regions (pieces) and bytes matching pattern+filters
 * @nr_applied/@sz_applied: acted on successfully (for migrations: bytes
 *			that actually changed node)
 * @nr_quota_skip/@sz_quota_skip: matched but left out by the quota
 * @nr_identity_skip/@sz_identity_skip: matched but already acted on and not
 *			accessed since (region identity)
 * @nr_unobserved_skip/@sz_unobserved_skip: matched, but some of the
 *			window's checks could not observe the region: its
 *			access level is not known (without unobserved=act)
 * @qt_exceeds:		windows in which the quota ran out
 * @wmark_inactive:	snapshots skipped because of the watermarks
 * @errs:		failed syscalls by errno class (enum pol_err)
 * @other_errno:	the last errno counted in errs[POL_EOTHER]
 */
struct pol_stats {
	uint64_t nr_tried, sz_tried;
	uint64_t nr_applied, sz_applied;
	uint64_t nr_quota_skip, sz_quota_skip;
	uint64_t nr_identity_skip, sz_identity_skip;
	uint64_t nr_unobserved_skip, sz_unobserved_skip;
	uint64_t qt_exceeds;
	uint64_t wmark_inactive;
	uint64_t errs[POL_NR_ERRS];
	int other_errno;
};

/*
 * Quota goals (goal.c, metrics.c, tuner.c): goal=METRIC[@SOURCE]:TARGET on
 * a scheme with a quota; a feedback tuner sets the effective quota every
 * quota window so that the metric reaches TARGET (law in tuner.c).
 */
enum pol_goal_metric {
	POL_GOAL_PSI,		/* memory "some" stall, µs per quota window */
	POL_GOAL_FREE,		/* MemFree, percent of MemTotal (system or node) */
	POL_GOAL_USED,		/* MemTotal - MemFree, percent (system or node) */
	POL_GOAL_MEMCG,		/* a cgroup's memory.current, bytes */
	POL_GOAL_RSS,		/* the targets' resident set, bytes */
	POL_GOAL_USER,		/* a number the user writes to a file */
	POL_GOAL_REFAULT,	/* the targets' major faults per quota window */
	POL_NR_GOAL_METRICS,
};

/* Where a goal's metric is read. */
enum pol_goal_src {
	POL_SRC_SYSTEM,		/* the whole machine */
	POL_SRC_NODE,		/* one NUMA node (@nodeN) */
	POL_SRC_CGROUP,		/* a cgroup v2 directory (@PATH) */
	POL_SRC_TARGETS,	/* the cgroup holding all the targets (@targets) */
	POL_SRC_FILE,		/* a file (user@FILE) */
};

/* Windows a rate goal's score is averaged over (tuner.c). */
#define POL_TUNE_AVG	5

/**
 * struct pol_rate_tuner - the state of a rate goal's law (tuner.c).
 * @v/@n/@pos:	the last @n scores, a ring
 * @mean:	their mean, as the last step used it
 * @ramp:	doubling each window (at the start, and after a quiet spell)
 * @quiet:	windows in a row without any of the metric
 */
struct pol_rate_tuner {
	double v[POL_TUNE_AVG];
	int n, pos;
	double mean;
	int ramp, quiet;
};

/**
 * struct pol_goal - one goal of a scheme's quota.
 * @spec:	as written after "goal=", for messages and the stats
 * @metric/@src: what is read, and where (@node for POL_SRC_NODE, @arg the
 *		cgroup or file as written)
 * @path:	the file actually read, once resolved (pol_scheme_check_goals)
 * @target:	in the metric's unit: µs per quota window (psi), percent
 *		(free, used), bytes (memcg, rss), a number (user), faults per
 *		quota window (refault)
 * @direction:	+1 if acting more raises the metric, -1 if it lowers it
 * @level:	the metric is a level the action moves byte for byte (free,
 *		used, memcg, rss), not a rate (psi, user): see tuner.c
 * @total_bytes: free/used: the memory the percentages are of
 * @current:	the last value read (valid once @nr_reads > 0)
 * @q:		the quota this goal asks for next (bytes per window)
 * @integral:	level goals: the integral term of the law, bytes
 * @rt:		rate goals: the state of the law
 * @last_total/@have_total: psi, refault: the cumulative count at the window's start
 * @nr_reads/@nr_errors/@last_err: reads, failed reads, the last -errno
 * @misses:	failed reads in a row
 */
struct pol_goal {
	char *spec;
	enum pol_goal_metric metric;
	enum pol_goal_src src;
	int node;
	char *arg;
	char *path;
	double target;
	int direction;
	int level;
	uint64_t total_bytes;
	/* run-time state */
	double current;
	uint64_t q;
	double integral;
	struct pol_rate_tuner rt;
	uint64_t last_total;
	int have_total, alive;
	uint64_t nr_reads, nr_errors;
	int last_err;
	int misses;
};

#define POL_MAX_GOALS	4

/* One acted-on address range of region identity. */
struct pol_range {
	uint64_t start, end;
	int64_t t_ns;		/* when it was acted on */
};

/* A sorted set of disjoint ranges. */
struct pol_iset {
	struct pol_range *r;
	size_t n, cap;
};

/**
 * struct pol_scheme - one scheme.
 * @name:	"N:action", for stats
 * @action:	what to do
 * @node:	target node of migrate_hot/migrate_cold
 * @min_sz/@max_sz: region size range, bytes
 * @min_freq/@max_freq: nr_accesses range, permille of the region's observed samples
 * @min_age_us/@max_age_us: age range, µs (age in windows * aggr_us)
 * @quota_sz:	bytes per @quota_us window, 0 = unlimited
 * @quota_us:	quota window
 * @hottest_first: prioritise hot regions under the quota (else coldest)
 * @wmark:	watermark metric; @wmark_node for POL_WMARK_NODE_FREE
 * @wmark_high/@wmark_mid/@wmark_low: permille of free memory: active from
 *		below @mid until above @high or below @low (DAMOS semantics)
 * @ftype:	anon/file filter
 * @flabel:	act only in mappings whose label contains this (NULL: any)
 * @faddr_start/@faddr_end: act only inside this address range (0,0: any)
 * @cgroup:	act only on targets in this cgroup v2 ("/a/b", as
 *		/proc/PID/cgroup names it) or below; its goals' @targets, rss and
 *		refault are this cgroup's (NULL: any target)
 * @reapply_us:	forget an acted range after this long (default 2 s for hot
 *		actions, 10 s for cold ones), 0 = only when the range is
 *		accessed again (or another scheme acts on it)
 * @idle_us:	act only on bytes not seen accessed in any window for this
 *		long (0: no such condition).  Unlike @min_age_us this does not
 *		depend on how the monitor merges and splits regions, and a
 *		range read now and then (every second, say) is never idle.
 * @origin:	where the scheme was given ("--scheme 2", "--preset tmo",
 *		"FILE:LINE"), for the messages of checks made after parsing
 * @goals/@nr_goals: quota goals; with any, @quota_sz is the largest quota
 *		the tuner may set and @quota_eff the one in force
 * @quota_eff:	effective quota, bytes per @quota_us (= @quota_sz without
 *		goals; 0: paused by the goals)
 * @tune:	tuner counters: windows tuned, windows ending at the largest
 *		quota while a goal still asked for more, windows paused
 */
struct pol_scheme {
	char name[32];
	enum pol_action action;
	int node;
	uint64_t min_sz, max_sz;
	uint32_t min_freq, max_freq;
	uint64_t min_age_us, max_age_us;
	uint64_t quota_sz, quota_us;
	int hottest_first;
	enum pol_wmark_metric wmark;
	int wmark_node;
	uint32_t wmark_high, wmark_mid, wmark_low;
	enum pol_filter_type ftype;
	char *flabel;
	uint64_t faddr_start, faddr_end;
	char *cgroup;
	uint64_t reapply_us;
	int act_unobserved;		/* unobserved=act */
	uint64_t idle_us;
	char origin[128];
	struct pol_goal goals[POL_MAX_GOALS];
	int nr_goals;

	/* run-time state */
	int active;			/* watermarks let it run */
	int64_t quota_reset_ns;		/* start of the current quota window */
	uint64_t quota_used;		/* bytes charged in the window */
	uint64_t quota_eff;
	int share_t;			/* where the cut-off score's share stopped */
	uint64_t share_addr;
	struct {
		uint64_t windows, at_max, paused;
	} tune;
	struct pol_stats st;
};

/*
 * Regret (regret.c): of what an action took away, how much came back within
 * each window.  Per scheme and per cgroup of the target acted on.
 */
#define POL_REGRET_WINDOWS	3
extern const uint64_t pol_regret_win_us[POL_REGRET_WINDOWS];	/* 1 s, 10 s, 60 s */
/* Pages followed at once (2 bits each): beyond, acted bytes are "unknown". */
#define POL_REGRET_MAX_PAGES	(1U << 24)

/* How an action's outcome is observed, page by page. */
enum pol_regret_how {
	POL_REGRET_NONE,	/* not observed (cold, willneed, collapse, stat) */
	POL_REGRET_RESIDENT,	/* pageout: mapped (/proc/PID/pagemap "present") */
	POL_REGRET_NODE,	/* migrate_*: the page's node (move_pages query) */
};

/**
 * struct pol_regret - one scheme's regret in one cgroup.
 * @scheme:	index of the scheme
 * @cgroup:	the cgroup v2 path of the targets acted on ("" if unknown)
 * @acted:	bytes the action took away: pageout, pages mapped before the
 *		call and not after; migrate_*, pages elsewhere before and on
 *		the node after
 * @checked:	per window, acted bytes whose window has closed and was checked
 * @back:	per window, of those, bytes seen back by the window's end:
 *		mapped again (pageout), on another node (migrate_*)
 * @unknown:	per window, acted bytes whose window could not be checked (the
 *		target left, the probe failed, the check came more than half a
 *		window late, more than POL_REGRET_MAX_PAGES followed)
 * @unknown_calls: calls whose effect could not be read (a probe failed,
 *		out of memory, over POL_REGRET_MAX_PAGES): their bytes are in
 *		no counter here
 * Bytes still pending for window w: @acted - @checked[w] - @unknown[w].
 */
struct pol_regret {
	int scheme;
	char *cgroup;
	uint64_t acted;
	uint64_t checked[POL_REGRET_WINDOWS];
	uint64_t back[POL_REGRET_WINDOWS];
	uint64_t unknown[POL_REGRET_WINDOWS];
	uint64_t unknown_calls;
};

/* One acted-on piece being followed until its last window closes. */
struct pol_regret_ent {
	int key;		/* index into pol_engine.regret */
	pid_t pid;
	int node;		/* migrate_*: the node moved to */
	enum pol_regret_how how;
	uint64_t start;		/* page aligned */
	uint32_t npages, nr_out;
	int64_t t_ns;		/* when the action returned */
	int next;		/* the next window to close */
	uint64_t *out;		/* bit per page: taken away by the action */
	uint64_t *back;		/* bit per page: seen back since */
};

#define POL_MAX_SCHEMES	64
/* Actions are issued in pieces of at most this many bytes. */
#define POL_ACT_CHUNK	(2ULL << 20)
#define POL_ERRMSG_LEN	256
/* Longest line of a scheme file, without its newline. */
#define POL_LINE_MAX	1022

/* scheme_parse.c */
const char *pol_action_name(enum pol_action a);
void pol_scheme_init(struct pol_scheme *s, enum pol_action a);
/*
 * Parse one scheme "ACTION [NODE] [key=value ...]" into @s.  On error
 * returns -EINVAL and writes a message (without a location) to @err.
 * Does not check that nodes exist: see pol_scheme_check_nodes().
 */
int pol_scheme_parse(const char *spec, struct pol_scheme *s, char *err, size_t errlen);
/*
 * Parse a scheme file: one scheme per line, '#' comments, blank lines.
 * Appends to @s (at most @max in total, *@n already used).  On error the
 * message names "FILE:LINE".
 */
int pol_scheme_file_parse(FILE *f, const char *fname, struct pol_scheme *s, int *n,
			  int max, char *err, size_t errlen);
/* The preset's scheme lines ("reclaim", "tiering"), or NULL. */
const char *const *pol_preset(const char *name);
/* -ENODEV with a message if a node the scheme names does not exist. */
int pol_scheme_check_nodes(const struct pol_scheme *s, char *err, size_t errlen);
void pol_scheme_free(struct pol_scheme *s);
/* A copy of parsed scheme @src (no run-time state) in @dst; -ENOMEM. */
int pol_scheme_dup(struct pol_scheme *dst, const struct pol_scheme *src);
/*
 * Whether a scheme with type=@type can act on a mapping labelled @label
 * (a record's label: "[heap]", "[anon]", a file's path...): never on the
 * kernel's special mappings ([vvar], [vdso], [vsyscall]), which cannot be
 * advised or migrated.  report savings replays the same choice.
 */
int pol_label_actionable(const char *label, enum pol_filter_type type);
/* Is cgroup path @p @root or below it ("/" holds every path)? */
int pol_cgroup_within(const char *root, const char *p);
/* Strict "123", "4K", "64M", "1G" (binary units) to bytes. */
int pol_parse_bytes(const char *str, uint64_t *v);

/* goal.c: the goal= grammar and the checks made before anything starts */
const char *pol_goal_metric_name(enum pol_goal_metric m);
/* The metric's unit, as the stats files give @target and @current. */
const char *pol_goal_unit(enum pol_goal_metric m);
/*
 * Parse "METRIC[@SOURCE]:TARGET" into @g for scheme @s (its action and
 * quota decide the direction and a psi target in percent); -EINVAL with a
 * message in @err.  Call once the scheme's other keys are parsed.
 */
int pol_goal_parse(const char *val, const struct pol_scheme *s, struct pol_goal *g,
		   char *err, size_t errlen);
void pol_goal_free(struct pol_goal *g);
/*
 * Resolve every goal of @s to the file it reads and read it once: a missing
 * file, PSI disabled, a cgroup without memory.pressure, a node that does
 * not exist fail here, before anything is started, with a message naming
 * the scheme's origin and the goal.  @pids/@nr: the processes the policy
 * will act on (for @targets and rss; a command to be launched is in our
 * own cgroup: pass getpid()).
 */
int pol_scheme_check_goals(struct pol_scheme *s, const pid_t *pids, int nr, char *err,
			   size_t errlen);
/* Human form of a goal value: "1.2 ms", "95.0 %", "64.0 MiB", "0.75". */
const char *pol_goal_fmt(const struct pol_goal *g, double v, char *buf, size_t len);

/* metrics.c: what the goals and watermarks read */
/* Prefix for every /proc and /sys path (tests point it at a fake tree). */
extern const char *pol_sysroot;
/* MemTotal and MemFree in bytes, of the system (@node < 0) or one node. */
int pol_meminfo(int node, uint64_t *total, uint64_t *free_b);
/* The cumulative "some" stall in µs of a PSI file (/proc/pressure/memory, memory.pressure). */
int pol_psi_some_total(const char *path, uint64_t *us);
/* The cgroup v2 mount point, or -ENOENT. */
int pol_cgroup2_mount(char *buf, size_t len);
/* The cgroup v2 path of @pid ("/a/b"), relative to the mount. */
int pol_pid_cgroup(pid_t pid, char *buf, size_t len);
/* The first number in @path (user goals), or -errno (-EINVAL: no number). */
int pol_read_number(const char *path, double *v);
/* A single unsigned number in @path (memory.current), or -errno. */
int pol_read_u64(const char *path, uint64_t *v);
/* Resident bytes of @pid (/proc/PID/statm), or -errno. */
int pol_pid_rss(pid_t pid, uint64_t *bytes);
/* Major faults of @pid so far (/proc/PID/stat), or -errno. */
int pol_pid_majflt(pid_t pid, uint64_t *n);

/* identity.c */
/* [start, end) at @t_ns, replacing what it covers; -1 (set unchanged): no memory. */
int pol_iset_add(struct pol_iset *s, uint64_t start, uint64_t end, int64_t t_ns);
/*
 * The same for @add[0..n), sorted and disjoint, in one merge: O(set + n),
 * where one pol_iset_add() each moves the set's tail.  -1 (set unchanged):
 * no memory.
 */
int pol_iset_add_sorted(struct pol_iset *s, const struct pol_range *add, size_t n);
void pol_iset_remove(struct pol_iset *s, uint64_t start, uint64_t end);
void pol_iset_expire(struct pol_iset *s, int64_t before_ns);
/* Bytes of [start, end) covered by the set. */
uint64_t pol_iset_covered(const struct pol_iset *s, uint64_t start, uint64_t end);
/*
 * The first piece of [start, end) not covered by the set, in
 * [*ps, *pe); returns 0 if none.
 */
int pol_iset_first_gap(const struct pol_iset *s, uint64_t start, uint64_t end,
		       uint64_t *ps, uint64_t *pe);
/* The same, counting only ranges with t_ns >= @since_ns as covering. */
int pol_iset_first_gap_since(const struct pol_iset *s, uint64_t start, uint64_t end,
			     int64_t since_ns, uint64_t *ps, uint64_t *pe);
/*
 * The piece of [start, end) that begins at @start and is uniformly covered
 * or not: its end in *@pe; 1 and its range's time in *@t_ns if covered.
 */
int pol_iset_piece(const struct pol_iset *s, uint64_t start, uint64_t end, uint64_t *pe,
		   int64_t *t_ns);
void pol_iset_free(struct pol_iset *s);

/* quota.c: prioritisation */
#define POL_MAX_SCORE	99
/* Idle (or busy) time past which the score's age part no longer grows. */
#define POL_IDLE_SCORE_US	(2048ULL * 100000)
/* Score 0..99 of a region: higher = acted on first. */
unsigned int pol_score(const struct pol_scheme *s, uint32_t nr_accesses,
		       uint32_t nr_samples, uint64_t age_us);
/*
 * DAMOS-style cut-off over hist[0..POL_MAX_SCORE] (bytes per score): every
 * region scoring above the returned score fits in @budget; regions scoring
 * exactly it fit only in part (until the budget is spent); lower ones wait.
 * 0 when everything fits.
 */
unsigned int pol_score_cutoff(const uint64_t *hist, uint64_t budget);

/* tuner.c: the feedback law that sets the effective quota from the goals */
/* Bounds of a rate goal's quota: the floor is the quota's 1/1024th. */
uint64_t pol_tune_floor(const struct pol_scheme *s);
/*
 * The next quota one rate goal asks for: from its last @q, what the window
 * really used (@used), this window's score @score (current / target, as
 * the action raises it; < 0: unknown, the quota is held), the bounds; @t
 * keeps the average and the ramp.  No I/O, for the tests' plants.
 */
uint64_t pol_tune_rate(struct pol_rate_tuner *t, uint64_t q, uint64_t used, double score,
		       uint64_t qmin, uint64_t qmax);
/* The next quota a level goal asks for: @gap bytes still to move (<= 0: there). */
uint64_t pol_tune_level(double gap, uint64_t qmax);

/* watermark.c: free memory in permille, or -errno. */
int pol_free_permille(enum pol_wmark_metric m, int node);
/* Update s->active from the metric; returns the new state. */
int pol_wmark_update(struct pol_scheme *s);
int pol_node_exists(int node);

/*
 * actions.c: each returns the bytes applied (>= 0) and stores 0 or the
 * -errno of the call that failed in *@err (some bytes may be applied
 * before a failure).
 */
int pol_pidfd_open(pid_t pid);
uint64_t pol_act_madvise(int pidfd, enum pol_action a, uint64_t start, uint64_t len,
			 int *err);
/* Moves the present pages of [start, start+len) not on @node to it. */
uint64_t pol_act_migrate(pid_t pid, int node, uint64_t start, uint64_t len, int *err);
enum pol_err pol_err_class(int err);
const char *pol_err_name(enum pol_err e);

/* engine.c */
#include "common/maps.h"
#include "common/maps_rows.h"

struct pol_target {
	pid_t pid;
	int pidfd;		/* -1 if it could not be opened */
	struct maps maps;	/* for filters and to act on mapped bytes only */
	int64_t maps_ns;
	struct maps_written rec_maps;	/* what policy --record has of @maps */
	int gone;		/* exited: no more actions */
	int pagemap;		/* /proc/PID/pagemap (regret), -1: not open */
	/*
	 * By address, in this process only (another process may use the same
	 * addresses: forked workers, two containers of one image): when each
	 * range was last seen accessed, and per scheme what it acted on
	 * (region identity), one set per scheme of the engine.
	 */
	struct pol_iset accessed;
	struct pol_iset *acted;
	int cg;			/* index into pol_engine.cgroups */
};

/* A piece of a matching region the scheme may act on. */
struct pol_cand {
	uint64_t start, end;
	int target;
	unsigned int score;
};

struct pol_engine {
	struct pol_scheme *s;
	int nr_schemes;
	struct pol_target *t;		/* pol_engine_add_target() */
	int nr_targets;
	size_t cap_targets;
	int last_target;		/* the last target a region was found in */
	struct pol_cand *cand;
	size_t nr_cand, cap_cand;
	int64_t t0_ns;			/* first snapshot applied */
	uint64_t max_idle_us;
	/* how long @accessed remembers: the longest idle= or POL_IDLE_SCORE_US */
	uint64_t track_us;
	/* time one snapshot's actions may take, 0 = no limit (see engine.c) */
	int64_t work_budget_ns;
	int64_t apply_start_ns;
	int64_t now_ns;			/* of the snapshot being applied */
	uint64_t pieces_done;		/* in this snapshot */
	uint64_t act_chunk;		/* POL_ACT_CHUNK */
	uint64_t nr_snapshots;
	uint64_t nr_missed;
	/* regret.c: the counters per (scheme, cgroup), the pieces followed */
	struct pol_regret *regret;
	int nr_regret;
	size_t cap_regret;
	char **cgroups;
	int nr_cgroups;
	struct pol_regret_ent *rent;
	size_t nr_rent, cap_rent;
	uint64_t regret_pages;		/* pages followed in @rent */
	long page_size;
	struct pol_regret_ent rpend;	/* between pol_regret_before() and _after() */
	uint64_t *rbuf;			/* its "here before" and "gone after" bitmaps */
	size_t rbuf_words;
	/*
	 * Reads the state of [start, start + npages pages) of @t after (or
	 * before) scheme @s acted: bit set in @gone where the action's effect
	 * holds (not mapped; on s->node), in @here where it was undone (mapped;
	 * on another node).  0 or -errno.  Tests replace it.
	 */
	int (*probe)(struct pol_engine *e, struct pol_target *t, const struct pol_scheme *s,
		     uint64_t start, uint32_t npages, uint64_t *gone, uint64_t *here);
	/* the cgroup of @pid into @buf (tests replace it); 0 or -errno */
	int (*cgroup_of)(pid_t pid, char *buf, size_t len);
	/* for tests: replaces the syscalls when set */
	uint64_t (*act)(struct pol_engine *e, const struct pol_scheme *s,
			struct pol_target *t, uint64_t start, uint64_t len, int *err);
	int (*maps_refresh)(struct maps *m);
	/* reads a goal's metric (tests: a simulated plant); 0 or -errno */
	int (*goal_read)(struct pol_engine *e, struct pol_goal *g, double *v);
	/* called after each tuning of a scheme's quota (the record's #goal rows) */
	void (*on_tune)(struct pol_engine *e, const struct pol_scheme *s, int64_t now_ns);
	void *on_tune_ctx;
};

int pol_engine_init(struct pol_engine *e, struct pol_scheme *s, int nr_schemes,
		    const pid_t *pids, int nr_pids);
/*
 * The engine's arrays: @p (of *@cap items of @size bytes) made to hold
 * @need, doubling *@cap from @first.  Returns the array, @p itself if it
 * was large enough, or NULL (out of memory: @p and *@cap as they were).
 */
void *pol_grow(void *p, size_t *cap, size_t need, size_t size, size_t first);
/*
 * A target that joins while running (a process tree's new member, a
 * cgroup's): its index, or -ENOMEM.  An existing one is not added twice.
 */
int pol_engine_add_target(struct pol_engine *e, pid_t pid);
/* Target @pid left: nothing more is done to it, its slot is reused. */
void pol_engine_remove_target(struct pol_engine *e, pid_t pid);
/*
 * tuner.c: a quota window of @s ended at @now_ns: read its goals and set
 * s->quota_eff for the next one (the first call only takes the baselines).
 */
void pol_tune_window(struct pol_engine *e, struct pol_scheme *s, int64_t now_ns);
/* The real metric reader (engine's default goal_read). */
int pol_goal_read(struct pol_engine *e, struct pol_goal *g, double *v);

/* Apply every scheme to one snapshot at time @now_ns (CLOCK_MONOTONIC). */
void pol_engine_apply(struct pol_engine *e, const struct daptrace_snapshot *snap,
		      int64_t now_ns);
void pol_engine_free(struct pol_engine *e);

/* regret.c */
enum pol_regret_how pol_regret_how_of(enum pol_action a);
const char *pol_regret_how_name(enum pol_regret_how h);
/* "1s", "10s", "60s" */
const char *pol_regret_win_name(int w);
/* The probe the engine uses by default (pagemap, move_pages). */
int pol_probe(struct pol_engine *e, struct pol_target *t, const struct pol_scheme *s,
	      uint64_t start, uint32_t npages, uint64_t *gone, uint64_t *here);
/*
 * Around one call of scheme @s on [start, start + len) of @t: the state
 * before, then after the call returned at @now_ns (pol_regret_after() does
 * nothing unless pol_regret_before() returned 1).
 */
int pol_regret_before(struct pol_engine *e, const struct pol_scheme *s, struct pol_target *t,
		      uint64_t start, uint64_t len);
void pol_regret_after(struct pol_engine *e, const struct pol_scheme *s, struct pol_target *t,
		      int64_t now_ns);
/* Close the windows that ended by @now_ns. */
void pol_regret_tick(struct pol_engine *e, int64_t now_ns);
/* The cgroup v2 path of @t ("" if it cannot be read), read once. */
const char *pol_target_cgroup(struct pol_engine *e, struct pol_target *t);
/* Does scheme @s act on target @t (its cgroup= filter)? */
int pol_scheme_has_target(struct pol_engine *e, const struct pol_scheme *s,
			  struct pol_target *t);
/* Target @pid left: its pieces' open windows are unknown. */
void pol_regret_target_gone(struct pol_engine *e, pid_t pid);
/* The counters of (@scheme, @cgroup), created if new; NULL: out of memory. */
struct pol_regret *pol_regret_get(struct pol_engine *e, int scheme, const char *cgroup);
/* A cgroup's index in e->cgroups (added if new), -ENOMEM. */
int pol_engine_cgroup(struct pol_engine *e, const char *path);
void pol_regret_free(struct pol_engine *e);

/* stats.c: every cgroup's regret of scheme @si summed into @sum (no cgroup) */
void pol_regret_sum(const struct pol_engine *e, int si, struct pol_regret *sum);
/* stats.c: CSV (one row per scheme) and JSON (one object) of the stats. */
int pol_stats_write_csv(FILE *f, const struct pol_engine *e);
int pol_stats_write_json(FILE *f, const struct pol_engine *e, double elapsed_s);
/* Write atomically to @path (a temporary file renamed over it). */
int pol_stats_save(const char *path, const struct pol_engine *e, double elapsed_s,
		   int json);

#endif
