#include "dp/kernel/kdp_link.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dp/kernel/bpf/vxdp_abi.h"
#include "port/rtnl.h"

struct nlreq {
	struct nlmsghdr nh;
	struct ifinfomsg ifi;
	char attrs[512];
};

static struct rtattr *nl_attr(struct nlreq *r, uint16_t type, const void *data, uint16_t len)
{
	struct rtattr *rta = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));
	rta->rta_type = type;
	rta->rta_len = (uint16_t)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
	return rta;
}

static void nl_nest_end(struct nlreq *r, struct rtattr *nest)
{
	nest->rta_len = (uint16_t)((char *)r + r->nh.nlmsg_len - (char *)nest);
}

static void nl_init(struct nlreq *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	r->nh.nlmsg_type = RTM_NEWLINK;
	r->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	r->nh.nlmsg_seq = 1;
	r->ifi.ifi_family = AF_UNSPEC;
	r->ifi.ifi_flags = IFF_UP;
	r->ifi.ifi_change = IFF_UP;
	nl_attr(r, IFLA_IFNAME, name, (uint16_t)(strlen(name) + 1));
}

static int nl_talk(struct nlreq *r)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int err = 0;
	if (sendto(fd, r, r->nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		err = -errno;
		goto out;
	}
	char buf[4096];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_ERROR) {
				err = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
				goto out;
			}
		}
	}
out:
	close(fd);
	return err;
}

int kdp_link_vxlan_create(const char *name, uint16_t dstport)
{
	if (strlen(name) >= IFNAMSIZ)
		return -ENAMETOOLONG;
	struct nlreq r;
	nl_init(&r, name);
	struct rtattr *li = nl_attr(&r, IFLA_LINKINFO, NULL, 0);
	nl_attr(&r, IFLA_INFO_KIND, "vxlan", 5);
	struct rtattr *data = nl_attr(&r, IFLA_INFO_DATA, NULL, 0);
	uint8_t one = 1, zero = 0;
	uint16_t port = htons(dstport);
	nl_attr(&r, IFLA_VXLAN_COLLECT_METADATA, &one, 1);
	nl_attr(&r, IFLA_VXLAN_LEARNING, &zero, 1);
	nl_attr(&r, IFLA_VXLAN_PORT, &port, 2);
	/* The widest source port range: the program picks each datagram's
	 * port inside it (bpf/vxdp_abi.h, vxdp_sport_hash). */
	struct ifla_vxlan_port_range range = { .low = htons(VXDP_SPORT_DEV_MIN), .high = htons(VXDP_SPORT_DEV_MAX) };
	nl_attr(&r, IFLA_VXLAN_PORT_RANGE, &range, sizeof(range));
	nl_nest_end(&r, data);
	nl_nest_end(&r, li);
	int err = nl_talk(&r);
	if (err < 0)
		return err;
	unsigned idx = if_nametoindex(name);
	return idx ? (int)idx : -ENODEV;
}

int kdp_link_veth_create(const char *name, const char *peer, int netns_fd, uint32_t mtu)
{
	if (strlen(name) >= IFNAMSIZ || strlen(peer) >= IFNAMSIZ)
		return -ENAMETOOLONG;
	struct nlreq r;
	nl_init(&r, name);
	if (mtu)
		nl_attr(&r, IFLA_MTU, &mtu, 4);
	struct rtattr *li = nl_attr(&r, IFLA_LINKINFO, NULL, 0);
	nl_attr(&r, IFLA_INFO_KIND, "veth", 4);
	struct rtattr *data = nl_attr(&r, IFLA_INFO_DATA, NULL, 0);
	/* VETH_INFO_PEER: an ifinfomsg, then the peer's attributes. */
	/* The peer's ifinfomsg; IFF_UP here makes the request fail
	 * (ENOTCONN on 6.18): it is brought up afterwards. */
	struct ifinfomsg pifi = { .ifi_family = AF_UNSPEC };
	struct rtattr *pe = nl_attr(&r, VETH_INFO_PEER, &pifi, sizeof(pifi));
	nl_attr(&r, IFLA_IFNAME, peer, (uint16_t)(strlen(peer) + 1));
	if (mtu)
		nl_attr(&r, IFLA_MTU, &mtu, 4);
	if (netns_fd >= 0) {
		uint32_t fd = (uint32_t)netns_fd;
		nl_attr(&r, IFLA_NET_NS_FD, &fd, 4);
	}
	nl_nest_end(&r, pe);
	nl_nest_end(&r, data);
	nl_nest_end(&r, li);
	int err = nl_talk(&r);
	if (err < 0)
		return err;
	err = rtnl_link_configure(netns_fd, peer, 0, true);
	if (err < 0) {
		rtnl_link_delete(-1, name);
		return err;
	}
	unsigned idx = if_nametoindex(name);
	return idx ? (int)idx : -ENODEV;
}
