// SPDX-License-Identifier: GPL-2.0-only
/*
 * report savings, printed (report_savings.h): a table per group with the
 * knee marked, the same as JSON, or the curve as data for viz/savings.gp.
 * Reuse times and the unknown share are "-" (null) when there is nothing
 * to take them of, never 0.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "common/json_out.h"
#include "common/savings_json.h"
#include "policy.h"
#include "report_savings.h"
#include "common/units.h"

/* @ns as "2.5 s", or "-" when < 0 (nothing refaulted) */
static const char *secs_or_dash(double ns, char *buf, size_t len)
{
	return ns < 0 ? "-" : fmt_secs(u64_of(ns), buf, len);
}

/* What --type leaves in the replay. */
static const char *sav_type_text(const struct report_opts *o)
{
	switch (o->sav_type) {
	case POL_FILTER_ANON:
		return "the anonymous memory";
	case POL_FILTER_FILE:
		return "the file-backed memory";
	default:
		return "what is";
	}
}

static const char *sav_type_name(const struct report_opts *o)
{
	return o->sav_type == POL_FILTER_ANON ? "anon" :
	       o->sav_type == POL_FILTER_FILE ? "file" : "any";
}

static const char *bytes_of(double v, char *buf, size_t len)
{
	return fmt_bytes(u64_of(v), buf, len);
}

static void print_stats_text(const struct sav_result *res, const struct sav_stats *st,
			     FILE *out)
{
	char b[11][32];
	double w = (double)st->windows;

	fprintf(out, "# %" PRIu64 " windows over %.3f s, %" PRIu64 " process%s\n",
		st->windows, sav_seconds(st), st->nr_procs, st->nr_procs == 1 ? "" : "es");
	fprintf(out, "# left out, never idle enough (means over the windows): not "
		"observable %s, idle of unknown age %s, out of the scheme's reach %s "
		"(of %s observed",
		bytes_of(st->unobs_sum / w, b[0], 32), bytes_of(st->age_unknown_sum / w, b[1], 32),
		bytes_of(st->unreachable_sum / w, b[3], 32), bytes_of(st->observed_sum / w, b[2], 32));
	/* a record without placement columns does not say what was resident */
	if (st->res_unknown_sum > 0)
		fprintf(out, "; %s of it of unrecorded residency, counted whole)\n",
			bytes_of(st->res_unknown_sum / w, b[0], 32));
	else
		fprintf(out, ", %s of it resident)\n", bytes_of(st->resident_sum / w, b[0], 32));
	if (st->knee >= 0)
		fprintf(out, "# knee: %s\n", fmt_secs(res->t_ns[st->knee], b[0], 32));
	fprintf(out, "%-10s %11s %11s %11s %11s %13s %9s %9s %9s %11s %11s %8s\n",
		"threshold", "saved_mean", "saved_last", "reclaimed", "refaulted", "refaults/s",
		"pages/s", "reuse_p50", "reuse_p90", "never_used", "unknown", "unknown%");
	for (unsigned int k = 0; k < res->nr_t; k++) {
		const struct sav_point *p = &st->pt[k];
		double rate = sav_refault_rate(st, k);

		snprintf(b[5], 32, "%s/s", bytes_of(rate, b[4], 32));
		snprintf(b[10], 32, p->reclaimed > 0 ? "%.1f" : "-",
			 100 * p->unknown / p->reclaimed);
		fprintf(out, "%-10s %11s %11s %11s %11s %13s %9.2f %9s %9s %11s %11s %8s%s\n",
			fmt_secs(res->t_ns[k], b[0], 32), bytes_of(sav_saved_mean(st, k), b[1], 32),
			bytes_of(p->saved_last, b[2], 32), bytes_of(p->reclaimed, b[3], 32),
			bytes_of(p->refaulted, b[4], 32), b[5],
			rate / (double)res->page_size,
			secs_or_dash(sav_reuse_pct(&p->reuse, 50), b[6], 32),
			secs_or_dash(sav_reuse_pct(&p->reuse, 90), b[7], 32),
			bytes_of(p->never_reused, b[8], 32), bytes_of(p->unknown, b[9], 32),
			b[10], (int)k == st->knee ? "  <- knee" : "");
	}
}

void sav_print_text(const struct sav_result *res, FILE *out)
{
	const struct report_opts *o = res->o;
	char line[320];

	fprintf(out, "# savings of %s%s: reclaiming %s idle for at least each threshold\n",
		o->input, o->pid ? " (one pid)" : "", sav_type_text(o));
	fprintf(out, "# refaults: reclaimed bytes accessed again later in the record (per s of "
		"it; pages of %" PRIu64 " B); never_used: freed unused; unknown: still\n"
		"# reclaimed when the record ended; knee: the most saved with refaults/s within "
		"%d %% of the most\n", res->page_size, SAV_KNEE_PCT);
	sav_calib_text(res->calib, line, sizeof(line));
	fprintf(out, "# %s\n", line);
	if (res->speed != 1)
		fprintf(out, "# for the target at %.3g times its speed in the record: a "
			"threshold T meets what was idle there for T x %.3g; the times and "
			"rates are the record's at that speed\n", res->speed, res->speed);
	print_stats_text(res, res->all, out);
	for (size_t i = 0; i < res->nr_groups; i++) {
		fprintf(out, "\n# %s %s\n", report_by_name((enum report_by)o->by),
			res->groups[i]->key);
		print_stats_text(res, res->groups[i], out);
	}
}

void sav_print_json(const struct sav_result *res, FILE *out)
{
	const struct report_opts *o = res->o;
	struct json_object *j = json_object_new_object(), *arr;

	json_object_object_add(j, "record", json_object_new_string(o->input));
	json_object_object_add(j, "page_size", json_object_new_uint64(res->page_size));
	json_object_object_add(j, "knee_percent", json_object_new_int(SAV_KNEE_PCT));
	json_object_object_add(j, "type", json_object_new_string(sav_type_name(o)));
	json_object_object_add(j, "speed", json_object_new_double(res->speed));
	json_object_object_add(j, "all", sav_stats_json(res->all, res->t_ns, res->nr_t, res->page_size, 0));
	json_object_object_add(j, "calibration", sav_calib_json(res->calib));
	if (o->by) {
		arr = json_object_new_array();
		for (size_t i = 0; i < res->nr_groups; i++) {
			struct json_object *g = sav_stats_json(res->groups[i], res->t_ns, res->nr_t,
							   res->page_size, 0);

			json_object_object_add(g, "group",
					       json_object_new_string(res->groups[i]->key));
			json_object_array_add(arr, g);
		}
		json_object_object_add(j, "by", json_object_new_string(
				       report_by_name((enum report_by)o->by)));
		json_object_object_add(j, "groups", arr);
	}
	json_out(out, j, 1);
}

/*
 * Plot data, one row per threshold: threshold_s saved_mean_bytes
 * refault_pages_per_s knee(0|1); the tics file names the knee.  The
 * headline goes to stdout, as the data went to a file.
 */
void sav_print_plot(const struct sav_result *res, FILE *out, FILE *tics)
{
	const struct sav_stats *st = res->all;
	char b[2][32];

	fprintf(out, "# columns: threshold_s saved_mean_bytes refault_pages_per_s knee\n");
	for (unsigned int k = 0; k < res->nr_t; k++)
		fprintf(out, "%.6f %.0f %.6f %d\n", (double)res->t_ns[k] / 1e9,
			sav_saved_mean(st, k), sav_refault_rate(st, k) / (double)res->page_size,
			(int)k == st->knee);
	if (tics)
		fprintf(tics, "page_size=%" PRIu64 "\n", res->page_size);
	if (tics && st->knee >= 0)
		fprintf(tics, "knee_s=%.6f\n", (double)res->t_ns[st->knee] / 1e9);
	if (st->knee >= 0)
		printf("%s: knee at %s: %s saved on average, %.2f pages refaulted/s\n",
		       res->o->input, fmt_secs(res->t_ns[st->knee], b[0], 32),
		       bytes_of(sav_saved_mean(st, (unsigned int)st->knee), b[1], 32),
		       sav_refault_rate(st, (unsigned int)st->knee) / (double)res->page_size);
}
