// SPDX-License-Identifier: GPL-2.0
/*
 * damon2rec: turn the in-kernel DAMON's damon:damon_aggregated trace events
 * (tracefs text, trace_clock=mono) into a daptrace record file, so the same
 * scorer judges both monitors.
 *
 *	damon2rec --pid PID --sample-us N --aggr-us N < trace > damon.csv
 *
 * Event text (6.12): "... 12.345678: damon_aggregated: target_id=0
 * nr_regions=17 140737488289792-140737488355328: 3 12".  One aggregation
 * emits nr_regions events in address order; they become one snapshot whose
 * window ends at the first event's time.  DAMON counts aggregation windows
 * in sampling intervals, so nr_samples is exactly aggr/sample.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/recfile.h"
#include "wl_args.h"

static int parse_event(const char *line, uint64_t *t_ns, unsigned int *nr,
		       struct rec_region *r)
{
	const char *p = strstr(line, ": damon_aggregated: ");
	unsigned long long start, end;
	unsigned long sec, usec, tid;
	const char *q;

	if (!p)
		return -1;
	/* The timestamp ends right before the event name: "<sec>.<usec>". */
	for (q = p; q > line && q[-1] != ' '; q--)
		;
	if (sscanf(q, "%lu.%lu:", &sec, &usec) != 2)
		return -1;
	if (sscanf(p, ": damon_aggregated: target_id=%lu nr_regions=%u %llu-%llu: %u %u",
		   &tid, nr, &start, &end, &r->nr_accesses, &r->age) != 6)
		return -1;
	*t_ns = sec * 1000000000ULL + usec * 1000ULL;
	r->start = start;
	r->end = end;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t sample_us = 5000, aggr_us = 100000, start_ns = 0;
	struct rec_snapshot snap = { 0 };
	struct rec_region *regs = NULL;
	unsigned int cap = 0, want = 0, nr;
	uint64_t t_ns, prev_end = 0, seq = 0;
	char line[512], buf[3][32];
	struct rec_kv kv[4];
	struct rec_target tgt = { .comm = "workload" };
	const struct wl_arg args[] = {
		WL_OPT("pid", 0, wl_int, &tgt.pid),
		WL_OPT("sample-us", 0, wl_u64, &sample_us),
		WL_OPT("aggr-us", 0, wl_u64, &aggr_us),
		WL_OPT("start-ns", 0, wl_u64, &start_ns),
		{ }
	};

	if (wl_parse_args("damon2rec", argc, argv, args, NULL) < 0) {
		fprintf(stderr, "usage: damon2rec --pid PID --sample-us N --aggr-us N [--start-ns NS]\n");
		return 2;
	}
	if (!tgt.pid || !sample_us || aggr_us < sample_us) {
		fprintf(stderr, "damon2rec: --pid, --sample-us and --aggr-us are required\n");
		return 2;
	}
	snprintf(buf[0], sizeof(buf[0]), "%" PRIu64, sample_us);
	snprintf(buf[1], sizeof(buf[1]), "%" PRIu64, aggr_us);
	snprintf(buf[2], sizeof(buf[2]), "%" PRIu64, start_ns);
	kv[0] = (struct rec_kv){ "monitor", "damon" };
	kv[1] = (struct rec_kv){ "sample_us", buf[0] };
	kv[2] = (struct rec_kv){ "aggr_us", buf[1] };
	kv[3] = (struct rec_kv){ "monotonic_start_ns", buf[2] };
	if (rec_write_header(stdout, kv, 4, &tgt, 1))
		return 1;

	while (fgets(line, sizeof(line), stdin)) {
		struct rec_region r = { .pid = tgt.pid, .label = "" };

		if (parse_event(line, &t_ns, &nr, &r))
			continue;
		if (!want) {
			/* First event of an aggregation. */
			want = nr;
			snap.nr_regions = 0;
			t_ns = t_ns > start_ns ? t_ns - start_ns : 0;
			snap.end_ns = t_ns;
			snap.start_ns = prev_end ? prev_end :
				(t_ns > aggr_us * 1000 ? t_ns - aggr_us * 1000 : 0);
		}
		if (snap.nr_regions == cap) {
			cap = cap ? 2 * cap : 1024;
			regs = realloc(regs, cap * sizeof(*regs));
			if (!regs)
				return 1;
		}
		regs[snap.nr_regions++] = r;
		if (snap.nr_regions == want) {
			snap.seq = ++seq;
			snap.nr_samples = aggr_us / sample_us;
			snap.regions = regs;
			if (rec_write_snapshot(stdout, &snap))
				return 1;
			prev_end = snap.end_ns;
			want = 0;
		}
	}
	kv[0] = (struct rec_kv){ "snapshots", buf[0] };
	snprintf(buf[0], sizeof(buf[0]), "%" PRIu64, seq);
	kv[1] = (struct rec_kv){ "missed", "0" };
	if (rec_write_trailer(stdout, kv, 2))
		return 1;
	free(regs);
	return 0;
}
