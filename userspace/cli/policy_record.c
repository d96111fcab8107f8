// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace policy --record FILE: the snapshots the policy acted on, as a
 * record file (the same format as `daptrace record`).  The policy is the
 * monitor's only reader, so recording from it loses nothing that the
 * policy did not also miss, and the trailer says how many that was.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "policy_record.h"
#include "recfile.h"

static void kv_add(struct rec_kv *kv, int *n, const char *k, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void kv_add(struct rec_kv *kv, int *n, const char *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kv[*n].key = (char *)k;
	if (vasprintf(&kv[*n].value, fmt, ap) >= 0)
		(*n)++;
	va_end(ap);
}

static void kv_free(struct rec_kv *kv, int n)
{
	for (int i = 0; i < n; i++)
		free(kv[i].value);
}

int policy_rec_header(FILE *f, const struct daptrace_attrs *a, const struct pol_engine *e,
		      int64_t t0_ns)
{
	struct rec_target t[DAPTRACE_MAX_TARGETS];
	struct rec_kv kv[16 + POL_MAX_SCHEMES];
	char when[64], key[POL_MAX_SCHEMES][24];
	time_t now = time(NULL);
	struct utsname u;
	int n = 0, err;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	kv_add(kv, &n, "daptrace_version", "%s", DAPTRACE_VERSION);
	if (uname(&u) == 0)
		kv_add(kv, &n, "kernel", "%s", u.release);
	kv_add(kv, &n, "start_time", "%s", when);
	kv_add(kv, &n, "monotonic_start_ns", "%" PRId64, t0_ns);
	kv_add(kv, &n, "sample_us", "%" PRIu64, a->sample_us);
	kv_add(kv, &n, "aggr_us", "%" PRIu64, a->aggr_us);
	kv_add(kv, &n, "update_us", "%" PRIu64, a->update_us);
	kv_add(kv, &n, "min_nr_regions", "%" PRIu64, a->min_nr_regions);
	kv_add(kv, &n, "max_nr_regions", "%" PRIu64, a->max_nr_regions);
	kv_add(kv, &n, "tlb_flush", "%s", daptrace_tlb_flush_name(a->tlb_flush));
	kv_add(kv, &n, "page_size", "%ld", sysconf(_SC_PAGESIZE));
	for (int i = 0; i < e->nr_schemes; i++) {
		snprintf(key[i], sizeof(key[i]), "scheme%d", i);
		kv_add(kv, &n, key[i], "%s", e->s[i].name);
	}
	for (int i = 0; i < e->nr_targets; i++) {
		t[i].pid = e->t[i].pid;
		t[i].comm = "";
	}
	err = rec_write_header(f, kv, n, t, e->nr_targets);
	kv_free(kv, n);
	return err;
}

int policy_rec_snapshot(FILE *f, const struct daptrace_snapshot *s, const struct pol_engine *e,
			int64_t t0_ns)
{
	static struct rec_region *rows;
	static uint32_t cap;
	struct rec_snapshot rs = {
		.seq = s->seq,
		.start_ns = s->start_ns > (uint64_t)t0_ns ? s->start_ns - (uint64_t)t0_ns : 0,
		.end_ns = s->end_ns > (uint64_t)t0_ns ? s->end_ns - (uint64_t)t0_ns : 0,
		.nr_regions = s->nr_regions,
		.nr_samples = s->nr_samples,
		.flags = s->flags,
		.missed_before = s->missed_before,
	};

	if (s->nr_regions > cap) {
		struct rec_region *r = realloc(rows, s->nr_regions * sizeof(*r));

		if (!r)
			return -ENOMEM;
		rows = r;
		cap = s->nr_regions;
	}
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct daptrace_region *reg = &s->regions[i];
		const char *label = "[unknown target]";

		for (int t = 0; t < e->nr_targets; t++)
			if (e->t[t].pid == reg->pid)
				label = maps_label(&e->t[t].maps, reg->start, reg->end);
		rows[i] = (struct rec_region){
			.start = reg->start, .end = reg->end, .nr_accesses = reg->nr_accesses,
			.age = reg->age, .pid = reg->pid, .label = (char *)label,
		};
	}
	if (rs.end_ns < rs.start_ns)
		rs.end_ns = rs.start_ns;
	rs.regions = rows;
	return rec_write_snapshot(f, &rs);
}

int policy_rec_trailer(FILE *f, const char *reason, int64_t duration_ns,
		       const struct pol_engine *e)
{
	struct rec_kv kv[4];
	int n = 0, err;

	kv_add(kv, &n, "reason", "%s", reason ? reason : "error");
	kv_add(kv, &n, "duration_ns", "%" PRId64, duration_ns);
	kv_add(kv, &n, "snapshots", "%" PRIu64, e->nr_snapshots);
	kv_add(kv, &n, "missed", "%" PRIu64, e->nr_missed);
	err = rec_write_trailer(f, kv, n);
	kv_free(kv, n);
	return err;
}
