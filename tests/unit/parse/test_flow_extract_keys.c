/* Unit tests for src/parse/flow_extract.c beyond the case table
 * (test_flow_extract.c): whole keys compared field by field,
 * flow_extract_vxlan() against flow_extract() of the decapsulated frame,
 * payload in frags, tcp_opts_parse() cases, SCTP ports, and offsets reset
 * between frames.  Frames: fx_frames.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fx_frames.h"
#include "packet/hdr.h"
#include "parse/flow_extract.h"

/* ---- exact keys ------------------------------------------------------------ */

static void assert_key_equal(const struct flow_key *got, const struct flow_key *want,
			     const uint8_t *frame, size_t len)
{
	if (memcmp(got, want, sizeof(*got)) == 0)
		return;
	fb_hexdump("frame", frame, len);
	fb_hexdump("want key", (const uint8_t *)want, sizeof(*want));
	fb_hexdump("got key ", (const uint8_t *)got, sizeof(*got));
	fail_msg("flow keys differ");
}

static void test_exact_key_tcp4_vlan_syn(void **state)
{
	(void)state;
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.n_vlans = 1;
	f.vlan_tpid[0] = ETH_TYPE_VLAN;
	f.vlan_tci[0] = 0x0fff;
	f.tos = 0x2e;
	f.ttl = 3;
	f.src_port = 40000;
	f.dst_port = 443;
	f.tcp_flags = TCP_SYN | TCP_ECE | TCP_CWR | TCP_NS;
	f.tcp_opts = fx_syn_opts;
	f.tcp_opts_len = sizeof(fx_syn_opts);
	f.payload_len = 5;
	size_t len = fx_build(&f, fx_frame_buf);

	struct flow_key want;
	memset(&want, 0, sizeof(want));
	want.in_port = TEST_IN_PORT;
	memcpy(want.dl_dst, f.dst_mac, 6);
	memcpy(want.dl_src, f.src_mac, 6);
	want.dl_type = ETH_TYPE_IPV4;
	want.vlan_tci[0] = 0x0fff;
	want.vlan_tpid[0] = ETH_TYPE_VLAN;
	want.n_vlans = 1;
	want.nw_family = 4;
	want.nw_proto = IP_PROTO_TCP;
	want.nw_tos = 0x2e;
	want.nw_ttl = 3;
	memcpy(want.nw_src, f.src_ip, 4);
	memcpy(want.nw_dst, f.dst_ip, 4);
	want.tp_src = 40000;
	want.tp_dst = 443;
	want.tcp_flags = TCP_SYN | TCP_ECE | TCP_CWR | TCP_NS;
	want.tcp_opts = (struct tcp_opts){
		.present = TCP_OPTS_MSS | TCP_OPTS_SACK_PERM | TCP_OPTS_TIMESTAMP | TCP_OPTS_WSCALE,
		.wscale = 7, .mss = 1460, .tsval = 0x11223344, .tsecr = 0x55667788,
	};

	struct pkt *p = pkt_alloc(fx_pool);
	struct flow_key key;
	assert_int_equal(fx_extract(p, fx_frame_buf, len, VXLAN_DEFAULT_PORT, &key), DROP_NONE);
	assert_key_equal(&key, &want, fx_frame_buf, len);
	assert_int_equal(p->l2_ofs, 0);
	assert_int_equal(p->l3_ofs, 18);
	assert_int_equal(p->l4_ofs, 38);
	assert_int_equal(p->payload_ofs, 38 + 40);
	assert_int_equal(p->tunnel_ofs, PKT_OFS_NONE);
	assert_int_equal(p->inner_l2_ofs, PKT_OFS_NONE);
	assert_int_equal(p->size, len);
	pkt_free(p);
}

static void test_exact_key_vxlan6_udp4(void **state)
{
	(void)state;
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.src_port = 5353;
	f.dst_port = 53;
	f.payload_len = 30;
	size_t inner_len = fx_build(&f, fx_inner_buf);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, 6, 0xffffff);
	vx.src_port = 61000;
	size_t len = fb_wrap_vxlan(&vx, fx_inner_buf, inner_len, fx_frame_buf, sizeof(fx_frame_buf));
	assert_true(len > 0);

	struct flow_key want;
	memset(&want, 0, sizeof(want));
	memcpy(want.tun_src, vx.src_ip, 16);
	memcpy(want.tun_dst, vx.dst_ip, 16);
	want.tun_vni = 0xffffff;
	want.tun_src_port = 61000;
	want.tun_dst_port = VXLAN_DEFAULT_PORT;
	want.tun_family = 6;
	want.tun_tos = vx.tos; /* the outer header's, for enc_tos/enc_ttl */
	want.tun_ttl = vx.ttl;
	want.in_port = TEST_IN_PORT;
	memcpy(want.dl_dst, f.dst_mac, 6);
	memcpy(want.dl_src, f.src_mac, 6);
	want.dl_type = ETH_TYPE_IPV4;
	want.nw_family = 4;
	want.nw_proto = IP_PROTO_UDP;
	want.nw_ttl = 64;
	memcpy(want.nw_src, f.src_ip, 4);
	memcpy(want.nw_dst, f.dst_ip, 4);
	want.tp_src = 5353;
	want.tp_dst = 53;

	struct pkt *p = pkt_alloc(fx_pool);
	struct flow_key key;
	assert_int_equal(fx_extract(p, fx_frame_buf, len, VXLAN_DEFAULT_PORT, &key), DROP_NONE);
	assert_key_equal(&key, &want, fx_frame_buf, len);
	assert_int_equal(p->l4_ofs, 54);
	assert_int_equal(p->tunnel_ofs, 62);
	assert_int_equal(p->inner_l2_ofs, 70);
	assert_int_equal(p->inner_l3_ofs, 84);
	assert_int_equal(p->inner_l4_ofs, 104);
	assert_int_equal(p->inner_payload_ofs, 112);
	assert_int_equal(pkt_innermost_l4(p), 104);
	assert_int_equal(pkt_innermost_payload(p), 112);
	assert_int_equal(p->tunnel.vni, 0xffffff);
	assert_int_equal(p->tunnel.src_port, 61000);
	assert_memory_equal(p->tunnel.dst, vx.dst_ip, 16);
	pkt_free(p);
}

/* The same inner frame gives the same L2..L4 key whether it came alone,
 * in a whole outer frame or from a UDP socket (flow_extract_vxlan). */
static void test_flow_extract_vxlan_matches_decap(void **state)
{
	(void)state;
	size_t inner_len = f_tcp4_syn_opts(fx_inner_buf);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, 4, 99);
	size_t outer_len = fb_wrap_vxlan(&vx, fx_inner_buf, inner_len, fx_frame_buf, sizeof(fx_frame_buf));
	struct pkt *p = pkt_alloc(fx_pool);
	struct flow_key whole, plain, sock;
	assert_int_equal(fx_extract(p, fx_frame_buf, outer_len, VXLAN_DEFAULT_PORT, &whole), DROP_NONE);
	assert_int_equal(fx_extract(p, fx_inner_buf, inner_len, 0, &plain), DROP_NONE);

	struct fb_vxlan bare = vx;
	bare.family = 0;
	static uint8_t sock_buf[FB_MAX_FRAME];
	size_t sock_len = fb_wrap_vxlan(&bare, fx_inner_buf, inner_len, sock_buf, sizeof(sock_buf));
	assert_int_equal(sock_len, VXLAN_HDR_LEN + inner_len);
	assert_int_equal(pkt_set_data(p, sock_buf, (uint32_t)sock_len), 0);
	p->in_port = TEST_IN_PORT;
	p->tunnel.family = 4;
	memcpy(p->tunnel.src, vx.src_ip, 4);
	memcpy(p->tunnel.dst, vx.dst_ip, 4);
	p->tunnel.src_port = vx.src_port;
	p->tunnel.dst_port = vx.dst_port;
	p->tunnel.tos = vx.tos; /* what the port's IP_RECVTOS/IP_RECVTTL cmsgs give */
	p->tunnel.ttl = vx.ttl;
	assert_int_equal(flow_extract_vxlan(p, &sock), DROP_NONE);
	assert_int_equal(p->l2_ofs, PKT_OFS_NONE);
	assert_int_equal(p->l4_ofs, PKT_OFS_NONE);
	assert_int_equal(p->tunnel_ofs, 0);
	assert_int_equal(p->inner_l2_ofs, 8);
	assert_int_equal(p->inner_l3_ofs, 22);
	assert_int_equal(p->inner_l4_ofs, 42);
	assert_int_equal(p->inner_payload_ofs, 82);
	assert_int_equal(p->tunnel.vni, 99);

	assert_key_equal(&sock, &whole, sock_buf, sock_len);
	const size_t l2 = offsetof(struct flow_key, dl_dst);
	assert_memory_equal((uint8_t *)&whole + l2, (uint8_t *)&plain + l2, sizeof(whole) - l2);
	assert_int_equal(whole.tun_vni, 99);
	assert_int_equal(plain.tun_family, 0);

	/* Socket path refuses bad VXLAN headers by name too. */
	sock_buf[0] = 0;
	assert_int_equal(pkt_set_data(p, sock_buf, (uint32_t)sock_len), 0);
	assert_int_equal(flow_extract_vxlan(p, &sock), DROP_VXLAN_NO_VNI_FLAG);
	assert_int_equal(pkt_set_data(p, sock_buf, 7), 0);
	assert_int_equal(flow_extract_vxlan(p, &sock), DROP_TRUNCATED_VXLAN);
	pkt_free(p);
}

/* A GRO'd frame: headers linear, payload in a frag.  Lengths count the
 * frag; padding past the IP length is trimmed out of the frag. */
static void test_payload_in_frags(void **state)
{
	(void)state;
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = 1000;
	size_t len = fx_build(&f, fx_frame_buf);
	struct pkt *head = pkt_alloc(fx_pool), *body = pkt_alloc(fx_pool);
	assert_int_equal(pkt_set_data(head, fx_frame_buf, 54), 0);
	fx_frame_buf[len] = 0xee; /* one byte of "padding" after the datagram */
	assert_int_equal(pkt_set_data(body, fx_frame_buf + 54, (uint32_t)(len - 54 + 1)), 0);
	assert_int_equal(pkt_add_frag(head, body->data, body->size, body), 0);
	struct flow_key key;
	assert_int_equal(flow_extract(head, 0, &key), DROP_NONE);
	assert_int_equal(pkt_len(head), len);
	assert_int_equal(head->payload_ofs, 54);
	assert_int_equal(key.tp_dst, 2000);

	/* Headers must be linear: TCP header in the frag is truncated_tcp. */
	assert_int_equal(pkt_set_data(head, fx_frame_buf, 40), 0);
	assert_int_equal(pkt_set_data(body, fx_frame_buf + 40, (uint32_t)(len - 40)), 0);
	assert_int_equal(pkt_add_frag(head, body->data, body->size, body), 0);
	assert_int_equal(flow_extract(head, 0, &key), DROP_TRUNCATED_TCP);
	pkt_free(head);
	pkt_free(body);
}


/* ---- tcp_opts_parse ------------------------------------------------------ */

struct tcp_opts_case {
	unsigned n;
	uint8_t bytes[40];
	size_t len;
	bool ok;
	struct tcp_opts want;
};

static const struct tcp_opts_case tcp_opts_cases[] = {
	{ 1, {}, 0, true, {} },
	{ 2, { TCP_OPT_EOL, 0xff, 0xff, 0xff }, 4, true, {} }, /* junk after EOL ignored */
	{ 3, { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_NOP }, 4, true, {} },
	{ 4, { TCP_OPT_MSS, 4, 0x23, 0x28 }, 4, true, { .present = TCP_OPTS_MSS, .mss = 9000 } },
	{ 5, { TCP_OPT_MSS, 3, 0x23 }, 3, false, {} },
	{ 6, { TCP_OPT_MSS, 4, 0x23 }, 3, false, {} }, /* length past the end */
	{ 7, { TCP_OPT_MSS }, 1, false, {} },          /* no length byte */
	{ 8, { TCP_OPT_WSCALE, 3, 14, TCP_OPT_NOP }, 4, true, { .present = TCP_OPTS_WSCALE, .wscale = 14 } },
	{ 9, { TCP_OPT_WSCALE, 4, 14, 0 }, 4, false, {} },
	{ 10, { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_TIMESTAMP, 10, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff }, 12, true,
	  { .present = TCP_OPTS_TIMESTAMP, .tsval = 1, .tsecr = 0xffffffff } },
	{ 11, { TCP_OPT_TIMESTAMP, 8, 0, 0, 0, 1, 0, 0 }, 8, false, {} },
	{ 12, { TCP_OPT_SACK_PERM, 2, TCP_OPT_NOP, TCP_OPT_NOP }, 4, true, { .present = TCP_OPTS_SACK_PERM } },
	{ 13, { TCP_OPT_SACK_PERM, 3, 0, TCP_OPT_EOL }, 4, true, {} }, /* ignored, as Linux */
	{ 14, { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_SACK, 10, 0, 0, 0, 1, 0, 0, 0, 2 }, 12, true, { .present = TCP_OPTS_SACK } },
	{ 15, { TCP_OPT_SACK, 6, 0, 0, 0, 1 }, 6, true, {} }, /* half a block: ignored */
	{ 16, { 30, 4, 1, 2 }, 4, true, {} },                 /* unknown (MPTCP) skipped */
	{ 17, { 30, 0, 1, 2 }, 4, false, {} },                /* length 0 would loop forever */
	{ 18, { 30, 1, 1, 2 }, 4, false, {} },
	{ 19, { 253, 2 }, 2, true, {} },
	{ 20, { TCP_OPT_MSS, 4, 0x05, 0xb4, TCP_OPT_MSS, 4, 0x05, 0xa0 }, 8, true, { .present = TCP_OPTS_MSS, .mss = 1440 } },
	{ 21, { TCP_OPT_MSS, 4, 0x05, 0xb4, TCP_OPT_NOP, TCP_OPT_WSCALE, 3, 7, TCP_OPT_SACK_PERM, 2,
		TCP_OPT_TIMESTAMP, 10, 1, 2, 3, 4, 5, 6, 7, 8 }, 20, true,
	  { .present = TCP_OPTS_MSS | TCP_OPTS_WSCALE | TCP_OPTS_SACK_PERM | TCP_OPTS_TIMESTAMP,
	    .wscale = 7, .mss = 1460, .tsval = 0x01020304, .tsecr = 0x05060708 } },
	{ 22, { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_TIMESTAMP, 10, 1, 2, 3, 4, 5, 6, 7 }, 11, false, {} },
};

static void test_tcp_opts_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(tcp_opts_cases); i++) {
		const struct tcp_opts_case *tc = &tcp_opts_cases[i];
		struct tcp_opts got;
		memset(&got, 0xa5, sizeof(got));
		bool ok = tcp_opts_parse(tc->bytes, tc->len, &got);
		if (ok != tc->ok)
			fail_msg("tcp_opts case %u: returned %d", tc->n, ok);
		if (ok && memcmp(&got, &tc->want, sizeof(got)) != 0) {
			fb_hexdump("options", tc->bytes, tc->len);
			fail_msg("tcp_opts case %u: present %#x mss %u wscale %u tsval %#x tsecr %#x",
				 tc->n, got.present, got.mss, got.wscale, got.tsval, got.tsecr);
		}
	}
}

/* SCTP: the ports are in the key (flower's src_port/dst_port); a common
 * header cut short leaves them zero and is not a drop; no payload offset. */
static void test_sctp_ports(void **state)
{
	(void)state;
	struct pkt *p = pkt_alloc(fx_pool);
	struct flow_key key;
	for (uint8_t family = 4; family <= 6; family += 2) {
		struct fb_frame f;
		fb_frame_init(&f, family, IP_PROTO_SCTP);
		f.src_port = 5000, f.dst_port = 36412;
		f.payload_len = 16;
		struct fb_layout lay;
		size_t len = fb_build(&f, fx_frame_buf, sizeof(fx_frame_buf), &lay);
		assert_int_equal(fx_extract(p, fx_frame_buf, len, 0, &key), DROP_NONE);
		fx_check_invariants(p, &key);
		assert_int_equal(key.nw_proto, IP_PROTO_SCTP);
		assert_int_equal(key.tp_src, 5000);
		assert_int_equal(key.tp_dst, 36412);
		assert_int_equal(p->l4_ofs, lay.l4_ofs);
		assert_int_equal(p->payload_ofs, PKT_OFS_NONE);
		/* 11 bytes of SCTP (the IPv4 header checksum is not verified here):
		 * the ports are not read */
		f.payload_len = 0;
		len = fb_build(&f, fx_frame_buf, sizeof(fx_frame_buf), &lay);
		uint8_t *ip = fx_frame_buf + lay.l3_ofs;
		if (family == 4)
			ip[3] = (uint8_t)(ip[3] - 1);
		else
			ip[5] = (uint8_t)(ip[5] - 1);
		assert_int_equal(fx_extract(p, fx_frame_buf, len - 1, 0, &key), DROP_NONE);
		assert_int_equal(key.tp_src, 0);
		assert_int_equal(key.tp_dst, 0);
	}
	pkt_free(p);
}

/* Offsets from a previous frame never leak into the next parse. */
static void test_offsets_reset_between_frames(void **state)
{
	(void)state;
	struct pkt *p = pkt_alloc(fx_pool);
	struct flow_key key;
	size_t len = f_vx4_tcp4(fx_frame_buf);
	assert_int_equal(fx_extract(p, fx_frame_buf, len, VXLAN_DEFAULT_PORT, &key), DROP_NONE);
	assert_int_not_equal(p->inner_l4_ofs, PKT_OFS_NONE);
	/* Re-parse the same bytes in place without decap. */
	p->in_port = TEST_IN_PORT;
	assert_int_equal(flow_extract(p, 0, &key), DROP_NONE);
	assert_int_equal(p->tunnel_ofs, PKT_OFS_NONE);
	assert_int_equal(p->inner_l2_ofs, PKT_OFS_NONE);
	assert_int_equal(p->inner_l4_ofs, PKT_OFS_NONE);
	assert_int_equal(key.tun_vni, 0);
	assert_int_equal(p->tunnel.family, 0); /* no stale tunnel metadata */
	fx_check_invariants(p, &key);
	pkt_free(p);
}

static int setup(void **state)
{
	(void)state;
	return pkt_pool_create(4, &fx_pool) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	pkt_pool_destroy(fx_pool);
	return 0;
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_key_tcp4_vlan_syn),
		cmocka_unit_test(test_exact_key_vxlan6_udp4),
		cmocka_unit_test(test_flow_extract_vxlan_matches_decap),
		cmocka_unit_test(test_payload_in_frags),
		cmocka_unit_test(test_tcp_opts_parse),
		cmocka_unit_test(test_offsets_reset_between_frames),
		cmocka_unit_test(test_sctp_ports),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
