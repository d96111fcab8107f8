// SPDX-License-Identifier: GPL-2.0-only
/*
 * damo's record files (import.h): a JSON list of records, one per target,
 *
 *   [{"target_id": N, "intervals": {"sample_us", "aggr_us", "ops_update_us"}
 *     or null, "snapshots": [{"start_time": ns, "end_time": ns,
 *     "sample_interval_us": us (interval tuning, optional), "regions":
 *     [{"start", "end", "nr_accesses": {"samples", "percent"},
 *       "age": {"usec", "aggr_intervals"}}]}]}]
 *
 * zlib-compressed (damo's default, "json_compressed") or plain ("json").
 * damo writes numbers as JSON numbers or strings; its human form ("1,234",
 * "4.000 KiB", "1 s 200 ms", "max") is read too, as its text_to_*() do.
 * A record whose one snapshot is damo's placeholder (a single region 0-0
 * with -1 samples, written to give a lone snapshot a start) is skipped.
 * Keys damo ignores that report damo writes are read back: a record's
 * "daptrace_pid" and "daptrace_comm", a region's "daptrace_label".
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <zlib.h>

#include "import.h"

enum damo_kind { K_NR, K_BYTES, K_NS, K_US };

struct unit {
	const char *name;
	double mul;
};

static const struct unit byte_units[] = {
	{ "B", 1 }, { "K", 0x1p10 }, { "KB", 0x1p10 }, { "KiB", 0x1p10 },
	{ "M", 0x1p20 }, { "MB", 0x1p20 }, { "MiB", 0x1p20 },
	{ "G", 0x1p30 }, { "GB", 0x1p30 }, { "GiB", 0x1p30 },
	{ "T", 0x1p40 }, { "TB", 0x1p40 }, { "TiB", 0x1p40 },
	{ "P", 0x1p50 }, { "PB", 0x1p50 }, { "PiB", 0x1p50 },
	{ "E", 0x1p60 }, { "EB", 0x1p60 }, { "EiB", 0x1p60 }, { NULL, 0 },
};

static const struct unit time_units[] = {	/* in ns */
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 },
	{ "h", 3600e9 }, { "d", 86400e9 }, { NULL, 0 },
};

/*
 * "1,234", "4.000 KiB", "1 s 200 ms": numbers with optional units, summed
 * (the base unit: bytes, ns, or none).  -1 if not such a text.
 */
static int parse_text(const char *s, const struct unit *units, double *out)
{
	double sum = 0;

	while (*s) {
		char num[64];
		size_t n = 0;
		double v, mul = 1;
		char *end;

		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		while ((isdigit((unsigned char)*s) || *s == ',' || *s == '.' || *s == '-') &&
		       n + 1 < sizeof(num)) {
			if (*s != ',')
				num[n++] = *s;
			s++;
		}
		num[n] = '\0';
		errno = 0;
		v = strtod(num, &end);
		if (!n || errno || *end)
			return -1;
		while (isspace((unsigned char)*s))
			s++;
		if (isalpha((unsigned char)*s)) {
			const char *u = s;
			size_t l;
			int found = 0;

			while (isalpha((unsigned char)*s))
				s++;
			l = (size_t)(s - u);
			for (int i = 0; units && units[i].name; i++)
				if (strlen(units[i].name) == l && !strncmp(units[i].name, u, l)) {
					mul = units[i].mul;
					found = 1;
				}
			if (!found)
				return -1;
		}
		sum += v * mul;
	}
	*out = sum;
	return 0;
}

/*
 * A JSON integer as u64, exactly: json-c (0.14 on) keeps one above
 * INT64_MAX as unsigned, and json_object_get_int64() saturates it to
 * INT64_MAX; damo's target ids are kernel pointers (~1.8e19) and region
 * ends reach 2^64 - 1.  -1 for a negative one.
 */
static int json_int_u64(const struct json_object *v, uint64_t *out)
{
	if (json_object_get_int64(v) < 0)
		return -1;
	*out = json_object_get_uint64(v);
	return 0;
}

/* A damo number of @kind (for K_US, in us); -1 if it is none (or null). */
static int damo_num(const struct json_object *v, enum damo_kind kind, double *out)
{
	const char *s;
	uint64_t u;

	if (!v)
		return -1;
	switch (json_object_get_type(v)) {
	case json_type_int:
		if (json_int_u64(v, &u))
			*out = (double)json_object_get_int64(v);
		else
			*out = (double)u;
		return 0;
	case json_type_double:
		*out = json_object_get_double(v);
		return isfinite(*out) ? 0 : -1;
	case json_type_string:
		s = json_object_get_string((struct json_object *)v);
		if (!strcmp(s, "max")) {
			*out = 0x1p64;
			return 0;
		}
		if (parse_text(s, kind == K_BYTES ? byte_units : kind == K_NR ? NULL :
			       time_units, out))
			return -1;
		if (kind == K_US && strpbrk(s, "nmsuhd"))
			*out /= 1e3;	/* it had a unit: ns -> us */
		return 0;
	default:
		return -1;
	}
}

/* A member, NULL if absent or null. */
static struct json_object *get(const struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

/* Exact unsigned 64-bit for addresses and times (doubles lose them above 2^53). */
static int damo_u64(const struct json_object *v, enum damo_kind kind, uint64_t *out)
{
	double d;

	if (json_object_is_type(v, json_type_int))
		return json_int_u64(v, out);
	if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string((struct json_object *)v);
		char digits[32];
		size_t n = 0;

		/* "94,827,419,009,024" or "8359534592": exact */
		for (; *s && n + 1 < sizeof(digits); s++)
			if (isdigit((unsigned char)*s))
				digits[n++] = *s;
			else if (*s != ',')
				break;
		digits[n] = '\0';
		if (n && !*s) {
			errno = 0;
			*out = strtoull(digits, NULL, 10);
			return errno ? -1 : 0;
		}
	}
	if (damo_num(v, kind, &d) || d < 0 || d >= 0x1p64)
		return -1;
	*out = (uint64_t)d;
	return 0;
}

struct where {
	size_t rec, snap, region;
};

static int bad(struct imp *m, const struct where *w, int level, const char *what)
{
	if (level == 0)
		return imp_fail(m, "records[%zu]: %s", w->rec, what);
	if (level == 1)
		return imp_fail(m, "records[%zu].snapshots[%zu]: %s", w->rec, w->snap, what);
	return imp_fail(m, "records[%zu].snapshots[%zu].regions[%zu]: %s", w->rec, w->snap,
			w->region, what);
}

/* The placeholder damo adds after a lone snapshot (add_fake_snapshot_if_needed). */
static int fake_snapshot(const struct json_object *regions)
{
	const struct json_object *r;
	uint64_t a, b;

	if (json_object_array_length(regions) != 1)
		return 0;
	r = json_object_array_get_idx(regions, 0);
	return !damo_u64(get(r, "start"), K_BYTES, &a) && !damo_u64(get(r, "end"), K_BYTES, &b) &&
	       !a && !b;
}

static int add_region(struct imp *m, struct imp_snapshot *s, const struct json_object *r,
		      uint32_t aggr_us, uint32_t samples, const struct where *w)
{
	const struct json_object *acc = get(r, "nr_accesses"), *age = get(r, "age");
	struct imp_region reg = { 0 };
	double v;

	if (damo_u64(get(r, "start"), K_BYTES, &reg.start) ||
	    damo_u64(get(r, "end"), K_BYTES, &reg.end))
		return bad(m, w, 2, "no start and end addresses");
	/* samples, or a percentage of the window's samples */
	if (acc && !json_object_is_type(acc, json_type_object) && !damo_num(acc, K_NR, &v))
		reg.nr_accesses = (uint32_t)v;
	else if (!damo_num(get(acc, "samples"), K_NR, &v) && v >= 0 && v <= UINT32_MAX)
		reg.nr_accesses = (uint32_t)v;
	else if (!damo_num(get(acc, "percent"), K_NR, &v) && v >= 0 && v <= 100)
		reg.nr_accesses = (uint32_t)lround(v * samples / 100);
	else
		return bad(m, w, 2, "no nr_accesses (samples or percent)");
	/*
	 * Age in windows, or in us; damo writes null where it did not know
	 * it (a trace without ages) and -1 in its placeholder: unknown.
	 */
	if (!damo_num(get(age, "aggr_intervals"), K_NR, &v) && v >= 0 && v <= UINT32_MAX)
		reg.age = (uint32_t)v;
	else if (!damo_num(get(age, "usec"), K_US, &v) && v >= 0 && aggr_us)
		reg.age = v / aggr_us > UINT32_MAX ? UINT32_MAX : (uint32_t)(v / aggr_us);
	else
		reg.age_unknown = 1;
	if (reg.start >= reg.end)
		return bad(m, w, 2, "start is not below end");
	if (get(r, "daptrace_label")) {
		if (!json_object_is_type(get(r, "daptrace_label"), json_type_string))
			return bad(m, w, 2, "daptrace_label is not a string");
		reg.label = strdup(json_object_get_string((struct json_object *)
							  get(r, "daptrace_label")));
		if (!reg.label)
			return imp_fail(m, "out of memory");
	}
	return imp_region(m, s, &reg);
}

/* The pid and comm of a record report damo wrote, kept for target @t. */
static int origin(struct imp *m, const struct json_object *rec, int t, const struct where *w)
{
	const struct json_object *pid = get(rec, "daptrace_pid"), *comm = get(rec, "daptrace_comm");
	struct imp_origin *o = &m->origin[t];
	int64_t v;

	if (pid) {
		v = json_object_is_type(pid, json_type_int) ? json_object_get_int64(pid) : 0;
		if (v < 1 || v > INT32_MAX)
			return bad(m, w, 0, "daptrace_pid is not a pid (a whole number from 1)");
		o->pid = (int32_t)v;
	}
	if (comm) {
		if (!json_object_is_type(comm, json_type_string))
			return bad(m, w, 0, "daptrace_comm is not a string");
		free(o->comm);
		o->comm = strdup(json_object_get_string((struct json_object *)comm));
		if (!o->comm)
			return imp_fail(m, "out of memory");
	}
	return 0;
}

static int add_record(struct imp *m, const struct json_object *rec, struct where *w)
{
	const struct json_object *iv = get(rec, "intervals"), *snaps = get(rec, "snapshots");
	uint64_t id = w->rec;
	double v;
	int t;

	if (!json_object_is_type(rec, json_type_object))
		return bad(m, w, 0, "not an object");
	if (!json_object_is_type(snaps, json_type_array))
		return bad(m, w, 0, "no list of snapshots");
	if (get(rec, "target_id") && damo_u64(get(rec, "target_id"), K_NR, &id))
		return bad(m, w, 0, "a target_id that is not a number");
	/* the first record with intervals gives them */
	if (iv && !m->sample_us) {
		if (!damo_num(get(iv, "sample_us"), K_US, &v) && v >= 1 && v <= UINT32_MAX)
			m->sample_us = (uint32_t)v;
		if (!damo_num(get(iv, "aggr_us"), K_US, &v) && v >= 1 && v <= UINT32_MAX)
			m->aggr_us = (uint32_t)v;
		if (!damo_num(get(iv, "ops_update_us"), K_US, &v) && v >= 1 && v <= UINT32_MAX)
			m->update_us = (uint32_t)v;
		if (!m->sample_us || !m->aggr_us || m->sample_us > m->aggr_us)
			return bad(m, w, 0, "bad intervals (sample_us, aggr_us)");
	}
	t = imp_target(m, id);
	if (t < 0)
		return -1;
	if (origin(m, rec, t, w))
		return -1;
	for (w->snap = 0; w->snap < json_object_array_length(snaps); w->snap++) {
		const struct json_object *sn = json_object_array_get_idx(snaps, w->snap);
		const struct json_object *regions = get(sn, "regions");
		struct imp_snapshot *s;
		uint32_t samples, aggr_us;

		if (!json_object_is_type(regions, json_type_array))
			return bad(m, w, 1, "no list of regions");
		if (fake_snapshot(regions)) {
			m->skipped++;
			continue;
		}
		s = imp_snapshot(m, t);
		if (!s)
			return -1;
		if (damo_u64(get(sn, "end_time"), K_NS, &s->end_ns))
			return bad(m, w, 1, "no end_time");
		s->has_start = !damo_u64(get(sn, "start_time"), K_NS, &s->start_ns);
		if (s->has_start && s->start_ns > s->end_ns)
			return bad(m, w, 1, "start_time after end_time");
		if (!damo_num(get(sn, "sample_interval_us"), K_US, &v) && v >= 1 &&
		    v <= UINT32_MAX)
			s->sample_us = (uint32_t)v;
		/* for percentages and ages in us: the window as damo sees it */
		samples = m->aggr_us && m->sample_us ? m->aggr_us / m->sample_us : 20;
		aggr_us = s->sample_us ? s->sample_us * samples : m->aggr_us;
		for (w->region = 0; w->region < json_object_array_length(regions); w->region++)
			if (add_region(m, s, json_object_array_get_idx(regions, w->region),
				       aggr_us, samples, w))
				return -1;
	}
	return 0;
}

/* JSON text from @in, inflated first if @zlib, parsed as it comes. */
static struct json_object *read_json(struct imp *m, FILE *in, int zlib)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	struct json_object *j = NULL;
	unsigned char ibuf[65536], obuf[262144];
	z_stream z = { 0 };
	size_t n, total = 0;
	int zret = Z_OK, done = 0;

	if (!tok || (zlib && inflateInit(&z) != Z_OK)) {
		json_tokener_free(tok);
		imp_fail(m, "out of memory");
		return NULL;
	}
	while (!done && (n = fread(ibuf, 1, sizeof(ibuf), in)) > 0) {
		z.next_in = ibuf;
		z.avail_in = (uInt)n;
		do {
			const unsigned char *text = ibuf;
			size_t len = n;

			if (zlib) {
				z.next_out = obuf;
				z.avail_out = sizeof(obuf);
				zret = inflate(&z, Z_NO_FLUSH);
				if (zret != Z_OK && zret != Z_STREAM_END) {
					imp_fail(m, "not zlib data (%s): damo's json_compressed "
						 "is zlib-compressed JSON", z.msg ? z.msg : "inflate");
					goto out;
				}
				text = obuf;
				len = sizeof(obuf) - z.avail_out;
			}
			total += len;
			j = json_tokener_parse_ex(tok, (const char *)text, (int)len);
			if (!j && json_tokener_get_error(tok) != json_tokener_continue) {
				imp_fail(m, "not JSON at byte %zu: %s", total - len +
					 json_tokener_get_parse_end(tok),
					 json_tokener_error_desc(json_tokener_get_error(tok)));
				goto out;
			}
			if (j)
				done = 1;
		} while (zlib && !done && zret != Z_STREAM_END && (z.avail_in || !z.avail_out));
		if (!zlib)
			n = 0;
	}
	if (!j && !m->err[0])
		imp_fail(m, ferror(in) ? "read error" : zlib && zret != Z_STREAM_END ?
			 "the zlib data ends too early (a cut file?)" :
			 "the JSON ends too early (a cut file?)");
out:
	if (zlib)
		inflateEnd(&z);
	json_tokener_free(tok);
	return j;
}

int import_damo(struct imp *m, FILE *in, int zlib)
{
	struct json_object *j = read_json(m, in, zlib);
	struct where w = { 0 };
	int ret = 0;

	if (!j)
		return -1;
	if (!json_object_is_type(j, json_type_array)) {
		json_object_put(j);
		return imp_fail(m, "not a damo record (a JSON list of records, one per target)");
	}
	for (w.rec = 0; !ret && w.rec < json_object_array_length(j); w.rec++)
		ret = add_record(m, json_object_array_get_idx(j, w.rec), &w);
	json_object_put(j);
	return ret;
}
