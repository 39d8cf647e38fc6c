/* Receive checksum check: what a NIC's rx checksum offload does, for the
 * inner frames of VXLAN datagrams that nobody has vouched for yet.
 *
 * A datagram the kernel's UDP GRO coalesced carries a verified outer UDP
 * checksum that covers the whole inner frame (pkt ol.flags DATA_VALID): it
 * needs nothing more.  Every other inner TCP or UDP frame is checked here
 * once, so that GRO and the VM behind the tap need not check it again.
 *
 * Unfinished checksums.  A sender that leaves its L4 checksum to the NIC
 * (CHECKSUM_PARTIAL) puts the folded pseudo-header sum in the checksum field.
 * On a real wire the NIC has finished it; across a veth nobody does, so a
 * Linux vxlan device behind a veth with tx checksum offload on sends inner
 * TCP and UDP checksums that are still that seed.  The kernel trusts such a
 * packet (CHECKSUM_PARTIAL is "already checked"); a VM behind our tap would
 * see a wrong checksum and drop it, so the connection never starts.  With
 * `finish` set, a checksum field that holds exactly the seed is finished
 * here as the NIC would have done (RX_CSUM_FINISHED).  A corrupted packet
 * gets through this way only if its damage also left the field equal to
 * the seed of its own pseudo-header: 1 in 65536 of the packets that already
 * got past the outer checksum.
 *
 * Pure function over the pkt: no I/O, no globals. */
#ifndef VX_OFFLOAD_RX_CSUM_H
#define VX_OFFLOAD_RX_CSUM_H

#include <stdbool.h>
#include <stdint.h>

#include "packet/pkt.h"

enum rx_csum_verdict {
	RX_CSUM_NOT_CHECKED, /* not TCP/UDP, a fragment, IPv4 UDP without checksum,
			      * or IPv6 with extension headers (left to the VM) */
	RX_CSUM_GOOD,
	RX_CSUM_FINISHED,    /* was the sender's unfinished seed; now the right checksum */
	RX_CSUM_UNFINISHED,  /* the seed, left as it is (finish == false) */
	RX_CSUM_BAD,
};

/* Checks the L4 checksum of the IPv4/IPv6 packet whose header starts at
 * l3_ofs and whose `proto` (IP_PROTO_TCP or IP_PROTO_UDP) header starts at
 * l4_ofs; the L4 length is taken from the IP header and must lie within the
 * frame (else RX_CSUM_BAD).  The checksum field must be in the linear part
 * for RX_CSUM_FINISHED (a seed outside it is reported RX_CSUM_UNFINISHED). */
enum rx_csum_verdict rx_csum_check(struct pkt *pkt, uint32_t l3_ofs, uint32_t l4_ofs, uint8_t proto, bool finish);

#endif
