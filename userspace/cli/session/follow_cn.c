// SPDX-License-Identifier: GPL-2.0-only
/* Process events from the kernel's connector (see follow_cn.h). */
#include <errno.h>
#include <stdalign.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "follow_cn.h"

/*
 * A fork storm (make -j, a shell loop) outruns the default socket buffer
 * quickly: ask for this much (SO_RCVBUFFORCE needs CAP_NET_ADMIN, which
 * listening needs anyway).  An overflow still only costs a rescan.
 */
#define CN_RCVBUF	(8 << 20)

static int one_event(const struct cn_msg *cn, struct cn_event *e)
{
	struct proc_event pe;

	/* the event's tail (the union) varies in size: copy what came */
	memset(&pe, 0, sizeof(pe));
	memcpy(&pe, cn->data, cn->len < sizeof(pe) ? cn->len : sizeof(pe));
	memset(e, 0, sizeof(*e));
	e->ts_ns = (int64_t)pe.timestamp_ns;
	switch (pe.what) {
	case PROC_EVENT_NONE:
		e->type = CN_EV_ACK;
		e->err = (int)pe.event_data.ack.err;
		return 1;
	case PROC_EVENT_FORK:
		e->type = CN_EV_FORK;
		e->pid = pe.event_data.fork.child_pid;
		e->tgid = pe.event_data.fork.child_tgid;
		e->ptgid = pe.event_data.fork.parent_tgid;
		return 1;
	case PROC_EVENT_EXEC:
		e->type = CN_EV_EXEC;
		e->pid = pe.event_data.exec.process_pid;
		e->tgid = pe.event_data.exec.process_tgid;
		return 1;
	case PROC_EVENT_EXIT:
		e->type = CN_EV_EXIT;
		e->pid = pe.event_data.exit.process_pid;
		e->tgid = pe.event_data.exit.process_tgid;
		e->ptgid = pe.event_data.exit.parent_tgid;
		return 1;
	default:
		return 0;
	}
}

/* Bytes of a proc_event up to the end of the member of @what we read. */
static size_t needed(uint32_t what)
{
	switch (what) {
	case PROC_EVENT_NONE:
		return offsetof(struct proc_event, event_data) + sizeof(struct { __u32 err; });
	case PROC_EVENT_FORK:
		return offsetof(struct proc_event, event_data) + sizeof(struct fork_proc_event);
	case PROC_EVENT_EXEC:
		return offsetof(struct proc_event, event_data) + sizeof(struct exec_proc_event);
	case PROC_EVENT_EXIT:
		/* parent_pid/tgid came in 4.x; the first fields are enough */
		return offsetof(struct proc_event, event_data) +
		       offsetof(struct exit_proc_event, parent_pid);
	default:
		return offsetof(struct proc_event, event_data);
	}
}

int cn_parse(const void *buf, size_t len, struct cn_event *ev, int max,
	     unsigned int *bad, int *lost)
{
	const struct nlmsghdr *nh = buf;
	int n = 0;

	/* NLMSG_OK takes an int length */
	if (len > INT32_MAX)
		len = INT32_MAX;
	for (int left = (int)len; NLMSG_OK(nh, left); nh = NLMSG_NEXT(nh, left)) {
		const struct cn_msg *cn = NLMSG_DATA(nh);
		size_t payload = nh->nlmsg_len - NLMSG_HDRLEN;
		uint32_t what;

		if (nh->nlmsg_type == NLMSG_NOOP)
			continue;
		if (nh->nlmsg_type == NLMSG_ERROR || nh->nlmsg_type == NLMSG_OVERRUN) {
			*lost = 1;
			continue;
		}
		if (payload < sizeof(*cn) || cn->len > payload - sizeof(*cn)) {
			(*bad)++;
			continue;
		}
		if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC)
			continue;
		if (cn->len < sizeof(uint32_t)) {
			(*bad)++;
			continue;
		}
		memcpy(&what, cn->data, sizeof(what));
		if (cn->len < needed(what)) {
			(*bad)++;
			continue;
		}
		if (n < max && one_event(cn, &ev[n]))
			n++;
	}
	return n;
}

static int subscribe(int fd, enum proc_cn_mcast_op op)
{
	/*
	 * The bare operation (4 bytes): kernels before 6.6 accept nothing
	 * else, later ones take it as "every event".
	 */
	alignas(struct nlmsghdr) char buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(op))];
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct cn_msg *cn = NLMSG_DATA(nh);

	memset(buf, 0, sizeof(buf));
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*cn) + sizeof(op));
	nh->nlmsg_type = NLMSG_DONE;
	cn->id.idx = CN_IDX_PROC;
	cn->id.val = CN_VAL_PROC;
	cn->len = sizeof(op);
	memcpy(cn->data, &op, sizeof(op));
	if (send(fd, buf, nh->nlmsg_len, 0) != (ssize_t)nh->nlmsg_len)
		return -errno;
	return 0;
}

int cn_open(void)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC, .nl_pid = 0,
	};
	int fd, size = CN_RCVBUF, err;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	err = subscribe(fd, PROC_CN_MCAST_LISTEN);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int cn_recv(int fd, struct cn_event *ev, int max, unsigned int *bad, int *lost)
{
	/* aligned for the nlmsghdr walk */
	alignas(struct nlmsghdr) char buf[16384];
	ssize_t len;

	do {
		len = recv(fd, buf, sizeof(buf), 0);
	} while (len < 0 && errno == EINTR);
	if (len < 0 && errno == ENOBUFS) {
		*lost = 1;
		return 0;
	}
	if (len < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return cn_parse(buf, (size_t)len, ev, max, bad, lost);
}

void cn_close(int fd)
{
	if (fd < 0)
		return;
	subscribe(fd, PROC_CN_MCAST_IGNORE);
	close(fd);
}
