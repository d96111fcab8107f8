// SPDX-License-Identifier: GPL-2.0
/*
 * The sysfs root of the module: /sys/kernel/daptrace is a directory owned
 * by root.
 */
#include <sys/stat.h>

#include "kselftest_harness.h"

#define DAPTRACE_SYSFS "/sys/kernel/daptrace"

TEST(sysfs_root_is_root_owned_dir)
{
	struct stat st;

	ASSERT_EQ(0, stat(DAPTRACE_SYSFS, &st)) {
		TH_LOG("stat %s: %s (is the module loaded?)",
		       DAPTRACE_SYSFS, strerror(errno));
	}
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(0, st.st_uid);
	EXPECT_EQ(0, st.st_gid);
}

TEST_HARNESS_MAIN
