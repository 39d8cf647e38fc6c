/* The frames and the parse step the flow_extract tests share
 * (test_flow_extract.c: the numbered table and the truncation sweep;
 * test_flow_extract_keys.c: exact keys, VXLAN, frags, TCP options, SCTP):
 * each f_*() builds one frame into buf with tests/unit/support/frame_builder
 * and returns its length; f_vx4_* / f_vx6_* wrap one in VXLAN over IPv4 /
 * IPv6 (VNI FX_VNI).  fx_extract() runs flow_extract() on a frame in a pkt of
 * fx_pool (which each test's setup creates), fx_check_invariants() holds a
 * successful parse to the fuzz target's invariants. */
#ifndef VX_TEST_FX_FRAMES_H
#define VX_TEST_FX_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "frame_builder.h"
#include "packet/pkt.h"
#include "parse/flow_extract.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum { TEST_IN_PORT = 7, VNI = 0x123456 };

extern struct pkt_pool *fx_pool;
extern uint8_t fx_frame_buf[FB_MAX_FRAME];
extern uint8_t fx_inner_buf[FB_MAX_FRAME]; /* scratch of the VXLAN builders */
/* The TCP options of f_tcp4_syn_opts(): MSS, SACK-permitted, timestamps, wscale. */
extern const uint8_t fx_syn_opts[20];

size_t fx_build(const struct fb_frame *f, uint8_t *buf);
size_t f_tcp4(uint8_t *buf);
size_t f_tcp4_syn_opts(uint8_t *buf);
size_t f_tcp4_ack_padded(uint8_t *buf);
size_t f_tcp4_ipopts(uint8_t *buf);
size_t f_tcp4_vlan(uint8_t *buf);
size_t f_tcp4_9100(uint8_t *buf);
size_t f_udp6_qinq(uint8_t *buf);
size_t f_tcp4_3tags(uint8_t *buf);
size_t f_udp4(uint8_t *buf);
size_t f_udp4_empty(uint8_t *buf);
size_t f_udp4_short_udp_len(uint8_t *buf);
size_t f_udp4_to_vxlan_7_bytes(uint8_t *buf);
size_t f_icmp4(uint8_t *buf);
size_t f_arp(uint8_t *buf);
size_t f_ip4_proto0(uint8_t *buf);
size_t f_ip4_gre(uint8_t *buf);
size_t f_udp4_frag_first(uint8_t *buf);
size_t f_udp4_frag_later(uint8_t *buf);
size_t f_unknown_ethertype(uint8_t *buf);
size_t f_8023(uint8_t *buf);
size_t f_tcp6(uint8_t *buf);
size_t f_udp6(uint8_t *buf);
size_t f_icmp6(uint8_t *buf);
size_t f_ip6_no_next(uint8_t *buf);
size_t ipv6_with_ext(uint8_t *buf, uint8_t proto, const struct fb_ipv6_ext *ext,
			    unsigned n, int32_t ip_len_override);
size_t f_tcp6_hbh(uint8_t *buf);
size_t f_udp6_routing(uint8_t *buf);
size_t f_tcp6_dstopts(uint8_t *buf);
size_t f_tcp6_ah(uint8_t *buf);
size_t f_udp6_frag_first(uint8_t *buf);
size_t f_udp6_atomic_frag(uint8_t *buf);
size_t f_udp6_frag_later(uint8_t *buf);
size_t f_udp6_all_ext(uint8_t *buf);
size_t ipv6_n_dstopts(uint8_t *buf, unsigned n);
size_t f_udp6_8_ext(uint8_t *buf);
size_t f_udp6_9_ext(uint8_t *buf);
size_t f_udp6_hbh_second(uint8_t *buf);
size_t f_jumbo_len0(uint8_t *buf);
size_t f_jumbo_option(uint8_t *buf);
size_t f_hbh_bad_option(uint8_t *buf);
size_t f_dstopts_bad_option(uint8_t *buf);
size_t fx_wrap(uint8_t *buf, size_t (*inner)(uint8_t *), uint8_t family);
size_t f_vx4_tcp4(uint8_t *buf);
size_t f_vx4_tcp4_opts(uint8_t *buf);
size_t f_vx4_udp6(uint8_t *buf);
size_t f_vx4_arp(uint8_t *buf);
size_t f_vx4_icmp6(uint8_t *buf);
size_t f_vx4_vlan(uint8_t *buf);
size_t f_vx4_ack_padded(uint8_t *buf);
size_t f_vx4_ext(uint8_t *buf);
size_t f_vx4_frag_later(uint8_t *buf);
size_t f_vx6_tcp6(uint8_t *buf);
size_t f_vx6_icmp4(uint8_t *buf);
size_t f_vx4_vxlan(uint8_t *buf);
size_t f_vx4_3tags(uint8_t *buf);
size_t f_vx4_unknown_type(uint8_t *buf);
size_t f_vx4_inner_short(uint8_t *buf);
size_t f_vx4_outer_frag(uint8_t *buf);
enum drop_reason fx_extract(struct pkt *p, const uint8_t *frame, size_t len,
				uint16_t vxlan_port, struct flow_key *key);
void fx_check_invariants(const struct pkt *p, const struct flow_key *key);

#endif
