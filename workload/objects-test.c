// SPDX-License-Identifier: GPL-2.0
/*
 * objects-test: a program with data structures of known access patterns,
 * the ground truth for `daptrace report objects`.  Dynamically linked on
 * purpose (the LD_PRELOAD tracer needs it) and built with -g (call sites).
 *
 *   objects-test [-x] [-d SECONDS] [-t TRUTH]
 *   objects-test -a ROUNDS     allocation benchmark for the tracer's overhead:
 *                              ROUNDS x 1000 malloc/free of 16 B..64 KiB
 *                              (1 in 16 >= one page), prints the seconds
 *
 * Structures (each allocated at its own call site, all > one page):
 *   hot_table   global, 256 KiB, touched all the time
 *   cold_table  global, 256 KiB, written once at start
 *   hot heap    4 MiB malloc (alloc_hot), touched all the time
 *   cold heap   4 MiB malloc (alloc_cold), written once at start
 *   late heap   4 MiB calloc (alloc_late), untouched in the first half,
 *               touched all the time in the second
 *   worker      a second thread that keeps touching 128 KiB of its own
 *               stack (Stack#1)
 * TRUTH gets "name,start,end,class" rows, class hot/cold/late.
 * -x (first argument): allocate and touch 64 KiB (alloc_pre_exec), then exec
 * this program again without -x: a program that calls exec.
 */
#include <pthread.h>
#include <sys/prctl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096
#define HEAP_SIZE	(4u << 20)
#define GLOBAL_SIZE	(256u << 10)
#define STACK_USE	(128u << 10)

char hot_table[GLOBAL_SIZE];
char cold_table[GLOBAL_SIZE];
static atomic_int stop;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* one write per page: every page of the range is accessed */
static void touch(volatile char *p, size_t len)
{
	for (size_t i = 0; i < len; i += PAGE)
		p[i]++;
}

__attribute__((noinline)) static char *alloc_hot(void)
{
	char *p = malloc(HEAP_SIZE);

	if (p)
		p[1] = 'h';	/* a body of its own: never folded with the others */
	return p;
}

__attribute__((noinline)) static char *alloc_cold(void)
{
	char *p = malloc(HEAP_SIZE);

	if (p)
		p[1] = 'c';	/* a body of its own: never folded with the others */
	return p;
}

__attribute__((noinline)) static char *alloc_late(void)
{
	char *p = calloc(1, HEAP_SIZE);

	if (p)
		p[1] = 'l';	/* a body of its own: never folded with the others */
	return p;
}

__attribute__((noinline)) static char *alloc_pre_exec(void)
{
	char *p = malloc(64 << 10);

	if (p)
		memset(p, 'x', 64 << 10);
	return p;
}

static void *worker(void *arg)
{
	volatile char buf[STACK_USE];

	(void)arg;
	memset((char *)buf, 1, sizeof(buf));
	while (!atomic_load(&stop)) {
		touch(buf, sizeof(buf));
		usleep(1000);
	}
	return NULL;
}

/* Mostly small blocks, as real programs; every 16th is logged (>= a page). */
static int alloc_bench(long rounds)
{
	static void *slot[256];
	unsigned int x = 12345;
	double t = now_s();

	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < 1000; i++) {
			unsigned int k;
			size_t sz;

			x = x * 1103515245u + 12345u;
			k = (x >> 8) & 255;
			sz = (x >> 16) % 16 == 0 ? 4096 + (x & 0xffff) : 16 + ((x >> 4) & 1023);
			free(slot[k]);
			slot[k] = malloc(sz);
			if (!slot[k])
				return 1;
			((volatile char *)slot[k])[0] = 1;
		}
	}
	for (int k = 0; k < 256; k++)
		free(slot[k]);
	printf("%.6f\n", now_s() - t);
	return 0;
}

int main(int argc, char **argv)
{
	double secs = 4, t0, half;
	const char *truth = NULL;
	char *hot, *cold, *late;
	pthread_t th;
	FILE *f;
	int c;

	if (argc > 1 && !strcmp(argv[1], "-x")) {
		if (!alloc_pre_exec())
			return 1;
		argv[1] = argv[0];
		execv("/proc/self/exe", argv + 1);
		return 1;
	}
	while ((c = getopt(argc, argv, "a:d:t:")) != -1) {
		if (c == 'a')
			return alloc_bench(atol(optarg));
		else if (c == 'd')
			secs = atof(optarg);
		else if (c == 't')
			truth = optarg;
		else
			return 2;
	}
	if (!(secs > 0))
		return 2;
	/*
	 * One accessed bit covers a whole 2 MiB page: neighbouring structures
	 * sharing a transparent huge page are indistinguishable (the hot one
	 * makes the other look half hot).  Base pages keep the truth exact.
	 */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	hot = alloc_hot();
	cold = alloc_cold();
	late = alloc_late();
	if (!hot || !cold || !late)
		return 1;
	memset(hot, 1, HEAP_SIZE);
	memset(cold, 1, HEAP_SIZE);
	memset(cold_table, 1, GLOBAL_SIZE);
	if (truth) {
		f = fopen(truth, "w");
		if (!f)
			return 1;
#define ROW(n, p, sz, cl) fprintf(f, "%s,%lu,%lu,%s\n", n, (unsigned long)(uintptr_t)(p), \
				  (unsigned long)(uintptr_t)(p) + (sz), cl)
		ROW("hot_table", hot_table, GLOBAL_SIZE, "hot");
		ROW("cold_table", cold_table, GLOBAL_SIZE, "cold");
		ROW("alloc_hot", hot, HEAP_SIZE, "hot");
		ROW("alloc_cold", cold, HEAP_SIZE, "cold");
		ROW("alloc_late", late, HEAP_SIZE, "late");
#undef ROW
		fclose(f);
	}
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	t0 = now_s();
	half = t0 + secs / 2;
	while (now_s() < t0 + secs) {
		touch(hot, HEAP_SIZE);
		touch(hot_table, GLOBAL_SIZE);
		if (now_s() >= half)
			touch(late, HEAP_SIZE);
		usleep(1000);
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	free(hot);
	free(late);
	free(cold);
	return 0;
}
