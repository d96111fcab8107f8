// SPDX-License-Identifier: GPL-2.0-only
/* JSON output helpers (json_out.h). */
#include <math.h>
#include <string.h>

#include "accuracy.h"
#include "json_out.h"

/* "%.*f" without trailing zeros; 0 if it does not fit. */
static int num_text(char *buf, size_t len, double v, int decimals)
{
	size_t n = (size_t)snprintf(buf, len, "%.*f", decimals, v);

	if (n >= len)
		return 0;
	if (strchr(buf, '.')) {
		while (n > 1 && buf[n - 1] == '0')
			buf[--n] = '\0';
		if (buf[n - 1] == '.')
			buf[--n] = '\0';
	}
	if (!strcmp(buf, "-0"))
		strcpy(buf, "0");
	return 1;
}

struct json_object *json_num(double v, int decimals)
{
	char buf[64];

	if (!isfinite(v))
		return NULL;
	if (!num_text(buf, sizeof(buf), v, decimals))
		return json_object_new_double(v);
	return json_object_new_double_s(v, buf);
}

void json_out_num(FILE *out, double v, int decimals)
{
	char buf[64];

	if (!isfinite(v))
		fputs("null", out);
	else if (num_text(buf, sizeof(buf), v, decimals))
		fputs(buf, out);
	else
		fprintf(out, "%.17g", v);
}

void json_out(FILE *out, struct json_object *j, int pretty)
{
	fprintf(out, "%s\n", json_object_to_json_string_ext(j, (pretty ?
		JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN) |
		JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

static struct json_object *json_interval(const struct acc_interval *i)
{
	struct json_object *j;

	if (!i->n)
		return NULL;
	j = json_object_new_object();
	json_object_object_add(j, "estimate", json_num(i->est, 4));
	json_object_object_add(j, "lo", json_num(i->lo, 4));
	json_object_object_add(j, "hi", json_num(i->hi, 4));
	json_object_object_add(j, "probes", json_object_new_uint64(i->n));
	return j;
}

struct json_object *json_accuracy(const struct acc_estimate *e)
{
	struct json_object *j = json_object_new_object();

	json_object_object_add(j, "recall", json_interval(&e->recall));
	json_object_object_add(j, "precision", json_interval(&e->precision));
	json_object_object_add(j, "probe_pages", json_object_new_uint64(e->pages));
	json_object_object_add(j, "unobserved", json_object_new_uint64(e->unobserved));
	json_object_object_add(j, "windows", json_object_new_uint64(e->windows));
	json_object_object_add(j, "interval", json_object_new_string("wilson95"));
	return j;
}
