// SPDX-License-Identifier: GPL-2.0
/*
 * Yama's ptrace_scope 3 ("no attach"): no process may attach to any other,
 * root with every capability included, so none may be made a target.  The
 * refusal is EACCES and leaves the targets already set as they were.
 * Scope 3 cannot be lowered again before the next boot: this suite
 * ("final") runs after every other test of the boot (mkinitramfs.sh).
 */
#include "kselftest_harness.h"
#include "daptrace_sysfs.h"

#define YAMA_SCOPE	"/proc/sys/kernel/yama/ptrace_scope"

TEST(scope_3_refuses_every_target)
{
	pid_t before, after;
	char word[32];
	int fd;

	if (getuid())
		SKIP(return, "needs root");
	if (!dt_loaded())
		SKIP(return, "daptrace not loaded (%s missing)", DT_SYSFS);
	fd = open(YAMA_SCOPE, O_WRONLY);
	if (fd < 0 && errno == ENOENT)
		SKIP(return, "no Yama in this kernel (%s missing)", YAMA_SCOPE);
	ASSERT_LE(0, fd);
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

TEST_HARNESS_MAIN
