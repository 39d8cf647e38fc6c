/* frame_builder: see frame_builder.h.  Test code: clarity over speed.
 *
 * Checksums use the naive reference sum of csum_reference.h (not
 * packet/csum.c), so that tests of the checksum code and of code using it
 * are not checked against themselves. */
#include "frame_builder.h"

#include <stdio.h>
#include <string.h>

#include "csum_reference.h"
#include "packet/bytes.h"
#include "packet/hdr.h"

/* Stores the L4 checksum at `field` according to `mode`.  The field must
 * be zero when called. */
static void store_l4_csum(uint8_t *field, enum fb_csum_mode mode, uint32_t pseudo,
			  const uint8_t *l4, size_t l4_len, bool is_udp)
{
	uint16_t csum;
	switch (mode) {
	case FB_CSUM_ZERO:
		csum = 0;
		break;
	case FB_CSUM_PARTIAL:
		csum = csum_ref_fold(pseudo);
		break;
	case FB_CSUM_BAD:
	case FB_CSUM_FULL:
	default:
		csum = (uint16_t)~csum_ref_fold(csum_ref_sum_be(l4, l4_len, pseudo));
		if (is_udp && csum == 0)
			csum = 0xffff;
		if (mode == FB_CSUM_BAD)
			csum = (uint16_t)(csum + 1);
		break;
	}
	store_be16(field, csum);
}

static void fill_payload(uint8_t *p, const struct fb_frame *f)
{
	if (f->payload)
		memcpy(p, f->payload, f->payload_len);
	else
		for (size_t i = 0; i < f->payload_len; i++)
			p[i] = (uint8_t)(f->payload_seed + i);
}

void fb_frame_init(struct fb_frame *f, uint8_t family, uint8_t proto)
{
	static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	memset(f, 0, sizeof(*f));
	memcpy(f->dst_mac, mac_b, 6);
	memcpy(f->src_mac, mac_a, 6);
	f->family = family;
	if (family == 6) {
		static const uint8_t v6_prefix[4] = { 0x20, 0x01, 0x0d, 0xb8 };
		memcpy(f->src_ip, v6_prefix, 4);
		memcpy(f->dst_ip, v6_prefix, 4);
		f->src_ip[15] = 1;
		f->dst_ip[15] = 2;
	} else {
		static const uint8_t src4[4] = { 192, 0, 2, 1 }, dst4[4] = { 192, 0, 2, 2 };
		memcpy(f->src_ip, src4, 4);
		memcpy(f->dst_ip, dst4, 4);
	}
	f->ttl = 64;
	f->ip_id = 1;
	f->frag_off = IPV4_DF;
	f->ip_len_override = -1;
	f->arp_op = 1;
	f->proto = proto;
	f->src_port = 1000;
	f->dst_port = 2000;
	f->seq = 1;
	f->ack = 1;
	f->tcp_flags = TCP_ACK;
	f->window = 65535;
	f->udp_len_override = -1;
}

static size_t ipv6_ext_size(const struct fb_ipv6_ext *e)
{
	switch (e->type) {
	case IP_PROTO_FRAGMENT:
		return IPV6_FRAG_HDR_LEN;
	case IP_PROTO_AH:
		return ((size_t)e->len8 + 2) * 4;
	default:
		return ((size_t)e->len8 + 1) * 8;
	}
}

static void write_ipv6_ext(uint8_t *p, const struct fb_ipv6_ext *e, uint8_t next)
{
	size_t size = ipv6_ext_size(e);
	memset(p, 0, size);
	p[0] = next;
	if (e->type == IP_PROTO_FRAGMENT) {
		store_be16(p + 2, (uint16_t)(e->frag_offset << 3 | (e->frag_more ? 1 : 0)));
		store_be32(p + 4, e->frag_id);
		return;
	}
	p[1] = e->len8;
	if (e->body) {
		memcpy(p + 2, e->body, size - 2);
	} else if (e->type == IP_PROTO_HOPOPTS || e->type == IP_PROTO_DSTOPTS) {
		p[2] = 1; /* PadN covering the rest */
		p[3] = (uint8_t)(size - 4);
	}
}

static bool has_l4_header(const struct fb_frame *f)
{
	if (f->family == 4)
		return (f->frag_off & IPV4_FRAG_OFFSET_MASK) == 0;
	for (unsigned i = 0; i < f->n_ipv6_ext; i++)
		if (f->ipv6_ext[i].type == IP_PROTO_FRAGMENT && f->ipv6_ext[i].frag_offset)
			return false;
	return true;
}

static size_t l4_header_size(const struct fb_frame *f)
{
	if (!has_l4_header(f))
		return 0;
	switch (f->proto) {
	case IP_PROTO_TCP:
		return TCP_HDR_LEN + f->tcp_opts_len;
	case IP_PROTO_UDP:
		return UDP_HDR_LEN;
	case IP_PROTO_ICMP:
		return f->family == 4 ? ICMP_HDR_LEN : 0;
	case IP_PROTO_ICMPV6:
		return f->family == 6 ? ICMP_HDR_LEN : 0;
	case IP_PROTO_SCTP:
		return SCTP_HDR_LEN;
	default:
		return 0;
	}
}

/* Writes the L4 header and payload at `p` and its checksum. */
static void write_l4(uint8_t *p, const struct fb_frame *f, size_t hdr_size)
{
	size_t l4_len = hdr_size + f->payload_len;
	fill_payload(p + hdr_size, f);
	if (hdr_size == 0)
		return;
	uint32_t pseudo = csum_ref_pseudo(f->family, f->src_ip, f->dst_ip, f->proto, (uint32_t)l4_len);
	switch (f->proto) {
	case IP_PROTO_TCP:
		store_be16(p, f->src_port);
		store_be16(p + 2, f->dst_port);
		store_be32(p + 4, f->seq);
		store_be32(p + 8, f->ack);
		p[12] = (uint8_t)((hdr_size / 4) << 4 | ((f->tcp_flags & TCP_NS) ? 1 : 0));
		p[13] = (uint8_t)f->tcp_flags;
		store_be16(p + 14, f->window);
		store_be16(p + 16, 0);
		store_be16(p + 18, 0);
		if (f->tcp_opts_len)
			memcpy(p + TCP_HDR_LEN, f->tcp_opts, f->tcp_opts_len);
		store_l4_csum(p + TCP_CSUM_OFFSET, f->csum, pseudo, p, l4_len, false);
		break;
	case IP_PROTO_UDP:
		store_be16(p, f->src_port);
		store_be16(p + 2, f->dst_port);
		store_be16(p + 4, f->udp_len_override >= 0 ? (uint16_t)f->udp_len_override
						     : (uint16_t)l4_len);
		store_be16(p + 6, 0);
		store_l4_csum(p + UDP_CSUM_OFFSET, f->csum, pseudo, p, l4_len, true);
		break;
	case IP_PROTO_SCTP: /* common header; CRC32c left zero (no parser checks it) */
		store_be16(p, f->src_port);
		store_be16(p + 2, f->dst_port);
		memset(p + 4, 0, 8);
		break;
	default: /* ICMP, ICMPv6 */
		p[0] = (uint8_t)f->src_port;
		p[1] = (uint8_t)f->dst_port;
		store_be16(p + 2, 0);
		store_l4_csum(p + 2, f->csum, f->family == 4 ? 0 : pseudo, p, l4_len, false);
		break;
	}
}

static size_t write_eth(uint8_t *p, const uint8_t dst[6], const uint8_t src[6],
			const uint16_t *tpid, const uint16_t *tci, unsigned n_vlans, uint16_t type)
{
	size_t ofs = 0;
	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	ofs = 12;
	for (unsigned i = 0; i < n_vlans; i++) {
		store_be16(p + ofs, tpid[i]);
		store_be16(p + ofs + 2, tci[i]);
		ofs += 4;
	}
	store_be16(p + ofs, type);
	return ofs + 2;
}

static size_t ipv4_write_hdr(uint8_t *p, uint8_t tos, uint16_t tot_len, uint16_t id,
			     uint16_t frag_off, uint8_t ttl, uint8_t proto, const uint8_t *src,
			     const uint8_t *dst, const uint8_t *opts, size_t opts_len)
{
	size_t ihl = IPV4_HDR_LEN + opts_len;
	p[0] = (uint8_t)(0x40 | ihl / 4);
	p[1] = tos;
	store_be16(p + 2, tot_len);
	store_be16(p + 4, id);
	store_be16(p + 6, frag_off);
	p[8] = ttl;
	p[9] = proto;
	store_be16(p + 10, 0);
	memcpy(p + 12, src, 4);
	memcpy(p + 16, dst, 4);
	if (opts_len)
		memcpy(p + IPV4_HDR_LEN, opts, opts_len);
	store_be16(p + 10, (uint16_t)~csum_ref_fold(csum_ref_sum_be(p, ihl, 0)));
	return ihl;
}

static void ipv6_write_hdr(uint8_t *p, uint8_t tclass, uint32_t label, uint16_t payload_len,
			   uint8_t next, uint8_t hop_limit, const uint8_t *src, const uint8_t *dst)
{
	store_be32(p, 6u << 28 | (uint32_t)tclass << 20 | (label & 0xfffff));
	store_be16(p + 4, payload_len);
	p[6] = next;
	p[7] = hop_limit;
	memcpy(p + 8, src, 16);
	memcpy(p + 24, dst, 16);
}

size_t fb_build(const struct fb_frame *f, uint8_t *buf, size_t cap, struct fb_layout *layout)
{
	if (f->n_vlans > FB_MAX_VLANS || f->n_ipv6_ext > FB_MAX_IPV6_EXT ||
	    f->ip_opts_len > 40 || f->ip_opts_len % 4 || f->tcp_opts_len > 40 || f->tcp_opts_len % 4)
		return 0;
	uint16_t type = f->family == 4 ? ETH_TYPE_IPV4 : f->family == 6 ? ETH_TYPE_IPV6 : ETH_TYPE_ARP;
	if (f->eth_type_override)
		type = f->eth_type_override;

	size_t l2_size = ETH_HDR_LEN + (size_t)f->n_vlans * VLAN_HDR_LEN;
	size_t l3_size, l4_hdr = 0;
	if (f->family == 4) {
		l3_size = IPV4_HDR_LEN + f->ip_opts_len;
	} else if (f->family == 6) {
		l3_size = IPV6_HDR_LEN;
		for (unsigned i = 0; i < f->n_ipv6_ext; i++)
			l3_size += ipv6_ext_size(&f->ipv6_ext[i]);
	} else {
		l3_size = sizeof(struct arp_eth_ipv4);
	}
	if (f->family == 4 || f->family == 6)
		l4_hdr = l4_header_size(f);
	size_t len = l2_size + l3_size + l4_hdr + f->payload_len;
	size_t total = len > f->pad_to ? len : f->pad_to;
	if (total > cap || len - l2_size > 0xffff + (f->family == 6 ? IPV6_HDR_LEN : 0))
		return 0;

	write_eth(buf, f->dst_mac, f->src_mac, f->vlan_tpid, f->vlan_tci, f->n_vlans, type);
	uint8_t *l3 = buf + l2_size;
	uint8_t *l4 = l3 + l3_size;
	if (f->family == 4) {
		uint16_t tot_len = f->ip_len_override >= 0 ? (uint16_t)f->ip_len_override
							   : (uint16_t)(len - l2_size);
		ipv4_write_hdr(l3, f->tos, tot_len, f->ip_id, f->frag_off, f->ttl, f->proto,
			       f->src_ip, f->dst_ip, f->ip_opts, f->ip_opts_len);
		write_l4(l4, f, l4_hdr);
	} else if (f->family == 6) {
		uint16_t plen = f->ip_len_override >= 0 ? (uint16_t)f->ip_len_override
							: (uint16_t)(len - l2_size - IPV6_HDR_LEN);
		uint8_t first = f->n_ipv6_ext ? f->ipv6_ext[0].type : f->proto;
		ipv6_write_hdr(l3, f->tos, f->ipv6_label, plen, first, f->ttl, f->src_ip, f->dst_ip);
		uint8_t *ext = l3 + IPV6_HDR_LEN;
		for (unsigned i = 0; i < f->n_ipv6_ext; i++) {
			uint8_t next = i + 1 < f->n_ipv6_ext ? f->ipv6_ext[i + 1].type : f->proto;
			write_ipv6_ext(ext, &f->ipv6_ext[i], next);
			ext += ipv6_ext_size(&f->ipv6_ext[i]);
		}
		write_l4(l4, f, l4_hdr);
	} else {
		store_be16(l3, 1);
		store_be16(l3 + 2, ETH_TYPE_IPV4);
		l3[4] = 6;
		l3[5] = 4;
		store_be16(l3 + 6, f->arp_op);
		memcpy(l3 + 8, f->src_mac, 6);
		memcpy(l3 + 14, f->src_ip, 4);
		memcpy(l3 + 18, f->dst_mac, 6);
		memcpy(l3 + 24, f->dst_ip, 4);
		fill_payload(l4, f);
	}
	memset(buf + len, 0, total - len);
	if (layout) {
		layout->l3_ofs = l2_size;
		layout->l4_ofs = l2_size + l3_size;
		layout->payload_ofs = l2_size + l3_size + l4_hdr;
		layout->len = total;
	}
	return total;
}

void fb_vxlan_init(struct fb_vxlan *vx, uint8_t family, uint32_t vni)
{
	static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0x01, 0x01 };
	static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0x01, 0x02 };
	memset(vx, 0, sizeof(*vx));
	vx->family = family;
	memcpy(vx->dst_mac, mac_b, 6);
	memcpy(vx->src_mac, mac_a, 6);
	if (family == 6) {
		static const uint8_t prefix[6] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x01 };
		memcpy(vx->src_ip, prefix, 6);
		memcpy(vx->dst_ip, prefix, 6);
		vx->src_ip[15] = 1;
		vx->dst_ip[15] = 2;
	} else {
		static const uint8_t src4[4] = { 198, 51, 100, 1 }, dst4[4] = { 198, 51, 100, 2 };
		memcpy(vx->src_ip, src4, 4);
		memcpy(vx->dst_ip, dst4, 4);
	}
	vx->ttl = 64;
	vx->ip_id = 1;
	vx->frag_off = IPV4_DF;
	vx->src_port = 49152;
	vx->dst_port = VXLAN_DEFAULT_PORT;
	vx->vni = vni;
	vx->flags = VXLAN_FLAG_VNI;
}

size_t fb_wrap_vxlan(const struct fb_vxlan *vx, const uint8_t *inner, size_t inner_len,
		     uint8_t *buf, size_t cap)
{
	size_t hdrs = vx->family == 4 ? VXLAN_ENCAP_LEN_IPV4
		    : vx->family == 6 ? VXLAN_ENCAP_LEN_IPV6 : VXLAN_HDR_LEN;
	size_t len = hdrs + inner_len;
	size_t udp_len = UDP_HDR_LEN + VXLAN_HDR_LEN + inner_len;
	if (len > cap || udp_len > 0xffff)
		return 0;
	memmove(buf + hdrs, inner, inner_len); /* inner may already sit in buf */

	uint8_t *vxh = buf + hdrs - VXLAN_HDR_LEN;
	store_be32(vxh, vx->flags);
	store_be32(vxh + 4, vx->vni << 8 | vx->vni_reserved);
	if (vx->family == 0)
		return len;

	uint16_t type = vx->family == 4 ? ETH_TYPE_IPV4 : ETH_TYPE_IPV6;
	size_t l3 = write_eth(buf, vx->dst_mac, vx->src_mac, NULL, NULL, 0, type);
	size_t l4;
	if (vx->family == 4) {
		l4 = l3 + ipv4_write_hdr(buf + l3, vx->tos, (uint16_t)(IPV4_HDR_LEN + udp_len),
					 vx->ip_id, vx->frag_off, vx->ttl, IP_PROTO_UDP,
					 vx->src_ip, vx->dst_ip, NULL, 0);
	} else {
		ipv6_write_hdr(buf + l3, vx->tos, 0, (uint16_t)udp_len, IP_PROTO_UDP, vx->ttl,
			       vx->src_ip, vx->dst_ip);
		l4 = l3 + IPV6_HDR_LEN;
	}
	uint8_t *uh = buf + l4;
	store_be16(uh, vx->src_port);
	store_be16(uh + 2, vx->dst_port);
	store_be16(uh + 4, (uint16_t)udp_len);
	store_be16(uh + 6, 0);
	if (vx->udp_csum || vx->family == 6) {
		uint32_t pseudo = csum_ref_pseudo(vx->family, vx->src_ip, vx->dst_ip, IP_PROTO_UDP,
					     (uint32_t)udp_len);
		store_l4_csum(uh + 6, FB_CSUM_FULL, pseudo, uh, udp_len, true);
	}
	return len;
}

void fb_hexdump(const char *title, const uint8_t *buf, size_t len)
{
	fprintf(stderr, "%s (%zu bytes):\n", title, len);
	for (size_t i = 0; i < len; i += 16) {
		fprintf(stderr, "  %04zx:", i);
		for (size_t j = i; j < i + 16 && j < len; j++)
			fprintf(stderr, " %02x", buf[j]);
		fprintf(stderr, "\n");
	}
}
