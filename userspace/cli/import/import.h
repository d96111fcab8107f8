/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Records of other tools, read as daptrace records: damo's (its default
 * zlib-compressed JSON, "json_compressed", and plain JSON; import_damo.c)
 * and a `perf script` or `trace-cmd report` text of DAMON's
 * damon:damon_aggregated tracepoint or daptrace's own
 * daptrace:daptrace_aggregated, which has DAMON's fields (import_perf.c).
 *
 * Each importer fills a small model (targets, snapshots of one target
 * each); import.c turns it into a daptrace record: the snapshots of one
 * aggregation window (one per target) become one, times count from the
 * first window's start, pids are numbered from 1 in the order the targets
 * appear (neither damo nor the tracepoints carry the pid: the comm names
 * the original target id, and a #meta target_id.<pid> row keeps it for
 * report damo); a damo record written by daptrace keeps its pids, comms
 * and labels in keys damo ignores, and they come back.  An age the source does not know (a trace of
 * a kernel before 5.16, damo's null or -1) stays unknown.  Labels and placement are not in those
 * formats; a window's sample count is its aggregation interval over its
 * sampling interval, from the record (damo), the tune events (perf), or
 * DAMON's defaults (5 ms) when the file has none, and never less than the
 * window's largest access count.
 */
#ifndef DAPTRACE_IMPORT_H
#define DAPTRACE_IMPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum rec_format {
	REC_FMT_UNKNOWN,
	REC_FMT_DAPTRACE,
	REC_FMT_DAMO_JSON,		/* damo's "json" */
	REC_FMT_DAMO_ZLIB,		/* damo's "json_compressed" (its default) */
	REC_FMT_PERF_SCRIPT,		/* perf script / trace-cmd report text */
};

/* What the first bytes of a (decompressed) file say it is. */
enum rec_format rec_sniff(const unsigned char *buf, size_t len);
const char *rec_format_name(enum rec_format fmt);

struct imp_region {
	uint64_t start, end;
	uint32_t nr_accesses, age;
	int age_unknown;		/* the source has none (damo's null, old traces) */
	char *label;			/* owned; NULL: none (daptrace's, via damo) */
};

struct imp_snapshot {
	int target;			/* index in imp.targets */
	uint64_t start_ns, end_ns;	/* absolute, on the source's clock */
	int has_start;
	uint32_t sample_us;		/* 0: the record's */
	uint32_t nr_samples;		/* 0: aggregation / sampling interval */
	struct imp_region *regions;
	uint32_t nr, cap;
};

/* What a damo record written by daptrace (report damo) says of its target. */
struct imp_origin {
	int32_t pid;			/* 0: none */
	char *comm;			/* owned; NULL: none */
};

struct imp {
	const char *name;		/* for messages */
	const char *source;		/* "damo json", ... for the header */
	uint64_t *target_ids;		/* the source's target ids */
	struct imp_origin *origin;	/* per target */
	int32_t *pids;			/* per target, its pid in the record (emit) */
	int nr_targets;
	struct imp_snapshot *snaps;
	size_t nr_snaps, cap;
	uint32_t sample_us, aggr_us, update_us;	/* 0: unknown */
	int sample_assumed;		/* no sampling interval in the file */
	uint64_t skipped;		/* lines or entries left out, counted */
	char *err;
	size_t errlen;
};

/* The target with source id @id (added if new); -1 out of memory. */
int imp_target(struct imp *m, uint64_t id);
/* A new snapshot of @target; NULL out of memory. */
struct imp_snapshot *imp_snapshot(struct imp *m, int target);
/* Add @r to @s, which takes its label (freed on failure too). */
int imp_region(struct imp *m, struct imp_snapshot *s, const struct imp_region *r);
/* Record an error "<name>: <what>"; returns -1. */
int imp_fail(struct imp *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int import_damo(struct imp *m, FILE *in, int zlib_compressed);
int import_perf(struct imp *m, FILE *in);

/*
 * Convert @in (format @fmt, read from its start) into a daptrace record
 * on @out.  Returns 0, or -1 with "<name>: ..." in @err.
 */
int rec_import(FILE *in, enum rec_format fmt, const char *name, FILE *out, char *err,
	       size_t errlen);

#endif
