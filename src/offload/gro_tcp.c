/* The inner IP and TCP layer of GRO (kernel tcp_gro_receive,
 * inet_gro_receive / ipv6_gro_receive, tcp4/6_gro_complete): locating a
 * segment's headers, whether it may be held, whether it is the held run's
 * flow, whether it may join the run, merging it and writing the merged
 * frame's headers.  The rules are gro.h's; the tunnel's share is in
 * gro_vxlan.c. */
#include "offload/gro_internal.h"

#include "packet/csum.h"

/* Walks IPv6 extension headers from `ofs` (the byte after the fixed
 * header), the way the parser did, to learn whether the L4 header the
 * parser found at `l4_ofs` is TCP.  Only needed for frames we will not
 * merge anyway, to flush their flow's run first. */
static bool gro_ipv6_l4_is_tcp(const struct pkt *pkt, uint32_t ofs, uint8_t next, uint16_t l4_ofs)
{
	for (int i = 0; i <= 8 && ofs < l4_ofs; i++) {
		const uint8_t *ext = pkt_at(pkt, ofs, 2);
		if (!ext)
			return false;
		switch (next) {
		case IP_PROTO_HOPOPTS:
		case IP_PROTO_ROUTING:
		case IP_PROTO_DSTOPTS:
			ofs += (ext[1] + 1u) * 8;
			break;
		case IP_PROTO_FRAGMENT:
			ofs += IPV6_FRAG_HDR_LEN;
			break;
		case IP_PROTO_AH:
			ofs += (ext[1] + 2u) * 4;
			break;
		default:
			return false;
		}
		next = ext[0];
	}
	return ofs == l4_ofs && next == IP_PROTO_TCP;
}

/* Picks the bucket; equality is decided by gro_same_flow(), so this only
 * has to spread flows, and is short: one multiply on the critical path.
 * Deliberately not util/hash.h's murmur3: over the same words that cost
 * bench_gro burst32 (trusted) 4.6 more instructions a frame on
 * vxlan_tcp4.pcap and 12.1 on flows200_vxlan_tcp4.pcap (352.4 -> 357.0,
 * 542.2 -> 554.3), and its median Mpps in the same run fell from 45.9 to
 * 44.4 and from 29.1 to 26.8 (AMD EPYC, 2026-12-02). */
static uint32_t gro_hash(const struct gro_seg *seg)
{
	uint64_t x = load32(&seg->th->src_be);

	if (seg->family == 4) {
		x ^= load64(seg->l3 + 12);
	} else {
		x ^= load64(seg->l3 + 8) ^ load64(seg->l3 + 16);
		x ^= load64(seg->l3 + 24) ^ load64(seg->l3 + 32);
	}
	if (seg->vxlan)
		x ^= (uint64_t)seg->vxlan->vni_be << 17;
	x *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(x >> 32);
}

bool gro_seg_locate(struct pkt *pkt, struct gro_seg *seg)
{
	uint16_t l2_ofs, l3_ofs, l4_ofs;

	/* Everything else is set on the way to `return true`. */
	seg->pkt = pkt;
	if (!gro_vxlan_locate(pkt, seg, &l2_ofs, &l3_ofs, &l4_ofs))
		return false;
	if (l2_ofs == PKT_OFS_NONE || l3_ofs == PKT_OFS_NONE || l4_ofs == PKT_OFS_NONE)
		return false;
	if (l3_ofs <= l2_ofs || l3_ofs - l2_ofs > GRO_MAX_L2_LEN || l4_ofs <= l3_ofs)
		return false;

	uint8_t *l3 = (uint8_t *)pkt_at(pkt, l3_ofs, IPV4_HDR_LEN);
	if (!l3)
		return false;
	seg->family = l3[0] >> 4;
	if (seg->family == 4) {
		if (((const struct ipv4_hdr *)l3)->proto != IP_PROTO_TCP)
			return false;
		seg->ip_hdr_len = (uint16_t)((l3[0] & 0xf) * 4);
		if (seg->ip_hdr_len < IPV4_HDR_LEN || l3_ofs + seg->ip_hdr_len != l4_ofs)
			return false;
	} else if (seg->family == 6) {
		if (!pkt_at(pkt, l3_ofs, IPV6_HDR_LEN))
			return false;
		uint8_t next = ((const struct ipv6_hdr *)l3)->next_hdr;
		if (!(next == IP_PROTO_TCP && l4_ofs == l3_ofs + IPV6_HDR_LEN) &&
		    !gro_ipv6_l4_is_tcp(pkt, l3_ofs + IPV6_HDR_LEN, next, l4_ofs))
			return false;
		seg->ip_hdr_len = (uint16_t)(l4_ofs - l3_ofs); /* incl. ext headers */
	} else {
		return false;
	}

	struct tcp_hdr *th = (struct tcp_hdr *)pkt_at(pkt, l4_ofs, TCP_HDR_LEN);
	if (!th)
		return false;
	seg->th_len = (uint16_t)((th->doff_res >> 4) * 4);
	if (seg->th_len < TCP_HDR_LEN || !pkt_at(pkt, l4_ofs, seg->th_len))
		return false;

	seg->l2 = pkt->data + l2_ofs;
	seg->l2_len = (uint16_t)(l3_ofs - l2_ofs);
	seg->l3 = l3;
	seg->th = th;
	seg->l3_len = pkt_len(pkt) - l3_ofs;
	seg->payload_ofs = (uint32_t)l4_ofs + seg->th_len;
	seg->payload_len = pkt_len(pkt) - seg->payload_ofs;
	seg->hash = gro_hash(seg);
	return true;
}

enum gro_pass_reason gro_ipv4_pass_reason(const uint8_t *l3, uint32_t l3_len)
{
	const struct ipv4_hdr *ip = (const struct ipv4_hdr *)l3;

	if (ip->ver_ihl != 0x45)
		return GRO_PASS_IP_OPTIONS;
	if (load_be16(&ip->frag_off_be) & (IPV4_MF | IPV4_FRAG_OFFSET_MASK))
		return GRO_PASS_IP_FRAGMENT;
	if (load_be16(&ip->tot_len_be) != l3_len)
		return GRO_PASS_LEN_MISMATCH;
	if (!gro_ipv4_hdr_csum_ok(l3))
		return GRO_PASS_IP_CSUM_BAD;
	return GRO_PASS_REASON_COUNT;
}

enum gro_pass_reason gro_ipv6_pass_reason(const uint8_t *l3, uint32_t l3_len, uint8_t want_next)
{
	const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)l3;

	if (ip6->next_hdr != want_next)
		return GRO_PASS_IPV6_EXT;
	if (load_be16(&ip6->payload_len_be) + (uint32_t)IPV6_HDR_LEN != l3_len)
		return GRO_PASS_LEN_MISMATCH;
	return GRO_PASS_REASON_COUNT;
}

bool gro_tcp_csum_ok_at(const struct pkt *pkt, const uint8_t *l3, uint8_t family, uint32_t l4_ofs)
{
	uint32_t l4_len = pkt_len(pkt) - l4_ofs;
	uint32_t sum;

	if (family == 4) {
		const struct ipv4_hdr *ip = (const struct ipv4_hdr *)l3;
		sum = csum_pseudo_ipv4(ip->src, ip->dst, IP_PROTO_TCP, l4_len);
	} else {
		const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)l3;
		sum = csum_pseudo_ipv6(ip6->src, ip6->dst, IP_PROTO_TCP, l4_len);
	}
	if (pkt->nr_frags == 0)
		sum = csum_partial(pkt->data + l4_ofs, l4_len, sum);
	else
		sum = csum_pkt(pkt, l4_ofs, l4_len, sum);
	return csum_fold(sum) == 0;
}

static bool gro_tcp_csum_ok(const struct gro_seg *seg)
{
	const struct pkt *pkt = seg->pkt;
	return gro_tcp_csum_ok_at(pkt, seg->l3, seg->family, (uint32_t)((const uint8_t *)seg->th - pkt->data));
}

/* GRO_PASS_REASON_COUNT when the segment may be held or merged. */
enum gro_pass_reason gro_seg_pass_reason(const struct gro_seg *seg)
{
	const struct pkt *pkt = seg->pkt;
	enum gro_pass_reason why;

	if (pkt->ol.gso_type != PKT_GSO_NONE || (pkt->ol.flags & PKT_OL_NEEDS_CSUM))
		return GRO_PASS_OFFLOADED;
	why = gro_vxlan_pass_reason(seg);
	if (why != GRO_PASS_REASON_COUNT)
		return why;
	if (seg->family == 4)
		why = gro_ipv4_pass_reason(seg->l3, seg->l3_len);
	else
		why = gro_ipv6_pass_reason(seg->l3, seg->l3_len, IP_PROTO_TCP);
	if (why != GRO_PASS_REASON_COUNT)
		return why;
	if (seg->payload_len == 0)
		return GRO_PASS_PURE_ACK;
	if (!(pkt->ol.flags & PKT_OL_DATA_VALID) && !gro_tcp_csum_ok(seg))
		return GRO_PASS_CSUM_BAD;
	return GRO_PASS_REASON_COUNT;
}

bool gro_same_flow(const struct gro_seg *a, const struct gro_seg *b)
{
	if (a->hash != b->hash || a->family != b->family || a->l2_len != b->l2_len ||
	    a->pkt->in_port != b->pkt->in_port)
		return false;
	if (load32(&a->th->src_be) != load32(&b->th->src_be))
		return false;
	if (a->family == 4) {
		if (!bytes_equal(a->l3 + 12, b->l3 + 12, 8))
			return false;
	} else {
		if (!bytes_equal(a->l3 + 8, b->l3 + 8, 32) ||
		    ((load_be32(a->l3) ^ load_be32(b->l3)) & GRO_IPV6_FLOW_MASK) != 0)
			return false;
	}
	if (!bytes_equal(a->l2, b->l2, a->l2_len))
		return false;
	return gro_same_tunnel(a, b);
}

/* inet_gro_flush / ipv6_gro_flush for one IP header (inner or outer).
 * `fixed_bit` is this header's GRO_FIXEDID_* bit in flow->fixed_id. */
enum gro_flush_reason gro_ip_flush(struct gro_flow *flow, const uint8_t *held, const uint8_t *seg,
				   uint8_t family, uint8_t fixed_bit)
{
	if (family == 6) {
		const struct ipv6_hdr *h = (const struct ipv6_hdr *)held, *s = (const struct ipv6_hdr *)seg;
		if (h->hop_limit != s->hop_limit ||
		    ((load_be32(&h->ver_tc_flow_be) ^ load_be32(&s->ver_tc_flow_be)) & 0x0ff00000u))
			return GRO_FLUSH_IP_FIELDS;
		return GRO_FLUSH_REASON_COUNT;
	}
	const struct ipv4_hdr *h = (const struct ipv4_hdr *)held, *s = (const struct ipv4_hdr *)seg;
	if (h->ttl != s->ttl || h->tos != s->tos ||
	    ((h->frag_off_be ^ s->frag_off_be) & __builtin_bswap16(IPV4_DF)))
		return GRO_FLUSH_IP_FIELDS;
	/* Mainline rule: the second segment decides whether the run keeps a
	 * fixed ID or increments it; from then on it must stay that way. */
	uint16_t id_offset = (uint16_t)(load_be16(&s->id_be) - load_be16(&h->id_be));
	if (flow->count == 1 && id_offset == 0)
		flow->fixed_id |= fixed_bit;
	uint16_t want = (flow->fixed_id & fixed_bit) ? 0 : flow->count;
	if (id_offset != want)
		return GRO_FLUSH_IP_ID;
	return GRO_FLUSH_REASON_COUNT;
}

static uint32_t gro_seg_nr_frags(const struct gro_seg *seg)
{
	return (seg->payload_ofs < seg->pkt->size) + seg->pkt->nr_frags;
}

/* GRO_FLUSH_REASON_COUNT when `seg` can be appended to `flow`; otherwise
 * why the held run must be completed first. */
enum gro_flush_reason gro_merge_check(const struct gro_table *table, struct gro_flow *flow,
				      const struct gro_seg *seg)
{
	const struct gro_seg *held = &flow->head;
	const struct tcp_hdr *th = seg->th, *th2 = held->th;
	enum gro_flush_reason why;

	if (th->flags & TCP_CWR)
		return GRO_FLUSH_FLAGS;
	if ((th->flags ^ th2->flags) & (uint8_t)~GRO_TCP_FLAGS_MAY_DIFFER)
		return GRO_FLUSH_FLAGS_CHANGED;
	if (th->ack_be != th2->ack_be)
		return GRO_FLUSH_ACK_CHANGED;
	/* Linux compares the whole flag word (doff, flags, window), so a
	 * window update ends the run too. */
	if (th->window_be != th2->window_be)
		return GRO_FLUSH_WINDOW_CHANGED;
	/* Data offset, NS bit and every option byte (a TSval tick too). */
	if (th->doff_res != th2->doff_res ||
	    !bytes_equal((const uint8_t *)th + TCP_HDR_LEN, (const uint8_t *)th2 + TCP_HDR_LEN,
			 seg->th_len - TCP_HDR_LEN))
		return GRO_FLUSH_OPTIONS_CHANGED;
	if (seg->outer_l3) {
		why = gro_ip_flush(flow, held->outer_l3, seg->outer_l3, seg->outer_family, GRO_FIXEDID_OUTER);
		if (why != GRO_FLUSH_REASON_COUNT)
			return why;
	}
	why = gro_ip_flush(flow, held->l3, seg->l3, seg->family, GRO_FIXEDID_INNER);
	if (why != GRO_FLUSH_REASON_COUNT)
		return why;
	if (seg->payload_len > flow->mss)
		return GRO_FLUSH_OVERSIZED_SEGMENT;
	if (load_be32(&th->seq_be) != flow->next_seq)
		return GRO_FLUSH_SEQ_GAP;
	if (flow->l3_len + seg->payload_len >= table->max_size)
		return GRO_FLUSH_SIZE_CAP;
	if (flow->head.pkt->nr_frags + gro_seg_nr_frags(seg) > PKT_MAX_FRAGS)
		return GRO_FLUSH_FRAGS_FULL;
	return GRO_FLUSH_REASON_COUNT;
}

/* Appends the segment's payload to the run as frags owned by the segment. */
void gro_merge(struct gro_flow *flow, const struct gro_seg *seg)
{
	struct pkt *head = flow->head.pkt, *pkt = seg->pkt;

	if (seg->payload_ofs < pkt->size)
		pkt_add_frag(head, pkt->data + seg->payload_ofs, pkt->size - seg->payload_ofs, pkt);
	for (uint16_t i = 0; i < pkt->nr_frags; i++)
		pkt_add_frag(head, pkt->frags[i].data, pkt->frags[i].size, pkt->frags[i].owner);
	flow->head.th->flags |= seg->th->flags & (TCP_FIN | TCP_PSH);
	flow->merged_flags |= seg->th->flags & (TCP_FIN | TCP_PSH);
	flow->next_seq += seg->payload_len;
	flow->l3_len += seg->payload_len;
	flow->count++;
	pkt_free(pkt); /* the frags hold what is still needed */
	/* The slow path may have decided a fixed ID: the fast path follows. */
	if (flow->fast)
		gro_expect_next(flow);
}

void gro_tcp_finish_merged(const struct gro_flow *flow, struct pkt *pkt)
{
	const struct gro_seg *head = &flow->head;
	uint32_t l4_len = flow->l3_len - head->ip_hdr_len;
	uint32_t pseudo;

	if (head->family == 4) {
		struct ipv4_hdr *ip = (struct ipv4_hdr *)head->l3;
		store_be16(&ip->tot_len_be, (uint16_t)flow->l3_len);
		gro_ipv4_hdr_csum_set(head->l3);
		pseudo = csum_pseudo_ipv4(ip->src, ip->dst, IP_PROTO_TCP, l4_len);
	} else {
		struct ipv6_hdr *ip6 = (struct ipv6_hdr *)head->l3;
		store_be16(&ip6->payload_len_be, (uint16_t)(flow->l3_len - IPV6_HDR_LEN));
		pseudo = csum_pseudo_ipv6(ip6->src, ip6->dst, IP_PROTO_TCP, l4_len);
	}
	uint16_t partial = csum_fold_nocomplement(pseudo);
	memcpy(&head->th->csum, &partial, sizeof(partial));

	uint16_t l4_ofs = (uint16_t)((uint8_t *)head->th - pkt->data);
	pkt->ol.flags = PKT_OL_NEEDS_CSUM;
	pkt->ol.gso_type = (uint8_t)((head->family == 4 ? PKT_GSO_TCPV4 : PKT_GSO_TCPV6) |
				     (flow->ecn ? PKT_GSO_ECN : 0));
	pkt->ol.gso_size = flow->mss;
	pkt->ol.hdr_len = (uint16_t)(l4_ofs + head->th_len);
	pkt->ol.csum_start = l4_ofs;
	pkt->ol.csum_offset = TCP_CSUM_OFFSET;
}

bool gro_mark_big_tcp(struct pkt *pkt, uint32_t mtu)
{
	if (pkt->ol.gso_type != PKT_GSO_NONE || !(pkt->ol.flags & PKT_OL_DATA_VALID) ||
	    pkt->l3_ofs == PKT_OFS_NONE || pkt->l4_ofs == PKT_OFS_NONE)
		return false;
	uint32_t l3_len = pkt_len(pkt) - pkt->l3_ofs;
	const uint8_t *l3 = pkt_at(pkt, pkt->l3_ofs, IPV6_HDR_LEN);
	if (l3_len <= mtu || !l3)
		return false;
	uint32_t ip_hdr_len = pkt->l4_ofs - pkt->l3_ofs;
	uint32_t pseudo;
	uint8_t family = l3[0] >> 4;
	if (family == 4) {
		const struct ipv4_hdr *ip = (const struct ipv4_hdr *)l3;
		if (ip->proto != IP_PROTO_TCP || ip_hdr_len != IPV4_HDR_LEN || (ip->ver_ihl & 0xf) != 5 ||
		    (load_be16(&ip->frag_off_be) & (IPV4_MF | IPV4_FRAG_OFFSET_MASK)) ||
		    load_be16(&ip->tot_len_be) != l3_len)
			return false;
		pseudo = csum_pseudo_ipv4(ip->src, ip->dst, IP_PROTO_TCP, l3_len - ip_hdr_len);
	} else if (family == 6) {
		const struct ipv6_hdr *ip6 = (const struct ipv6_hdr *)l3;
		if (ip6->next_hdr != IP_PROTO_TCP || ip_hdr_len != IPV6_HDR_LEN ||
		    (uint32_t)load_be16(&ip6->payload_len_be) + IPV6_HDR_LEN != l3_len)
			return false;
		pseudo = csum_pseudo_ipv6(ip6->src, ip6->dst, IP_PROTO_TCP, l3_len - ip_hdr_len);
	} else {
		return false;
	}
	struct tcp_hdr *th = (struct tcp_hdr *)(uintptr_t)pkt_at(pkt, pkt->l4_ofs, TCP_HDR_LEN);
	if (!th)
		return false;
	uint32_t th_len = (uint32_t)(th->doff_res >> 4) * 4;
	if (th_len < TCP_HDR_LEN || !pkt_at(pkt, pkt->l4_ofs, th_len) || ip_hdr_len + th_len >= mtu ||
	    l3_len - ip_hdr_len <= th_len)
		return false;
	uint16_t seed = csum_fold_nocomplement(pseudo);
	memcpy(&th->csum, &seed, sizeof(seed));
	pkt->ol.flags = PKT_OL_NEEDS_CSUM;
	pkt->ol.gso_type = (uint8_t)((family == 4 ? PKT_GSO_TCPV4 : PKT_GSO_TCPV6) |
				     ((th->flags & TCP_CWR) ? PKT_GSO_ECN : 0));
	pkt->ol.gso_size = (uint16_t)(mtu - ip_hdr_len - th_len);
	pkt->ol.hdr_len = (uint16_t)(pkt->l4_ofs + th_len);
	pkt->ol.csum_start = pkt->l4_ofs;
	pkt->ol.csum_offset = TCP_CSUM_OFFSET;
	return true;
}
