/* Wire formats and protocol constants.  Only layouts and numbers live here;
 * logic over them lives in parse/ and offload/.  Multi-byte fields are in
 * network byte order and named with a _be suffix where that is easy to
 * forget.  Structs are packed so they can be read from any offset with
 * memcpy. */
#ifndef VX_PACKET_HDR_H
#define VX_PACKET_HDR_H

#include <stdint.h>

enum eth_constants {
	ETH_ADDR_LEN = 6,
	ETH_HDR_LEN = 14,
	VLAN_HDR_LEN = 4,
	ETH_MIN_FRAME = 60, /* without FCS */
};

enum eth_type {
	ETH_TYPE_IPV4 = 0x0800,
	ETH_TYPE_ARP = 0x0806,
	ETH_TYPE_RARP = 0x8035, /* RFC 903: ARP's format */
	ETH_TYPE_VLAN = 0x8100,  /* 802.1Q C-tag */
	ETH_TYPE_QINQ = 0x88a8,  /* 802.1ad S-tag */
	ETH_TYPE_QINQ_OLD = 0x9100,
	ETH_TYPE_IPV6 = 0x86dd,
	ETH_TYPE_MPLS_UC = 0x8847, /* RFC 5332 */
	ETH_TYPE_MPLS_MC = 0x8848,
	ETH_TYPE_MIN = 0x0600, /* below this the field is an 802.3 length */
};

struct eth_hdr {
	uint8_t dst[ETH_ADDR_LEN];
	uint8_t src[ETH_ADDR_LEN];
	uint16_t type_be;
} __attribute__((packed));

struct vlan_hdr {
	uint16_t tci_be;
	uint16_t next_type_be;
} __attribute__((packed));

struct arp_eth_ipv4 {
	uint16_t htype_be, ptype_be;
	uint8_t hlen, plen;
	uint16_t op_be;
	uint8_t sha[ETH_ADDR_LEN];
	uint8_t spa[4];
	uint8_t tha[ETH_ADDR_LEN];
	uint8_t tpa[4];
} __attribute__((packed));

enum ip_proto {
	IP_PROTO_HOPOPTS = 0,
	IP_PROTO_ICMP = 1,
	IP_PROTO_TCP = 6,
	IP_PROTO_UDP = 17,
	IP_PROTO_ROUTING = 43,
	IP_PROTO_FRAGMENT = 44,
	IP_PROTO_ESP = 50,
	IP_PROTO_AH = 51,
	IP_PROTO_ICMPV6 = 58,
	IP_PROTO_NONE = 59,
	IP_PROTO_DSTOPTS = 60,
	IP_PROTO_SCTP = 132,
};

struct ipv4_hdr {
	uint8_t ver_ihl;
	uint8_t tos;
	uint16_t tot_len_be;
	uint16_t id_be;
	uint16_t frag_off_be; /* flags (3 bits) + offset in 8-byte units */
	uint8_t ttl;
	uint8_t proto;
	uint16_t csum;
	uint8_t src[4];
	uint8_t dst[4];
} __attribute__((packed));

enum ipv4_constants {
	IPV4_HDR_LEN = 20,
	IPV4_MAX_HDR_LEN = 60,
	IPV4_DF = 0x4000,
	IPV4_MF = 0x2000,
	IPV4_FRAG_OFFSET_MASK = 0x1fff,
};

struct ipv6_hdr {
	uint32_t ver_tc_flow_be;
	uint16_t payload_len_be;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t src[16];
	uint8_t dst[16];
} __attribute__((packed));

struct ipv6_frag_hdr {
	uint8_t next_hdr;
	uint8_t reserved;
	uint16_t off_flags_be; /* offset << 3 | M flag */
	uint32_t ident_be;
} __attribute__((packed));

enum ipv6_constants {
	IPV6_HDR_LEN = 40,
	IPV6_FRAG_HDR_LEN = 8,
	IPV6_OPT_PAD1 = 0,
	IPV6_OPT_JUMBO = 0xc2,
};

struct tcp_hdr {
	uint16_t src_be;
	uint16_t dst_be;
	uint32_t seq_be;
	uint32_t ack_be;
	uint8_t doff_res;  /* data offset in 32-bit words << 4 | NS bit */
	uint8_t flags;
	uint16_t window_be;
	uint16_t csum;
	uint16_t urg_be;
} __attribute__((packed));

enum tcp_flag {
	TCP_FIN = 0x01,
	TCP_SYN = 0x02,
	TCP_RST = 0x04,
	TCP_PSH = 0x08,
	TCP_ACK = 0x10,
	TCP_URG = 0x20,
	TCP_ECE = 0x40,
	TCP_CWR = 0x80,
	TCP_NS = 0x100, /* from doff_res bit 0; only in flow_key.tcp_flags */
};

enum tcp_constants {
	TCP_HDR_LEN = 20,
	TCP_MAX_HDR_LEN = 60,
	TCP_CSUM_OFFSET = 16,
	TCP_OPT_EOL = 0,
	TCP_OPT_NOP = 1,
	TCP_OPT_MSS = 2,
	TCP_OPT_WSCALE = 3,
	TCP_OPT_SACK_PERM = 4,
	TCP_OPT_SACK = 5,
	TCP_OPT_TIMESTAMP = 8,
};

struct udp_hdr {
	uint16_t src_be;
	uint16_t dst_be;
	uint16_t len_be;
	uint16_t csum;
} __attribute__((packed));

enum udp_constants {
	UDP_HDR_LEN = 8,
	UDP_CSUM_OFFSET = 6,
};

struct icmp_hdr {
	uint8_t type;
	uint8_t code;
	uint16_t csum;
} __attribute__((packed));

enum icmp_constants {
	ICMP_HDR_LEN = 4,
	SCTP_HDR_LEN = 12,     /* common header: ports, verification tag, checksum */
};

/* RFC 7348 section 5. */
struct vxlan_hdr {
	uint32_t flags_be; /* I flag is 0x08000000; all other bits reserved */
	uint32_t vni_be;   /* VNI << 8; low 8 bits reserved */
} __attribute__((packed));

enum vxlan_constants {
	VXLAN_HDR_LEN = 8,
	VXLAN_FLAG_VNI = 0x08000000,
	VXLAN_DEFAULT_PORT = 4789,
	VXLAN_VNI_MAX = 0xffffff,
	/* Outer Ethernet + IPv4 + UDP + VXLAN, and the same with IPv6. */
	VXLAN_ENCAP_LEN_IPV4 = ETH_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN + VXLAN_HDR_LEN,
	VXLAN_ENCAP_LEN_IPV6 = ETH_HDR_LEN + IPV6_HDR_LEN + UDP_HDR_LEN + VXLAN_HDR_LEN,
};

_Static_assert(sizeof(struct eth_hdr) == 14, "eth_hdr");
_Static_assert(sizeof(struct ipv4_hdr) == 20, "ipv4_hdr");
_Static_assert(sizeof(struct ipv6_hdr) == 40, "ipv6_hdr");
_Static_assert(sizeof(struct tcp_hdr) == 20, "tcp_hdr");
_Static_assert(sizeof(struct udp_hdr) == 8, "udp_hdr");
_Static_assert(sizeof(struct vxlan_hdr) == 8, "vxlan_hdr");
_Static_assert(sizeof(struct arp_eth_ipv4) == 28, "arp");
_Static_assert(VXLAN_ENCAP_LEN_IPV4 == 50 && VXLAN_ENCAP_LEN_IPV6 == 70, "encap");

#endif
