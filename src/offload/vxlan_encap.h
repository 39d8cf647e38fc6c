/* VXLAN encapsulation (RFC 7348): the outer Ethernet / IPv4 or IPv6 / UDP /
 * VXLAN headers put in front of an inner frame.
 *
 * Two output shapes exist and both are built from here:
 *  - a full frame (outer Ethernet onwards), for pcap, AF_PACKET and tests:
 *    vxlan_encap_write() / vxlan_encap_pkt();
 *  - a UDP payload (VXLAN header onwards), for a UDP socket, where the kernel
 *    adds outer IP and UDP itself: vxlan_hdr_write().
 *
 * Outer UDP source port: a hash of the inner flow scaled into
 * [src_port_min, src_port_max] as the kernel's udp_flow_src_port() does, so
 * every segment of one inner flow takes the same underlay path (ECMP, RSS)
 * and lands on the same receive queue.  The same hash gives the outer IPv6
 * flow label.
 *
 * Outer UDP checksum: computed (non-zero) by default.  The kernel refuses
 * UDP_SEGMENT on SO_NO_CHECK sockets and its UDP GRO never merges
 * zero-checksum datagrams, so a zero checksum would cost the receiver its
 * GRO.  `udp_zero_csum` keeps RFC 7348's IPv4 option; it is refused for IPv6
 * (RFC 6935/6936 need an explicit opt-in at both ends).
 *
 * These fields shape the full frames built here.  On the UDP socket path
 * the kernel writes outer IP and UDP, and a vxlan port's `udpcsum`, `df`
 * and `srcport` are socket settings instead (SO_NO_CHECK, IP_MTU_DISCOVER,
 * one send socket per source port; see port/vxlan.h); that path uses
 * vxlan_flow_hash() and vxlan_src_port() to pick the send socket.
 *
 * Pure functions over buffers: no I/O, no globals. */
#ifndef VX_OFFLOAD_VXLAN_ENCAP_H
#define VX_OFFLOAD_VXLAN_ENCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "packet/hdr.h"
#include "packet/pkt.h"

enum vxlan_encap_defaults {
	VXLAN_SRC_PORT_MIN_DEFAULT = 49152, /* RFC 7348 section 5 */
	VXLAN_SRC_PORT_MAX_DEFAULT = 65535,
	VXLAN_ENCAP_DEFAULT_TTL = 64,
};

/* One tunnel's outer headers.  Addresses are raw network-order bytes (IPv4
 * in the first 4 bytes); ports host order.  Zero fields take the defaults
 * noted, so a zero-initialised struct plus addresses, MACs and VNI is a
 * working configuration. */
struct vxlan_encap {
	uint32_t vni;            /* <= VXLAN_VNI_MAX */
	uint8_t family;          /* outer IP version: 4 or 6 */
	uint8_t tos;             /* outer TOS / traffic class */
	uint8_t ttl;             /* outer TTL / hop limit; 0 = VXLAN_ENCAP_DEFAULT_TTL */
	bool no_df;              /* IPv4: clear DF (set by default, as an underlay with PMTU wants) */
	bool udp_zero_csum;      /* IPv4 only: leave the outer UDP checksum 0 */
	uint8_t src_mac[ETH_ADDR_LEN];
	uint8_t dst_mac[ETH_ADDR_LEN];
	uint8_t src_ip[16];
	uint8_t dst_ip[16];
	uint16_t dst_port;       /* 0 = VXLAN_DEFAULT_PORT */
	uint16_t src_port_min;   /* both 0 = VXLAN_SRC_PORT_{MIN,MAX}_DEFAULT */
	uint16_t src_port_max;
};

/* 0 if `cfg` is usable: family 4 or 6, VNI in range, port range ordered,
 * zero UDP checksum only with IPv4.  -EINVAL otherwise. */
int vxlan_encap_check(const struct vxlan_encap *cfg);

/* Bytes of outer headers in a full frame: 50 for IPv4, 70 for IPv6. */
static inline uint32_t vxlan_encap_hdr_len(const struct vxlan_encap *cfg)
{
	return cfg->family == 6 ? VXLAN_ENCAP_LEN_IPV6 : VXLAN_ENCAP_LEN_IPV4;
}

/* Hash of the inner flow of the Ethernet frame at `frame`: IP addresses,
 * protocol and (unless a fragment) TCP/UDP ports, skipping up to two VLAN
 * tags; frames that are not IP hash their MAC addresses and ethertype (the
 * kernel's fallback).  Reads only inside `len`.  Equal for every segment of
 * one flow. */
uint32_t vxlan_flow_hash(const uint8_t *frame, size_t len);

/* The outer UDP source port for `flow_hash` inside cfg's range. */
uint16_t vxlan_src_port(const struct vxlan_encap *cfg, uint32_t flow_hash);

/* Writes the 8-byte VXLAN header: I flag, `vni`, reserved bits zero. */
void vxlan_hdr_write(uint8_t *buf, uint32_t vni);

/* Writes the full outer header (vxlan_encap_hdr_len(cfg) bytes) at `buf`
 * for an inner frame of `inner_len` bytes that follows it.  `inner_sum` is
 * the unfolded one's-complement sum of the inner frame (csum_partial() over
 * it, starting at an even offset) and is only used for the outer UDP
 * checksum.  `ip_id` goes into the outer IPv4 ID.  The outer headers use
 * `flow_hash` for the source port and the IPv6 flow label.  The caller
 * guarantees inner_len + outer headers fit the IP length field. */
void vxlan_encap_write(uint8_t *buf, const struct vxlan_encap *cfg, uint32_t flow_hash,
		       uint16_t ip_id, uint32_t inner_len, uint32_t inner_sum);

/* Encapsulates the frame in `pkt` in place, using its headroom: completes a
 * partial inner checksum first (NEEDS_CSUM: the far end will not), pushes
 * the outer headers, sets l2/l3/l4_ofs to the outer headers, tunnel_ofs and
 * inner_l2_ofs (inner_l3/l4/payload shifted if they were set as l3/l4/payload
 * before), pkt->tunnel, and clears the offload metadata.  Works on frames
 * with frags.  -EINVAL on a bad cfg or partial-checksum field, -EMSGSIZE if
 * the result would exceed an IP datagram, -ENOSPC without headroom. */
int vxlan_encap_pkt(struct pkt *pkt, const struct vxlan_encap *cfg, uint16_t ip_id);

#endif
