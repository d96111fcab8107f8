// SPDX-License-Identifier: GPL-2.0
/*
 * daptrace-workload: a memory access workload with exact ground truth.
 *
 * It maps one region, populates it, then touches parts of it in a known
 * pattern and writes, as it goes, which ranges were hot (touched continuously,
 * every page many times per sampling interval), warm (every page touched once
 * per --warm-period) and cold (everything else in the mapping: not touched
 * after population).  Times are CLOCK_MONOTONIC ns, the clock of daptrace's
 * snapshots, so a scorer can line the two up window by window.
 *
 * Truth file format (one record per line, flushed per line):
 *	# daptrace-workload truth v1
 *	pid <pid>
 *	pattern <name>
 *	map <start> <end>			the monitored mapping
 *	warm_period_ns <ns>			each warm page's touch period
 *						(with a warm set only)
 *	phase <index> <start_ns>		a new phase begins
 *	hot <index> <start> <end>		hot range of that phase
 *	warm <index> <start> <end>		warm range of that phase
 *	sweeps <ns> <count>			full sweeps of the current
 *						phase's hot set done by <ns>
 *						(at most one line per 10 ms)
 *	end <ns> touched <pages>		the workload stopped; pages it
 *						touched after population (its
 *						throughput, for slowdown)
 * Addresses are hex, ranges half-open.  All ranges are 2 MiB aligned (THP
 * sized) except the "scattered" pattern's single pages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "wl_args.h"

#define PAGE_SZ		4096UL
#define HUGE_SZ		(2UL << 20)
#define MAX_RANGES	256

struct range {
	uintptr_t start, end;
};

struct phase {
	struct range hot[MAX_RANGES];
	unsigned int nr_hot;
	struct range warm[MAX_RANGES];
	unsigned int nr_warm;
};

struct opts {
	const char *pattern;
	size_t size;
	size_t hot_size;
	size_t warm_size;
	uint64_t phase_ns;
	uint64_t duration_ns;
	uint64_t warm_period_ns;
	unsigned int objects;
	size_t gap;
	size_t populate;
	unsigned int seed;
	const char *thp;
	const char *truth;
};

static volatile sig_atomic_t stop;
static FILE *truth;
/* sparse: where the hot set is (main() draws it). */
static uintptr_t sparse_hot;

/* sparse: a 2 MiB-aligned place for @len bytes in [@base, @base + @size). */
static uintptr_t sparse_place(uintptr_t base, size_t size, size_t len)
{
	uint64_t slots = (size - len) / HUGE_SZ + 1;
	uint64_t r = ((uint64_t)random() << 31) ^ (uint64_t)random();

	return base + (r % slots) * HUGE_SZ;
}

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: daptrace-workload [options]\n"
"  -p, --pattern NAME    hotcold | moving | smallhot | scattered | phases | blocks |\n"
"                        sparse (default hotcold; blocks: every other 2 MiB block\n"
"                        hot; sparse: --populate of the mapping populated in 8 MiB\n"
"                        pieces and the hot set, each at a random 2 MiB-aligned\n"
"                        place, the rest never touched)\n"
"  -s, --size SIZE       mapping size, e.g. 256M, 1G (default 256M)\n"
"      --hot-size SIZE   hot set size (default: size/8; smallhot: 8M)\n"
"      --warm-size SIZE  warm set size (hotcold: size/8, else 0)\n"
"      --warm-period DUR each warm page is touched once per DUR (default 50ms)\n"
"      --phase DUR       phase length for moving/phases (default 2s)\n"
"  -d, --duration DUR    run time, 0 = until SIGTERM/SIGINT (default 10s)\n"
"      --objects N       scattered: hot pages, each in its own 2 MiB area (default 32)\n"
"      --gap SIZE        leave SIZE unmapped after the mapping, a mapped page beyond it,\n"
"                        so the monitored span holds a hole (a sparse target; default 0)\n"
"      --populate SIZE   sparse: bytes populated once, cold after (default 256M)\n"
"      --seed N          sparse: where the pieces and the hot set go (default: pid)\n"
"      --thp MODE        never | always | default (madvise; default: default)\n"
"  -t, --truth FILE      write the ground truth here (default: stdout)\n"
"DUR needs a unit: ns, us, ms, s or m (\"500ms\", \"10s\"), as in daptrace record.\n");
}

static void add_range(struct range *r, unsigned int *nr, uintptr_t start, uintptr_t end)
{
	if (*nr < MAX_RANGES && end > start) {
		r[*nr].start = start;
		r[*nr].end = end;
		(*nr)++;
	}
}

/* Phase @idx of the pattern over the mapping [base, base + o->size). */
static void build_phase(const struct opts *o, uintptr_t base, unsigned int idx,
			struct phase *ph)
{
	size_t sz = o->size, hot = o->hot_size, warm = o->warm_size;
	uintptr_t at;
	unsigned int i;

	memset(ph, 0, sizeof(*ph));
	if (!strcmp(o->pattern, "hotcold")) {
		add_range(ph->hot, &ph->nr_hot, base, base + hot);
		add_range(ph->warm, &ph->nr_warm, base + hot, base + hot + warm);
	} else if (!strcmp(o->pattern, "moving")) {
		/* The hot window walks through the mapping, one step per phase. */
		unsigned int steps = sz / hot;

		at = base + (size_t)(idx % steps) * hot;
		add_range(ph->hot, &ph->nr_hot, at, at + hot);
	} else if (!strcmp(o->pattern, "smallhot")) {
		at = base + (sz / 2 - hot / 2) / HUGE_SZ * HUGE_SZ;
		add_range(ph->hot, &ph->nr_hot, at, at + hot);
	} else if (!strcmp(o->pattern, "sparse")) {
		add_range(ph->hot, &ph->nr_hot, sparse_hot, sparse_hot + hot);
	} else if (!strcmp(o->pattern, "phases")) {
		/* Two disjoint hot sets alternate: tests detection latency. */
		at = idx % 2 ? base + sz - hot : base;
		add_range(ph->hot, &ph->nr_hot, at, at + hot);
	} else if (!strcmp(o->pattern, "blocks")) {
		/*
		 * Hot and cold 2 MiB blocks alternate: half the memory is hot
		 * but any region wider than a block mixes both, so a check
		 * finds its page hot only half the time (the accuracy
		 * estimate's low-recall case, with coarse regions and one
		 * check per window).
		 */
		for (at = base; at + HUGE_SZ <= base + sz; at += 2 * HUGE_SZ)
			add_range(ph->hot, &ph->nr_hot, at, at + HUGE_SZ);
	} else if (!strcmp(o->pattern, "scattered")) {
		size_t stride = sz / o->objects;

		for (i = 0; i < o->objects; i++) {
			at = base + i * stride + stride / 2;
			at &= ~(PAGE_SZ - 1);
			add_range(ph->hot, &ph->nr_hot, at, at + PAGE_SZ);
		}
	}
}

static void write_phase(unsigned int idx, const struct phase *ph, uint64_t t)
{
	unsigned int i;

	fprintf(truth, "phase %u %" PRIu64 "\n", idx, t);
	for (i = 0; i < ph->nr_hot; i++)
		fprintf(truth, "hot %u %#" PRIxPTR " %#" PRIxPTR "\n", idx,
			ph->hot[i].start, ph->hot[i].end);
	for (i = 0; i < ph->nr_warm; i++)
		fprintf(truth, "warm %u %#" PRIxPTR " %#" PRIxPTR "\n", idx,
			ph->warm[i].start, ph->warm[i].end);
	fflush(truth);
}

/* Pages per chunk of a sweep: how often the clock is checked. */
#define CHUNK_PAGES	256

/*
 * The position of a sweep through a set of ranges, so a long hot sweep can be
 * interrupted every CHUNK_PAGES for the warm touches that are due: the
 * truth's warm period then holds however slow one sweep is (e.g. under TCG).
 */
struct cursor {
	unsigned int range;
	uintptr_t addr;
};

/* Touch up to @budget pages from @c on; returns the pages touched. */
static uint64_t touch(const struct range *r, unsigned int nr, struct cursor *c,
		      uint64_t budget)
{
	uint64_t pages = 0;

	while (nr && pages < budget) {
		if (c->range >= nr)
			c->range = 0;
		if (c->addr < r[c->range].start || c->addr >= r[c->range].end)
			c->addr = r[c->range].start;
		/* One touch per page; the volatile store cannot be elided. */
		(*(volatile char *)c->addr)++;
		pages++;
		c->addr += PAGE_SZ;
		if (c->addr >= r[c->range].end)
			c->range++;
	}
	return pages;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int hot_set = 0, warm_set = 0, seed_set = 0, first;
	const struct wl_arg args[] = {
		WL_OPT("pattern", 'p', wl_str, &o->pattern),
		WL_OPT("size", 's', wl_size, &o->size),
		WL_OPT("hot-size", 0, wl_size, &o->hot_size, .given = &hot_set),
		WL_OPT("warm-size", 0, wl_size, &o->warm_size, .given = &warm_set),
		WL_OPT("warm-period", 0, wl_dur, &o->warm_period_ns, .flags = WL_NONZERO),
		WL_OPT("phase", 0, wl_dur, &o->phase_ns, .flags = WL_NONZERO),
		WL_OPT("duration", 'd', wl_dur, &o->duration_ns, .flags = WL_BARE_ZERO),
		WL_OPT("objects", 0, wl_uint, &o->objects, .max = MAX_RANGES, .flags = WL_NONZERO),
		WL_OPT("gap", 0, wl_size, &o->gap),
		WL_OPT("populate", 0, wl_size, &o->populate),
		WL_OPT("seed", 0, wl_uint, &o->seed, .given = &seed_set),
		WL_OPT("thp", 0, wl_str, &o->thp),
		WL_OPT("truth", 't', wl_str, &o->truth),
		{ }
	};

	*o = (struct opts){ .pattern = "hotcold", .size = 256UL << 20,
			    .phase_ns = 2000000000ULL,
			    .duration_ns = 10000000000ULL,
			    .warm_period_ns = 50000000ULL, .objects = 32,
			    .populate = 256UL << 20, .thp = "default" };
	first = wl_parse_args("daptrace-workload", argc, argv, args, usage);
	if (first < 0)
		return -1;
	if (first != argc) {
		fprintf(stderr, "daptrace-workload: unexpected argument '%s'\n", argv[first]);
		return -1;
	}
	if (strcmp(o->pattern, "hotcold") && strcmp(o->pattern, "moving") &&
	    strcmp(o->pattern, "smallhot") && strcmp(o->pattern, "scattered") &&
	    strcmp(o->pattern, "phases") && strcmp(o->pattern, "blocks") &&
	    strcmp(o->pattern, "sparse")) {
		fprintf(stderr, "daptrace-workload: --pattern: unknown pattern '%s'\n", o->pattern);
		return -1;
	}
	if (strcmp(o->thp, "never") && strcmp(o->thp, "always") && strcmp(o->thp, "default")) {
		fprintf(stderr, "daptrace-workload: --thp: expected never, always or default\n");
		return -1;
	}
	if (!hot_set)
		o->hot_size = !strcmp(o->pattern, "smallhot") ||
			      !strcmp(o->pattern, "sparse") ? 8UL << 20 : o->size / 8;
	if (!seed_set)
		o->seed = getpid();
	if (!strcmp(o->pattern, "sparse") && o->populate + o->hot_size > o->size) {
		fprintf(stderr, "daptrace-workload: --populate and the hot set exceed --size\n");
		return -1;
	}
	if (!warm_set)
		o->warm_size = !strcmp(o->pattern, "hotcold") ? o->size / 8 : 0;
	o->size = (o->size + HUGE_SZ - 1) / HUGE_SZ * HUGE_SZ;
	o->hot_size = (o->hot_size + HUGE_SZ - 1) / HUGE_SZ * HUGE_SZ;
	o->warm_size = (o->warm_size + HUGE_SZ - 1) / HUGE_SZ * HUGE_SZ;
	if (!o->size || o->hot_size + o->warm_size > o->size ||
	    (!strcmp(o->pattern, "phases") && 2 * o->hot_size > o->size) ||
	    (!strcmp(o->pattern, "scattered") && o->size / o->objects < HUGE_SZ)) {
		fprintf(stderr, "daptrace-workload: --size too small for the hot/warm sets\n");
		return -1;
	}
	if (!strcmp(o->pattern, "blocks") && o->size > 2 * HUGE_SZ * MAX_RANGES) {
		fprintf(stderr, "daptrace-workload: --size: blocks has at most %d hot blocks\n",
			MAX_RANGES);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	static struct phase ph;
	uint64_t t0, t, next_phase, deadline, touched = 0;
	uint64_t warm_start, warm_due, warm_done = 0, warm_pages;
	uint64_t hot_pages, hot_done = 0, sweeps_said = 0, sweeps_at = 0, n_hot;
	struct cursor hot = { 0, 0 }, warm = { 0, 0 };
	unsigned int idx = 0;
	struct opts o;
	uintptr_t base;
	void *raw;

	if (parse_opts(argc, argv, &o))
		return 2;
	truth = o.truth ? fopen(o.truth, "w") : stdout;
	if (!truth) {
		fprintf(stderr, "daptrace-workload: --truth %s: %s\n", o.truth, strerror(errno));
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	/*
	 * Over-map by one huge page so the mapping can be 2 MiB aligned, and
	 * by the gap and a page after it: the gap is unmapped again, and the
	 * page beyond keeps it inside the span a monitor's regions cover.
	 */
	o.gap = (o.gap + PAGE_SZ - 1) & ~(PAGE_SZ - 1);
	raw = mmap(NULL, o.size + HUGE_SZ + (o.gap ? o.gap + PAGE_SZ : 0),
		   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED) {
		fprintf(stderr, "daptrace-workload: mmap %zu bytes: %s\n", o.size, strerror(errno));
		return 1;
	}
	base = ((uintptr_t)raw + HUGE_SZ - 1) & ~(HUGE_SZ - 1);
	if (o.gap) {
		if (munmap((void *)(base + o.size), o.gap)) {
			fprintf(stderr, "daptrace-workload: munmap the gap: %s\n", strerror(errno));
			return 1;
		}
		*(volatile char *)(base + o.size + o.gap) = 1;
	}
	/* scattered: single hot pages, unless huge pages are asked for. */
	if (!strcmp(o.thp, "never") ||
	    (!strcmp(o.pattern, "scattered") && strcmp(o.thp, "always")))
		madvise((void *)base, o.size, MADV_NOHUGEPAGE);
	else if (!strcmp(o.thp, "always"))
		madvise((void *)base, o.size, MADV_HUGEPAGE);
	/*
	 * Populate everything once so cold memory is mapped, not absent; but
	 * sparse: only its pieces and the hot set, the rest of the span is
	 * never touched (and, MAP_NORESERVE, costs nothing).
	 */
	if (!strcmp(o.pattern, "sparse")) {
		const size_t piece = 8UL << 20;
		size_t done;

		srandom(o.seed);
		for (done = 0; done < o.populate; done += piece) {
			size_t len = o.populate - done < piece ? o.populate - done : piece;

			memset((void *)sparse_place(base, o.size, len), 1, len);
		}
		sparse_hot = sparse_place(base, o.size, o.hot_size);
		memset((void *)sparse_hot, 1, o.hot_size);
	} else {
		memset((void *)base, 1, o.size);
	}

	fprintf(truth, "# daptrace-workload truth v1\npid %d\npattern %s\n",
		getpid(), o.pattern);
	fprintf(truth, "map %#" PRIxPTR " %#" PRIxPTR "\n", base, base + o.size);
	if (o.warm_size)
		fprintf(truth, "warm_period_ns %" PRIu64 "\n", o.warm_period_ns);

	warm_pages = o.warm_size / PAGE_SZ;
	t0 = wl_now_ns();
	deadline = o.duration_ns ? t0 + o.duration_ns : UINT64_MAX;
	build_phase(&o, base, idx, &ph);
	write_phase(idx, &ph, t0);
	hot_pages = 0;
	for (unsigned int i = 0; i < ph.nr_hot; i++)
		hot_pages += (ph.hot[i].end - ph.hot[i].start) / PAGE_SZ;
	next_phase = t0 + o.phase_ns;
	warm_start = t0;
	while (!stop) {
		n_hot = touch(ph.hot, ph.nr_hot, &hot, CHUNK_PAGES);
		touched += n_hot;
		hot_done += n_hot;
		t = wl_now_ns();
		if (t >= deadline)
			break;
		/*
		 * The hot set's progress, so that a scorer can tell a window
		 * in which every hot page was touched (two sweeps done within
		 * it) from one in which the workload was not scheduled.
		 */
		if (hot_pages && hot_done / hot_pages != sweeps_said &&
		    t >= sweeps_at + 10000000ULL) {
			sweeps_said = hot_done / hot_pages;
			sweeps_at = t;
			fprintf(truth, "sweeps %" PRIu64 " %" PRIu64 "\n", t, sweeps_said);
			fflush(truth);
		}
		/*
		 * Warm pages at a steady rate, each once per period, spread
		 * over the period: a burst per period would keep a slow (or
		 * emulated) machine sweeping warm pages back to back, and warm
		 * would read as hot.  A backlog of more than one period is
		 * dropped rather than caught up, for the same reason.
		 */
		warm_due = (uint64_t)((double)(t - warm_start) * warm_pages /
				      o.warm_period_ns);
		if (warm_due > warm_done + warm_pages)
			warm_done = warm_due - warm_pages;
		if (warm_due > warm_done) {
			uint64_t n = warm_due - warm_done;

			n = touch(ph.warm, ph.nr_warm, &warm,
				  n < CHUNK_PAGES ? n : CHUNK_PAGES);
			warm_done += n;
			touched += n;
		}
		if (t >= next_phase && (!strcmp(o.pattern, "moving") ||
					!strcmp(o.pattern, "phases"))) {
			build_phase(&o, base, ++idx, &ph);
			hot = (struct cursor){ 0, 0 };
			write_phase(idx, &ph, t);
			/* the sweeps count anew with each phase's hot set */
			hot_done = 0;
			sweeps_said = 0;
			next_phase += o.phase_ns;
		}
	}
	fprintf(truth, "end %" PRIu64 " touched %" PRIu64 "\n", wl_now_ns(), touched);
	fclose(truth);
	return 0;
}
