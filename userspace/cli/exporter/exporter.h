/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * daptrace exporter: the monitor's snapshots as Prometheus / OpenMetrics
 * metrics (docs/exporter.md).
 *
 * One thread reads every snapshot through libdaptrace (a lossless reader
 * like record), folds it into a view (exporter_model.c), and renders the
 * metrics (exporter_metrics.c) into text that the HTTP server
 * (exporter_http.c) hands out and the textfile writer
 * (exporter_textfile.c) saves.  A scrape only copies the newest text: it
 * never reads the kernel and never waits for the reader.
 */
#ifndef DAPTRACE_EXPORTER_H
#define DAPTRACE_EXPORTER_H

#include <stdint.h>
#include <sys/types.h>

#include "common/accuracy.h"
#include "common/recfile.h"
#include "daptrace.h"
#include "metric_set.h"
#include "session/session.h"

#define EXP_MAX_BUCKETS		16	/* --idle-buckets */
#define EXP_MAX_PERCENTILES	16	/* --idle-percentiles */
#define EXP_COMM_LEN		64	/* /proc/PID/comm is 16 with its NUL */

/* What the model needs from the options. */
struct exp_config {
	unsigned int top_n;			/* targets with series of their own */
	uint64_t idle_us[EXP_MAX_BUCKETS];	/* increasing */
	int nr_idle;
	unsigned int pct[EXP_MAX_PERCENTILES];	/* increasing, 0-100 */
	int nr_pct;
};

/*
 * One series group: a target of the top N, or "other" (pid 0), everything
 * else summed.  Bytes are of the group's regions in the newest snapshot.
 */
struct exp_group {
	pid_t pid;				/* 0: other */
	char comm[EXP_COMM_LEN];		/* "" for other */
	uint32_t nr_targets;
	uint32_t nr_regions;
	uint64_t bytes;				/* all regions */
	uint64_t wss_bytes;			/* nr_accesses >= 1, mapped bytes */
	uint64_t wss_unknown_bytes;		/* of those, counted whole: no map */
	uint64_t unobservable_bytes;		/* see daptrace_region_observed() */
	uint64_t idle_bytes[EXP_MAX_BUCKETS];	/* idle for >= idle_us[i] */
	int64_t idle_pct_us[EXP_MAX_PERCENTILES];	/* valid if nr_regions */
};

/* Per-target totals and the region order behind the percentiles. */
struct exp_tacc;
struct exp_rkey;

/* The newest snapshot as exported. */
struct exp_view {
	int valid;				/* a snapshot was read */
	uint64_t seq;
	uint64_t start_ns, end_ns;		/* CLOCK_MONOTONIC */
	uint32_t sample_us, aggr_us, nr_samples, flags;
	/* the accuracy probes pooled up to the newest snapshot */
	int has_acc;
	struct acc_estimate acc;
	uint64_t acc_span_ns;			/* the pooled windows' span */
	struct exp_group *g;			/* top targets, then other */
	int nr_groups;
	int nr_targets;				/* in the snapshot */
	/* scratch, reused from snapshot to snapshot */
	struct exp_tacc *t;
	size_t t_cap;
	struct exp_rkey *r;
	size_t r_cap;
	size_t g_cap;
};

/* exporter_opts.c: the command line and --config FILE. */
struct exp_opts {
	struct session_opts so;		/* -p, -s, -a, -u, -r, -t, -d, command */
	int attrs_given;		/* any of -s -a -u -r -t */
	int attach;
	const char *listen;
	int no_http;
	const char *textfile;
	uint64_t textfile_us;
	struct exp_config cfg;
	const char *policy_stats;
	char **values;			/* --config's, owned */
	size_t nr_values;
};

/* 0, or an exit code after the message naming the flag (or FILE:LINE). */
int exp_parse_opts(int argc, char **argv, struct exp_opts *o);
void exp_opts_free(struct exp_opts *o);

/* The name of @pid for its label ("" if unknown). */
typedef const char *(*exp_comm_fn)(void *ctx, pid_t pid);
/*
 * The address ranges @pid's mappings cover (ascending and apart,
 * common/mapped.h) into *@r and *@n, valid until the view is made; 0 if
 * they are not known.
 */
typedef int (*exp_mapped_fn)(void *ctx, pid_t pid, const struct rec_range **r, size_t *n);

/*
 * exporter_model.c: fold @s into @v, @comm and @mapped (either may be
 * NULL: no names, no maps) asked with @ctx.  Returns 0 or -ENOMEM (then @v
 * is empty, not valid, until the next snapshot).
 */
int exp_view_update(struct exp_view *v, const struct exp_config *c,
		    const struct daptrace_snapshot *s, exp_comm_fn comm, exp_mapped_fn mapped,
		    void *ctx);
void exp_view_free(struct exp_view *v);
/* The pids of @s's regions into @pids (room for all of them): ascending, each once. */
size_t exp_snapshot_pids(const struct daptrace_snapshot *s, pid_t *pids);

/*
 * exporter_maps.c: the mapped ranges of the targets, from /proc/PID/maps,
 * for the working set.  Each target's are read when it first shows up and
 * again when older than the caller's period; a read that fails (no
 * permission, the process gone) keeps the last one, and a target never
 * read has none: its map is not known.
 */
struct exp_map {
	pid_t pid;
	struct rec_range *r;
	size_t n;
	int known;			/* a read found @r */
	int tried;			/* read at @read_ns */
	int64_t read_ns;
};

struct exp_maps {
	const char *proc;		/* NULL: /proc; a fake tree in tests */
	struct exp_map *m;		/* by pid, ascending */
	size_t n;
};

/*
 * Keep the maps of @s's targets, forget the others, and read those not
 * read for @every_ns at @now_ns.  0 or -ENOMEM (the maps as they were).
 */
int exp_maps_update(struct exp_maps *mp, const struct daptrace_snapshot *s, int64_t now_ns,
		    int64_t every_ns);
/* @pid's ranges, as exp_mapped_fn gives them. */
int exp_maps_of(const struct exp_maps *mp, pid_t pid, const struct rec_range **r, size_t *n);
void exp_maps_free(struct exp_maps *mp);

/* What the reader thread knows about the monitor, read each render. */
struct exp_health {
	int module_loaded;
	int on;				/* < 0: unknown */
	int have_counters, have_attrs;
	struct daptrace_counters c;
	uint64_t samples_late, samples_busy;
	int have_late, have_busy;
	struct daptrace_attrs a;
	int targets_by_state[DAPTRACE_TARGET_EXITED + 1];
};

/* The exporter's own counters, for the lifetime of the process. */
struct exp_counts {
	uint64_t snapshots_read;
	uint64_t snapshots_missed;	/* by this reader */
	uint64_t snapshots_truncated;
	uint64_t target_exits;
	uint64_t read_errors;		/* kernel interface reads that failed */
	uint64_t scrapes;
	uint64_t textfile_writes;
	uint64_t textfile_errors;
	uint64_t series_dropped;	/* by the previous render (a gauge) */
	uint64_t policy_errors;		/* policy stats file unreadable/invalid */
};

/* exporter_policy.c: the JSON stats file of `daptrace policy --stats-json`. */
struct json_object;
struct exp_policy {
	const char *path;		/* NULL: none */
	struct json_object *root;	/* last good parse */
	int up;				/* the last read succeeded */
	double mtime;			/* of the file read, s since the epoch */
	int64_t checked_ns;
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	off_t size;
	int err;			/* last failure: errno, -1 invalid, 0 none */
};

/* Re-read the file if it changed (at most once a second); counts errors. */
void exp_policy_refresh(struct exp_policy *p, struct exp_counts *n, int64_t now_ns);
void exp_policy_metrics(const struct exp_policy *p, struct metric_set *m);
void exp_policy_free(struct exp_policy *p);

/* exporter_metrics.c: the whole set, from what the reader thread knows. */
void exp_metrics_build(struct metric_set *m, const struct exp_config *c,
		       const struct exp_view *v, const struct exp_health *h,
		       const struct exp_counts *n, const struct exp_policy *p);
/* The target labels of a group: target, comm (cgroup to come). */
void exp_group_labels(struct labels *l, const struct exp_group *g);

/* exporter_http.c (exporter_http_none.c in static builds). */
struct exp_http;
/*
 * Bind @spec ("ADDR:PORT", "[ADDR6]:PORT"; PORT 0 picks one) and serve
 * /metrics.  On failure prints a message naming --listen (or @what) and
 * returns an exit code; on success *@hp is running and @bound says where.
 */
int exp_http_start(struct exp_http **hp, const char *spec, const char *what,
		   char *bound, size_t bound_len);
/* Replace the texts a scrape returns (takes ownership of both). */
void exp_http_publish(struct exp_http *h, char *text, size_t text_len, char *om,
		      size_t om_len);
uint64_t exp_http_scrapes(const struct exp_http *h);
void exp_http_stop(struct exp_http *h);

/* exporter_textfile.c: DIR/daptrace.prom for node_exporter's textfile collector. */
struct exp_textfile {
	const char *dir;
	char *path, *tmp;
	int failing;			/* the last write failed (warned once) */
};
/* Check @dir can be written (a clear message and EXIT_USAGE if not). */
int exp_textfile_open(struct exp_textfile *t, const char *dir);
/* Write @text atomically; counts the write or the failure. */
void exp_textfile_write(struct exp_textfile *t, const char *text, size_t len,
			struct exp_counts *n);
/* Remove the file (a stopped exporter leaves no stale metrics) and free. */
void exp_textfile_close(struct exp_textfile *t);

#endif
