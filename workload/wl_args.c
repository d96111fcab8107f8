// SPDX-License-Identifier: GPL-2.0
/* The workload generators' argument parser: see wl_args.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wl_args.h"

#define WL_MAX_ARGS	32
#define WL_LONG_ONLY	256	/* getopt values of long-only options: 256 + index */

uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int wl_str(const char *arg, const struct wl_arg *a)
{
	*(const char **)a->dst = arg;
	return 0;
}

int wl_size(const char *arg, const struct wl_arg *a)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*arg == '-')
		return -1;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	case 't': case 'T': v <<= 40; end++; break;
	default: break;
	}
	if (*end || (!v && (a->flags & WL_NONZERO)))
		return -1;
	*(size_t *)a->dst = v;
	return 0;
}

int wl_dur(const char *arg, const struct wl_arg *a)
{
	static const struct { const char *u; uint64_t mul; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000ULL },
		{ "m", 60000000000ULL },
	};
	uint64_t *out = a->dst;
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || v < 0)
		return -1;
	if (!*end && v == 0 && (a->flags & WL_BARE_ZERO)) {
		*out = 0;	/* 0 is the same in any unit */
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].u))
			continue;
		*out = (uint64_t)(v * (double)units[i].mul);
		return !*out && (a->flags & WL_NONZERO) ? -1 : 0;
	}
	return -1;	/* a bare number: ambiguous */
}

/* Strict unsigned decimal into @v, at most @max (0: any); 0 or -1. */
static int wl_ull(const char *arg, const struct wl_arg *a, unsigned long long max,
		  unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-')
		return -1;
	if ((a->max && *v > a->max) || *v > max)
		return -1;
	return !*v && (a->flags & WL_NONZERO) ? -1 : 0;
}

int wl_uint(const char *arg, const struct wl_arg *a)
{
	unsigned long long v;

	if (wl_ull(arg, a, UINT_MAX, &v))
		return -1;
	*(unsigned int *)a->dst = (unsigned int)v;
	return 0;
}

int wl_u64(const char *arg, const struct wl_arg *a)
{
	unsigned long long v;

	if (wl_ull(arg, a, UINT64_MAX, &v))
		return -1;
	*(uint64_t *)a->dst = v;
	return 0;
}

int wl_int(const char *arg, const struct wl_arg *a)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < INT_MIN || v > INT_MAX)
		return -1;
	*(int *)a->dst = (int)v;
	return 0;
}

int wl_double(const char *arg, const struct wl_arg *a)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end)
		return -1;
	*(double *)a->dst = v;
	return 0;
}

int wl_parse_args(const char *prog, int argc, char **argv, const struct wl_arg *args,
		  void (*usage)(FILE *f))
{
	struct option lopts[WL_MAX_ARGS + 2];
	char shorts[3 * WL_MAX_ARGS + 2], *s = shorts;
	const struct wl_arg *a;
	int n, c;

	for (n = 0; args[n].name; n++) {
		a = &args[n];
		if (n == WL_MAX_ARGS)
			abort();	/* a table larger than this parser: a bug */
		lopts[n] = (struct option){
			.name = a->name,
			.has_arg = !a->parse ? no_argument :
				   (a->flags & WL_OPT_ARG) ? optional_argument : required_argument,
			.val = a->key ? a->key : WL_LONG_ONLY + n,
		};
		if (a->key) {
			*s++ = (char)a->key;
			if (a->parse)
				*s++ = ':';
			if (a->parse && (a->flags & WL_OPT_ARG))
				*s++ = ':';
		}
	}
	if (usage) {
		lopts[n++] = (struct option){ .name = "help", .val = 'h' };
		*s++ = 'h';
	}
	lopts[n] = (struct option){ 0 };
	*s = '\0';

	while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		if (c == 'h' && usage) {
			usage(stdout);
			exit(0);
		}
		for (a = args; a->name; a++)
			if (c == (a->key ? a->key : WL_LONG_ONLY + (int)(a - args)))
				break;
		if (!a->name) {
			if (usage)
				usage(stderr);
			return -1;
		}
		if (!a->parse)
			*(int *)a->dst = 1;
		else if (a->parse(optarg, a)) {
			fprintf(stderr, "%s: --%s: invalid value '%s'\n", prog, a->name,
				optarg ? optarg : "");
			return -1;
		}
		if (a->given)
			*a->given = 1;
	}
	return optind;
}
