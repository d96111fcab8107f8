// SPDX-License-Identifier: GPL-2.0
/*
 * Who may watch whom, beyond the access check at the write (abi/ptrace,
 * final/yama_no_attach):
 *
 * - A process whose main thread called pthread_exit() while another thread
 *   runs (a zombie leader without an mm) can be added, and is monitored.
 * - An exec() into an image the access check may no longer admit ends the
 *   watch: a setuid binary of another user, or an image its caller may not
 *   read (would_dump()).  The target reads "revoked" in target_status, no
 *   snapshot published after the new image ran holds its regions, and
 *   the window is flagged DAPTRACE_SNAP_TARGET_REVOKED, while another
 *   target is watched on; "off" and "on" do not bring it back.  An exec
 *   of an ordinary image keeps the watch (the control).
 *
 * The exec'ed image is this test binary itself, copied to /tmp with the
 * owner and mode each case needs: run with DT_WATCH_HELPER=<fd> in its
 * environment it only touches memory (helper_main()) and says so on <fd>.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"

#define HELPER_MIB	16

/* The exec'ed image: touch memory forever, after one byte to the fd. */
__attribute__((constructor)) static void helper_main(void)
{
	const char *fd_str = getenv("DT_WATCH_HELPER");
	volatile char *p;
	size_t off;
	int fd;

	if (!fd_str)
		return;
	fd = atoi(fd_str);
	p = mmap(NULL, HELPER_MIB << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(1);
	for (off = 0; off < (size_t)HELPER_MIB << 20; off += 4096)
		p[off] = 1;
	if (write(fd, "x", 1) != 1)
		_exit(1);
	close(fd);
	for (;;) {
		for (off = 0; off < (size_t)HELPER_MIB << 20; off += 4096)
			p[off]++;
		usleep(2000);
	}
}

/* Drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the effective set. */
static int drop_dac(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_TO_INDEX(CAP_DAC_OVERRIDE)].effective &=
		~CAP_TO_MASK(CAP_DAC_OVERRIDE);
	data[CAP_TO_INDEX(CAP_DAC_READ_SEARCH)].effective &=
		~CAP_TO_MASK(CAP_DAC_READ_SEARCH);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/* Copy this test binary to @path, then chown and chmod it. */
static int copy_self(const char *path, uid_t uid, gid_t gid, mode_t mode)
{
	char buf[65536];
	int in, out, err = 0;
	ssize_t n;

	in = open("/proc/self/exe", O_RDONLY);
	if (in < 0)
		return -errno;
	unlink(path);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0700);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			err = -EIO;
			break;
		}
	if (n < 0)
		err = -errno;
	close(in);
	close(out);
	/* chown() clears the set-id bits: mode last. */
	if (!err && (chown(path, uid, gid) || chmod(path, mode)))
		err = -errno;
	return err;
}

/* Process state letter in /proc/<pid>/stat, or 0. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Wait up to @ms for a snapshot newer than @after with regions of @pid. */
static bool wait_regions(pid_t pid, long long after, unsigned int ms)
{
	double t0 = dt_now_ms();
	long long seq;
	__u32 flags;

	while (dt_now_ms() - t0 < ms) {
		seq = dt_read_ll("snapshot_seq");
		if (seq > after && dt_snapshot_has_pid(seq, pid, &flags) == 1)
			return true;
		dt_sleep_ms(10);
	}
	return false;
}

static void *toucher(void *arg)
{
	volatile char *p = arg;
	size_t off;

	for (;;) {
		for (off = 0; off < (size_t)HELPER_MIB << 20; off += 4096)
			p[off]++;
		usleep(2000);
	}
	return NULL;
}

TEST(zombie_leader_can_be_added_and_is_monitored)
{
	char word[32];
	double t0;
	pid_t pid;

	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset());
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pthread_t th;
		char *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		p = mmap(NULL, HELPER_MIB << 20, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || pthread_create(&th, NULL, toucher, p))
			_exit(1);
		pthread_exit(NULL);
	}
	/* The leader is a zombie once its mm is gone; the process lives on. */
	t0 = dt_now_ms();
	while (proc_state(pid) != 'Z' && dt_now_ms() - t0 < 10000)
		dt_sleep_ms(10);
	ASSERT_EQ('Z', proc_state(pid)) TH_LOG("the leader never became a zombie");
	EXPECT_EQ(0, dt_add_target(pid)) TH_LOG("a process whose leader exited");
	if (dt_target_status(pid, word, sizeof(word)) == 0) {
		ASSERT_EQ(0, dt_set_attrs(2000, 20000, 200000, 10, 1000));
		ASSERT_EQ(0, dt_write("state", "on"));
		EXPECT_TRUE(wait_regions(pid, 0, 15000))
			TH_LOG("no snapshot with its regions within 15 s");
		ASSERT_EQ(0, dt_target_status(pid, word, sizeof(word)));
		EXPECT_STREQ("monitoring", word);
	}
	dt_reset();
	dt_reap(pid);
}

FIXTURE(exec) {
	pid_t pid;
	pid_t other;
	char helper[64];
	char suid_dumpable[8];
};

/*
 * @mode/@uid: the copy's; @drop_dac: the target drops its DAC override
 * capabilities before the exec (so a 0111 file is not readable to it);
 * @revoked: the expected outcome.
 */
FIXTURE_VARIANT(exec) {
	mode_t mode;
	uid_t uid;
	bool drop_dac;
	bool revoked;
};

FIXTURE_VARIANT_ADD(exec, ordinary_image_keeps_the_watch) {
	.mode = 0755, .uid = 0, .drop_dac = false, .revoked = false,
};

FIXTURE_VARIANT_ADD(exec, setuid_image_of_another_user_revokes) {
	.mode = 04755, .uid = 65534, .drop_dac = false, .revoked = true,
};

FIXTURE_VARIANT_ADD(exec, unreadable_image_revokes) {
	.mode = 0111, .uid = 0, .drop_dac = true, .revoked = true,
};

FIXTURE_SETUP(exec)
{
	self->pid = 0;
	self->other = 0;
	snprintf(self->helper, sizeof(self->helper), "/tmp/dt_watch_helper");
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset());
	ASSERT_EQ(0, copy_self(self->helper, variant->uid, variant->uid,
			       variant->mode));
}

FIXTURE_TEARDOWN(exec)
{
	dt_reset();
	if (self->pid > 0)
		dt_reap(self->pid);
	dt_reap(self->other);
	unlink(self->helper);
}

TEST_F_TIMEOUT(exec, watch_after_exec, 90)
{
	long long seq, next, newest, go_seq, k;
	int go[2], ready[2], lost = 0, seen = 0, r;
	struct pollfd pfd;
	char word[32], env[32], c = 0;
	__u32 flags, all_flags = 0;
	double t0;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (self->pid == 0) {
		char *argv[] = { "dt_watch_helper", NULL };
		char *envp[] = { env, NULL };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		close(ready[0]);
		snprintf(env, sizeof(env), "DT_WATCH_HELPER=%d", ready[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		if (variant->drop_dac && drop_dac())
			_exit(2);
		execve(self->helper, argv, envp);
		_exit(3);
	}
	close(go[0]);
	close(ready[1]);

	/* Watched before the exec, with another target that lives on. */
	self->other = dt_spawn(1 << 20, 4096);
	ASSERT_LT(0, self->other);
	ASSERT_EQ(0, dt_add_target(self->other));
	ASSERT_EQ(0, dt_add_target(self->pid));
	ASSERT_EQ(0, dt_set_attrs(2000, 20000, 200000, 10, 1000));
	ASSERT_EQ(0, dt_write("state", "on"));
	ASSERT_TRUE(wait_regions(self->pid, 0, 15000))
		TH_LOG("no regions of the target before the exec");

	/* The window that ends the watch may end before the new image says so. */
	go_seq = dt_read_ll("snapshot_seq");
	ASSERT_EQ(1, write(go[1], &c, 1));
	pfd.fd = ready[0];
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, 20000)) TH_LOG("the new image never ran");
	ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("exec failed");
	/* Every snapshot published from now on follows the new image's run. */
	seq = dt_read_ll("snapshot_seq");
	ASSERT_LE(0, seq);

	t0 = dt_now_ms();
	next = seq + 1;
	while (dt_now_ms() - t0 < 15000) {
		newest = dt_read_ll("snapshot_seq");
		for (; next <= newest; next++) {
			r = dt_snapshot_has_pid(next, self->pid, &flags);
			if (r < 0) {
				lost++;
				continue;
			}
			all_flags |= flags;
			if (r > 0 && !seen++)
				TH_LOG("snapshot %lld (after the exec) has regions of it",
				       next);
		}
		/* Revoked: a few more windows must come without its regions. */
		if (seen || (variant->revoked && next - seq > 6 &&
			     !dt_target_status(self->pid, word, sizeof(word)) &&
			     !strcmp(word, "revoked")))
			break;
		dt_sleep_ms(10);
	}
	/* The flags of every window since the exec was let go. */
	newest = dt_read_ll("snapshot_seq");
	for (k = go_seq + 1; k <= newest; k++)
		if (dt_snapshot_has_pid(k, self->pid, &flags) >= 0)
			all_flags |= flags;
	ASSERT_EQ(0, dt_target_status(self->pid, word, sizeof(word)));
	TH_LOG("status '%s', %lld snapshots after the exec, %d with its regions, "
	       "%d not read in time, flags seen %#x", word, next - seq - 1, seen,
	       lost, all_flags);
	if (variant->revoked) {
		EXPECT_STREQ("revoked", word);
		EXPECT_EQ(0, seen) TH_LOG("regions of the new image were published");
		EXPECT_TRUE(all_flags & DAPTRACE_SNAP_TARGET_REVOKED);
		EXPECT_LT(5, next - seq - 1) TH_LOG("too few windows after the exec");
		EXPECT_TRUE(dt_is_on()) TH_LOG("the other target is watched on");
		/* Sticky: "on" again does not bring it back. */
		EXPECT_EQ(0, dt_write("state", "off"));
		EXPECT_EQ(0, dt_write("state", "on"));
		ASSERT_EQ(0, dt_target_status(self->pid, word, sizeof(word)));
		EXPECT_STREQ("revoked", word) TH_LOG("after off and on");
		EXPECT_EQ(0, dt_write("state", "off"));
		/* The writer may ask again: the full check decides (root may). */
		EXPECT_EQ(0, dt_remove_target(self->pid));
		EXPECT_EQ(0, dt_add_target(self->pid));
	} else {
		EXPECT_STREQ("monitoring", word);
		EXPECT_LT(0, seen) TH_LOG("the new image is watched on");
	}
	close(go[1]);
	close(ready[0]);
}

TEST_HARNESS_MAIN
