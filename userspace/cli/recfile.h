/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daptrace record file: CSV (RFC 4180 quoting via libcsv) with metadata
 * rows whose first field starts with '#'.
 *
 *   # daptrace-record v2                          magic, first row
 *   #meta,<key>,<value>                           any number
 *   #target,<pid>,<comm>                          one per target
 *   <column names>                                column header, see below
 *   #snap,<seq>,<start_ns>,<end_ns>,<nr_regions>,<nr_samples>,<flags>,<missed_before>
 *   <one value per column>                        x nr_regions
 *   ...                                           more #snap blocks
 *   #end,<key>,<value>                            trailer: missed, reason, ...
 *   #eof                                          last row: file is complete
 *
 * Times are ns since the recording started (CLOCK_MONOTONIC); time_ns of a
 * region row is its window's end.  Addresses are decimal, [start, end).
 * Other '#' rows are comments and ignored (a policy's record has #goal
 * rows between the snapshots: the quota tuner's steps, policy_record.h).
 *
 * Columns.  v2 files name them in the header row and a reader finds them by
 * name (REC_COLUMNS is what this version writes; unknown columns are
 * skipped, so later versions may add some): time_ns, seq, pid, start, end,
 * nr_accesses, age and label are required; nr_samples (the window's sampling
 * rounds, = the #snap row's) and the placement columns nr_present,
 * node0..node3 (sampling rounds that found the page present / on that node)
 * and phys_addr (last present page sampled, empty if none) are optional.
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
			"nr_present,node0,node1,node2,node3,phys_addr,label"
#define REC_COLUMNS_V1	"time_ns,seq,pid,start,end,nr_accesses,age,label"
#define REC_NODES	4
#define REC_PHYS_NONE	UINT64_MAX

struct rec_kv {
	char *key;
	char *value;
};

struct rec_target {
	pid_t pid;
	char *comm;
};

/* Placement fields are valid iff the snapshot's @placement is set. */
struct rec_region {
	uint64_t start, end;
	uint32_t nr_accesses, age;
	pid_t pid;
	char *label;
	uint32_t nr_present;
	uint32_t node_samples[REC_NODES];
	uint64_t phys_addr;		/* REC_PHYS_NONE if none */
};

struct rec_snapshot {
	uint64_t seq;
	uint64_t start_ns, end_ns;	/* since the recording started */
	uint32_t nr_regions;
	uint32_t nr_samples;
	uint32_t flags;
	uint64_t missed_before;
	struct rec_region *regions;
	unsigned long line;		/* line of the #snap row */
	int placement;			/* regions carry placement */
};

/* Header and trailer of a file, filled by rec_read(). */
struct rec_info {
	struct rec_kv *meta;
	int nr_meta;
	struct rec_target *targets;
	int nr_targets;
	struct rec_kv *trailer;
	int nr_trailer;
	int complete;			/* #eof seen */
	uint64_t nr_snapshots;
};

/* Writing: each returns 0 or -errno. */
int rec_write_header(FILE *f, const struct rec_kv *meta, int nr_meta,
		     const struct rec_target *targets, int nr_targets);
int rec_write_snapshot(FILE *f, const struct rec_snapshot *s);
int rec_write_trailer(FILE *f, const struct rec_kv *kv, int nr);

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
const char *rec_info_trailer(const struct rec_info *info, const char *key);
void rec_info_free(struct rec_info *info);

#endif
