// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs fuzzer: 100 000+ random and structured reads and writes across every
 * file in /sys/kernel/daptrace (listed from the directory, not from a table),
 * with values near the documented bounds, garbage, huge and empty writes,
 * words, and pids of live, dead, zombie and kernel processes -- while one
 * process toggles state on and off, another adds and removes targets
 * (including short-lived ones), and a target keeps touching its memory.
 *
 * It fails on: an errno outside the documented sets, a write the kernel took
 * although it breaks the documented syntax or static range, a read that is
 * not a valid value, snapshot_seq going backwards, a worker thread left over,
 * attributes that read back invalid afterwards, or monitoring not working
 * afterwards (reset, add a target, on, snapshots advance, off).  A kernel
 * warning fails it through the harness's log scan.
 *
 * Knobs (environment): DT_STRESS_SEED (reproduce a run), DT_FUZZ_OPS
 * (fuzzing operations, default 100000; 20000 on the debug kernel), DT_FUZZ_SECS
 * (time cap, default 150 s; 240 s on the debug kernel).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <poll.h>
#include <stdint.h>

#include "kselftest_harness.h"
#include "stress.h"
#include "dt_file.h"

#define NR_FUZZERS	2
#define MAX_FILES	64
#define MAX_ERRNO	150
#define MAX_PIDS	64
#define PF_KTHREAD_FLAG	0x00200000

enum op_kind { OP_WRITE, OP_READ, OP_PREAD, OP_MISC, OP_STATE, OP_TARGET,
	       NR_OPS };
static const char * const op_names[NR_OPS] = {
	"write", "read", "pread(snapshots)", "misc", "toggler", "target churn",
};

/* Counters shared by all fuzzing processes (MAP_SHARED, atomic adds). */
struct shared {
	volatile int stop;
	unsigned long long ops[NR_OPS];
	unsigned long long err[NR_OPS][MAX_ERRNO];	/* [0] = success */
	unsigned long long unexpected;	/* errno outside the documented set */
	unsigned long long accepted_bad;	/* invalid write taken */
	unsigned long long bad_reads;	/* malformed value read */
	unsigned long long seq_backwards;
	unsigned long long ons, offs;	/* successful toggles */
	char first_problem[256];
	/* pids the fuzzers use: filled by the parent and the churner */
	volatile pid_t dead[MAX_PIDS];
	volatile int nr_dead;
};

static struct shared *sh;
static char files[MAX_FILES][64];
static int nr_files;
static pid_t live[8], kthreads[16], zombie;
static int nr_live, nr_kthreads;

static void note_problem(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void note_problem(const char *fmt, ...)
{
	va_list ap;

	if (sh->first_problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(sh->first_problem, sizeof(sh->first_problem), fmt, ap);
	va_end(ap);
}

static void count(enum op_kind op, int err)
{
	__atomic_add_fetch(&sh->ops[op], 1, __ATOMIC_RELAXED);
	if (err < 0 || err >= MAX_ERRNO)
		err = MAX_ERRNO - 1;
	__atomic_add_fetch(&sh->err[op][err], 1, __ATOMIC_RELAXED);
}

/* --- what the documentation allows --------------------------------------- */

static bool is_one_of(int err, const int *set)
{
	for (; *set; set++)
		if (*set == err)
			return true;
	return false;
}

/*
 * Errors a write (open + write) may give, per sysfs-docs (EAGAIN: a target
 * written while the worker ends, its last target gone).
 */
static const int write_errs[] = { EINVAL, ERANGE, EBUSY, ESRCH, EEXIST, ENOSPC,
				  ENOENT, ENOMEM, EACCES, EAGAIN, 0 };
/* Reads: EACCES (opening a write-only file), snapshot's EAGAIN/ENOMEM. */
static const int read_errs[] = { EACCES, EAGAIN, ENOMEM, 0 };
/* pread of snapshots: negative offsets are refused by the VFS. */
static const int pread_errs[] = { EINVAL, 0 };
/* misc: mmap of a file without mmap, lseek beyond, poll, fstat. */
static const int misc_errs[] = { ENODEV, EACCES, EINVAL, ENXIO, 0 };

struct num_rule {
	const char *name;
	unsigned long long lo, hi;	/* static bounds from the docs */
};

static const struct num_rule num_rules[] = {
	{ "sample_us", 100, 10000000ULL },
	{ "aggr_us", 100, 100000000ULL },
	{ "update_us", 100, 3600000000ULL },
	{ "min_nr_regions", 3, 20000 },
	{ "max_nr_regions", 3, 20000 },
	{ "intervals_goal_access_bp", 1, 10000 },
	{ "intervals_goal_aggrs", 0, 1000 },
	{ "intervals_goal_min_sample_us", 100, 10000000ULL },
	{ "intervals_goal_max_sample_us", 100, 10000000ULL },
	{ "recall_goal_bp", 0, 10000 },
	{ "recall_max_cpu_bp", 1, 10000 },
	{ "probe_pages", 0, 256 },
	{ "probe_max_cpu_bp", 1, 10000 },
};

static const struct num_rule *num_rule(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(num_rules) / sizeof(num_rules[0]); i++)
		if (!strcmp(num_rules[i].name, name))
			return &num_rules[i];
	return NULL;
}

static const char * const state_words[] = { "on", "off", NULL };
static const char * const tlb_words[] = { "none", "round", "mm", NULL };
static const char * const verified_words[] = { "verified", "unverified", NULL };

static const char * const *word_set(const char *name)
{
	if (!strcmp(name, "state") || !strcmp(name, "phys_addr") ||
	    !strcmp(name, "tracepoint") || !strcmp(name, "upper_scan"))
		return state_words;
	if (!strcmp(name, "tlb_flush"))
		return tlb_words;
	if (!strcmp(name, "kernel_series_verified"))
		return verified_words;
	return NULL;
}

/* @buf[0..len) minus at most one trailing newline is @s exactly. */
static bool is_word(const char *buf, size_t len, const char *s)
{
	if (len && buf[len - 1] == '\n')
		len--;
	return len == strlen(s) && !memcmp(buf, s, len);
}

/*
 * kstrtoul() syntax: optional '+', decimal digits, optional single
 * newline, nothing else; fits in 64 bits.  *val gets the value.
 */
static bool parse_kstrtoul(const char *buf, size_t len, unsigned long long *val)
{
	unsigned long long v = 0;
	size_t i = 0;

	if (len && buf[len - 1] == '\n')
		len--;
	if (i < len && buf[i] == '+')
		i++;
	if (i == len)
		return false;
	for (; i < len; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return false;
		if (v > (ULLONG_MAX - (buf[i] - '0')) / 10)
			return false;
		v = v * 10 + (buf[i] - '0');
	}
	*val = v;
	return true;
}

/* kstrtoint() syntax for pids: optional sign, digits, one newline. */
static bool parse_kstrtoint(const char *buf, size_t len, long long *val)
{
	unsigned long long v;
	bool neg = false;

	if (len && buf[0] == '-') {
		neg = true;
		buf++;
		len--;
		if (len && buf[0] == '+')
			return false;
	}
	if (!parse_kstrtoul(buf, len, &v))
		return false;
	if (v > (unsigned long long)INT_MAX + neg)
		return false;
	*val = neg ? -(long long)v : (long long)v;
	return true;
}

/* A write of @buf[0..len) to @name succeeded: was that allowed? */
static void check_accepted(const char *name, const char *buf, size_t len)
{
	const char * const *words = word_set(name);
	const struct num_rule *rule = num_rule(name);
	unsigned long long v;
	long long pid;

	/* sysfs hands the store a C string: an embedded NUL ends it. */
	len = strnlen(buf, len);
	if (!len)
		return;		/* an empty write is a no-op */
	if (words) {
		for (; *words; words++)
			if (is_word(buf, len, *words))
				return;
	} else if (rule) {
		if (parse_kstrtoul(buf, len, &v) && v >= rule->lo && v <= rule->hi)
			return;
	} else if (!strcmp(name, "target") || !strcmp(name, "target_remove")) {
		if (parse_kstrtoint(buf, len, &pid) && pid > 0)
			return;
	} else {
		note_problem("write to read-only %s succeeded", name);
		__atomic_add_fetch(&sh->accepted_bad, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_add_fetch(&sh->accepted_bad, 1, __ATOMIC_RELAXED);
	note_problem("%s accepted an invalid value \"%.*s\" (%zu bytes)", name,
		     (int)(len > 40 ? 40 : len), buf, len);
}

/* Is @buf (a complete read of @name) a valid value? */
static bool valid_read(const char *name, const char *buf, size_t len)
{
	const char * const *words = word_set(name);
	unsigned long long v;
	size_t i;

	if (!strcmp(name, "snapshots"))
		return true;	/* binary */
	if (!strcmp(name, "snapshot"))
		return !strcmp(buf, "none\n") || !strncmp(buf, "seq ", 4);
	if (words) {
		for (; *words; words++)
			if (len == strlen(*words) + 1 && is_word(buf, len, *words))
				return true;
		return false;
	}
	if (!strcmp(name, "kernel_series")) {
		/* "MAJOR.MINOR\n", e.g. "6.12\n": digits, one dot, digits */
		const char *dot = memchr(buf, '.', len);

		if (len < 4 || buf[len - 1] != '\n' || !dot || dot == buf ||
		    dot + 1 == buf + len - 1)
			return false;
		for (i = 0; i < len - 1; i++)
			if (buf + i != dot && !isdigit((unsigned char)buf[i]))
				return false;
		return true;
	}
	if (!strcmp(name, "target") || !strcmp(name, "target_status")) {
		/*
		 * lines "pid" or "pid word", and "# N more" past a page;
		 * checked in full afterwards
		 */
		for (i = 0; i < len; i++)
			if (!isalnum((unsigned char)buf[i]) && buf[i] != ' ' &&
			    buf[i] != '\n' && buf[i] != '#')
				return false;
		return !len || buf[len - 1] == '\n';
	}
	/* every other readable file is one decimal number */
	return len >= 2 && buf[len - 1] == '\n' &&
	       parse_kstrtoul(buf, len, &v) && buf[0] != '+';
}

/* --- values -------------------------------------------------------------- */

static const char * const boundary[] = {
	"0", "1", "2", "3", "4", "9", "10", "11", "99", "100", "101", "999",
	"1000", "4999", "5000", "5001", "9999", "10000", "19999", "20000",
	"20001", "65535", "65536", "99999", "100000", "100001", "999999",
	"1000000", "1000001", "9999999", "10000000", "10000001", "99999999",
	"100000000", "100000001", "3599999999", "3600000000", "3600000001",
	"2147483647", "2147483648", "4294967295", "4294967296",
	"9223372036854775807", "9223372036854775808", "18446744073709551615",
	"18446744073709551616", "99999999999999999999999", "-0", "-1", "+0",
	"+1", "+5000", "++1", "+-1", "-2147483648", "-2147483649", "0x10",
	"010", "1e3", "1.5", " 5000", "5000 ", "\t5000", "5000\t",
};

static const char * const words[] = {
	"on", "off", "none", "round", "mm", "ON", "Off", "o", "of", "onn",
	"offf", " on", "on ", "on\n", "off\n", "on\n\n", "round\n", "mm\n\n",
	"\non", "on\r\n", "None", "rounds", "m", "-", "+", "\n", "", "none\0x",
	"on\0", "yes", "1", "true", "start", "stop",
};

static const char * const suffixes[] = { "", "", "", "\n", "\n\n", " ", "x",
					 "\0", "\r" };

static pid_t pid_max(void)
{
	static pid_t max;
	FILE *f;

	if (max)
		return max;
	max = 32768;
	f = fopen("/proc/sys/kernel/pid_max", "r");
	if (f) {
		if (fscanf(f, "%d", &max) != 1)
			max = 32768;
		fclose(f);
	}
	return max;
}

static pid_t some_pid(void)
{
	int n;

	switch (st_rand_below(8)) {
	case 0:
	case 1:
		return live[st_rand_below(nr_live)];
	case 2:
	case 3:
		n = sh->nr_dead;
		return n ? sh->dead[st_rand_below(n < MAX_PIDS ? n : MAX_PIDS)]
			 : 999999;
	case 4:
		return nr_kthreads ? kthreads[st_rand_below(nr_kthreads)] : 2;
	case 5:
		return zombie;
	case 6:
		return getpid();
	default:
		return st_rand_below(pid_max() + 2);
	}
}

/* A valid value for attribute @name, to reach "on" now and then. */
static int valid_value(const char *name, char *buf, size_t size)
{
	const char * const *w = word_set(name);
	unsigned long long v;

	if (w)
		return snprintf(buf, size, "%s", w[st_rand_below(w == tlb_words ? 3 : 2)]);
	if (!strcmp(name, "sample_us"))
		v = 100 + st_rand_below(20000);
	else if (!strcmp(name, "aggr_us"))
		v = 1000 + st_rand_below(200000);
	else if (!strcmp(name, "update_us"))
		v = 10000 + st_rand_below(2000000);
	else if (!strcmp(name, "min_nr_regions"))
		v = 3 + st_rand_below(50);
	else if (!strcmp(name, "max_nr_regions"))
		v = 10 + st_rand_below(2000);
	else if (!strcmp(name, "intervals_goal_access_bp"))
		v = 1 + st_rand_below(10000);
	else if (!strcmp(name, "intervals_goal_aggrs"))
		v = st_rand_below(4);
	else if (!strcmp(name, "intervals_goal_min_sample_us"))
		v = 100 + st_rand_below(10000);
	else if (!strcmp(name, "intervals_goal_max_sample_us"))
		v = 5000 + st_rand_below(100000);
	else if (!strcmp(name, "recall_goal_bp"))
		v = st_rand_below(10001);
	else if (!strcmp(name, "recall_max_cpu_bp"))
		v = 1 + st_rand_below(10000);
	else if (!strcmp(name, "probe_pages"))
		v = st_rand_below(257);
	else if (!strcmp(name, "probe_max_cpu_bp"))
		v = 1 + st_rand_below(10000);
	else
		v = some_pid();
	return snprintf(buf, size, "%llu%s", v, st_rand_below(2) ? "\n" : "");
}

/* A value to write to @name into @buf (not NUL-terminated); its length. */
static size_t make_value(const char *name, char *buf, size_t size)
{
	const char *s;
	size_t len, i;
	int n;

	switch (st_rand_below(16)) {
	case 0: case 1: case 2:
		s = boundary[st_rand_below(sizeof(boundary) / sizeof(boundary[0]))];
		n = snprintf(buf, size, "%s", s);
		s = suffixes[st_rand_below(sizeof(suffixes) / sizeof(suffixes[0]))];
		if (!*s && st_rand_below(9) == 0) {	/* the "\0" suffix */
			buf[n] = '\0';
			return n + 1;
		}
		return n + snprintf(buf + n, size - n, "%s", s);
	case 3:
		return snprintf(buf, size, "%llu", st_rand() >> st_rand_below(64));
	case 4:
		return snprintf(buf, size, "%u", st_rand_below(30000));
	case 5: case 6:
		s = words[st_rand_below(sizeof(words) / sizeof(words[0]))];
		return snprintf(buf, size, "%s", s);
	case 7:	/* garbage */
		len = 1 + st_rand_below(64);
		for (i = 0; i < len; i++)
			buf[i] = st_rand();
		return len;
	case 8: {	/* huge */
		static const size_t sizes[] = { 4095, 4096, 4097, 8192, 65536 };
		char c = "0A\n9 "[st_rand_below(5)];

		len = sizes[st_rand_below(5)];
		if (len > size)
			len = size;
		memset(buf, c, len);
		if (st_rand_below(2))
			buf[len - 1] = '\n';
		return len;
	}
	case 9: case 10: case 11: {	/* pids */
		static const long long odd[] = { 0, -1, INT_MAX, (long long)INT_MAX + 1,
						 -2147483648LL };
		if (st_rand_below(6) == 0)
			return snprintf(buf, size, "%lld",
					odd[st_rand_below(5)]);
		return snprintf(buf, size, "%d%s", (int)some_pid(),
				st_rand_below(3) ? "" : "\n");
	}
	case 12:
		return 0;	/* empty write */
	default:
		return valid_value(name, buf, size);
	}
}

/* --- operations ---------------------------------------------------------- */

static char *bigbuf;
#define BIGBUF	(65536 + 64)

static void op_write(const char *name)
{
	static const int modes[] = { O_WRONLY, O_WRONLY, O_RDWR, O_WRONLY | O_TRUNC,
				     O_WRONLY | O_APPEND };
	char path[256];
	size_t len = make_value(name, bigbuf, BIGBUF);
	ssize_t n;
	int fd, err = 0;

	fd = open(dt_path(name, path, sizeof(path)), modes[st_rand_below(5)]);
	if (fd < 0) {
		err = errno;
	} else {
		if (st_rand_below(8) == 0)
			n = pwrite(fd, bigbuf, len, st_rand_below(8192));
		else
			n = write(fd, bigbuf, len);
		if (n < 0)
			err = errno;
		else if (n > 0)
			/* kernfs hands sysfs at most a page */
			check_accepted(name, bigbuf, len > 4096 ? 4096 : len);
		close(fd);
	}
	count(OP_WRITE, err);
	/* kernfs refuses writes longer than a page before sysfs sees them */
	if (err == E2BIG && len > 4096)
		return;
	if (err && !is_one_of(err, write_errs)) {
		__atomic_add_fetch(&sh->unexpected, 1, __ATOMIC_RELAXED);
		note_problem("write %s (%zu bytes): unexpected %s", name, len,
			     strerror(err));
	}
}

static long long last_seq;

static void op_read(const char *name)
{
	char path[256], buf[8192 + 1];
	size_t chunk = 1 + st_rand_below(st_rand_below(4) ? 8192 : 16);
	size_t total = 0;
	ssize_t n;
	int fd, err = 0;

	fd = open(dt_path(name, path, sizeof(path)),
		  st_rand_below(6) ? O_RDONLY : O_RDWR);
	if (fd < 0) {
		err = errno;
		goto out;
	}
	/* Read it whole, in chunks of @chunk bytes (sysfs keeps the offset). */
	while (total < sizeof(buf) - 1) {
		size_t want = chunk < sizeof(buf) - 1 - total ? chunk
							      : sizeof(buf) - 1 - total;

		n = read(fd, buf + total, want);
		if (n < 0) {
			err = errno;
			break;
		}
		if (!n)
			break;
		total += n;
	}
	close(fd);
	if (err || !strcmp(name, "snapshots"))
		goto out;
	buf[total] = '\0';
	if (!valid_read(name, buf, total)) {
		__atomic_add_fetch(&sh->bad_reads, 1, __ATOMIC_RELAXED);
		note_problem("read %s: \"%.60s\"", name, buf);
	}
	if (!strcmp(name, "snapshot_seq")) {
		long long seq = strtoll(buf, NULL, 10);

		if (seq < last_seq) {
			__atomic_add_fetch(&sh->seq_backwards, 1, __ATOMIC_RELAXED);
			note_problem("snapshot_seq went from %lld to %lld",
				     last_seq, seq);
		}
		last_seq = seq;
	}
out:
	count(OP_READ, err);
	if (err && !is_one_of(err, read_errs)) {
		__atomic_add_fetch(&sh->unexpected, 1, __ATOMIC_RELAXED);
		note_problem("read %s: unexpected %s", name, strerror(err));
	}
}

static void op_pread(void)
{
	static const long long offs[] = { 0, 1, 63, 64, 4095, 4096, 4097,
					  1 << 20, 1LL << 40, LLONG_MAX - 1,
					  LLONG_MAX, -1, -4096 };
	char path[256], buf[8192];
	long long off;
	size_t len;
	ssize_t n;
	int fd, err = 0;

	fd = open(dt_path("snapshots", path, sizeof(path)), O_RDONLY);
	if (fd < 0) {
		count(OP_PREAD, errno);
		return;
	}
	off = st_rand_below(2) ? offs[st_rand_below(13)]
			       : (long long)st_rand_below(4 << 20);
	len = st_rand_below(4) ? 1 + st_rand_below(sizeof(buf)) : 8;
	n = pread(fd, buf, len, off);
	if (n < 0)
		err = errno;
	else if ((size_t)n > len || n > 4096)
		note_problem("pread(snapshots, %zu, %lld) returned %zd", len, off, n);
	close(fd);
	count(OP_PREAD, err);
	if (err && !is_one_of(err, pread_errs)) {
		__atomic_add_fetch(&sh->unexpected, 1, __ATOMIC_RELAXED);
		note_problem("pread snapshots at %lld: unexpected %s", off,
			     strerror(err));
	}
}

static void op_misc(const char *name)
{
	char path[256], buf[64];
	struct pollfd p;
	struct stat st;
	void *m;
	int fd, err = 0;

	fd = open(dt_path(name, path, sizeof(path)), O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		err = errno;
		goto out;
	}
	switch (st_rand_below(4)) {
	case 0:
		m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			err = errno;
		else
			munmap(m, 4096);
		break;
	case 1:
		if (read(fd, buf, sizeof(buf)) < 0 && errno != EAGAIN &&
		    errno != ENOMEM)
			err = errno;
		p = (struct pollfd){ .fd = fd, .events = POLLPRI | POLLERR | POLLIN };
		if (poll(&p, 1, 0) < 0)
			err = errno;
		break;
	case 2:
		if (lseek(fd, st_rand_below(2) ? 0 : 1 << 20,
			  st_rand_below(2) ? SEEK_END : SEEK_SET) < 0)
			err = errno;
		else if (read(fd, buf, sizeof(buf)) < 0 && errno != EAGAIN)
			err = errno;
		break;
	default:
		if (fstat(fd, &st))
			err = errno;
		else if (st.st_mode & 0077)
			note_problem("%s has mode %o", name, st.st_mode & 0777);
		break;
	}
	close(fd);
out:
	count(OP_MISC, err);
	if (err && !is_one_of(err, misc_errs)) {
		__atomic_add_fetch(&sh->unexpected, 1, __ATOMIC_RELAXED);
		note_problem("misc op on %s: unexpected %s", name, strerror(err));
	}
}

static const char * const writable[] = { "sample_us", "aggr_us",
	"update_us", "min_nr_regions", "max_nr_regions", "tlb_flush",
	"phys_addr", "tracepoint", "intervals_goal_access_bp",
	"intervals_goal_aggrs", "intervals_goal_min_sample_us",
	"intervals_goal_max_sample_us", "recall_goal_bp", "recall_max_cpu_bp",
	"probe_pages", "probe_max_cpu_bp", "upper_scan", "state", "target",
	"target_remove" };
#define NR_WRITABLE	(sizeof(writable) / sizeof(writable[0]))

/* Every writable file x every boundary value and word, with suffixes. */
static unsigned long structured_pass(void)
{
	unsigned long nr = 0;
	size_t f, v, s;
	char val[128];
	ssize_t n;

	for (f = 0; f < sizeof(writable) / sizeof(writable[0]); f++) {
		for (v = 0; v < sizeof(boundary) / sizeof(boundary[0]) +
				sizeof(words) / sizeof(words[0]); v++) {
			const char *b = v < sizeof(boundary) / sizeof(boundary[0]) ?
				boundary[v] :
				words[v - sizeof(boundary) / sizeof(boundary[0])];

			for (s = 0; s < 3; s++) {
				int len = snprintf(val, sizeof(val), "%s%s", b,
						   s == 1 ? "\n" : s == 2 ? "\n\n" : "");

				n = dt_write_len(writable[f], val, len);
				count(OP_WRITE, n < 0 ? -n : 0);
				if (n > 0)
					check_accepted(writable[f], val, len);
				else if (n < 0 && !is_one_of(-n, write_errs)) {
					__atomic_add_fetch(&sh->unexpected, 1,
							   __ATOMIC_RELAXED);
					note_problem("write %s \"%s\": unexpected %s",
						     writable[f], b, strerror(-n));
				}
				nr++;
				op_read(strcmp(writable[f], "target_remove") ?
					writable[f] : "target_status");
				nr++;
			}
		}
	}
	return nr;
}

static void fuzzer(unsigned long nr_ops, double deadline, unsigned long long seed)
{
	unsigned long i;
	const char *name;

	st_rand_state = seed;
	bigbuf = malloc(BIGBUF);
	if (!bigbuf)
		_exit(3);
	for (i = 0; i < nr_ops && !sh->stop; i++) {
		if (!(i % 256) && dt_now_ms() > deadline)
			break;
		name = files[st_rand_below(nr_files)];
		switch (st_rand_below(20)) {
		case 0 ... 8:
			/* mostly the writable files: the rest only says EACCES */
			if (st_rand_below(4))
				name = writable[st_rand_below(NR_WRITABLE)];
			op_write(name);
			break;
		case 9 ... 15:
			op_read(name);
			break;
		case 16 ... 17:
			op_pread();
			break;
		default:
			op_misc(name);
			break;
		}
	}
	_exit(0);
}

static void toggler(unsigned long long seed)
{
	int err;

	st_rand_state = seed;
	while (!sh->stop) {
		bool on = st_rand_below(5) < 3;

		err = -dt_write("state", on ? "on" : "off");
		count(OP_STATE, err);
		if (!err)
			__atomic_add_fetch(on ? &sh->ons : &sh->offs, 1,
					   __ATOMIC_RELAXED);
		if (err && !is_one_of(err, (const int[]){ EINVAL, ESRCH, ENOMEM, 0 })) {
			__atomic_add_fetch(&sh->unexpected, 1, __ATOMIC_RELAXED);
			note_problem("state %s: unexpected %s", on ? "on" : "off",
				     strerror(err));
		}
		usleep(st_rand_below(3000));
	}
	dt_write("state", "off");
	_exit(0);
}

/* Adds and removes the toucher, itself, and children that die soon. */
static void churner(pid_t toucher, unsigned long long seed)
{
	pid_t kids[8] = { 0 };
	int err, i;

	st_rand_state = seed;
	while (!sh->stop) {
		i = st_rand_below(8);
		switch (st_rand_below(6)) {
		case 0:
			err = -dt_add_target(toucher);
			break;
		case 1:
			err = -dt_remove_target(toucher);
			break;
		case 2:	/* a child that lives 0..20 ms: its exit races "on" */
			if (kids[i]) {
				dt_reap(kids[i]);
				sh->dead[sh->nr_dead % MAX_PIDS] = kids[i];
				sh->nr_dead++;
			}
			kids[i] = fork();
			if (kids[i] == 0) {
				usleep(st_rand_below(20000));
				_exit(0);
			}
			err = kids[i] < 0 ? errno : -dt_add_target(kids[i]);
			if (kids[i] < 0)
				kids[i] = 0;
			break;
		case 3:
			err = kids[i] ? -dt_remove_target(kids[i]) : 0;
			break;
		case 4:
			err = -dt_add_target(getpid());
			break;
		default:
			err = -dt_remove_target(getpid());
			break;
		}
		count(OP_TARGET, err);
		if (err && !is_one_of(err, write_errs)) {
			__atomic_add_fetch(&sh->unexpected, 1, __ATOMIC_RELAXED);
			note_problem("target churn: unexpected %s", strerror(err));
		}
		usleep(st_rand_below(2000));
	}
	for (i = 0; i < 8; i++)
		dt_reap(kids[i]);
	_exit(0);
}

/* --- setup and checks ---------------------------------------------------- */

static int list_files(void)
{
	struct dirent *de;
	DIR *d = opendir(DT_SYSFS);

	if (!d)
		return -errno;
	nr_files = 0;
	while ((de = readdir(d)) && nr_files < MAX_FILES) {
		if (de->d_name[0] == '.')
			continue;
		dt_strlcpy(files[nr_files++], de->d_name, sizeof(files[0]));
	}
	closedir(d);
	return nr_files;
}

static void find_kthreads(void)
{
	char path[64], buf[512], *p;
	struct dirent *de;
	unsigned long flags;
	int i;
	DIR *d = opendir("/proc");

	nr_kthreads = 0;
	if (!d)
		return;
	while ((de = readdir(d)) && nr_kthreads < 16) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/stat", de->d_name);
		if (dt_read_path(path, buf, sizeof(buf)) < 0)
			continue;
		p = strrchr(buf, ')');
		/* ") S ppid pgrp session tty tpgid flags" */
		for (i = 0; p && i < 7; i++)
			p = strchr(p + 1, ' ');
		if (p && sscanf(p, " %lu", &flags) == 1 && (flags & PF_KTHREAD_FLAG))
			kthreads[nr_kthreads++] = atoi(de->d_name);
	}
	closedir(d);
}

static void print_counts(void)
{
	char line[1024];
	int op, e, len;

	for (op = 0; op < NR_OPS; op++) {
		len = snprintf(line, sizeof(line), "%s: %llu ops, ok %llu",
			       op_names[op], sh->ops[op], sh->err[op][0]);
		for (e = 1; e < MAX_ERRNO; e++)
			if (sh->err[op][e] && len < (int)sizeof(line) - 40)
				len += snprintf(line + len, sizeof(line) - len,
						", %s %llu",
						e == MAX_ERRNO - 1 ? "other" :
						strerrorname_np(e) ?: "?",
						sh->err[op][e]);
		ksft_print_msg("%s\n", line);
	}
}

/* Afterwards every attribute reads back a documented value. */
static void check_final_values(struct __test_metadata *_metadata)
{
	long long s = dt_read_ll("sample_us"), a = dt_read_ll("aggr_us");
	long long u = dt_read_ll("update_us");
	long long mn = dt_read_ll("min_nr_regions"), mx = dt_read_ll("max_nr_regions");
	char buf[8192], status[8192], *line, *save, word[32];
	char *tl, *tsave;
	int nr = 0, pid, spid;
	pid_t seen[DT_MAX_TARGETS + 1];
	int i;

	TH_LOG("final: sample_us %lld aggr_us %lld update_us %lld regions "
	       "[%lld, %lld]", s, a, u, mn, mx);
	EXPECT_TRUE(s >= 100 && s <= 10000000);
	EXPECT_TRUE(a >= s && a <= 100000000 && a / s <= 100000);
	EXPECT_TRUE(u >= a && u <= 3600000000LL);
	EXPECT_TRUE(mn >= 3 && mn <= mx && mx <= 20000);
	ASSERT_LT(0, dt_read("tlb_flush", buf, sizeof(buf)));
	EXPECT_TRUE(!strcmp(buf, "none") || !strcmp(buf, "round") ||
		    !strcmp(buf, "mm")) TH_LOG("tlb_flush \"%s\"", buf);
	ASSERT_LT(0, dt_read("state", buf, sizeof(buf)));
	EXPECT_TRUE(!strcmp(buf, "on") || !strcmp(buf, "off"))
		TH_LOG("state \"%s\"", buf);
	for (i = 0; files[i][0] && i < nr_files; i++) {
		if (!strncmp(files[i], "nr_", 3) || !strcmp(files[i], "worker_cpu_us") ||
		    !strcmp(files[i], "probe_us") || !strcmp(files[i], "snapshot_seq") ||
		    (!strncmp(files[i], "upper_", 6) && strcmp(files[i], "upper_scan")))
			EXPECT_LE(0, dt_read_ll(files[i])) TH_LOG("%s", files[i]);
	}
	/* target and target_status agree line by line, no duplicates */
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	ASSERT_LE(0, dt_read("target_status", status, sizeof(status)));
	tl = strtok_r(status, "\n", &tsave);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		ASSERT_GT(DT_MAX_TARGETS, nr) TH_LOG("more than the limit of targets");
		pid = atoi(line);
		ASSERT_NE(NULL, tl) TH_LOG("target_status shorter than target");
		ASSERT_EQ(2, sscanf(tl, "%d %31s", &spid, word));
		EXPECT_EQ(pid, spid);
		EXPECT_TRUE(!strcmp(word, "idle") || !strcmp(word, "monitoring") ||
			    !strcmp(word, "exited") || !strcmp(word, "joining"))
			TH_LOG("status \"%s\"", word);
		for (i = 0; i < nr; i++)
			EXPECT_NE(seen[i], pid) TH_LOG("pid %d listed twice", pid);
		seen[nr++] = pid;
		tl = strtok_r(NULL, "\n", &tsave);
	}
	EXPECT_EQ(NULL, tl) TH_LOG("target_status longer than target");
}

FIXTURE(fuzz) {
	pid_t toucher, zombie, procs[NR_FUZZERS + 2];
};

FIXTURE_SETUP(fuzz)
{
	memset(self->procs, 0, sizeof(self->procs));
	self->toucher = self->zombie = 0;
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset());
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));
	self->toucher = st_toucher(16, 2000);
	ASSERT_LT(0, self->toucher);
	self->zombie = fork();
	ASSERT_LE(0, self->zombie);
	if (!self->zombie)
		_exit(0);
	zombie = self->zombie;	/* never reaped until teardown */
}

FIXTURE_TEARDOWN(fuzz)
{
	int i;

	if (sh)
		sh->stop = 1;
	for (i = 0; i < NR_FUZZERS + 2; i++)
		dt_reap(self->procs[i]);
	if (dt_loaded())
		dt_reset();
	dt_reap(self->toucher);
	dt_reap(self->zombie);
}

TEST_F_TIMEOUT(fuzz, sysfs_fuzz_with_toggler_and_target_churn, 300)
{
	const char *env_ops = getenv("DT_FUZZ_OPS"), *env_secs = getenv("DT_FUZZ_SECS");
	const char *slow_env = getenv("DAPTRACE_VM_SLOW");
	bool slow = slow_env && !strcmp(slow_env, "1");
	/*
	 * The debug kernel (DAPTRACE_VM_SLOW=1) runs about 140 operations a
	 * second (a target write opens /proc/PID/mem for the ptrace check):
	 * 20000 there, with room for them.
	 */
	unsigned long long min_ops = slow ? 20000 : 100000;
	unsigned long nr_ops = env_ops ? strtoul(env_ops, NULL, 0) : min_ops;
	double secs = env_secs ? strtod(env_secs, NULL) : slow ? 240 : 150;
	unsigned long long seed = st_seed(), total;
	double t0, deadline;
	unsigned long structured;
	struct st_snap *snap;
	pid_t dead;
	int i, status, workers;

	ksft_print_msg("seed %#llx (DT_STRESS_SEED), %lu ops, cap %.0f s\n",
		       seed, nr_ops, secs);
	ASSERT_LT(0, list_files());
	ASSERT_LE(18, nr_files) TH_LOG("only %d files", nr_files);
	find_kthreads();
	live[nr_live++] = self->toucher;
	live[nr_live++] = getpid();
	live[nr_live++] = getppid();
	live[nr_live++] = 1;
	dead = fork();
	ASSERT_LE(0, dead);
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0);
	sh->dead[sh->nr_dead++] = dead;
	TH_LOG("%d files, %d kernel threads, live %d, dead %d, zombie %d",
	       nr_files, nr_kthreads, self->toucher, dead, zombie);

	t0 = dt_now_ms();
	deadline = t0 + secs * 1000;
	/* Structured pass first, alone: its results are deterministic-ish. */
	bigbuf = malloc(BIGBUF);
	ASSERT_NE(NULL, bigbuf);
	structured = structured_pass();
	dt_reset();
	ASSERT_EQ(0, dt_add_target(self->toucher));
	ASSERT_EQ(0, dt_set_attrs(1000, 10000, 100000, 10, 200));

	self->procs[0] = fork();
	if (!self->procs[0])
		toggler(seed ^ 0x1111);
	self->procs[1] = fork();
	if (!self->procs[1])
		churner(self->toucher, seed ^ 0x2222);
	for (i = 0; i < NR_FUZZERS; i++) {
		self->procs[2 + i] = fork();
		if (!self->procs[2 + i])
			fuzzer((nr_ops > structured ? nr_ops - structured : 0) /
			       NR_FUZZERS + 1, deadline, seed + 17 * (i + 1));
	}
	for (i = 0; i < NR_FUZZERS; i++) {
		ASSERT_EQ(self->procs[2 + i], waitpid(self->procs[2 + i], &status, 0));
		self->procs[2 + i] = 0;
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("fuzzer %d died: status %#x", i, status);
	}
	sh->stop = 1;
	for (i = 0; i < 2; i++) {
		status = dt_wait_exit(self->procs[i], 20000);
		EXPECT_NE(-1, status) TH_LOG("toggler/churner %d hangs", i);
		if (status == -1)
			dt_reap(self->procs[i]);
		self->procs[i] = 0;
	}

	total = 0;
	for (i = 0; i < NR_OPS; i++)
		total += sh->ops[i];
	ksft_print_msg("%llu operations in %.1f s (%.0f/s), %llu on and %llu off "
		       "toggles took effect\n", total, (dt_now_ms() - t0) / 1000,
		       total / ((dt_now_ms() - t0) / 1000), sh->ons, sh->offs);
	print_counts();
	if (sh->first_problem[0])
		ksft_print_msg("first problem: %s\n", sh->first_problem);
	EXPECT_LE(min_ops, sh->ops[OP_WRITE] + sh->ops[OP_READ] +
		  sh->ops[OP_PREAD] + sh->ops[OP_MISC])
		TH_LOG("time cap hit before %llu fuzzing operations", min_ops);
	EXPECT_EQ(0, sh->unexpected);
	EXPECT_EQ(0, sh->accepted_bad);
	EXPECT_EQ(0, sh->bad_reads);
	EXPECT_EQ(0, sh->seq_backwards);
	EXPECT_LT(0, sh->ons) TH_LOG("monitoring never went on: no concurrency");

	check_final_values(_metadata);

	/* Monitoring still works. */
	ASSERT_EQ(0, dt_reset());
	workers = st_wait_workers(0, 2000);
	EXPECT_EQ(0, workers) TH_LOG("%d daptrace threads while off", workers);
	ASSERT_EQ(0, dt_add_target(self->toucher));
	ASSERT_EQ(0, dt_set_attrs(2000, 20000, 200000, 10, 100));
	ASSERT_EQ(0, dt_write("state", "on"));
	EXPECT_EQ(1, st_wait_workers(1, 2000));
	ASSERT_LE(0, st_wait_ge("nr_snapshots", 5, 10000))
		TH_LOG("snapshots do not advance after fuzzing");
	snap = malloc(sizeof(*snap));
	ASSERT_NE(NULL, snap);
	ASSERT_EQ(0, st_read_newest(snap));
	EXPECT_EQ(NULL, st_snap_problem(snap, &self->toucher, 1));
	EXPECT_LT(0, snap->nr);
	EXPECT_LT(0, dt_read_ll("nr_samples"));
	free(snap);
	ASSERT_EQ(0, dt_write("state", "off"));
	EXPECT_FALSE(dt_is_on());
	EXPECT_EQ(0, st_wait_workers(0, 2000));
}

TEST_HARNESS_MAIN
