// SPDX-License-Identifier: GPL-2.0-only
/*
 * A group's savings curve as JSON (savings_json.h).  Reuse times and the
 * unknown share are null when there is nothing to take them of, never 0.
 */
#include <stdio.h>

#include "json_out.h"
#include "savings_json.h"

struct json_object *sav_stats_json(const struct sav_stats *st, const uint64_t *t_ns,
				   unsigned int nr_t, uint64_t page_size, int live)
{
	struct json_object *j = json_object_new_object(), *curve = json_object_new_array();
	double w = (double)st->windows;

	json_object_object_add(j, "processes", json_object_new_uint64(st->nr_procs));
	json_object_object_add(j, "windows", json_object_new_uint64(st->windows));
	json_object_object_add(j, "seconds", json_seconds(sav_seconds(st)));
	json_object_object_add(j, "observed_mean_bytes", json_bytes(st->observed_sum / w));
	json_object_object_add(j, "not_observable_mean_bytes", json_bytes(st->unobs_sum / w));
	json_object_object_add(j, "age_unknown_idle_mean_bytes",
			       json_bytes(st->age_unknown_sum / w));
	json_object_object_add(j, "out_of_reach_mean_bytes", json_bytes(st->unreachable_sum / w));
	json_object_object_add(j, "resident_mean_bytes", json_bytes(st->resident_sum / w));
	json_object_object_add(j, "residency_unknown_mean_bytes",
			       json_bytes(st->res_unknown_sum / w));
	json_object_object_add(j, "knee_threshold_s", st->knee < 0 ? NULL :
			       json_seconds((double)t_ns[st->knee] / 1e9));
	for (unsigned int k = 0; k < nr_t; k++) {
		const struct sav_point *p = &st->pt[k];
		struct json_object *e = json_object_new_object();
		double rate = sav_refault_rate(st, k), p50 = sav_reuse_pct(&p->reuse, 50);
		double p90 = sav_reuse_pct(&p->reuse, 90);

		json_object_object_add(e, "threshold_s", json_seconds((double)t_ns[k] / 1e9));
		json_object_object_add(e, "saved_mean_bytes", json_bytes(sav_saved_mean(st, k)));
		if (live)
			json_object_object_add(e, "saved_now_bytes", json_bytes(sav_held(p)));
		else
			json_object_object_add(e, "saved_last_bytes", json_bytes(p->saved_last));
		json_object_object_add(e, "reclaimed_bytes", json_bytes(p->reclaimed));
		json_object_object_add(e, "refaulted_bytes", json_bytes(p->refaulted));
		json_object_object_add(e, "refault_bytes_per_s", json_num(rate, 3));
		json_object_object_add(e, "refault_pages_per_s",
				       json_num(rate / (double)page_size, 3));
		json_object_object_add(e, "reuse_p50_s", p50 < 0 ? NULL : json_seconds(p50 / 1e9));
		json_object_object_add(e, "reuse_p90_s", p90 < 0 ? NULL : json_seconds(p90 / 1e9));
		json_object_object_add(e, "never_reused_bytes", json_bytes(p->never_reused));
		if (!live) {
			json_object_object_add(e, "unknown_future_bytes", json_bytes(p->unknown));
			json_object_object_add(e, "unknown_future_percent", p->reclaimed > 0 ?
					       json_percent(100 * p->unknown / p->reclaimed) :
					       NULL);
		}
		json_object_object_add(e, "knee", json_object_new_boolean((int)k == st->knee));
		json_object_array_add(curve, e);
	}
	json_object_object_add(j, "curve", curve);
	return j;
}

struct json_object *sav_calib_json(const struct sav_calib *c)
{
	struct json_object *j;

	if (!c->probed)
		return NULL;
	j = json_object_new_object();
	json_object_object_add(j, "probe_pages", json_object_new_uint64((uint64_t)c->probed));
	json_object_object_add(j, "precision", json_num(c->precision, 4));
	json_object_object_add(j, "precision_upper", json_num(c->upper, 4));
	json_object_object_add(j, "model_touched", json_num(c->touched, 4));
	json_object_object_add(j, "huge_share", json_num(c->huge, 4));
	json_object_object_add(j, "scale", json_num(c->scale, 4));
	return j;
}

void sav_calib_text(const struct sav_calib *c, char *buf, size_t len)
{
	char huge[96];

	/* a probe of a huge page reads its one bit: truth of 2 MiB, not of a page */
	snprintf(huge, sizeof(huge), " (%.0f %% of it in huge pages, whose probes say of all "
		 "their base pages)", 100 * c->huge);
	if (!c->probed) {
		snprintf(buf, len, "what a hit takes back to stay: as sampled (no accuracy probes "
			 "in accessed regions)");
		return;
	}
	snprintf(buf, len, "what a hit takes back to stay: %s %.2f (refaults as sampled): of %.0f "
		 "probe pages in regions read accessed %.1f %% were (95 %% at most %.1f %%), where "
		 "the sampling says %.1f %%%s",
		 c->scale < 1 ? "scaled by" : "as sampled, scale", c->scale, c->probed,
		 100 * c->precision, 100 * c->upper, 100 * c->touched,
		 c->huge > 0 ? huge : "");
}
