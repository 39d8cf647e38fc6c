/* vnet_hdr_validate: virtio_net_hdr fields cross-checked against a parse.
 * See vnet_hdr_check.h.
 *
 * The rules follow the kernel's __virtio_net_hdr_to_skb() and the fixes
 * that hardened it (docs/reference/reliability-anchors.md section 2):
 * every field is cross-checked against a real parse of the frame, one
 * commented check at a time, each failure with its own drop reason.  The
 * valid corners the over-strict kernel fixes broke are kept legal: a GSO
 * frame whose payload fits in one segment (payload <= gso_size) and a short
 * last segment. */
#include "parse/vnet_hdr_check.h"

#include <stdbool.h>

#include "packet/hdr.h"
#include "packet/vnet_hdr.h"
#include "parse/flow.h"
#include "parse/flow_extract.h"

enum vnet_ip_limits {
	/* IPv4 total length and IPv6 payload length are 16-bit fields. */
	VNET_IP_LEN_MAX = 65535,
};

static bool gso_base_is_known(uint8_t base)
{
	return base == PKT_GSO_NONE || base == PKT_GSO_TCPV4 || base == PKT_GSO_TCPV6 ||
	       base == PKT_GSO_UDP_L4;
}

/* Does the parsed frame carry what `base` says it does? */
static bool gso_matches_parse(uint8_t base, const struct pkt *pkt, const struct flow_key *key)
{
	/* Nothing to segment without an L4 header and payload offset, and a
	 * fragment is never segmented. */
	if (pkt_innermost_l4(pkt) == PKT_OFS_NONE || pkt_innermost_payload(pkt) == PKT_OFS_NONE ||
	    key->nw_frag != FLOW_FRAG_NONE)
		return false;
	switch (base) {
	case PKT_GSO_TCPV4:
		return key->nw_family == 4 && key->nw_proto == IP_PROTO_TCP;
	case PKT_GSO_TCPV6:
		return key->nw_family == 6 && key->nw_proto == IP_PROTO_TCP;
	case PKT_GSO_UDP_L4:
		return (key->nw_family == 4 || key->nw_family == 6) && key->nw_proto == IP_PROTO_UDP;
	default:
		return false;
	}
}

/* The largest gso_size whose segments still fit the IP length field: each
 * segment repeats the L3 (with IPv6 extension headers) and L4 headers. */
static uint32_t gso_size_max(const struct pkt *pkt, const struct flow_key *key)
{
	uint32_t hdrs = (uint32_t)pkt_innermost_payload(pkt) - pkt_innermost_l3(pkt);
	if (key->nw_family == 6)
		hdrs -= IPV6_HDR_LEN; /* payload length excludes the fixed header */
	return hdrs < VNET_IP_LEN_MAX ? VNET_IP_LEN_MAX - hdrs : 0;
}

static enum drop_reason validate_gso(const struct pkt *pkt, const struct flow_key *key, uint8_t base)
{
	const struct pkt_offload *ol = &pkt->ol;

	/* The kernel leaves checksums of GSO segments to the partial-checksum
	 * machinery; a GSO frame without NEEDS_CSUM is what syzkaller used to
	 * crash it (d5be7f632bad). */
	if (!(ol->flags & PKT_OL_NEEDS_CSUM))
		return DROP_VNET_HDR_GSO_WITHOUT_CSUM;

	/* gso_type must describe the frame we parsed, not what the sender
	 * claims (TCPV4 over IPv6 or over UDP crashed GSO). */
	if (!gso_matches_parse(base, pkt, key))
		return DROP_VNET_HDR_GSO_MISMATCH;

	/* gso_size 0 cannot segment; one that makes a segment overflow the IP
	 * length (0xffff always does) cannot be emitted.  A gso_size larger
	 * than the payload is legal: the frame needs no segmentation. */
	if (ol->gso_size == 0 || ol->gso_size > gso_size_max(pkt, key))
		return DROP_VNET_HDR_GSO_SIZE;

	/* A GSO frame carries payload; headers alone are nothing to segment. */
	uint32_t payload_ofs = pkt_innermost_payload(pkt);
	uint32_t frame_len = pkt_len(pkt);
	if (frame_len <= payload_ofs)
		return DROP_VNET_HDR_GSO_SIZE;

	/* UDP_L4: the kernel refuses more than UDP_MAX_SEGMENTS datagrams. */
	uint32_t payload = frame_len - payload_ofs;
	if (base == PKT_GSO_UDP_L4 && payload > (uint32_t)ol->gso_size * VNET_UDP_MAX_SEGMENTS)
		return DROP_VNET_HDR_TOO_MANY_SEGMENTS;

	return DROP_NONE;
}

static enum drop_reason validate_csum(const struct pkt *pkt, const struct flow_key *key)
{
	const struct pkt_offload *ol = &pkt->ol;
	uint32_t frame_len = pkt_len(pkt);

	/* The checksum must start inside the frame... */
	if (ol->csum_start >= frame_len)
		return DROP_VNET_HDR_CSUM_START;

	/* ...at the L4 header we parsed (the kernel once trusted csum_start
	 * 199 with csum_offset 1536 on a TSO frame, 89add40066f9).  Only TCP
	 * and UDP checksums are offloaded through a TAP, and never on a
	 * fragment, whose L4 checksum covers bytes that are not here. */
	uint16_t l4 = pkt_innermost_l4(pkt);
	bool tcp = key->nw_proto == IP_PROTO_TCP, udp = key->nw_proto == IP_PROTO_UDP;
	if (l4 == PKT_OFS_NONE || !(tcp || udp) || key->nw_frag != FLOW_FRAG_NONE ||
	    ol->csum_start != l4)
		return DROP_VNET_HDR_CSUM_START;

	/* The offset is fixed by the protocol... */
	if (ol->csum_offset != (tcp ? TCP_CSUM_OFFSET : UDP_CSUM_OFFSET))
		return DROP_VNET_HDR_CSUM_OFFSET;

	/* ...and the field must be readable where csum_complete_partial()
	 * writes it: in the linear part.  flow_extract() guarantees this for
	 * the headers it accepted; the check keeps this function safe on its
	 * own. */
	if ((uint32_t)ol->csum_start + ol->csum_offset + sizeof(uint16_t) > pkt->size)
		return DROP_VNET_HDR_CSUM_OFFSET;

	return DROP_NONE;
}

enum drop_reason vnet_hdr_validate(const struct pkt *pkt, const struct flow_key *key)
{
	const struct pkt_offload *ol = &pkt->ol;
	uint8_t base = ol->gso_type & (uint8_t)~PKT_GSO_ECN;
	bool ecn = ol->gso_type & PKT_GSO_ECN;
	enum drop_reason reason;

	/* UFO (PKT_GSO_UDP) is not supported: TUNSETOFFLOAD never offers it to
	 * us, so a frame claiming it is from a confused sender. */
	if (!gso_base_is_known(base))
		return DROP_VNET_HDR_BAD_GSO_TYPE;

	/* ECN (CWR seen in a TSO frame) only means something for TCP GSO. */
	if (ecn && base != PKT_GSO_TCPV4 && base != PKT_GSO_TCPV6)
		return DROP_VNET_HDR_ECN;

	if (base != PKT_GSO_NONE) {
		reason = validate_gso(pkt, key, base);
		if (reason != DROP_NONE)
			return reason;
	}

	/* hdr_len is only a hint (recomputed from the parse), but one past the
	 * end of the frame is a lie.  Equal to the frame length is legal, as
	 * in tun_get_user() ("hdr_len > iov_iter_count(from)" is EINVAL): the
	 * kernel's read side sets it to skb_headlen(), which is the whole
	 * frame when the skb is linear. */
	if (ol->hdr_len > pkt_len(pkt))
		return DROP_VNET_HDR_HDR_LEN;

	if (ol->flags & PKT_OL_NEEDS_CSUM) {
		reason = validate_csum(pkt, key);
		if (reason != DROP_NONE)
			return reason;
	}
	return DROP_NONE;
}

void vnet_hdr_recompute_hdr_len(struct pkt *pkt)
{
	uint16_t payload = pkt_innermost_payload(pkt);
	pkt->ol.hdr_len = payload == PKT_OFS_NONE ? 0 : payload;
}
