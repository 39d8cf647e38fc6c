/* ctl_flower_mpls: the MPLS and ARP match keys of tc-flower(8), read as
 * iproute2 6.1's f_flower.c reads them (flower_parse_mpls(),
 * flower_parse_mpls_lse(), the mpls_label/tc/bos/ttl branches of
 * flower_parse_opt(), flower_parse_arp_ip_addr(), flower_parse_arp_op(),
 * flower_parse_eth_addr()), with the kernel's limits (cls_flower.c:
 * fl_set_key_mpls_lse(), depth 1..FLOW_DIS_MPLS_MAX, one entry per depth).
 * The table that dispatches them and the dependency checks are in
 * ctl_flower_match.c; these are its parse/print pairs. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl_flower_internal.h"

enum {
	MPLS_LABEL_MAX = 0xfffff, /* MPLS_LS_LABEL_MASK >> MPLS_LS_LABEL_SHIFT */
	MPLS_TC_MAX = 7,
	MPLS_BOS_MAX = 1,
	MPLS_TTL_MAX = 255,
	ARPOP_REQUEST_ = 1,
	ARPOP_REPLY_ = 2,
};

/* ---- mpls lse depth D [label L] [tc T] [bos B] [ttl T] ... -------------------- */

static const struct {
	const char *word;
	uint8_t bit;
	uint32_t max;
} lse_fields[] = {
	{ "label", FLOWER_MPLS_LABEL, MPLS_LABEL_MAX }, { "tc", FLOWER_MPLS_TC, MPLS_TC_MAX },
	{ "bos", FLOWER_MPLS_BOS, MPLS_BOS_MAX },       { "ttl", FLOWER_MPLS_TTL, MPLS_TTL_MAX },
};
enum { N_LSE_FIELDS = sizeof(lse_fields) / sizeof(lse_fields[0]) };

static void lse_set(struct flower_mpls_lse *l, uint8_t bit, uint32_t v)
{
	l->given |= bit;
	if (bit == FLOWER_MPLS_LABEL)
		l->label = v;
	else if (bit == FLOWER_MPLS_TC)
		l->tc = (uint8_t)v;
	else if (bit == FLOWER_MPLS_BOS)
		l->bos = (uint8_t)v;
	else
		l->ttl = (uint8_t)v;
}

static uint32_t lse_get(const struct flower_mpls_lse *l, uint8_t bit)
{
	return bit == FLOWER_MPLS_LABEL ? l->label : bit == FLOWER_MPLS_TC ? l->tc
	       : bit == FLOWER_MPLS_BOS ? l->bos : l->ttl;
}

/* One `lse`'s fields, in any order, up to a word that is none of them (as
 * tc's loop breaks there); depth is required (tc: missarg("depth")). */
static int parse_one_lse(struct ctl_parser *ps, struct flower_match *m)
{
	int lse_word = ps->pos - 1;
	struct flower_mpls_lse l = { 0 };
	uint64_t depth = 0;
	while (!ctl_at_end(ps)) {
		const char *w = ps->argv[ps->pos];
		int ret;
		if (!strcmp(w, "depth")) {
			if (depth)
				return ctl_fail(ps, ps->pos, "duplicate \"depth\" in this lse");
			ps->pos++;
			/* tc: get_u8(.., 10) >= 1; the kernel: at most FLOW_DIS_MPLS_MAX */
			ret = fl_take_num_base(ps, "depth", 10, 1, FLOWER_MPLS_MAX, &depth);
			if (ret)
				return ret;
			continue;
		}
		int i = 0;
		while (i < N_LSE_FIELDS && strcmp(lse_fields[i].word, w))
			i++;
		if (i == N_LSE_FIELDS)
			break;
		if (l.given & lse_fields[i].bit)
			return ctl_fail(ps, ps->pos, "duplicate \"%s\" in this lse", w);
		ps->pos++;
		uint64_t v;
		ret = fl_take_num_base(ps, w, 10, 0, lse_fields[i].max, &v);
		if (ret)
			return ret;
		lse_set(&l, lse_fields[i].bit, (uint32_t)v);
	}
	if (!depth)
		return ctl_fail(ps, lse_word, "\"lse\" needs \"depth 1..%d\" (tc: missing depth)",
				FLOWER_MPLS_MAX);
	if (m->mpls[depth - 1].given)
		return ctl_fail(ps, lse_word, "a second lse of depth %u (the kernel refuses it: "
				"duplicated MPLS LSE)", (unsigned)depth);
	l.given |= FLOWER_MPLS_DEPTH;
	m->mpls[depth - 1] = l;
	return 0;
}

int fl_parse_mpls(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	int n = 0;
	while (!ctl_at_end(ps) && !strcmp(ps->argv[ps->pos], "lse")) {
		ps->pos++;
		int ret = parse_one_lse(ps, m);
		if (ret)
			return ret;
		n++;
	}
	if (!n)
		return ctl_fail(ps, ps->pos - 1, "\"%s\" needs at least one \"lse depth D ...\" "
				"(an empty list would match every MPLS frame: protocol mpls_uc "
				"alone says that)", k);
	return 0;
}

void fl_sb_mpls(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	ctl_sb_printf(sb, " %s", k);
	for (int d = 0; d < FLOWER_MPLS_MAX; d++) {
		const struct flower_mpls_lse *l = &m->mpls[d];
		if (!l->given)
			continue;
		ctl_sb_printf(sb, " lse depth %d", d + 1);
		for (int i = 0; i < N_LSE_FIELDS; i++)
			if (l->given & lse_fields[i].bit)
				ctl_sb_printf(sb, " %s %u", lse_fields[i].word, lse_get(l, lse_fields[i].bit));
	}
}

void fl_mpls_canonical(struct flower_match *m)
{
	if (!(m->given_ext & FLOWER_FX_MPLS) || !(m->mpls[0].given & ~FLOWER_MPLS_DEPTH))
		return;
	for (int d = 1; d < FLOWER_MPLS_MAX; d++)
		if (m->mpls[d].given)
			return;
	static const struct { uint8_t lse_bit; uint32_t fx_bit; } older[] = {
		{ FLOWER_MPLS_LABEL, FLOWER_FX_MPLS_LABEL }, { FLOWER_MPLS_TC, FLOWER_FX_MPLS_TC },
		{ FLOWER_MPLS_BOS, FLOWER_FX_MPLS_BOS },     { FLOWER_MPLS_TTL, FLOWER_FX_MPLS_TTL },
	};
	const struct flower_mpls_lse l = m->mpls[0];
	for (size_t i = 0; i < sizeof(older) / sizeof(older[0]); i++)
		if (l.given & older[i].lse_bit)
			m->given_ext |= older[i].fx_bit;
	m->mpls_label = (l.given & FLOWER_MPLS_LABEL) ? l.label : 0;
	m->mpls_tc = (l.given & FLOWER_MPLS_TC) ? l.tc : 0;
	m->mpls_bos = (l.given & FLOWER_MPLS_BOS) ? l.bos : 0;
	m->mpls_ttl = (l.given & FLOWER_MPLS_TTL) ? l.ttl : 0;
	memset(&m->mpls[0], 0, sizeof(m->mpls[0]));
	m->given_ext &= ~(uint32_t)FLOWER_FX_MPLS;
}

/* mpls_label / mpls_tc / mpls_bos / mpls_ttl: the first entry's fields,
 * each get_u32/get_u8(.., 10) within its field's width. */
int fl_parse_mpls_field(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	const char *field = k + strlen("mpls_");
	for (int i = 0; i < N_LSE_FIELDS; i++) {
		if (strcmp(lse_fields[i].word, field))
			continue;
		uint64_t v;
		int ret = fl_take_num_base(ps, k, 10, 0, lse_fields[i].max, &v);
		if (ret)
			return ret;
		if (lse_fields[i].bit == FLOWER_MPLS_LABEL)
			m->mpls_label = (uint32_t)v;
		else if (lse_fields[i].bit == FLOWER_MPLS_TC)
			m->mpls_tc = (uint8_t)v;
		else if (lse_fields[i].bit == FLOWER_MPLS_BOS)
			m->mpls_bos = (uint8_t)v;
		else
			m->mpls_ttl = (uint8_t)v;
		return 0;
	}
	return ctl_fail(ps, ps->pos - 1, "unknown MPLS field \"%s\"", k);
}

void fl_sb_mpls_field(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	const char *field = k + strlen("mpls_");
	uint32_t v = !strcmp(field, "label") ? m->mpls_label : !strcmp(field, "tc") ? m->mpls_tc
		   : !strcmp(field, "bos") ? m->mpls_bos : m->mpls_ttl;
	ctl_sb_printf(sb, " %s %u", k, v);
}

/* ---- arp_sip / arp_tip / arp_op / arp_sha / arp_tha --------------------------- */

/* tc: get_prefix() with AF_INET only (flower_parse_arp_ip_addr()). */
int fl_parse_arp_ip(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	struct flower_prefix *p = !strcmp(k, "arp_sip") ? &m->arp_sip : &m->arp_tip;
	int ret = fl_take_prefix(ps, k, p);
	if (!ret && p->addr.family != AF_INET)
		return ctl_fail(ps, ps->pos - 1, "\"%s\" takes an IPv4 address (ARP for IPv4, "
				"as tc reads it)", k);
	return ret;
}

void fl_sb_arp_ip(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	fl_sb_prefix(sb, k, !strcmp(k, "arp_sip") ? &m->arp_sip : &m->arp_tip);
}

/* tc's flower_parse_u8() with flower_arp_op_from_name(): request, reply or
 * get_u8(.., 10) that is 0, 1 or 2; /MASK get_u8(.., 10). */
int fl_parse_arp_op(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, k, "request, reply or 0..2, [/MASK]", &v);
	if (ret)
		return ret;
	char text[24];
	uint64_t op = 0, mask = 0xff;
	snprintf(text, sizeof(text), "%s", v);
	char *slash = strchr(text, '/');
	if (slash)
		*slash = '\0';
	if (!strcmp(text, "request"))
		op = ARPOP_REQUEST_;
	else if (!strcmp(text, "reply"))
		op = ARPOP_REPLY_;
	else if (!fl_num_base(text, 10, 255, &op) || op > ARPOP_REPLY_)
		return ctl_fail(ps, ps->pos - 1, "bad \"%s\", expected request, reply or 0..2 "
				"(decimal, as tc reads it)", k);
	if (strlen(v) >= sizeof(text) || (slash && !fl_num_base(slash + 1, 10, 255, &mask)))
		return ctl_fail(ps, ps->pos - 1, "bad mask for \"%s\", expected 0..255 (decimal, "
				"as tc reads it)", k);
	m->arp_op = (uint8_t)(op & mask);
	m->arp_op_mask = (uint8_t)mask;
	return 0;
}

void fl_sb_arp_op(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	if (m->arp_op_mask == 0xff && m->arp_op == ARPOP_REQUEST_)
		ctl_sb_printf(sb, " %s request", k);
	else if (m->arp_op_mask == 0xff && m->arp_op == ARPOP_REPLY_)
		ctl_sb_printf(sb, " %s reply", k);
	else if (m->arp_op_mask == 0xff)
		ctl_sb_printf(sb, " %s %u", k, m->arp_op);
	else
		ctl_sb_printf(sb, " %s %u/%u", k, m->arp_op, m->arp_op_mask);
}

int fl_parse_arp_mac(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	if (!strcmp(k, "arp_sha"))
		return fl_take_mac(ps, k, m->arp_sha, m->arp_sha_mask);
	return fl_take_mac(ps, k, m->arp_tha, m->arp_tha_mask);
}

void fl_sb_arp_mac(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	if (!strcmp(k, "arp_sha"))
		fl_sb_mac(sb, k, m->arp_sha, m->arp_sha_mask);
	else
		fl_sb_mac(sb, k, m->arp_tha, m->arp_tha_mask);
}

/* ---- enc_tos / enc_ttl ---------------------------------------------------------- */

/* tc's flower_parse_ip_tos_ttl(): the value get_u8(.., 10), else (.., 16);
 * /MASK get_u8(.., 16). */
int fl_parse_enc_tos_ttl(struct ctl_parser *ps, const char *k, struct flower_match *m)
{
	uint32_t v, mask;
	int ret = fl_take_masked(ps, k, 0xff, FL_BASE_10_16, 16, &v, &mask);
	if (!strcmp(k, "enc_tos")) {
		m->enc_tos = (uint8_t)v;
		m->enc_tos_mask = (uint8_t)mask;
	} else {
		m->enc_ttl = (uint8_t)v;
		m->enc_ttl_mask = (uint8_t)mask;
	}
	return ret;
}

/* As ip_tos (0x hex) and ip_ttl (decimal) print. */
void fl_sb_enc_tos_ttl(struct ctl_sbuf *sb, const char *k, const struct flower_match *m)
{
	if (!strcmp(k, "enc_tos")) {
		ctl_sb_printf(sb, " %s 0x%x", k, m->enc_tos);
		if (m->enc_tos_mask != 0xff)
			ctl_sb_printf(sb, "/0x%x", m->enc_tos_mask);
	} else {
		ctl_sb_printf(sb, " %s %u", k, m->enc_ttl);
		if (m->enc_ttl_mask != 0xff)
			ctl_sb_printf(sb, "/0x%x", m->enc_ttl_mask);
	}
}

/* ---- tc's keys that vxswitch does not build ------------------------------------ */

/* Every other key of iproute2 6.1's flower_parse_opt(), and the later
 * ones tc-flower(8) now lists, with why a VXLAN switch refuses it. */
const char *fl_unsupported_key(const char *w)
{
	static const struct {
		const char *word, *why;
	} keys[] = {
		{ "ct_state", "there is no connection tracking in vxswitch" },
		{ "ct_zone", "there is no connection tracking in vxswitch" },
		{ "ct_mark", "there is no connection tracking in vxswitch" },
		{ "ct_label", "there is no connection tracking in vxswitch" },
		{ "vxlan_opts", "VXLAN-GBP is not run: a VXLAN header with the G flag has reserved "
				"bits set for RFC 7348 and is dropped (vxlan_reserved_bits)" },
		{ "geneve_opts", "vxswitch carries VXLAN only, not Geneve" },
		{ "erspan_opts", "vxswitch carries VXLAN only, not ERSPAN" },
		{ "gtp_opts", "vxswitch carries VXLAN only, not GTP" },
		{ "cvlan_id", "the inner tag of a double-tagged frame is not matched yet "
			      "(vlan_ethtype 802.1Q matches its presence)" },
		{ "cvlan_prio", "the inner tag of a double-tagged frame is not matched yet" },
		{ "cvlan_ethtype", "the inner tag of a double-tagged frame is not matched yet" },
		{ "num_of_vlans", "not built: protocol and vlan_ethtype say how many tags a frame has" },
		{ "pppoe_sid", "PPPoE session frames are not parsed (an unknown ethertype here)" },
		{ "ppp_proto", "PPPoE session frames are not parsed (an unknown ethertype here)" },
		{ "l2tpv3_sid", "L2TPv3 is not parsed (and is not in iproute2 6.1's flower)" },
		{ "cfm", "802.1ag CFM frames are not parsed (and cfm is not in iproute2 6.1's flower)" },
		{ "l2_miss", "rules run before the FDB lookup, so a miss is not known yet (and "
			     "l2_miss is not in iproute2 6.1's flower)" },
		{ "spi", "IPsec headers are not parsed (and spi is not in iproute2 6.1's flower)" },
		{ "classid", "there are no qdisc classes in vxswitch" },
		{ "flowid", "there are no qdisc classes in vxswitch" },
		{ "hw_tc", "there is no hardware traffic class in vxswitch" },
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(keys[i].word, w))
			return keys[i].why;
	return NULL;
}
