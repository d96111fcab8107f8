// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace exporter: the stats of `daptrace policy --stats-json FILE` as
 * metrics.  The policy rewrites FILE atomically (docs/policy.md, "Stats"):
 *
 *   {elapsed_s, snapshots, snapshots_missed,
 *    schemes: [{scheme, action, node, nr_tried, sz_tried, ...,
 *               errors: {eperm, ...}}]}
 *
 * Fields the tables below know get proper names, types and units.  Any
 * other field is exported too, so that a new one (the quota goals' values,
 * say) shows up without a change here:
 *   - a number or boolean: a gauge daptrace_policy_<field>;
 *   - an object of numbers: a gauge daptrace_policy_<field>{key="<key>"};
 *   - an array of objects: per element, a gauge
 *     daptrace_policy_<field>_<member>{index="<i>"} per number member, the
 *     element's string members as labels;
 * per scheme with the scheme's labels.  Anything deeper, or a name that
 * clashes, is counted in the gauge daptrace_exporter_dropped_series.  To give
 * a new field a counter type or a unit, add a row to a table.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "exporter.h"

#define NS_PER_S	1000000000LL
#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

struct known {
	const char *field;
	const char *name;
	enum metric_type type;
	const char *unit;
	const char *help;
};

#define C METRIC_COUNTER
#define G METRIC_GAUGE

static const struct known top_fields[] = {
	{ "elapsed_s", "daptrace_policy_elapsed_seconds", G, "seconds",
	  "How long the policy has been running." },
	{ "snapshots", "daptrace_policy_snapshots_total", C, "",
	  "Snapshots the policy applied its schemes to." },
	{ "snapshots_missed", "daptrace_policy_snapshots_missed_total", C, "",
	  "Snapshots the policy missed (it fell behind the kernel's ring)." },
};

static const struct known scheme_fields[] = {
	{ "nr_tried", "daptrace_policy_tried_regions_total", C, "",
	  "Region pieces that matched the scheme's pattern and filters." },
	{ "sz_tried", "daptrace_policy_tried_bytes_total", C, "bytes",
	  "Bytes that matched the scheme's pattern and filters." },
	{ "nr_applied", "daptrace_policy_applied_regions_total", C, "",
	  "Region pieces the scheme's action succeeded on." },
	{ "sz_applied", "daptrace_policy_applied_bytes_total", C, "bytes",
	  "Bytes the scheme's action succeeded on (migrations: bytes that changed node)." },
	{ "nr_quota_skip", "daptrace_policy_quota_skipped_regions_total", C, "",
	  "Region pieces left for a later quota window." },
	{ "sz_quota_skip", "daptrace_policy_quota_skipped_bytes_total", C, "bytes",
	  "Bytes left for a later quota window." },
	{ "nr_identity_skip", "daptrace_policy_identity_skipped_regions_total", C, "",
	  "Region pieces skipped because the scheme already acted on them." },
	{ "sz_identity_skip", "daptrace_policy_identity_skipped_bytes_total", C, "bytes",
	  "Bytes skipped because the scheme already acted on them." },
	{ "nr_unobserved_skip", "daptrace_policy_unobserved_skipped_regions_total", C, "",
	  "Region pieces skipped because the module could not observe them." },
	{ "sz_unobserved_skip", "daptrace_policy_unobserved_skipped_bytes_total", C, "bytes",
	  "Bytes skipped because the module could not observe them." },
	{ "qt_exceeds", "daptrace_policy_quota_exceeded_total", C, "",
	  "Quota windows in which the scheme's quota ran out." },
	{ "wmark_inactive", "daptrace_policy_watermark_inactive_snapshots_total", C, "",
	  "Snapshots the scheme's watermarks kept it off for." },
};

/* Fields that are labels or handled apart, not metrics. */
static const char *const scheme_labels[] = {
	"scheme", "action", "node", "errors", "regret", "regret_method",
};

/* A window's members of the stats file's "regret" (policy/stats.c). */
static const struct known regret_window_fields[] = {
	{ "back_bytes", "daptrace_policy_regret_bytes_total", C, "bytes",
	  "Of the bytes the scheme took away whose window was checked, those back by the "
	  "window's end (pageout: mapped again; migrate: on another node)." },
	{ "checked_bytes", "daptrace_policy_regret_checked_bytes_total", C, "bytes",
	  "Bytes the scheme took away whose window has closed and was checked." },
	{ "unknown_bytes", "daptrace_policy_regret_unknown_bytes_total", C, "bytes",
	  "Bytes the scheme took away whose window could not be checked (target left, "
	  "check late, probe failed)." },
};

static const struct known *find(const struct known *t, size_t n, const char *field)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].field, field))
			return &t[i];
	return NULL;
}

static int is_number(struct json_object *o)
{
	enum json_type t = json_object_get_type(o);

	return t == json_type_int || t == json_type_double || t == json_type_boolean;
}

/* (json-c converts an integer, signed or above INT64_MAX, to double too) */
static double number(struct json_object *o)
{
	return json_object_get_double(o);
}

/* daptrace_policy_<a>[_<b>], a gauge's name (no _total: it is no counter). */
static void generic_name(char *out, size_t len, const char *a, const char *b)
{
	char pa[128], pb[128];
	size_t n;

	metric_name_part(a, pa, sizeof(pa));
	metric_name_part(b ? b : "", pb, sizeof(pb));
	snprintf(out, len, "daptrace_policy_%s%s%s", pa, b ? "_" : "", pb);
	n = strlen(out);
	if (n > 6 && !strcmp(out + n - 6, "_total"))
		out[n - 6] = '\0';
}

static void generic_value(struct metric_set *m, const char *field, const char *member,
			  const struct labels *l, struct json_object *v)
{
	char name[300];

	generic_name(name, sizeof(name), field, member);
	mset_one(m, name, G, "", "A field of the policy's stats file this exporter has no "
		 "table entry for (see docs/exporter.md).", l, number(v));
}

/* An object of numbers, or an array of objects; anything else is dropped. */
static void generic(struct metric_set *m, const char *field, const struct labels *base,
		    struct json_object *v)
{
	if (is_number(v)) {
		generic_value(m, field, NULL, base, v);
		return;
	}
	if (json_object_is_type(v, json_type_string) || json_object_is_type(v, json_type_null))
		return;		/* a string is a label at most; at this level, none */
	if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, val) {
			struct labels l = *base;

			if (!is_number(val)) {
				m->dropped++;
				continue;
			}
			labels_add(&l, "key", key);
			generic_value(m, field, NULL, &l, val);
		}
		return;
	}
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		struct labels l = *base;

		if (!json_object_is_type(e, json_type_object)) {
			m->dropped++;
			continue;
		}
		labels_addf(&l, "index", "%zu", i);
		json_object_object_foreach(e, skey, sval) {
			char ln[128];

			if (!json_object_is_type(sval, json_type_string))
				continue;
			metric_name_part(skey, ln, sizeof(ln));
			labels_add(&l, ln, json_object_get_string(sval));
		}
		json_object_object_foreach(e, key, val) {
			if (json_object_is_type(val, json_type_string))
				continue;
			if (!is_number(val)) {
				m->dropped++;
				continue;
			}
			generic_value(m, field, key, &l, val);
		}
	}
}

static void known_value(struct metric_set *m, const struct known *k, const struct labels *l,
			struct json_object *v)
{
	if (!is_number(v)) {
		m->dropped++;
		return;
	}
	mset_one(m, k->name, k->type, k->unit, k->help, l, number(v));
}

/*
 * "regret": [{cgroup, acted_bytes, unknown_calls, windows: [{window, ...}]}]
 * as daptrace_policy_regret_*{...,cgroup,window}.
 */
static void regret(struct metric_set *m, const struct labels *base, struct json_object *arr)
{
	if (!json_object_is_type(arr, json_type_array)) {
		m->dropped++;
		return;
	}
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *c = json_object_array_get_idx(arr, i), *v, *ws;
		struct labels l = *base;

		if (!json_object_is_type(c, json_type_object) ||
		    !json_object_object_get_ex(c, "cgroup", &v)) {
			m->dropped++;
			continue;
		}
		labels_add(&l, "cgroup", json_object_get_string(v));
		if (json_object_object_get_ex(c, "acted_bytes", &v) && is_number(v))
			mset_one(m, "daptrace_policy_regret_acted_bytes_total", C, "bytes",
				 "Bytes the scheme took away (pageout: mapped before the call and "
				 "not after; migrate: moved onto its node), per cgroup.", &l,
				 number(v));
		if (json_object_object_get_ex(c, "unknown_calls", &v) && is_number(v))
			mset_one(m, "daptrace_policy_regret_unknown_calls_total", C, "",
				 "Calls of the scheme whose effect could not be read.", &l,
				 number(v));
		if (!json_object_object_get_ex(c, "windows", &ws) ||
		    !json_object_is_type(ws, json_type_array)) {
			m->dropped++;
			continue;
		}
		for (size_t k = 0; k < json_object_array_length(ws); k++) {
			struct json_object *w = json_object_array_get_idx(ws, k);
			struct labels lw = l;

			if (!json_object_is_type(w, json_type_object) ||
			    !json_object_object_get_ex(w, "window", &v)) {
				m->dropped++;
				continue;
			}
			labels_add(&lw, "window", json_object_get_string(v));
			for (size_t f = 0; f < ARRAY_LEN(regret_window_fields); f++)
				if (json_object_object_get_ex(w, regret_window_fields[f].field, &v))
					known_value(m, &regret_window_fields[f], &lw, v);
		}
	}
}

static void scheme(struct metric_set *m, size_t idx, struct json_object *s)
{
	struct json_object *v;
	struct labels l, info;

	labels_init(&l);
	labels_addf(&l, "scheme", "%zu", idx);
	if (json_object_object_get_ex(s, "action", &v))
		labels_add(&l, "action", json_object_get_string(v));
	if (json_object_object_get_ex(s, "node", &v))
		labels_add(&l, "node", json_object_get_string(v));
	info = l;
	labels_add(&info, "text", json_object_object_get_ex(s, "scheme", &v) ?
		   json_object_get_string(v) : "");
	mset_one(m, "daptrace_policy_scheme_info", METRIC_INFO, "",
		 "A scheme of the policy: its index, action, node and text.", &info, 1);
	if (json_object_object_get_ex(s, "errors", &v) &&
	    json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, val) {
			struct labels le = l;

			labels_add(&le, "error", key);
			if (is_number(val))
				mset_one(m, "daptrace_policy_errors_total", C, "",
					 "Failed calls of the scheme's action by errno (esrch: the "
					 "target exited; eother: any errno not named).", &le,
					 number(val));
			else
				m->dropped++;
		}
	}
	if (json_object_object_get_ex(s, "regret", &v))
		regret(m, &l, v);
	json_object_object_foreach(s, key, val) {
		const struct known *k = find(scheme_fields, ARRAY_LEN(scheme_fields), key);
		int skip = 0;

		for (size_t i = 0; i < ARRAY_LEN(scheme_labels); i++)
			skip |= !strcmp(key, scheme_labels[i]);
		if (skip)
			continue;
		if (k)
			known_value(m, k, &l, val);
		else
			generic(m, key, &l, val);
	}
}

void exp_policy_metrics(const struct exp_policy *p, struct metric_set *m)
{
	struct json_object *schemes = NULL;

	if (!p->path)
		return;
	mset_one(m, "daptrace_policy_stats_up", G, "",
		 "1 if the policy stats file (--policy-stats) was read and parsed.", NULL, p->up);
	if (!p->up || !p->root)
		return;
	mset_one(m, "daptrace_policy_stats_timestamp_seconds", G, "seconds",
		 "When the policy last rewrote its stats file, seconds since the epoch.", NULL,
		 p->mtime);
	json_object_object_foreach(p->root, key, val) {
		const struct known *k = find(top_fields, ARRAY_LEN(top_fields), key);
		struct labels l;

		labels_init(&l);
		if (!strcmp(key, "schemes"))
			schemes = val;
		else if (k)
			known_value(m, k, &l, val);
		else
			generic(m, key, &l, val);
	}
	if (!schemes || !json_object_is_type(schemes, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(schemes); i++) {
		struct json_object *s = json_object_array_get_idx(schemes, i);

		if (json_object_is_type(s, json_type_object))
			scheme(m, i, s);
		else
			m->dropped++;
	}
}

/* Counted once per failure: a missing file once, each bad version once. */
static void fail_read(struct exp_policy *p, struct exp_counts *n, int err, const char *why)
{
	p->up = 0;
	json_object_put(p->root);
	p->root = NULL;
	if (err > 0 && p->err == err)
		return;
	p->err = err;
	n->policy_errors++;
	warn_msg("exporter", "--policy-stats %s: %s (counted; read again when it changes)",
		 p->path, why);
}

void exp_policy_refresh(struct exp_policy *p, struct exp_counts *n, int64_t now_ns)
{
	struct json_object *root;
	struct stat st;
	int64_t mtime_ns;

	if (!p->path || (p->checked_ns && now_ns - p->checked_ns < NS_PER_S))
		return;
	p->checked_ns = now_ns;
	if (stat(p->path, &st)) {
		int err = errno;

		p->ino = 0;	/* whatever comes back is read */
		fail_read(p, n, err, strerror(err));
		return;
	}
	mtime_ns = (int64_t)st.st_mtim.tv_sec * NS_PER_S + st.st_mtim.tv_nsec;
	if (p->ino == st.st_ino && p->dev == st.st_dev && p->mtime_ns == mtime_ns &&
	    p->size == st.st_size)
		return;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	p->mtime_ns = mtime_ns;
	p->size = st.st_size;
	root = json_object_from_file(p->path);
	if (!root || !json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		fail_read(p, n, -1, "not a JSON object (as daptrace policy --stats-json writes)");
		return;
	}
	if (p->err)
		warn_msg("exporter", "--policy-stats %s: read", p->path);
	p->err = 0;
	json_object_put(p->root);
	p->root = root;
	p->up = 1;
	p->mtime = (double)mtime_ns / 1e9;
}

void exp_policy_free(struct exp_policy *p)
{
	json_object_put(p->root);
	p->root = NULL;
}
