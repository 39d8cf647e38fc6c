/* ctl_flower_print: `filter show|get [-s] [-j]` in tc's layout, the filter
 * line and the flower keys (ctl_flower.h says what is printed; the actions
 * are ctl_flower_print_act.c).  The order of the keys, their names and
 * number forms are those of iproute2 6.1's flower_print_opt(), as the
 * kernel's dump of the same rule would make tc print them: eth_type from
 * the protocol, ports single, masked or ranged, masks in hex. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl_flower.h"
#include "ctl/ctl_flower_internal.h"
#include "ctl/ctl_flower_print.h"
#include "ctl/ctl_print.h"

/* ll_proto_n2a() of the ethertypes a vxswitch rule can name. */
const char *fl_tc_proto_name(uint16_t eth, char *buf, size_t size)
{
	static const struct { uint16_t eth; const char *name; } names[] = {
		{ 0x0003, "all" }, { FLOWER_ETH_IP, "ip" }, { FLOWER_ETH_ARP, "arp" },
		{ 0x8035, "rarp" }, { FLOWER_ETH_IPV6, "ipv6" }, { 0x8863, "ppp_disc" },
		{ 0x8864, "ppp_ses" }, { FLOWER_ETH_8021Q, "802.1Q" }, { FLOWER_ETH_8021AD, "802.1ad" },
		{ 0x8847, "mpls_uc" }, { 0x8848, "mpls_mc" }, { 0x6558, "teb" }, { 0x88cc, "LLDP" },
	};
	if (eth == FLOWER_ETH_ALL)
		eth = 0x0003; /* vxswitch keeps `all` as 0, the kernel as ETH_P_ALL */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].eth == eth)
			return names[i].name;
	snprintf(buf, size, "[%u]", eth);
	return buf;
}

/* "\n  name value" in text, "name": "value" in JSON (tc's
 * print_indent_name_value()). */
static void key_str(struct ctl_print *p, const char *name, const char *value)
{
	char fmt[64];
	snprintf(fmt, sizeof(fmt), "\n  %s %%s", name);
	ctl_print_string(p, CTL_PRINT_ANY, name, fmt, value);
}

static void key_uint(struct ctl_print *p, const char *name, uint64_t value)
{
	char fmt[64];
	snprintf(fmt, sizeof(fmt), "\n  %s %%" PRIu64, name);
	ctl_print_uint(p, CTL_PRINT_ANY, name, fmt, value);
}

/* tc's print_masked_u8/be16(): the value in decimal, a mask other than all
 * ones as /0xHEX ("NAME_mask": "hex" in JSON). */
static void key_masked(struct ctl_print *p, const char *name, uint32_t value, uint32_t mask,
		       uint32_t all)
{
	key_uint(p, name, value);
	if (mask == all)
		return;
	char key[64], hex[16];
	snprintf(key, sizeof(key), "%s_mask", name);
	snprintf(hex, sizeof(hex), "%x", mask);
	ctl_print_text(p, "/0x%x", mask);
	ctl_print_string(p, CTL_PRINT_JSON, key, NULL, hex);
}

/* Bits of a prefix mask, -1 if not contiguous (iproute2's __mask_bits()). */
static int mask_bits(const uint8_t *m, size_t len)
{
	int bits = 0;
	bool hole = false;
	for (size_t i = 0; i < len * 8; i++) {
		bool set = m[i / 8] & (0x80 >> (i % 8));
		if (set && hole)
			return -1;
		if (set)
			bits++;
		else
			hole = true;
	}
	return bits;
}

static void key_mac(struct ctl_print *p, const char *name, const uint8_t *mac, const uint8_t *mask)
{
	char out[48];
	int n = snprintf(out, sizeof(out), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
			 mac[3], mac[4], mac[5]);
	int bits = mask_bits(mask, 6);
	if (bits < 0)
		snprintf(out + n, sizeof(out) - n, "/%02x:%02x:%02x:%02x:%02x:%02x", mask[0], mask[1],
			 mask[2], mask[3], mask[4], mask[5]);
	else if (bits < 48)
		snprintf(out + n, sizeof(out) - n, "/%d", bits);
	key_str(p, name, out);
}

static void key_prefix(struct ctl_print *p, const char *name, const struct flower_prefix *px)
{
	char out[2 * INET6_ADDRSTRLEN + 2], m[INET6_ADDRSTRLEN];
	int fam = px->addr.family;
	size_t len = fam == AF_INET6 ? 16 : 4;
	if (!inet_ntop(fam, px->addr.bytes, out, INET6_ADDRSTRLEN))
		return;
	int bits = mask_bits(px->mask.bytes, len);
	size_t n = strlen(out);
	if (bits < 0 && inet_ntop(fam, px->mask.bytes, m, sizeof(m)))
		snprintf(out + n, sizeof(out) - n, "/%s", m);
	else if (bits >= 0 && (size_t)bits < len * 8)
		snprintf(out + n, sizeof(out) - n, "/%d", bits);
	key_str(p, name, out);
}

/* One port key as the kernel dumps it: a range, or a value (and mask). */
static void key_port(struct ctl_print *p, const char *name, uint16_t min, uint16_t max,
		     uint16_t mask, bool range)
{
	if ((min != max) != range)
		return;
	if (!range) {
		key_masked(p, name, min, mask, 0xffff);
		return;
	}
	ctl_print_text(p, "\n  %s %u-%u", name, min, max);
	ctl_print_open_object(p, name);
	ctl_print_uint(p, CTL_PRINT_JSON, "start", NULL, min);
	ctl_print_uint(p, CTL_PRINT_JSON, "end", NULL, max);
	ctl_print_close_object(p);
}

/* flower_print_masked_u8() of icmp_type/icmp_code: a string in JSON too. */
static void key_u8_str(struct ctl_print *p, const char *name, uint8_t v, uint8_t mask)
{
	char out[16];
	if (mask == 0xff)
		snprintf(out, sizeof(out), "%u", v);
	else
		snprintf(out, sizeof(out), "%u/%u", v, mask);
	key_str(p, name, out);
}

static void key_ip_flags(struct ctl_print *p, uint8_t flags, uint8_t mask)
{
	static const struct { uint8_t bit; const char *name; } fl[] = {
		{ FLOWER_IPF_FRAG, "frag" }, { FLOWER_IPF_FIRSTFRAG, "firstfrag" },
	};
	int count = 0;
	for (size_t i = 0; i < 2; i++) {
		if (!(mask & fl[i].bit))
			continue;
		if (++count == 1) {
			ctl_print_text(p, "\n  ip_flags ");
			ctl_print_open_object(p, "ip_flags");
		} else {
			ctl_print_text(p, "/");
		}
		ctl_print_bool(p, CTL_PRINT_JSON, fl[i].name, NULL, flags & fl[i].bit);
		ctl_print_text(p, "%s%s", flags & fl[i].bit ? "" : "no", fl[i].name);
	}
	if (count)
		ctl_print_close_object(p);
}

/* The ethertype the kernel keeps as n_proto (and dumps as eth_type): the
 * protocol, or under a VLAN protocol the vlan_ethtype; 0 for none. */
static uint16_t tc_eth_type(const struct flower_match *m)
{
	uint16_t proto = (m->given & FLOWER_FM_PROTOCOL) ? m->protocol : FLOWER_ETH_ALL;
	if (proto == FLOWER_ETH_8021Q || proto == FLOWER_ETH_8021AD)
		return (m->given & FLOWER_FM_VLAN_ETHTYPE) ? m->vlan_ethtype : 0;
	return proto;
}

static void print_eth_type(struct ctl_print *p, uint16_t eth)
{
	char buf[8];
	const char *s = eth == FLOWER_ETH_IP ? "ipv4" : eth == FLOWER_ETH_IPV6 ? "ipv6"
		      : eth == FLOWER_ETH_ARP ? "arp" : eth == 0x8035 ? "rarp" : NULL;
	if (!s) {
		snprintf(buf, sizeof(buf), "%04x", eth);
		s = buf;
	}
	key_str(p, "eth_type", s);
}

static void print_ip_proto(struct ctl_print *p, uint8_t proto)
{
	char buf[4];
	const char *s = proto == 6 ? "tcp" : proto == 17 ? "udp" : proto == 132 ? "sctp"
		      : proto == 1 ? "icmp" : proto == 58 ? "icmpv6" : NULL;
	if (!s) {
		snprintf(buf, sizeof(buf), "%02x", proto);
		s = buf;
	}
	key_str(p, "ip_proto", s);
}

static void print_vlan(struct ctl_print *p, const struct flower_match *m)
{
	char buf[16];
	if (m->given & FLOWER_FM_VLAN_ID)
		key_uint(p, "vlan_id", m->vlan_id);
	if (m->given & FLOWER_FM_VLAN_PRIO)
		key_uint(p, "vlan_prio", m->vlan_prio);
	if (m->given & FLOWER_FM_VLAN_ETHTYPE)
		key_str(p, "vlan_ethtype", fl_tc_proto_name(m->vlan_ethtype, buf, sizeof(buf)));
}

static void print_l4(struct ctl_print *p, const struct flower_match *m)
{
	for (int range = 0; range < 2; range++) {
		if (m->given & FLOWER_FM_DST_PORT)
			key_port(p, "dst_port", m->dst_port_min, m->dst_port_max, m->dst_port_mask, range);
		if (m->given & FLOWER_FM_SRC_PORT)
			key_port(p, "src_port", m->src_port_min, m->src_port_max, m->src_port_mask, range);
	}
	if (m->given & FLOWER_FM_TCP_FLAGS) {
		char out[24];
		snprintf(out, sizeof(out), "0x%x/%x", m->tcp_flags, m->tcp_flags_mask);
		key_str(p, "tcp_flags", out);
	}
	if (m->given & FLOWER_FM_ICMP_TYPE)
		key_u8_str(p, "icmp_type", m->icmp_type, m->icmp_type_mask);
	if (m->given & FLOWER_FM_ICMP_CODE)
		key_u8_str(p, "icmp_code", m->icmp_code, m->icmp_code_mask);
}

/* The label stack entries of a rule by depth, whichever form it was typed
 * in (the shortcuts are depth 1). */
static void mpls_entries(const struct flower_match *m, struct flower_mpls_lse lse[FLOWER_MPLS_MAX])
{
	memset(lse, 0, FLOWER_MPLS_MAX * sizeof(lse[0]));
	if (m->given_ext & FLOWER_FX_MPLS) {
		memcpy(lse, m->mpls, FLOWER_MPLS_MAX * sizeof(lse[0]));
		return;
	}
	static const struct { uint32_t fx; uint8_t bit; } f[] = {
		{ FLOWER_FX_MPLS_LABEL, FLOWER_MPLS_LABEL }, { FLOWER_FX_MPLS_TC, FLOWER_MPLS_TC },
		{ FLOWER_FX_MPLS_BOS, FLOWER_MPLS_BOS }, { FLOWER_FX_MPLS_TTL, FLOWER_MPLS_TTL },
	};
	for (size_t i = 0; i < 4; i++)
		if (m->given_ext & f[i].fx)
			lse[0].given |= (uint8_t)(FLOWER_MPLS_DEPTH | f[i].bit);
	lse[0].label = m->mpls_label;
	lse[0].tc = m->mpls_tc;
	lse[0].bos = m->mpls_bos;
	lse[0].ttl = m->mpls_ttl;
}

/* What tc prints of the kernel's dump (fl_dump_key_mpls()): a rule that
 * matches fields of the first entry only comes back in the older
 * attributes (mpls_label, mpls_tc, mpls_bos, mpls_ttl, each a line, the
 * u8 ones strings in JSON: flower_print_u8()), whatever form was typed;
 * anything else as "mpls" and one "lse" line per depth. */
static void print_mpls(struct ctl_print *p, const struct flower_match *m)
{
	struct flower_mpls_lse lse[FLOWER_MPLS_MAX];
	char buf[16];
	mpls_entries(m, lse);
	bool deeper = false;
	for (int d = 1; d < FLOWER_MPLS_MAX; d++)
		deeper |= lse[d].given != 0;
	if (!lse[0].given && !deeper)
		return;
	if (!deeper && (lse[0].given & ~FLOWER_MPLS_DEPTH)) {
		if (lse[0].given & FLOWER_MPLS_LABEL)
			key_uint(p, "mpls_label", lse[0].label);
		static const struct { uint8_t bit; const char *name; } u8s[] = {
			{ FLOWER_MPLS_TC, "mpls_tc" }, { FLOWER_MPLS_BOS, "mpls_bos" }, { FLOWER_MPLS_TTL, "mpls_ttl" },
		};
		for (size_t i = 0; i < 3; i++) {
			if (!(lse[0].given & u8s[i].bit))
				continue;
			snprintf(buf, sizeof(buf), "%u", u8s[i].bit == FLOWER_MPLS_TC ? lse[0].tc
				 : u8s[i].bit == FLOWER_MPLS_BOS ? lse[0].bos : lse[0].ttl);
			key_str(p, u8s[i].name, buf);
		}
		return;
	}
	ctl_print_text(p, "\n  mpls");
	ctl_print_open_array(p, "mpls");
	for (int d = 0; d < FLOWER_MPLS_MAX; d++) {
		const struct flower_mpls_lse *l = &lse[d];
		if (!l->given)
			continue;
		ctl_print_text(p, "\n    lse");
		ctl_print_open_object(p, NULL);
		ctl_print_uint(p, CTL_PRINT_ANY, "depth", " depth %" PRIu64, (uint64_t)d + 1);
		if (l->given & FLOWER_MPLS_LABEL)
			ctl_print_uint(p, CTL_PRINT_ANY, "label", " label %" PRIu64, l->label);
		if (l->given & FLOWER_MPLS_TC)
			ctl_print_uint(p, CTL_PRINT_ANY, "tc", " tc %" PRIu64, l->tc);
		if (l->given & FLOWER_MPLS_BOS)
			ctl_print_uint(p, CTL_PRINT_ANY, "bos", " bos %" PRIu64, l->bos);
		if (l->given & FLOWER_MPLS_TTL)
			ctl_print_uint(p, CTL_PRINT_ANY, "ttl", " ttl %" PRIu64, l->ttl);
		ctl_print_close_object(p);
	}
	ctl_print_close_array(p);
}

/* flower_print_ip4_addr(), flower_print_arp_op() (a name only under a
 * full mask, else "%d/%d"), flower_print_eth_addr(). */
static void print_arp(struct ctl_print *p, const struct flower_match *m)
{
	uint32_t x = m->given_ext;
	if (x & FLOWER_FX_ARP_SIP)
		key_prefix(p, "arp_sip", &m->arp_sip);
	if (x & FLOWER_FX_ARP_TIP)
		key_prefix(p, "arp_tip", &m->arp_tip);
	if (x & FLOWER_FX_ARP_OP) {
		char out[16];
		if (m->arp_op_mask == 0xff && (m->arp_op == 1 || m->arp_op == 2))
			snprintf(out, sizeof(out), "%s", m->arp_op == 1 ? "request" : "reply");
		else if (m->arp_op_mask == 0xff)
			snprintf(out, sizeof(out), "%u", m->arp_op);
		else
			snprintf(out, sizeof(out), "%u/%u", m->arp_op, m->arp_op_mask);
		key_str(p, "arp_op", out);
	}
	if (x & FLOWER_FX_ARP_SHA)
		key_mac(p, "arp_sha", m->arp_sha, m->arp_sha_mask);
	if (x & FLOWER_FX_ARP_THA)
		key_mac(p, "arp_tha", m->arp_tha, m->arp_tha_mask);
}

static void print_keys(struct ctl_print *p, const struct flower_match *m)
{
	ctl_print_open_object(p, "keys");
	print_vlan(p, m);
	if (m->given & FLOWER_FM_DST_MAC)
		key_mac(p, "dst_mac", m->dst_mac, m->dst_mac_mask);
	if (m->given & FLOWER_FM_SRC_MAC)
		key_mac(p, "src_mac", m->src_mac, m->src_mac_mask);
	uint16_t eth = tc_eth_type(m);
	if (eth)
		print_eth_type(p, eth);
	if (m->given & FLOWER_FM_IP_PROTO)
		print_ip_proto(p, m->ip_proto);
	if (m->given & FLOWER_FM_IP_TOS)
		key_masked(p, "ip_tos", m->ip_tos, m->ip_tos_mask, 0xff);
	if (m->given & FLOWER_FM_IP_TTL)
		key_masked(p, "ip_ttl", m->ip_ttl, m->ip_ttl_mask, 0xff);
	print_mpls(p, m);
	if (m->given & FLOWER_FM_DST_IP)
		key_prefix(p, "dst_ip", &m->dst_ip);
	if (m->given & FLOWER_FM_SRC_IP)
		key_prefix(p, "src_ip", &m->src_ip);
	print_l4(p, m);
	print_arp(p, m);
	if (m->given & FLOWER_FM_ENC_DST_IP)
		key_prefix(p, "enc_dst_ip", &m->enc_dst_ip);
	if (m->given & FLOWER_FM_ENC_SRC_IP)
		key_prefix(p, "enc_src_ip", &m->enc_src_ip);
	if (m->given & FLOWER_FM_ENC_KEY_ID)
		key_uint(p, "enc_key_id", m->enc_key_id);
	if (m->given & FLOWER_FM_ENC_DST_PORT)
		key_masked(p, "enc_dst_port", m->enc_dst_port, 0xffff, 0xffff);
	if (m->given_ext & FLOWER_FX_ENC_TOS) /* flower_print_ip_attr(), as ip_tos */
		key_masked(p, "enc_tos", m->enc_tos, m->enc_tos_mask, 0xff);
	if (m->given_ext & FLOWER_FX_ENC_TTL)
		key_masked(p, "enc_ttl", m->enc_ttl, m->enc_ttl_mask, 0xff);
	if (m->given & FLOWER_FM_IP_FLAGS)
		key_ip_flags(p, m->ip_flags, m->ip_flags_mask);
	ctl_print_close_object(p);
}

/* tc_filter.c's print_filter(): "filter protocol P pref N flower chain C ",
 * dev and ingress (egress) left out as tc leaves out what `show dev D
 * ingress` asked for (the kernel dumps the parent the rules were added
 * under, ffff:fff2 or ffff:fff3, the same as tc's filter_parent); tc's get
 * sets no parent to leave out, so prints "ingress " ("egress "). */
static void print_head(struct ctl_print *p, const struct ctl_flower *f)
{
	char buf[16];
	uint16_t proto = (f->rule.match.given & FLOWER_FM_PROTOCOL) ? f->rule.match.protocol : FLOWER_ETH_ALL;
	ctl_print_text(p, "filter ");
	if (f->verb == CTL_FILTER_GET) /* "egress" for a rule on the egress (ctl_flower_egress.c) */
		ctl_print_bool(p, CTL_PRINT_ANY, fl_hook_name(&f->rule), (f->rule.given & FLOWER_SF_EGRESS) ? "egress "
			       : "ingress ", true);
	ctl_print_string(p, CTL_PRINT_ANY, "protocol", "protocol %s ",
			 fl_tc_proto_name(proto, buf, sizeof(buf)));
	ctl_print_uint(p, CTL_PRINT_ANY, "pref", "pref %" PRIu64 " ", f->rule.pref);
	ctl_print_string(p, CTL_PRINT_ANY, "kind", "%s ", "flower");
	if (!(f->verb == CTL_FILTER_SHOW && (f->rule.given & FLOWER_SF_CHAIN)))
		ctl_print_uint(p, CTL_PRINT_ANY, "chain", "chain %" PRIu64 " ", f->rule.chain);
}

void ctl_flower_print_pref(struct ctl_print *p, const struct ctl_flower *f)
{
	ctl_print_open_object(p, NULL);
	print_head(p, f);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

static void print_flags(struct ctl_print *p, const struct ctl_flower *f)
{
	if (f->rule.given & FLOWER_SF_SKIP_HW) {
		ctl_print_text(p, "\n  skip_hw");
		ctl_print_bool(p, CTL_PRINT_JSON, "skip_hw", NULL, true);
	}
	/* No rule is in hardware: the kernel marks each such rule not_in_hw. */
	ctl_print_text(p, "\n  not_in_hw");
	ctl_print_bool(p, CTL_PRINT_JSON, "not_in_hw", NULL, true);
}

static void open_rule(struct ctl_print *p, const struct ctl_flower *f)
{
	ctl_print_open_object(p, NULL);
	print_head(p, f);
	ctl_print_open_object(p, "options");
	ctl_print_uint(p, CTL_PRINT_ANY, "handle", "handle 0x%" PRIx64 " ", f->rule.handle);
}

static void close_rule(struct ctl_print *p)
{
	ctl_print_close_object(p);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

int ctl_flower_print_rule(struct ctl_print *p, const struct ctl_flower *f,
			  const uint32_t *act_index, const struct ctl_flower_stats *st)
{
	open_rule(p, f);
	fl_tc_print_indev(p, &f->rule.match); /* before "keys", as flower_print_opt() */
	print_keys(p, &f->rule.match);
	print_flags(p, f);
	fl_tc_print_actions(p, &f->rule, act_index, st, false);
	close_rule(p);
	return 0;
}

void ctl_flower_print_brief(struct ctl_print *p, const struct ctl_flower *f,
			    const struct ctl_flower_stats *st)
{
	open_rule(p, f);
	/* fl_terse_dump() sends no key: tc opens and closes "keys" all the same */
	ctl_print_open_object(p, "keys");
	ctl_print_close_object(p);
	print_flags(p, f);
	fl_tc_print_actions(p, &f->rule, NULL, st, true);
	close_rule(p);
}
