/* flow_extract: parse a frame once, fill a struct flow_key and the layer
 * offsets of the struct pkt.
 *
 * Rules every path obeys:
 *  - A malformed frame yields exactly one named drop reason and is never
 *    half-parsed into the key (on failure the key is not meaningful and the
 *    caller drops the frame).  Nothing is read outside pkt's linear part:
 *    headers must be linear (else truncated_*); lengths claimed by headers
 *    are checked against the whole frame, frags included.
 *  - Ethernet padding past the IP total length / IPv6 payload length is
 *    trimmed from the pkt (pkt_trim) and never taken as payload
 *    (the class of CVE-2020-35498).  The same holds for the inner frame of
 *    VXLAN, and bytes after the outer UDP datagram are trimmed too; the
 *    outer IP/UDP length fields then describe more bytes than the pkt holds,
 *    which is harmless because decapsulation discards them.
 *  - Unusual but legal values parse to a correct key: IP protocol 0 on IPv4,
 *    unknown IP protocols (l4_ofs set, payload_ofs absent), unknown
 *    ethertypes (key holds dl_type only, l3_ofs absent), 802.3 length frames
 *    (dl_type FLOW_DL_TYPE_NONE), IPv4 fragments (nw_frag set, no L4 for
 *    later fragments), IPv6 fragment headers (CVE-2023-1668 class).  A first
 *    fragment must hold its whole L4 header (RFC 1858, RFC 7112); its UDP
 *    length may exceed the fragment when more fragments follow (users bound
 *    UDP payload by the IP end, i.e. pkt_len()).  ICMP counts only over IPv4 and ICMPv6
 *    only over IPv6 (tp_src = type, tp_dst = code).  The IPv4 header
 *    checksum is not verified here (GRO and the ports decide).
 *  - IPv6 extension headers: hop-by-hop (first only, else
 *    DROP_IPV6_EXT_CHAIN), routing, destination options, fragment and AH
 *    are walked, at most FLOW_IPV6_MAX_EXT_HDRS; a longer chain is
 *    DROP_IPV6_EXT_CHAIN.  Option TLVs that overrun their header are
 *    DROP_IPV6_BAD_OPTIONS.  A hop-by-hop jumbo payload option, or payload
 *    length 0 followed by hop-by-hop (RFC 2675), is refused as
 *    DROP_IPV6_JUMBO: we never carry jumbograms.
 *  - VXLAN: a UDP datagram to `vxlan_port` (host order, 0 = never decap),
 *    not a fragment, is parsed as RFC 7348 VXLAN: the I flag must be set
 *    (DROP_VXLAN_NO_VNI_FLAG), all reserved bits zero
 *    (DROP_VXLAN_RESERVED_BITS, as the kernel's vxlan does), then the inner
 *    frame is parsed the same way (no nested decap); an inner failure
 *    returns the inner layer's reason.  The outer payload_ofs equals
 *    tunnel_ofs.
 *  - MPLS (0x8847, 0x8848): the label stack is read into the key as the
 *    kernel's flow dissector reads it for cls_flower: up to FLOW_MPLS_MAX
 *    entries, to the bottom of stack; a stack cut short by the end of the
 *    frame keeps the entries read and is not a drop (the kernel classifies
 *    with what it dissected; a switch forwards what it does not route);
 *    nothing after the stack is parsed (no L3 offset).  RARP (0x8035) is
 *    parsed as ARP, whose format it has.
 *  - Offsets: payload_ofs is the first byte after the TCP/UDP/ICMP header;
 *    all offsets not set by a parse are PKT_OFS_NONE.
 *
 * Pure: no I/O, no globals. */
#ifndef VX_PARSE_FLOW_EXTRACT_H
#define VX_PARSE_FLOW_EXTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "packet/drop_reason.h"
#include "packet/pkt.h"
#include "parse/flow.h"

enum flow_extract_limits {
	FLOW_IPV6_MAX_EXT_HDRS = 8,
};

/* Parses the frame starting at pkt->data (an Ethernet header).  Sets pkt's
 * l2/l3/l4/payload offsets and, for VXLAN, tunnel_ofs, inner_* offsets and
 * pkt->tunnel (pkt->tunnel.family is 0 for a frame that is not VXLAN).  The
 * key is zeroed first except key->in_port, which is taken from pkt->in_port. */
enum drop_reason flow_extract(struct pkt *pkt, uint16_t vxlan_port, struct flow_key *key);

/* Parses a frame that starts at a VXLAN header, as read from a UDP socket:
 * pkt->tunnel (family, addresses, ports) must already be filled in by the
 * port; it is copied into the key's tunnel section with the VNI.  Sets
 * tunnel_ofs = 0 and the inner_* offsets; outer l2..l4 are absent.  The
 * outer TOS and TTL come from pkt->tunnel too (the port read them as
 * cmsgs; 0 when it could not). */
enum drop_reason flow_extract_vxlan(struct pkt *pkt, struct flow_key *key);

/* Parses TCP options (the bytes after the fixed 20-byte header).  Returns
 * false for a malformed option list (length byte < 2 or past the end, bad
 * length for MSS/WSCALE/TIMESTAMP). */
bool tcp_opts_parse(const uint8_t *opts, size_t len, struct tcp_opts *out);

/* The innermost L3/L4/payload offsets: inner_* when tunnelled (even when
 * absent there: an inner frame of unknown type has no L3, whatever the outer
 * has), else outer. */
static inline uint16_t pkt_innermost_l3(const struct pkt *pkt)
{
	return pkt->tunnel_ofs != PKT_OFS_NONE ? pkt->inner_l3_ofs : pkt->l3_ofs;
}
static inline uint16_t pkt_innermost_l4(const struct pkt *pkt)
{
	return pkt->tunnel_ofs != PKT_OFS_NONE ? pkt->inner_l4_ofs : pkt->l4_ofs;
}
static inline uint16_t pkt_innermost_payload(const struct pkt *pkt)
{
	return pkt->tunnel_ofs != PKT_OFS_NONE ? pkt->inner_payload_ofs : pkt->payload_ofs;
}

#endif
