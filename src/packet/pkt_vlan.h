/* pkt_vlan: the outer 802.1Q/802.1ad tag of a frame, pushed, popped or
 * rewritten in place (flower's vlan action, dp/user/dp_rules.c).
 *
 * The Ethernet header is in the linear part (every parsed frame's is), so
 * editing it is allowed even while clones share the frame's payload
 * (pkt_clone(): the linear part is each frame's own).  The header offsets
 * keep pointing at the same headers (l2_ofs stays at the frame start), and
 * so does the offload metadata: csum_start and hdr_len move with the
 * bytes after the tag, as the kernel's skb_vlan_push/pop do, so a TSO
 * frame stays one (GSO and the taps segment it with the tag).
 *
 * Pure functions over a pkt: no I/O, no allocation. */
#ifndef VX_PACKET_PKT_VLAN_H
#define VX_PACKET_PKT_VLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "packet/pkt.h"

enum { PKT_VLAN_TAG_LEN = 4 };

/* Whether the frame's ethertype at byte 12 is 802.1Q or 802.1ad. */
bool pkt_vlan_tagged(const struct pkt *pkt);
/* Inserts tpid/tci after the MACs.  0, -ENOSPC without 4 bytes of headroom,
 * -EINVAL for a frame shorter than its MACs and ethertype. */
int pkt_vlan_push(struct pkt *pkt, uint16_t tpid, uint16_t tci);
/* Removes the outer tag.  0; -ENOENT when the frame has none (unchanged). */
int pkt_vlan_pop(struct pkt *pkt);
/* The outer tag's VID becomes vid, and its PCP pcp when set_pcp.
 * 0; -ENOENT when the frame has no tag (unchanged). */
int pkt_vlan_modify(struct pkt *pkt, uint16_t vid, uint8_t pcp, bool set_pcp);

#endif /* VX_PACKET_PKT_VLAN_H */
