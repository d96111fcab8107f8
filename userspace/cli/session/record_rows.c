// SPDX-License-Identifier: GPL-2.0-only
/* The monitor's run and snapshots in record-file form (see record_rows.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "record_rows.h"

void rec_kv_add(struct rec_kv *kv, int *n, const char *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kv[*n].key = (char *)k;
	if (vasprintf(&kv[*n].value, fmt, ap) >= 0)
		(*n)++;
	va_end(ap);
}

void rec_kv_free(struct rec_kv *kv, int n)
{
	for (int i = 0; i < n; i++)
		free(kv[i].value);
}

void rec_kv_add_run(struct rec_kv *kv, int *n, const struct daptrace_attrs *a, int64_t t0_ns)
{
	time_t now = time(NULL);
	struct utsname u;
	char when[64];

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	rec_kv_add(kv, n, "daptrace_version", "%s", DAPTRACE_VERSION);
	if (uname(&u) == 0) {
		rec_kv_add(kv, n, "kernel", "%s", u.release);
		rec_kv_add(kv, n, "hostname", "%s", u.nodename);
	}
	rec_kv_add(kv, n, "start_time", "%s", when);
	/* t=0 of the record on the snapshots' clock, to line up other traces */
	rec_kv_add(kv, n, "monotonic_start_ns", "%" PRId64, t0_ns);
	rec_kv_add(kv, n, "sample_us", "%" PRIu64, a->sample_us);
	rec_kv_add(kv, n, "aggr_us", "%" PRIu64, a->aggr_us);
	rec_kv_add(kv, n, "update_us", "%" PRIu64, a->update_us);
	rec_kv_add(kv, n, "min_nr_regions", "%" PRIu64, a->min_nr_regions);
	rec_kv_add(kv, n, "max_nr_regions", "%" PRIu64, a->max_nr_regions);
	rec_kv_add(kv, n, "tlb_flush", "%s", daptrace_tlb_flush_name(a->tlb_flush));
	rec_kv_add(kv, n, "page_size", "%ld", sysconf(_SC_PAGESIZE));
}

static uint64_t rel_ns(uint64_t t, int64_t t0_ns)
{
	return t > (uint64_t)t0_ns ? t - (uint64_t)t0_ns : 0;
}

uint64_t rec_rel_ns(int64_t t, int64_t t0_ns)
{
	return t > t0_ns ? (uint64_t)(t - t0_ns) : 0;
}

static struct rec_target follow_target(const struct follow_proc *p, int64_t t0_ns)
{
	return (struct rec_target){
		.pid = p->pid, .comm = (char *)p->comm, .ppid = p->ppid,
		.cgroup = p->cgroup, .time_ns = rec_rel_ns(p->join_ns, t0_ns),
	};
}

int rec_write_follow_header(FILE *f, const struct rec_kv *meta, int nr_meta,
			    const struct follow *fl, int64_t t0_ns)
{
	struct rec_target *t = calloc(fl->n ? fl->n : 1, sizeof(*t));
	int n = 0, err;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < fl->n; i++)
		if (fl->p[i]->state == FP_TARGET)
			t[n++] = follow_target(fl->p[i], t0_ns);
	err = rec_write_header(f, meta, nr_meta, t, n);
	free(t);
	return err;
}

int rec_write_follow_target(FILE *f, const struct follow_proc *p, int64_t t0_ns)
{
	struct rec_target t = follow_target(p, t0_ns);

	return rec_write_target(f, &t);
}

int rec_rows_fill(struct rec_rows *b, struct rec_snapshot *rs,
		  const struct daptrace_snapshot *s, int64_t t0_ns,
		  const char *(*label)(void *ctx, const struct daptrace_region *reg), void *ctx)
{
	*rs = (struct rec_snapshot){
		.seq = s->seq,
		.start_ns = rel_ns(s->start_ns, t0_ns),
		.end_ns = rel_ns(s->end_ns, t0_ns),
		.nr_regions = s->nr_regions,
		.nr_samples = s->nr_samples,
		.flags = s->flags,
		.missed_before = s->missed_before,
		.sample_us = s->sample_us,
		.aggr_us = s->aggr_us,
		.placement = (int)s->placement,
		.has_probes = s->probes && s->probe_pages,
		.probes = {
			.pages = s->probe_pages, .tp = s->probe_tp,
			.fn = s->probe_fn, .fp = s->probe_fp, .tn = s->probe_tn,
			.unobserved = s->probe_unobserved,
		},
	};
	if (rs->end_ns < rs->start_ns)
		rs->end_ns = rs->start_ns;
	if (s->nr_regions > b->cap) {
		struct rec_region *n = realloc(b->rows, s->nr_regions * sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->rows = n;
		b->cap = s->nr_regions;
	}
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct daptrace_region *reg = &s->regions[i];

		b->rows[i] = (struct rec_region){
			.start = reg->start, .end = reg->end,
			.nr_accesses = reg->nr_accesses, .age = reg->age,
			.pid = reg->pid,
			/* the writer only reads labels */
			.label = (char *)label(ctx, reg),
			.nr_present = reg->nr_present,
			.nr_huge = reg->nr_huge,
			.phys_addr = reg->phys_addr,
			.nr_unobserved = reg->nr_unobserved,
			/* no round could look: not observable, never "idle" */
			.flags = daptrace_region_observed(s, reg) ? 0 :
				 REC_REGION_NOT_OBSERVABLE,
		};
		for (int n = 0; n < REC_NODES && n < DAPTRACE_NR_NODES; n++)
			b->rows[i].node_samples[n] = reg->node_samples[n];
	}
	rs->regions = b->rows;
	return 0;
}

void rec_rows_free(struct rec_rows *b)
{
	free(b->rows);
	b->rows = NULL;
	b->cap = 0;
}
