/* SPDX-License-Identifier: GPL-2.0-only */
/* Run daptrace for a JSON document (json-c): what a --json report test reads. */
#ifndef DAPTRACE_RUN_JSON_H
#define DAPTRACE_RUN_JSON_H

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * @o's member @k, which the test requires: in a TEST (kselftest_harness.h,
 * included first), a NULL @o or a missing member fails the test there.
 */
static inline struct json_object *json_field(struct __test_metadata *_metadata,
					     struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	ASSERT_TRUE(o && json_object_object_get_ex(o, k, &v))
		TH_LOG("no \"%s\" in %.300s", k, o ? json_object_to_json_string(o) : "NULL");
	return v;
}

#define JSON_FIELD(o, k) json_field(_metadata, o, k)

/* The member of @j at @path, "a.b.0.c" (a number indexes an array); NULL if none. */
static inline struct json_object *json_at(struct json_object *j, const char *path)
{
	char key[64];

	while (j && *path) {
		size_t n = strcspn(path, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		if (json_object_is_type(j, json_type_array))
			j = json_object_array_get_idx(j, strtoul(key, NULL, 10));
		else if (!json_object_object_get_ex(j, key, &j))
			j = NULL;
		path += n + (path[n] == '.');
	}
	return j;
}

#endif
