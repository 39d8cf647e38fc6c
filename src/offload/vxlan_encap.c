/* VXLAN encapsulation: outer headers, flow hash, source port.  See
 * vxlan_encap.h for the contracts. */
#include "offload/vxlan_encap.h"

#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "packet/bytes.h"
#include "packet/csum.h"
#include "util/hash.h"

int vxlan_encap_check(const struct vxlan_encap *cfg)
{
	if (cfg->family != 4 && cfg->family != 6)
		return -EINVAL;
	if (cfg->vni > VXLAN_VNI_MAX)
		return -EINVAL;
	/* Both zero means the default range; otherwise a real, ordered one. */
	if ((cfg->src_port_min || cfg->src_port_max) &&
	    (cfg->src_port_min == 0 || cfg->src_port_min > cfg->src_port_max))
		return -EINVAL;
	/* RFC 6935/6936: zero IPv6 UDP checksums need an opt-in at both ends
	 * that we do not negotiate. */
	if (cfg->udp_zero_csum && cfg->family != 4)
		return -EINVAL;
	return 0;
}

/* ---- flow hash ------------------------------------------------------------
 * Murmur3's 32-bit block mix and finaliser (util/hash.h): cheap, and good
 * enough that neighbouring ports spread over the whole source-port range. */

static bool l4_has_ports(uint8_t proto)
{
	return proto == IP_PROTO_TCP || proto == IP_PROTO_UDP || proto == 132 /* SCTP */;
}

/* Hashes addresses, protocol and ports of the IPv6 packet at `ip`; false if
 * it is too short to say (then the caller falls back to L2). */
static bool hash_ipv6(const uint8_t *ip, size_t len, uint32_t *h)
{
	if (len < IPV6_HDR_LEN)
		return false;
	uint8_t next = ip[6];
	size_t ofs = IPV6_HDR_LEN;
	bool fragment = false;
	*h = hash_murmur3_bytes(*h, ip + 8, 32);
	/* Walk a few extension headers to find the ports. */
	for (int n = 0; n < 8; n++) {
		if (next == IP_PROTO_FRAGMENT) {
			if (len - ofs < IPV6_FRAG_HDR_LEN)
				break;
			fragment = true;
			next = ip[ofs];
			ofs += IPV6_FRAG_HDR_LEN;
		} else if (next == IP_PROTO_HOPOPTS || next == IP_PROTO_ROUTING ||
			   next == IP_PROTO_DSTOPTS) {
			if (len - ofs < 2)
				break;
			size_t ext_len = ((size_t)ip[ofs + 1] + 1) * 8;
			next = ip[ofs];
			if (len - ofs < ext_len)
				break;
			ofs += ext_len;
		} else {
			break;
		}
	}
	*h = hash_murmur3_add(*h, next);
	if (!fragment && l4_has_ports(next) && len - ofs >= 4)
		*h = hash_murmur3_bytes(*h, ip + ofs, 4);
	return true;
}

static bool hash_ipv4(const uint8_t *ip, size_t len, uint32_t *h)
{
	if (len < IPV4_HDR_LEN || ip[0] >> 4 != 4)
		return false;
	size_t ihl = (size_t)(ip[0] & 0xf) * 4;
	uint8_t proto = ip[9];
	bool fragment = (load_be16(ip + 6) & (IPV4_MF | IPV4_FRAG_OFFSET_MASK)) != 0;
	*h = hash_murmur3_bytes(*h, ip + 12, 8);
	*h = hash_murmur3_add(*h, proto);
	if (!fragment && ihl >= IPV4_HDR_LEN && l4_has_ports(proto) && len >= ihl + 4)
		*h = hash_murmur3_bytes(*h, ip + ihl, 4);
	return true;
}

uint32_t vxlan_flow_hash(const uint8_t *frame, size_t len)
{
	uint32_t h = 0x7678736c; /* "vxsl": any fixed seed */
	if (len < ETH_HDR_LEN)
		return hash_murmur3_finish(hash_murmur3_bytes(h, frame, len));

	size_t ofs = ETH_HDR_LEN;
	uint16_t type = load_be16(frame + 12);
	for (int tags = 0; tags < 2; tags++) {
		if (type != ETH_TYPE_VLAN && type != ETH_TYPE_QINQ && type != ETH_TYPE_QINQ_OLD)
			break;
		if (len - ofs < VLAN_HDR_LEN)
			break;
		type = load_be16(frame + ofs + 2);
		ofs += VLAN_HDR_LEN;
	}

	uint32_t ip_h = h;
	if (type == ETH_TYPE_IPV4 && hash_ipv4(frame + ofs, len - ofs, &ip_h))
		return hash_murmur3_finish(ip_h);
	if (type == ETH_TYPE_IPV6 && hash_ipv6(frame + ofs, len - ofs, &ip_h))
		return hash_murmur3_finish(ip_h);
	/* Not IP (or truncated): the kernel's fallback, the MAC addresses. */
	h = hash_murmur3_bytes(h, frame, 2 * ETH_ADDR_LEN);
	return hash_murmur3_finish(hash_murmur3_add(h, type));
}

uint16_t vxlan_src_port(const struct vxlan_encap *cfg, uint32_t flow_hash)
{
	uint32_t lo = VXLAN_SRC_PORT_MIN_DEFAULT, hi = VXLAN_SRC_PORT_MAX_DEFAULT;
	if (cfg->src_port_min || cfg->src_port_max) {
		lo = cfg->src_port_min;
		hi = cfg->src_port_max;
	}
	/* As udp_flow_src_port(): fold the high bits down (the low ones are
	 * often weak), then scale by multiplication, not modulo.  Unlike the
	 * kernel's, our range includes hi. */
	uint32_t hash = flow_hash ^ (flow_hash << 16);
	return (uint16_t)(lo + (((uint64_t)hash * (hi - lo + 1)) >> 32));
}

/* ---- headers ------------------------------------------------------------ */

void vxlan_hdr_write(uint8_t *buf, uint32_t vni)
{
	struct vxlan_hdr vx = {
		.flags_be = htonl(VXLAN_FLAG_VNI),
		.vni_be = htonl(vni << 8),
	};
	memcpy(buf, &vx, sizeof(vx));
}

void vxlan_encap_write(uint8_t *buf, const struct vxlan_encap *cfg, uint32_t flow_hash,
		       uint16_t ip_id, uint32_t inner_len, uint32_t inner_sum)
{
	uint8_t ttl = cfg->ttl ? cfg->ttl : VXLAN_ENCAP_DEFAULT_TTL;
	uint32_t udp_len = UDP_HDR_LEN + VXLAN_HDR_LEN + inner_len;

	struct eth_hdr eth;
	memcpy(eth.dst, cfg->dst_mac, ETH_ADDR_LEN);
	memcpy(eth.src, cfg->src_mac, ETH_ADDR_LEN);
	eth.type_be = htons(cfg->family == 6 ? ETH_TYPE_IPV6 : ETH_TYPE_IPV4);
	memcpy(buf, &eth, sizeof(eth));
	uint8_t *l3 = buf + ETH_HDR_LEN;

	uint32_t pseudo;
	uint8_t *l4;
	if (cfg->family == 6) {
		/* Flow label from the same hash as the source port, as the
		 * kernel's auto flow labels do, so ECMP on the label agrees. */
		uint32_t label = (flow_hash ^ (flow_hash >> 12)) & 0xfffff;
		struct ipv6_hdr ip6 = {
			.ver_tc_flow_be = htonl(6u << 28 | (uint32_t)cfg->tos << 20 | label),
			.payload_len_be = htons((uint16_t)udp_len),
			.next_hdr = IP_PROTO_UDP,
			.hop_limit = ttl,
		};
		memcpy(ip6.src, cfg->src_ip, 16);
		memcpy(ip6.dst, cfg->dst_ip, 16);
		memcpy(l3, &ip6, sizeof(ip6));
		l4 = l3 + IPV6_HDR_LEN;
		pseudo = csum_pseudo_ipv6(cfg->src_ip, cfg->dst_ip, IP_PROTO_UDP, udp_len);
	} else {
		struct ipv4_hdr ip4 = {
			.ver_ihl = 0x45,
			.tos = cfg->tos,
			.tot_len_be = htons((uint16_t)(IPV4_HDR_LEN + udp_len)),
			.id_be = htons(ip_id),
			.frag_off_be = htons(cfg->no_df ? 0 : IPV4_DF),
			.ttl = ttl,
			.proto = IP_PROTO_UDP,
		};
		memcpy(ip4.src, cfg->src_ip, 4);
		memcpy(ip4.dst, cfg->dst_ip, 4);
		memcpy(l3, &ip4, sizeof(ip4));
		csum_ipv4_hdr_set(l3, IPV4_HDR_LEN);
		l4 = l3 + IPV4_HDR_LEN;
		pseudo = csum_pseudo_ipv4(cfg->src_ip, cfg->dst_ip, IP_PROTO_UDP, udp_len);
	}

	struct udp_hdr udp = {
		.src_be = htons(vxlan_src_port(cfg, flow_hash)),
		.dst_be = htons(cfg->dst_port ? cfg->dst_port : VXLAN_DEFAULT_PORT),
		.len_be = htons((uint16_t)udp_len),
		.csum = 0,
	};
	memcpy(l4, &udp, sizeof(udp));
	vxlan_hdr_write(l4 + UDP_HDR_LEN, cfg->vni);

	if (!cfg->udp_zero_csum) {
		/* The inner frame starts UDP_HDR_LEN + VXLAN_HDR_LEN = 16 bytes
		 * into the datagram, an even offset, so its sum adds as is. */
		uint32_t sum = csum_partial(l4, UDP_HDR_LEN + VXLAN_HDR_LEN, pseudo);
		uint64_t wide = (uint64_t)sum + inner_sum;
		sum = (uint32_t)(wide & 0xffffffff) + (uint32_t)(wide >> 32);
		uint16_t csum = csum_fold(sum);
		if (csum == 0)
			csum = 0xffff; /* 0 means "no checksum" in UDP */
		memcpy(l4 + UDP_CSUM_OFFSET, &csum, 2);
	}
}

int vxlan_encap_pkt(struct pkt *pkt, const struct vxlan_encap *cfg, uint16_t ip_id)
{
	int err = vxlan_encap_check(cfg);
	if (err)
		return err;
	if (pkt->tunnel_ofs != PKT_OFS_NONE)
		return -EINVAL; /* no VXLAN in VXLAN */

	uint32_t hdr_len = vxlan_encap_hdr_len(cfg);
	uint32_t inner_len = pkt_len(pkt);
	uint32_t ip_hdr_len = cfg->family == 6 ? 0 : IPV4_HDR_LEN;
	if (ip_hdr_len + UDP_HDR_LEN + VXLAN_HDR_LEN + inner_len > 65535)
		return -EMSGSIZE;
	if (pkt_headroom(pkt) < hdr_len)
		return -ENOSPC;

	if (pkt->ol.flags & PKT_OL_NEEDS_CSUM) {
		err = csum_complete_partial(pkt, pkt->ol.csum_start, pkt->ol.csum_offset);
		if (err)
			return err;
	}

	uint32_t inner_sum = csum_pkt(pkt, 0, inner_len, 0);
	uint32_t flow_hash = vxlan_flow_hash(pkt->data, pkt->size);

	/* The inner frame's offsets become the inner_* ones. */
	pkt->inner_l2_ofs = pkt->l2_ofs;
	pkt->inner_l3_ofs = pkt->l3_ofs;
	pkt->inner_l4_ofs = pkt->l4_ofs;
	pkt->inner_payload_ofs = pkt->payload_ofs;
	if (pkt->inner_l2_ofs == PKT_OFS_NONE)
		pkt->inner_l2_ofs = 0;
	pkt->l2_ofs = pkt->l3_ofs = pkt->l4_ofs = pkt->payload_ofs = PKT_OFS_NONE;

	uint8_t *buf = pkt_push(pkt, hdr_len);
	vxlan_encap_write(buf, cfg, flow_hash, ip_id, inner_len, inner_sum);

	pkt->l2_ofs = 0;
	pkt->l3_ofs = ETH_HDR_LEN;
	pkt->l4_ofs = (uint16_t)(hdr_len - UDP_HDR_LEN - VXLAN_HDR_LEN);
	pkt->payload_ofs = (uint16_t)(hdr_len - VXLAN_HDR_LEN);
	pkt->tunnel_ofs = pkt->payload_ofs;

	memset(&pkt->tunnel, 0, sizeof(pkt->tunnel));
	pkt->tunnel.vni = cfg->vni;
	pkt->tunnel.family = cfg->family;
	memcpy(pkt->tunnel.src, cfg->src_ip, 16);
	memcpy(pkt->tunnel.dst, cfg->dst_ip, 16);
	pkt->tunnel.src_port = vxlan_src_port(cfg, flow_hash);
	pkt->tunnel.dst_port = cfg->dst_port ? cfg->dst_port : VXLAN_DEFAULT_PORT;
	memset(&pkt->ol, 0, sizeof(pkt->ol));
	return 0;
}
