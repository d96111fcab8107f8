// SPDX-License-Identifier: GPL-2.0-only
/*
 * Region labels from a maps table: the mapping that holds most of the
 * region, not the one at its start (issue 30, defect 5: a region of a
 * 200 KiB binary and 109 MiB of unmapped space was labelled with the
 * binary).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/maps.h"

static const char *const lines[] = {
	"00400000-00401000 r--p 00000000 08:01 42 /usr/bin/xz\n",
	"00401000-00430000 r-xp 00001000 08:01 42 /usr/bin/xz\n",
	"00430000-00432000 rw-p 00030000 08:01 42 /usr/bin/xz\n",
	"07000000-07400000 rw-p 00000000 00:00 0 [heap]\n",
	"7f0000000000-7f0000100000 rw-p 00000000 00:00 0\n",
	"7f0000100000-7f0000101000 r--p 00000000 08:01 7 /usr/lib/libc.so.6\n",
	"7f0000101000-7f0000102000 r-xp 00001000 08:01 7 /usr/lib/libc.so.6\n",
};

TEST(label_is_the_mapping_holding_most_of_the_region)
{
	struct maps m = { .pid = 1 };

	m.e = calloc(sizeof(lines) / sizeof(lines[0]), sizeof(*m.e));
	ASSERT_NE(NULL, m.e);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		ASSERT_EQ(0, maps_parse_line(lines[i], &m.e[m.n++]));
	/* inside one mapping */
	EXPECT_STREQ("/usr/bin/xz", maps_label(&m, 0x401000, 0x402000));
	EXPECT_STREQ("[heap]", maps_label(&m, 0x7000000, 0x7400000));
	/* xz's 200 KiB, then 109 MiB of nothing, then a bit of heap */
	EXPECT_STREQ("[unmapped]", maps_label(&m, 0x400000, 0x7001000));
	/* the heap's 4 MiB outweigh the hole before it */
	EXPECT_STREQ("[heap]", maps_label(&m, 0x6f00000, 0x7400000));
	/* a file's pieces count together: 2 pages of libc beat... nothing */
	EXPECT_STREQ("[anon]", maps_label(&m, 0x7f0000000000, 0x7f0000102000));
	EXPECT_STREQ("/usr/lib/libc.so.6", maps_label(&m, 0x7f00000ff000, 0x7f0000102000));
	/* xz's three mappings (0x32000 bytes) against a hole of 0x20000 */
	EXPECT_STREQ("/usr/bin/xz", maps_label(&m, 0x400000, 0x452000));
	EXPECT_STREQ("[unmapped]", maps_label(&m, 0x10000000, 0x20000000));
	maps_free(&m);
}

/*
 * A table read by maps_refresh() shares equal labels (maps_label() compares
 * pointers), the pieces of one file still count together where other
 * mappings lie between them, and freeing it frees each string once (the
 * unit tests run under valgrind and ASan).
 */
TEST(read_table_shares_equal_labels)
{
	char dir[] = "/tmp/daptrace-maps-XXXXXX", path[64];
	struct maps m = { .pid = 7 };
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/7", dir);
	ASSERT_EQ(0, mkdir(path, 0700));
	snprintf(path, sizeof(path), "%s/7/maps", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("1000-2000 r--p 00000000 08:01 7 /usr/lib/libc.so.6\n"
	      "2000-3000 rw-p 00000000 00:00 0\n"
	      "3000-4000 r-xp 00001000 08:01 7 /usr/lib/libc.so.6\n"
	      "4000-6000 rw-p 00000000 00:00 0\n"
	      "6000-7000 r--p 00000000 08:01 8 /usr/lib/libm.so.6\n"
	      "7000-8000 rw-p 00000000 00:00 0\n", f);
	fclose(f);
	m.proc = dir;
	ASSERT_EQ(0, maps_refresh(&m));
	ASSERT_EQ(6, m.n);
	EXPECT_EQ(m.e[0].label, m.e[2].label);
	EXPECT_EQ(m.e[1].label, m.e[3].label);
	EXPECT_EQ(m.e[1].label, m.e[5].label);
	EXPECT_NE(m.e[0].label, m.e[4].label);
	EXPECT_EQ(0, m.e[0].borrowed + m.e[1].borrowed + m.e[4].borrowed);
	/* libc's two pages beat each [anon] page beside them: they count together */
	EXPECT_STREQ("/usr/lib/libc.so.6", maps_label(&m, 0x1000, 0x4000));
	/* three [anon] pages, apart, beat libc's two */
	EXPECT_STREQ("[anon]", maps_label(&m, 0x1000, 0x6000));
	EXPECT_STREQ("/usr/lib/libm.so.6", maps_label(&m, 0x6000, 0x7000));
	/* read again: the old table is freed, the new one shares as well */
	ASSERT_EQ(0, maps_refresh(&m));
	EXPECT_EQ(m.e[1].label, m.e[5].label);
	maps_free(&m);
	unlink(path);
	snprintf(path, sizeof(path), "%s/7", dir);
	rmdir(path);
	rmdir(dir);
}

TEST_HARNESS_MAIN
