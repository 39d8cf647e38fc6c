/* virtio_net_hdr: the offload metadata a TAP with IFF_VNET_HDR puts before
 * every frame (struct virtio_net_hdr, 10 bytes) or, with TUNSETVNETHDRSZ 12,
 * struct virtio_net_hdr_v1 / _mrg_rxbuf (adds num_buffers).
 *
 * This module is only the header bytes: their layout and byte order.
 * Reading only copies fields into struct pkt_offload; nothing may trust them
 * until vnet_hdr_validate() (parse/vnet_hdr_check.h) has cross-checked them
 * against the parsed frame (the class of kernel and DPDK bugs in
 * docs/reference/reliability-anchors.md: gso_type not matching L4,
 * gso_size beyond payload, csum_start outside the frame).  That check needs
 * a struct flow_key, and packet/ is below parse/ in the layering (packet/
 * includes nothing from parse/, offload/, switch/ or port/), so it lives in
 * parse/.  hdr_len is only a hint: callers recompute it from the parse
 * (vnet_hdr_recompute_hdr_len(), also in parse/vnet_hdr_check.h). */
#ifndef VX_PACKET_VNET_HDR_H
#define VX_PACKET_VNET_HDR_H

#include <stddef.h>
#include <stdint.h>

#include "packet/drop_reason.h"
#include "packet/pkt.h"

enum vnet_hdr_constants {
	VNET_HDR_LEN = 10,     /* struct virtio_net_hdr */
	VNET_HDR_V1_LEN = 12,  /* struct virtio_net_hdr_v1 (num_buffers) */
	/* Kernel's UDP_MAX_SEGMENTS on current kernels: the most datagrams
	 * one UDP_L4 GSO frame may be cut into (vnet_hdr_validate checks it). */
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

#endif
