/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The workload generators' one argument parser: each program describes its
 * options in a table (long name, short letter, how to read the value, where
 * to put it) and wl_parse_args() runs getopt_long over it.  A value that
 * does not read is refused with "PROG: --NAME: invalid value 'X'".
 *
 * Values, as every generator reads them:
 *   size      bytes, with an optional k/K, m/M or g/G suffix ("256M");
 *   duration  ns, the unit required: ns, us, ms, s or m ("500ms", "1.5s"),
 *             as `daptrace record` reads them (a bare "30" is ambiguous);
 *   numbers   strict decimal, the whole string, no sign for the unsigned.
 */
#ifndef WL_ARGS_H
#define WL_ARGS_H

#include <stdint.h>
#include <stdio.h>

struct wl_arg;

/* Reads @arg into @a->dst; 0, or -1 when it does not read. */
typedef int (*wl_parse_fn)(const char *arg, const struct wl_arg *a);

/* wl_arg.flags */
#define WL_NONZERO	0x1	/* 0 is refused */
#define WL_BARE_ZERO	0x2	/* wl_dur: a bare "0" (no unit) is 0 */
#define WL_OPT_ARG	0x4	/* the value is optional (--name[=VALUE]) */

struct wl_arg {
	const char *name;	/* the long option, without "--" */
	int key;		/* its short option letter, or 0 for none */
	wl_parse_fn parse;	/* NULL: a flag without value, *(int *)dst = 1 */
	void *dst;
	unsigned long long max;	/* wl_uint, wl_u64: the largest value; 0: any */
	unsigned int flags;
	int *given;		/* if set: 1 when the option was given */
};

/* One table entry; more fields by name: WL_OPT("n", 0, wl_uint, &v, .max = 9) */
#define WL_OPT(n, k, p, d, ...) \
	{ .name = (n), .key = (k), .parse = (p), .dst = (d), __VA_ARGS__ }

int wl_str(const char *arg, const struct wl_arg *a);	/* const char * */
int wl_size(const char *arg, const struct wl_arg *a);	/* size_t */
int wl_dur(const char *arg, const struct wl_arg *a);	/* uint64_t ns */
int wl_uint(const char *arg, const struct wl_arg *a);	/* unsigned int */
int wl_u64(const char *arg, const struct wl_arg *a);	/* unsigned long long */
int wl_int(const char *arg, const struct wl_arg *a);	/* int */
int wl_double(const char *arg, const struct wl_arg *a);	/* double */

/*
 * Parses the options of @argv by @args (ended by an entry without name).
 * With @usage, -h/--help prints it to stdout and exits 0, and an unknown
 * option prints it to stderr.  Returns the index of the first operand, or
 * -1 after an error message (the caller exits 2).
 */
int wl_parse_args(const char *prog, int argc, char **argv, const struct wl_arg *args,
		  void (*usage)(FILE *f));

/* CLOCK_MONOTONIC in ns: the clock of daptrace's snapshots. */
uint64_t wl_now_ns(void);

#endif
