// SPDX-License-Identifier: GPL-2.0
/*
 * Privileges: every file is root-only (other users get EACCES from open),
 * and every write needs CAP_SYS_ADMIN (root without it gets EPERM from
 * write).  Refused writes change nothing.  The unprivileged side runs in a
 * forked child that reports its errnos through shared memory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <grp.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"

#define NOBODY		65534
#define MAX_FILES	64

struct result {
	char name[64];
	int rd_err;		/* errno of open(O_RDONLY), 0 if it opened */
	int wr_err;		/* errno of open(O_WRONLY) or of write() */
	int read_err;		/* errno of read() after open, 0 if it worked */
};

struct results {
	int nr;
	int setup_err;		/* errno of dropping privileges, 0 if done */
	struct result r[MAX_FILES];
};

static struct results *shared_results(void)
{
	struct results *res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (res == MAP_FAILED)
		return NULL;
	memset(res, 0, sizeof(*res));
	return res;
}

/* Become uid/gid 65534 with no supplementary groups (and so no caps). */
static int drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return errno;
	return 0;
}

/* Stay root but lose CAP_SYS_ADMIN. */
static int drop_cap_sys_admin(void)
{
	int err = dt_drop_cap(CAP_SYS_ADMIN);

	if (err)
		return err;
	/* Prove it: a CAP_SYS_ADMIN-only operation must fail now. */
	if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0)
		return EPROTO;
	return 0;
}

FIXTURE(privs) {
	pid_t target;
};

FIXTURE_SETUP(privs)
{
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset()) TH_LOG("cannot reset daptrace to defaults");
	self->target = dt_spawn(0, 0);
	ASSERT_LT(0, self->target) TH_LOG("spawn a target process");
	ASSERT_EQ(0, dt_add_target(self->target)) TH_LOG("add target as root");
}

FIXTURE_TEARDOWN(privs)
{
	dt_reset();
	dt_reap(self->target);
}

/* Another user can open nothing in the directory, for reading or writing. */
TEST_F(privs, other_users_cannot_open_any_file)
{
	struct results *res = shared_results();
	struct dirent *de;
	DIR *dir;
	pid_t pid;
	int i, status;

	ASSERT_NE(NULL, res);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		res->setup_err = drop_to_nobody();
		if (res->setup_err)
			_exit(1);
		dir = opendir(DT_SYSFS);
		if (!dir) {
			res->setup_err = errno;
			_exit(1);
		}
		while ((de = readdir(dir)) && res->nr < MAX_FILES) {
			struct result *r = &res->r[res->nr];
			char path[256];
			int fd;

			if (de->d_name[0] == '.')
				continue;
			res->nr++;
			dt_strlcpy(r->name, de->d_name, sizeof(r->name));
			dt_path(de->d_name, path, sizeof(path));
			fd = open(path, O_RDONLY);
			r->rd_err = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
			fd = open(path, O_WRONLY);
			r->wr_err = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
		}
		closedir(dir);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, res->setup_err)
		TH_LOG("becoming uid %d: %s", NOBODY, strerror(res->setup_err));
	ASSERT_LT(10, res->nr) TH_LOG("only %d files seen as nobody", res->nr);
	for (i = 0; i < res->nr; i++) {
		EXPECT_EQ(EACCES, res->r[i].rd_err)
			TH_LOG("uid %d open(%s, O_RDONLY): %s, want EACCES",
			       NOBODY, res->r[i].name, strerror(res->r[i].rd_err));
		EXPECT_EQ(EACCES, res->r[i].wr_err)
			TH_LOG("uid %d open(%s, O_WRONLY): %s, want EACCES",
			       NOBODY, res->r[i].name, strerror(res->r[i].wr_err));
	}
	munmap(res, sizeof(*res));
}

/*
 * Root without CAP_SYS_ADMIN may open (the files are root's) and read, but
 * every write fails with EPERM -- also writes that would succeed otherwise
 * -- and changes nothing.
 */
TEST_F(privs, root_without_cap_sys_admin_gets_eperm)
{
	char pidbuf[32];
	const struct { const char *file, *val; } writes[] = {
		{ "sample_us", "2000" }, { "aggr_us", "200000" },
		{ "update_us", "2000000" }, { "min_nr_regions", "20" },
		{ "max_nr_regions", "500" }, { "tlb_flush", "none" },
		{ "target", pidbuf }, { "target_remove", pidbuf },
		{ "state", "on" }, { "state", "off" },
	};
	const int nr = ARRAY_SIZE(writes);
	char before[DT_NR_CONFIG_FILES][64], buf[256];
	struct results *res = shared_results();
	pid_t pid, other;
	size_t j;
	int i, status;

	ASSERT_NE(NULL, res);
	other = dt_spawn(0, 0);
	ASSERT_LT(0, other);
	/* "target" would add @other, "target_remove" would remove @other. */
	for (j = 0; j < DT_NR_CONFIG_FILES; j++)
		ASSERT_LE(0, dt_read(dt_config_files[j], before[j], sizeof(before[j])));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		res->setup_err = drop_cap_sys_admin();
		if (res->setup_err)
			_exit(1);
		for (i = 0; i < nr; i++) {
			struct result *r = &res->r[i];
			char path[256];
			ssize_t n;
			int fd;

			snprintf(pidbuf, sizeof(pidbuf), "%d",
				 !strcmp(writes[i].file, "target_remove") ?
				 self->target : other);
			snprintf(r->name, sizeof(r->name), "%s=%s",
				 writes[i].file, writes[i].val);
			fd = open(dt_path(writes[i].file, path, sizeof(path)),
				  O_WRONLY);
			if (fd < 0) {
				r->wr_err = errno;
				continue;
			}
			n = write(fd, writes[i].val, strlen(writes[i].val));
			r->wr_err = n < 0 ? errno : 0;
			close(fd);
		}
		/* Reading needs no capability. */
		res->r[nr].read_err = dt_read("sample_us", buf, sizeof(buf)) < 0 ?
				      errno : 0;
		res->nr = nr;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, res->setup_err)
		TH_LOG("dropping CAP_SYS_ADMIN: %s", strerror(res->setup_err));
	ASSERT_EQ(nr, res->nr);
	for (i = 0; i < nr; i++)
		EXPECT_EQ(EPERM, res->r[i].wr_err)
			TH_LOG("write %s without CAP_SYS_ADMIN: %s, want EPERM",
			       res->r[i].name, strerror(res->r[i].wr_err));
	EXPECT_EQ(0, res->r[nr].read_err)
		TH_LOG("root without CAP_SYS_ADMIN should still read");

	for (j = 0; j < DT_NR_CONFIG_FILES; j++) {
		ASSERT_LE(0, dt_read(dt_config_files[j], buf, sizeof(buf)));
		EXPECT_STREQ(before[j], buf)
			TH_LOG("%s changed by a refused write", dt_config_files[j]);
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", self->target);
	ASSERT_LE(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_STREQ(pidbuf, buf) TH_LOG("target list changed by refused writes");
	ASSERT_LE(0, dt_read("state", buf, sizeof(buf)));
	EXPECT_STREQ("off", buf) TH_LOG("state changed by a refused write");
	dt_reap(other);
	munmap(res, sizeof(*res));
}

/*
 * The snapshots show other processes' address layout: reading them needs
 * CAP_SYS_ADMIN.  A root process without it gets EPERM from read().  For
 * the binary ring the opener's credentials count, so a descriptor opened
 * while it still had it keeps working; the text view checks the reader.
 */
TEST_F(privs, snapshot_reads_need_cap_sys_admin_of_opener)
{
	static const char * const files[] = { "snapshot", "snapshots" };
	struct results *res = shared_results();
	char buf[4096];
	pid_t pid;
	int i, status, early[2];

	ASSERT_NE(NULL, res);
	ASSERT_EQ(0, dt_set_attrs(5000, 20000, 1000000, 10, 1000));
	ASSERT_EQ(0, dt_write("state", "on"));
	while (dt_read_ll("snapshot_seq") < 2)
		dt_sleep_ms(10);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		for (i = 0; i < 2; i++)
			early[i] = open(dt_path(files[i], buf, sizeof(buf)), O_RDONLY);
		res->setup_err = drop_cap_sys_admin();
		if (res->setup_err)
			_exit(1);
		for (i = 0; i < 2; i++) {
			struct result *r = &res->r[i];
			int fd;

			dt_strlcpy(r->name, files[i], sizeof(r->name));
			fd = open(dt_path(files[i], buf, sizeof(buf)), O_RDONLY);
			r->rd_err = fd < 0 ? errno : 0;
			r->read_err = fd >= 0 && pread(fd, buf, sizeof(buf), 0) < 0 ?
				      errno : 0;
			if (fd >= 0)
				close(fd);
			/* wr_err: the early descriptor's read */
			r->wr_err = early[i] < 0 ? EBADF :
				    pread(early[i], buf, sizeof(buf), 0) <= 0 ? errno ?: ENODATA : 0;
		}
		res->nr = 2;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, res->setup_err)
		TH_LOG("dropping CAP_SYS_ADMIN: %s", strerror(res->setup_err));
	ASSERT_EQ(2, res->nr);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, res->r[i].rd_err) TH_LOG("open %s", res->r[i].name);
		EXPECT_EQ(EPERM, res->r[i].read_err)
			TH_LOG("read %s without CAP_SYS_ADMIN: %s, want EPERM",
			       res->r[i].name, strerror(res->r[i].read_err));
		EXPECT_EQ(i ? 0 : EPERM, res->r[i].wr_err)
			TH_LOG("read %s through a descriptor opened with CAP_SYS_ADMIN: %s",
			       res->r[i].name, strerror(res->r[i].wr_err));
	}
	/* And with the capability, reading works. */
	for (i = 0; i < 2; i++) {
		int fd = open(dt_path(files[i], buf, sizeof(buf)), O_RDONLY);

		ASSERT_LE(0, fd);
		EXPECT_LT(0, pread(fd, buf, sizeof(buf), 0)) TH_LOG("%s as root", files[i]);
		close(fd);
	}
	munmap(res, sizeof(*res));
}

TEST_HARNESS_MAIN
