// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace exporter: the metric catalogue.  Every family the exporter
 * writes is named here (the policy's are in exporter_policy.c), with the
 * help text a scraper shows; docs/exporter.md lists them for people.
 *
 * Naming follows Prometheus' conventions: base units in the name
 * (_bytes, _seconds), counters end in _total, labels are bounded sets.
 * The kernel's counters restart from 0 at every "on", which Prometheus'
 * rate() and increase() read as the counter resets they are.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "exporter.h"

#define G METRIC_GAUGE
#define C METRIC_COUNTER

void exp_group_labels(struct labels *l, const struct exp_group *g)
{
	/*
	 * "target" is what was monitored: a pid today; a process tree, a
	 * cgroup or the machine once those targets exist, when a bounded
	 * "cgroup" label joins these two.
	 */
	if (g->pid)
		labels_addf(l, "target", "%d", (int)g->pid);
	else
		labels_add(l, "target", "other");
	labels_add(l, "comm", g->comm);
}

/* "600", "0.5": seconds as a label value, no exponent, no trailing zeros. */
static void seconds_label(struct labels *l, const char *name, uint64_t us)
{
	char buf[40];
	int n;

	if (us % 1000000 == 0) {
		labels_addf(l, name, "%" PRIu64, us / 1000000);
		return;
	}
	n = snprintf(buf, sizeof(buf), "%" PRIu64 ".%06" PRIu64, us / 1000000, us % 1000000);
	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = '\0';
	labels_add(l, name, buf);
}

static int fam(struct metric_set *m, const char *name, enum metric_type t, const char *unit,
	       const char *help)
{
	return mset_family(m, name, t, unit, help);
}

static void one(struct metric_set *m, const char *name, enum metric_type t, const char *unit,
		const char *help, double v)
{
	mset_one(m, name, t, unit, help, NULL, v);
}

static void targets(struct metric_set *m, const struct exp_config *c, const struct exp_view *v)
{
	int f_bytes, f_wss, f_wss_unknown, f_idle, f_pct, f_unobs, f_regions, f_targets;

	if (!v->valid)
		return;
	f_bytes = fam(m, "daptrace_target_bytes", G, "bytes",
		      "Bytes of the target's monitored regions in the newest snapshot "
		      "(its virtual address ranges, small holes between mappings included).");
	f_wss = fam(m, "daptrace_working_set_bytes", G, "bytes",
		    "Bytes inside the target's mappings of its regions accessed in the newest "
		    "snapshot's window (nr_accesses >= 1, as daptrace report wss counts them).");
	f_wss_unknown = fam(m, "daptrace_working_set_mapping_unknown_bytes", G, "bytes",
			    "Of daptrace_working_set_bytes, the bytes of targets whose mappings "
			    "could not be read: their accessed regions counted whole, holes "
			    "between mappings included.");
	f_idle = fam(m, "daptrace_idle_bytes", G, "bytes",
		     "Bytes of the target's regions not accessed for at least min_idle_seconds "
		     "(windows the region stayed unaccessed, DAMON's age, times the window).");
	f_pct = fam(m, "daptrace_idle_time_seconds", G, "seconds",
		    "DAMON_STAT-style idle time percentiles of the target's bytes: the idle "
		    "time at which the regions sorted from hottest to idlest cover percentile "
		    "% of the bytes; negative: accessed, for that long at that level.");
	f_unobs = fam(m, "daptrace_not_observable_bytes", G, "bytes",
		      "Bytes of the target's regions whose accesses the monitor could not "
		      "observe (0 until the kernel reports it per region).");
	f_regions = fam(m, "daptrace_target_regions", G, "",
			"Regions of the target in the newest snapshot.");
	f_targets = fam(m, "daptrace_targets", G, "",
			"Targets in the series group: 1 for a target of the top N, the rest "
			"for target=\"other\".");
	for (int i = 0; i < v->nr_groups; i++) {
		const struct exp_group *g = &v->g[i];
		struct labels l;

		labels_init(&l);
		exp_group_labels(&l, g);
		mset_add(m, f_bytes, &l, (double)g->bytes);
		mset_add(m, f_wss, &l, (double)g->wss_bytes);
		mset_add(m, f_wss_unknown, &l, (double)g->wss_unknown_bytes);
		mset_add(m, f_unobs, &l, (double)g->unobservable_bytes);
		mset_add(m, f_regions, &l, g->nr_regions);
		mset_add(m, f_targets, &l, g->nr_targets);
		for (int b = 0; b < c->nr_idle; b++) {
			struct labels lb = l;

			seconds_label(&lb, "min_idle_seconds", c->idle_us[b]);
			mset_add(m, f_idle, &lb, (double)g->idle_bytes[b]);
		}
		/* no regions, no distribution */
		for (int p = 0; g->nr_regions && p < c->nr_pct; p++) {
			struct labels lp = l;

			labels_addf(&lp, "percentile", "%u", c->pct[p]);
			mset_add(m, f_pct, &lp, (double)g->idle_pct_us[p] / 1e6);
		}
	}
}

/*
 * The accuracy estimate (accuracy.h): the module's probes pooled over the
 * last windows, with Wilson's 95 % bounds, and the span it covers.  No
 * series without probes, or without an accessed probe for the recall.
 */
static void accuracy(struct metric_set *m, const struct exp_view *v)
{
	static const char *const what[] = { "estimate", "lo", "hi" };
	const struct acc_interval *iv[2] = { &v->acc.recall, &v->acc.precision };
	static const char *const name[2] = {
		"daptrace_estimated_recall", "daptrace_estimated_precision",
	};
	static const char *const help[2] = {
		"Estimated share of the accessed memory that the regions read as accessed "
		"(accuracy probes, pooled over daptrace_accuracy_window_seconds; bound: "
		"estimate, or Wilson's 95 % lo and hi).",
		"Estimated share of the memory the regions read as accessed that was "
		"accessed (as daptrace_estimated_recall).",
	};

	if (!v->has_acc)
		return;
	for (int k = 0; k < 2; k++) {
		int f;

		if (!iv[k]->n)
			continue;
		f = fam(m, name[k], G, "", help[k]);
		for (int b = 0; b < 3; b++) {
			struct labels l;

			labels_init(&l);
			labels_add(&l, "bound", what[b]);
			mset_add(m, f, &l, b == 0 ? iv[k]->est : b == 1 ? iv[k]->lo : iv[k]->hi);
		}
	}
	one(m, "daptrace_accuracy_probe_pages", G, "",
	    "Accuracy probe pages the estimates rest on (including unobserved ones).",
	    (double)v->acc.pages);
	one(m, "daptrace_accuracy_probe_pages_unobserved", G, "",
	    "Of those, pages whose truth or region verdict could not be observed.",
	    (double)v->acc.unobserved);
	one(m, "daptrace_accuracy_window_seconds", G, "seconds",
	    "Span of the windows the accuracy estimates pool.", (double)v->acc_span_ns / 1e9);
}

/* The newest snapshot read: which one, and when its window ended. */
static void snapshot(struct metric_set *m, const struct exp_view *v)
{
	struct timespec real, mono;
	double end;

	if (!v->valid)
		return;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	/* the window's end on the wall clock, through the two clocks' offset */
	end = (double)real.tv_sec + real.tv_nsec / 1e9 -
	      ((double)mono.tv_sec + mono.tv_nsec / 1e9 - (double)v->end_ns / 1e9);
	one(m, "daptrace_last_snapshot_seq", G, "",
	    "Sequence number of the newest snapshot read (all target series are from it).",
	    (double)v->seq);
	one(m, "daptrace_last_snapshot_timestamp_seconds", G, "seconds",
	    "When the newest snapshot's window ended, seconds since the epoch.", end);
	one(m, "daptrace_last_snapshot_window_seconds", G, "seconds",
	    "Length of the newest snapshot's window.",
	    (double)(v->end_ns - v->start_ns) / 1e9);
	accuracy(m, v);
}

static void monitor(struct metric_set *m, const struct exp_health *h)
{
	static const char *const states[] = { "idle", "monitoring", "exited" };
	int f;

	one(m, "daptrace_module_loaded", G, "",
	    "1 if the daptrace kernel interface is there (module loaded).", h->module_loaded);
	if (!h->module_loaded)
		return;
	if (h->on >= 0)
		one(m, "daptrace_monitor_on", G, "", "1 if monitoring is on.", h->on);
	f = fam(m, "daptrace_monitor_targets", G, "",
		"Targets the monitor has, by state (target_status).");
	for (int s = 0; s <= DAPTRACE_TARGET_EXITED; s++) {
		struct labels l;

		labels_init(&l);
		labels_add(&l, "state", states[s]);
		mset_add(m, f, &l, h->targets_by_state[s]);
	}
	if (h->have_counters) {
		const struct daptrace_counters *c = &h->c;

		one(m, "daptrace_snapshots_published_total", C, "",
		    "Snapshots the monitor published since monitoring was last turned on.",
		    (double)c->nr_snapshots);
		one(m, "daptrace_snapshots_missed_total", C, "",
		    "Snapshots overwritten before any reader read them, since monitoring was "
		    "last turned on.", (double)c->nr_snapshots_missed);
		one(m, "daptrace_samples_total", C, "",
		    "Sampling rounds since monitoring was last turned on.", (double)c->nr_samples);
		one(m, "daptrace_worker_cpu_seconds_total", C, "seconds",
		    "CPU time of the monitor's worker thread since monitoring was last turned on.",
		    (double)c->worker_cpu_us / 1e6);
		one(m, "daptrace_regions", G, "", "Regions of all targets, now.",
		    (double)c->nr_regions);
	}
	if (h->have_late)
		one(m, "daptrace_samples_late_total", C, "",
		    "Sampling deadlines the worker could not keep since monitoring was last "
		    "turned on.", (double)h->samples_late);
	if (h->have_busy)
		one(m, "daptrace_samples_busy_total", C, "",
		    "Per-target sampling passes skipped, wholly or in part, because the "
		    "target's mmap_lock was taken, since monitoring was last turned on.",
		    (double)h->samples_busy);
	if (h->have_attrs) {
		const struct daptrace_attrs *a = &h->a;
		struct labels l;

		one(m, "daptrace_sample_interval_seconds", G, "seconds",
		    "Sampling interval in force.", (double)a->sample_us / 1e6);
		one(m, "daptrace_aggregation_interval_seconds", G, "seconds",
		    "Aggregation interval (one snapshot each) in force.", (double)a->aggr_us / 1e6);
		one(m, "daptrace_update_interval_seconds", G, "seconds",
		    "Memory map update interval in force.", (double)a->update_us / 1e6);
		one(m, "daptrace_regions_min", G, "", "Lower bound on regions per target.",
		    (double)a->min_nr_regions);
		one(m, "daptrace_regions_max", G, "", "Upper bound on regions per target.",
		    (double)a->max_nr_regions);
		labels_init(&l);
		labels_add(&l, "tlb_flush", daptrace_tlb_flush_name(a->tlb_flush));
		mset_one(m, "daptrace_monitor_info", METRIC_INFO, "",
			 "The monitor's settings that are words.", &l, 1);
	}
}

/* The exporter's own counts, in the order they are written. */
static const struct {
	const char *name;
	enum metric_type type;
	const char *help;
	size_t off;		/* of the uint64_t in struct exp_counts */
} exporter_counts[] = {
	{ "daptrace_exporter_snapshots_read_total", C,
	  "Snapshots this exporter read.", offsetof(struct exp_counts, snapshots_read) },
	{ "daptrace_exporter_snapshots_missed_total", C,
	  "Snapshots this exporter missed (overwritten in the kernel's ring before it "
	  "read them).", offsetof(struct exp_counts, snapshots_missed) },
	{ "daptrace_exporter_snapshots_truncated_total", C,
	  "Snapshots read that had more regions than the ring's slot holds.",
	  offsetof(struct exp_counts, snapshots_truncated) },
	{ "daptrace_target_exits_total", C,
	  "Targets seen exiting while this exporter ran.",
	  offsetof(struct exp_counts, target_exits) },
	{ "daptrace_exporter_read_errors_total", C,
	  "Reads of the kernel interface that failed (module unloaded, ...).",
	  offsetof(struct exp_counts, read_errors) },
	{ "daptrace_exporter_scrapes_total", C,
	  "Requests for /metrics served (counted up to the previous render).",
	  offsetof(struct exp_counts, scrapes) },
	{ "daptrace_exporter_textfile_writes_total", C,
	  "Textfile (--textfile) writes that succeeded.",
	  offsetof(struct exp_counts, textfile_writes) },
	{ "daptrace_exporter_textfile_write_errors_total", C,
	  "Textfile (--textfile) writes that failed.",
	  offsetof(struct exp_counts, textfile_errors) },
	{ "daptrace_exporter_policy_stats_errors_total", C,
	  "Policy stats files (--policy-stats) that could not be read or parsed.",
	  offsetof(struct exp_counts, policy_errors) },
	{ "daptrace_exporter_dropped_series", G,
	  "Series the previous render left out (a name from the policy stats file "
	  "that is invalid or clashes, ...).", offsetof(struct exp_counts, series_dropped) },
};

static void exporter(struct metric_set *m, const struct exp_counts *n)
{
	struct rusage ru;
	struct labels l;

	for (size_t i = 0; i < sizeof(exporter_counts) / sizeof(exporter_counts[0]); i++) {
		const uint64_t *v = (const uint64_t *)((const char *)n + exporter_counts[i].off);

		one(m, exporter_counts[i].name, exporter_counts[i].type, "",
		    exporter_counts[i].help, (double)*v);
	}
	labels_init(&l);
	labels_add(&l, "version", DAPTRACE_VERSION);
	mset_one(m, "daptrace_exporter_build_info", METRIC_INFO, "",
		 "The daptrace version of this exporter.", &l, 1);
	if (!getrusage(RUSAGE_SELF, &ru))
		one(m, "process_cpu_seconds_total", C, "seconds",
		    "CPU time of this exporter process, user and system.",
		    (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

void exp_metrics_build(struct metric_set *m, const struct exp_config *c,
		       const struct exp_view *v, const struct exp_health *h,
		       const struct exp_counts *n, const struct exp_policy *p)
{
	/*
	 * Target series describe the monitor's present: once it is off (the
	 * last target exited, its owner stopped) or gone, they end, and a
	 * scraper marks them stale instead of repeating the last window.
	 */
	if (h->on == 1)
		targets(m, c, v);
	snapshot(m, v);
	monitor(m, h);
	if (p)
		exp_policy_metrics(p, m);
	exporter(m, n);
}
