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

/* The verified series are Kbuild's list, passed in by the Makefile. */
TEST_F(root, unverified_kernel_without_module)
{
	dt_module_why(self->dir, "6.8.0-31-generic", self->why, sizeof(self->why));
	EXPECT_NE(NULL, strstr(self->why, "kernel 6.8.0-31-generic is not of a series daptrace is "
			       "verified on (Linux " DAPTRACE_VERIFIED_SERIES ")"))
		TH_LOG("%s", self->why);
	EXPECT_NE(NULL, strstr(self->why, "DAPTRACE_UNVERIFIED=1 in /etc/dkms/daptrace.conf"))
		TH_LOG("%s", self->why);
	EXPECT_NE(NULL, strstr(self->why, "make install DAPTRACE_UNVERIFIED=1 KVER=6.8.0-31-generic"))
		TH_LOG("%s", self->why);
	/* "6.1" is verified, "6.10" is not */
	dt_module_why(self->dir, "6.10.3-amd64", self->why, sizeof(self->why));
	EXPECT_NE(NULL, strstr(self->why, "6.10.3-amd64 is not of a series")) TH_LOG("%s", self->why);
	dt_module_why(self->dir, "6.1.0-56-amd64", self->why, sizeof(self->why));
	EXPECT_EQ(NULL, strstr(self->why, "is not of a series")) TH_LOG("%s", self->why);
}

/* Built anyway (DAPTRACE_UNVERIFIED=1): diagnosed as any installed module. */
TEST_F(root, unverified_kernel_with_module)
{
	ASSERT_EQ(0, put(self->dir, "/lib/modules/6.8.0-31-generic/updates/dkms/daptrace.ko",
			 "\177ELF..."));
	dt_module_why(self->dir, "6.8.0-31-generic", self->why, sizeof(self->why));
	EXPECT_NE(NULL, strstr(self->why, "/updates/dkms/daptrace.ko) but not loaded: run 'modprobe daptrace'"))
		TH_LOG("%s", self->why);
}

TEST_F(root, not_installed)
{
	dt_module_why(self->dir, REL, self->why, sizeof(self->why));
	EXPECT_NE(NULL, strstr(self->why, "not installed for kernel " REL))
		TH_LOG("%s", self->why);
	EXPECT_NE(NULL, strstr(self->why, "daptrace-dkms"));
}

TEST_F(root, installed_not_loaded)
{
	ASSERT_EQ(0, put(self->dir, "/lib/modules/" REL "/updates/dkms/daptrace.ko",
			 "\177ELF..."));
	dt_module_why(self->dir, REL, self->why, sizeof(self->why));
	EXPECT_NE(NULL, strstr(self->why, "(/lib/modules/" REL "/updates/dkms/daptrace.ko) but not loaded: run 'modprobe daptrace'"))
		TH_LOG("%s", self->why);
}

TEST_F(root, lockdown_unsigned)
{
	ASSERT_EQ(0, put(self->dir, "/lib/modules/" REL "/updates/dkms/daptrace.ko",
			 "\177ELF..."));
	ASSERT_EQ(0, put(self->dir, "/sys/kernel/security/lockdown",
			 "none [integrity] confidentiality\n"));
	dt_module_why(self->dir, REL, self->why, sizeof(self->why));
	EXPECT_NE(NULL, strstr(self->why, "kernel lockdown (Secure Boot) admits only signed modules"))
		TH_LOG("%s", self->why);
	EXPECT_NE(NULL, strstr(self->why, "is not signed"));
	EXPECT_NE(NULL, strstr(self->why, "mokutil --import /var/lib/dkms/mok.pub"));
}

TEST_F(root, sig_enforce_signed)
{
	ASSERT_EQ(0, put(self->dir, "/lib/modules/" REL "/updates/daptrace.ko",
			 "\177ELF...~Module signature appended~\n"));
	ASSERT_EQ(0, put(self->dir, "/sys/kernel/security/lockdown",
			 "[none] integrity confidentiality\n"));
	ASSERT_EQ(0, put(self->dir, "/sys/module/module/parameters/sig_enforce", "Y\n"));
	dt_module_why(self->dir, REL, self->why, sizeof(self->why));
	EXPECT_NE(NULL, strstr(self->why, "module.sig_enforce admits only signed modules"))
		TH_LOG("%s", self->why);
	EXPECT_NE(NULL, strstr(self->why, "Key was rejected by service"));
	EXPECT_EQ(NULL, strstr(self->why, "is not signed"));
}

TEST_F(root, loaded_without_sysfs)
{
	ASSERT_EQ(0, put(self->dir, "/proc/modules",
			 "daptrace 98304 0 - Live 0x0 (OE)\n"));
	dt_module_why(self->dir, REL, self->why, sizeof(self->why));
	EXPECT_NE(NULL, strstr(self->why, "is loaded, but its sysfs directory is missing"))
		TH_LOG("%s", self->why);
}

TEST_HARNESS_MAIN
