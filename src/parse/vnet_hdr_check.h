/* vnet_hdr_check: may the offload metadata a TAP sent (pkt->ol, read by
 * vnet_hdr_read()) be trusted for this frame?
 *
 * Why here and not in packet/: the check compares every field with what
 * flow_extract() found in the frame (struct flow_key and the pkt offsets),
 * so it depends on the parse; packet/ stays below parse/ and knows only the
 * header bytes (packet/vnet_hdr.h).
 *
 * Order in the tap receive path:
 *   vnet_hdr_read -> flow_extract -> vnet_hdr_validate -> (drop or)
 *   vnet_hdr_recompute_hdr_len -> forwarding, GSO.
 * GSO and the tap writer rely on what a DROP_NONE verdict promises (below);
 * nothing downstream re-checks it.
 *
 * Pure functions over the pkt and the key: no globals, any thread. */
#ifndef VX_PARSE_VNET_HDR_CHECK_H
#define VX_PARSE_VNET_HDR_CHECK_H

#include "packet/drop_reason.h"
#include "packet/pkt.h"

struct flow_key;

/* Validates pkt->ol against the frame as parsed by flow_extract() into `key`
 * (pkt offsets set).  Checks, each with its own reason:
 *  - gso_type known (NONE, TCPV4, TCPV6, UDP_L4, optionally | ECN);
 *  - it matches the parsed protocol (TCPV4 on IPv4/TCP, TCPV6 on IPv6/TCP,
 *    UDP_L4 on UDP; innermost headers when the frame is VXLAN);
 *  - gso_size > 0 with GSO, and not larger than the frame allows;
 *  - GSO requires NEEDS_CSUM; UDP_L4 at most VNET_UDP_MAX_SEGMENTS segments;
 *  - csum_start equals the L4 offset and csum_offset is 16 (TCP) / 6 (UDP)
 *    when NEEDS_CSUM; the field lies inside the frame;
 *  - hdr_len, when non-zero, inside the frame;
 *  - ECN only with TCP.
 * Valid corners pass: payload <= gso_size (a tiny GSO frame) is legal and
 * simply needs no segmentation.  Returns DROP_NONE if valid. */
enum drop_reason vnet_hdr_validate(const struct pkt *pkt, const struct flow_key *key);

/* Fills pkt->ol.hdr_len from the parsed offsets (L2..end of innermost L4
 * header) so nothing downstream relies on the sender's hint. */
void vnet_hdr_recompute_hdr_len(struct pkt *pkt);

#endif
