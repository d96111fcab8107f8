/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A monitoring session, shared by record, top and policy: the monitor
 * attributes from flags, the targets from -p or a launched command held
 * until monitoring is on, start/stop with libdaptrace, and the signals
 * that end it.  Each subcommand keeps only what it does with snapshots.
 */
#ifndef DAPTRACE_SESSION_H
#define DAPTRACE_SESSION_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "daptrace.h"
#include "units.h"
#include "workload.h"

#define SESSION_DUR_HELP "expected a duration with a unit: us, ms, s or m, e.g. 5ms or 30s, " \
	"at most " DURATION_MAX_STR

/* The signal (SIGINT/SIGTERM) that asked us to stop, or 0. */
extern volatile sig_atomic_t session_stop_signal;

/* SIGINT/SIGTERM set session_stop_signal and wake poll(); SIGPIPE ignored. */
void session_catch_signals(void);
int64_t session_now_ns(void);
/* A process's name from /proc/PID/comm (malloc'd; "" if it is gone). */
char *session_read_comm(pid_t pid);

/* What the session flags set. */
struct session_opts {
	struct daptrace_attrs attrs;
	pid_t pids[DAPTRACE_MAX_TARGETS];
	int nr_pids;
	char **cmd;			/* the command after the options */
	uint64_t duration_us;		/* 0: until the targets exit */
};

/* The session flags: -p, -s, -a, -u, -r, -t and -d, for getopt_long(). */
#define SESSION_SHORTOPTS "p:s:a:u:r:t:d:"
#define SESSION_LONGOPTS						\
	{ "pid",	required_argument, NULL, 'p' },			\
	{ "sample",	required_argument, NULL, 's' },			\
	{ "aggr",	required_argument, NULL, 'a' },			\
	{ "update",	required_argument, NULL, 'u' },			\
	{ "regions",	required_argument, NULL, 'r' },			\
	{ "tlb-flush",	required_argument, NULL, 't' },			\
	{ "duration",	required_argument, NULL, 'd' }

void session_opts_default(struct session_opts *so);
/*
 * Parse session flag @c into @so.  Returns 0, EXIT_USAGE after the
 * message naming the flag, or -1 if @c is not a session flag.
 */
int session_opt(const char *cmd, int c, const char *arg, struct session_opts *so);
/*
 * After the options: the command at argv[optind] if any, exactly one of
 * it and --pid (@verb: "monitor", "act on"), consistent attributes.
 */
int session_opts_finish(const char *cmd, struct session_opts *so, int argc, char **argv,
			const char *verb);
/* Print the help lines of -s/-a/-u/-r/-t; @aggr says what a window is for. */
void session_attr_help(FILE *f, const char *aggr);

struct session {
	const char *cmd;		/* the subcommand, for messages */
	struct daptrace *d;
	struct workload w;		/* the launched command, if any */
	const char *argv0;		/* its name, for messages */
	pid_t pids[DAPTRACE_MAX_TARGETS];
	int nr_targets;
	int nr_added;			/* targets added to the monitor */
	int64_t t0;			/* CLOCK_MONOTONIC ns at "on" */
};

/*
 * Check a command can run, open the monitor, check it is off, drop stale
 * targets, set the attributes.
 */
int session_open(struct session *s, const struct session_opts *so, const char *busy_hint);
/* Fork the command (held until session_release()) or take the pids as targets. */
int session_launch(struct session *s, const struct session_opts *so);
int session_add_targets(struct session *s);
/* Position the reader (the first snapshot is not missed), note t0, turn on. */
int session_start(struct session *s);
/* Let the launched command run; EXIT_FAIL if it could not be exec'ed. */
int session_release(struct session *s);
/* Why to stop now (signal, @duration_us, the targets), or NULL to go on. */
const char *session_should_stop(struct session *s, uint64_t duration_us, int64_t now);
/* The poll timeout for an aggregation interval: 10 to 250 ms. */
int session_wait_ms(const struct daptrace_attrs *a);
/* Turn monitoring off if on; returns the "on" state read (<0: unknown). */
int session_stop(struct session *s, int *ret);
/* Remove our targets and end the command; keep the monitor open. */
void session_end(struct session *s, int on);
void session_close(struct session *s);

#endif
