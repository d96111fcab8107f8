/* SPDX-License-Identifier: GPL-2.0-only */
/* Run daptrace for a JSON document (json-c): what a --json report test reads. */
#ifndef DAPTRACE_RUN_JSON_H
#define DAPTRACE_RUN_JSON_H

#include <json-c/json.h>

#include "run_cmd.h"

/*
 * Run daptrace with @argv as run_daptrace() does (its output in @out) and
 * parse that output: NULL unless it exits 0 and the whole output is one
 * JSON document, so a test's ASSERT_NE(NULL, j) checks both.
 */
static inline struct json_object *run_daptrace_json(char *const *argv, char *out, size_t len)
{
	if (run_daptrace(argv, out, len))
		return NULL;
	return json_tokener_parse(out);
}

#endif
