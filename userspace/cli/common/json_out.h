/* SPDX-License-Identifier: GPL-2.0-only */
/* JSON output helpers: numbers at the precision they carry, one printer. */
#ifndef DAPTRACE_JSON_OUT_H
#define DAPTRACE_JSON_OUT_H

#include <stdio.h>

#include <json-c/json.h>

/*
 * @v with at most @decimals decimals, trailing zeros dropped (0.1, not
 * 0.10000000000000001); null for NaN and infinities, which JSON lacks.
 */
struct json_object *json_num(double v, int decimals);
/* Seconds to the microsecond, percentages to 1/1000, bytes whole. */
#define json_seconds(v)	json_num((v), 6)
#define json_percent(v)	json_num((v), 3)
#define json_bytes(v)	json_num((v), 0)
/* json_num()'s text of @v straight to @out ("null" for NaN): for large arrays. */
void json_out_num(FILE *out, double v, int decimals);
/* Print @j (pretty or one line) and a newline to @out, then release it. */
void json_out(FILE *out, struct json_object *j, int pretty);

struct acc_estimate;
/*
 * The accuracy estimate as an object: recall and precision, each
 * {"estimate", "lo", "hi", "probes"} or null without probes to rest on,
 * and the probe pages, unobserved ones and windows pooled.
 */
struct json_object *json_accuracy(const struct acc_estimate *e);

#endif
