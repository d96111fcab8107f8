/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The file a new record goes to, for record and policy --record: an existing
 * record is kept as FILE.old, a .gz name is gzip-compressed, and a run that
 * recorded nothing leaves no file and puts FILE.old back.
 */
#ifndef DAPTRACE_RECORD_OUTPUT_H
#define DAPTRACE_RECORD_OUTPUT_H

#include <stdio.h>

/* 1 if @path ends in ".gz": the record is written gzip-compressed. */
int recout_gz_name(const char *path);
/*
 * Like perf.data.old: an existing regular @path (not a symlink, device or
 * FIFO: those are written through) is renamed to FILE.old, never
 * overwritten; *@kept is then FILE.old (to free), else untouched.
 * Returns 0 or EXIT_FAIL after a message naming @cmd and @flag.
 */
int recout_keep_old(const char *cmd, const char *flag, const char *path, int quiet,
		     char **kept);
/*
 * recout_keep_old(), then rec_create() into *@f; if @path cannot be
 * created, FILE.old is put back (and *@kept is NULL again).
 */
int recout_create(const char *cmd, const char *flag, const char *path, int compress,
		  int quiet, char **kept, FILE **f);
/*
 * Nothing was recorded in @path: remove it if it is a file of its own,
 * put @kept (if any) back.
 */
void recout_discard(const char *cmd, const char *path, const char *kept);

#endif
