/* flow_extract: parse a frame once into a struct flow_key and the layer
 * offsets of its struct pkt.  See flow_extract.h for the contract.
 *
 * One helper per layer; each checks only its own header, one commented check
 * at a time, and hands the next offset on.  Reading is bounded by
 * parse_ctx.hdr_end: headers must lie in the linear part *and* inside the
 * current frame (the IP datagram once its length is known).  Lengths claimed
 * by headers are checked against parse_ctx.end, which counts frags too, so a
 * GRO'd frame whose payload lives in frags still parses.
 *
 * Payload bytes are never touched: the cost is a fixed number of header
 * reads per layer. */
#include "parse/flow_extract.h"

#include <string.h>

#include "packet/bytes.h"
#include "packet/hdr.h"

struct parse_ctx {
	struct pkt *pkt;
	const uint8_t *data;
	/* One past the last byte of the frame being parsed, counting frags.
	 * Shrinks as IP and UDP lengths are learnt (padding is trimmed). */
	uint32_t end;
	/* min(end, linear size): headers must end at or before this. */
	uint32_t hdr_end;
	/* The IP datagram of the frame being parsed is a fragment that more
	 * fragments follow (IPv4 MF, IPv6 M flag). */
	bool more_fragments;
	struct flow_key *key;
};

/* Where to store the offsets of one frame's layers: pkt's outer l2..payload
 * or its inner_* fields.  They are written in place rather than returned in
 * a struct, whose 16-bit stores and 64-bit reload cost a store-forwarding
 * stall per frame.  All start as PKT_OFS_NONE (pkt_clear_offsets()). */
struct layer_ofs {
	uint16_t *l2, *l3, *l4, *payload;
};

static void ctx_init(struct parse_ctx *c, struct pkt *pkt, struct flow_key *key)
{
	c->pkt = pkt;
	c->data = pkt->data;
	c->end = pkt_len(pkt);
	c->hdr_end = pkt->size < c->end ? pkt->size : c->end;
	c->more_fragments = false;
	c->key = key;
}

/* True if `len` header bytes at `ofs` can be read. */
static inline bool have(const struct parse_ctx *c, uint32_t ofs, uint32_t len)
{
	return ofs <= c->hdr_end && len <= c->hdr_end - ofs;
}

/* The frame ends at `new_end`: whatever follows (Ethernet padding, bytes
 * after a UDP datagram carrying VXLAN) is cut from the pkt, so no later stage
 * can take it for payload.  The frame being parsed is always the last thing
 * in the pkt, so trimming the pkt trims exactly that frame. */
static void ctx_trim(struct parse_ctx *c, uint32_t new_end)
{
	if (new_end >= c->end)
		return;
	pkt_trim(c->pkt, new_end);
	c->end = new_end;
	c->hdr_end = c->pkt->size < new_end ? c->pkt->size : new_end;
}

/* Zeroes the key with eleven 16-byte stores.  A plain memset() of 176 bytes
 * becomes `rep stos` with gcc's generic tuning, whose start-up cost was the
 * largest single item of the whole parse. */
typedef uint8_t zero_vec __attribute__((vector_size(16), aligned(1), may_alias));
_Static_assert(sizeof(struct flow_key) == 11 * sizeof(zero_vec), "key_zero() writes eleven 16-byte words");

static inline void key_zero(struct flow_key *key)
{
	/* Written out: gcc turns a loop back into memset(). */
	zero_vec *v = (zero_vec *)key;
	v[0] = v[1] = v[2] = v[3] = v[4] = v[5] = v[6] = v[7] = v[8] = v[9] = v[10] = (zero_vec){ 0 };
}

/* ---- L4 ------------------------------------------------------------------ */

bool tcp_opts_parse(const uint8_t *opts, size_t len, struct tcp_opts *out)
{
	memset(out, 0, sizeof(*out));
	size_t i = 0;
	while (i < len) {
		uint8_t kind = opts[i];
		if (kind == TCP_OPT_EOL)
			break; /* the rest is padding */
		if (kind == TCP_OPT_NOP) {
			i++;
			continue;
		}
		/* Every other option has a length byte covering kind and length. */
		if (len - i < 2)
			return false;
		uint8_t olen = opts[i + 1];
		if (olen < 2 || olen > len - i)
			return false;
		const uint8_t *val = opts + i + 2;
		switch (kind) {
		case TCP_OPT_MSS:
			if (olen != 4)
				return false;
			out->mss = load_be16(val);
			out->present |= TCP_OPTS_MSS;
			break;
		case TCP_OPT_WSCALE:
			if (olen != 3)
				return false;
			out->wscale = val[0];
			out->present |= TCP_OPTS_WSCALE;
			break;
		case TCP_OPT_TIMESTAMP:
			if (olen != 10)
				return false;
			out->tsval = load_be32(val);
			out->tsecr = load_be32(val + 4);
			out->present |= TCP_OPTS_TIMESTAMP;
			break;
		/* Like Linux, a SACK-permitted or SACK option of the wrong size
		 * is ignored rather than fatal: it carries no value we keep. */
		case TCP_OPT_SACK_PERM:
			if (olen == 2)
				out->present |= TCP_OPTS_SACK_PERM;
			break;
		case TCP_OPT_SACK:
			if (olen >= 10 && (olen - 2) % 8 == 0)
				out->present |= TCP_OPTS_SACK;
			break;
		default:
			break; /* unknown options are skipped by their length */
		}
		i += olen;
	}
	return true;
}

static enum drop_reason parse_tcp(struct parse_ctx *c, uint32_t l4, const struct layer_ofs *lo)
{
	if (!have(c, l4, TCP_HDR_LEN))
		return DROP_TRUNCATED_TCP;
	const uint8_t *th = c->data + l4;
	uint8_t doff_res = th[offsetof(struct tcp_hdr, doff_res)];
	uint32_t doff = (uint32_t)(doff_res >> 4) * 4;
	/* The data offset must cover the fixed header and stay inside the
	 * segment (RFC 1858: a first fragment cutting the header is dropped). */
	if (doff < TCP_HDR_LEN || !have(c, l4, doff))
		return DROP_BAD_TCP_DOFF;
	if (doff > TCP_HDR_LEN &&
	    !tcp_opts_parse(th + TCP_HDR_LEN, doff - TCP_HDR_LEN, &c->key->tcp_opts))
		return DROP_BAD_TCP_OPTIONS;

	struct flow_key *key = c->key;
	key->tp_src = load_be16(th + offsetof(struct tcp_hdr, src_be));
	key->tp_dst = load_be16(th + offsetof(struct tcp_hdr, dst_be));
	key->tcp_flags = (uint16_t)(th[offsetof(struct tcp_hdr, flags)] |
				    ((doff_res & 1) ? TCP_NS : 0));
	*lo->payload = (uint16_t)(l4 + doff);
	return DROP_NONE;
}

static enum drop_reason parse_udp(struct parse_ctx *c, uint32_t l4, const struct layer_ofs *lo)
{
	if (!have(c, l4, UDP_HDR_LEN))
		return DROP_TRUNCATED_UDP;
	const uint8_t *uh = c->data + l4;
	uint32_t udp_len = load_be16(uh + offsetof(struct udp_hdr, len_be));
	/* The length covers at least the header.  It may be shorter than the
	 * IP payload (legal; the rest is ignored) but not longer, except in a
	 * first fragment that others follow: there it counts the whole
	 * reassembled datagram. */
	if (udp_len < UDP_HDR_LEN)
		return DROP_UDP_LEN;
	if (!c->more_fragments && udp_len > c->end - l4)
		return DROP_UDP_LEN;

	c->key->tp_src = load_be16(uh + offsetof(struct udp_hdr, src_be));
	c->key->tp_dst = load_be16(uh + offsetof(struct udp_hdr, dst_be));
	*lo->payload = (uint16_t)(l4 + UDP_HDR_LEN);
	return DROP_NONE;
}

static enum drop_reason parse_icmp(struct parse_ctx *c, uint32_t l4, const struct layer_ofs *lo)
{
	if (!have(c, l4, ICMP_HDR_LEN))
		return DROP_TRUNCATED_ICMP;
	const uint8_t *ih = c->data + l4;
	c->key->tp_src = ih[offsetof(struct icmp_hdr, type)];
	c->key->tp_dst = ih[offsetof(struct icmp_hdr, code)];
	*lo->payload = (uint16_t)(l4 + ICMP_HDR_LEN);
	return DROP_NONE;
}

/* SCTP: the ports, for flower's src_port/dst_port (tc matches them).  The
 * chunks are not walked and a header cut short is not a drop: l4 is set
 * and the ports stay zero, as for a protocol we do not parse; payload_ofs
 * stays absent (no later stage reads SCTP payload). */
static enum drop_reason parse_sctp(struct parse_ctx *c, uint32_t l4)
{
	if (!have(c, l4, SCTP_HDR_LEN))
		return DROP_NONE;
	c->key->tp_src = load_be16(c->data + l4);
	c->key->tp_dst = load_be16(c->data + l4 + 2);
	return DROP_NONE;
}

/* `proto` is the final IP protocol; ICMP and ICMPv6 only count on their own
 * IP version (as in OVS): elsewhere they are just unknown protocols. */
static enum drop_reason parse_l4(struct parse_ctx *c, uint32_t l4, uint8_t proto,
				 const struct layer_ofs *lo)
{
	*lo->l4 = (uint16_t)l4;
	switch (proto) {
	case IP_PROTO_TCP:
		return parse_tcp(c, l4, lo);
	case IP_PROTO_UDP:
		return parse_udp(c, l4, lo);
	case IP_PROTO_SCTP:
		return parse_sctp(c, l4);
	case IP_PROTO_ICMP:
		if (c->key->nw_family == 4)
			return parse_icmp(c, l4, lo);
		return DROP_NONE;
	case IP_PROTO_ICMPV6:
		if (c->key->nw_family == 6)
			return parse_icmp(c, l4, lo);
		return DROP_NONE;
	default:
		/* Protocol 0 on IPv4, ESP, GRE...: the key holds nw_proto, l4
		 * points at the first byte after the IP headers. */
		return DROP_NONE;
	}
}

/* ---- L3 ------------------------------------------------------------------ */

static enum drop_reason parse_ipv4(struct parse_ctx *c, uint32_t l3, const struct layer_ofs *lo)
{
	if (!have(c, l3, IPV4_HDR_LEN))
		return DROP_TRUNCATED_IPV4;
	const uint8_t *ip = c->data + l3;
	if ((ip[0] >> 4) != 4)
		return DROP_BAD_IP_VERSION;
	uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4;
	if (ihl < IPV4_HDR_LEN || !have(c, l3, ihl))
		return DROP_BAD_IHL;
	/* The total length covers the header and fits the frame; anything
	 * after it is Ethernet padding and is cut off here. */
	uint32_t tot_len = load_be16(ip + offsetof(struct ipv4_hdr, tot_len_be));
	if (tot_len < ihl || tot_len > c->end - l3)
		return DROP_IPV4_TOTAL_LEN;
	ctx_trim(c, l3 + tot_len);

	struct flow_key *key = c->key;
	key->nw_family = 4;
	key->nw_tos = ip[offsetof(struct ipv4_hdr, tos)];
	key->nw_ttl = ip[offsetof(struct ipv4_hdr, ttl)];
	key->nw_proto = ip[offsetof(struct ipv4_hdr, proto)];
	memcpy(key->nw_src, ip + offsetof(struct ipv4_hdr, src), 4);
	memcpy(key->nw_dst, ip + offsetof(struct ipv4_hdr, dst), 4);
	*lo->l3 = (uint16_t)l3;

	/* The checksum is not verified here: GRO and the ports decide. */
	uint16_t frag_off = load_be16(ip + offsetof(struct ipv4_hdr, frag_off_be));
	if (frag_off & (IPV4_MF | IPV4_FRAG_OFFSET_MASK)) {
		key->nw_frag = FLOW_FRAG_ANY;
		c->more_fragments = frag_off & IPV4_MF;
		if (frag_off & IPV4_FRAG_OFFSET_MASK) {
			key->nw_frag |= FLOW_FRAG_LATER;
			return DROP_NONE; /* no L4 header in a later fragment */
		}
	}
	return parse_l4(c, l3 + ihl, key->nw_proto, lo);
}

/* Options of a hop-by-hop or destination-options header (RFC 8200 4.2):
 * type-length-value, Pad1 alone.  A jumbo payload option is refused by name
 * wherever it sits in a hop-by-hop header. */
static enum drop_reason parse_ipv6_tlv_opts(const uint8_t *opts, uint32_t len, bool hop_by_hop)
{
	uint32_t i = 0;
	while (i < len) {
		if (opts[i] == IPV6_OPT_PAD1) {
			i++;
			continue;
		}
		if (len - i < 2 || opts[i + 1] > len - i - 2)
			return DROP_IPV6_BAD_OPTIONS;
		if (hop_by_hop && opts[i] == IPV6_OPT_JUMBO)
			return DROP_IPV6_JUMBO;
		i += 2u + opts[i + 1];
	}
	return DROP_NONE;
}

static bool ipv6_is_ext_hdr(uint8_t next_hdr)
{
	switch (next_hdr) {
	case IP_PROTO_HOPOPTS:
	case IP_PROTO_ROUTING:
	case IP_PROTO_FRAGMENT:
	case IP_PROTO_DSTOPTS:
	case IP_PROTO_AH:
		return true;
	default:
		return false;
	}
}

/* Walks the extension headers from `*ofs`, leaving `*ofs` at the L4 header
 * and `*next_hdr` at its protocol.  Returns DROP_NONE with
 * key->nw_frag & FLOW_FRAG_LATER set when a later fragment ends the walk. */
static enum drop_reason parse_ipv6_ext_chain(struct parse_ctx *c, uint32_t *ofs, uint8_t *next_hdr)
{
	for (unsigned n = 0; ipv6_is_ext_hdr(*next_hdr); n++) {
		uint8_t type = *next_hdr;
		/* Bounded work per packet, whatever the chain claims. */
		if (n == FLOW_IPV6_MAX_EXT_HDRS)
			return DROP_IPV6_EXT_CHAIN;
		/* Hop-by-hop may only come first (RFC 8200 4.1). */
		if (type == IP_PROTO_HOPOPTS && n != 0)
			return DROP_IPV6_EXT_CHAIN;
		if (!have(c, *ofs, 2))
			return DROP_TRUNCATED_IPV6_EXT;
		const uint8_t *eh = c->data + *ofs;
		uint32_t len;
		if (type == IP_PROTO_FRAGMENT)
			len = IPV6_FRAG_HDR_LEN;
		else if (type == IP_PROTO_AH)
			len = ((uint32_t)eh[1] + 2) * 4; /* RFC 4302: in 4-byte units, minus 2 */
		else
			len = ((uint32_t)eh[1] + 1) * 8;
		if (!have(c, *ofs, len))
			return DROP_TRUNCATED_IPV6_EXT;

		if (type == IP_PROTO_HOPOPTS || type == IP_PROTO_DSTOPTS) {
			enum drop_reason reason =
				parse_ipv6_tlv_opts(eh + 2, len - 2, type == IP_PROTO_HOPOPTS);
			if (reason != DROP_NONE)
				return reason;
		}
		*next_hdr = eh[0];
		*ofs += len;

		if (type == IP_PROTO_FRAGMENT) {
			uint16_t off_flags = load_be16(eh + offsetof(struct ipv6_frag_hdr, off_flags_be));
			c->key->nw_frag |= FLOW_FRAG_ANY;
			c->more_fragments = off_flags & 1;
			if (off_flags >> 3) {
				/* What follows is the middle of a datagram. */
				c->key->nw_frag |= FLOW_FRAG_LATER;
				return DROP_NONE;
			}
		}
	}
	return DROP_NONE;
}

static enum drop_reason parse_ipv6(struct parse_ctx *c, uint32_t l3, const struct layer_ofs *lo)
{
	if (!have(c, l3, IPV6_HDR_LEN))
		return DROP_TRUNCATED_IPV6;
	const uint8_t *ip = c->data + l3;
	uint32_t ver_tc_flow = load_be32(ip);
	if ((ver_tc_flow >> 28) != 6)
		return DROP_BAD_IP_VERSION;
	uint32_t payload_len = load_be16(ip + offsetof(struct ipv6_hdr, payload_len_be));
	uint8_t next_hdr = ip[offsetof(struct ipv6_hdr, next_hdr)];
	/* RFC 2675: payload length 0 followed by hop-by-hop options is a
	 * jumbogram (no other packet can have its hop-by-hop header outside
	 * its payload).  We never carry them. */
	if (payload_len == 0 && next_hdr == IP_PROTO_HOPOPTS)
		return DROP_IPV6_JUMBO;
	if (payload_len > c->end - l3 - IPV6_HDR_LEN)
		return DROP_IPV6_PAYLOAD_LEN;
	ctx_trim(c, l3 + IPV6_HDR_LEN + payload_len);

	struct flow_key *key = c->key;
	key->nw_family = 6;
	key->nw_tos = (uint8_t)(ver_tc_flow >> 20);
	key->ipv6_label = ver_tc_flow & 0xfffff;
	key->nw_ttl = ip[offsetof(struct ipv6_hdr, hop_limit)];
	memcpy(key->nw_src, ip + offsetof(struct ipv6_hdr, src), 16);
	memcpy(key->nw_dst, ip + offsetof(struct ipv6_hdr, dst), 16);
	*lo->l3 = (uint16_t)l3;

	uint32_t l4 = l3 + IPV6_HDR_LEN;
	enum drop_reason reason = parse_ipv6_ext_chain(c, &l4, &next_hdr);
	if (reason != DROP_NONE)
		return reason;
	key->nw_proto = next_hdr;
	if (key->nw_frag & FLOW_FRAG_LATER)
		return DROP_NONE;
	return parse_l4(c, l4, next_hdr, lo);
}

static enum drop_reason parse_arp(struct parse_ctx *c, uint32_t l3, const struct layer_ofs *lo)
{
	enum { ARP_FIXED_LEN = 8 }; /* htype, ptype, hlen, plen, op */
	if (!have(c, l3, ARP_FIXED_LEN))
		return DROP_TRUNCATED_ARP;
	const uint8_t *arp = c->data + l3;
	struct flow_key *key = c->key;
	*lo->l3 = (uint16_t)l3;
	/* Only Ethernet/IPv4 ARP has addresses we understand; for any other
	 * kind the key holds the opcode alone (as OVS does). */
	bool eth_ipv4 = load_be16(arp + offsetof(struct arp_eth_ipv4, htype_be)) == 1 &&
			load_be16(arp + offsetof(struct arp_eth_ipv4, ptype_be)) == ETH_TYPE_IPV4 &&
			arp[offsetof(struct arp_eth_ipv4, hlen)] == ETH_ADDR_LEN &&
			arp[offsetof(struct arp_eth_ipv4, plen)] == 4;
	if (eth_ipv4 && !have(c, l3, sizeof(struct arp_eth_ipv4)))
		return DROP_TRUNCATED_ARP;
	key->nw_proto = (uint8_t)load_be16(arp + offsetof(struct arp_eth_ipv4, op_be));
	if (!eth_ipv4)
		return DROP_NONE;
	memcpy(key->arp_sha, arp + offsetof(struct arp_eth_ipv4, sha), ETH_ADDR_LEN);
	memcpy(key->nw_src, arp + offsetof(struct arp_eth_ipv4, spa), 4);
	memcpy(key->arp_tha, arp + offsetof(struct arp_eth_ipv4, tha), ETH_ADDR_LEN);
	memcpy(key->nw_dst, arp + offsetof(struct arp_eth_ipv4, tpa), 4);
	return DROP_NONE;
}

/* An MPLS label stack at `ofs`, as the kernel's flow dissector reads it
 * for cls_flower (__skb_flow_dissect_mpls): entry by entry up to the
 * bottom of stack, recording at most FLOW_MPLS_MAX; deeper entries are
 * not read.  A stack cut short by the end of the frame keeps the entries
 * read so far and is not a drop: the kernel classifies such a frame with
 * what it dissected, and a switch forwards frames it does not route.
 * Nothing after the stack is parsed (no L3 offset), as in the kernel. */
static void parse_mpls(struct parse_ctx *c, uint32_t ofs)
{
	struct flow_key *key = c->key;
	for (unsigned i = 0; i < FLOW_MPLS_MAX && have(c, ofs, 4); i++, ofs += 4) {
		uint32_t lse = load_be32(c->data + ofs);
		key->mpls_lse[i] = lse;
		key->mpls_used |= (uint8_t)(1u << i);
		if (lse & (1u << FLOW_MPLS_BOS_SHIFT))
			break;
	}
}

/* ---- L2 ------------------------------------------------------------------ */

static bool eth_type_is_vlan(uint16_t type)
{
	return type == ETH_TYPE_VLAN || type == ETH_TYPE_QINQ || type == ETH_TYPE_QINQ_OLD;
}

/* Reads up to two tags starting at `*ofs` (whose TPID is `*type`), leaving
 * `*ofs` after them and `*type` at the encapsulated ethertype. */
static enum drop_reason parse_vlan(struct parse_ctx *c, uint32_t *ofs, uint16_t *type)
{
	struct flow_key *key = c->key;
	while (eth_type_is_vlan(*type)) {
		if (key->n_vlans == 2)
			return DROP_VLAN_TOO_MANY_TAGS;
		if (!have(c, *ofs, VLAN_HDR_LEN))
			return DROP_TRUNCATED_VLAN;
		const uint8_t *tag = c->data + *ofs;
		key->vlan_tpid[key->n_vlans] = *type;
		key->vlan_tci[key->n_vlans] = load_be16(tag + offsetof(struct vlan_hdr, tci_be));
		key->n_vlans++;
		*type = load_be16(tag + offsetof(struct vlan_hdr, next_type_be));
		*ofs += VLAN_HDR_LEN;
	}
	return DROP_NONE;
}

/* Parses one Ethernet frame starting at `l2` (outer, or inner of VXLAN). */
static enum drop_reason parse_frame(struct parse_ctx *c, uint32_t l2, const struct layer_ofs *lo)
{
	if (!have(c, l2, ETH_HDR_LEN))
		return DROP_TRUNCATED_ETH;
	const uint8_t *eth = c->data + l2;
	struct flow_key *key = c->key;
	c->more_fragments = false;
	memcpy(key->dl_dst, eth + offsetof(struct eth_hdr, dst), ETH_ADDR_LEN);
	memcpy(key->dl_src, eth + offsetof(struct eth_hdr, src), ETH_ADDR_LEN);
	*lo->l2 = (uint16_t)l2;

	uint16_t type = load_be16(eth + offsetof(struct eth_hdr, type_be));
	uint32_t l3 = l2 + ETH_HDR_LEN;
	enum drop_reason reason = parse_vlan(c, &l3, &type);
	if (reason != DROP_NONE)
		return reason;

	switch (type) {
	case ETH_TYPE_IPV4:
		key->dl_type = type;
		return parse_ipv4(c, l3, lo);
	case ETH_TYPE_IPV6:
		key->dl_type = type;
		return parse_ipv6(c, l3, lo);
	case ETH_TYPE_ARP:
	case ETH_TYPE_RARP: /* the same format; the kernel's dissector reads both */
		key->dl_type = type;
		return parse_arp(c, l3, lo);
	case ETH_TYPE_MPLS_UC:
	case ETH_TYPE_MPLS_MC:
		key->dl_type = type;
		parse_mpls(c, l3);
		return DROP_NONE;
	default:
		/* 802.3 frames carry a length here, not a type; unknown types
		 * leave only dl_type in the key and no L3 offset. */
		key->dl_type = type < ETH_TYPE_MIN ? FLOW_DL_TYPE_NONE : type;
		return DROP_NONE;
	}
}

/* ---- VXLAN --------------------------------------------------------------- */

/* Parses the VXLAN header at `vx` and the inner frame after it, into the
 * key's L2..L4 sections and pkt's inner offsets.  The key's tunnel section
 * must already be filled. */
static enum drop_reason parse_vxlan(struct parse_ctx *c, uint32_t vx)
{
	struct pkt *pkt = c->pkt;
	if (!have(c, vx, VXLAN_HDR_LEN))
		return DROP_TRUNCATED_VXLAN;
	const uint8_t *vh = c->data + vx;
	uint32_t flags = load_be32(vh + offsetof(struct vxlan_hdr, flags_be));
	uint32_t vni_field = load_be32(vh + offsetof(struct vxlan_hdr, vni_be));
	if (!(flags & VXLAN_FLAG_VNI))
		return DROP_VXLAN_NO_VNI_FLAG;
	/* RFC 7348: reserved bits MUST be zero when sent; like the kernel's
	 * vxlan without extensions, refuse rather than guess what they mean. */
	if ((flags & ~(uint32_t)VXLAN_FLAG_VNI) || (vni_field & 0xff))
		return DROP_VXLAN_RESERVED_BITS;

	c->key->tun_vni = vni_field >> 8;
	pkt->tunnel.vni = vni_field >> 8;
	pkt->tunnel_ofs = (uint16_t)vx;

	const struct layer_ofs inner = {
		&pkt->inner_l2_ofs, &pkt->inner_l3_ofs, &pkt->inner_l4_ofs, &pkt->inner_payload_ofs,
	};
	return parse_frame(c, vx + VXLAN_HDR_LEN, &inner);
}

static bool is_vxlan(const struct flow_key *key, const struct layer_ofs *lo, uint16_t vxlan_port)
{
	return vxlan_port != 0 && key->nw_family != 0 && key->nw_proto == IP_PROTO_UDP &&
	       key->nw_frag == 0 && *lo->payload != PKT_OFS_NONE && key->tp_dst == vxlan_port;
}

/* The outer frame is UDP to the VXLAN port: move what the outer headers say
 * into the tunnel metadata, forget the outer L2..L4 in the key, and parse
 * the encapsulated frame in their place. */
static enum drop_reason decap_vxlan(struct parse_ctx *c, const struct layer_ofs *outer)
{
	struct flow_key *key = c->key;
	struct pkt_tunnel *tun = &c->pkt->tunnel;

	/* The inner frame ends where the UDP datagram does. */
	uint32_t l4 = *outer->l4;
	uint32_t udp_len = load_be16(c->data + l4 + offsetof(struct udp_hdr, len_be));
	ctx_trim(c, l4 + udp_len);

	tun->family = key->nw_family;
	memcpy(tun->src, key->nw_src, sizeof(tun->src));
	memcpy(tun->dst, key->nw_dst, sizeof(tun->dst));
	tun->src_port = key->tp_src;
	tun->dst_port = key->tp_dst;
	tun->tos = key->nw_tos;
	tun->ttl = key->nw_ttl;

	/* The outer L2..L4 are forgotten: zero the key, then put back what
	 * the tunnel section and metadata hold. */
	uint16_t in_port = key->in_port;
	key_zero(key);
	key->in_port = in_port;
	key->tun_family = tun->family;
	memcpy(key->tun_src, tun->src, sizeof(key->tun_src));
	memcpy(key->tun_dst, tun->dst, sizeof(key->tun_dst));
	key->tun_src_port = tun->src_port;
	key->tun_dst_port = tun->dst_port;
	key->tun_tos = tun->tos;
	key->tun_ttl = tun->ttl;
	return parse_vxlan(c, *outer->payload);
}

/* ---- entry points ---------------------------------------------------------- */

static void key_init(struct flow_key *key, const struct pkt *pkt)
{
	key_zero(key);
	key->in_port = pkt->in_port;
}

enum drop_reason flow_extract(struct pkt *pkt, uint16_t vxlan_port, struct flow_key *key)
{
	struct parse_ctx c;
	const struct layer_ofs outer = { &pkt->l2_ofs, &pkt->l3_ofs, &pkt->l4_ofs, &pkt->payload_ofs };

	key_init(key, pkt);
	pkt_clear_offsets(pkt);
	/* Tunnel metadata of a whole frame comes from the frame alone. */
	pkt->tunnel.family = 0;
	ctx_init(&c, pkt, key);

	enum drop_reason reason = parse_frame(&c, 0, &outer);
	if (reason != DROP_NONE)
		return reason;
	if (is_vxlan(key, &outer, vxlan_port))
		return decap_vxlan(&c, &outer);
	return DROP_NONE;
}

enum drop_reason flow_extract_vxlan(struct pkt *pkt, struct flow_key *key)
{
	struct parse_ctx c;
	const struct pkt_tunnel *tun = &pkt->tunnel;

	key_init(key, pkt);
	pkt_clear_offsets(pkt);
	ctx_init(&c, pkt, key);

	key->tun_family = tun->family;
	memcpy(key->tun_src, tun->src, sizeof(key->tun_src));
	memcpy(key->tun_dst, tun->dst, sizeof(key->tun_dst));
	key->tun_src_port = tun->src_port;
	key->tun_dst_port = tun->dst_port;
	key->tun_tos = tun->tos;
	key->tun_ttl = tun->ttl;
	return parse_vxlan(&c, 0);
}
