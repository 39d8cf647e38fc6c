/* frame_builder: build test frames from a short description, with correct
 * lengths and checksums, for every test that needs real packets (parser,
 * GRO/GSO, virtio_net_hdr, switching).  Test code only.
 *
 * Usage:
 *
 *   struct fb_frame f;
 *   fb_frame_init(&f, 4, IP_PROTO_TCP);     // defaults below
 *   f.seq = 1000; f.tcp_flags = TCP_ACK | TCP_PSH; f.payload_len = 1448;
 *   uint8_t buf[FB_MAX_FRAME];
 *   size_t len = fb_build(&f, buf, sizeof(buf), NULL);   // 0 = did not fit
 *
 *   struct fb_vxlan vx;
 *   fb_vxlan_init(&vx, 4, 42);               // outer IPv4, VNI 42
 *   uint8_t outer[FB_MAX_FRAME];
 *   size_t olen = fb_wrap_vxlan(&vx, buf, len, outer, sizeof(outer));
 *
 * Defaults of fb_frame_init(): MACs 02:00:00:00:00:01 -> 02:00:00:00:00:02,
 * no VLAN, 192.0.2.1 -> 192.0.2.2 or 2001:db8::1 -> 2001:db8::2, TTL 64,
 * IPv4 DF set and ID 1, ports 1000 -> 2000, TCP ACK with seq 1 ack 1 and
 * window 65535, no options, no payload, checksums FB_CSUM_FULL, no padding.
 *
 * Layers: Ethernet, up to FB_MAX_VLANS tags, then IPv4 (with options), IPv6
 * (with extension headers, whose next-header fields the builder chains),
 * or ARP (family FB_ARP); then TCP, UDP, ICMP/ICMPv6, an SCTP common header
 * (CRC32c zero) or raw payload for any other protocol.  A fragment with a non-zero offset carries payload only
 * (no L4 header); the payload pattern is byte i = payload_seed + i.
 *
 * Lengths: IPv4 total length, IPv6 payload length and UDP length are
 * computed unless overridden (the *_override fields, for malformed frames).
 * Ethernet padding (`pad_to`) is added after the IP datagram and not counted
 * in any length, as a NIC would pad a short frame. */
#ifndef VX_TESTS_FRAME_BUILDER_H
#define VX_TESTS_FRAME_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fb_limits {
	FB_MAX_VLANS = 3,     /* 3 so that tests can build a frame with too many */
	FB_MAX_IPV6_EXT = 10, /* more than the parser accepts, for the same reason */
	FB_MAX_FRAME = 65535 + 14 + 12 + 70,
	FB_ARP = 1,           /* fb_frame.family value for an ARP frame */
};

enum fb_csum_mode {
	FB_CSUM_FULL = 0,  /* correct L4 checksum */
	FB_CSUM_PARTIAL,   /* pseudo-header sum only, as with NEEDS_CSUM/CHECKSUM_PARTIAL */
	FB_CSUM_ZERO,      /* 0 in the field (legal "no checksum" for UDP over IPv4) */
	FB_CSUM_BAD,       /* the correct checksum plus one: wrong */
};

/* One IPv6 extension header.  `type` is IP_PROTO_HOPOPTS, _ROUTING,
 * _DSTOPTS, _FRAGMENT or _AH.  For options/routing headers the size is
 * (len8 + 1) * 8 bytes (AH: (len8 + 2) * 4); `body` (size - 2 bytes, may be
 * NULL) fills the bytes after next-header and length, else they are a valid
 * PadN option (options headers) or zeros (routing, AH).  For a fragment
 * header, frag_offset (in 8-byte units), frag_more and frag_id are used. */
struct fb_ipv6_ext {
	uint8_t type;
	uint8_t len8;
	const uint8_t *body;
	uint16_t frag_offset;
	bool frag_more;
	uint32_t frag_id;
};

struct fb_frame {
	/* L2 */
	uint8_t dst_mac[6], src_mac[6];
	uint8_t n_vlans;
	uint16_t vlan_tpid[FB_MAX_VLANS];
	uint16_t vlan_tci[FB_MAX_VLANS];
	uint16_t eth_type_override; /* non-zero: written as the (last) type field */

	/* L3: family 4, 6 or FB_ARP */
	uint8_t family;
	uint8_t src_ip[16], dst_ip[16]; /* IPv4 in the first 4 bytes */
	uint8_t tos;                    /* IPv4 TOS / IPv6 traffic class */
	uint8_t ttl;
	uint16_t ip_id;
	uint16_t frag_off;              /* IPv4 flags+offset word, host order (IPV4_DF...) */
	uint32_t ipv6_label;
	const uint8_t *ip_opts;         /* IPv4 options, ip_opts_len a multiple of 4, <= 40 */
	size_t ip_opts_len;
	uint8_t n_ipv6_ext;
	struct fb_ipv6_ext ipv6_ext[FB_MAX_IPV6_EXT];
	int32_t ip_len_override;        /* >= 0: IPv4 total / IPv6 payload length written; -1: computed */

	/* ARP (family FB_ARP): op, sender/target from src/dst MAC and IP. */
	uint16_t arp_op;

	/* L4 */
	uint8_t proto;                  /* IP_PROTO_*; any value (0 = proto 0) */
	uint16_t src_port, dst_port;    /* ICMP: type and code (low byte) */
	uint32_t seq, ack;
	uint16_t tcp_flags;             /* TCP_* incl. TCP_NS */
	uint16_t window;
	const uint8_t *tcp_opts;        /* tcp_opts_len a multiple of 4, <= 40 */
	size_t tcp_opts_len;
	int32_t udp_len_override;       /* >= 0: UDP length written; -1: computed */
	enum fb_csum_mode csum;

	/* Payload */
	size_t payload_len;
	const uint8_t *payload;         /* NULL: pattern payload_seed + i */
	uint8_t payload_seed;

	/* Ethernet padding: zero bytes appended until the frame is pad_to long. */
	size_t pad_to;
};

/* Where fb_build() put each layer (bytes from the frame start). */
struct fb_layout {
	size_t l3_ofs, l4_ofs, payload_ofs, len;
};

/* Fills `f` with the defaults above for family 4, 6 or FB_ARP and `proto`. */
void fb_frame_init(struct fb_frame *f, uint8_t family, uint8_t proto);

/* Writes the frame into `buf`; returns its length, or 0 if it does not fit
 * in `cap` or the description is impossible (too many options...).  `layout`
 * may be NULL. */
size_t fb_build(const struct fb_frame *f, uint8_t *buf, size_t cap, struct fb_layout *layout);

/* Outer headers for fb_wrap_vxlan(). */
struct fb_vxlan {
	uint8_t family;                 /* 4 or 6; 0 = VXLAN header only (as a UDP socket reads it) */
	uint8_t dst_mac[6], src_mac[6];
	uint8_t src_ip[16], dst_ip[16];
	uint8_t tos, ttl;
	uint16_t ip_id;
	uint16_t frag_off;              /* IPv4 flags+offset, host order */
	uint16_t src_port, dst_port;
	uint32_t vni;
	uint32_t flags;                 /* first VXLAN word, host order: VXLAN_FLAG_VNI by default */
	uint8_t vni_reserved;           /* low byte of the second word (must be 0 on the wire) */
	bool udp_csum;                  /* compute the outer UDP checksum (IPv6 always does) */
};

/* Defaults: outer MACs 02:00:00:00:01:01 -> 02:00:00:00:01:02,
 * 198.51.100.1 -> 198.51.100.2 or 2001:db8:1::1 -> 2001:db8:1::2, TTL 64,
 * DF, source port 49152, destination port 4789, I flag, no UDP checksum on
 * IPv4. */
void fb_vxlan_init(struct fb_vxlan *vx, uint8_t family, uint32_t vni);

/* Writes outer Ethernet/IP/UDP/VXLAN followed by `inner`; returns the total
 * length or 0 if it does not fit. */
size_t fb_wrap_vxlan(const struct fb_vxlan *vx, const uint8_t *inner, size_t inner_len,
		     uint8_t *buf, size_t cap);

/* Hex dump of a frame on stderr, 16 bytes a line: for failing tests. */
void fb_hexdump(const char *title, const uint8_t *buf, size_t len);

#endif
