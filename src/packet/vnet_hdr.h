/* virtio_net_hdr: the offload metadata a TAP with IFF_VNET_HDR puts before
 * every frame (struct virtio_net_hdr, 10 bytes) or, with TUNSETVNETHDRSZ 12,
 * struct virtio_net_hdr_v1 / _mrg_rxbuf (adds num_buffers).
 *
 * Reading only copies fields into struct pkt_offload; nothing may trust them
 * until vnet_hdr_validate() has cross-checked them against the parsed frame
 * (the class of kernel and DPDK bugs in shared/reference/reliability-anchors.md:
 * gso_type not matching L4, gso_size beyond payload, csum_start outside the
 * frame).  hdr_len is only a hint: callers recompute it from the parse. */
#ifndef VX_PACKET_VNET_HDR_H
#define VX_PACKET_VNET_HDR_H

#include <stddef.h>
#include <stdint.h>

#include "packet/drop_reason.h"
#include "packet/pkt.h"

struct flow_key;

enum vnet_hdr_constants {
	VNET_HDR_LEN = 10,     /* struct virtio_net_hdr */
	VNET_HDR_V1_LEN = 12,  /* struct virtio_net_hdr_v1 (num_buffers) */
	/* Kernel's UDP_MAX_SEGMENTS on current kernels. */
	VNET_UDP_MAX_SEGMENTS = 128,
};

/* Reads a header of `hdr_size` bytes (VNET_HDR_LEN or VNET_HDR_V1_LEN) at
 * `buf` into `out`.  Multi-byte fields are little-endian (virtio 1.0, and what
 * tun uses on little-endian hosts and with TUNSETVNETLE).  Returns
 * DROP_VNET_HDR_TRUNCATED if `len` < hdr_size, DROP_NONE otherwise. */
enum drop_reason vnet_hdr_read(const uint8_t *buf, size_t len, size_t hdr_size,
			       struct pkt_offload *out);

/* Writes `ol` as a header of `hdr_size` bytes at `buf` (num_buffers = 1 for
 * the v1 layout). */
void vnet_hdr_write(const struct pkt_offload *ol, uint8_t *buf, size_t hdr_size);

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
