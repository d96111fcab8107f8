// SPDX-License-Identifier: GPL-2.0
/*
 * Out of memory while monitoring: a monitored child allocates in a memory
 * cgroup limited to 64 MiB until the OOM killer takes it, while a second
 * target outside the cgroup goes on.  The victim must be SIGKILLed by the
 * OOM killer (memory.events oom_kill), read "exited", and vanish from the
 * snapshots; the other target stays monitored; afterwards monitoring still
 * works from a fresh "on".  The worker pins the victim's mm for each
 * sampling round, so this also runs the OOM reaper against our walks.
 *
 * The kernel's OOM report dumps the allocating task's stack ("Call Trace:")
 * by design; the harness's log scans drop OOM reports
 * (selftests/vm/drop-oom-reports.awk) and still fail on anything else.
 */
#define _GNU_SOURCE
#include <sys/mount.h>

#include "kselftest_harness.h"
#include "stress.h"
#include "dt_cgroup.h"

#define CG		DT_CG_ROOT "/daptrace-oom"
#define LIMIT		"64M"

/* The hog's cgroup, its memory limited (and no swap); 0 or why not. */
static const char *setup_cgroup(void)
{
	const char *why = dt_cgroup_memory(CG);

	if (why)
		return why;
	if (dt_write_path(CG "/memory.max", LIMIT))
		return "cannot set memory.max";
	dt_write_path(CG "/memory.swap.max", "0");	/* absent without swap: fine */
	return NULL;
}

FIXTURE(oom) {
	pid_t hog, other;
	struct st_snap *snap;
	bool cgroup;
};

FIXTURE_SETUP(oom)
{
	const char *why;

	self->hog = self->other = 0;
	self->snap = NULL;
	self->cgroup = false;
	DT_SKIP_UNLESS_LOADED();
	why = setup_cgroup();
	if (why)
		SKIP(return, "%s", why);
	self->cgroup = true;
	ASSERT_EQ(0, dt_reset());
	self->snap = malloc(sizeof(*self->snap));
	ASSERT_NE(NULL, self->snap);
}

FIXTURE_TEARDOWN(oom)
{
	dt_reset();
	dt_reap(self->hog);
	dt_reap(self->other);
	if (self->cgroup)
		rmdir(CG);
	free(self->snap);
}

/* Allocate and touch 1 MiB at a time, forever (until the OOM killer). */
static void hog(int go_fd)
{
	size_t total = 0;
	char c, *p;
	size_t off;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(go_fd, &c, 1) != 1)
		_exit(2);
	for (;;) {
		p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(3);	/* not what we want: no OOM kill */
		for (off = 0; off < (1 << 20); off += 4096)
			p[off] = 1;
		total += 1 << 20;
		if (!(total % (8 << 20)))
			usleep(20000);	/* let the sampler see it grow */
	}
}

TEST_F_TIMEOUT(oom, oom_kill_of_a_target_while_monitoring, 180)
{
	long long ooms0, nsnap;
	int go[2], status, err;
	char pid_s[16];
	double t0;

	ooms0 = dt_read_key(CG "/memory.events", "oom_kill");
	ASSERT_EQ(0, pipe(go));
	self->hog = fork();
	ASSERT_LE(0, self->hog);
	if (!self->hog) {
		close(go[1]);
		hog(go[0]);
	}
	close(go[0]);
	snprintf(pid_s, sizeof(pid_s), "%d", self->hog);
	ASSERT_EQ(0, dt_write_path(CG "/cgroup.procs", pid_s));
	self->other = st_toucher(4, 1000);
	ASSERT_LT(0, self->other);
	ASSERT_EQ(0, dt_add_target(self->hog));
	ASSERT_EQ(0, dt_add_target(self->other));
	ASSERT_EQ(0, dt_set_attrs(1000, 10000, 10000, 10, 500));
	ASSERT_EQ(0, dt_write("state", "on"));
	ASSERT_LE(0, st_wait_ge("nr_snapshots", 3, 10000));

	t0 = dt_now_ms();
	ASSERT_EQ(1, write(go[1], "g", 1));
	status = dt_wait_exit(self->hog, 120000);
	ASSERT_NE(-1, status) TH_LOG("the hog was never OOM-killed");
	self->hog = -self->hog;	/* reaped; keep the pid for the checks */
	ksft_print_msg("hog died after %.1f s: status %#x\n",
		       (dt_now_ms() - t0) / 1000, status);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	EXPECT_LT(ooms0, dt_read_key(CG "/memory.events", "oom_kill"))
		TH_LOG("memory.events counts no OOM kill");

	EXPECT_LE(0, st_wait_status(-self->hog, "exited", 5000));
	EXPECT_LE(0, st_wait_status(self->other, "monitoring", 10));
	EXPECT_TRUE(dt_is_on());
	nsnap = dt_read_ll("snapshot_seq");
	EXPECT_LE(0, st_wait_ge("snapshot_seq", nsnap + 5, 10000))
		TH_LOG("snapshots stopped after the OOM kill");
	err = st_read_newest(self->snap);
	ASSERT_EQ(0, err);
	EXPECT_EQ(NULL, st_snap_problem(self->snap, &self->other, 1));
	EXPECT_LT(0, self->snap->nr);
	EXPECT_EQ(0, dt_write("state", "off"));
	self->hog = 0;

	/* Monitoring still works from scratch. */
	ASSERT_EQ(0, dt_reset());
	ASSERT_EQ(0, dt_add_target(self->other));
	ASSERT_EQ(0, dt_set_attrs(1000, 10000, 10000, 10, 500));
	ASSERT_EQ(0, dt_write("state", "on"));
	EXPECT_LE(0, st_wait_ge("nr_snapshots", 5, 10000));
	EXPECT_EQ(0, dt_write("state", "off"));
	EXPECT_EQ(0, st_wait_workers(0, 2000));
	close(go[1]);
}

TEST_HARNESS_MAIN
