#include "port/rtnl.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { RTNL_BUF_SIZE = 4096 };

struct rtnl_req {
	struct nlmsghdr nh;
	struct ifinfomsg ifi;
	char attrs[256];
};

int rtnl_netns_open(const char *name)
{
	char path[128];
	if (snprintf(path, sizeof(path), "/run/netns/%s", name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int rtnl_netns_enter(int netns_fd, int *home)
{
	*home = -1;
	if (netns_fd < 0)
		return 0;
	int fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(netns_fd, CLONE_NEWNET) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	*home = fd;
	return 0;
}

void rtnl_netns_leave(int home)
{
	if (home < 0)
		return;
	if (setns(home, CLONE_NEWNET) < 0) {
		/* Stuck in the wrong namespace: nothing sane to continue with. */
		perror("setns back to the daemon's namespace");
		_exit(1);
	}
	close(home);
}

/* A NETLINK_ROUTE socket created inside `netns_fd` (or here if -1). */
static int rtnl_socket_in(int netns_fd)
{
	int home;
	int err = rtnl_netns_enter(netns_fd, &home);
	if (err < 0)
		return err;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		err = -errno;
	rtnl_netns_leave(home);
	return err ? err : fd;
}

static void rtnl_add_attr(struct rtnl_req *req, uint16_t type, const void *data, uint16_t len)
{
	struct rtattr *rta = (struct rtattr *)((char *)req + NLMSG_ALIGN(req->nh.nlmsg_len));
	rta->rta_type = type;
	rta->rta_len = (uint16_t)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	req->nh.nlmsg_len = NLMSG_ALIGN(req->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

static void rtnl_req_init(struct rtnl_req *req, uint16_t type, uint16_t flags, const char *ifname)
{
	memset(req, 0, sizeof(*req));
	req->nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	req->nh.nlmsg_type = type;
	req->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	req->nh.nlmsg_seq = 1;
	req->ifi.ifi_family = AF_UNSPEC;
	rtnl_add_attr(req, IFLA_IFNAME, ifname, (uint16_t)(strlen(ifname) + 1));
}

/* Sends one request and waits for its ack; returns the kernel's errno. */
static int rtnl_talk(int fd, struct rtnl_req *req)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	if (sendto(fd, req, req->nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	char buf[RTNL_BUF_SIZE];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);
				return e->error;
			}
		}
	}
}

static int rtnl_request_in(int netns_fd, struct rtnl_req *req)
{
	int fd = rtnl_socket_in(netns_fd);
	if (fd < 0)
		return fd;
	int err = rtnl_talk(fd, req);
	close(fd);
	return err;
}

int rtnl_link_set_netns(const char *ifname, int netns_fd)
{
	struct rtnl_req req;
	rtnl_req_init(&req, RTM_NEWLINK, 0, ifname);
	uint32_t fd = (uint32_t)netns_fd;
	rtnl_add_attr(&req, IFLA_NET_NS_FD, &fd, sizeof(fd));
	return rtnl_request_in(-1, &req);
}

int rtnl_link_configure(int netns_fd, const char *ifname, uint32_t mtu, bool up)
{
	struct rtnl_req req;
	rtnl_req_init(&req, RTM_NEWLINK, 0, ifname);
	if (mtu)
		rtnl_add_attr(&req, IFLA_MTU, &mtu, sizeof(mtu));
	if (up) {
		req.ifi.ifi_flags = IFF_UP;
		req.ifi.ifi_change = IFF_UP;
	}
	return rtnl_request_in(netns_fd, &req);
}

int rtnl_link_delete(int netns_fd, const char *ifname)
{
	struct rtnl_req req;
	rtnl_req_init(&req, RTM_DELLINK, 0, ifname);
	return rtnl_request_in(netns_fd, &req);
}

int rtnl_link_set_mac_alias(int netns_fd, const char *ifname, const uint8_t *mac, const char *alias)
{
	struct rtnl_req req;
	rtnl_req_init(&req, RTM_NEWLINK, 0, ifname);
	if (mac)
		rtnl_add_attr(&req, IFLA_ADDRESS, mac, 6);
	if (alias)
		rtnl_add_attr(&req, IFLA_IFALIAS, alias, (uint16_t)strlen(alias));
	return rtnl_request_in(netns_fd, &req);
}

static void rtnl_parse_link(const struct ifinfomsg *ifi, size_t len, struct rtnl_link_info *out)
{
	memset(out, 0, sizeof(*out));
	out->ifindex = ifi->ifi_index;
	out->flags = ifi->ifi_flags;
	const struct rtattr *rta = (const struct rtattr *)((const char *)ifi + NLMSG_ALIGN(sizeof(*ifi)));
	size_t left = len - NLMSG_ALIGN(sizeof(*ifi));
	for (; RTA_OK(rta, left); rta = RTA_NEXT(rta, left)) {
		size_t n = RTA_PAYLOAD(rta);
		const void *d = RTA_DATA(rta);
		if (rta->rta_type == IFLA_IFNAME && n > 0) {
			size_t k = strnlen(d, n) < sizeof(out->name) - 1 ? strnlen(d, n) : sizeof(out->name) - 1;
			memcpy(out->name, d, k);
			out->name[k] = 0;
		} else if (rta->rta_type == IFLA_MTU && n >= 4) {
			memcpy(&out->mtu, d, 4);
		} else if (rta->rta_type == IFLA_MASTER && n >= 4) {
			memcpy(&out->master, d, 4);
		} else if (rta->rta_type == IFLA_ADDRESS && n == 6) {
			memcpy(out->mac, d, 6);
		} else if (rta->rta_type == IFLA_IFALIAS) {
			size_t k = n < sizeof(out->alias) - 1 ? n : sizeof(out->alias) - 1;
			memcpy(out->alias, d, k);
			out->alias[k] = 0;
		} else if (rta->rta_type == IFLA_STATS64 && n >= sizeof(struct rtnl_link_stats64)) {
			struct rtnl_link_stats64 st;
			memcpy(&st, d, sizeof(st));
			out->has_stats = true;
			out->rx_dropped = st.rx_dropped;
			out->tx_dropped = st.tx_dropped;
		}
	}
}

int rtnl_link_get(int netns_fd, const char *ifname, int ifindex, struct rtnl_link_info *out)
{
	struct rtnl_req req;
	if (ifindex > 0) {
		memset(&req, 0, sizeof(req));
		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
		req.ifi.ifi_family = AF_UNSPEC;
		req.ifi.ifi_index = ifindex;
	} else {
		rtnl_req_init(&req, RTM_GETLINK, 0, ifname);
	}
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = 1;
	int fd = rtnl_socket_in(netns_fd);
	if (fd < 0)
		return fd;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	static char buf[32768]; /* control thread only */
	int err = 0;
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		err = -errno;
		goto out;
	}
	ssize_t n;
	do
		n = recv(fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	err = -EPROTO;
	for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
		if (nh->nlmsg_type == NLMSG_ERROR) {
			err = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
			break;
		}
		if (nh->nlmsg_type == RTM_NEWLINK && nh->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifinfomsg))) {
			rtnl_parse_link(NLMSG_DATA(nh), nh->nlmsg_len - NLMSG_LENGTH(0), out);
			err = 0;
			break;
		}
	}
out:
	close(fd);
	return err;
}

int rtnl_link_get_in(const char *netns, const char *ifname, int ifindex, struct rtnl_link_info *out)
{
	int ns = -1;
	if (netns && netns[0]) {
		ns = rtnl_netns_open(netns);
		if (ns < 0)
			return ns;
	}
	int err = rtnl_link_get(ns, ifname, ifindex, out);
	if (ns >= 0)
		close(ns);
	return err;
}

/* ---- the link that holds an address ------------------------------------------ */

/* Looks for `addr` among the RTM_NEWADDR messages of one datagram: sets
 * *found to the link index if it is there, and returns true once the dump
 * is done (NLMSG_DONE or an error). */
static bool rtnl_addr_match(const char *buf, ssize_t n, int family, const uint8_t *addr, int *found)
{
	size_t alen = family == 6 ? 16 : 4;
	for (const struct nlmsghdr *nh = (const struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
	     nh = NLMSG_NEXT(nh, n)) {
		if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR)
			return true;
		if (nh->nlmsg_type != RTM_NEWADDR || nh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifaddrmsg)))
			continue;
		const struct ifaddrmsg *ifa = NLMSG_DATA(nh);
		size_t left = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa));
		for (const struct rtattr *rta = IFA_RTA(ifa); RTA_OK(rta, left); rta = RTA_NEXT(rta, left))
			if ((rta->rta_type == IFA_LOCAL || rta->rta_type == IFA_ADDRESS) &&
			    RTA_PAYLOAD(rta) == alen && memcmp(RTA_DATA(rta), addr, alen) == 0 && *found <= 0)
				*found = (int)ifa->ifa_index;
	}
	return false;
}

int rtnl_addr_ifindex(int family, const uint8_t *addr)
{
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
	} req = {
		.nh = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg)), .nlmsg_type = RTM_GETADDR,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		.ifa = { .ifa_family = family == 6 ? AF_INET6 : AF_INET },
	};
	int fd = rtnl_socket_in(-1);
	if (fd < 0)
		return fd;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	static char buf[32768]; /* control thread only */
	int found = -ENOENT;
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		found = -errno;
		goto out;
	}
	int index = 0;
	for (;;) { /* read the dump to its end, found or not */
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || rtnl_addr_match(buf, n, family, addr, &index))
			break;
	}
	if (index > 0)
		found = index;
out:
	close(fd);
	return found;
}

/* ---- link events -------------------------------------------------------------- */

int rtnl_link_watch_open(int netns_fd)
{
	int fd = rtnl_socket_in(netns_fd);
	if (fd < 0)
		return fd;
	struct sockaddr_nl local = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
	    bind(fd, (struct sockaddr *)&local, sizeof(local)) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int rtnl_link_events_parse(const void *buf, size_t len, rtnl_link_event_fn *fn, void *aux)
{
	int count = 0;
	size_t left = len;
	for (const struct nlmsghdr *nh = buf; NLMSG_OK(nh, left); nh = NLMSG_NEXT(nh, left)) {
		if ((nh->nlmsg_type != RTM_NEWLINK && nh->nlmsg_type != RTM_DELLINK) ||
		    nh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
			continue;
		struct rtnl_link_event ev = { .deleted = nh->nlmsg_type == RTM_DELLINK };
		rtnl_parse_link(NLMSG_DATA(nh), nh->nlmsg_len - NLMSG_LENGTH(0), &ev.link);
		fn(aux, &ev);
		count++;
	}
	return count;
}

int rtnl_link_watch_read(int fd, rtnl_link_event_fn *fn, void *aux)
{
	static char buf[32768]; /* control thread only */
	int count = 0;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return count;
			return -errno; /* ENOBUFS: messages were lost */
		}
		if (n == 0)
			return count;
		count += rtnl_link_events_parse(buf, (size_t)n, fn, aux);
	}
}
