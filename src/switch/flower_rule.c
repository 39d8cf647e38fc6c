/* flower_rule: tc's keys and actions onto struct flow_key (see flower_rule.h). */
#include "switch/flower_rule.h"
#include "packet/pkt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

enum { VLAN_VID_MASK = 0x0fff, VLAN_PCP_MASK = 0xe000, VLAN_PCP_SHIFT = 13 };

/* ---- match ------------------------------------------------------------------ */

static void set_bytes(uint8_t *key, uint8_t *mask, const uint8_t *v, const uint8_t *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		mask[i] = m[i];
		key[i] = v[i] & m[i];
	}
}

#define SET_EXACT(out, field, value)                                 \
	do {                                                         \
		(out)->key.field = (value);                          \
		memset(&(out)->mask.field, 0xff, sizeof((out)->mask.field)); \
	} while (0)

static void compile_l2(const struct flower_match *cm, struct cls_match *out)
{
	uint32_t g = cm->given;
	bool vlan = cm->protocol == FLOWER_ETH_8021Q || cm->protocol == FLOWER_ETH_8021AD;
	if ((g & FLOWER_FM_PROTOCOL) && cm->protocol != FLOWER_ETH_ALL) {
		if (vlan) {
			SET_EXACT(out, vlan_tpid[0], cm->protocol);
		} else {
			SET_EXACT(out, dl_type, cm->protocol);
			SET_EXACT(out, n_vlans, 0);
		}
	}
	if (g & FLOWER_FM_DST_MAC)
		set_bytes(out->key.dl_dst, out->mask.dl_dst, cm->dst_mac, cm->dst_mac_mask, 6);
	if (g & FLOWER_FM_SRC_MAC)
		set_bytes(out->key.dl_src, out->mask.dl_src, cm->src_mac, cm->src_mac_mask, 6);
	if (g & FLOWER_FM_VLAN_ID) {
		out->key.vlan_tci[0] |= cm->vlan_id;
		out->mask.vlan_tci[0] |= VLAN_VID_MASK;
	}
	if (g & FLOWER_FM_VLAN_PRIO) {
		out->key.vlan_tci[0] |= (uint16_t)(cm->vlan_prio << VLAN_PCP_SHIFT);
		out->mask.vlan_tci[0] |= VLAN_PCP_MASK;
	}
	if (g & FLOWER_FM_VLAN_ETHTYPE) {
		uint16_t e = cm->vlan_ethtype;
		if (e == FLOWER_ETH_8021Q || e == FLOWER_ETH_8021AD) {
			SET_EXACT(out, vlan_tpid[1], e);
		} else if (e != FLOWER_ETH_ALL) {
			SET_EXACT(out, dl_type, e);
			SET_EXACT(out, n_vlans, 1);
		}
	}
}

static void compile_ip_flags(const struct flower_match *cm, struct cls_match *out)
{
	bool has_frag = cm->ip_flags_mask & FLOWER_IPF_FRAG;
	bool has_first = cm->ip_flags_mask & FLOWER_IPF_FIRSTFRAG;
	bool frag = cm->ip_flags & FLOWER_IPF_FRAG, first = cm->ip_flags & FLOWER_IPF_FIRSTFRAG;
	uint8_t key = 0, mask = 0;
	if (has_first && first) {          /* firstfrag (a fragment, offset 0) */
		key = FLOW_FRAG_ANY;
		mask = FLOW_FRAG_ANY | FLOW_FRAG_LATER;
	} else if (has_first && has_frag) { /* frag/nofirstfrag or nofrag/nofirstfrag */
		key = frag ? FLOW_FRAG_LATER : 0;
		mask = frag ? FLOW_FRAG_LATER : FLOW_FRAG_ANY;
	} else if (has_first) {            /* nofirstfrag alone: not one mask */
		out->extra |= CLS_NOT_FIRSTFRAG;
	} else {                           /* frag or nofrag */
		key = frag ? FLOW_FRAG_ANY : 0;
		mask = FLOW_FRAG_ANY;
	}
	out->key.nw_frag = key;
	out->mask.nw_frag = mask;
}

static void compile_ip(const struct flower_match *cm, struct cls_match *out)
{
	uint32_t g = cm->given;
	if (g & FLOWER_FM_IP_PROTO)
		SET_EXACT(out, nw_proto, cm->ip_proto);
	if (g & FLOWER_FM_SRC_IP)
		set_bytes(out->key.nw_src, out->mask.nw_src, cm->src_ip.addr.bytes,
			  cm->src_ip.mask.bytes, cm->src_ip.addr.family == AF_INET6 ? 16 : 4);
	if (g & FLOWER_FM_DST_IP)
		set_bytes(out->key.nw_dst, out->mask.nw_dst, cm->dst_ip.addr.bytes,
			  cm->dst_ip.mask.bytes, cm->dst_ip.addr.family == AF_INET6 ? 16 : 4);
	if (g & FLOWER_FM_IP_TOS) {
		out->key.nw_tos = cm->ip_tos & cm->ip_tos_mask;
		out->mask.nw_tos = cm->ip_tos_mask;
	}
	if (g & FLOWER_FM_IP_TTL) {
		out->key.nw_ttl = cm->ip_ttl & cm->ip_ttl_mask;
		out->mask.nw_ttl = cm->ip_ttl_mask;
	}
	if (g & FLOWER_FM_IP_FLAGS)
		compile_ip_flags(cm, out);
}

static void compile_port(uint16_t min, uint16_t max, uint16_t pmask, uint16_t *key,
			 uint16_t *mask, uint16_t *rmin, uint16_t *rmax, uint8_t *extra,
			 uint8_t range_bit)
{
	if (min == max) { /* one port, or VALUE/MASK (min is VALUE & MASK) */
		*key = min & pmask;
		*mask = pmask;
		return;
	}
	*rmin = min;
	*rmax = max;
	*extra |= range_bit;
}

static void compile_l4(const struct flower_match *cm, struct cls_match *out)
{
	uint32_t g = cm->given;
	if (g & FLOWER_FM_SRC_PORT)
		compile_port(cm->src_port_min, cm->src_port_max, cm->src_port_mask, &out->key.tp_src,
			     &out->mask.tp_src, &out->src_min, &out->src_max, &out->extra, CLS_SRC_RANGE);
	if (g & FLOWER_FM_DST_PORT)
		compile_port(cm->dst_port_min, cm->dst_port_max, cm->dst_port_mask, &out->key.tp_dst,
			     &out->mask.tp_dst, &out->dst_min, &out->dst_max, &out->extra, CLS_DST_RANGE);
	if (g & FLOWER_FM_TCP_FLAGS) {
		out->key.tcp_flags = cm->tcp_flags & cm->tcp_flags_mask;
		out->mask.tcp_flags = cm->tcp_flags_mask;
	}
	/* ICMP type and code sit in tp_src / tp_dst (high byte 0); a full
	 * mask stays the whole field, so unmasked rules share one subtable */
	if (g & FLOWER_FM_ICMP_TYPE) {
		out->key.tp_src = cm->icmp_type & cm->icmp_type_mask;
		out->mask.tp_src = cm->icmp_type_mask == 0xff ? 0xffff : cm->icmp_type_mask;
	}
	if (g & FLOWER_FM_ICMP_CODE) {
		out->key.tp_dst = cm->icmp_code & cm->icmp_code_mask;
		out->mask.tp_dst = cm->icmp_code_mask == 0xff ? 0xffff : cm->icmp_code_mask;
	}
}

/* tun_family is 4 or 6: bit 2 is set in both, so "tunnelled" is one mask. */
enum { TUN_FAMILY_ANY_BIT = 0x4 };

static void compile_tunnel(const struct flower_match *cm, struct cls_match *out)
{
	uint32_t g = cm->given;
	if (g & (FLOWER_FM_ENC_KEY_ID | FLOWER_FM_ENC_DST_PORT | FLOWER_FM_ENC_SRC_IP | FLOWER_FM_ENC_DST_IP)) {
		out->key.tun_family = TUN_FAMILY_ANY_BIT;
		out->mask.tun_family = TUN_FAMILY_ANY_BIT;
	}
	if (g & FLOWER_FM_ENC_KEY_ID)
		SET_EXACT(out, tun_vni, cm->enc_key_id);
	if (g & FLOWER_FM_ENC_DST_PORT)
		SET_EXACT(out, tun_dst_port, cm->enc_dst_port);
	const struct flower_prefix *p[2] = { &cm->enc_src_ip, &cm->enc_dst_ip };
	uint8_t *k[2] = { out->key.tun_src, out->key.tun_dst };
	uint8_t *m[2] = { out->mask.tun_src, out->mask.tun_dst };
	uint32_t bits[2] = { FLOWER_FM_ENC_SRC_IP, FLOWER_FM_ENC_DST_IP };
	for (int i = 0; i < 2; i++) {
		if (!(g & bits[i]))
			continue;
		bool v6 = p[i]->addr.family == AF_INET6;
		set_bytes(k[i], m[i], p[i]->addr.bytes, p[i]->mask.bytes, v6 ? 16 : 4);
		SET_EXACT(out, tun_family, v6 ? 6 : 4);
	}
}

int flower_match_compile(const struct flower_match *cm, struct cls_match *out)
{
	memset(out, 0, sizeof(*out));
	compile_l2(cm, out);
	compile_ip(cm, out);
	compile_l4(cm, out);
	compile_tunnel(cm, out);
	flower_match_compile_mpls(cm, out);
	flower_match_compile_arp_enc(cm, out);
	return 0;
}

/* ---- actions ------------------------------------------------------------------ */

bool flower_action_is_final(uint8_t type)
{
	return type == FLOWER_ACT_REDIRECT || type == FLOWER_ACT_DROP || type == FLOWER_ACT_PASS ||
	       type == FLOWER_ACT_GOTO || type == FLOWER_ACT_CONTINUE;
}

static int compile_action(const struct flower_spec_action *a, flower_port_resolver *resolve,
			  void *aux, struct flower_action *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof(*out));
	out->type = a->type;
	switch (a->type) {
	case FLOWER_ACT_REDIRECT:
	case FLOWER_ACT_MIRROR:
		if (resolve(aux, a->dev, &out->port)) {
			snprintf(err, err_size, "mirred dev \"%s\": no such port", a->dev);
			return -ENOENT;
		}
		return 0;
	case FLOWER_ACT_GOTO:
		out->chain = a->chain;
		return 0;
	case FLOWER_ACT_TUNNEL_SET:
		out->tun_vni = a->vni;
		out->tun_family = a->src.family == AF_INET6 ? 6 : 4;
		memcpy(out->tun_src, a->src.bytes, 16);
		memcpy(out->tun_dst, a->dst.bytes, 16);
		out->tun_dst_port = a->given & FLOWER_AK_DST_PORT ? a->dst_port : 0;
		out->tun_csum = a->given & FLOWER_AK_NOCSUM ? PKT_TUN_TX_NOCSUM
				: a->given & FLOWER_AK_CSUM ? PKT_TUN_TX_CSUM : 0;
		return 0;
	case FLOWER_ACT_VLAN_PUSH:
	case FLOWER_ACT_VLAN_MODIFY:
		out->vlan_tci = (uint16_t)(a->vlan_id | a->vlan_prio << VLAN_PCP_SHIFT);
		out->vlan_tpid = a->vlan_tpid;
		out->set_prio = a->given & FLOWER_AK_PRIORITY;
		return 0;
	case FLOWER_ACT_DROP:
	case FLOWER_ACT_PASS:
	case FLOWER_ACT_CONTINUE:
	case FLOWER_ACT_PIPE:
	case FLOWER_ACT_TUNNEL_UNSET:
	case FLOWER_ACT_VLAN_POP:
		return 0;
	}
	snprintf(err, err_size, "unknown action type %u", a->type);
	return -EINVAL;
}

int flower_actions_compile(const struct flower_spec *f, flower_port_resolver *resolve, void *aux,
			   struct flower_action *out, char *err, size_t err_size)
{
	if (f->n_actions < 1 || f->n_actions > FLOWER_MAX_ACTIONS) {
		snprintf(err, err_size, "a rule needs 1..%d actions", FLOWER_MAX_ACTIONS);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < f->n_actions; i++) {
		int ret = compile_action(&f->actions[i], resolve, aux, &out[i], err, err_size);
		if (ret)
			return ret;
	}
	return 0;
}
