// SPDX-License-Identifier: GPL-2.0
/*
 * Who may watch whom: writing a target goes through the kernel's ptrace
 * access check in the writer's context (PTRACE_MODE_ATTACH, with the LSMs
 * and Yama), not through CAP_SYS_ADMIN alone.  With Yama's ptrace_scope 2
 * (attach only with CAP_SYS_PTRACE) a writer that holds CAP_SYS_ADMIN but
 * not CAP_SYS_PTRACE is refused for any process, its own child too; with
 * scope 1 (descendants only) it may watch its child but no other process.
 * A refusal is EACCES, as opening /proc/<pid>/mem gives it.
 * Scope 3 would forbid every attach until the next boot and so end every
 * later test of the boot; scope 2 refuses the same way a writer without
 * CAP_SYS_PTRACE.  The writers run in forked children and report their
 * errnos through shared memory; the scope is restored afterwards.
 */
#define _GNU_SOURCE
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"

#define YAMA_SCOPE	"/proc/sys/kernel/yama/ptrace_scope"

struct outcome {
	int setup_err;		/* errno of dropping CAP_SYS_PTRACE */
	int other_err;		/* adding a process that is not its child */
	int child_err;		/* adding its own child */
};


static int write_scope(int scope)
{
	int fd = open(YAMA_SCOPE, O_WRONLY), err = 0;
	char v = '0' + scope;

	if (fd < 0)
		return -errno;
	if (write(fd, &v, 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

static int read_scope(void)
{
	int fd = open(YAMA_SCOPE, O_RDONLY);
	char v = 0;

	if (fd < 0)
		return -1;
	if (read(fd, &v, 1) != 1)
		v = 0;
	close(fd);
	return v >= '0' && v <= '3' ? v - '0' : -1;
}

/*
 * In a forked writer without CAP_SYS_PTRACE: add @other, then a child of
 * its own; remove what was added.
 */
static void try_as_writer(struct outcome *out, pid_t other)
{
	pid_t child, w = fork();

	if (w < 0) {
		out->setup_err = errno;
		return;
	}
	if (w == 0) {
		out->setup_err = dt_drop_cap(CAP_SYS_PTRACE);
		if (out->setup_err)
			_exit(0);
		out->other_err = -dt_add_target(other);
		if (!out->other_err)
			dt_remove_target(other);
		child = dt_spawn(0, 0);
		if (child < 0) {
			out->setup_err = -child;
			_exit(0);
		}
		out->child_err = -dt_add_target(child);
		if (!out->child_err)
			dt_remove_target(child);
		dt_reap(child);
		_exit(0);
	}
	waitpid(w, NULL, 0);
}

FIXTURE(ptrace) {
	pid_t other;
	int scope;
	struct outcome *out;
};

FIXTURE_SETUP(ptrace)
{
	self->other = 0;
	self->scope = -1;
	DT_SKIP_UNLESS_LOADED();
	self->scope = read_scope();
	if (self->scope < 0)
		SKIP(return, "no Yama in this kernel (%s missing)", YAMA_SCOPE);
	ASSERT_GT(3, self->scope) TH_LOG("Yama at scope 3 already: no attach at all");
	ASSERT_EQ(0, dt_reset());
	self->out = mmap(NULL, sizeof(*self->out), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->out);
	self->other = dt_spawn(0, 0);
	ASSERT_LT(0, self->other);
}

FIXTURE_TEARDOWN(ptrace)
{
	if (self->scope >= 0)
		write_scope(self->scope);
	if (self->other > 0)
		dt_reap(self->other);
	dt_reset();
}

TEST_F(ptrace, scope_2_needs_cap_sys_ptrace)
{
	ASSERT_EQ(0, write_scope(2));
	try_as_writer(self->out, self->other);
	ASSERT_EQ(0, self->out->setup_err) TH_LOG("%s", strerror(self->out->setup_err));
	EXPECT_EQ(EACCES, self->out->other_err)
		TH_LOG("another process: %s", strerror(self->out->other_err));
	EXPECT_EQ(EACCES, self->out->child_err)
		TH_LOG("its own child: %s", strerror(self->out->child_err));
	EXPECT_EQ(0, dt_read_ll("nr_targets")) TH_LOG("nothing added");
	/* With CAP_SYS_PTRACE, as this test has: allowed. */
	EXPECT_EQ(0, dt_add_target(self->other));
}

TEST_F(ptrace, scope_1_admits_descendants_only)
{
	ASSERT_EQ(0, write_scope(1));
	try_as_writer(self->out, self->other);
	ASSERT_EQ(0, self->out->setup_err) TH_LOG("%s", strerror(self->out->setup_err));
	EXPECT_EQ(EACCES, self->out->other_err)
		TH_LOG("another process: %s", strerror(self->out->other_err));
	EXPECT_EQ(0, self->out->child_err)
		TH_LOG("its own child: %s", strerror(self->out->child_err));
}

TEST_HARNESS_MAIN
