// SPDX-License-Identifier: GPL-2.0-only
/*
 * `record --objects`: start the command under the LD_PRELOAD tracer, watch
 * the target's maps and threads while it runs, and when it is done write
 * <record>.objects.csv: globals (libelf), heap/mmap objects (the tracer's
 * log, call sites named with libdw) and thread stacks.
 *
 * Thread stacks come from the tracer (pthread_getattr_np at thread start,
 * exact).  Without it (-p, static binaries) they come from each thread's
 * stack pointer in /proc/PID/task/TID/syscall, which only a thread blocked
 * in the kernel reports (a running one says "running"; kstkesp in stat is 0
 * on current kernels), and the main thread's [stack] mapping.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "objects.h"
#include "objects_record.h"

#define CMD "record"

/*
 * The log fd is inherited by the command and its descendants; a program that
 * closes what it inherited reuses the low numbers first, so the log sits far
 * above them (the tracer also checks it is still this file).
 */
#define OBJ_LOG_FD_MIN 1000

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* DIR/OBJ_LIB_NAME resolved (the name the target's maps will show), or NULL. */
static char *tracer_in(const char *dir)
{
	char *path, *real;

	if (asprintf(&path, "%s/%s", dir, OBJ_LIB_NAME) < 0)
		return NULL;
	real = realpath(path, NULL);
	free(path);
	if (real && !access(real, R_OK))
		return real;
	free(real);
	return NULL;
}

/*
 * The tracer next to the CLI (build tree), where `make install` put it, or
 * in <prefix>/lib/daptrace beside a relocated <prefix>/bin.
 */
static char *find_tracer(void)
{
	const char *env = getenv("DAPTRACE_OBJTRACE_LIB");
	char self[PATH_MAX], *slash, *lib, *rel;
	ssize_t n;

	if (env && *env)
		return realpath(env, NULL);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	lib = tracer_in(self);
	if (!lib)
		lib = tracer_in(DAPTRACE_OBJTRACE_DIR);
	if (!lib && asprintf(&rel, "%s/../lib/daptrace", self) >= 0) {
		lib = tracer_in(rel);
		free(rel);
	}
	return lib;
}

int objrec_prepare(struct objrec *r, const char *record, uint64_t min, int launching)
{
	char *lib, *preload;
	const char *old = getenv("LD_PRELOAD");
	struct stat st;
	int fd;

	r->min = min;
	r->log_fd = -1;
	r->side_path = obj_side_path(record);
	if (!r->side_path)
		return fail(CMD, "out of memory");
	if (!launching) {
		r->no_tracer = "target already running (-p): LD_PRELOAD is impossible, "
			       "heap objects are anonymous mappings only";
		return 0;
	}
	lib = find_tracer();
	if (!lib)
		return fail(CMD, "--objects: %s not found next to the daptrace binary "
			    "or in %s (set DAPTRACE_OBJTRACE_LIB)", OBJ_LIB_NAME,
			    DAPTRACE_OBJTRACE_DIR);
	if (asprintf(&r->log_path, "%.*s.objlog", (int)(strlen(r->side_path) - 4),
		     r->side_path) < 0) {
		free(lib);
		return fail(CMD, "out of memory");
	}
	/* O_APPEND: each tracer line is one write, never interleaved */
	r->log_fd = open(r->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (r->log_fd < 0 || fstat(r->log_fd, &st)) {
		free(lib);
		return fail(CMD, "--objects: %s: %s", r->log_path, strerror(errno));
	}
	/* no CLOEXEC: the command must inherit it; below the limit: keep it */
	fd = fcntl(r->log_fd, F_DUPFD, OBJ_LOG_FD_MIN);
	if (fd >= 0) {
		close(r->log_fd);
		r->log_fd = fd;
	}
	if (old && *old)
		r->saved_preload = strdup(old);
	if (asprintf(&preload, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "") < 0) {
		free(lib);
		return fail(CMD, "out of memory");
	}
	free(lib);
	setenv("LD_PRELOAD", preload, 1);
	free(preload);
	{
		char v[48];

		snprintf(v, sizeof(v), "%d", r->log_fd);
		setenv("DAPTRACE_OBJTRACE_FD", v, 1);
		/* which file that fd must be, or the tracer writes nothing */
		snprintf(v, sizeof(v), "%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
		setenv("DAPTRACE_OBJTRACE_FILE", v, 1);
		snprintf(v, sizeof(v), "%" PRIu64, min);
		setenv("DAPTRACE_OBJTRACE_MIN", v, 1);
	}
	r->traced = 1;
	return 0;
}

void objrec_forked(struct objrec *r)
{
	if (!r->traced)
		return;
	/* the child has it; our own later children (gnuplot) must not */
	if (r->saved_preload)
		setenv("LD_PRELOAD", r->saved_preload, 1);
	else
		unsetenv("LD_PRELOAD");
	unsetenv("DAPTRACE_OBJTRACE_FD");
	unsetenv("DAPTRACE_OBJTRACE_FILE");
	unsetenv("DAPTRACE_OBJTRACE_MIN");
	close(r->log_fd);
	r->log_fd = -1;
}

static void maps_clear(struct objrec *r)
{
	for (size_t i = 0; i < r->nr_maps; i++)
		free(r->maps[i].path);
	free(r->maps);
	r->maps = NULL;
	r->nr_maps = 0;
}

static int read_maps(struct objrec *r, pid_t pid)
{
	char path[64], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	maps_clear(r);
	while (fgets(line, sizeof(line), f)) {
		uint64_t s, e, off;
		int name_at = 0;
		struct objrec_map *m;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n",
			   &s, &e, &off, &name_at) < 3)
			continue;
		m = realloc(r->maps, (r->nr_maps + 1) * sizeof(*m));
		if (!m)
			break;
		r->maps = m;
		m = &r->maps[r->nr_maps++];
		line[strcspn(line, "\n")] = '\0';
		m->start = s;
		m->end = e;
		m->offset = off;
		m->path = strdup(name_at ? line + name_at : "");
	}
	fclose(f);
	return 0;
}

static const struct objrec_map *map_at(const struct objrec *r, uint64_t addr)
{
	for (size_t i = 0; i < r->nr_maps; i++)
		if (addr >= r->maps[i].start && addr < r->maps[i].end)
			return &r->maps[i];
	return NULL;
}

/* Stack pointers of threads blocked in the kernel. */
static void read_thread_stacks(struct objrec *r, pid_t pid, int64_t now)
{
	char path[64], buf[512];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *last, *sp_s;
		const struct objrec_map *m;
		uint64_t sp;
		int tid = atoi(de->d_name), fd, known = 0;
		ssize_t n;

		if (tid <= 0 || tid == pid)
			continue;	/* the main thread has [stack] */
		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		/* "nr a1..a6 sp pc", "-1 sp pc" or "running" */
		last = strrchr(buf, ' ');
		if (!last)
			continue;
		*last = '\0';
		sp_s = strrchr(buf, ' ');
		if (!sp_s || sscanf(sp_s + 1, "%" SCNx64, &sp) != 1)
			continue;
		m = map_at(r, sp);
		if (!m || m->path[0] == '/')
			continue;
		for (size_t i = 0; i < r->nr_tstacks; i++)
			known |= r->tstacks[i].tid == tid;
		if (!known) {
			struct objrec_tstack *t = realloc(r->tstacks, (r->nr_tstacks + 1) *
							  sizeof(*t));

			if (!t)
				break;
			r->tstacks = t;
			r->tstacks[r->nr_tstacks++] = (struct objrec_tstack){
				.tid = tid, .start = m->start, .end = m->end, .seen_ns = now,
			};
		}
	}
	closedir(d);
}

void objrec_poll(struct objrec *r, pid_t pid, int64_t t0)
{
	char self[PATH_MAX], exe[PATH_MAX], path[64];
	ssize_t a, b;

	if (!r->side_path)
		return;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	a = readlink("/proc/self/exe", self, sizeof(self) - 1);
	b = readlink(path, exe, sizeof(exe) - 1);
	if (a <= 0 || b <= 0)
		return;
	self[a] = exe[b] = '\0';
	if (!strcmp(self, exe))
		return;		/* not exec'ed yet: that map is ours */
	if (read_maps(r, pid))
		return;
	free(r->exe);
	r->exe = strdup(exe);
	r->nr_polls++;
	read_thread_stacks(r, pid, mono_ns() - t0);
}

static int overlaps_stack(const struct obj_set *s, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].kind == OBJ_STACK && s->v[i].start < end && start < s->v[i].end)
			return 1;
	return 0;
}

/* Modules from the maps when the tracer did not list them. */
static void modules_from_maps(struct objrec *r, struct obj_set *s)
{
	for (size_t i = 0; i < r->nr_maps; i++) {
		const struct objrec_map *m = &r->maps[i];
		uint64_t bias;
		int dup = 0;

		if (m->offset || m->path[0] != '/')
			continue;
		/* the tracer's list is exact; its paths may be spelled otherwise */
		for (size_t j = 0; j < s->nr_mods; j++)
			dup |= s->mods[j].image == s->image &&
			       (!strcmp(s->mods[j].path, m->path) ||
				(m->start >= s->mods[j].start && m->start < s->mods[j].end));
		if (!dup && !obj_elf_bias(m->path, m->start, &bias))
			obj_add_module(s, m->start, m->end, bias, m->path);
	}
}

/* Stacks and, without the tracer, anonymous mappings as objects. */
static void objects_from_maps(struct objrec *r, struct obj_set *s, pid_t pid)
{
	for (size_t i = 0; i < r->nr_maps; i++) {
		const struct objrec_map *m = &r->maps[i];
		struct obj *o;

		if (!strcmp(m->path, "[stack]")) {
			o = obj_add(s);
			if (!o)
				return;
			o->kind = OBJ_STACK;
			o->name = strdup("Stack#0");
			o->tid = pid;
		} else if (!r->traced && (!m->path[0] || !strcmp(m->path, "[heap]")) &&
			   m->end - m->start >= r->min) {
			if (overlaps_stack(s, m->start, m->end))
				continue;
			o = obj_add(s);
			if (!o)
				return;
			o->kind = OBJ_MMAP;
			if (asprintf(&o->name, "%s@%#" PRIx64, m->path[0] ? m->path : "[anon]",
				     m->start) < 0)
				o->name = NULL;
			o->source = strdup("/proc/PID/maps");
		} else {
			continue;
		}
		o->start = m->start;
		o->end = m->end;
	}
	for (size_t i = 0; i < r->nr_tstacks; i++) {
		const struct objrec_tstack *t = &r->tstacks[i];
		struct obj *o;

		if (overlaps_stack(s, t->start, t->end))
			continue;
		o = obj_add(s);
		if (!o)
			return;
		o->kind = OBJ_STACK;
		o->start = t->start;
		o->end = t->end;
		o->tid = t->tid;
		o->alloc_ns = t->seen_ns;
	}
}

int objrec_finish(struct objrec *r, pid_t pid, int64_t t0)
{
	struct obj_log_stats st = { 0 };
	struct obj_set s = { 0 };
	const char *exe = NULL;
	size_t nr[OBJ_NR_KINDS] = { 0 }, nr_unnamed = 0;
	char reasons[512] = "";
	int is_static = -1, ret = 0;
	FILE *f;

	if (!r->side_path)
		return 0;
	obj_meta_set(&s, "pid", "%d", (int)pid);
	obj_meta_set(&s, "min_size", "%" PRIu64, r->min);
	if (r->traced) {
		f = fopen(r->log_path, "re");
		if (!f)
			return fail(CMD, "--objects: %s: %s", r->log_path, strerror(errno));
		ret = obj_log_parse(f, pid, t0, &s, &st);
		fclose(f);
		if (ret)
			return fail(CMD, "--objects: reading %s: %s", r->log_path,
				    strerror(-ret));
		obj_meta_set(&s, "log", "%s", r->log_path);
		obj_meta_set(&s, "log_lines", "%" PRIu64, st.lines);
		obj_meta_set(&s, "log_bad_lines", "%" PRIu64, st.bad_lines);
		obj_meta_set(&s, "log_other_pid_lines", "%" PRIu64, st.other_pid);
		obj_meta_set(&s, "log_lost_writes", "%" PRIu64, st.lost_writes);
		obj_meta_set(&s, "execs", "%" PRIu64, st.images ? st.images - 1 : 0);
		obj_meta_set(&s, "unmatched_frees", "%" PRIu64, st.unmatched_frees);
		obj_meta_set(&s, "partial_unmaps", "%" PRIu64, st.partial_unmaps);
		exe = st.exe;
	}
	if (!exe)
		exe = r->exe;
	if (exe) {
		is_static = obj_elf_is_static(exe);
		obj_meta_set(&s, "exe", "%s", exe);
	}
	if (is_static == 1 && !r->no_tracer)
		r->no_tracer = "statically linked: LD_PRELOAD cannot interpose, "
			       "globals and stacks only";
	obj_meta_set(&s, "linkage", "%s", is_static < 0 ? "unknown" :
		     is_static ? "static" : "dynamic");
	obj_meta_set(&s, "tracer", "%s", r->traced && st.seen ? "yes" :
		     r->no_tracer ? r->no_tracer : "no: the tracer never logged");
	modules_from_maps(r, &s);
	for (size_t i = 0; i < s.nr_mods; i++) {
		const char *base = strrchr(s.mods[i].path, '/');

		if (s.mods[i].image != s.image ||
		    !strcmp(base ? base + 1 : s.mods[i].path, OBJ_LIB_NAME))
			continue;	/* gone with an exec; the tracer's own data */
		if (obj_elf_globals(&s, s.mods[i].path, s.mods[i].bias, r->min) < 0)
			warn_msg(CMD, "--objects: no symbols from %s", s.mods[i].path);
	}
	objects_from_maps(r, &s, pid);
	if (obj_symbolise(&s) < 0)
		warn_msg(CMD, "--objects: some call sites cannot be named (libdw)");
	if (exe && obj_elf_has_symtab(exe) == 0)
		obj_meta_set(&s, "note_symbols", "%s has no symbol table (stripped): its "
			     "static globals are missing, exported ones come from .dynsym", exe);
	for (size_t i = 0; i < s.n; i++)
		nr_unnamed += (s.v[i].kind == OBJ_HEAP || s.v[i].kind == OBJ_MMAP) &&
			      !s.v[i].source;
	obj_meta_set(&s, "call_sites_without_line", "%zu", nr_unnamed);

#define REASON(cond, ...) do { if (cond) { size_t l = strlen(reasons); \
	snprintf(reasons + l, sizeof(reasons) - l, "%s", l ? "; " : ""); \
	l = strlen(reasons); snprintf(reasons + l, sizeof(reasons) - l, __VA_ARGS__); } } while (0)
	REASON(st.truncated, "the object log ends in a cut line");
	REASON(st.bad_lines, "%" PRIu64 " malformed log lines", st.bad_lines);
	REASON(st.lost_writes, "the tracer failed %" PRIu64 " writes", st.lost_writes);
	REASON(st.log_closed, "the target closed or replaced the tracer's log fd: "
	       "nothing after that was logged");
	REASON(r->traced && st.seen && st.no_exit,
	       "the target did not exit normally (no end marker): frees after the "
	       "last logged line are unknown");
	REASON(r->traced && !st.seen && is_static != 1,
	       "the tracer never logged (not loaded? setuid binary?)");
	REASON(!r->nr_polls, "the target's maps were never read after exec "
	       "(it ran < 250 ms): no main stack%s", s.nr_mods ? "" : ", no globals");
#undef REASON
	obj_meta_set(&s, "partial", "%s", reasons[0] ? "yes" : "no");
	if (reasons[0])
		obj_meta_set(&s, "partial_reasons", "%s", reasons);

	f = fopen(r->side_path, "w");
	if (!f) {
		ret = fail(CMD, "--objects: %s: %s", r->side_path, strerror(errno));
	} else {
		if (obj_write(f, &s) | fclose(f))
			ret = fail(CMD, "--objects: writing %s failed", r->side_path);
	}
	for (size_t i = 0; i < s.n; i++)
		nr[s.v[i].kind]++;
	if (!ret)
		fprintf(stderr, "%s %s: objects: %zu globals, %zu heap, %zu mmap, %zu stacks "
			"written to %s\n", prog, CMD, nr[OBJ_GLOBAL], nr[OBJ_HEAP],
			nr[OBJ_MMAP], nr[OBJ_STACK], r->side_path);
	if (r->no_tracer)
		warn_msg(CMD, "--objects: %s", r->no_tracer);
	if (reasons[0])
		warn_msg(CMD, "--objects: partial: %s", reasons);
	if (obj_meta_get(&s, "note_symbols"))
		warn_msg(CMD, "--objects: %s", obj_meta_get(&s, "note_symbols"));
	if (nr_unnamed)
		warn_msg(CMD, "--objects: %zu call sites have no line information (no debug "
			 "info): named function+offset or by address", nr_unnamed);
	obj_log_stats_free(&st);
	obj_set_free(&s);
	return ret;
}

void objrec_free(struct objrec *r)
{
	if (r->side_path && r->log_fd >= 0)
		close(r->log_fd);
	maps_clear(r);
	free(r->tstacks);
	free(r->exe);
	free(r->log_path);
	free(r->side_path);
	free(r->saved_preload);
	memset(r, 0, sizeof(*r));
	r->log_fd = -1;
}
