// SPDX-License-Identifier: GPL-2.0-only
/* Writing record files.  Strings go through libcsv for quoting. */
#include <csv.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "recfile.h"

static int put_str(FILE *f, const char *s)
{
	return csv_fwrite(f, s, strlen(s)) ? -EIO : 0;
}

static int check(FILE *f)
{
	return ferror(f) ? -EIO : 0;
}

static int put_kv(FILE *f, const char *tag, const struct rec_kv *kv)
{
	fprintf(f, "%s,", tag);
	if (put_str(f, kv->key))
		return -EIO;
	fputc(',', f);
	if (put_str(f, kv->value))
		return -EIO;
	fputc('\n', f);
	return check(f);
}

int rec_write_header(FILE *f, const struct rec_kv *meta, int nr_meta,
		     const struct rec_target *targets, int nr_targets)
{
	fputs(REC_MAGIC "\n", f);
	for (int i = 0; i < nr_meta; i++)
		if (put_kv(f, "#meta", &meta[i]))
			return -EIO;
	for (int i = 0; i < nr_targets; i++)
		if (rec_write_target(f, &targets[i]))
			return -EIO;
	fputs(REC_COLUMNS "\n", f);
	return fflush(f) ? -errno : check(f);
}

int rec_write_target(FILE *f, const struct rec_target *t)
{
	fprintf(f, "#target,%d,", (int)t->pid);
	if (put_str(f, t->comm ? t->comm : ""))
		return -EIO;
	if (t->ppid || t->cgroup || t->time_ns) {
		fprintf(f, ",%d,", (int)t->ppid);
		if (put_str(f, t->cgroup ? t->cgroup : ""))
			return -EIO;
		fprintf(f, ",%" PRIu64, t->time_ns);
	}
	fputc('\n', f);
	return check(f);
}

int rec_write_exit(FILE *f, pid_t pid, uint64_t time_ns, int moved)
{
	fprintf(f, "#exit,%d,%" PRIu64 ",%s\n", (int)pid, time_ns, moved ? "moved" : "exit");
	return check(f);
}

/* One read's #maps rows: REC_MAPS_PER_ROW ranges a row, one row if none. */
static void write_maps(FILE *f, const struct rec_snapshot *s, const struct rec_maps *m)
{
	uint32_t i = 0;

	do {
		fprintf(f, "#maps,%d,%" PRIu64, (int)m->pid, m->time_ns);
		for (uint32_t k = 0; k < REC_MAPS_PER_ROW && i < m->nr; k++, i++) {
			const struct rec_range *r = &s->map_ranges[m->first + i];

			fprintf(f, ",%" PRIu64 ",%" PRIu64, r->start, r->end);
		}
		fputc('\n', f);
	} while (i < m->nr);
}

/*
 * The region rows are nearly all of a record (12288 a window with 4096
 * targets), and printf's format parsing was most of the recorder's time
 * there: each row is built in a buffer with plain conversions and written
 * at once.  The bytes are those of the "%" PRIu64 / "%u" / "%d" they
 * replace; test_recfile checks a row against the printf-built one.
 */
static char *put_u64(char *p, uint64_t v)
{
	char digits[20];
	int n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = digits[--n];
	return p;
}

static char *put_int(char *p, int v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, -(int64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

static char *put_u64c(char *p, uint64_t v)
{
	p = put_u64(p, v);
	*p++ = ',';
	return p;
}

/* the longest row before its label: 5 u64, 7 + REC_NODES u32, an int, the commas */
#define ROW_NUMBERS_MAX	(5 * 20 + (7 + REC_NODES) * 10 + 11 + 13 + REC_NODES)

static int write_region(FILE *f, const struct rec_snapshot *s, const struct rec_region *r)
{
	const char *label = r->label ? r->label : "";
	char row[ROW_NUMBERS_MAX + 256], *p = row;
	size_t room, need;

	p = put_u64c(p, s->end_ns);
	p = put_u64c(p, s->seq);
	p = put_int(p, (int)r->pid);
	*p++ = ',';
	p = put_u64c(p, r->start);
	p = put_u64c(p, r->end);
	p = put_u64c(p, r->nr_accesses);
	/* an unknown age stays empty */
	if (!r->age_unknown)
		p = put_u64(p, r->age);
	*p++ = ',';
	p = put_u64c(p, s->nr_samples);
	/* placement columns stay empty when the module has none */
	if (s->placement) {
		p = put_u64c(p, r->nr_present);
		for (int n = 0; n < REC_NODES; n++)
			p = put_u64c(p, r->node_samples[n]);
		if (r->phys_addr != REC_PHYS_NONE)
			p = put_u64(p, r->phys_addr);
		*p++ = ',';
	} else {
		memcpy(p, ",,,,,,", 6);
		p += 6;
	}
	p = put_u64c(p, r->flags);
	p = put_u64c(p, r->nr_unobserved);
	/* a placement count: empty without placement */
	if (s->placement)
		p = put_u64(p, r->nr_huge);
	*p++ = ',';
	/* libcsv quotes the label into the row if it fits, else after it */
	room = sizeof(row) - (size_t)(p - row) - 1;
	need = csv_write(p, room, label, strlen(label));
	if (need <= room) {
		p += need;
		*p++ = '\n';
		return fwrite(row, 1, (size_t)(p - row), f) == (size_t)(p - row) ? 0 : -EIO;
	}
	if (fwrite(row, 1, (size_t)(p - row), f) != (size_t)(p - row) || put_str(f, label))
		return -EIO;
	return fputc('\n', f) == EOF ? -EIO : 0;
}

int rec_write_snapshot(FILE *f, const struct rec_snapshot *s)
{
	for (uint32_t i = 0; i < s->nr_footprints; i++) {
		const struct rec_footprint *fp = &s->footprints[i];

		fprintf(f, "#footprint,%d,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
			(int)fp->pid, fp->time_ns, fp->vsz, fp->rss);
	}
	for (uint32_t i = 0; i < s->nr_maps; i++)
		write_maps(f, s, &s->maps[i]);
	if (s->has_probes)
		fprintf(f, "#probes,%" PRIu64 ",%u,%u,%u,%u,%u,%u\n", s->seq,
			s->probes.pages, s->probes.tp, s->probes.fn, s->probes.fp,
			s->probes.tn, s->probes.unobserved);
	fprintf(f, "#snap,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u,%u,%" PRIu64,
		s->seq, s->start_ns, s->end_ns, s->nr_regions, s->nr_samples,
		s->flags, s->missed_before);
	/* both or neither (the reader falls back to the #meta intervals) */
	if (s->sample_us && s->aggr_us)
		fprintf(f, ",%u,%u", s->sample_us, s->aggr_us);
	fputc('\n', f);
	for (uint32_t i = 0; i < s->nr_regions; i++)
		if (write_region(f, s, &s->regions[i]))
			return -EIO;
	/* one flush per snapshot: a killed recorder loses at most one */
	return fflush(f) ? -errno : check(f);
}

int rec_write_trailer(FILE *f, const struct rec_kv *kv, int nr)
{
	for (int i = 0; i < nr; i++)
		if (put_kv(f, "#end", &kv[i]))
			return -EIO;
	fputs("#eof\n", f);
	return fflush(f) ? -errno : check(f);
}

int rec_write_regret(FILE *f, const struct rec_regret *r)
{
	fprintf(f, "#regret,%" PRIu32 ",", r->scheme);
	if (put_str(f, r->name) || fputc(',', f) == EOF || put_str(f, r->method) ||
	    fputc(',', f) == EOF || put_str(f, r->cgroup))
		return -EIO;
	fprintf(f, ",%" PRIu64 ",%" PRIu64, r->acted, r->unknown_calls);
	for (int w = 0; w < r->nr_windows; w++)
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, r->w[w].us,
			r->w[w].checked, r->w[w].back, r->w[w].unknown);
	fputc('\n', f);
	return check(f);
}
