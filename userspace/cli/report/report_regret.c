// SPDX-License-Identifier: GPL-2.0-only
/*
 * report regret: a policy record's regret counters (the #regret rows that
 * daptrace policy --record writes at the end, recfile.h): per scheme and
 * cgroup, the bytes its action took away and, per window, how much of what
 * was checked came back by the window's end; what could not be checked
 * and what was still pending when the policy stopped are shown apart.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/json_out.h"
#include "report.h"
#include "common/units.h"

static int skip(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	(void)arg; (void)s; (void)info;
	return 0;
}

/* "10s" as the exporter's window label, else the duration as units.h writes it */
static const char *win_name(uint64_t us, char *buf, size_t len)
{
	if (us % 1000000)
		return fmt_us(us, buf, len);
	snprintf(buf, len, "%" PRIu64 "s", us / 1000000);
	return buf;
}

static struct json_object *one_json(const struct rec_regret *r)
{
	struct json_object *o = json_object_new_object(), *ws = json_object_new_array();
	char b[32];

	json_object_object_add(o, "scheme", json_object_new_uint64(r->scheme));
	json_object_object_add(o, "name", json_object_new_string(r->name));
	json_object_object_add(o, "method", json_object_new_string(r->method));
	json_object_object_add(o, "cgroup", json_object_new_string(r->cgroup));
	json_object_object_add(o, "acted_bytes", json_object_new_uint64(r->acted));
	json_object_object_add(o, "unknown_calls", json_object_new_uint64(r->unknown_calls));
	for (int w = 0; w < r->nr_windows; w++) {
		struct json_object *x = json_object_new_object();

		json_object_object_add(x, "window", json_object_new_string(
				       win_name(r->w[w].us, b, sizeof(b))));
		json_object_object_add(x, "window_us", json_object_new_uint64(r->w[w].us));
		json_object_object_add(x, "checked_bytes", json_object_new_uint64(r->w[w].checked));
		json_object_object_add(x, "back_bytes", json_object_new_uint64(r->w[w].back));
		json_object_object_add(x, "back_percent", r->w[w].checked ?
				       json_percent(100.0 * (double)r->w[w].back /
						    (double)r->w[w].checked) : NULL);
		json_object_object_add(x, "unknown_bytes", json_object_new_uint64(r->w[w].unknown));
		json_object_object_add(x, "pending_bytes", json_object_new_uint64(
				       r->acted - r->w[w].checked - r->w[w].unknown));
		json_object_array_add(ws, x);
	}
	json_object_object_add(o, "windows", ws);
	return o;
}

static void one_text(const struct rec_regret *r, FILE *out)
{
	char a[32], b[32], c[32];

	fprintf(out, "%-24s %-20s %-8s %10s", r->name, *r->cgroup ? r->cgroup : "-",
		r->method, fmt_bytes(r->acted, a, sizeof(a)));
	for (int w = 0; w < r->nr_windows; w++) {
		uint64_t pending = r->acted - r->w[w].checked - r->w[w].unknown;

		fprintf(out, "  %s: ", win_name(r->w[w].us, c, sizeof(c)));
		if (r->w[w].checked)
			fprintf(out, "%s back of %s (%.1f%%)", fmt_bytes(r->w[w].back, a, sizeof(a)),
				fmt_bytes(r->w[w].checked, b, sizeof(b)),
				100.0 * (double)r->w[w].back / (double)r->w[w].checked);
		else
			fputs("none checked", out);
		if (r->w[w].unknown)
			fprintf(out, ", %s unknown", fmt_bytes(r->w[w].unknown, a, sizeof(a)));
		if (pending)
			fprintf(out, ", %s pending", fmt_bytes(pending, a, sizeof(a)));
	}
	if (r->unknown_calls)
		fprintf(out, "  (%" PRIu64 " calls unread)", r->unknown_calls);
	fputc('\n', out);
}

int report_regret(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct rec_info info;
	int ret;

	(void)tics;
	ret = report_read(o, skip, NULL, &info);
	if (ret)
		goto out;
	if (!info.nr_regret) {
		ret = fail("report", "%s: no regret counters (#regret rows): only "
			   "daptrace policy --record writes them, at its end, for pageout and "
			   "migrate_* schemes", o->input);
		goto out;
	}
	if (o->json) {
		struct json_object *j = json_object_new_object(), *a = json_object_new_array();

		json_object_object_add(j, "record", json_object_new_string(o->input));
		for (int i = 0; i < info.nr_regret; i++)
			json_object_array_add(a, one_json(&info.regret[i]));
		json_object_object_add(j, "regret", a);
		json_out(out, j, 1);
		goto out;
	}
	fprintf(out, "# of what each scheme took away, what came back by each window's end\n");
	fprintf(out, "%-24s %-20s %-8s %10s  %s\n", "# scheme", "cgroup", "method", "taken",
		"per window: back by its end of what was checked");
	for (int i = 0; i < info.nr_regret; i++)
		one_text(&info.regret[i], out);
out:
	rec_info_free(&info);
	return ret;
}
