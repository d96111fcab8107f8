/* SPDX-License-Identifier: GPL-2.0-only */
/* `record --objects`: the recorder's side of the object tracing. */
#ifndef DAPTRACE_OBJECTS_RECORD_H
#define DAPTRACE_OBJECTS_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct objrec_map {
	uint64_t start, end, offset;
	char *path;			/* path, [heap], [stack], "" */
};

struct objrec_tstack {
	pid_t tid;
	uint64_t start, end;
	int64_t seen_ns;
};

struct objrec {
	uint64_t min;			/* smallest structure, bytes */
	char *side_path;		/* <record>.objects.csv; NULL: off */
	char *log_path;			/* <record>.objlog, the tracer's log */
	int log_fd;
	int traced;			/* the command runs under the tracer */
	const char *no_tracer;		/* why not */
	char *saved_preload;
	char *exe;			/* the target's binary at the last poll */
	struct objrec_map *maps;	/* the last read after exec */
	size_t nr_maps;
	struct objrec_tstack *tstacks;	/* from stack pointers */
	size_t nr_tstacks;
	unsigned long nr_polls;
};

/* Before the command is forked (@launching) or the pids attached. */
int objrec_prepare(struct objrec *r, const char *record, uint64_t min, int launching);
/* After the fork: our environment and fd back to normal. */
void objrec_forked(struct objrec *r);
/* While the target runs: remember its maps and thread stacks. */
void objrec_poll(struct objrec *r, pid_t pid, int64_t t0);
/* After the target is gone: write the side file.  Returns an exit code. */
int objrec_finish(struct objrec *r, pid_t pid, int64_t t0);
void objrec_free(struct objrec *r);

#endif
