// SPDX-License-Identifier: GPL-2.0-only
/* JSON output helpers (json_out.h). */
#include <math.h>
#include <string.h>

#include "json_out.h"

struct json_object *json_num(double v, int decimals)
{
	char buf[64];
	size_t n;

	if (!isfinite(v))
		return NULL;
	n = (size_t)snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	if (n >= sizeof(buf))
		return json_object_new_double(v);
	if (strchr(buf, '.')) {
		while (n > 1 && buf[n - 1] == '0')
			buf[--n] = '\0';
		if (buf[n - 1] == '.')
			buf[--n] = '\0';
	}
	if (!strcmp(buf, "-0"))
		strcpy(buf, "0");
	return json_object_new_double_s(v, buf);
}

void json_out(FILE *out, struct json_object *j, int pretty)
{
	fprintf(out, "%s\n", json_object_to_json_string_ext(j, (pretty ?
		JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN) |
		JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}
