#include "port/evpn_neigh.h"

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>

static const char *const ignore_names[EVPN_IGN_COUNT] = {
	[EVPN_IGN_NONE] = "none",
	[EVPN_IGN_TRUNCATED] = "truncated",
	[EVPN_IGN_NOT_NEIGH] = "not_neigh",
	[EVPN_IGN_NOT_BRIDGE] = "not_bridge",
	[EVPN_IGN_FOREIGN_DEV] = "foreign_dev",
	[EVPN_IGN_NO_LLADDR] = "no_lladdr",
	[EVPN_IGN_MULTIHOMING] = "multihoming_nh_id",
	[EVPN_IGN_NO_DST] = "no_dst",
	[EVPN_IGN_IPV6_DST] = "ipv6_dst",
	[EVPN_IGN_BAD_DST] = "bad_dst",
	[EVPN_IGN_BRIDGE_COPY] = "bridge_copy",
	[EVPN_IGN_MULTICAST_MAC] = "multicast_mac",
	[EVPN_IGN_NOT_EXTERN] = "not_extern_learned",
	[EVPN_IGN_OTHER_VNI] = "other_vni",
	[EVPN_IGN_OTHER_PORT] = "other_port",
	[EVPN_IGN_PERMANENT] = "permanent",
};

const char *evpn_ignore_name(enum evpn_ignore why)
{
	return (unsigned)why < EVPN_IGN_COUNT ? ignore_names[why] : "?";
}

/* The attributes we look at, as (offset, length) into the message: a
 * present attribute has len >= 0. */
struct nda {
	const uint8_t *p[NDA_MAX + 1];
	int len[NDA_MAX + 1];
};

static bool nda_parse(const uint8_t *a, size_t left, struct nda *out)
{
	for (unsigned i = 0; i <= NDA_MAX; i++)
		out->len[i] = -1;
	while (left >= sizeof(struct rtattr)) {
		struct rtattr rta;
		memcpy(&rta, a, sizeof(rta));
		if (rta.rta_len < sizeof(rta) || rta.rta_len > left)
			return false;
		unsigned type = rta.rta_type & NLA_TYPE_MASK;
		if (type <= NDA_MAX) {
			out->p[type] = a + RTA_LENGTH(0);
			out->len[type] = (int)(rta.rta_len - RTA_LENGTH(0));
		}
		size_t step = RTA_ALIGN(rta.rta_len);
		if (step >= left)
			break;
		a += step;
		left -= step;
	}
	return true;
}

static bool mac_is_zero(const uint8_t mac[6])
{
	static const uint8_t zero[6];
	return memcmp(mac, zero, 6) == 0;
}

static enum evpn_ignore ignore(struct evpn_neigh *out, enum evpn_ignore why)
{
	out->kind = EVPN_NEIGH_IGNORED;
	out->why = why;
	return why;
}

/* The vxlan driver's entry: a remote MAC or a flood VTEP. */
static void classify_vxlan(const struct nda *a, struct evpn_neigh *out)
{
	if (!(out->flags & NTF_SELF)) {
		/* The bridge's entry: of a unicast MAC, the one zebra moves
		 * off our port when a remote route wins (evpn_neigh.h). */
		if (mac_is_zero(out->mac) || (out->mac[0] & 1))
			ignore(out, EVPN_IGN_BRIDGE_COPY);
		else
			out->kind = EVPN_NEIGH_BRIDGE_REMOTE;
		return;
	}
	if (a->len[NDA_NH_ID] >= 0) {
		ignore(out, EVPN_IGN_MULTIHOMING);
		return;
	}
	if (a->len[NDA_DST] < 0) {
		ignore(out, EVPN_IGN_NO_DST);
		return;
	}
	if (a->len[NDA_DST] == 16) {
		ignore(out, EVPN_IGN_IPV6_DST);
		return;
	}
	static const uint8_t any[4];
	if (a->len[NDA_DST] != 4 || !memcmp(a->p[NDA_DST], any, 4)) {
		ignore(out, EVPN_IGN_BAD_DST);
		return;
	}
	if (a->len[NDA_VNI] >= 0) {
		uint32_t vni;
		if (a->len[NDA_VNI] != 4) {
			ignore(out, EVPN_IGN_TRUNCATED);
			return;
		}
		memcpy(&vni, a->p[NDA_VNI], 4);
		if (vni != out->vni) {
			ignore(out, EVPN_IGN_OTHER_VNI);
			return;
		}
	}
	if (a->len[NDA_PORT] >= 0) {
		ignore(out, EVPN_IGN_OTHER_PORT);
		return;
	}
	memcpy(out->vtep, a->p[NDA_DST], 4);
	if (mac_is_zero(out->mac)) {
		out->kind = EVPN_NEIGH_FLOOD;
		return;
	}
	if (out->mac[0] & 1) {
		ignore(out, EVPN_IGN_MULTICAST_MAC);
		return;
	}
	if (!(out->flags & (NTF_EXT_LEARNED | NTF_STICKY))) {
		ignore(out, EVPN_IGN_NOT_EXTERN);
		return;
	}
	out->kind = EVPN_NEIGH_REMOTE_MAC;
}

/* The bridge's entry on our port: one of our local MACs. */
static void classify_port(struct evpn_neigh *out)
{
	if (out->flags & NTF_SELF) {
		/* The veth's own address list, not the bridge's FDB. */
		ignore(out, EVPN_IGN_PERMANENT);
		return;
	}
	if (out->state & NUD_PERMANENT) {
		ignore(out, EVPN_IGN_PERMANENT);
		return;
	}
	if (mac_is_zero(out->mac) || (out->mac[0] & 1)) {
		ignore(out, EVPN_IGN_MULTICAST_MAC);
		return;
	}
	out->kind = EVPN_NEIGH_LOCAL;
}

void evpn_neigh_parse(const void *msg, size_t len, evpn_dev_lookup_fn *lookup, void *aux,
		      struct evpn_neigh *out)
{
	memset(out, 0, sizeof(*out));
	struct nlmsghdr nh;
	if (len < sizeof(nh)) {
		ignore(out, EVPN_IGN_TRUNCATED);
		return;
	}
	memcpy(&nh, msg, sizeof(nh));
	if (nh.nlmsg_type != RTM_NEWNEIGH && nh.nlmsg_type != RTM_DELNEIGH) {
		ignore(out, EVPN_IGN_NOT_NEIGH);
		return;
	}
	out->deleted = nh.nlmsg_type == RTM_DELNEIGH;
	if (nh.nlmsg_len < NLMSG_LENGTH(sizeof(struct ndmsg)) || nh.nlmsg_len > len) {
		ignore(out, EVPN_IGN_TRUNCATED);
		return;
	}
	struct ndmsg ndm;
	memcpy(&ndm, (const uint8_t *)msg + NLMSG_HDRLEN, sizeof(ndm));
	out->ifindex = ndm.ndm_ifindex;
	out->state = ndm.ndm_state;
	out->flags = ndm.ndm_flags;
	if (ndm.ndm_family != AF_BRIDGE) {
		ignore(out, EVPN_IGN_NOT_BRIDGE);
		return;
	}
	struct nda a;
	size_t ofs = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(ndm)));
	if (ofs > nh.nlmsg_len || !nda_parse((const uint8_t *)msg + ofs, nh.nlmsg_len - ofs, &a)) {
		ignore(out, EVPN_IGN_TRUNCATED);
		return;
	}
	enum evpn_dev_role role = lookup ? lookup(aux, ndm.ndm_ifindex, &out->vni) : EVPN_DEV_NONE;
	if (role == EVPN_DEV_NONE) {
		ignore(out, EVPN_IGN_FOREIGN_DEV);
		return;
	}
	if (a.len[NDA_LLADDR] != 6) {
		ignore(out, EVPN_IGN_NO_LLADDR);
		return;
	}
	memcpy(out->mac, a.p[NDA_LLADDR], 6);
	if (role == EVPN_DEV_VXLAN)
		classify_vxlan(&a, out);
	else
		classify_port(out);
}

int evpn_neigh_parse_all(const void *buf, size_t len, evpn_dev_lookup_fn *lookup, void *aux,
			 evpn_neigh_fn *fn, void *fn_aux)
{
	const uint8_t *p = buf;
	int n = 0;
	while (len >= sizeof(struct nlmsghdr)) {
		struct nlmsghdr nh;
		memcpy(&nh, p, sizeof(nh));
		if (nh.nlmsg_len < sizeof(nh) || nh.nlmsg_len > len)
			break;
		if (nh.nlmsg_type == RTM_NEWNEIGH || nh.nlmsg_type == RTM_DELNEIGH) {
			struct evpn_neigh e;
			evpn_neigh_parse(p, nh.nlmsg_len, lookup, aux, &e);
			fn(fn_aux, &e);
			n++;
		}
		size_t step = NLMSG_ALIGN(nh.nlmsg_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return n;
}

static size_t put_attr(uint8_t *buf, size_t at, size_t size, uint16_t type, const void *data, uint16_t n)
{
	struct rtattr rta = { .rta_len = (unsigned short)RTA_LENGTH(n), .rta_type = type };
	if (at + RTA_SPACE(n) > size)
		return 0;
	memset(buf + at, 0, RTA_SPACE(n));
	memcpy(buf + at, &rta, sizeof(rta));
	memcpy(buf + at + RTA_LENGTH(0), data, n);
	return at + RTA_SPACE(n);
}

size_t evpn_neigh_encode_local(void *buf, size_t size, bool add, int port_ifindex, const uint8_t mac[6],
			       uint32_t seq)
{
	size_t at = NLMSG_LENGTH(sizeof(struct ndmsg));
	if (size < at)
		return 0;
	memset(buf, 0, at);
	struct nlmsghdr nh = {
		.nlmsg_type = add ? RTM_NEWNEIGH : RTM_DELNEIGH,
		.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_REPLACE : 0),
		.nlmsg_seq = seq,
	};
	struct ndmsg ndm = {
		.ndm_family = AF_BRIDGE,
		.ndm_ifindex = port_ifindex,
		.ndm_state = NUD_REACHABLE,
		.ndm_flags = NTF_MASTER | (add ? NTF_EXT_LEARNED : 0),
	};
	memcpy((uint8_t *)buf + NLMSG_HDRLEN, &ndm, sizeof(ndm));
	at = put_attr(buf, at, size, NDA_LLADDR, mac, 6);
	if (!at)
		return 0;
	nh.nlmsg_len = (uint32_t)at;
	memcpy(buf, &nh, sizeof(nh));
	return at;
}

size_t evpn_neigh_encode_dump(void *buf, size_t size, uint32_t seq)
{
	size_t len = NLMSG_LENGTH(sizeof(struct ndmsg));
	if (size < len)
		return 0;
	memset(buf, 0, len);
	struct nlmsghdr nh = {
		.nlmsg_len = (uint32_t)len,
		.nlmsg_type = RTM_GETNEIGH,
		.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.nlmsg_seq = seq,
	};
	struct ndmsg ndm = { .ndm_family = AF_BRIDGE };
	memcpy(buf, &nh, sizeof(nh));
	memcpy((uint8_t *)buf + NLMSG_HDRLEN, &ndm, sizeof(ndm));
	return len;
}
