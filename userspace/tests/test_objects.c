// SPDX-License-Identifier: GPL-2.0-only
/*
 * Data structures (record --objects): the ELF symbol reader, the tracer log
 * parser (exec, other pids, malformed and truncated logs), the side file,
 * call-site naming and the attribution arithmetic.
 */
#include <json-c/json.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "objects/objects.h"
#include "cli.h"
#include "objects/objects_record.h"
#include "run_cmd.h"
#include "run_json.h"

/* known globals for the symbol reader */
char test_objects_big[3 * 4096];
static char test_objects_static[5 * 4096];
char test_objects_small[64];

static void *volatile keep[3] = { test_objects_big, test_objects_static, test_objects_small };

static const struct obj *find(const struct obj_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].name && !strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

static int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (!info->dlpi_name[0]) {
		*(uint64_t *)data = info->dlpi_addr;
		return 1;
	}
	return 0;
}

TEST(elf_globals_of_this_binary)
{
	struct obj_set s = { 0 };
	uint64_t bias = 0;
	const struct obj *o;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	ASSERT_GT(n, 0);
	exe[n] = '\0';
	dl_iterate_phdr(main_bias, &bias);
	ASSERT_GE(obj_elf_globals(&s, exe, bias, 4096), 2);
	o = find(&s, "test_objects_big");
	ASSERT_NE(NULL, o);
	EXPECT_EQ((uint64_t)(uintptr_t)test_objects_big, o->start);
	EXPECT_EQ(sizeof(test_objects_big), o->end - o->start);
	EXPECT_EQ(OBJ_GLOBAL, o->kind);
	o = find(&s, "test_objects_static");	/* only in .symtab */
	ASSERT_NE(NULL, o);
	EXPECT_EQ((uint64_t)(uintptr_t)test_objects_static, o->start);
	EXPECT_EQ(NULL, find(&s, "test_objects_small"));	/* below the threshold */
	EXPECT_EQ(0, obj_elf_is_static("/proc/self/exe") < 0);
	EXPECT_EQ(1, obj_elf_has_symtab(exe));
	EXPECT_EQ(-ENOEXEC, obj_elf_globals(&s, "/proc/self/maps", 0, 4096));
	EXPECT_EQ(-ENOENT, obj_elf_globals(&s, "/nonexistent/daptrace", 0, 4096));
	obj_set_free(&s);
	(void)keep;
}

/* A stripped copy: no .symtab, so no static globals (and the recorder says so). */
TEST(elf_stripped_binary)
{
	char cmd[8300], exe[4096], stripped[] = "/tmp/daptrace-stripped-XXXXXX";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct obj_set t = { 0 };
	int fd = mkstemp(stripped);

	ASSERT_GT(n, 0);
	exe[n] = '\0';
	ASSERT_GE(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all '%s' '%s' 2>/dev/null", exe, stripped);
	if (system(cmd) != 0) {
		unlink(stripped);
		SKIP(return, "objcopy (binutils) missing");
	}
	EXPECT_EQ(0, obj_elf_has_symtab(stripped));
	EXPECT_GE(obj_elf_globals(&t, stripped, 0, 4096), 0);
	EXPECT_EQ(NULL, find(&t, "test_objects_static"));
	obj_set_free(&t);
	unlink(stripped);
}

TEST(elf_bias_of_a_pie)
{
	uint64_t bias = 1, want = 0;
	char line[4096], exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uint64_t start = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	ASSERT_GT(n, 0);
	exe[n] = '\0';
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		uint64_t s, off;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%" SCNx64 "-%*x %*s %" SCNx64, &s, &off) == 2 && !off &&
		    strstr(line, exe)) {
			start = s;
			break;
		}
	}
	fclose(f);
	ASSERT_NE(0, start);
	dl_iterate_phdr(main_bias, &want);
	ASSERT_EQ(0, obj_elf_bias(exe, start, &bias));
	EXPECT_EQ(want, bias);
}

static FILE *text(const char *s)
{
	return fmemopen((void *)s, strlen(s), "r");
}

/* obj_log_parse() of the log @log of pid 100, times from @t0_ns; -1 without a FILE. */
static int parse_log(const char *log, int64_t t0_ns, struct obj_set *s,
		     struct obj_log_stats *st)
{
	FILE *f = text(log);
	int ret;

	if (!f)
		return -1;
	ret = obj_log_parse(f, 100, t0_ns, s, st);
	fclose(f);
	return ret;
}

/* Frees what parse_log() filled in. */
static void parsed_log_free(struct obj_set *s, struct obj_log_stats *st)
{
	obj_log_stats_free(st);
	obj_set_free(s);
}

/*
 * Every counter of @got is @want's: a test names the counters it expects
 * not to be 0, so a count the log should not have made fails it too.
 * A counter added to struct obj_log_stats belongs in LOG_COUNTERS.
 */
#define LOG_COUNTERS(X) \
	X(lines) X(bad_lines) X(other_pid) X(unmatched_frees) X(partial_unmaps) \
	X(images) X(clean_exits) X(lost_writes) X(still_alive) X(truncated) \
	X(no_exit) X(log_closed) X(seen)

static void expect_log_counters(struct __test_metadata *_metadata,
				const struct obj_log_stats *got, struct obj_log_stats want)
{
#define EXPECT_COUNTER(f) EXPECT_EQ(want.f, got->f) TH_LOG("stats." #f);
	LOG_COUNTERS(EXPECT_COUNTER)
#undef EXPECT_COUNTER
}

#define LOG_OK \
	"H,100,1000,/bin/prog\n" \
	"L,100,1000,1000,5000,0,/bin/prog\n" \
	"A,100,100,2000,10000,4000,1234,malloc\n" \
	"A,100,100,2500,20000,8000,1240,mmap\n" \
	"A,200,200,2600,30000,4000,1234,malloc\n" \
	"S,100,101,3000,40000,50000\n" \
	"F,100,100,4000,10000\n" \
	"F,100,100,4100,99999\n" \
	"T,100,101,5000\n" \
	"Q,100,6000,9,0\n"

/* How the logs below start: the program's image, then one malloc() of it. */
#define LOG_ONE_MALLOC \
	"H,100,1000,/bin/prog\n" \
	"A,100,100,2000,10000,4000,1234,malloc\n"

TEST(log_parse_complete)
{
	struct obj_set s = { 0 };
	struct obj_log_stats st;

	ASSERT_EQ(0, parse_log(LOG_OK, 500, &s, &st));
	ASSERT_EQ(3, s.n);
	EXPECT_EQ(OBJ_HEAP, s.v[0].kind);
	EXPECT_EQ(0x10000, s.v[0].start);
	EXPECT_EQ(0x14000, s.v[0].end);
	EXPECT_EQ(1500, s.v[0].alloc_ns);	/* relative to t0 = 500 */
	EXPECT_EQ(3500, s.v[0].free_ns);
	EXPECT_EQ(0x1234, s.v[0].site);
	EXPECT_EQ(OBJ_MMAP, s.v[1].kind);
	EXPECT_EQ(-1, s.v[1].free_ns);		/* never unmapped */
	EXPECT_EQ(OBJ_STACK, s.v[2].kind);
	EXPECT_EQ(101, s.v[2].tid);
	EXPECT_EQ(4500, s.v[2].free_ns);
	expect_log_counters(_metadata, &st, (struct obj_log_stats){
		.lines = 10, .other_pid = 1, .unmatched_frees = 1, .clean_exits = 1,
		.still_alive = 1, .images = 1, .seen = 1 });
	ASSERT_EQ(1, s.nr_mods);
	EXPECT_STREQ("/bin/prog", s.mods[0].path);
	EXPECT_STREQ("/bin/prog", st.exe);
	parsed_log_free(&s, &st);
}

/* A program that took the log's fd: the tracer's last line says so. */
TEST(log_parse_closed_by_the_program)
{
	struct obj_set s = { 0 };
	struct obj_log_stats st;
	static const char log[] = LOG_ONE_MALLOC "C,100,3000,2,1\n";

	ASSERT_EQ(0, parse_log(log, 500, &s, &st));
	EXPECT_EQ(1, s.n);
	expect_log_counters(_metadata, &st, (struct obj_log_stats){
		.lines = 3, .log_closed = 1, .lost_writes = 1, .still_alive = 1, .images = 1,
		.seen = 1 });
	parsed_log_free(&s, &st);
}

TEST(log_parse_truncated_and_malformed)
{
	struct obj_set s = { 0 };
	struct obj_log_stats st;
	/* a bad kind, a bad number, then a line cut by a killed writer */
	static const char log[] = LOG_ONE_MALLOC
		"X,100,1\n"
		"A,100,100,zz,10000,4000,1234,malloc\n"
		"A,100,100,3000,20000,40";

	ASSERT_EQ(0, parse_log(log, 0, &s, &st));
	EXPECT_EQ(1, s.n);
	/* no Q line: no_exit, the log is partial */
	expect_log_counters(_metadata, &st, (struct obj_log_stats){
		.lines = 5, .bad_lines = 2, .truncated = 1, .no_exit = 1, .still_alive = 1,
		.images = 1, .seen = 1 });
	parsed_log_free(&s, &st);
}

TEST(log_parse_exec_ends_the_old_image)
{
	struct obj_set s = { 0 };
	struct obj_log_stats st;
	static const char log[] = "H,100,1000,/bin/sh\n"
		"L,100,1000,1000,5000,0,/bin/sh\n"
		"A,100,100,2000,10000,4000,1234,malloc\n"
		"H,100,7000,/bin/prog\n"
		"L,100,7000,1000,9000,0,/bin/prog\n"
		"F,100,100,8000,10000\n"	/* same address, new image: not ours */
		"Q,100,9000,3,0\n";

	ASSERT_EQ(0, parse_log(log, 0, &s, &st));
	ASSERT_EQ(1, s.n);
	EXPECT_EQ(7000, s.v[0].free_ns);
	expect_log_counters(_metadata, &st, (struct obj_log_stats){
		.lines = 7, .images = 2, .unmatched_frees = 1, .clean_exits = 1, .seen = 1 });
	ASSERT_EQ(2, s.nr_mods);		/* each image's modules */
	EXPECT_STREQ("/bin/sh", s.mods[0].path);
	EXPECT_EQ(0, s.mods[0].image);
	EXPECT_STREQ("/bin/prog", s.mods[1].path);
	EXPECT_EQ(1, s.mods[1].image);
	EXPECT_EQ(0, s.v[0].image);
	EXPECT_EQ(1, s.image);
	parsed_log_free(&s, &st);
}

TEST(side_file_round_trip_and_cut)
{
	struct obj_set s = { 0 }, r = { 0 };
	struct obj *o = obj_add(&s);
	char path[] = "/tmp/daptrace-objtest-XXXXXX", err[512];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	long len;

	ASSERT_NE(NULL, o);
	o->kind = OBJ_HEAP;
	o->name = strdup("make, \"quoted\"@x.c:3");
	o->start = 4096;
	o->end = 8192;
	o->alloc_ns = 10;
	o->site = 0x1234;
	o->function = strdup("make");
	obj_meta_set(&s, "pid", "%d", 42);
	ASSERT_EQ(0, obj_write(f, &s));
	fclose(f);
	ASSERT_EQ(0, obj_read_path(path, &r, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(1, r.n);
	EXPECT_STREQ(s.v[0].name, r.v[0].name);
	EXPECT_EQ(-1, r.v[0].free_ns);
	EXPECT_EQ(0x1234, r.v[0].site);
	EXPECT_STREQ("make", r.v[0].function);
	EXPECT_EQ(NULL, r.v[0].source);
	EXPECT_STREQ("42", obj_meta_get(&r, "pid"));
	obj_set_free(&r);
	/* cut before #eof: an error naming the problem */
	f = fopen(path, "r+");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fclose(f);
	ASSERT_EQ(0, truncate(path, len - 5));
	EXPECT_EQ(-1, obj_read_path(path, &r, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "cut short")) TH_LOG("%s", err);
	obj_set_free(&r);
	obj_set_free(&s);
	unlink(path);
}

/* Numbers as written (decimal, the site in hex), times and tid in range. */
TEST(side_file_rejects_garbage_numbers)
{
	static const char *const rows[] = {
		"heap,x,4096,8192,4096,10,20,7,0x1234,,,",	/* valid */
		"heap,x,4096,8192,4096,10,-1,7,0x1234,,,",	/* free_ns -1 */
		"heap,x,4096,8192,4096,-100,,7,0x1234,,,",	/* alloc_ns < 0 */
		"heap,x,4096,8192,4096,10,5,7,0x1234,,,",	/* freed before */
		"heap,x,4096,8192,4096,10,,4294967303,0x1234,,,",	/* tid */
		"heap,x,0x1000,8192,4096,10,,7,0x1234,,,",	/* hex start */
		"heap,x,4096,8192,4096,10,,7,1234,,,",		/* site not hex */
	};
	char path[] = "/tmp/daptrace-objtest-XXXXXX", err[512];
	struct obj_set r = { 0 };

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");

		ASSERT_NE(NULL, f);
		fprintf(f, "%s\n%s\n%s\n#eof\n", OBJ_MAGIC, OBJ_COLUMNS, rows[i]);
		fclose(f);
		EXPECT_EQ(i ? -1 : 0, obj_read_path(path, &r, err, sizeof(err)))
			TH_LOG("row '%s': %s", rows[i], i ? "accepted" : err);
		if (i)
			EXPECT_NE(NULL, strstr(err, "line 3: not a valid objects row"))
				TH_LOG("%s", err);
		obj_set_free(&r);
		memset(&r, 0, sizeof(r));
		unlink(path);
		strcpy(path, "/tmp/daptrace-objtest-XXXXXX");
	}
}

__attribute__((noinline)) static void *return_address_here(void)
{
	return __builtin_return_address(0);
}

TEST(call_sites_named_by_libdw)
{
	struct obj_set s = { 0 };
	struct obj *o;
	uint64_t bias = 0;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void *site = return_address_here();	/* this line is the call site */

	ASSERT_GT(n, 0);
	exe[n] = '\0';
	dl_iterate_phdr(main_bias, &bias);
	ASSERT_EQ(0, obj_add_module(&s, 0, 0, bias, exe));
	o = obj_add(&s);
	o->kind = OBJ_HEAP;
	o->site = (uintptr_t)site;
	o = obj_add(&s);
	o->kind = OBJ_STACK;
	o->tid = 7;
	EXPECT_EQ(0, obj_symbolise(&s));
	ASSERT_NE(NULL, s.v[0].function);
	EXPECT_NE(NULL, strstr(s.v[0].function, "call_sites_named_by_libdw"))
		TH_LOG("%s", s.v[0].function);
	ASSERT_NE(NULL, s.v[0].source);
	EXPECT_NE(NULL, strstr(s.v[0].source, "test_objects.c:")) TH_LOG("%s", s.v[0].source);
	EXPECT_STREQ("Stack#1", s.v[1].name);
	obj_set_free(&s);
}

TEST(attribution_is_byte_weighted)
{
	const struct obj_region r[] = {
		{ 0, 100, 10 }, { 100, 200, 50 }, { 300, 400, 100 },
	};
	double f = -1;

	EXPECT_EQ(100, obj_window_freq(50, 150, r, 3, &f));
	EXPECT_EQ(30, f);
	EXPECT_EQ(100, obj_window_freq(150, 350, r, 3, &f));	/* the gap is unobserved */
	EXPECT_EQ(75, f);
	f = -1;
	EXPECT_EQ(0, obj_window_freq(200, 300, r, 3, &f));	/* all in the gap */
	EXPECT_EQ(-1, f);
	EXPECT_EQ(400 - 300, obj_window_freq(300, 1000, r, 3, &f));
	EXPECT_EQ(100, f);
	EXPECT_EQ(0, obj_window_freq(0, 100, r, 0, &f));
	EXPECT_EQ(1, obj_alive_in(0, -1, 100, 200));
	EXPECT_EQ(1, obj_alive_in(150, 160, 100, 200));
	EXPECT_EQ(0, obj_alive_in(200, -1, 100, 200));	/* born at the end */
	EXPECT_EQ(0, obj_alive_in(0, 100, 100, 200));	/* died at the start */
}

TEST(objects_min_size)
{
	uint64_t v = 7;

	EXPECT_EQ(0, obj_parse_size("4096", &v));
	EXPECT_EQ(4096, v);
	EXPECT_EQ(0, obj_parse_size("64K", &v));
	EXPECT_EQ(65536, v);
	EXPECT_EQ(0, obj_parse_size("2M", &v));
	EXPECT_EQ(2 << 20, v);
	v = 7;
	EXPECT_EQ(-EINVAL, obj_parse_size("", &v));
	EXPECT_EQ(-EINVAL, obj_parse_size("-1", &v));
	EXPECT_EQ(-EINVAL, obj_parse_size("4KB", &v));
	EXPECT_EQ(-EINVAL, obj_parse_size("99999999999999999999G", &v) ? -EINVAL : 0);
	EXPECT_EQ(7, v);
}

TEST(cli_bad_input)
{
	char out[4096], rec[] = "/tmp/daptrace-objrec-XXXXXX";
	int fd;

	SKIP_UNLESS_DAPTRACE_BIN();
	EXPECT_EQ(2, run_daptrace(A("record", "--objects-min", "0", "--", "true"), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--objects-min")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_daptrace(A("record", "--objects-min", "4KB", "--", "true"), out,
				  sizeof(out)));
	EXPECT_EQ(2, run_daptrace(A("record", "--objects", "-o", "-", "--", "true"), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--objects needs --output")) TH_LOG("%s", out);
	/* a record without a side file: says how to get one */
	fd = mkstemp(rec);
	ASSERT_GE(fd, 0);
	close(fd);
	EXPECT_EQ(1, run_daptrace(A("report", "objects", rec), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "record with --objects")) TH_LOG("%s", out);
	unlink(rec);
}

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

/* how the program takes the log's fd number over, through the tracer */
enum { BY_DUP2, BY_DUP3, BY_CLOSE, BY_CLOSE_RANGE, BY_CLOSEFROM, BY_VFORK_CHILD,
       BY_FAILED_DUP2, BY_CLOSE_AFTER_CANCEL, BY__FORK_CHILD, BY_RAW_CLONE_CHILD };

/* the log's own lines: these leave it growing, not ended by a C line */
static int log_kept(int how)
{
	return how == BY_VFORK_CHILD || how == BY_FAILED_DUP2;
}

static void *(*traced_malloc)(size_t);
static void (*traced_free)(void *);

/* logs (malloc, free) until cancelled: write(2) would be the cancellation point */
static void *alloc_loop(void *unused)
{
	(void)unused;
	for (;;) {
		void *volatile p = traced_malloc(1 << 16);

		traced_free(p);
		pthread_testcancel();
	}
	return NULL;
}

static __attribute__((noinline)) int vfork_close_range(int (*fn)(unsigned int, unsigned int,
								    int))
{
	pid_t pid = vfork();
	int status;

	if (!pid)
		_exit(fn(3, ~0U, 0) ? 1 : 0);	/* subprocess's child: close all */
	return pid > 0 && waitpid(pid, &status, 0) == pid && !WEXITSTATUS(status) ? 0 : -1;
}

/*
 * In a child, the tracer loaded with the log (it logs the image), its own
 * close, dup2... called (those a preloaded tracer gets), the program's file
 * @ufd put at the log's number @how, then a traced malloc.  Exits 0 if all
 * ran, and the log must end in the tracer's C line; for a vfork child's
 * close, the parent must still log.
 */
static pid_t take_log_fd(const char *lib, const char *log, int log_fd, int ufd, int how)
{
	pid_t pid = fork();
	pthread_t t;
	off_t before;
	void *h, *fn;
	int ret = 0, bad, status;
	pid_t child;

	if (pid)
		return pid;
	alarm(10);	/* a close waiting for good is a failure, not a hang */
	h = dlopen(lib, RTLD_NOW);
	before = size_of(log);
	if (!h || before <= 0)
		_exit(1);
	traced_malloc = (void *(*)(size_t))dlsym(h, "malloc");
	traced_free = (void (*)(void *))dlsym(h, "free");
	fn = dlsym(h, (const char *[]){ "dup2", "dup3", "close", "close_range", "closefrom",
					 "close_range", "dup2", "close", "close", "close" }[how]);
	if (!traced_malloc || !traced_free || !fn)
		_exit(2);
	switch (how) {
	case BY_DUP2:
		ret = ((int (*)(int, int))fn)(ufd, log_fd);
		break;
	case BY_DUP3:
		ret = ((int (*)(int, int, int))fn)(ufd, log_fd, 0);
		break;
	case BY_CLOSE:
		ret = ((int (*)(int))fn)(log_fd);
		break;
	case BY_CLOSE_RANGE:
		ret = ((int (*)(unsigned int, unsigned int, int))fn)(log_fd, log_fd + 1, 0);
		break;
	case BY_CLOSEFROM:
		((void (*)(int))fn)(log_fd);
		break;
	case BY_VFORK_CHILD:
		ret = vfork_close_range((int (*)(unsigned int, unsigned int, int))fn);
		break;
	case BY_FAILED_DUP2:	/* EBADF: the log is still at its number */
		bad = dup(0);
		close(bad);
		ret = ((int (*)(int, int))fn)(bad, log_fd) == -1 && errno == EBADF ? 0 : -1;
		break;
	case BY_CLOSE_AFTER_CANCEL:
		if (pthread_create(&t, NULL, alloc_loop, NULL))
			_exit(7);
		usleep(50000);
		if (pthread_cancel(t) || pthread_join(t, NULL))
			_exit(8);
		ret = ((int (*)(int))fn)(log_fd);
		break;
	case BY__FORK_CHILD:	/* no atfork handler runs in either child */
	case BY_RAW_CLONE_CHILD:
		if (how == BY__FORK_CHILD)
			child = dlsym(h, "_Fork") ? ((pid_t (*)(void))dlsym(h, "_Fork"))() : -1;
		else
			child = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
		if (child < 0)
			_exit(10);
		if (child)	/* the rest is the child's */
			_exit(waitpid(child, &status, 0) == child && WIFEXITED(status) ?
				      WEXITSTATUS(status) : 11);
		alarm(10);
		ret = ((int (*)(int))fn)(log_fd);
		break;
	}
	if (ret < 0 || (!log_kept(how) && dup2(ufd, log_fd) != log_fd))
		_exit(3);
	before = size_of(log);
	if (!traced_malloc(1 << 16))
		_exit(4);
	if (log_kept(how))
		_exit(size_of(log) > before ? 0 : 5);
	_exit(size_of(log) == before ? 0 : 6);
}

static const char *last_line(const char *path)
{
	static char buf[4096];
	char *nl;
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		if (size_of(path) >= (off_t)sizeof(buf))	/* its end */
			fseek(f, size_of(path) - (off_t)sizeof(buf) + 1, SEEK_SET);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	nl = strrchr(buf, '\n');
	return nl ? nl + 1 : buf;
}

/*
 * A descendant that closed the inherited log fd and has its own file at that
 * number gets nothing from the tracer: neither at exec (the constructor) nor
 * later (the fd taken over after the tracer was loaded, by close, dup2,
 * dup3, close_range or closefrom: tracing stops first, with a C line).  One
 * that kept it still logs, also after a vfork child closed everything.
 */
TEST(tracer_never_writes_to_a_reused_fd)
{
	char rec[] = "/tmp/daptrace-objfd-XXXXXX", user[] = "/tmp/daptrace-objuser-XXXXXX";
	char lib[PATH_MAX], c_line[32];
	struct objrec r = { 0 };
	int fd, ufd, status;
	pid_t pid;

	SKIP_UNLESS_DAPTRACE_BIN();
	snprintf(lib, sizeof(lib), "%s", daptrace_bin());
	snprintf(lib + strlen(dirname(lib)), sizeof(lib) - strlen(lib),
		 "/libdaptrace-objtrace.so");
	if (access(lib, R_OK))
		SKIP(return, "libdaptrace-objtrace.so not built next to the binary");
	setenv("DAPTRACE_OBJTRACE_LIB", lib, 1);
	fd = mkstemp(rec);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(0, objrec_prepare(&r, rec, 4096, 1));
	ASSERT_GE(r.log_fd, 0);
	ufd = mkstemp(user);
	ASSERT_GE(ufd, 0);

	/* closed, then the program's file at that number, then exec */
	pid = fork();
	if (!pid) {
		close(r.log_fd);
		dup2(ufd, r.log_fd);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, size_of(user));

	for (int how = BY_DUP2; how <= BY_RAW_CLONE_CHILD; how++) {
		pid = take_log_fd(lib, r.log_path, r.log_fd, ufd, how);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status)) TH_LOG("how %d: status %#x", how, status);
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("how %d", how);
		EXPECT_EQ(0, size_of(user)) TH_LOG("how %d", how);
		/* _Fork's child stops the log as its own; a raw clone's writes no more */
		snprintf(c_line, sizeof(c_line), "C,%d,", (int)pid);
		if (how == BY__FORK_CHILD)
			c_line[2] = '\0';
		if (!log_kept(how) && how != BY_RAW_CLONE_CHILD)
			EXPECT_EQ(0, strncmp(last_line(r.log_path), c_line, strlen(c_line)))
				TH_LOG("how %d: %s", how, last_line(r.log_path));
	}

	close(ufd);
	unlink(user);
	unlink(r.log_path);
	unlink(rec);
	objrec_free(&r);
}

/*
 * End to end on a synthetic record: regions [0x10000,0x20000) hot (20 of
 * 20 samples), [0x20000,0x30000) cold, [0x30000,0x40000) hot in the second
 * half only; objects on each, one alive only in the first half.
 */
static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

TEST(report_objects_ranks_a_synthetic_record)
{
	char out[16384], dir[] = "/tmp/daptrace-objrep-XXXXXX", rec[256], side[256], csv[256];
	char png[256], row[256];
	FILE *f;
	int rank_hot = 0, rank_cold = 0, rank_late = 0;

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(rec, sizeof(rec), "%s/r.csv", dir);
	snprintf(side, sizeof(side), "%s/r.objects.csv", dir);
	snprintf(csv, sizeof(csv), "%s/rep.csv", dir);
	snprintf(png, sizeof(png), "%s/rep.png", dir);
	f = fopen(rec, "w");
	ASSERT_NE(NULL, f);
	fputs("# daptrace-record v1\n#meta,aggr_us,100000\n#meta,sample_us,5000\n"
	      "#target,7,prog\ntime_ns,seq,pid,start,end,nr_accesses,age,label\n", f);
	for (int i = 0; i < 10; i++) {
		uint64_t t0 = i * 100000000ULL, t1 = t0 + 100000000ULL;

		fprintf(f, "#snap,%d,%" PRIu64 ",%" PRIu64 ",3,20,0,0\n", i + 1, t0, t1);
		fprintf(f, "%" PRIu64 ",%d,7,65536,131072,20,0,[heap]\n", t1, i + 1);
		fprintf(f, "%" PRIu64 ",%d,7,131072,196608,0,0,[heap]\n", t1, i + 1);
		fprintf(f, "%" PRIu64 ",%d,7,196608,262144,%d,0,[heap]\n", t1, i + 1,
			i < 5 ? 0 : 20);
	}
	fputs("#end,reason,test\n#eof\n", f);
	fclose(f);
	write_file(side, "# daptrace-objects v1\n#meta,pid,7\n#meta,partial,no\n"
		   "#meta,linkage,dynamic\n#meta,tracer,yes\n" OBJ_COLUMNS "\n"
		   "heap,hot@a.c:1,65536,131072,65536,0,,7,0x1,hot,a.c:1,\n"
		   "heap,cold@a.c:2,131072,196608,65536,0,,7,0x2,cold,a.c:2,\n"
		   "heap,late@a.c:3,196608,262144,65536,0,,7,0x3,late,a.c:3,\n"
		   "heap,gone@a.c:4,196608,200704,4096,0,450000000,7,0x4,gone,a.c:4,\n"
		   "#eof\n");
	ASSERT_EQ(0, run_daptrace(A("report", "objects", rec, "-o", csv), out, sizeof(out)))
		TH_LOG("%s", out);
	f = fopen(csv, "r");
	ASSERT_NE(NULL, f);
	while (fgets(row, sizeof(row), f)) {
		int rank;
		char name[64];

		if (sscanf(row, "%d,heap,\"%63[^\"]\"", &rank, name) != 2)
			continue;
		if (!strcmp(name, "hot@a.c:1")) {
			rank_hot = rank;
			EXPECT_NE(NULL, strstr(row, ",10,100.00,100.00,100.0,")) TH_LOG("%s", row);
		} else if (!strcmp(name, "cold@a.c:2")) {
			rank_cold = rank;
			EXPECT_NE(NULL, strstr(row, ",10,0.00,0.00,0.0,")) TH_LOG("%s", row);
		} else if (!strcmp(name, "late@a.c:3")) {
			rank_late = rank;
			EXPECT_NE(NULL, strstr(row, ",10,50.00,100.00,50.0,")) TH_LOG("%s", row);
		} else if (!strcmp(name, "gone@a.c:4")) {
			/* freed at 0.45 s: the five cold windows it lived in */
			EXPECT_NE(NULL, strstr(row, ",5,0.00,0.00,0.0,")) TH_LOG("%s", row);
		}
	}
	fclose(f);
	EXPECT_EQ(1, rank_hot);
	EXPECT_EQ(2, rank_late);
	EXPECT_LT(rank_late, rank_cold) TH_LOG("late %d, cold %d", rank_late, rank_cold);
	/* the same table as one JSON document, nothing else on stdout */
	{
		struct json_object *j, *arr, *e, *v;

		j = run_daptrace_json(A("report", "objects", rec, "--json"), out, sizeof(out));
		ASSERT_NE(NULL, j) TH_LOG("failed or not JSON: %s", out);
		arr = JSON_FIELD(j, "objects");
		EXPECT_EQ(4, json_object_array_length(arr));
		EXPECT_EQ(10, json_object_get_int(JSON_FIELD(j, "windows")));
		EXPECT_FALSE(json_object_get_boolean(JSON_FIELD(j, "globals_and_stacks_only")));
		e = json_object_array_get_idx(arr, 0);
		EXPECT_STREQ("hot@a.c:1", json_object_get_string(JSON_FIELD(e, "name")));
		EXPECT_EQ(100, (int)json_object_get_double(JSON_FIELD(e, "mean_freq_percent")));
		EXPECT_EQ(65536, json_object_get_int64(JSON_FIELD(e, "size")));
		EXPECT_STREQ("0x1", json_object_get_string(JSON_FIELD(e, "callsite")));
		e = json_object_array_get_idx(arr, 1);
		EXPECT_STREQ("late@a.c:3", json_object_get_string(JSON_FIELD(e, "name")));
		EXPECT_EQ(50, (int)json_object_get_double(JSON_FIELD(e, "hot_share_percent")));
		for (size_t i = 0; i < 4; i++) {
			e = json_object_array_get_idx(arr, i);
			if (strcmp(json_object_get_string(JSON_FIELD(e, "name")), "gone@a.c:4"))
				continue;
			/* freed at 0.45 s: five windows, all cold */
			EXPECT_EQ(5, json_object_get_int(JSON_FIELD(e, "windows")));
			v = JSON_FIELD(e, "peak_freq_percent");
			EXPECT_EQ(0, (int)json_object_get_double(v));
		}
		json_object_put(j);
	}
	EXPECT_EQ(2, run_daptrace(A("report", "objects", rec, "--json", "--plot", png), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--json")) TH_LOG("%s", out);
	if (system("command -v gnuplot > /dev/null 2>&1") == 0) {
		EXPECT_EQ(0, run_daptrace(A("report", "objects", rec, "--plot", png), out,
					  sizeof(out))) TH_LOG("%s", out);
		EXPECT_EQ(0, access(png, R_OK));
		EXPECT_NE(NULL, strstr(out, "hot@a.c:1")) TH_LOG("the table goes to stdout");
	}
	unlink(png);
	unlink(csv);
	unlink(side);
	/* no side file now: a clear error */
	EXPECT_EQ(1, run_daptrace(A("report", "objects", rec), out, sizeof(out)));
	unlink(rec);
	rmdir(dir);
}

TEST_HARNESS_MAIN
