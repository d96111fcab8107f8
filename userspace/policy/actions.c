// SPDX-License-Identifier: GPL-2.0-only
/*
 * The actions: the only code that touches a target.  Both syscalls work on
 * another process on 6.1 and 6.12: process_madvise(2) on a pidfd
 * (CAP_SYS_NICE + ptrace read access) and move_pages(2) (CAP_SYS_NICE).
 */
#include <errno.h>
#include <fcntl.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "policy.h"

#ifndef MADV_COLD
#define MADV_COLD	20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open	434
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif

/* Pages per move_pages() call: bounds the arrays, keeps calls short. */
#define MIGRATE_BATCH	1024
/* process_madvise() takes at most MAX_RW_COUNT bytes per call. */
#define MADVISE_CHUNK	(1ULL << 30)

int pol_pidfd_open(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : fd;
}

uint64_t pol_act_madvise(int pidfd, enum pol_action a, uint64_t start, uint64_t len,
			 int *err)
{
	uint64_t done = 0;
	int advice;

	*err = 0;
	switch (a) {
	case POL_PAGEOUT: advice = MADV_PAGEOUT; break;
	case POL_COLD: advice = MADV_COLD; break;
	case POL_WILLNEED: advice = MADV_WILLNEED; break;
	case POL_COLLAPSE: advice = MADV_COLLAPSE; break;
	default: *err = -EINVAL; return 0;
	}
	while (len) {
		struct iovec iov = {
			.iov_base = (void *)(uintptr_t)start,
			.iov_len = len > MADVISE_CHUNK ? MADVISE_CHUNK : len,
		};
		long r = syscall(SYS_process_madvise, pidfd, &iov, 1UL, advice, 0U);

		if (r < 0) {
			*err = -errno;
			break;
		}
		if (r == 0)
			break;
		done += (uint64_t)r;
		start += (uint64_t)r;
		len -= (uint64_t)r;
	}
	return done;
}

uint64_t pol_act_migrate(pid_t pid, int node, uint64_t start, uint64_t len, int *err)
{
	static void *pages[MIGRATE_BATCH], *move[MIGRATE_BATCH];
	static int status[MIGRATE_BATCH], nodes[MIGRATE_BATCH];
	uint64_t psz = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t moved = 0;

	*err = 0;
	start &= ~(psz - 1);
	while (len >= psz) {
		unsigned long n = 0, nm = 0;

		while (n < MIGRATE_BATCH && len >= psz) {
			pages[n++] = (void *)(uintptr_t)start;
			start += psz;
			len -= psz;
		}
		/* where are they now: move only the present pages not there yet */
		if (move_pages(pid, n, pages, NULL, status, 0) < 0) {
			*err = -errno;
			break;
		}
		for (unsigned long i = 0; i < n; i++) {
			if (status[i] >= 0 && status[i] != node) {
				move[nm] = pages[i];
				nodes[nm++] = node;
			}
		}
		if (!nm)
			continue;
		if (move_pages(pid, nm, move, nodes, status, MPOL_MF_MOVE) < 0) {
			*err = -errno;
			break;
		}
		for (unsigned long i = 0; i < nm; i++) {
			if (status[i] == node)
				moved += psz;
			/* a page that could not move (-ENOMEM: node full, -EBUSY) */
			else if (status[i] < 0 && status[i] != -ENOENT && status[i] != -EFAULT &&
				 !*err)
				*err = status[i];
		}
	}
	return moved;
}

enum pol_err pol_err_class(int err)
{
	switch (err < 0 ? -err : err) {
	case EPERM: return POL_EPERM;
	case ENOMEM: return POL_ENOMEM;
	case EAGAIN: return POL_EAGAIN;
	case ESRCH: return POL_ESRCH;
	default: return POL_EOTHER;
	}
}

const char *pol_err_name(enum pol_err e)
{
	static const char *const names[POL_NR_ERRS] = {
		"eperm", "enomem", "eagain", "esrch", "eother",
	};

	return e < POL_NR_ERRS ? names[e] : "?";
}

/* pagemap: bit 63 "present" (mapped in the page table) */
#define PM_PRESENT	(1ULL << 63)
#define PROBE_BATCH	512

static void set_bit64(uint64_t *b, uint64_t i)
{
	b[i / 64] |= 1ULL << (i % 64);
}

static int probe_resident(struct pol_target *t, uint64_t start, uint32_t npages,
			  uint64_t psz, uint64_t *gone, uint64_t *here)
{
	uint64_t ent[PROBE_BATCH];

	if (t->pagemap < 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)t->pid);
		t->pagemap = open(path, O_RDONLY | O_CLOEXEC);
		if (t->pagemap < 0)
			return -errno;
	}
	for (uint32_t i = 0; i < npages;) {
		uint32_t n = npages - i > PROBE_BATCH ? PROBE_BATCH : npages - i;
		ssize_t r = pread(t->pagemap, ent, n * sizeof(ent[0]),
				  (off_t)((start / psz + i) * sizeof(ent[0])));

		if (r < 0)
			return -errno;
		if ((size_t)r != n * sizeof(ent[0]))
			return -EIO;
		for (uint32_t k = 0; k < n; k++)
			set_bit64(ent[k] & PM_PRESENT ? here : gone, i + k);
		i += n;
	}
	return 0;
}

static int probe_node(struct pol_target *t, int node, uint64_t start, uint32_t npages,
		      uint64_t psz, uint64_t *gone, uint64_t *here)
{
	static void *pages[PROBE_BATCH];
	static int status[PROBE_BATCH];

	for (uint32_t i = 0; i < npages;) {
		uint32_t n = npages - i > PROBE_BATCH ? PROBE_BATCH : npages - i;

		for (uint32_t k = 0; k < n; k++)
			pages[k] = (void *)(uintptr_t)(start + (uint64_t)(i + k) * psz);
		if (move_pages(t->pid, n, pages, NULL, status, 0) < 0)
			return -errno;
		for (uint32_t k = 0; k < n; k++) {
			if (status[k] == node)
				set_bit64(gone, i + k);
			else if (status[k] >= 0)
				set_bit64(here, i + k);
		}
		i += n;
	}
	return 0;
}

int pol_probe(struct pol_engine *e, struct pol_target *t, const struct pol_scheme *s,
	      uint64_t start, uint32_t npages, uint64_t *gone, uint64_t *here)
{
	uint64_t psz = (uint64_t)e->page_size;

	switch (pol_regret_how_of(s->action)) {
	case POL_REGRET_RESIDENT:
		return probe_resident(t, start, npages, psz, gone, here);
	case POL_REGRET_NODE:
		return probe_node(t, s->node, start, npages, psz, gone, here);
	default:
		return -EINVAL;
	}
}
