/* evpn_neigh: AF_BRIDGE neighbour messages laid out as zebra's requests
 * come back from the kernel's vxlan driver (vxlan_fdb_info) and bridge
 * (fdb_fill_info), classified; the surprising ones ignored with their
 * reason; our own add/delete encoded as the kernel wants it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "port/evpn_neigh.h"

enum { VX_IF = 10, PORT_IF = 11, OTHER_IF = 12, VNI = 99 };

static enum evpn_dev_role lookup(void *aux, int ifindex, uint32_t *vni)
{
	(void)aux;
	*vni = VNI;
	if (ifindex == VX_IF)
		return EVPN_DEV_VXLAN;
	if (ifindex == PORT_IF)
		return EVPN_DEV_PORT;
	return EVPN_DEV_NONE;
}

struct msg {
	uint8_t b[256] __attribute__((aligned(4)));
	size_t len;
};

static void msg_start(struct msg *m, uint16_t type, uint8_t family, int ifindex, uint16_t state, uint8_t flags)
{
	memset(m, 0, sizeof(*m));
	struct nlmsghdr *nh = (struct nlmsghdr *)m->b;
	nh->nlmsg_type = type;
	struct ndmsg *ndm = NLMSG_DATA(nh);
	ndm->ndm_family = family;
	ndm->ndm_ifindex = ifindex;
	ndm->ndm_state = state;
	ndm->ndm_flags = flags;
	m->len = NLMSG_LENGTH(sizeof(*ndm));
	nh->nlmsg_len = (uint32_t)m->len;
}

static void msg_attr(struct msg *m, uint16_t type, const void *data, uint16_t n)
{
	struct rtattr *rta = (struct rtattr *)(m->b + NLMSG_ALIGN(m->len));
	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(n);
	memcpy(RTA_DATA(rta), data, n);
	m->len = NLMSG_ALIGN(m->len) + RTA_SPACE(n);
	((struct nlmsghdr *)m->b)->nlmsg_len = (uint32_t)m->len;
}

static const uint8_t MAC[6] = { 0x02, 0, 0, 0, 0, 0x22 };
static const uint8_t ZERO[6];
static const uint8_t VTEP[4] = { 198, 51, 100, 2 };

static void parse(const struct msg *m, struct evpn_neigh *n)
{
	evpn_neigh_parse(m->b, m->len, lookup, NULL, n);
}

/* The vxlan driver's copy of a remote MAC zebra installed. */
static void remote_mac_msg(struct msg *m, uint16_t type)
{
	msg_start(m, type, AF_BRIDGE, VX_IF, NUD_REACHABLE, NTF_SELF | NTF_EXT_LEARNED);
	msg_attr(m, NDA_LLADDR, MAC, 6);
	msg_attr(m, NDA_DST, VTEP, 4);
	struct nda_cacheinfo ci = { 0 };
	msg_attr(m, NDA_CACHEINFO, &ci, sizeof(ci));
}

static void test_remote_mac(void **state)
{
	(void)state;
	struct msg m;
	struct evpn_neigh n;
	remote_mac_msg(&m, RTM_NEWNEIGH);
	parse(&m, &n);
	assert_int_equal(n.kind, EVPN_NEIGH_REMOTE_MAC);
	assert_false(n.deleted);
	assert_int_equal(n.vni, VNI);
	assert_memory_equal(n.mac, MAC, 6);
	assert_memory_equal(n.vtep, VTEP, 4);
	remote_mac_msg(&m, RTM_DELNEIGH);
	parse(&m, &n);
	assert_int_equal(n.kind, EVPN_NEIGH_REMOTE_MAC);
	assert_true(n.deleted);
	/* A sticky MAC (zebra: NTF_STICKY, NUD_NOARP) counts as well. */
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_NOARP, NTF_SELF | NTF_STICKY);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	msg_attr(&m, NDA_DST, VTEP, 4);
	parse(&m, &n);
	assert_int_equal(n.kind, EVPN_NEIGH_REMOTE_MAC);
}

static void test_flood(void **state)
{
	(void)state;
	struct msg m;
	struct evpn_neigh n;
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_NOARP | NUD_PERMANENT, NTF_SELF);
	msg_attr(&m, NDA_LLADDR, ZERO, 6);
	msg_attr(&m, NDA_DST, VTEP, 4);
	parse(&m, &n);
	assert_int_equal(n.kind, EVPN_NEIGH_FLOOD);
	assert_memory_equal(n.vtep, VTEP, 4);
	/* The same VNI spelled out (NDA_VNI) is fine; another is not ours. */
	uint32_t vni = VNI;
	msg_attr(&m, NDA_VNI, &vni, 4);
	parse(&m, &n);
	assert_int_equal(n.kind, EVPN_NEIGH_FLOOD);
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_NOARP | NUD_PERMANENT, NTF_SELF);
	msg_attr(&m, NDA_LLADDR, ZERO, 6);
	msg_attr(&m, NDA_DST, VTEP, 4);
	vni = 100;
	msg_attr(&m, NDA_VNI, &vni, 4);
	parse(&m, &n);
	assert_int_equal(n.kind, EVPN_NEIGH_IGNORED);
	assert_int_equal(n.why, EVPN_IGN_OTHER_VNI);
}

static void test_local(void **state)
{
	(void)state;
	struct msg m;
	struct evpn_neigh n;
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, PORT_IF, NUD_REACHABLE, NTF_EXT_LEARNED);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	parse(&m, &n);
	assert_int_equal(n.kind, EVPN_NEIGH_LOCAL);
	assert_memory_equal(n.mac, MAC, 6);
	/* The bridge's own address of the port: permanent, not ours. */
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, PORT_IF, NUD_PERMANENT, 0);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_PERMANENT);
}

struct ign_case {
	const char *name;
	enum evpn_ignore why;
};

static void test_ignored(void **state)
{
	(void)state;
	struct msg m;
	struct evpn_neigh n;
	const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	const uint8_t any[4] = { 0 };
	const uint8_t mcast[6] = { 0x01, 0, 0x5e, 0, 0, 1 };
	uint32_t nhid = 7;
	uint16_t port = 4789;

	/* EVPN multihoming: a nexthop group, no VTEP. */
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_REACHABLE, NTF_SELF | NTF_EXT_LEARNED);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	msg_attr(&m, NDA_NH_ID, &nhid, 4);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_MULTIHOMING);
	/* IPv6 VTEP. */
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_REACHABLE, NTF_SELF | NTF_EXT_LEARNED);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	msg_attr(&m, NDA_DST, v6, 16);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_IPV6_DST);
	/* 0.0.0.0 */
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_REACHABLE, NTF_SELF | NTF_EXT_LEARNED);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	msg_attr(&m, NDA_DST, any, 4);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_BAD_DST);
	/* A device that is not ours. */
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, OTHER_IF, NUD_REACHABLE, NTF_SELF | NTF_EXT_LEARNED);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	msg_attr(&m, NDA_DST, VTEP, 4);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_FOREIGN_DEV);
	/* The bridge's entry of a unicast MAC on the vxlan (no NTF_SELF, no
	 * NDA_DST): BRIDGE_REMOTE, with the MAC and VNI, no VTEP. */
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_REACHABLE, NTF_MASTER | NTF_EXT_LEARNED);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	parse(&m, &n);
	assert_int_equal(n.kind, EVPN_NEIGH_BRIDGE_REMOTE);
	assert_memory_equal(n.mac, MAC, 6);
	assert_int_equal(n.vni, VNI);
	/* Of a flood entry or a group MAC: ignored as the bridge's copy. */
	static const uint8_t zero_mac[6], group_mac[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_REACHABLE, NTF_MASTER | NTF_EXT_LEARNED);
	msg_attr(&m, NDA_LLADDR, zero_mac, 6);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_BRIDGE_COPY);
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_REACHABLE, NTF_MASTER);
	msg_attr(&m, NDA_LLADDR, group_mac, 6);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_BRIDGE_COPY);
	/* No NDA_DST on the vxlan driver's entry. */
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_REACHABLE, NTF_SELF | NTF_EXT_LEARNED);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_NO_DST);
	/* No MAC, a short MAC. */
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_REACHABLE, NTF_SELF | NTF_EXT_LEARNED);
	msg_attr(&m, NDA_DST, VTEP, 4);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_NO_LLADDR);
	msg_attr(&m, NDA_LLADDR, MAC, 5);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_NO_LLADDR);
	/* A group MAC; a MAC added by hand (not extern_learn). */
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_REACHABLE, NTF_SELF | NTF_EXT_LEARNED);
	msg_attr(&m, NDA_LLADDR, mcast, 6);
	msg_attr(&m, NDA_DST, VTEP, 4);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_MULTICAST_MAC);
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_PERMANENT, NTF_SELF);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	msg_attr(&m, NDA_DST, VTEP, 4);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_NOT_EXTERN);
	/* Another UDP port. */
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_REACHABLE, NTF_SELF | NTF_EXT_LEARNED);
	msg_attr(&m, NDA_LLADDR, MAC, 6);
	msg_attr(&m, NDA_DST, VTEP, 4);
	msg_attr(&m, NDA_PORT, &port, 2);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_OTHER_PORT);
	/* An IP neighbour (AF_INET), a link message. */
	msg_start(&m, RTM_NEWNEIGH, AF_INET, VX_IF, NUD_REACHABLE, 0);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_NOT_BRIDGE);
	msg_start(&m, RTM_NEWLINK, AF_BRIDGE, VX_IF, 0, 0);
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_NOT_NEIGH);
	assert_string_equal(evpn_ignore_name(EVPN_IGN_MULTIHOMING), "multihoming_nh_id");
}

static void test_truncated(void **state)
{
	(void)state;
	struct msg m;
	struct evpn_neigh n;
	remote_mac_msg(&m, RTM_NEWNEIGH);
	for (size_t cut = 0; cut < m.len; cut++) {
		evpn_neigh_parse(m.b, cut, lookup, NULL, &n);
		assert_int_equal(n.kind, EVPN_NEIGH_IGNORED);
	}
	/* An attribute whose length runs past the message. */
	struct rtattr *rta = (struct rtattr *)(m.b + NLMSG_LENGTH(sizeof(struct ndmsg)));
	rta->rta_len = 200;
	parse(&m, &n);
	assert_int_equal(n.why, EVPN_IGN_TRUNCATED);
}

struct seen {
	int n;
	enum evpn_neigh_kind kinds[4];
};

static void collect(void *aux, const struct evpn_neigh *n)
{
	struct seen *s = aux;
	if (s->n < 4)
		s->kinds[s->n] = n->kind;
	s->n++;
}

static void test_parse_all(void **state)
{
	(void)state;
	uint8_t buf[1024] __attribute__((aligned(4)));
	size_t len = 0;
	struct msg m;
	remote_mac_msg(&m, RTM_NEWNEIGH);
	memcpy(buf + len, m.b, m.len);
	len += NLMSG_ALIGN(m.len);
	msg_start(&m, RTM_NEWLINK, AF_UNSPEC, 1, 0, 0);
	memcpy(buf + len, m.b, m.len);
	len += NLMSG_ALIGN(m.len);
	msg_start(&m, RTM_NEWNEIGH, AF_BRIDGE, VX_IF, NUD_NOARP | NUD_PERMANENT, NTF_SELF);
	msg_attr(&m, NDA_LLADDR, ZERO, 6);
	msg_attr(&m, NDA_DST, VTEP, 4);
	memcpy(buf + len, m.b, m.len);
	len += NLMSG_ALIGN(m.len);
	struct seen s = { 0 };
	assert_int_equal(evpn_neigh_parse_all(buf, len, lookup, NULL, collect, &s), 2);
	assert_int_equal(s.kinds[0], EVPN_NEIGH_REMOTE_MAC);
	assert_int_equal(s.kinds[1], EVPN_NEIGH_FLOOD);
	/* Cut short: the last message is dropped, the first still counts. */
	s.n = 0;
	assert_int_equal(evpn_neigh_parse_all(buf, len - 4, lookup, NULL, collect, &s), 1);
}

static void test_encode(void **state)
{
	(void)state;
	uint8_t buf[64] __attribute__((aligned(4)));
	size_t len = evpn_neigh_encode_local(buf, sizeof(buf), true, PORT_IF, MAC, 5);
	assert_true(len > 0);
	const struct nlmsghdr *nh = (const struct nlmsghdr *)buf;
	assert_int_equal(nh->nlmsg_type, RTM_NEWNEIGH);
	assert_int_equal(nh->nlmsg_len, len);
	assert_true(nh->nlmsg_flags & NLM_F_REPLACE);
	const struct ndmsg *ndm = NLMSG_DATA(nh);
	assert_int_equal(ndm->ndm_flags, NTF_MASTER | NTF_EXT_LEARNED);
	/* What we encode, the parser reads back as our local entry. */
	struct evpn_neigh n;
	evpn_neigh_parse(buf, len, lookup, NULL, &n);
	assert_int_equal(n.kind, EVPN_NEIGH_LOCAL);
	assert_memory_equal(n.mac, MAC, 6);
	len = evpn_neigh_encode_local(buf, sizeof(buf), false, PORT_IF, MAC, 6);
	assert_int_equal(((const struct nlmsghdr *)buf)->nlmsg_type, RTM_DELNEIGH);
	assert_int_equal(evpn_neigh_encode_local(buf, 20, true, PORT_IF, MAC, 5), 0);
	assert_int_equal(evpn_neigh_encode_dump(buf, sizeof(buf), 1), NLMSG_LENGTH(sizeof(struct ndmsg)));
	assert_int_equal(evpn_neigh_encode_dump(buf, 8, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remote_mac), cmocka_unit_test(test_flood),   cmocka_unit_test(test_local),
		cmocka_unit_test(test_ignored),    cmocka_unit_test(test_truncated), cmocka_unit_test(test_parse_all),
		cmocka_unit_test(test_encode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
