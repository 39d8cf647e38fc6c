/* flow_invariants: what every successful flow_extract() / flow_extract_vxlan()
 * leaves behind, whatever the frame.  Shared by the parser's unit test and
 * its fuzz target so both hold the parser to the same promises.  Test code,
 * header-only (fuzz targets link libvx objects only).
 *
 *  - every offset is absent or inside the linear part, layers are in order,
 *    inner offsets exist only with a tunnel offset (right after the VXLAN
 *    header);
 *  - the key is zero in every layer that is absent (tunnel section without
 *    a tunnel, L3 fields without L3, ports/flags/options without L4, VLAN
 *    slots past n_vlans, padding), and in_port is copied. */
#ifndef VX_TESTS_FLOW_INVARIANTS_H
#define VX_TESTS_FLOW_INVARIANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow.h"
#include "parse/flow_extract.h"

/* Returns the text of the first invariant that does not hold. */
#define FLOW_INV(cond)                   \
	do {                             \
		if (!(cond))             \
			return #cond;    \
	} while (0)

static inline bool flow_inv_is_zero(const void *mem, size_t size)
{
	const uint8_t *b = mem;
	for (size_t i = 0; i < size; i++)
		if (b[i])
			return false;
	return true;
}

static inline bool flow_inv_ofs_ok(const struct pkt *p, uint16_t ofs)
{
	return ofs == PKT_OFS_NONE || ofs <= p->size;
}

/* a <= b when both present; b absent when a is absent. */
static inline bool flow_inv_order_ok(uint16_t a, uint16_t b)
{
	if (a == PKT_OFS_NONE)
		return b == PKT_OFS_NONE;
	return b == PKT_OFS_NONE || a <= b;
}

static inline bool flow_inv_layers_ok(uint16_t l2, uint16_t l3, uint16_t l4, uint16_t payload)
{
	return flow_inv_order_ok(l2, l3) && flow_inv_order_ok(l3, l4) && flow_inv_order_ok(l4, payload);
}

static inline const char *flow_invariant_violated(const struct pkt *p, const struct flow_key *key,
						  bool from_vxlan)
{
	const uint16_t all[] = { p->l2_ofs, p->l3_ofs, p->l4_ofs, p->payload_ofs, p->tunnel_ofs,
				 p->inner_l2_ofs, p->inner_l3_ofs, p->inner_l4_ofs,
				 p->inner_payload_ofs };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		FLOW_INV(flow_inv_ofs_ok(p, all[i]));
	FLOW_INV(key->in_port == p->in_port);

	if (from_vxlan) {
		FLOW_INV(p->l2_ofs == PKT_OFS_NONE && p->l3_ofs == PKT_OFS_NONE);
		FLOW_INV(p->l4_ofs == PKT_OFS_NONE && p->payload_ofs == PKT_OFS_NONE);
		FLOW_INV(p->tunnel_ofs == 0);
	} else {
		FLOW_INV(p->l2_ofs == 0);
		FLOW_INV(flow_inv_layers_ok(p->l2_ofs, p->l3_ofs, p->l4_ofs, p->payload_ofs));
	}
	if (p->tunnel_ofs == PKT_OFS_NONE) {
		FLOW_INV(p->inner_l2_ofs == PKT_OFS_NONE && p->inner_l3_ofs == PKT_OFS_NONE);
		FLOW_INV(p->inner_l4_ofs == PKT_OFS_NONE && p->inner_payload_ofs == PKT_OFS_NONE);
		FLOW_INV(flow_inv_is_zero(key, offsetof(struct flow_key, in_port)));
	} else {
		FLOW_INV(p->inner_l2_ofs == p->tunnel_ofs + VXLAN_HDR_LEN);
		if (!from_vxlan)
			FLOW_INV(p->payload_ofs == p->tunnel_ofs && key->tun_dst_port == VXLAN_DEFAULT_PORT);
		FLOW_INV(flow_inv_layers_ok(p->inner_l2_ofs, p->inner_l3_ofs, p->inner_l4_ofs, p->inner_payload_ofs));
		FLOW_INV(key->tun_vni <= VXLAN_VNI_MAX && key->tun_vni == p->tunnel.vni);
	}

	FLOW_INV(key->n_vlans <= 2);
	for (unsigned i = key->n_vlans; i < 2; i++)
		FLOW_INV(key->vlan_tci[i] == 0 && key->vlan_tpid[i] == 0);

	uint16_t l3 = pkt_innermost_l3(p), l4 = pkt_innermost_l4(p);
	if (l3 == PKT_OFS_NONE) {
		/* Nothing after dl_type/VLANs but an MPLS label stack. */
		FLOW_INV(flow_inv_is_zero(&key->nw_family, offsetof(struct flow_key, mpls_lse) -
					  offsetof(struct flow_key, nw_family)));
		FLOW_INV(flow_inv_is_zero(&key->tcp_opts, sizeof(key->tcp_opts)));
	} else if (key->nw_family == 0) {
		FLOW_INV(key->dl_type == ETH_TYPE_ARP || key->dl_type == ETH_TYPE_RARP);
		FLOW_INV(key->nw_tos == 0 && key->nw_ttl == 0 && key->nw_frag == 0 && key->ipv6_label == 0);
	} else {
		FLOW_INV(key->nw_family == 4 || key->nw_family == 6);
		FLOW_INV(key->dl_type == (key->nw_family == 4 ? ETH_TYPE_IPV4 : ETH_TYPE_IPV6));
		if (key->nw_family == 4)
			FLOW_INV(flow_inv_is_zero(key->nw_src + 4, 12) && flow_inv_is_zero(key->nw_dst + 4, 12) &&
				 key->ipv6_label == 0);
		FLOW_INV(key->ipv6_label <= 0xfffff);
		FLOW_INV(flow_inv_is_zero(key->arp_sha, 12));
		if (key->nw_frag & FLOW_FRAG_LATER)
			FLOW_INV(l4 == PKT_OFS_NONE && (key->nw_frag & FLOW_FRAG_ANY));
	}
	if (l4 == PKT_OFS_NONE) {
		FLOW_INV(key->tp_src == 0 && key->tp_dst == 0 && key->tcp_flags == 0);
		FLOW_INV(flow_inv_is_zero(&key->tcp_opts, sizeof(key->tcp_opts)));
	}
	if (key->nw_proto != IP_PROTO_TCP || key->nw_family == 0) {
		FLOW_INV(key->tcp_flags == 0);
		FLOW_INV(flow_inv_is_zero(&key->tcp_opts, sizeof(key->tcp_opts)));
	}
	FLOW_INV(key->tun_pad == 0);
	FLOW_INV(key->nw_pad[0] == 0 && key->nw_pad[1] == 0 && key->l4_pad == 0);
	/* MPLS: only on an MPLS ethertype, entries present from depth 1 on with
	 * none after the bottom of stack, and nothing above the stack parsed. */
	FLOW_INV(key->mpls_pad[0] == 0 && key->mpls_pad[1] == 0 && key->mpls_pad[2] == 0);
	if (key->dl_type != ETH_TYPE_MPLS_UC && key->dl_type != ETH_TYPE_MPLS_MC) {
		FLOW_INV(key->mpls_used == 0 && flow_inv_is_zero(key->mpls_lse, sizeof(key->mpls_lse)));
	} else {
		FLOW_INV(l3 == PKT_OFS_NONE);
		FLOW_INV((key->mpls_used & (key->mpls_used + 1)) == 0 && key->mpls_used < (1u << FLOW_MPLS_MAX));
		for (unsigned i = 0; i < FLOW_MPLS_MAX; i++) {
			bool used = key->mpls_used & (1u << i);
			FLOW_INV(used || key->mpls_lse[i] == 0);
			if (used && (key->mpls_lse[i] & (1u << FLOW_MPLS_BOS_SHIFT)))
				FLOW_INV((key->mpls_used >> (i + 1)) == 0);
		}
	}
	return NULL;
}

#undef FLOW_INV

#endif /* VX_TESTS_FLOW_INVARIANTS_H */
