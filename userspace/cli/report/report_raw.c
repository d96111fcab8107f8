// SPDX-License-Identifier: GPL-2.0-only
/* report raw: every snapshot and region of a record, human readable. */
#include <inttypes.h>
#include <json-c/json.h>

#include "cli.h"
#include "common/json_out.h"
#include "report.h"
#include "common/units.h"

struct raw {
	const struct report_opts *o;
	FILE *out;
	uint64_t n;
};

/* A value that is a whole decimal number is one in JSON too ("100000", not "0100"). */
static struct json_object *kv_value(const char *v)
{
	uint64_t n;

	if (!parse_u64_dec(v, &n) && (v[0] != '0' || !v[1]))
		return json_object_new_uint64(n);
	if (v[0] == '-' && !parse_u64_dec(v + 1, &n) && v[1] != '0' && n <= INT64_MAX)
		return json_object_new_int64(-(int64_t)n);
	return json_object_new_string(v);
}

static void kv_json(struct json_object *j, const char *name, const struct rec_kv *kv, int nr)
{
	struct json_object *o = json_object_new_object();

	for (int i = 0; i < nr; i++)
		json_object_object_add(o, kv[i].key, kv_value(kv[i].value));
	json_object_object_add(j, name, o);
}

/*
 * --json: {"snapshots": [...], "meta": {...}, "targets": [...], "end": {...}};
 * snapshots are streamed one object at a time (a record may be gigabytes).
 */
static int json_snapshot(void *arg, const struct rec_snapshot *s,
			 const struct rec_info *info)
{
	struct raw *raw = arg;
	struct json_object *j = json_object_new_object(), *regs = json_object_new_array();

	(void)info;
	json_object_object_add(j, "seq", json_object_new_uint64(s->seq));
	json_object_object_add(j, "start_ns", json_object_new_uint64(s->start_ns));
	json_object_object_add(j, "end_ns", json_object_new_uint64(s->end_ns));
	json_object_object_add(j, "nr_samples", json_object_new_uint64(s->nr_samples));
	json_object_object_add(j, "flags", json_object_new_uint64(s->flags));
	json_object_object_add(j, "missed_before", json_object_new_uint64(s->missed_before));
	json_object_object_add(j, "sample_us", json_object_new_uint64(s->sample_us));
	json_object_object_add(j, "aggr_us", json_object_new_uint64(s->aggr_us));
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];
		struct json_object *e;

		if (raw->o->pid && r->pid != raw->o->pid)
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "pid", json_object_new_int(r->pid));
		json_object_object_add(e, "start", json_object_new_uint64(r->start));
		json_object_object_add(e, "end", json_object_new_uint64(r->end));
		json_object_object_add(e, "nr_accesses", json_object_new_uint64(r->nr_accesses));
		json_object_object_add(e, "freq_percent", rec_observable(r) ?
				       json_percent(report_freq(s, r)) : NULL);
		json_object_object_add(e, "flags", json_object_new_uint64(r->flags));
		/* null: not known (never 0) */
		json_object_object_add(e, "age_windows", r->age_unknown ? NULL :
				       json_object_new_uint64(r->age));
		json_object_object_add(e, "age_s", r->age_unknown ? NULL :
				       json_seconds((double)report_age_ns(raw->o, s, r->age) / 1e9));
		json_object_object_add(e, "label", json_object_new_string(r->label));
		json_object_array_add(regs, e);
	}
	json_object_object_add(j, "regions", regs);
	if (s->nr_footprints) {
		struct json_object *fps = json_object_new_array();

		for (uint32_t i = 0; i < s->nr_footprints; i++) {
			const struct rec_footprint *f = &s->footprints[i];
			struct json_object *e;

			if (raw->o->pid && f->pid != raw->o->pid)
				continue;
			e = json_object_new_object();
			json_object_object_add(e, "pid", json_object_new_int(f->pid));
			json_object_object_add(e, "time_s", json_seconds((double)f->time_ns / 1e9));
			json_object_object_add(e, "vsz", json_object_new_uint64(f->vsz));
			json_object_object_add(e, "rss", json_object_new_uint64(f->rss));
			json_object_array_add(fps, e);
		}
		json_object_object_add(j, "footprints", fps);
	}
	fprintf(raw->out, "%s\n  %s", raw->n++ ? "," : "{\"snapshots\": [",
		json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
	return 0;
}

static int print_snapshot(void *arg, const struct rec_snapshot *s,
			  const struct rec_info *info)
{
	struct raw *raw = arg;
	char sz[32], age[32], sm[32], ag[32];

	(void)info;
	fprintf(raw->out, "snapshot seq %" PRIu64 " %.6f-%.6f s regions %u samples %u"
		" (every %s, over %s) flags 0x%x missed_before %" PRIu64 "\n", s->seq,
		(double)s->start_ns / 1e9, (double)s->end_ns / 1e9, s->nr_regions,
		s->nr_samples, s->sample_us ? fmt_us(s->sample_us, sm, sizeof(sm)) : "?",
		s->aggr_us ? fmt_us(s->aggr_us, ag, sizeof(ag)) : "?", s->flags,
		s->missed_before);
	for (uint32_t i = 0; i < s->nr_footprints; i++) {
		const struct rec_footprint *f = &s->footprints[i];

		if (raw->o->pid && f->pid != raw->o->pid)
			continue;
		fprintf(raw->out, "  footprint %d at %.6f s: vsz %s", (int)f->pid,
			(double)f->time_ns / 1e9, fmt_bytes(f->vsz, sz, sizeof(sz)));
		fprintf(raw->out, " rss %s\n", fmt_bytes(f->rss, sz, sizeof(sz)));
	}
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];

		if (raw->o->pid && r->pid != raw->o->pid)
			continue;
		if (!rec_observable(r)) {
			fprintf(raw->out, "  %-7d 0x%" PRIx64 "-0x%" PRIx64 " %10s not "
				"observable %s\n", (int)r->pid, r->start, r->end,
				fmt_bytes(r->end - r->start, sz, sizeof(sz)), r->label);
			continue;
		}
		fprintf(raw->out, "  %-7d 0x%" PRIx64 "-0x%" PRIx64 " %10s acc %4u "
			"(%6.2f%%) ", (int)r->pid, r->start, r->end,
			fmt_bytes(r->end - r->start, sz, sizeof(sz)), r->nr_accesses,
			report_freq(s, r));
		if (r->age_unknown)
			fprintf(raw->out, "age unknown %s\n", r->label);
		else
			fprintf(raw->out, "age %5u windows (%s) %s\n", r->age,
				fmt_secs(report_age_ns(raw->o, s, r->age), age, sizeof(age)),
				r->label);
	}
	return 0;
}

int report_raw(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct raw raw = { .o = o, .out = out };
	struct rec_info info;
	int ret;

	(void)tics;
	ret = report_read(o, o->json ? json_snapshot : print_snapshot, &raw, &info);
	if (!ret && o->json) {
		struct json_object *j = json_object_new_object(), *t = json_object_new_array();

		kv_json(j, "meta", info.meta, info.nr_meta);
		for (int i = 0; i < info.nr_targets; i++) {
			struct json_object *e = json_object_new_object();

			json_object_object_add(e, "pid", json_object_new_int(info.targets[i].pid));
			json_object_object_add(e, "comm",
					       json_object_new_string(info.targets[i].comm));
			json_object_array_add(t, e);
		}
		json_object_object_add(j, "targets", t);
		kv_json(j, "end", info.trailer, info.nr_trailer);
		json_object_object_add(j, "complete", json_object_new_boolean(info.complete));
		/* the object's members after the streamed "snapshots" array */
		fprintf(out, "%s],\n%s\n", raw.n ? "\n" : "{\"snapshots\": [",
			json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE) + 1);
		json_object_put(j);
	} else if (!ret) {
		fprintf(out, "# metadata\n");
		for (int i = 0; i < info.nr_meta; i++)
			fprintf(out, "#   %s = %s\n", info.meta[i].key, info.meta[i].value);
		for (int i = 0; i < info.nr_targets; i++)
			fprintf(out, "#   target %d %s\n", (int)info.targets[i].pid,
				info.targets[i].comm);
		for (int i = 0; i < info.nr_trailer; i++)
			fprintf(out, "#   end %s = %s\n", info.trailer[i].key,
				info.trailer[i].value);
	}
	rec_info_free(&info);
	return ret;
}
