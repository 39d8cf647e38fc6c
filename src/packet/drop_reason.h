/* Named reasons for dropping a frame.
 *
 * Every way a frame can be malformed or refused maps to exactly one reason.
 * Reasons are counted per port and shown by `vxctl stats`; their names are
 * part of the operator interface, so never rename one, only add.
 *
 * To add a reason, append one X() line in the right group.  The string is the
 * name operators see (lower_snake_case). */
#ifndef VX_PACKET_DROP_REASON_H
#define VX_PACKET_DROP_REASON_H

#define DROP_REASONS(X)                                                     \
	X(NONE, "none")                                                     \
	/* Ethernet and VLAN */                                             \
	X(TRUNCATED_ETH, "truncated_eth")                                   \
	X(TRUNCATED_VLAN, "truncated_vlan")                                 \
	X(VLAN_TOO_MANY_TAGS, "vlan_too_many_tags")                         \
	X(TRUNCATED_ARP, "truncated_arp")                                   \
	/* IPv4 */                                                          \
	X(TRUNCATED_IPV4, "truncated_ipv4")                                 \
	X(BAD_IP_VERSION, "bad_ip_version")                                 \
	X(BAD_IHL, "bad_ihl")                                               \
	X(IPV4_TOTAL_LEN, "ipv4_total_len")                                 \
	X(IPV4_BAD_CSUM, "ipv4_bad_csum")                                   \
	/* IPv6 */                                                          \
	X(TRUNCATED_IPV6, "truncated_ipv6")                                 \
	X(IPV6_PAYLOAD_LEN, "ipv6_payload_len")                             \
	X(TRUNCATED_IPV6_EXT, "truncated_ipv6_ext")                         \
	X(IPV6_EXT_CHAIN, "ipv6_ext_chain")                                 \
	X(IPV6_JUMBO, "ipv6_jumbo")                                         \
	X(IPV6_BAD_OPTIONS, "ipv6_bad_options")                             \
	/* L4 */                                                            \
	X(TRUNCATED_TCP, "truncated_tcp")                                   \
	X(BAD_TCP_DOFF, "bad_tcp_doff")                                     \
	X(BAD_TCP_OPTIONS, "bad_tcp_options")                               \
	X(TRUNCATED_UDP, "truncated_udp")                                   \
	X(UDP_LEN, "udp_len")                                               \
	X(TRUNCATED_ICMP, "truncated_icmp")                                 \
	X(BAD_L4_CSUM, "bad_l4_csum")                                       \
	/* VXLAN */                                                         \
	X(TRUNCATED_VXLAN, "truncated_vxlan")                               \
	X(VXLAN_NO_VNI_FLAG, "vxlan_no_vni_flag")                           \
	X(VXLAN_RESERVED_BITS, "vxlan_reserved_bits")                       \
	X(VXLAN_UNKNOWN_VNI, "vxlan_unknown_vni")                           \
	X(VXLAN_UNKNOWN_REMOTE, "vxlan_unknown_remote")                     \
	X(VXLAN_BAD_OUTER_CSUM, "vxlan_bad_outer_csum")                     \
	/* virtio_net_hdr from a TAP */                                     \
	X(VNET_HDR_TRUNCATED, "vnet_hdr_truncated")                         \
	X(VNET_HDR_BAD_GSO_TYPE, "vnet_hdr_bad_gso_type")                   \
	X(VNET_HDR_GSO_MISMATCH, "vnet_hdr_gso_mismatch")                   \
	X(VNET_HDR_GSO_SIZE, "vnet_hdr_gso_size")                           \
	X(VNET_HDR_GSO_WITHOUT_CSUM, "vnet_hdr_gso_without_csum")           \
	X(VNET_HDR_TOO_MANY_SEGMENTS, "vnet_hdr_too_many_segments")         \
	X(VNET_HDR_HDR_LEN, "vnet_hdr_hdr_len")                             \
	X(VNET_HDR_CSUM_START, "vnet_hdr_csum_start")                       \
	X(VNET_HDR_CSUM_OFFSET, "vnet_hdr_csum_offset")                     \
	X(VNET_HDR_ECN, "vnet_hdr_ecn")                                     \
	/* offloads */                                                      \
	X(GSO_UNSUPPORTED, "gso_unsupported")                               \
	X(GSO_NO_BUFFER, "gso_no_buffer")                                   \
	/* switching and ports */                                           \
	X(MTU_EXCEEDED, "mtu_exceeded")                                     \
	X(NO_BUFFER, "no_buffer")                                           \
	X(FDB_DST_UNKNOWN, "fdb_dst_unknown")                               \
	/* from a VTEP, flooded into a VNI with no local port (yet) */      \
	X(NO_LOCAL_PORT, "no_local_port")                                   \
	X(LOOP_TO_INGRESS, "loop_to_ingress")                               \
	X(SPLIT_HORIZON, "split_horizon")                                   \
	X(PORT_NOT_IN_VNI, "port_not_in_vni")                               \
	X(INVALID_SRC_MAC, "invalid_src_mac")                               \
	X(TX_ERROR, "tx_error")                                             \
	X(PORT_LINK_DOWN, "port_link_down")                                 \
	X(RULE_DROP, "rule_drop")                                           \
	/* the underlay socket's send backlog was full (vxlan.h) */         \
	X(UNDERLAY_BACKLOG_FULL, "underlay_backlog_full")

enum drop_reason {
#define DROP_REASON_ENUM(name, str) DROP_##name,
	DROP_REASONS(DROP_REASON_ENUM)
#undef DROP_REASON_ENUM
	DROP_REASON_COUNT
};

/* The operator-visible name of a reason; "invalid" for out-of-range values. */
const char *drop_reason_name(enum drop_reason reason);

/* Looks a reason up by its name; returns DROP_REASON_COUNT if unknown. */
enum drop_reason drop_reason_from_name(const char *name);

#endif
