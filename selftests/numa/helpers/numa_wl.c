// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA placement workload: two SIZE MiB ranges, A bound to node 0 and B to
 * node 1, both read one byte per page in a loop; after MIGRATE_S seconds B
 * is moved to node 0 with move_pages(2); exits after TOTAL_S seconds.
 * The truth goes to TRUTH_FILE: the process's resident bytes per node from
 * /proc/self/numa_maps just before and just after the migration, the
 * CLOCK_MONOTONIC times the migration started and ended, and the time the
 * reading stopped (the process exits right after: a window that ends later
 * averages in time without the memory).
 *
 *   numa_wl SIZE_MIB MIGRATE_S TOTAL_S TRUTH_FILE
 *
 * Raw syscalls, so the static guest build needs no libnuma.
 */
#include <errno.h>
#include <linux/mempolicy.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE	4096UL

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "numa_wl: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Resident bytes per node (0, 1) of this process, from numa_maps. */
static void node_bytes(uint64_t out[2])
{
	char line[4096], *tok, *save;
	FILE *f = fopen("/proc/self/numa_maps", "r");

	if (!f)
		die("open /proc/self/numa_maps");
	out[0] = out[1] = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long pages[2] = { 0, 0 }, kb = 4, v;
		int n;

		for (tok = strtok_r(line, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save)) {
			if (sscanf(tok, "N%d=%lu", &n, &v) == 2 && n >= 0 && n < 2)
				pages[n] = v;
			else if (sscanf(tok, "kernelpagesize_kB=%lu", &v) == 1)
				kb = v;
		}
		out[0] += pages[0] * kb * 1024;
		out[1] += pages[1] * kb * 1024;
	}
	fclose(f);
}

static volatile unsigned long sink;

static void read_pages(const char *p, size_t len)
{
	unsigned long s = 0;

	for (size_t off = 0; off < len; off += PAGE)
		s += ((const volatile char *)p)[off];
	sink += s;
}

int main(int argc, char **argv)
{
	unsigned long mask;
	uint64_t t0, t_mig, t_done, before[2], after[2];
	size_t len, nr, moved = 0;
	double mig_s, total_s;
	int *nodes, *status;
	void **pages;
	char *a, *b;
	FILE *truth;

	if (argc != 5) {
		fprintf(stderr, "usage: numa_wl SIZE_MIB MIGRATE_S TOTAL_S TRUTH_FILE\n");
		return 2;
	}
	len = strtoul(argv[1], NULL, 10) << 20;
	mig_s = atof(argv[2]);
	total_s = atof(argv[3]);
	nr = len / PAGE;
	a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED)
		die("mmap");
	/* 4 KiB pages: THP would make move_pages and the truth coarser */
	madvise(a, len, MADV_NOHUGEPAGE);
	madvise(b, len, MADV_NOHUGEPAGE);
	mask = 1UL << 0;
	if (syscall(SYS_mbind, a, len, MPOL_BIND, &mask, 8 * sizeof(mask), 0))
		die("mbind A to node 0");
	mask = 1UL << 1;
	if (syscall(SYS_mbind, b, len, MPOL_BIND, &mask, 8 * sizeof(mask), 0))
		die("mbind B to node 1");
	memset(a, 1, len);
	memset(b, 2, len);

	pages = malloc(nr * sizeof(*pages));
	nodes = malloc(nr * sizeof(*nodes));
	status = malloc(nr * sizeof(*status));
	if (!pages || !nodes || !status)
		die("malloc");
	for (size_t i = 0; i < nr; i++) {
		pages[i] = b + i * PAGE;
		nodes[i] = 0;
	}
	truth = fopen(argv[4], "w");
	if (!truth)
		die("open truth file");
	t0 = now_ns();
	fprintf(truth, "ready %llu\n", (unsigned long long)t0);
	fflush(truth);

	while (now_ns() - t0 < mig_s * 1e9) {
		read_pages(a, len);
		read_pages(b, len);
	}
	node_bytes(before);
	/* B's policy binds it to node 1: rebind to node 0 first, then move */
	mask = 1UL << 0;
	t_mig = now_ns();
	if (syscall(SYS_mbind, b, len, MPOL_BIND, &mask, 8 * sizeof(mask), 0))
		die("mbind B to node 0");
	if (syscall(SYS_move_pages, 0, nr, pages, nodes, status, MPOL_MF_MOVE) < 0)
		die("move_pages B to node 0");
	t_done = now_ns();
	for (size_t i = 0; i < nr; i++)
		moved += status[i] == 0;
	node_bytes(after);
	fprintf(truth, "before %llu %llu\nmigrate %llu %llu %zu\nafter %llu %llu\n",
		(unsigned long long)before[0], (unsigned long long)before[1],
		(unsigned long long)t_mig, (unsigned long long)t_done, moved,
		(unsigned long long)after[0], (unsigned long long)after[1]);
	fflush(truth);
	while (now_ns() - t0 < total_s * 1e9) {
		read_pages(a, len);
		read_pages(b, len);
	}
	fprintf(truth, "end %llu\n", (unsigned long long)now_ns());
	fclose(truth);
	return 0;
}
