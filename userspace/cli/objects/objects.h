/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Data structures of a recorded target (`record --objects`): globals from
 * the ELF symbol tables, large heap/mmap allocations from the LD_PRELOAD
 * tracer's log, and thread stacks.  Stored next to the record as
 * <record>.objects.csv (see docs/objects.md for the format).
 */
#ifndef DAPTRACE_OBJECTS_H
#define DAPTRACE_OBJECTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define OBJ_MAGIC	"# daptrace-objects v1"
#define OBJ_COLUMNS	"kind,name,start,end,size,alloc_ns,free_ns,tid,callsite,function,source,module"
#define OBJ_LIB_NAME	"libdaptrace-objtrace.so"

enum obj_kind { OBJ_GLOBAL, OBJ_HEAP, OBJ_MMAP, OBJ_STACK, OBJ_NR_KINDS };

struct obj {
	enum obj_kind kind;
	char *name;
	uint64_t start, end;		/* [start, end) */
	int64_t alloc_ns;		/* since the record started */
	int64_t free_ns;		/* -1: alive at the end */
	pid_t tid;			/* allocating thread, stack owner; 0: none */
	uint64_t site;			/* call site (return address), 0: none */
	char *function;			/* of the call site */
	char *source;			/* file:line of the call site */
	char *module;			/* ELF file of a global */
	int image;			/* which exec'ed image (0, 1, ...) */
};

/* A loaded ELF object: addresses in the file + bias = addresses in memory. */
struct obj_module {
	uint64_t start, end, bias;
	char *path;
	int image;			/* modules of old images name old call sites */
};

struct obj_set {
	struct obj *v;
	size_t n, cap;
	struct obj_module *mods;
	size_t nr_mods;
	int image;			/* current image: stamps new objects and modules */
	/* "#meta" rows of the side file: notes for the report */
	char **meta_keys, **meta_vals;
	size_t nr_meta;
};

/* "<n>[K|M|G]" bytes; -EINVAL/-ERANGE. */
int obj_parse_size(const char *s, uint64_t *v);
const char *obj_kind_name(enum obj_kind k);
int obj_kind_parse(const char *s, enum obj_kind *k);
struct obj *obj_add(struct obj_set *s);
int obj_add_module(struct obj_set *s, uint64_t start, uint64_t end, uint64_t bias,
		   const char *path);
int obj_meta_set(struct obj_set *s, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *obj_meta_get(const struct obj_set *s, const char *key);
void obj_set_free(struct obj_set *s);

/* objects_elf.c: STT_OBJECT symbols of @path of size >= @min, relocated by
 * @bias, appended as globals.  Returns the number added or -errno; *is_static
 * (if given) is set when the file has no PT_INTERP. */
int obj_elf_globals(struct obj_set *s, const char *path, uint64_t bias, uint64_t min);
int obj_elf_is_static(const char *path);
/* 1 if @path has a .symtab (not stripped), 0 if not, -errno. */
int obj_elf_has_symtab(const char *path);
/* Load bias of @path mapped with file offset 0 at @map_start. */
int obj_elf_bias(const char *path, uint64_t map_start, uint64_t *bias);

/* objects_log.c: the tracer's log. */
struct obj_log_stats {
	uint64_t lines, bad_lines, other_pid, unmatched_frees, partial_unmaps;
	uint64_t images, clean_exits, lost_writes, still_alive;
	int truncated;			/* last line cut short */
	int no_exit;			/* the last image never logged its exit */
	int log_closed;			/* it closed the log's fd: logging stopped */
	int seen;			/* any line from the target */
	char *exe;
};
/* Parse the log of @pid; times become relative to @t0_ns.  Loaded modules go
 * to s->mods; after it s->image is the last image.  Returns 0 or -errno. */
int obj_log_parse(FILE *f, pid_t pid, int64_t t0_ns, struct obj_set *s,
		  struct obj_log_stats *st);
void obj_log_stats_free(struct obj_log_stats *st);

/* objects_sym.c: name heap/mmap objects after their call sites (libdw). */
int obj_symbolise(struct obj_set *s);

/* objects_file.c: the side file. */
char *obj_side_path(const char *record);
int obj_write(FILE *f, const struct obj_set *s);
int obj_read_path(const char *path, struct obj_set *s, char *err, size_t errlen);

/* objects_attr.c: attribution of region accesses to objects. */
struct obj_region {
	uint64_t start, end;
	double freq;			/* percent of the window's samples */
};
/*
 * Byte-weighted mean access frequency of [start, end) over @r (sorted by
 * start, not overlapping); returns the bytes of the object the regions
 * cover (0: not observed in this window, *freq untouched).
 */
uint64_t obj_window_freq(uint64_t start, uint64_t end, const struct obj_region *r,
			 size_t n, double *freq);
/* Is an object living [alloc, free) (free < 0: forever) alive in [ws, we)? */
int obj_alive_in(int64_t alloc, int64_t free_ns, int64_t ws, int64_t we);

#endif
