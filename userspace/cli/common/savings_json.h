/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A group's savings curve (savings_model.h) as a JSON object: report
 * savings prints a record's, stat --savings the curve so far; and the
 * model's calibration by the accuracy probes, as JSON and as a line.
 */
#ifndef DAPTRACE_SAVINGS_JSON_H
#define DAPTRACE_SAVINGS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "savings_model.h"

/*
 * @st over thresholds @t_ns[0..nr_t), refaults also in pages of
 * @page_size.  A finished run (@live 0) says per threshold what was last
 * saved and what was still reclaimed at its end ("unknown future"); a
 * live one (stat) what is held reclaimed now: saved now.
 */
struct json_object *sav_stats_json(const struct sav_stats *st, const uint64_t *t_ns,
				   unsigned int nr_t, uint64_t page_size, int live);

/* The calibration as an object; NULL (JSON null) without probes. */
struct json_object *sav_calib_json(const struct sav_calib *c);
/* The calibration as a line of text (no newline) into @buf. */
void sav_calib_text(const struct sav_calib *c, char *buf, size_t len);

#endif
