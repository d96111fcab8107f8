/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daptrace record file: CSV (RFC 4180 quoting via libcsv) with metadata
 * rows whose first field starts with '#'.
 *
 *   # daptrace-record v2                          magic, first row
 *   #meta,<key>,<value>                           any number
 *   #target,<pid>,<comm>[,<ppid>,<cgroup>,<time_ns>]  one per target
 *   <column names>                                column header, see below
 *   #footprint,<pid>,<time_ns>,<vsz>,<rss>        a target's footprint
 *   #maps,<pid>,<time_ns>[,<start>,<end>]...      a target's mapped ranges
 *   #probes,<seq>,<pages>,<tp>,<fn>,<fp>,<tn>,<unobserved>  accuracy probes
 *   #snap,<seq>,<start_ns>,<end_ns>,<nr_regions>,<nr_samples>,<flags>,
 *         <missed_before>[,<sample_us>,<aggr_us>]
 *   <one value per column>                        x nr_regions
 *   ...                                           more #snap blocks
 *   #target,<pid>,<comm>,<ppid>,<cgroup>,<time_ns>  a target that joined later
 *   #exit,<pid>,<time_ns>[,<why>]                 a target that left
 *   #regret,<scheme>,<name>,<method>,<cgroup>,<acted>,<unknown_calls>,
 *         (<window_us>,<checked>,<back>,<unknown>)...  a policy's regret
 *   #end,<key>,<value>                            trailer: missed, reason, ...
 *   #eof                                          last row: file is complete
 *
 * Times are ns since the recording started (CLOCK_MONOTONIC); time_ns of a
 * region row is its window's end.  Addresses are decimal, [start, end).
 * Other '#' rows (comments, rows of later versions, a policy record's
 * #goal rows: the quota tuner's steps, policy_record.h) are ignored; so
 * are fields after the ones a row is known to have.
 *
 * Targets.  Every region row's pid must be named by a #target row before
 * it: in the header, or between snapshots for a process that joined the
 * recording later (a new member of a process tree or of a cgroup, a new
 * process of the machine).  After the comm a #target row may carry the
 * parent's pid (empty or 0: unknown), the process's cgroup v2 path (empty:
 * unknown) and when it became a target (ns since the start; 0 in the
 * header); rows of older versions have the comm only.  A #target row for a
 * pid that has not left gives the same process a new comm (it exec'ed).
 * #exit says a target left at time_ns: <why> is "exit" (the default) or
 * "moved" (out of the followed cgroup).  Region rows of the window in which
 * it left may follow its #exit row.  A #target row for a pid that left is
 * another process that got the same pid.
 *
 * Intervals.  The two trailing #snap fields are the sampling and the
 * aggregation interval in force for that window (the kernel may tune them
 * while recording); a #snap row without them (older records) takes the
 * #meta sample_us and aggr_us.  A region's access frequency is nr_accesses
 * over its own window's nr_samples.
 *
 * Footprints (optional, added with the intervals): before the #snap row of
 * a window, #footprint rows with a target's virtual size (VSZ) and
 * resident set (RSS) in bytes, read from /proc/<pid>/statm at time_ns.
 * With up to 64 targets every live target has one per window; with more,
 * each target's is read about once a second, and a reader takes a target's
 * last footprint as its current one until it leaves.  Readers that do not
 * know the row skip it.
 *
 * Maps (optional, added after the footprints): before the #snap row of a
 * window, a #maps row for each target whose /proc/<pid>/maps the recorder
 * (or policy --record) read since its last one: the address ranges
 * [start, end) its mappings covered at time_ns, ascending and apart
 * (adjacent mappings joined).  The space between them is no memory (a
 * region labelled "[unmapped]" is mostly such space; the ranges say
 * exactly how much).  A read of more
 * than REC_MAPS_PER_ROW ranges takes more rows, one after the other with
 * the same pid and time_ns; a row without ranges is a process without
 * mappings.  The recorder writes a read only when its ranges changed.  A
 * target's last map holds until its next one; another process that gets
 * the pid (a #target row after the #exit) starts without.  Where a record
 * has none for a target (an older record, an import, a map that could not
 * be read) its regions' mapping is not known, and a report says so.
 * Readers that do not know the row skip it.
 *
 * Accuracy probes (optional): before the #snap row of window <seq>, the
 * module's accuracy probes of that window (snapshot header, see the uapi
 * header and sysfs-docs/ probe_pages): <pages> pages given page-level
 * truth (the window's own count: the module's cost bound varies it from
 * window to window, see probe_max_cpu_bp; readers pool by pages), of
 * which <tp> accessed with their region read accessed, <fn> accessed
 * with their region read not accessed, <fp> not accessed with
 * their region read accessed, <tn> neither, and <unobserved> whose truth
 * or region verdict could not be observed; the five add up to <pages>.
 * Absent: the module did not probe (older module, probe_pages 0), or
 * kept none of the window's probes (all their draws fell in gaps).
 * Readers that do not know the row skip it.
 *
 * Regret (daptrace policy --record, written once, before the trailer): per
 * scheme (its index and name) and per cgroup of the targets it acted on,
 * how its outcome was followed (<method>: resident, node), the bytes it
 * took away and the calls whose effect could not be read, then for each
 * window (ascending <window_us>) the acted bytes whose window was checked,
 * those of them seen back by the window's end, and those that could not
 * be checked (policy.h, struct pol_regret).  A reader checks
 * back <= checked and checked + unknown <= acted; older readers skip the row.
 *
 * Columns.  v2 files name them in the header row and a reader finds them by
 * name (REC_COLUMNS is what this version writes; unknown columns are
 * skipped, so later versions may add some): time_ns, seq, pid, start, end,
 * nr_accesses, age and label are required (an empty age: not known, as in
 * a trace of a kernel before 5.16 or damo's null); nr_samples (the window's sampling
 * rounds, = the #snap row's), the placement columns nr_present,
 * node0..node3 (sampling rounds that found the page present / on that node)
 * and phys_addr (last present page sampled, empty if none), flags
 * (REC_REGION_* bits, 0 or empty if none) and nr_unobserved (sampling
 * rounds whose page could not be observed; nr_accesses counts among the
 * others; equal to nr_samples the region is REC_REGION_NOT_OBSERVABLE;
 * empty or absent: 0) and nr_huge (of the nr_present rounds, those whose
 * page a huge entry mapped, one accessed bit for all its base pages; empty
 * or absent: 0, not known) are optional.
 * v1 files have exactly REC_COLUMNS_V1 and no placement.  Because the trailer comes last,
 * a file cut short (killed recorder, full disk) is detected as truncated.
 */
#ifndef DAPTRACE_RECFILE_H
#define DAPTRACE_RECFILE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define REC_MAGIC	"# daptrace-record v2"
#define REC_MAGIC_V1	"# daptrace-record v1"
#define REC_COLUMNS	"time_ns,seq,pid,start,end,nr_accesses,age,nr_samples," \
			"nr_present,node0,node1,node2,node3,phys_addr,flags," \
			"nr_unobserved,nr_huge,label"
#define REC_COLUMNS_V1	"time_ns,seq,pid,start,end,nr_accesses,age,label"
#define REC_NODES	4
#define REC_PHYS_NONE	UINT64_MAX

/*
 * Region flags.  NOT_OBSERVABLE: memory the monitor cannot see accessed
 * (hugetlb without accessed bits, VM_PFNMAP/VM_IO, a target whose mm has
 * secondary-MMU users such as KVM): its nr_accesses mean nothing, so it is
 * never cold, idle nor in a working set; reports show it apart.
 */
#define REC_REGION_NOT_OBSERVABLE	0x1U

struct rec_kv {
	char *key;
	char *value;
};

/* @exit_ns while the target is followed; at an #exit row its time */
#define REC_NO_EXIT	UINT64_MAX

struct rec_target {
	pid_t pid;
	char *comm;
	pid_t ppid;			/* 0: unknown */
	char *cgroup;			/* NULL: unknown */
	uint64_t time_ns;		/* joined (0: from the start) */
	uint64_t exit_ns;		/* left, or REC_NO_EXIT */
	int moved;			/* left the followed cgroup (#exit ...,moved) */
};

/* #maps: at most this many ranges in a row (3 + 2 x 14 fields) */
#define REC_MAPS_PER_ROW	14

/* An address range [start, end). */
struct rec_range {
	uint64_t start, end;
};

/*
 * One read of a target's maps (its #maps rows): ranges @first to
 * @first + @nr - 1 of the snapshot's @map_ranges.
 */
struct rec_maps {
	pid_t pid;
	uint64_t time_ns;		/* when it was read, since the start */
	uint32_t first, nr;
};

/* Placement fields are valid iff the snapshot's @placement is set. */
struct rec_region {
	uint64_t start, end;
	uint32_t nr_accesses, age;
	pid_t pid;
	char *label;
	uint32_t nr_present;
	uint32_t nr_huge;		/* of nr_present, pages a huge entry mapped */
	uint32_t node_samples[REC_NODES];
	uint64_t phys_addr;		/* REC_PHYS_NONE if none */
	uint32_t flags;			/* REC_REGION_* */
	uint32_t nr_unobserved;		/* samples that could not observe (0: none) */
	int age_unknown;		/* @age is not known (its field was empty) */
};

static inline int rec_observable(const struct rec_region *r)
{
	return !(r->flags & REC_REGION_NOT_OBSERVABLE);
}

/* A target's memory footprint (from /proc/<pid>/statm), in bytes. */
struct rec_footprint {
	pid_t pid;
	uint64_t time_ns;		/* when it was read, since the start */
	uint64_t vsz, rss;
};

struct rec_snapshot {
	uint64_t seq;
	uint64_t start_ns, end_ns;	/* since the recording started */
	uint32_t nr_regions;
	uint32_t nr_samples;
	uint32_t flags;
	uint64_t missed_before;
	/* intervals of this window: its own, else the #meta ones, else 0 */
	uint32_t sample_us, aggr_us;
	struct rec_region *regions;
	/* the #footprint rows before the #snap row */
	struct rec_footprint *footprints;
	uint32_t nr_footprints;
	/* the #maps rows before the #snap row: the reads, and their ranges */
	struct rec_maps *maps;
	uint32_t nr_maps;
	struct rec_range *map_ranges;
	uint32_t nr_map_ranges;
	unsigned long line;		/* line of the #snap row */
	int placement;			/* regions carry placement */
	/* the #probes row before the #snap row, if any (has_probes) */
	int has_probes;
	struct rec_probes {
		uint32_t pages, tp, fn, fp, tn, unobserved;
	} probes;
};

#define REC_REGRET_WINDOWS	6	/* at most, in a #regret row (32 fields) */

/* A #regret row. */
struct rec_regret {
	uint32_t scheme;
	char *name, *method, *cgroup;
	uint64_t acted, unknown_calls;
	int nr_windows;
	struct {
		uint64_t us, checked, back, unknown;
	} w[REC_REGRET_WINDOWS];
};

/*
 * Header and trailer of a file, filled by rec_read().  @targets grows as
 * #target rows arrive (in file order; a pid may appear again, see the
 * top of this file): a snapshot callback sees the targets known so far.
 */
struct rec_info {
	struct rec_kv *meta;
	int nr_meta;
	struct rec_target *targets;
	int nr_targets;
	int *tindex;			/* pid -> latest entry of @targets (reader's) */
	size_t tindex_cap;
	struct rec_kv *trailer;
	int nr_trailer;
	struct rec_regret *regret;	/* #regret rows, in file order */
	int nr_regret;
	int complete;			/* #eof seen */
	uint64_t nr_snapshots;
};

/* Writing: each returns 0 or -errno. */
int rec_write_header(FILE *f, const struct rec_kv *meta, int nr_meta,
		     const struct rec_target *targets, int nr_targets);
/*
 * A #target row; between snapshots: a target that joined later (or one
 * that exec'ed, with its new comm).  The ppid, cgroup and time fields are
 * written when @t has any of them.
 */
int rec_write_target(FILE *f, const struct rec_target *t);
/* An #exit row: target @pid left at @time_ns, moved out of the cgroup if @moved. */
int rec_write_exit(FILE *f, pid_t pid, uint64_t time_ns, int moved);
/* @s's #footprint and #maps rows, its #snap row (with its intervals if set), its regions. */
int rec_write_snapshot(FILE *f, const struct rec_snapshot *s);
int rec_write_trailer(FILE *f, const struct rec_kv *kv, int nr);
int rec_write_regret(FILE *f, const struct rec_regret *r);

/*
 * Reading: calls @cb for every complete snapshot (the snapshot and its
 * labels are only valid during the call; a non-zero return stops reading
 * and is returned).  Returns 0, or -1 with a message "<name>:<line>: ..."
 * in @err.  Without @allow_partial, a file without the #eof trailer is an
 * error; with it, the last incomplete snapshot is dropped silently.
 */
typedef int (*rec_snapshot_cb)(void *arg, const struct rec_snapshot *s,
			       const struct rec_info *info);
int rec_read(FILE *f, const char *name, int allow_partial, rec_snapshot_cb cb,
	     void *arg, struct rec_info *info, char *err, size_t errlen);
/* Open a record for reading: "-" is stdin, gzip is decompressed. */
FILE *rec_open(const char *path, char *err, size_t errlen);
/* Create a record for writing ("-": stdout), gzip-compressed if @compress. */
FILE *rec_create(const char *path, int compress, char *err, size_t errlen);
int rec_read_path(const char *path, int allow_partial, rec_snapshot_cb cb,
		  void *arg, struct rec_info *info, char *err, size_t errlen);
const char *rec_info_get(const struct rec_info *info, const char *key);
/* The latest #target row of @pid read so far, or NULL. */
const struct rec_target *rec_info_target(const struct rec_info *info, pid_t pid);
const char *rec_info_trailer(const struct rec_info *info, const char *key);
void rec_info_free(struct rec_info *info);

#endif
