/* Unit tests for the worker's side of capture (src/dp/user/capture_dp.c),
 * on a worker struct with no thread: frames of a batch land in the ring
 * with their direction, time and bytes; the BPF filter decides before the
 * copy (contiguous frames) or on the assembled copy (frames with frags),
 * whose reservation is then given up; a full ring drops and counts; outer
 * frames of a vxlan port get Ethernet/IPv4/UDP/VXLAN headers from the
 * port's settings (sent) or the datagram's addresses (received); attach and
 * detach keep the per-port and per-socket counts the datapath checks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/ctl_capture.h"
#include "dp/user/worker_internal.h"
#include "frame_builder.h"
#include "packet/csum.h"
#include "packet/hdr.h"
#include "pool_fixture.h"

PKT_POOL_FIXTURE(64)

static uint64_t fake_clock(void)
{
	return 5000;
}

static atomic_bool no_wake; /* false: the worker never rings */

struct rig {
	struct vxd_worker *w;
	struct port port;
	struct vxd_capture cap;
	struct bpf_program prog;
	bool has_prog;
};

static void rig_init(struct rig *r, uint8_t dirs, const char *filter, size_t ring)
{
	memset(r, 0, sizeof(*r));
	r->w = calloc(1, sizeof(*r->w));
	assert_non_null(r->w);
	r->w->clock = fake_clock;
	r->port.id = 1;
	r->port.vni = 99;
	r->w->ports[1].port = &r->port;
	r->cap.port_id = 1;
	r->cap.dirs = dirs;
	r->cap.realtime_offset_ns = 1000;
	r->cap.want_wake = &no_wake;
	r->cap.wake_fd = -1;
	assert_int_equal(rec_ring_init(&r->cap.ring, ring), 0);
	if (filter) {
		pcap_t *p = pcap_open_dead(DLT_EN10MB, CTL_CAPTURE_SNAPLEN);
		assert_int_equal(pcap_compile(p, &r->prog, filter, 1, PCAP_NETMASK_UNKNOWN), 0);
		pcap_close(p);
		r->cap.insns = r->prog.bf_insns;
		r->has_prog = true;
	}
}

static void rig_attach(struct rig *r)
{
	assert_int_equal(vxd_capture_attach(r->w, &r->cap), 0);
}

static void rig_fini(struct rig *r)
{
	vxd_capture_detach_port(r->w, 1);
	assert_int_equal(r->w->ports[1].n_caps, 0);
	assert_int_equal(r->w->n_sock_caps, 0);
	if (r->has_prog)
		pcap_freecode(&r->prog);
	rec_ring_fini(&r->cap.ring);
	free(r->w);
}

static struct pkt *frame_pkt(uint8_t proto, size_t payload, uint8_t *bytes, size_t *len)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, proto);
	f.payload_len = payload;
	*len = fb_build(&f, bytes, 4096, NULL);
	assert_true(*len > 0);
	struct pkt *p = pkt_alloc(pool);
	assert_non_null(p);
	assert_int_equal(pkt_set_data(p, bytes, (uint32_t)*len), 0);
	return p;
}

/* The next record: its header and frame. */
static const uint8_t *next_rec(struct rig *r, struct dp_capture_rec *rec)
{
	size_t len;
	const uint8_t *p = rec_ring_peek(&r->cap.ring, &len);
	if (!p)
		return NULL;
	memcpy(rec, p, sizeof(*rec));
	assert_int_equal(len, sizeof(*rec) + rec->caplen);
	return p + sizeof(*rec);
}

static void test_filter_and_direction(void **state)
{
	(void)state;
	struct rig r;
	rig_init(&r, DP_CAPTURE_OUT, "icmp", 1 << 16);
	rig_attach(&r);
	assert_int_equal(r.w->ports[1].n_caps, 1);
	assert_int_equal(r.w->n_sock_caps, 0); /* not a vxlan port */
	uint8_t icmp[4096], udp[4096], tcp[4096];
	size_t li, lu, lt;
	struct pkt *pkts[3] = { frame_pkt(IP_PROTO_UDP, 10, udp, &lu), frame_pkt(IP_PROTO_ICMP, 56, icmp, &li),
				frame_pkt(IP_PROTO_TCP, 100, tcp, &lt) };
	/* Received frames: this capture is of sent ones only. */
	vxd_capture_frames(r.w, &r.w->ports[1], DP_CAPTURE_IN, pkts, 3);
	assert_int_equal(rec_ring_used(&r.cap.ring), 0);
	vxd_capture_frames(r.w, &r.w->ports[1], DP_CAPTURE_OUT, pkts, 3);
	struct dp_capture_rec rec;
	const uint8_t *f = next_rec(&r, &rec);
	assert_non_null(f);
	assert_int_equal(rec.dir, DP_CAPTURE_OUT);
	assert_int_equal(rec.caplen, li);
	assert_int_equal(rec.len, li);
	assert_int_equal(rec.outer, 0);
	assert_int_equal(rec.ts_ns, 6000); /* worker clock + offset */
	assert_memory_equal(f, icmp, li);
	rec_ring_release(&r.cap.ring);
	assert_null(next_rec(&r, &rec));
	assert_int_equal(atomic_load(&r.cap.captured), 1);
	assert_int_equal(atomic_load(&r.cap.dropped), 0);
	for (int i = 0; i < 3; i++)
		pkt_free(pkts[i]);
	rig_fini(&r);
}

/* Headers linear, payload in a frag: filtered on the assembled copy. */
static void test_frags_assembled_then_filtered(void **state)
{
	(void)state;
	static uint8_t payload[3000];
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7);
	uint8_t hdrs[4096];
	size_t hl;
	struct pkt *p = frame_pkt(IP_PROTO_TCP, 0, hdrs, &hl);
	/* fix the IPv4 total length for the payload that follows */
	uint16_t tot = (uint16_t)(hl - ETH_HDR_LEN + sizeof(payload));
	p->data[ETH_HDR_LEN + 2] = (uint8_t)(tot >> 8);
	p->data[ETH_HDR_LEN + 3] = (uint8_t)tot;
	assert_int_equal(pkt_add_frag(p, payload, sizeof(payload), NULL), 0);

	struct rig r;
	rig_init(&r, (DP_CAPTURE_IN | DP_CAPTURE_OUT), "udp", 1 << 16);
	rig_attach(&r);
	vxd_capture_frames(r.w, &r.w->ports[1], DP_CAPTURE_IN, &p, 1);
	struct dp_capture_rec rec;
	assert_null(next_rec(&r, &rec)); /* refused, the reservation given up */
	assert_int_equal(atomic_load(&r.cap.dropped), 0);
	rig_fini(&r);

	rig_init(&r, (DP_CAPTURE_IN | DP_CAPTURE_OUT), "tcp and greater 3000", 1 << 16);
	rig_attach(&r);
	vxd_capture_frames(r.w, &r.w->ports[1], DP_CAPTURE_IN, &p, 1);
	const uint8_t *f = next_rec(&r, &rec);
	assert_non_null(f);
	assert_int_equal(rec.caplen, hl + sizeof(payload));
	assert_memory_equal(f + hl, payload, sizeof(payload));
	rig_fini(&r);
	pkt_free(p);
}

static void test_full_ring_drops(void **state)
{
	(void)state;
	struct rig r;
	rig_init(&r, DP_CAPTURE_IN, NULL, 4096);
	rig_attach(&r);
	uint8_t b[4096];
	size_t len;
	struct pkt *p = frame_pkt(IP_PROTO_UDP, 400, b, &len);
	struct pkt *batch[20];
	for (int i = 0; i < 20; i++)
		batch[i] = p;
	vxd_capture_frames(r.w, &r.w->ports[1], DP_CAPTURE_IN, batch, 20);
	uint64_t captured = atomic_load(&r.cap.captured), dropped = atomic_load(&r.cap.dropped);
	assert_int_equal(captured + dropped, 20);
	assert_true(captured >= 1 && dropped >= 1);
	struct dp_capture_rec rec;
	uint64_t n = 0;
	while (next_rec(&r, &rec)) {
		rec_ring_release(&r.cap.ring);
		n++;
	}
	assert_int_equal(n, captured);
	pkt_free(p);
	rig_fini(&r);
}

static void check_outer_v4(const uint8_t *f, size_t inner_len, const uint8_t src[4], const uint8_t dst[4],
			   uint16_t sport, uint32_t vni)
{
	const struct eth_hdr *eth = (const void *)f;
	assert_int_equal(ntohs(eth->type_be), ETH_TYPE_IPV4);
	const struct ipv4_hdr *ip = (const void *)(f + ETH_HDR_LEN);
	assert_int_equal(ip->proto, IP_PROTO_UDP);
	assert_int_equal(ntohs(ip->tot_len_be), IPV4_HDR_LEN + UDP_HDR_LEN + VXLAN_HDR_LEN + inner_len);
	assert_memory_equal(ip->src, src, 4);
	assert_memory_equal(ip->dst, dst, 4);
	assert_int_equal(csum_buf(ip, IPV4_HDR_LEN), 0);
	const struct udp_hdr *udp = (const void *)(f + ETH_HDR_LEN + IPV4_HDR_LEN);
	assert_int_equal(ntohs(udp->src_be), sport);
	assert_int_equal(ntohs(udp->dst_be), 4789);
	const uint8_t *vx = f + ETH_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN;
	assert_int_equal(vx[0], 0x08);
	assert_int_equal((uint32_t)vx[4] << 16 | (uint32_t)vx[5] << 8 | vx[6], vni);
}

static void test_outer_sent(void **state)
{
	(void)state;
	struct rig r;
	rig_init(&r, DP_CAPTURE_OUT, "udp dst port 4789", 1 << 16);
	r.cap.vxlan = r.cap.outer = true;
	static const uint8_t local[4] = { 198, 51, 100, 1 }, remote[4] = { 198, 51, 100, 2 };
	struct vxlan_encap *e = &r.cap.tx_encap;
	e->vni = 99;
	e->family = 4;
	memcpy(e->src_ip, local, 4);
	e->dst_port = 4789;
	e->src_port_min = e->src_port_max = 4789;
	rig_attach(&r);
	assert_int_equal(r.w->n_sock_caps, 1);
	assert_int_equal(r.w->n_gro_caps, 0); /* outer: GRO's emit stays */
	uint8_t b[4096];
	size_t len;
	struct pkt *p = frame_pkt(IP_PROTO_ICMP, 100, b, &len);
	memcpy(p->tunnel.dst, remote, 4);
	vxd_capture_frames(r.w, &r.w->ports[1], DP_CAPTURE_OUT, &p, 1);
	struct dp_capture_rec rec;
	const uint8_t *f = next_rec(&r, &rec);
	assert_non_null(f);
	assert_int_equal(rec.outer, 1);
	assert_int_equal(rec.caplen, VXLAN_ENCAP_LEN_IPV4 + len);
	check_outer_v4(f, len, local, remote, 4789, 99);
	assert_memory_equal(f + VXLAN_ENCAP_LEN_IPV4, b, len);
	pkt_free(p);
	rig_fini(&r);
}

/* Received datagrams (a pkt starts at its VXLAN header): outer with the
 * sender's address and port; inner (GRO off) the frame after the header. */
static void test_received_datagrams(void **state)
{
	(void)state;
	struct rig outer, inner;
	rig_init(&outer, DP_CAPTURE_IN, NULL, 1 << 16);
	outer.cap.vxlan = outer.cap.outer = true;
	rig_attach(&outer);
	rig_init(&inner, DP_CAPTURE_IN, NULL, 1 << 16);
	free(inner.w);
	inner.w = outer.w; /* both on the one port of one worker */
	inner.cap.vxlan = true;
	rig_attach(&inner);
	assert_int_equal(outer.w->n_sock_caps, 2);
	assert_int_equal(outer.w->n_gro_caps, 1);

	uint8_t frame[4096], dgram[4200];
	size_t len;
	struct pkt *tmp = frame_pkt(IP_PROTO_UDP, 64, frame, &len);
	pkt_free(tmp);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, 0, 99); /* VXLAN header only, as the socket reads it */
	size_t dl = fb_wrap_vxlan(&vx, frame, len, dgram, sizeof(dgram));
	struct pkt *p = pkt_alloc(pool);
	assert_int_equal(pkt_set_data(p, dgram, (uint32_t)dl), 0);
	static const uint8_t from[4] = { 198, 51, 100, 2 }, to[4] = { 198, 51, 100, 1 };
	p->tunnel.family = 4;
	memcpy(p->tunnel.src, from, 4);
	memcpy(p->tunnel.dst, to, 4);
	p->tunnel.src_port = 40000;
	p->tunnel.dst_port = 4789;
	uint32_t vni = 99;
	uint16_t id = 1;
	struct vxd_view_sock vs = { 0 };
	assert_int_equal(vni_map_build(&vni, &id, 1, &vs.demux), 0);

	vxd_capture_datagrams(outer.w, &vs, &p, 1, false);
	struct dp_capture_rec rec;
	const uint8_t *f = next_rec(&outer, &rec);
	assert_non_null(f);
	assert_int_equal(rec.caplen, VXLAN_ENCAP_LEN_IPV4 + len);
	check_outer_v4(f, len, from, to, 40000, 99);
	assert_memory_equal(f + VXLAN_ENCAP_LEN_IPV4, frame, len);
	f = next_rec(&inner, &rec);
	assert_non_null(f);
	assert_int_equal(rec.caplen, len);
	assert_memory_equal(f, frame, len);
	rec_ring_release(&inner.cap.ring);

	/* With GRO on, inner frames come from GRO's emit, not from here. */
	vxd_capture_datagrams(outer.w, &vs, &p, 1, true);
	assert_null(next_rec(&inner, &rec));

	vni_map_destroy(vs.demux);
	pkt_free(p);
	assert_int_equal(vxd_capture_detach(outer.w, &inner.cap), 0);
	assert_int_equal(vxd_capture_detach(outer.w, &inner.cap), -ENOENT);
	assert_int_equal(outer.w->n_gro_caps, 0);
	rec_ring_fini(&inner.cap.ring);
	rig_fini(&outer);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_and_direction),
		cmocka_unit_test(test_frags_assembled_then_filtered),
		cmocka_unit_test(test_full_ring_drops),
		cmocka_unit_test(test_outer_sent),
		cmocka_unit_test(test_received_datagrams),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
