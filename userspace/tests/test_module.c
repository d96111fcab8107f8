// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the tools say when /sys/kernel/daptrace is missing (lib/module.c), on
 * a fake root: /proc/modules, /lib/modules/<release>, the lockdown and
 * sig_enforce files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kselftest_harness.h"

void dt_module_why(const char *prefix, const char *release, char *buf,
		   size_t len);

#define REL "6.12.117+deb12-amd64"

/* Create @root@path (and its directories) holding @text. */
static int put(const char *root, const char *path, const char *text)
{
	char name[512], cmd[600];
	FILE *f;

	snprintf(name, sizeof(name), "%s%s", root, path);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", name);
	if (system(cmd))
		return -1;
	f = fopen(name, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

FIXTURE(root) {
	char dir[64];
	char why[1024];
};

FIXTURE_SETUP(root)
{
	strcpy(self->dir, "/tmp/dt-module-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, put(self->dir, "/proc/modules", "zram 1 0 - Live 0x0\n"));
}

FIXTURE_TEARDOWN(root)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	ASSERT_EQ(0, system(cmd));
}

/* dt_module_why() for kernel @release on the fake root, into self->why. */
static void why(FIXTURE_DATA(root) *self, const char *release)
{
	dt_module_why(self->dir, release, self->why, sizeof(self->why));
}

/* The diagnosis holds @text (or, for _LACKS, does not); shown if not. */
#define EXPECT_WHY_HAS(text) EXPECT_NE(NULL, strstr(self->why, text)) TH_LOG("%s", self->why)
#define EXPECT_WHY_LACKS(text) EXPECT_EQ(NULL, strstr(self->why, text)) TH_LOG("%s", self->why)

/* The verified series are Kbuild's list, passed in by the Makefile. */
TEST_F(root, unverified_kernel_without_module)
{
	why(self, "6.8.0-31-generic");
	EXPECT_WHY_HAS("kernel 6.8.0-31-generic is not of a series daptrace is "
		       "verified on (Linux " DAPTRACE_VERIFIED_SERIES ")");
	EXPECT_WHY_HAS("DAPTRACE_UNVERIFIED=1 in /etc/dkms/daptrace.conf");
	EXPECT_WHY_HAS("make install DAPTRACE_UNVERIFIED=1 KVER=6.8.0-31-generic");
	/* "6.1" is verified, "6.10" is not */
	why(self, "6.10.3-amd64");
	EXPECT_WHY_HAS("6.10.3-amd64 is not of a series");
	why(self, "6.1.0-56-amd64");
	EXPECT_WHY_LACKS("is not of a series");
}

/* Built anyway (DAPTRACE_UNVERIFIED=1): diagnosed as any installed module. */
TEST_F(root, unverified_kernel_with_module)
{
	ASSERT_EQ(0, put(self->dir, "/lib/modules/6.8.0-31-generic/updates/dkms/daptrace.ko",
			 "\177ELF..."));
	why(self, "6.8.0-31-generic");
	EXPECT_NE(NULL, strstr(self->why, "/updates/dkms/daptrace.ko) but not loaded: run 'modprobe daptrace'"))
		TH_LOG("%s", self->why);
}

TEST_F(root, not_installed)
{
	why(self, REL);
	EXPECT_WHY_HAS("not installed for kernel " REL);
	EXPECT_WHY_HAS("daptrace-dkms");
}

TEST_F(root, installed_not_loaded)
{
	ASSERT_EQ(0, put(self->dir, "/lib/modules/" REL "/updates/dkms/daptrace.ko",
			 "\177ELF..."));
	why(self, REL);
	EXPECT_WHY_HAS("(/lib/modules/" REL "/updates/dkms/daptrace.ko) but not loaded: run 'modprobe daptrace'");
}

TEST_F(root, lockdown_unsigned)
{
	ASSERT_EQ(0, put(self->dir, "/lib/modules/" REL "/updates/dkms/daptrace.ko",
			 "\177ELF..."));
	ASSERT_EQ(0, put(self->dir, "/sys/kernel/security/lockdown",
			 "none [integrity] confidentiality\n"));
	why(self, REL);
	EXPECT_WHY_HAS("kernel lockdown (Secure Boot) admits only signed modules");
	EXPECT_WHY_HAS("is not signed");
	EXPECT_WHY_HAS("mokutil --import /var/lib/dkms/mok.pub");
}

TEST_F(root, sig_enforce_signed)
{
	ASSERT_EQ(0, put(self->dir, "/lib/modules/" REL "/updates/daptrace.ko",
			 "\177ELF...~Module signature appended~\n"));
	ASSERT_EQ(0, put(self->dir, "/sys/kernel/security/lockdown",
			 "[none] integrity confidentiality\n"));
	ASSERT_EQ(0, put(self->dir, "/sys/module/module/parameters/sig_enforce", "Y\n"));
	why(self, REL);
	EXPECT_WHY_HAS("module.sig_enforce admits only signed modules");
	EXPECT_WHY_HAS("Key was rejected by service");
	EXPECT_WHY_LACKS("is not signed");
}

TEST_F(root, loaded_without_sysfs)
{
	ASSERT_EQ(0, put(self->dir, "/proc/modules",
			 "daptrace 98304 0 - Live 0x0 (OE)\n"));
	why(self, REL);
	EXPECT_WHY_HAS("is loaded, but its sysfs directory is missing");
}

TEST_HARNESS_MAIN
