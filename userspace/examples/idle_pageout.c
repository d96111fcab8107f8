// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * idle_pageout: a whole online policy on libdaptrace, as a starting point
 * for your own.  It pages out every region of PID that stayed idle for
 * SECS seconds (process_madvise(MADV_PAGEOUT) on a pidfd), once per idle
 * spell: a range already paged out is not advised again until it has been
 * accessed.  It waits for snapshots with epoll on daptrace_poll_fd().
 *
 *	idle_pageout PID [SECS]		(root; stops when PID exits or on ^C)
 *
 * Built by `make` and so by the tests; `daptrace policy` is the full engine.
 */
#include <err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "daptrace.h"

#define MAX_DONE 4096

static struct { uint64_t start, end; } done[MAX_DONE];	/* paged out, idle since */
static int nr_done;

static int already_done(uint64_t start, uint64_t end)
{
	for (int i = 0; i < nr_done; i++)
		if (done[i].start <= start && end <= done[i].end)
			return 1;
	return 0;
}

/* Accessed again: forget every paged-out range it overlaps. */
static void forget(uint64_t start, uint64_t end)
{
	for (int i = 0; i < nr_done; i++)
		if (done[i].start < end && start < done[i].end)
			done[i--] = done[--nr_done];
}

static void act(int pidfd, const struct daptrace_snapshot *s, uint32_t idle_windows)
{
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct daptrace_region *r = &s->regions[i];
		struct iovec iov = { (void *)(uintptr_t)r->start, r->end - r->start };

		if (r->nr_accesses) {
			forget(r->start, r->end);
			continue;
		}
		if (r->age < idle_windows || already_done(r->start, r->end))
			continue;
		/* a region may span an unmapped hole: ENOMEM, the rest is done */
		if (syscall(SYS_process_madvise, pidfd, &iov, 1, MADV_PAGEOUT, 0) < 0)
			warn("process_madvise %#llx-%#llx", (unsigned long long)r->start,
			     (unsigned long long)r->end);
		if (nr_done < MAX_DONE) {
			done[nr_done].start = r->start;
			done[nr_done++].end = r->end;
		}
	}
}

int main(int argc, char **argv)
{
	struct daptrace_snapshot snap = { 0 };
	struct epoll_event ev = { .events = EPOLLPRI };
	struct daptrace_attrs a;
	struct daptrace *d;
	int pid, pidfd, ep, secs = argc > 2 ? atoi(argv[2]) : 10;

	if (argc < 2 || (pid = atoi(argv[1])) <= 0 || secs <= 0)
		errx(2, "usage: %s PID [SECS]", argv[0]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		err(1, "pidfd_open %d", pid);
	daptrace_attrs_default(&a);
	if (daptrace_open(&d) < 0 || daptrace_set_attrs(d, &a) < 0 ||
	    daptrace_add_target(d, pid) < 0 || daptrace_reader_init(d) < 0 ||
	    daptrace_start(d) < 0)
		errx(1, "%s", daptrace_last_error());
	ep = epoll_create1(0);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, daptrace_poll_fd(d), &ev) < 0)
		err(1, "epoll");
	while (daptrace_is_on(d) == 1) {
		int r;

		if (epoll_wait(ep, &ev, 1, 1000) < 0)
			break;
		while ((r = daptrace_read_next(d, &snap)) > 0) {
			act(pidfd, &snap, (uint32_t)(secs * 1000000ULL / snap.aggr_us));
			if (snap.flags & DAPTRACE_SNAPSHOT_TARGET_EXITED)
				goto out;
		}
		if (r < 0)
			errx(1, "%s", daptrace_last_error());
	}
out:
	daptrace_stop(d);
	daptrace_remove_target(d, pid);
	daptrace_snapshot_free(&snap);
	daptrace_close(d);
	printf("idle_pageout: %d ranges paged out and still idle\n", nr_done);
	return 0;
}
