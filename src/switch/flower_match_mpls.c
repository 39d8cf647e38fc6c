/* flower_match_mpls: tc's MPLS and ARP keys onto struct flow_key (the
 * mapping is in flower_rule.h; the kernel's meaning is cls_flower.c's
 * fl_set_key_mpls()/fl_set_key_mpls_lse() and the ARP key of
 * fl_set_key()). */
#include "switch/flower_rule.h"

#include <string.h>

static void lse_compile(const struct flower_mpls_lse *l, unsigned depth0, struct cls_match *out)
{
	uint32_t key = 0, mask = 0;
	if (l->given & FLOWER_MPLS_LABEL) {
		key |= l->label << FLOW_MPLS_LABEL_SHIFT;
		mask |= 0xfffffu << FLOW_MPLS_LABEL_SHIFT;
	}
	if (l->given & FLOWER_MPLS_TC) {
		key |= (uint32_t)l->tc << FLOW_MPLS_TC_SHIFT;
		mask |= 7u << FLOW_MPLS_TC_SHIFT;
	}
	if (l->given & FLOWER_MPLS_BOS) {
		key |= (uint32_t)l->bos << FLOW_MPLS_BOS_SHIFT;
		mask |= 1u << FLOW_MPLS_BOS_SHIFT;
	}
	if (l->given & FLOWER_MPLS_TTL) {
		key |= l->ttl;
		mask |= FLOW_MPLS_TTL_MASK;
	}
	out->key.mpls_lse[depth0] = key;
	out->mask.mpls_lse[depth0] = mask;
	/* the entry must exist: a frame with fewer entries never matches,
	 * even an lse that gives no field (cls_flower's used_lses) */
	out->key.mpls_used |= (uint8_t)(1u << depth0);
	out->mask.mpls_used |= (uint8_t)(1u << depth0);
}

void flower_match_compile_mpls(const struct flower_match *cm, struct cls_match *out)
{
	uint32_t x = cm->given_ext;
	if (x & FLOWER_FX_MPLS) {
		for (unsigned d = 0; d < FLOWER_MPLS_MAX && d < FLOW_MPLS_MAX; d++)
			if (cm->mpls[d].given)
				lse_compile(&cm->mpls[d], d, out);
		return;
	}
	struct flower_mpls_lse first = { 0 };
	if (x & FLOWER_FX_MPLS_LABEL) {
		first.given |= FLOWER_MPLS_LABEL;
		first.label = cm->mpls_label;
	}
	if (x & FLOWER_FX_MPLS_TC) {
		first.given |= FLOWER_MPLS_TC;
		first.tc = cm->mpls_tc;
	}
	if (x & FLOWER_FX_MPLS_BOS) {
		first.given |= FLOWER_MPLS_BOS;
		first.bos = cm->mpls_bos;
	}
	if (x & FLOWER_FX_MPLS_TTL) {
		first.given |= FLOWER_MPLS_TTL;
		first.ttl = cm->mpls_ttl;
	}
	if (first.given)
		lse_compile(&first, 0, out);
}

static void set_masked(uint8_t *key, uint8_t *mask, const uint8_t *v, const uint8_t *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		mask[i] = m[i];
		key[i] = v[i] & m[i];
	}
}

/* enc_tos / enc_ttl: the outer header of a tunnelled frame (tun_family
 * bit 2 is set for 4 and 6, as for the other enc_* keys). */
static void compile_enc(const struct flower_match *cm, struct cls_match *out)
{
	uint32_t x = cm->given_ext;
	if (!(x & (FLOWER_FX_ENC_TOS | FLOWER_FX_ENC_TTL)))
		return;
	out->key.tun_family |= 0x4;
	out->mask.tun_family |= 0x4;
	if (x & FLOWER_FX_ENC_TOS)
		set_masked(&out->key.tun_tos, &out->mask.tun_tos, &cm->enc_tos, &cm->enc_tos_mask, 1);
	if (x & FLOWER_FX_ENC_TTL)
		set_masked(&out->key.tun_ttl, &out->mask.tun_ttl, &cm->enc_ttl, &cm->enc_ttl_mask, 1);
}

void flower_match_compile_arp_enc(const struct flower_match *cm, struct cls_match *out)
{
	compile_enc(cm, out);
	uint32_t x = cm->given_ext;
	if (x & FLOWER_FX_ARP_SIP)
		set_masked(out->key.nw_src, out->mask.nw_src, cm->arp_sip.addr.bytes,
			   cm->arp_sip.mask.bytes, 4);
	if (x & FLOWER_FX_ARP_TIP)
		set_masked(out->key.nw_dst, out->mask.nw_dst, cm->arp_tip.addr.bytes,
			   cm->arp_tip.mask.bytes, 4);
	if (x & FLOWER_FX_ARP_OP)
		set_masked(&out->key.nw_proto, &out->mask.nw_proto, &cm->arp_op, &cm->arp_op_mask, 1);
	if (x & FLOWER_FX_ARP_SHA)
		set_masked(out->key.arp_sha, out->mask.arp_sha, cm->arp_sha, cm->arp_sha_mask, 6);
	if (x & FLOWER_FX_ARP_THA)
		set_masked(out->key.arp_tha, out->mask.arp_tha, cm->arp_tha, cm->arp_tha_mask, 6);
}
