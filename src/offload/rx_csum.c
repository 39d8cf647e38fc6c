#include "offload/rx_csum.h"

#include <string.h>

#include "packet/bytes.h"
#include "packet/csum.h"
#include "packet/hdr.h"

/* The L4 length the IP header states, or 0 when it is unusable; its
 * pseudo-header sum in *pseudo.  Fragments were set aside by the caller. */
static uint32_t rx_csum_l4_len(const struct pkt *pkt, uint32_t l3_ofs, uint32_t l4_ofs, uint32_t *pseudo,
			       uint8_t proto)
{
	const uint8_t *l3 = pkt_at(pkt, l3_ofs, 1);
	if (!l3 || l4_ofs <= l3_ofs)
		return 0;
	uint32_t l3_len;
	if ((l3[0] >> 4) == 4) {
		const struct ipv4_hdr *ip = (const struct ipv4_hdr *)pkt_at(pkt, l3_ofs, IPV4_HDR_LEN);
		if (!ip)
			return 0;
		l3_len = load_be16(&ip->tot_len_be);
		if (l3_len < l4_ofs - l3_ofs)
			return 0;
		*pseudo = csum_pseudo_ipv4(ip->src, ip->dst, proto, l3_len - (l4_ofs - l3_ofs));
	} else if ((l3[0] >> 4) == 6) {
		const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)pkt_at(pkt, l3_ofs, IPV6_HDR_LEN);
		if (!ip6)
			return 0;
		l3_len = IPV6_HDR_LEN + (uint32_t)load_be16(&ip6->payload_len_be);
		if (l3_len < l4_ofs - l3_ofs)
			return 0;
		*pseudo = csum_pseudo_ipv6(ip6->src, ip6->dst, proto, l3_len - (l4_ofs - l3_ofs));
	} else {
		return 0;
	}
	if (l3_ofs + l3_len > pkt_len(pkt))
		return 0;
	return l3_len - (l4_ofs - l3_ofs);
}

enum rx_csum_verdict rx_csum_check(struct pkt *pkt, uint32_t l3_ofs, uint32_t l4_ofs, uint8_t proto, bool finish)
{
	uint32_t csum_offset, min_len;
	if (proto == IP_PROTO_TCP) {
		csum_offset = TCP_CSUM_OFFSET;
		min_len = TCP_HDR_LEN;
	} else if (proto == IP_PROTO_UDP) {
		csum_offset = UDP_CSUM_OFFSET;
		min_len = UDP_HDR_LEN;
	} else {
		return RX_CSUM_NOT_CHECKED;
	}
	const uint8_t *l3 = pkt_at(pkt, l3_ofs, 1);
	if (!l3)
		return RX_CSUM_BAD;
	bool ipv4 = (l3[0] >> 4) == 4;
	if (ipv4) {
		const struct ipv4_hdr *ip = (const struct ipv4_hdr *)pkt_at(pkt, l3_ofs, IPV4_HDR_LEN);
		if (ip && (load_be16(&ip->frag_off_be) & (IPV4_MF | IPV4_FRAG_OFFSET_MASK)))
			return RX_CSUM_NOT_CHECKED;
	} else if (l4_ofs != l3_ofs + IPV6_HDR_LEN) {
		/* Extension headers: with a routing header the pseudo-header
		 * takes the final destination, not the one in the IPv6
		 * header.  Rare enough to leave to the VM. */
		return RX_CSUM_NOT_CHECKED;
	}
	uint32_t pseudo = 0;
	uint32_t l4_len = rx_csum_l4_len(pkt, l3_ofs, l4_ofs, &pseudo, proto);
	if (l4_len < min_len)
		return RX_CSUM_BAD;
	uint16_t field;
	if (pkt_copy_out(pkt, l4_ofs + csum_offset, sizeof(field), &field) < 0)
		return RX_CSUM_BAD;
	/* RFC 768: an IPv4 UDP checksum of zero means "none" (IPv6 forbids it). */
	if (proto == IP_PROTO_UDP && field == 0)
		return ipv4 ? RX_CSUM_NOT_CHECKED : RX_CSUM_BAD;

	uint32_t sum = pkt->nr_frags ? csum_pkt(pkt, l4_ofs, l4_len, pseudo)
				     : csum_partial(pkt->data + l4_ofs, l4_len, pseudo);
	if (csum_fold(sum) == 0)
		return RX_CSUM_GOOD;

	uint16_t seed = csum_fold_nocomplement(pseudo);
	if (field != seed)
		return RX_CSUM_BAD;
	if (!finish || !pkt_at(pkt, l4_ofs + csum_offset, sizeof(field)))
		return RX_CSUM_UNFINISHED;
	/* sum covered the seed in place of the field: take it out again
	 * (one's-complement subtraction is adding the complement). */
	uint16_t done = csum_fold((uint32_t)csum_fold_nocomplement(sum) + (uint16_t)~seed);
	if (proto == IP_PROTO_UDP && done == 0)
		done = 0xffff;
	memcpy(pkt->data + l4_ofs + csum_offset, &done, sizeof(done));
	return RX_CSUM_FINISHED;
}
