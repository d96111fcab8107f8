// SPDX-License-Identifier: GPL-2.0-only
/*
 * libdaptrace-objtrace.so: an LD_PRELOAD library that logs the target's
 * large allocations and thread stacks for `daptrace record --objects`.
 *
 * Environment (set by the recorder):
 *   DAPTRACE_OBJTRACE_FD    file descriptor to append the log to
 *   DAPTRACE_OBJTRACE_FILE  "dev:ino" of the log; the fd must be that file
 *                           when the tracer is loaded, or nothing is written
 *   DAPTRACE_OBJTRACE_MIN   smallest size logged, in bytes (default 4096)
 *
 * One text line per event, each written with a single write(2) so lines of
 * concurrent threads never interleave (O_APPEND file, lines < PIPE_BUF):
 *   H,pid,ns,exe                     image start (again after each exec)
 *   L,pid,ns,start,end,bias,path     a loaded object's PT_LOAD span
 *   A,pid,tid,ns,addr,size,site,kind allocation (kind: malloc calloc
 *                                    realloc memalign mmap)
 *   F,pid,tid,ns,addr                free of a block that may be logged
 *   U,pid,tid,ns,addr,len            munmap
 *   S,pid,tid,ns,lo,hi               a thread's stack, at thread start
 *   T,pid,tid,ns                     that thread ended
 *   Q,pid,ns,lines,lost              clean exit; lost = failed writes
 *   C,pid,ns,lines,lost              the program is closing or replacing the
 *                                    log's fd: nothing is logged after it
 * Numbers are hex without 0x except pid/tid/ns (decimal); ns is
 * CLOCK_MONOTONIC, the record's clock.  A log without Q for an image that
 * did not exec is partial (killed, crashed, or cut short).
 *
 * Rules that keep this safe inside malloc: no stdio, no locale, no
 * allocation while logging; a per-thread flag stops recursion (dlsym and
 * pthread_getattr_np may allocate); dlsym's own calloc during bootstrap is
 * served from a static buffer that free() recognises.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *,
				  void *(*)(void *), void *);
static int (*real_close)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
#ifdef CLOSE_RANGE_CLOEXEC
static int (*real_close_range)(unsigned int, unsigned int, int);
static void (*real_closefrom)(int);
#endif
/* glibc 2.34's _Fork(): a fork that runs no pthread_atfork handler */
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
#define HAVE__FORK 1
static pid_t (*real__Fork)(void);
#endif

/*
 * -1 for good once the program closes or replaces it (see stop_log);
 * emit() counts itself in nr_writing while it uses the number.
 */
static atomic_int log_fd = -1;
static int log_num = -1;	/* log_fd's number, also once stopped */
static atomic_int nr_writing;
static __thread int writing;
/*
 * Set in a process that is not log_owner (a vfork child, which shares this
 * thread's memory, or a raw clone's child) when it closes the log's number:
 * this thread writes nothing while getpid() is not log_owner.
 */
static __thread int foreign_close;
/* 1 while the first closer of the log's number writes the C line, 2 once it did */
static atomic_int log_stopping;
static pid_t log_owner;		/* the process this log_fd is the log of */
static uint64_t log_dev, log_ino;
static size_t min_size = 4096;
static atomic_ulong nr_lines, nr_lost;
static __thread int in_hook;
static int resolving;

/* dlsym's allocations before real_calloc is known */
static char boot_buf[8192] __attribute__((aligned(64)));
static size_t boot_used;

static int is_boot(const void *p)
{
	return (const char *)p >= boot_buf && (const char *)p < boot_buf + sizeof(boot_buf);
}

static void *boot_alloc(size_t n)
{
	void *p;

	n = (n + 63) & ~(size_t)63;
	if (boot_used + n > sizeof(boot_buf))
		return NULL;
	p = boot_buf + boot_used;
	boot_used += n;
	return p;
}

static void resolve(void)
{
	if (real_malloc || resolving)
		return;
	resolving = 1;
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_free = dlsym(RTLD_NEXT, "free");
	real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = dlsym(RTLD_NEXT, "memalign");
	real_mmap = dlsym(RTLD_NEXT, "mmap");
	real_munmap = dlsym(RTLD_NEXT, "munmap");
	real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
	real_close = dlsym(RTLD_NEXT, "close");
	real_dup2 = dlsym(RTLD_NEXT, "dup2");
	real_dup3 = dlsym(RTLD_NEXT, "dup3");
#ifdef CLOSE_RANGE_CLOEXEC
	real_close_range = dlsym(RTLD_NEXT, "close_range");
	real_closefrom = dlsym(RTLD_NEXT, "closefrom");
#endif
#ifdef HAVE__FORK
	real__Fork = dlsym(RTLD_NEXT, "_Fork");
#endif
	resolving = 0;
}

/* --- a tiny line builder: no stdio, no allocation --- */
struct line {
	char b[512];
	size_t n;
};

static void put_str(struct line *l, const char *s)
{
	while (*s && l->n < sizeof(l->b) - 2) {
		char c = *s++;

		/* the path is the last field: only newlines would break a line */
		l->b[l->n++] = c == '\n' ? '?' : c;
	}
}

static void put_num(struct line *l, uint64_t v, unsigned int base)
{
	char tmp[24];
	int i = 0;

	do {
		tmp[i++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (i && l->n < sizeof(l->b) - 2)
		l->b[l->n++] = tmp[--i];
}

static void put_sep(struct line *l)
{
	if (l->n < sizeof(l->b) - 2)
		l->b[l->n++] = ',';
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * getpid() and gettid() are system calls (glibc caches neither): cache both,
 * the pid until a fork, the tid per thread (a fork's child keeps the
 * forking thread's tid in its copy of the TLS, so it is reset too).
 */
static pid_t cached_pid;
static __thread pid_t cached_tid;

static void after_fork(void)
{
	cached_pid = 0;
	cached_tid = 0;
	log_owner = getpid();
	foreign_close = 0;
	/* the threads that were writing are not in the child */
	atomic_store(&nr_writing, writing);
	/* a stop under way in another thread never ends in this process */
	if (atomic_load(&log_stopping) == 1)
		atomic_store(&log_stopping, 2);
}

/* Start a line "K,pid[,tid],ns". */
static void begin(struct line *l, char kind, int with_tid)
{
	if (!cached_pid)
		cached_pid = getpid();
	l->n = 0;
	l->b[l->n++] = kind;
	put_sep(l);
	put_num(l, (uint64_t)cached_pid, 10);
	if (with_tid) {
		if (!cached_tid)
			cached_tid = (pid_t)syscall(SYS_gettid);
		put_sep(l);
		put_num(l, (uint64_t)cached_tid, 10);
	}
	put_sep(l);
	put_num(l, mono_ns(), 10);
}

/* Is @fd the recorder's log (the file DAPTRACE_OBJTRACE_FILE names)? */
static int is_log(int fd)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) && (uint64_t)st.st_dev == log_dev &&
	       (uint64_t)st.st_ino == log_ino;
}

/*
 * The system call, not write(): that one is a cancellation point, and a
 * thread cancelled in it would leave emit() still counted in nr_writing.
 */
static void put_line(int fd, struct line *l)
{
	ssize_t w;

	l->b[l->n++] = '\n';
	do {
		w = (ssize_t)syscall(SYS_write, fd, l->b, l->n);
	} while (w < 0 && errno == EINTR);
	if (w == (ssize_t)l->n)
		atomic_fetch_add(&nr_lines, 1);
	else
		atomic_fetch_add(&nr_lost, 1);
}

static void emit(struct line *l)
{
	int saved = errno, fd;

	/* seen by stop_log() before it lets the number go, or log_fd is -1 */
	atomic_fetch_add(&nr_writing, 1);
	writing++;
	fd = atomic_load(&log_fd);
	if (fd >= 0 && foreign_close) {
		if (getpid() != log_owner)
			fd = -1;
		else
			foreign_close = 0;	/* the vfork parent, back */
	}
	if (fd >= 0)
		put_line(fd, l);
	writing--;
	atomic_fetch_sub(&nr_writing, 1);
	errno = saved;
}

/*
 * The program is about to close fds @lo..@hi, or put another file at one
 * of them: if the log is among them, tracing stops for good first, since
 * right after the number may be the program's own file (a descendant that
 * closed what it inherited, as Python's subprocess does, opens files of its
 * own).  A "C" line, the last one, says so while the fd is still the log.
 * A vfork child (posix_spawn, subprocess) runs in its parent's memory:
 * its closes are not the parent's, the log is left alone (and the thread
 * writes nothing until its pid is the owner's again).  fork() and _Fork()
 * run after_fork() in the child, which owns its copy; a raw clone's child
 * does not, and is taken for a vfork child.
 */
/*
 * Wait, at most ~100 ms, until @done() holds.  Bounded: a thread that
 * left emit() by siglongjmp() from a signal handler stays counted in
 * nr_writing for good, and a hang of the program is worse than a torn last
 * line in our own log.  The sleep is the system call, no cancellation point.
 */
static void wait_until(int (*done)(void))
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 1000 + 100 && !done(); i++) {
		if (i < 1000)
			sched_yield();
		else
			syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ms, NULL);
	}
}

static int writes_done(void)
{
	return atomic_load(&nr_writing) <= writing;
}

static int stop_done(void)
{
	return atomic_load(&log_stopping) != 1;
}

static void stop_log(unsigned int lo, unsigned int hi)
{
	int fd = atomic_load(&log_fd), saved = errno;
	struct line l;

	if (log_num < 0 || (unsigned int)log_num < lo || (unsigned int)log_num > hi)
		return;
	if (getpid() != log_owner) {
		/*
		 * A vfork child, in this thread's memory, or a raw clone's
		 * child (no atfork handler ran): the log is left alone, but
		 * this thread writes no more while its pid is not the owner's.
		 */
		if (fd >= 0)
			foreign_close = 1;
		errno = saved;
		return;
	}
	if (fd < 0 || !atomic_compare_exchange_strong(&log_fd, &fd, -1)) {
		/* another thread stops it: the number is not ours until it did */
		wait_until(stop_done);
		errno = saved;
		return;
	}
	atomic_store(&log_stopping, 1);
	wait_until(writes_done);	/* writes that took the number before */
	begin(&l, 'C', 0);
	put_sep(&l);
	put_num(&l, atomic_load(&nr_lines), 10);
	put_sep(&l);
	put_num(&l, atomic_load(&nr_lost), 10);
	put_line(fd, &l);
	atomic_store(&log_stopping, 2);
	errno = saved;
}

/* dup2()/dup3() replace @fd only if @old is open; a failed one changes nothing */
static int valid_fd(int old)
{
	int saved = errno, ok = fcntl(old, F_GETFD) >= 0;

	errno = saved;
	return ok;
}

EXPORT int close(int fd)
{
	if (!real_close)
		resolve();
	if (fd >= 0)
		stop_log((unsigned int)fd, (unsigned int)fd);
	return real_close ? real_close(fd) : (int)syscall(SYS_close, fd);
}

EXPORT int dup2(int old, int fd)
{
	if (!real_dup2)
		resolve();
	if (fd >= 0 && old != fd && valid_fd(old))
		stop_log((unsigned int)fd, (unsigned int)fd);
	return real_dup2(old, fd);
}

EXPORT int dup3(int old, int fd, int flags)
{
	if (!real_dup3)
		resolve();
	if (fd >= 0 && old != fd && valid_fd(old))
		stop_log((unsigned int)fd, (unsigned int)fd);
	return real_dup3(old, fd, flags);
}

#ifdef CLOSE_RANGE_CLOEXEC
EXPORT int close_range(unsigned int lo, unsigned int hi, int flags)
{
	if (!real_close_range)
		resolve();
	if (!(flags & CLOSE_RANGE_CLOEXEC))	/* that one closes at exec only */
		stop_log(lo, hi);
	return real_close_range(lo, hi, flags);
}

EXPORT void closefrom(int lo)
{
	if (!real_closefrom)
		resolve();
	stop_log(lo > 0 ? (unsigned int)lo : 0, UINT_MAX);
	real_closefrom(lo);
}
#endif

#ifdef HAVE__FORK
/* its child is a process of its own, as fork()'s: the handler is run here */
EXPORT pid_t _Fork(void)
{
	pid_t pid;

	if (!real__Fork)
		resolve();
	pid = real__Fork();
	if (!pid && log_num >= 0)
		after_fork();
	return pid;
}
#endif

static void log_alloc(void *p, size_t size, void *site, const char *kind)
{
	struct line l;

	if (log_fd < 0 || !p || size < min_size || in_hook)
		return;
	in_hook = 1;
	begin(&l, 'A', 1);
	put_sep(&l);
	put_num(&l, (uintptr_t)p, 16);
	put_sep(&l);
	put_num(&l, size, 16);
	put_sep(&l);
	put_num(&l, (uintptr_t)site, 16);
	put_sep(&l);
	put_str(&l, kind);
	emit(&l);
	in_hook = 0;
}

/* Only blocks that could have been logged: the usable size is >= the request. */
static void log_free_sized(void *p, size_t usable)
{
	struct line l;

	if (log_fd < 0 || !p || in_hook || usable < min_size)
		return;
	in_hook = 1;
	begin(&l, 'F', 1);
	put_sep(&l);
	put_num(&l, (uintptr_t)p, 16);
	emit(&l);
	in_hook = 0;
}

static void log_free(void *p)
{
	if (log_fd >= 0 && p && !in_hook)
		log_free_sized(p, malloc_usable_size(p));
}

EXPORT void *malloc(size_t size)
{
	void *p;

	if (!real_malloc) {
		resolve();
		if (!real_malloc)
			return boot_alloc(size);
	}
	p = real_malloc(size);
	log_alloc(p, size, __builtin_return_address(0), "malloc");
	return p;
}

EXPORT void *calloc(size_t n, size_t size)
{
	void *p;

	if (!real_calloc) {
		resolve();
		if (!real_calloc)	/* static: already zero */
			return size && n > SIZE_MAX / size ? NULL : boot_alloc(n * size);
	}
	p = real_calloc(n, size);
	log_alloc(p, n * size, __builtin_return_address(0), "calloc");
	return p;
}

EXPORT void free(void *p)
{
	if (!p || is_boot(p))
		return;
	if (!real_free)
		resolve();
	log_free(p);
	real_free(p);
}

EXPORT void *realloc(void *old, size_t size)
{
	size_t usable;
	void *p;

	if (is_boot(old)) {
		size_t room = (size_t)(boot_buf + sizeof(boot_buf) - (char *)old);

		p = malloc(size);
		if (p)
			memcpy(p, old, size < room ? size : room);
		return p;
	}
	if (!real_realloc)
		resolve();
	/*
	 * Logged as a free of the old block and a new allocation, once it
	 * worked (a failed realloc leaves the old block alive); the old size
	 * is read first, the block may be gone after.
	 */
	usable = old && log_fd >= 0 ? malloc_usable_size(old) : 0;
	p = real_realloc(old, size);
	if (p || !size)
		log_free_sized(old, usable);
	log_alloc(p, size, __builtin_return_address(0), "realloc");
	return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	int ret;

	if (!real_posix_memalign)
		resolve();
	ret = real_posix_memalign(out, align, size);
	if (!ret)
		log_alloc(*out, size, __builtin_return_address(0), "memalign");
	return ret;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	void *p;

	if (!real_aligned_alloc)
		resolve();
	p = real_aligned_alloc(align, size);
	log_alloc(p, size, __builtin_return_address(0), "memalign");
	return p;
}

EXPORT void *memalign(size_t align, size_t size)
{
	void *p;

	if (!real_memalign)
		resolve();
	p = real_memalign(align, size);
	log_alloc(p, size, __builtin_return_address(0), "memalign");
	return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	if (!real_mmap)
		resolve();
	p = real_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED)
		log_alloc(p, len, __builtin_return_address(0), "mmap");
	return p;
}

EXPORT int munmap(void *addr, size_t len)
{
	struct line l;

	if (!real_munmap)
		resolve();
	if (log_fd >= 0 && !in_hook && len >= min_size) {
		in_hook = 1;
		begin(&l, 'U', 1);
		put_sep(&l);
		put_num(&l, (uintptr_t)addr, 16);
		put_sep(&l);
		put_num(&l, len, 16);
		emit(&l);
		in_hook = 0;
	}
	return real_munmap(addr, len);
}

/* --- thread stacks: wrap the start routine --- */
struct start {
	void *(*fn)(void *);
	void *arg;
};

static void thread_end(void *unused)
{
	struct line l;

	(void)unused;
	begin(&l, 'T', 1);
	emit(&l);
}

static void *thread_start(void *p)
{
	struct start s = *(struct start *)p;
	pthread_attr_t a;
	void *lo, *ret;
	size_t sz;
	struct line l;

	real_free(p);
	in_hook = 1;	/* pthread_getattr_np may allocate: not the program's */
	if (!pthread_getattr_np(pthread_self(), &a)) {
		if (!pthread_attr_getstack(&a, &lo, &sz)) {
			begin(&l, 'S', 1);
			put_sep(&l);
			put_num(&l, (uintptr_t)lo, 16);
			put_sep(&l);
			put_num(&l, (uintptr_t)lo + sz, 16);
			emit(&l);
		}
		pthread_attr_destroy(&a);
	}
	in_hook = 0;
	pthread_cleanup_push(thread_end, NULL);
	ret = s.fn(s.arg);
	pthread_cleanup_pop(1);
	return ret;
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	struct start *s;
	int ret;

	if (!real_pthread_create)
		resolve();
	if (log_fd < 0)
		return real_pthread_create(t, attr, fn, arg);
	s = real_malloc(sizeof(*s));
	if (!s)
		return EAGAIN;
	s->fn = fn;
	s->arg = arg;
	ret = real_pthread_create(t, attr, thread_start, s);
	if (ret)
		real_free(s);
	return ret;
}

/* --- image start and end --- */
static int log_object(struct dl_phdr_info *info, size_t size, void *data)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	char exe[256];
	const char *path = info->dlpi_name;
	struct line l;

	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (!path[0]) {		/* the main program */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n <= 0)
			return 0;
		exe[n] = '\0';
		path = exe;
	}
	if (hi <= lo || path[0] != '/')
		return 0;	/* the vDSO has no file */
	begin(&l, 'L', 0);
	put_sep(&l);
	put_num(&l, lo, 16);
	put_sep(&l);
	put_num(&l, hi, 16);
	put_sep(&l);
	put_num(&l, info->dlpi_addr, 16);
	put_sep(&l);
	put_str(&l, path);
	emit(&l);
	return 0;
}

/* A decimal number up to @end (or the string's end); NULL if it is none. */
static const char *parse_u64(const char *s, char end, uint64_t *v)
{
	const char *start = s;

	*v = 0;
	if (!s)
		return NULL;
	for (; *s && *s != end; s++) {
		if (*s < '0' || *s > '9' || *v > (UINT64_MAX - 9) / 10)
			return NULL;
		*v = *v * 10 + (uint64_t)(*s - '0');
	}
	return s > start && *s == end ? s : NULL;
}

static size_t parse_size(const char *s, size_t def)
{
	uint64_t v;

	return parse_u64(s, '\0', &v) && v <= SIZE_MAX ? (size_t)v : def;
}

__attribute__((constructor)) static void objtrace_init(void)
{
	const char *file = getenv("DAPTRACE_OBJTRACE_FILE");
	uint64_t fd;
	char exe[256];
	struct line l;
	ssize_t n;

	resolve();
	/* without the file's identity, a number alone is never trusted */
	file = parse_u64(file, ':', &log_dev);
	if (!parse_u64(getenv("DAPTRACE_OBJTRACE_FD"), '\0', &fd) || fd > INT_MAX ||
	    !file || !parse_u64(file + 1, '\0', &log_ino))
		return;
	if (!is_log((int)fd))
		return;
	log_owner = getpid();
	log_num = (int)fd;
	atomic_store(&log_fd, (int)fd);
	min_size = parse_size(getenv("DAPTRACE_OBJTRACE_MIN"), 4096);
	pthread_atfork(NULL, NULL, after_fork);
	if (!min_size)
		min_size = 1;
	in_hook = 1;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	begin(&l, 'H', 0);
	put_sep(&l);
	put_str(&l, exe);
	emit(&l);
	dl_iterate_phdr(log_object, NULL);
	in_hook = 0;
}

__attribute__((destructor)) static void objtrace_fini(void)
{
	struct line l;

	if (log_fd < 0)
		return;
	in_hook = 1;
	begin(&l, 'Q', 0);
	put_sep(&l);
	put_num(&l, atomic_load(&nr_lines), 10);
	put_sep(&l);
	put_num(&l, atomic_load(&nr_lost), 10);
	emit(&l);
}
