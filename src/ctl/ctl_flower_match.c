/* ctl_flower_match: one parse/print pair per flower match key, in one table
 * whose order is the printing order, and tc's dependency rules. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl_flower_internal.h"

enum { IPPROTO_ICMP_ = 1, IPPROTO_TCP_ = 6, IPPROTO_UDP_ = 17, IPPROTO_ICMPV6_ = 58,
       IPPROTO_SCTP_ = 132 };

/* What a key needs before it can mean anything (tc's own rules). */
enum fl_need {
	NEED_NONE,
	NEED_VLAN,   /* protocol 802.1Q | 802.1ad */
	NEED_IP,     /* protocol (or vlan_ethtype) ip | ipv6 */
	NEED_IP_FAM, /* the protocol of the address's family */
	NEED_PORTS,  /* ip_proto tcp | udp | sctp */
	NEED_TCP,    /* ip_proto tcp */
	NEED_ICMP,   /* ip_proto icmp (ip) | icmpv6 (ipv6) */
	NEED_MPLS,   /* protocol (or vlan_ethtype) mpls_uc | mpls_mc */
	NEED_ARP,    /* protocol (or vlan_ethtype) arp | rarp */
};

struct fl_key {
	const char *word;
	uint32_t flag;             /* in flower_match.given, or */
	uint32_t xflag;            /* in flower_match.given_ext */
	enum fl_need need;
	int (*parse)(struct ctl_parser *ps, const char *key, struct flower_match *m);
	void (*print)(struct ctl_sbuf *sb, const char *key, const struct flower_match *m);
};

/* ---- one pair per key ----------------------------------------------------- */

static int parse_dst_mac(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	return fl_take_mac(ps, k, m->dst_mac, m->dst_mac_mask);
}

static void print_dst_mac(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	fl_sb_mac(sb, k, m->dst_mac, m->dst_mac_mask);
}

static int parse_src_mac(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	return fl_take_mac(ps, k, m->src_mac, m->src_mac_mask);
}

static void print_src_mac(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	fl_sb_mac(sb, k, m->src_mac, m->src_mac_mask);
}

static int parse_vlan_id(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	uint64_t n;
	int ret = fl_take_num_base(ps, k, 10, 0, 4095, &n);
	m->vlan_id = (uint16_t)n;
	return ret;
}

static void print_vlan_id(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	ctl_sb_printf(sb, " %s %u", k, m->vlan_id);
}

static int parse_vlan_prio(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	uint64_t n;
	int ret = fl_take_num_base(ps, k, 10, 0, 7, &n);
	m->vlan_prio = (uint8_t)n;
	return ret;
}

static void print_vlan_prio(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	ctl_sb_printf(sb, " %s %u", k, m->vlan_prio);
}

static int parse_vlan_ethtype(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	return fl_take_protocol(ps, k, &m->vlan_ethtype);
}

static void print_vlan_ethtype(struct ctl_sbuf *sb, const char *k,
			       const struct flower_match *m)
{
	fl_sb_protocol(sb, k, m->vlan_ethtype);
}

static const struct {
	const char *name;
	uint8_t proto;
} ip_protos[] = {
	{ "tcp", IPPROTO_TCP_ }, { "udp", IPPROTO_UDP_ }, { "sctp", IPPROTO_SCTP_ },
	{ "icmp", IPPROTO_ICMP_ }, { "icmpv6", IPPROTO_ICMPV6_ },
};

static int parse_ip_proto(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, k, "tcp, udp, sctp, icmp, icmpv6 or 0..255", &v);
	if (ret)
		return ret;
	/* tc's names by its matches(): any prefix, tried in this order */
	for (size_t i = 0; i < sizeof(ip_protos) / sizeof(ip_protos[0]); i++) {
		if (*v && !strncmp(v, ip_protos[i].name, strlen(v))) {
			m->ip_proto = ip_protos[i].proto;
			return 0;
		}
	}
	uint64_t n;
	if (!fl_num_base(v, 16, 255, &n))
		return ctl_fail(ps, ps->pos - 1, "unknown \"%s\", expected tcp, udp, sctp, icmp, "
				"icmpv6 or 0..ff (hex, 0x optional, as tc reads it)", k);
	m->ip_proto = (uint8_t)n;
	return 0;
}

static void print_ip_proto(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	for (size_t i = 0; i < sizeof(ip_protos) / sizeof(ip_protos[0]); i++) {
		if (ip_protos[i].proto == m->ip_proto) {
			ctl_sb_printf(sb, " %s %s", k, ip_protos[i].name);
			return;
		}
	}
	ctl_sb_printf(sb, " %s 0x%02x", k, m->ip_proto); /* tc reads it in hex */
}

static int parse_src_ip(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	return fl_take_prefix(ps, k, &m->src_ip);
}

static void print_src_ip(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	fl_sb_prefix(sb, k, &m->src_ip);
}

static int parse_dst_ip(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	return fl_take_prefix(ps, k, &m->dst_ip);
}

static void print_dst_ip(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	fl_sb_prefix(sb, k, &m->dst_ip);
}

/* P, MIN-MAX or VALUE/MASK, as f_flower.c's flower_parse_port() takes
 * them: P and MIN-MAX decimal (get_be16(.., 10)), a port above 0, a range
 * with 0 < MIN < MAX (tc refuses 80-80: "max value should be greater than
 * min value"); VALUE/MASK both get_u16(.., 0), any value (512/0xff00).
 * *mask is 0xffff but for VALUE/MASK; then *min = *max = VALUE & MASK. */
static int take_port_range(struct ctl_parser *ps, const char *k, uint16_t *min, uint16_t *max,
			   uint16_t *mask)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, k, "PORT, MIN-MAX or VALUE/MASK", &v);
	if (ret)
		return ret;
	char text[24];
	uint64_t lo, hi, msk = 0xffff;
	snprintf(text, sizeof(text), "%s", v);
	char *dash = strchr(text, '-'), *slash = strchr(text, '/');
	if (slash && !dash) {
		*slash = '\0';
		if (strlen(v) >= sizeof(text) || !fl_num(text, 65535, &lo) ||
		    !fl_num(slash + 1, 65535, &msk))
			return ctl_fail(ps, ps->pos - 1, "bad port for \"%s\", expected VALUE/MASK "
					"within 0..65535 (decimal, 0x hex or 0 octal, as tc reads them)", k);
		*min = *max = (uint16_t)(lo & msk);
		*mask = (uint16_t)msk;
		return 0;
	}
	if (dash)
		*dash = '\0';
	if (strlen(v) >= sizeof(text) || !fl_num_base(text, 10, 65535, &lo) ||
	    (dash && !fl_num_base(dash + 1, 10, 65535, &hi)) || lo == 0 || (dash && hi == 0))
		return ctl_fail(ps, ps->pos - 1, "bad port for \"%s\", expected PORT or MIN-MAX "
				"within 1..65535, decimal, or VALUE/MASK (as tc reads them)", k);
	if (!dash)
		hi = lo;
	else if (lo >= hi)
		return ctl_fail(ps, ps->pos - 1, "port range for \"%s\": max value should be "
				"greater than min value (tc's rule)", k);
	*min = (uint16_t)lo;
	*max = (uint16_t)hi;
	*mask = 0xffff;
	return 0;
}

static void sb_port_range(struct ctl_sbuf *sb, const char *k, uint16_t min, uint16_t max,
			  uint16_t mask)
{
	if (mask != 0xffff)
		ctl_sb_printf(sb, " %s %u/0x%04x", k, min, mask);
	else if (min == max)
		ctl_sb_printf(sb, " %s %u", k, min);
	else
		ctl_sb_printf(sb, " %s %u-%u", k, min, max);
}

static int parse_src_port(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	return take_port_range(ps, k, &m->src_port_min, &m->src_port_max, &m->src_port_mask);
}

static void print_src_port(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	sb_port_range(sb, k, m->src_port_min, m->src_port_max, m->src_port_mask);
}

static int parse_dst_port(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	return take_port_range(ps, k, &m->dst_port_min, &m->dst_port_max, &m->dst_port_mask);
}

static void print_dst_port(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	sb_port_range(sb, k, m->dst_port_min, m->dst_port_max, m->dst_port_mask);
}

static int parse_tcp_flags(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	uint32_t v, mask;
	int ret = fl_take_masked(ps, k, FLOWER_TCP_FLAGS_MASK, 16, 16, &v, &mask);
	m->tcp_flags = (uint16_t)v;
	m->tcp_flags_mask = (uint16_t)mask;
	return ret;
}

static void print_tcp_flags(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	ctl_sb_printf(sb, " %s 0x%x/0x%x", k, m->tcp_flags, m->tcp_flags_mask);
}

static int parse_ip_tos(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	uint32_t v, mask;
	int ret = fl_take_masked(ps, k, 0xff, FL_BASE_10_16, 16, &v, &mask);
	m->ip_tos = (uint8_t)v;
	m->ip_tos_mask = (uint8_t)mask;
	return ret;
}

static void print_ip_tos(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	ctl_sb_printf(sb, " %s 0x%x", k, m->ip_tos);
	if (m->ip_tos_mask != 0xff)
		ctl_sb_printf(sb, "/0x%x", m->ip_tos_mask);
}

static int parse_ip_ttl(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	uint32_t v, mask;
	int ret = fl_take_masked(ps, k, 0xff, FL_BASE_10_16, 16, &v, &mask);
	m->ip_ttl = (uint8_t)v;
	m->ip_ttl_mask = (uint8_t)mask;
	return ret;
}

static void print_ip_ttl(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	ctl_sb_printf(sb, " %s %u", k, m->ip_ttl);
	if (m->ip_ttl_mask != 0xff)
		ctl_sb_printf(sb, "/0x%x", m->ip_ttl_mask);
}

static const struct {
	const char *name;
	uint8_t bit, value;
} ip_flag_words[] = {
	{ "frag", FLOWER_IPF_FRAG, FLOWER_IPF_FRAG }, { "nofrag", FLOWER_IPF_FRAG, 0 },
	{ "firstfrag", FLOWER_IPF_FIRSTFRAG, FLOWER_IPF_FIRSTFRAG }, { "nofirstfrag", FLOWER_IPF_FIRSTFRAG, 0 },
};

static int parse_ip_flags(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, k, "[no]frag and/or [no]firstfrag, joined by '/'", &v);
	if (ret)
		return ret;
	while (*v) {
		size_t len = strcspn(v, "/"), i;
		for (i = 0; i < sizeof(ip_flag_words) / sizeof(ip_flag_words[0]); i++)
			if (strlen(ip_flag_words[i].name) == len && !strncmp(v, ip_flag_words[i].name, len))
				break;
		if (i == sizeof(ip_flag_words) / sizeof(ip_flag_words[0]) ||
		    (m->ip_flags_mask & ip_flag_words[i].bit))
			return ctl_fail(ps, ps->pos - 1, "bad \"%s\", expected frag, nofrag, "
					"firstfrag or nofirstfrag, each at most once, joined by '/'", k);
		m->ip_flags_mask |= ip_flag_words[i].bit;
		m->ip_flags |= ip_flag_words[i].value;
		v += len;
		if (*v == '/' && !*++v)
			return ctl_fail(ps, ps->pos - 1, "bad \"%s\": nothing after '/'", k);
	}
	if (!m->ip_flags_mask)
		return ctl_fail(ps, ps->pos - 1, "bad \"%s\", expected frag, nofrag, firstfrag or "
				"nofirstfrag", k);
	/* A first fragment is a fragment: nofrag/firstfrag matches nothing. */
	if ((m->ip_flags_mask & FLOWER_IPF_FRAG) && !(m->ip_flags & FLOWER_IPF_FRAG) &&
	    (m->ip_flags & FLOWER_IPF_FIRSTFRAG))
		return ctl_fail(ps, ps->pos - 1, "\"%s\" nofrag with firstfrag would match nothing",
				k);
	return 0;
}

static void print_ip_flags(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	const char *sep = " ";
	ctl_sb_printf(sb, " %s", k);
	for (size_t i = 0; i < sizeof(ip_flag_words) / sizeof(ip_flag_words[0]); i++) {
		uint8_t bit = ip_flag_words[i].bit;
		if ((m->ip_flags_mask & bit) && (m->ip_flags & bit) == ip_flag_words[i].value) {
			ctl_sb_printf(sb, "%s%s", sep, ip_flag_words[i].name);
			sep = "/";
		}
	}
}

/* type / code: f_flower.c's flower_parse_u8(): VALUE[/MASK], both
 * get_u8(.., 10); without a mask, 255. */
static int parse_u8_masked(struct ctl_parser *ps, const char *k, uint8_t *out, uint8_t *mask)
{
	uint32_t v, msk;
	int ret = fl_take_masked(ps, k, 0xff, 10, 10, &v, &msk);
	*out = (uint8_t)v;
	*mask = (uint8_t)msk;
	return ret;
}

static void sb_u8_masked(struct ctl_sbuf *sb, const char *k, uint8_t v, uint8_t mask)
{
	ctl_sb_printf(sb, " %s %u", k, v);
	if (mask != 0xff)
		ctl_sb_printf(sb, "/%u", mask);
}

static int parse_icmp_type(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	return parse_u8_masked(ps, k, &m->icmp_type, &m->icmp_type_mask);
}

static void print_icmp_type(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	sb_u8_masked(sb, k, m->icmp_type, m->icmp_type_mask);
}

static int parse_icmp_code(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	return parse_u8_masked(ps, k, &m->icmp_code, &m->icmp_code_mask);
}

static void print_icmp_code(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	sb_u8_masked(sb, k, m->icmp_code, m->icmp_code_mask);
}

static int parse_enc_key_id(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	uint64_t n;
	int ret = fl_take_num_base(ps, k, 10, 0, CTL_VNI_MAX, &n);
	m->enc_key_id = (uint32_t)n;
	return ret;
}

static void print_enc_key_id(struct ctl_sbuf *sb, const char *k,
			     const struct flower_match *m)
{
	ctl_sb_printf(sb, " %s %u", k, m->enc_key_id);
}

static int parse_enc_src_ip(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	return fl_take_prefix(ps, k, &m->enc_src_ip);
}

static void print_enc_src_ip(struct ctl_sbuf *sb, const char *k,
			     const struct flower_match *m)
{
	fl_sb_prefix(sb, k, &m->enc_src_ip);
}

static int parse_enc_dst_ip(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	return fl_take_prefix(ps, k, &m->enc_dst_ip);
}

static void print_enc_dst_ip(struct ctl_sbuf *sb, const char *k,
			     const struct flower_match *m)
{
	fl_sb_prefix(sb, k, &m->enc_dst_ip);
}

static int parse_enc_dst_port(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	uint64_t n;
	int ret = fl_take_num_base(ps, k, 10, 0, 65535, &n);
	m->enc_dst_port = (uint16_t)n;
	return ret;
}

static void print_enc_dst_port(struct ctl_sbuf *sb, const char *k,
			       const struct flower_match *m)
{
	ctl_sb_printf(sb, " %s %u", k, m->enc_dst_port);
}

/* Printing order; protocol is printed before `flower` by ctl_flower.c. */
static const struct fl_key keys[] = {
	{ "dst_mac", FLOWER_FM_DST_MAC, 0, NEED_NONE, parse_dst_mac, print_dst_mac },
	{ "src_mac", FLOWER_FM_SRC_MAC, 0, NEED_NONE, parse_src_mac, print_src_mac },
	{ "vlan_id", FLOWER_FM_VLAN_ID, 0, NEED_VLAN, parse_vlan_id, print_vlan_id },
	{ "vlan_prio", FLOWER_FM_VLAN_PRIO, 0, NEED_VLAN, parse_vlan_prio, print_vlan_prio },
	{ "vlan_ethtype", FLOWER_FM_VLAN_ETHTYPE, 0, NEED_VLAN, parse_vlan_ethtype, print_vlan_ethtype },
	{ "ip_proto", FLOWER_FM_IP_PROTO, 0, NEED_IP, parse_ip_proto, print_ip_proto },
	{ "src_ip", FLOWER_FM_SRC_IP, 0, NEED_IP_FAM, parse_src_ip, print_src_ip },
	{ "dst_ip", FLOWER_FM_DST_IP, 0, NEED_IP_FAM, parse_dst_ip, print_dst_ip },
	{ "src_port", FLOWER_FM_SRC_PORT, 0, NEED_PORTS, parse_src_port, print_src_port },
	{ "dst_port", FLOWER_FM_DST_PORT, 0, NEED_PORTS, parse_dst_port, print_dst_port },
	{ "tcp_flags", FLOWER_FM_TCP_FLAGS, 0, NEED_TCP, parse_tcp_flags, print_tcp_flags },
	{ "ip_tos", FLOWER_FM_IP_TOS, 0, NEED_IP, parse_ip_tos, print_ip_tos },
	{ "ip_ttl", FLOWER_FM_IP_TTL, 0, NEED_IP, parse_ip_ttl, print_ip_ttl },
	{ "ip_flags", FLOWER_FM_IP_FLAGS, 0, NEED_IP, parse_ip_flags, print_ip_flags },
	{ "mpls", 0, FLOWER_FX_MPLS, NEED_MPLS, fl_parse_mpls, fl_sb_mpls },
	{ "mpls_label", 0, FLOWER_FX_MPLS_LABEL, NEED_MPLS, fl_parse_mpls_field, fl_sb_mpls_field },
	{ "mpls_tc", 0, FLOWER_FX_MPLS_TC, NEED_MPLS, fl_parse_mpls_field, fl_sb_mpls_field },
	{ "mpls_bos", 0, FLOWER_FX_MPLS_BOS, NEED_MPLS, fl_parse_mpls_field, fl_sb_mpls_field },
	{ "mpls_ttl", 0, FLOWER_FX_MPLS_TTL, NEED_MPLS, fl_parse_mpls_field, fl_sb_mpls_field },
	{ "arp_sip", 0, FLOWER_FX_ARP_SIP, NEED_ARP, fl_parse_arp_ip, fl_sb_arp_ip },
	{ "arp_tip", 0, FLOWER_FX_ARP_TIP, NEED_ARP, fl_parse_arp_ip, fl_sb_arp_ip },
	{ "arp_op", 0, FLOWER_FX_ARP_OP, NEED_ARP, fl_parse_arp_op, fl_sb_arp_op },
	{ "arp_sha", 0, FLOWER_FX_ARP_SHA, NEED_ARP, fl_parse_arp_mac, fl_sb_arp_mac },
	{ "arp_tha", 0, FLOWER_FX_ARP_THA, NEED_ARP, fl_parse_arp_mac, fl_sb_arp_mac },
	{ "type", FLOWER_FM_ICMP_TYPE, 0, NEED_ICMP, parse_icmp_type, print_icmp_type },
	{ "code", FLOWER_FM_ICMP_CODE, 0, NEED_ICMP, parse_icmp_code, print_icmp_code },
	{ "enc_key_id", FLOWER_FM_ENC_KEY_ID, 0, NEED_NONE, parse_enc_key_id, print_enc_key_id },
	{ "enc_src_ip", FLOWER_FM_ENC_SRC_IP, 0, NEED_NONE, parse_enc_src_ip, print_enc_src_ip },
	{ "enc_dst_ip", FLOWER_FM_ENC_DST_IP, 0, NEED_NONE, parse_enc_dst_ip, print_enc_dst_ip },
	{ "enc_dst_port", FLOWER_FM_ENC_DST_PORT, 0, NEED_NONE, parse_enc_dst_port, print_enc_dst_port },
	{ "enc_tos", 0, FLOWER_FX_ENC_TOS, NEED_NONE, fl_parse_enc_tos_ttl, fl_sb_enc_tos_ttl },
	{ "enc_ttl", 0, FLOWER_FX_ENC_TTL, NEED_NONE, fl_parse_enc_tos_ttl, fl_sb_enc_tos_ttl },
};
enum { N_KEYS = sizeof(keys) / sizeof(keys[0]) };

static bool key_given(const struct flower_match *m, const struct fl_key *k)
{
	return (m->given & k->flag) || (m->given_ext & k->xflag);
}

static void key_set(struct flower_match *m, const struct fl_key *k)
{
	m->given |= k->flag;
	m->given_ext |= k->xflag;
}

/* ---- dependencies --------------------------------------------------------- */

/* The ethertype the L3 keys see: under a VLAN protocol, vlan_ethtype. */
static uint16_t l3_type(const struct flower_match *m)
{
	uint16_t p = (m->given & FLOWER_FM_PROTOCOL) ? m->protocol : FLOWER_ETH_ALL;
	if (p == FLOWER_ETH_8021Q || p == FLOWER_ETH_8021AD)
		p = (m->given & FLOWER_FM_VLAN_ETHTYPE) ? m->vlan_ethtype : FLOWER_ETH_ALL;
	return p;
}

static const struct flower_prefix *key_prefix(const struct flower_match *m, uint32_t flag)
{
	return flag == FLOWER_FM_SRC_IP ? &m->src_ip : &m->dst_ip;
}

static int check_need(struct ctl_parser *ps, int word, const struct fl_key *k,
		      const struct flower_match *m)
{
	uint16_t l3 = l3_type(m);
	bool ip = l3 == FLOWER_ETH_IP || l3 == FLOWER_ETH_IPV6;
	bool has_proto = m->given & FLOWER_FM_IP_PROTO;
	uint8_t pr = m->ip_proto;
	switch (k->need) {
	case NEED_NONE:
		return 0;
	case NEED_VLAN:
		if (m->protocol == FLOWER_ETH_8021Q || m->protocol == FLOWER_ETH_8021AD)
			return 0;
		return ctl_fail(ps, word, "\"%s\" needs protocol 802.1Q or 802.1ad", k->word);
	case NEED_IP:
		if (ip)
			return 0;
		return ctl_fail(ps, word, "\"%s\" needs protocol ip or ipv6", k->word);
	case NEED_IP_FAM: {
		bool v6 = key_prefix(m, k->flag)->addr.family == AF_INET6;
		if (l3 == (v6 ? FLOWER_ETH_IPV6 : FLOWER_ETH_IP))
			return 0;
		return ctl_fail(ps, word, "\"%s\" with an %s address needs protocol %s", k->word,
				v6 ? "IPv6" : "IPv4", v6 ? "ipv6" : "ip");
	}
	case NEED_PORTS:
		if (ip && has_proto && (pr == IPPROTO_TCP_ || pr == IPPROTO_UDP_ || pr == IPPROTO_SCTP_))
			return 0;
		return ctl_fail(ps, word, "\"%s\" needs ip_proto tcp, udp or sctp", k->word);
	case NEED_TCP:
		if (ip && has_proto && pr == IPPROTO_TCP_)
			return 0;
		return ctl_fail(ps, word, "\"%s\" needs ip_proto tcp", k->word);
	case NEED_ICMP:
		if (has_proto && ((l3 == FLOWER_ETH_IP && pr == IPPROTO_ICMP_) ||
				  (l3 == FLOWER_ETH_IPV6 && pr == IPPROTO_ICMPV6_)))
			return 0;
		return ctl_fail(ps, word, "\"%s\" needs ip_proto icmp (protocol ip) or icmpv6 "
				"(protocol ipv6)", k->word);
	case NEED_MPLS:
		if (l3 == FLOWER_ETH_MPLS_UC || l3 == FLOWER_ETH_MPLS_MC)
			return 0;
		return ctl_fail(ps, word, "can't set \"%s\" if ethertype isn't MPLS: it needs "
				"protocol mpls_uc or mpls_mc (tc's rule)", k->word);
	case NEED_ARP:
		if (l3 == FLOWER_ETH_ARP || l3 == FLOWER_ETH_RARP)
			return 0;
		return ctl_fail(ps, word, "\"%s\" needs protocol arp or rarp (tc's rule)", k->word);
	}
	return 0;
}

/* tc's rule: `mpls lse ...` and the mpls_label/tc/bos/ttl shortcuts are
 * two forms of the same key; one line uses one. */
static int check_mpls_forms(struct ctl_parser *ps, const int words[N_KEYS],
			    const struct flower_match *m)
{
	uint32_t old = FLOWER_FX_MPLS_LABEL | FLOWER_FX_MPLS_TC | FLOWER_FX_MPLS_BOS | FLOWER_FX_MPLS_TTL;
	if (!(m->given_ext & FLOWER_FX_MPLS) || !(m->given_ext & old))
		return 0;
	int later = 0;
	for (int i = 0; i < N_KEYS; i++)
		if ((keys[i].xflag & (old | FLOWER_FX_MPLS)) && key_given(m, &keys[i]) && words[i] > later)
			later = words[i];
	return ctl_fail(ps, later, "can't set \"mpls\" with \"mpls_label\", \"mpls_tc\", "
			"\"mpls_bos\" or \"mpls_ttl\" (tc's rule: one form per line)");
}

static int check_needs(struct ctl_parser *ps, const int words[N_KEYS],
		       const struct flower_match *m)
{
	for (int i = 0; i < N_KEYS; i++) {
		if (!key_given(m, &keys[i]))
			continue;
		int ret = check_need(ps, words[i], &keys[i], m);
		if (ret)
			return ret;
	}
	int enc_dst = 0;
	while (enc_dst < N_KEYS && keys[enc_dst].flag != FLOWER_FM_ENC_DST_IP)
		enc_dst++;
	if ((m->given & FLOWER_FM_ENC_SRC_IP) && (m->given & FLOWER_FM_ENC_DST_IP) &&
	    m->enc_src_ip.addr.family != m->enc_dst_ip.addr.family)
		return ctl_fail(ps, words[enc_dst], "\"enc_dst_ip\" and \"enc_src_ip\" are of "
				"different families");
	return check_mpls_forms(ps, words, m);
}

/* ---- the match list --------------------------------------------------------- */

int fl_parse_match(struct ctl_parser *ps, struct flower_match *m, uint32_t *flags)
{
	int words[N_KEYS] = { 0 };
	while (!ctl_at_end(ps)) {
		const char *w = ps->argv[ps->pos];
		if (!strcmp(w, "action") || !strcmp(w, "actions"))
			break;
		int flag = fl_parse_hw_flag(ps, flags);
		if (flag < 0)
			return flag;
		if (flag)
			continue;
		if (!strcmp(w, "indev")) { /* a port name, not a key of the table (ctl_flower_egress.c) */
			int ret = fl_parse_indev(ps, m);
			if (ret)
				return ret;
			continue;
		}
		int i = 0;
		while (i < N_KEYS && strcmp(keys[i].word, w))
			i++;
		const char *why = i == N_KEYS ? fl_unsupported_key(w) : NULL;
		if (why)
			return ctl_fail(ps, ps->pos, "\"%s\" is tc-flower's key, not supported by "
					"vxswitch: %s", w, why);
		if (i == N_KEYS)
			return ctl_fail(ps, ps->pos, "unknown flower key, expected a match key "
					"(src_ip, dst_port, enc_key_id...: vxctl --help) or \"action\"");
		if (key_given(m, &keys[i]))
			return ctl_fail(ps, ps->pos, "duplicate \"%s\"", w);
		words[i] = ps->pos++;
		int ret = keys[i].parse(ps, w, m);
		if (ret)
			return ret;
		key_set(m, &keys[i]);
	}
	int ret = check_needs(ps, words, m);
	if (!ret)
		fl_mpls_canonical(m);
	return ret;
}

void fl_format_match(struct ctl_sbuf *sb, const struct flower_match *m)
{
	for (int i = 0; i < N_KEYS; i++)
		if (key_given(m, &keys[i]))
			keys[i].print(sb, keys[i].word, m);
}
