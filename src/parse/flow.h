/* struct flow_key: everything rules, the FDB and stats need to know about a
 * frame, extracted once by flow_extract().
 *
 * Field order is lookup order (tunnel, then L2, L3, L4), like OVS's struct
 * flow.  Everything before `tcp_opts` is the *match* part: it is fully
 * determined by the frame's headers, zero where a layer is absent, and may be
 * hashed or compared with memcmp over FLOW_KEY_MATCH_SIZE bytes (there is no
 * padding in it; the static asserts below keep it so).  `tcp_opts` holds
 * per-packet facts (timestamps change every segment) that no lookup uses.
 *
 * For a VXLAN frame the tunnel section describes the outer headers and the
 * L2..L4 sections describe the *inner* frame, as after OVS's tunnel pop. */
#ifndef VX_PARSE_FLOW_H
#define VX_PARSE_FLOW_H

#include <stddef.h>
#include <stdint.h>

enum flow_frag {
	FLOW_FRAG_NONE = 0,
	FLOW_FRAG_ANY = 1 << 0,   /* a fragment (first or later) */
	FLOW_FRAG_LATER = 1 << 1, /* offset != 0: no L4 header present */
};

/* dl_type of an 802.3 frame (type/length field < 0x0600): the field is a
 * length, which must not become part of the key (as OVS's FLOW_DL_TYPE_NONE). */
enum flow_dl_type {
	FLOW_DL_TYPE_NONE = 0x05ff,
};

enum tcp_opts_present {
	TCP_OPTS_MSS = 1 << 0,
	TCP_OPTS_WSCALE = 1 << 1,
	TCP_OPTS_SACK_PERM = 1 << 2,
	TCP_OPTS_TIMESTAMP = 1 << 3,
	TCP_OPTS_SACK = 1 << 4,
};

struct tcp_opts {
	uint8_t present; /* TCP_OPTS_* */
	uint8_t wscale;
	uint16_t mss;
	uint32_t tsval;
	uint32_t tsecr;
};

struct flow_key {
	/* Tunnel (outer) section; all zero when not tunnelled. */
	uint8_t tun_src[16];   /* IPv4 in the first 4 bytes */
	uint8_t tun_dst[16];
	uint32_t tun_vni;
	uint16_t tun_src_port; /* host order */
	uint16_t tun_dst_port;
	uint8_t tun_family;    /* 0, 4 or 6 */
	uint8_t tun_tos;       /* outer TOS / traffic class (tc's enc_tos) */
	uint8_t tun_ttl;       /* outer TTL / hop limit (tc's enc_ttl) */
	uint8_t tun_pad;

	/* Metadata. */
	uint16_t in_port;

	/* L2 (innermost frame). */
	uint8_t dl_dst[6];
	uint8_t dl_src[6];
	uint16_t dl_type;        /* host order; after the VLAN tags */
	uint16_t vlan_tci[2];    /* host order, outer tag first; 0 if absent */
	uint16_t vlan_tpid[2];
	uint8_t n_vlans;         /* 0, 1 or 2 */

	/* L3. */
	uint8_t nw_family;       /* 0, 4 or 6 (ARP: 0, fields below used) */
	uint8_t nw_proto;        /* IP protocol after IPv6 ext headers; ARP: low byte of op */
	uint8_t nw_tos;          /* IPv4 TOS / IPv6 traffic class */
	uint8_t nw_ttl;          /* TTL / hop limit */
	uint8_t nw_frag;         /* FLOW_FRAG_* */
	uint8_t nw_pad[2];
	uint32_t ipv6_label;     /* host order, 20 bits */
	uint8_t nw_src[16];      /* IPv4 and ARP spa in the first 4 bytes */
	uint8_t nw_dst[16];      /* IPv4 and ARP tpa in the first 4 bytes */
	uint8_t arp_sha[6];
	uint8_t arp_tha[6];

	/* L4. */
	uint16_t tp_src;         /* host order; ICMP: type */
	uint16_t tp_dst;         /* host order; ICMP: code */
	uint16_t tcp_flags;      /* TCP_* from packet/hdr.h incl. TCP_NS */
	uint16_t l4_pad;

	/* MPLS (dl_type 0x8847 / 0x8848): the first FLOW_MPLS_MAX label stack
	 * entries as on the wire (label << 12 | tc << 9 | bos << 8 | ttl, host
	 * order), and a bitmap of the entries present (bit i: entry i, depth
	 * i + 1), as the kernel's flow dissector keeps them (FLOW_DIS_MPLS_MAX
	 * entries, struct flow_dissector_key_mpls) for cls_flower.  Zero for
	 * any other frame. */
	uint32_t mpls_lse[7];
	uint8_t mpls_used;
	uint8_t mpls_pad[3];

	/* Per-packet facts, not part of the match. */
	struct tcp_opts tcp_opts;
};

#define FLOW_KEY_MATCH_SIZE offsetof(struct flow_key, tcp_opts)

enum flow_mpls {
	FLOW_MPLS_MAX = 7,            /* the kernel's FLOW_DIS_MPLS_MAX */
	FLOW_MPLS_LABEL_SHIFT = 12,   /* RFC 3032 label stack entry */
	FLOW_MPLS_TC_SHIFT = 9,
	FLOW_MPLS_BOS_SHIFT = 8,
	FLOW_MPLS_TTL_MASK = 0xff,
};

_Static_assert(sizeof(((struct flow_key *)0)->mpls_lse) == 4 * FLOW_MPLS_MAX, "one word per MPLS entry");
_Static_assert(offsetof(struct flow_key, tcp_opts) == offsetof(struct flow_key, mpls_pad) + 3,
	       "flow_key MPLS section has no holes");

_Static_assert(offsetof(struct flow_key, in_port) == 44, "flow_key tunnel section has no holes");
_Static_assert(FLOW_KEY_MATCH_SIZE % 4 == 0, "flow_key match part is word-aligned");

#endif
