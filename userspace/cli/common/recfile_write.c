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
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];

		fprintf(f, "%" PRIu64 ",%" PRIu64 ",%d,%" PRIu64 ",%" PRIu64 ",%u,",
			s->end_ns, s->seq, (int)r->pid, r->start, r->end, r->nr_accesses);
		/* an unknown age stays empty */
		if (!r->age_unknown)
			fprintf(f, "%u", r->age);
		fprintf(f, ",%u,", s->nr_samples);
		/* placement columns stay empty when the module has none */
		if (s->placement) {
			fprintf(f, "%u,", r->nr_present);
			for (int n = 0; n < REC_NODES; n++)
				fprintf(f, "%u,", r->node_samples[n]);
			if (r->phys_addr != REC_PHYS_NONE)
				fprintf(f, "%" PRIu64, r->phys_addr);
			fputc(',', f);
		} else {
			fputs(",,,,,,", f);
		}
		fprintf(f, "%u,%u,", r->flags, r->nr_unobserved);
		if (put_str(f, r->label ? r->label : ""))
			return -EIO;
		fputc('\n', f);
	}
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
