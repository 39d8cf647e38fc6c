#include "port/evpn_shadow.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "port/evpn_neigh.h"
#include "port/rtnl.h"
#include "util/failpoint.h"

enum { NL_BUF = 8192, WATCH_RCVBUF = 32 << 20 };

void evpn_shadow_names(uint32_t vni, struct evpn_shadow *out)
{
	memset(out, 0, sizeof(*out));
	out->vni = vni;
	snprintf(out->br, sizeof(out->br), "vxeb%u", vni);
	snprintf(out->vx, sizeof(out->vx), "vxev%u", vni);
	snprintf(out->port, sizeof(out->port), "vxep%u", vni);
	snprintf(out->peer, sizeof(out->peer), "vxeq%u", vni);
}

/* One request, its ack awaited: the kernel's errno (0 when done). */
static int nl_talk(struct nlmsghdr *nlh)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl)
		return -errno;
	int err = 0;
	static uint32_t seq;
	nlh->nlmsg_seq = ++seq ? seq : ++seq;
	nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 || mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		err = -errno;
		goto out;
	}
	char buf[NL_BUF];
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0) {
			err = -errno;
			break;
		}
		int r = mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, mnl_socket_get_portid(nl), NULL, NULL);
		if (r <= MNL_CB_STOP) {
			err = r < 0 ? -errno : 0;
			break;
		}
	}
out:
	mnl_socket_close(nl);
	return err;
}

static struct nlmsghdr *link_msg(char *buf, uint16_t type, uint16_t flags, const char *name)
{
	memset(buf, 0, NL_BUF);
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return nlh;
}

static int link_create(const char *name, const char *kind, const char *master,
		       void (*data)(struct nlmsghdr *, const void *), const void *aux)
{
	char buf[NL_BUF];
	struct nlmsghdr *nlh = link_msg(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, name);
	if (master) {
		unsigned idx = if_nametoindex(master);
		if (!idx)
			return -ENODEV;
		mnl_attr_put_u32(nlh, IFLA_MASTER, idx);
	}
	struct nlattr *li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, kind);
	if (data) {
		struct nlattr *d = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
		data(nlh, aux);
		mnl_attr_nest_end(nlh, d);
	}
	mnl_attr_nest_end(nlh, li);
	return nl_talk(nlh);
}

static void bridge_data(struct nlmsghdr *nlh, const void *aux)
{
	(void)aux;
	mnl_attr_put_u32(nlh, IFLA_BR_STP_STATE, 0);
	mnl_attr_put_u8(nlh, IFLA_BR_MCAST_SNOOPING, 0);
}

struct vxlan_aux {
	uint32_t vni;
	const uint8_t *local;
};

static void vxlan_data(struct nlmsghdr *nlh, const void *aux)
{
	const struct vxlan_aux *v = aux;
	mnl_attr_put_u32(nlh, IFLA_VXLAN_ID, v->vni);
	mnl_attr_put(nlh, IFLA_VXLAN_LOCAL, 4, v->local);
	mnl_attr_put_u16(nlh, IFLA_VXLAN_PORT, htons(EVPN_SHADOW_UDP_PORT));
	mnl_attr_put_u8(nlh, IFLA_VXLAN_LEARNING, 0);
}

static void veth_data(struct nlmsghdr *nlh, const void *aux)
{
	struct nlattr *peer = mnl_attr_nest_start(nlh, 1 /* VETH_INFO_PEER */);
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	/* The peer's ifinfomsg sits inside the attribute, before its own
	 * attributes. */
	void *at = mnl_nlmsg_get_payload_tail(nlh);
	memcpy(at, &ifi, sizeof(ifi));
	nlh->nlmsg_len += MNL_ALIGN(sizeof(ifi));
	mnl_attr_put_strz(nlh, IFLA_IFNAME, aux);
	mnl_attr_nest_end(nlh, peer);
}

/* Our alias (the kernel takes IFLA_IFALIAS only on an existing link), no
 * IPv6 address ever (addrgenmode none), and for a bridge port no learning
 * and no flooding; then up. */
static int link_quiet_up(const char *name, bool bridge_port)
{
	char buf[NL_BUF];
	struct nlmsghdr *nlh = link_msg(buf, RTM_NEWLINK, 0, name);
	mnl_attr_put(nlh, IFLA_IFALIAS, strlen(EVPN_SHADOW_ALIAS), EVPN_SHADOW_ALIAS);
	struct nlattr *af = mnl_attr_nest_start(nlh, IFLA_AF_SPEC);
	struct nlattr *in6 = mnl_attr_nest_start(nlh, AF_INET6);
	mnl_attr_put_u8(nlh, IFLA_INET6_ADDR_GEN_MODE, IN6_ADDR_GEN_MODE_NONE);
	mnl_attr_nest_end(nlh, in6);
	mnl_attr_nest_end(nlh, af);
	int err = nl_talk(nlh);
	if (err == 0 && bridge_port) {
		nlh = link_msg(buf, RTM_NEWLINK, 0, name);
		struct nlattr *li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
		mnl_attr_put_strz(nlh, IFLA_INFO_SLAVE_KIND, "bridge");
		struct nlattr *sd = mnl_attr_nest_start(nlh, IFLA_INFO_SLAVE_DATA);
		mnl_attr_put_u8(nlh, IFLA_BRPORT_LEARNING, 0);
		mnl_attr_put_u8(nlh, IFLA_BRPORT_UNICAST_FLOOD, 0);
		mnl_attr_put_u8(nlh, IFLA_BRPORT_MCAST_FLOOD, 0);
		mnl_attr_put_u8(nlh, IFLA_BRPORT_BCAST_FLOOD, 0);
		mnl_attr_nest_end(nlh, sd);
		mnl_attr_nest_end(nlh, li);
		err = nl_talk(nlh);
	}
	if (err == 0) {
		nlh = link_msg(buf, RTM_NEWLINK, 0, name);
		struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
		ifi->ifi_flags = IFF_UP;
		ifi->ifi_change = IFF_UP;
		err = nl_talk(nlh);
	}
	return err;
}

static int link_delete(const char *name)
{
	char buf[NL_BUF];
	int err = nl_talk(link_msg(buf, RTM_DELLINK, 0, name));
	return err == -ENODEV ? 0 : err;
}

void evpn_shadow_destroy(const struct evpn_shadow *s)
{
	/* The veth's peer goes with it. */
	link_delete(s->port);
	link_delete(s->vx);
	link_delete(s->br);
}

const char *evpn_shadow_fault_name(enum evpn_shadow_fault f)
{
	switch (f) {
	case EVPN_SHADOW_OK: return "ok";
	case EVPN_SHADOW_VX_MISSING: return "vxlan_missing";
	case EVPN_SHADOW_VX_DOWN: return "vxlan_down";
	case EVPN_SHADOW_VX_NOT_PORT: return "vxlan_not_bridge_port";
	case EVPN_SHADOW_BR_MISSING: return "bridge_missing";
	case EVPN_SHADOW_BR_DOWN: return "bridge_down";
	}
	return "?";
}

enum evpn_shadow_fault evpn_shadow_check(const struct evpn_shadow *s)
{
	struct rtnl_link_info br, vx;
	if (rtnl_link_get(-1, s->br, 0, &br) < 0)
		return EVPN_SHADOW_BR_MISSING;
	if (rtnl_link_get(-1, s->vx, 0, &vx) < 0)
		return EVPN_SHADOW_VX_MISSING;
	if (!(vx.flags & IFF_UP))
		return EVPN_SHADOW_VX_DOWN;
	if (vx.master != br.ifindex)
		return EVPN_SHADOW_VX_NOT_PORT;
	if (!(br.flags & IFF_UP))
		return EVPN_SHADOW_BR_DOWN;
	return EVPN_SHADOW_OK;
}

int evpn_shadow_create(uint32_t vni, const uint8_t local[4], struct evpn_shadow *out)
{
	evpn_shadow_names(vni, out);
	evpn_shadow_destroy(out);
	link_delete(out->peer);
	struct vxlan_aux v = { .vni = vni, .local = local };
	int err = link_create(out->br, "bridge", NULL, bridge_data, NULL);
	if (err == 0)
		err = link_quiet_up(out->br, false);
	if (err == 0)
		err = link_create(out->vx, "vxlan", out->br, vxlan_data, &v);
	if (err == 0)
		err = link_create(out->port, "veth", out->br, veth_data, out->peer);
	if (err == 0)
		err = link_quiet_up(out->peer, false);
	if (err == 0)
		err = link_quiet_up(out->port, true);
	if (err == 0)
		err = link_quiet_up(out->vx, true);
	if (err == 0) {
		out->br_ifindex = (int)if_nametoindex(out->br);
		out->vx_ifindex = (int)if_nametoindex(out->vx);
		out->port_ifindex = (int)if_nametoindex(out->port);
		if (!out->br_ifindex || !out->vx_ifindex || !out->port_ifindex)
			err = -ENODEV;
	}
	if (err < 0)
		evpn_shadow_destroy(out);
	return err;
}

/* ---- reaping leftovers ----------------------------------------------------- */

struct reap {
	char names[64][IFNAMSIZ];
	unsigned n;
};

static int reap_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	unsigned type = mnl_attr_get_type(a);
	if (type <= IFLA_MAX)
		tb[type] = a;
	return MNL_CB_OK;
}

static int reap_link(const struct nlmsghdr *nlh, void *data)
{
	struct reap *r = data;
	const struct nlattr *tb[IFLA_MAX + 1] = { 0 };
	mnl_attr_parse(nlh, sizeof(struct ifinfomsg), reap_attr, tb);
	if (!tb[IFLA_IFNAME] || !tb[IFLA_IFALIAS] || r->n == 64)
		return MNL_CB_OK;
	size_t n = mnl_attr_get_payload_len(tb[IFLA_IFALIAS]);
	const char *alias = mnl_attr_get_payload(tb[IFLA_IFALIAS]);
	if (n >= strlen(EVPN_SHADOW_ALIAS) && !strncmp(alias, EVPN_SHADOW_ALIAS, strlen(EVPN_SHADOW_ALIAS)))
		snprintf(r->names[r->n++], IFNAMSIZ, "%s", mnl_attr_get_str(tb[IFLA_IFNAME]));
	return MNL_CB_OK;
}

/* One neighbour entry to get (RTM_GETNEIGH without NLM_F_DUMP): the FDB
 * entry of `mac` on device `ifindex` (NTF_SELF: the device's own FDB). */
struct nl_get {
	int ifindex;
	const uint8_t *mac;
};

/* A dump of `type` (get NULL), or the one entry `get` names: each
 * datagram of the reply to fn, and its messages to cb. */
static int request(uint16_t type, uint8_t family, const struct nl_get *get, mnl_cb_t cb, void *data,
		   evpn_nl_chunk_fn *fn, void *aux)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl)
		return -errno;
	char buf[NL_BUF * 4];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | (get ? 0 : NLM_F_DUMP);
	nlh->nlmsg_seq = (uint32_t)time(NULL);
	if (type == RTM_GETNEIGH) {
		struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
		ndm->ndm_family = family;
		if (get) {
			ndm->ndm_ifindex = get->ifindex;
			ndm->ndm_flags = NTF_SELF;
			mnl_attr_put(nlh, NDA_LLADDR, 6, get->mac);
		}
	} else {
		struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
		ifi->ifi_family = family;
	}
	int err = 0;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 || mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0) {
			err = -errno;
			break;
		}
		if (fn)
			fn(aux, buf, (size_t)n);
		int r = mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, mnl_socket_get_portid(nl), cb, data);
		if (r <= MNL_CB_STOP || get) { /* a get's answer is one datagram: the entry or an error */
			err = r < 0 ? -errno : 0;
			break;
		}
	}
out:
	mnl_socket_close(nl);
	return err;
}

int evpn_shadow_reap(void)
{
	struct reap *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	int err = request(RTM_GETLINK, AF_UNSPEC, NULL, reap_link, r, NULL, NULL);
	int n = 0;
	for (unsigned i = 0; err == 0 && i < r->n; i++)
		if (link_delete(r->names[i]) == 0)
			n++;
	free(r);
	return err < 0 ? err : n;
}

/* ---- the FDB ---------------------------------------------------------------- */

int evpn_nl_watch_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	int sz = WATCH_RCVBUF;
	if (failpoint_hit("evpn_small_rcvbuf")) {
		/* Tests: the kernel's smallest buffer, so a burst of routes
		 * really overflows it and the ENOBUFS resync runs. */
		sz = 1;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	} else if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0) {
		/* FORCE passes rmem_max as root; else the plain one, capped. */
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	unsigned grp = RTNLGRP_NEIGH;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int evpn_nl_watch_read(int fd, void *buf, size_t size)
{
	ssize_t n = recv(fd, buf, size, 0);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	return (int)n;
}

int evpn_nl_dump(evpn_nl_chunk_fn *fn, void *aux)
{
	return request(RTM_GETNEIGH, AF_BRIDGE, NULL, NULL, NULL, fn, aux);
}

int evpn_nl_get(int ifindex, const uint8_t mac[6], evpn_nl_chunk_fn *fn, void *aux)
{
	const struct nl_get get = { .ifindex = ifindex, .mac = mac };
	return request(RTM_GETNEIGH, AF_BRIDGE, &get, NULL, NULL, fn, aux);
}

int evpn_nl_local(bool add, int port_ifindex, const uint8_t mac[6])
{
	char buf[128] __attribute__((aligned(4)));
	size_t len = evpn_neigh_encode_local(buf, sizeof(buf), add, port_ifindex, mac, 0);
	if (!len)
		return -EINVAL;
	int err = nl_talk((struct nlmsghdr *)buf);
	return !add && err == -ENOENT ? 0 : err;
}
