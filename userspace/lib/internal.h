/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libdaptrace internals: the handle, error reporting, sysfs file access. */
#ifndef DAPTRACE_LIB_INTERNAL_H
#define DAPTRACE_LIB_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "daptrace.h"

struct daptrace {
	char root[PATH_MAX];
	/* snapshot reader */
	int seq_fd;		/* open snapshot_seq, for poll() */
	int ring_fd;		/* open snapshots */
	uint64_t next_seq;	/* the seq the reader wants next */
	uint64_t missed;	/* total snapshots skipped */
	uint64_t pending_missed;	/* skipped, not yet reported in a snapshot */
	uint64_t generation;	/* ring generation of the cached geometry */
	int have_geometry;
	uint32_t hdr_size, slot_size, nr_slots, region_size, max_regions;
	uint32_t snap_hdr_size;
	unsigned char *slot_buf;	/* slot_size bytes */
};

/* error.c: record a message for daptrace_last_error(); returns -err. */
int dt_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* module.c: why the sysfs directory is missing and what to do; never fails. */
void dt_module_why(const char *prefix, const char *release, char *buf,
		   size_t len);

/* sysfs.c: whole-file helpers on <root>/<name>. */
int dt_path(const struct daptrace *d, const char *name, char *buf, size_t len);
int dt_read_str(const struct daptrace *d, const char *name, char *buf, size_t len);
int dt_read_u64(const struct daptrace *d, const char *name, uint64_t *v);
int dt_write_str(const struct daptrace *d, const char *name, const char *val);
int dt_write_u64(const struct daptrace *d, const char *name, uint64_t v);
int dt_parse_u64(const char *s, uint64_t *v);
/* pread exactly @len bytes at @off, looping over short (one-page) reads. */
int dt_pread_full(int fd, void *buf, size_t len, uint64_t off);

#endif
