// SPDX-License-Identifier: GPL-2.0
/*
 * Yama's ptrace_scope 3 ("no attach"): no process may attach to any other,
 * root with every capability included, so none may be made a target.  The
 * refusal is EACCES and leaves the targets already set as they were.
 * Scope 3 cannot be lowered again before the next boot: this suite
 * ("final") runs after every other test of the boot (mkinitramfs.sh).
 *
 * The check is made by opening the target's mem file in the writer's
 * /proc, and under scope 3 that open fails.  A writer with CAP_SYS_ADMIN
 * shapes its own mount namespace, though: it may make the mem path lead
 * to the target's environ in a procfs mounted elsewhere, a file that
 * holds the same mm after a PTRACE_MODE_READ check only (which Yama does
 * not restrict).  Through a bind mount or a symlink, that must not pass
 * for the check.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mount.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"

#define YAMA_SCOPE	"/proc/sys/kernel/yama/ptrace_scope"

/* Skip unless daptrace is loaded and Yama is built in; @fd: its scope. */
#define OPEN_YAMA_SCOPE_OR_SKIP(fd)					\
	do {								\
		DT_SKIP_UNLESS_LOADED();				\
		(fd) = open(YAMA_SCOPE, O_WRONLY);			\
		if ((fd) < 0 && errno == ENOENT)			\
			SKIP(return, "no Yama in this kernel (%s missing)", \
			     YAMA_SCOPE);				\
		ASSERT_LE(0, (fd));					\
	} while (0)

TEST(scope_3_refuses_every_target)
{
	pid_t before, after;
	char word[32];
	int fd;

	OPEN_YAMA_SCOPE_OR_SKIP(fd);
	ASSERT_EQ(0, dt_reset());
	before = dt_spawn(0, 0);
	ASSERT_LT(0, before);
	after = dt_spawn(0, 0);
	ASSERT_LT(0, after);
	ASSERT_EQ(0, dt_add_target(before)) TH_LOG("scope < 3: root may");

	ASSERT_EQ(1, write(fd, "3", 1));
	close(fd);
	EXPECT_EQ(-EACCES, dt_add_target(after)) TH_LOG("a child of the writer");
	EXPECT_EQ(-EACCES, dt_add_target(getppid())) TH_LOG("another process");
	EXPECT_EQ(-ENOENT, dt_target_status(after, word, sizeof(word)));
	EXPECT_EQ(0, dt_target_status(before, word, sizeof(word)))
		TH_LOG("the target set before stays");
	EXPECT_STREQ("idle", word);
	EXPECT_EQ(0, dt_remove_target(before)) TH_LOG("removing needs no attach");
	dt_reap(before);
	dt_reap(after);
}

#define OTHER_PROC	"/tmp/dt_other_proc"

enum redirect { BIND_MOUNT, SYMLINK };

/*
 * In a mount namespace of its own: a procfs at OTHER_PROC, and @pid's mem
 * paths in /proc (/proc/<pid>/mem and /proc/<pid>/task/<pid>/mem) led to
 * its environ there.  Returns 0 or -errno.
 */
static int redirect_mem(pid_t pid, enum redirect how)
{
	const char *mems[] = { "/proc/%d/mem", "/proc/%d/task/%d/mem" };
	char environ[64], path[64];
	unsigned int i;

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	mkdir(OTHER_PROC, 0700);
	if (mount("proc", OTHER_PROC, "proc", 0, NULL))
		return -errno;
	snprintf(environ, sizeof(environ), OTHER_PROC "/%d/environ", pid);
	if (how == SYMLINK) {
		/* A tmpfs over /proc with the pid's paths as symlinks. */
		if (mount("tmpfs", "/proc", "tmpfs", 0, NULL))
			return -errno;
		snprintf(path, sizeof(path), "/proc/%d", pid);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, pid);
		mkdir(path, 0755);
	}
	for (i = 0; i < sizeof(mems) / sizeof(mems[0]); i++) {
		snprintf(path, sizeof(path), mems[i], pid, pid);
		if (how == SYMLINK ? symlink(environ, path) :
		    mount(environ, path, NULL, MS_BIND, NULL))
			return -errno;
	}
	return 0;
}

struct redirect_outcome {
	int setup_err;	/* errno of building the redirection */
	int open_err;	/* errno of opening the redirected mem path */
	int add_err;	/* errno of writing the target */
};

/* In a forked writer: redirect @pid's mem file, then try to add @pid. */
static void try_redirected(struct redirect_outcome *out, pid_t pid,
			   enum redirect how)
{
	char path[64];
	pid_t w = fork();
	int fd;

	if (w < 0) {
		out->setup_err = errno;
		return;
	}
	if (w == 0) {
		out->setup_err = -redirect_mem(pid, how);
		if (out->setup_err)
			_exit(0);
		/* The redirection works: the path opens, environ's check. */
		snprintf(path, sizeof(path), "/proc/%d/mem", pid);
		fd = open(path, O_RDONLY);
		out->open_err = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		out->add_err = -dt_add_target(pid);
		_exit(0);
	}
	waitpid(w, NULL, 0);
}

static void scope_3_redirected(struct __test_metadata *_metadata,
			       enum redirect how)
{
	struct redirect_outcome *out;
	pid_t pid;
	int fd;

	OPEN_YAMA_SCOPE_OR_SKIP(fd);
	/* Scope 3 is final once set; writing it again is allowed. */
	ASSERT_EQ(1, write(fd, "3", 1));
	close(fd);
	ASSERT_EQ(0, dt_reset());
	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, out);
	pid = dt_spawn(0, 0);
	ASSERT_LT(0, pid);
	try_redirected(out, pid, how);
	dt_reap(pid);
	ASSERT_EQ(0, out->setup_err) TH_LOG("redirection: %s", strerror(out->setup_err));
	ASSERT_EQ(0, out->open_err)
		TH_LOG("the redirected path does not open: %s", strerror(out->open_err));
	EXPECT_EQ(EACCES, out->add_err)
		TH_LOG("added through environ: %s", strerror(out->add_err));
	EXPECT_EQ(0, dt_read_ll("nr_targets"));
	dt_reset();
}

TEST(scope_3_mem_bind_mounted_to_environ_refused)
{
	scope_3_redirected(_metadata, BIND_MOUNT);
}

TEST(scope_3_mem_symlinked_to_environ_refused)
{
	scope_3_redirected(_metadata, SYMLINK);
}

TEST_HARNESS_MAIN
