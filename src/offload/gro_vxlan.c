/* The tunnel layer of GRO (kernel udp_gro_receive + vxlan_gro_receive):
 * where a VXLAN frame's outer headers are, which of them must match for
 * two segments to be one flow, and decapsulating every tunnelled frame as
 * it leaves (GRO is the last stage before a TAP).  The inner frame is the
 * TCP layer's (gro_tcp.c). */
#include "offload/gro_internal.h"

/* The outer IP and UDP headers of a full VXLAN frame (socket input has
 * none: the port gave their contents as pkt->tunnel). */
static bool gro_vxlan_locate_outer(struct pkt *pkt, struct gro_seg *seg)
{
	const uint8_t *outer_l3 = pkt_at(pkt, pkt->l3_ofs, IPV4_HDR_LEN);

	seg->outer_udp = (const struct udp_hdr *)pkt_at(pkt, pkt->l4_ofs, UDP_HDR_LEN);
	if (!outer_l3 || !seg->outer_udp)
		return false;
	seg->outer_family = outer_l3[0] >> 4;
	if (seg->outer_family == 6 && !pkt_at(pkt, pkt->l3_ofs, IPV6_HDR_LEN))
		return false;
	if (seg->outer_family != 4 && seg->outer_family != 6)
		return false;
	seg->outer_l3 = outer_l3;
	if (pkt->l2_ofs != PKT_OFS_NONE && pkt->l2_ofs < pkt->l3_ofs) {
		seg->outer_l2 = pkt->data + pkt->l2_ofs;
		seg->outer_l2_len = (uint16_t)(pkt->l3_ofs - pkt->l2_ofs);
	}
	return true;
}

bool gro_vxlan_locate(struct pkt *pkt, struct gro_seg *seg, uint16_t *l2_ofs, uint16_t *l3_ofs, uint16_t *l4_ofs)
{
	seg->outer_l2 = seg->outer_l3 = NULL;
	seg->outer_udp = NULL;
	seg->vxlan = NULL;
	seg->outer_l2_len = 0;
	seg->outer_family = 0;
	if (pkt->tunnel_ofs == PKT_OFS_NONE) {
		*l2_ofs = pkt->l2_ofs;
		*l3_ofs = pkt->l3_ofs;
		*l4_ofs = pkt->l4_ofs;
		return true;
	}
	seg->vxlan = (const struct vxlan_hdr *)pkt_at(pkt, pkt->tunnel_ofs, VXLAN_HDR_LEN);
	if (!seg->vxlan)
		return false;
	*l2_ofs = pkt->inner_l2_ofs;
	*l3_ofs = pkt->inner_l3_ofs;
	*l4_ofs = pkt->inner_l4_ofs;
	if (pkt->l3_ofs != PKT_OFS_NONE && pkt->l4_ofs != PKT_OFS_NONE)
		return gro_vxlan_locate_outer(pkt, seg);
	return true;
}

enum gro_pass_reason gro_vxlan_pass_reason(const struct gro_seg *seg)
{
	const struct pkt *pkt = seg->pkt;
	enum gro_pass_reason why;

	if (!seg->outer_l3)
		return GRO_PASS_REASON_COUNT;
	uint32_t outer_l3_len = pkt_len(pkt) - pkt->l3_ofs;
	if (seg->outer_family == 4)
		why = gro_ipv4_pass_reason(seg->outer_l3, outer_l3_len);
	else
		why = gro_ipv6_pass_reason(seg->outer_l3, outer_l3_len, IP_PROTO_UDP);
	if (why != GRO_PASS_REASON_COUNT)
		return why;
	if (load_be16(&seg->outer_udp->len_be) != pkt_len(pkt) - pkt->l4_ofs)
		return GRO_PASS_LEN_MISMATCH;
	return GRO_PASS_REASON_COUNT;
}

bool gro_same_tunnel(const struct gro_seg *a, const struct gro_seg *b)
{
	if (!a->vxlan != !b->vxlan)
		return false;
	if (!a->vxlan)
		return true;
	/* VXLAN flags and VNI words, as vxlan_gro_prepare_receive. */
	if (!bytes_equal(a->vxlan, b->vxlan, VXLAN_HDR_LEN))
		return false;
	const struct pkt_tunnel *ta = &a->pkt->tunnel, *tb = &b->pkt->tunnel;
	size_t addr_len = ta->family == 6 ? 16 : 4;
	if (ta->family != tb->family || ta->src_port != tb->src_port || ta->dst_port != tb->dst_port ||
	    !bytes_equal(ta->src, tb->src, addr_len) || !bytes_equal(ta->dst, tb->dst, addr_len))
		return false;
	if (a->outer_family != b->outer_family || a->outer_l2_len != b->outer_l2_len)
		return false;
	if (!a->outer_l3)
		return true;
	if (!bytes_equal(a->outer_l2, b->outer_l2, a->outer_l2_len))
		return false;
	/* Outer UDP checksums both zero or both non-zero (udp_gro_receive). */
	if (!a->outer_udp->csum != !b->outer_udp->csum)
		return false;
	if (a->outer_family == 4) {
		/* Outer addresses are in pkt->tunnel already compared. */
		return true;
	}
	return ((load_be32(a->outer_l3) ^ load_be32(b->outer_l3)) & GRO_IPV6_FLOW_MASK) == 0;
}

static inline uint16_t gro_ofs_sub(uint16_t ofs, uint16_t delta)
{
	return ofs == PKT_OFS_NONE ? PKT_OFS_NONE : (uint16_t)(ofs - delta);
}

void gro_decap_passthrough(struct pkt *pkt)
{
	uint16_t inner = pkt->inner_l2_ofs;

	if (pkt->tunnel_ofs == PKT_OFS_NONE || inner == PKT_OFS_NONE || inner > pkt->size)
		return;
	/* pkt_pull() without its offset fix-up: every offset is rewritten. */
	pkt->data += inner;
	pkt->size -= inner;
	pkt->l2_ofs = 0;
	pkt->l3_ofs = gro_ofs_sub(pkt->inner_l3_ofs, inner);
	pkt->l4_ofs = gro_ofs_sub(pkt->inner_l4_ofs, inner);
	pkt->payload_ofs = gro_ofs_sub(pkt->inner_payload_ofs, inner);
	pkt->tunnel_ofs = PKT_OFS_NONE;
	pkt->inner_l2_ofs = pkt->inner_l3_ofs = PKT_OFS_NONE;
	pkt->inner_l4_ofs = pkt->inner_payload_ofs = PKT_OFS_NONE;
}
