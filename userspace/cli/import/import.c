// SPDX-License-Identifier: GPL-2.0-only
/*
 * Foreign records to daptrace records (import.h): what a file is, the model
 * the importers fill, and the record written from it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "common/recfile.h"

/* DAMON's default sampling interval, for files that do not say theirs. */
#define DAMON_SAMPLE_US	5000
#define MAX_REGIONS	(4U << 20)	/* per window, as recfile_read.c takes */
#define MAX_TARGETS	4000		/* a #meta row each; a reader takes 4096 */

enum rec_format rec_sniff(const unsigned char *buf, size_t len)
{
	static const char *const events[] = {
		"damon:damon_aggregated:", "daptrace:daptrace_aggregated:",
		"damon_aggregated:", "daptrace_aggregated:",
	};
	size_t i = 0;

	if (len >= 18 && !memcmp(buf, "# daptrace-record ", 18))
		return REC_FMT_DAPTRACE;
	/*
	 * zlib: CM 8 (deflate), no preset dictionary (damo has none: text
	 * such as "x " would pass the rest), a checksum that divides by 31
	 */
	if (len >= 2 && (buf[0] & 0x0f) == 8 && (buf[0] >> 4) <= 7 && !(buf[1] & 0x20) &&
	    ((buf[0] << 8) | buf[1]) % 31 == 0)
		return REC_FMT_DAMO_ZLIB;
	while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
		i++;
	if (i < len && (buf[i] == '[' || buf[i] == '{'))
		return REC_FMT_DAMO_JSON;
	for (size_t e = 0; e < sizeof(events) / sizeof(events[0]); e++)
		if (memmem(buf, len, events[e], strlen(events[e])))
			return REC_FMT_PERF_SCRIPT;
	return REC_FMT_UNKNOWN;
}

const char *rec_format_name(enum rec_format fmt)
{
	switch (fmt) {
	case REC_FMT_DAPTRACE:
		return "daptrace record";
	case REC_FMT_DAMO_JSON:
		return "damo record (json)";
	case REC_FMT_DAMO_ZLIB:
		return "damo record (json_compressed)";
	case REC_FMT_PERF_SCRIPT:
		return "perf script of damon_aggregated";
	default:
		return "unknown";
	}
}

int imp_fail(struct imp *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (m->err[0])
		return -1;	/* the first error stays */
	n = snprintf(m->err, m->errlen, "%s: ", m->name);
	if (n >= 0 && (size_t)n < m->errlen) {
		va_start(ap, fmt);
		vsnprintf(m->err + n, m->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int imp_target(struct imp *m, uint64_t id)
{
	struct imp_origin *o;
	uint64_t *t;

	for (int i = 0; i < m->nr_targets; i++)
		if (m->target_ids[i] == id)
			return i;
	/* with the header's other #meta rows, within what a reader takes */
	if (m->nr_targets >= MAX_TARGETS)
		return imp_fail(m, "more than %d targets", MAX_TARGETS);
	t = realloc(m->target_ids, (m->nr_targets + 1) * sizeof(*t));
	if (!t)
		return imp_fail(m, "out of memory");
	m->target_ids = t;
	o = realloc(m->origin, (m->nr_targets + 1) * sizeof(*o));
	if (!o)
		return imp_fail(m, "out of memory");
	m->origin = o;
	o[m->nr_targets] = (struct imp_origin){ 0 };
	t[m->nr_targets] = id;
	return m->nr_targets++;
}

struct imp_snapshot *imp_snapshot(struct imp *m, int target)
{
	struct imp_snapshot *s;

	if (m->nr_snaps == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;

		s = realloc(m->snaps, cap * sizeof(*s));
		if (!s) {
			imp_fail(m, "out of memory");
			return NULL;
		}
		m->snaps = s;
		m->cap = cap;
	}
	s = &m->snaps[m->nr_snaps++];
	memset(s, 0, sizeof(*s));
	s->target = target;
	return s;
}

int imp_region(struct imp *m, struct imp_snapshot *s, const struct imp_region *r)
{
	if (r->start >= r->end) {
		free(r->label);
		return imp_fail(m, "a region's start %" PRIu64 " is not below its end %" PRIu64,
				r->start, r->end);
	}
	if (s->nr >= MAX_REGIONS) {
		free(r->label);
		return imp_fail(m, "more than %u regions in a snapshot", MAX_REGIONS);
	}
	if (s->nr == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 64;
		struct imp_region *n = realloc(s->regions, cap * sizeof(*n));

		if (!n) {
			free(r->label);
			return imp_fail(m, "out of memory");
		}
		s->regions = n;
		s->cap = cap;
	}
	s->regions[s->nr++] = *r;
	return 0;
}

/*
 * Each target's pid in the record: the pids a daptrace export kept, if
 * every target has one and no two share it; else numbered from 1.
 */
static int assign_pids(struct imp *m)
{
	int kept = 1;

	m->pids = calloc(m->nr_targets, sizeof(*m->pids));
	if (!m->pids)
		return imp_fail(m, "out of memory");
	for (int i = 0; i < m->nr_targets && kept; i++) {
		kept = m->origin[i].pid > 0;
		for (int k = 0; k < i && kept; k++)
			kept = m->origin[k].pid != m->origin[i].pid;
	}
	for (int i = 0; i < m->nr_targets; i++)
		m->pids[i] = kept ? m->origin[i].pid : i + 1;
	return 0;
}

static void imp_free(struct imp *m)
{
	for (size_t i = 0; i < m->nr_snaps; i++) {
		for (uint32_t k = 0; k < m->snaps[i].nr; k++)
			free(m->snaps[i].regions[k].label);
		free(m->snaps[i].regions);
	}
	free(m->snaps);
	for (int i = 0; i < m->nr_targets; i++)
		free(m->origin[i].comm);
	free(m->origin);
	free(m->pids);
	free(m->target_ids);
}

/* A window's sampling interval: its own, the record's, or DAMON's default. */
static uint32_t window_sample_us(struct imp *m, const struct imp_snapshot *s)
{
	if (s->sample_us)
		return s->sample_us;
	if (m->sample_us)
		return m->sample_us;
	m->sample_assumed = 1;
	return DAMON_SAMPLE_US;
}

/*
 * Sampling rounds in a window: DAMON keeps aggregation / sampling constant
 * (interval tuning scales both), so the record's ratio if it has one, else
 * the window's length over its sampling interval; never fewer than the
 * window's largest access count.
 */
static uint32_t window_samples(struct imp *m, const struct imp_snapshot *s)
{
	uint64_t n, dur_us = (s->end_ns - s->start_ns) / 1000;
	uint32_t sample = window_sample_us(m, s);

	if (s->nr_samples)
		n = s->nr_samples;
	else if (m->aggr_us && m->sample_us)
		n = (m->aggr_us + m->sample_us / 2) / m->sample_us;
	else
		n = (dur_us + sample / 2) / sample;
	for (uint32_t i = 0; i < s->nr; i++)
		if (s->regions[i].nr_accesses > n)
			n = s->regions[i].nr_accesses;
	return n ? (n > UINT32_MAX ? UINT32_MAX : (uint32_t)n) : 1;
}

/*
 * Windows without a start (a trace gives ends only): the previous window's
 * end, or for a target's first one its end minus its average window.
 */
static void fill_starts(struct imp *m)
{
	for (int t = 0; t < m->nr_targets; t++) {
		uint64_t first = 0, last = 0, prev = 0, n = 0, avg;
		int have_prev = 0;

		for (size_t i = 0; i < m->nr_snaps; i++) {
			struct imp_snapshot *s = &m->snaps[i];

			if (s->target != t)
				continue;
			if (!n++)
				first = s->end_ns;
			last = s->end_ns;
			if (!s->has_start && have_prev && prev <= s->end_ns) {
				s->start_ns = prev;
				s->has_start = 1;
			}
			prev = s->end_ns;
			have_prev = 1;
		}
		avg = n > 1 ? (last - first) / (n - 1) :
		      (m->aggr_us ? m->aggr_us : 100000) * 1000ULL;
		for (size_t i = 0; i < m->nr_snaps; i++) {
			struct imp_snapshot *s = &m->snaps[i];

			if (s->target == t && !s->has_start) {
				s->start_ns = s->end_ns > avg ? s->end_ns - avg : 0;
				s->has_start = 1;
			}
		}
	}
}

static int cmp_end(const void *a, const void *b, void *arg)
{
	const struct imp_snapshot *s = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (s[x].end_ns != s[y].end_ns)
		return s[x].end_ns < s[y].end_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * One daptrace window from @nr snapshots of distinct targets (@idx) that
 * closed together.
 */
static int write_window(struct imp *m, FILE *out, const size_t *idx, size_t nr,
			uint64_t t0, uint64_t seq, struct rec_region **buf, uint32_t *cap)
{
	struct rec_snapshot rs = { .seq = seq };
	uint64_t start = UINT64_MAX, end = 0;
	uint32_t n = 0, samples = 0, sample_us = 0;

	for (size_t k = 0; k < nr; k++) {
		struct imp_snapshot *s = &m->snaps[idx[k]];
		uint32_t w = window_samples(m, s);

		start = s->start_ns < start ? s->start_ns : start;
		end = s->end_ns > end ? s->end_ns : end;
		samples = w > samples ? w : samples;
		if (!sample_us)
			sample_us = window_sample_us(m, s);
		n += s->nr;
	}
	if (n > MAX_REGIONS)
		return imp_fail(m, "more than %u regions in one window", MAX_REGIONS);
	if (n > *cap) {
		struct rec_region *r = realloc(*buf, n * sizeof(*r));

		if (!r)
			return imp_fail(m, "out of memory");
		*buf = r;
		*cap = n;
	}
	rs.regions = *buf;
	for (size_t k = 0; k < nr; k++) {
		const struct imp_snapshot *s = &m->snaps[idx[k]];

		for (uint32_t i = 0; i < s->nr; i++)
			rs.regions[rs.nr_regions++] = (struct rec_region){
				.start = s->regions[i].start, .end = s->regions[i].end,
				.nr_accesses = s->regions[i].nr_accesses,
				.age = s->regions[i].age,
				.age_unknown = s->regions[i].age_unknown,
				.pid = m->pids[s->target],
				.label = s->regions[i].label ? s->regions[i].label : "",
				.phys_addr = REC_PHYS_NONE,
			};
	}
	rs.start_ns = start - t0;
	rs.end_ns = end - t0;
	rs.nr_samples = samples;
	rs.sample_us = sample_us;
	rs.aggr_us = (uint64_t)sample_us * samples > UINT32_MAX ? UINT32_MAX :
		     sample_us * samples;
	return rec_write_snapshot(out, &rs) ? imp_fail(m, "writing: %s", strerror(EIO)) : 0;
}

static void meta_add(struct rec_kv *kv, int *n, const char *key, char *val, size_t len,
		     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void meta_add(struct rec_kv *kv, int *n, const char *key, char *val, size_t len,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, len, fmt, ap);
	va_end(ap);
	kv[*n].key = (char *)key;
	kv[*n].value = val;
	(*n)++;
}

static int emit(struct imp *m, FILE *out)
{
	char vals[8][256], (*comms)[48] = NULL, end[3][64], (*tid)[2][32] = NULL;
	struct rec_target *t = NULL;
	struct rec_region *buf = NULL;
	struct rec_kv *meta = NULL, trailer[3];
	size_t *idx = NULL, nr = 0, *group = NULL;
	uint64_t t0 = UINT64_MAX, seq = 0;
	uint32_t cap = 0;
	int nm = 0, ret = -1;

	if (!m->nr_snaps)
		return imp_fail(m, "no snapshots in the %s", m->source);
	fill_starts(m);
	if (assign_pids(m))
		return -1;
	idx = calloc(m->nr_snaps, sizeof(*idx));
	group = calloc(m->nr_targets, sizeof(*group));
	t = calloc(m->nr_targets, sizeof(*t));
	comms = calloc(m->nr_targets, sizeof(*comms));
	tid = calloc(m->nr_targets, sizeof(*tid));
	meta = calloc(8 + m->nr_targets, sizeof(*meta));
	if (!idx || !group || !t || !comms || !tid || !meta) {
		imp_fail(m, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < m->nr_snaps; i++) {
		idx[i] = i;
		t0 = m->snaps[i].start_ns < t0 ? m->snaps[i].start_ns : t0;
	}
	qsort_r(idx, m->nr_snaps, sizeof(*idx), cmp_end, m->snaps);
	for (int i = 0; i < m->nr_targets; i++) {
		snprintf(comms[i], sizeof(comms[i]), "target_id %" PRIu64, m->target_ids[i]);
		t[i] = (struct rec_target){
			.pid = m->pids[i], .comm = m->origin[i].comm ? m->origin[i].comm : comms[i],
		};
	}
	meta_add(meta, &nm, "source", vals[0], sizeof(vals[0]), "%s", m->source);
	meta_add(meta, &nm, "imported_from", vals[1], sizeof(vals[1]), "%s", m->name);
	/* the base time: report damo writes the source's times back */
	meta_add(meta, &nm, "monotonic_start_ns", vals[6], sizeof(vals[6]), "%" PRIu64, t0);
	/* the first window's intervals: the reader's fallback */
	meta_add(meta, &nm, "sample_us", vals[2], sizeof(vals[2]), "%u",
		 window_sample_us(m, &m->snaps[idx[0]]));
	meta_add(meta, &nm, "aggr_us", vals[3], sizeof(vals[3]), "%" PRIu64,
		 (uint64_t)window_sample_us(m, &m->snaps[idx[0]]) *
		 window_samples(m, &m->snaps[idx[0]]));
	if (m->update_us)
		meta_add(meta, &nm, "update_us", vals[4], sizeof(vals[4]), "%u", m->update_us);
	for (size_t i = 0; i < m->nr_snaps; i++)
		window_sample_us(m, &m->snaps[i]);
	if (m->sample_assumed)
		meta_add(meta, &nm, "sample_us_assumed", vals[5], sizeof(vals[5]),
			 "the file has no sampling interval: DAMON's default, %d us",
			 DAMON_SAMPLE_US);
	/* each target's id in the source, for report damo to write back */
	for (int i = 0; i < m->nr_targets; i++) {
		snprintf(tid[i][0], sizeof(tid[i][0]), "target_id.%d", (int)m->pids[i]);
		meta_add(meta, &nm, tid[i][0], tid[i][1], sizeof(tid[i][1]), "%" PRIu64,
			 m->target_ids[i]);
	}
	if (rec_write_header(out, meta, nm, t, m->nr_targets)) {
		imp_fail(m, "writing: %s", strerror(EIO));
		goto out;
	}
	/*
	 * A window: snapshots of distinct targets closing within half a
	 * window of the first (DAMON traces all of a context's targets at
	 * each aggregation, one after another).
	 */
	for (size_t i = 0; i < m->nr_snaps; i += nr) {
		const struct imp_snapshot *first = &m->snaps[idx[i]];
		uint64_t half = (first->end_ns - first->start_ns) / 2;
		int seen;

		nr = 0;
		for (size_t j = i; j < m->nr_snaps; j++) {
			const struct imp_snapshot *s = &m->snaps[idx[j]];

			seen = 0;
			for (size_t k = 0; k < nr; k++)
				seen |= m->snaps[group[k]].target == s->target;
			if (seen || s->end_ns - first->end_ns > half || nr == (size_t)m->nr_targets)
				break;
			group[nr++] = idx[j];
		}
		if (write_window(m, out, group, nr, t0, ++seq, &buf, &cap))
			goto out;
	}
	nm = 0;
	meta_add(trailer, &nm, "reason", end[0], sizeof(end[0]), "imported");
	meta_add(trailer, &nm, "snapshots", end[1], sizeof(end[1]), "%" PRIu64, seq);
	meta_add(trailer, &nm, "skipped", end[2], sizeof(end[2]), "%" PRIu64, m->skipped);
	if (rec_write_trailer(out, trailer, nm)) {
		imp_fail(m, "writing: %s", strerror(EIO));
		goto out;
	}
	ret = 0;
out:
	free(buf);
	free(idx);
	free(group);
	free(t);
	free(comms);
	free(tid);
	free(meta);
	return ret;
}

int rec_import(FILE *in, enum rec_format fmt, const char *name, FILE *out, char *err,
	       size_t errlen)
{
	struct imp m = { .name = name, .err = err, .errlen = errlen };
	int ret;

	err[0] = '\0';
	switch (fmt) {
	case REC_FMT_DAMO_JSON:
	case REC_FMT_DAMO_ZLIB:
		m.source = fmt == REC_FMT_DAMO_ZLIB ? "damo json_compressed" : "damo json";
		ret = import_damo(&m, in, fmt == REC_FMT_DAMO_ZLIB);
		break;
	case REC_FMT_PERF_SCRIPT:
		m.source = "perf script";
		ret = import_perf(&m, in);
		break;
	default:
		ret = imp_fail(&m, "not a record daptrace can read");
		break;
	}
	if (!ret)
		ret = emit(&m, out);
	imp_free(&m);
	return ret;
}
