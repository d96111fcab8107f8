// SPDX-License-Identifier: GPL-2.0-only
/*
 * report damo: the record in damo's format, so damo's reports run on
 * daptrace data: a JSON list of records, one per target (see
 * import_damo.c), zlib-compressed as damo writes by default
 * ("json_compressed") when the output is a file not ending in .json, plain
 * JSON on stdout or to a .json file.  Numbers are written as damo writes
 * them raw (strings of digits; sample counts as numbers).
 *
 * Each target's windows become its record's snapshots, with the window's
 * own sampling interval (sample_interval_us, as damo records interval
 * tuning); times are CLOCK_MONOTONIC when the record says where it started
 * (monotonic_start_ns), as DAMON's are.  damo reads only the keys it knows
 * and ignores others (its from_kvpairs()), so each record also carries the
 * target's pid and comm ("daptrace_pid", "daptrace_comm") and each region
 * its label ("daptrace_label"), which import_damo.c reads back; the target
 * id is the one of the record imported (#meta target_id.<pid>), else the
 * pid.  damo has no placement nor a way to say memory cannot be observed or
 * is not there: regions that cannot be observed and "[unmapped]" ones
 * (holes between mappings, which daptrace's own reports leave out) are
 * left out and counted on stderr rather than shown to damo as idle memory;
 * so daptrace -> damo -> daptrace gives the same hist and access numbers.
 * What else has no place in damo's format (placement, footprints, a
 * target's parent, cgroup and times, missed windows) is said on stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cli.h"
#include "report.h"
#include "common/units.h"

struct damo_out {
	const struct report_opts *o;
	FILE *out;
	pid_t pid;			/* the target being written */
	uint64_t t0, nsnap, unobs;
	uint64_t unmapped, unmapped_bytes;
	int assumed;			/* the record's intervals were assumed */
	/* dropped, as damo's format has no place for them (first pass) */
	uint64_t placement, footprints, missed;
};

/* @str as a JSON string (quoted, escaped) */
static void put_str(FILE *f, const char *str)
{
	struct json_object *j = json_object_new_string(str);

	fputs(json_object_to_json_string_ext(j, JSON_C_TO_STRING_NOSLASHESCAPE), f);
	json_object_put(j);
}

/* zlib (not gzip: damo reads zlib.decompress()) over a FILE *. */
struct zw {
	FILE *to;
	z_stream z;
	unsigned char buf[65536];
};

static int zw_pump(struct zw *w, int flush)
{
	int ret;

	do {
		w->z.next_out = w->buf;
		w->z.avail_out = sizeof(w->buf);
		ret = deflate(&w->z, flush);
		if (ret == Z_STREAM_ERROR)
			return -1;
		if (fwrite(w->buf, 1, sizeof(w->buf) - w->z.avail_out, w->to) !=
		    sizeof(w->buf) - w->z.avail_out)
			return -1;
	} while (w->z.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	return 0;
}

static ssize_t zw_write(void *cookie, const char *buf, size_t len)
{
	struct zw *w = cookie;

	w->z.next_in = (unsigned char *)buf;
	w->z.avail_in = (uInt)len;
	return zw_pump(w, Z_NO_FLUSH) ? -1 : (ssize_t)len;
}

static int zw_close(void *cookie)
{
	struct zw *w = cookie;
	int ret = zw_pump(w, Z_FINISH);

	deflateEnd(&w->z);
	free(w);
	return ret ? EOF : 0;
}

static FILE *zlib_writer(FILE *to)
{
	cookie_io_functions_t io = { .write = zw_write, .close = zw_close };
	struct zw *w = calloc(1, sizeof(*w));
	FILE *f;

	if (!w || deflateInit(&w->z, Z_DEFAULT_COMPRESSION) != Z_OK) {
		free(w);
		return NULL;
	}
	w->to = to;
	f = fopencookie(w, "w", io);
	if (!f) {
		deflateEnd(&w->z);
		free(w);
	}
	return f;
}

static int snapshot(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct damo_out *d = arg;
	uint64_t total = 0, n = 0;

	(void)info;
	for (uint32_t i = 0; i < s->nr_regions; i++)
		if (s->regions[i].pid == d->pid)
			n++;
	if (!n)
		return 0;	/* not this target's window (or one it was not in) */
	fprintf(d->out, "%s\n            {\"start_time\": \"%" PRIu64 "\", \"end_time\": \"%"
		PRIu64 "\", \"regions\": [", d->nsnap++ ? "," : "", d->t0 + s->start_ns,
		d->t0 + s->end_ns);
	n = 0;
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];

		if (r->pid != d->pid)
			continue;
		if (!rec_observable(r)) {
			d->unobs++;
			continue;
		}
		if (!strcmp(r->label, "[unmapped]")) {
			d->unmapped++;
			d->unmapped_bytes += r->end - r->start;
			continue;
		}
		fprintf(d->out, "%s{\"start\": \"%" PRIu64 "\", \"end\": \"%" PRIu64 "\", "
			"\"nr_accesses\": {\"samples\": %u, \"percent\": null}, \"age\": "
			"{\"usec\": null, \"aggr_intervals\": ", n++ ? ", " : "", r->start, r->end,
			r->nr_accesses);
		/* an unknown age as damo writes one it read from a trace without: null */
		if (r->age_unknown)
			fputs("null", d->out);
		else
			fprintf(d->out, "\"%u\"", r->age);
		fputs("}, \"probe_hits\": [], \"sz_filter_passed\": \"0\"", d->out);
		if (r->label[0]) {
			fputs(", \"daptrace_label\": ", d->out);
			put_str(d->out, r->label);
		}
		fputc('}', d->out);
		total += r->end - r->start;
	}
	fprintf(d->out, "], \"total_bytes\": \"%" PRIu64 "\", \"damos_stats\": null", total);
	if (s->sample_us && !d->assumed)
		fprintf(d->out, ", \"sample_interval_us\": \"%u\"", s->sample_us);
	fputs("}", d->out);
	return 0;
}

/* The first pass: what damo's format cannot carry. */
static int survey(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct damo_out *d = arg;

	(void)info;
	d->placement += s->placement && s->nr_regions;
	d->footprints += s->nr_footprints;
	d->missed += s->missed_before;
	return 0;
}

/* Say on stderr what the export leaves out, besides regions. */
static void say_dropped(const struct damo_out *d, const struct rec_info *info)
{
	char what[512] = "";
	size_t n = 0;
	int other = 0;

	for (int i = 0; i < info->nr_targets; i++) {
		const struct rec_target *t = &info->targets[i];

		other |= t->ppid || t->cgroup || t->time_ns || t->exit_ns != REC_NO_EXIT;
	}
	if (d->placement)
		n += snprintf(what + n, sizeof(what) - n, "%sthe placement of %" PRIu64
			      " windows", n ? ", " : "", d->placement);
	if (d->footprints && n < sizeof(what))
		n += snprintf(what + n, sizeof(what) - n, "%s%" PRIu64 " footprint rows",
			      n ? ", " : "", d->footprints);
	if (d->missed && n < sizeof(what))
		n += snprintf(what + n, sizeof(what) - n, "%sthe count of %" PRIu64
			      " missed windows", n ? ", " : "", d->missed);
	if (other && n < sizeof(what))
		n += snprintf(what + n, sizeof(what) - n, "%sthe targets' parents, cgroups "
			      "and join and exit times", n ? ", " : "");
	if (n)
		warn_msg("report", "%s: damo's format has no place for %s: left out",
			 d->o->input, what);
}

/* The target id of @pid: the one of the record imported, else the pid. */
static uint64_t target_id(const struct rec_info *info, pid_t pid)
{
	char key[32];
	const char *v;
	uint64_t id;

	snprintf(key, sizeof(key), "target_id.%d", (int)pid);
	v = rec_info_get(info, key);
	return v && !parse_u64_dec(v, &id) ? id : (uint64_t)pid;
}

static const char *meta_or(const struct rec_info *info, const char *key, const char *def)
{
	const char *v = rec_info_get(info, key);
	uint64_t n;

	return v && !parse_u64_dec(v, &n) ? v : def;
}

int report_damo(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct damo_out d = { .o = o };
	struct rec_info info;
	FILE *f = out, *z = NULL;
	const char *ext = o->output ? strrchr(o->output, '.') : NULL;
	int ret, written = 0;

	(void)tics;
	/* every target, also those that joined later */
	ret = report_read(o, survey, &d, &info);
	if (ret)
		goto out;
	if (parse_u64_dec(meta_or(&info, "monotonic_start_ns", "0"), &d.t0))
		d.t0 = 0;
	d.assumed = rec_info_get(&info, "sample_us_assumed") != NULL;
	/* damo's default: zlib; a .json name or stdout: plain */
	if (o->output && !(ext && !strcmp(ext, ".json"))) {
		z = zlib_writer(out);
		if (!z) {
			ret = fail("report", "out of memory");
			goto out;
		}
		f = z;
	}
	d.out = f;
	fputs("[", f);
	for (int i = 0; i < info.nr_targets && !ret; i++) {
		struct rec_info pass;

		if (o->pid && info.targets[i].pid != o->pid)
			continue;
		d.pid = info.targets[i].pid;
		d.nsnap = 0;
		fprintf(f, "%s\n    {\"kdamond_idx\": null, \"context_idx\": null, ",
			written++ ? "," : "");
		/* assumed intervals stay unknown: damo then refuses what needs them */
		if (d.assumed)
			fputs("\"intervals\": null, ", f);
		else
			fprintf(f, "\"intervals\": {\"sample_us\": \"%s\", \"aggr_us\": \"%s\", "
				"\"ops_update_us\": \"%s\"}, ", meta_or(&info, "sample_us", "5000"),
				meta_or(&info, "aggr_us", "100000"),
				meta_or(&info, "update_us", "1000000"));
		fprintf(f, "\"scheme_idx\": null, \"target_id\": %" PRIu64 ", \"daptrace_pid\": "
			"%d, \"daptrace_comm\": ", target_id(&info, d.pid), (int)d.pid);
		put_str(f, info.targets[i].comm ? info.targets[i].comm : "");
		fputs(", \"scheme_filters\": [], \"snapshots\": [", f);
		ret = report_read(o, snapshot, &d, &pass);
		rec_info_free(&pass);
		fputs("\n        ], \"data_source\": \"unknown\"}", f);
	}
	fputs("\n]\n", f);
	say_dropped(&d, &info);
	if (d.unobs)
		warn_msg("report", "%s: %" PRIu64 " regions that cannot be observed left out "
			 "(damo would show them as idle)", o->input, d.unobs);
	if (d.unmapped) {
		char b[32];

		warn_msg("report", "%s: %" PRIu64 " [unmapped] regions (%s summed over the "
			 "windows) left out: holes between mappings, damo would count them as "
			 "idle memory", o->input, d.unmapped,
			 fmt_bytes(d.unmapped_bytes, b, sizeof(b)));
	}
out:
	if (z && fclose(z) && !ret)
		ret = fail("report", "compressing the damo record: %s", strerror(errno));
	rec_info_free(&info);
	return ret;
}
