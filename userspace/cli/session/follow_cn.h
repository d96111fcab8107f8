/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's process events connector (netlink NETLINK_CONNECTOR,
 * CN_IDX_PROC; CONFIG_PROC_EVENTS): fork, exec and exit of every process,
 * as they happen.  Listening needs CAP_NET_ADMIN in the initial user and
 * pid namespaces; elsewhere the kernel refuses or stays silent.  Messages
 * can be lost when the socket's buffer overflows (ENOBUFS): the caller
 * then rescans /proc.
 */
#ifndef DAPTRACE_FOLLOW_CN_H
#define DAPTRACE_FOLLOW_CN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum cn_event_type {
	CN_EV_FORK,		/* a new task: a process if pid == tgid */
	CN_EV_EXEC,
	CN_EV_EXIT,		/* a task (thread) ended */
	CN_EV_ACK,		/* the kernel's answer to a (un)subscription */
};

struct cn_event {
	enum cn_event_type type;
	pid_t pid, tgid;	/* FORK: the child's */
	pid_t ptgid;		/* FORK: the parent's process; EXIT: its parent's */
	int64_t ts_ns;		/* CLOCK_MONOTONIC, when it happened */
	int err;		/* ACK: 0 or an errno */
};

/*
 * Parse one datagram of netlink messages into at most @max events.
 * Returns the number stored; messages of other connectors and other
 * process events (uid, sid, comm, ...) are skipped; malformed or cut ones
 * are counted in *@bad; an NLMSG_OVERRUN or NLMSG_ERROR sets *@lost.
 */
int cn_parse(const void *buf, size_t len, struct cn_event *ev, int max,
	     unsigned int *bad, int *lost);
/*
 * Open a non-blocking socket listening to process events.  Returns the
 * descriptor or -errno (EPERM: no CAP_NET_ADMIN; EPROTONOSUPPORT: no
 * connector in the kernel).
 */
int cn_open(void);
/*
 * Read one datagram: the number of events (0: a message without any),
 * or -EAGAIN when nothing is pending; *@lost is set when the kernel
 * dropped messages (ENOBUFS, an overrun).
 */
int cn_recv(int fd, struct cn_event *ev, int max, unsigned int *bad, int *lost);
void cn_close(int fd);

#endif
