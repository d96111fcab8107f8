/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The file a new record goes to, for record and policy --record: an existing
 * record is kept as FILE.old, a .gz name is gzip-compressed, and a run that
 * recorded nothing leaves no file and puts FILE.old back.
 */
#ifndef DAPTRACE_RECORD_OUTPUT_H
#define DAPTRACE_RECORD_OUTPUT_H

/* 1 if @path ends in ".gz": the record is written gzip-compressed. */
int recout_gz_name(const char *path);
/*
 * Like perf.data.old: an existing regular @path is renamed to FILE.old,
 * never overwritten; *@kept is then FILE.old (to free), else untouched.
 * Returns 0 or EXIT_FAIL after a message naming @cmd and @flag.
 */
int recout_keep_old(const char *cmd, const char *flag, const char *path, int quiet,
		     char **kept);
/* Nothing was recorded in @path: remove it, put @kept (if any) back. */
void recout_discard(const char *cmd, const char *path, const char *kept);

#endif
